// SPDX-License-Identifier: GPL-2.0
/*
 * The perf user page ABI (struct perf_event_mmap_page), checked on pages
 * the running kernel maps: capabilities bit 0 is 0 and bit 1 is 1, size is
 * offsetof(__reserved), the reserved tail is zero and data_head is the
 * u64 at byte 1024 -- for every event kind, scope, privilege and state.
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

/* Tracepoint id of sched:sched_switch, mounting tracefs privately if needed. */
static int tracepoint_id(char *why, size_t len)
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
	snprintf(why, len, "no tracefs with sched:sched_switch (%s)",
		 strerror(errno));
	return -1;
}

/* The attr of one kind: user-only, so unprivileged runs may open it. */
static int kind_attr(enum kind k, struct perf_event_attr *a, char *why,
		     size_t len)
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
		id = tracepoint_id(why, len);
		if (id < 0)
			return -1;
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

static int drop_privileges(enum priv p, char *why, size_t len)
{
	cap_t caps;
	int err;

	if (p == PRIV_AS_RUN)
		return 0;
	/* From root, setuid() without PR_SET_KEEPCAPS empties every set. */
	if (p == PRIV_NOBODY && geteuid() == 0 &&
	    (setgroups(0, NULL) || setgid(65534) || setuid(65534))) {
		snprintf(why, len, "cannot become uid 65534: %s",
			 strerror(errno));
		return -1;
	}
	caps = cap_get_proc();
	err = !caps || cap_clear_flag(caps, CAP_EFFECTIVE) ||
	      cap_set_proc(caps);
	if (err)
		snprintf(why, len, "libcap: %s", strerror(errno));
	cap_free(caps);
	return err ? -1 : 0;
}

/* Why the kernel refused an event: the reasons that mean "unsupported". */
static bool open_refused(int err, char *why, size_t len)
{
	int paranoid = -9;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = -9;
		fclose(f);
	}
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		snprintf(why, len, "not supported by this kernel or PMU (%s)",
			 strerror(err));
		return true;
	case ENOSPC:
		snprintf(why, len, "no free counter or breakpoint slot (%s)",
			 strerror(err));
		return true;
	case EACCES:
	case EPERM:
		snprintf(why, len,
			 "refused (%s) at perf_event_paranoid=%d, euid %d",
			 strerror(err), paranoid, geteuid());
		return true;
	}
	snprintf(why, len, "perf_event_open: %s", strerror(err));
	return false;
}

FIXTURE(page)
{
	struct perf_event_attr attr;
	int fd;
	void *base;
	size_t len;
	char why[200];
	bool refused;
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

static int open_variant(struct perf_event_attr *attr,
			const FIXTURE_VARIANT(page) * v, int group)
{
	return up_perf_event_open(attr, v->cpu < 0 ? 0 : -1, v->cpu, group, 0);
}

FIXTURE_SETUP(page)
{
	self->fd = -1;
	self->base = MAP_FAILED;
	self->len = 3 * page_size();
	/* The 6.1 harness runs the body even after SKIP here: record why. */
	if (kind_attr(variant->kind, &self->attr, self->why,
		      sizeof(self->why)) ||
	    drop_privileges(variant->priv, self->why, sizeof(self->why))) {
		self->refused = true;
		return;
	}
	self->fd = open_variant(&self->attr, variant, -1);
	if (self->fd < 0) {
		self->refused =
			open_refused(errno, self->why, sizeof(self->why));
		ASSERT_TRUE(self->refused) TH_LOG("%s", self->why);
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

/* Every promise about the page that holds in any state, on one snapshot. */
static void __expect_page_abi(struct __test_metadata *_metadata, const void *pg,
			      const char *state)
{
	unsigned char snap[UP_HDR_LEN];
	struct up_msg m;

	ASSERT_EQ(0, up_snapshot(pg, snap))
	TH_LOG("%s: page lock never settled", state);
	/* uapi: cap_bit0 "Always 0", cap_bit0_is_deprecated "Always 1" */
	EXPECT_TRUE(up_check_bit0(snap, &m)) TH_LOG("%s: %s", state, m.s);
	EXPECT_TRUE(up_check_bit1(snap, &m)) TH_LOG("%s: %s", state, m.s);
	/* uapi: size "Header size up to __reserved[] fields" */
	EXPECT_TRUE(up_check_size(snap, UP_SIZE_HDR, &m))
	TH_LOG("%s: %s", state, m.s);
	/* uapi: __reserved "align to 1k": never written */
	EXPECT_TRUE(up_check_reserved(snap, &m)) TH_LOG("%s: %s", state, m.s);
}

#define expect_page_abi(pg, state) __expect_page_abi(_metadata, pg, state)

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
		SKIP(return, "%s", self->why);
	expect_page_abi(self->base, "opened disabled");
}

TEST_F(page, after_enable)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	expect_page_abi(self->base, "after ENABLE");
}

TEST_F(page, after_disable)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_DISABLE, 0));
	expect_page_abi(self->base, "after DISABLE");
}

TEST_F(page, after_reset)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_RESET, 0));
	expect_page_abi(self->base, "after RESET");
}

TEST_F(page, after_period)
{
	__u64 period = 500000;

	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_PERIOD, &period))
	TH_LOG("PERIOD: %s", strerror(errno));
	workload();
	expect_page_abi(self->base, "after PERIOD");
}

TEST_F(page, after_refresh)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_REFRESH, 1))
	TH_LOG("REFRESH: %s", strerror(errno));
	workload();
	expect_page_abi(self->base, "after REFRESH");
}

TEST_F(page, after_workload)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	expect_page_abi(self->base, "after a workload");
}

TEST_F(page, group_sibling)
{
	struct perf_event_attr attr = self->attr;
	void *pg;
	int fd;

	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	attr.disabled = 0;
	fd = open_variant(&attr, variant, self->fd);
	if (fd < 0 && open_refused(errno, self->why, sizeof(self->why)))
		SKIP(return, "sibling: %s", self->why);
	ASSERT_LE(0, fd) TH_LOG("sibling: %s", strerror(errno));
	pg = mmap(NULL, 2 * page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("mmap sibling: %s", strerror(errno));
	ASSERT_EQ(0,
		  ioctl(self->fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP));
	workload();
	expect_page_abi(self->base, "group leader");
	expect_page_abi(pg, "group sibling");
	munmap(pg, 2 * page_size());
	close(fd);
}

TEST_F(page, second_mmap)
{
	void *pg;

	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	pg = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		  0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("second mmap: %s", strerror(errno));
	workload();
	expect_page_abi(pg, "second mapping of the fd");
	expect_page_abi(self->base, "first mapping, after the second");
	munmap(pg, self->len);
}

TEST_F(page, munmap_then_mmap)
{
	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	ASSERT_EQ(0, munmap(self->base, self->len));
	self->base = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->base) TH_LOG("mmap: %s", strerror(errno));
	expect_page_abi(self->base, "mapped again after munmap");
}

TEST_F(page, read_only_mapping)
{
	void *pg;
	int fd;

	if (self->fd < 0)
		SKIP(return, "%s", self->why);
	/* A fresh event: a read-only buffer cannot share a writable one's. */
	fd = open_variant(&self->attr, variant, -1);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
	pg = mmap(NULL, self->len, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, pg) TH_LOG("PROT_READ mmap: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	workload();
	expect_page_abi(pg, "PROT_READ mapping");
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
		SKIP(return, "%s", self->why);
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
		expect_page_abi(pg, state);
		if (data_pages[i]) {
			ASSERT_EQ(0, up_snapshot(pg, snap));
			/* uapi data_offset/data_size (4.1): the area after the page */
			EXPECT_TRUE(up_check_data_area(snap, page_size(),
						       data_pages[i], &m))
			TH_LOG("%s: %s", state, m.s);
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
	     up_check_size(snap, UP_SIZE_HDR, &m) &&
	     up_check_reserved(snap, &m);
	if (!ok)
		fprintf(stderr, "# %s: %s\n", who, m.s);
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
		SKIP(return, "%s", self->why);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_ENABLE, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		workload();
		_exit(check_fd_page(self->fd, self->len, "forked child"));
	}
	expect_child_ok(_metadata, pid, "forked child");
	expect_page_abi(self->base, "parent after fork");
}

/* The fd survives exec; the new image maps and checks it. */
TEST_F(page, after_exec)
{
	char fdstr[16], lenstr[24];
	pid_t pid;

	if (self->fd < 0)
		SKIP(return, "%s", self->why);
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

/* uapi bitfields: each named capability is its own ABI bit (3.12 fix). */
TEST(cap_fields_are_abi_bits)
{
	struct perf_event_mmap_page pg;
	struct up_msg m;

#define EXPECT_CAP_FIELD(field, bit)                                  \
	do {                                                          \
		memset(&pg, 0, sizeof(pg));                           \
		pg.field = 1;                                         \
		EXPECT_TRUE(up_check_cap_field(&pg, #field, bit, &m)) \
		TH_LOG("%s", m.s);                                    \
	} while (0)

	EXPECT_CAP_FIELD(cap_bit0, UP_CAP_BIT0);
	EXPECT_CAP_FIELD(cap_bit0_is_deprecated, UP_CAP_BIT0_IS_DEPRECATED);
	EXPECT_CAP_FIELD(cap_user_rdpmc, UP_CAP_USER_RDPMC);
	EXPECT_CAP_FIELD(cap_user_time, UP_CAP_USER_TIME);
	EXPECT_CAP_FIELD(cap_user_time_zero, UP_CAP_USER_TIME_ZERO);
	EXPECT_CAP_FIELD(cap_user_time_short, UP_CAP_USER_TIME_SHORT);
#undef EXPECT_CAP_FIELD
}

/* One kernel, one layout: size is the same for every kind that opens. */
TEST(size_same_for_every_kind)
{
	enum kind k;
	uint32_t first = 0, size;
	int fd, opened = 0;
	struct perf_event_attr attr;
	char why[200];
	void *pg;

	for (k = K_CPU_CLOCK; k <= K_INSTRUCTIONS; k++) {
		if (kind_attr(k, &attr, why, sizeof(why)))
			continue;
		fd = up_perf_event_open(&attr, 0, -1, -1, 0);
		if (fd < 0)
			continue;
		pg = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, pg);
		size = up_u32(pg, UP_SIZE);
		if (!opened++)
			first = size;
		/* one struct perf_event_mmap_page per kernel: one size */
		EXPECT_EQ(first, size)
		TH_LOG("kind %d: size %u, kind 0: %u", k, size, first);
		munmap(pg, page_size());
		close(fd);
	}
	if (!opened)
		SKIP(return, "no event kind opens here");
}

/*
 * Side-band records of a known size, from a dummy event: the u64 at byte
 * 1024 must move by exactly their bytes, and walking them must end there.
 */
#define REC_MMAP_ANON \
	(8 + 8 + 24 + 8) /* hdr, pid/tid, addr/len/pgoff, "//anon" */
#define REC_COMM_ABI (8 + 8 + 8) /* hdr, pid/tid, "pabi" */
#define REC_FORK (8 + 16 + 8) /* hdr, pid/ppid/tid/ptid, time */

static int open_sideband(int data_pages, void **base, size_t *len, int prot)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.mmap = 1,
		.mmap_data = 1,
		.comm = 1,
		.task = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd = up_perf_event_open(&a, 0, -1, -1, 0);

	if (fd < 0)
		return -1;
	*len = (1 + data_pages) * page_size();
	*base = mmap(NULL, *len, prot, MAP_SHARED, fd, 0);
	if (*base == MAP_FAILED) {
		close(fd);
		return -1;
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
	if (fd < 0 && open_refused(errno, m.s, sizeof(m.s)))
		SKIP(return, "dummy event: %s", m.s);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));

	/* Consume what exists (the buffer's own MMAP record) as a reader does. */
	before = up_data_head(base);
	__atomic_store_n(&((struct perf_event_mmap_page *)base)->data_tail,
			 before, __ATOMIC_RELEASE);
	bytes = produce_records();
	/* uapi: data_head, "head in the data section", is at byte 1024 */
	EXPECT_TRUE(up_check_head_grew(base, before, bytes, &m))
	TH_LOG("%s", m.s);
	/* records are perf_event_header-framed and end exactly at data_head */
	EXPECT_TRUE(up_check_records(base, types, PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(1U, types[PERF_RECORD_MMAP]);
	EXPECT_EQ(1U, types[PERF_RECORD_COMM]);
	EXPECT_EQ(1U, types[PERF_RECORD_FORK]);
	EXPECT_TRUE(up_check_data_area(base, page_size(), 8, &m))
	TH_LOG("%s", m.s);
	/* the named field and the raw bytes are one and the same */
	EXPECT_EQ(up_data_head(base), up_named(base)->data_head);
	munmap(base, len);
	close(fd);
}

/* Fill a 1-page data area with COMM records without consuming any. */
static void fill_buffer(void)
{
	char name[16];
	int i;

	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "pabi%d", i % 10);
		prctl(PR_SET_NAME, name);
	}
}

/*
 * uapi: "When the mapping is PROT_WRITE the @data_tail value should be
 * written by userspace ... the kernel will not over-write unread data";
 * what it drops it reports as PERF_RECORD_LOST (__perf_output_begin()).
 */
TEST(data_tail_is_honoured)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	uint64_t head, size;
	struct up_msg m;
	size_t len;
	void *base;
	int fd;

	fd = open_sideband(1, &base, &len, PROT_READ | PROT_WRITE);
	if (fd < 0 && open_refused(errno, m.s, sizeof(m.s)))
		SKIP(return, "dummy event: %s", m.s);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
	size = up_u64(base, UP_DATA_SIZE);

	fill_buffer();
	head = up_data_head(base);
	ASSERT_LE(head, size)
	TH_LOG("kernel wrote past data_tail 0: head %llu, size %llu",
	       (unsigned long long)head, (unsigned long long)size);
	EXPECT_TRUE(up_check_records(base, types, PERF_RECORD_MAX, &m))
	TH_LOG("unconsumed records were overwritten: %s", m.s);
	EXPECT_EQ(0U, types[PERF_RECORD_LOST]);

	/* Consume everything: the next record is preceded by RECORD_LOST. */
	__atomic_store_n((uint64_t *)((char *)base + UP_DATA_TAIL), head,
			 __ATOMIC_RELEASE);
	prctl(PR_SET_NAME, "pabi-after");
	memset(types, 0, sizeof(types));
	EXPECT_TRUE(up_check_records(base, types, PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(1U, types[PERF_RECORD_LOST])
	TH_LOG("no RECORD_LOST after a full buffer");
	EXPECT_EQ(1U, types[PERF_RECORD_COMM]);
	munmap(base, len);
	close(fd);
}

/* A read-only mapping is an overwrite buffer: data_tail is not consulted. */
TEST(read_only_buffer_overwrites)
{
	uint64_t head, size;
	struct up_msg m;
	size_t len;
	void *base;
	int fd;

	fd = open_sideband(1, &base, &len, PROT_READ);
	if (fd < 0 && open_refused(errno, m.s, sizeof(m.s)))
		SKIP(return, "dummy event: %s", m.s);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
	size = up_u64(base, UP_DATA_SIZE);
	fill_buffer();
	head = up_data_head(base);
	/* ring_buffer_init(): no RING_BUFFER_WRITABLE -> rb->overwrite = 1 */
	EXPECT_LT(size, head)
	TH_LOG("head %llu never wrapped a %llu-byte buffer",
	       (unsigned long long)head, (unsigned long long)size);
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
