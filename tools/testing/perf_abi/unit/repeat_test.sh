#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# --repeat: lib/flips.py finds a verdict that changed between runs of
# crafted KTAP (and none where none changed), and run_tests.sh --repeat 3
# of one program on the running kernel reports its flips (make soak runs
# the full sizes); | head does not stop a run on the running kernel.  Prints KTAP; exit 1 on failure.
set -u

top=$(cd "$(dirname "$0")/../../../.." && pwd)
m=$top/tools/testing/perf_abi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ktap() {	# VERDICT_OF_B: a runner KTAP with tests a (pass) and b
	printf '%s\n' 'TAP version 13' '1..1' '# selftests: perf_events: p' \
		'# TAP version 13' '# 1..2' '# ok 1 global.a' "# $1 2 global.b" \
		'ok 1 selftests: perf_events: p'
}
ktap ok > "$tmp/1.ktap"
ktap ok > "$tmp/2.ktap"
ktap 'not ok' > "$tmp/3.ktap"

echo "TAP version 13"
echo "1..4"
failed=0
out=$(python3 "$m/lib/flips.py" "$tmp/1.ktap" "$tmp/2.ktap")
rc=$?
if [ "$rc" = 0 ] && [ "$out" = "2 runs, 2 tests, 0 flips, 0 FAIL verdicts" ]; then
	echo "ok 1 flips.py: the same verdicts twice, no flip"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 flips.py: the same verdicts twice, no flip # exit $rc"
	failed=1
fi
out=$(python3 "$m/lib/flips.py" "$tmp/1.ktap" "$tmp/3.ktap" "$tmp/2.ktap")
rc=$?
if [ "$rc" = 1 ] && echo "$out" | grep -qx 'flip  p:global.b: fail x1 (runs 2), pass x2 (runs 1,3)' &&
   ! echo "$out" | grep -q 'global.a'; then
	echo "ok 2 flips.py: a verdict that changed is listed with its runs"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 2 flips.py: a verdict that changed is listed with its runs # exit $rc"
	failed=1
fi
rc=0
"$top/run_tests.sh" --repeat 3 -t rdpmc -o "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
last=$(tail -n 1 "$tmp/out/flips.txt" 2>/dev/null)
if { [ "$rc" = 0 ] || [ "$rc" = 4 ]; } && [[ $last == "3 runs, "*" tests, 0 flips, 0 FAIL verdicts" ]] &&
   [ -f "$tmp/out/repeat/3.ktap" ] && grep -qF "$last" "$tmp/stdout"; then
	echo "ok 3 run_tests.sh --repeat 3 -t rdpmc: $last"
else
	sed 's/^/# /' "$tmp/stderr" "$tmp/out/flips.txt" 2>/dev/null | tail -n 20
	echo "not ok 3 run_tests.sh --repeat 3 -t rdpmc # exit $rc: ${last:-no flips.txt}"
	failed=1
fi
# On the running kernel too, a reader that goes away loses nothing.
"$top/run_tests.sh" -t rdpmc -o "$tmp/out2" 2>"$tmp/stderr" | head -n 1 >/dev/null
rc=${PIPESTATUS[0]}
if { [ "$rc" = 0 ] || [ "$rc" = 4 ]; } && grep -q '^ok 1 selftests: perf_events: rdpmc' "$tmp/out2/host.ktap" &&
   [ -s "$tmp/out2/summary.json" ]; then
	echo "ok 4 run_tests.sh -t rdpmc -o D | head: the whole run in D, exit $rc"
else
	sed 's/^/# /' "$tmp/stderr" | tail -n 5
	echo "not ok 4 run_tests.sh -t rdpmc -o D | head # exit $rc"
	failed=1
fi
[ "$failed" = 0 ]
