#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdpmc.c linked with the x86 PMU model (x86_pmu_model.c), run once per row
# below, as KTAP:
#   x86_pmu_model.sh PROG DIR OFF
# (OFF: user_access_off.c linked with the model, for the off:* rows)
# Each run has its own root DIR/<n> (X86_PMU_ROOT), its knob at
# DIR/<n>/sys/bus/event_source/devices/cpu/rdpmc (hybrid: cpu_core/rdpmc
# and cpu_atom/rdpmc, each PMU's type and cpus beside) starting at the
# row's value, and its log at DIR/<n>.log.  A row is: the model's layout and
# options (X86_PMU_MODEL), the knob at start, what must happen, and the CPU
# the program starts on, if any (taskset; hybrid: 1 is cpu_atom's, and
# rdpmc.c must pin its agree tests to cpu_core's CPUs):
#   stock     agree.after_reset and agree.after_read_then_mmap FAIL, the
#             user read 2^48 below read() (the kernel's prev_count), and no
#             other test; every other agree.after_* test passes (but
#             after_migration SKIPs where the core PMU has one CPU: one
#             CPU here, or hybrid, whose cpu_core the model gives CPU 0),
#             agree.every_counter and agree.no_counter_leak pass
#   fixed     the same with the fix: no FAIL, exit 0
#   leak      another task's counts left in the counters:
#             agree.no_counter_leak FAILs, no test crashes
#   noleak    (2,0,wd) the one free counter is the child's and ours:
#             agree.no_counter_leak SKIPs, exit 0
#   FAIL:T    T FAILs (a mutant, or noexclude: EINVAL from an x86 PMU for
#             exclude_kernel is a failure, not a refusal)
#   off:R     OFF's no_user_read_and_reads_trap gives R: pass (the page
#             offers no user read and rdpmc traps), skip, or FAIL
# After every run each knob holds its value at start: rdpmc.c's main() put
# back the 1 it wrote over a 0.  After the rows, no process of PROG or OFF
# is left (2 s).  Exit 1 when a row does not hold.
#
#   x86_pmu_model.sh build OUT SRC CC CFLAGS...
# builds SRC (rdpmc.c or user_access_off.c) linked with the model as OUT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = build ]; then
	out=${2:?} src=${3:?} cc=${4:?}
	shift 4
	"$cc" "$@" -g0 -mno-red-zone -S -o "$out.s" "$src" &&
		sed -i -E 's/^\t(rdpmc|rdtsc)$/\tcall x86_pmu_model_\1/' "$out.s" &&
		"$cc" "$@" -o "$out" "$out.s" "$here/x86_pmu_model.c" \
			-Wl,--wrap=syscall,--wrap=mmap,--wrap=munmap,--wrap=read \
			-Wl,--wrap=close,--wrap=ioctl,--wrap=glob \
			-Wl,--wrap=sched_setaffinity,--wrap=sched_getcpu -lcap ||
		exit 1
	! objdump -d "$out" | grep -P '\t(rdpmc|rdtsc) *$' ||
		{ echo "x86_pmu_model: an instruction above was not replaced" >&2; exit 1; }
	exit 0
fi
prog=${1:?usage: x86_pmu_model.sh PROG DIR OFF}
dir=${2:?usage: x86_pmu_model.sh PROG DIR OFF}
off=${3:?usage: x86_pmu_model.sh PROG DIR OFF}
rows="
2,3 1 stock
4,3 1 stock
8,3 1 stock
2,0 1 stock
4,0 1 stock
8,0 1 stock
2,3,wd 1 stock
4,0,wd 1 stock
2,3,fixed 1 fixed
4,3,fixed 1 fixed
8,3,fixed 1 fixed
2,0,fixed 1 fixed
4,0,fixed 1 fixed
8,0,fixed 1 fixed
2,3,wd,fixed 1 fixed
4,0,wd,fixed 1 fixed
4,3,fixed 0 fixed
4,3,fixed 2 fixed
4,3 0 stock
4,3 2 stock
2,0,wd,fixed 1 noleak
4,3,leak,fixed 1 leak
4,0,leak,fixed 1 leak
4,3,noexclude 1 FAIL:agree.cycles_counting
4,3,fixed,mut=width32 1 FAIL:agree.cycles_counting
4,3,fixed,mut=index_off 1 FAIL:agree.cycles_counting
4,3,fixed,mut=no_fixed 1 FAIL:agree.cycles_counting
4,3,fixed,mut=cap_off 1 FAIL:agree.cycles_counting
4,3,fixed,mut=pce_off 1 FAIL:agree.cycles_counting
4,3,hybrid=6,0 1 stock
4,3,hybrid=6,0,fixed 0 fixed
4,3,hybrid=6,0,fixed 1 fixed 1
4,3,hybrid=6,0,fixed,mut=hybrid_other 1 FAIL:agree.cycles_counting
4,3 0 off:ok
4,3 1 off:skip
4,3 2 off:skip
4,3,mut=latch_on 0 off:FAIL
"
trap=global.no_user_read_and_reads_trap
# agree.after_* that must pass, stock or fixed
after="period refresh disable_enable second_mmap"

# has LOG RESULT TEST: the log has TEST with RESULT ("ok", "not ok", "skip")
has() {
	case $2 in
	skip) grep -Eq "^ok [0-9]+ $3 # SKIP " "$1" ;;
	ok) grep -Eq "^ok [0-9]+ $3\$" "$1" ;;
	*) grep -Eq "^not ok [0-9]+ $3\$" "$1" ;;
	esac
}

# expect LOG EXIT KIND: the row's expectation holds
expect() {
	local log=$1 r=$2 kind=$3 t fails
	fails=$(grep -Eo '^not ok [0-9]+ [^ ]+' "$log" | cut -d' ' -f4 | sort | tr '\n' ' ')
	case $kind in
	stock | fixed)
		if [ "$kind" = stock ]; then
			[ "$fails" = "agree.after_read_then_mmap agree.after_reset " ] || return 1
			grep -Eq 'needs the fix .* 48-bit: .*\(-2814749[0-9]{8} off\)' "$log" || return 1
		else
			[ "$r" = 0 ] && [ -z "$fails" ] || return 1
			for t in reset read_then_mmap; do
				has "$log" ok "agree.after_$t" || return 1
			done
		fi
		for t in $after; do
			has "$log" ok "agree.after_$t" || return 1
		done
		has "$log" ok agree.after_migration || {
			{ [ "$(nproc)" = 1 ] || [ "$hybrid" ]; } &&
				has "$log" skip agree.after_migration
		} || return 1
		has "$log" ok agree.every_counter &&
			has "$log" ok agree.no_counter_leak ;;
	leak) has "$log" "not ok" agree.no_counter_leak &&
		! grep -q 'terminated unexpectedly' "$log" ;;
	noleak) [ "$r" = 0 ] && has "$log" skip agree.no_counter_leak ;;
	FAIL:*) has "$log" "not ok" "${kind#FAIL:}" ;;
	off:ok) [ "$r" = 0 ] && has "$log" ok "$trap" ;;
	off:skip) [ "$r" = 0 ] && has "$log" skip "$trap" ;;
	off:FAIL) has "$log" "not ok" "$trap" ;;
	*) return 1 ;;
	esac
}

# cpus FIRST LAST: a sysfs cpus list
cpus() {
	if [ "$1" = "$2" ]; then echo "$1"; else echo "$1-$2"; fi
}

n=0
rc=0
echo "TAP version 13"
echo "1..$(($(echo "$rows" | grep -c .) + 1))"
while read -r l k kind cpu; do
	[ -n "$l" ] || continue
	n=$((n + 1))
	dev=$dir/$n/sys/bus/event_source/devices
	rm -rf "${dir:?}/$n"
	last=$(($(nproc) - 1))
	hybrid=
	case $l in
	*hybrid=*) pmus="cpu_core:4:0 cpu_atom:10:$(cpus 1 "$last")" hybrid=1 ;;
	*) pmus="cpu:4:$(cpus 0 "$last")" ;;
	esac
	for pmu in $pmus; do
		IFS=: read -r name type cpus <<<"$pmu"
		mkdir -p "$dev/$name" && echo "$k" >"$dev/$name/rdpmc" &&
			echo "$type" >"$dev/$name/type" &&
			echo "$cpus" >"$dev/$name/cpus" || exit 1
	done
	log=$dir/$n.log
	p=$prog
	case $kind in off:*) p=$off ;; esac
	run=()
	[ -n "${cpu:-}" ] && [ "$(nproc)" -gt "$cpu" ] && run=(taskset -c "$cpu")
	X86_PMU_ROOT=$dir/$n X86_PMU_MODEL=$l "${run[@]}" "$p" >"$log" 2>&1
	r=$?
	# a run expected to fail: its KTAP is not nested, but quoted
	case $kind in stock | leak | *FAIL*) q='# | ' ;; *) q='# ' ;; esac
	sed -e "s/^/$q/" "$log"
	ok="not ok"
	after_k=$(cat "$dev"/*/rdpmc | sort -u | tr '\n' ' ')
	expect "$log" "$r" "$kind" && [ "$after_k" = "$k " ] && ok=ok
	[ "$ok" = ok ] || rc=1
	echo "$ok $n selftests: unit-x86model: ${run[*]:+${run[*]} }$(basename "$p") X86_PMU_MODEL=$l knob $k->${after_k% }: $kind (exit $r)"
done <<<"$rows"
# the model's timer, every test's process: gone with their program
n=$((n + 1))
for i in $(seq 20); do
	left=$(pgrep -fx "$prog|$off" | tr '\n' ' ')
	[ -z "$left" ] && break
	sleep 0.1
done
if [ -z "$left" ]; then
	echo "ok $n selftests: unit-x86model: no process of the programs left"
else
	echo "not ok $n selftests: unit-x86model: no process of the programs left # pids $left"
	rc=1
fi
exit $rc
