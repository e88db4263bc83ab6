#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdpmc.c linked with the x86 PMU model (x86_pmu_model.c), run once per
# counter layout with the knob at 1, as KTAP:
#   x86_pmu_model.sh PROG KNOB
# N general counters with 3 fixed (Intel) or none (AMD), and with the NMI
# watchdog's pinned event (wd): every test passes or skips, and
# agree.every_counter and agree.no_counter_leak pass.  With "leak" the model leaves another
# task's counts in the counters: no_counter_leak must fail.  In 2,0,wd the
# one free counter is the child's and ours: no_counter_leak has nothing to
# compare and must SKIP, not pass.  With "noexclude" (a PMU that cannot
# leave the kernel out) every agree test must SKIP: no FAIL, no pass.
# Exit 1 when a layout does not.  Each run's log: KNOB.<layout>.log.
set -u
prog=${1:?usage: x86_pmu_model.sh PROG KNOB}
knob=${2:?usage: x86_pmu_model.sh PROG KNOB}
layouts="2,3 4,3 8,3 2,0 4,0 8,0 2,3,wd 4,0,wd 2,0,wd 4,3,leak 4,0,leak 4,3,noexclude"
leak='^not ok [0-9]+ agree\.no_counter_leak$'
pass='^ok [0-9]+ agree\.(every_counter|no_counter_leak)$'
skip='^ok [0-9]+ agree\.no_counter_leak # SKIP '
n=0
rc=0
echo "TAP version 13"
echo "1..$(wc -w <<<"$layouts")"
for l in $layouts; do
	n=$((n + 1))
	echo 1 >"$knob" || exit 1
	log=$knob.$l.log
	X86_PMU_MODEL=$l "$prog" >"$log" 2>&1
	r=$?
	# a leak run's failure is expected: its KTAP is not nested, but quoted
	case $l in *leak) q='# | ' ;; *) q='# ' ;; esac
	sed -e "s/^/$q/" "$log"
	ok="not ok"
	case $l in
	*leak) grep -Eq "$leak" "$log" &&
		! grep -q 'terminated unexpectedly' "$log" && ok=ok ;;
	2,0,wd) [ $r = 0 ] && grep -Eq "$skip" "$log" && ok=ok ;;
	*noexclude) [ $r = 0 ] && ! grep -Eq '^ok [0-9]+ agree\.[a-z0-9_]+$' "$log" &&
		grep -q '^ok [0-9]* agree\.cycles_counting # SKIP' "$log" && ok=ok ;;
	*) [ $r = 0 ] && [ "$(grep -Ec "$pass" "$log")" = 2 ] && ok=ok ;;
	esac
	[ "$ok" = ok ] || rc=1
	echo "$ok $n selftests: unit-x86model: X86_PMU_MODEL=$l (exit $r)"
done
exit $rc
