#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Resolve a Debian kernel (what follows "debian:" in a kernel SPEC) to a
# cached kernel image, from any of the suites bullseye, bookworm, trixie,
# trixie-backports and sid (lib/apt-fetch.sh, private package lists):
#
#   debian.sh VERSION-FLAVOUR   e.g. 5.10.0-32-cloud-amd64, 7.3.4+deb13-arm64
#   debian.sh LINE-FLAVOUR      e.g. 6.12-cloud-amd64, 7.3-arm64: the newest
#                               kernel of that line, resolved now
#       print "ARCH VERSION-FLAVOUR PATH" of the cached vmlinuz
#   debian.sh --index ARCH      "VERSION-FLAVOUR PKGVERSION SUITE PACKAGE"
#                               of every kernel apt knows, newest first
#   debian.sh --lines [REGEX]   what the archive has, grouped by line,
#                               newest first (run_tests.sh --list-kernels)
#
# Two packagings: linux-image-VF-unsigned holding /boot/vmlinuz-VF
# (bullseye to trixie), and linux-image-VF depending on linux-binary-VF,
# which holds /usr/lib/modules/VF/vmlinuz (trixie-backports, sid).  A
# package the lists name but the pool does not serve (lists run ahead of
# the mirror) falls back to the next version that fits.  The cache is
# $PERF_ABI_CACHE/kernels/debian/VF/; a cached exact version is used
# without asking apt.  Exit 2, with one line on stderr, for an unknown
# flavour or version (the line lists what apt knows) or a failed download.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
fetch=$here/../lib/apt-fetch.sh
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
suites="bullseye bookworm trixie trixie-backports sid"
# longest first: a flavour may end in another one
flavours="cloud-amd64 rt-amd64 amd64 cloud-arm64 rt-arm64 arm64-16k arm64 powerpc64le-64k powerpc64le s390x riscv64 686-pae 686 armmp-lpae armmp"

die() {
	echo "debian.sh: $*" >&2
	exit 2
}

flavour_arch() {
	case $1 in
	*amd64) echo x86_64 ;;
	*arm64|*arm64-16k) echo arm64 ;;
	s390x) echo s390x ;;
	powerpc64le|powerpc64le-64k) echo ppc64le ;;
	riscv64) echo riscv64 ;;
	686|686-pae) echo i386 ;;
	armmp|armmp-lpae) echo armhf ;;
	*) return 1 ;;
	esac
}

deb_arch() {
	case $1 in
	x86_64) echo amd64 ;;
	ppc64le) echo ppc64el ;;
	*) echo "$1" ;;
	esac
}

# ARCH -> index lines, newest package version first, cached until a list
# of that arch is refreshed.  A suite whose lists cannot be refreshed is
# named on stderr and left out.
index() {
	local a da s idx stale=
	a=$1
	da=$(deb_arch "$a")
	idx=$cache/apt/index-$da
	for s in $suites; do
		"$fetch" --refresh "$da" "$s" || true
		if [ ! -f "$idx" ] || [ "$cache/apt/$s-$da/stamp" -nt "$idx" ]; then
			stale=1
		fi
	done
	if [ -n "$stale" ]; then
		# s390x, ppc64el, riscv64, armhf: no signed kernels, so no
		# -unsigned package; linux-image-VF holds /boot/vmlinu[xz]-VF itself
		local kre="$da(-16k)?" plain=
		case $da in
		ppc64el) kre='powerpc64le(-64k)?' plain=1 ;;
		s390x|riscv64) plain=1 ;;
		i386) kre='686(-pae)?' ;;
		armhf) kre='armmp(-lpae)?' plain=1 ;;
		esac
		for s in $suites; do
			[ -f "$cache/apt/$s-$da/stamp" ] || continue
			"$fetch" --suite "$s" --show "$da" \
				"^linux-(image|binary)-[0-9].*-$kre(-unsigned)?\$" 2>/dev/null |
				awk -v s="$s" -v plain="$plain" '
				$1 ~ /-unsigned$/ { vf = $1; sub(/^linux-image-/, "", vf)
					sub(/-unsigned$/, "", vf); print vf, $2, s, $1; next }
				$1 ~ /^linux-image-/ { vf = $1; sub(/^linux-image-/, "", vf)
					if (index($3, "linux-binary-" vf "(") || index($3, "linux-binary-" vf ","))
						print vf, $2, s, $1
					else if (plain && $3 !~ /linux-binary-/)
						print vf, $2, s, $1 }'
		done | sort -k2,2rV -k1,1rV -u > "$idx.$$"
		mv -f "$idx.$$" "$idx"
	fi
	cat "$idx"
}

# VERSION-FLAVOUR -> "VERSION FLAVOUR", or status 1
split_vf() {
	local f
	for f in $flavours; do
		case $1 in
		?*-"$f") echo "${1%-"$f"} $f"; return 0 ;;
		esac
	done
	return 1
}

line_of() {	# VERSION -> major.minor
	echo "$1" | sed -nE 's/^([0-9]+\.[0-9]+).*/\1/p'
}

if [ "${1:-}" = --index ]; then
	index "${2:?usage: debian.sh --index ARCH}"
	exit 0
fi

if [ "${1:-}" = --lines ]; then
	# one output line per kernel line: its versions newest first, each
	# run of versions followed by the suite they come from, then the
	# flavours (those matching REGEX)
	pat=${2:-.}
	{ index x86_64; index arm64; index i386; index armhf; } | grep -E -- "$pat" |
		while read -r vf pv s _; do
			read -r v f <<<"$(split_vf "$vf")" || continue
			echo "$(line_of "$v") $v $f $pv $s"
		done | sort -k1,1rV -k4,4rV -k2,2rV | awk '
		function out() {
			if (l != "") printf "%-6s %s %s   [%s]\n", l, vs, ls, fl
		}
		$1 != l { out(); l = $1; vs = ""; ls = ""; fl = ""; delete seen; delete fs }
		!(($2) in seen) { seen[$2] = 1
			if (ls != "" && ls != $5) { vs = vs " " ls ";"; }
			vs = vs (vs == "" || ls != $5 ? "" : ",") (vs == "" ? "" : " ") $2; ls = $5 }
		!(($3) in fs) { fs[$3] = 1; fl = fl (fl == "" ? "" : " ") $3 }
		END { out() }'
	exit 0
fi

spec=${1:?usage: debian.sh VERSION-FLAVOUR | LINE-FLAVOUR | --index ARCH | --lines [REGEX]}
case $spec in
*/*|*' '*|'') die "bad Debian kernel name '$spec'" ;;
esac
read -r version flavour <<<"$(split_vf "$spec")" || true
if [ -z "${version:-}" ]; then
	f=$(echo "$spec" | sed -nE 's/^[0-9]+\.[0-9]+(\.[0-9]+)?(-[0-9]+(\.deb[0-9]+\.[0-9]+)?|\+deb[0-9]+(\.[0-9]+)?)?-//p')
	[ -z "$f" ] ||
		die "unknown Debian kernel flavour '$f' in 'debian:$spec' (${flavours// /, })"
fi
[ -n "${version:-}" ] && [[ $version =~ ^[0-9]+\.[0-9]+ ]] ||
	die "'debian:$spec' is not VERSION-FLAVOUR or LINE-FLAVOUR (e.g. debian:6.1.0-47-cloud-amd64, debian:7.3.4+deb13-arm64, debian:6.12-cloud-amd64; flavours: ${flavours// /, })"
arch=$(flavour_arch "$flavour")
lineonly=
[[ $version =~ ^[0-9]+\.[0-9]+$ ]] && lineonly=1

if [ -z "$lineonly" ] && [ -s "$cache/kernels/debian/$spec/vmlinuz" ]; then
	echo "$arch $spec $cache/kernels/debian/$spec/vmlinuz"
	exit 0
fi

idx=$(index "$arch")
[ -n "$idx" ] || die "cannot read any $(deb_arch "$arch") package list (apt-get update failed?)"
mine=$(awk -v f="$flavour" '{ n = length($1) - length(f)
	if (n > 1 && substr($1, n) == "-" f && substr($1, 1, n - 1) !~ /-(cloud|rt)$/) print }' <<<"$idx")
if [ -n "$lineonly" ]; then
	cands=$(awk -v l="$version" 'index($1, l ".") == 1 || index($1, l "-") == 1' <<<"$mine")
else
	cands=$(awk -v vf="$spec" '$1 == vf' <<<"$mine")
fi
if [ -z "$cands" ]; then
	if [ -z "$mine" ]; then
		die "unknown Debian kernel 'debian:$spec': apt knows no $flavour kernel"
	fi
	if [ -n "$lineonly" ]; then
		have=$(while read -r vf _; do line_of "$vf"; done <<<"$mine" | sort -uV | tr '\n' ' ')
		die "unknown Debian kernel line 'debian:$spec': $flavour lines apt knows: ${have% }"
	fi
	have=$(while read -r vf _; do echo "${vf%-"$flavour"}"; done <<<"$mine" | sort -uV | tr '\n' ' ')
	die "unknown Debian kernel 'debian:$spec': apt knows no linux-image-$spec; $flavour versions apt knows: ${have% }"
fi

# PKG VERSION SUITE VF DIR -> unpack the kernel of that package into DIR
unpack() {
	local pkg=$1 pv=$2 s=$3 vf=$4 dir=$5 deb bin
	deb=$("$fetch" --suite "$s" --deb "$(deb_arch "$arch")" "$pkg=$pv" 2>/dev/null) || return 1
	if dpkg-deb -c "$deb" 2>/dev/null | grep -qE " \./boot/vmlinu[xz]-"; then
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --wildcards './boot/vmlinu[xz]-*' './boot/config-*' 2>/dev/null ||
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" ./boot || return 1
		# ppc64el and riscv64 name it vmlinux (an ELF, an Image)
		mv "$dir"/boot/vmlinu[xz]-* "$dir/vmlinuz"
		mv "$dir"/boot/config-* "$dir/config" 2>/dev/null || true
		rm -rf "${dir:?}/boot"
	else
		bin=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -nE 's/^ *(linux-binary-[^ (]+).*/\1/p' | head -n 1)
		[ -n "$bin" ] || return 1
		deb=$("$fetch" --suite "$s" --deb "$(deb_arch "$arch")" "$bin=$pv" 2>/dev/null) || return 1
		dpkg-deb --fsys-tarfile "$deb" |
			tar -x -C "$dir" --wildcards "./usr/lib/modules/*/vmlinuz" "./boot/config-*" 2>/dev/null || true
		[ -s "$dir/usr/lib/modules/$vf/vmlinuz" ] || return 1
		mv "$dir/usr/lib/modules/$vf/vmlinuz" "$dir/vmlinuz"
		mv "$dir"/boot/config-* "$dir/config" 2>/dev/null || true
		rm -rf "${dir:?}/usr" "${dir:?}/boot"
	fi
	echo "$s $pkg $pv" > "$dir/deb"
}

mkdir -p "$cache/kernels/debian"
tried=
while read -r vf pv s pkg; do
	dir=$cache/kernels/debian/$vf
	if [ -s "$dir/vmlinuz" ]; then
		echo "$arch $vf $dir/vmlinuz"
		exit 0
	fi
	tmp=$(mktemp -d "$cache/kernels/debian/.tmp.XXXXXX")
	if unpack "$pkg" "$pv" "$s" "$vf" "$tmp"; then
		# Another run may have unpacked it meanwhile: either copy will do.
		mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
		[ -s "$dir/vmlinuz" ] || die "cannot write $dir"
		[ -z "$tried" ] || echo "debian.sh: $tried not served by the mirror; took $vf ($pv, $s)" >&2
		echo "$arch $vf $dir/vmlinuz"
		exit 0
	fi
	rm -rf "$tmp"
	tried="$tried${tried:+, }$pkg $pv ($s)"
done <<<"$cands"
die "could not download debian:$spec: $tried"
