#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""KTAP of one tree's run (run.sh), for make check's total.

    report.py KTAP LABEL OUTDIR

OUTDIR holds steps.tsv (NAME, VERDICT pass|fail|skip|log|info, DETAIL),
ours (our program names) and the runner logs the "log" steps name.  Each
step is one result; a "log" step is one result per program of ours, the
run_tests one with that program's test lines nested (the only place our
tests are counted one by one).  Upstream's programs are listed as
diagnostics with their verdicts, not counted: on a machine without a PMU
some of them fail on their own.  Prints one summary line; exit 1 when a
step or a program of ours failed.
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lib'))
import ktap  # noqa: E402

TOP_RESULT = re.compile(r'^(not )?ok \d+ ')


def counts_text(prog):
    c = ktap.program_counts(prog)
    return '%d passed, %d failed, %d skipped' % (c['pass'], c['fail'],
                                                 c['skip'])


def headed(text, lines):
    """The runner's output with a KTAP header.  From 7.x a tree's
    `make run_tests` prints no version line and no plan (run_many() leaves
    them to run_kselftest.sh): give it both, the plan counting the
    top-level results it printed, and say so."""
    rows = text.splitlines()
    if any(ktap.VERSION.match(r) for r in rows):
        return text
    results = [i for i, r in enumerate(rows) if TOP_RESULT.match(r)]
    first = next((i for i, r in enumerate(rows)
                  if r.startswith('# ') or TOP_RESULT.match(r)), len(rows))
    lines.append("# the tree's run_tests printed no KTAP header; "
                 "read with a plan of its %d results" % len(results))
    rows[first:first] = ['TAP version 13', '1..%d' % len(results)]
    return '\n'.join(rows) + '\n'


def main(argv):
    if len(argv) != 4:
        sys.stderr.write('usage: report.py KTAP LABEL OUTDIR\n')
        return 2
    path, label, out = argv[1:]
    steps = []
    with open(os.path.join(out, 'steps.tsv')) as f:
        for line in f:
            parts = line.rstrip('\n').split('\t')
            steps.append((parts + ['', '', '', ''])[:4])
    ours = []
    if os.path.exists(os.path.join(out, 'ours')):
        ours = [l.strip() for l in open(os.path.join(out, 'ours')) if l.strip()]

    lines, n, failed = [], 0, []
    summary, theirs_summary, seconds = [], [], None

    def result(name, verdict, detail=None, nested=()):
        nonlocal n
        n += 1
        lines.extend('# ' + l for l in nested)
        if detail:
            lines.append('# %s: %s' % (name, detail))
        full = 'selftests: %s: %s' % (label, name)
        if verdict == 'pass':
            lines.append('ok %d %s' % (n, full))
        elif verdict == 'skip':
            lines.append('ok %d %s # SKIP %s' % (n, full, detail or ''))
        else:
            lines.append('not ok %d %s' % (n, full))
            failed.append(name)

    for name, verdict, detail, secs in steps:
        if verdict == 'info':
            if name == 'seconds':
                seconds = detail
            else:
                lines.append('# %s: %s' % (name, detail))
                if name.startswith("upstream"):
                    theirs_summary.append(detail)
            continue
        if verdict != 'log':
            result(name, verdict,
                   '%s (%s s)' % (detail, secs) if secs and verdict != 'skip'
                   else detail)
            continue
        if secs:
            lines.append('# %s: %s s' % (name, secs))
        try:
            parsed = ktap.parse(headed(open(os.path.join(out, detail)).read(),
                                       lines))
        except OSError as e:
            result(name, 'fail', str(e))
            continue
        progs = {p['name']: p for p in parsed['programs']}
        for p in ours:
            if name != 'run_tests' and name.startswith('run_kselftest.sh -t ') \
                    and not name.endswith(':' + p):
                continue
            prog = progs.get(p)
            rname = '%s: %s' % (name, p) if not name.endswith(':' + p) else name
            if prog is None:
                result(rname, 'fail', 'did not run (see %s)' % detail)
                continue
            nested = []
            if name == 'run_tests':
                for i, t in enumerate(prog['tests'], 1):
                    s = '%s %d %s' % ('ok' if t['verdict'] != 'fail' else 'not ok',
                                      i, t['name'])
                    if t['verdict'] == 'skip':
                        s += ' # SKIP' + (' ' + t['reason'] if t['reason'] else '')
                    nested.append(s)
                summary.append('%s %s' % (p, counts_text(prog).replace(
                    ' passed, ', '/').replace(' failed, ', '/').replace(' skipped', '')))
            verdict = prog['verdict']
            if verdict == 'fail' and prog['tests'] and \
                    not any(t['verdict'] == 'fail' for t in prog['tests']):
                detail_p = 'exit %s after %s' % (prog['exit'], counts_text(prog))
            else:
                detail_p = counts_text(prog)
            result(rname, verdict if verdict != 'skip' else 'skip', detail_p,
                   nested)
        if name == 'run_tests':
            for p in parsed['programs']:
                if p['name'] in ours:
                    continue
                theirs_summary.append('%s %s' % (p['name'], p['verdict']))
                lines.append("# upstream's own %s: %s (%s)%s" % (
                    p['name'], p['verdict'], counts_text(p),
                    ", not counted: upstream's test, not ours"
                    if p['verdict'] == 'fail' else ''))
                for t in p['tests']:
                    if t['verdict'] == 'fail':
                        lines.append("#   upstream's %s: %s failed" %
                                     (p['name'], t['name']))

    text = 'TAP version 13\n1..%d\n%s\n' % (n, '\n'.join(lines))
    with open(path, 'w') as f:
        f.write(text)
    line = '%s: %s' % (label, 'FAIL (%s)' % ', '.join(failed) if failed
                       else 'ok')
    if summary:
        line += '; ours (pass/fail/skip): ' + ', '.join(summary)
    if theirs_summary:
        line += "; upstream's own: " + ', '.join(theirs_summary)
    skipped = [d for _, v, d, _ in steps if v == 'skip']
    if skipped:
        line += '; SKIP: ' + '; '.join(skipped)
    if seconds:
        line += '; %s s' % seconds
    print(line)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
