#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Resolve a kernel SPEC to something qemu boots:
#
#   image.sh SPEC [ARCH]   print "ARCH LABEL PATH"
#
# SPEC is a kernel image file (x86 bzImage, arm64 Image, ARM zImage,
# riscv64 Image, s390x image (Debian's vmlinuz), ppc64le ELF vmlinux; any
# of them may be gzip-compressed; arm64 EFI zboot images are unpacked),
# debian:VERSION-FLAVOUR or debian:LINE-FLAVOUR (kernels/debian.sh), or
# tree:PATH, a kernel source tree built for ARCH (default x86_64) by
# kernels/build.sh.  ARCH (one of vm/qemu/*.conf, or an alias) is checked
# against the image when given, else inferred from it.  LABEL names the
# kernel in reports: the kernel's own release string, read from the image
# (the bzImage header's kernel_version, the arm64 Image's "Linux version"
# banner), else the file name.  Unpacked images are cached in
# $PERF_ABI_CACHE/kernels/unpacked/, at most IMAGE_MAX bytes unpacked (a
# kernel image is some tens of MiB; more is not a kernel); the partial
# file of an unpacking cut short is removed on every exit.  Exit 2 with one
# line on stderr when SPEC is not a kernel image of a supported
# architecture.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}

die() {
	echo "image.sh: $*" >&2
	exit 2
}

IMAGE_MAX=$((256 * 1024 * 1024))
partial= toobig= fresh=
trap '[ -z "$partial" ] || rm -f "$partial"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

spec=${1:?usage: image.sh SPEC [ARCH]}
want=${2:-}
. "$here/../lib/arch.sh"
if [ -n "$want" ]; then
	want=$(arch_name "$want") ||
		die "unknown architecture '$2' ($(arch_list | tr '\n' ' ' | sed 's/ $//'))"
fi

bytes() {	# FILE OFFSET COUNT -> hex
	od -An -tx1 -v -j "$2" -N "$3" "$1" | tr -d ' \n'
}

le32() {	# FILE OFFSET -> decimal
	local h
	h=$(bytes "$1" "$2" 4)
	echo $((16#${h:6:2}${h:4:2}${h:2:2}${h:0:2}))
}

# FILE -> x86_64 | i386 | arm64 | armhf | riscv64 | s390x | ppc64le, or a reason on
# stdout and status 1
identify() {
	local f=$1
	if [ "$(bytes "$f" 514 4)" = 48647253 ]; then		# "HdrS"
		# xloadflags XLF_KERNEL_64: an x86_64 kernel, else i386
		if [ $((16#$(bytes "$f" 566 1) & 1)) = 1 ]; then
			echo x86_64
		else
			echo i386
		fi
		return 0
	fi
	if [ "$(bytes "$f" 56 4)" = 41524d64 ]; then		# "ARM\x64"
		echo arm64
		return 0
	fi
	# Documentation/arch/riscv/boot-image-header.rst: magic2 at 56 (it
	# does not tell rv32 from rv64; Debian ships rv64 only)
	if [ "$(bytes "$f" 56 4)" = 52534305 ]; then		# "RSC\x05"
		echo riscv64
		return 0
	fi
	# arch/s390/boot/ipl_data.c: after the IPL PSW, two CCWs that read
	# the rest of the image, then 0x40 fill ("what file(1) detects")
	if [ "$(bytes "$f" 8 17)" = 0200001860000050020000686000005040 ]; then
		echo s390x
		return 0
	fi
	if [ "$(bytes "$f" 36 4)" = 18286f01 ]; then	# ARM zImage magic
		echo armhf
		return 0
	fi
	if [ "$(bytes "$f" 0 4)" = 7f454c46 ]; then
		# ELF: class (4), data (5), e_machine (18, in that byte order)
		local cls data mach
		cls=$(bytes "$f" 4 1) data=$(bytes "$f" 5 1) mach=$(bytes "$f" 18 2)
		if [ "$cls" = 02 ] && [ "$data" = 01 ] && [ "$mach" = 1500 ]; then
			echo ppc64le	# EM_PPC64, little-endian: a vmlinux SLOF loads
			return 0
		fi
		if [ "$cls" = 02 ] && [ "$data" = 02 ] && [ "$mach" = 0015 ]; then
			echo "a big-endian ppc64 ELF kernel (only ppc64le guests run here)"
			return 1
		fi
		echo "an ELF file, not a kernel boot image (ELF only for ppc64le; use bzImage or Image)"
		return 1
	fi
	echo "not a kernel image"
	return 1
}

unpacked() {	# FILE HOW: path= the cached decompressed copy; status 1
	# with toobig=1 when it unpacks to more than IMAGE_MAX bytes
	local f=$1 how=$2 sum out st off size
	sum=$(sha256sum "$f" | cut -c1-16)
	out=$cache/kernels/unpacked/$sum.img
	if [ ! -s "$out" ]; then
		mkdir -p "$cache/kernels/unpacked"
		partial=$out.$$
		case $how in
		gzip)
			gzip -dc "$f" 2>/dev/null | head -c $((IMAGE_MAX + 1)) > "$partial"
			st=${PIPESTATUS[0]} ;;
		zboot-gzip|zboot-zstd)
			off=$(le32 "$f" 8)
			size=$(le32 "$f" 12)
			tail -c +$((off + 1)) "$f" | head -c "$size" |
				if [ "$how" = zboot-gzip ]; then gzip -dc; else zstd -dcq; fi 2>/dev/null |
				head -c $((IMAGE_MAX + 1)) > "$partial"
			st=${PIPESTATUS[2]} ;;
		esac
		# (the decompressor ends by SIGPIPE when head stops at the cap)
		if [ "$(stat -c %s "$partial")" -gt "$IMAGE_MAX" ]; then
			toobig=1
			st=1
		fi
		if [ "$st" != 0 ]; then
			rm -f "$partial"
			partial=
			return 1
		fi
		mv -f "$partial" "$out"
		partial=
		fresh=$out
	fi
	path=$out
}

# FILE ARCH -> the kernel release the image carries, or nothing
release() {
	local f=$1 off r=''
	case $2 in
	x86_64|i386)
		off=$(bytes "$f" 526 2)		# kernel_version, 0x20e
		off=$((16#${off:2:2}${off:0:2}))
		[ "$off" -gt 0 ] &&
			r=$(tail -c +$((off + 512 + 1)) "$f" | head -c 256 | tr '\0' '\n' | head -n 1 | cut -d' ' -f1) ;;
	arm64|riscv64|ppc64le)	# uncompressed: the banner is there
		r=$(grep -a -o -m 1 'Linux version [0-9][^ ]*' "$f" | head -n 1 | cut -d' ' -f3) ;;
	esac
	r=$(printf '%s' "$r" | tr -c 'A-Za-z0-9._+-' _)
	case $r in
	[0-9]*.*) echo "$r" ;;
	esac
}

case $spec in
debian:*)
	vf=${spec#debian:}
	[ -n "$vf" ] || die "'debian:' needs VERSION-FLAVOUR or LINE-FLAVOUR (e.g. debian:6.1.0-47-cloud-amd64, debian:6.12-cloud-amd64)"
	read -r arch label path < <("$here/debian.sh" "$vf") || exit 2
	[ -n "${path:-}" ] || exit 2
	;;
tree:*)
	t=${spec#tree:}
	[ -n "$t" ] || die "tree: needs a path (tree:/path/to/linux)"
	path=$("$here/build.sh" --arch "${want:-x86_64}" "$t") || exit $?
	label=tree
	;;
*)
	[ -e "$spec" ] || die "no such kernel image: $spec"
	[ -f "$spec" ] || die "not a regular file: $spec"
	[ -r "$spec" ] || die "cannot read kernel image: $spec"
	path=$(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")
	label=$(basename "$spec" | sed -e 's/[^A-Za-z0-9._+-]/_/g')
	;;
esac
# Any of them may be compressed (Debian's arm64 vmlinuz may be an EFI
# zboot image).
case $(bytes "$path" 0 2) in
1f8b)
	unpacked "$path" gzip || {
		[ -z "$toobig" ] || die "$spec: unpacks to more than $((IMAGE_MAX >> 20)) MiB: not a kernel image"
		die "$spec: not a kernel image (bad gzip data)"
	} ;;
4d5a)	# MZ: PE; an EFI zboot image says "zimg" and its compression
	if [ "$(bytes "$path" 4 4)" = 7a696d67 ]; then
		comp=$(bytes "$path" 24 4)
		case $comp in
		677a6970) unpacked "$path" zboot-gzip ;;
		7a737464) unpacked "$path" zboot-zstd ;;
		*) die "$spec: EFI zboot image with an unsupported compression" ;;
		esac || {
			[ -z "$toobig" ] || die "$spec: unpacks to more than $((IMAGE_MAX >> 20)) MiB: not a kernel image"
			die "$spec: cannot unpack the EFI zboot image"
		}
	fi ;;
esac

# A copy this run unpacked that is no kernel is not kept (issue 28).
arch=$(identify "$path") || { rm -f "${fresh:-}"; die "$spec: $arch"; }
if [ -n "$want" ] && [ "$want" != "$arch" ]; then
	die "$spec is an $arch kernel, not $want"
fi
r=$(release "$path" "$arch")
echo "$arch ${r:-$label} $path"
