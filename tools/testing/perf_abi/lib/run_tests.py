#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""run_tests.sh's program (issue 28): run the perf user-page ABI selftests
through the real kselftest runner on the running kernel, or on kernel
images booted under qemu (vm/boot.sh, kernels/image.sh, vm/initramfs.sh),
and report KTAP, summary.json, junit.xml and an exit code.  What it keeps
and refuses: RUNNER.md.  Paths are carried as the bytes they are
(surrogateescape) and never parsed by a shell.  This file is the command
line (options, side files, main); rt_base.py the common ground, rt_out.py
the run's directory and reports, rt_suite.py the tests of an install tree
and the running kernel, rt_qemu.py kernels under qemu; each has a
*_test.py beside it."""
USAGE = '''\
Usage: ./run_tests.sh [OPTIONS]
       ./run_tests.sh --kernel SPEC [--arch A] [GUEST OPTIONS] [OPTIONS]
       ./run_tests.sh --matrix [FILE] [GUEST OPTIONS] [OPTIONS]
       ./run_tests.sh --compare OLD_SPEC NEW_SPEC [GUEST OPTIONS] [OPTIONS]
       ./run_tests.sh --list-kernels [PATTERN]
Run the perf_events user-page ABI selftests on the running kernel, or boot
kernels under qemu (software emulation) and run them there.

  -t, --test PROG[:TEST]  run one test program (mmap_page, rdpmc), or only
                      the TESTs of PROG that TEST names: a name as the KTAP
                      prints it (mmap_page:sideband.data_head_counts_records),
                      a TEST without fixture (rdpmc:time_zero_converts_sample_time)
                      or a shell glob (rdpmc:'agree.*'); may be repeated.
                      A name that selects no test is an error.  TESTs need
                      a 6.12 or newer kselftest harness (its -l list).
      --list          print the tests that would run (PROG:TEST) and exit
      --repeat N      run the suite N times and list every test whose
                      verdict changed (exit 1 if one did)
  -l, --log FILE      also write the KTAP output to FILE (one kernel)
  -o, --output DIR    write the reports to DIR if it is new or empty, else
                      to a new DIR/<label>-<UTC time>[-N]/ with DIR/latest
                      pointed at it when the run completes (the default
                      build/logs/{host,kernel,matrix,compare} is always
                      the latter): <label>.ktap (host.ktap on the running
                      kernel), <label>.console, summary.json, junit.xml,
                      table.md, report.ktap
      --ktap FILE     write the KTAP to FILE (a matrix: report.ktap, one
                      result per kernel with its tests nested)
      --junit FILE    write JUnit XML to FILE (each failed test's message
                      and log lines, skips with their reason)
  -h, --help          show this help

Kernels (SPEC: an image file -- bzImage, vmlinuz, arm64 or riscv64 Image,
ARM zImage, s390x image, ppc64le ELF vmlinux, gzip'd or not;
debian:VERSION-FLAVOUR, e.g. debian:5.10.0-43-cloud-amd64,
debian:7.3.4+deb13-arm64, debian:6.1.0-50-686-pae, fetched with apt-get
download from bullseye, bookworm, trixie, trixie-backports or sid and
cached in $PERF_ABI_CACHE; debian:LINE-FLAVOUR, e.g.
debian:6.12-cloud-amd64, the newest of that line; tree:PATH, a kernel
source tree built out of tree for --arch from tinyconfig + config +
kernels/tiny-ARCH.config; compat:SPEC, an x86_64 or arm64 kernel running
the 32-bit programs, i386 or armhf, as compat tasks.  Reports name a kernel
by the release string in its image, +i386 or +armhf after it for compat:):
  -k, --kernel SPEC   boot SPEC and run the suite in it
  -m, --matrix [FILE] run every SPEC listed in FILE (one a line, # comments;
                      default tools/testing/perf_abi/kernels/matrix.list),
                      --jobs at a time, and print a kernel x program table
      --compare OLD NEW  run both, print only the tests whose verdict
                      differs (regressions first); exit 1 if one regressed
                      or NEW has a problem OLD has not (a kernel splat)
      --list-kernels [PATTERN]  the Debian kernels apt knows, by line,
                      newest first, with their suite (PATTERN: a regex
                      on VERSION-FLAVOUR, e.g. cloud-amd64)
Guest options:
  -a, --arch A        x86_64, arm64, s390x, ppc64le, riscv64, i386 or
                      armhf (default: read from the image)
      --append ARGS   add ARGS to the guest kernel command line
      --smp N         guest CPUs (default 2)
      --memory M      guest memory, MiB or with an M/G suffix (default 512M)
      --kvm           use KVM instead of TCG (nested KVM may hang)
      --suite DIR     put the kselftest install tree DIR in the guest instead
                      of build/install-ARCH (e.g. one made with make install
                      from a kernel's tools/testing/selftests); it must be
                      built statically for the guest's architecture
      --label NAME    name of the kernel in reports (--kernel only; not
                      "report", the combined report's name)
      --sysctl NAME=VALUE  set /proc/sys/NAME (dots for slashes) in the
                      guest before the suite, e.g. kernel.perf_user_access=1
                      (repeatable; without it the guest keeps the kernel's
                      own settings, e.g. Debian's perf_event_paranoid 3)
      --user UID      run the suite as UID in the guest (default root); alone,
                      --privilege user
      --privilege MODE  run the suite in the guest as root (the default),
                      nocaps (uid 0 without any capability), perfmon (the
                      --user uid, default 65534, with CAP_PERFMON only) or
                      user (that uid, no capability)
      --cells LIST    in one boot, the suite once per cell MODE@LEVEL of
                      LIST (commas), in MODE at perf_event_paranoid LEVEL
                      (-1 to 3); "all": every MODE at every LEVEL.  The
                      guest's KTAP has one result per cell, "privileges:
                      MODE@LEVEL", the cell's runner KTAP nested in it
                      (tools/testing/perf_abi/privileges.sh makes a table)
  -j, --jobs N        guests at a time (default 2)

LAVA (the engine KernelCI and LKFT run; tools/testing/perf_abi/lava/):
      --lava-job DIR  write DIR/<label>.yaml, a LAVA job per kernel (qemu,
                      kernel and ramdisk to tmpfs, the suite's test
                      definition inline: one test case per TEST), its
                      kernel and ramdisk, and DIR/perf_events.yaml; takes
                      --kernel SPEC (again for more kernels), --matrix
                      [FILE] (the default without --kernel), --test,
                      --append, --smp, --memory; runs nothing

Guest kernel command line knobs read by the test init: perf_abi.live=1
(copy the whole runner output to the console as it comes),
perf_abi.sysctl=NAME=VALUE, perf_abi.user=UID, perf_abi.priv=MODE and
perf_abi.cells=LIST (what --sysctl, --user, --privilege and --cells pass),
perf_abi.paranoid=N (kernel.perf_event_paranoid), perf_abi.sibling=N (hold
N pinned hardware events per CPU during the run: make soak's sibling).
Environment: PERF_ABI_CACHE (downloaded kernels, initramfs; default
~/.cache/perf-abi), QEMU_X86_64, QEMU_ARM64, QEMU_S390X, QEMU_PPC64LE,
QEMU_RISCV64, QEMU_I386, QEMU_ARMHF (qemu binaries to use; the machine of each architecture is
in tools/testing/perf_abi/vm/qemu/ARCH.conf), PERF_ABI_BOOT_ALLOWANCE
(seconds a guest has to reach the test init; default the ARCH.conf's).

Exit status: 0 all passed, 1 a test failed (or, with --repeat, a verdict
changed), 4 every test skipped -- these three as kselftest's runner;
2 bad usage or a setup problem (a missing package, qemu that does not
start, an unwritable output or cache); 3 a kernel did not boot, panicked,
oopsed, hung or lost its end marker; 128 + N interrupted by signal N
(130 SIGINT, 143 SIGTERM, 129 SIGHUP; what finished is kept in the run's
directory, with a file INTERRUPTED).
--matrix: 2, else 3, else 1, else 4, else 0 over all kernels.  --compare:
2, 3, else 1 if a test regressed or NEW has a new problem, else 0.  The
output directory, side files, locks: tools/testing/perf_abi/lib/RUNNER.md.
'''

import sys
sys.dont_write_bytecode = True # the parts below: no __pycache__ in the tree
import fcntl, os, pwd, re, shutil, signal, stat, subprocess, tempfile, time
from rt_base import (ARCHES, CNTRL, Fail, Interrupted, LIBC, M, SIGNALS, TOP, arch_name, die, err, hold_signals,
                     on_signal, q, read, run, show, stop_all)
from rt_out import Out, Reports, lock_nb, out_check, out_undo, sweep
from rt_suite import Suite
from rt_qemu import Guests


class Runner(Suite, Guests, Reports):
    def __init__(self):
        self.work, self.k = None, []
        self.partial = self.cut_short # what an interrupted run keeps
        self.host_lock = None

    # --- environment, cache -----------------------------------------
    def env(self):
        for v in list(os.environ):
            if re.fullmatch('KSELFTEST_.*_ARGS', v):
                del os.environ[v]
        if not os.environ.get('HOME'):
            os.environ['HOME'] = pwd.getpwuid(os.getuid()).pw_dir
        os.environ.setdefault('PATH', '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin') # env -i
        self.cache_from_home = not os.environ.get('PERF_ABI_CACHE')
        if self.cache_from_home:
            if not os.environ['HOME']:
                die('neither PERF_ABI_CACHE nor HOME is set (PERF_ABI_CACHE: where kernels are cached)')
            os.environ['PERF_ABI_CACHE'] = os.environ['HOME'] + '/.cache/perf-abi'
        try:
            self.cache = os.path.join(os.getcwd(), os.environ['PERF_ABI_CACHE'])
        except FileNotFoundError:
            die('the current directory was deleted: cd into one that exists')
        os.environ['PERF_ABI_CACHE'] = self.cache
        ba = os.environ.get('PERF_ABI_BOOT_ALLOWANCE', '')
        if ba and not re.fullmatch('[1-9][0-9]{0,4}', ba):
            die("PERF_ABI_BOOT_ALLOWANCE='%s' is not a number of seconds" % ba)
        self.B = TOP + '/build'
        if re.search(r'\s', TOP): # kselftest's lib.mk cannot build there
            self.need_cache()
            rc, out = run(['make', '-s', '-C', TOP, '--no-print-directory', 'print-build'],
                      stderr=subprocess.STDOUT)
            if rc:
                die(out.strip().rsplit(': ', 1)[-1])
            self.B = out.strip()

    def need_cache(self): # writable before it is asked for anything; HOME never made
        c, home = self.cache, os.environ['HOME']
        if self.cache_from_home and not os.path.isdir(c) and not os.path.isdir(home):
            die('HOME=%s is not a directory: set HOME, or PERF_ABI_CACHE (where kernels are cached)' % home)
        try:
            os.makedirs(c, exist_ok=True)
            os.close(os.open('%s/.writable.%d' % (c, os.getpid()), os.O_WRONLY | os.O_CREAT, 0o600))
            os.unlink('%s/.writable.%d' % (c, os.getpid()))
        except OSError:
            die('PERF_ABI_CACHE=%s: cannot write the cache (downloaded kernels, initramfs)' % c)

    def cache_lock(self): # runs sharing the cache take turns at writing it
        try:
            self.cache_fd = getattr(self, 'cache_fd', 0) or os.open(self.cache + '/.lock', os.O_WRONLY | os.O_APPEND |
                                                                      os.O_CREAT, 0o644)
        except OSError:
            die('PERF_ABI_CACHE=%s: cannot write the cache (downloaded kernels, initramfs)' % self.cache)
        for i in range(6001):
            try:
                fcntl.flock(self.cache_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if i == 0:
                    err('run_tests.sh: waiting (up to 10 min) for another run_tests.sh using the cache %s'
                        % self.cache)
                time.sleep(0.1)
        die('the cache %s stayed locked by another run_tests.sh for 10 min' % self.cache)

    # --- options ------------------------------------------------------
    def options(self, argv):
        o = self
        o.selectors, o.log, o.mode, o.spec, o.arch, o.append = [], '', 'host', '', '', ''
        o.smp, o.memory, o.kvm, o.suite, o.label, o.jobs, o.outdir = '2', '512M', False, '', '', 2, ''
        o.matrix_file, o.old_spec, o.new_spec, o.guest_opt, o.list, o.repeat = '', '', '', '', False, 1
        o.priv, o.cells, o.ncells, o.user, o.sysctls, o.ktap_out, o.junit_out = '', '', 1, '', [], '', ''
        given = set()

        def once(opt, msg=None):
            if opt in given:
                die(msg or '%s given twice' % opt)
            given.add(opt)

        def set_mode(m):
            if o.mode not in ('host', m):
                die('--kernel, --matrix and --compare go one at a time')
            o.mode = m

        def spec_arg(opt, v):
            if not v:
                die('%s needs a kernel SPEC (try --help)' % opt)
            if v.startswith('-'):
                die("%s: '%s' is an option, not a kernel SPEC (try --help)" % (opt, v))
            no_cntrl(opt, v)

        def no_cntrl(opt, v):
            if CNTRL.search(v):
                die('%s: %s: a control character (tab, newline) in a path; rename it' % (opt, q(v)))

        def file_arg(opt, a):
            if len(a) < 2 or not a[1]:
                die('%s needs a file name (try --help)' % opt)
            no_cntrl(opt, a[1])
            return a[1]

        a = list(argv)
        while a:
            opt, v = a[0], a[1] if len(a) > 1 else None
            n = 2

            def need(what):
                if v is None:
                    die('%s needs %s (try --help)' % (opt, what))
            if opt in ('-a', '--arch', '--append', '--smp', '--memory', '--kvm', '--suite', '--label', '--sysctl',
                   '--user', '--privilege', '--cells', '-j', '--jobs'):
                o.guest_opt = o.guest_opt or opt
            if opt in ('-t', '--test'):
                if not v:
                    die('%s needs a test name (try --help)' % opt)
                if v.startswith('-'):
                    die("%s needs a test name, not the option '%s'" % (opt, v))
                if not re.fullmatch(r'[A-Za-z0-9_.+-]+(:[][A-Za-z0-9_.*?!+-]+)?', v):
                    die("%s: '%s' is not PROG or PROG:TEST (letters, digits, _ . - and globs * ? [ ])" % (opt, v))
                o.selectors.append(v)
            elif opt == '--list':
                o.list, n = True, 1
            elif opt == '--repeat':
                need('a number of runs')
                if not re.fullmatch('[1-9][0-9]{0,3}', v):
                    die("%s: '%s' is not a number of runs from 1 to 9999" % (opt, v))
                once('--repeat')
                o.repeat = int(v)
            elif opt in ('-l', '--log'):
                f = file_arg(opt, a)
                once('-l', '%s given twice' % opt)
                o.log = f
            elif opt in ('--ktap', '--junit'):
                f = file_arg(opt, a)
                d = os.path.dirname(f) or '.'
                if not os.path.isdir(d):
                    die('%s: no directory %s' % (opt, d))
                if os.path.isdir(f):
                    die('%s: %s is a directory' % (opt, f))
                once(opt)
                setattr(o, opt[2:] + '_out', f)
            elif opt in ('-k', '--kernel'):
                need('a kernel SPEC')
                spec_arg(opt, v)
                if o.mode == 'kernel':
                    die('give --kernel once (use --matrix for several)')
                set_mode('kernel')
                o.spec = v
            elif opt in ('-m', '--matrix'):
                once('--matrix', '%s given twice' % opt)
                set_mode('matrix')
                o.matrix_file, n = M + '/kernels/matrix.list', 1
                if v is not None and not v.startswith('-'):
                    o.matrix_file, n = v, 2
            elif opt == '--compare':
                if len(a) < 3:
                    die('%s needs two kernel SPECs, OLD and NEW (try --help)' % opt)
                spec_arg(opt, a[1])
                spec_arg(opt, a[2])
                if o.mode == 'compare':
                    die('%s given twice' % opt)
                set_mode('compare')
                o.old_spec, o.new_spec, n = a[1], a[2], 3
            elif opt in ('-a', '--arch'):
                need('an architecture')
                o.arch = arch_name(v) or die("unknown architecture '%s' (%s)" % (v, ' '.join(ARCHES)))
            elif opt == '--append':
                need('kernel command line arguments')
                if CNTRL.search(v):
                    die('%s: no control characters (newlines, tabs, CR) in the kernel command line' % opt)
                o.append += ' ' + v
                for w in v.split(): # the guest's own knobs: refused ones count as --sysctl's
                    if re.match('perf_abi.sysctl=.', w):
                        o.sysctls.append(w[len('perf_abi.sysctl='):].split('=')[0])
                    elif w.startswith('perf_abi.paranoid='):
                        o.sysctls.append('kernel.perf_event_paranoid')
            elif opt == '--smp':
                need('a CPU count')
                if not re.fullmatch('[1-9][0-9]?', v):
                    die("%s: '%s' is not a CPU count from 1 to 99" % (opt, v))
                o.smp = v
            elif opt == '--memory':
                need('a size')
                maxm = int(re.search(r'MemTotal:\s*(\d+)', read('/proc/meminfo')).group(1)) // 1024
                mm = re.fullmatch('([1-9][0-9]*)([MmGg]?)', v)
                if not mm:
                    die("%s: '%s' is not a memory size (whole MiB or GiB: 512M, 1G, 1536)" % (opt, v))
                mib = int(mm.group(1)) * (1024 if mm.group(2) in 'Gg' and mm.group(2) else 1)
                if not 128 <= mib <= maxm:
                    die("%s: '%s' is not a memory size from 128M to %dM (this machine's memory)" % (opt, v, maxm))
                o.memory = '%dM' % mib
            elif opt == '--kvm':
                if not os.access('/dev/kvm', os.W_OK):
                    die('--kvm: /dev/kvm is not there or not writable')
                o.kvm, n = True, 1
            elif opt == '--suite':
                need('a kselftest install tree')
                no_cntrl(opt, v)
                if not os.path.isdir(v):
                    die('%s: no such directory: %s' % (opt, v))
                if not (os.access(v + '/run_kselftest.sh', os.X_OK) and os.access(v + '/kselftest-list.txt', os.R_OK)):
                    die('%s: %s is not a kselftest install tree (no run_kselftest.sh, kselftest-list.txt)' % (opt, v))
                o.suite = os.path.abspath(v)
            elif opt == '--label':
                need('a name')
                if not re.fullmatch('[A-Za-z0-9][A-Za-z0-9._+-]{0,99}', v):
                    die("%s: '%s' is not a name (at most 100 letters, digits, . _ + -)" % (opt, v[:120]))
                if v == 'report':
                    die("%s: 'report' is reserved (report.ktap is the combined report)" % opt)
                o.label = v
            elif opt == '--sysctl':
                need('NAME=VALUE')
                if not re.fullmatch(r'[a-z0-9_-]+(\.[a-z0-9_-]+)*=\S+', v):
                    die("%s: '%s' is not NAME=VALUE (e.g. kernel.perf_user_access=1)" % (opt, v))
                o.append += ' perf_abi.sysctl=' + v
                o.sysctls.append(v.split('=')[0])
            elif opt == '--user':
                need('a uid')
                if not re.fullmatch('0|[1-9][0-9]{0,9}', v) or int(v) > 4294967294:
                    die("%s: '%s' is not a numeric uid" % (opt, v))
                o.append += ' perf_abi.user=' + v
                o.user = v
            elif opt == '--privilege':
                if v is None:
                    die('%s needs a MODE: root, nocaps, perfmon or user (try --help)' % opt)
                if v not in ('root', 'nocaps', 'perfmon', 'user'):
                    die("%s: '%s' is not a MODE (root, nocaps, perfmon, user)" % (opt, v))
                once(opt)
                o.priv = v
                o.append += ' perf_abi.priv=' + v
            elif opt == '--cells':
                need('MODE@LEVEL,... or all')
                once(opt)
                c = v if v != 'all' else ','.join('%s@%s' % (m_, l) for m_ in ('root', 'nocaps', 'perfmon', 'user')
                                  for l in ('-1', '0', '1', '2', '3'))
                if not re.fullmatch(r'[^,\s]+(,[^,\s]+)*', c):
                    die("%s: '%s' is not a comma-separated list of MODE@LEVEL (no spaces)" % (opt, v))
                for x in c.split(','):
                    if not re.fullmatch('(root|nocaps|perfmon|user)@(-1|0|1|2|3)', x):
                        die("%s: '%s' is not MODE@LEVEL (MODE root, nocaps, perfmon or user; LEVEL -1 to 3)"
                            % (opt, x))
                o.cells, o.ncells = c, len(c.split(','))
                o.append += ' perf_abi.cells=' + c
            elif opt in ('-j', '--jobs'):
                need('a number')
                if not re.fullmatch('[1-9][0-9]?', v):
                    die("%s: '%s' is not a number of guests" % (opt, v))
                o.jobs = int(v)
            elif opt in ('-o', '--output'):
                if not v:
                    die('%s needs a directory (try --help)' % opt)
                if v.startswith('-'):
                    die("%s needs a directory, not the option '%s'" % (opt, v))
                no_cntrl(opt, v)
                once('-o', 'give one -o')
                o.outdir = v
            elif opt == '--list-kernels':
                if len(a) > 2:
                    die('%s takes one PATTERN at most' % opt)
                pat = v or '.'
                if subprocess.run(['grep', '-qE', '--', pat], stdin=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode > 1:
                    die("%s: '%s' is not a regular expression (grep -E)" % (opt, v or ''))
                exec_(M + '/kernels/debian.sh', '--lines', pat)
            elif opt in ('-h', '--help'):
                show(USAGE)
                raise Fail('', 0)
            elif opt.startswith('-'):
                die("unknown option '%s' (try --help)" % opt)
            else:
                die("unexpected argument '%s' (try --help)" % opt)
            del a[:n]

        if o.label and o.mode != 'kernel':
            die('--label goes with --kernel')
        if o.guest_opt and o.mode == 'host':
            die('%s goes with --kernel, --matrix or --compare' % o.guest_opt)
        if o.priv and o.cells:
            die('--privilege and --cells go one at a time (a cell names its MODE)')
        if o.priv in ('root', 'nocaps') and o.user:
            die('--user goes with --privilege perfmon or user (root and nocaps run as uid 0)')
        if o.arch and o.mode == 'matrix':
            die('--arch goes with --kernel or --compare (a matrix names its kernels)')
        if o.log and o.mode not in ('host', 'kernel'):
            die('--log goes with one kernel; use --output')
        if o.list and o.repeat != 1:
            die('--list and --repeat go one at a time')
        if o.repeat != 1 and o.mode == 'compare':
            die('--repeat goes with the running kernel, --kernel or --matrix')
        if o.log:
            d = os.path.dirname(o.log) or '.'
            if not os.path.isdir(d):
                die('--log: no directory %s' % d)
            if os.path.isdir(o.log):
                die('--log: %s is a directory' % o.log)

    # --- the run's directory, side files -----------------------------
    def outputs(self):
        o = self
        o.final = os.path.realpath(o.outdir or '%s/logs/%s' % (o.B, o.mode))
        try:
            empty = not os.listdir(o.final) if os.path.isdir(o.final) else True
        except OSError:
            empty = True
        o.in_runs = not (o.outdir and empty) # a new DIR/<label>-<time>
        o.rundir = o.final
        if o.list:
            return
        e = out_check(o.final)
        if e:
            die('--output: ' + e)
        rc, names = run(['git', '-C', TOP, 'ls-files', '-z'], stderr=subprocess.DEVNULL)
        names = [n for n in names.split('\0') if n] if rc == 0 else ['run_tests.sh', 'Makefile', 'README', 'tools/']
        ours = {TOP + '/' + n.split('/')[0] for n in names} | {TOP + '/.git'} | { # the repository; what make builds
            o.B + '/' + x for x in (os.listdir(o.B) if os.path.isdir(o.B) else [])
            if re.match('(install|obj|ksft|sysroot|privrun|sibling)-|(vm|unit)$', x)}
        inodes = set()
        for n in names:
            try:
                inodes.add(os.stat(TOP + '/' + n)[1:3])
            except OSError:
                pass
        if o.final == TOP or any((o.final + '/').startswith(x + '/') for x in ours):
            die('--output: %s is in the source tree; give a directory outside it, or a new one in %s' % (o.final, TOP))
        seen = []
        for opt, f in (('--log', o.log), ('--ktap', o.ktap_out), ('--junit', o.junit_out)):
            if not f:
                continue
            r = os.path.realpath(f)
            if (r + '/').startswith(o.final + '/'):
                die('%s: %s is in the output directory %s, which holds the reports' % (opt, f, o.final))
            if any((r + '/').startswith(x + '/') for x in ours) or os.path.exists(r) and os.stat(r)[1:3] in inodes:
                die('%s: %s is a file of this project (its repository or what make builds)' % (opt, f))
            try: # a live run holds an flock on its directory; a complete one has its summary.json
                fd = lock_nb(os.path.dirname(r)) if os.path.isdir(os.path.dirname(r)) else None
            except OSError:
                fd = None
            if fd is False or os.path.isfile(os.path.dirname(r) + '/summary.json'):
                die("%s: %s is in the directory of another run" % (opt, f))
            fd and os.close(fd)
            if r in seen and not (os.path.exists(r) and stat.S_ISCHR(os.stat(r).st_mode)):
                die('%s: %s is another side file too (-l, --ktap, --junit: one file each)' % (opt, f))
            seen.append(r)
            for x in (o.spec, o.old_spec, o.new_spec, o.matrix_file):
                try:
                    if x and os.path.samefile(r, x):
                        die('%s: %s is an input of this run (%s)' % (opt, f, x))
                except OSError:
                    pass
            if os.path.lexists(r):
                if os.path.isdir(r):
                    die('%s: %s is a directory' % (opt, f))
                st = os.stat(r).st_mode
                if stat.S_ISFIFO(st) or stat.S_ISSOCK(st):
                    die('%s: %s is a FIFO or a socket (a write there could wait for ever)' % (opt, f))
                if not os.access(r, os.W_OK):
                    die('%s: cannot write %s' % (opt, f))
            elif not os.access(os.path.dirname(r), os.W_OK | os.X_OK):
                die('%s: cannot create %s (%s is not a writable directory)' % (opt, f, os.path.dirname(r)))

    def main(self, argv):
        if '--lava-job' in argv: # LAVA jobs instead of a run: lava/lava-job.sh
            exec_(M + '/lava/lava-job.sh', *argv)
        self.env()
        self.options(argv)
        self.outputs()
        self.sel_progs()
        try:
            os.makedirs(self.B + '/vm', exist_ok=True)
            sweep(self.B + '/vm')
            Out.work = self.work = tempfile.mkdtemp(prefix='run.', dir=self.B + '/vm')
            lock_nb(self.work)
        except OSError:
            die('cannot write the build tree %s' % self.B)
        return self.host() if self.mode == 'host' else self.kernels()


def exec_(path, *args):  # a pipe's reader that goes away ends it, as from a shell
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.execv(path, [path, *args])


def main():
    os.environ['PYTHONDONTWRITEBYTECODE'] = '1'  # flips.py's import of ktap: no __pycache__ in the tree
    for fd in (1, 2): # a closed one is /dev/null: nothing the run reports depends on it
        try:
            os.fstat(fd)
        except OSError: # (os.open gives fd itself, close-on-exec: the helpers would get it closed)
            os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
            os.set_inheritable(fd, True)
    for s in SIGNALS:
        signal.signal(s, on_signal)
    LIBC.prctl(36, 1, 0, 0, 0) # PR_SET_CHILD_SUBREAPER: what a killed child leaves comes back to stop_all
    r, rc = Runner(), 2
    try:
        rc = r.main(sys.argv[1:])
    except Fail as f:
        if f.msg:
            err('run_tests.sh: ' + f.msg)
        rc = f.status
    except Interrupted as i:
        name, rc = signal.Signals(i.args[0]).name, 128 + i.args[0]
        stop_all()
        err('run_tests.sh: interrupted by ' + name)
        try:
            if r.partial:
                r.partial(name, rc)
        except Exception:
            pass
    except Exception as e: # an internal error: one line, a setup problem
        err('run_tests.sh: cannot go on: %s: %s' % (type(e).__name__, e))
        rc = 2
    finally:
        hold_signals()
        stop_all() # (a guest still running when the run failed)
        if r.work:
            shutil.rmtree(r.work, ignore_errors=True)
        out_undo()
    os._exit(rc)


if __name__ == '__main__':
    main()
