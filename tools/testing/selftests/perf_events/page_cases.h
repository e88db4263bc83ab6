/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmap_page's cases: each a configuration of an event whose page is checked.
 * A case's name is its kind, then what is not the default: per task, opened
 * by perf_event_open(), mapped once with PROT_READ | PROT_WRITE, the page
 * alone (no data area, as a self-monitoring task maps it), sampling
 * PERF_SAMPLE_IP.  Every kind, state, origin and attr bit the
 * fixture knows is in a case; the kernel refuses these combinations (EINVAL),
 * so no case has them:
 *  - inherit on every cpu (perf_mmap(): "Don't allow mmap() of inherited
 *    per-task counters"), or with REFRESH (_perf_event_refresh());
 *  - pinned or exclusive on a group sibling (perf_event_open());
 *  - a clock that is not NMI-safe on a tracepoint, breakpoint or hardware
 *    event (perf_event_set_clock()).
 * Nor REFRESH on cpu-clock or task-clock: it hangs 6.16 and 6.17 kernels
 * (an hrtimer event re-armed from its own overflow).
 * Not a case: munmap of the buffer a redirected (set_output, fd_output)
 * event writes: it detaches the event from the buffer (perf_mmap_close()),
 * so the state's ioctls would never reach the page checked.
 */

/* clang-format off */
/* a fresh page: nothing done but perf_event_open and mmap */
FIXTURE_VARIANT_ADD(page, cpu_clock_opened) {
	.kind = K_CPU_CLOCK, .state = S_OPENED,
};

FIXTURE_VARIANT_ADD(page, task_clock_enabled) {
	.kind = K_TASK_CLOCK, .state = S_ENABLED,
};

/* the page rewritten by RESET */
FIXTURE_VARIANT_ADD(page, task_clock_reset) {
	.kind = K_TASK_CLOCK, .state = S_RESET,
};

/* a second mapping of the same buffer */
FIXTURE_VARIANT_ADD(page, task_clock_mapped_twice) {
	.kind = K_TASK_CLOCK, .state = S_ENABLED,
	.remap = R_TWICE,
};

/* perf record --overwrite pauses around each read (evlist.c) */
FIXTURE_VARIANT_ADD(page, page_faults_paused_2_pages) {
	.kind = K_PAGE_FAULTS, .state = S_PAUSED,
	.data_pages = 2,
};

FIXTURE_VARIANT_ADD(page, context_switches_disabled) {
	.kind = K_CONTEXT_SWITCHES, .state = S_DISABLED,
};

/* munmap, then a new buffer */
FIXTURE_VARIANT_ADD(page, dummy_enabled_mapped_again) {
	.kind = K_DUMMY, .state = S_ENABLED,
	.remap = R_AGAIN,
};

FIXTURE_VARIANT_ADD(page, task_clock_period_8_pages) {
	.kind = K_TASK_CLOCK, .state = S_PERIOD,
	.data_pages = 8,
};

/* PROT_READ: an overwrite buffer, data_tail not read */
FIXTURE_VARIANT_ADD(page, cpu_clock_read_only) {
	.kind = K_CPU_CLOCK, .state = S_WORKLOAD,
	.data_pages = 1, .flags = A_READ_ONLY,
};

/* the buffer of perf record --overwrite */
FIXTURE_VARIANT_ADD(page, page_faults_backward_read_only) {
	.kind = K_PAGE_FAULTS, .state = S_WORKLOAD,
	.data_pages = 2, .flags = A_BACKWARD | A_READ_ONLY,
};

FIXTURE_VARIANT_ADD(page, task_clock_write_backward) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.flags = A_BACKWARD,
};

FIXTURE_VARIANT_ADD(page, task_clock_enable_on_exec) {
	.kind = K_TASK_CLOCK, .state = S_OPENED,
	.flags = A_EOE,
};

FIXTURE_VARIANT_ADD(page, dummy_enable_on_exec_enabled) {
	.kind = K_DUMMY, .state = S_ENABLED,
	.flags = A_EOE,
};

/* inherit: per cpu, as perf_mmap() refuses it per task */
FIXTURE_VARIANT_ADD(page, cpu_clock_per_cpu_inherit) {
	.kind = K_CPU_CLOCK, .state = S_WORKLOAD,
	.flags = A_PER_CPU | A_INHERIT,
};

FIXTURE_VARIANT_ADD(page, context_switches_per_cpu_inherit_reset) {
	.kind = K_CONTEXT_SWITCHES, .state = S_RESET,
	.flags = A_PER_CPU | A_INHERIT,
};

/* use_clockid */
FIXTURE_VARIANT_ADD(page, task_clock_monotonic_raw_clock) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.clockid = CLOCK_MONOTONIC_RAW,
};

/* a clock that is not NMI-safe: software events only */
FIXTURE_VARIANT_ADD(page, cpu_clock_boottime_clock_period) {
	.kind = K_CPU_CLOCK, .state = S_PERIOD,
	.clockid = CLOCK_BOOTTIME,
};

/* perf trace --filter, bpftrace /pred/ on a tracepoint */
FIXTURE_VARIANT_ADD(page, tracepoint_filtered) {
	.kind = K_TRACEPOINT, .state = S_FILTERED,
};

/* gdb and rr move a watchpoint: MODIFY_ATTRIBUTES */
FIXTURE_VARIANT_ADD(page, breakpoint_modified_monotonic_clock) {
	.kind = K_BREAKPOINT, .state = S_MODIFIED,
	.clockid = CLOCK_MONOTONIC,
};

FIXTURE_VARIANT_ADD(page, cycles_workload) {
	.kind = K_CYCLES, .state = S_WORKLOAD,
};

FIXTURE_VARIANT_ADD(page, instructions_pinned_reset) {
	.kind = K_INSTRUCTIONS, .state = S_RESET,
	.flags = A_PINNED,
};

FIXTURE_VARIANT_ADD(page, task_clock_pinned_times) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.flags = A_PINNED, .read_format = TIMES,
};

FIXTURE_VARIANT_ADD(page, cpu_clock_exclusive_enabled) {
	.kind = K_CPU_CLOCK, .state = S_ENABLED,
	.flags = A_EXCLUSIVE,
};

FIXTURE_VARIANT_ADD(page, task_clock_group_leader) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.origin = O_LEADER, .read_format = TIMES,
};

FIXTURE_VARIANT_ADD(page, page_faults_group_sibling) {
	.kind = K_PAGE_FAULTS, .state = S_WORKLOAD,
	.origin = O_SIBLING, .read_format = TIMES,
};

FIXTURE_VARIANT_ADD(page, dummy_group_sibling_disabled) {
	.kind = K_DUMMY, .state = S_DISABLED,
	.origin = O_SIBLING,
};

FIXTURE_VARIANT_ADD(page, cycles_group_sibling_read_only) {
	.kind = K_CYCLES, .state = S_WORKLOAD,
	.origin = O_SIBLING, .data_pages = 1, .flags = A_READ_ONLY,
};

/* PERF_FORMAT_GROUP: read() gives the group */
FIXTURE_VARIANT_ADD(page, task_clock_group_read) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.read_format = PERF_FORMAT_GROUP | TIMES,
};

FIXTURE_VARIANT_ADD(page, cpu_clock_group_leader_group_read_reset) {
	.kind = K_CPU_CLOCK, .state = S_RESET,
	.origin = O_LEADER, .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID,
};

/* the page of the dummy whose buffer the event writes, then leaves */
FIXTURE_VARIANT_ADD(page, task_clock_set_output_detached) {
	.kind = K_TASK_CLOCK, .state = S_DETACHED,
	.origin = O_SET_OUTPUT,
};

FIXTURE_VARIANT_ADD(page, context_switches_fd_output_period) {
	.kind = K_CONTEXT_SWITCHES, .state = S_PERIOD,
	.origin = O_FD_OUTPUT,
};

FIXTURE_VARIANT_ADD(page, task_clock_wakeup_events_2_pages) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.data_pages = 2, .flags = A_WAKEUP,
};

FIXTURE_VARIANT_ADD(page, page_faults_watermark_refresh) {
	.kind = K_PAGE_FAULTS, .state = S_REFRESH,
	.flags = A_WATERMARK,
};

FIXTURE_VARIANT_ADD(page, cpu_clock_sample_read_sample_id_all) {
	.kind = K_CPU_CLOCK, .state = S_WORKLOAD,
	.flags = A_SAMPLE_ID_ALL,
	.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ | PERF_SAMPLE_TIME,
	.read_format = PERF_FORMAT_ID | TIMES,
};

FIXTURE_VARIANT_ADD(page, instructions_per_cpu_period) {
	.kind = K_INSTRUCTIONS, .state = S_PERIOD,
	.flags = A_PER_CPU,
};

/*
 * What the programs that map these pages do (tools/testing/perf_abi/
 * attrspace/SURVEY.md): each case names one.
 */
/* perf record's default as root: cycles:P counts the kernel (evlist.c) */
FIXTURE_VARIANT_ADD(page, context_switches_kernel_workload) {
	.kind = K_CONTEXT_SWITCHES, .state = S_WORKLOAD,
	.flags = A_KERNEL,
};

FIXTURE_VARIANT_ADD(page, cycles_kernel_enabled) {
	.kind = K_CYCLES, .state = S_ENABLED,
	.flags = A_KERNEL,
};

/* perf record/top sample at 4000 Hz (builtin-record.c), bpftrace hz: */
FIXTURE_VARIANT_ADD(page, cpu_clock_frequency_workload) {
	.kind = K_CPU_CLOCK, .state = S_WORKLOAD,
	.flags = A_FREQ,
};

/* perf record: per task on each cpu, inherited, 128 pages (evlist.c) */
FIXTURE_VARIANT_ADD(page, task_clock_on_cpu_inherit_128_pages) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.data_pages = 128, .flags = A_ON_CPU | A_INHERIT | A_FREQ,
};

/*
 * perf_mmap() runs as the mapper, not the measured task: perf record
 * --threads maps from worker threads; async-profiler's profiler thread
 * maps the events of other threads, whose fds a helper process may hold.
 */
FIXTURE_VARIANT_ADD(page, task_clock_mapped_by_thread) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.data_pages = 1, .mapper = M_THREAD,
};

FIXTURE_VARIANT_ADD(page, task_clock_mapped_by_process) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.data_pages = 1, .mapper = M_PROCESS,
};

/*
 * A task with no capabilities: rr, PAPI and JITs map their own events so
 * at perf_event_paranoid 2; perf_mmap() then charges the buffer to
 * perf_event_mlock_kb and RLIMIT_MEMLOCK (CAP_IPC_LOCK skips the check).
 */
FIXTURE_VARIANT_ADD(page, task_clock_no_capabilities) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.data_pages = 2, .privs = P_NONE,
};

/* CAP_PERFMON alone counts the kernel: perf_allow_kernel() */
FIXTURE_VARIANT_ADD(page, context_switches_kernel_perfmon_only) {
	.kind = K_CONTEXT_SWITCHES, .state = S_WORKLOAD,
	.flags = A_KERNEL, .privs = P_PERFMON,
};

/* clang-format on */
