# SPDX-License-Identifier: GPL-2.0
"""run_tests.py's suite: the tests of a kselftest install tree (the
harness's -l table, -t selections), its builds, the run on this machine."""

import fcntl, fnmatch, os, re, shutil, subprocess, time
from rt_base import Fail, M, PY, TOP, die, err, read, run, show, show_err, with_us, write
from rt_out import out_claim


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


class Suite: # -t, the install trees, the running kernel
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

