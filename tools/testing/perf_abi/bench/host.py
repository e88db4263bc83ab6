#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-host: seconds per suite program on the running kernel.

  host.py DIR RUNS SLOWEST

Runs each program of DIR (mmap_page, rdpmc) RUNS times and prints the
median wall time and their sum (target: both under TARGET seconds); then times each test of one mmap_page run (its RUN to
its OK line, on a pseudo-terminal so that lines come as they are
written) and prints the SLOWEST slowest and the sum; the rest of the
wall time is the harness (forks, the listing).  Exit 1 if a program run
failed.
"""

import os
import pty
import re
import statistics
import subprocess
import sys
import time

TARGET = 1.0  # seconds, both programs


def timed(argv, cwd):
    t0 = time.monotonic()
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
    return time.monotonic() - t0, p.returncode


RUN = re.compile(r'#  RUN +(\S+) ')
END = re.compile(r'# +(OK|FAIL|SKIP) +(\S+)')


def test_times(d):
    """Seconds per test of one mmap_page run: from its RUN line to its
    OK/FAIL line, read as they come (a terminal: the harness writes each
    line when it is done)."""
    main_fd, sub_fd = pty.openpty()
    p = subprocess.Popen(['./mmap_page'], cwd=d, stdout=sub_fd,
                         stderr=sub_fd, stdin=subprocess.DEVNULL)
    os.close(sub_fd)
    buf, started, out = b'', {}, []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        now = time.monotonic()
        buf += chunk
        *lines, buf = buf.split(b'\n')
        for raw in lines:
            line = raw.decode(errors='replace').rstrip('\r')
            m = RUN.search(line)
            if m:
                started[m.group(1)] = now
                continue
            m = END.search(line)
            if m and m.group(2) in started:
                out.append((now - started.pop(m.group(2)), m.group(2)))
    os.close(main_fd)
    p.wait()
    return out


def main():
    if len(sys.argv) != 4:
        print('usage: host.py DIR RUNS SLOWEST', file=sys.stderr)
        return 2
    d, runs, slowest = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bad = 0
    print('bench-host: kernel %s, %d CPUs, load average %s at the start' %
          (os.uname().release, os.cpu_count(),
           open('/proc/loadavg').read().split()[0]))
    both = 0.0
    for prog in ('mmap_page', 'rdpmc'):
        times = []
        for _ in range(runs):
            t, rc = timed(['./' + prog], d)
            times.append(t)
            if rc not in (0, 4):
                bad = 1
        both += statistics.median(times)
        print('bench-host: %s whole program: median %.2f s of %d runs '
              '(min %.2f, max %.2f)%s' %
              (prog, statistics.median(times), runs, min(times), max(times),
               '' if not bad else ', a run FAILED'))
    print('bench-host: both programs: %.2f s (target < %.1f s)' % (both, TARGET))
    each = test_times(d)
    total = sum(t for t, _ in each)
    print('bench-host: mmap_page test by test (one run, on a terminal): '
          '%d tests, %.2f s in the tests' % (len(each), total))
    for t, name in sorted(each, reverse=True)[:slowest]:
        print('bench-host:   %6.1f ms  %s' % (t * 1000, name))
    return bad


if __name__ == '__main__':
    sys.exit(main())
