#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one kernel with a test initramfs under qemu and bring its results
# back over the serial console:
#
#   boot.sh [--append ARGS] [--smp N] [--memory M] [--kvm] [--limit SECS]
#           [--limit-why TEXT] [--boot-limit SECS] ARCH KERNEL INITRD PREFIX
#
# Writes PREFIX.console (the whole console) and, when the guest sent its
# framed KTAP (vm/init; checked against its line count and md5),
# PREFIX.ktap and PREFIX.rc (run_kselftest.sh's exit code in the guest).
# Exit 0 then; a kernel splat during the run (WARNING, BUG, KASAN, UBSAN,
# lockdep...) adds PREFIX.splats.json and one stderr line per splat naming
# the test that was running.  Exit 3 when the kernel did not
# boot (no test init on the console within --boot-limit SECS, the boot
# allowance), panicked, oopsed, hung past SECS (default 300) or stopped without
# the end marker: one line saying which (quoting the first panic or oops
# line, if any, and the test that was running) on stderr, then the last 30
# console lines; PREFIX.ktap then holds the results the guest had logged.
# Exit 2 when qemu is missing or did not start (it failed and wrote no
# console).
#
# TCG (software emulation) unless --kvm.  The machine and console of
# each ARCH are in vm/qemu/ARCH.conf (arm64 runs -M virt -cpu max -icount
# shift=0, which gives the guest a PMU it can count with).
set -eu
here=$(cd "$(dirname "$0")" && pwd)

append= smp=2 mem=512 kvm= limit=300 why= boot_limit=
while [ $# -gt 0 ]; do
	case $1 in
	--append) append=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--memory) mem=$2; shift 2 ;;
	--kvm) kvm=1; shift ;;
	--limit) limit=$2; shift 2 ;;
	--limit-why) why=$2; shift 2 ;;
	--boot-limit) boot_limit=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "boot.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# = 4 ] || { echo "usage: boot.sh [OPTIONS] ARCH KERNEL INITRD PREFIX" >&2; exit 2; }
arch=$1 kernel=$2 initrd=$3 prefix=$4

. "$(dirname "$0")/../lib/arch.sh"
arch_get "$arch" qemu >/dev/null || {
	echo "boot.sh: unknown architecture '$arch' ($(arch_list | tr '\n' ' ' | sed 's/ $//'))" >&2
	exit 2
}
qemu=$(arch_qemu "$arch")
# The machine (vm/qemu/ARCH.conf): word-split on purpose.
accel=tcg
[ -z "$kvm" ] || accel=kvm
read -r -a machine <<<"$(arch_get "$arch" "$accel")"
console=$(arch_get "$arch" console)
command -v "$qemu" >/dev/null || { echo "boot.sh: $qemu not found" >&2; exit 2; }

log=$prefix.console
rm -f "$log" "$prefix.ktap" "$prefix.rc" "$prefix.progress" "$prefix.splats.json"
: > "$log"
# oops=panic and panic=-1 with -no-reboot: a broken kernel stops the guest
# at once instead of running into the time limit.  cryptomgr.notests: the
# crypto self-tests, which test nothing of perf, are 1.5 s of an arm64
# Debian boot and 0.5 s of an x86_64 one under TCG.
cmdline="console=$console panic=-1 oops=panic loglevel=5 cryptomgr.notests $append"
set +e
timeout --kill-after=5 "$limit" "$qemu" "${machine[@]}" \
	-smp "$smp" -m "$mem" -nodefaults -no-user-config -display none \
	-no-reboot -monitor none -serial "file:$log" \
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
	</dev/null >"$prefix.qemu" 2>&1 &
qpid=$!
# A signal to us ends qemu before we go (timeout(1) runs it in a process
# group of its own: a terminal's ^C does not reach it).
for sig in INT:130 TERM:143 HUP:129; do
	# shellcheck disable=SC2064
	trap "kill -TERM $qpid 2>/dev/null; wait $qpid; exit ${sig#*:}" "${sig%:*}"
done
# The boot allowance: a kernel that has not reached the test init by then
# (a garbage image, a kernel that loops before its console) is stopped.
noboot=
if [ -n "$boot_limit" ]; then
	t0=$SECONDS
	while kill -0 "$qpid" 2>/dev/null; do
		grep -qa '@@PERF_ABI@@ UP' "$log" && break
		if [ $((SECONDS - t0)) -ge "$boot_limit" ]; then
			noboot=1
			kill -TERM "$qpid" 2>/dev/null
			break
		fi
		sleep 0.5
	done
fi
wait "$qpid"
qrc=$?
set -e

# The framed KTAP: the last BEGIN ... END pair on the console.
tr -d '\r' < "$log" | awk -v out="$prefix.b64" '
	/^@@PERF_ABI@@ BEGIN / { n = $3; sum = $4; inside = 1; body = ""; next }
	inside && /^@@PERF_ABI@@ END rc=/ {
		inside = 0; rc = substr($3, 4); done = 1
		fn = n; fsum = sum; fbody = body
		next
	}
	inside { body = body $0 "\n" }
	END {
		if (!done) exit 1
		printf "%s", fbody > out
		print fn, fsum, rc
	}' > "$prefix.frame" 2>/dev/null && framed=1 || framed=

# The guest logs its progress to /dev/kmsg (vm/init), so the console holds
# the kernel's messages and each test's start and result in the order they
# happened: a kernel splat (WARNING, BUG, oops, KASAN, UBSAN, lockdep...)
# during the run is named after the test that was running, and what the
# guest had finished is kept if it never sent its KTAP.
python3 -S "$here/../lib/ktap.py" console "$log" --progress "$prefix.progress" \
	--splats "$prefix.splats.json" > "$prefix.scan" 2>/dev/null ||
	echo "running	(the console could not be read)" > "$prefix.scan"
running=$(sed -n 's/^running\t//p' "$prefix.scan")
# Kernel messages that mean the kernel broke, with or without timestamps.
bad='^(\[ *[0-9]+\.[0-9]+\] )?(Kernel panic - not syncing|Oops|Internal error: Oops|BUG: |kernel BUG at|general protection fault|Unable to handle kernel)'
oops=$(tr -d '\r' < "$log" | grep -nE -m1 "$bad" || true)

fail() {	# MESSAGE: it and the last 30 console lines, exit 3
	echo "$1; last 30 lines of $log:" >&2
	tr -d '\r' < "$log" | tail -n 30 | sed -e 's/^/    | /' >&2
	# The results so far, from the progress the guest logged.
	[ -s "$prefix.progress" ] && mv "$prefix.progress" "$prefix.ktap"
	rm -f "$prefix.ktap.tmp" "$prefix.frame" "$prefix.b64" "$prefix.progress" "$prefix.scan"
	[ -s "$prefix.qemu" ] || rm -f "$prefix.qemu"
	exit 3
}
during=
case $running in
''|'no test running'|'(the console'*) ;;
*) during=" while running $running" ;;
esac

if [ -n "$noboot" ] && [ -z "$oops" ]; then
	fail "kernel did not boot to the test init within the boot allowance of ${boot_limit}s"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	fail "guest hung: no end marker within ${limit}s${why:+ ($why)}$during"
fi
if [ -z "$framed" ] && [ -n "$oops" ]; then
	what=$(echo "${oops#*:}" | sed -E 's/^\[ *[0-9.]+\] //' | cut -c1-100)
	fail "kernel broke: $what$during"
fi
if [ -z "$framed" ]; then
	if [ "$qrc" != 0 ] && [ ! -s "$log" ]; then
		# qemu did not start: a setup problem, not the kernel's
		echo "$qemu failed (exit $qrc): $(head -n 1 "$prefix.qemu")" >&2
		rm -f "$prefix.frame" "$prefix.b64"
		exit 2
	fi
	if ! grep -q '^@@PERF_ABI@@ UP' "$log"; then
		fail "kernel did not boot to the test init (qemu exit $qrc)"
	fi
	fail "guest stopped without the end marker (qemu exit $qrc)$during"
fi
read -r n sum rc < "$prefix.frame"
rm -f "$prefix.frame"
base64 -d < "$prefix.b64" 2>/dev/null | gzip -dc > "$prefix.ktap.tmp" 2>/dev/null || true
rm -f "$prefix.b64"
got=$(wc -l < "$prefix.ktap.tmp")
if [ "$n" != "$got" ] || [ "$(md5sum < "$prefix.ktap.tmp" | cut -d' ' -f1)" != "$sum" ]; then
	fail "the KTAP sent over the console arrived damaged ($got of $n lines, or a checksum mismatch)"
fi
mv "$prefix.ktap.tmp" "$prefix.ktap"
echo "$rc" > "$prefix.rc"
# Splats with the KTAP back: the results stand, the splats fail the run
# (ktap.py reads PREFIX.splats.json beside PREFIX.ktap).
sed -n 's/^splat\t\([^\t]*\)\t\(.*\)/kernel splat during \1: \2/p' "$prefix.scan" | cut -c1-200 >&2
rm -f "$prefix.qemu" "$prefix.progress" "$prefix.scan"
exit 0
