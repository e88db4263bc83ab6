#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A pristine kernel tree from Debian's linux-source-VER package, extracted
# once into $PERF_ABI_CACHE/trees/linux-source-VER/PKGVERSION/ and
# git-initialised (one commit, branch "pristine").  Prints the tree's path.
# Usage: tree.sh VER         5.10 (bullseye), 6.1, 6.12 (bookworm),
#                            7.3 (trixie-backports), or VER@SUITE
# The package comes through lib/apt-fetch.sh (a private package list for
# suites other than the machine's); a new package version makes a new tree
# and removes the older ones of that VER.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
die() {
	echo "tree.sh: $*" >&2
	exit 2
}

spec=${1:-}
[ -n "$spec" ] || die "usage: tree.sh VER[@SUITE] (5.10, 6.1, 6.12, 7.3)"
ver=${spec%@*}
suite=
[ "$spec" = "$ver" ] || suite=${spec#*@}
if [ -z "$suite" ]; then
	case $ver in
	5.10) suite=bullseye ;;
	6.1 | 6.12) suite=bookworm ;;
	7.3) suite=trixie-backports ;;
	*) die "no suite known for linux-source-$ver (give VER@SUITE)" ;;
	esac
fi
case $ver in
[0-9]*.[0-9]*) ;;
*) die "'$ver' is not a kernel version like 6.12" ;;
esac

pkg=linux-source-$ver
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
base=$cache/trees/$pkg
if ! deb=$("$here/../lib/apt-fetch.sh" --suite "$suite" --deb "$(dpkg --print-architecture)" "$pkg"); then
	# The archive out of reach: a tree already extracted still serves.
	for t in "$base"/*/.git/perf-abi-pristine; do
		if [ -f "$t" ]; then
			echo "tree.sh: using the cached $(dirname "$(dirname "$t")")" >&2
			dirname "$(dirname "$t")"
			exit 0
		fi
	done
	die "cannot fetch $pkg from $suite"
fi
pver=$(dpkg-deb -f "$deb" Version) || die "cannot read the version of $deb"
tree=$base/${pver//:/_}
mkdir -p "$base"

(
	flock 9
	if [ -f "$tree/.git/perf-abi-pristine" ]; then
		exit 0
	fi
	echo "tree.sh: extracting $pkg $pver ($suite) into $tree" >&2
	tmp=$tree.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO "./usr/src/$pkg.tar.xz" |
		tar -xJ -C "$tmp" --strip-components=1 ||
		{ rm -rf "$tmp"; echo "tree.sh: cannot unpack $deb" >&2; exit 2; }
	[ -f "$tmp/Makefile" ] && [ -d "$tmp/tools/testing/selftests" ] ||
		{ rm -rf "$tmp"; echo "tree.sh: $deb holds no kernel tree" >&2; exit 2; }
	# Debian's .gitignore ends with "/*" (ignore everything): add -f.
	# No automatic gc: it would pack 1 GB in the background, holding the
	# lock (fd 9) for minutes.
	g=(git -C "$tmp" -c core.looseCompression=1 -c core.compression=1
	   -c gc.auto=0 -c maintenance.auto=false
	   -c user.name=perf-abi -c user.email=perf-abi@localhost)
	"${g[@]}" init -q -b pristine
	git -C "$tmp" config gc.auto 0
	git -C "$tmp" config maintenance.auto false
	"${g[@]}" add -f -A .
	"${g[@]}" commit -q --no-verify -m "$pkg $pver (Debian $suite), pristine"
	git -C "$tmp" config user.name perf-abi
	git -C "$tmp" config user.email perf-abi@localhost
	# Files written in the same second as the index are "racily clean":
	# refresh now, or the first checkout rehashes the whole tree.
	sleep 1
	git -C "$tmp" update-index -q --really-refresh
	git -C "$tmp" rev-parse HEAD > "$tmp/.git/perf-abi-pristine"
	rm -rf "$tree"
	mv "$tmp" "$tree"
	for old in "$base"/*; do
		[ "$old" = "$tree" ] || [ ! -d "$old" ] || rm -rf "$old"
	done
) 9> "$base/.lock" || exit 2
echo "$tree"
