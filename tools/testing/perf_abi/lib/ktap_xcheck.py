#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Cross-check lib/ktap.py against the kernel's own KTAP parser and our
JUnit against the KTAP it came from.  Prints KTAP; exit 1 on a mismatch.

  ktap_xcheck.py kunit KUNIT_DIR FILE...
  ktap_xcheck.py junit KUNIT_DIR JUNIT KTAP [SUITE]
  ktap_xcheck.py junit-matrix KUNIT_DIR JUNIT DIR

kunit: every FILE (kselftest runner output) is read by ktap.py and by
KUNIT_DIR/kunit.py parse (tools/testing/kunit of a kernel tree) twice:

  raw     the file as it is.  kunit.py takes the "# " lines of the runner
          as diagnostics, so it sees the top level only: one test per
          program, as the runner's line says.  Compared: the names and the
          ok / not ok / SKIP of every top-level line.
  nested  the file with the runner's "# " nesting turned into KTAP's
          indentation, a "# Subtest: NAME" header (from the runner's
          "# selftests: C: P" line) after each nested version line, which
          is how kunit.py finds where a nested test ends when results are
          missing.  Compared: the totals (passed, skipped; failed too when
          the KTAP is well formed), every test's name and status, and the
          verdict (a failure, a crash or a parse error in kunit.py; exit 1
          in ktap.py).

Several documents in one file (the runner prints one per collection) are
given to kunit.py one at a time: it reads one document and ignores the rest.

A crafted file starts with "# xcheck:" lines before its version line (both
parsers skip lines before it):  ours=fail|pass|skip  error=TEXT (a
ktap.py error must contain TEXT, '_' for a space)  kunit=differs (the two
verdicts must differ: an inherent difference, explained by why=...)
totals=differs (the totals may differ, why=... says why).
Inherent differences between kunit.py and the KTAP spec that ktap.py
follows: kunit.py ignores "Bail out!"; it counts a parent's "not ok" only
through its subtests, so a program that says "not ok" while all its tests
passed is a pass to kunit.py; it reads only as many results as a plan
announces (extra results are not seen, at the top level not even as an
error); it takes "1..0" as "no tests run" unless the parent says SKIP,
as ktap.py does.
Why ktap.py stays the parser and kunit.py the cross-check (measured on
6.12 and 7.3): 6.12's parse_test() never returns on a plan after the
results, as lint.sh writes; a "reboot: System halted" line ends the
input (KTAP_END); of a result's directive only SKIP is kept, so a
TIMEOUT or an exit code is lost; and the API differs between the two.

junit: the JUnit file (run_tests.sh --junit) read with xml.etree against
the KTAP it came from: its testsuite SUITE (default: the first) has one
testcase per test kunit.py finds in the KTAP (nested), with the same
names, <failure> for each failed test and <skipped> for each skip, whose
message is the reason of the KTAP's SKIP line; the counts in the
attributes agree with the testcases.

junit-matrix: the JUnit of a matrix run (DIR/junit.xml of run_tests.sh
--matrix --output DIR) against each kernel's KTAP in DIR: one testsuite
per LABEL.ktap, named LABEL, each checked as junit does, and the totals
of <testsuites> the sums of its testsuites.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402

SUMMARY = re.compile(r'Testing complete\. Ran (\d+) tests?(?::\s*(.*))?$')
VERSION = re.compile(r'^K?TAP version \d+\s*$')


def split_docs(text):
    """Top-level documents of a runner log (lines before the first version
    line go with the first)."""
    docs, cur = [], []
    for line in text.splitlines():
        if VERSION.match(line) and any(VERSION.match(l) for l in cur):
            docs.append(cur)
            cur = []
        cur.append(line)
    docs.append(cur)
    return ['\n'.join(d) + '\n' for d in docs]


def nest(text):
    """The runner's "# " nesting as KTAP indentation, with # Subtest:."""
    out, header = [], None
    for line in text.splitlines():
        if line.startswith('# ') or line == '#':
            inner = line[2:]
            if inner.startswith('selftests: '):
                header = inner.strip()
            out.append('  ' + inner)
            if VERSION.match(inner) and header:
                out.append('  # Subtest: ' + header)
                header = None
        else:
            out.append(line)
    return '\n'.join(out) + '\n'


def kunit(kdir, text):
    """kunit.py parse of TEXT: (counts dict, json tree or None, output)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'in.ktap')
        js = os.path.join(tmp, 'out.json')
        with open(src, 'w') as f:
            f.write(text)
        p = subprocess.run([sys.executable, os.path.join(kdir, 'kunit.py'),
                            'parse', '--json=' + js, src],
                           capture_output=True, text=True, timeout=120)
        tree = None
        if os.path.exists(js):
            with open(js) as f:
                tree = json.load(f)
    c = {'total': None, 'passed': 0, 'failed': 0, 'crashed': 0,
         'skipped': 0, 'errors': 0}
    for line in p.stdout.splitlines():
        m = SUMMARY.search(line)
        if m:
            c['total'] = int(m.group(1))
            for part in (m.group(2) or '').split(','):
                k, _, v = part.strip().partition(':')
                if k.strip() in c:
                    c[k.strip()] = int(v)
    c['rc'] = p.returncode
    if c['total'] is None and tree is None:
        raise RuntimeError('kunit.py parse gave no result (exit %d): %s'
                           % (p.returncode, (p.stdout + p.stderr)[-300:]))
    return c, tree, p.stdout + p.stderr


def kunit_bad(c):
    return c['total'] is None or c['total'] == 0 or \
        c['failed'] + c['crashed'] + c['errors'] > 0


def leaves(tree):
    """[(name, PASS|FAIL|SKIP|ERROR)] of kunit.py's JSON, depth first."""
    out = []
    if tree is None:
        return out
    for g in tree.get('sub_groups', ()):
        out += leaves(g)
    for t in tree.get('test_cases', ()):
        out.append((t['name'], t['status']))
    return out


def our_leaves(parsed):
    out = []
    for p in parsed['programs']:
        if p['tests']:
            for t in p['tests']:
                out.append((t['name'], t['verdict']))
        else:
            out.append((p['title'], p['verdict']))
    return out


def status(v):
    return {'pass': 'PASS', 'skip': 'SKIP', 'fail': 'FAIL'}[v]


def expectations(text):
    exp = {}
    for line in text.splitlines():
        if VERSION.match(line):
            break
        if line.startswith('# xcheck:'):
            for w in line[len('# xcheck:'):].split():
                k, _, v = w.partition('=')
                exp[k] = v.replace('_', ' ')
    return exp


def check_file(kdir, path):
    """[problem], [diagnostic] for one file."""
    with open(path, errors='replace') as f:
        text = f.read()
    exp = expectations(text)
    parsed = ktap.parse(text)
    code = ktap.exit_code(parsed)
    ours = {0: 'pass', 1: 'fail', 4: 'skip'}[code]
    c_ours = ktap.counts(parsed)
    bad, diag = [], []
    diag.append('ktap.py: %s; exit %d' % (ktap.summary_line(parsed, 'ours'), code))
    for e in parsed['errors']:
        diag.append('ktap.py error: %s' % e)
    if 'ours' in exp and exp['ours'] != ours:
        bad.append('ktap.py says %s, the file expects %s' % (ours, exp['ours']))
    if 'error' in exp and not any(exp['error'] in e for e in parsed['errors']):
        bad.append('no ktap.py error contains "%s"' % exp['error'])

    k_bad = False
    tot = {'passed': 0, 'skipped': 0, 'failed': 0, 'crashed': 0, 'errors': 0}
    k_leaves = []
    raw_lines = []
    for n, doc in enumerate(split_docs(text), 1):
        raw, rtree, _ = kunit(kdir, doc)
        nc, ntree, out = kunit(kdir, nest(doc))
        diag.append('kunit.py document %d: raw %s; nested %s' % (
            n, {k: raw[k] for k in raw if raw[k]},
            {k: nc[k] for k in nc if nc[k]}))
        k_bad = k_bad or kunit_bad(nc) or raw['errors'] > 0
        for k in tot:
            tot[k] += nc[k]
        k_leaves += leaves(ntree)
        raw_lines += leaves(rtree)
    if ours == 'skip' and not k_bad and tot['passed'] == 0:
        pass
    agree = (ours == 'fail') == k_bad
    if exp.get('kunit') == 'differs':
        if agree:
            bad.append('kunit.py agrees (%s); the file documents a difference: %s'
                       % ('fail' if k_bad else 'pass', exp.get('why', '?')))
        else:
            diag.append('inherent difference: %s' % exp.get('why', '?'))
        return bad, diag
    if not agree:
        bad.append('verdicts differ: ktap.py %s, kunit.py %s'
                   % (ours, 'fail' if k_bad else 'pass'))
    if exp.get('totals') == 'differs':
        diag.append('totals differ by nature: %s' % exp.get('why', '?'))
    elif tot['passed'] != c_ours['pass'] or tot['skipped'] != c_ours['skip']:
        bad.append('totals differ: ktap.py %d passed %d skipped, kunit.py %d passed %d skipped'
                   % (c_ours['pass'], c_ours['skip'], tot['passed'], tot['skipped']))
    if not parsed['errors']:
        # Well formed: every test and every top-level line the same.
        if tot['failed'] != c_ours['fail']:
            bad.append('failures differ: ktap.py %d, kunit.py %d'
                       % (c_ours['fail'], tot['failed']))
        mine = [(n, status(v)) for n, v in our_leaves(parsed)]
        theirs = [(n, s if s != 'ERROR' else 'FAIL') for n, s in k_leaves]
        if mine != theirs:
            diff = [(a, b) for a, b in zip(mine, theirs) if a != b][:3]
            bad.append('tests differ (%d vs %d): %s' % (len(mine), len(theirs), diff))
        top = [(p['title'], status(p['line_verdict'])) for p in parsed['programs']]
        if top != raw_lines:
            bad.append('top-level lines differ: %s vs %s' % (top[:3], raw_lines[:3]))
    return bad, diag


def kunit_main(kdir, files):
    print('TAP version 13')
    print('1..%d' % len(files))
    failed = 0
    for n, path in enumerate(files, 1):
        try:
            bad, diag = check_file(kdir, path)
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            bad, diag = ['%s' % e], []
        for d in diag + bad:
            print('# %s' % d)
        name = 'kunit.py parse agrees: %s' % os.path.basename(path)
        if bad:
            failed += 1
            print('not ok %d %s' % (n, name))
        else:
            print('ok %d %s' % (n, name))
    return 1 if failed else 0


def junit_main(kdir, junit, ktap_path, suite=None):
    """[problem] of a JUnit file against its KTAP."""
    bad = []
    root = ET.parse(junit).getroot()
    suites = root.findall('testsuite') if root.tag == 'testsuites' else [root]
    if suite:
        suites = [s for s in suites if s.get('name') == suite]
    if not suites:
        return ['no testsuite %s in %s' % (suite or '', junit)]
    s = suites[0]
    cases = s.findall('testcase')
    with open(ktap_path, errors='replace') as f:
        text = f.read()
    want = []
    for doc in split_docs(text):
        _, tree, _ = kunit(kdir, nest(doc))
        want += leaves(tree)
    # SKIP reasons as the KTAP's lines give them (name -> reason).
    reasons = {}
    for line in text.splitlines():
        m = re.match(r'^(?:# )?(?:not )?ok \d+ (.*?) # SKIP\s*(.*)$', line)
        if m:
            reasons[m.group(1).strip()] = m.group(2).strip()
    got = []
    for c in cases:
        if c.find('failure') is not None:
            st = 'FAIL'
        elif c.find('skipped') is not None:
            st = 'SKIP'
            msg = c.find('skipped').get('message', '')
            r = reasons.get(c.get('name'))
            if r is not None and r and msg != r:
                bad.append('%s: <skipped message="%s">, the KTAP says "%s"'
                           % (c.get('name'), msg, r))
        else:
            st = 'PASS'
        got.append((c.get('name'), st))
    want = [(n, st if st != 'ERROR' else 'FAIL') for n, st in want]
    if got != want:
        diff = [(a, b) for a, b in zip(got, want) if a != b][:3]
        bad.append('testcases differ from the KTAP (%d vs %d): %s'
                   % (len(got), len(want), diff or 'one list is longer'))
    nf = sum(1 for _, st in got if st == 'FAIL')
    ns = sum(1 for _, st in got if st == 'SKIP')
    if (s.get('tests'), s.get('failures'), s.get('skipped')) != \
            (str(len(got)), str(nf), str(ns)):
        bad.append('testsuite counts %s/%s/%s, testcases %d/%d/%d' % (
            s.get('tests'), s.get('failures'), s.get('skipped'), len(got), nf, ns))
    print('# %s: %d testcases (%d failed, %d skipped) against %s'
          % (os.path.basename(junit), len(got), nf, ns, os.path.basename(ktap_path)))
    return bad


def junit_matrix_main(kdir, junit, ktap_dir):
    """[problem] of a matrix's JUnit (run_tests.sh --matrix --output DIR:
    DIR/junit.xml) against the KTAP of each of its kernels (DIR/LABEL.ktap):
    a testsuite per kernel and no other, each as junit_main checks it, and
    the <testsuites> totals the sums of its testsuites."""
    bad = []
    labels = sorted(f[:-len('.ktap')] for f in os.listdir(ktap_dir)
                    if f.endswith('.ktap') and f != 'report.ktap')
    root = ET.parse(junit).getroot()
    if root.tag != 'testsuites':
        return ['%s: the root is <%s>, not <testsuites>' % (junit, root.tag)]
    suites = root.findall('testsuite')
    names = sorted(s.get('name') for s in suites)
    if names != labels:
        bad.append('testsuites %s, kernels (KTAP files) %s' % (names, labels))
    if not labels:
        bad.append('no kernel KTAP in %s' % ktap_dir)
    for label in labels:
        if label in names:
            bad += ['%s: %s' % (label, b) for b in junit_main(
                kdir, junit, os.path.join(ktap_dir, label + '.ktap'), label)]
    for attr in ('tests', 'failures', 'skipped'):
        total = sum(int(s.get(attr) or 0) for s in suites)
        if root.get(attr) != str(total):
            bad.append('<testsuites %s="%s">, its testsuites sum to %d'
                       % (attr, root.get(attr), total))
    return bad


def main(argv):
    if len(argv) == 5 and argv[1] == 'junit-matrix':
        bad = junit_matrix_main(argv[2], argv[3], argv[4])
        for b in bad:
            print('# %s' % b)
        return 1 if bad else 0
    if len(argv) >= 4 and argv[1] == 'kunit':
        return kunit_main(argv[2], argv[3:])
    if len(argv) in (5, 6) and argv[1] == 'junit':
        bad = junit_main(argv[2], argv[3], argv[4], argv[5] if len(argv) > 5 else None)
        for b in bad:
            print('# %s' % b)
        return 1 if bad else 0
    sys.stderr.write(__doc__.split('\n\n')[1] + '\n')
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
