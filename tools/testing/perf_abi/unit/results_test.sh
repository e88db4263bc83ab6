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
real_cache=${PERF_ABI_CACHE:-${HOME:-/nonexistent}/.cache/perf-abi}	# for host builds (the framework's tree)
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
	setsid env --default-signal=INT "$rt" "$@" >"$io/stdout" 2>"$io/stderr" </dev/null &
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
	rm -rf "$D"	# each row's own output directory
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

# kept DIR: DIR's files but latest and the run directories (LABEL-<time>)
kept() {
	(cd "$1" && find . -mindepth 1 \( -name latest -o -name '*-20[0-9]*T[0-9]*Z*' \) -prune \
		-o -printf '%p %s %T@\n' | sort)
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

# --- results lost --------------------------------------------------------

# 1. The rule applies to the resolved path: new/.. is x itself, which
# is not empty: the run goes to a new x/<label>-<time>/.
mkdir "$s/x"
echo mine > "$s/x/summary.json"
begin "-o X/new/.. is X: a run beside a user's file, in a directory of its own" \
	"-o x/new/.. where x holds a user's summary.json" "0; x/summary.json untouched; x/latest/summary.json"
rt_run -- --kernel "$bz" --suite "$suite" -o "$s/x/new/.."
want_rc 0
[ "$(cat "$s/x/summary.json")" = mine ] || add "x/summary.json changed"
[ -s "$s/x/latest/summary.json" ] && [ ! -e "$s/x/new" ] || add "x: $(ls -A "$s/x" | tr '\n' ' ')"
end "$rc; $(ls -A "$s/x" | sed 's/-20.*/-<time>/' | tr '\n' ' ')"
rm -rf "$s/x"

# 1. A directory of a user's files, a marker of an earlier run_tests.sh
# forged in it: nothing in it touched (issue 28: never a folder judged
# ours by the names in it), the run in a directory of its own.
mkdir -p "$D/sub"
echo keep > "$D/sub/f"
echo keep > "$D/a"
printf '# forged\nsub\na\n../aaa\n' > "$D/.perf-abi-output"
kept "$D" > "$io/d.before"
begin "a forged marker makes no directory ours" \
	"-o D, D's marker forged to list sub, a, ../aaa" "0; D's files untouched; D/latest/summary.json"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D"
want_rc 0
kept "$D" | cmp -s - "$io/d.before" || add "D's files changed"
[ -s "$D/latest/summary.json" ] || add "no D/latest/summary.json"
end "$rc; $(ls -A "$D" | sed 's/-20.*/-<time>/' | tr '\n' ' ')"
rm -rf "$D"

# 4. An interrupted run keeps the complete runs before it as they were,
# and the guest's console so far, in a directory of its own.
R=$s/x
mkdir "$R"
echo mine > "$R/notes"
rt_run -- --kernel "$bz" --suite "$suite" -o "$R"
first_run=$(readlink "$R/latest" 2>/dev/null)
(cd "$R" && find . -type f -printf '%p %s %T@\n' | sort) > "$io/r.before"
begin "SIGINT in a second run: the complete run before stays as it was" \
	"-o R (R holding a file) twice, SIGINT to the second while the guest runs" "130; R/<first>/ and latest as they were, INTERRUPTED and the console so far in R/<second>/"
export FAKE_QEMU_SLEEP=30
start --kernel "$bz" --suite "$suite" -o "$R"
wait_qemu || add "no fake qemu started"
kill -INT -- "-$pid" 2>/dev/null
rc=0
wait "$pid" || rc=$?
unset FAKE_QEMU_SLEEP
want_rc 130
[ -n "$first_run" ] && [ -s "$R/$first_run/summary.json" ] || add "the first run: no latest/summary.json"
(cd "$R" && find . -type f ! -path "./*/INTERRUPTED" -printf '%p %s %T@\n' | sort) > "$io/r.after"
second=$(cd "$R" && ls -d ./*/INTERRUPTED 2>/dev/null | cut -d/ -f2)
[ -n "$second" ] || add "no INTERRUPTED"
grep -v "^./$second/" "$io/r.after" | cmp -s - "$io/r.before" || add "the first run changed"
[ "$(readlink "$R/latest")" = "$first_run" ] || add "latest moved to an interrupted run"
grep -q '@@PERF_ABI@@ UP' "$R/$second/bzImage.console" 2>/dev/null || add "the guest's console so far was not kept"
[ -z "$(find "$R" -name '.latest.*')" ] || add "a staging link was left"
end "$rc; $(ls "$R" | tr '\n' ' ')"
rm -rf "$R"

begin "a second run on the same -o is refused while the first runs" \
	"two runs with the same -o D at once, then SIGTERM to the first" "2 for the second; 143 and INTERRUPTED for the first"
export FAKE_QEMU_SLEEP=30
start --kernel "$bz" --suite "$suite" -o "$D"
wait_qemu || add "no fake qemu started"
rc=0
"$rt" --kernel "$bz" --suite "$suite" -o "$D" >"$io/stdout.b" 2>"$io/stderr.b" </dev/null || rc=$?
kill -TERM "$pid" 2>/dev/null
rc1=0
wait "$pid" || rc1=$?
unset FAKE_QEMU_SLEEP
cp "$io/stderr.b" "$io/stderr"
want_rc 2
want_err 'another run_tests.sh is writing to'
[ "$rc1" = 143 ] && [ -f "$D/INTERRUPTED" ] || add "the first: exit $rc1, $(ls "$D" | tr '\n' ' ')"
end "$rc, then $rc1; $(first_err)"

# 2. Side files that cannot be written: exit 2, the reports kept.
rm -rf "$D"
begin "-l /dev/full --ktap /dev/full: exit 2, the reports kept" \
	"--kernel K -o D -l /dev/full --ktap /dev/full" "2; D complete, summary.json exit 2"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D" -l /dev/full --ktap /dev/full
want_rc 2
want_err '^run_tests.sh: --log: cannot write /dev/full'
want_err '^run_tests.sh: --ktap: cannot write /dev/full'
[ -s "$D/summary.json" ] && [ -s "$D/bzImage.ktap" ] ||
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
	[ -s "$tmp/mnt/full/out/summary.json" ] || add "the next run wrote no summary.json"
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

# compat: on a kernel whose conf names no 32-bit programs (a riscv64
# Image: "RSC\x05" at 56)
head -c 4096 /dev/zero > "$tmp/img/rv-Image"
printf 'RSC\005' | dd of="$tmp/img/rv-Image" bs=1 seek=56 conv=notrunc status=none
refusal "compat: of a riscv64 kernel" "--kernel compat:rv-Image" \
	'an riscv64 kernel runs no 32-bit programs here' \
	--kernel "compat:$tmp/img/rv-Image" --suite "$suite" -o "$D"

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
	"--kernel K that prints nothing (boot allowance 1 s)" "3 within the allowance, not the suite's limit"
t0=$SECONDS
rt_run FAKE_QEMU_MODE=noboot PERF_ABI_BOOT_ALLOWANCE=1 -- --kernel "$bz" --suite "$suite" -o "$D"
el=$((SECONDS - t0))
want_rc 3
want_err 'did not boot to the test init within the boot allowance of 1s'
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

# --- issue 28: the hostile tester's table ------------------------------------

# 28.0 Ctrl-C during a host run: 130, INTERRUPTED in the run's own
# directory, the complete run before as it was.
if [ -x "$build/install-host/run_kselftest.sh" ]; then
	R=$s/x
	mkdir "$R"
	echo mine > "$R/notes"
	rt_run -- -t mmap_page -o "$R"
	first_run=$(readlink "$R/latest" 2>/dev/null)
	(cd "$R" && find . -type f -printf '%p %s %T@\n' | sort) > "$io/r.before"
	begin "28.0 SIGINT to the process group during a host run" \
		"-o R -t mmap_page (R holding a file), again with SIGINT while mmap_page runs" "130; INTERRUPTED in the new run; the complete one untouched"
	start -t mmap_page -o "$R"
	for ((i = 0; i < 300; i++)); do
		grep -q '^# ok 2 ' "$io/stdout" && break
		sleep 0.05
	done
	kill -INT -- "-$pid" 2>/dev/null
	rc=0
	wait "$pid" || rc=$?
	want_rc 130
	[ -n "$first_run" ] || add "the first run did not complete"
	second=$(cd "$R" && ls -d ./*/INTERRUPTED 2>/dev/null | cut -d/ -f2)
	[ -n "$second" ] || add "no INTERRUPTED"
	(cd "$R" && find . -type f -printf '%p %s %T@\n' | sort) | grep -v "^./${second:-?}/" |
		cmp -s - "$io/r.before" || add "the complete run (or R/notes) changed"
	end "$rc; $(find "$R" -mindepth 2 -name INTERRUPTED | wc -l) INTERRUPTED"
	rm -rf "$R"
else
	skip "28.0 SIGINT during a host run" "-t mmap_page, SIGINT" "the suite is not built (make install-host)"
fi

# 28.1 --lava-job into a directory that is not empty: refused up front.
mkdir -p "$s/x/bzImage"
echo mine > "$s/x/bzImage/keep"
cp "$bz" "$s/x/arm64.img"
ls -lAR --time-style=+%s.%N "$s/x" > "$io/d.before"
begin "28.1 --lava-job DIR holding a user's folder and the kernel" \
	"--lava-job x --kernel x/arm64.img, x/bzImage/keep" "2; x untouched"
rt_run -- --lava-job "$s/x" --kernel "$s/x/arm64.img"
want_rc 2
want_err 'is not empty'
ls -lAR --time-style=+%s.%N "$s/x" | cmp -s - "$io/d.before" || add "x changed"
end "$rc; $(first_err)"
rm -rf "$s/x"

# 28.2 Two runs into the same new, deep -o at once: one writes, the other
# is refused (or, started after the first has written, writes into a
# directory of its own), the directory stays with the first's results.
begin "28.2 two runs into the same new deep -o at once (4 pairs)" \
	"-o x/a/b/c/d/N twice at once" "0 and 2 (or 0 and 0, the second in N/<label>-<time>/); the results kept"
for i in 1 2 3 4; do
	d=$s/x/a/b/c/d/$i
	"$rt" --kernel "$bz" --suite "$suite" -o "$d" >/dev/null 2>"$io/e1" </dev/null & p1=$!
	"$rt" --kernel "$bz" --suite "$suite" -o "$d" >/dev/null 2>"$io/e2" </dev/null & p2=$!
	r1=0 r2=0
	wait "$p1" || r1=$?
	wait "$p2" || r2=$?
	case "$r1 $r2" in "0 2"|"2 0") ;; "0 0") [ -s "$d/latest/summary.json" ] || add "pair $i: 0 0, no latest" ;;
	*) add "pair $i: exits $r1 $r2" ;; esac
	[ -s "$d/summary.json" ] || add "pair $i: no results in $d"
done
rc=0
end "the pairs' results: $(find "$s/x" -name summary.json | wc -l) of 4"
rm -rf "$s/x"

# 28.4 Files named like reports make no directory ours: the run goes to
# a new M/<label>-<time>/.  (The fake guest for the tester's host run:
# the output directory is the same code.)
mkdir -p "$s/x"
echo '{"my":"data"}' > "$s/x/summary.json"
echo notes > "$s/x/report.ktap"
echo log > "$s/x/bzImage.ktap"
kept "$s/x" > "$io/d.before"
begin "28.4 a folder of the user's summary.json, report.ktap, bzImage.ktap" \
	"--kernel K -o M (M: the user's files named as reports)" "0; M's files untouched; M/latest/summary.json"
rt_run -- --kernel "$bz" --suite "$suite" -o "$s/x"
want_rc 0
kept "$s/x" | cmp -s - "$io/d.before" || add "M's files changed"
[ -s "$s/x/latest/summary.json" ] || add "no M/latest/summary.json"
end "$rc; $(ls -A "$s/x" | sed 's/-20.*/-<time>/' | tr '\n' ' ')"
rm -rf "$s/x"

# 28.5 A stderr that cannot be written changes no exit code.  (CODE MODE
# BOOT-ALLOWANCE ARGS: a guest that does not boot is stopped after 1 s.)
for c in "0 ok 60" "4 cells 60 --cells user@3" "3 noboot 1"; do
	read -r code mode allow extra <<<"$c"
	for e in full closed; do
		begin "28.5 stderr $e, a guest that gives $code" "--kernel K ($mode) 2>$e" "$code"
		rc=0
		if [ $e = full ]; then
			env FAKE_QEMU_MODE="$mode" PERF_ABI_BOOT_ALLOWANCE="$allow" "$rt" --kernel "$bz" --suite "$suite" \
				-o "$D" $extra >"$io/stdout" 2>/dev/full </dev/null || rc=$?
		else
			env FAKE_QEMU_MODE="$mode" PERF_ABI_BOOT_ALLOWANCE="$allow" "$rt" --kernel "$bz" --suite "$suite" \
				-o "$D" $extra >"$io/stdout" 2>&- </dev/null || rc=$?
		fi
		: > "$io/stderr"
		want_rc "$code"
		grep -q "^ \"exit\": $code\$" "$D/summary.json" 2>/dev/null || add "summary.json's exit is not $code"
		end "$rc"
	done
done

# 28.7 Waits are bounded and interruptible: the cache lock, a FIFO.
mkdir -p "$PERF_ABI_CACHE"
(exec 9>>"$PERF_ABI_CACHE/.lock" && flock 9 && exec sleep 60) & holder=$!
for ((i = 0; i < 200; i++)); do	# until it holds the lock
	flock -n "$PERF_ABI_CACHE/.lock" true || break
	sleep 0.05
done
begin "28.7 SIGTERM while waiting for the cache lock" \
	"--kernel K while another run holds the cache; SIGTERM once it says it waits" "143 at once"
start --kernel "$bz" --suite "$suite" -o "$D"
for ((i = 0; i < 600; i++)); do
	grep -q 'waiting (up to 10 min) for another run_tests.sh' "$io/stderr" && break
	sleep 0.05
done
t0=$SECONDS
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
want_rc 143
want_err 'waiting \(up to 10 min\) for another run_tests.sh'
[ $((SECONDS - t0)) -le 5 ] || add "took $((SECONDS - t0)) s"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
end "$rc after $((SECONDS - t0)) s"

mkfifo "$io/fifo"
refusal "28.7 --junit FIFO" "--junit FIFO" 'is a FIFO' --kernel "$bz" --suite "$suite" -o "$D" --junit "$io/fifo"
rm -f "$io/fifo"

# 28.8 A --label too long for a file name.
refusal "28.8 a --label of 300 characters" "--label x...x (300)" 'at most 100' \
	--kernel "$bz" --suite "$suite" -o "$D" --label "$(head -c 300 /dev/zero | tr '\0' x)"

# 28.9 Settings refused in --append's syntax count as --sysctl's.
begin "28.9 --append perf_abi.sysctl=... perf_abi.paranoid=... refused" \
	"--append 'perf_abi.sysctl=kernel.no_such_knob=1 perf_abi.paranoid=zz'" "2; both named"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D" \
	--append 'perf_abi.sysctl=kernel.no_such_knob=1 perf_abi.paranoid=zz'
want_rc 2
want_err 'kernel.no_such_knob: the guest refused it'
want_err 'kernel.perf_event_paranoid: the guest refused it'
grep -q '^ "exit": 2$' "$D/summary.json" 2>/dev/null || add "summary.json's exit is not 2"
end "$rc; $(grep -c 'the guest refused' "$io/stderr") refusals named"

# 28.10 A newline in the working directory, a relative --kernel.
mkdir -p "$io/n"$'\n'"l"
cp "$bz" "$io/n"$'\n'"l/bzImage"
begin "28.10 a newline in the working directory, --kernel bzImage" "cd 'n<LF>l'; --kernel bzImage" "0"
rc=0
(cd "$io/n"$'\n'"l" && "$rt" --kernel bzImage --suite "$suite" -o "$D" \
	>"$io/stdout" 2>"$io/stderr" </dev/null) || rc=$?
want_rc 0
end "$rc; $(tail -n 1 "$io/stdout")"
rm -rf "$io/n"$'\n'"l"

# 28.11 A non-UTF-8 byte in the path of a bad kernel: the real error.
printf 'junk' > "$tmp/img/bad"$'\xff'"junk"
begin "28.11 a bad kernel under a path with 0xff" "--kernel 'bad<0xff>junk'" "2; 'not a kernel image'"
rt_run -- --kernel "$tmp/img/bad"$'\xff'"junk" --suite "$suite" -o "$D"
want_rc 2
want_err 'not a kernel image'
grep -aq 'binary file matches' "$io/stderr" && add "grep's 'binary file matches' leaked"
end "$rc; $(first_err | tr -c '[:print:]\n' '?')"

# 28.12 Zeros under the cap, gzip'd: refused, nothing left in the cache.
head -c 64M /dev/zero | gzip -1 > "$tmp/img/zeros64.gz"
begin "28.12 64 MiB of gzip'd zeros as --kernel" "--kernel zeros64.gz" "2; nothing left in the cache"
rt_run -- --kernel "$tmp/img/zeros64.gz" --suite "$suite" -o "$D"
want_rc 2
want_err 'not a kernel image'
[ -z "$(find "$PERF_ABI_CACHE/kernels/unpacked" -type f 2>/dev/null)" ] ||
	add "left in the cache: $(find "$PERF_ABI_CACHE/kernels/unpacked" -type f | tr '\n' ' ')"
end "$rc; $(first_err)"
rm -f "$tmp/img/zeros64.gz"

# 28.13 A relative PERF_ABI_CACHE is the one in the current directory.
begin "28.13 a relative PERF_ABI_CACHE" "cd io; PERF_ABI_CACHE=relcache --kernel K" "0; io/relcache used"
rc=0
(cd "$io" && PERF_ABI_CACHE=relcache "$rt" --kernel "$bz" --suite "$suite" -o "$D" \
	>"$io/stdout" 2>"$io/stderr" </dev/null) || rc=$?
want_rc 0
[ -d "$io/relcache" ] || add "no io/relcache"
end "$rc"
rm -rf "$io/relcache"

# 28.14 HOME that does not exist is not created in host mode either
# (the framework's tree is cached: KSRC makes the host build run).
begin "28.14 host mode, HOME that does not exist" "HOME=/nonexistent PERF_ABI_CACHE= KSRC=x -t mmap_page" \
	"2; HOME not created"
rt_run HOME="$tmp/nonexistent" PERF_ABI_CACHE= KSRC="$tmp/nosuch" -- -t mmap_page -o "$D"
want_rc 2
want_err 'is not a directory'
[ ! -e "$tmp/nonexistent" ] || add "created $tmp/nonexistent"
[ ! -e "$D" ] || add "made the output directory"
end "$rc; $(first_err)"

# 28.17 A download stopped by a signal leaves nothing in the cache (a
# fake apt-get that writes part of a .deb and waits).
mkdir -p "$tmp/fakedl"
printf '%s\n' '#!/bin/sh' \
	'case " $* " in *" download "*) head -c 1000 /dev/zero > partial_1_amd64.deb; exec sleep 30 ;; esac' \
	'exit 0' > "$tmp/fakedl/apt-get"
chmod +x "$tmp/fakedl/apt-get"
begin "28.17 SIGTERM during a Debian download" "apt-fetch.sh --deb amd64 foo=1, SIGTERM mid-download" \
	"143; nothing in the cache's debs/"
PATH="$tmp/fakedl:$PATH" setsid "$top/tools/testing/perf_abi/lib/apt-fetch.sh" --deb amd64 foo=1 \
	>"$io/stdout" 2>"$io/stderr" </dev/null &
pid=$!
for ((i = 0; i < 100; i++)); do
	[ -n "$(find "$PERF_ABI_CACHE/debs" -name '*.deb' 2>/dev/null)" ] && break
	sleep 0.1
done
kill -TERM -- "-$pid" 2>/dev/null
rc=0
wait "$pid" || rc=$?
: > "$io/stderr"
want_rc 143
[ -z "$(ls -A "$PERF_ABI_CACHE/debs" 2>/dev/null)" ] || add "left: $(ls -A "$PERF_ABI_CACHE/debs" | tr '\n' ' ')"
end "$rc; debs/: $(ls -A "$PERF_ABI_CACHE/debs" 2>/dev/null | wc -l) entries"
rm -rf "$tmp/fakedl"

# 28.15 Side files: never another side file, the runner, an input.
refusal "28.15 --junit F --ktap F" "--junit F --ktap F" 'another side file' \
	--kernel "$bz" --suite "$suite" -o "$D" --junit "$io/f" --ktap "$io/f"
cp "$rt" "$io/rt.before"
refusal "28.15 -l ./run_tests.sh" "-l run_tests.sh" 'a file of this project' \
	--kernel "$bz" --suite "$suite" -o "$D" -l "$rt"
cmp -s "$rt" "$io/rt.before" || echo "# run_tests.sh changed!"
refusal "28.15 --ktap the kernel image" "--ktap K" 'an input of this run' \
	--kernel "$bz" --suite "$suite" -o "$D" --ktap "$bz"

# 28.16 An -o longer than PATH_MAX.
refusal "28.16 an -o of 5000 bytes" "-o x/x...x" 'bytes long' \
	--kernel "$bz" --suite "$suite" -o "$s/x/$(head -c 5000 /dev/zero | tr '\0' x)"

# 28.18 Two runs at once into a directory that is not empty (as
# build/logs/kernel is after one run): both write, each into its own.
mkdir "$s/x"
echo mine > "$s/x/notes"
begin "28.18 two --kernel runs at once into one non-empty -o" "-o R (R holding a file) twice at once" "0 and 0; two run directories"
"$rt" --kernel "$bz" --suite "$suite" -o "$s/x" >/dev/null 2>"$io/e1" </dev/null & p1=$!
"$rt" --kernel "$bz" --suite "$suite" -o "$s/x" >/dev/null 2>"$io/stderr" </dev/null & p2=$!
r1=0 rc=0
wait "$p1" || r1=$?
wait "$p2" || rc=$?
[ "$r1" = 0 ] || add "the first: exit $r1: $(tail -n 1 "$io/e1")"
want_rc 0
[ "$(find "$s/x" -mindepth 2 -name summary.json | wc -l)" = 2 ] && [ -s "$s/x/latest/summary.json" ] ||
	add "$(ls "$s/x" | tr '\n' ' ')"
end "$r1 and $rc; $(find "$s/x" -mindepth 2 -name summary.json | wc -l) run directories"
rm -rf "$s/x"

# 28.20 An option given twice is refused, not the last one kept.
refusal "28.20 -o twice" "-o D -o E" 'give one -o' --kernel "$bz" --suite "$suite" -o "$D" -o "$s/e"
refusal "28.20 --repeat twice" "--repeat 2 --repeat 3" 'given twice' --kernel "$bz" --suite "$suite" -o "$D" --repeat 2 --repeat 3
refusal "28.20 -l twice" "-l F -l G" 'given twice' --kernel "$bz" --suite "$suite" -o "$D" -l "$io/f" -l "$io/g"

# 28.20 --matrix --list prints the names without fetching any kernel.
if [ -x "$build/install-host/run_kselftest.sh" ]; then
	printf 'debian:6.12-cloud-amd64\ndebian:7.3-arm64\n%s\n' "$tmp/img/no-such-image" > "$io/m.list"
	begin "28.20 --matrix --list fetches no kernel" "--matrix M --list (two debian: specs, a missing image)" \
		"0; the names; nothing in the cache"
	rt_run -- --matrix "$io/m.list" --list -t mmap_page
	want_rc 0
	grep -q '^mmap_page:page\.' "$io/stdout" || add "no names printed"
	[ -z "$(find "$PERF_ABI_CACHE" -name '*.deb' 2>/dev/null)" ] || add "fetched a kernel"
	end "$rc; $(grep -c '^mmap_page:' "$io/stdout") names"
else
	skip "28.20 --matrix --list" "--matrix M --list" "the suite is not built (make install-host)"
fi

# --- issue 41: the runner at its edges ----------------------------------------

# 41.0 A signal while the host suite is built (a fresh machine extracts
# the framework's tree for minutes): every process of the build ends,
# INTERRUPTED says no test ran.  (A make whose children outlive it.)
mkdir -p "$tmp/slowmake"
printf '#!/bin/sh\nsleep 60 | cat\n' > "$tmp/slowmake/make"
chmod +x "$tmp/slowmake/make"
begin "41.0 SIGTERM while the host suite is built" "-t mmap_page -o D, SIGTERM during make install-host" \
	"143; no process of the run left; D/INTERRUPTED"
PATH="$tmp/slowmake:$PATH" KSRC="$tmp/nosuch" start -t mmap_page -o "$D"
for ((i = 0; i < 200; i++)); do
	ps -e -o sid=,args= | grep -q "^ *$pid sleep 60" && break
	sleep 0.05
done
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
sleep 0.2
left=$(ps -e -o pid=,sid=,stat=,args= | awk -v s="$pid" '$2 == s && $3 !~ /^Z/')
want_rc 143
[ -z "$left" ] || add "left processes: $(echo "$left" | tr '\n' ';')"
echo "$left" | awk '{ print $1 }' | xargs -r kill -KILL 2>/dev/null
grep -q 'No test had run' "$D/INTERRUPTED" 2>/dev/null || add "no INTERRUPTED note in D"
end "$rc; $(echo "$left" | grep -c .) processes left; $(ls "$D" 2>/dev/null | tr '\n' ' ')"

# 41.1 Three host runs at once after the suite changed: one rebuilds it,
# under the lock a guest's build takes, the others wait; none runs a tree
# being rebuilt.  (Their exit: that of a run alone.)
if [ -x "$build/install-host/run_kselftest.sh" ]; then
	begin "41.1 three host runs at once after the suite changed" \
		"install-host older than the suite; -t mmap_page three at once" "each the exit of a run alone"
	export PERF_ABI_CACHE="$real_cache"
	rt_run -- -t mmap_page -o "$s/x/0"
	alone=$rc
	touch -d 2000-01-01 "$build/install-host/kselftest-list.txt"
	for i in 1 2 3; do
		"$rt" -t mmap_page -o "$s/x/$i" >/dev/null 2>"$io/e$i" </dev/null & p[i]=$!
	done
	exits=
	for i in 1 2 3; do
		rc=0
		wait "${p[i]}" || rc=$?
		exits="$exits $rc"
		[ "$rc" = "$alone" ] || add "run $i: exit $rc: $(grep -v '^    |' "$io/e$i" | tail -n 1)"
	done
	cat "$io"/e[123] > "$io/stderr"
	export PERF_ABI_CACHE="$tmp/cache"
	rc=$alone
	end "alone $alone, at once$exits"
	rm -rf "$s/x"
else
	skip "41.1 three host runs at once" "-t mmap_page three at once" "the suite is not built (make install-host)"
fi

# 41.2 --compare sees a problem of the new kernel that is no verdict: a
# kernel splat (report.ktap and summary.json record it).
cp "$bz" "$tmp/img/fast-old"
cp "$bz" "$tmp/img/fast-new"
begin "41.2 --compare where only the new kernel splats" "--compare old new (new: a WARNING splat)" \
	"1; the splat named on stdout"
rt_run FAKE_QEMU_SPLAT=new -- --compare "$tmp/img/fast-old" "$tmp/img/fast-new" --suite "$suite" -o "$D"
want_rc 1
grep -q '^fast-new: kernel splat .*WARNING' "$io/stdout" || add "stdout does not name the splat"
want_err "^run_tests.sh: reports in $D\$"
end "$rc; $(grep -c 'kernel splat' "$io/stdout") splat lines"

# 41.3 A guest runner's exit that contradicts its passing KTAP (4: all
# skipped; 137: killed): exit, stdout and summary.json agree, a failure.
for grc in 4 137; do
	begin "41.3 a guest runner that exits $grc over passing tests" "--kernel K, the guest's run_kselftest.sh exits $grc" \
		"1; summary.json exit 1; an error line on stdout"
	rt_run FAKE_QEMU_RC=$grc -- --kernel "$bz" --suite "$suite" -o "$D"
	want_rc 1
	grep -q '^ "exit": 1$' "$D/summary.json" 2>/dev/null || add "summary.json's exit: $(grep '^ "exit"' "$D/summary.json")"
	grep -q "error: the .*runner exited $grc" "$io/stdout" || add "no error line on stdout"
	end "$rc; $(tail -n 1 "$io/stdout" | sed 's/.*: //')"
done

# 41.5 A user's .latest.<the run's name> in a non-empty -o, a folder or
# a file (the runner staged latest there: it unlinked it, a traceback,
# the finished run deleted).
mkdir -p "$D"
echo mine > "$D/notes"
t0=$(date +%s)
for i in 0 1 2 3 4 5 6 7 8 9; do
	name=.latest.bzImage-$(date -u -d "@$((t0 + i))" +%Y%m%dT%H%M%SZ)
	if [ $((i % 2)) = 0 ]; then mkdir "$D/$name" && echo mine > "$D/$name/f"; else echo mine > "$D/$name"; fi
done
{ kept "$D"; find "$D" -path "$D/.latest.*" -printf '%p %s %T@\n' | sort; } > "$io/d.before"
begin "41.5 a user's .latest.<run> folder or file in -o" "-o D holding .latest.bzImage-<each of the next 10 s>" \
	"0; D/latest the new run; the user's files as they were"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D"
want_rc 0
{ kept "$D"; find "$D" -path "$D/.latest.*" -printf '%p %s %T@\n' | sort; } | cmp -s - "$io/d.before" ||
	add "D's files changed"
[ -s "$D/latest/summary.json" ] || add "no D/latest/summary.json"
end "$rc; $(find "$D" -path "$D/.latest.*" | wc -l) .latest.* entries"

# 41.10 Nothing outlives a killed run (CI's job timeouts end with
# SIGKILL): the guest's boot.sh and qemu end with it; the next run sweeps
# what it left (its build/vm/run.*, the empty -o it made), by its lock.
begin "41.10 SIGKILL of the runner while a guest runs" "--kernel K -o D, SIGKILL; then another run" \
	"no process of the run within 10 s; run.* and D gone after the next run"
export FAKE_QEMU_SLEEP=30
start --kernel "$bz" --suite "$suite" -o "$D"
wait_qemu || add "no fake qemu started"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
for ((i = 0; i < 100; i++)); do
	left=$(ps -e -o pid=,sid=,stat=,args= | awk -v s="$pid" '$2 == s && $3 !~ /^Z/')
	[ -z "$left" ] && break
	sleep 0.1
done
unset FAKE_QEMU_SLEEP
[ -z "$left" ] || add "left after 10 s: $(echo "$left" | awk '{ $2 = $3 = ""; print }' | tr '\n' ';')"
echo "$left" | awk '{ print $1 }' | xargs -r kill -KILL 2>/dev/null
sleep 6	# (a work directory younger than 5 s is never swept)
rt_run -- --kernel "$bz" --suite "$suite" -o "$s/x"
[ "$rc" = 0 ] || add "the next run: exit $rc"
rm -rf "$s/x"
[ ! -e "$D" ] || add "D left: $(ls -A "$D" | tr '\n' ' ')"
rc=137
end "137; $(echo "$left" | grep -c .) processes left; D $([ -e "$D" ] && echo left || echo swept)"

for sig in QUIT USR1 ALRM; do
	begin "41.10 SIG$sig while a guest runs" "--kernel K -o D, SIG$sig" "128+N; INTERRUPTED; nothing left"
	export FAKE_QEMU_SLEEP=30
	start --kernel "$bz" --suite "$suite" -o "$D"
	wait_qemu || add "no fake qemu started"
	kill -$sig "$pid"
	rc=0
	wait "$pid" || rc=$?
	unset FAKE_QEMU_SLEEP
	want_rc $((128 + $(kill -l $sig)))
	[ -f "$D/INTERRUPTED" ] || add "no INTERRUPTED"
	end "$rc"
done

# 41.6 A side file is never a file of the repository, of its build tree
# or of a live run; -o is never in the source tree.
ln "$rt" "$io/rt-link"
mkdir -p "$io/live"
(exec 9<"$io/live" && flock 9 && exec sleep 60) & holder=$!
sleep 0.3
for c in "-o $top/tools/testing/perf_abi/out" "-o $top" "--junit $io/live/junit.xml" "--ktap $top/config" \
	"--junit $top/.gitignore" "--junit $top/.ci/run" "--ktap $top/.git/description" \
	"--junit $build/install-host/run_kselftest.sh" "--junit $io/rt-link"; do
	read -r opt f <<<"$c"
	sum=$(cat "$f" 2>/dev/null | md5sum)
	refusal "41.6 $opt ${f#"$top"/}" "$opt ${f#"$tmp"/}" \
		'of this project|of another run|in the source tree|no directory' --kernel "$bz" --suite "$suite" $([ "$opt" = -o ] || echo -o "$D") "$opt" "$f"
	[ "$(cat "$f" 2>/dev/null | md5sum)" = "$sum" ] || echo "# $f CHANGED"
done
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -rf "$io/rt-link" "$io/live"
# (and a complete run's directory; while a report in the build tree, as
# make check-host's --log, is taken)
rt_run -- --kernel "$bz" --suite "$suite" -o "$s/x"
refusal "41.s --ktap into a complete run's directory" "--ktap R/x.ktap (R: a complete run)" 'in the directory of another run' \
	--kernel "$bz" --suite "$suite" -o "$D" --ktap "$s/x/x.ktap"
rm -rf "$s/x"
mkdir -p "$build/check"
begin "41.6 --ktap build/check/F (make check's reports) is taken" "--ktap build/check/F" "0; F written"
rt_run -- --kernel "$bz" --suite "$suite" -o "$D" --ktap "$build/check/results_test.$$.ktap"
want_rc 0
[ -s "$build/check/results_test.$$.ktap" ] || add "no F"
rm -f "$build/check/results_test.$$.ktap"
end "$rc"

# 41.7 --lava-job, two kernels, a stdout that cannot be written: the job
# set complete, exit 0 (main: >/dev/full exit 1 and every job removed;
# | true exit 141 and half a job set).  (The user's cache: install-x86_64
# builds from the framework's tree.)
for out in /dev/full '| true'; do
	begin "41.7 --lava-job D, two kernels, stdout $out" "--lava-job D --kernel K --kernel K2 $out" \
		"0; D/bzImage.yaml, D/fast-new.yaml"
	rc=0
	if [ "$out" = /dev/full ]; then
		PERF_ABI_CACHE="$real_cache" "$rt" --lava-job "$D" --kernel "$bz" --kernel "$tmp/img/fast-new" \
			>/dev/full 2>"$io/stderr" </dev/null || rc=$?
	else
		PERF_ABI_CACHE="$real_cache" "$rt" --lava-job "$D" --kernel "$bz" --kernel "$tmp/img/fast-new" \
			2>"$io/stderr" </dev/null | true
		rc=${PIPESTATUS[0]}
	fi
	want_rc 0
	[ -s "$D/bzImage.yaml" ] && [ -s "$D/fast-new.yaml" ] || add "D: $(ls "$D" 2>/dev/null | tr '\n' ' ')"
	end "$rc; $(ls "$D" 2>/dev/null | grep -c 'yaml$') yaml files"
done

# 41.8 A kernel whose file name holds a non-UTF-8 byte: its KTAP is
# read (main: the reports said "no KTAP log", not ok exit=3, while the
# run said 1 passed; a matrix exited 3).
printf '%s\n' "$bz_ff" > "$io/ff.list"
for mode in --kernel --matrix; do
	begin "41.8 $mode of a kernel named ff<0xff>bzImage" "$mode 'ff<0xff>bzImage'" "0; the reports read its KTAP"
	rt_run -- $mode "$([ $mode = --kernel ] && echo "$bz_ff" || echo "$io/ff.list")" --suite "$suite" -o "$D"
	want_rc 0
	grep -q 'no KTAP log' "$D/summary.json" "$D/report.ktap" 2>/dev/null && add "the reports say: no KTAP log"
	grep -q '"result": "pass"' "$D/summary.json" 2>/dev/null || add "summary.json: no pass"
	end "$rc; $(grep -o '"result": "[a-zA-Z ]*"' "$D/summary.json" 2>/dev/null | head -n 1)"
done

# 41.8 JUnit stays well-formed XML when a test's name or log line holds
# NUL, ESC or another control byte.
printf 'TAP version 13\n1..1\n# selftests: perf_events: p\n# TAP version 13\n# 1..1\n# # log \033[31mred\000 \001\n# not ok 1 global.t\033x # bad\nnot ok 1 selftests: perf_events: p\n' > "$io/ctl.ktap"
begin "41.8 control bytes in a KTAP, JUnit" "ktap.py summary K --junit J (ESC, NUL, SOH in a log line and a name)" "junit.xml well-formed"
rc=0
python3 "$top/tools/testing/perf_abi/lib/ktap.py" summary "$io/ctl.ktap" x --junit "$io/ctl.xml" >/dev/null 2>"$io/stderr" || rc=$?
want_rc 1
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$io/ctl.xml" 2>/dev/null || add "junit.xml is not well-formed"
end "$rc"

# Smaller: an empty suite (the kselftest runner's 1..0) fails with an
# error line, not only "0 programs".
printf 'TAP version 13\n1..0\n' > "$io/empty.ktap"
begin "41.s an empty suite's KTAP" "ktap.py summary of 'TAP version 13, 1..0'" "1; an error line"
rc=0
python3 "$top/tools/testing/perf_abi/lib/ktap.py" summary "$io/empty.ktap" x >"$io/stdout" 2>"$io/stderr" || rc=$?
want_rc 1
grep -q '^x: error: ' "$io/stdout" || add "no error line"
end "$rc; $(grep -m1 ': error: ' "$io/stdout" | sed 's/.*error: //')"

# Smaller: run_tests.sh without python3 in PATH, through a symlink;
# --label alone says it goes with --kernel (not --matrix, --compare).
mkdir -p "$io/nopy"
for c in sh dirname readlink; do ln -s "$(command -v $c)" "$io/nopy/$c"; done
begin "41.s no python3 in PATH" "PATH=dir without python3 ./run_tests.sh --help" "2; one line naming python3"
rc=0
PATH="$io/nopy" "$rt" --help >"$io/stdout" 2>"$io/stderr" </dev/null || rc=$?
want_rc 2
want_err '^run_tests.sh: python3 not found in PATH'
end "$rc; $(first_err)"
rm -rf "$io/nopy"
ln -s "$rt" "$io/rt-sym"
begin "41.s run_tests.sh through a symlink" "ln -s run_tests.sh L; L --help" "0; the help"
rc=0
"$io/rt-sym" --help >"$io/stdout" 2>"$io/stderr" </dev/null || rc=$?
want_rc 0
grep -q '^Usage: ./run_tests.sh' "$io/stdout" || add "no help"
end "$rc; $(head -n 1 "$io/stdout")"
rm -f "$io/rt-sym"
refusal "41.s --label without --kernel" "--label x" '^run_tests.sh: --label goes with --kernel$' --label x -o "$D"

# 41.f A tree: build (minutes) does not hold the cache: another run goes
# on meanwhile (main: it waited, then died after 10 min).  (A tree whose
# every make target sleeps.)
mkdir -p "$tmp/ftree/arch/x86"
: > "$tmp/ftree/Kconfig"
printf '%%:\n\tsleep 30\n' > "$tmp/ftree/Makefile"
begin "41.f a --kernel run while another builds a tree: kernel" "--kernel tree:T (building), then --kernel K" \
	"0 for K within 30 s, no wait for the cache"
start --kernel "tree:$tmp/ftree" --suite "$suite" -o "$s/x"
for ((i = 0; i < 200; i++)); do
	ps -e -o sid=,args= | grep -q "^ *$pid sleep 30" && break
	sleep 0.1
done
t0=$SECONDS
rt_run -- --kernel "$bz" --suite "$suite" -o "$D"
el=$((SECONDS - t0))
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rm -rf "$s/x"
want_rc 0
grep -q 'waiting (up to 10 min)' "$io/stderr" && add "waited for the cache"
[ "$el" -lt 30 ] || add "took ${el}s"
end "$rc after ${el}s"

# Smaller: --lava-job with TMPDIR missing: one line (main: exit 1 and
# mktemp's message).
begin "41.s TMPDIR missing, --lava-job" "TMPDIR=/nonexistent --lava-job D --kernel K" "2; one line naming TMPDIR"
rt_run TMPDIR="$tmp/nonexistent" -- --lava-job "$D" --kernel "$bz"
want_rc 2
want_err '^run_tests.sh: TMPDIR=.* is not a writable directory$'
[ ! -e "$D" ] || add "made D"
end "$rc; $(first_err)"

# Smaller: a user's own latest symlink (to elsewhere) stays.
mkdir -p "$s/x"
ln -s /etc "$s/x/latest"
begin "41.s a user's latest -> /etc in -o" "-o R, R/latest -> /etc" "0; R/latest -> /etc still"
rt_run -- --kernel "$bz" --suite "$suite" -o "$s/x"
want_rc 0
[ "$(readlink "$s/x/latest")" = /etc ] || add "latest now -> $(readlink "$s/x/latest")"
end "$rc; latest -> $(readlink "$s/x/latest" | sed 's/-20.*/-<time>/')"
rm -rf "$s/x"

# Smaller: a matrix where every test skipped exits 4, as one kernel does.
printf '%s\n' "$tmp/img/fast-old" "$tmp/img/fast-new" > "$io/skip.list"
begin "41.s a --matrix where every test skipped" "--matrix (two kernels) --cells user@3, all skip" "4"
rt_run FAKE_QEMU_MODE=cells -- --matrix "$io/skip.list" --cells user@3 --suite "$suite" -o "$D"
want_rc 4
end "$rc"

# 41.4 env -i, as cron runs it: no PATH, so Python's sys.executable is
# '' (ktap.py could not start: a traceback, the results deleted).
if [ -x "$build/install-host/run_kselftest.sh" ]; then
	begin "41.4 env -i ./run_tests.sh -t mmap_page -o D" "env -i run_tests.sh -t mmap_page -o D" \
		"the exit its KTAP gives; D/summary.json"
	rc=0
	env -i "$rt" -t mmap_page -o "$D" >"$io/stdout" 2>"$io/stderr" </dev/null || rc=$?
	krc=0
	python3 "$top/tools/testing/perf_abi/lib/ktap.py" summary "$D/host.ktap" >/dev/null 2>&1 || krc=$?
	[ -s "$D/summary.json" ] || add "no D/summary.json"
	want_rc "$krc"
	end "$rc; $(first_err)"
else
	skip "41.4 env -i ./run_tests.sh" "env -i run_tests.sh -t mmap_page -o D" "the suite is not built (make install-host)"
fi

# 41.9 Internal errors: one line and exit 2, not a traceback and exit 1
# (the help's "a test failed").
mkdir "$io/gone"
begin "41.9 the working directory deleted" "cd gone; rmdir ../gone; --kernel K" "2; one line"
rc=0
(cd "$io/gone" && rmdir "$io/gone" && exec "$rt" --kernel "$bz" --suite "$suite" -o "$D" \
	>"$io/stdout" 2>"$io/stderr" </dev/null) || rc=$?
want_rc 2
want_err '^run_tests.sh: the current directory was deleted'
end "$rc; $(first_err)"

cp -r "$suite" "$tmp/suite-abc"
echo 'timeout=abc' > "$tmp/suite-abc/perf_events/settings"
refusal "41.9 timeout=abc in a suite's settings" "--suite S (S/perf_events/settings: timeout=abc)" \
	'settings: timeout=abc is not a number of seconds' --kernel "$bz" --suite "$tmp/suite-abc" -o "$D"
rm -rf "$tmp/suite-abc"

long=$tmp/img/$(head -c 250 /dev/zero | tr '\0' k)
cp "$bz" "$long"
begin "41.9 a kernel named by 250 bytes" "--kernel k...k (250 bytes)" "0; its label cut to 100 bytes"
rt_run -- --kernel "$long" --suite "$suite" -o "$D"
want_rc 0
[ -s "$D/$(head -c 100 /dev/zero | tr '\0' k).ktap" ] || add "no D/k...k.ktap (100 bytes)"
end "$rc; $(ls "$D" | grep -c '^kkk') files of the kernel"
rm -f "$long"

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
