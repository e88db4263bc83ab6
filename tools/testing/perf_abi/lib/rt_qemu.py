# SPDX-License-Identifier: GPL-2.0
"""run_tests.py's kernels under qemu: specs resolved (kernels/image.sh),
the initramfs, guests booted (vm/boot.sh) --jobs at a time, the verdict."""

import fcntl, os, re, shutil, subprocess, time
from rt_base import (CNTRL, Fail, M, PY, TOP, arch_qemu, conf, die, err, last_line, q, read, run, show, show_err,
                     with_us, write)
from rt_out import out_claim
from rt_suite import tree_progs


class Guests: # --kernel, --matrix, --compare
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

