# SPDX-License-Identifier: GPL-2.0
"""run_tests.py's outputs: the run's directory (made, locked, published,
swept after a killed run; RUNNER.md) and the reports written into it."""

import fcntl, os, re, shutil, time
from rt_base import Fail, M, PY, die, err, hold_signals, read, run, write


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
        if os.path.lexists(latest) and not (os.path.islink(latest) and '/' not in os.readlink(latest)):
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


class Reports: # summary.json, JUnit, side files; what an interrupted run keeps
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

    def flipped(self, rc, frc): # --repeat: a verdict that changed fails a run that passed
        return 1 if frc and rc in (0, 4) else rc

    def report(self, d, *extra):
        rc, out = run(PY + [M + '/lib/ktap.py', 'report', d + '/manifest.tsv', '--json', d + '/summary.json',
                   '--junit', d + '/junit.xml', '--markdown', d + '/table.md', '--ktap', d + '/report.ktap'] + list(extra))
        os.unlink(d + '/manifest.tsv')
        return rc, out

