// SPDX-License-Identifier: GPL-2.0
/*
 * The perf user page ABI (struct perf_event_mmap_page), checked on pages
 * the running kernel maps: capabilities bit 0 is 0 and bit 1 is 1, size is
 * the offsetof(__reserved) of a published layout, the reserved tail is zero
 * and data_head is the u64 at byte 1024 -- for every event kind, scope,
 * privilege and state.
 *
 * A SKIP reason is a fixed string naming what is needed; what this machine
 * answered (errno, perf_event_paranoid, euid) goes to the test's log.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <linux/hw_breakpoint.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "user_page.h"

#define EXEC_CHILD_ARG "--check-inherited-fd"

enum kind {
	K_CPU_CLOCK,
	K_TASK_CLOCK,
	K_PAGE_FAULTS,
	K_CONTEXT_SWITCHES,
	K_CPU_MIGRATIONS,
	K_DUMMY,
	K_TRACEPOINT,
	K_BREAKPOINT,
	K_CYCLES,
	K_INSTRUCTIONS,
};

enum priv {
	PRIV_AS_RUN, /* the privileges the suite was started with */
	PRIV_NO_CAPS, /* effective capability set cleared */
	PRIV_NOBODY, /* no capabilities and uid/gid 65534 */
};

static uint64_t bp_target; /* written by workload(), watched by a breakpoint */

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/*
 * What a test needs, for its SKIP reason: a page test names everything its
 * variant needs, whichever was missing here, so that its reason is the
 * same string on every machine (the missing one goes to the log).
 */
#define NEED_PMU "a hardware PMU with a free counter"
#define NEED_BREAKPOINTS "hardware breakpoints with a free slot"
#define NEED_TRACEFS "tracefs with sched:sched_switch"
/* perf_allow_cpu(), Documentation/admin-guide/sysctl/kernel.rst */
#define NEED_CPU_PERM "perf_event_paranoid <= 0 or CAP_PERFMON"
/* a user-only task event: refused only at the distributions' level 3 */
#define NEED_TASK_PERM "perf_event_paranoid <= 2 or CAP_SYS_ADMIN"
#define NEEDS_NOBODY "needs root with CAP_SETUID to become uid 65534"
#define NEEDS_LIBCAP "needs libcap to clear the effective capabilities"

/*
 * Tracepoint id of sched:sched_switch, mounting tracefs privately if needed;
 * -errno when there is none.
 */
static int tracepoint_id(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/sched/sched_switch/id",
		"/sys/kernel/debug/tracing/events/sched/sched_switch/id",
	};
	char buf[32];
	unsigned int i;
	int fd, n;

	if (access("/sys/kernel/tracing/events", F_OK) &&
	    !access("/sys/kernel/tracing", F_OK) && !unshare(CLONE_NEWNS) &&
	    !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		fd = open(paths[i], O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			return atoi(buf);
		}
	}
	return -errno;
}

/*
 * The attr of one kind: user-only, so unprivileged runs may open it.
 * Returns 0, or -errno when the tracepoint's id cannot be read.
 */
static int kind_attr(enum kind k, struct perf_event_attr *a)
{
	static const struct {
		__u32 type;
		__u64 config;
	} kinds[] = {
		[K_CPU_CLOCK] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
		[K_TASK_CLOCK] = { PERF_TYPE_SOFTWARE,
				   PERF_COUNT_SW_TASK_CLOCK },
		[K_PAGE_FAULTS] = { PERF_TYPE_SOFTWARE,
				    PERF_COUNT_SW_PAGE_FAULTS },
		[K_CONTEXT_SWITCHES] = { PERF_TYPE_SOFTWARE,
					 PERF_COUNT_SW_CONTEXT_SWITCHES },
		[K_CPU_MIGRATIONS] = { PERF_TYPE_SOFTWARE,
				       PERF_COUNT_SW_CPU_MIGRATIONS },
		[K_DUMMY] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
		[K_TRACEPOINT] = { PERF_TYPE_TRACEPOINT, 0 },
		[K_BREAKPOINT] = { PERF_TYPE_BREAKPOINT, 0 },
		[K_CYCLES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		[K_INSTRUCTIONS] = { PERF_TYPE_HARDWARE,
				     PERF_COUNT_HW_INSTRUCTIONS },
	};
	int id;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = kinds[k].type;
	a->config = kinds[k].config;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	/* Sampling, so that PERIOD and REFRESH apply; rarely overflowing. */
	a->sample_period = 1000000;
	a->sample_type = PERF_SAMPLE_IP;
	if (k == K_TRACEPOINT) {
		id = tracepoint_id();
		if (id < 0)
			return id;
		a->config = id;
		a->sample_period = 1;
	} else if (k == K_BREAKPOINT) {
		a->bp_type = HW_BREAKPOINT_W;
		a->bp_addr = (uintptr_t)&bp_target;
		a->bp_len = HW_BREAKPOINT_LEN_8;
		a->sample_period = 1;
	}
	return 0;
}

/* NULL when done, else the SKIP reason (errno is left set). */
static const char *drop_privileges(enum priv p)
{
	cap_t caps;
	int err;

	if (p == PRIV_AS_RUN)
		return NULL;
	/* From root, setuid() without PR_SET_KEEPCAPS empties every set. */
	if (p == PRIV_NOBODY && geteuid() == 0 &&
	    (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
		return NEEDS_NOBODY;
	caps = cap_get_proc();
	err = !caps || cap_clear_flag(caps, CAP_EFFECTIVE) ||
	      cap_set_proc(caps);
	cap_free(caps);
	return err ? NEEDS_LIBCAP : NULL;
}

static int paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = -9;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = -9;
		fclose(f);
	}
	return level;
}

/*
 * The one policy for a refused perf_event_open(): true when err means "not
 * available here" (no such PMU or event, no free counter or slot, not
 * permitted), false when the caller must fail.  Logs what the kernel said.
 */
static bool open_refused(struct __test_metadata *_metadata, int err,
			 const struct perf_event_attr *attr, int cpu)
{
	TH_LOG("perf_event_open type %u config %llu %s: %s; perf_event_paranoid %d, euid %d",
	       attr->type, (unsigned long long)attr->config,
	       cpu < 0 ? "per task" : "per cpu", strerror(err),
	       paranoid_level(), geteuid());
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
	case ENOSPC:
	case EACCES:
	case EPERM:
		return true;
	}
	return false;
}

FIXTURE(page)
{
	struct perf_event_attr attr;
	int fd;
	void *base;
	size_t len;
	const char *skip; /* the SKIP reason when the event is not here */
	char needs[160]; /* what the variant needs, as a SKIP reason */
};

FIXTURE_VARIANT(page)
{
	enum kind kind;
	int cpu; /* -1: per task (pid 0); 0: per cpu (pid -1) */
	enum priv priv;
};

/* clang-format off */
FIXTURE_VARIANT_ADD(page, cpu_clock_task) {
	.kind = K_CPU_CLOCK,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, cpu_clock_cpu) {
	.kind = K_CPU_CLOCK,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, cpu_clock_task_nocaps) {
	.kind = K_CPU_CLOCK,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, cpu_clock_cpu_nocaps) {
	.kind = K_CPU_CLOCK,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, cpu_clock_task_nobody) {
	.kind = K_CPU_CLOCK,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, cpu_clock_cpu_nobody) {
	.kind = K_CPU_CLOCK,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, task_clock_task) {
	.kind = K_TASK_CLOCK,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, task_clock_cpu) {
	.kind = K_TASK_CLOCK,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, task_clock_task_nocaps) {
	.kind = K_TASK_CLOCK,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, task_clock_cpu_nocaps) {
	.kind = K_TASK_CLOCK,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, task_clock_task_nobody) {
	.kind = K_TASK_CLOCK,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, task_clock_cpu_nobody) {
	.kind = K_TASK_CLOCK,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, page_faults_task) {
	.kind = K_PAGE_FAULTS,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, page_faults_cpu) {
	.kind = K_PAGE_FAULTS,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, page_faults_task_nocaps) {
	.kind = K_PAGE_FAULTS,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, page_faults_cpu_nocaps) {
	.kind = K_PAGE_FAULTS,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, page_faults_task_nobody) {
	.kind = K_PAGE_FAULTS,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, page_faults_cpu_nobody) {
	.kind = K_PAGE_FAULTS,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, context_switches_task) {
	.kind = K_CONTEXT_SWITCHES,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, context_switches_cpu) {
	.kind = K_CONTEXT_SWITCHES,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, context_switches_task_nocaps) {
	.kind = K_CONTEXT_SWITCHES,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, context_switches_cpu_nocaps) {
	.kind = K_CONTEXT_SWITCHES,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, context_switches_task_nobody) {
	.kind = K_CONTEXT_SWITCHES,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, context_switches_cpu_nobody) {
	.kind = K_CONTEXT_SWITCHES,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, cpu_migrations_task) {
	.kind = K_CPU_MIGRATIONS,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, cpu_migrations_cpu) {
	.kind = K_CPU_MIGRATIONS,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, cpu_migrations_task_nocaps) {
	.kind = K_CPU_MIGRATIONS,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, cpu_migrations_cpu_nocaps) {
	.kind = K_CPU_MIGRATIONS,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, cpu_migrations_task_nobody) {
	.kind = K_CPU_MIGRATIONS,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, cpu_migrations_cpu_nobody) {
	.kind = K_CPU_MIGRATIONS,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, dummy_task) {
	.kind = K_DUMMY,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, dummy_cpu) {
	.kind = K_DUMMY,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, dummy_task_nocaps) {
	.kind = K_DUMMY,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, dummy_cpu_nocaps) {
	.kind = K_DUMMY,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, dummy_task_nobody) {
	.kind = K_DUMMY,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, dummy_cpu_nobody) {
	.kind = K_DUMMY,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, tracepoint_task) {
	.kind = K_TRACEPOINT,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, tracepoint_cpu) {
	.kind = K_TRACEPOINT,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, tracepoint_task_nocaps) {
	.kind = K_TRACEPOINT,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, tracepoint_cpu_nocaps) {
	.kind = K_TRACEPOINT,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, tracepoint_task_nobody) {
	.kind = K_TRACEPOINT,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, tracepoint_cpu_nobody) {
	.kind = K_TRACEPOINT,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, breakpoint_task) {
	.kind = K_BREAKPOINT,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, breakpoint_cpu) {
	.kind = K_BREAKPOINT,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, breakpoint_task_nocaps) {
	.kind = K_BREAKPOINT,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, breakpoint_cpu_nocaps) {
	.kind = K_BREAKPOINT,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, breakpoint_task_nobody) {
	.kind = K_BREAKPOINT,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, breakpoint_cpu_nobody) {
	.kind = K_BREAKPOINT,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, cycles_task) {
	.kind = K_CYCLES,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, cycles_cpu) {
	.kind = K_CYCLES,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, cycles_task_nocaps) {
	.kind = K_CYCLES,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, cycles_cpu_nocaps) {
	.kind = K_CYCLES,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, cycles_task_nobody) {
	.kind = K_CYCLES,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, cycles_cpu_nobody) {
	.kind = K_CYCLES,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, instructions_task) {
	.kind = K_INSTRUCTIONS,
	.cpu = -1,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, instructions_cpu) {
	.kind = K_INSTRUCTIONS,
	.cpu = 0,
	.priv = PRIV_AS_RUN,
};

FIXTURE_VARIANT_ADD(page, instructions_task_nocaps) {
	.kind = K_INSTRUCTIONS,
	.cpu = -1,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, instructions_cpu_nocaps) {
	.kind = K_INSTRUCTIONS,
	.cpu = 0,
	.priv = PRIV_NO_CAPS,
};

FIXTURE_VARIANT_ADD(page, instructions_task_nobody) {
	.kind = K_INSTRUCTIONS,
	.cpu = -1,
	.priv = PRIV_NOBODY,
};

FIXTURE_VARIANT_ADD(page, instructions_cpu_nobody) {
	.kind = K_INSTRUCTIONS,
	.cpu = 0,
	.priv = PRIV_NOBODY,
};

/* clang-format on */

/* The SKIP reason of a variant: everything it needs, in a fixed order. */
static void variant_needs(char *buf, size_t len,
			  const FIXTURE_VARIANT(page) * v)
{
	const char *scope = v->cpu < 0 ? NEED_TASK_PERM : NEED_CPU_PERM;
	const char *kind = NULL;

	switch (v->kind) {
	case K_CYCLES:
	case K_INSTRUCTIONS:
		kind = NEED_PMU;
		break;
	case K_BREAKPOINT:
		kind = NEED_BREAKPOINTS;
		break;
	case K_TRACEPOINT:
		kind = NEED_TRACEFS;
		break;
	default:
		break;
	}
	if (kind)
		snprintf(buf, len, "needs %s, and %s", kind, scope);
	else
		snprintf(buf, len, "needs %s", scope);
}

static int open_variant(struct perf_event_attr *attr,
			const FIXTURE_VARIANT(page) * v, int group)
{
	return up_perf_event_open(attr, v->cpu < 0 ? 0 : -1, v->cpu, group, 0);
}

FIXTURE_SETUP(page)
{
	bool refused;
	int err;

	self->fd = -1;
	self->base = MAP_FAILED;
	self->len = 3 * page_size();
	variant_needs(self->needs, sizeof(self->needs), variant);
	/* The 6.1 harness runs the body even after SKIP here: record why. */
	err = kind_attr(variant->kind, &self->attr);
	if (err) {
		TH_LOG("sched:sched_switch id: %s", strerror(-err));
		self->skip = self->needs;
		return;
	}
	self->skip = drop_privileges(variant->priv);
	if (self->skip) {
		TH_LOG("dropping privileges: %s", strerror(errno));
		return;
	}
	self->fd = open_variant(&self->attr, variant, -1);
	if (self->fd < 0) {
		err = errno;
		refused =
			open_refused(_metadata, err, &self->attr, variant->cpu);
		ASSERT_TRUE(refused)
		TH_LOG("perf_event_open: %s", strerror(err));
		self->skip = self->needs;
		return;
	}
	self->base = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->base) TH_LOG("mmap: %s", strerror(errno));
}

FIXTURE_TEARDOWN(page)
{
	if (self->base != MAP_FAILED)
		munmap(self->base, self->len);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * The one way a test reports a check's verdict: EXPECT it, and on the first
 * failure of the test name the commits that made the promise in one hint:
 * line (each test runs in a process of its own).
 */
static void expect_ok(struct __test_metadata *_metadata, bool ok,
		      const struct up_msg *m, const char *state)
{
	static bool hinted;

	EXPECT_TRUE(ok) TH_LOG("%s: %s", state, m->s);
	if (!ok && !hinted) {
		hinted = true;
		fprintf(stderr, "# hint: %s\n", m->hint);
	}
}

/* Every promise about the page that holds in any state, on one snapshot. */
static void expect_page_abi(struct __test_metadata *_metadata, const void *pg,
			    const char *state)
{
	unsigned char snap[UP_HDR_LEN];
	struct up_msg m;

	ASSERT_EQ(0, up_snapshot(pg, snap))
	TH_LOG("%s: page lock never settled", state);
	/* uapi: cap_bit0 "Always 0", cap_bit0_is_deprecated "Always 1" */
	expect_ok(_metadata, up_check_bit0(snap, &m), &m, state);
	expect_ok(_metadata, up_check_bit1(snap, &m), &m, state);
	/* uapi: size "Header size up to __reserved[] fields" */
	expect_ok(_metadata, up_check_size(snap, &m), &m, state);
	/* uapi: __reserved "align to 1k": never written */
	expect_ok(_metadata, up_check_reserved(snap, &m), &m, state);
}

/* Work that moves every software counter of the variants. */
static void workload(void)
{
	long ps = page_size();
	char *p;
	int i;

	for (i = 0; i < 200; i++) {
		p = mmap(NULL, ps, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			p[0] = i;
			munmap(p, ps);
		}
		__atomic_store_n(&bp_target, i, __ATOMIC_RELAXED);
		sched_yield();
		getppid();
	}
}

TEST_F(page, opened_disabled)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	expect_page_abi(_metadata, self->base, "opened disabled");
}

TEST_F(page, after_enable)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	expect_page_abi(_metadata, self->base, "after ENABLE");
}

TEST_F(page, after_disable)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_DISABLE, 0));
	expect_page_abi(_metadata, self->base, "after DISABLE");
}

TEST_F(page, after_reset)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_RESET, 0));
	expect_page_abi(_metadata, self->base, "after RESET");
}

TEST_F(page, after_period)
{
	__u64 period = 500000;

	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_PERIOD, &period))
	TH_LOG("PERIOD: %s", strerror(errno));
	workload();
	expect_page_abi(_metadata, self->base, "after PERIOD");
}

TEST_F(page, after_refresh)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_REFRESH, 1))
	TH_LOG("REFRESH: %s", strerror(errno));
	workload();
	expect_page_abi(_metadata, self->base, "after REFRESH");
}

TEST_F(page, after_workload)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	expect_page_abi(_metadata, self->base, "after a workload");
}

TEST_F(page, group_sibling)
{
	struct perf_event_attr attr = self->attr;
	int fd, err = 0;
	void *pg;

	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	attr.disabled = 0;
	fd = open_variant(&attr, variant, self->fd);
	if (fd < 0) {
		err = errno;
		if (open_refused(_metadata, err, &attr, variant->cpu))
			SKIP(return, "%s", self->needs);
	}
	ASSERT_LE(0, fd) TH_LOG("sibling: %s", strerror(err));
	pg = mmap(NULL, 2 * page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("mmap sibling: %s", strerror(errno));
	ASSERT_EQ(0,
		  ioctl(self->fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	workload();
	expect_page_abi(_metadata, self->base, "group leader");
	expect_page_abi(_metadata, pg, "group sibling");
	munmap(pg, 2 * page_size());
	close(fd);
}

TEST_F(page, second_mmap)
{
	void *pg;

	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	pg = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		  0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("second mmap: %s", strerror(errno));
	workload();
	expect_page_abi(_metadata, pg, "second mapping of the fd");
	expect_page_abi(_metadata, self->base,
			"first mapping, after the second");
	munmap(pg, self->len);
}

TEST_F(page, munmap_then_mmap)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	ASSERT_EQ(0, munmap(self->base, self->len));
	self->base = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->base) TH_LOG("mmap: %s", strerror(errno));
	expect_page_abi(_metadata, self->base, "mapped again after munmap");
}

TEST_F(page, read_only_mapping)
{
	void *pg;
	int fd;

	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	/* A fresh event: a read-only buffer cannot share a writable one's. */
	fd = open_variant(&self->attr, variant, -1);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
	pg = mmap(NULL, self->len, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("PROT_READ mmap: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	expect_page_abi(_metadata, pg, "PROT_READ mapping");
	munmap(pg, self->len);
	close(fd);
}

TEST_F(page, sizes_1_and_1_plus_2n_pages)
{
	static const int data_pages[] = { 0, 1, 2, 8 };
	unsigned char snap[UP_HDR_LEN];
	unsigned int i;
	struct up_msg m;
	char state[64];
	size_t len;
	void *pg;
	int fd;

	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	for (i = 0; i < ARRAY_SIZE(data_pages); i++) {
		fd = open_variant(&self->attr, variant, -1);
		ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
		len = (1 + data_pages[i]) * page_size();
		pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, pg)
		TH_LOG("mmap of %zu bytes: %s", len, strerror(errno));
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
		workload();
		snprintf(state, sizeof(state), "1+%d pages", data_pages[i]);
		expect_page_abi(_metadata, pg, state);
		if (data_pages[i]) {
			ASSERT_EQ(0, up_snapshot(pg, snap));
			/* uapi data_offset/data_size (4.1): the area after the page */
			expect_ok(_metadata,
				  up_check_data_area(snap, page_size(),
						     data_pages[i], &m),
				  &m, state);
		}
		munmap(pg, len);
		close(fd);
	}
}

/*
 * Map fd (len bytes: a second mapping must match the buffer's size) and
 * check the page; for processes outside the harness.
 */
static int check_fd_page(int fd, size_t len, const char *who)
{
	unsigned char snap[UP_HDR_LEN];
	struct up_msg m;
	bool ok;
	void *pg;

	pg = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		fprintf(stderr, "# %s: mmap of the event fd: %s\n", who,
			strerror(errno));
		return 1;
	}
	if (up_snapshot(pg, snap)) {
		fprintf(stderr, "# %s: page lock never settled\n", who);
		return 1;
	}
	ok = up_check_bit0(snap, &m) && up_check_bit1(snap, &m) &&
	     up_check_size(snap, &m) && up_check_reserved(snap, &m);
	if (!ok)
		fprintf(stderr, "# %s: %s\n# hint: %s\n", who, m.s, m.hint);
	munmap(pg, len);
	return !ok;
}

static void expect_child_ok(struct __test_metadata *_metadata, pid_t pid,
			    const char *who)
{
	int status;

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status))
	TH_LOG("%s died: status 0x%x", who, status);
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("%s found a bad page", who);
}

/* Perf mappings are VM_DONTCOPY: the child maps the inherited fd itself. */
TEST_F(page, forked_child_maps_fd)
{
	pid_t pid;

	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		workload();
		_exit(check_fd_page(self->fd, self->len, "forked child"));
	}
	expect_child_ok(_metadata, pid, "forked child");
	expect_page_abi(_metadata, self->base, "parent after fork");
}

/* The fd survives exec; the new image maps and checks it. */
TEST_F(page, after_exec)
{
	char fdstr[16], lenstr[24];
	pid_t pid;

	if (self->fd < 0)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	snprintf(fdstr, sizeof(fdstr), "%d", self->fd);
	snprintf(lenstr, sizeof(lenstr), "%zu", self->len);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		execl("/proc/self/exe", "mmap_page", EXEC_CHILD_ARG, fdstr,
		      lenstr, (char *)NULL);
		fprintf(stderr, "# exec: %s\n", strerror(errno));
		_exit(2);
	}
	expect_child_ok(_metadata, pid, "re-executed image");
}

/*
 * One kernel, one struct perf_event_mmap_page: every kind maps a page of
 * the same size (each size alone may be any published layout's).
 */
TEST(size_same_for_every_kind)
{
	struct perf_event_attr attr;
	void *first = MAP_FAILED, *pg;
	int fd, first_fd = -1, opened = 0;
	struct up_msg m;
	char state[32];
	enum kind k;

	for (k = K_CPU_CLOCK; k <= K_INSTRUCTIONS; k++) {
		if (kind_attr(k, &attr))
			continue;
		fd = up_perf_event_open(&attr, 0, -1, -1, 0);
		if (fd < 0)
			continue;
		pg = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, pg) TH_LOG("mmap: %s", strerror(errno));
		if (!opened++) {
			first = pg;
			first_fd = fd;
			continue;
		}
		snprintf(state, sizeof(state), "event kind %d", k);
		expect_ok(_metadata, up_check_same_size(pg, first, &m), &m,
			  state);
		munmap(pg, page_size());
		close(fd);
	}
	if (opened) {
		munmap(first, page_size());
		close(first_fd);
	}
	if (opened < 2)
		SKIP(return,
			   "needs two event kinds that open, and " NEED_TASK_PERM);
}

/*
 * Side-band records of a known size, from a dummy event: the u64 at byte
 * 1024 must move by exactly their bytes, and walking them must end there.
 */
#define REC_MMAP_ANON \
	(8 + 8 + 24 + 8) /* hdr, pid/tid, addr/len/pgoff, "//anon" */
#define REC_COMM_ABI (8 + 8 + 8) /* hdr, pid/tid, "pabi" */
#define REC_FORK (8 + 16 + 8) /* hdr, pid/ppid/tid/ptid, time */

/* uapi data_tail comment ("the kernel will not over-write unread data") */
#define HINT_DATA_TAIL                                                  \
	"data_tail is honoured for PROT_WRITE buffers and ignored for " \
	"PROT_READ ones (uapi comment above data_head, since 2.6.31)"

static const struct perf_event_attr sideband_attr = {
	.size = sizeof(struct perf_event_attr),
	.type = PERF_TYPE_SOFTWARE,
	.config = PERF_COUNT_SW_DUMMY,
	.mmap = 1,
	.mmap_data = 1,
	.comm = 1,
	.task = 1,
	.exclude_kernel = 1,
	.exclude_hv = 1,
};

/* A dummy event with a data area of data_pages; its fd or -errno. */
static int open_sideband(int data_pages, void **base, size_t *len, int prot)
{
	struct perf_event_attr a = sideband_attr;
	int fd = up_perf_event_open(&a, 0, -1, -1, 0);
	int err;

	if (fd < 0)
		return -errno;
	*len = (1 + data_pages) * page_size();
	*base = mmap(NULL, *len, prot, MAP_SHARED, fd, 0);
	if (*base == MAP_FAILED) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* Produce exactly one MMAP, one COMM and one FORK record; return bytes. */
static uint64_t produce_records(void)
{
	void *p;
	pid_t pid;

	p = mmap(NULL, page_size(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	prctl(PR_SET_NAME, "pabi");
	pid = fork();
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	munmap(p, page_size());
	return REC_MMAP_ANON + REC_COMM_ABI + REC_FORK;
}

TEST(data_head_counts_records)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	uint64_t before, bytes;
	struct up_msg m;
	size_t len;
	void *base;
	int fd;

	fd = open_sideband(8, &base, &len, PROT_READ | PROT_WRITE);
	if (fd < 0) {
		if (open_refused(_metadata, -fd, &sideband_attr, -1))
			SKIP(return, "needs " NEED_TASK_PERM);
	}
	ASSERT_LE(0, fd) TH_LOG("dummy event: %s", strerror(-fd));

	/* Consume what exists (the buffer's own MMAP record) as a reader does. */
	before = up_data_head(base);
	__atomic_store_n((uint64_t *)((char *)base + UP_DATA_TAIL), before,
			 __ATOMIC_RELEASE);
	bytes = produce_records();
	/* uapi: data_head, "head in the data section", is at byte 1024 */
	expect_ok(_metadata, up_check_head_grew(base, before, bytes, &m), &m,
		  "after one MMAP, COMM and FORK");
	/* records are perf_event_header-framed and end exactly at data_head */
	expect_ok(_metadata, up_check_records(base, types, PERF_RECORD_MAX, &m),
		  &m, "records");
	EXPECT_EQ(1U, types[PERF_RECORD_MMAP]);
	EXPECT_EQ(1U, types[PERF_RECORD_COMM]);
	EXPECT_EQ(1U, types[PERF_RECORD_FORK]);
	expect_ok(_metadata, up_check_data_area(base, page_size(), 8, &m), &m,
		  "1+8 pages");
	munmap(base, len);
	close(fd);
}

/*
 * The ring buffer's data area: one page (4 KiB to 64 KiB, as the machine
 * has it), and 64 KiB whatever the page size, so that sizing the workload
 * from the buffer is tested where pages are small too.
 */
FIXTURE(ring)
{
	int data_pages;
};

FIXTURE_VARIANT(ring)
{
	long data_bytes; /* 0: one page */
};

/* clang-format off */
FIXTURE_VARIANT_ADD(ring, one_page) {
	.data_bytes = 0,
};

FIXTURE_VARIANT_ADD(ring, data_64k) {
	.data_bytes = 65536,
};

/* clang-format on */

FIXTURE_SETUP(ring)
{
	self->data_pages = variant->data_bytes / page_size();
	if (self->data_pages < 1)
		self->data_pages = 1;
}

FIXTURE_TEARDOWN(ring)
{
}

#define REC_COMM_FILL (8 + 8 + 8) /* hdr, pid/tid, "pabiN" */

/*
 * COMM records without consuming any: twice what a data area of size bytes
 * holds, so that it overflows at every page size.
 */
static void fill_buffer(uint64_t size)
{
	uint64_t n = 2 * (size / REC_COMM_FILL + 1), i;
	char name[16];

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "pabi%d", (int)(i % 10));
		prctl(PR_SET_NAME, name);
	}
}

/*
 * uapi: "When the mapping is PROT_WRITE the @data_tail value should be
 * written by userspace ... the kernel will not over-write unread data";
 * what it drops it reports as PERF_RECORD_LOST (__perf_output_begin()).
 */
TEST_F(ring, data_tail_is_honoured)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	uint64_t head, size;
	struct up_msg m;
	size_t len;
	void *base;
	int fd;

	fd = open_sideband(self->data_pages, &base, &len,
			   PROT_READ | PROT_WRITE);
	if (fd < 0) {
		if (open_refused(_metadata, -fd, &sideband_attr, -1))
			SKIP(return, "needs " NEED_TASK_PERM);
	}
	ASSERT_LE(0, fd) TH_LOG("dummy event: %s", strerror(-fd));
	size = up_u64(base, UP_DATA_SIZE);
	TH_LOG("data area of %llu bytes", (unsigned long long)size);

	fill_buffer(size);
	head = up_data_head(base);
	ASSERT_LE(head, size)
	TH_LOG("kernel wrote past data_tail 0: head %llu, size %llu",
	       (unsigned long long)head, (unsigned long long)size);
	expect_ok(_metadata, up_check_records(base, types, PERF_RECORD_MAX, &m),
		  &m, "unconsumed records");
	EXPECT_EQ(0U, types[PERF_RECORD_LOST]);

	/* Consume everything: the next record is preceded by RECORD_LOST. */
	__atomic_store_n((uint64_t *)((char *)base + UP_DATA_TAIL), head,
			 __ATOMIC_RELEASE);
	prctl(PR_SET_NAME, "pabi-after");
	memset(types, 0, sizeof(types));
	expect_ok(_metadata, up_check_records(base, types, PERF_RECORD_MAX, &m),
		  &m, "after consuming");
	EXPECT_EQ(1U, types[PERF_RECORD_LOST])
	TH_LOG("no RECORD_LOST after a full buffer");
	EXPECT_EQ(1U, types[PERF_RECORD_COMM]);
	if (types[PERF_RECORD_LOST] != 1)
		fprintf(stderr, "# hint: %s\n", HINT_DATA_TAIL);
	munmap(base, len);
	close(fd);
}

/* A read-only mapping is an overwrite buffer: data_tail is not consulted. */
TEST_F(ring, read_only_buffer_overwrites)
{
	uint64_t head, size;
	size_t len;
	void *base;
	int fd;

	fd = open_sideband(self->data_pages, &base, &len, PROT_READ);
	if (fd < 0) {
		if (open_refused(_metadata, -fd, &sideband_attr, -1))
			SKIP(return, "needs " NEED_TASK_PERM);
	}
	ASSERT_LE(0, fd) TH_LOG("dummy event: %s", strerror(-fd));
	size = up_u64(base, UP_DATA_SIZE);
	fill_buffer(size);
	head = up_data_head(base);
	/* ring_buffer_init(): no RING_BUFFER_WRITABLE -> rb->overwrite = 1 */
	EXPECT_LT(size, head)
	TH_LOG("head %llu never wrapped a %llu-byte buffer",
	       (unsigned long long)head, (unsigned long long)size);
	if (head <= size)
		fprintf(stderr, "# hint: %s\n", HINT_DATA_TAIL);
	munmap(base, len);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], EXEC_CHILD_ARG))
		return check_fd_page(atoi(argv[2]), strtoul(argv[3], NULL, 0),
				     "re-executed image");
	return test_harness_run(argc, argv);
}
