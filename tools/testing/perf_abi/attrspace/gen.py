#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Generate mmap_page's case table: a covering design over model.DIMS.

  gen.py [OUT]      write the variants header (default: stdout)

Every pair of values of any two dimensions that some accepted case can
hold is in a case (t = 2), and every triple of kind x state x priv
(t = 3); no case matches a constraint of model.CONSTRAINTS.  The greedy
construction (triples as seeds, then one value at a time, the one that
covers most uncovered pairs, ties to the first) is deterministic: the
same model gives the same table, byte for byte.
"""

import itertools
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

NAMES = [d for d, _ in model.DIMS]
VALS = [[t for t, _ in v] for _, v in model.DIMS]
IDX = {d: i for i, d in enumerate(NAMES)}
CONS = [[(IDX[d], {VALS[IDX[d]].index(t) for t in toks})
         for d, toks in c.items()] for _, c in model.CONSTRAINTS]


def allowed(row):
    """No constraint matched by the values assigned so far (None: free)."""
    for c in CONS:
        if all(row[d] is not None and row[d] in vs for d, vs in c):
            return False
    return True


def completable(row):
    """True when the free dimensions of row can be filled allowedly."""
    if not allowed(row):
        return False
    for d, v in enumerate(row):
        if v is None:
            for x in range(len(VALS[d])):
                row[d] = x
                if completable(row):
                    row[d] = None
                    return True
            row[d] = None
            return False
    return True


def feasible_pairs():
    out = set()
    for a, b in itertools.combinations(range(len(NAMES)), 2):
        for x in range(len(VALS[a])):
            for y in range(len(VALS[b])):
                row = [None] * len(NAMES)
                row[a], row[b] = x, y
                if completable(row):
                    out.add((a, x, b, y))
    return out


def row_pairs(row):
    return {(a, row[a], b, row[b])
            for a, b in itertools.combinations(range(len(NAMES)), 2)}


# A case's name fits a checkpatch line: "FIXTURE_VARIANT_ADD(page, NAME) {"
NAME_MAX = 100 - len('FIXTURE_VARIANT_ADD(page, ') - len(') {')


def name_len(row):
    return len(name([x or 0 for x in row]))


def fill(row, todo):
    """Assign the free dimensions of row, each to the value covering most
    pairs of todo with the values assigned so far, within NAME_MAX."""
    while None in row:
        best = None
        for d, v in enumerate(row):
            if v is not None:
                continue
            for x in range(len(VALS[d])):
                row[d] = x
                if x and name_len(row) > NAME_MAX:
                    row[d] = None
                    continue
                if completable(row):
                    gain = sum(1 for e, w in enumerate(row)
                               if w is not None and e != d and
                               ((min(d, e), row[min(d, e)],
                                 max(d, e), row[max(d, e)]) in todo))
                    if best is None or gain > best[0]:
                        best = (gain, d, x)
                row[d] = None
        row[best[1]] = best[2]
    return row


def generate():
    todo = feasible_pairs()
    rows = []
    t = [IDX[d] for d in model.TRIPLE]
    for combo in itertools.product(*(range(len(VALS[d])) for d in t)):
        row = [None] * len(NAMES)
        for d, x in zip(t, combo):
            row[d] = x
        if not completable(row):
            continue
        rows.append(fill(row, todo))
        todo -= row_pairs(row)
    while todo:
        a, x, b, y = min(todo)
        row = [None] * len(NAMES)
        row[a], row[b] = x, y
        rows.append(fill(row, todo))
        todo -= row_pairs(row)
    return thin(rows)


def thin(rows):
    """Set values back to the default wherever every pair they cover is
    covered by another case too: shorter names, the same coverage."""
    need = feasible_pairs()
    count = {}
    for row in rows:
        for p in row_pairs(row):
            count[p] = count.get(p, 0) + 1
    fixed = {IDX[d] for d in model.TRIPLE}
    for row in rows:
        for d in reversed(range(len(NAMES))):
            if d in fixed or not row[d]:
                continue
            old = row_pairs(row)
            x, row[d] = row[d], 0
            new = row_pairs(row)
            lost = [p for p in old - new if p in need and count[p] < 2]
            if lost or not allowed(row):
                row[d] = x
                continue
            for p in old - new:
                count[p] -= 1
            for p in new - old:
                count[p] = count.get(p, 0) + 1
    return rows


def name(row):
    toks = [VALS[0][row[0]], VALS[1][row[1]]]
    toks += [VALS[d][row[d]] for d in range(2, len(NAMES)) if row[d]]
    return '_'.join(t for t in toks if t)


def emit(rows, out):
    w = out.write
    w('/* SPDX-License-Identifier: GPL-2.0 */\n')
    w('/*\n * mmap_page\'s cases: a covering design over the attr space, '
      'as data.\n *\n')
    w(' * Generated by tools/testing/perf_abi/attrspace/gen.py; do not '
      'edit.\n')
    w(' * %d cases.  Every pair of values of any two of the %d dimensions\n'
      % (len(rows), len(NAMES)))
    w(' * is in a case, and every triple of %s; a case\'s\n'
      % ' x '.join(model.TRIPLE))
    w(' * name is its kind, its state and its values that are not the '
      'default.\n *\n')
    w(' * Left out, as every kernel refuses them:\n')
    for reason, c in model.CONSTRAINTS:
        what = ' with '.join('%s=%s' % (d, '|'.join(sorted(v)))
                             for d, v in c.items())
        w(' * - %s:\n' % what)
        for line in textwrap.wrap(reason, 72):
            w(' *   %s\n' % line)
    for note in model.DOMAIN_NOTES:
        for i, line in enumerate(textwrap.wrap(note, 72)):
            w(' * %s %s\n' % ('-' if not i else ' ', line))
    w(' */\n\n/* clang-format off */\n')
    for row in rows:
        w('FIXTURE_VARIANT_ADD(page, %s) {\n' % name(row))
        for d, x in enumerate(row):
            for line in model.DIMS[d][1][x][1]:
                w('\t%s\n' % line)
        w('};\n\n')
    w('/* clang-format on */\n')


def main():
    rows = generate()
    names = [name(r) for r in rows]
    assert len(set(names)) == len(names), 'two cases share a name'
    if len(sys.argv) > 1:
        with open(sys.argv[1], 'w') as f:
            emit(rows, f)
    else:
        emit(rows, sys.stdout)


if __name__ == '__main__':
    main()
