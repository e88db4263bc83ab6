#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Merge the report.ktap of several run_tests.sh runs into one KTAP.

    merge_reports.py OUT DIR RC [DIR RC ...]

DIR is a run's --output directory, RC its exit code.  The top-level
results of every DIR/report.ktap are renumbered into OUT, their nested
lines kept; a run without a report (it did not get that far) becomes one
"not ok" naming the directory and its exit code.  Exit 0 when every RC
is 0 or 4 (run_tests.sh: every test skipped, as a run without privileges
on a kernel as shipped may), else 1.
"""
import os
import re
import sys

RESULT = re.compile(r'^(ok|not ok) \d+ (.*)$')


def main(argv):
    if len(argv) < 4 or len(argv) % 2:
        sys.stderr.write('usage: merge_reports.py OUT DIR RC [DIR RC ...]\n')
        return 2
    out, pairs = argv[1], argv[2:]
    body, n, bad = [], 0, False
    for d, rc in zip(pairs[::2], pairs[1::2]):
        bad = bad or rc not in ('0', '4')
        path = os.path.join(d, 'report.ktap')
        if not os.path.isfile(path):
            n += 1
            body.append('not ok %d selftests: vm: %s # exit=%s no report'
                        % (n, os.path.basename(d), rc))
            continue
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f.read().splitlines():
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
