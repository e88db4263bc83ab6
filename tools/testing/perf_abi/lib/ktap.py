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


# ---------------------------------------------------------------------------
# Reports over several kernels (run_tests.sh --kernel/--matrix/--compare).
#
# A manifest is a tab-separated file, one kernel a line:
#   LABEL ARCH SPEC KTAP STATUS SECONDS GUEST_RC REASON
# STATUS is "ok" (KTAP came back from the guest) or "noboot" (the kernel
# did not boot, panicked, oopsed, hung or lost its end marker: REASON says
# which, KTAP may be empty).  KTAP is relative to the manifest's directory
# unless absolute.

MANIFEST_FIELDS = ('label', 'arch', 'spec', 'ktap', 'status', 'seconds',
                   'guest_rc', 'reason')


def program_counts(prog):
    """pass/fail/skip of one program, as counts() does over all of them."""
    return counts({'programs': [prog], 'bail': None})


def load_manifest(path):
    """Entries of a manifest, each with 'parsed' (parse() of its KTAP)."""
    import os
    base = os.path.dirname(os.path.abspath(path))
    entries = []
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('#'):
                continue
            fields = line.split('\t')
            fields += [''] * (len(MANIFEST_FIELDS) - len(fields))
            e = dict(zip(MANIFEST_FIELDS, fields))
            try:
                e['seconds'] = float(e['seconds'])
            except ValueError:
                e['seconds'] = None
            try:
                e['guest_rc'] = int(e['guest_rc'])
            except ValueError:
                e['guest_rc'] = None
            text = ''
            if e['ktap']:
                kp = e['ktap'] if os.path.isabs(e['ktap']) else \
                    os.path.join(base, e['ktap'])
                try:
                    with open(kp) as k:
                        text = k.read()
                except OSError:
                    if e['status'] == 'ok':
                        e['status'] = 'noboot'
                        e['reason'] = 'no KTAP log %s' % kp
            e['parsed'] = parse(text)
            entries.append(e)
    return entries


def kernel_exit(e):
    """kselftest exit code of one kernel; 3 when it did not boot."""
    if e['status'] != 'ok':
        return 3
    return exit_code(e['parsed'])


def matrix_exit(entries):
    """3 if a kernel did not boot, else 1 if a test failed, else 0."""
    codes = [kernel_exit(e) for e in entries]
    if 3 in codes:
        return 3
    if 1 in codes:
        return 1
    return 0


def _programs(entries):
    names = []
    for e in entries:
        for p in e['parsed']['programs']:
            if p['name'] not in names:
                names.append(p['name'])
    return names


def _result(e):
    return {0: 'pass', 1: 'FAIL', 3: 'NO BOOT', 4: 'skip'}[kernel_exit(e)]


def _rows(entries):
    """Header and rows of the kernel x program table (cells:
    passed/failed/skipped tests)."""
    progs = _programs(entries)
    head = ['kernel', 'arch'] + progs + ['result', 'seconds']
    rows = []
    for e in entries:
        cells = {p['name']: program_counts(p) for p in e['parsed']['programs']}
        row = [e['label'], e['arch']]
        for name in progs:
            c = cells.get(name)
            row.append('%d/%d/%d' % (c['pass'], c['fail'], c['skip'])
                       if c else '-')
        row.append(_result(e))
        row.append('%.1f' % e['seconds'] if e['seconds'] is not None else '-')
        rows.append(row)
    return head, rows


def render_table(entries):
    head, rows = _rows(entries)
    width = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    out = []
    for r in [head] + rows:
        out.append('  '.join(c.ljust(w) for c, w in zip(r, width)).rstrip())
    out.append('cells: passed/failed/skipped tests')
    for e in entries:
        if e['status'] != 'ok':
            out.append('%s: %s' % (e['label'], e['reason'] or 'did not boot'))
    return '\n'.join(out) + '\n'


def render_markdown(entries):
    head, rows = _rows(entries)
    out = ['| ' + ' | '.join(head) + ' |',
           '|' + '|'.join('---' if i < 2 else '--:' for i in range(len(head))) + '|']
    for r in rows:
        out.append('| ' + ' | '.join(c.replace('|', '\\|') for c in r) + ' |')
    out.append('')
    out.append('Cells: passed/failed/skipped tests of each program.')
    for e in entries:
        if e['status'] != 'ok':
            out.append('')
            out.append('`%s`: %s' % (e['label'], e['reason'] or 'did not boot'))
    return '\n'.join(out) + '\n'


def _kernel_json(e):
    progs = []
    for p in e['parsed']['programs']:
        progs.append({'name': p['name'], 'verdict': p['verdict'],
                      'reason': p['reason'], 'exit': p['exit'],
                      'counts': program_counts(p), 'tests': p['tests']})
    return {'label': e['label'], 'arch': e['arch'], 'spec': e['spec'],
            'ktap': e['ktap'], 'status': e['status'], 'reason': e['reason'],
            'seconds': e['seconds'], 'guest_exit': e['guest_rc'],
            'exit': kernel_exit(e), 'result': _result(e).lower(),
            'summary': summary_line(e['parsed'], e['label']),
            'counts': counts(e['parsed']), 'bail': e['parsed']['bail'],
            'programs': progs}


def render_json(entries):
    total_c = {'pass': 0, 'fail': 0, 'skip': 0}
    for e in entries:
        for k, v in counts(e['parsed']).items():
            total_c[k] += v
    doc = {'kernels': [_kernel_json(e) for e in entries],
           'counts': total_c, 'exit': matrix_exit(entries)}
    return json.dumps(doc, indent=1) + '\n'


def render_junit(entries):
    from xml.sax.saxutils import quoteattr, escape
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    suites = []
    all_t = all_f = all_s = 0
    for e in entries:
        cases = []
        nf = ns = 0
        if e['status'] != 'ok':
            cases.append('  <testcase classname=%s name="boot"><failure message=%s/></testcase>'
                         % (quoteattr(e['label']), quoteattr(e['reason'] or 'did not boot')))
            nf += 1
        for p in e['parsed']['programs']:
            cls = quoteattr('%s.%s' % (e['label'], p['name']))
            tests = p['tests'] or [{'name': p['name'], 'verdict': p['verdict'],
                                    'reason': p['reason']}]
            if p['tests'] and p['verdict'] == 'fail' and \
               not any(t['verdict'] == 'fail' for t in p['tests']):
                tests = tests + [{'name': '(program)', 'verdict': 'fail',
                                  'reason': p['reason'] or 'program failed'}]
            for t in tests:
                body = ''
                if t['verdict'] == 'fail':
                    body = '<failure message=%s/>' % quoteattr(t['reason'] or 'failed')
                    nf += 1
                elif t['verdict'] == 'skip':
                    body = '<skipped message=%s/>' % quoteattr(t['reason'] or 'skipped')
                    ns += 1
                cases.append('  <testcase classname=%s name=%s>%s</testcase>'
                             % (cls, quoteattr(t['name']), body))
        t = '' if e['seconds'] is None else ' time="%.1f"' % e['seconds']
        suites.append(' <testsuite name=%s tests="%d" failures="%d" skipped="%d"%s>'
                      % (quoteattr(e['label']), len(cases), nf, ns, t))
        suites.extend(' ' + c for c in cases)
        suites.append(' </testsuite>')
        all_t += len(cases)
        all_f += nf
        all_s += ns
    out.append('<testsuites name="perf_events" tests="%d" failures="%d" skipped="%d">'
               % (all_t, all_f, all_s))
    out.extend(suites)
    out.append('</testsuites>')
    return '\n'.join(out) + '\n'


def render_ktap(entries, collection='vm'):
    """kselftest-runner KTAP with one top-level result per kernel and the
    guest's own KTAP nested under it ('# ' prefixes)."""
    out = ['TAP version 13', '1..%d' % len(entries)]
    for n, e in enumerate(entries, 1):
        name = 'selftests: %s: %s' % (collection, e['label'])
        out.append('# ' + name)
        if e['status'] == 'ok':
            out.append('# ' + summary_line(e['parsed'], e['label']))
        else:
            out.append('# %s' % (e['reason'] or 'did not boot'))
        sub = _sub_ktap(e)
        out.extend(('# ' + l) if l else '#' for l in sub)
        code = kernel_exit(e)
        if code == 0:
            out.append('ok %d %s' % (n, name))
        elif code == 4:
            out.append('ok %d %s # SKIP' % (n, name))
        else:
            out.append('not ok %d %s # exit=%d' % (n, name, code))
    return '\n'.join(out) + '\n'


def _sub_ktap(e):
    """A guest's result as KTAP one level down: one line per test of each
    program (prog.test), so that counts() of the nested report equals the
    guest's own."""
    lines = []
    tests = []
    for p in e['parsed']['programs']:
        if p['tests']:
            for t in p['tests']:
                tests.append(('%s: %s' % (p['name'], t['name']), t['verdict'], t['reason']))
            if p['verdict'] == 'fail' and \
               not any(t['verdict'] == 'fail' for t in p['tests']):
                tests.append((p['name'], 'fail', p['reason'] or 'program failed'))
        else:
            tests.append((p['name'], p['verdict'], p['reason']))
    if e['status'] != 'ok':
        tests.append(('boot', 'fail', e['reason'] or 'did not boot'))
    lines.append('TAP version 13')
    lines.append('1..%d' % len(tests))
    for i, (name, verdict, reason) in enumerate(tests, 1):
        if verdict == 'fail':
            lines.append('not ok %d %s%s' % (i, name, ' # ' + reason if reason else ''))
        elif verdict == 'skip':
            lines.append('ok %d %s # SKIP %s' % (i, name, reason))
        else:
            lines.append('ok %d %s' % (i, name))
    return lines


def _verdicts(parsed):
    """{key: verdict}: PROG:TEST for tests, PROG for a program that reported
    none, PROG:(program) for a program that failed beyond its tests."""
    v = {}
    for p in parsed['programs']:
        if p['tests']:
            for t in p['tests']:
                v['%s:%s' % (p['name'], t['name'])] = t['verdict']
            if p['verdict'] == 'fail' and \
               not any(t['verdict'] == 'fail' for t in p['tests']):
                v['%s:(program)' % p['name']] = 'fail'
        else:
            v[p['name']] = p['verdict']
    return v


def compare(old, new):
    """Tests whose verdict differs between two parsed runs, as
    [(kind, key, old, new)]: kind 'regression' (now failing, was not),
    'fix' (was failing, now passes), 'skip' (a skip appeared or went away,
    or a failure turned into a skip), 'added' / 'removed'.  Regressions
    first, then fixes, skip changes, the rest; in suite order within each."""
    ov, nv = _verdicts(old), _verdicts(new)
    keys = list(ov) + [k for k in nv if k not in ov]
    order = {'regression': 0, 'fix': 1, 'skip': 2, 'added': 3, 'removed': 4}
    diff = []
    for k in keys:
        a, b = ov.get(k), nv.get(k)
        if a == b:
            continue
        if b == 'fail':
            kind = 'regression'
        elif a is None:
            kind = 'added'
        elif b is None:
            kind = 'removed'
        elif a == 'fail' and b == 'pass':
            kind = 'fix'
        else:
            kind = 'skip'
        diff.append((kind, k, a or '-', b or '-'))
    diff.sort(key=lambda d: order[d[0]])
    return diff


def render_compare(diff, old_label='old', new_label='new'):
    if not diff:
        return 'no verdict differs between %s and %s\n' % (old_label, new_label)
    width = max(len(d[1]) for d in diff)
    out = ['%-10s  %-*s  %s -> %s' % ('change', width, 'test', old_label, new_label)]
    for kind, key, a, b in diff:
        out.append('%-10s  %-*s  %s -> %s' % (kind, width, key, a, b))
    n = {}
    for d in diff:
        n[d[0]] = n.get(d[0], 0) + 1
    words = {'regression': ('regression', 'regressions'),
             'fix': ('fix', 'fixes'),
             'skip': ('skip change', 'skip changes'),
             'added': ('test added', 'tests added'),
             'removed': ('test removed', 'tests removed')}
    out.append(', '.join('%d %s' % (n[k], words[k][n[k] != 1])
                         for k in ('regression', 'fix', 'skip', 'added', 'removed')
                         if k in n))
    return '\n'.join(out) + '\n'


# The block a maintainer pastes into a regression report (--compare).  It
# reads each test's own log lines from the runner output, apart from
# parse(): the lines between a test's RUN and its result.
def _test_logs(text):
    """{PROG:TEST: [log lines]} of every test, '# ' prefixes stripped."""
    logs, pending, buf = {}, {}, []
    for raw in text.splitlines():
        line = raw.rstrip('\r')
        inner = _strip(line, 1)
        if inner is not None:
            m = RESULT.match(inner)
            if m:
                pending[m.group(3).strip()] = buf
                buf = []
            else:
                buf.append(inner[2:] if inner.startswith('# ') else inner)
            continue
        m = RESULT.match(line)
        if m:
            name = m.group(3).strip()
            prog = name.split(': ')[-1] if name.startswith('selftests:') else name
            for t, b in pending.items():
                logs['%s:%s' % (prog, t)] = b
            pending, buf = {}, []
    return logs


TH_LOG = re.compile(r'^([\w.-]+\.c:\d+):[^:]*:(.*)$')
VERSION = re.compile(r'^(\d+\.\d+(?:\.\d+)?)(?:[+~-].*)?$')


def _version(label):
    """The upstream version a kernel release names, or None (Debian's
    6.1.0-N ABI names do not say which 6.1.y they are)."""
    label = re.sub(r'-(old|new)$', '', label)
    if re.match(r'^\d+\.\d+\.0-\d', label):
        return None
    m = VERSION.match(label)
    return m.group(1) if m else None


def render_regression(diff, old_text, new_text, old_label, new_label,
                      old_spec=None, new_spec=None, first=5):
    """Regression-report block, or '' when nothing regressed."""
    reg = [d for d in diff if d[0] == 'regression']
    if not reg:
        return ''
    logs = _test_logs(new_text)
    out = ['', '--- regression report ---',
           'perf user page ABI (struct perf_event_mmap_page) selftests, '
           'tools/testing/selftests/perf_events:']
    for what, label, spec in (('last good', old_label, old_spec),
                              ('first bad', new_label, new_spec)):
        label = re.sub(r'-(old|new)$', '', label)
        src = ' (%s)' % spec if spec and spec not in (label, 'debian:' + label) else ''
        out.append('  %s: %s%s' % (what, label, src))
    out.append('%d test%s regressed; the first %d:' % (
        len(reg), 's' if len(reg) != 1 else '', min(first, len(reg))))
    hints = []
    for _, key, a, _ in reg[:first]:
        msgs = []
        for line in logs.get(key, []):
            m = TH_LOG.match(line)
            if m and not m.group(2).startswith('Expected '):
                msgs.append('%s: %s' % (m.group(1), m.group(2).strip()))
            h = re.match(r'^#?\s*hint:\s*(.*)$', line)
            if h and h.group(1) not in hints:
                hints.append(h.group(1))
        out.append('  %s (was %s)' % (key, a))
        out.extend('    ' + x for x in msgs[:2])
    for h in hints:
        out.append('hint: %s' % h)
    ov, nv = _version(old_label), _version(new_label)
    if ov and nv and ov != nv:
        out.append('#regzbot introduced: v%s..v%s' % (ov, nv))
    return '\n'.join(out) + '\n'


def _write(path, text):
    if path == '-':
        sys.stdout.write(text)
        return
    with open(path, 'w') as f:
        f.write(text)


def report_main(args):
    """report MANIFEST [--table] [--json F] [--junit F] [--markdown F]
    [--ktap F [--collection NAME]]: exit code of the matrix."""
    if not args:
        raise SystemExit('usage: ktap.py report MANIFEST [--table] [--json F] '
                         '[--junit F] [--markdown F] [--ktap F] [--collection NAME]')
    entries = load_manifest(args[0])
    outs = {}
    table = False
    collection = 'vm'
    i = 1
    while i < len(args):
        a = args[i]
        if a == '--table':
            table = True
            i += 1
        elif a in ('--json', '--junit', '--markdown', '--ktap', '--collection') \
                and i + 1 < len(args):
            if a == '--collection':
                collection = args[i + 1]
            else:
                outs[a[2:]] = args[i + 1]
            i += 2
        else:
            raise SystemExit('ktap.py report: bad argument %r' % a)
    if 'json' in outs:
        _write(outs['json'], render_json(entries))
    if 'junit' in outs:
        _write(outs['junit'], render_junit(entries))
    if 'markdown' in outs:
        _write(outs['markdown'], render_markdown(entries))
    if 'ktap' in outs:
        _write(outs['ktap'], render_ktap(entries, collection))
    if table:
        sys.stdout.write(render_table(entries))
    return matrix_exit(entries)


def compare_main(args):
    """compare OLD.ktap NEW.ktap [OLD_LABEL NEW_LABEL [OLD_SPEC NEW_SPEC]]:
    1 if any regressed."""
    if len(args) < 2:
        raise SystemExit('usage: ktap.py compare OLD.ktap NEW.ktap [OLD_LABEL NEW_LABEL]')
    with open(args[0]) as f:
        old = parse(f.read())
    with open(args[1]) as f:
        new = parse(f.read())
    diff = compare(old, new)
    labels = args[2:4] if len(args) >= 4 else ('old', 'new')
    sys.stdout.write(render_compare(diff, *labels))
    with open(args[0]) as f:
        old_text = f.read()
    with open(args[1]) as f:
        new_text = f.read()
    sys.stdout.write(render_regression(diff, old_text, new_text, *labels,
                                       *(args[4:6] if len(args) >= 6 else ())))
    return 1 if any(d[0] == 'regression' for d in diff) else 0


USAGE = """usage: ktap.py summary|json [FILE] [LABEL]
       ktap.py total FILE...
       ktap.py report MANIFEST [--table] [--json F] [--junit F] [--markdown F]
                      [--ktap F [--collection NAME]]
       ktap.py compare OLD.ktap NEW.ktap [OLD_LABEL NEW_LABEL [OLD_SPEC NEW_SPEC]]
"""


def main(argv):
    if len(argv) >= 2 and argv[1] == 'total':
        return total(argv[2:])
    if len(argv) >= 2 and argv[1] == 'report':
        return report_main(argv[2:])
    if len(argv) >= 2 and argv[1] == 'compare':
        return compare_main(argv[2:])
    if len(argv) < 2 or argv[1] not in ('summary', 'json'):
        sys.stderr.write(USAGE)
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
