#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lay out the kselftest framework from a real kernel tree, and nothing else.
# Usage: ksft.sh SRC DEST
#   SRC: a kernel source directory (KSRC=...) or a linux-source-*.tar.xz
#   DEST: a directory that becomes a minimal kernel tree: the selftests
#         framework, checkpatch, .clang-format, and the tree's own
#         perf_events selftests as perf_events.upstream (the reference
#         suite of the mutant matrix).
# Re-running with an unchanged SRC does nothing (stamp file).
set -eu

src=${1:?usage: ksft.sh SRC DEST}
dest=${2:?usage: ksft.sh SRC DEST}

files="tools/testing/selftests/Makefile
	tools/testing/selftests/lib.mk
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
	tools/testing/selftests/run_kselftest.sh
	tools/testing/selftests/kselftest
	tools/testing/selftests/perf_events
	scripts/subarch.include
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	.clang-format"

if [ -d "$src" ]; then
	[ -f "$src/tools/testing/selftests/lib.mk" ] || {
		echo "ksft.sh: $src is not a kernel tree (no tools/testing/selftests/lib.mk)" >&2
		exit 2
	}
	id="dir:$(cd "$src" && pwd):$(stat -c %Y "$src/tools/testing/selftests/lib.mk" \
		"$src/tools/testing/selftests/kselftest_harness.h" | tr '\n' :)"
elif [ -f "$src" ]; then
	id="tar:$(realpath "$src"):$(stat -c %s:%Y "$src")"
else
	echo "ksft.sh: no kernel source at $src (install linux-source-6.12, or give KSRC=<kernel tree>)" >&2
	exit 2
fi

if [ -f "$dest/.ksft-stamp" ] && [ "$(cat "$dest/.ksft-stamp")" = "$id" ]; then
	exit 0
fi

tmp="$dest.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

if [ -d "$src" ]; then
	for f in $files; do
		[ -e "$src/$f" ] || continue
		mkdir -p "$tmp/$(dirname "$f")"
		cp -a "$src/$f" "$tmp/$f"
	done
else
	top=$(tar -tJf "$src" | head -n 1 | cut -d/ -f1)
	members=
	for f in $files; do
		members="$members $top/$f"
	done
	# shellcheck disable=SC2086
	tar -xJf "$src" -C "$tmp" --strip-components=1 $members
fi
for f in tools/testing/selftests/lib.mk tools/testing/selftests/kselftest_harness.h \
	 tools/testing/selftests/kselftest/runner.sh; do
	[ -f "$tmp/$f" ] || { echo "ksft.sh: $src lacks $f" >&2; exit 2; }
done
if [ -d "$tmp/tools/testing/selftests/perf_events" ]; then
	mv "$tmp/tools/testing/selftests/perf_events" \
	   "$tmp/tools/testing/selftests/perf_events.upstream"
fi
echo "$id" > "$tmp/.ksft-stamp"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
