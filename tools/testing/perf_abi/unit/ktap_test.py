#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""lib/ktap.py on crafted input: the broken KTAP files of unit/ktap/ (each
says what ktap.py must conclude in its "# xcheck:" lines), the runner's and
the guest runner's exit codes, JUnit and JSON contents, and kernel splats
on a crafted guest console.  No boot, no kunit.py (make check-ktap runs
that).  Prints KTAP; exit 1 on failure."""

import glob
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(HERE, '..', 'lib')
sys.path.insert(0, LIB)
import ktap  # noqa: E402
import ktap_xcheck  # noqa: E402

results = []


def check(name, cond, why=''):
    results.append((name, bool(cond), why))


def run(*args, stdin=None):
    p = subprocess.run([sys.executable, os.path.join(LIB, 'ktap.py')] + list(args),
                       input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# 1. Every crafted file: verdict and error as its header says.
for path in sorted(glob.glob(os.path.join(HERE, 'ktap', '*.ktap'))):
    text = open(path).read()
    exp = ktap_xcheck.expectations(text)
    parsed = ktap.parse(text)
    code = ktap.exit_code(parsed)
    verdict = {0: 'pass', 1: 'fail', 4: 'skip'}[code]
    ok = verdict == exp.get('ours', verdict)
    if 'error' in exp:
        ok = ok and any(exp['error'] in e for e in parsed['errors'])
    check('crafted %s: %s%s' % (os.path.basename(path), exp.get('ours'),
                                ' (%s)' % exp['error'] if 'error' in exp else ''),
          ok, '%s, errors %s' % (verdict, parsed['errors']))

# 2. -t naming no test: the inner 1..0 is not "1 passed".
plan0 = open(os.path.join(HERE, 'ktap', 'plan-zero.ktap')).read()
rc, out, _ = run('summary', '-', 'x', stdin=plan0)
check('1..0 program: summary exits 1, no test passed',
      rc == 1 and '0 passed' in out and 'ran no test' in out, out)

good = """TAP version 13
1..1
# selftests: perf_events: rdpmc
# TAP version 13
# 1..2
# #  RUN           rdpmc.a ...
# #            OK  rdpmc.a
# ok 1 rdpmc.a
# #  RUN           rdpmc.b ...
# rdpmc.c:88:b:self-read 7 outside [9, 12]
# rdpmc.c:90:b:Expected r0 (9) <= v (7)
# #          FAIL  rdpmc.b
# not ok 2 rdpmc.b
not ok 1 selftests: perf_events: rdpmc # exit=1
"""
allok = good.replace('# not ok 2 rdpmc.b', '# ok 2 rdpmc.b').replace(
    'not ok 1 selftests: perf_events: rdpmc # exit=1', 'ok 1 selftests: perf_events: rdpmc')

# 3. The runner's own exit code.
rc, out, _ = run('summary', '-', 'x', '--rc', '2', stdin=allok)
check('runner exit 2 with all-ok lines is a failure',
      rc == 1 and 'exited 2' in out, out)
rc, out, _ = run('summary', '-', 'x', '--rc', '0', stdin=allok)
check('runner exit 0 with all-ok lines passes', rc == 0, out)

with tempfile.TemporaryDirectory() as tmp:
    open(os.path.join(tmp, 'k1.ktap'), 'w').write(allok)
    open(os.path.join(tmp, 'k2.ktap'), 'w').write(good)
    open(os.path.join(tmp, 'k3.ktap'), 'w').write(allok)
    json.dump([{'line': 'WARNING: CPU: 0 PID: 9 at kernel/events/core.c:1 f+0x0/0x1',
                'during': 'rdpmc:rdpmc.a', 'quote': ['WARNING: CPU: 0 PID: 9 at x', 'Call Trace:']}],
              open(os.path.join(tmp, 'k3.splats.json'), 'w'))
    man = os.path.join(tmp, 'm.tsv')
    with open(man, 'w') as f:
        f.write('k1\tx86_64\tspec\tk1.ktap\tok\t1.0\t1\t\n')
        f.write('k2\tx86_64\tspec\tk2.ktap\tok\t1.0\t0\t\n')
        f.write('k3\tx86_64\tspec\tk3.ktap\tok\t1.0\t0\t\n')
    entries = ktap.load_manifest(man)
    check('guest runner exit 1 with all-ok lines: the kernel fails',
          ktap.kernel_exit(entries[0]) == 1, entries[0]['parsed']['errors'])
    check('a kernel splat fails a kernel whose tests all passed',
          ktap.kernel_exit(entries[2]) == 1)

    # 4. JUnit: a real XML parser; failures carry the message and the
    # harness's log lines, skips their reason, splats their quote.
    root = ET.fromstring(ktap.render_junit(entries))
    cases = {(c.get('classname'), c.get('name')): c for c in root.iter('testcase')}
    b = cases.get(('k2.rdpmc', 'rdpmc.b'))
    f = b.find('failure') if b is not None else None
    check('JUnit failure message is the first log line that is not a harness mark',
          f is not None and f.get('message') == 'rdpmc.c:88:b:self-read 7 outside [9, 12]',
          f is not None and f.get('message'))
    check('JUnit failure text holds the log lines between RUN and the result',
          f is not None and '#  RUN           rdpmc.b ...' in (f.text or '')
          and 'Expected r0 (9) <= v (7)' in (f.text or ''), f is not None and f.text)
    a = cases.get(('k2.rdpmc', 'rdpmc.a'))
    check('JUnit passed test keeps its log in system-out',
          a is not None and a.find('system-out') is not None and
          'OK  rdpmc.a' in a.find('system-out').text)
    sp = [c for (cls, n), c in cases.items() if cls == 'k3' and n.startswith('kernel splat')]
    check('JUnit: the splat is a failed testcase naming the test, quoting it',
          len(sp) == 1 and 'rdpmc:rdpmc.a' in sp[0].get('name') and
          'Call Trace:' in (sp[0].find('failure').text or ''))
    rc_case = [c for (cls, n), c in cases.items() if cls == 'k1' and n.startswith('(ktap')]
    check('JUnit: the guest runner exit code is a failed testcase',
          len(rc_case) == 1 and 'exited 1' in rc_case[0].find('failure').get('message'))
    doc = json.loads(ktap.render_json(entries))
    t = doc['kernels'][1]['programs'][0]['tests'][1]
    check('JSON: a failed test has its message and log',
          t['message'].startswith('rdpmc.c:88') and any('Expected' in l for l in t['log']), t)
    check('JSON: splats of a kernel',
          doc['kernels'][2]['splats'][0]['during'] == 'rdpmc:rdpmc.a')
    check('JSON: exit codes 1 1 1', [k['exit'] for k in doc['kernels']] == [1, 1, 1],
          [k['exit'] for k in doc['kernels']])
    # The nested report KTAP counts the same as the kernels' own.
    rep = ktap.parse(ktap.render_ktap(entries))
    check('report KTAP: one failed kernel line per kernel',
          [p['verdict'] for p in rep['programs']] == ['fail'] * 3 and not rep['errors'],
          rep['errors'])

    # 5. Skips in JUnit carry the KTAP's reason.
    wf = os.path.join(HERE, 'ktap', 'well-formed.ktap')
    open(os.path.join(tmp, 'w.ktap'), 'w').write(open(wf).read())
    rc, out, err = run('summary', os.path.join(tmp, 'w.ktap'), 'w',
                       '--junit', os.path.join(tmp, 'w.xml'),
                       '--json', os.path.join(tmp, 'w.json'))
    root = ET.parse(os.path.join(tmp, 'w.xml')).getroot()
    sk = {c.get('name'): c.find('skipped').get('message')
          for c in root.iter('testcase') if c.find('skipped') is not None}
    check('JUnit skips: <skipped> with the reason of the SKIP line',
          sk.get('page.x.c') == 'needs a hardware PMU' and
          sk.get('page.x.e') == 'needs CAP_PERFMON', sk)

# 6. Kernel splats on a crafted console: named after the running test,
# quoted; the progress before a fatal one kept as KTAP.
console = """[    0.000000] Linux version 6.12.0
[    0.500000] WARNING: CPU: 0 PID: 0 at arch/x86/kernel/boot.c:1 early+0x0/0x1
@@PERF_ABI@@ UP 6.12.0 x86_64
[    2.000000] perf_abi: TAP version 13
[    2.000001] perf_abi: 1..2
[    2.000002] perf_abi: # selftests: perf_events: mmap_page
[    2.000003] perf_abi: # TAP version 13
[    2.000004] perf_abi: # 1..3
[    2.000005] perf_abi: # #  RUN           global.a ...
[    2.000006] perf_abi: # ok 1 global.a
[    2.000007] perf_abi: # #  RUN           global.b ...
[    2.100000] ------------[ cut here ]------------
[    2.100001] WARNING: CPU: 1 PID: 77 at kernel/events/core.c:6000 perf_mmap+0x1/0x2
[    2.100002] Modules linked in:
[    2.100003] CPU: 1 UID: 0 PID: 77 Comm: mmap_page Not tainted 6.12.0 #1
[    2.100004] ---[ end trace 0000000000000000 ]---
[    2.200000] perf_abi: # ok 2 global.b
[    2.250000] ======================================================
[    2.250001] WARNING: possible circular locking dependency detected
[    2.250002] 6.12.0 #1 Not tainted
[    2.300000] perf_abi: # #  RUN           global.c ...
[    2.350000] UBSAN: shift-out-of-bounds in kernel/events/core.c:77:9
[    2.400000] perf_abi: # ok 3 global.c
[    2.400002] perf_abi: ok 1 selftests: perf_events: mmap_page
[    2.500000] perf_abi: # selftests: perf_events: rdpmc
[    2.500001] perf_abi: # TAP version 13
[    2.500002] perf_abi: # 1..1
[    2.500003] perf_abi: # #  RUN           rdpmc.x ...
[    2.600000] BUG: kernel NULL pointer dereference, address: 0000000000000000
[    2.600001] Oops: 0000 [#1] PREEMPT SMP NOPTI
[    2.600002] Kernel panic - not syncing: Fatal exception
"""
progress, splats, state = ktap.console_scan(console)
check('console: the WARNING before the run is not counted; four during it',
      len(splats) == 4, [s['line'] for s in splats])
check('console: WARN() named after the running test and quoted',
      splats and splats[0]['during'] == 'mmap_page:global.b' and
      any('Comm: mmap_page' in l for l in splats[0]['quote']) and
      splats[0]['quote'][-1].startswith('---[ end trace'), splats[:1])
check('console: lockdep splat between tests says so',
      len(splats) > 1 and splats[1]['line'].startswith('WARNING: possible circular') and
      splats[1]['during'] == 'mmap_page, between tests (after global.b)',
      splats[1:2])
check('console: UBSAN named after its test',
      len(splats) > 2 and splats[2]['during'] == 'mmap_page:global.c', splats[2:3])
check('console: the oops named after rdpmc:rdpmc.x, the panic in its quote',
      len(splats) > 3 and splats[3]['during'] == 'rdpmc:rdpmc.x' and
      any('Kernel panic' in l for l in splats[3]['quote']), splats[3:])
check('console: running at the end', state == 'rdpmc:rdpmc.x', state)
part = ktap.parse('\n'.join(progress) + '\nBail out! k: kernel broke\n')
c = ktap.counts(part)
check('console: the results before the oops are kept (3 passed)',
      c['pass'] == 3 and ktap.exit_code(part) == 1 and
      [p['name'] for p in part['programs']] == ['mmap_page', 'rdpmc'], (c, part['errors']))
with tempfile.TemporaryDirectory() as tmp:
    cpath = os.path.join(tmp, 'g.console')
    open(cpath, 'w').write(console)
    rc, out, _ = run('console', cpath, '--progress', os.path.join(tmp, 'g.progress'),
                     '--splats', os.path.join(tmp, 'g.splats.json'))
    check('ktap.py console: one line per splat, the state, both files',
          rc == 0 and out.count('splat\t') == 4 and 'running\trdpmc:rdpmc.x' in out and
          os.path.exists(os.path.join(tmp, 'g.progress')) and
          len(json.load(open(os.path.join(tmp, 'g.splats.json')))) == 4, out)

# 7. A program killed at its kselftest timeout: the test it was running is
# a failed test of its own, TIMEOUT, in the summary and the JUnit.
text = open(os.path.join(HERE, 'ktap', 'timeout.ktap')).read()
parsed = ktap.parse(text)
tests = {t['name']: t for p in parsed['programs'] for t in p['tests']}
hung = tests.get('global.b', {})
check('timeout: the running test global.b is a failed test, TIMEOUT',
      hung.get('verdict') == 'fail' and hung.get('directive') == 'TIMEOUT' and
      'timed out' in hung.get('message', ''), repr(hung))
check('timeout: global.a still passed', tests.get('global.a', {}).get('verdict') == 'pass')
lines = ktap.problem_lines(parsed, 'k')
check('timeout: the summary names mmap_page:global.b as TIMEOUT',
      any(l.startswith('k: TIMEOUT mmap_page:global.b: timed out') for l in lines),
      repr(lines))
junit = ET.fromstring(ktap.render_junit([{
    'label': 'k', 'arch': '', 'spec': '', 'ktap': '-', 'status': 'ok',
    'seconds': None, 'guest_rc': None, 'reason': '', 'parsed': parsed}]))
fails = {c.get('name'): c.find('failure') for c in junit.iter('testcase')}
check('timeout: JUnit fails global.b with the timeout message',
      fails.get('global.b') is not None and
      'kselftest timeout (120 seconds)' in fails['global.b'].get('message', ''),
      repr({k: v is not None for k, v in fails.items()}))

print('TAP version 13')
print('1..%d' % len(results))
for n, (name, ok, why) in enumerate(results, 1):
    if not ok:
        for line in str(why).splitlines()[:10]:
            print('# %s' % line[:300])
    print('%s %d %s' % ('ok' if ok else 'not ok', n, name))
sys.exit(0 if all(ok for _, ok, _ in results) else 1)
