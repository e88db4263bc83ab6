/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmap_page's cases, each above it the kernel path to the page no other
 * case takes (6.12) and who takes it.  A case's name is its kind, then what
 * is not the default: per task, opened by perf_event_open(), mapped once
 * PROT_READ | PROT_WRITE, the page alone (no data area), sampling
 * PERF_SAMPLE_IP.  The kernel refuses these (EINVAL):
 *  - inherit on every cpu (perf_mmap(): "Don't allow mmap() of inherited
 *    per-task counters"), or with REFRESH (_perf_event_refresh());
 *  - pinned on a group sibling (perf_event_open());
 *  - a clock that is not NMI-safe on a tracepoint, breakpoint or hardware
 *    event (perf_event_set_clock()).
 * Nor REFRESH on cpu-clock or task-clock: it hangs 6.16 and 6.17 (hrtimer).
 * Not a case: munmap of a redirected event's buffer detaches the event
 * (perf_mmap_close()), so no ioctl of its state would reach the page.
 */

/* clang-format off */
/* a second mmap() of the buffer: perf_mmap() only takes rb->mmap_count */
FIXTURE_VARIANT_ADD(page, task_clock_mapped_twice) {
	.kind = K_TASK_CLOCK, .state = S_ENABLED, .flags = A_TWICE,
};

/* PAUSE_OUTPUT on a forward ring: rb_toggle_paused() */
FIXTURE_VARIANT_ADD(page, page_faults_paused_2_pages) {
	.kind = K_PAGE_FAULTS, .state = S_PAUSED, .data_pages = 2,
};

/* PROT_READ: rb_alloc() without RING_BUFFER_WRITABLE, an overwrite ring */
FIXTURE_VARIANT_ADD(page, cpu_clock_read_only) {
	.kind = K_CPU_CLOCK, .state = S_WORKLOAD,
	.data_pages = 1, .flags = A_READ_ONLY,
};

/* perf record --overwrite: perf_output_begin_backward(), overwrite ring */
FIXTURE_VARIANT_ADD(page, page_faults_backward_read_only) {
	.kind = K_PAGE_FAULTS, .state = S_WORKLOAD,
	.data_pages = 2, .flags = A_BACKWARD | A_READ_ONLY,
};

/* write_backward on a writable ring */
FIXTURE_VARIANT_ADD(page, task_clock_write_backward) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD, .flags = A_BACKWARD,
};

/* enable_on_exec and no exec: an event never scheduled */
FIXTURE_VARIANT_ADD(page, task_clock_enable_on_exec) {
	.kind = K_TASK_CLOCK, .state = S_OPENED, .flags = A_EOE,
};

/* enable_on_exec, then _perf_event_enable() before any exec */
FIXTURE_VARIANT_ADD(page, dummy_enable_on_exec_enabled) {
	.kind = K_DUMMY, .state = S_ENABLED, .flags = A_EOE,
};

/* inherit on a cpu: child_total_time_* summed into the page */
FIXTURE_VARIANT_ADD(page, cpu_clock_per_cpu_inherit) {
	.kind = K_CPU_CLOCK, .state = S_WORKLOAD,
	.flags = A_PER_CPU | A_INHERIT,
};

/* _perf_event_reset() of an inherited event */
FIXTURE_VARIANT_ADD(page, context_switches_per_cpu_inherit_reset) {
	.kind = K_CONTEXT_SWITCHES, .state = S_RESET,
	.flags = A_PER_CPU | A_INHERIT,
};

/* use_clockid: perf_event_set_clock() with an NMI-safe clock */
FIXTURE_VARIANT_ADD(page, task_clock_monotonic_raw_clock) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.clockid = CLOCK_MONOTONIC_RAW,
};

/* a clock not NMI-safe (software only), then _perf_event_period() */
FIXTURE_VARIANT_ADD(page, cpu_clock_boottime_clock_period) {
	.kind = K_CPU_CLOCK, .state = S_PERIOD, .clockid = CLOCK_BOOTTIME,
};

/* perf trace --filter, bpftrace /pred/: perf_event_set_filter() */
FIXTURE_VARIANT_ADD(page, tracepoint_filtered) {
	.kind = K_TRACEPOINT, .state = S_FILTERED,
};

/* gdb and rr move a watchpoint: perf_event_modify_attr() */
FIXTURE_VARIANT_ADD(page, breakpoint_modified_monotonic_clock) {
	.kind = K_BREAKPOINT, .state = S_MODIFIED, .clockid = CLOCK_MONOTONIC,
};

/* perf record --filter, rr: __perf_event_overflow() runs a program */
FIXTURE_VARIANT_ADD(page, page_faults_bpf_dropped) {
	.kind = K_PAGE_FAULTS, .state = S_BPF, .data_pages = 1,
};

/* a pinned hardware counter: ctx_pinned_sched_in(), then reset */
FIXTURE_VARIANT_ADD(page, instructions_pinned_reset) {
	.kind = K_INSTRUCTIONS, .state = S_RESET, .flags = A_PINNED,
};

/* pinned software event: ctx_pinned_sched_in() */
FIXTURE_VARIANT_ADD(page, task_clock_pinned_times) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.flags = A_PINNED, .read_format = TIMES,
};

/* a group sibling's own page: group_sched_in() */
FIXTURE_VARIANT_ADD(page, page_faults_group_sibling) {
	.kind = K_PAGE_FAULTS, .state = S_WORKLOAD,
	.origin = O_SIBLING, .read_format = TIMES,
};

/* a sibling disabled, then enabled: group_sched_in() passes it over */
FIXTURE_VARIANT_ADD(page, dummy_group_sibling_disabled) {
	.kind = K_DUMMY, .state = S_DISABLED, .origin = O_SIBLING,
};

/* a hardware sibling on an overwrite ring */
FIXTURE_VARIANT_ADD(page, cycles_group_sibling_read_only) {
	.kind = K_CYCLES, .state = S_WORKLOAD,
	.origin = O_SIBLING, .data_pages = 1, .flags = A_READ_ONLY,
};

/* PERF_FORMAT_GROUP: perf_read_group() */
FIXTURE_VARIANT_ADD(page, task_clock_group_read) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.read_format = PERF_FORMAT_GROUP | TIMES,
};

/* _perf_event_reset() of a group leader read with its group */
FIXTURE_VARIANT_ADD(page, cpu_clock_group_leader_group_read_reset) {
	.kind = K_CPU_CLOCK, .state = S_RESET,
	.origin = O_LEADER, .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID,
};

/* SET_OUTPUT -1: perf_event_set_output(event, NULL) leaves the ring */
FIXTURE_VARIANT_ADD(page, task_clock_set_output_detached) {
	.kind = K_TASK_CLOCK, .state = S_DETACHED, .origin = O_SET_OUTPUT,
};

/* PAPI, async-profiler: _perf_event_refresh() of a software event */
FIXTURE_VARIANT_ADD(page, page_faults_watermark_refresh) {
	.kind = K_PAGE_FAULTS, .state = S_REFRESH, .flags = A_WATERMARK,
};

/* perf record as root: a software event counting the kernel */
FIXTURE_VARIANT_ADD(page, context_switches_kernel_workload) {
	.kind = K_CONTEXT_SWITCHES, .state = S_WORKLOAD, .flags = A_KERNEL,
};

/* perf record as root: cycles counting the kernel */
FIXTURE_VARIANT_ADD(page, cycles_kernel_enabled) {
	.kind = K_CYCLES, .state = S_ENABLED, .flags = A_KERNEL,
};

/* perf record: per task on a cpu, inherited, 128 pages, 4000 Hz */
FIXTURE_VARIANT_ADD(page, task_clock_on_cpu_inherit_128_pages) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.data_pages = 128, .flags = A_ON_CPU | A_INHERIT | A_FREQ,
};

/* perf record --threads: perf_mmap() in another thread */
FIXTURE_VARIANT_ADD(page, task_clock_mapped_by_thread) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.data_pages = 1, .mapper = M_THREAD,
};

/* async-profiler's helper: perf_mmap() in another process */
FIXTURE_VARIANT_ADD(page, task_clock_mapped_by_process) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.data_pages = 1, .mapper = M_PROCESS,
};

/* rr, PAPI, JITs at paranoid 2: perf_mmap() charges RLIMIT_MEMLOCK */
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
