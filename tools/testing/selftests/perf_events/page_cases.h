/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cases of mmap_page.  A case is named by its event, then by what it
 * changes from the default: an event of the calling task opened by
 * perf_event_open(), mapped PROT_READ | PROT_WRITE by that task, with no
 * data pages, sampling PERF_SAMPLE_IP.  The comment above each case names
 * the path to the page that only this case takes.
 *
 * The kernel refuses inherit on every CPU (perf_mmap()) and with REFRESH
 * (_perf_event_refresh()), and a pinned group sibling (perf_event_open()),
 * so no case combines them.  REFRESH is not used on cpu-clock or
 * task-clock, which hangs 6.16 and 6.17 in their hrtimer.
 */

/* enable_on_exec and no exec: the page of an event never scheduled in */
FIXTURE_VARIANT_ADD(page, task_clock_enable_on_exec) {
	.kind = K_TASK_CLOCK, .state = S_OPENED, .flags = A_EOE,
};

/* perf record --overwrite: a read-only ring written backward */
FIXTURE_VARIANT_ADD(page, page_faults_backward_read_only) {
	.kind = K_PAGE_FAULTS, .state = S_WORKLOAD, .data_pages = 2,
	.flags = A_BACKWARD | A_READ_ONLY,
};

/* perf record's default: per task on a CPU, inherited, 128 pages, 4000 Hz */
FIXTURE_VARIANT_ADD(page, task_clock_on_cpu_inherit_128_pages) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD, .data_pages = 128,
	.flags = A_ON_CPU | A_INHERIT | A_FREQ,
};

/* use_clockid: perf_event_set_clock() */
FIXTURE_VARIANT_ADD(page, task_clock_monotonic_raw_clock) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.clockid = CLOCK_MONOTONIC_RAW,
};

/* perf trace --filter: perf_event_set_filter() on a tracepoint */
FIXTURE_VARIANT_ADD(page, tracepoint_filtered) {
	.kind = K_TRACEPOINT, .state = S_FILTERED,
	.read_format = PERF_FORMAT_ID,
};

/* perf record --filter, rr: a BPF program drops each sample */
FIXTURE_VARIANT_ADD(page, page_faults_bpf_dropped) {
	.kind = K_PAGE_FAULTS, .state = S_BPF, .data_pages = 1,
};

/* a pinned hardware event (ctx_pinned_sched_in()), then RESET */
FIXTURE_VARIANT_ADD(page, instructions_pinned_reset) {
	.kind = K_INSTRUCTIONS, .state = S_RESET, .flags = A_PINNED,
};

/* a pinned software event, the one pinned case a PMU-less machine runs */
FIXTURE_VARIANT_ADD(page, task_clock_pinned_times) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD, .flags = A_PINNED,
	.read_format = TIMES,
};

/* a group sibling with a page of its own: group_sched_in() */
FIXTURE_VARIANT_ADD(page, page_faults_group_sibling) {
	.kind = K_PAGE_FAULTS, .state = S_WORKLOAD, .origin = O_SIBLING,
	.read_format = TIMES,
};

/* PERF_FORMAT_GROUP: perf_read_group() */
FIXTURE_VARIANT_ADD(page, task_clock_group_read) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD,
	.read_format = PERF_FORMAT_GROUP | TIMES,
};

/* SET_OUTPUT to a mapped ring, then SET_OUTPUT -1 */
FIXTURE_VARIANT_ADD(page, task_clock_set_output_detached) {
	.kind = K_TASK_CLOCK, .state = S_DETACHED, .origin = O_SET_OUTPUT,
};

/* PAPI: _perf_event_refresh() of a software event */
FIXTURE_VARIANT_ADD(page, page_faults_watermark_refresh) {
	.kind = K_PAGE_FAULTS, .state = S_REFRESH, .flags = A_WATERMARK,
};

/* perf record --threads: perf_mmap() from another thread */
FIXTURE_VARIANT_ADD(page, task_clock_mapped_by_thread) {
	.kind = K_TASK_CLOCK, .state = S_WORKLOAD, .data_pages = 1,
	.mapper = M_THREAD,
};

/*
 * CAP_PERFMON alone, counting the kernel: perf_allow_kernel(), and
 * perf_mmap()'s RLIMIT_MEMLOCK charge without CAP_IPC_LOCK
 */
FIXTURE_VARIANT_ADD(page, context_switches_kernel_perfmon_only) {
	.kind = K_CONTEXT_SWITCHES, .state = S_WORKLOAD,
	.flags = A_KERNEL | A_PERFMON,
};
