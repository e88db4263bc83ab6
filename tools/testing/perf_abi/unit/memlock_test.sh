#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A ring the machine will not lock is a SKIP, not a FAIL: mmap_page's
# 128-page case run as uid 65534 with RLIMIT_MEMLOCK 0 and
# perf_event_mlock_kb lowered to 64 for the run (put back on exit), as
# on a machine with 64K pages, where the default 516 KiB is 8 pages.
# Needs root and KSFT_SELFTESTS (from make check-unit).  Prints KTAP.
set -u
ksft=${KSFT_SELFTESTS:?KSFT_SELFTESTS: the framework tree}
knob=/proc/sys/kernel/perf_event_mlock_kb
echo "TAP version 13"
echo "1..1"
name="page.task_clock_on_cpu_inherit_128_pages.abi: SKIP past the allowance"
if [ "$(id -u)" != 0 ] || ! [ -w "$knob" ]; then
	echo "ok 1 $name # SKIP needs root"
	exit 0
fi
tmp=$(mktemp -d)
old=$(cat "$knob")
trap 'echo "$old" > "$knob"; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cc -O2 -Wall -I"$ksft" -o "$tmp/mmap_page" "$ksft/perf_events/mmap_page.c" -lcap -lpthread ||
	{ echo "Bail out! cannot build mmap_page"; exit 1; }
echo 64 > "$knob"
(ulimit -l 0 && setpriv --reuid 65534 --regid 65534 --clear-groups \
	"$tmp/mmap_page" -v task_clock_on_cpu_inherit_128_pages) > "$tmp/out" 2>&1
rc=$?
if { [ "$rc" = 0 ] || [ "$rc" = 4 ]; } && grep -q '# SKIP needs perf_event_mlock_kb or RLIMIT_MEMLOCK' "$tmp/out"; then
	echo "ok 1 $name"
else
	echo "not ok 1 $name # exit $rc"
	sed 's/^/# /' "$tmp/out"
	exit 1
fi
