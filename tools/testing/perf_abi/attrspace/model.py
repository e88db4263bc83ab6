# SPDX-License-Identifier: GPL-2.0
"""The attr space of mmap_page: dimensions, values, constraints.

Each dimension is (name, [(token, C initializer lines)]); the first value
is the default: it adds nothing to a case's name or initializer.  A
constraint is a combination that every kernel refuses, with the reason
(the generator never emits it; cover.py does not require its pairs).
"""

KINDS = ['cpu_clock', 'task_clock', 'page_faults', 'ctx_switches',
         'migrations', 'dummy', 'tracepoint', 'breakpoint', 'cycles',
         'instructions']
KIND_ENUM = ['K_CPU_CLOCK', 'K_TASK_CLOCK', 'K_PAGE_FAULTS',
             'K_CONTEXT_SWITCHES', 'K_CPU_MIGRATIONS', 'K_DUMMY',
             'K_TRACEPOINT', 'K_BREAKPOINT', 'K_CYCLES', 'K_INSTRUCTIONS']
STATES = ['opened', 'enabled', 'disabled', 'reset', 'period', 'refresh',
          'workload']


def _flag(field):
    return ['.%s = 1,' % field]


DIMS = [
    ('kind', [(k, ['.kind = %s,' % e]) for k, e in zip(KINDS, KIND_ENUM)]),
    ('state', [(s, ['.state = S_%s,' % s.upper()]) for s in STATES]),
    ('priv', [('as_run', []), ('nocap', ['.priv = PRIV_NO_CAPS,']),
              ('nobody', ['.priv = PRIV_NOBODY,'])]),
    ('scope', [('task', []), ('cpu', ['.cpu_wide = 1,'])]),
    ('origin', [('direct', []),
                ('lead', ['.origin = FROM_LEADER,']),
                ('sib', ['.origin = FROM_SIBLING,']),
                ('setout', ['.origin = FROM_SET_OUTPUT,']),
                ('fdout', ['.origin = FROM_FD_OUTPUT,']),
                ('fork', ['.origin = FROM_FORK,']),
                ('exec', ['.origin = FROM_EXEC,'])]),
    ('pages', [('p3', []), ('p1', ['.pages = 1,']),
               ('p2', ['.pages = 2,']), ('p9', ['.pages = 9,'])]),
    ('prot', [('rw', []), ('ro', _flag('read_only'))]),
    ('map', [('mm1', []), ('mm2', ['.remap = M_SECOND,']),
             ('remap', ['.remap = M_AGAIN,'])]),
    ('enable_on_exec', [('', []), ('eoe', _flag('enable_on_exec'))]),
    ('inherit', [('', []), ('inh', _flag('inherit'))]),
    ('pinned', [('', []), ('pin', _flag('pinned'))]),
    ('exclusive', [('', []), ('excl', _flag('exclusive'))]),
    ('wakeup', [('', []), ('wev', ['.wakeup = W_EVENTS,']),
                ('wm', ['.wakeup = W_WATERMARK,'])]),
    ('write_backward', [('', []), ('bwd', _flag('write_backward'))]),
    ('clock', [('', []),
               ('mono', ['.use_clockid = 1,', '.clockid = CLOCK_MONOTONIC,']),
               ('raw', ['.use_clockid = 1,',
                        '.clockid = CLOCK_MONOTONIC_RAW,']),
               ('real', ['.use_clockid = 1,', '.clockid = CLOCK_REALTIME,']),
               ('boot', ['.use_clockid = 1,', '.clockid = CLOCK_BOOTTIME,']),
               ('tai', ['.use_clockid = 1,', '.clockid = CLOCK_TAI,'])]),
    ('sample_id_all', [('', []), ('sia', _flag('sample_id_all'))]),
    ('on_exec', [('', []), ('rmx', _flag('remove_on_exec')),
                 ('sigtrap', _flag('remove_on_exec') + _flag('sigtrap'))]),
    ('sample_type', [('', []),
                     ('ttime', ['.sample_type = PERF_SAMPLE_IP | '
                                'PERF_SAMPLE_TID | PERF_SAMPLE_TIME,']),
                     ('sread', ['.sample_type = PERF_SAMPLE_IP | '
                                'PERF_SAMPLE_READ |',
                                '\tPERF_SAMPLE_IDENTIFIER,']),
                     ('saddr', ['.sample_type = PERF_SAMPLE_IP | '
                                'PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |',
                                '\tPERF_SAMPLE_PERIOD,'])]),
    ('read_format', [('', []),
                     ('times', ['.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |',
                                '\tPERF_FORMAT_TOTAL_TIME_RUNNING,']),
                     ('id', ['.read_format = PERF_FORMAT_ID,']),
                     ('group', ['.read_format = PERF_FORMAT_GROUP | '
                                'PERF_FORMAT_ID |',
                                '\tPERF_FORMAT_TOTAL_TIME_ENABLED | '
                                'PERF_FORMAT_TOTAL_TIME_RUNNING,'])]),
    ('exclude', [('', []), ('xidle', _flag('exclude_idle')),
                 ('xguest', _flag('exclude_guest')),
                 ('xcc', _flag('exclude_callchain_kernel'))]),
]

# The dimensions every triple of whose values is covered (t = 3).
TRIPLE = ('kind', 'state', 'priv')

# (reason, {dimension: set of tokens}): a case matching every entry is
# refused by every kernel, so it is no case of the design.
CONSTRAINTS = [
    ('perf_event_set_clock(): a clock that is not NMI-safe needs a PMU with '
     'PERF_PMU_CAP_NO_NMI (EINVAL): the software PMUs have it, the '
     'tracepoint and breakpoint PMUs never, hardware PMUs not where they '
     'take NMIs (x86)',
     {'kind': {'tracepoint', 'breakpoint', 'cycles', 'instructions'},
      'clock': {'real', 'boot', 'tai'}}),
    ('perf_mmap(): "Don\'t allow mmap() of inherited per-task counters" '
     '(EINVAL)', {'inherit': {'inh'}, 'scope': {'task'}}),
    ('perf_event_alloc(): sigtrap "Requires a task" (EINVAL)',
     {'on_exec': {'sigtrap'}, 'scope': {'cpu'}}),
    ('perf_copy_attr(): remove_on_exec with enable_on_exec (EINVAL); '
     'sigtrap needs remove_on_exec, so the sigtrap value sets both',
     {'on_exec': {'rmx', 'sigtrap'}, 'enable_on_exec': {'eoe'}}),
    ('perf_event_open(): "Only a group leader can be exclusive or pinned" '
     '(EINVAL)', {'pinned': {'pin'}, 'origin': {'sib'}}),
    ('perf_event_open(): "Only a group leader can be exclusive or pinned" '
     '(EINVAL)', {'exclusive': {'excl'}, 'origin': {'sib'}}),
    ('_perf_event_refresh(): "not supported on inherited events" (EINVAL)',
     {'inherit': {'inh'}, 'state': {'refresh'}}),
    ('PERF_SAMPLE_READ with inherit: EINVAL before 6.12, and since without '
     'PERF_SAMPLE_TID (perf_event_alloc())',
     {'inherit': {'inh'}, 'sample_type': {'sread'}}),
]

# Value domains the design leaves out, with the reason.
DOMAIN_NOTES = [
    'pages: 1 + 2^n only (1, 2, 3, 9): perf_mmap() refuses other sizes '
    '(EINVAL) on every kernel',
    'exclude_kernel and exclude_hv are always set: a user-only event opens '
    'at perf_event_paranoid 2 without privileges',
    'every kind samples (sample_period): PERIOD and REFRESH need a '
    'sampling event',
]
