#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdpmc on this machine, where what it does needs no PMU: its user-access
# knob is a file the test makes, and whatever happens to the program, the
# knob ends as the rules of user_page.h's knobs say (a run puts back only
# what it wrote, only while the knob still holds it) and no process of
# the program outlives it.  The suite's rdpmc.c is built as it ships and
# run with knob_hang.c (LD_PRELOAD): glob() finds the knobs under the
# row's directory (KNOB_ROOT), and the test's perf_event_open() hangs,
# crashes, fails or is slow.  The rows:
#  1 the runner's timeout (SIGTERM to main) during a hung test: knob back
#    at 0, no process of the program left
#  2 SIGKILL of main during a hung test: no process left, the knobs' lock
#    released (a next run ends); the knob stays as the killed run left it
#  3-5 a crash, a failed ASSERT, a SKIP: knob back at 0
#  6 the knob set to 2 by someone else during the run: left at 2
#  7-11 two runs started 0, 10, 50, 200 and 1000 ms apart on one knob at
#    0: knob at 0 after each pair, and no FAIL in either.  On x86_64 the
#    runs are rdpmc linked with the x86 PMU model (x86_pmu_model.c), whose
#    rdpmc traps while the knob reads 0: a run that turns the knob off
#    under the other's user reads FAILs it; elsewhere the tests SKIP
#  12 a hang the harness's timeout kills: knob back at 0, no process left
#  13 no_counter_leak in a cpuset without CPU 0 (a container's) does not
#    fail; 14 the *_64bit tests exist only on arm64.
# Needs KSFT_SELFTESTS (the framework's tools/testing/selftests, from make
# check-unit); RDPMC_SRC=DIR: another rdpmc.c and user_page.h (an old one,
# which finds its knob in the file RDPMC_KNOB names: here getenv("KNOB")).
# Prints KTAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)

ksft=${KSFT_SELFTESTS:?KSFT_SELFTESTS: the framework tree}
src=${RDPMC_SRC:-$ksft/perf_events}
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/rdpmc" 2>/dev/null; rm -rf "$tmp"' EXIT
cflags=(-O2 -Wall -I"$ksft" -I"$src" '-DRDPMC_KNOB=getenv("KNOB")')

cc "${cflags[@]}" -o "$tmp/rdpmc" "$src/rdpmc.c" -lcap &&
	cc -O2 -Wall -shared -fPIC -o "$tmp/hang.so" "$here/knob_hang.c" -ldl ||
	{ echo "Bail out! cannot build rdpmc and knob_hang.so"; exit 1; }
model=
if [ "$(uname -m)" = x86_64 ]; then
	"$here/x86_pmu_model.sh" build "$tmp/rdpmc-model" "$src/rdpmc.c" cc \
		"${cflags[@]}" ||
		{ echo "Bail out! cannot build rdpmc with the x86 PMU model"; exit 1; }
	model=$tmp/rdpmc-model
fi

knob() { echo "$tmp/$1/sys/bus/event_source/devices/cpu/rdpmc"; }

# run ROW FAULT START TEST [PREFIX...]: rdpmc-ROW, its knob at START
run() {
	local row=$1 fault=$2 start=$3 test=$4
	shift 4
	mkdir -p "$(dirname "$(knob "$row")")"
	echo "$start" > "$(knob "$row")"
	ln -f "$tmp/rdpmc" "$tmp/rdpmc-$row"
	KNOB=$(knob "$row") KNOB_ROOT=$tmp/$row KNOB_FAULT=$fault \
		LD_PRELOAD=$tmp/hang.so "$@" "$tmp/rdpmc-$row" -t "$test" \
		> "$tmp/$row.out" 2>&1
}

# gone ROW: no process of rdpmc-ROW left within 3 s
gone() {
	local i
	for i in $(seq 30); do
		pgrep -f "$tmp/rdpmc-$1" > /dev/null || return 0
		sleep 0.1
	done
	return 1
}

# check ROW WANT WHAT GREP [COND]: the knob at WANT (within 5 s), GREP in
# the output, COND (a command) true
n=0 failed=0
check() {
	local row=$1 want=$2 what=$3 pat=$4 i v
	shift 4
	for i in $(seq 50); do
		v=$(cat "$(knob "$row")")
		[ "$v" = "$want" ] && break
		sleep 0.1
	done
	n=$((n + 1))
	if [ "$v" = "$want" ] && grep -q "$pat" "$tmp/$row.out" && "${@:-true}"; then
		echo "ok $n $what"
	else
		echo "not ok $n $what # knob $v, want $want${*:+; $*}"
		sed 's/^/# /' "$tmp/$row.out"
		failed=$((failed + 1))
	fi
}

echo "TAP version 13"
echo "1..14"
# the harness's 30 s timeout: started first, checked last
run timeout hang 0 cycles_counting & hung=$!

(run term hang 0 cycles_counting exec) & k=$!
sleep 1
kill -TERM "$k"
{ wait "$k"; } 2>/dev/null
check term 0 "the runner's timeout (SIGTERM to main): knob back, no process left" \
	'RUN' gone term

(run kill hang 0 cycles_counting exec) & k=$!
sleep 1
kill -KILL "$k"
{ wait "$k"; } 2>/dev/null
left=$(cat "$(knob kill)")
# the same knob, its lock free: the next run ends
ln -f "$tmp/rdpmc" "$tmp/rdpmc-next"
KNOB=$(knob kill) KNOB_ROOT=$tmp/kill KNOB_FAULT=error LD_PRELOAD=$tmp/hang.so \
	timeout -s KILL 20 "$tmp/rdpmc-next" -t cycles_counting >> "$tmp/kill.out" 2>&1
next=$?
check kill "$left" "SIGKILL of main: no process left, the next run ends (knob left at $left)" \
	'RUN' eval 'gone kill && [ "$next" != 137 ]'

run crash crash 0 cycles_counting
check crash 0 "a crash in the test: knob back" 'not ok 1'
run error error 0 cycles_counting
check error 0 "a failed ASSERT: knob back" 'not ok 1'
run skip slow 0 cycles_counting
check skip 0 "a SKIP: knob back" '^ok 1 .*# SKIP'

# someone else sets 2 while the run holds the 1 it wrote
run other slow 0 cycles_counting env KNOB_SLOW_MS=2000 & k=$!
sleep 1
was=$(cat "$(knob other)")
echo 2 > "$(knob other)"
wait "$k"
check other 2 "the knob set to 2 by someone else mid-run: not put back (it held $was)" \
	'^ok 1 ' test "$was" = 1

# pair ROW MS: two runs on one knob at 0, the second MS ms after the first;
# on the model the second's reads are slower, so that the runs' tests end
# out of step
pair() {
	local row=$1 ms=$2 a b r slow=1000
	mkdir -p "$(dirname "$(knob "$row")")"
	echo 0 > "$(knob "$row")"
	for r in a b; do
		if [ -n "$model" ]; then
			ln -f "$model" "$tmp/rdpmc-$row-$r"
			KNOB=$(knob "$row") X86_PMU_ROOT=$tmp/$row \
				X86_PMU_MODEL=4,3,fixed,slow=$slow \
				"$tmp/rdpmc-$row-$r" -t cycles_counting \
				-t instructions_sampling > "$tmp/$row-$r.out" 2>&1 &
		else
			ln -f "$tmp/rdpmc" "$tmp/rdpmc-$row-$r"
			KNOB=$(knob "$row") KNOB_ROOT=$tmp/$row KNOB_FAULT=slow \
				LD_PRELOAD=$tmp/hang.so "$tmp/rdpmc-$row-$r" \
				-t cycles_counting > "$tmp/$row-$r.out" 2>&1 &
		fi
		[ "$r" = a ] && a=$! && slow=1500 &&
			sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	done
	b=$!
	wait "$a" "$b"
	cat "$tmp/$row-a.out" "$tmp/$row-b.out" > "$tmp/$row.out"
}

# pairs: no FAIL, and on the model every test of both runs read a counter
for ms in 0 10 50 200 1000; do
	pair "pair$ms" "$ms"
	fails=$(grep -c '^not ok' "$tmp/pair$ms.out")
	reads=$(grep -Ec '^ok [0-9]+ agree\.[a-z_]+$' "$tmp/pair$ms.out")
	check "pair$ms" 0 "two runs ${ms} ms apart: knob back at 0, no FAIL ($fails FAIL, $reads of 4 tests read)" \
		'^ok ' eval '[ "$fails" = 0 ] && { [ -z "$model" ] || [ "$reads" = 4 ]; }'
done

wait "$hung"
check timeout 0 "a hang the harness's timeout killed: knob back, no process left" \
	'terminated by timeout' gone timeout

# A cpuset without CPU 0 (cgroup v1 here; elsewhere the row SKIPs).
n=$((n + 1))
cs=/sys/fs/cgroup/cpuset
last=$(($(nproc) - 1))
if [ "$last" -gt 0 ] && mkdir "$cs/perf-abi-$$" 2>/dev/null; then
	echo "$last" > "$cs/perf-abi-$$/cpuset.cpus"
	cat "$cs/cpuset.mems" > "$cs/perf-abi-$$/cpuset.mems"
	mkdir -p "$tmp/cpuset"
	KNOB_ROOT=$tmp/cpuset LD_PRELOAD=$tmp/hang.so \
		sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" -t no_counter_leak' \
		- "$cs/perf-abi-$$" "$tmp/rdpmc" > "$tmp/cpuset.out" 2>&1
	rc=$?
	rmdir "$cs/perf-abi-$$"
	if [ "$rc" = 0 ] || [ "$rc" = 4 ]; then
		echo "ok $n no_counter_leak in a cpuset of CPU $last alone"
	else
		echo "not ok $n no_counter_leak in a cpuset of CPU $last alone # exit $rc"
		sed 's/^/# /' "$tmp/cpuset.out"
		failed=$((failed + 1))
	fi
else
	echo "ok $n no_counter_leak in a cpuset without CPU 0 # SKIP no cpuset (v1) to make"
fi

n=$((n + 1))
mkdir -p "$tmp/list"
if [ "$(uname -m)" = aarch64 ] ||
	! KNOB_ROOT=$tmp/list LD_PRELOAD=$tmp/hang.so "$tmp/rdpmc" -l 2>&1 |
	grep -q 64bit; then
	echo "ok $n the *_64bit tests only where config1:0 chooses a width (arm64)"
else
	echo "not ok $n *_64bit tests on $(uname -m)"
	failed=$((failed + 1))
fi
[ "$failed" = 0 ]
