#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A stand-in for qemu-system-* in the shell tests (QEMU_X86_64=this): it
# boots nothing, but speaks the guest's console protocol (vm/init) into
# the -serial file:PATH it is given.
#   FAKE_QEMU_MODE   ok (default): a KTAP with one passing program;
#                    nostart: fail at once as qemu does on a bad option
#                    hang: log (as vm/init does, through /dev/kmsg) the
#                    start of global.fake_2 after global.fake passed, then
#                    end as timeout(1) ends a guest that hung past its
#                    time limit (exit 124)
#                    noboot: write nothing and wait to be stopped (a
#                    garbage image)
#                    panic: boot, start global.fake_2 after global.fake
#                    passed, then panic (the guest ends, no end marker)
#                    cells: one --cells cell whose program reports ok over
#                    tests that all skipped
#   perf_abi.sysctl=NAME=VALUE (perf_abi.paranoid=N) on the -append line:
#   as vm/init answers it;
#   the only setting this guest has is kernel.perf_event_paranoid (-1 to 3)
#   FAKE_QEMU_SLEEP  seconds before the end marker (a kernel whose image
#                    name holds "fast" never waits)
#   FAKE_QEMU_PIDS   a file that gets this process's pid once it runs
#   FAKE_QEMU_TESTS  how many tests the KTAP holds (default 1)
#   FAKE_QEMU_RC     the guest runner's exit code on the end marker (0)
#   FAKE_QEMU_SPLAT  "fast" or "slow": a WARNING splat on the console of
#                    the kernel whose image name holds it
serial= kernel= append=
while [ $# -gt 0 ]; do
	case $1 in
	-serial) serial=${2#file:}; shift 2 ;;
	-kernel) kernel=$2; shift 2 ;;
	-append) append=$2; shift 2 ;;
	*) shift ;;
	esac
done
if [ "${FAKE_QEMU_MODE:-ok}" = nostart ]; then
	echo "qemu-system-x86_64: -machine: unsupported machine type" >&2
	exit 1
fi
[ -z "${FAKE_QEMU_PIDS:-}" ] || echo $$ >> "$FAKE_QEMU_PIDS"
if [ "${FAKE_QEMU_MODE:-ok}" = noboot ]; then
	trap 'kill $s 2>/dev/null; exit 143' TERM INT HUP
	sleep 3600 &
	s=$!
	wait $s
	exit 1
fi
for a in $append; do
	case $a in
	perf_abi.sysctl=*) a=${a#perf_abi.sysctl=} ;;
	perf_abi.paranoid=*) a=kernel.perf_event_paranoid=${a#perf_abi.paranoid=} ;;
	*) continue ;;
	esac
	name=${a%%=*} val=${a#*=}
	if [ "$name" != kernel.perf_event_paranoid ]; then
		echo "@@PERF_ABI@@ SYSCTL $name: no such setting on this kernel, left alone"
	else
		case $val in
		-1|0|1|2|3) echo "@@PERF_ABI@@ SYSCTL $name=$val" ;;
		*) echo "@@PERF_ABI@@ SYSCTL $name: cannot set $val (it reads 2)" ;;
		esac
	fi
done >> "$serial"
echo "@@PERF_ABI@@ UP 6.1.0-fake x86_64" >> "$serial"
if [ "${FAKE_QEMU_MODE:-ok}" = panic ]; then
	printf '[    1.000000] perf_abi: %s\n' 'TAP version 13' '1..1' \
		'# selftests: perf_events: fake' '# TAP version 13' '# 1..2' \
		'# #  RUN           global.fake ...' '# ok 1 global.fake' \
		'# #  RUN           global.fake_2 ...' >> "$serial"
	echo '[    1.500000] Kernel panic - not syncing: Fatal exception' >> "$serial"
	exit 0
fi
if [ "${FAKE_QEMU_MODE:-ok}" = hang ]; then
	printf '[    1.000000] perf_abi: %s\n' 'TAP version 13' '1..1' \
		'# selftests: perf_events: fake' '# TAP version 13' '# 1..2' \
		'# #  RUN           global.fake ...' '# ok 1 global.fake' \
		'# #  RUN           global.fake_2 ...' >> "$serial"
	exit 124
fi
echo "# selftests: perf_events: fake" >> "$serial"
case ${kernel##*/} in *"${FAKE_QEMU_SPLAT:-/}"*)
	echo '[    1.000000] WARNING: CPU: 0 PID: 1 at kernel/events/core.c:1 perf_fake+0x1/0x2' >> "$serial" ;;
esac
secs=${FAKE_QEMU_SLEEP:-0}
case ${kernel##*/} in *fast*) secs=0 ;; esac
trap 'kill $s 2>/dev/null; exit 143' TERM INT HUP
sleep "$secs" &
s=$!
wait $s
n=${FAKE_QEMU_TESTS:-1}
ktap=$( {
	printf '%s\n' 'TAP version 13' '1..1' '# selftests: perf_events: fake' \
		'# TAP version 13' "# 1..$n"
	awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "# ok %d global.fake%s\n", i, (i == 1 ? "" : "_" i) }'
	echo 'ok 1 selftests: perf_events: fake'
} )
if [ "${FAKE_QEMU_MODE:-ok}" = cells ]; then
	ktap=$( {
		printf '%s\n' 'TAP version 13' '1..1' '# privileges: user at perf_event_paranoid 3'
		printf '%s\n' "$ktap" | sed 's/ok \([0-9]*\) global\.\(.*\)/ok \1 global.\2 # SKIP needs perf_event_paranoid <= 2/' |
			sed -e 's/^/# /' -e 's/^# $/#/'
		echo 'ok 1 privileges: user@3'
	} )
fi
{
	echo "@@PERF_ABI@@ BEGIN $(printf '%s\n' "$ktap" | wc -l) $(printf '%s\n' "$ktap" | md5sum | cut -d' ' -f1) gzip+base64"
	printf '%s\n' "$ktap" | gzip -9c | base64
	echo "@@PERF_ABI@@ END rc=${FAKE_QEMU_RC:-0}"
} >> "$serial"
exit 0
