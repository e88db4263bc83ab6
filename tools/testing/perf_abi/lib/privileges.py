#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The privilege table of run_tests.sh --cells runs.

    privileges.py [--cells-dir DIR] OUT.md LABEL=KTAP...

Each KTAP is a guest's KTAP of a --cells run (vm/init): one result per
cell "privileges: MODE@LEVEL", the kselftest runner's KTAP of that cell
nested in it.  Writes a markdown table to OUT.md (and stdout): per kernel
and MODE one row, per perf_event_paranoid LEVEL the tests passed /
skipped / failed; then every SKIP reason that a test gave in one cell but
not in another where it passed, with the cells that gave it.  With
--cells-dir, each cell's runner KTAP goes to DIR/LABEL-MODE@LEVEL.ktap
(lib/names.py reads them).

Exit 1 when a cell failed (a failed test, a KTAP error, a cell that did
not run) or when a test that passed in one cell skipped in another with a
reason that names no permission (PERMISSION below): a skip must say what
permission it lacked.  Exit 2 on bad usage or an unreadable KTAP.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

MODES = ('root', 'nocaps', 'perfmon', 'user')
LEVELS = ('-1', '0', '1', '2', '3')
CELL = re.compile(r'^(?:not ok|ok) \d+ privileges: (\w+)@(-?\d+)\b')
# What a SKIP reason names when a permission was missing.
PERMISSION = re.compile(r'paranoid|CAP_[A-Z_]+|\broot\b|\buid\b')


def split_cells(text):
    """{(mode, level): runner KTAP text} of a --cells KTAP, and the
    top-level parse (cells as programs)."""
    cells, cur = {}, []
    for raw in text.splitlines():
        line = raw.rstrip('\r')
        m = CELL.match(line)
        if m:
            cells[(m.group(1), m.group(2))] = '\n'.join(cur) + '\n'
            cur = []
            continue
        inner = ktap._strip(line, 1)
        if inner is not None:
            cur.append(inner)
    return cells, ktap.parse(text)


KNOWN = set() # tests a known kernel bug fails (--known)


def load(label, path):
    with open(path, errors='replace') as f:
        text = f.read()
    cells, top = split_cells(text)
    run = {'label': label, 'cells': {}, 'problems': []}
    for e in top['errors']:
        run['problems'].append('%s: %s' % (label, e))
    known_only = set() # cells whose every failure a known bug explains
    for key, body in cells.items():
        parsed = ktap.parse(body)
        tests = {}
        for p in parsed['programs']:
            for t in p['tests']:
                tests['%s:%s' % (p['name'], t['name'])] = (t['verdict'],
                                                           t['reason'])
        c = ktap.counts(parsed)
        run['cells'][key] = {'text': body, 'counts': c, 'tests': tests}
        where = '%s %s@%s' % (label, key[0], key[1])
        for e in parsed['errors']:
            run['problems'].append('%s: %s' % (where, e))
        fails = [n for n, (v, _) in sorted(tests.items()) if v == 'fail']
        if fails and set(fails) <= KNOWN and not parsed['errors']:
            known_only.add('privileges: %s@%s' % key)
        for name in fails:
            if name not in KNOWN:
                run['problems'].append('%s: %s failed' % (where, name))
    for p in top['programs']:
        if p['verdict'] == 'fail' and not (p['name'] in known_only and
                                           p['reason'] == 'exit=1'):
            run['problems'].append('%s: %s: %s' % (
                label, p['name'], p['reason'] or 'not ok'))
    return run


def lacking(run):
    """{reason: {cell: count}} of the SKIPs of tests that passed in
    another cell of the same kernel."""
    passed = set()
    for cell in run['cells'].values():
        passed |= {n for n, (v, _) in cell['tests'].items() if v == 'pass'}
    out = {}
    for key, cell in run['cells'].items():
        for n, (v, reason) in cell['tests'].items():
            if v == 'skip' and n in passed:
                d = out.setdefault(reason, {})
                d[key] = d.get(key, 0) + 1
    return out


def _cell_text(cell):
    if cell is None:
        return ''
    c = cell['counts']
    s = '%d / %d / %d' % (c['pass'], c['skip'], c['fail'])
    return '**%s**' % s if c['fail'] or c['error'] else s


def render(runs):
    out = ['| kernel | privilege | ' +
           ' | '.join('paranoid %s' % l for l in LEVELS) + ' |',
           '|---|---|' + '--:|' * len(LEVELS)]
    for r in runs:
        for mode in MODES:
            if not any(k[0] == mode for k in r['cells']):
                continue
            out.append('| %s | %s | %s |' % (
                r['label'], mode, ' | '.join(
                    _cell_text(r['cells'].get((mode, l))) for l in LEVELS)))
    out.append('')
    out.append('Cells: tests passed / skipped / failed.  SKIPs of tests '
               'that passed in another cell of the same kernel:')
    out.append('')
    out.append('| kernel | SKIP reason | cells (MODE@LEVEL: tests) |')
    out.append('|---|---|---|')
    for r in runs:
        for reason, where in sorted(lacking(r).items()):
            cells = ', '.join('%s@%s: %d' % (k[0], k[1], n) for k, n in
                              sorted(where.items(),
                                     key=lambda kv: (MODES.index(kv[0][0]),
                                                     int(kv[0][1]))))
            out.append('| %s | %s | %s |' % (r['label'], reason, cells))
    return '\n'.join(out) + '\n'


def main(argv):
    args = argv[1:]
    cells_dir = None
    if args[:1] == ['--known'] and len(args) > 1:
        # kernels/known-bugs: PROG:TEST, a tab, the fix; the vm stage
        # checks that their failures name the fix
        with open(args[1]) as f:
            KNOWN.update(l.split('\t')[0] for l in f
                         if l.strip() and not l.startswith('#'))
        args = args[2:]
    if args[:1] == ['--cells-dir'] and len(args) > 1:
        cells_dir = args[1]
        args = args[2:]
    if len(args) < 2 or any('=' not in a for a in args[1:]):
        sys.stderr.write('usage: privileges.py [--known FILE] [--cells-dir DIR] OUT.md '
                         'LABEL=KTAP...\n')
        return 2
    runs = []
    for a in args[1:]:
        label, path = a.split('=', 1)
        try:
            runs.append(load(label, path))
        except OSError as e:
            sys.stderr.write('privileges.py: %s\n' % e)
            return 2
    problems = []
    for r in runs:
        problems += r['problems']
        if not r['cells']:
            problems.append('%s: no cell ran' % r['label'])
        for reason, where in lacking(r).items():
            if not PERMISSION.search(reason or ''):
                problems.append('%s: SKIP "%s" (in %s) names no permission, '
                                'though the test passed in another cell' % (
                                    r['label'], reason, ', '.join(
                                        '%s@%s' % k for k in sorted(where))))
        if cells_dir:
            os.makedirs(cells_dir, exist_ok=True)
            for (mode, level), cell in r['cells'].items():
                with open(os.path.join(cells_dir, '%s-%s@%s.ktap' % (
                        r['label'], mode, level)), 'w') as f:
                    f.write(cell['text'])
    text = render(runs)
    with open(args[0], 'w') as f:
        f.write(text)
    sys.stdout.write(text)
    for p in problems:
        sys.stderr.write('privileges.py: %s\n' % p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
