// SPDX-License-Identifier: GPL-2.0
/*
 * How much a self-read saves: median nanoseconds per read of one counter
 * through read() and through the user page (up_self_read()), over 10^6
 * reads of each, in batches of 1000 timed with CLOCK_MONOTONIC.  Prints a
 * small table as KTAP comments, and a SKIP where no hardware event opens or
 * the page offers no user read.  Not a pass/fail test.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>

#include "user_page.h"

#define BATCH 1000
#define BATCHES 1000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median over BATCHES of the mean ns per read in a batch; < 0 on error. */
static double median_ns(int fd, const void *pg, bool self)
{
	static double per[BATCHES];
	struct up_count c;
	uint64_t v, t0;
	int b, i;

	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < BATCH; i++) {
			if (self) {
				if (up_self_read(pg, &c))
					return -1;
			} else if (read(fd, &v, sizeof(v)) != sizeof(v)) {
				return -1;
			}
		}
		per[b] = (double)(now_ns() - t0) / BATCH;
	}
	qsort(per, BATCHES, sizeof(per[0]), cmp);
	return per[BATCHES / 2];
}

int main(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.exclude_kernel = 1,
		.exclude_hv = 1,
#ifdef __aarch64__
		.config1 = 3, /* arm_pmuv3.c: 64-bit, user access */
#endif
	};
	double r, s;
	struct utsname u;
	void *pg;
	int fd;

	uname(&u);
	printf("# bench-read: %s %s, %d reads each\n", u.release, u.machine,
	       BATCH * BATCHES);
	fd = up_perf_event_open(&a, 0, -1, -1, 0);
	if (fd < 0) {
		printf("ok 1 bench-read %s %s # SKIP no hardware cycles event: %s\n",
		       u.release, u.machine, strerror(errno));
		return 0;
	}
	pg = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		printf("not ok 1 bench-read # mmap: %s\n", strerror(errno));
		return 1;
	}
	r = median_ns(fd, pg, false);
	s = median_ns(fd, pg, true);
	if (r < 0 || s <= 0) {
		printf("ok 1 bench-read %s %s # SKIP the page offers no user read (index %u)\n",
		       u.release, u.machine, up_u32(pg, UP_INDEX));
		return 0;
	}
	printf("# bench-read: %-28s %-8s %12s %12s %8s\n", "kernel", "arch",
	       "read() ns", "self ns", "ratio");
	printf("# bench-read: %-28s %-8s %12.1f %12.1f %7.1fx\n", u.release,
	       u.machine, r, s, r / s);
	printf("ok 1 bench-read %s %s\n", u.release, u.machine);
	return 0;
}
