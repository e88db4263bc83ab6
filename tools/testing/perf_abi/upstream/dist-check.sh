#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make dist, then make install from the unpacked tarball, as a user would.
# Usage: dist-check.sh KTAP
# KTAP gets one result per step: the tarball is made, holds exactly the
# files git tracks plus VERSION, builds and installs with DESTDIR and
# PREFIX, and its installed runner lists our programs and runs mmap_page.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
if [ $# -ne 1 ]; then
	echo "usage: dist-check.sh KTAP" >&2
	exit 2
fi
ktap=$1
work=$top/build/dist-check
rm -rf "$work"
mkdir -p "$work"
n=0
fail=0
lines=()
res() {	# VERDICT NAME [DETAIL]
	n=$((n + 1))
	[ -z "${3:-}" ] || lines+=("# $2: $3")
	case $1 in
	pass) lines+=("ok $n selftests: dist: $2") ;;
	skip) lines+=("ok $n selftests: dist: $2 # SKIP ${3:-}") ;;
	*) lines+=("not ok $n selftests: dist: $2"); fail=1 ;;
	esac
}
finish() {
	{
		echo "TAP version 13"
		echo "1..$n"
		printf '%s\n' "${lines[@]}"
	} > "$ktap"
	grep -v '^TAP\|^1\.\.' "$ktap" | grep -v '^#' | sed 's/^/dist: /'
	exit $fail
}

if ! git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	res skip "make dist" "needs a git clone"
	finish
fi
if ! tgz=$(make -s -C "$top" --no-print-directory dist 2> "$work/dist.log" | tail -n 1) ||
   [ ! -s "$tgz" ]; then
	res fail "make dist" "$(tail -n 1 "$work/dist.log")"
	finish
fi
name=$(basename "$tgz" .tar.gz)
res pass "make dist" "$(basename "$tgz")"

tar -tzf "$tgz" | sed -n "s|^$name/||p" | grep -v '/$' | grep . | sort > "$work/members"
(cd "$top" && git ls-files | sort) > "$work/tracked"
{ cat "$work/tracked"; echo VERSION; } | sort > "$work/want"
if cmp -s "$work/members" "$work/want"; then
	res pass "tarball members" "$(wc -l < "$work/members") files: what git tracks and VERSION"
else
	res fail "tarball members" "differ from git ls-files + VERSION: $(diff "$work/want" "$work/members" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
fi

tar -xzf "$tgz" -C "$work"
ver=$(cat "$work/$name/VERSION")
if [ "$name" = "perf-abi-selftests-$ver" ]; then
	res pass "version" "$ver"
else
	res fail "version" "VERSION says $ver, the tarball is $name"
fi

dest=$work/root
if make -C "$work/$name" --no-print-directory install DESTDIR="$dest" PREFIX=/usr \
	> "$work/install.log" 2>&1; then
	res pass "make install DESTDIR PREFIX=/usr from the tarball"
else
	res fail "make install DESTDIR PREFIX=/usr from the tarball" "$(tail -n 1 "$work/install.log")"
	finish
fi
inst=$dest/usr/libexec/perf-abi-selftests
missing=
for f in run_kselftest.sh kselftest/runner.sh kselftest-list.txt perf_events/settings; do
	[ -e "$inst/$f" ] || missing="$missing $f"
done
grep -q "$ver" "$dest/usr/bin/perf-abi-selftests" || missing="$missing bin/perf-abi-selftests"
if [ -z "$missing" ]; then
	res pass "installed tree" "runner, settings, $(grep -c '^perf_events:' "$inst/kselftest-list.txt") programs, bin/perf-abi-selftests"
else
	res fail "installed tree" "lacks$missing"
fi
(cd "$inst" && ./run_kselftest.sh -l) > "$work/list.log" 2>&1
if grep -qx 'perf_events:mmap_page' "$work/list.log"; then
	res pass "installed run_kselftest.sh -l" "$(tr '\n' ' ' < "$work/list.log")"
else
	res fail "installed run_kselftest.sh -l" "no perf_events:mmap_page"
fi
(cd "$inst" && ./run_kselftest.sh -t perf_events:mmap_page) 2>&1 | cat > "$work/run.log"
if s=$(python3 "$top/tools/testing/perf_abi/lib/ktap.py" summary "$work/run.log" installed); then
	res pass "installed run_kselftest.sh -t perf_events:mmap_page" "$s"
else
	rc=$?
	if [ $rc = 4 ]; then
		res skip "installed run_kselftest.sh -t perf_events:mmap_page" "every test skipped"
	else
		res fail "installed run_kselftest.sh -t perf_events:mmap_page" "$s"
	fi
fi
finish
