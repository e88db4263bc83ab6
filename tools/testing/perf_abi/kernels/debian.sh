#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Resolve a Debian kernel, VERSION-FLAVOUR (what follows "debian:" in a
# kernel SPEC, e.g. 6.1.0-47-cloud-amd64 or 6.12.118+deb12-arm64), to its
# linux-image-VERSION-FLAVOUR-unsigned package, fetch that with apt-get
# download (through lib/apt-fetch.sh, so arm64 works on an amd64 host),
# unpack the kernel with dpkg-deb and cache it:
#
#   debian.sh VERSION-FLAVOUR     print "ARCH PATH" of the cached vmlinuz
#   debian.sh --list ARCH         print the VERSION-FLAVOURs apt knows
#
# ARCH is x86_64 or arm64.  The cache is $PERF_ABI_CACHE/kernels/debian/;
# a cached kernel is used without asking apt again.  Exit 2, with one line
# on stderr, for an unknown flavour or version (the line lists the
# versions apt knows) or a failed download.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
fetch=$here/../lib/apt-fetch.sh
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}

die() {
	echo "debian.sh: $*" >&2
	exit 2
}

# Debian architecture of a flavour: amd64, cloud-amd64, rt-amd64, arm64,
# cloud-arm64, rt-arm64, arm64-16k.
flavour_arch() {
	case $1 in
	*amd64) echo x86_64 ;;
	*arm64|*arm64-16k) echo arm64 ;;
	*) return 1 ;;
	esac
}

deb_arch() {
	case $1 in
	x86_64) echo amd64 ;;
	*) echo "$1" ;;
	esac
}

known() {	# ARCH -> VERSION-FLAVOUR per line
	"$fetch" --list "$(deb_arch "$1")" '^linux-image-[0-9].*-unsigned$' |
		sed -e 's/^linux-image-//' -e 's/-unsigned$//'
}

if [ "${1:-}" = --list ]; then
	known "${2:?usage: debian.sh --list ARCH}"
	exit 0
fi

vf=${1:?usage: debian.sh VERSION-FLAVOUR | --list ARCH}
case $vf in
*/*|*' '*|'') die "bad Debian kernel name '$vf'" ;;
esac
# VERSION is 6.1.0-N or 6.12.N+debNN; the flavour is the rest.
version=$(echo "$vf" | sed -nE 's/^([0-9]+\.[0-9]+(\.[0-9]+)?(-[0-9]+|\+deb[0-9]+)?)-.*/\1/p')
flavour=${vf#"$version"-}
[ -n "$version" ] && [ "$flavour" != "$vf" ] ||
	die "'debian:$vf' is not VERSION-FLAVOUR (e.g. debian:6.1.0-47-cloud-amd64, debian:6.12.118+deb12-arm64)"
arch=$(flavour_arch "$flavour") ||
	die "unknown Debian kernel flavour '$flavour' in 'debian:$vf' (amd64, cloud-amd64, rt-amd64, arm64, cloud-arm64, rt-arm64, arm64-16k)"

dir=$cache/kernels/debian/$vf
if [ -s "$dir/vmlinuz" ]; then
	echo "$arch $dir/vmlinuz"
	exit 0
fi

pkg=linux-image-$vf-unsigned
list=$(known "$arch" 2>/dev/null) || die "cannot read the $(deb_arch "$arch") package lists (apt-get update failed?)"
if ! grep -qxF "$vf" <<<"$list"; then
	versions=$(sed -nE "s/^(.*)-$flavour\$/\\1/p" <<<"$list" | sort -uV | tr '\n' ' ')
	flavours=$(sed -nE 's/^[0-9]+\.[0-9]+(\.[0-9]+)?(-[0-9]+|\+deb[0-9]+)?-//p' <<<"$list" | sort -u | tr '\n' ' ')
	if [ -n "$versions" ]; then
		die "unknown Debian kernel 'debian:$vf': apt knows no $pkg; $flavour versions apt knows: ${versions% }"
	fi
	die "unknown Debian kernel 'debian:$vf': apt knows no $pkg; $(deb_arch "$arch") flavours apt knows: ${flavours% }"
fi

deb=$("$fetch" --deb "$(deb_arch "$arch")" "$pkg") || die "could not download $pkg"
mkdir -p "$cache/kernels/debian"
tmp=$(mktemp -d "$cache/kernels/debian/.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./boot ||
	die "cannot unpack $deb"
img=$(ls "$tmp"/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$img" ] || die "$deb has no /boot/vmlinuz-*"
mv "$img" "$tmp/vmlinuz"
cp "$tmp"/boot/config-* "$tmp/config" 2>/dev/null || true
rm -rf "$tmp/boot"
echo "$deb" > "$tmp/deb"
# Another run may have unpacked it meanwhile: either copy will do.
mv -T "$tmp" "$dir" 2>/dev/null || [ -s "$dir/vmlinuz" ] || die "cannot write $dir"
echo "$arch $dir/vmlinuz"
