// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD for rdpmc_test.sh.  glob() looks under KNOB_ROOT: the
 * program's knobs (user_page.h up_knobs_lock()) are the test's files,
 * KNOB_ROOT/sys/bus/event_source/devices/<pmu>/rdpmc and
 * KNOB_ROOT/proc/sys/kernel/perf_user_access where it made them.
 * perf_event_open() as KNOB_FAULT says -- "hang" (never returns), "crash"
 * (SIGSEGV), "error" (EINVAL, which the test ASSERTs against), "slow"
 * (returns ENOENT, a refusal, after KNOB_SLOW_MS, default 500) -- and the
 * real syscall() otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

long syscall(long n, ...)
{
	static long (*real)(long, ...);
	const char *fault = getenv("KNOB_FAULT");
	const char *ms = getenv("KNOB_SLOW_MS");
	long a[6];
	va_list ap;
	int i;

	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == __NR_perf_event_open && fault) {
		if (!strcmp(fault, "hang"))
			for (;;)
				pause();
		if (!strcmp(fault, "crash"))
			raise(SIGSEGV);
		if (!strcmp(fault, "error")) {
			errno = EINVAL;
			return -1;
		}
		if (!strcmp(fault, "slow")) {
			usleep((ms ? atoi(ms) : 500) * 1000);
			errno = ENOENT;
			return -1;
		}
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

int glob(const char *pattern, int flags, int (*errfunc)(const char *, int),
	 glob_t *g)
{
	static int (*real)(const char *, int, int (*)(const char *, int),
			   glob_t *);
	const char *root = getenv("KNOB_ROOT");
	char p[512];

	if (!real)
		real = (int (*)(const char *, int,
				int (*)(const char *, int), glob_t *))
			dlsym(RTLD_NEXT, "glob");
	if (!root || pattern[0] != '/' ||
	    snprintf(p, sizeof(p), "%s%s", root, pattern) >= (int)sizeof(p))
		return real(pattern, flags, errfunc, g);
	return real(p, flags, errfunc, g);
}
