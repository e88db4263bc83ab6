#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The kill table of mutants/run.sh, from the runs' KTAP.

  table.py LIBDIR OUTDIR JOBFILE "OUR PROGRAMS" [KTAP_OUT [HISTORY.md]]

Each run directory OUTDIR/ARCH/NAME (NAME@K for the K-th boot of
run.sh --repeat) holds what ./run_tests.sh --output
wrote (*.ktap) and rc ("<exit code> <seconds>").  Results are parsed with
the project's one KTAP parser (lib/ktap.py parse()).  Programs named in
OUR PROGRAMS are this suite; the others are the reference suite (the
kernel's own perf_events selftests).  A mutant is killed, and the kind
of kill recorded, when a named test of ours failed ("test failed"), the
kernel crashed (runner exit 3) while a test of ours ran ("crash in
PROG:TEST", from the runner's summary.json) or splatted during one
("splat in PROG:TEST").  Exit 0 only when every pristine run passed all
our tests without a splat in them, every mutant is killed, every run
ended with a verdict, none left perf_user_access other than the guest
booted with (KNOB-ON: the kernel's default, and the suite must put it
back) and, in a run of two arches or more, every test of ours is killed
by some mutant.  With HISTORY.md (every mutant of the arches booted run), it
also prints the history table (one row per fix there: its verdict per
arch, with the kind of kill, and the line "caught N of M fixes, K not
bootable here"; the verdicts on arches not booted are HISTORY.md's) and
fails when a verdict of the table in HISTORY.md, between its two
HISTORY_TABLE markers, differs (kinds of kill may: it says so), naming
each fix it counts as killed that this run did not kill.
"""

import glob
import json
import os
import re
import sys

MARK = '<!-- HISTORY_TABLE: make mutants writes what is between -->'
# perf_user_access as the guests boot it: each kernel's default
# (arm64 0, riscv64 SYSCTL_USER_ACCESS 1).
KNOB_AT_BOOT = {'arm64': '0', 'riscv64': '1'}


def broke(run_dir):
    """(the PROG:TEST running when the kernel crashed or hung, or None;
    the PROG:TEST of each splat), from the runner's summary.json."""
    try:
        with open(os.path.join(run_dir, 'summary.json')) as f:
            k = json.load(f)['kernels'][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None, []
    m = re.search(r' while running (\S+:\S+)$', k.get('reason') or '')
    return (m.group(1) if m and k.get('status') == 'noboot' else None,
            [s.get('during', '') for s in k.get('splats') or []])


def load(run_dir, parse):
    """(rc, seconds, programs or None when the run gave no verdict)."""
    try:
        rc, secs = open(os.path.join(run_dir, 'rc')).read().split()
        rc, secs = int(rc), int(secs)
    except (OSError, ValueError):
        return None, 0, None
    programs = []
    # The runner's per-kernel log is LABEL.ktap (label ARCH-NAME); its
    # report.ktap only wraps it.
    for path in sorted(glob.glob(os.path.join(run_dir, '*.ktap'))):
        if os.path.basename(path) == 'report.ktap':
            continue
        with open(path, errors='replace') as f:
            parsed = parse(f.read())
        programs += parsed['programs']
    if rc in (2, 3) or not programs:
        return rc, secs, None
    return rc, secs, programs


def knob_left(run_dir, arch):
    """The line of the guest's log where the suite left perf_user_access
    other than the guest booted with (KNOB_AT_BOOT), or None."""
    for path in glob.glob(os.path.join(run_dir, '*.ktap')):
        with open(path, errors='replace') as f:
            for line in f:
                if (line.startswith('# after the run: ') and
                        'perf_user_access' in line and
                        not line.rstrip().endswith(
                            ' = ' + KNOB_AT_BOOT.get(arch, '0'))):
                    return line.strip()
    return None


def kill_kind(r, ours):
    """How a run killed its mutant: 'crash in PROG:TEST', 'splat in
    PROG:TEST' (the first in a test of ours), 'test failed' (a named test
    of ours failed), or None."""
    if r['crash'] and r['crash'].split(':')[0] in ours:
        return 'crash in ' + r['crash']
    for s in r['splats']:
        if re.match(r'\S+:\S+$', s) and s.split(':')[0] in ours:
            return 'splat in ' + s
    if r['progs'] is not None and any(
            not t.split(':', 1)[1].startswith('(') for t in r['ours']):
        return 'test failed'
    return None


def failures(programs, names, mine):
    """Failed tests ("prog:test") of our programs (mine) or the others;
    a program that failed with no failing test counts as "prog:(exit)"."""
    out = []
    for p in programs:
        if (p['name'] in names) != mine:
            continue
        bad = [t['name'] for t in p['tests'] if t['verdict'] == 'fail']
        out += ['%s:%s' % (p['name'], t) for t in bad]
        if p['verdict'] == 'fail' and not bad:
            out.append('%s:(%s)' % (p['name'], p['reason'] or 'failed'))
    return out


def counted(programs, names, mine):
    n = {'pass': 0, 'fail': 0, 'skip': 0}
    for p in programs:
        if (p['name'] in names) != mine:
            continue
        for t in p['tests'] or [p]:
            n[t['verdict']] += 1
    return n


def squeeze(tests, width):
    """fixture.variant.test over many variants -> fixture.*.test xN."""
    groups = {}
    for t in tests:
        prog, _, name = t.partition(':')
        parts = name.split('.')
        key = '%s:%s' % (prog, '.'.join([parts[0], '*', parts[2]])
                         if len(parts) == 3 else name)
        groups[key] = groups.get(key, 0) + 1
    items = ['%s x%d' % (k, v) if v > 1 else k for k, v in groups.items()]
    s = ', '.join(items)
    return s if len(s) <= width else s[:width - 3] + '...'


def old_cells(text):
    """The cells of the table between the markers: {fix: {arch: cell}},
    and its arches in order."""
    rows = [r for r in text.split('\n') if r.startswith('| ')]
    if not rows:
        return {}, []
    head = [c.strip() for c in rows[0].strip('|').split(' | ')]
    arches = head[4:]
    cells = {}
    for r in rows[1:]:
        c = [x.strip() for x in r.strip().strip('|').split(' | ')]
        if re.match(r'H\d+$', c[0]) and len(c) == len(head):
            cells[c[0]] = dict(zip(arches, c[4:]))
    return cells, arches


def history(path, booted, results, patches):
    """The history table: a row per '### Hn COMMIT SUBJECT' of HISTORY.md,
    its '- Model:' mutant's verdict on each arch (results[(arch, name)] =
    (killed by every boot, the kinds of kill)), and the summary line
    ('killed' when a test of ours failed in every boot, else the kinds of
    kill in brackets, e.g. 'killed (crash in PROG:TEST / splat)').  A
    fix is killed when its mutant is killed on an arch booted here; else
    not bootable here when its '- Here:' line begins with 'no' (the reason
    follows); else not killed.  The verdicts of mutants on arches not
    booted here (a column of the table in HISTORY.md) are HISTORY.md's."""
    parts = open(path).read().split(MARK)
    text = parts[0] + (parts[2] if len(parts) == 3 else '')
    old, old_arches = old_cells(parts[1] if len(parts) == 3 else '')
    arches = old_arches + [a for a in booted if a not in old_arches]
    rows = ['| fix | commit | what broke | mutant | %s |' % ' | '.join(arches),
            '|---|---|---|---|%s' % ('---|' * len(arches))]
    caught = fixes = unbootable = 0
    for sec in re.split(r'^### ', text, flags=re.M)[1:]:
        head = sec.split('\n', 1)[0].split(' ', 2)
        if not re.match(r'H\d+$', head[0]):
            continue
        if not re.match(r'[0-9a-f]{12}$', head[1]):
            head = [head[0], '-', ' '.join(head[1:])]
        model = re.search(r'^- Model: (.*(?:\n  .*)*)', sec, re.M)
        model = ' '.join(model.group(1).split()) if model else 'none: -'
        name = re.match(r'`([a-z0-9-]+)`', model)
        mutant = None if model.startswith('none') or not name else \
            name.group(1)
        here = re.search(r'^- Here: (.*(?:\n  .*)*)', sec, re.M)
        here = ' '.join(here.group(1).split()) if here else ''
        why = re.sub(r'^no\W*', '', here).rstrip('.') \
            if re.match(r'no\b', here) else None
        cells = []
        for a in arches:
            if a not in booted and mutant and a in patches.get(mutant, ''):
                cells.append(old.get(head[0], {}).get(a, 'not run'))
            elif mutant and (a, mutant) in results:
                killed, kinds = results[(a, mutant)]
                cells.append('not killed' if not killed else 'killed'
                             if kinds == {'test failed'} else
                             'killed (%s)' % ' / '.join(sorted(kinds)))
            elif mutant and a in patches.get(mutant, ''):
                cells.append('not run')
            elif why is not None:
                cells.append('not bootable here (%s)' % why)
            elif mutant:
                cells.append('not bootable here (Arches: %s)' %
                             patches.get(mutant, 'no patch'))
            else:
                cells.append('not killed (%s)' % model)
        fixes += 1
        if any(c.startswith('killed') for c in cells):
            caught += 1
        elif why is not None:
            unbootable += 1
        rows.append('| %s | %s | %s | %s | %s |' % (
            head[0], head[1], head[2].replace('|', '/'), mutant or 'none',
            ' | '.join(c.replace('|', '/') for c in cells)))
    rows += ['', 'caught %d of %d fixes, %d not bootable here' %
             (caught, fixes, unbootable)]
    return rows, [a for a in arches if a not in booted]


def verdicts(table):
    """The table with every 'killed (KINDS)' cell as 'killed': how a boot
    killed a mutant (a crash, a splat) may differ between runs, as
    riscv64's start-broadcast shows; that it was killed may not."""
    return re.sub(r'\| killed \([^|]*\) ', '| killed ', table)


def lost_kills(old, new):
    """The fixes the table old counts as killed that the table new does
    not (the tables' rows: '| Hn | ... | cell | cell |')."""
    def killed(rows):
        return {r.split(' | ')[0].strip('| ') for r in rows
                if r.startswith('| H') and '| killed' in r}
    return sorted(killed(old.split('\n')) - killed(new))


def main(argv):
    sys.path.insert(0, argv[1])
    from ktap import parse
    out, jobfile, ours = argv[2], argv[3], set(argv[4].split())
    ktap_out = argv[5] if len(argv) > 5 and argv[5] else None
    hist = argv[6] if len(argv) > 6 and argv[6] else None

    jobs = [l.split() for l in open(jobfile) if l.strip()]
    rows = []
    pristine_up = {}
    for job in jobs:
        arch, name = job[:2]
        run = name if job[5:] in ([], ['1']) else '%s@%s' % (name, job[5])
        rc, secs, progs = load(os.path.join(out, arch, run), parse)
        crash, splats = broke(os.path.join(out, arch, run))
        row = {'arch': arch, 'name': name, 'run': run, 'rc': rc,
               'secs': secs, 'progs': progs, 'crash': crash,
               'splats': splats, 'ours': []}
        if progs is not None:
            row['ours'] = failures(progs, ours, True)
            row['up'] = failures(progs, ours, False)
            row['n_ours'] = counted(progs, ours, True)
            row['n_up'] = counted(progs, ours, False)
            if name == 'pristine':
                pristine_up.setdefault(arch, set()).update(row['up'])
        rows.append(row)

    ok_all = True
    lines = []
    hdr = '%-7s %-15s %-9s %-6s %-4s %-62s %s' % (
        'arch', 'mutant', 'verdict', 'kill', 'secs', 'our failed TESTs',
        'reference (upstream) failed')
    print(hdr)
    print('-' * len(hdr))
    kills = {}
    up_kills = {}
    for r in rows:
        a, n = r['arch'], r['name']
        r['kind'] = kill_kind(r, ours)
        if n != 'pristine' and r['progs'] is None and r['kind']:
            # a crash in a test of ours: the results end there
            ok = r['killed'] = True
            verdict, detail, upd = 'killed', r['kind'], '-'
            k = kills.setdefault(a, {})
            k[n] = k.get(n, True)
            k = up_kills.setdefault(a, {})
            k[n] = False
        elif r['progs'] is None:
            verdict, ok = 'NO-VERDICT', False
            detail = 'runner exit %s (see %s/%s/%s/run.log)' % (
                r['rc'], out, a, r['run'])
            upd = '-'
        else:
            up_new = [t for t in r['up'] if t not in pristine_up.get(a, ())]
            if n == 'pristine':
                ok = not r['kind']
                c = r['n_ours']
                verdict = 'pass' if ok else 'FALSE-ALARM'
                detail = (squeeze(r['ours'], 62) if r['ours'] else
                          r['kind'] or
                          '(%d passed, %d skipped)' % (c['pass'], c['skip']))
                cu = r['n_up']
                upd = '%d passed, %d failed, %d skipped' % (
                    cu['pass'], cu['fail'], cu['skip'])
            else:
                ok = r['killed'] = bool(r['kind'])
                verdict = 'killed' if ok else 'SURVIVED'
                detail = squeeze(r['ours'], 62) if r['ours'] else '-'
                if r['kind'] and r['kind'] != 'test failed':
                    detail = squeeze([r['kind']] + r['ours'], 62)
                upd = squeeze(up_new, 40) if up_new else '-'
                # killed: by every boot of the mutant
                k = kills.setdefault(a, {})
                k[n] = k.get(n, True) and ok
                k = up_kills.setdefault(a, {})
                k[n] = k.get(n, True) and bool(up_new)
        knob = r['progs'] is not None and \
            knob_left(os.path.join(out, a, r['run']), a)
        if knob:
            verdict, ok, detail = 'KNOB-ON', False, knob
        ok_all = ok_all and ok
        kind = (r['kind'] or '-').split(' ')[0] if n != 'pristine' else '-'
        kind = 'failed' if kind == 'test' else kind
        print('%-7s %-15s %-9s %-6s %-4s %-62s %s' % (
            a, r['run'], verdict, kind, r['secs'], detail, upd))
        lines.append((ok, '%s:%s' % (a, r['run']), verdict, r))
    print('-' * len(hdr))
    for a in kills:
        print('%s: ours killed %d/%d mutants; reference suite killed %d/%d'
              % (a, sum(kills[a].values()), len(kills[a]),
                 sum(up_kills[a].values()), len(up_kills[a])))
    for r in rows:
        if r['run'] == 'pristine' and r['progs'] is not None:
            print('%s reference programs: %s' % (r['arch'], ' '.join(
                p['name'] for p in r['progs'] if p['name'] not in ours)))

    # Each test of ours (each case of a fixture's variants) and the
    # mutants that fail it.  A mutant that fails every case of a variant
    # family on an arch (a page field every case checks) is listed once,
    # not as any case's killer: a case with no killer of its own has no
    # place in the suite.
    tests, killers, ran = set(), {}, {}
    for r in rows:
        for p in r['progs'] or []:
            if p['name'] not in ours:
                continue
            for t in p['tests']:
                n = '%s:%s' % (p['name'], t['name'])
                tests.add(n)
                if r['name'] == 'pristine' and t['verdict'] == 'pass':
                    ran.setdefault(r['arch'], set()).add(n)
        if r['name'] != 'pristine':
            named = r['ours'] + [r['kind'].split(' ')[-1]] \
                if r['kind'] and r['kind'] != 'test failed' else r['ours']
            for t in named:
                killers.setdefault(t, set()).add((r['name'], r['arch']))
    every = set()
    for a, names in ran.items():
        families = {}
        for n in names:
            if n.count('.') == 2:
                families.setdefault(n.split('.')[0], []).append(n)
        for fx, mine in families.items():
            if len(mine) < 2:
                continue
            every |= {(fx, k, a) for k, a2 in set.intersection(
                *(killers.get(n, set()) for n in mine)) if a2 == a}
    # A run of one arch (e.g. riscv64 alone) lacks the other arches'
    # killers: its NONE rows are shown, not failed.
    one = len({r['arch'] for r in rows}) < 2
    print('test -> killers (mutant/arch)%s; every case of a family: %s' % (
        ' (one arch booted: NONE does not fail the matrix)' if one else '',
        ' '.join(sorted('%s/%s' % k[1:] for k in every)) or '-'))
    for t in sorted(tests):
        fx = t.split('.')[0] if t.count('.') == 2 else None
        ks = sorted('%s/%s' % k for k in killers.get(t, set())
                    if (fx,) + k not in every)
        ok_all = ok_all and (bool(ks) or one)
        print('  %-50s %s' % (t, ' '.join(ks) if ks else 'NONE'))
    if hist:
        patches = {}
        for p in glob.glob(os.path.join(os.path.dirname(hist), '*.patch')):
            n = re.sub(r'^\d\d-', '', os.path.basename(p)[:-6])
            m = re.search(r'^Arches: (.*)$', open(p).read(), re.M)
            patches[n] = m.group(1) if m else ''
        results = {}
        booted = []
        for r in rows:
            booted += [r['arch']] if r['arch'] not in booted else []
            if r['name'] != 'pristine':
                k = (r['arch'], r['name'])
                killed, kinds = results.get(k, (True, set()))
                # a splat's test is the one that ran when the warning
                # came, which differs between boots: the run's lines name it
                kind = re.sub(r'^splat in .*', 'splat', r['kind'] or 'none')
                results[k] = (killed and r.get('killed', False),
                              kinds | {kind})
        table, kept = history(hist, booted, results, patches)
        with open(os.path.join(out, 'history.md'), 'w') as f:
            f.write('\n'.join(table) + '\n')
        print('history (%s; booted here: %s%s):' % (
            hist, ', '.join(booted), '; as HISTORY.md has them, not '
            'booted: ' + ', '.join(kept) if kept else ''))
        print('\n'.join(table))
        parts = open(hist).read().split(MARK)
        old = parts[1].strip() if len(parts) == 3 else ''
        new = '\n'.join(table)
        if verdicts(old) != verdicts(new):
            ok_all = False
            for h in lost_kills(old, table):
                print('HISTORY.md counts %s as killed: this run did not '
                      'kill it' % h)
            print('HISTORY.md: its table differs from this run: put %s '
                  'between its two markers' % os.path.join(out, 'history.md'))
        elif old != new:
            print('HISTORY.md: the same verdicts, other kinds of kill than '
                  'this run\'s (%s)' % os.path.join(out, 'history.md'))
    print('matrix: %s' % ('PASS' if ok_all else 'FAIL'))

    with open(os.path.join(out, 'expected'), 'w') as f:
        for ok, name, verdict, r in lines:
            if ok:
                f.write('%s %s\n' % (r['arch'], r['run']))

    if ktap_out:
        with open(ktap_out, 'w') as f:
            f.write('TAP version 13\n1..%d\n' % len(lines))
            for i, (ok, name, verdict, r) in enumerate(lines, 1):
                f.write('# selftests: mutants: %s\n' % name)
                for t in (r.get('ours') or [])[:20]:
                    f.write('# failed: %s\n' % t)
                if r['progs'] is None:
                    f.write('# runner exit %s, no verdict\n' % r['rc'])
                if ok:
                    f.write('ok %d selftests: mutants: %s\n' % (i, name))
                else:
                    f.write('not ok %d selftests: mutants: %s # exit=1 %s\n'
                            % (i, name, verdict))
    return 0 if ok_all else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
