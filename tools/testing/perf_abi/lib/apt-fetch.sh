#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian packages of another architecture (or this one) with apt,
# without touching the system's package state, and unpack them.
# Usage: apt-fetch.sh ARCH DESTDIR PKG...      unpack PKGs into DESTDIR
#        apt-fetch.sh --deb ARCH PKG          download PKG's .deb into the
#                                              cache, print its path
#        apt-fetch.sh --list ARCH REGEX       package names apt knows
# ARCH is a Debian architecture (amd64, arm64) or x86_64.  Lists live in
# $PERF_ABI_CACHE/apt-ARCH, refreshed when older than a day.
set -eu

mode=unpack
case ${1:-} in
--deb) mode=deb; shift ;;
--list) mode=list; shift ;;
esac
arch=${1:?usage: apt-fetch.sh [--deb|--list] ARCH ...}
shift
case $arch in
x86_64) arch=amd64 ;;
aarch64) arch=arm64 ;;
esac
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
lists=$cache/apt-$arch/lists
mkdir -p "$lists/partial" "$cache/debs"

apt_opts=(-o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
	  -o "Dir::State::Lists=$lists" -o "Dir::Cache=$cache/apt-$arch/cache"
	  -o Debug::NoLocking=1 -q)
mkdir -p "$cache/apt-$arch/cache/archives/partial"

if [ -z "$(find "$lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -n 1)" ]; then
	# A mirror hiccup (or a second apt-fetch updating the same lists at
	# the same moment) fails one update: try twice more before giving up.
	if ! apt-get "${apt_opts[@]}" update >/dev/null 2>&1 &&
	   ! { sleep 2; apt-get "${apt_opts[@]}" update >/dev/null 2>&1; } &&
	   ! { sleep 5; apt-get "${apt_opts[@]}" update >/dev/null 2>&1; }; then
		echo "apt-fetch: cannot update the $arch package lists" >&2
		exit 2
	fi
fi

if [ "$mode" = list ]; then
	apt-cache "${apt_opts[@]}" pkgnames | grep -E "${1:?regex}" | sort -V
	exit 0
fi

fetch() {	# PKG -> path of the .deb in the cache
	local pkg=$1 ver deb
	ver=$(apt-cache "${apt_opts[@]}" policy "$pkg" 2>/dev/null |
		awk '/Candidate:/ { print $2 }')
	if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
		echo "apt-fetch: no package $pkg for $arch" >&2
		return 2
	fi
	deb=$(ls "$cache/debs/${pkg}_"*"_$arch.deb" 2>/dev/null | head -n 1 || true)
	if [ -z "$deb" ]; then
		(cd "$cache/debs" && apt-get "${apt_opts[@]}" download "$pkg=$ver" >/dev/null 2>&1) || {
			echo "apt-fetch: download of $pkg ($arch) failed" >&2
			return 2
		}
		deb=$(ls "$cache/debs/${pkg}_"*"_$arch.deb" | head -n 1)
	fi
	echo "$deb"
}

if [ "$mode" = deb ]; then
	fetch "${1:?pkg}"
	exit 0
fi

dest=${1:?usage: apt-fetch.sh ARCH DESTDIR PKG...}
shift
mkdir -p "$dest"
for pkg in "$@"; do
	deb=$(fetch "$pkg")
	dpkg-deb -x "$deb" "$dest"
done
