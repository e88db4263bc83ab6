// SPDX-License-Identifier: GPL-2.0
/*
 * User access off (x86 rdpmc 0, arm64 and riscv perf_user_access 0): a
 * mapped hardware event's page offers no user read (uapi: the counter is
 * read only "if (pc->cap_user_rdpmc && index)"), and the task that maps
 * it traps when it reads a counter anyway (counter 0, which every PMU
 * has) rather than reading a value: x86 sets CR4.PCE per mm, arm64 opens
 * EL0 access per task (armv8pmu_start()), riscv per counter (scounteren).
 * The test needs the knobs off as the machine has them, and holds them
 * for its run so that no run of rdpmc turns them on meanwhile.
 */
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "user_page.h"

#define NEED_OFF "needs user access off, a PMU, and " UP_PARANOID_TASK

TEST_SIGNAL(no_user_read_and_reads_trap, UP_TRAP_SIGNAL)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_INSTRUCTIONS,
		.exclude_kernel = 1,
		.exclude_hv = 1,
#ifdef __aarch64__
		.config1 = 0x2, /* arm_pmuv3.c format "rdpmc": config1:1 */
#endif
	};
	uint64_t snap[UP_HDR_LEN / 8];
	int fd, i;
	void *pg;

	if (!UP_HAVE_HW_READ || !up_n_knobs || up_user_access_on())
		SKIP(return, NEED_OFF);
	for (i = 0; i < up_n_knobs; i++)
		TH_LOG("%s: %d", up_knobs[i].path, up_knobs[i].start);
	fd = up_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && up_refused(errno))
		SKIP(return, NEED_OFF);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %m");
	pg = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("mmap: %m");
	ASSERT_EQ(0, up_snapshot(pg, snap));
	ASSERT_FALSE(up_pc(snap)->cap_user_rdpmc && up_pc(snap)->index)
	TH_LOG("cap_user_rdpmc with index %u", up_pc(snap)->index);
	TH_LOG("counter 0 read 0x%llx", (unsigned long long)up_hw_counter(0));
}

int main(int argc, char **argv)
{
	up_knobs_lock(LOCK_SH);
	return test_harness_run(argc, argv);
}
