// SPDX-License-Identifier: GPL-2.0
/*
 * sibling [N]: hold more hardware events than there are counters, until
 * killed, so that the suite's events run multiplexed or get no counter
 * (index 0) -- the soak's sibling condition (soak/soak.mk; in a guest,
 * vm/init's perf_abi.sibling=N).
 *
 * Opens N (default 32) pinned cycles events per online CPU, each counting
 * every task on that CPU (pid -1: root, or CAP_PERFMON, or paranoid <= 0),
 * or instructions when cycles does not open.  The pinned events that fit
 * take every general counter (and the fixed ones) of the CPU for as long
 * as the sibling lives, before any task's event; the others wait in the
 * error state.  Prints one line: how many events it holds on how many CPUs.  Exit 4 when no hardware event opened (no
 * PMU, or no permission): the condition is absent here; 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_hw(unsigned long long config, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = config;
	a.pinned = 1;
	return syscall(__NR_perf_event_open, &a, -1, cpu, -1, 0);
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int n = 32, held = 0, cpus = 0, err = 0, cpu, i;
	char *end;

	if (argc == 2)
		n = strtol(argv[1], &end, 10);
	if (argc > 2 || (argc == 2 && (n <= 0 || *end || n > 1024))) {
		fprintf(stderr,
			"usage: sibling [N] (events per CPU, 1 to 1024)\n");
		return 2;
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		int here = 0;

		for (i = 0; i < n; i++) {
			if (open_hw(PERF_COUNT_HW_CPU_CYCLES, cpu) >= 0 ||
			    open_hw(PERF_COUNT_HW_INSTRUCTIONS, cpu) >= 0)
				here++;
			else
				err = errno;
		}
		held += here;
		cpus += here > 0;
	}
	if (!held) {
		fprintf(stderr,
			"sibling: no hardware event opened (%s): nothing held\n",
			strerror(err));
		return 4;
	}
	fprintf(stderr,
		"sibling: holding %d pinned hardware events on %d CPUs\n", held,
		cpus);
	fflush(stderr);
	for (;;)
		pause();
}
