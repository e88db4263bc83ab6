#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run_tests.sh never loses a result and never misreports one (issue 20):
# one row per input that once did, each with its expected exit code and
# what must be left as it was.  Guests are the fake qemu (fake_qemu.sh)
# with a fake kselftest tree; one host run of rdpmc.  Sentinel files lie
# beside the output directory, and nothing under the test's directory
# but the output directories and the cache may change.  Two rows mount a
# small tmpfs (a full disk, a read-only filesystem): they skip when mount
# is not allowed.  Prints KTAP, each row's input, expected and observed
# as a "# row:" line; exit 1 on failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
rt=$top/run_tests.sh
tmp=$(mktemp -d)
mounts=()
cleanup() {
	local mp
	for mp in ${mounts[@]+"${mounts[@]}"}; do
		umount "$mp" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
export PERF_ABI_CACHE="$tmp/cache"
export QEMU_X86_64="$here/fake_qemu.sh"
export FAKE_QEMU_PIDS="$tmp/io/pids"
unset FAKE_QEMU_MODE FAKE_QEMU_SLEEP FAKE_QEMU_TESTS PERF_ABI_BOOT_ALLOWANCE
build=$(make -s -C "$top" --no-print-directory print-build 2>/dev/null || echo "$top/build")
io=$tmp/io
mkdir -p "$io"

# A fake x86_64 bzImage ("HdrS" at 0x202, XLF_KERNEL_64 at 0x236) under
# plain and hostile names.
bz=$tmp/img/bzImage
mkdir -p "$tmp/img"
head -c 4096 /dev/zero > "$bz"
printf 'HdrS' | dd of="$bz" bs=1 seek=514 conv=notrunc status=none
printf '\001' | dd of="$bz" bs=1 seek=566 conv=notrunc status=none
bz_tab=$tmp/img/$'tab\tbzImage'
bz_nl=$tmp/img/$'nl\nbzImage'
bz_ff=$tmp/img/$'ff\xffbzImage'
for f in "$bz_tab" "$bz_nl" "$bz_ff"; do cp "$bz" "$f"; done
# 300 MB of zeros, gzip'd: no kernel unpacks to that.
head -c 300M /dev/zero | gzip -1 > "$tmp/img/zeros.gz"
# A kselftest tree with one shell "program" (no ELF: no static build).
suite=$tmp/suite
mkdir -p "$suite/perf_events"
echo 'perf_events:fake' > "$suite/kselftest-list.txt"
printf '#!/bin/sh\necho ok\n' > "$suite/run_kselftest.sh"
printf '#!/bin/sh\necho "# fake"\n' > "$suite/perf_events/fake"
echo 'timeout=5' > "$suite/perf_events/settings"
chmod +x "$suite/run_kselftest.sh" "$suite/perf_events/fake"

# The output directory D, between two sentinels.
s=$tmp/s
D=$s/out
mkdir -p "$s"
echo before > "$s/aaa"
echo after > "$s/zzz"

# What may change: the output directories (D, $s/x, the mounts), the
# cache, the test's own files ($io).  Everything else under $tmp, and the
# build tree's temporary run directories, must stay as they were.
snap() {
	find "$tmp" \( -path "$tmp/cache" -o -path "$io" -o -path "$D" -o -path "$s/x" \
		-o -path "$tmp/mnt" \) -prune -o -type d -printf '%p/\n' -o -printf '%p %s %T@\n' | sort
	ls -d "$build"/vm/run.* 2>/dev/null
}

# in a session of its own, SIGINT as a terminal's job has it
start() {	# ARGS...: run_tests.sh in the background; sets pid
	local i
	python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execv(sys.argv[1], sys.argv[1:])' "$rt" "$@" >"$io/stdout" 2>"$io/stderr" </dev/null &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		[ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] && break
		sleep 0.05
	done
}

wait_qemu() {	# until a fake qemu runs (max 60 s)
	local i
	for ((i = 0; i < 600; i++)); do
		[ -s "$FAKE_QEMU_PIDS" ] && return 0
		sleep 0.1
	done
	return 1
}

rt_run() {	# [VAR=VALUE...] -- ARGS...: run_tests.sh; sets rc
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	rc=0
	env ${env[@]+"${env[@]}"} "$rt" "$@" >"$io/stdout" 2>"$io/stderr" </dev/null || rc=$?
}

n=0 failed=0 rows=()
begin() {	# NAME INPUT EXPECTED
	row_name=$1 row_input=$2 row_expect=$3 why= row_t0=$SECONDS
	rm -f "$FAKE_QEMU_PIDS"
	snap > "$io/before"
}
want_rc() {	# CODE
	[ "$rc" = "$1" ] || add "exit $rc, not $1"
}
want_err() {	# ERE: on stderr
	grep -Eq -- "$1" "$io/stderr" || add "stderr lacks /$1/"
}
add() {
	why="${why:+$why; }$*"
}
end() {	# OBSERVED
	local obs=$1
	grep -Eq 'Traceback|unbound variable|line [0-9]+:|command not found' "$io/stderr" &&
		add "an internal error leaked: $(grep -Em1 'Traceback|unbound variable|line [0-9]+:|command not found' "$io/stderr")"
	[ "$(cat "$s/aaa")" = before ] && [ "$(cat "$s/zzz")" = after ] ||
		add "a sentinel beside the output directory changed"
	[ -z "$(find "$s" -mindepth 1 -maxdepth 1 ! -name aaa ! -name zzz ! -name out ! -name x)" ] ||
		add "wrote beside the output directory: $(find "$s" -mindepth 1 -maxdepth 1 ! -name aaa ! -name zzz ! -name out ! -name x | tr '\n' ' ')"
	snap > "$io/after"
	cmp -s "$io/before" "$io/after" ||
		add "changed files outside the output and the cache: $(diff "$io/before" "$io/after" | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
	n=$((n + 1))
	rows+=("$row_input | $row_expect | $obs")
	echo "# row: $row_input | $row_expect | $obs ($((SECONDS - row_t0)) s)"
	if [ -z "$why" ]; then
		echo "ok $n $row_name"
	else
		sed -e 's/^/# stderr: /' "$io/stderr" | tail -n 5
		echo "not ok $n $row_name # $why"
		failed=$((failed + 1))
	fi
}
first_err() {
	grep -v '^    |' "$io/stderr" | grep . | tail -n 1 | sed "s|$tmp/|/tmp/T/|g" | cut -c1-140
}
skip() {	# NAME INPUT WHY
	n=$((n + 1))
	echo "# row: $2 | - | skipped: $3"
	echo "ok $n $1 # SKIP $3"
}

# refusal NAME INPUT ERE ARGS...: exit 2 with ERE on stderr, no output
# directory made
refusal() {
	local name=$1 input=$2 pat=$3
	shift 3
	rm -rf "$D"
	begin "$name" "$input" "2; nothing written"
	rt_run -- "$@"
	want_rc 2
	want_err "$pat"
	[ ! -e "$D" ] || add "made the output directory"
	end "$rc; $(first_err)"
}

echo "TAP version 13"
echo "1..25"

# --- results lost --------------------------------------------------------

# 1. The guard applies to the resolved path: new/.. is x itself.
mkdir "$s/x"
echo mine > "$s/x/summary.json"
begin "-o X/new/.. is X: a foreign directory is refused" \
	"-o x/new/.. where x holds a user's summary.json" "2; x untouched"
rt_run -- --kernel "$bz" --suite "$suite" -o "$s/x/new/.."
want_rc 2
want_err 'is not empty and holds no earlier report'
[ "$(ls -A "$s/x")" = summary.json ] && [ "$(cat "$s/x/summary.json")" = mine ] ||
	add "x changed: $(ls -A "$s/x" | tr '\n' ' ')"
end "$rc; $(first_err)"
rm -rf "$s/x"

# 1. A forged marker removes no file of another kind than ours.
mkdir -p "$D/sub"
echo keep > "$D/sub/f"
echo keep > "$D/a"
printf '# forged\nsub\na\n../aaa\n' > "$D/.perf-abi-output"
begin "a forged marker cannot remove a user's files" \
	"-o D, D's marker forged to list sub, a, ../aaa" "0; sub/, a, ../aaa kept"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D"
want_rc 0
[ -f "$D/sub/f" ] && [ -f "$D/a" ] || add "removed a user's file"
[ -s "$D/summary.json" ] && [ -s "$D/bzImage.ktap" ] || add "no reports"
end "$rc; sub/ a kept: $([ -f "$D/sub/f" ] && [ -f "$D/a" ] && echo yes || echo no)"

# 4. An interrupted rerun keeps the complete results before it (D is
# complete now), and the guest's console so far; 5. a second run on the
# same D meanwhile is refused.
begin "SIGINT in a rerun: the complete results before go to previous/" \
	"rerun -o D (complete), SIGINT while the guest runs" "130; D/previous/ the complete run, the partial console kept"
export FAKE_QEMU_SLEEP=30
start --kernel "$bz" --suite "$suite" -o "$D"
wait_qemu || add "no fake qemu started"
# 5. meanwhile, a second run with the same -o
rc2=0
"$rt" --kernel "$bz" --suite "$suite" -o "$D" >"$io/stdout.b" 2>"$io/stderr.b" </dev/null || rc2=$?
kill -INT -- "-$pid" 2>/dev/null
rc=0
wait "$pid" || rc=$?
unset FAKE_QEMU_SLEEP
want_rc 130
want_err 'the complete results of the run before are in .*/previous/'
[ -s "$D/previous/summary.json" ] && [ -s "$D/previous/bzImage.ktap" ] ||
	add "the complete results before are not in D/previous/"
grep -q 'previous/' "$D/INTERRUPTED" 2>/dev/null || add "INTERRUPTED does not say where they went"
grep -q '@@PERF_ABI@@ UP' "$D/bzImage.console" 2>/dev/null || add "the guest's console so far was not kept"
[ -f "$D/sub/f" ] && [ -f "$D/a" ] || add "removed a user's file"
end "$rc; previous/: $(ls "$D/previous" 2>/dev/null | tr '\n' ' ')"

begin "a second run on the same -o is refused while the first runs" \
	"two runs with the same -o D at once" "2 for the second; the first's results its own"
rc=$rc2
cp "$io/stderr.b" "$io/stderr"
want_rc 2
want_err 'another run_tests.sh is writing to'
end "$rc; $(first_err)"

# 2. Side files that cannot be written: exit 2, the reports kept.
rm -rf "$D"
begin "-l /dev/full --ktap /dev/full: exit 2, the reports kept" \
	"--kernel K -o D -l /dev/full --ktap /dev/full" "2; D complete, summary.json exit 2"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D" -l /dev/full --ktap /dev/full
want_rc 2
want_err '^run_tests.sh: --log: cannot write /dev/full'
want_err '^run_tests.sh: --ktap: cannot write /dev/full'
[ -s "$D/summary.json" ] && [ -s "$D/bzImage.ktap" ] && [ -f "$D/.perf-abi-output" ] ||
	add "the reports were not kept"
grep -q '^ "exit": 2$' "$D/summary.json" 2>/dev/null || add "summary.json's exit is not 2"
end "$rc; reports kept: $([ -s "$D/summary.json" ] && echo yes || echo no)"

if mkdir -p "$tmp/mnt/ro" && mount -t tmpfs -o ro,size=64k tmpfs "$tmp/mnt/ro" 2>/dev/null; then
	mounts+=("$tmp/mnt/ro")
	rm -rf "$D"
	begin "--junit on a read-only filesystem: refused before the run" \
		"--junit RO/junit.xml (RO a read-only mount)" "2 before the run; nothing written"
	rt_run -- --kernel "$bz" --suite "$suite" -o "$D" --junit "$tmp/mnt/ro/junit.xml"
	want_rc 2
	want_err '^run_tests.sh: --junit: cannot create'
	[ ! -e "$D" ] || add "made the output directory"
	end "$rc; $(first_err)"
else
	skip "--junit on a read-only filesystem" "--junit RO/junit.xml" "mount is not allowed here"
fi

rm -rf "$D"
mkdir "$D"
begin "--ktap inside -o: refused before the run" \
	"-o D --ktap D/host.ktap" "2 before the run; nothing written"
rt_run -- -o "$D" --ktap "$D/host.ktap"
want_rc 2
want_err 'is in the output directory'
[ -z "$(ls -A "$D")" ] || add "wrote into the output directory"
rmdir "$D"
end "$rc; $(first_err)"

# 3. A full disk: exit 2, nothing half-written, the next run works.
if mkdir -p "$tmp/mnt/full" && mount -t tmpfs -o size=64k tmpfs "$tmp/mnt/full" 2>/dev/null; then
	mounts+=("$tmp/mnt/full")
	begin "a full disk under -o: exit 2, nothing half-written, the next run works" \
		"-o on a 64 KiB tmpfs, a 100 KB KTAP" "2; the directory as it was; a smaller run there then 0"
	rt_run FAKE_QEMU_TESTS=4000 -- --kernel "$bz" --suite "$suite" -o "$tmp/mnt/full/out"
	want_rc 2
	want_err 'cannot write the reports into'
	left=$(find "$tmp/mnt/full" -mindepth 1 | sed "s|$tmp/mnt/full/||" | tr '\n' ' ')
	[ -z "$left" ] || add "left: $left"
	rc1=$rc
	rt_run -- --kernel "$bz" --suite "$suite" -o "$tmp/mnt/full/out"
	[ "$rc" = 0 ] || add "the next run there: exit $rc: $(first_err)"
	[ -f "$tmp/mnt/full/out/.perf-abi-output" ] || add "the next run wrote no marker"
	rc2=$rc rc=$rc1
	end "$rc1 then $rc2; left after the first: ${left:-nothing}"
else
	skip "a full disk under -o" "-o on a 64 KiB tmpfs" "mount is not allowed here"
fi

# 5. deps.sh waits for the dpkg lock, bounded, and says so.
mkdir -p "$tmp/fakeapt"
cat > "$tmp/fakeapt/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >> "$io/apt-called"
echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1 (apt-get)" >&2
exit 100
EOF
printf '#!/bin/sh\nexit 1\n' > "$tmp/fakeapt/dpkg-query"
printf '#!/bin/sh\nexit 0\n' > "$tmp/fakeapt/fuser"
chmod +x "$tmp/fakeapt"/*
rm -f "$io/apt-called"
begin "deps.sh waits for the dpkg lock, bounded, and says so" \
	"deps.sh vm while another apt-get holds the lock" "2; one line naming the lock; apt-get given a lock timeout"
rc=0
PATH="$tmp/fakeapt:$PATH" "$top/tools/testing/perf_abi/deps.sh" vm >"$io/stdout" 2>"$io/stderr" || rc=$?
if [ "$(id -u)" = 0 ]; then
	want_rc 2
	want_err 'waiting up to [0-9]+s'
	want_err '^deps.sh: the dpkg lock stayed held'
	grep -q 'DPkg::Lock::Timeout=[1-9]' "$io/apt-called" 2>/dev/null || add "apt-get got no lock timeout"
fi
end "$rc; $(first_err)"

# 6. A gzip bomb: refused at the cap, nothing left in the cache.
begin "a gzip'd --kernel that unpacks past the cap" \
	"--kernel zeros.gz (300 MB of zeros)" "2; nothing left in the cache"
rt_run -- --kernel "$tmp/img/zeros.gz" -o "$D"
want_rc 2
want_err 'unpacks to more than [0-9]+ MiB'
[ -z "$(find "$PERF_ABI_CACHE/kernels" -type f 2>/dev/null)" ] ||
	add "left in the cache: $(find "$PERF_ABI_CACHE/kernels" -type f | tr '\n' ' ')"
[ ! -e "$D" ] || add "made the output directory"
end "$rc; $(first_err)"

# --- results misreported ---------------------------------------------------

# 7. Paths with a tab, a newline, a non-UTF-8 byte.
refusal "a tab in the kernel's path" "--kernel 'tab<TAB>bzImage'" 'a control character' \
	--kernel "$bz_tab" --suite "$suite" -o "$D"

refusal "a newline in the kernel's path" "--kernel 'nl<LF>bzImage'" 'a control character' \
	--kernel "$bz_nl" --suite "$suite" -o "$D"

refusal "a newline in -o" "-o 'o<LF>ut'" 'a control character' \
	--kernel "$bz" --suite "$suite" -o "$s/o"$'\n'"ut"

begin "a non-UTF-8 byte in the kernel's path" "--kernel 'ff<0xff>bzImage'" \
	"0; summary.json, junit.xml written"
rt_run -- --kernel "$bz_ff" --suite "$suite" -o "$D"
want_rc 0
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$D/summary.json" 2>/dev/null ||
	add "no valid summary.json"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$D/junit.xml" 2>/dev/null ||
	add "no valid junit.xml"
end "$rc; $(tail -n 1 "$io/stdout" | sed "s|$tmp/|/tmp/T/|g")"

# 8. --cells: the totals of the tests that ran in the cells.
begin "--cells user@3 where every test skipped" "--kernel K --cells user@3 (all skip)" \
	"4; 0 passed, 1 skipped"
rt_run FAKE_QEMU_MODE=cells -- --kernel "$bz" --suite "$suite" -o "$D" --cells user@3
want_rc 4
grep -q ' 0 passed, 0 failed, 1 skipped' "$io/stdout" || add "the summary line does not say 0 passed, 1 skipped"
grep -q '^ "exit": 4$' "$D/summary.json" 2>/dev/null || add "summary.json's exit is not 4"
end "$rc; $(tail -n 1 "$io/stdout" | sed 's/.*: //')"

refusal "--cells with a space for a comma" "--cells 'root@2 user@3'" 'not a comma-separated list' \
	--kernel "$bz" --suite "$suite" -o "$D" --cells 'root@2 user@3'

# 9. An inherited KSELFTEST_<PROG>_ARGS narrows nothing.
if [ -x "$build/install-host/run_kselftest.sh" ]; then
	begin "an inherited KSELFTEST_RDPMC_ARGS narrows nothing" \
		"KSELFTEST_RDPMC_ARGS='-t nothing' ./run_tests.sh -t rdpmc" "every rdpmc test runs; exit per its KTAP"
	all=$("$rt" --list -t rdpmc 2>/dev/null | grep -c '^rdpmc:')
	rt_run KSELFTEST_RDPMC_ARGS='-t no_such_test' -- -t rdpmc -o "$D"
	ran=$(grep -cE '^# (not )?ok [0-9]+ ' "$D/host.ktap" 2>/dev/null)
	[ "$all" -gt 0 ] && [ "$ran" = "$all" ] || add "$ran of $all tests ran"
	krc=0
	python3 "$top/tools/testing/perf_abi/lib/ktap.py" summary "$D/host.ktap" >/dev/null || krc=$?
	want_rc "$krc"
	end "$rc; $ran of $all tests ran"
else
	skip "an inherited KSELFTEST_RDPMC_ARGS" "KSELFTEST_RDPMC_ARGS=... -t rdpmc" "the suite is not built (make build)"
fi

# 10. A --sysctl the guest refuses; 11. summary.json's exit is the process's.
begin "a --sysctl the guest refuses: exit 2, the knob and the guest's words" \
	"--sysctl kernel.perf_event_paranoid=banana --sysctl kernel.nope=1" "2; both named; reports kept, summary.json exit 2"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D" \
	--sysctl kernel.perf_event_paranoid=banana --sysctl kernel.nope=1
want_rc 2
want_err '--sysctl kernel.perf_event_paranoid: the guest refused it: cannot set banana'
want_err '--sysctl kernel.nope: the guest refused it: no such setting'
grep -q '^ "exit": 2$' "$D/summary.json" 2>/dev/null || add "summary.json's exit is not 2"
end "$rc; $(grep -c 'the guest refused' "$io/stderr") refusals named"

begin "summary.json's exit is the process's (qemu that does not start)" \
	"--kernel K, qemu fails to start" "2; summary.json exit 2"
rt_run FAKE_QEMU_MODE=nostart -- --kernel "$bz" --suite "$suite" -o "$D"
want_rc 2
grep -q '^ "exit": 2$' "$D/summary.json" 2>/dev/null || add "summary.json's exit: $(grep '^ "exit"' "$D/summary.json")"
end "$rc; summary.json$(grep '^ "exit"' "$D/summary.json" 2>/dev/null)"

begin "a kernel that panics mid-suite: kernel broke, not did not boot" \
	"--kernel K that panics in fake:global.fake_2" "3; 'kernel broke: Kernel panic ... while running fake:global.fake_2'"
rt_run FAKE_QEMU_MODE=panic -- --kernel "$bz" --suite "$suite" -o "$D"
want_rc 3
tail -n 1 "$io/stderr" | grep -q 'guest): kernel broke: Kernel panic.* while running fake:global.fake_2' ||
	add "the summary line: $(tail -n 1 "$io/stderr")"
grep -q 'did not boot' "$io/stderr" && add "says did not boot"
end "$rc; $(tail -n 1 "$io/stderr" | sed 's/.*guest): //' | cut -c1-90)"

begin "a kernel that never reaches the test init: stopped at the boot allowance" \
	"--kernel K that prints nothing (boot allowance 3 s)" "3 within the allowance, not the suite's limit"
t0=$SECONDS
rt_run FAKE_QEMU_MODE=noboot PERF_ABI_BOOT_ALLOWANCE=3 -- --kernel "$bz" --suite "$suite" -o "$D"
el=$((SECONDS - t0))
want_rc 3
want_err 'did not boot to the test init within the boot allowance of 3s'
[ "$el" -lt 30 ] || add "took ${el}s"
grep -q '^boot	120$' "$top/tools/testing/perf_abi/vm/qemu/arm64.conf" || add "arm64's boot allowance is not 120 s"
end "$rc after ${el}s; $(tail -n 1 "$io/stderr" | sed 's/.*guest): //')"

refusal "--list-kernels '('" "--list-kernels '('" 'is not a regular expression' --list-kernels '('

rm -rf "$D"
begin "--append of 3000 characters names --append" "--append x...x (3000)" "2; names --append"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D" --append "$(head -c 3000 /dev/zero | tr '\0' x)"
want_rc 2
want_err '^run_tests.sh: --append: '
grep -q -- '-t selects' "$io/stderr" && add "blames -t"
[ ! -e "$D" ] || add "made the output directory"
end "$rc; $(first_err | cut -c1-80)"

begin "HOME that does not exist is not created" "HOME=/nonexistent (no PERF_ABI_CACHE) --kernel K" \
	"2; HOME not created"
rt_run HOME="$tmp/nonexistent" PERF_ABI_CACHE= -- --kernel "$bz" --suite "$suite" -o "$D"
want_rc 2
want_err 'is not a directory'
[ ! -e "$tmp/nonexistent" ] || add "created $tmp/nonexistent"
[ ! -e "$D" ] || add "made the output directory"
end "$rc; $(first_err)"

refusal "a tab in -o" "-o 'o<TAB>ut'" 'a control character' \
	--kernel "$bz" --suite "$suite" -o "$s/o"$'\t'"ut"

echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
