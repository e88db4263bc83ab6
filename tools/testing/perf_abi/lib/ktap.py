#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The one KTAP parser of this project, and the reports made from it.

Input is what the kselftest runner prints: a top level with one result line
per test program, and each program's own KTAP nested behind "# " prefixes.
Every report (summary, table, JUnit, JSON, compare) is rendered from the
parsed form returned by parse().
"""

import json
import re
import sys

RESULT = re.compile(r'^(not ok|ok)\s+(\d+)\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(\S+)\s*(.*))?$')


def _strip(line, depth):
    for _ in range(depth):
        if line.startswith('# '):
            line = line[2:]
        elif line == '#':
            line = ''
        else:
            return None
    return line


def _verdict(ok, directive):
    d = (directive or '').upper()
    if d == 'SKIP':
        return 'skip'
    if d == 'XFAIL':
        return 'pass'
    if d == 'TIMEOUT':
        return 'fail'
    return 'pass' if ok == 'ok' else 'fail'


def parse(text):
    """Parse runner output into {'programs': [...], 'bail': str|None}.

    Each program is {'name', 'verdict', 'reason', 'exit', 'tests': [...]},
    each test {'name', 'verdict', 'reason'}.  Test lines are the ones one
    level below the program line that closes them.
    """
    programs = []
    pending = []
    bail = None
    for raw in text.splitlines():
        line = raw.rstrip('\r')
        if line.startswith('Bail out!'):
            bail = line
            continue
        inner = _strip(line, 1)
        if inner is not None:
            # Only direct children: deeper lines belong to subtests' logs.
            m = RESULT.match(inner)
            if m:
                ok, _, name, directive, reason = m.groups()
                pending.append({'name': name.strip(),
                                'verdict': _verdict(ok, directive),
                                'reason': (reason or '').strip()})
            continue
        m = RESULT.match(line)
        if not m:
            continue
        ok, _, name, directive, reason = m.groups()
        name = name.strip()
        exit_code = None
        em = re.search(r'exit=(\d+)', reason or '')
        if em:
            exit_code = int(em.group(1))
        prog = name.split(': ')[-1] if name.startswith('selftests:') else name
        programs.append({'name': prog,
                         'verdict': _verdict(ok, directive),
                         'reason': (reason or '').strip(),
                         'exit': exit_code,
                         'tests': pending})
        pending = []
    return {'programs': programs, 'bail': bail}


def counts(parsed):
    """Per-test pass/fail/skip over all programs.  A program that failed
    without reporting any test (crash, timeout) counts as one failure."""
    c = {'pass': 0, 'fail': 0, 'skip': 0}
    for p in parsed['programs']:
        if p['tests']:
            for t in p['tests']:
                c[t['verdict']] += 1
            if p['verdict'] == 'fail' and \
               not any(t['verdict'] == 'fail' for t in p['tests']):
                c['fail'] += 1
        else:
            c[p['verdict']] += 1
    return c


def exit_code(parsed):
    """kselftest codes: 1 any failure, 4 everything skipped, else 0."""
    c = counts(parsed)
    if parsed['bail'] or c['fail'] or not parsed['programs']:
        return 1
    if c['pass'] == 0 and c['skip'] > 0:
        return 4
    return 0


def summary_line(parsed, label='perf_events'):
    c = counts(parsed)
    return '%s: %d programs, %d passed, %d failed, %d skipped' % (
        label, len(parsed['programs']), c['pass'], c['fail'], c['skip'])


def total(paths):
    """One closing line over several runner logs: 'N passed, N failed,
    N skipped'; exit 1 on any failure or unreadable log."""
    c = {'pass': 0, 'fail': 0, 'skip': 0}
    for path in paths:
        try:
            with open(path) as f:
                parsed = parse(f.read())
        except OSError as e:
            sys.stderr.write('ktap.py: %s\n' % e)
            c['fail'] += 1
            continue
        for k, v in counts(parsed).items():
            c[k] += v
        if parsed['bail'] or not parsed['programs']:
            c['fail'] += 1
    print('%d passed, %d failed, %d skipped' % (c['pass'], c['fail'], c['skip']))
    return 1 if c['fail'] else 0


def main(argv):
    if len(argv) >= 2 and argv[1] == 'total':
        return total(argv[2:])
    if len(argv) < 2 or argv[1] not in ('summary', 'json'):
        sys.stderr.write('usage: ktap.py summary|json [FILE] [LABEL] | total FILE...\n')
        return 2
    with open(argv[2] if len(argv) > 2 and argv[2] != '-' else 0) as f:
        parsed = parse(f.read())
    if argv[1] == 'summary':
        print(summary_line(parsed, argv[3] if len(argv) > 3 else 'perf_events'))
    else:
        json.dump(parsed, sys.stdout, indent=1)
        print()
    return exit_code(parsed)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
