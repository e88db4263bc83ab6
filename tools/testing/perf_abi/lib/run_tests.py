#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""run_tests.sh's program (issue 28): run the perf user-page ABI selftests
through the real kselftest runner on the running kernel, or on kernel
images booted under qemu (vm/boot.sh, kernels/image.sh, vm/initramfs.sh),
and report KTAP, summary.json, junit.xml and an exit code.  What it keeps
and refuses: RUNNER.md.  Paths are carried as the bytes they are
(surrogateescape) and never parsed by a shell."""
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

import ctypes, fcntl, fnmatch, os, pwd, re, shutil, signal, stat, subprocess, sys, tempfile, time

TOP = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../..'))
M = TOP + '/tools/testing/perf_abi'
CNTRL = re.compile('[\x00-\x1f\x7f]')
PY = [os.readlink('/proc/self/exe'), '-S'] # ktap.py, flips.py: stdlib only, as this program (sys.executable
# is '' without PATH: env -i)


class Fail(Exception): # exit STATUS with MSG on stderr
    def __init__(self, msg, status=2):
        super().__init__(msg)
        self.msg, self.status = msg, status


class Interrupted(Exception):
    pass


def die(msg):
    raise Fail(msg)


def err(msg): # stderr; one that cannot be written changes nothing
    try:
        os.write(2, os.fsencode(msg + '\n'))
    except OSError:
        pass


def show(data): # stdout, last: a reader that went away changes nothing
    try:
        os.write(1, data if isinstance(data, bytes) else os.fsencode(data))
    except OSError:
        pass


def read(path):  # a file's text, '' if there is none
    try:
        with open(path, errors='surrogateescape') as f:
            return f.read()
    except OSError:
        return ''


def write(path, text, mode='w'):
    with open(path, mode, errors='surrogateescape') as f:
        f.write(text)


def q(s): # printf %q of bash for a string with control characters
    if not CNTRL.search(s):
        return s
    return "$'" + ''.join(c if c >= ' ' and c not in "'\\\x7f" else
                  {'\t': '\\t', '\n': '\\n', '\r': '\\r', "'": "\\'", '\\': '\\\\'}.get(c, '\\%03o' % ord(c))
                  for c in s) + "'"


def run(cmd, **kw): # a helper's exit status, its output as text
    p = subprocess.run(cmd, stdout=kw.pop('stdout', subprocess.PIPE), errors='surrogateescape', **kw)
    return p.returncode, p.stdout or ''


def last_line(text, prefixes): # a helper's message: its last line, its own name off
    lines = [l for l in text.splitlines() if l]
    return re.sub('^(%s)(\\.sh)?: ' % prefixes, '', lines[-1]) if lines else ''


# --- architectures: vm/qemu/ARCH.conf, KEY VALUE lines --------------------
def conf(a):
    d = {}
    for line in read('%s/vm/qemu/%s.conf' % (M, a)).splitlines():
        w = line.split(None, 1)
        if w and not w[0].startswith('#'):
            d.setdefault(w[0], w[1].strip() if len(w) > 1 else '')
    return d


ARCHES = sorted(f[:-5] for f in os.listdir(M + '/vm/qemu') if f.endswith('.conf'))


def arch_name(n):
    for a in ARCHES:
        if n == a or n in conf(a).get('aliases', '').split():
            return a
    return None


def arch_qemu(a):
    return os.environ.get('QEMU_' + a.upper()) or conf(a).get('qemu', '')


# --- the tests of a kselftest install tree ---------------------------------
def tree_progs(tree): # (collection, program) of its kselftest-list.txt
    return [tuple(l.split(':', 1)) for l in read(tree + '/kselftest-list.txt').replace('\r', '').splitlines()
        if ':' in l]


def tree_coll(tree, p):
    return next((c for c, q_ in tree_progs(tree) if q_ == p), '')


def harness_lists(path): # a kselftest harness that has -l
    try:
        with open(path, 'rb') as f:
            return b'list all tests' in f.read()
    except OSError:
        return False


def list_tests(path): # the full names from the harness's -l table, or its exit status
    p = subprocess.run(['timeout', '20', path, '-l'], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
               errors='surrogateescape')
    if p.returncode not in (0, 4):
        return p.returncode
    names, f, v, t = [], None, [], []

    def flush():
        if f is not None:
            for tt in t:
                names.extend([f + '.' + tt] if not v else ['%s.%s.%s' % (f, vv, tt) for vv in v])
    # columns FIXTURE, VARIANT, TEST; a fixture's variants and tests side
    # by side, its tests run for every variant
    for line in p.stderr.splitlines():
        w = line.split()
        if line.startswith('# FIXTURE') or not w:
            continue
        if line.startswith('-----'):
            flush()
            f, v, t = None, [], []
        elif line[0] != ' ':
            flush()
            f, v, t = w[0], w[1:2] if len(w) >= 3 else [], w[2:3] if len(w) >= 3 else w[1:2]
        elif line[21:22] != ' ': # a VARIANT starts at column 22
            v.append(w[0])
            t.extend(w[1:2])
        else:
            t.append(w[0])
    flush()
    return names


def compress_filter(all_, sel):
    """The harness options that run exactly SEL of ALL, shortest first: a
    whole fixture, a test or a variant of one fixture only, else each name."""
    def split(n):
        a = n.split('.') + ['', '']
        return (a[0], '', a[1]) if len(n.split('.')) == 2 else tuple(a[:3])

    def count(names):
        c = {}
        for n in names:
            f, v, t = split(n)
            for k in (('f', f), ('t', f, t), ('v', f, v)):
                c[k] = c.get(k, 0) + 1
        return c
    sel = set(sel) & set(all_)
    na, ns = count(all_), count(sel)
    tfix = {(split(n)[2], split(n)[0]) for n in all_}
    vfix = {(split(n)[1], split(n)[0]) for n in all_ if split(n)[1]}
    out = []
    for n in all_:
        if n not in sel:
            continue
        f, v, t = split(n)
        if ns[('f', f)] == na[('f', f)]:
            o = '-f ' + f
        elif ns[('t', f, t)] == na[('t', f, t)] and sum(x == t for x, _ in tfix) == 1:
            o = '-t ' + t
        elif v and ns[('v', f, v)] == na[('v', f, v)] and sum(x == v for x, _ in vfix) == 1:
            o = '-v ' + v
        else:
            o = '-r ' + n
        if o not in out or o.startswith('-r'):
            out.append(o)
    return out


def match_tests(all_, pat): # a glob over the full name, or without a dot over TEST
    return [n for n in all_ if fnmatch.fnmatchcase(n, pat) or
        ('.' not in pat and fnmatch.fnmatchcase(n.rsplit('.', 1)[-1], pat))]


# --- the run's directory (RUNNER.md) ----------------------------------------
class Out:
    made = [] # directories this run made, outermost first
    claimed = None # the run's directory, once locked and ours
    wrote = [] # names this run copied into it
    runs = None # DIR when the run is a new DIR/<label>-<time>
    fd = work = None


def out_check(d): # why D cannot be the run's, or None
    if len(os.fsencode(d)) >= 3800:
        return 'the path is %d bytes long; at most 3800' % len(os.fsencode(d))
    if os.path.exists(d) and not os.path.isdir(d):
        return '%s exists and is not a directory' % d
    if os.path.isdir(d):
        return None if os.access(d, os.W_OK | os.X_OK) else 'cannot write into %s' % d
    p = d
    while not os.path.lexists(p):
        p = os.path.dirname(p)
    if not (os.path.isdir(p) and os.access(p, os.W_OK | os.X_OK)):
        return 'cannot create %s (%s is not a writable directory)' % (d, p)


def out_claim(d, label): # make the run's directory and lock it
    todo, p = [], d
    while not os.path.lexists(p):
        todo.insert(0, p)
        p = os.path.dirname(p)
    for p in todo: # another run may make one at the same time
        try:
            os.mkdir(p)
            Out.made.append(p)
        except OSError:
            pass
    if not os.path.isdir(d):
        die('--output: cannot create %s' % d)
    if label:
        Out.runs, stamp = d, label[:64] + time.strftime('-%Y%m%dT%H%M%SZ', time.gmtime())
        for i in range(1, 101):
            d = Out.runs + '/' + stamp + ('-%d' % i if i > 1 else '')
            try:
                os.mkdir(d)
                break
            except FileExistsError:
                pass
            except OSError:
                die('--output: cannot create %s' % d)
        else:
            die('--output: cannot create %s' % d)
        Out.made.append(d)
    try:
        Out.fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(Out.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        if Out.made and Out.made[-1] == d: # another run's, even if this one made it
            Out.made.pop()
        die('--output: another run_tests.sh is writing to %s' % d)
    if os.listdir(d):
        die('--output: %s is not empty: give a new or empty directory' % d)
    Out.claimed = d
    write(Out.work + '/made', ''.join(p + '\n' for p in Out.made)) # for sweep(), if the run is killed
    return d


def out_undo(): # what this run made and wrote, removed (rmdir: only empty ones)
    for f in Out.wrote if Out.claimed else []:
        p = Out.claimed + '/' + f
        shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) and not os.path.islink(p) else \
            os.path.lexists(p) and os.unlink(p)
    for p in reversed(Out.made):
        try:
            os.rmdir(p)
        except OSError:
            break
    Out.made, Out.wrote, Out.claimed = [], [], None


def copy(src, dst):
    if os.path.isdir(src):
        os.mkdir(dst)
        for f in os.listdir(src):
            copy(src + '/' + f, dst + '/' + f)
    else:
        shutil.copy2(src, dst)


def out_publish(src, complete): # the reports copied in; latest moved when complete
    try:
        for f in sorted(os.listdir(src)):
            Out.wrote.append(f)
            copy(src + '/' + f, Out.claimed + '/' + f)
    except OSError as e:
        err('run_tests.sh: cannot write the reports into %s: %s' % (Out.claimed, e.strerror))
        out_undo()
        return False
    if complete and Out.runs:
        latest, name = Out.runs + '/latest', os.path.basename(Out.claimed)
        if os.path.lexists(latest) and not os.path.islink(latest):
            err('run_tests.sh: %s is not a symlink of run_tests.sh: left as it is' % latest)
        else:
            tmp = '%s/.latest.%d.%s' % (Out.runs, os.getpid(), name)
            try: # (never a file or folder of the user's by that name)
                os.symlink(name, tmp)
                try:
                    os.rename(tmp, latest)
                except OSError:
                    os.unlink(tmp)
            except OSError as e:
                err('run_tests.sh: %s not moved: %s' % (latest, e.strerror))
    Out.made, Out.wrote, Out.claimed = [], [], None
    return True


# --- processes, signals -----------------------------------------------------
def descendants():
    parent = {}
    for p in os.listdir('/proc'):
        try:
            st = read('/proc/%s/stat' % p).rsplit(')', 1)[1].split()
            if p.isdigit() and st[0] != 'Z':
                parent[int(p)] = int(st[1])
        except IndexError:
            pass
    want, more = {os.getpid()}, True
    while more:
        new = {p for p, pp in parent.items() if pp in want and p not in want}
        want |= new
        more = bool(new)
    return want - {os.getpid()}


def stop_all(): # TERM, then KILL what is left after 5 s
    for i in range(51):
        pids = descendants()
        for p in pids:
            try:
                os.kill(p, signal.SIGTERM if i == 0 else signal.SIGKILL if i == 50 else 0)
            except OSError:
                pass
        if not pids or i == 50:
            break
        time.sleep(0.1)
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def on_signal(n, _):
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)
    raise Interrupted(n)


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
           signal.SIGALRM) # exit 128 + N
LIBC = ctypes.CDLL(None)


def with_us(): # a child gets SIGTERM when the run dies, even by SIGKILL (PR_SET_PDEATHSIG)
    LIBC.prctl(1, signal.SIGTERM, 0, 0, 0)


def sweep(vm): # the work directories of runs that died (SIGKILL): unlocked; the empty directories they made
    for d in [vm + '/' + x for x in os.listdir(vm) if x.startswith('run.')]:
        try:
            if time.time() - os.stat(d).st_ctime > 5 and lock_nb(d):
                for p in reversed(read(d + '/made').splitlines()):
                    if lock_nb(p): # (not a live run's)
                        os.rmdir(p)
                shutil.rmtree(d)
        except OSError:
            pass


def lock_nb(d): # an flock on D, or False; held till the run ends
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return False


def hold_signals(): # the run has ended: the exit stays the results'
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)


class Runner:
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
            try: # a live run holds an flock on its directory
                fd = lock_nb(os.path.dirname(r)) if os.path.isdir(os.path.dirname(r)) else None
            except OSError:
                fd = None
            if fd is False:
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

    def side_write(self, src, dst, opt): # a failure: exit 2, the reports kept
        if not dst:
            return True
        try:
            with open(src, 'rb') as i, open(dst, 'wb') as f:
                shutil.copyfileobj(i, f)
            return True
        except OSError as e:
            err('run_tests.sh: %s: cannot write %s: %s' % (opt, dst, e.strerror))
            return False

    def json_exit(self, path, status): # summary.json's top-level exit (indent 1)
        if os.path.isfile(path):
            write(path, re.sub('^ "exit": [0-9]*$', ' "exit": %d' % status, read(path), flags=re.M))

    def finish(self, rc, ktap): # side files, summary.json's exit, published
        hold_signals()
        ok = [self.side_write(ktap, self.log, '--log'), self.side_write(ktap, self.ktap_out, '--ktap'),
              self.side_write(self.work + '/out/junit.xml', self.junit_out, '--junit')]
        rc = rc if all(ok) else 2
        self.json_exit(self.work + '/out/summary.json', rc)
        self.partial = None
        if not out_publish(self.work + '/out', True):
            raise Fail('', 2)
        return rc

    def interrupted(self, name, status, note): # what an interrupted run keeps
        out = self.work + '/out'
        if os.path.exists(out + '/manifest.tsv'):
            os.unlink(out + '/manifest.tsv')
        write(out + '/INTERRUPTED', 'run_tests.sh was interrupted by %s on %s.\n%s\n'
              % (name, time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime()), note))
        self.json_exit(out + '/summary.json', status)
        if out_publish(out, False):
            err('run_tests.sh: what had finished is in %s' % self.rundir)

    def cut_short(self, name, status): # interrupted while the run was prepared: the note alone
        if not self.work or self.list:
            return
        os.makedirs(self.work + '/out', exist_ok=True)
        if not Out.claimed:
            label = self.k[0][2] if self.mode == 'kernel' and self.k else self.mode
            self.rundir = out_claim(self.final, label if self.in_runs else '')
        self.interrupted(name, status, 'No test had run: the run was being prepared (the suite built, kernels '
                         'fetched, the initramfs made).')

    # --- test selection -------------------------------------------------
    def sel_progs(self):
        progs = []
        ours = ' '.join(re.findall('^TEST_GEN_PROGS *[+:]?= *(.*)$',
                       read(TOP + '/tools/testing/selftests/perf_events/Makefile'), re.M)).split()
        for s in self.selectors:
            p = s.split(':')[0]
            if self.suite and not tree_coll(self.suite, p):
                die("no test program '%s' in %s (%s)" % (p, self.suite, ' '.join(x for _, x in tree_progs(self.suite))))
            if not self.suite and p not in ours:
                die("no test program '%s' (%s)" % (p, ', '.join(ours)))
            if p not in progs:
                progs.append(p)
        self.progs, self.args = progs, {}

    def select_tests(self, tree): # self.args[PROG]: harness options; --list prints PROG:TEST
        for p in self.progs or [x for _, x in tree_progs(tree)]:
            coll = tree_coll(tree, p)
            mine = [s.split(':', 1)[1] for s in self.selectors if s.startswith(p + ':')]
            want = 'all' if p in self.selectors else 'some' if mine else ''
            if not self.list and want != 'some':
                continue
            binary = '%s/%s/%s' % (tree, coll, p)
            if not harness_lists(binary):
                if want == 'some':
                    die('-t %s:...: %s cannot list its tests (TESTs need a 6.12 or newer kselftest harness)' % (p, p))
                show(p + '\n')
                continue
            names = list_tests(binary)
            if isinstance(names, int) and not self.suite and tree != self.B + '/install-host':
                self.host_tree() # another architecture: the host's build has the same names
                names = list_tests('%s/install-host/%s/%s' % (self.B, coll, p))
            if isinstance(names, int) or not names:
                die('cannot list the tests of %s (%s -l exited %s)' % (p, binary, names if isinstance(names, int) else 0))
            sel = names
            if want == 'some':
                sel = []
                for pat in mine:
                    m = match_tests(names, pat)
                    if not m:
                        die("-t %s:%s: no test of %s is named '%s' (%d tests; see --list)" % (p, pat, p, pat, len(names)))
                    sel += m
                self.args[p] = compress_filter(names, sel)
            if self.list:
                show(''.join('%s:%s\n' % (p, n) for n in dict.fromkeys(sel)))

    def tree_fresh(self, tree): # complete, and nothing of the suite newer than its list
        try:
            t = os.stat(tree + '/kselftest-list.txt').st_mtime
        except OSError:
            return False
        if not os.access(tree + '/run_kselftest.sh', os.X_OK):
            return False
        for d in (TOP + '/tools/testing/selftests/perf_events', TOP + '/Makefile'):
            for root, dirs, files in os.walk(d) if os.path.isdir(d) else [('', [], [d])]:
                if any(os.stat(os.path.join(root, f)).st_mtime > t for f in files + ([root] if root else [])):
                    return False
        return True

    def build_tree(self, a): # build/install-A, rebuilt when the suite changed; returns its lock, held shared
        tree, log = '%s/install-%s' % (self.B, a), '%s/install-%s.log' % (self.B, a)
        fd = os.open('%s/.install-%s.lock' % (self.B, a), os.O_RDONLY | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_SH) # no run rebuilds a tree while another runs or builds it
        if self.tree_fresh(tree) and not (a == 'host' and os.environ.get('KSRC')):
            return fd
        try: # (a conversion: another run may build it meanwhile)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            err('run_tests.sh: waiting for the other runs of %s to end, to rebuild it' % tree)
            fcntl.flock(fd, fcntl.LOCK_EX)
        if not self.tree_fresh(tree) or a == 'host' and os.environ.get('KSRC'):
            self.need_cache() # the framework's kernel tree is cached there
            with open(log, 'w') as f:
                if subprocess.run(['make', '-s', '-C', TOP, 'install-' + a], stdout=f, stderr=f).returncode:
                    err('\n'.join(read(log).splitlines()[-20:]))
                    die('the suite did not build for %s (make install-%s; see %s)' % (a, a, log))
        fcntl.flock(fd, fcntl.LOCK_SH)
        return fd

    def host_tree(self): # build install-host once; its lock held till the run ends
        if self.host_lock is None:
            if subprocess.run([M + '/deps.sh', 'build']).returncode:
                raise Fail('', 2)
            self.host_lock = self.build_tree('host')

    # --- the running kernel -------------------------------------------------
    def host(self):
        o = self
        if o.list and o.outdir:
            die('--list prints the tests; it writes no --output')
        o.host_tree()
        o.select_tests(o.B + '/install-host')
        if o.list:
            return 0
        o.rundir = out_claim(o.final, 'host' if o.in_runs else '')
        out, tree = o.work + '/out', o.B + '/install-host'
        os.mkdir(out)
        env = dict(os.environ)
        for p, a in o.args.items():
            env['KSELFTEST_%s_ARGS' % re.sub('[^A-Z0-9]', '_', p.upper())] = ' '.join(a)
        cmd = ['./run_kselftest.sh'] + [x for p in o.progs for x in ('-t', 'perf_events:' + p)]
        done = []

        def partial(name, status):
            if not done:
                return o.cut_short(name, status)
            shutil.copy(done[-1], out + '/host.ktap')
            r = ''
            if o.repeat != 1: # the runs that ended, and the one cut short
                os.makedirs(out + '/repeat', exist_ok=True)
                for i, f in enumerate(done):
                    shutil.copy(f, '%s/repeat/%d.ktap' % (out, i + 1))
                r = '; repeat/ the %d runs begun of %d, the last one cut short' % (len(done), o.repeat)
            o.interrupted(name, status, 'host.ktap holds the KTAP of the run up to then%s.' % r)
        o.partial = partial
        t0, grc = time.time(), 0
        for r in range(1, o.repeat + 1):
            if o.repeat != 1 and os.isatty(2):
                show_err('\rrun_tests.sh: run %d of %d' % (r, o.repeat))
            f = '%s/host.%d.ktap' % (o.work, r)
            done.append(f)
            with open(f, 'wb') as k:
                p = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     preexec_fn=with_us)
                for chunk in iter(lambda: os.read(p.stdout.fileno(), 65536), b''):
                    k.write(chunk)
                    k.flush()
                    if o.repeat == 1:
                        show(chunk)
                rc = p.wait()
            if r == 1:
                grc = rc if rc >= 0 else 128 - rc
        if o.repeat != 1 and os.isatty(2):
            show_err('\n')
        t1 = time.time() - t0
        shutil.copy(done[0], out + '/host.ktap')
        u = os.uname()
        write(out + '/manifest.tsv', 'host\t%s\trunning kernel %s\thost.ktap\tok\t%.1f\t%d\t\n' % (u.machine, u.release, t1, grc))
        o.report(out)
        rc, summary = run(PY + [M + '/lib/ktap.py', 'summary', out + '/host.ktap', 'perf_events on ' + u.release,
                                '--rc', str(grc)])
        if o.repeat != 1:
            os.mkdir(out + '/repeat')
            for i, f in enumerate(done):
                os.rename(f, '%s/repeat/%d.ktap' % (out, i + 1))
            frc, flips = run(PY + [M + '/lib/flips.py'] + ['%d.ktap' % (i + 1) for i in range(o.repeat)],
                     cwd=out + '/repeat')
            write(out + '/flips.txt', flips)
            rc = o.flipped(rc, frc)
            rc = 2 if frc > 1 else rc
        rc = o.finish(rc, out + '/host.ktap')
        if o.repeat != 1:
            show(read(o.rundir + '/flips.txt'))
        show(summary)
        err('run_tests.sh: reports in %s' % o.rundir)
        return rc

    def flipped(self, rc, frc): # --repeat: a verdict that changed fails a run that passed
        return 1 if frc and rc in (0, 4) else rc

    def report(self, d, *extra):
        rc, out = run(PY + [M + '/lib/ktap.py', 'report', d + '/manifest.tsv', '--json', d + '/summary.json',
                   '--junit', d + '/junit.xml', '--markdown', d + '/table.md', '--ktap', d + '/report.ktap'] + list(extra))
        os.unlink(d + '/manifest.tsv')
        return rc, out

    # --- kernels under qemu: everything checked before anything is written -------
    def kernels(self):
        o = self
        if o.list: # the names are the same in every architecture's build
            if not o.suite:
                o.host_tree()
            o.select_tests(o.suite or o.B + '/install-host')
            return 0
        o.need_cache()
        o.cache_lock()
        specs = {'kernel': [o.spec], 'compare': [o.old_spec, o.new_spec]}.get(o.mode) or o.matrix_specs()
        o.specs, o.k = specs, [] # k: (guest arch, tasks arch, label, image)
        for s in specs:
            tree = re.match('(compat:)?tree:', s) # a build of minutes, under build.sh's own lock: others go on
            tree and fcntl.flock(o.cache_fd, fcntl.LOCK_UN)
            p = subprocess.run([M + '/kernels/image.sh', s[7:] if s.startswith('compat:') else s, o.arch],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, errors='surrogateescape')
            tree and o.cache_lock()
            if p.returncode:
                die(last_line(p.stderr, 'image|debian|apt-fetch') or 'cannot use kernel ' + s)
            a, l, path = p.stdout.rstrip('\n').split(' ', 2) # the path to the end
            t = a
            if s.startswith('compat:'):
                t = conf(a).get('compat') or die('%s: an %s kernel runs no 32-bit programs here '
                                 '(compat: takes an x86_64 or arm64 kernel)' % (s, a))
                l += '+' + t
            o.k.append([a, t, l, path])
        if o.label:
            o.k[0][2] = o.label
        for k in o.k: # labels name files beside the reports: never one of theirs, 100 bytes at most
            k[2] = 'report-kernel' if k[2] == 'report' else os.fsdecode(os.fsencode(k[2])[:100])
        if o.mode == 'compare' and o.k[0][2] == o.k[1][2]:
            o.k[0][2] += '-old'
            o.k[1][2] += '-new'
        for i in range(1, len(o.k)): # a second kernel of the same name gets -2, -3 ...
            base, n = o.k[i][2], 1
            while o.k[i][2] in [k[2] for k in o.k[:i]]:
                n += 1
                o.k[i][2] = '%s-%d' % (base, n)
        for a in sorted({k[0] for k in o.k}):
            o.need_qemu(a)
        tasks = sorted({k[1] for k in o.k})
        if o.suite and len(tasks) != 1:
            die('--suite holds one architecture; these kernels run %s programs' % ' '.join(tasks))
        o.tree, o.initrd, o.locks = {}, {}, []
        for a in tasks: # rebuilt when the suite changed
            o.tree[a] = o.suite or '%s/install-%s' % (o.B, a)
            if not o.suite:
                o.locks.append(o.build_tree(a))
        if o.selectors:
            for a in tasks:
                o.select_tests(o.tree[a])
        for a in tasks: # the guest's helpers: privrun and sibling
            rc, out = run(['make', '-s', '-C', TOP, 'vm-helpers-' + a], stderr=subprocess.STDOUT)
            if rc:
                die('the guest helpers did not build for %s (make vm-helpers-%s): %s'
                    % (a, a, (out.splitlines() or [''])[-1]))
            p = subprocess.run([M + '/vm/initramfs.sh', a, o.tree[a], M + '/vm/init', '%s/privrun-%s' % (o.B, a),
                        '%s/sibling-%s' % (o.B, a)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       errors='surrogateescape')
            if p.returncode:
                die(last_line(p.stderr, 'initramfs|apt-fetch') or 'cannot build the %s initramfs' % a)
            o.initrd[a] = p.stdout.rstrip('\n')
        for fd in [o.cache_fd] + o.locks: # the guests run from the initramfs
            os.close(fd)
        # the selection on the guest's command line: perf_abi.test=PROG[:OPT,ARG,...]
        o.gappend = o.append + ''.join(' perf_abi.test=' + p + (':' + ','.join(' '.join(o.args[p]).split())
                                      if o.args.get(p) else '') for p in o.progs)
        if len(o.append) > 1800:
            die("--append: the guest's kernel command line would be %d bytes (with --sysctl, --user, --privilege, "
                '--cells); at most 1800' % len(o.append))
        if len(o.gappend) > 1800:
            die("-t selects too many single tests for a guest's command line (%d bytes); select whole fixtures "
                'or programs' % len(o.gappend))
        return o.boot_all()

    def matrix_specs(self):
        f, specs = self.matrix_file, []
        if not os.path.lexists(f):
            die('no such matrix file: %s' % f)
        if not (os.path.isfile(f) and os.access(f, os.R_OK)):
            die('cannot read matrix file: %s' % f)
        for line in read(f).split('\n'):
            line = line[:-1] if line.endswith('\r') else line # a file written on Windows
            line = line.split('#')[0]
            if CNTRL.search(line):
                die('%s: a control character in %s' % (f, q(line)))
            w = line.split(None, 1)
            if not w:
                continue
            if len(w) > 1:
                die("%s: one SPEC a line, not '%s'" % (f, line))
            if w[0].startswith('-'):
                die("%s: '%s' is not a kernel SPEC" % (f, w[0]))
            specs.append(w[0])
        return specs or die('matrix file %s lists no kernel' % f)

    def need_qemu(self, a):
        q_, pkg = arch_qemu(a), conf(a).get('package', '')
        if shutil.which(q_):
            return
        if '/' in q_:
            die('%s (from $QEMU_%s) is not an executable' % (q_, a.upper()))
        if run(['dpkg-query', '-W', '-f=${db:Status-Status}', pkg], stderr=subprocess.DEVNULL)[1] == 'installed':
            die('%s not found in PATH (package %s is installed)' % (q_, pkg))
        if os.getuid() != 0:
            die('%s not found; run as root: apt-get install -y --no-install-recommends %s (or make deps)' % (q_, pkg))
        err('run_tests.sh: %s is missing: installing it (make deps)' % q_)
        if subprocess.run([M + '/deps.sh', 'vm'], stdout=2).returncode:
            raise Fail('', 2)
        if not shutil.which(q_):
            die('%s not found even after make deps (package %s)' % (q_, pkg))

    def boot_for(self, a): # the boot allowance: ARCH.conf's, 30 s with KVM
        return os.environ.get('PERF_ABI_BOOT_ALLOWANCE') or ('30' if self.kvm else conf(a)['boot'])

    def limit_for(self, t, a): # boot allowance + each program's kselftest timeout
        boot, s = int(self.boot_for(a)), 0
        for d, _ in tree_progs(self.tree[t]):
            m_ = re.search('^timeout=(.*)$', read('%s/%s/settings' % (self.tree[t], d)), re.M)
            if m_ and m_.group(1) and not re.fullmatch('[0-9]{1,6}', m_.group(1)):
                die('%s/%s/settings: timeout=%s is not a number of seconds' % (self.tree[t], d, m_.group(1)))
            s += int(m_.group(1)) if m_ and m_.group(1) else 45
        x = ' x %d cells' % self.ncells if self.ncells != 1 else ''
        return boot + s * self.ncells, 'boot allowance %ds + settings timeouts %ds%s' % (boot, s, x)

    # --- boot them ------------------------------------------------------
    def boot_all(self):
        o = self
        n = len(o.k)
        o.rundir = out_claim(o.final, (o.k[0][2] if o.mode == 'kernel' else o.mode) if o.in_runs else '')
        out = o.work + '/out'
        os.mkdir(out)
        live = ' perf_abi.live=1' if os.isatty(2) else ''
        rows, running = {}, {} # (i, r): manifest row; Popen: (i, r, t0)

        def start(i, r):
            a, t, l, path = o.k[i]
            d = '%s/r%d' % (o.work, r)
            os.makedirs(d, exist_ok=True)
            limit, why = o.limit_for(t, a)
            cmd = [M + '/vm/boot.sh', '--smp', o.smp, '--memory', o.memory] + (['--kvm'] if o.kvm else []) + \
                ['--limit', str(limit), '--limit-why', why, '--boot-limit', o.boot_for(a),
                 '--append', o.gappend + live, a, path, o.initrd[t], '%s/%s' % (d, l)]
            with open('%s/%s.err' % (d, l), 'w') as e:
                running[subprocess.Popen(cmd, stderr=e, preexec_fn=with_us)] = (i, r, time.time())

        def ended(p):
            i, r, t0 = running.pop(p)
            a, t, l, _ = o.k[i]
            rc, base, grc, status, reason = p.returncode, '%s/r%d/%s' % (o.work, r, l), '', 'ok', ''
            console = read(base + '.console').replace('\r', '')
            for knob in o.sysctls: # a --sysctl the guest refused: vm/init's SYSCTL line
                m_ = re.search('^.*@@PERF_ABI@@ SYSCTL %s: .*$' % re.escape(knob), console, re.M)
                if m_:
                    write(base + '.sysctl', m_.group(0).split('@@PERF_ABI@@ SYSCTL ', 1)[1] + '\n', 'a')
            if rc == 0:
                grc = read(base + '.rc').strip()
                os.unlink(base + '.rc')
            else:
                status = 'noboot'
                reason = re.sub('; last 30 lines of .*', '', re.sub('^boot\\.sh: ', '', read(base + '.err').split('\n')[0]))
                reason = reason.replace('\t', ' ')
                if rc != 3:
                    reason = 'could not start the guest: ' + reason
                    write(base + '.setup', '2\n')
                if not read(base + '.ktap'): # boot.sh leaves what the guest had logged
                    write(base + '.ktap', 'TAP version 13\n1..0\n')
                write(base + '.ktap', 'Bail out! %s: %s\n' % (l, reason), 'a')
            rows[i, r] = '%s\t%s\t%s\t%s.ktap\t%s\t%.1f\t%s\t%s\n' % (l, t, o.specs[i], l, status, time.time() - t0,
                                         grc, reason)

        def partial(name, status): # the kernels that finished (first run)
            done = [i for i in range(n) if (i, 1) in rows]
            for i in done:
                o.take(i)
            if done:
                write(out + '/manifest.tsv', ''.join(rows[i, 1] for i in done))
                o.report(out)
            cut = ''
            for i in set(range(n)) - set(done): # the guests cut short: their console so far
                f = '%s/r1/%s.console' % (o.work, o.k[i][2])
                if read(f):
                    os.rename(f, '%s/%s.console' % (out, o.k[i][2]))
                    cut += ' %s.console' % o.k[i][2]
            o.interrupted(name, status, '%d of %d kernels had finished; their results are here.%s' % (
                len(done), n, ' The console so far of the guests cut short:%s.' % cut if cut else ''))
        o.partial = partial
        # the slowest architectures first: the last slot does not run alone
        order = sorted(range(n), key=lambda i: -int(conf(o.k[i][0])['boot']))
        last_progress = time.time()
        todo = [(i, r) for r in range(1, o.repeat + 1) for i in order]
        while todo or running:
            for p in [p for p in running if p.poll() is not None]:
                ended(p)
            if todo and len(running) < o.jobs:
                i, r = todo.pop(0)
                if o.mode != 'kernel' or o.repeat != 1:
                    err('run_tests.sh: booting %s (%s)%s' % (o.k[i][2], o.k[i][0],
                                         ', run %d of %d' % (r, o.repeat) if o.repeat != 1 else ''))
                start(i, r)
                continue
            if live and time.time() - last_progress > 2:
                last_progress = time.time()
                o.progress()
            time.sleep(0.05)
        if live:
            show_err('\r\033[K')
        setup_err, msgs, manifest = False, [], ''
        for i in range(n):
            l = o.k[i][2]
            for r in range(1, o.repeat + 1):
                d = '%s/r%d' % (o.work, r)
                setup_err |= os.path.exists('%s/%s.setup' % (d, l))
                if r == 1:
                    msgs += ['run_tests.sh: %s: --sysctl %s: the guest refused it: %s' % ((l,) + tuple(x.split(': ', 1)))
                         for x in read('%s/%s.sysctl' % (d, l)).splitlines()]
                e = read('%s/%s.err' % (d, l)).split('\n', 1)
                if e[0]: # a guest that did not make it
                    err('run_tests.sh: %s: %s' % (l, re.sub('^boot\\.sh: ', '', e[0]).replace(d + '/', o.rundir + '/')))
                    if len(e) > 1 and e[1]:
                        err(e[1].rstrip('\n'))
            manifest += rows[i, 1]
            o.take(i)
        if o.selectors:
            manifest += '# ran only %s\n' % ' '.join(o.selectors)
        write(out + '/manifest.tsv', manifest)
        flips_rc = 0
        if o.repeat != 1: # every run's KTAP under repeat/LABEL/, the flips per kernel
            for _, _, l, _ in o.k:
                rd = '%s/repeat/%s' % (out, l)
                os.makedirs(rd)
                for r in range(1, o.repeat + 1):
                    src = '%s/%s.ktap' % (out, l) if r == 1 else '%s/r%d/%s.ktap' % (o.work, r, l)
                    if os.path.exists(src):
                        shutil.copy(src, '%s/%d.ktap' % (rd, r))
                frc, flips = run(PY + [M + '/lib/flips.py'] + ['%d.ktap' % (r + 1) for r in range(o.repeat)],
                         cwd=rd, stderr=subprocess.STDOUT)
                write(rd + '/flips.txt', flips)
                write(out + '/flips.txt', ''.join('%s: %s\n' % (l, x) for x in flips.splitlines()), 'a')
                flips_rc |= frc != 0
        return o.verdict(out, setup_err, msgs, flips_rc)

    def take(self, i): # kernel I's files of the first run into the reports
        l = self.k[i][2]
        for x in ('ktap', 'console', 'splats.json', 'qemu'):
            f = '%s/r1/%s.%s' % (self.work, l, x)
            if os.path.exists(f):
                os.rename(f, '%s/out/%s.%s' % (self.work, l, x))

    def progress(self): # kernel, program, tests done
        line = ''
        for _, _, l, _ in self.k:
            c = read('%s/r1/%s.console' % (self.work, l)).replace('\r', '')
            prog = re.findall('^# selftests: [^:]*: (.*)$', c, re.M)
            ndone = len(re.findall('^# (not )?ok [0-9]+ ', c, re.M))
            line += '  %s: %s' % (l, '%s %d tests done' % (prog[-1], ndone) if prog else 'booting')
        show_err('\r\033[K' + line[2:202])

    def verdict(self, out, setup_err, msgs, flips_rc):
        o = self
        rd, k0 = o.rundir, o.k[0]
        rows = [x.split('\t') for x in read(out + '/manifest.tsv').splitlines() if not x.startswith('#')]
        last = [] # (a kernel that broke: its line the last)
        if o.mode == 'kernel':
            l, row = k0[2], rows[0]
            o.report(out)
            rc, broke, summary = 0, '', ''
            if setup_err:
                rc, broke = 2, 'qemu did not start'
            elif row[4] != 'ok':
                rc, broke = 3, row[7] or 'did not boot'
            else:
                rc, summary = run(PY + [M + '/lib/ktap.py', 'summary', '%s/%s.ktap' % (out, l),
                           'perf_events on %s (%s guest)' % (l, k0[0])] + (['--rc', row[6]] if row[6] else []))
                rc = o.flipped(rc, flips_rc)
            rc = o.finish(2 if msgs else rc, '%s/%s.ktap' % (out, l))
            if broke:
                last = ['perf_events on %s (%s guest): %s' % (l, k0[0], broke)]
            else:
                show(read('%s/%s.ktap' % (rd, l)) if o.repeat == 1 else read(rd + '/flips.txt'))
                show(summary)
        elif o.mode == 'matrix':
            rc, table = o.report(out, '--table')
            grc = ["run_tests.sh: %s: the guest's kselftest runner exited %s" % (x[0], x[6]) for x in rows
                   if x[4] == 'ok' and x[6] not in ('', '0', '4')]
            rc = 1 if grc and rc in (0, 4) else rc
            rc = o.flipped(rc, flips_rc)
            rc = o.finish(2 if setup_err or msgs else rc, out + '/report.ktap')
            show(table)
            if o.repeat != 1:
                show(read(rd + '/flips.txt'))
            msgs = grc + msgs
        else:
            rc, _ = o.report(out)
            cmp = ''
            if setup_err:
                rc = 2
            elif rc not in (2, 3):
                a, b = o.k[0][2], o.k[1][2]
                rc, cmp = run(PY + [M + '/lib/ktap.py', 'compare', '%s/%s.ktap' % (out, a),
                           '%s/%s.ktap' % (out, b), a, b, o.specs[0], o.specs[1], '--rc', rows[0][6], rows[1][6]])
            rc = o.finish(2 if msgs else rc, out + '/report.ktap')
            show(cmp)
        for x in msgs + ['run_tests.sh: reports in ' + rd] + last:
            err(x)
        return rc

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


def show_err(s):
    try:
        os.write(2, s.encode())
    except OSError:
        pass


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
