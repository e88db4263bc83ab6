#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Issue 28's randomized test: RUNS_RANDOM_N (default 200: 113 s on 2
# cores) runs of
# run_tests.sh (fake qemu guests) into one -o R holding a user's file
# (each run in R/<label>-<time>[-N]/), up to 4 at a time, started at
# random moments; two of three get SIGINT (to the process group, as a
# terminal sends it), SIGTERM or SIGHUP at a random moment, from before
# the guest boots to after its reports are written.  Afterwards: the
# user's file as it was, every complete run's files as they were when it
# ended, every exit code
# that of its summary.json, INTERRUPTED in every interrupted run's
# directory that holds anything, latest a link to a complete run, no
# staging link, no work directory and no process left.  Prints KTAP;
# RANDOM_SEED repeats a sequence.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
rt=$top/run_tests.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
N=${RUNS_RANDOM_N:-200}
RANDOM=${RANDOM_SEED:-$$}
echo "TAP version 13"
echo "1..1"
echo "# $N runs, RANDOM_SEED=${RANDOM_SEED:-$$}"
export PERF_ABI_CACHE="$tmp/cache" QEMU_X86_64="$here/fake_qemu.sh"
export FAKE_QEMU_PIDS="$tmp/qemu.pids"
unset FAKE_QEMU_MODE FAKE_QEMU_TESTS PERF_ABI_BOOT_ALLOWANCE
build=$(make -s -C "$top" --no-print-directory print-build 2>/dev/null || echo "$top/build")

bz=$tmp/bzImage
head -c 4096 /dev/zero > "$bz"
printf 'HdrS' | dd of="$bz" bs=1 seek=514 conv=notrunc status=none
printf '\001' | dd of="$bz" bs=1 seek=566 conv=notrunc status=none
suite=$tmp/suite
mkdir -p "$suite/perf_events"
echo 'perf_events:fake' > "$suite/kselftest-list.txt"
printf '#!/bin/sh\necho ok\n' > "$suite/run_kselftest.sh"
printf '#!/bin/sh\necho "# fake"\n' > "$suite/perf_events/fake"
echo 'timeout=5' > "$suite/perf_events/settings"
chmod +x "$suite/run_kselftest.sh" "$suite/perf_events/fake"
R=$tmp/R
mkdir -p "$tmp/runs" "$R"
echo mine > "$R/notes"
ls -d "$build"/vm/run.* 2>/dev/null | sort > "$tmp/work.before"

# one run: its label names its directory (R/rI-<time>); record its exit
one() {	# I SIG DELAY SLEEP
	local i=$1 sig=$2 delay=$3 sl=$4 pid rc=0
	FAKE_QEMU_SLEEP=$sl setsid env --default-signal=INT "$rt" --kernel "$bz" --suite "$suite" --label "r$i" -o "$R" \
		>/dev/null 2>"$tmp/runs/$i.err" </dev/null &
	pid=$!
	if [ "$sig" != - ]; then
		sleep "$delay"
		if [ "$sig" = INT ]; then kill -INT -- "-$pid"; else kill "-$sig" "$pid"; fi 2>/dev/null
	fi
	{ wait "$pid"; } 2>/dev/null || rc=$?
	echo "$rc $sig" > "$tmp/runs/$i.rc"
	# a complete run: its files now, to compare at the end
	if [ "$rc" = 0 ]; then
		local d
		d=$(ls -d "$R/r$i-"* 2>/dev/null)
		[ -z "$d" ] || (cd "$d" && find . -printf '%p %s %T@\n' | sort) > "$tmp/runs/$i.files"
	fi
}

for ((i = 1; i <= N; i++)); do
	while [ "$(jobs -rp | wc -l)" -ge 4 ]; do
		wait -n
	done
	case $((RANDOM % 3)) in
	0) sig=- ;;
	*) sig=$(echo INT TERM HUP | cut -d' ' -f$((RANDOM % 3 + 1))) ;;
	esac
	delay=$((RANDOM % 4)).$((RANDOM % 10))
	sl=0.$((RANDOM % 10))
	one "$i" "$sig" "$delay" "$sl" &
	sleep "0.$((RANDOM % 10))"
done
wait

why=()
bad() { why+=("$*"); }
declare -A status=([INT]=130 [TERM]=143 [HUP]=129 [-]=0)
for ((i = 1; i <= N; i++)); do
	read -r rc sig < "$tmp/runs/$i.rc" || { bad "run $i: no exit"; continue; }
	d=$(ls -d "$R/r$i-"* 2>/dev/null)
	case $rc in
	0) [ -n "$d" ] && [ -s "$d/summary.json" ] && [ ! -e "$d/INTERRUPTED" ] ||
		bad "run $i: exit 0 without a complete directory" ;;
	"${status[$sig]}")
		if [ -n "$d" ] && [ -n "$(ls -A "$d")" ]; then
			[ -f "$d/INTERRUPTED" ] || bad "run $i: exit $rc, no INTERRUPTED in ${d##*/}"
		fi ;;
	*) bad "run $i ($sig): exit $rc: $(tail -n 1 "$tmp/runs/$i.err")" ;;
	esac
	if [ -n "$d" ] && [ -f "$d/summary.json" ] && ! grep -q "^ \"exit\": $rc\$" "$d/summary.json"; then
		bad "run $i: exit $rc, summary.json's $(grep '^ "exit"' "$d/summary.json")"
	fi
	if [ -f "$tmp/runs/$i.files" ]; then
		(cd "$d" && find . -printf '%p %s %T@\n' | sort) | cmp -s - "$tmp/runs/$i.files" ||
			bad "run $i: its complete results changed"
	fi
done
ncomplete=$(ls "$tmp"/runs/*.files 2>/dev/null | wc -l)
[ -z "$(find "$R" -maxdepth 1 -name '.latest.*')" ] || bad "a staging link is left"
[ "$(cat "$R/notes")" = mine ] || bad "the user's file in R changed"
if [ -e "$R/latest" ]; then
	[ -L "$R/latest" ] && [ -s "$R/latest/summary.json" ] && [ ! -e "$R/latest/INTERRUPTED" ] ||
		bad "latest is not a complete run: $(readlink "$R/latest"): $(ls -A "$R/latest/" 2>&1 | tr '\n' ' ')"
fi
ls -d "$build"/vm/run.* 2>/dev/null | sort | cmp -s - "$tmp/work.before" || bad "a work directory is left"
while read -r p; do
	kill -0 "$p" 2>/dev/null && bad "a fake qemu ($p) is left"
done < <(cat "$FAKE_QEMU_PIDS" 2>/dev/null)
echo "# $ncomplete complete runs, $(find "$R" -mindepth 2 -maxdepth 2 -name INTERRUPTED | wc -l) interrupted ones kept, $(cat "$tmp"/runs/*.rc | awk '$1 == 2' | wc -l) refused"
if [ ${#why[@]} = 0 ]; then
	echo "ok 1 $N runs into one -o, signals at random moments: nothing lost"
else
	printf '# %s\n' "${why[@]}" | head -n 20
	echo "not ok 1 $N runs into one -o: ${#why[@]} problems"
	exit 1
fi
