#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""LAVA jobs of the perf user page ABI selftests, and reading their results.

    lava.py job --arch A --label L --kernel URL --ramdisk URL
                [--program P] [--test T] [--append ARGS] [--smp N]
                [--memory MIB] TESTDEF
        print the job (YAML) of one kernel: device_type qemu, kernel and
        ramdisk deployed to tmpfs (the ramdisk a cpio.newc the dispatcher
        unpacks its overlay into), boot method qemu, and the test
        definition TESTDEF inline, its params PROGRAM and TEST set.
        Standard library only: run_tests.sh --lava-job writes jobs on any
        machine.

    lava.py device TYPES_DIR DEVICE_JINJA2 JOB
        render the device dictionary DEVICE_JINJA2 (which extends a
        device-type template of TYPES_DIR, lava-server's device-types)
        with the job's context, as lava-server does before it hands a job
        to a worker (jinja2's sandbox, trim_blocks, no autoescape).
        Needs python3-jinja2 and python3-yaml.

    lava.py validate JOB
        check JOB against lava_common's job schema, as lava-server does
        on submission (needs lava-common).

    lava.py compare LOG KTAP LABEL
        compare the results in LOG (lava-run's log: one YAML mapping a
        line, the results at lvl "results") with the KTAP of a direct run
        of the same kernel: the same test names and the same verdicts.
        Prints KTAP (one line per name) and exits 1 on any difference, a
        missing name, or a job that did not finish.  Needs python3-yaml.
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'lib'))

# What LAVA takes in a test case name (its result URLs allow [-_a-zA-Z0-9.+],
# its signal parser splits on "=" and spaces); the test definition maps
# every other character to "_" the same way.
NAME_BAD = re.compile(r'[^A-Za-z0-9._-]')

# qemu the way run_tests.sh boots it (vm/boot.sh), so that a LAVA job and a
# direct run of the same kernel give the same verdicts; the device-type
# template adds -cpu from the context (arm64) and -m from "memory".
ARCH = {
    'x86_64': {
        'console': 'ttyS0,115200',
        # one TCG thread: multi-threaded TCG races the kernel's live code
        # patching (see vm/boot.sh)
        'extra': ['-accel tcg,thread=single', '-cpu max'],
        'context': {},
    },
    'arm64': {
        'console': 'ttyAMA0,115200',
        # -icount: a PMU that counts instructions too (see vm/boot.sh)
        'extra': ['-icount shift=0,sleep=off'],
        'context': {'cpu': 'max'},
    },
}


def sanitise(name):
    return NAME_BAD.sub('_', name) or 'unnamed'


def q(s):
    """A YAML scalar: JSON's double-quoted strings are YAML's too."""
    return json.dumps(s)


def job_text(arch, label, kernel, ramdisk, testdef, program='', test='',
             append='', smp=2, memory=512):
    a = ARCH[arch]
    context = {'arch': arch}
    context.update(a['context'])
    context['memory'] = memory
    context['extra_options'] = ['-smp %d' % smp] + a['extra']
    # The kernel's own log level: LAVA's boot action waits for the banner
    # ("Linux version"), a KERN_NOTICE line; the ramdisk's init quietens
    # the console (dmesg -n 1) before the shell starts.
    cmdline = ('console=%s %s' % (a['console'], append)).strip()
    what = program + (':' + test if test else '') if program else 'all tests'
    out = []
    w = out.append
    w('# LAVA job: the perf user page ABI selftests (%s) on %s, %s.'
      % (what, label, arch))
    w('# Written by run_tests.sh --lava-job; to submit it to a lab, put the')
    w('# kernel and the ramdisk where its workers can fetch them, change the')
    w('# two url: lines, and run: lavacli -i LAB jobs submit THIS_FILE')
    w('device_type: qemu')
    w('job_name: %s' % q('perf_events user page ABI: %s on %s (%s)'
                         % (what, label, arch)))
    w('timeouts:')
    w('  job: {minutes: 30}')
    w('  action: {minutes: 10}')
    w('  connection: {minutes: 2}')
    w('priority: medium')
    w('visibility: public')
    w('context:')
    for k, v in context.items():
        w('  %s: %s' % (k, json.dumps(v)))
    w('metadata:')
    w('  kernel: %s' % q(label))
    w('  arch: %s' % q(arch))
    w('actions:')
    w('- deploy:')
    w('    timeout: {minutes: 5}')
    w('    to: tmpfs')
    w('    images:')
    w('      kernel:')
    w('        image_arg: %s' % q('-kernel {kernel} -append "%s"' % cmdline))
    w('        url: %s' % q(kernel))
    w('      ramdisk:')
    w('        image_arg: %s' % q('-initrd {ramdisk}'))
    w('        url: %s' % q(ramdisk))
    w('        format: cpio.newc')
    w('        overlays:')
    w('          lava: true')
    w('- boot:')
    w('    timeout: {minutes: 5}')
    w('    method: qemu')
    w('    media: tmpfs')
    w('    prompts:')
    w('    - "perf-abi:"')
    w('- test:')
    w('    timeout: {minutes: 20}')
    w('    definitions:')
    w('    - from: inline')
    w('      name: perf_events')
    w('      path: inline/perf_events.yaml')
    w('      repository:')
    # An inline definition takes no job parameters: this job's values go
    # into its params.
    params = {'PROGRAM': program, 'TEST': test}
    with open(testdef) as f:
        for line in f.read().splitlines():
            m = re.match(r'^  (PROGRAM|TEST): ', line)
            if m:
                line = '  %s: %s' % (m.group(1), q(params.pop(m.group(1))))
            w(('        ' + line) if line.strip() else '')
    if params:
        raise SystemExit('lava.py: %s has no params %s'
                         % (testdef, ', '.join(sorted(params))))
    return '\n'.join(out) + '\n'


def job_main(args):
    import argparse
    p = argparse.ArgumentParser(prog='lava.py job')
    p.add_argument('--arch', required=True, choices=sorted(ARCH))
    p.add_argument('--label', required=True)
    p.add_argument('--kernel', required=True)
    p.add_argument('--ramdisk', required=True)
    p.add_argument('--program', default='')
    p.add_argument('--test', default='')
    p.add_argument('--append', default='')
    p.add_argument('--smp', type=int, default=2)
    p.add_argument('--memory', type=int, default=512)
    p.add_argument('testdef')
    o = p.parse_args(args)
    sys.stdout.write(job_text(o.arch, o.label, o.kernel, o.ramdisk,
                              o.testdef, o.program, o.test, o.append.strip(),
                              o.smp, o.memory))
    return 0


def device_main(args):
    """As lava_scheduler_app's Device.load_configuration(job_ctx)."""
    import yaml
    from jinja2 import FileSystemLoader
    from jinja2.sandbox import SandboxedEnvironment
    if len(args) != 3:
        raise SystemExit('usage: lava.py device TYPES_DIR DEVICE_JINJA2 JOB')
    types, device, job = args
    with open(job) as f:
        context = (yaml.safe_load(f) or {}).get('context') or {}
    env = SandboxedEnvironment(
        loader=FileSystemLoader([os.path.dirname(os.path.abspath(device)),
                                 types]),
        autoescape=False, trim_blocks=True, cache_size=-1)
    text = env.get_template(os.path.basename(device)).render(**context)
    yaml.safe_load(text)
    sys.stdout.write(text)
    return 0


def validate_main(args):
    import yaml
    from lava_common.schemas import validate
    with open(args[0]) as f:
        data = yaml.safe_load(f)
    validate(data, strict=True)
    return 0


def read_log(path):
    """The results of a lava-run log: [(definition, set, case, result)],
    and whether the job finished (the 'job' case of definition lava)."""
    import yaml
    results = []
    finished = None
    with open(path, errors='replace') as f:
        for line in f:
            if '"results"' not in line:
                continue
            try:
                d = yaml.safe_load(line)
            except yaml.YAMLError:
                continue
            if not isinstance(d, dict) or d.get('lvl') != 'results':
                continue
            m = d.get('msg') or {}
            if m.get('definition') == 'lava':
                if m.get('case') == 'job':
                    finished = m.get('result')
                continue
            results.append((m.get('definition'), m.get('set'),
                            str(m.get('case')), m.get('result')))
    return results, finished


def expected(parsed):
    """{(set, case): verdict} that the test definition reports for a
    parsed KTAP: each TEST in a set named after its program, each program
    as a case of its own."""
    exp = {}
    for p in parsed['programs']:
        prog = sanitise(p['name'])
        for t in p['tests']:
            key = (prog, sanitise(t['name']))
            if key in exp:
                raise ValueError('two tests are named %s in LAVA' % '.'.join(key))
            exp[key] = t['verdict']
        exp[(None, prog)] = p['verdict']
    return exp


def compare_main(args):
    import ktap
    if len(args) != 3:
        raise SystemExit('usage: lava.py compare LOG KTAP LABEL')
    log, kt, label = args
    with open(kt) as f:
        parsed = ktap.parse(f.read())
    exp = expected(parsed)
    results, finished = read_log(log)
    got = {}
    for definition, tset, case, result in results:
        if not definition or not definition.endswith('_perf_events'):
            continue
        got[(tset, case)] = result
    lines = []
    bad = 0
    keys = list(exp) + [k for k in got if k not in exp]
    for k in keys:
        name = k[1] if k[0] is None else '%s.%s' % k
        e, g = exp.get(k), got.get(k)
        if e == g:
            lines.append('ok %d %s # LAVA %s, direct %s' % (len(lines) + 1, name, g, e))
        else:
            bad += 1
            lines.append('not ok %d %s # LAVA %s, direct %s'
                         % (len(lines) + 1, name, g or 'missing', e or 'missing'))
    if finished != 'pass':
        bad += 1
        lines.append('not ok %d job # lava-run: job %s'
                     % (len(lines) + 1, finished or 'did not finish'))
    n_same = len(keys) - sum(1 for k in keys if exp.get(k) != got.get(k))
    print('TAP version 13')
    print('1..%d' % len(lines))
    print('# %s: %d LAVA results, %d in the direct run\'s KTAP, %d the same'
          % (label, len(got), len(exp), n_same))
    for line in lines:
        print(line)
    return 1 if bad else 0


def main(argv):
    cmds = {'job': job_main, 'device': device_main,
            'validate': validate_main, 'compare': compare_main}
    if len(argv) < 2 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    return cmds[argv[1]](argv[2:])


if __name__ == '__main__':
    sys.exit(main(sys.argv))
