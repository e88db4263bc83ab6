#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Verdict flips over repeated runs of the same suite on the same kernel.

  flips.py RUN.ktap...   (one runner KTAP per run, in run order)

Prints every test whose verdict was not the same in every run, with the
runs of each verdict, then one line "N runs, N tests, N flips, N FAIL
verdicts".  Exit 1 when a verdict flipped, else 0.  Parsing is ktap.py's.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ktap  # noqa: E402


def main(paths):
    if not paths:
        sys.stderr.write('usage: flips.py RUN.ktap...\n')
        return 2
    seen = {}
    order = []
    fails = 0
    for i, path in enumerate(paths, 1):
        try:
            with open(path) as f:
                parsed = ktap.parse(f.read())
        except OSError as e:
            sys.stderr.write('flips.py: %s\n' % e)
            return 2
        v = ktap._verdicts(parsed)
        if parsed['bail'] or not parsed['programs']:
            v['(run)'] = 'fail'
        for key, verdict in v.items():
            if key not in seen:
                seen[key] = {}
                order.append(key)
            seen[key].setdefault(verdict, []).append(i)
            fails += verdict == 'fail'
    n = len(paths)
    flips = []
    for key in order:
        runs = seen[key]
        if len(runs) > 1 or sum(len(r) for r in runs.values()) != n:
            flips.append(key)
            parts = []
            for verdict, idx in sorted(runs.items()):
                shown = ','.join(str(i) for i in idx[:10])
                parts.append('%s x%d (runs %s%s)' % (
                    verdict, len(idx), shown, ',...' if len(idx) > 10 else ''))
            missing = n - sum(len(r) for r in runs.values())
            if missing:
                parts.append('absent x%d' % missing)
            print('flip  %s: %s' % (key, ', '.join(parts)))
    print('%d runs, %d tests, %d flips, %d FAIL verdicts'
          % (n, len(order), len(flips), fails))
    return 1 if flips else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
