#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest runs of run_tests.sh with a fake qemu (fake_qemu.sh) and a fake
# kselftest tree: the signal policy (SIGINT, SIGTERM, SIGHUP at several
# points end every process of the run, keep what finished under --output
# with an INTERRUPTED note, remove the temporary files, exit 130/143/129),
# a qemu that does not start (exit 2), results kept when stdout goes away,
# stale files of an earlier run, --repeat.  Each run is a session of its
# own: afterwards no process of that session may be left.  Nothing outside
# the output directories and the (temporary) cache may change.
# Prints KTAP; exit 1 on failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
rt=$top/run_tests.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A cache of our own; package lists, Debian packages and the framework's
# kernel tree (minutes to extract on a fresh machine) are borrowed from
# the user's, as make fills it.
real_cache=${PERF_ABI_CACHE:-${HOME:-/nonexistent}/.cache/perf-abi}
export PERF_ABI_CACHE="$tmp/cache"
mkdir -p "$PERF_ABI_CACHE"
for d in apt debs trees; do
	[ -d "$real_cache/$d" ] && ln -s "$real_cache/$d" "$PERF_ABI_CACHE/$d"
done
export QEMU_X86_64="$here/fake_qemu.sh"
export FAKE_QEMU_PIDS="$tmp/pids"
build=$(make -s -C "$top" --no-print-directory print-build 2>/dev/null || echo "$top/build")

# A fake x86_64 bzImage ("HdrS" at 0x202, XLF_KERNEL_64 at 0x236), twice.
head -c 4096 /dev/zero > "$tmp/slow-bzImage"
printf 'HdrS' | dd of="$tmp/slow-bzImage" bs=1 seek=514 conv=notrunc status=none
printf '\001' | dd of="$tmp/slow-bzImage" bs=1 seek=566 conv=notrunc status=none
cp "$tmp/slow-bzImage" "$tmp/fast-bzImage"
printf '%s\n' "$tmp/fast-bzImage" "$tmp/slow-bzImage" > "$tmp/two.list"
# A kselftest tree with one shell "program" (no ELF: no static build).
s=$tmp/suite
mkdir -p "$s/perf_events"
echo 'perf_events:fake' > "$s/kselftest-list.txt"
printf '#!/bin/sh\necho ok\n' > "$s/run_kselftest.sh"
printf '#!/bin/sh\necho "# fake"\n' > "$s/perf_events/fake"
echo 'timeout=5' > "$s/perf_events/settings"
chmod +x "$s/run_kselftest.sh" "$s/perf_events/fake"

# In a session of its own, SIGINT not ignored (a background job of a
# script ignores it; a terminal's job does not).
start() {	# ARGS...: run_tests.sh in the background; sets pid
	local i
	: > "$tmp/stdout"
	setsid env --default-signal=INT "$rt" "$@" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null &
	pid=$!
	# until it leads its session and runs the script (its traps)
	for ((i = 0; i < 100; i++)); do
		[ "$(ps -o sid=,args= -p "$pid" | awk '{ sid = $1; $1 = ""; print sid, ($0 ~ /run_tests/) }')" = "$pid 1" ] && break
		sleep 0.05
	done
	sleep 0.2
}

survivors() {	# SID: processes of that session still running (not zombies)
	ps -e -o pid=,sid=,stat=,args= | awk -v s="$1" '$2 == s && $3 !~ /^Z/'
}

snap() {	# the temp dir but outputs and cache; the build tree's run dirs
	find "$tmp" \( -path "$tmp/cache" -o -path "$tmp/out*" -o -path "$tmp/pids" \
		-o -path "$tmp/stdout" -o -path "$tmp/stderr" -o -path "$tmp/before" \
		-o -path "$tmp/after" \) -prune -o -print | sort
	ls -d "$build"/vm/run.* 2>/dev/null
}

n=0 failed=0
result() {	# NAME WHY
	n=$((n + 1))
	if [ -z "$2" ]; then
		echo "ok $n $1"
	else
		sed -e 's/^/# stderr: /' "$tmp/stderr" | tail -n 5
		echo "not ok $n $1 # $2"
		failed=$((failed + 1))
	fi
}

wait_pids() {	# COUNT: until COUNT fake qemus have started (max 60 s)
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(cat "$FAKE_QEMU_PIDS" 2>/dev/null | wc -l)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# signal_case NAME SIG CODE WAITFOR WHAT ARGS...: start, wait for WAITFOR
# fake qemus, send SIG (INT to the process group, as a terminal does),
# check the exit code, survivors, INTERRUPTED, what was kept.
signal_case() {
	local name=$1 sig=$2 code=$3 waitfor=$4 keep=$5 why= rc t0 i
	shift 5
	rm -rf "$tmp/out" "$FAKE_QEMU_PIDS"
	snap > "$tmp/before"
	start "$@" -o "$tmp/out"
	if [ "$waitfor" = 0 ]; then	# a host run: until its 5th test
		for ((i = 0; i < 600; i++)); do
			grep -q '^# ok 5 ' "$tmp/stdout" && break
			sleep 0.1
		done
	else
		wait_pids "$waitfor" || why="no fake qemu started"
	fi
	t0=$(date +%s)
	if [ "$sig" = INT ]; then
		kill -INT -- "-$pid" 2>/dev/null
	else
		kill "-$sig" "$pid" 2>/dev/null
	fi
	wait "$pid"
	rc=$?
	sleep 0.2
	if [ "$rc" != "$code" ]; then
		why="exit $rc, not $code"
	elif [ $(($(date +%s) - t0)) -gt 10 ]; then
		why="took $(($(date +%s) - t0)) s to stop"
	elif [ -n "$(survivors "$pid")" ]; then
		why="left processes: $(survivors "$pid" | tr '\n' ';')"
		survivors "$pid" | awk '{ print $1 }' | xargs -r kill -KILL
	elif [ ! -f "$tmp/out/INTERRUPTED" ]; then
		why="no INTERRUPTED note in the output"
	elif [ -n "$keep" ] && [ ! -s "$tmp/out/$keep" ]; then
		why="did not keep $keep"
	fi
	snap > "$tmp/after"
	[ -n "$why" ] || cmp -s "$tmp/before" "$tmp/after" ||
		why="changed files outside the output and the cache: $(diff "$tmp/before" "$tmp/after" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	result "$name" "$why"
}

echo "TAP version 13"
echo "1..15"

# Warm the temporary cache (initramfs) once: not timed by the cases.
FAKE_QEMU_SLEEP=0 "$rt" --kernel "$tmp/fast-bzImage" --suite "$s" -o "$tmp/out0" \
	>"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
why=
[ "$rc" = 0 ] || why="exit $rc"
[ -n "$why" ] || [ -s "$tmp/out0/fast-bzImage.ktap" ] || why="no fast-bzImage.ktap"
result "a fake guest run passes" "$why"

export FAKE_QEMU_SLEEP=30
signal_case "SIGTERM while a guest boots" TERM 143 1 "" --kernel "$tmp/slow-bzImage" --suite "$s"
signal_case "SIGINT (to the process group) while a guest boots" INT 130 1 "" --kernel "$tmp/slow-bzImage" --suite "$s"
signal_case "SIGHUP while a guest boots" HUP 129 1 "" --kernel "$tmp/slow-bzImage" --suite "$s"
signal_case "SIGTERM after one of two guests finished keeps it" TERM 143 2 fast-bzImage.ktap \
	--matrix "$tmp/two.list" --suite "$s" -j 1
signal_case "SIGINT after one of two guests finished keeps it" INT 130 2 fast-bzImage.ktap \
	--matrix "$tmp/two.list" --suite "$s" -j 1
signal_case "SIGHUP after one of two guests finished keeps it" HUP 129 2 fast-bzImage.ktap \
	--matrix "$tmp/two.list" --suite "$s" -j 1
# The host suite built first, untimed: the signals below come during the run.
"$rt" --list -t mmap_page >/dev/null 2>"$tmp/stderr" || echo "# the host suite did not build: $(tail -n 1 "$tmp/stderr")"
signal_case "SIGTERM during a host run keeps its KTAP so far" TERM 143 0 host.ktap -t mmap_page
signal_case "SIGINT during a host run keeps its KTAP so far" INT 130 0 host.ktap -t mmap_page
unset FAKE_QEMU_SLEEP

# qemu that does not start: a setup problem (2), not "did not boot" (3).
FAKE_QEMU_MODE=nostart "$rt" --kernel "$tmp/fast-bzImage" --suite "$s" -o "$tmp/out1" \
	>"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
why=
[ "$rc" = 2 ] || why="exit $rc, not 2"
[ -n "$why" ] || grep -q 'unsupported machine type' "$tmp/stderr" || why="stderr does not quote qemu"
result "qemu that does not start: exit 2" "$why"

# | head: the reports are written before anything is printed.
rm -rf "$tmp/out2"
# (a KTAP larger than a pipe holds, so that the reader goes before the end)
FAKE_QEMU_TESTS=5000 "$rt" --kernel "$tmp/fast-bzImage" --suite "$s" -o "$tmp/out2" \
	2>"$tmp/stderr" | head -n 1 >/dev/null
why=
for f in fast-bzImage.ktap summary.json junit.xml report.ktap; do
	[ -s "$tmp/out2/$f" ] || why="$why no $f"
done
result "--kernel X -o D | head still writes D" "$why"

# A run never writes over earlier results (issue 28): twice more into
# -o D holding them and a user's file, each in a new D/<label>-<time>[-N]/.
echo mine > "$tmp/out2/notes.txt"
(cd "$tmp/out2" && find . -printf '%p %s %T@\n' | sort) > "$tmp/before"
why=
for i in 1 2; do
	"$rt" --kernel "$tmp/fast-bzImage" --suite "$s" -o "$tmp/out2" >/dev/null 2>"$tmp/stderr" ||
		why="$why; a rerun into D: exit $?: $(tail -n 1 "$tmp/stderr")"
done
(cd "$tmp/out2" && find . -path './fast-bzImage-*' -prune -o -path ./latest -prune -o \
	-printf '%p %s %T@\n' | sort) | grep -v '^\. ' | cmp -s - <(grep -v '^\. ' "$tmp/before") || why="$why; D's files changed"
[ "$(find "$tmp/out2" -mindepth 2 -name summary.json | wc -l)" = 2 ] &&
	[ -s "$tmp/out2/latest/summary.json" ] || why="$why; two reruns: $(ls "$tmp/out2" | tr '\n' ' ')"
result "a rerun into a non-empty -o keeps D and writes D/<label>-<time>/" "${why#; }"

# --repeat in a guest: one boot per run, every run's KTAP kept.
"$rt" --kernel "$tmp/fast-bzImage" --suite "$s" --repeat 2 -o "$tmp/out4" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
why=
[ "$rc" = 0 ] || why="exit $rc"
[ -f "$tmp/out4/repeat/fast-bzImage/2.ktap" ] || why="$why no repeat/fast-bzImage/2.ktap"
grep -q '2 runs, 1 tests, 0 flips, 0 FAIL verdicts' "$tmp/stdout" || why="$why no flips line"
result "--repeat 2 --kernel: two boots, no flip" "${why# }"

# A guest that hangs in a test: the report names the test and says it hung
# (stderr, the KTAP's Bail out!, a JUnit failure of that test).
FAKE_QEMU_MODE=hang "$rt" --kernel "$tmp/fast-bzImage" --suite "$s" -o "$tmp/out6" \
	--junit "$tmp/hang.xml" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
why=
[ "$rc" = 3 ] || why="exit $rc, not 3"
grep -q 'guest hung: no end marker within [0-9]*s (.*) while running fake:global.fake_2' "$tmp/stderr" ||
	why="$why; stderr does not name fake:global.fake_2 as hung"
python3 - "$tmp/hang.xml" <<'PY' || why="$why; JUnit: no failure of global.fake_2 saying it did not finish"
import sys
import xml.etree.ElementTree as ET
cases = {c.get('name'): c for c in ET.parse(sys.argv[1]).iter('testcase')}
f = cases.get('global.fake_2')
f = f.find('failure') if f is not None else None
sys.exit(0 if f is not None and 'did not finish' in f.get('message', '') and
         cases.get('global.fake') is not None and
         cases['global.fake'].find('failure') is None else 1)
PY
result "a guest hung in a test: exit 3, the test named as hung" "${why#; }"

# Progress on a terminal (script(1) gives the run one): kernel, program,
# tests done; none when stderr is a file (every case above).
why=
if command -v script >/dev/null; then
	FAKE_QEMU_SLEEP=3 script -qec "$(printf '%q ' "$rt" --kernel "$tmp/slow-bzImage" \
		--suite "$s" -o "$tmp/out5")" /dev/null > "$tmp/tty" 2>&1 </dev/null
	grep -q 'slow-bzImage: fake 0 tests done' "$tmp/tty" || why="no progress line on the terminal"
	grep -q 'tests done' "$tmp/stderr" && why="$why; progress on a stderr that is no terminal"
else
	why=
fi
result "progress on a terminal only" "${why#; }"

echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
