#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A clone in a directory whose path holds a space: make, make clean and
# ./run_tests.sh must work there and write or remove nothing outside the
# clone and PERF_ABI_CACHE.  "D/victim repo" is the clone; "D/victim", the
# part of its path before the space, is a sentinel that must survive.  The
# framework comes from this tree's own (KSRC=), so no tarball is unpacked.
# Prints KTAP; exit 1 on failure.
set -u

top=$(cd "$(dirname "$0")/../../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MAKELEVEL
ksrc=$(make -s -C "$top" --no-print-directory print-build 2>/dev/null || echo "$top/build")/ksft-6.12
box=$tmp/box		# the sandbox; the test's own files stay beside it
dst="$box/victim repo"
export PERF_ABI_CACHE="$box/cache"
echo "TAP version 13"
echo "1..6"
if [ ! -f "$ksrc/tools/testing/selftests/lib.mk" ]; then
	for i in 1 2 3 4 5 6; do echo "ok $i space # SKIP no framework in $ksrc (make stage)"; done
	exit 0
fi

mkdir -p "$box/victim" "$dst" "$PERF_ABI_CACHE"
echo keep > "$box/victim/sentinel"
(cd "$top" && git ls-files -z --cached --others --exclude-standard 2>/dev/null |
	tar --null -T - -cf - 2>/dev/null) | tar -C "$dst" -xf -
[ -x "$dst/run_tests.sh" ] || cp -a "$top/." "$dst/"	# not a git tree
rm -rf "$dst/build"

snap() {	# everything under D but the clone and the cache
	find "$box" \( -path "$dst" -o -path "$box/cache" \) -prune -o -printf '%p %s %T@\n' |
		sort
	cat "$box/victim/sentinel"
}
snap > "$tmp/before"
n=0 failed=0
check() {	# NAME LOG: ok when the last command succeeded and D is intact
	local rc=$? why=
	n=$((n + 1))
	[ "$rc" = 0 ] || why="exit $rc"
	snap > "$tmp/after"
	cmp -s "$tmp/before" "$tmp/after" || why="${why:+$why, }wrote or removed outside the clone and the cache"
	if [ -z "$why" ]; then
		echo "ok $n $1"
	else
		sed -e 's/^/# /' "$2" | tail -n 10
		diff "$tmp/before" "$tmp/after" | sed -e 's/^/# /' | head -n 10
		echo "not ok $n $1 # $why"
		failed=$((failed + 1))
	fi
}

out=$(make -n -C "$dst" --no-print-directory clean 2>&1)
echo "$out" > "$tmp/log"
case $out in
*"rm -rf \"$PERF_ABI_CACHE/trees/"*) ;;
*) false ;;
esac
check "make -n clean removes only the build tree (quoted)" "$tmp/log"

make -C "$dst" --no-print-directory framework KSRC="$ksrc" >"$tmp/log" 2>&1
check "make framework" "$tmp/log"

make -C "$dst" --no-print-directory build KSRC="$ksrc" >"$tmp/log" 2>&1 &&
	[ -L "$dst/build" ] && [ -x "$dst/build/host-ksft-ksrc/mmap_page" ]
check "make build (the tree in the cache, build/ links to it)" "$tmp/log"

(cd "$dst" && KSRC="$ksrc" ./run_tests.sh -t mmap_page:sideband.data_head_counts_records \
	-o "$dst/out dir") >"$tmp/log" 2>&1 &&
	grep -q '^# ok 1 sideband.data_head_counts_records' "$dst/out dir/host.ktap"
check "./run_tests.sh -t ... -o 'out dir'" "$tmp/log"

make -C "$dst" --no-print-directory clean >"$tmp/log" 2>&1 &&
	[ ! -e "$dst/build" ] && [ -z "$(ls -A "$PERF_ABI_CACHE/trees" 2>/dev/null)" ] &&
	[ -f "$dst/run_tests.sh" ]
check "make clean" "$tmp/log"

# The clone itself: nothing but build/ and the output dir appeared in it.
(cd "$top" && git ls-files --cached --others --exclude-standard 2>/dev/null | sort) > "$tmp/want"
(cd "$dst" && find . ! -type d ! -path './out dir/*' | sed 's|^\./||' | sort) > "$tmp/got"
n=$((n + 1))
if [ ! -s "$tmp/want" ] || cmp -s "$tmp/want" "$tmp/got"; then
	echo "ok $n the clone holds its files and the output only"
else
	diff "$tmp/want" "$tmp/got" | sed -e 's/^/# /' | head
	echo "not ok $n the clone holds its files and the output only"
	failed=$((failed + 1))
fi
[ "$failed" = 0 ]
