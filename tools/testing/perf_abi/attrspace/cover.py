#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count what mmap_page's case table covers, from the header alone.

  cover.py HEADER                 the design's claim: every allowed pair of
                                  values of two dimensions, and every
                                  kind x state x priv triple, in a case;
                                  no case in a forbidden combination
  cover.py HEADER --ktap FILE     the same over the cases that ran (not
                                  SKIP) in that KTAP log: the pairs and
                                  triples this machine left uncovered

Independent of gen.py and model.py on purpose: it reads the C
initializers, decodes them with its own table of what each field means,
and states the domain and the forbidden combinations itself.  Exit 0
when the claim holds (without --ktap), 1 otherwise.
"""

import itertools
import re
import sys

# The domain, value names as this checker spells them.
DOMAIN = {
    'kind': ['K_CPU_CLOCK', 'K_TASK_CLOCK', 'K_PAGE_FAULTS',
             'K_CONTEXT_SWITCHES', 'K_CPU_MIGRATIONS', 'K_DUMMY',
             'K_TRACEPOINT', 'K_BREAKPOINT', 'K_CYCLES', 'K_INSTRUCTIONS'],
    'state': ['S_OPENED', 'S_ENABLED', 'S_DISABLED', 'S_RESET', 'S_PERIOD',
              'S_REFRESH', 'S_WORKLOAD'],
    'priv': ['PRIV_AS_RUN', 'PRIV_NO_CAPS', 'PRIV_NOBODY'],
    'cpu_wide': ['0', '1'],
    'origin': ['FROM_DIRECT', 'FROM_LEADER', 'FROM_SIBLING', 'FROM_SET_OUTPUT',
               'FROM_FD_OUTPUT', 'FROM_FORK', 'FROM_EXEC'],
    'pages': ['1', '2', '3', '9'],
    'read_only': ['0', '1'],
    'remap': ['M_ONCE', 'M_SECOND', 'M_AGAIN'],
    'enable_on_exec': ['0', '1'],
    'inherit': ['0', '1'],
    'pinned': ['0', '1'],
    'exclusive': ['0', '1'],
    'wakeup': ['W_NONE', 'W_EVENTS', 'W_WATERMARK'],
    'write_backward': ['0', '1'],
    'clock': ['none', 'CLOCK_MONOTONIC', 'CLOCK_MONOTONIC_RAW',
              'CLOCK_REALTIME', 'CLOCK_BOOTTIME', 'CLOCK_TAI'],
    'sample_id_all': ['0', '1'],
    'on_exec': ['none', 'remove_on_exec', 'sigtrap'],
    'sample_type': ['IP', 'IP|TID|TIME', 'IDENTIFIER|IP|READ',
                    'ADDR|CPU|IP|PERIOD'],
    'read_format': ['0', 'TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING', 'ID',
                    'GROUP|ID|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING'],
    'exclude': ['none', 'exclude_idle', 'exclude_guest',
                'exclude_callchain_kernel'],
}
DEFAULTS = {'priv': 'PRIV_AS_RUN', 'cpu_wide': '0', 'origin': 'FROM_DIRECT',
            'pages': '3', 'read_only': '0', 'remap': 'M_ONCE',
            'enable_on_exec': '0', 'inherit': '0', 'pinned': '0',
            'exclusive': '0', 'wakeup': 'W_NONE', 'write_backward': '0',
            'sample_id_all': '0'}
TRIPLE = ('kind', 'state', 'priv')

# Pairs of values no case may hold (and no coverage claim asks for).
FORBIDDEN = [
    (('inherit', '1'), ('cpu_wide', '0')),      # mmap of inherited task event
    (('on_exec', 'sigtrap'), ('cpu_wide', '1')),  # sigtrap needs a task
    (('inherit', '1'), ('on_exec', 'sigtrap')),  # follows from the two above
    (('on_exec', 'remove_on_exec'), ('enable_on_exec', '1')),
    (('on_exec', 'sigtrap'), ('enable_on_exec', '1')),
    (('pinned', '1'), ('origin', 'FROM_SIBLING')),
    (('exclusive', '1'), ('origin', 'FROM_SIBLING')),
    (('inherit', '1'), ('state', 'S_REFRESH')),
    (('inherit', '1'), ('sample_type', 'IDENTIFIER|IP|READ')),
]
# Clocks that are not NMI-safe, on PMUs without PERF_PMU_CAP_NO_NMI.
FORBIDDEN += [(('kind', k), ('clock', c))
              for k in ('K_TRACEPOINT', 'K_BREAKPOINT', 'K_CYCLES',
                        'K_INSTRUCTIONS')
              for c in ('CLOCK_REALTIME', 'CLOCK_BOOTTIME', 'CLOCK_TAI')]


def flags(expr, prefix):
    return '|'.join(sorted(t.strip()[len(prefix):]
                           for t in expr.split('|')))


def decode(fields):
    """The case's value of every dimension, from its initializers."""
    v = dict(DEFAULTS)
    for k in ('kind', 'state', 'priv', 'origin', 'remap', 'wakeup', 'pages'):
        if k in fields:
            v[k] = fields[k]
    for k in ('cpu_wide', 'read_only', 'enable_on_exec', 'inherit',
              'pinned', 'exclusive', 'write_backward', 'sample_id_all'):
        if k in fields:
            v[k] = fields[k]
    v['clock'] = fields.get('clockid', 'none') \
        if fields.get('use_clockid') == '1' else 'none'
    if fields.get('sigtrap') == '1':
        v['on_exec'] = 'sigtrap' if fields.get('remove_on_exec') == '1' \
            else 'sigtrap-alone'
    else:
        v['on_exec'] = 'remove_on_exec' \
            if fields.get('remove_on_exec') == '1' else 'none'
    v['sample_type'] = flags(fields['sample_type'], 'PERF_SAMPLE_') \
        if 'sample_type' in fields else 'IP'
    v['read_format'] = flags(fields['read_format'], 'PERF_FORMAT_') \
        if 'read_format' in fields else '0'
    ex = [k for k in ('exclude_idle', 'exclude_guest',
                      'exclude_callchain_kernel') if fields.get(k) == '1']
    v['exclude'] = '+'.join(ex) or 'none'
    return v


def parse(path):
    text = open(path).read()
    cases = []
    for m in re.finditer(r'FIXTURE_VARIANT_ADD\(page,\s*(\w+)\)\s*\{(.*?)\};',
                         text, re.S):
        body = re.sub(r'\s+', ' ', m.group(2))
        fields = dict((k, val.strip()) for k, val in
                      re.findall(r'\.(\w+)\s*=\s*([^,]+),', body))
        cases.append((m.group(1), decode(fields)))
    return cases


def ran_cases(ktap):
    """Names of the page cases that passed or failed (ran) in a log."""
    ran = set()
    for line in open(ktap, errors='replace'):
        m = re.search(r'\bok \d+ page\.(\w+)\.\w+\s*(#.*)?$', line)
        if m and not (m.group(2) or '').lstrip('# ').startswith('SKIP'):
            ran.add(m.group(1))
    return ran


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and
                                       sys.argv[2] != '--ktap'):
        sys.exit(__doc__)
    cases = parse(sys.argv[1])
    bad = 0
    names = [n for n, _ in cases]
    if len(set(names)) != len(names):
        print('two cases share a name')
        bad += 1
    forbidden = set()
    for a, b in FORBIDDEN:
        forbidden.add((a, b))
        forbidden.add((b, a))
    for n, v in cases:
        for d, x in v.items():
            if x not in DOMAIN[d]:
                print('%s: %s = %s is outside the domain' % (n, d, x))
                bad += 1
        for (d1, x1), (d2, x2) in FORBIDDEN:
            if v[d1] == x1 and v[d2] == x2:
                print('%s: forbidden %s=%s with %s=%s' % (n, d1, x1, d2, x2))
                bad += 1
    if len(sys.argv) == 4:
        ran = ran_cases(sys.argv[3])
        total = len(cases)
        cases = [(n, v) for n, v in cases if n in ran]
        print('%d of the %d cases ran (not SKIP) in %s' %
              (len(cases), total, sys.argv[3].rsplit('/', 1)[-1]))
    dims = sorted(DOMAIN)
    need = have = 0
    missing = []
    for d1, d2 in itertools.combinations(dims, 2):
        for x1 in DOMAIN[d1]:
            for x2 in DOMAIN[d2]:
                if ((d1, x1), (d2, x2)) in forbidden:
                    continue
                need += 1
                if any(v[d1] == x1 and v[d2] == x2 for _, v in cases):
                    have += 1
                else:
                    missing.append('%s=%s %s=%s' % (d1, x1, d2, x2))
    tneed = thave = 0
    for combo in itertools.product(*(DOMAIN[d] for d in TRIPLE)):
        tneed += 1
        if any(all(v[d] == x for d, x in zip(TRIPLE, combo))
               for _, v in cases):
            thave += 1
        else:
            missing.append(' '.join('%s=%s' % dx
                                    for dx in zip(TRIPLE, combo)))
    print('%d cases, %d dimensions; pairs %d/%d covered, %s triples '
          '%d/%d covered; %d forbidden pairs' %
          (len(cases), len(dims), have, need, ' x '.join(TRIPLE), thave,
           tneed, len(FORBIDDEN)))
    for m in missing:
        print('uncovered: %s' % m)
    if len(sys.argv) == 4:
        return 0
    return 1 if bad or missing else 0


if __name__ == '__main__':
    sys.exit(main())
