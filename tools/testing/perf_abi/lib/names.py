#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Name stability of the suite's KTAP across runs, as a lab sees it.

    names.py OUT [ARCH:]LABEL=KTAP... [--names-only [ARCH:]LABEL=KTAP...]

Each KTAP is the kselftest runner's output of one run (host as root, host
as another uid, a guest...).  Kernel CI parsers (Linaro's parse-output.py,
used by KernelCI and LKFT) name a case after program and test and append
the SKIP reason, so a lab can follow a test across machines only if:

  1. every program that ran reports the same set of test names in every
     run of one architecture (a run may leave a program out: -t; a test
     may exist on one architecture only, as rdpmc's *_64bit on arm64);
  2. a test skipped in two runs is skipped with the same reason;
  3. each program reports as many results as its plan says, so that no
     diagnostic line was taken for a result.

The runs after --names-only (make check's privilege cells: a test run
with fewer privileges skips for the permission it lacked, and
lib/privileges.py checks that its reason names it) count for rules 1 and
3, not 2.

Writes KTAP (one result per rule) to OUT and to stdout; exit 1 on a
failure, 2 on bad usage or an unreadable log.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

PLAN = re.compile(r'^1\.\.(\d+)')
MAX_LINES = 20


def load(label, path):
    with open(path) as f:
        text = f.read()
    parsed = ktap.parse(text)
    tests = {}
    names = {}
    for p in parsed['programs']:
        names[p['name']] = set()
        for t in p['tests']:
            tests[(p['name'], t['name'])] = (t['verdict'], t['reason'])
            names[p['name']].add(t['name'])
    return {'label': label, 'text': text, 'tests': tests, 'names': names,
            'programs': parsed['programs']}


def same_names(runs):
    bad = []
    progs = sorted({p for r in runs for p in r['names']})
    for prog, arch in [(p, a) for p in progs
                       for a in sorted({r['arch'] for r in runs})]:
        arch_runs = [r for r in runs if r['arch'] == arch]
        for r in arch_runs:
            if prog in r['names'] and not r['names'][prog]:
                bad.append('%s: no test result in %s' % (prog, r['label']))
        have = [r for r in arch_runs if r['names'].get(prog)]
        for r in have[1:]:
            a, b = have[0]['names'][prog], r['names'][prog]
            for n in sorted(a - b):
                bad.append('%s: %s in %s, not in %s' %
                           (prog, n, have[0]['label'], r['label']))
            for n in sorted(b - a):
                bad.append('%s: %s in %s, not in %s' %
                           (prog, n, r['label'], have[0]['label']))
    return bad


def same_reasons(runs):
    bad = []
    first = {}
    for r in runs:
        for key, (verdict, reason) in r['tests'].items():
            if verdict != 'skip':
                continue
            if key not in first:
                first[key] = (r['label'], reason)
            elif first[key][1] != reason:
                bad.append('%s: %s: SKIP "%s" in %s, "%s" in %s' %
                           (key[0], key[1], first[key][1], first[key][0],
                            reason, r['label']))
    return bad


def plans_match(runs):
    """Results one level below each program line equal that program's
    plan: a diagnostic taken for a result (or hiding one) shows here."""
    bad = []
    for r in runs:
        plan = None
        count = 0
        for raw in r['text'].splitlines():
            line = raw.rstrip('\r')
            inner = ktap._strip(line, 1)
            if inner is not None:
                m = PLAN.match(inner)
                if m:
                    plan = int(m.group(1))
                elif ktap.RESULT.match(inner):
                    count += 1
                continue
            m = ktap.RESULT.match(line)
            if m:
                prog = m.group(3).strip().split(': ')[-1]
                if plan is not None and plan != count:
                    bad.append('%s: %s planned %d results, printed %d' %
                               (r['label'], prog, plan, count))
                plan = None
                count = 0
    return bad


def main(argv):
    args = argv[2:]
    only = args.index('--names-only') if '--names-only' in args else len(args)
    if len(argv) < 3 or only == 0 or \
            any('=' not in a for a in args if a != '--names-only'):
        sys.stderr.write('usage: names.py OUT [ARCH:]LABEL=KTAP... '
                         '[--names-only [ARCH:]LABEL=KTAP...]\n')
        return 2
    runs = []
    for i, a in enumerate(args):
        if a == '--names-only':
            continue
        label, path = a.split('=', 1)
        arch, _, label = label.rpartition(':')
        try:
            runs.append(load(label, path))
        except OSError as e:
            sys.stderr.write('names.py: %s\n' % e)
            return 2
        runs[-1]['arch'] = arch
        runs[-1]['names_only'] = i > only
    checks = [
        ('test names are the same in every run of an architecture',
         same_names(runs)),
        ('a test skipped in two runs has the same reason',
         same_reasons([r for r in runs if not r['names_only']])),
        ('no diagnostic line is taken for a result', plans_match(runs)),
    ]
    out = ['TAP version 13', '1..%d' % len(checks)]
    n_tests = sum(len(r['tests']) for r in runs)
    out.append('# runs: %s (%d test results)' %
               (', '.join(r['label'] for r in runs), n_tests))
    rc = 0
    for i, (name, bad) in enumerate(checks, 1):
        for b in bad[:MAX_LINES]:
            out.append('# ' + b)
        if len(bad) > MAX_LINES:
            out.append('# ... and %d more' % (len(bad) - MAX_LINES))
        if len(runs) < 2:
            out.append('ok %d names: %s # SKIP needs two runs' % (i, name))
        elif bad:
            out.append('not ok %d names: %s' % (i, name))
            rc = 1
        else:
            out.append('ok %d names: %s' % (i, name))
    text = '\n'.join(out) + '\n'
    with open(argv[1], 'w') as f:
        f.write(text)
    sys.stdout.write(text)
    return rc


if __name__ == '__main__':
    sys.exit(main(sys.argv))
