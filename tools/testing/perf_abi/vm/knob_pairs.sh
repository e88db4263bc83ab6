#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Two runs of rdpmc at once, the second started 0, 10, 50, 200 and 1000 ms
# after the first (KNOB_PAIRS_MS), on a kernel whose user-access knob is
# off (arm64 or riscv as shipped): after each pair the knob is back at its
# value before the pair, neither run failed a test and none is left.  A
# pair's runs are rdpmc with the harness options in KNOB_PAIRS_ARGS
# (default: all but the two tests a stock arm64 kernel fails).  Runs
# in a guest's install tree (collection perf_abi, beside perf_events).
# Prints KTAP.
rdpmc=$(dirname "$0")/../perf_events/rdpmc
knob=/proc/sys/kernel/perf_user_access
args=${KNOB_PAIRS_ARGS:--T after_reset -T after_read_then_mmap}
offsets=${KNOB_PAIRS_MS:-0 10 50 200 1000}
tmp=$(mktemp -d)

echo "TAP version 13"
echo "1..$(echo $offsets | wc -w)"
if [ ! -x "$rdpmc" ] || [ ! -w "$knob" ]; then
	n=0
	for ms in $offsets; do
		n=$((n + 1))
		echo "ok $n pair $ms ms apart # SKIP needs rdpmc, and root with $knob"
	done
	exit 4
fi
n=0 bad=0
for ms in $offsets; do
	n=$((n + 1))
	before=$(cat "$knob")
	# shellcheck disable=SC2086 # harness options, split on purpose
	"$rdpmc" $args > "$tmp/a" 2>&1 &
	a=$!
	usleep $((ms * 1000))
	"$rdpmc" $args > "$tmp/b" 2>&1 &
	b=$!
	wait $a
	ra=$?
	wait $b
	rb=$?
	after=$(cat "$knob")
	fails=$(cat "$tmp/a" "$tmp/b" | grep -c '^not ok')
	left=$(ps -o pid,args | grep -c '[p]erf_events/rdpmc')
	line="pair $ms ms apart: knob $before -> $after, exits $ra $rb, $fails FAILs, $left left running"
	if [ "$after" = "$before" ] && [ "$fails" = 0 ] && [ "$left" = 0 ] &&
	   [ "$ra" != 1 ] && [ "$rb" != 1 ]; then
		echo "ok $n $line"
	else
		sed 's/^/# a: /' "$tmp/a"
		sed 's/^/# b: /' "$tmp/b"
		echo "not ok $n $line"
		bad=1
	fi
done
rm -rf "$tmp"
exit $bad
