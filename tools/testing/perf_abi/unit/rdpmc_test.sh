#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdpmc on this machine, where what it does needs no PMU.  It puts the
# user-access knob back however a test ends: the suite's rdpmc.c built
# with its knob in a file (-DRDPMC_KNOB, the file named by $KNOB), and
# knob_hang.c (LD_PRELOAD) making the test's perf_event_open() hang, crash
# or fail.  Each knob row starts from a value the test must change and
# checks it after the program ended: a hang the harness's timeout kills
# with the test's process group (its teardown included), the runner's
# timeout (SIGTERM to the program), SIGKILL of the program, a crash, a
# failed ASSERT, a SKIP.  Then: no_counter_leak in a cpuset without CPU 0
# (a container's) does not fail, and the *_64bit tests exist only on
# arm64.  Needs KSFT_SELFTESTS (the framework's tools/testing/selftests,
# from make check-unit).  Prints KTAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)

ksft=${KSFT_SELFTESTS:?KSFT_SELFTESTS: the framework tree}
suite=$ksft/perf_events
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/rdpmc" 2>/dev/null; rm -rf "$tmp"' EXIT

cc -O2 -Wall -I"$ksft" -I"$suite" '-DRDPMC_KNOB=getenv("KNOB")' \
	-o "$tmp/rdpmc" "$suite/rdpmc.c" -lcap &&
	cc -O2 -Wall -shared -fPIC -o "$tmp/hang.so" "$here/knob_hang.c" -ldl ||
	{ echo "Bail out! cannot build rdpmc with a knob in a file"; exit 1; }

# run ROW FAULT START TEST [PREFIX...]: rdpmc-ROW on knob file ROW.knob
run() {
	local row=$1 fault=$2 start=$3 test=$4
	shift 4
	echo "$start" > "$tmp/$row.knob"
	ln -f "$tmp/rdpmc" "$tmp/rdpmc-$row"
	KNOB=$tmp/$row.knob KNOB_FAULT=$fault LD_PRELOAD=$tmp/hang.so \
		"$@" "$tmp/rdpmc-$row" -t "$test" > "$tmp/$row.out" 2>&1
}

# check N ROW WANT WHAT: the knob back at WANT (the guard: within 5 s)
n=0 failed=0
check() {
	local i v
	for i in $(seq 50); do
		v=$(cat "$tmp/$2.knob")
		[ "$v" = "$3" ] && break
		sleep 0.1
	done
	n=$((n + 1))
	if [ "$v" = "$3" ] && grep -q "$5" "$tmp/$2.out"; then
		echo "ok $n $4"
	else
		echo "not ok $n $4 # knob $v, want $3"
		sed 's/^/# /' "$tmp/$2.out"
		failed=$((failed + 1))
	fi
}

echo "TAP version 13"
echo "1..9"
# the harness's 30 s timeout: started first, checked last
run timeout hang 0 cycles_counting & hung=$!
run term hang 0 cycles_counting timeout -s TERM 3
pkill -KILL -f "$tmp/rdpmc-term"
check 1 term 0 "the runner's timeout (SIGTERM to the program)" 'RUN'
(run kill hang 0 cycles_counting exec) & k=$!
sleep 1
kill -KILL "$k"
wait "$k" 2>/dev/null
pkill -KILL -f "$tmp/rdpmc-kill"
check 2 kill 0 "SIGKILL of the program" 'RUN'
run crash crash 0 cycles_counting
check 3 crash 0 "a crash in the test" 'not ok 1'
run error error 0 cycles_counting
check 4 error 0 "a failed ASSERT" 'not ok 1'
run skip none 0 cycles_counting
check 5 skip 0 "a SKIP (no PMU here) or a pass" '^ok 1'
run off hang 1 no_user_read_and_reads_trap timeout -s TERM 3
pkill -KILL -f "$tmp/rdpmc-off"
check 6 off 1 "access_off: the knob back on after SIGTERM" 'RUN'
wait "$hung"
check 7 timeout 0 "a hang the harness's timeout killed" 'terminated by timeout'

# A cpuset without CPU 0 (cgroup v1 here; elsewhere the row SKIPs).
n=$((n + 1))
cs=/sys/fs/cgroup/cpuset
last=$(($(nproc) - 1))
if [ "$last" -gt 0 ] && mkdir "$cs/perf-abi-$$" 2>/dev/null; then
	echo "$last" > "$cs/perf-abi-$$/cpuset.cpus"
	cat "$cs/cpuset.mems" > "$cs/perf-abi-$$/cpuset.mems"
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
if [ "$(uname -m)" = aarch64 ] || ! "$tmp/rdpmc" -l 2>&1 | grep -q 64bit; then
	echo "ok $n the *_64bit tests only where config1:0 chooses a width (arm64)"
else
	echo "not ok $n *_64bit tests on $(uname -m)"
	failed=$((failed + 1))
fi
[ "$failed" = 0 ]
