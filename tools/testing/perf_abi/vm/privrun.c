// SPDX-License-Identifier: GPL-2.0
/*
 * privrun MODE UID CMD [ARG...]: run CMD, from root, in one privilege mode
 * of the privilege table (vm/init's perf_abi.priv=MODE; linked statically,
 * it is put in the guest's initramfs as /usr/bin/privrun):
 *
 *   root     as it is: uid 0 with every capability
 *   nocaps   uid 0 with no capability at all: every set and the bounding
 *            set emptied, and securebits NOROOT locked, so that no execve()
 *            gives uid 0 its capabilities back
 *   perfmon  UID with CAP_PERFMON only, raised in the ambient set so that
 *            it survives the execve() of the runner and of every test
 *   user     UID with no capability
 *
 * Exit 2 on bad usage, 4 when the kernel lacks CAP_PERFMON (before 5.8:
 * the cell is skipped), 1 when a step fails; else CMD's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

static const char *mode;

static void die(const char *step)
{
	fprintf(stderr, "privrun: %s: %s: %s\n", mode, step, strerror(errno));
	exit(1);
}

/* The bounding set down to KEEP (-1: nothing); needs CAP_SETPCAP. */
static void drop_bound(int keep)
{
	int c;

	for (c = 0; c < (int)cap_max_bits(); c++)
		if (c != keep && cap_drop_bound(c))
			die("cap_drop_bound");
}

/* Only the capabilities in HAVE (count N): permitted, effective, inheritable. */
static void set_caps(const cap_value_t *have, int n)
{
	cap_t caps = cap_init();

	if (!caps)
		die("cap_init");
	if (n && (cap_set_flag(caps, CAP_PERMITTED, n, have, CAP_SET) ||
		  cap_set_flag(caps, CAP_EFFECTIVE, n, have, CAP_SET) ||
		  cap_set_flag(caps, CAP_INHERITABLE, n, have, CAP_SET)))
		die("cap_set_flag");
	if (cap_set_proc(caps))
		die("cap_set_proc");
	cap_free(caps);
}

static void become(uid_t uid)
{
	if (setgroups(0, NULL))
		die("setgroups");
	if (setresgid(uid, uid, uid))
		die("setresgid");
	if (setresuid(uid, uid, uid))
		die("setresuid");
}

int main(int argc, char **argv)
{
	static const cap_value_t perfmon[] = { CAP_PERFMON };
	unsigned long uid;
	char *end;

	if (argc < 4) {
		fprintf(stderr,
			"usage: privrun root|nocaps|perfmon|user UID CMD [ARG...]\n");
		return 2;
	}
	mode = argv[1];
	errno = 0;
	uid = strtoul(argv[2], &end, 10);
	if (errno || *end || end == argv[2] || uid >= 4294967295UL) {
		fprintf(stderr, "privrun: '%s' is not a uid\n", argv[2]);
		return 2;
	}
	if (!strcmp(mode, "root")) {
		/* as it is */
	} else if (!strcmp(mode, "nocaps")) {
		drop_bound(-1);
		if (prctl(PR_SET_SECUREBITS,
			  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
				  SECBIT_NO_SETUID_FIXUP |
				  SECBIT_NO_SETUID_FIXUP_LOCKED))
			die("PR_SET_SECUREBITS");
		if (cap_reset_ambient())
			die("cap_reset_ambient");
		set_caps(NULL, 0);
	} else if (!strcmp(mode, "perfmon")) {
		if (cap_max_bits() <= CAP_PERFMON) {
			fprintf(stderr,
				"privrun: perfmon: this kernel has no CAP_PERFMON (5.8)\n");
			return 4;
		}
		drop_bound(CAP_PERFMON);
		if (prctl(PR_SET_KEEPCAPS, 1))
			die("PR_SET_KEEPCAPS");
		become(uid);
		set_caps(perfmon, 1);
		if (cap_set_ambient(CAP_PERFMON, CAP_SET))
			die("cap_set_ambient");
	} else if (!strcmp(mode, "user")) {
		drop_bound(-1);
		become(uid);
		set_caps(NULL, 0);
	} else {
		fprintf(stderr,
			"privrun: unknown mode '%s' (root, nocaps, perfmon, user)\n",
			mode);
		return 2;
	}
	execvp(argv[3], argv + 3);
	die(argv[3]);
	return 1;
}
