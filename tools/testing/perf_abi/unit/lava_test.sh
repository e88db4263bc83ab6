#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The LAVA pieces without a guest (tools/testing/perf_abi/lava/):
#   - the test definition's KTAP-to-test-case script (busybox awk, as in the
#     ramdisk) over a crafted KTAP: names, sets, verdicts, sanitising;
#   - the whole definition run as LAVA runs it (busybox sh, set -e) with
#     stub lava-test-case/lava-test-set and a fake kselftest install;
#   - lava.py compare over a crafted lava-run log made from those cases
#     passes, and fails when a verdict differs, a case is missing or
#     extra, or the job did not finish;
#   - a job from lava.py job passes lava_common's schema (when installed);
#   - bad input to run_tests.sh --lava-job: one line, exit 2, nothing
#     written.
# Prints KTAP; exit 1 on failure.
set -u

top=$(cd "$(dirname "$0")/../../../.." && pwd)
lava=$top/tools/testing/perf_abi/lava
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

n=0 fail=0
result() {	# OK NAME [DIRECTIVE]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n $2${3:+ # $3}"
	else
		echo "not ok $n $2${3:+ # $3}"
		fail=1
	fi
}

echo "TAP version 13"
echo "1..14"

# The awk program of perf_events.yaml, as the guest runs it.
$py - "$lava/perf_events.yaml" "$tmp/prog.awk" <<'EOF'
import sys
s = open(sys.argv[1]).read()
a = s.index("awk '") + len("awk '")
b = s.index("' \"$KTAP\" > \"$CASES\"")
lines = s[a:b].split('\n')
open(sys.argv[2], 'w').write('\n'.join(l[4:] if l.startswith('    ') else l for l in lines))
EOF
cat > "$tmp/run.ktap" <<'EOF'
TAP version 13
1..3
# timeout set to 120
# selftests: perf_events: mmap_page
# TAP version 13
# 1..4
# # Starting 4 tests from 2 test cases.
# ok 1 global.cap_fields_are_abi_bits
# ok 2 page.cycles_task_run.opened_disabled # SKIP needs a hardware PMU
# not ok 3 page.dummy_task=odd name.after_enable
# # ok 9 a deeper line that is no test of ours
# ok 4 - global.xfail_case # XFAIL known
# # Totals: pass:2 fail:1 xfail:1 xpass:0 skip:1 error:0
not ok 1 selftests: perf_events: mmap_page # exit=1
# selftests: perf_events: rdpmc
ok 2 selftests: perf_events: rdpmc # SKIP
# selftests: perf_events: slow
not ok 3 selftests: perf_events: slow # TIMEOUT 120 seconds
EOF
bb=$(command -v busybox || echo /bin/busybox)
if [ ! -x "$bb" ]; then
	result ok "awk cases" "SKIP needs busybox"
else
	"$bb" awk -f "$tmp/prog.awk" "$tmp/run.ktap" > "$tmp/cases" 2>&1
	cat > "$tmp/want" <<'EOF'
mmap_page global.cap_fields_are_abi_bits pass
mmap_page page.cycles_task_run.opened_disabled skip
mmap_page page.dummy_task_odd_name.after_enable fail
mmap_page global.xfail_case pass
- mmap_page fail
- rdpmc skip
- slow fail
EOF
	if cmp -s "$tmp/cases" "$tmp/want"; then
		result ok "awk cases"
	else
		diff "$tmp/want" "$tmp/cases" | sed 's/^/# /'
		result fail "awk cases"
	fi
fi

# The whole definition as LAVA runs it: its params, then its steps, in one
# run.sh under set -e (the YAML read as the dispatcher reads it), with
# lava-test-case and lava-test-set stubs and a fake kselftest install
# whose runner prints the crafted KTAP; /proc writes go to a file.
if ! $py -c 'import yaml' 2>/dev/null || [ ! -x "$bb" ]; then
	result ok "definition steps" "SKIP needs python3-yaml and busybox"
else
	mkdir -p "$tmp/ksft" "$tmp/bin"
	# Like kselftest's runner: its own lines on stdout, the programs'
	# appended to /dev/stdout.
	cat > "$tmp/ksft/run_kselftest.sh" <<EOF2
#!/bin/sh
while IFS= read -r l; do
	case \$l in
	'# '*) printf '%s\\n' "\$l" >> /dev/stdout ;;
	*) printf '%s\\n' "\$l" ;;
	esac
done < "$tmp/run.ktap"
exit 1
EOF2
	printf '#!/bin/sh\necho "case $1 $3"\n' > "$tmp/bin/lava-test-case"
	printf '#!/bin/sh\necho "set $*"\n' > "$tmp/bin/lava-test-set"
	chmod +x "$tmp/ksft/run_kselftest.sh" "$tmp/bin/"*
	$py - "$lava/perf_events.yaml" "$tmp/ksft" "$tmp/proc" > "$tmp/run.sh" <<'EOF2'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
d = yaml.safe_load(yaml.safe_dump(d))	# what the inline definition becomes
d['params']['KSELFTEST_PATH'] = sys.argv[2]
for k, v in d['params'].items():
	print("%s='%s'" % (k, v or ''))
print('set -e')
for step in d['run']['steps']:
	print(step.replace('/proc/sys/kernel/', sys.argv[3] + '.'))
print('echo END')
EOF2
	(cd "$tmp" && PATH="$tmp/bin:$PATH" "$bb" sh run.sh) > "$tmp/steps.out" 2>&1
	cat > "$tmp/steps.want" <<'EOF2'
set start mmap_page
case global.cap_fields_are_abi_bits pass
case page.cycles_task_run.opened_disabled skip
case page.dummy_task_odd_name.after_enable fail
case global.xfail_case pass
set stop
case mmap_page fail
case rdpmc skip
case slow fail
END
EOF2
	if grep -v -e '^#' -e '^TAP' -e '^1\.\.' -e '^ok' -e '^not ok' -e '^run_kselftest' \
		"$tmp/steps.out" | cmp -s - "$tmp/steps.want" && [ "$(cat "$tmp/proc.perf_event_paranoid")" = 2 ]; then
		result ok "definition steps"
	else
		sed 's/^/# /' "$tmp/steps.out"
		result fail "definition steps"
	fi
fi

if ! $py -c 'import yaml' 2>/dev/null; then
	for t in compare-same compare-verdict compare-missing compare-extra compare-unfinished; do
		result ok "$t" "SKIP needs python3-yaml"
	done
else
	# A lava-run log as the dispatcher writes it (YAML with "!" tags).
	mklog() {	# CASES FINISHED > LOG
		echo '{"dt": "x", "lvl": "results", "msg": {"case": "validate", "definition": "lava", "result": "pass"}}'
		while read -r s c r; do
			if [ "$s" = - ]; then
				printf '{"dt": "x", "lvl": "results", "msg": {"case": "%s", "definition": "0_perf_events", "endtc": ! "5", "result": "%s"}}\n' "$c" "$r"
			else
				printf '{"dt": "x", "lvl": "results", "msg": {"case": "%s", "definition": "0_perf_events", "result": "%s", "set": "%s", "starttc": ! "5"}}\n' "$c" "$r" "$s"
			fi
		done < "$1"
		printf '{"dt": "x", "lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "%s"}}\n' "$2"
	}
	cmp_case() {	# NAME WANT_RC CASES FINISHED
		mklog "$3" "$4" > "$tmp/log"
		$py "$lava/lava.py" compare "$tmp/log" "$tmp/run.ktap" t > "$tmp/out" 2>&1
		rc=$?
		if [ "$rc" = "$2" ]; then
			result ok "$1"
		else
			sed 's/^/# /' "$tmp/out"
			result fail "$1" "exit $rc, want $2"
		fi
	}
	cmp_case compare-same 0 "$tmp/want" pass
	sed 's/^\(mmap_page global.cap_fields_are_abi_bits\) pass/\1 fail/' "$tmp/want" > "$tmp/c1"
	cmp_case compare-verdict 1 "$tmp/c1" pass
	grep -v cycles_task_run "$tmp/want" > "$tmp/c2"
	cmp_case compare-missing 1 "$tmp/c2" pass
	{ cat "$tmp/want"; echo "mmap_page global.extra pass"; } > "$tmp/c3"
	cmp_case compare-extra 1 "$tmp/c3" pass
	cmp_case compare-unfinished 1 "$tmp/want" fail
fi

# A job: its file:// URLs, the inline definition with this job's params.
python3 "$lava/lava.py" job --arch arm64 --label k --kernel "file://$tmp/a b/kernel" \
	--ramdisk "file://$tmp/a b/ramdisk.cpio" --program rdpmc --test global.x \
	"$lava/perf_events.yaml" > "$tmp/job.yaml"
if grep -q '^          PROGRAM: "rdpmc"$' "$tmp/job.yaml" &&
   grep -q '^          TEST: "global.x"$' "$tmp/job.yaml" &&
   grep -q "^        url: \"file://$tmp/a b/kernel\"$" "$tmp/job.yaml"; then
	result ok "job params and urls"
else
	result fail "job params and urls"
fi
if ! $py -c 'import lava_common.schemas' 2>/dev/null; then
	result ok "job schema" "SKIP needs lava-common"
elif $py "$lava/lava.py" validate "$tmp/job.yaml" > "$tmp/out" 2>&1; then
	result ok "job schema"
else
	tail -n 3 "$tmp/out" | sed 's/^/# /'
	result fail "job schema"
fi

# Bad input: one line on stderr, exit 2, no directory written.
bad() {	# NAME PATTERN ARGS...
	local name=$1 pat=$2 rc
	shift 2
	"$top/run_tests.sh" "$@" > "$tmp/stdout" 2> "$tmp/stderr"
	rc=$?
	if [ "$rc" = 2 ] && [ ! -s "$tmp/stdout" ] && [ "$(wc -l < "$tmp/stderr")" = 1 ] &&
	   grep -q "$pat" "$tmp/stderr" && [ ! -e "$tmp/jobs" ]; then
		result ok "lava-job $name"
	else
		sed 's/^/# /' "$tmp/stderr"
		result fail "lava-job $name" "exit $rc"
	fi
}
bad no-dir 'needs a directory' --lava-job
bad other-option 'does not go with --lava-job' --lava-job "$tmp/jobs" --kvm
bad no-kernel 'no such kernel image' --lava-job "$tmp/jobs" --kernel "$tmp/nope"
bad bad-test "no test program 'nosuch'" --lava-job "$tmp/jobs" --kernel "$tmp/nope" -t nosuch
bad append-quote 'no newlines, quotes' --lava-job "$tmp/jobs" --append 'a="b"'
exit $fail
