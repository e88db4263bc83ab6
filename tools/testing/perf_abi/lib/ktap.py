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

# The four kinds of KTAP line (Documentation/dev-tools/ktap.rst).  A result's
# description may hold no '#'; what follows '#' is a directive and/or
# diagnostic data.
VERSION = re.compile(r'^(?:K?TAP) version (\d+)\s*$')
PLAN = re.compile(r'^1\.\.(\d+)\s*(?:#\s*(.*?))?\s*$')
RESULT = re.compile(r'^(not ok|ok)\s+(\d+)\b\s*(?:-\s*)?([^#]*?)\s*(?:#\s*(.*?))?\s*$')
BAIL = re.compile(r'^Bail out!\s*(.*?)\s*$')
# A nested document starts with its own version line, one level deeper:
# behind "# " (the kselftest runner's prefix) or indented (KTAP's two spaces).
NESTED = re.compile(r'^(#\s|\s+)(?:K?TAP) version \d+\s*$')
DIRECTIVES = ('SKIP', 'TODO', 'XFAIL', 'TIMEOUT', 'ERROR')
# kselftest_harness.h's own progress lines, not a failure message.
# The harness's line as a test starts: "#  RUN           FIXTURE.TEST ..."
RUN_MARK = re.compile(r'^#\s+RUN\s+(\S+)')
HARNESS_MARK = re.compile(r'^#\s+(RUN|OK|FAIL|SKIP|XFAIL|XPASS|PASSED:|FAILED:|Totals:|Starting)\b')


def _strip(line, depth):
    """LINE without DEPTH levels of the kselftest runner's "# " nesting,
    or None when it is not that deep (lib/names.py reads programs' KTAP)."""
    for _ in range(depth):
        if line.startswith('# '):
            line = line[2:]
        elif line == '#':
            line = ''
        else:
            return None
    return line


def _under(line, prefix):
    """LINE without PREFIX, or None when LINE is not at that level."""
    if line.startswith(prefix):
        return line[len(prefix):]
    if prefix and line == prefix.rstrip():
        return ''
    return None


def _verdict(ok, directive):
    d = (directive or '').upper()
    if d == 'SKIP':
        return 'skip'
    if d == 'XFAIL':
        return 'pass'
    if d in ('TIMEOUT', 'ERROR'):
        return 'fail'
    return 'pass' if ok == 'ok' else 'fail'


def _result_line(m):
    ok, num, name, tail = m.groups()
    directive, reason = None, (tail or '').strip()
    if reason:
        word = reason.split(None, 1)
        if word[0].upper() in DIRECTIVES:
            directive = word[0].upper()
            reason = word[1].strip() if len(word) > 1 else ''
    return {'ok': ok, 'number': int(num), 'name': name.strip(),
            'directive': directive, 'reason': reason}


def _doc(lines, i, prefix, top):
    """One KTAP document at PREFIX from lines[i]: (doc, next i).  A doc is
    {'plan', 'plan_reason', 'results', 'errors', 'bail', 'log'}; every
    result carries the diagnostic lines before it ('log') and the nested
    document before it, if any ('sub')."""
    doc = {'version': None, 'plan': None, 'plan_reason': '', 'results': [],
           'errors': [], 'bail': None, 'log': []}
    log, sub = [], None
    while i < len(lines):
        s = _under(lines[i], prefix)
        if s is None:           # back at the parent's level
            break
        if VERSION.match(s):
            if doc['version'] is not None or doc['plan'] is not None or \
               doc['results']:
                if top:         # the runner's next collection
                    break
                doc['errors'].append('a second version line')
            doc['version'] = s
            i += 1
            continue
        m = NESTED.match(s)
        if m:
            if sub is not None:
                _orphan(doc, sub, log)
                log = []
            sub, i = _doc(lines, i, prefix + m.group(1), False)
            continue
        m = PLAN.match(s)
        if m and (doc['plan'] is None and sub is None):
            doc['plan'] = int(m.group(1))
            doc['plan_reason'] = m.group(2) or ''
            i += 1
            continue
        m = RESULT.match(s)
        if m:
            r = _result_line(m)
            r['log'], r['sub'] = log, sub
            log, sub = [], None
            want = len(doc['results']) + 1
            if r['number'] != want:
                doc['errors'].append('result number %d where %d was expected'
                                     % (r['number'], want))
            doc['results'].append(r)
            i += 1
            continue
        m = BAIL.match(s)
        if m:
            doc['bail'] = s
            i += 1
            continue
        if m is None and PLAN.match(s):
            doc['errors'].append('a second plan line (%s)' % s)
        log.append(s)
        i += 1
    if sub is not None:
        _orphan(doc, sub, log)
        log = []
    doc['log'] = log
    n, plan = len(doc['results']), doc['plan']
    if plan is not None and n < plan:
        doc['errors'].append('planned %d, got %d result%s: %d missing'
                             % (plan, n, 's' if n != 1 else '', plan - n))
    elif plan is not None and n > plan:
        doc['errors'].append('planned %d, got %d results: %d extra'
                             % (plan, n, n - plan))
    if doc['bail']:
        doc['errors'].append(doc['bail'])
    return doc, i


def _orphan(doc, sub, log):
    """A nested document that no result line closed (the program or the
    kernel died): kept as a failed result, named from the runner's
    '# selftests: C: P' line before it when there is one."""
    name = ''
    for line in log:
        m = re.match(r'^#\s*(selftests: .*)$', line)
        if m:
            name = m.group(1).strip()
    doc['results'].append({'ok': 'not ok', 'number': len(doc['results']) + 1,
                           'name': name or '(unnamed)', 'directive': None,
                           'reason': 'no result line', 'log': log, 'sub': sub,
                           'orphan': True})
    doc['errors'].append('%s: no result line after its output'
                         % (name or 'a nested test'))


def _message(t):
    """What a failed test says about its failure: the result's diagnostic,
    else its first log line that is not a harness progress mark."""
    if t['reason']:
        return t['reason']
    for line in t['log']:
        if line.strip() and not HARNESS_MARK.match(line):
            return line.strip().lstrip('# ').strip() or line
    return ''


def _unfinished(sub, tests, r, verdict):
    """The test a failed program was running when it ended (a harness RUN
    line after its last result, none of its own): a failed test of that
    name, "TIMEOUT" when the runner killed the program at its timeout,
    else the program's end (a crash, a guest that died or hung)."""
    if verdict != 'fail' and not r.get('orphan'):
        return None
    name = None
    for line in sub['log']:
        m = RUN_MARK.match(line)
        if m:
            name = m.group(1)
    if name is None or any(t['name'] == name for t in tests):
        return None
    if r['directive'] == 'TIMEOUT':
        why = 'TIMEOUT'
        msg = 'timed out: the program was killed at its kselftest timeout' \
            '%s while running this test' % (
                ' (%s)' % r['reason'] if r['reason'] else '')
    elif r.get('orphan'):
        why = None
        msg = 'did not finish: the program ended without a result line ' \
            '(the guest died or hung, see the run\'s Bail out!) while ' \
            'running this test'
    else:
        why = None
        msg = 'did not finish: the program ended (%s) while running this ' \
            'test' % (((r['directive'] or '') + ' ' + r['reason']).strip()
                      or 'not ok')
    log = [line for line in sub['log'] if line.strip()]
    return {'name': name, 'number': len(tests) + 1, 'verdict': 'fail',
            'directive': why, 'reason': msg, 'log': log,
            'errors': [], 'message': msg, 'unfinished': True}


def _settle(r):
    """Verdict and errors of one result, from its line and its subtests."""
    verdict = _verdict(r['ok'], r['directive'])
    errors = []
    tests = []
    sub = r['sub']
    if sub is not None:
        errors += sub['errors']
        for c in sub['results']:
            cv, ce, ctests = _settle(c)
            if ctests and c['sub'] is not None:
                # A result over whole programs (a --cells cell holds a
                # runner's KTAP): its programs' tests are the tests, so
                # that the totals are those of the tests that ran.
                prog = c['name'].split(': ')[-1] \
                    if c['name'].startswith('selftests:') else c['name']
                for t in ctests:
                    tests.append(dict(t, name='%s:%s' % (prog, t['name']),
                                      number=len(tests) + 1))
                if ce and not any(t['verdict'] == 'fail' for t in ctests):
                    tests.append({'name': prog, 'number': len(tests) + 1,
                                  'verdict': 'fail',
                                  'directive': c['directive'],
                                  'reason': c['reason'], 'log': c['log'],
                                  'errors': ce})
                continue
            tests.append({'name': c['name'], 'number': c['number'],
                          'verdict': 'fail' if ce else cv,
                          'directive': c['directive'],
                          'reason': c['reason'], 'log': c['log'],
                          'errors': ce})
        for t in tests:
            if t['verdict'] == 'fail':
                t['message'] = _message(dict(t, reason=t['reason'] or
                                             '; '.join(t['errors'])))
        hung = _unfinished(sub, tests, r, verdict)
        if hung:
            tests.append(hung)
        failed = [t for t in tests if t['verdict'] == 'fail']
        if not tests:
            if verdict != 'skip' and not r.get('orphan'):
                errors.append('ran no test (plan %s)' % (
                    '1..%d' % sub['plan'] if sub['plan'] is not None else 'none'))
        elif verdict == 'pass' and failed:
            errors.append('reported ok, but %d of its tests failed' % len(failed))
        elif verdict == 'fail' and not failed and not errors and \
                not r.get('orphan'):
            errors.append('reported not ok%s, but none of its %d tests failed'
                          % (' (' + ((r['directive'] or '') + ' ' +
                                     r['reason']).strip() + ')'
                             if r['directive'] or r['reason'] else '',
                             len(tests)))
    return verdict, errors, tests


def parse(text):
    """Parse runner output into {'programs', 'bail', 'errors', 'docs'}.

    Each program (a top-level result) is {'name', 'verdict', 'reason',
    'exit', 'errors', 'log', 'tests'}; each test (a result of the
    program's nested KTAP) {'name', 'verdict', 'reason', 'log',
    'errors'} and, when it failed, 'message'.  'log' holds the diagnostic
    lines before the result (for a harness test: its RUN line, TH_LOG and
    assertion lines).  A program's verdict is 'fail' when it or its KTAP
    is broken ('errors': missing or extra results, no test run, results
    that disagree with its own line: ok with a failed test, not ok
    with none; a SKIP line over passed tests is not one, ksft_exit_skip()
    may come after some passed).  'errors' of the parse are every
    error, each prefixed with where it was found.  Several top-level
    documents (one per kselftest collection) make one list of programs.
    """
    lines = [l.rstrip('\r\n') for l in text.splitlines()]
    programs, docs, errors = [], [], []
    bail = None
    i = 0
    junk = []
    while i < len(lines):
        # Lines before the first version line are not KTAP (make's
        # output, the kernel's console...).
        if not docs and not VERSION.match(lines[i]):
            s = lines[i]
            if BAIL.match(s):
                bail = s
            junk.append(s)
            i += 1
            continue
        doc, i = _doc(lines, i, '', True)
        docs.append(doc)
    doc_errors = []
    for d, doc in enumerate(docs):
        where = 'KTAP' if len(docs) == 1 else 'KTAP document %d' % (d + 1)
        doc_errors += ['%s: %s' % (where, e) for e in doc['errors']]
        if doc['bail']:
            bail = doc['bail']
        for r in doc['results']:
            verdict, perr, tests = _settle(r)
            name = r['name']
            prog = name.split(': ')[-1] if name.startswith('selftests:') else name
            em = re.search(r'exit=(\d+)', r['reason'] or '')
            errors += ['%s: %s' % (prog, e) for e in perr]
            programs.append({'name': prog, 'title': name,
                             'line_verdict': verdict,
                             'verdict': 'fail' if perr else verdict,
                             'reason': ((r['directive'] + ' ' if r['directive']
                                         and r['directive'] != 'SKIP' else '')
                                        + r['reason']).strip(),
                             'exit': int(em.group(1)) if em else None,
                             'errors': perr, 'log': r['log'],
                             'tests': tests})
    if bail and not docs:
        doc_errors.append('KTAP: %s' % bail)
    if not docs:
        doc_errors.append('KTAP: no version line')
    elif not programs and not doc_errors:
        doc_errors.append('KTAP: no test program ran (1..0)')
    return {'programs': programs, 'bail': bail,
            'errors': doc_errors + errors, 'doc_errors': doc_errors,
            'splats': []}


def apply_rc(parsed, rc, who='the runner'):
    """The runner's own exit code: anything but 0 (or 4 when everything
    skipped) fails the run, whatever its result lines say."""
    if rc is None:
        return parsed
    if rc == 0 or (rc == 4 and _exit(parsed) == 4):
        return parsed
    if _exit(parsed) == 1 and rc == 1:
        return parsed
    parsed['errors'].append('%s exited %d' % (who, rc))
    parsed['doc_errors'].append('%s exited %d' % (who, rc))
    return parsed


def counts(parsed):
    """Per-test pass/fail/skip over all programs.  A program that failed
    without reporting a failed test (crash, timeout, broken KTAP) counts as
    one failure; so does every broken top-level document and every kernel
    splat.  'error' is the number of KTAP errors."""
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
    c['fail'] += len(parsed.get('doc_errors', ())) + len(parsed.get('splats', ()))
    c['error'] = len(parsed.get('errors', ()))
    return c


def _exit(parsed):
    c = counts(parsed)
    if parsed['bail'] or c['fail'] or c['error'] or not parsed['programs']:
        return 1
    if c['pass'] == 0 and c['skip'] > 0:
        return 4
    return 0


def exit_code(parsed):
    """kselftest codes: 1 any failure or KTAP error, 4 everything skipped,
    else 0."""
    return _exit(parsed)


def summary_line(parsed, label='perf_events'):
    c = counts(parsed)
    s = '%s: %d programs, %d passed, %d failed, %d skipped' % (
        label, len(parsed['programs']), c['pass'], c['fail'], c['skip'])
    if c['error']:
        s += ', %d KTAP error%s' % (c['error'], 's' if c['error'] != 1 else '')
    if parsed.get('splats'):
        s += ', %d kernel splat%s' % (len(parsed['splats']),
                                      's' if len(parsed['splats']) != 1 else '')
    return s


def problem_lines(parsed, label='perf_events'):
    """One line per KTAP error, kernel splat and test that did not
    finish (a hung test: TIMEOUT)."""
    out = ['%s: error: %s' % (label, e) for e in parsed.get('errors', ())]
    for p in parsed.get('programs', ()):
        for t in p['tests']:
            if t.get('unfinished'):
                out.append('%s: %s%s:%s: %s' % (
                    label, t['directive'] + ' ' if t['directive'] else '',
                    p['name'], t['name'], t['message']))
    for s in parsed.get('splats', ()):
        out.append('%s: kernel splat %s: %s' % (label, s['during'], s['line']))
    return out


def total(paths):
    """One closing line over several runner logs: 'N passed, N failed,
    N skipped'; exit 1 on any failure, KTAP error or unreadable log."""
    c = {'pass': 0, 'fail': 0, 'skip': 0}
    bad = 0
    for path in paths:
        try:
            with open(path, errors='replace') as f:
                parsed = parse(f.read())
        except OSError as e:
            sys.stderr.write('ktap.py: %s\n' % e)
            c['fail'] += 1
            continue
        for line in problem_lines(parsed, path):
            sys.stderr.write(line + '\n')
        pc = counts(parsed)
        for k in c:
            c[k] += pc[k]
        if parsed['bail'] or not parsed['programs'] or pc['error']:
            bad += 1
    print('%d passed, %d failed, %d skipped' % (c['pass'], c['fail'], c['skip']))
    return 1 if c['fail'] or bad else 0


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
    with open(path, errors='surrogateescape') as f: # file names as they are
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
                    with open(kp, errors='replace') as k:
                        text = k.read()
                except OSError:
                    if e['status'] == 'ok':
                        e['status'] = 'noboot'
                        e['reason'] = 'no KTAP log %s' % kp
            e['parsed'] = parse(text)
            if e['status'] == 'ok':
                apply_rc(e['parsed'], e['guest_rc'], 'the guest runner')
            # boot.sh's PREFIX.splats.json beside PREFIX.ktap: kernel
            # WARNINGs, BUGs, oopses... seen on the console during the run.
            if e['ktap']:
                sp = re.sub(r'\.ktap$', '', kp) + '.splats.json'
                try:
                    with open(sp, errors='replace') as f2:
                        e['parsed']['splats'] = json.load(f2)
                except (OSError, ValueError):
                    pass
            entries.append(e)
    return entries


def kernel_exit(e):
    """kselftest exit code of one kernel; 3 when it did not boot."""
    if e['status'] != 'ok':
        return 3
    return exit_code(e['parsed'])


def matrix_exit(entries):
    """3 if a kernel did not boot, else 1 if a test failed, else 4 if
    every test skipped, else 0."""
    codes = [kernel_exit(e) for e in entries]
    if 3 in codes:
        return 3
    if 1 in codes:
        return 1
    return 4 if codes and set(codes) == {4} else 0


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
                      'errors': p.get('errors', []), 'log': p.get('log', []),
                      'counts': program_counts(p), 'tests': p['tests']})
    return {'label': e['label'], 'arch': e['arch'], 'spec': e['spec'],
            'ktap': e['ktap'], 'status': e['status'], 'reason': e['reason'],
            'seconds': e['seconds'], 'guest_exit': e['guest_rc'],
            'exit': kernel_exit(e), 'result': _result(e).lower(),
            'summary': summary_line(e['parsed'], e['label']),
            'counts': counts(e['parsed']), 'bail': e['parsed']['bail'],
            'errors': e['parsed'].get('errors', []),
            'splats': e['parsed'].get('splats', []),
            'programs': progs}


def render_json(entries):
    total_c = {'pass': 0, 'fail': 0, 'skip': 0, 'error': 0}
    for e in entries:
        for k, v in counts(e['parsed']).items():
            total_c[k] += v
    doc = {'kernels': [_kernel_json(e) for e in entries],
           'counts': total_c, 'exit': matrix_exit(entries)}
    return json.dumps(doc, indent=1) + '\n'


def _cases(e):
    """JUnit-like cases of one kernel: (classname, name, verdict, message,
    log lines, reason)."""
    cases = []
    if e['status'] != 'ok':
        cases.append((e['label'], 'boot', 'fail', e['reason'] or 'did not boot',
                      [], ''))
    for s in e['parsed'].get('splats', ()):
        cases.append((e['label'], 'kernel splat during %s' % s['during'],
                      'fail', s['line'], s.get('quote', []), ''))
    for n, x in enumerate(e['parsed'].get('doc_errors', ()), 1):
        cases.append((e['label'], '(ktap %d)' % n, 'fail', x, [], ''))
    for p in e['parsed']['programs']:
        cls = '%s.%s' % (e['label'], p['name'])
        if not p['tests']:
            cases.append((cls, p['name'], p['verdict'],
                          '; '.join(p.get('errors', ())) or p['reason'] or
                          'program failed', p.get('log', []), p['reason']))
            continue
        for t in p['tests']:
            cases.append((cls, t['name'], t['verdict'],
                          t.get('message') or t['reason'] or 'failed',
                          t.get('log', []), t['reason']))
        if p['verdict'] == 'fail' and \
           not any(t['verdict'] == 'fail' for t in p['tests']):
            cases.append((cls, '(program)', 'fail',
                          '; '.join(p.get('errors', ())) or p['reason'] or
                          'program failed', p.get('log', []), ''))
    return cases


def render_junit(entries):
    """JUnit XML: one testsuite per kernel, one testcase per test; a failed
    test's <failure> carries its message and log lines, a skipped one
    <skipped> with its reason, the others their log in <system-out>."""
    from xml.sax.saxutils import quoteattr, escape
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    suites = []
    all_t = all_f = all_s = 0
    for e in entries:
        cases = []
        nf = ns = 0
        for cls, name, verdict, msg, log, reason in _cases(e):
            text = escape('\n'.join(log))
            if verdict == 'fail':
                body = '<failure message=%s>%s</failure>' % (quoteattr(msg), text)
                nf += 1
            elif verdict == 'skip':
                body = '<skipped message=%s/>' % quoteattr(reason or 'skipped')
                if log:
                    body += '<system-out>%s</system-out>' % text
                ns += 1
            else:
                body = '<system-out>%s</system-out>' % text if log else ''
            cases.append('  <testcase classname=%s name=%s>%s</testcase>'
                         % (quoteattr(cls), quoteattr(name), body))
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
    # no XML 1.0 document holds a control byte (NUL, ESC...) or a lone surrogate
    return re.sub('[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]', '?', '\n'.join(out) + '\n')


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
    program (prog: test), so that counts() of the nested report equals the
    guest's own."""
    lines = ['TAP version 13']
    cases = _cases(e)
    lines.append('1..%d' % len(cases))
    for i, (cls, name, verdict, msg, _, reason) in enumerate(cases, 1):
        if cls != e['label'] and name != cls[len(e['label']) + 1:]:
            name = '%s: %s' % (cls[len(e['label']) + 1:], name)
        name = name.replace('#', '_')
        msg = ' '.join(msg.split())
        if verdict == 'fail':
            lines.append('not ok %d %s%s' % (i, name, ' # ' + msg if msg else ''))
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
    if parsed.get('doc_errors'):
        v['(ktap)'] = 'fail'
    if parsed.get('splats'):
        v['(kernel splat)'] = 'fail'
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
UPSTREAM_VERSION = re.compile(r'^(\d+\.\d+(?:\.\d+)?)(?:[+~-].*)?$')


def _version(label):
    """The upstream version a kernel release names, or None (Debian's
    6.1.0-N ABI names do not say which 6.1.y they are)."""
    label = re.sub(r'-(old|new)$', '', label)
    if re.match(r'^\d+\.\d+\.0-\d', label):
        return None
    m = UPSTREAM_VERSION.match(label)
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
    with open(path, 'w', errors='replace') as f:
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
    try:
        if 'json' in outs:
            _write(outs['json'], render_json(entries))
        if 'junit' in outs:
            _write(outs['junit'], render_junit(entries))
        if 'markdown' in outs:
            _write(outs['markdown'], render_markdown(entries))
        if 'ktap' in outs:
            _write(outs['ktap'], render_ktap(entries, collection))
    except OSError as e:
        sys.stderr.write('ktap.py: cannot write the report: %s\n' % e)
        return 2
    if table:
        sys.stdout.write(render_table(entries))
    return matrix_exit(entries)


def compare_main(args):
    """compare OLD.ktap NEW.ktap [OLD_LABEL NEW_LABEL [OLD_SPEC NEW_SPEC]]
    [--rc OLD_RC NEW_RC]: 1 if any regressed, or NEW has a problem OLD has
    not (a KTAP error, its guest runner's exit, a kernel splat)."""
    rcs = [None, None]
    if '--rc' in args:
        i = args.index('--rc')
        rcs, args = [int(x) if x.isdigit() else None for x in args[i + 1:i + 3]], args[:i]
    if len(args) < 2:
        raise SystemExit('usage: ktap.py compare OLD.ktap NEW.ktap [OLD_LABEL NEW_LABEL]')
    old, new = (load(p, r, 'the guest runner') for p, r in zip(args[:2], rcs))
    diff = compare(old, new)
    labels = args[2:4] if len(args) >= 4 else ('old', 'new')
    seen = {x.split(': ', 1)[1] for x in problem_lines(old)}
    worse = [x for x in problem_lines(new, labels[1]) if x.split(': ', 1)[1] not in seen]
    sys.stdout.write(render_compare(diff, *labels) + ''.join(x + '\n' for x in worse))
    with open(args[0], errors='replace') as f:
        old_text = f.read()
    with open(args[1], errors='replace') as f:
        new_text = f.read()
    sys.stdout.write(render_regression(diff, old_text, new_text, *labels,
                                       *(args[4:6] if len(args) >= 6 else ())))
    return 1 if worse or any(d[0] == 'regression' for d in diff) else 0


# ---------------------------------------------------------------------------
# The guest's console (vm/boot.sh).  vm/init writes the runner's progress
# (the top-level lines, each test's RUN and result line) to /dev/kmsg as
# "perf_abi: LINE", so that it comes out in one stream with the kernel's own
# messages, in the order they happened.

CONSOLE_STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?(?:\[\s*[CT]\d+\]\s?)?')
PROGRESS = 'perf_abi: '
# The first line of a kernel splat: WARN(), BUG(), an oops, KASAN, UBSAN,
# KFENCE, lockdep (6.x: "WARNING: possible circular locking dependency
# detected", older: "INFO: possible recursive locking detected"), a soft
# lockup, a panic.
SPLAT = re.compile(
    r'^(?:WARNING:|BUG:|BUG [a-z]|kernel BUG at|Oops\b|Internal error:|'
    r'general protection fault|Unable to handle kernel|UBSAN:|'
    r'watchdog: BUG:|INFO: (?:possible|inconsistent|trying to register)|'
    r'Kernel panic - not syncing|Kernel Offset: |stack segment: )')
SPLAT_END = re.compile(r'^---\[ end (?:trace|Kernel panic)')
SPLAT_QUOTE = 25


def console_scan(text):
    """(progress lines, splats, state) of a guest console.  Only the run
    counts: from vm/init's UP marker to its BEGIN marker.  Each splat is
    {'line', 'during', 'quote'}: 'during' names the test that had started
    and not finished (PROG:TEST), else where between tests it came."""
    progress, splats = [], []
    prog = last = test = None
    up = False
    cur = None
    for raw in text.splitlines():
        line = raw.replace('\r', '')
        if line.startswith('@@PERF_ABI@@ UP'):
            up = True
            continue
        if line.startswith('@@PERF_ABI@@ BEGIN'):
            break
        if not up:
            continue
        msg = CONSOLE_STAMP.sub('', line, count=1)
        if msg.startswith(PROGRESS):
            body = msg[len(PROGRESS):]
            progress.append(body)
            cur = None
            m = re.match(r'^# selftests: \S+: (\S+)', body)
            if m:
                prog, last, test = m.group(1), None, None
                continue
            if re.match(r'^(?:not ok|ok) \d+ selftests: ', body):
                prog = test = None
                continue
            m = re.match(r'^# #\s+RUN\s+(\S+)', body)
            if m:
                test = m.group(1)
                continue
            m = RESULT.match(body[2:]) if body.startswith('# ') else None
            if m and prog:
                last, test = m.group(3).strip(), None
            continue
        if cur is not None:
            if SPLAT_END.match(msg) or len(cur['quote']) >= SPLAT_QUOTE:
                if len(cur['quote']) < SPLAT_QUOTE:
                    cur['quote'].append(msg)
                cur = None
            else:
                cur['quote'].append(msg)
            continue
        if SPLAT.match(msg):
            if test and prog:
                during = '%s:%s' % (prog, test)
            elif prog:
                during = '%s, between tests (after %s)' % (
                    prog, last or 'its start')
            else:
                during = 'no test running'
            cur = {'line': msg.strip(), 'during': during, 'quote': [msg]}
            splats.append(cur)
    if test and prog:
        state = '%s:%s' % (prog, test)
    elif prog:
        state = '%s (after %s)' % (prog, last or 'its start')
    else:
        state = 'no test running'
    return progress, splats, state


def console_main(args):
    """console CONSOLE [--progress F] [--splats F]: the progress the guest
    logged (a runner KTAP up to where it got) to F, its splats as JSON;
    prints 'splat<TAB>DURING<TAB>LINE' per splat and 'running<TAB>STATE'
    (what ran when the console ended)."""
    if not args:
        raise SystemExit('usage: ktap.py console CONSOLE [--progress F] [--splats F]')
    with open(args[0], errors='replace') as f:
        progress, splats, state = console_scan(f.read())
    opts = dict(zip(args[1::2], args[2::2]))
    if opts.get('--progress') and progress:
        _write(opts['--progress'], '\n'.join(progress) + '\n')
    if opts.get('--splats') and splats:
        _write(opts['--splats'], json.dumps(splats, indent=1) + '\n')
    for sp in splats:
        print('splat\t%s\t%s' % (sp['during'], sp['line']))
    print('running\t%s' % state)
    return 0


USAGE = """usage: ktap.py summary [FILE] [LABEL] [--rc N] [--junit F] [--json F]
       ktap.py json [FILE]
       ktap.py total FILE...
       ktap.py report MANIFEST [--table] [--json F] [--junit F] [--markdown F]
                      [--ktap F [--collection NAME]]
       ktap.py compare OLD.ktap NEW.ktap [OLD_LABEL NEW_LABEL [OLD_SPEC NEW_SPEC]]
       ktap.py console CONSOLE [--progress F] [--splats F]
"""


def load(path, rc=None, who='the runner'):
    """A runner log (stdin without PATH) parsed, its runner's exit code RC
    applied, and boot.sh's splats of a guest run beside it."""
    with open(path if path else 0, errors='replace') as f:
        parsed = parse(f.read())
    apply_rc(parsed, rc, who)
    if path and path.endswith('.ktap'):
        try:
            with open(path[:-len('.ktap')] + '.splats.json', errors='replace') as f:
                parsed['splats'] = json.load(f)
        except (OSError, ValueError):
            pass
    return parsed


def summary_main(args):
    """summary [FILE] [LABEL] [--rc N] [--junit F] [--json F]: the KTAP
    errors, the summary line; JUnit and JSON of this one run; the exit
    code of the run (N: the runner's own exit code)."""
    pos, opts = [], {}
    i = 0
    while i < len(args):
        if args[i] in ('--rc', '--junit', '--json') and i + 1 < len(args):
            opts[args[i][2:]] = args[i + 1]
            i += 2
        elif args[i].startswith('--'):
            raise SystemExit('ktap.py summary: bad argument %r' % args[i])
        else:
            pos.append(args[i])
            i += 1
    path = pos[0] if pos and pos[0] != '-' else None
    label = pos[1] if len(pos) > 1 else 'perf_events'
    rc = None
    if 'rc' in opts:
        try:
            rc = int(opts['rc'])
        except ValueError:
            raise SystemExit('ktap.py summary: --rc %r is not a number' % opts['rc'])
    parsed = load(path, rc)
    for line in problem_lines(parsed, label):
        print(line)
    print(summary_line(parsed, label))
    entry = {'label': label, 'arch': '', 'spec': '', 'ktap': path or '-',
             'status': 'ok', 'seconds': None, 'guest_rc': rc, 'reason': '',
             'parsed': parsed}
    if 'junit' in opts:
        _write(opts['junit'], render_junit([entry]))
    if 'json' in opts:
        _write(opts['json'], render_json([entry]))
    return exit_code(parsed)


def main(argv):
    # Paths and specs may hold any byte: never a traceback for one.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(errors='replace')
    cmd = argv[1] if len(argv) >= 2 else ''
    if cmd == 'total':
        return total(argv[2:])
    if cmd == 'report':
        return report_main(argv[2:])
    if cmd == 'compare':
        return compare_main(argv[2:])
    if cmd == 'summary':
        return summary_main(argv[2:])
    if cmd == 'console':
        return console_main(argv[2:])
    if cmd != 'json':
        sys.stderr.write(USAGE)
        return 2
    with open(argv[2] if len(argv) > 2 and argv[2] != '-' else 0, errors='replace') as f:
        parsed = parse(f.read())
    json.dump(parsed, sys.stdout, indent=1)
    print()
    return exit_code(parsed)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
