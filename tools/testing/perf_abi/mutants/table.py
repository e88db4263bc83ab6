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


def failures(programs, names, mine, logs=None):
    """Failed tests ("prog:test") of our programs (mine) or the others;
    a program that failed with no failing test counts as "prog:(exit)"."""
    out = []
    for p in programs:
        if (p['name'] in names) != mine:
            continue
        bad = [t['name'] for t in p['tests'] if t['verdict'] == 'fail']
        out += ['%s:%s' % (p['name'], t) for t in bad]
        if logs is not None:
            logs += [('%s:%s' % (p['name'], t['name']),
                      '\n'.join(t.get('log') or []) + '\n' +
                      (t.get('message') or '') + ' ' + (t.get('reason') or ''))
                     for t in p['tests'] if t['verdict'] == 'fail']
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


# Why a fix has no counted verdict here: the same words in every row.
REASONS = (
    'no faithful model on 6.12',
    'needs a KVM guest',
    'needs an x86 PMU',
    'needs an AUX-capable PMU',
    'needs a PMU whose counter wraps during a test',
    'needs another sched_clock than the guests have',
    'a race no test makes',
    'no test asserts it yet',
)
KINDS_CRASH = ('crash', 'splat', 'timeout')
BOOTS = 3     # rule 3: killed in every one of 3 boots on each arch


def sections(text):
    """The '### Hn COMMIT SUBJECT' sections of HISTORY.md outside the
    table: [(fix, commit, subject, text)]."""
    out = []
    for sec in re.split(r'^### ', text, flags=re.M)[1:]:
        head = sec.split('\n', 1)[0].split(' ', 2)
        if not re.match(r'H\d+$', head[0]):
            continue
        if len(head) < 3 or not re.match(r'[0-9a-f]{12}$', head[1]):
            head = [head[0], '-', ' '.join(
                head[2:] if head[1:2] == ['-'] else head[1:])]
        out.append((head[0], head[1], head[2], sec))
    return out


def field(sec, name):
    """A '- Name: ...' line of a section, continuation lines joined."""
    m = re.search(r'^- %s: (.*(?:\n  .*)*)' % name, sec, re.M)
    return ' '.join(m.group(1).split()) if m else None


def checks(spec):
    """'- Check: PROG:GLOB `EXPR`, PROG:GLOB, ...' -> [(glob, [expr])]:
    the tests (fnmatch globs) asserting the property the fix restored,
    each with the assertion's text as the harness prints it ("Expected
    ...") when only that assertion of the test counts."""
    out = []
    for part in re.findall(r'(\S+:\S+)((?:\s*`[^`]*`)*)', spec or ''):
        out.append((part[0].rstrip(','), re.findall(r'`([^`]*)`', part[1])))
    return out


def quotes(patch_text, commit):
    """Whether a patch's header quotes the hunk of COMMIT it reverts
    ('Reverts COMMIT' and indented lines of the fix's diff), or says in
    one line why 6.12 needs an equivalent ('6.12 needs an equivalent
    of COMMIT: ...')."""
    head = patch_text.split('\n---\n', 1)[0]
    c = re.escape(commit)
    if re.search(r'^6\.12 needs an equivalent of %s: \S' % c, head, re.M):
        return True
    m = re.search(r'^Reverts %s\b.*\n((?:    .*\n|\n)+)' % c, head + '\n',
                  re.M)
    return bool(m and re.search(r'^    [-+]', m.group(1), re.M))


def boot_kind(r, spec):
    """How one boot of a mutant ended, against the row's checks:
    ('check', TEST) a test asserting what the fix restored failed (on
    that assertion, when the check names it); ('timeout', TEST);
    ('other', TEST) another test, or another assertion of a check
    test, failed; ('crash', TEST) the kernel crashed or hung in a test
    of ours; ('splat', TEST) a WARNING or BUG in one; ('survived', '');
    ('no verdict', '')."""
    import fnmatch
    if r.get('crash_ours'):
        return 'crash', r['crash']
    fails = r.get('fail_logs') or []
    for name, log in fails:
        for glob, exprs in spec:
            if fnmatch.fnmatchcase(name, glob) and (
                    not exprs or any(e in log for e in exprs)):
                return 'check', name
    for name, log in fails:
        if re.search(r'terminated by timeout', log):
            return 'timeout', name
    if fails:
        return 'other', fails[0][0]
    if r.get('splat_ours'):
        return 'splat', r['splat_ours']
    if r['progs'] is None:
        return 'no verdict', ''
    return 'survived', ''


def cell(boots):
    """A column's cell from the boots [(kind, test)] of one arch."""
    n = len(boots)
    kinds = [k for k, _ in boots]
    if kinds and all(k == 'check' for k in kinds):
        tests = sorted({t for _, t in boots})
        s = 'failed: %s' % ', '.join(tests[:2])
        if n >= BOOTS:
            return 'caught (%s)' % s
        return 'caught in %d boot%s of %d (%s)' % (
            n, '' if n == 1 else 's', BOOTS, s)
    parts = []
    for k in sorted(set(kinds), key=kinds.index):
        ts = sorted({t for k2, t in boots if k2 == k and t})
        what = {'check': 'failed: %s', 'other': 'failed: %s, not the check',
                'crash': 'crash in %s', 'timeout': 'timeout in %s',
                'splat': 'splat in %s'}.get(k)
        s = what % ' / '.join(ts[:2]) if what else k
        if len(set(kinds)) > 1 or n < BOOTS:
            s += ' (%d of %d boot%s)' % (kinds.count(k), n,
                                         '' if n == 1 else 's')
        parts.append(s)
    return ' / '.join(parts)


def verdict(arch_boots):
    """A row's verdict from its claimed arches' boots {arch: [(kind,
    test)]}: 'caught' only when every one of at least 3 boots on each
    arch failed a check."""
    allk = [k for b in arch_boots.values() for k, _ in b]
    if all(len(b) >= BOOTS and all(k == 'check' for k, _ in b)
           for b in arch_boots.values()):
        return 'caught'
    if 'survived' in allk:
        return 'not caught (survived)'
    if 'no verdict' in allk:
        return 'no verdict'
    if 'other' in allk:
        return 'killed only by another test'
    if any(k in KINDS_CRASH for k in allk):
        return 'seen only as a crash'
    return 'caught in fewer than %d boots' % BOOTS


def history(path, booted, boots, patches, patch_texts):
    """The history table: a row per '### Hn COMMIT SUBJECT' of HISTORY.md,
    its '- Model:' mutant's boots on each arch the mutant's patch claims
    (boots[(arch, name)] = [(kind, test)] of every boot of this run), and
    the headline.  A row's verdict comes from this run alone; an arch
    the row claims that this run did not boot makes it 'not checked by
    this run'.  Returns (rows, {fix: verdict}, problems)."""
    parts = open(path).read().split(MARK)
    text = parts[0] + (parts[2] if len(parts) == 3 else '')
    arches = ['x86_64', 'arm64', 'riscv64']
    arches += [a for a in booted if a not in arches]
    rows = ['| fix | commit | what broke | mutant | check | %s | verdict |'
            % ' | '.join(arches),
            '|---|---|---|---|---|%s---|' % ('---|' * len(arches))]
    problems, verdicts_, owner = [], {}, {}
    full = set()    # rows booted at least BOOTS times on every claimed arch
    secs = sections(text)
    for fix, commit, subject, sec in secs:
        model = field(sec, 'Model') or 'none (no faithful model on 6.12)'
        name = re.match(r'`([a-z0-9-]+)`', model)
        mutant = name.group(1) if name and not model.startswith('none') \
            else None
        if mutant:
            owner.setdefault(mutant, []).append(fix)
    for fix, commit, subject, sec in secs:
        model = field(sec, 'Model') or 'none (no faithful model on 6.12)'
        name = re.match(r'`([a-z0-9-]+)`', model)
        mutant = name.group(1) if name and not model.startswith('none') \
            else None
        spec = checks(field(sec, 'Check'))
        cells = []
        if not mutant:
            m = re.match(r'none \(([^)]*)\)', model)
            why = m.group(1) if m else None
            if why not in REASONS:
                problems.append('%s: "- Model: none (REASON)" with REASON '
                                'one of: %s' % (fix, '; '.join(REASONS)))
            cells = ['-'] * len(arches)
            v = 'not caught: %s' % why
        else:
            claim = patches.get(mutant, '').split()
            arch_boots, missing = {}, []
            for a in arches:
                if a not in claim:
                    cells.append('-')
                elif (a, mutant) in boots:
                    arch_boots[a] = boots[(a, mutant)]
                    cells.append(cell(arch_boots[a]))
                else:
                    missing.append(a)
                    cells.append('not booted by this run')
            if mutant not in patches:
                problems.append('%s: no patch for mutant %s' % (fix, mutant))
                v = 'not caught: no patch'
            elif not spec:
                problems.append('%s: no "- Check:" line' % fix)
                v = 'not counted: no check named'
            elif len(owner[mutant]) > 1:
                v = 'not counted: mutant shared with %s' % ', '.join(
                    f for f in owner[mutant] if f != fix)
                problems.append('%s: %s' % (fix, v))
            elif missing:
                v = 'not checked by this run (%s not booted)' % \
                    ', '.join(missing)
            else:
                if all(len(b) >= BOOTS for b in arch_boots.values()):
                    full.add(fix)
                v = verdict(arch_boots)
                if v == 'caught' and not quotes(patch_texts[mutant], commit):
                    # rule 1: a verdict of its own, not a broken table
                    v = 'not counted: its patch quotes no hunk of %s' % commit
        verdicts_[fix] = v
        chk = ', '.join(g for g, _ in spec) if spec else '-'
        rows.append('| %s | %s | %s | %s | %s | %s | %s |' % (
            fix, commit, subject.replace('|', '/'), mutant or 'none',
            chk.replace('|', '/'),
            ' | '.join(c.replace('|', '/') for c in cells), v))
    vs = list(verdicts_.values())
    caught = vs.count('caught')
    crash = vs.count('seen only as a crash')
    other = {}
    for v in vs:
        if v not in ('caught', 'seen only as a crash'):
            k = 'no mutant here' if v.startswith('not caught:') else \
                re.sub(r' \(\D.*|: .*', '', v)
            other[k] = other.get(k, 0) + 1
    rows += ['', 'caught by the check of what broke: %d of %d fixes; seen '
             'only as a crash: %d; %s' % (
                 caught, len(vs), crash, ', '.join(
                     '%s: %d' % kv for kv in sorted(other.items())))]
    return rows, verdicts_, problems, full


def kinds_booted(v):
    """Whether a verdict comes from boots (a row with a mutant): a row
    booted fewer than 3 times (make check boots the uncounted ones once)
    is compared with HISTORY.md only when HISTORY.md counts it caught."""
    return not v.startswith(('not caught:', 'not counted: mutant shared',
                             'not counted: no check', 'not counted: no patch'))


def old_verdicts(table):
    """{fix: verdict} of a history table's rows (its last cell)."""
    out = {}
    for r in table.split('\n'):
        c = [x.strip() for x in r.strip().strip('|').split(' | ')]
        if r.startswith('| H') and re.match(r'H\d+$', c[0]):
            out[c[0]] = c[-1]
    return out


def survivors(hist):
    """{mutant: fix} that may survive: named by a row of HISTORY.md whose
    model is 'none (no test asserts it yet)' or 'none (a race no test
    makes)', or whose verdict in its table is 'not caught (survived)'.
    Their rows say so; every other mutant must be killed."""
    parts = open(hist).read().split(MARK)
    old = old_verdicts(parts[1] if len(parts) == 3 else '')
    out = {}
    for fix, commit, subject, sec in sections(parts[0] + (
            parts[2] if len(parts) == 3 else '')):
        model = field(sec, 'Model') or ''
        if model.startswith(('none (no test asserts it yet)',
                             'none (a race no test makes)')):
            for n in re.findall(r'`([a-z0-9-]+)`', model):
                out[n] = fix
        elif old.get(fix) == 'not caught (survived)':
            m = re.match(r'`([a-z0-9-]+)`', model)
            if m:
                out[m.group(1)] = fix
    return out


def counted_rows(hist, patch_dir):
    """'ARCH MUTANT' for each row HISTORY.md's table counts as caught,
    on every arch its patch claims: what make check boots 3 times."""
    parts = open(hist).read().split(MARK)
    old = old_verdicts(parts[1] if len(parts) == 3 else '')
    text = parts[0] + (parts[2] if len(parts) == 3 else '')
    for fix, commit, subject, sec in sections(text):
        model = field(sec, 'Model') or ''
        name = re.match(r'`([a-z0-9-]+)`', model)
        if old.get(fix) != 'caught' or not name:
            continue
        for p in glob.glob(os.path.join(patch_dir, '[0-9][0-9]-%s.patch'
                                        % name.group(1))):
            m = re.search(r'^Arches: (.*)$', open(p).read(), re.M)
            for a in (m.group(1).split() if m else []):
                print(a, name.group(1))
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == '--counted':
        return counted_rows(argv[2], argv[3])
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
            row['fail_logs'] = []
            row['ours'] = failures(progs, ours, True, row['fail_logs'])
            row['up'] = failures(progs, ours, False)
            row['n_ours'] = counted(progs, ours, True)
            row['n_up'] = counted(progs, ours, False)
            if name == 'pristine':
                pristine_up.setdefault(arch, set()).update(row['up'])
        rows.append(row)

    ok_all = True
    lines = []
    may_survive = survivors(hist) if hist else {}
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
                if not ok and n in may_survive:
                    # HISTORY.md's row says no test catches it yet
                    ok, verdict = True, 'survived'
                detail = squeeze(r['ours'], 62) if r['ours'] else '-'
                if r['kind'] and r['kind'] != 'test failed':
                    detail = squeeze([r['kind']] + r['ours'], 62)
                upd = squeeze(up_new, 40) if up_new else '-'
                # killed: by every boot of the mutant
                k = kills.setdefault(a, {})
                k[n] = k.get(n, True) and r['killed']
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
        patches, patch_texts = {}, {}
        for p in glob.glob(os.path.join(os.path.dirname(hist), '*.patch')):
            n = re.sub(r'^\d\d-', '', os.path.basename(p)[:-6])
            patch_texts[n] = open(p).read()
            m = re.search(r'^Arches: (.*)$', patch_texts[n], re.M)
            patches[n] = m.group(1) if m else ''
        boots, booted = {}, []
        for r in rows:
            booted += [r['arch']] if r['arch'] not in booted else []
            if r['name'] == 'pristine':
                continue
            r['crash_ours'] = bool(r['crash'] and
                                   r['crash'].split(':')[0] in ours)
            r['splat_ours'] = next((s for s in r['splats'] if re.match(
                r'\S+:\S+$', s) and s.split(':')[0] in ours), None)
            boots.setdefault((r['arch'], r['name']), []).append(r)
        specs = {}
        for fix, commit, subject, sec in sections(
                ''.join(open(hist).read().split(MARK)[0::2])):
            model = field(sec, 'Model') or ''
            m = re.match(r'`([a-z0-9-]+)`', model)
            if m:
                specs[m.group(1)] = checks(field(sec, 'Check'))
        kinds = {k: [boot_kind(r, specs.get(k[1], [])) for r in rs]
                 for k, rs in boots.items()}
        table, now, problems, full = history(hist, booted, kinds, patches,
                                             patch_texts)
        with open(os.path.join(out, 'history.md'), 'w') as f:
            f.write('\n'.join(table) + '\n')
        print('history (%s; every verdict from this run, booted here: %s):'
              % (hist, ', '.join(booted)))
        print('\n'.join(table))
        for p in problems:
            print('HISTORY.md: %s' % p)
            ok_all = False
        parts = open(hist).read().split(MARK)
        before = old_verdicts(parts[1] if len(parts) == 3 else '')
        differ = False
        for fix, v in now.items():
            was = before.get(fix)
            if v.startswith('not checked by this run'):
                if was == 'caught':
                    print('HISTORY.md counts %s as caught: this run did not '
                          're-check it (%s)' % (fix, v))
                    differ = True
            elif v != was and (fix in full or was == 'caught' or
                               not kinds_booted(v)):
                print('HISTORY.md says %s: %s; this run: %s' % (fix, was, v))
                differ = True
        if set(before) - set(now):
            print('HISTORY.md: rows of its table not in its sections: %s'
                  % ' '.join(sorted(set(before) - set(now))))
            differ = True
        if differ:
            ok_all = False
            print('HISTORY.md: its table differs from this run: put %s '
                  'between its two markers' % os.path.join(out, 'history.md'))
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
