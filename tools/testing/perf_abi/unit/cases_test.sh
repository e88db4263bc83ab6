#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The case table of mmap_page (page_cases.h) keeps its own rules: no case
# the kernel refuses or that cannot reach the page it checks, names in
# words of at most 60 characters, every kind, state and origin the fixture
# knows in some case, and every attr bit too.  Each rule is shown to fail
# on a crafted table that breaks it.  Prints KTAP; exit 1 on failure.
set -u

top=$(cd "$(dirname "$0")/../../../.." && pwd)
suite=$top/tools/testing/selftests/perf_events
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# rules.py TABLE SOURCE: one line per broken rule, exit 1 if any
cat > "$tmp/rules.py" <<'PY'
import re
import sys

table, source = open(sys.argv[1]).read(), open(sys.argv[2]).read()
cases = re.findall(r'FIXTURE_VARIANT_ADD\(page, (\w+)\) \{(.*?)\n\};', table, re.S)
enum = lambda name: re.findall(r'\b(%s_[A-Z_]+)\b' % name,
                               re.search(r'enum %s \{(.*?)\};' % {
                                   'K': 'kind', 'S': 'state', 'O': 'origin',
                               }[name], source, re.S).group(1))
flags = re.findall(r'\b(A_[A-Z_]+) =', source)
bad = []
seen = set()
for name, body in cases:
    words = set(re.findall(r'\b[A-Z][A-Z_]+\b', body))
    seen |= words
    redirect = words & {'O_SET_OUTPUT', 'O_FD_OUTPUT'}
    if len(name) > 60:
        bad.append('%s: name longer than 60 characters' % name)
    if redirect and 'R_AGAIN' in words:
        bad.append('%s: munmap detaches the redirected event' % name)
    if 'A_INHERIT' in words and not words & {'A_PER_CPU', 'A_ON_CPU'}:
        bad.append('%s: inherit on every cpu (perf_mmap() EINVAL)' % name)
    if 'A_INHERIT' in words and 'S_REFRESH' in words:
        bad.append('%s: inherit with REFRESH (EINVAL)' % name)
    if 'O_SIBLING' in words and words & {'A_PINNED', 'A_EXCLUSIVE'}:
        bad.append('%s: a pinned or exclusive sibling (EINVAL)' % name)
    if words & {'K_CPU_CLOCK', 'K_TASK_CLOCK'} and 'S_REFRESH' in words:
        bad.append('%s: REFRESH on an hrtimer event (hangs 6.16, 6.17)' % name)
    if (words & {'K_TRACEPOINT', 'K_BREAKPOINT', 'K_CYCLES', 'K_INSTRUCTIONS'}
            and words & {'CLOCK_BOOTTIME', 'CLOCK_REALTIME', 'CLOCK_TAI'}):
        bad.append('%s: a clock that is not NMI-safe (EINVAL)' % name)
# O_OPENED, the first origin, is that of every case without .origin
for v in enum('K') + enum('S') + enum('O')[1:] + flags:
    if v not in seen:
        bad.append('no case has %s' % v)
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY

n=0
failed=0
res() {	# OK NAME
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=1
	fi
}

echo "TAP version 13"
echo "1..3"
python3 "$tmp/rules.py" "$suite/page_cases.h" "$suite/mmap_page.c" > "$tmp/out"
rc=$?
sed '/^$/d; s/^/# /' "$tmp/out"
res $rc "page_cases.h keeps every rule"

# A table broken twice: a redirected event mapped again, inherit on every cpu.
sed -e '0,/\.origin = O_SET_OUTPUT/s//.origin = O_SET_OUTPUT, .remap = R_AGAIN/' \
    -e '0,/A_ON_CPU | A_INHERIT/s//A_INHERIT/' \
	"$suite/page_cases.h" > "$tmp/bad.h"
python3 "$tmp/rules.py" "$tmp/bad.h" "$suite/mmap_page.c" > "$tmp/out"
grep -q 'munmap detaches' "$tmp/out" && grep -q 'inherit on every cpu' "$tmp/out"
res $? "a redirected case mapped again, and inherit on every cpu, are caught"

# A table that lost its only write_backward cases.
sed 's/A_BACKWARD | //; s/\.flags = A_BACKWARD,//' "$suite/page_cases.h" > "$tmp/bad.h"
python3 "$tmp/rules.py" "$tmp/bad.h" "$suite/mmap_page.c" > "$tmp/out"
grep -qx 'no case has A_BACKWARD' "$tmp/out"
res $? "an attr bit no case sets is caught"
exit $failed
