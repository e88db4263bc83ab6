# SPDX-License-Identifier: GPL-2.0
"""run_tests.py's common ground: paths, messages, helpers, architectures,
the processes a run starts and the signals it takes."""

import ctypes, os, re, signal, subprocess, time


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


def hold_signals(): # the run has ended: the exit stays the results'
    for s in SIGNALS:
        signal.signal(s, signal.SIG_IGN)


def show_err(s):
    try:
        os.write(2, s.encode())
    except OSError:
        pass


