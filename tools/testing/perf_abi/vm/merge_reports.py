#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Merge the report.ktap of several run_tests.sh runs into one KTAP.

    merge_reports.py [--known FILE] OUT DIR RC [DIR RC ...]

DIR is a run's --output directory, RC its exit code.  The top-level
results of every DIR/report.ktap are renumbered into OUT, their nested
lines kept; a run without a report (it did not get that far) becomes one
"not ok" naming the directory and its exit code.  Exit 0 when every RC
is 0 or 4 (run_tests.sh: every test skipped, as a run without privileges
on a kernel as shipped may), else 1.

--known FILE (kernels/known-bugs): a guest that failed (exit=1) only in
tests FILE lists, each failure naming its fix, is an expected failure:
its result and those tests' become "ok ... # XFAIL needs FIX", and its
run's RC 1 counts as 0.
"""
import os
import re
import sys

RESULT = re.compile(r'^(ok|not ok) \d+ (.*)$')
NESTED_FAIL = re.compile(r'^# not ok (\d+) (\S+): (\S+)(?: # (.*))?$')


def known_bugs(path):
    """{PROG:TEST: FIX} from a known-bugs file."""
    with open(path, encoding='utf-8') as f:
        rows = [l.split('\t', 1) for l in f.read().splitlines()
                if l.strip() and not l.startswith('#')]
    return {t.strip(): fix.strip() for t, fix in rows}


def expect_known(lines, known):
    """LINES of one report with each guest that failed in known bugs
    alone made an XFAIL; and whether every failing guest was."""
    out, block, all_known = [], [], True
    for line in lines:
        m = RESULT.match(line)
        if not m:
            block.append(line)
            continue
        fails = [(i, NESTED_FAIL.match(l)) for i, l in enumerate(block)
                 if l.startswith('# not ok ')]
        fixes = [f and known.get('%s:%s' % (f.group(2), f.group(3)))
                 for _, f in fails]
        if (m.group(1) == 'not ok' and m.group(2).endswith(' # exit=1') and
                fails and all(x and x in (f.group(4) or '')
                              for (_, f), x in zip(fails, fixes))):
            for (i, f), x in zip(fails, fixes):
                block[i] = '# ok %s %s: %s # XFAIL needs %s' % (
                    f.group(1), f.group(2), f.group(3), x)
            line = 'ok 0 %s # XFAIL kernel bugs: needs %s' % (
                m.group(2)[:-len(' # exit=1')], '; '.join(sorted(set(fixes))))
        elif m.group(1) == 'not ok':
            all_known = False
        out += block + [line]
        block = []
    return out + block, all_known


def main(argv):
    known = {}
    if len(argv) > 2 and argv[1] == '--known':
        known = known_bugs(argv[2])
        argv = argv[:1] + argv[3:]
    if len(argv) < 4 or len(argv) % 2:
        sys.stderr.write('usage: merge_reports.py [--known FILE] OUT DIR RC [DIR RC ...]\n')
        return 2
    out, pairs = argv[1], argv[2:]
    body, n, bad = [], 0, False
    for d, rc in zip(pairs[::2], pairs[1::2]):
        path = os.path.join(d, 'report.ktap')
        lines = []
        if os.path.isfile(path):
            with open(path, encoding='utf-8', errors='replace') as f:
                lines, all_known = expect_known(f.read().splitlines(), known)
            if rc == '1' and all_known:
                rc = '0'
        bad = bad or rc not in ('0', '4')
        if not os.path.isfile(path):
            n += 1
            body.append('not ok %d selftests: vm: %s # exit=%s no report'
                        % (n, os.path.basename(d), rc))
            continue
        for line in lines:
            if line.startswith('TAP version') or re.match(r'^1\.\.\d+$', line):
                continue
            m = RESULT.match(line)
            if m:
                n += 1
                line = '%s %d %s' % (m.group(1), n, m.group(2))
            body.append(line)
    with open(out, 'w', encoding='utf-8') as f:
        f.write('TAP version 13\n1..%d\n' % n)
        f.write('\n'.join(body) + '\n')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
