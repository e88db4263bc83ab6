// SPDX-License-Identifier: GPL-2.0
/*
 * Self-monitoring through the user page: a task that mmaps its own event
 * reads the counter with no syscall, by the loop documented in uapi
 * linux/perf_event.h (up_self_read() in user_page.h), and gets what read()
 * gives.  Counts are compared exactly: read() before <= self-read <= read()
 * after, and the other way round.
 *
 * Only hardware events can be read from user space: where the PMU is
 * missing or user access cannot be had, those tests SKIP with the reason.
 * The knobs changed here (arm64 perf_user_access, x86 cpu/rdpmc,
 * perf_event_paranoid) are put back by a guardian process even when a
 * test dies.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "user_page.h"

#define USER_ACCESS "/proc/sys/kernel/perf_user_access"
#define PARANOID "/proc/sys/kernel/perf_event_paranoid"
#define KNOB_LOCK "/tmp/perf_events_rdpmc.lock"
#define EXEC_ENV "PERF_EVENTS_RDPMC_EXEC_CHILD"

/* arm_pmuv3.c format: config1:0 "long" (64-bit), config1:1 "rdpmc" */
#define CFG1_64BIT (1ULL << 0)
#define CFG1_RDPMC (1ULL << 1)

#define LOOPS 1000
#define MAX_EVENTS 34
#define READ_TIMES \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

struct ev {
	int fd;
	void *pg;
};

struct rd {
	uint64_t value, enabled, running;
};

/* Some user-space instructions and cycles to count. */
static void work(unsigned int n)
{
	uint64_t x = n;
	unsigned int i;

	for (i = 0; i < n; i++) {
		x += i ^ (x >> 3);
		asm volatile("" : "+r"(x));
	}
}

/* Errors of perf_event_open() that mean "not here", not "broken". */
static bool unsupported(int err)
{
	return err == ENOENT || err == EOPNOTSUPP || err == ENODEV ||
	       err == EACCES || err == EPERM;
}

static const char *why(int err)
{
	if (err == EACCES || err == EPERM)
		return "not permitted (perf_event_paranoid, capabilities)";
	return "no such PMU or event here";
}

/* A user-only hardware event, readable from user space where it can be. */
static void hw_attr(struct perf_event_attr *a, uint64_t config, bool w64,
		    uint64_t period)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_HARDWARE;
	a->config = config;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->read_format = READ_TIMES;
	a->sample_period = period;
#ifdef __aarch64__
	a->config1 = CFG1_RDPMC | (w64 ? CFG1_64BIT : 0);
#endif
}

static void sw_attr(struct perf_event_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
	a->exclude_kernel = 1;
	a->read_format = READ_TIMES;
}

/* Open and map the user page; 0 or -errno. */
static int ev_open_on(struct ev *e, struct perf_event_attr *a, pid_t pid,
		      int group)
{
	e->pg = MAP_FAILED;
	e->fd = up_perf_event_open(a, pid, -1, group, PERF_FLAG_FD_CLOEXEC);
	if (e->fd < 0)
		return -errno;
	e->pg = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, e->fd,
		     0);
	if (e->pg == MAP_FAILED) {
		close(e->fd);
		e->fd = -1;
		return -errno;
	}
	return 0;
}

static int ev_open(struct ev *e, struct perf_event_attr *a)
{
	return ev_open_on(e, a, 0, -1);
}

static void ev_close(struct ev *e)
{
	if (e->pg != MAP_FAILED && e->pg)
		munmap(e->pg, sysconf(_SC_PAGESIZE));
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	e->pg = MAP_FAILED;
}

static bool rd(int fd, struct rd *r)
{
	return read(fd, r, sizeof(*r)) == sizeof(*r);
}

/*
 * Knobs: set a sysctl or sysfs value for the test and put the old one back
 * however the test ends.  A guardian process in its own session, deaf to
 * SIGTERM/SIGHUP/SIGINT, waits for EOF on a pipe whose write end only the
 * test holds, then restores.  It also holds an flock that the next knob_set()
 * waits for, so a test that died is restored before the next one reads.
 */
struct knob {
	const char *path;
	char saved[32];
	int pipe_w;
	pid_t guardian;
};

static int file_read(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read(fd, buf, n - 1);
	close(fd);
	if (len < 0)
		return -EIO;
	buf[len] = 0;
	return 0;
}

static int file_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = write(fd, val, strlen(val));
	close(fd);
	return len == (ssize_t)strlen(val) ? 0 : -EIO;
}

static void knob_guard(struct knob *k, int pipe_r, int lock)
{
	ssize_t n;
	char c;
	int fd;

	setsid();
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	/* keep only the pipe and the lock: no perf event stays open here */
	for (fd = 3; fd < 1024; fd++)
		if (fd != pipe_r && fd != lock)
			close(fd);
	for (;;) {
		n = read(pipe_r, &c, 1);
		if (n > 0 || (n < 0 && errno == EINTR))
			continue;
		break; /* EOF: the test is gone */
	}
	file_write(k->path, k->saved);
	_exit(0);
}

/* 0 when path holds val (k->guardian set if it was changed), or -errno. */
static int knob_set(struct knob *k, const char *path, const char *val)
{
	char cur[32];
	int p[2], lock, err;

	k->path = path;
	k->guardian = 0;
	k->pipe_w = -1;
	lock = open(KNOB_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock >= 0)
		flock(lock, LOCK_EX);
	err = file_read(path, k->saved, sizeof(k->saved));
	if (err)
		goto out;
	if (atoi(k->saved) == atoi(val))
		goto out;
	if (pipe2(p, O_CLOEXEC)) {
		err = -errno;
		goto out;
	}
	k->pipe_w = p[1];
	k->guardian = fork();
	if (k->guardian == 0) {
		close(p[1]);
		k->pipe_w = -1;
		knob_guard(k, p[0], lock);
	}
	close(p[0]);
	err = file_write(path, val);
	if (!err &&
	    (file_read(path, cur, sizeof(cur)) || atoi(cur) != atoi(val)))
		err = -EINVAL;
out:
	if (lock >= 0)
		close(lock); /* the guardian keeps its copy locked */
	return err;
}

/* Read a knob once every earlier guardian has put its value back. */
static int knob_read(const char *path, char *buf, size_t n)
{
	int lock = open(KNOB_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	int err;

	if (lock >= 0)
		flock(lock, LOCK_EX);
	err = file_read(path, buf, n);
	if (lock >= 0)
		close(lock);
	return err;
}

/* Put the value back now and wait for it (the guardian is the backstop). */
static void knob_restore(struct knob *k)
{
	if (k->guardian <= 0)
		return;
	file_write(k->path, k->saved);
	close(k->pipe_w);
	waitpid(k->guardian, NULL, 0);
	k->guardian = 0;
}

/* The knob that lets a self-monitoring task read its counters. */
static const char *rdpmc_knob(char *buf, size_t n)
{
	static const char *const x86[] = {
		"/sys/bus/event_source/devices/cpu/rdpmc",
		"/sys/bus/event_source/devices/cpu_core/rdpmc",
	};
	unsigned int i;

	if (!access(USER_ACCESS, F_OK))
		return USER_ACCESS;
	for (i = 0; i < ARRAY_SIZE(x86); i++) {
		if (!access(x86[i], F_OK)) {
			snprintf(buf, n, "%s", x86[i]);
			return buf;
		}
	}
	return NULL;
}

/* Turn user access on for the test if it is off (and root may). */
static void user_access_on(struct __test_metadata *_metadata, struct knob *k)
{
	char buf[128];
	const char *path = rdpmc_knob(buf, sizeof(buf));

	k->guardian = 0;
	if (path && knob_set(k, path, "1"))
		TH_LOG("cannot set %s to 1: self-reads may be refused", path);
}

/*
 * The agreement: r0 = read(); s = self-read; r1 = read() gives
 * r0 <= s <= r1, and s0 = self-read; r = read(); s1 = self-read gives
 * s0 <= r <= s1.  Also the self-read never goes back, nor jumps by more
 * than the counter's width would (the 2^48 / 2^32 jump of a bad sign
 * extension, or of an offset with its high bit set).
 */
static void bracket_loop(struct __test_metadata *_metadata, struct ev *e,
			 unsigned int loops, unsigned int spin)
{
	struct up_count s, s1;
	uint64_t prev = 0;
	struct rd r0, r1;
	unsigned int i;
	int ret;

	for (i = 0; i < loops; i++) {
		ASSERT_TRUE(rd(e->fd, &r0));
		ret = up_self_read(e->pg, &s);
		ASSERT_TRUE(rd(e->fd, &r1));
		/* uapi: the loop retries "while (pc->lock != seq)" */
		ASSERT_NE(-EAGAIN, ret) TH_LOG("the seqlock never held still");
		ASSERT_EQ(0, ret)
		TH_LOG("no user read offered: index %u, cap_user_rdpmc %d",
		       s.index, up_cap(e->pg, UP_CAP_USER_RDPMC));
		/* uapi: "count = pc->offset; ... count += pmc" is the count */
		ASSERT_LE(r0.value, s.count)
		TH_LOG("loop %u: self-read %llu < read() before %llu (index %u width %u pmc 0x%llx)",
		       i, (unsigned long long)s.count,
		       (unsigned long long)r0.value, s.index, s.width,
		       (unsigned long long)s.pmc);
		ASSERT_LE(s.count, r1.value)
		TH_LOG("loop %u: self-read %llu > read() after %llu (index %u width %u pmc 0x%llx)",
		       i, (unsigned long long)s.count,
		       (unsigned long long)r1.value, s.index, s.width,
		       (unsigned long long)s.pmc);
		ASSERT_LE(prev, s.count);
		/* far less than 2^31 events between two reads of one loop */
		if (prev)
			ASSERT_LT(s.count - prev, 1ULL << 31);
		prev = s.count;

		ASSERT_EQ(0, up_self_read(e->pg, &s));
		ASSERT_TRUE(rd(e->fd, &r0));
		ASSERT_EQ(0, up_self_read(e->pg, &s1));
		ASSERT_LE(s.count, r0.value)
		TH_LOG("loop %u: read() %llu < self-read before %llu (index %u)",
		       i, (unsigned long long)r0.value,
		       (unsigned long long)s.count, s.index);
		ASSERT_LE(r0.value, s1.count)
		TH_LOG("loop %u: read() %llu > self-read after %llu (index %u)",
		       i, (unsigned long long)r0.value,
		       (unsigned long long)s1.count, s1.index);
		prev = s1.count;
		work(spin + (i % 16) * 37);
	}
}

struct agree_cfg {
	uint64_t config;
	uint64_t period; /* 0: counting */
	bool w64;
	bool evcnt; /* arm64: keep it off the cycle counter */
};

/* NULL when the loop ran, else why it could not. */
static const char *agree_run(struct __test_metadata *_metadata,
			     const struct agree_cfg *v)
{
	static char skip[160];
	struct ev e, hog = { -1, MAP_FAILED };
	struct perf_event_attr a;
	uint32_t lock0;
	struct rd r;
	int err;

	if (v->evcnt) {
#ifndef __aarch64__
		return "the cycle counter is an arm64 notion";
#endif
		/* occupy PMCCNTR_EL0: the next cycles event takes PMEVCNTRn */
		hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, true, 0);
		err = ev_open(&hog, &a);
		if (err) {
			snprintf(skip, sizeof(skip), "cycles: %s (%s)",
				 why(-err), strerror(-err));
			return unsupported(-err) ? skip : NULL;
		}
	}
	hw_attr(&a, v->config, v->w64, v->period);
	err = ev_open(&e, &a);
	if (err) {
		ev_close(&hog);
		/* arm_pmuv3.c: 64-bit user events need FEAT_PMUv3p5 */
		snprintf(skip, sizeof(skip), "open: %s (%s)", why(-err),
			 strerror(-err));
		if (unsupported(-err))
			return skip;
		EXPECT_EQ(0, err);
		return NULL;
	}
	work(1000);
	ASSERT_TRUE(rd(e.fd, &r));
	if (!r.running) {
		ev_close(&e);
		ev_close(&hog);
		return "the event never ran (no counter it fits)";
	}
#ifdef __aarch64__
	/* arm_pmuv3.c arch_perf_update_userpage(): 64 for config1 bit 0 */
	EXPECT_EQ(v->w64 ? 64 : 32, up_u16(e.pg, UP_PMC_WIDTH));
#endif
	lock0 = up_u32(e.pg, UP_LOCK);
	bracket_loop(_metadata, &e, LOOPS, 200);
	/* sampling: the overflows rewrote the page while we read it */
	if (v->period)
		EXPECT_NE(lock0, up_u32(e.pg, UP_LOCK));
	if (v->evcnt) {
		struct up_count s;

		up_self_read(e.pg, &s);
		EXPECT_NE(UP_ARM64_CYCLE_COUNTER + 1, s.index);
	}
	ev_close(&e);
	ev_close(&hog);
	return NULL;
}

FIXTURE(agree)
{
	struct knob k;
};

FIXTURE_VARIANT(agree)
{
	struct agree_cfg cfg;
};

/* x86 counters have the width the hardware has: w64 changes nothing. */
/* checkpatch wants a space before the variants' braces */
/* clang-format off */
FIXTURE_VARIANT_ADD(agree, cycles_count_32) {
	.cfg = { .config = PERF_COUNT_HW_CPU_CYCLES,
		 .period = 0,
		 .w64 = false,
		 .evcnt = false },
};
FIXTURE_VARIANT_ADD(agree, cycles_count_64) {
	.cfg = { .config = PERF_COUNT_HW_CPU_CYCLES,
		 .period = 0,
		 .w64 = true,
		 .evcnt = false },
};
FIXTURE_VARIANT_ADD(agree, cycles_sample_32) {
	.cfg = { .config = PERF_COUNT_HW_CPU_CYCLES,
		 .period = 20011,
		 .w64 = false,
		 .evcnt = false },
};
FIXTURE_VARIANT_ADD(agree, cycles_sample_64) {
	.cfg = { .config = PERF_COUNT_HW_CPU_CYCLES,
		 .period = 20011,
		 .w64 = true,
		 .evcnt = false },
};
FIXTURE_VARIANT_ADD(agree, instructions_count_32) {
	.cfg = { .config = PERF_COUNT_HW_INSTRUCTIONS,
		 .period = 0,
		 .w64 = false,
		 .evcnt = false },
};
FIXTURE_VARIANT_ADD(agree, instructions_count_64) {
	.cfg = { .config = PERF_COUNT_HW_INSTRUCTIONS,
		 .period = 0,
		 .w64 = true,
		 .evcnt = false },
};
FIXTURE_VARIANT_ADD(agree, instructions_sample_32) {
	.cfg = { .config = PERF_COUNT_HW_INSTRUCTIONS,
		 .period = 20011,
		 .w64 = false,
		 .evcnt = false },
};
FIXTURE_VARIANT_ADD(agree, instructions_sample_64) {
	.cfg = { .config = PERF_COUNT_HW_INSTRUCTIONS,
		 .period = 20011,
		 .w64 = true,
		 .evcnt = false },
};
FIXTURE_VARIANT_ADD(agree, cycles_evcnt_count_32) {
	.cfg = { .config = PERF_COUNT_HW_CPU_CYCLES,
		 .period = 0,
		 .w64 = false,
		 .evcnt = true },
};
FIXTURE_VARIANT_ADD(agree, cycles_evcnt_sample_32) {
	.cfg = { .config = PERF_COUNT_HW_CPU_CYCLES,
		 .period = 20011,
		 .w64 = false,
		 .evcnt = true },
};
FIXTURE_VARIANT_ADD(agree, cycles_evcnt_count_64) {
	.cfg = { .config = PERF_COUNT_HW_CPU_CYCLES,
		 .period = 0,
		 .w64 = true,
		 .evcnt = true },
};

/* clang-format on */

FIXTURE_SETUP(agree)
{
	user_access_on(_metadata, &self->k);
}

FIXTURE_TEARDOWN(agree)
{
	knob_restore(&self->k);
}

TEST_F(agree, brackets_read)
{
	const char *skip = agree_run(_metadata, &variant->cfg);

	if (skip)
		SKIP(return, "%s", skip);
}

/*
 * Every counter the PMU has: a group as large as the PMU takes (arm_pmu.c
 * and x86 validate_group() refuse one that does not fit), each member
 * sampling with its own period so that no two registers hold alike values,
 * every member compared with its own read().
 */
TEST(every_counter)
{
	struct ev e[MAX_EVENTS];
	struct perf_event_attr a;
	uint32_t seen[MAX_EVENTS];
	struct up_count s;
	struct knob k;
	int n, i, j, err;
	struct rd r;

	user_access_on(_metadata, &k);
	/* enabled: validate_event() passes over an OFF leader */
	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, false, 30011);
	err = ev_open(&e[0], &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "cycles: %s (%s)", why(-err), strerror(-err));
	}
	ASSERT_EQ(0, err);
	for (n = 1; n < MAX_EVENTS; n++) {
		hw_attr(&a,
			n % 2 ? PERF_COUNT_HW_INSTRUCTIONS :
				PERF_COUNT_HW_CPU_CYCLES,
			false, 10007 + 7919 * n);
		if (ev_open_on(&e[n], &a, 0, e[0].fd))
			break;
	}
	ASSERT_GE(n, 2) TH_LOG("a group of two hardware events did not open");
	/* x86 validate_group() does not see a pinned NMI watchdog: shrink */
	for (work(5000); n > 2 && rd(e[0].fd, &r) && !r.running; work(5000))
		ev_close(&e[--n]);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, up_self_read(e[i].pg, &s))
		TH_LOG("member %d of %d: index %u", i, n, s.index);
#ifdef __aarch64__
		/* arm_pmuv3.c arch_perf_update_userpage(): 32 without bit 0 */
		ASSERT_EQ(32, s.width);
#endif
		seen[i] = s.index;
		for (j = 0; j < i; j++)
			ASSERT_NE(seen[j], seen[i]);
	}
	TH_LOG("%d counters in use", n);
	for (i = 0; i < n; i++)
		bracket_loop(_metadata, &e[i], LOOPS / 10, 100);
	for (i = 0; i < n; i++)
		ev_close(&e[i]);
	knob_restore(&k);
}

/*
 * Not counting, no index: perf_event_index() is 0 unless the event is
 * ACTIVE (kernel/events/core.c), and the reader must fall back to read().
 */
TEST(disabled_index_zero)
{
	struct perf_event_attr a;
	struct up_count s;
	struct knob k;
	struct ev e;
	struct rd r;
	int err;

	user_access_on(_metadata, &k);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	a.disabled = 1;
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "instructions: %s (%s)", why(-err),
			   strerror(-err));
	}
	ASSERT_EQ(0, err);
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_EQ(0, ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0));
	work(1000);
	ASSERT_EQ(0, up_self_read(e.pg, &s));
	ASSERT_NE(0U, s.index);
	bracket_loop(_metadata, &e, 50, 100);
	ASSERT_EQ(0, ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_TRUE(rd(e.fd, &r));
	ASSERT_NE(0ULL, r.value);
	ev_close(&e);
	knob_restore(&k);
}

/* Count the counters: the largest group of hardware events that opens. */
static int count_counters(void)
{
	struct perf_event_attr a;
	struct ev e[MAX_EVENTS];
	int n, i;

	/* enabled: validate_event() passes over an OFF leader */
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	if (ev_open(&e[0], &a))
		return 0;
	for (n = 1; n < MAX_EVENTS; n++)
		if (ev_open_on(&e[n], &a, 0, e[0].fd))
			break;
	for (i = n - 1; i >= 0; i--)
		ev_close(&e[i]);
	return n;
}

/*
 * s brackets r0..r1 in each of count, time_enabled and time_running, and
 * the scaled count lies between the extremes that bracket allows (scaling,
 * uapi: "count = quot * enabled + (rem * enabled) / running", grows with
 * count and enabled, shrinks with running).
 */
static void time_bracket(struct __test_metadata *_metadata, const struct rd *r0,
			 const struct up_count *s, const struct rd *r1,
			 bool counted)
{
	uint64_t lo, hi, sc;

	/* uapi: "enabled += delta; if (index) running += delta;" */
	ASSERT_LE(r0->enabled, s->enabled)
	TH_LOG("user time_enabled %llu < read() before %llu (index %u)",
	       (unsigned long long)s->enabled, (unsigned long long)r0->enabled,
	       s->index);
	ASSERT_LE(s->enabled, r1->enabled)
	TH_LOG("user time_enabled %llu > read() after %llu (index %u)",
	       (unsigned long long)s->enabled, (unsigned long long)r1->enabled,
	       s->index);
	ASSERT_LE(r0->running, s->running)
	TH_LOG("user time_running %llu < read() before %llu (index %u)",
	       (unsigned long long)s->running, (unsigned long long)r0->running,
	       s->index);
	ASSERT_LE(s->running, r1->running)
	TH_LOG("user time_running %llu > read() after %llu (index %u)",
	       (unsigned long long)s->running, (unsigned long long)r1->running,
	       s->index);
	if (!counted || !r0->running)
		return;
	lo = up_scale(r0->value, r0->enabled, r1->running);
	hi = up_scale(r1->value, r1->enabled, r0->running);
	sc = up_scale(s->count, s->enabled, s->running);
	ASSERT_LE(lo, sc);
	ASSERT_LE(sc, hi);
}

/*
 * More events than counters: the core rotates them, the page's index is 0
 * while one waits, and the user-space times and scaled count still bracket
 * what read() returns with TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING.
 */
static const char *multiplex_run(struct __test_metadata *_metadata)
{
	struct ev e[MAX_EVENTS];
	struct perf_event_attr a;
	unsigned int loop, waited = 0, ran = 0;
	struct up_count s;
	struct rd r0, r1;
	int n, i, ret;

	n = count_counters();
	if (!n)
		return "no hardware event opens here";
	n = n + 2 > MAX_EVENTS ? MAX_EVENTS : n + 2;
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, ev_open(&e[i], &a));
	if (!up_cap(e[0].pg, UP_CAP_USER_TIME)) {
		for (i = 0; i < n; i++)
			ev_close(&e[i]);
		return "cap_user_time is not set";
	}
	for (loop = 0; loop < LOOPS / 4; loop++) {
		for (i = 0; i < n; i++) {
			ASSERT_TRUE(rd(e[i].fd, &r0));
			ret = up_self_read(e[i].pg, &s);
			ASSERT_TRUE(rd(e[i].fd, &r1));
			ASSERT_TRUE(ret == 0 || ret == 1);
			ASSERT_TRUE(s.has_time);
			if (ret == 0) {
				ASSERT_LE(r0.value, s.count);
				ASSERT_LE(s.count, r1.value);
				ran++;
			} else {
				waited++;
			}
			time_bracket(_metadata, &r0, &s, &r1, ret == 0);
		}
		work(3000);
	}
	ASSERT_TRUE(rd(e[0].fd, &r0));
	TH_LOG("%d events, %u self-reads, %u fell back", n, ran, waited);
	/* more events than counters: some had to wait */
	for (i = 0; i < n; i++) {
		ASSERT_TRUE(rd(e[i].fd, &r0));
		if (r0.running < r0.enabled)
			break;
	}
	EXPECT_LT(i, n) TH_LOG("no event was ever multiplexed out");
	EXPECT_NE(0U, ran);
	for (i = 0; i < n; i++)
		ev_close(&e[i]);
	return NULL;
}

TEST(multiplex)
{
	const char *skip;
	struct knob k;

	user_access_on(_metadata, &k);
	skip = multiplex_run(_metadata);
	knob_restore(&k);
	if (skip)
		SKIP(return, "%s", skip);
}

/*
 * The time part without a PMU: a software event's page has cap_user_time
 * where the architecture sets it (x86 with a stable TSC, arm64 with the
 * architected timer), and time_enabled computed in user space brackets
 * read()'s.  Software events have index 0, so time_running is not extended.
 */
static const char *user_time_run(struct __test_metadata *_metadata)
{
	struct perf_event_attr a;
	struct up_count s;
	struct rd r0, r1;
	unsigned int i;
	struct ev e;
	int err;

	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	err = ev_open(&e, &a);
	if (err && unsupported(-err))
		return "task-clock: not permitted or not here";
	ASSERT_EQ(0, err);
	if (!up_cap(e.pg, UP_CAP_USER_TIME)) {
		ev_close(&e);
		return "cap_user_time is not set for a software event";
	}
	for (i = 0; i < LOOPS; i++) {
		ASSERT_TRUE(rd(e.fd, &r0));
		ASSERT_EQ(1, up_self_read(e.pg, &s));
		ASSERT_TRUE(rd(e.fd, &r1));
		ASSERT_LE(r0.enabled, s.enabled)
		TH_LOG("user time_enabled %llu < read() before %llu",
		       (unsigned long long)s.enabled,
		       (unsigned long long)r0.enabled);
		ASSERT_LE(s.enabled, r1.enabled)
		TH_LOG("user time_enabled %llu > read() after %llu",
		       (unsigned long long)s.enabled,
		       (unsigned long long)r1.enabled);
		work(100);
	}
	ev_close(&e);
	return NULL;
}

TEST(user_time_enabled)
{
	const char *skip = user_time_run(_metadata);

	if (skip)
		SKIP(return, "%s", skip);
}

/* The time stamp of the newest COMM record in the ring (sample_id TIME). */
static bool last_comm_times(const void *pg, uint64_t *t, int n)
{
	const unsigned char *data =
		(const unsigned char *)pg + up_u64(pg, UP_DATA_OFFSET);
	uint64_t size = up_u64(pg, UP_DATA_SIZE);
	uint64_t head = up_data_head(pg), pos = 0;
	struct perf_event_header h;
	int found = 0, i;

	if (head > size)
		return false;
	for (i = 0; i < n; i++)
		t[i] = 0;
	while (pos + sizeof(h) <= head) {
		memcpy(&h, data + pos, sizeof(h));
		if (h.size < sizeof(h))
			return false;
		if (h.type == PERF_RECORD_COMM) {
			/* sample_id_all: the TIME is the record's last u64 */
			memmove(t, t + 1, (n - 1) * sizeof(*t));
			memcpy(&t[n - 1], data + pos + h.size - 8, 8);
			found++;
		}
		pos += h.size;
	}
	return found >= n;
}

/*
 * cap_user_time_zero: a cycle-counter reading converted to perf time
 * (uapi: "timestamp = time_zero + quot * time_mult + ...") lies between
 * the PERF_SAMPLE_TIME stamps of records made just before and after it.
 */
static const char *time_zero_run(struct __test_metadata *_metadata)
{
	long psz = sysconf(_SC_PAGESIZE);
	unsigned char snap[UP_HDR_LEN];
	struct perf_event_attr a;
	uint64_t t[2], cyc, ts;
	void *pg;
	int fd, i;

	if (!UP_HAVE_HW_READ)
		return "no cycle counter read for this architecture";
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.comm = 1;
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TIME;
	a.exclude_kernel = 1;
	fd = up_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && unsupported(errno))
		return "dummy event: not permitted or not here";
	ASSERT_LE(0, fd);
	pg = mmap(NULL, psz * 9, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, pg);
	if (!up_cap(pg, UP_CAP_USER_TIME_ZERO)) {
		munmap(pg, psz * 9);
		close(fd);
		return "cap_user_time_zero is not set";
	}
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, prctl(PR_SET_NAME, "rdpmc-before"));
		cyc = up_hw_cycles();
		ASSERT_EQ(0, prctl(PR_SET_NAME, "rdpmc-after"));
		ASSERT_EQ(0, up_snapshot(pg, snap));
		ASSERT_TRUE(last_comm_times(pg, t, 2));
		ts = up_cyc_to_perf_time(snap, cyc);
		ASSERT_LE(t[0], ts)
		TH_LOG("cycles 0x%llx -> %llu ns, before the COMM at %llu",
		       (unsigned long long)cyc, (unsigned long long)ts,
		       (unsigned long long)t[0]);
		ASSERT_LE(ts, t[1])
		TH_LOG("cycles 0x%llx -> %llu ns, after the COMM at %llu",
		       (unsigned long long)cyc, (unsigned long long)ts,
		       (unsigned long long)t[1]);
	}
	munmap(pg, psz * 9);
	close(fd);
	return NULL;
}

TEST(time_zero)
{
	const char *skip = time_zero_run(_metadata);

	if (skip)
		SKIP(return, "%s", skip);
}

/* Threads, each with its own event, moved between the CPUs as they read. */
#define NTHREADS 4

struct thr {
	pthread_t tid;
	int n;
	int err; /* open: -errno */
	int bad; /* first failing loop + 1 */
	char msg[160];
};

static void *thread_fn(void *arg)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct thr *t = arg;
	struct perf_event_attr a;
	struct up_count s;
	struct rd r0, r1;
	cpu_set_t set;
	struct ev e;
	int i, ret;

	hw_attr(&a,
		t->n % 2 ? PERF_COUNT_HW_INSTRUCTIONS :
			   PERF_COUNT_HW_CPU_CYCLES,
		false, t->n > 1 ? 20011 : 0);
	t->err = ev_open(&e, &a);
	if (t->err)
		return NULL;
	for (i = 0; i < LOOPS / 2 && !t->bad; i++) {
		CPU_ZERO(&set);
		CPU_SET((i + t->n) % (ncpu > 0 ? ncpu : 1), &set);
		sched_setaffinity(0, sizeof(set), &set);
		if (!rd(e.fd, &r0))
			break;
		ret = up_self_read(e.pg, &s);
		if (!rd(e.fd, &r1))
			break;
		if (ret || s.count < r0.value || s.count > r1.value) {
			t->bad = i + 1;
			snprintf(
				t->msg, sizeof(t->msg),
				"thread %d loop %d: ret %d, %llu <= %llu <= %llu (index %u)",
				t->n, i, ret, (unsigned long long)r0.value,
				(unsigned long long)s.count,
				(unsigned long long)r1.value, s.index);
		}
		work(300);
	}
	ev_close(&e);
	return NULL;
}

TEST(threads_migrate)
{
	struct thr t[NTHREADS];
	struct knob k;
	int i;

	user_access_on(_metadata, &k);
	memset(t, 0, sizeof(t));
	for (i = 0; i < NTHREADS; i++) {
		t[i].n = i;
		ASSERT_EQ(0, pthread_create(&t[i].tid, NULL, thread_fn, &t[i]));
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i].tid, NULL);
	knob_restore(&k);
	if (t[0].err && unsupported(-t[0].err))
		SKIP(return, "%s (%s)", why(-t[0].err), strerror(-t[0].err));
	for (i = 0; i < NTHREADS; i++) {
		EXPECT_EQ(0, t[i].err);
		EXPECT_EQ(0, t[i].bad) TH_LOG("%s", t[i].msg);
	}
	TH_LOG("%ld CPUs", sysconf(_SC_NPROCESSORS_ONLN));
}

/* arm64 perf_user_access 0: no index, the reader falls back. */
TEST(user_access_0)
{
	struct perf_event_attr a;
	struct up_count s;
	struct knob k;
	struct ev e;
	struct rd r;
	int err;

	if (access(USER_ACCESS, F_OK))
		SKIP(return, "no %s (not arm64 PMUv3, or before 5.17)",
			   USER_ACCESS);
	err = knob_set(&k, USER_ACCESS, "0");
	if (err)
		SKIP(return, "cannot set %s: %s", USER_ACCESS, strerror(-err));
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "instructions: %s (%s)", why(-err),
			   strerror(-err));
	}
	ASSERT_EQ(0, err);
	work(1000);
	/* arm_pmuv3.c armv8pmu_user_event_idx(): 0 without sysctl */
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_TRUE(rd(e.fd, &r));
	ASSERT_NE(0ULL, r.value);
	ev_close(&e);
	knob_restore(&k);
}

/*
 * With user access off, the counter read itself faults: arm64 EL0 access
 * needs PMUSERENR_EL0 (SIGILL), x86 rdpmc needs CR4.PCE (SIGSEGV).
 */
TEST_SIGNAL(user_access_0_traps, UP_TRAP_SIGNAL)
{
	char buf[128];
	const char *path = rdpmc_knob(buf, sizeof(buf));
	struct perf_event_attr a;
	struct knob k;
	struct ev e;
	int err;

	if (!path || !UP_HAVE_HW_READ)
		SKIP(return, "no user-access knob (no PMU here)");
	err = knob_set(&k, path, "0");
	if (err)
		SKIP(return, "cannot set %s: %s", path, strerror(-err));
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "instructions: %s (%s)", why(-err),
			   strerror(-err));
	}
	ASSERT_EQ(0, err);
	up_hw_counter(0);
	/* still here: restore, and fail for want of the signal */
	knob_restore(&k);
}

/*
 * arm64 perf_user_access 1: an index only for events opened with config1
 * bit 1; without it cap_user_rdpmc is 0 (arm_pmuv3.c
 * arch_perf_update_userpage(), armv8pmu_user_event_idx()).
 */
TEST(user_access_1)
{
	struct perf_event_attr a;
	struct up_count s;
	struct knob k;
	struct ev e;
	int err;

	if (access(USER_ACCESS, F_OK))
		SKIP(return, "no %s (not arm64 PMUv3, or before 5.17)",
			   USER_ACCESS);
	err = knob_set(&k, USER_ACCESS, "1");
	if (err)
		SKIP(return, "cannot set %s: %s", USER_ACCESS, strerror(-err));
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	a.config1 = 0;
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "instructions: %s (%s)", why(-err),
			   strerror(-err));
	}
	ASSERT_EQ(0, err);
	work(1000);
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_FALSE(up_cap(e.pg, UP_CAP_USER_RDPMC));
	ev_close(&e);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	ASSERT_EQ(0, ev_open(&e, &a));
	work(1000);
	ASSERT_EQ(0, up_self_read(e.pg, &s));
	ASSERT_NE(0U, s.index);
	ASSERT_TRUE(up_cap(e.pg, UP_CAP_USER_RDPMC));
	bracket_loop(_metadata, &e, 50, 100);
	ev_close(&e);
	knob_restore(&k);
}

/* x86 cpu/rdpmc: 0 none, 1 tasks with a mapped event, 2 any task. */
static const char *x86_knob(char *buf, size_t n)
{
	const char *p = rdpmc_knob(buf, n);

	return p && strcmp(p, USER_ACCESS) ? p : NULL;
}

TEST(x86_rdpmc_0)
{
	struct perf_event_attr a;
	struct up_count s;
	char buf[128];
	const char *path = x86_knob(buf, sizeof(buf));
	struct knob k;
	struct ev e;
	int err;

	if (!path)
		SKIP(return, "no x86 cpu/rdpmc knob (no x86 PMU here)");
	err = knob_set(&k, path, "0");
	if (err)
		SKIP(return, "cannot set %s: %s", path, strerror(-err));
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "instructions: %s", strerror(-err));
	}
	ASSERT_EQ(0, err);
	/* x86/events/core.c: no PERF_EVENT_FLAG_USER_READ_CNT, index 0 */
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_FALSE(up_cap(e.pg, UP_CAP_USER_RDPMC));
	ev_close(&e);
	knob_restore(&k);
}

TEST(x86_rdpmc_1)
{
	struct perf_event_attr a;
	char buf[128];
	const char *path = x86_knob(buf, sizeof(buf));
	struct knob k;
	struct ev e;
	int err;

	if (!path)
		SKIP(return, "no x86 cpu/rdpmc knob (no x86 PMU here)");
	err = knob_set(&k, path, "1");
	if (err)
		SKIP(return, "cannot set %s: %s", path, strerror(-err));
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "instructions: %s", strerror(-err));
	}
	ASSERT_EQ(0, err);
	bracket_loop(_metadata, &e, 100, 100);
	ev_close(&e);
	knob_restore(&k);
}

/*
 * rdpmc 1: a task with no event mapped cannot execute rdpmc (x86/events/
 * core.c: CR4.PCE follows mm->context.perf_rdpmc_allowed).
 */
TEST_SIGNAL(x86_rdpmc_1_unmapped_traps, SIGSEGV)
{
	char buf[128];
	const char *path = x86_knob(buf, sizeof(buf));
	struct knob k;
	int err;

	if (!path)
		SKIP(return, "no x86 cpu/rdpmc knob (no x86 PMU here)");
	err = knob_set(&k, path, "1");
	if (err)
		SKIP(return, "cannot set %s: %s", path, strerror(-err));
	up_hw_counter(0);
	knob_restore(&k);
}

/* rdpmc 2: any task may execute rdpmc, with no event mapped at all. */
TEST(x86_rdpmc_2)
{
	char buf[128];
	const char *path = x86_knob(buf, sizeof(buf));
	struct knob k;
	int err;

	if (!path)
		SKIP(return, "no x86 cpu/rdpmc knob (no x86 PMU here)");
	err = knob_set(&k, path, "2");
	if (err)
		SKIP(return, "cannot set %s: %s", path, strerror(-err));
	up_hw_counter(0);
	knob_restore(&k);
}

/*
 * No leak: with user access on, a counter the task does not own reads 0.
 * arm_pmuv3.c armv8pmu_enable_user_access() clears unused counters, x86
 * x86_pmu_clear_dirty_counters() (5.15) those a rdpmc task could see.  A
 * child on the same CPU dirties the counters with events of its own.
 */
TEST(no_leak)
{
	struct perf_event_attr a;
	struct up_count s;
	struct knob k;
	cpu_set_t set;
	int n, nread, i, loop, ready[2], err;
	uint64_t v;
	pid_t child;
	struct ev e;
	char c;

#if defined(__x86_64__) || defined(__i386__)
	char wd[8];

	/* the watchdog's counter is in use, its count visible by design */
	if (!file_read("/proc/sys/kernel/nmi_watchdog", wd, sizeof(wd)) &&
	    atoi(wd))
		SKIP(return, "nmi_watchdog holds a counter: set it to 0 first");
#endif
	user_access_on(_metadata, &k);
	n = count_counters();
	if (!n) {
		knob_restore(&k);
		SKIP(return, "no hardware event opens here");
	}
#ifdef __aarch64__
	nread = n < 31 ? n : 31; /* instructions: event counters only */
#else
	nread = n - 1; /* less the fixed counter */
#endif
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, pipe(ready));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct perf_event_attr ca;
		struct ev ce[MAX_EVENTS];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		hw_attr(&ca, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
		ca.config1 = 0;
		for (i = 0; i < n; i++)
			if (ev_open(&ce[i], &ca))
				break;
		c = i;
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			work(100000);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_LT(0, (int)c) TH_LOG("the child could open no event");
	/* ours on the cycle counter (arm64) or one counter (x86) */
	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, true, 0);
	err = ev_open(&e, &a);
	if (err) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		knob_restore(&k);
		if (unsupported(-err))
			SKIP(return, "cycles: %s", strerror(-err));
		ASSERT_EQ(0, err);
	}
	for (loop = 0; loop < 50; loop++) {
		usleep(2000); /* the child runs on this CPU meanwhile */
		ASSERT_EQ(0, up_self_read(e.pg, &s));
		for (i = 0; i < nread; i++) {
			if (i == (int)s.index - 1)
				continue;
			v = up_hw_counter(i);
			if (up_self_read(e.pg, &s) || i == (int)s.index - 1)
				continue; /* moved meanwhile */
			ASSERT_EQ(0ULL, v)
			TH_LOG("counter %d reads 0x%llx, not ours (index %u)",
			       i, (unsigned long long)v, s.index);
		}
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ev_close(&e);
	knob_restore(&k);
}

/*
 * Tests 1, 3, 4 and 5 again with no effective capabilities, at
 * perf_event_paranoid 2 (what the bodies cannot do is logged; SKIP only
 * when no hardware event opened at all).
 */
TEST(unprivileged)
{
	static const struct agree_cfg cfgs[] = {
		{ PERF_COUNT_HW_CPU_CYCLES, 0, false, false },
		{ PERF_COUNT_HW_CPU_CYCLES, 20011, true, false },
		{ PERF_COUNT_HW_INSTRUCTIONS, 0, true, false },
		{ PERF_COUNT_HW_INSTRUCTIONS, 20011, false, false },
	};
	struct knob k, p;
	const char *skip;
	unsigned int i, ran = 0;
	pthread_t tid;
	struct thr t;
	cap_t caps;

	user_access_on(_metadata, &k);
	/* Documentation/admin-guide/perf-security.rst: 2 allows user-only */
	if (knob_set(&p, PARANOID, "2"))
		TH_LOG("cannot set %s to 2", PARANOID);
	caps = cap_get_proc();
	ASSERT_NE(NULL, caps);
	ASSERT_EQ(0, cap_clear_flag(caps, CAP_EFFECTIVE));
	ASSERT_EQ(0, cap_set_proc(caps));
	cap_free(caps);
	for (i = 0; i < ARRAY_SIZE(cfgs); i++) {
		skip = agree_run(_metadata, &cfgs[i]);
		if (skip)
			TH_LOG("config %u: %s", i, skip);
		else
			ran++;
	}
	skip = multiplex_run(_metadata);
	if (skip)
		TH_LOG("multiplex: %s", skip);
	skip = user_time_run(_metadata);
	if (skip)
		TH_LOG("user time: %s", skip);
	skip = time_zero_run(_metadata);
	if (skip)
		TH_LOG("time_zero: %s", skip);
	memset(&t, 0, sizeof(t));
	t.n = 1;
	ASSERT_EQ(0, pthread_create(&tid, NULL, thread_fn, &t));
	pthread_join(tid, NULL);
	if (!t.err)
		EXPECT_EQ(0, t.bad) TH_LOG("%s", t.msg);
	knob_restore(&p);
	knob_restore(&k);
	if (!ran)
		SKIP(return, "no hardware event opens: time checks only");
}

/*
 * The guardian: a test that dies right after changing a knob still gets
 * it put back.  As child subreaper this test inherits the orphaned
 * guardian and waits for it, so no file lock is needed (tinyconfig
 * kernels have no CONFIG_FILE_LOCKING).
 */
TEST(knob_restored_when_killed)
{
	char buf[128], before[32], after[32];
	const char *path = rdpmc_knob(buf, sizeof(buf));
	pid_t child, guardian = 0;
	struct knob k;
	int status, p[2];

	if (!path)
		path = PARANOID;
	if (knob_read(path, before, sizeof(before)))
		SKIP(return, "cannot read %s", path);
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	ASSERT_EQ(0, pipe(p));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(p[0]);
		if (knob_set(&k, path, atoi(before) == 1 ? "0" : "1"))
			_exit(2);
		if (write(p[1], &k.guardian, sizeof(k.guardian)) < 0)
			_exit(3);
		raise(SIGKILL);
		_exit(3);
	}
	close(p[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		SKIP(return, "cannot write %s", path);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ((ssize_t)sizeof(guardian),
		  read(p[0], &guardian, sizeof(guardian)));
	close(p[0]);
	ASSERT_LT(0, guardian) TH_LOG("the knob was set without a guardian");
	/* the write end died with the child: the guardian restores, exits */
	ASSERT_EQ(guardian, waitpid(guardian, &status, 0));
	ASSERT_EQ(0, knob_read(path, after, sizeof(after)));
	EXPECT_EQ(atoi(before), atoi(after))
	TH_LOG("%s was not restored", path);
}

/* After exec the new image opens, maps and self-reads (4.14-era fix). */
static void __attribute__((constructor)) exec_child(void)
{
	struct perf_event_attr a;
	struct up_count s;
	struct rd r0, r1;
	struct ev e;
	int i, ret;

	if (!getenv(EXEC_ENV))
		return;
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	if (ev_open(&e, &a))
		_exit(3);
	for (i = 0; i < 100; i++) {
		if (!rd(e.fd, &r0))
			_exit(4);
		ret = up_self_read(e.pg, &s);
		if (!rd(e.fd, &r1))
			_exit(4);
		if (ret || s.count < r0.value || s.count > r1.value)
			_exit(5);
	}
	_exit(0);
}

TEST(exec_self_read)
{
	struct perf_event_attr a;
	struct up_count s;
	int status, err;
	struct knob k;
	pid_t child;
	struct ev e;

	user_access_on(_metadata, &k);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "instructions: %s", strerror(-err));
	}
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, up_self_read(e.pg, &s));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct ev ce;

		/* perf_mmap() sets VM_DONTCOPY: the child maps its own */
		if (ev_open(&ce, &a) || up_self_read(ce.pg, &s))
			_exit(6);
		setenv(EXEC_ENV, "1", 1);
		execl("/proc/self/exe", "rdpmc", (char *)NULL);
		_exit(7);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status))
	TH_LOG("the exec'd image died by signal %d", WTERMSIG(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
	TH_LOG("3 open, 4 read, 5 disagreement, 6 pre-exec, 7 exec");
	ev_close(&e);
	knob_restore(&k);
}

/* An event on another (ptrace-stopped) task offers the observer no read. */
TEST(other_task_no_self_read)
{
	struct perf_event_attr a;
	struct up_count s;
	int status, err;
	struct knob k;
	pid_t child;
	struct ev e;

	user_access_on(_metadata, &k);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (;;)
			work(100000);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open_on(&e, &a, child, -1);
	if (err) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		knob_restore(&k);
		if (unsupported(-err))
			SKIP(return, "instructions: %s", strerror(-err));
		ASSERT_EQ(0, err);
	}
	work(10000);
	/* uapi: "this only works on self-monitoring processes" */
	EXPECT_EQ(1, up_self_read(e.pg, &s));
	EXPECT_EQ(0U, s.index);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ev_close(&e);
	knob_restore(&k);
}

/*
 * No 2^48 (or 2^32) jumps: a sampling event preloads the counter with
 * -period, so the raw value has its top bits set and offset compensates;
 * the sum must stay monotonic and between the read()s.
 */
TEST(offset_high_bit)
{
	struct perf_event_attr a;
	struct up_count s;
	struct knob k;
	struct ev e;
	int err;

	user_access_on(_metadata, &k);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, (1ULL << 31) - 4096);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "instructions: %s", strerror(-err));
	}
	ASSERT_EQ(0, err);
	work(1000);
	ASSERT_EQ(0, up_self_read(e.pg, &s));
	TH_LOG("offset 0x%llx pmc 0x%llx width %u",
	       (unsigned long long)up_u64(e.pg, UP_OFFSET),
	       (unsigned long long)s.pmc, s.width);
	bracket_loop(_metadata, &e, LOOPS / 2, 100);
	ev_close(&e);
	knob_restore(&k);
}

/* A start/stop pair around a sleep (the counter scheduled out between). */
TEST(straddle_sched_out)
{
	struct perf_event_attr a;
	struct up_count s0, s1;
	struct rd r0, rm, r1;
	struct knob k;
	struct ev e;
	int i, err;

	user_access_on(_metadata, &k);
	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		knob_restore(&k);
		SKIP(return, "cycles: %s", strerror(-err));
	}
	ASSERT_EQ(0, err);
	for (i = 0; i < 20; i++) {
		ASSERT_TRUE(rd(e.fd, &r0));
		ASSERT_EQ(0, up_self_read(e.pg, &s0));
		usleep(1000);
		ASSERT_TRUE(rd(e.fd, &rm));
		usleep(1000);
		ASSERT_EQ(0, up_self_read(e.pg, &s1));
		ASSERT_TRUE(rd(e.fd, &r1));
		ASSERT_LE(r0.value, s0.count);
		ASSERT_LE(s0.count, rm.value);
		ASSERT_LE(rm.value, s1.count);
		ASSERT_LE(s1.count, r1.value);
	}
	ev_close(&e);
	knob_restore(&k);
}

/*
 * Enabled/running times never go negative nor back, over several
 * open/enable/disable cycles (hardware event, else task-clock).
 */
TEST(times_never_negative)
{
	struct perf_event_attr a;
	struct rd r, prev;
	struct up_count s;
	struct knob k;
	int round, i;
	struct ev e;

	user_access_on(_metadata, &k);
	for (round = 0; round < 5; round++) {
		hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
		a.disabled = 1;
		if (ev_open(&e, &a)) {
			sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
			a.disabled = 1;
			ASSERT_EQ(0, ev_open(&e, &a));
		}
		memset(&prev, 0, sizeof(prev));
		for (i = 0; i < 8; i++) {
			ASSERT_EQ(0, ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0));
			work(2000);
			ASSERT_LE(0, up_self_read(e.pg, &s));
			ASSERT_EQ(0, ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0));
			ASSERT_TRUE(rd(e.fd, &r));
			ASSERT_LE(0, (int64_t)s.enabled);
			ASSERT_LE(0, (int64_t)s.running);
			ASSERT_LE(s.running, s.enabled);
			ASSERT_LE(0, (int64_t)r.enabled);
			ASSERT_LE(r.running, r.enabled);
			ASSERT_LE(prev.enabled, r.enabled);
			ASSERT_LE(prev.running, r.running);
			if (s.has_time) {
				ASSERT_LE(s.enabled, r.enabled);
				ASSERT_LE(prev.enabled, s.enabled);
			}
			prev = r;
		}
		ev_close(&e);
	}
	knob_restore(&k);
}

TEST_HARNESS_MAIN
