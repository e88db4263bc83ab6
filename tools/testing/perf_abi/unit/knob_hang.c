// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD for rdpmc_test.sh: perf_event_open() as KNOB_FAULT says --
 * "hang" (never returns), "crash" (SIGSEGV), "error" (EINVAL, which the
 * test ASSERTs against) -- and the real syscall() otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

long syscall(long n, ...)
{
	static long (*real)(long, ...);
	const char *fault = getenv("KNOB_FAULT");
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
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
