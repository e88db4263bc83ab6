// SPDX-License-Identifier: GPL-2.0
/*
 * Self-monitoring: a task that mmaps its own hardware event reads the count
 * with no syscall, under the page's seqlock as uapi linux/perf_event.h
 * documents it (up_self_read()), and gets what read() gives: read() before
 * <= user read <= read() after.  The times, which the reader extends by the
 * clock whenever cap_user_time allows (the uapi loop does only to scale),
 * are held to read() in the same way, and a PERF_SAMPLE_TIME stamp
 * converts to the cycles read around it.
 *
 * User access has a knob (user_page.h).  As root where it is off, main()
 * turns it on for the run and puts it back, only while it still holds the
 * value written, when the program exits or is told to end (SIGTERM: the
 * kselftest runner's timeout).  Every process a test forks dies with its
 * parent.  Only counters a page published are read.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "user_page.h"

/* arm_pmuv3.c format attributes: config1:0 "long" (64 bit), config1:1 "rdpmc" */
#define CFG1_64BIT 0x1ULL
#define CFG1_RDPMC 0x2ULL

#define LOOPS 500
#define MAX_EVENTS 32
#define N_CLOCKS 9 /* a reschedule long enough to see */
#define TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

/* One SKIP reason per test, wherever it skips (user_page.h) */
#define NEED_USER_READ                                                    \
	"needs user counter reads: a PMU with free counters (64-bit for " \
	"*_64bit), user access on or root, " UP_PARANOID_TASK
#define NEED_TWO_CPUS                                                  \
	"needs two CPUs, a PMU with free counters, user access on or " \
	"root, " UP_PARANOID_TASK
#define NEED_MUX \
	"needs cap_user_time, fewer than 32 counters, and " UP_PARANOID_TASK
#define NEED_LEAK \
	"needs arm64 or x86, user access on or root, and " UP_PARANOID_TASK
#define NEED_TIME "needs cap_user_time, and " UP_PARANOID_TASK
#define NEED_TIME_ZERO "needs cap_user_time_zero, and " UP_PARANOID_TASK

struct ev {
	int fd;
	void *pg;
};

struct counts {
	uint64_t value, enabled, running;
};

/* User-space instructions and cycles to count. */
static void work(unsigned int n)
{
	uint64_t x = n;
	unsigned int i;

	for (i = 0; i < n; i++) {
		x += i ^ (x >> 3);
		asm volatile("" : "+r"(x));
	}
}

static void hw_attr(struct perf_event_attr *a, __u64 config, bool w64,
		    __u64 period)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_HARDWARE;
	a->config = config;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->read_format = TIMES;
	a->sample_period = period;
#ifdef __aarch64__
	a->config1 = CFG1_RDPMC | (w64 ? CFG1_64BIT : 0);
#endif
}

/* Open for this task in group, map the page; 0 or -errno. */
static int ev_open(struct ev *e, struct perf_event_attr *a, int group)
{
	int err;

	e->pg = MAP_FAILED;
	e->fd = up_perf_event_open(a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
	if (e->fd < 0)
		return -errno;
	e->pg = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, e->fd, 0);
	if (e->pg == MAP_FAILED) {
		err = errno;
		close(e->fd);
		return -err;
	}
	return 0;
}

static void ev_close(struct ev *e)
{
	munmap(e->pg, getpagesize());
	close(e->fd);
}

static bool read_counts(int fd, struct counts *r)
{
	return read(fd, r, sizeof(*r)) == sizeof(*r);
}

/*
 * On a hybrid x86 part PERF_TYPE_HARDWARE events go to one core PMU (type
 * PERF_TYPE_RAW, cpu_core) and count only on its CPUs ("cpus", a list):
 * pin the test to the first range of them, so that its events count
 * wherever the scheduler would have put it.
 */
static void pin_to_core_pmu(void)
{
	char path[PATH_MAX];
	int lo, hi, n = 0;
	cpu_set_t set;
	size_t i;
	glob_t g;
	FILE *f;

	glob("/sys/bus/event_source/devices/*/cpus", 0, NULL, &g);
	for (i = 0; i < g.gl_pathc && n < 1; i++) {
		snprintf(path, sizeof(path), "%.*s/type",
			 (int)(strlen(g.gl_pathv[i]) - strlen("/cpus")),
			 g.gl_pathv[i]);
		f = up_read_int(path) == PERF_TYPE_RAW ?
			    fopen(g.gl_pathv[i], "r") :
			    NULL;
		n = f ? fscanf(f, "%d-%d", &lo, &hi) : 0;
		if (f)
			fclose(f);
	}
	globfree(&g);
	if (n < 1)
		return;
	CPU_ZERO(&set);
	for (hi = n == 1 ? lo : hi; lo <= hi && lo < CPU_SETSIZE; lo++)
		CPU_SET(lo, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

FIXTURE(agree)
{
	struct ev e; /* a test's event, if it has one, closed at the end */
};

FIXTURE_SETUP(agree)
{
	self->e.fd = -1;
	if (!UP_HAVE_HW_READ)
		SKIP(return, NEED_USER_READ);
	pin_to_core_pmu();
}

FIXTURE_TEARDOWN(agree)
{
	if (self->e.fd >= 0)
		ev_close(&self->e);
}

/* NULL for err 0, the SKIP reason for a refusal; other errors fail. */
static const char *refusal(struct __test_metadata *_metadata, int err)
{
	if (err && up_refused(-err))
		return NEED_USER_READ;
	ASSERT_EQ(0, err) TH_LOG("perf_event_open: %s", strerror(-err));
	return NULL;
}

/*
 * Read the event from user space, giving it up to 100 chances to be on a
 * counter: up_self_read()'s 0 (read), 1 (no counter) or -EAGAIN.
 */
static int try_read(struct ev *e, struct up_count *s)
{
	int i, ret = 1;

	for (i = 0; i < 100 && ret == 1; i++) {
		if (i)
			usleep(200); /* a switch: the kernel retries groups */
		work(1000);
		ret = up_self_read(e->pg, s);
	}
	return ret;
}

/*
 * try_read(), or a FAIL where it must have read: with user access on, an
 * event that was on the PMU all along (read(): running grew as much as
 * enabled) is readable by the task that mapped it (x86 rdpmc 1 and 2,
 * arm64 and riscv perf_user_access 1: "user space access" to a mapped
 * event), so its page says cap_user_rdpmc with its counter's index; a
 * group sibling included, as a group is on the PMU all or nothing.
 * 1: no counter read here (SKIP).
 */
static int self_read_direct(struct __test_metadata *_metadata, struct ev *e,
			    struct up_count *s)
{
	struct counts r0, r1;
	int ret;

	ASSERT_TRUE(read_counts(e->fd, &r0));
	ret = try_read(e, s);
	ASSERT_TRUE(read_counts(e->fd, &r1));
	if (ret == 1 && up_user_access_on()) {
		ASSERT_FALSE(r1.running > r0.running &&
			     r1.running - r0.running == r1.enabled - r0.enabled)
		{
			TH_LOG("access on, cap_user_rdpmc %u, index %u, running %llu -> %llu",
			       up_pc(e->pg)->cap_user_rdpmc,
			       up_pc(e->pg)->index,
			       (unsigned long long)r0.running,
			       (unsigned long long)r1.running);
		}
	}
	return ret;
}

/*
 * r0 = read(); s = user read; r1 = read(): r0 <= s <= r1 (uapi: "count =
 * pc->offset; ... count += pmc").  A user read that finds index 0 falls
 * back as the uapi loop does and is not compared.  Returns the number of
 * user reads compared.
 */
static unsigned int bracket(struct __test_metadata *_metadata, struct ev *e,
			    unsigned int loops)
{
	unsigned int i, direct = 0;
	struct up_count s;
	struct counts r0, r1;
	int ret;

	for (i = 0; i < loops; i++) {
		/* a switch out and back in every 64 reads, on any machine */
		if (i % 64 == 63)
			usleep(100);
		work(200 + (i % 16) * 37);
		ASSERT_TRUE(read_counts(e->fd, &r0));
		ret = up_self_read(e->pg, &s);
		ASSERT_TRUE(read_counts(e->fd, &r1));
		ASSERT_NE(-EAGAIN, ret) TH_LOG("lock never held still");
		/* counted from 0 at open: 2^48 cycles is a day at 3 GHz */
		ASSERT_GT(1ULL << 48, r1.value)
		TH_LOG("read() %llu", (unsigned long long)r1.value);
		if (ret)
			continue;
		direct++;
		ASSERT_TRUE(r0.value <= s.count && s.count <= r1.value)
		TH_LOG("#%u: read() %llu, user %llu, read() %llu (index %u pmc 0x%llx)",
		       i, (unsigned long long)r0.value,
		       (unsigned long long)s.count,
		       (unsigned long long)r1.value, s.index,
		       (unsigned long long)s.pmc);
	}
	return direct;
}

static void agree_one(struct __test_metadata *_metadata, __u64 config, bool w64,
		      __u64 period)
{
	struct perf_event_attr a;
	struct up_count s;
	struct ev e;

	hw_attr(&a, config, w64, period);
	if (refusal(_metadata, ev_open(&e, &a, -1)))
		SKIP(return, NEED_USER_READ);
	if (self_read_direct(_metadata, &e, &s)) {
		ev_close(&e);
		SKIP(return, NEED_USER_READ);
	}
	TH_LOG("index %u, pmc_width %u", s.index, s.width);
#ifdef __aarch64__
	/* arm64/perf.rst: config1:0 clear, 32 bits; pmc_width "will indicate" */
	EXPECT_EQ(w64 ? 64 : 32, s.width);
#endif
	EXPECT_LT(0U, bracket(_metadata, &e, LOOPS));
	ev_close(&e);
}

/* arm64: a 32-bit counter (config1:0 clear) */
TEST_F(agree, cycles_counting)
{
	agree_one(_metadata, PERF_COUNT_HW_CPU_CYCLES, false, 0);
}

/* overflows: the page's offset must follow each new period */
TEST_F(agree, instructions_sampling)
{
	agree_one(_metadata, PERF_COUNT_HW_INSTRUCTIONS, false, 20011);
}

#ifdef __aarch64__
/* config1:0 asks for a 64-bit counter: only arm64 has the choice */
TEST_F(agree, cycles_64bit_counting)
{
	agree_one(_metadata, PERF_COUNT_HW_CPU_CYCLES, true, 0);
}

TEST_F(agree, cycles_64bit_sampling)
{
	agree_one(_metadata, PERF_COUNT_HW_CPU_CYCLES, true, 20011);
}
#endif

/*
 * User access is for any task that maps its event (arm64 perf.rst:
 * perf_user_access "enable user space access"; x86 rdpmc 1: tasks with an
 * event mapped): what this task read directly, it reads again with no
 * capability left, as rr, PAPI and JITs do at perf_event_paranoid 2.
 */
TEST_F(agree, cycles_no_capabilities)
{
	struct perf_event_attr a;
	struct up_count s;
	uint32_t index;
	cap_t none;
	struct ev e;
	int err;

	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, false, 0);
	if (refusal(_metadata, ev_open(&e, &a, -1)))
		SKIP(return, NEED_USER_READ);
	err = self_read_direct(_metadata, &e, &s);
	index = s.index;
	ev_close(&e);
	if (err)
		SKIP(return, NEED_USER_READ);
	none = cap_init();
	ASSERT_NE(NULL, none);
	ASSERT_EQ(0, cap_set_proc(none)) TH_LOG("cap_set_proc: %m");
	ASSERT_EQ(0, cap_free(none));
	TH_LOG("uid %u, capabilities: none", getuid());
	if (refusal(_metadata, ev_open(&e, &a, -1)))
		SKIP(return, NEED_USER_READ);
	ASSERT_EQ(0, self_read_direct(_metadata, &e, &s))
	TH_LOG("no counter without capabilities, index %u with them", index);
	EXPECT_LT(0U, bracket(_metadata, &e, LOOPS));
	ev_close(&e);
}

/*
 * As many events as the PMU counts at once, in one group (the drivers
 * refuse a group that does not fit): one counter each, each read agreeing
 * with its own read().
 */
TEST_F(agree, every_counter)
{
	uint32_t seen[MAX_EVENTS];
	struct perf_event_attr a;
	struct ev e[MAX_EVENTS];
	struct up_count s;
	int n, i, j;

	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, false, 30011);
	if (refusal(_metadata, ev_open(&e[0], &a, -1)))
		SKIP(return, NEED_USER_READ);
	for (n = 1; n < MAX_EVENTS; n++) {
		hw_attr(&a,
			n % 2 ? PERF_COUNT_HW_INSTRUCTIONS :
				PERF_COUNT_HW_CPU_CYCLES,
			false, 10007 + 7919 * n);
		if (ev_open(&e[n], &a, e[0].fd))
			break;
	}
	/* as many as the PMU holds next to others' pinned events */
	while (n > 1 && try_read(&e[0], &s))
		ev_close(&e[--n]);
	TH_LOG("%d events in the group", n);
	for (i = 0; i < n; i++) {
		if (self_read_direct(_metadata, &e[i], &s)) {
			for (i = 0; i < n; i++)
				ev_close(&e[i]);
			SKIP(return, NEED_USER_READ);
		}
		seen[i] = s.index;
		for (j = 0; j < i; j++) {
			ASSERT_NE(seen[j], seen[i])
			{
				TH_LOG("events %d and %d at index %u", j, i,
				       seen[i]);
			}
		}
	}
	for (i = 0; i < n; i++)
		EXPECT_LT(0U, bracket(_metadata, &e[i], LOOPS / 10));
	for (i = 0; i < n; i++)
		ev_close(&e[i]);
}

/*
 * The kernel republishes the page (perf_event_update_userpage()) on many
 * paths, and a user read right after each agrees with read() as in steady
 * state: every counter width, a fresh event per round.  Each step maps the
 * event and takes its path, named by the function that republishes.
 * Stock arm64 kernels (6.1 to 7.3) fail reset and read_then_mmap with a
 * 32-bit counter, 2^32 off: armpmu_event_set_period() keeps prev_count
 * sign-extended, armpmu_event_update() the counter's raw value, and the
 * offset published from the latter misses the uapi's sign extension of
 * pmc (x86 likewise, 2^48 off).
 */
#define FIX_PREV_COUNT \
	"the fix \"perf: Keep prev_count sign-extended to the counter width\""
#define AFTER_PERIOD 1000003ULL
#define AFTER_ROUNDS 8

static int map(struct ev *e)
{
	e->pg = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, e->fd, 0);
	return e->pg == MAP_FAILED ? -errno : 0;
}

static int do_ioctl(struct ev *e, unsigned long req, unsigned long arg)
{
	return ioctl(e->fd, req, arg) ? -errno : 0;
}

/* _perf_event_reset(): read, count set to 0, republished */
static int step_reset(struct ev *e)
{
	if (map(e))
		return -errno;
	return do_ioctl(e, PERF_EVENT_IOC_RESET, 0);
}

/* perf_mmap() of an event whose count read() has updated */
static int step_read_then_mmap(struct ev *e)
{
	struct counts r;

	return read_counts(e->fd, &r) ? map(e) : -EIO;
}

/* _perf_event_period(): the PMU stops and reloads the counter */
static int step_period(struct ev *e)
{
	__u64 period = AFTER_PERIOD / 2;

	if (map(e))
		return -errno;
	return do_ioctl(e, PERF_EVENT_IOC_PERIOD, (unsigned long)&period);
}

/* _perf_event_refresh(): a disabled event enabled for N overflows */
static int step_refresh(struct ev *e)
{
	int err = map(e) ?: do_ioctl(e, PERF_EVENT_IOC_DISABLE, 0);

	return err ?: do_ioctl(e, PERF_EVENT_IOC_REFRESH, 1000);
}

/* ctx_resched(): scheduled out by DISABLE, in by ENABLE */
static int step_enable(struct ev *e)
{
	int err = map(e) ?: do_ioctl(e, PERF_EVENT_IOC_DISABLE, 0);

	return err ?: do_ioctl(e, PERF_EVENT_IOC_ENABLE, 0);
}

/*
 * perf_mmap() of a buffer already mapped.  The first mapping stays until
 * the next round: riscv's event_unmapped() ends user reads of the event
 * at any munmap(), though another mapping of it remains.
 */
static int step_second_mmap(struct ev *e)
{
	static void *first = MAP_FAILED;

	munmap(first, getpagesize()); /* the last round's, its event closed */
	if (map(e))
		return -errno;
	first = e->pg;
	return map(e);
}

/* the task moved: scheduled out on one CPU, in on another it may use */
static int step_migrate(struct ev *e)
{
	static cpu_set_t allowed; /* as the test began */
	int cpu, now = sched_getcpu();
	cpu_set_t set;

	if (!CPU_COUNT(&allowed) &&
	    sched_getaffinity(0, sizeof(allowed), &allowed))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (cpu != now && CPU_ISSET(cpu, &allowed))
			break;
	if (cpu == CPU_SETSIZE)
		return -ENOSPC; /* one CPU: nowhere to go */
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (map(e) || sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return 0;
}

#ifdef __aarch64__
#define N_WIDTHS 2 /* config1:0 chooses 32 or 64 bits */
#else
#define N_WIDTHS 1
#endif

/*
 * One path: a fresh event per round, each counter width; the step maps it
 * and takes the path right before the user read.
 */
static void agree_after(struct __test_metadata *_metadata, struct ev *e,
			int (*step)(struct ev *e), const char *need)
{
	unsigned int w, i, compared = 0;
	struct perf_event_attr a;
	struct counts r0, r1;
	struct up_count s;
	int ret;

	for (w = 0; w < N_WIDTHS; w++) {
		for (i = 0; i < AFTER_ROUNDS; i++) {
			hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, w,
				AFTER_PERIOD);
			e->pg = MAP_FAILED;
			e->fd = up_perf_event_open(&a, 0, -1, -1,
						   PERF_FLAG_FD_CLOEXEC);
			ret = e->fd < 0 ? -errno : 0;
			if (w && up_refused(-ret))
				break; /* no 64-bit counter for it here */
			if (refusal(_metadata, ret))
				SKIP(return, NEED_USER_READ);
			work(10000);
			ret = step(e);
			if (ret && up_refused(-ret)) {
				TH_LOG("step: %s", strerror(-ret));
				SKIP(return, "%s", need);
			}
			ASSERT_EQ(0, ret) TH_LOG("step: %s", strerror(-ret));
			ASSERT_TRUE(read_counts(e->fd, &r0));
			ret = up_self_read(e->pg, &s);
			ASSERT_TRUE(read_counts(e->fd, &r1));
			ev_close(e);
			e->fd = -1;
			ASSERT_LE(0, ret);
			if (ret)
				continue;
			compared++;
			if (r0.value <= s.count && s.count <= r1.value)
				continue;
			/* first, as a one-line report shows a failure's first */
			TH_LOG("needs %s? %u-bit: read() %llu, user %llu (%lld off), %llu",
			       FIX_PREV_COUNT, s.width,
			       (unsigned long long)r0.value,
			       (unsigned long long)s.count,
			       (long long)(s.count - r0.value),
			       (unsigned long long)r1.value);
			ASSERT_TRUE(r0.value <= s.count && s.count <= r1.value);
		}
	}
	if (!compared && !up_user_access_on())
		SKIP(return, NEED_USER_READ);
	ASSERT_LT(0U, compared) TH_LOG("no user read right after the step");
}

TEST_F(agree, after_reset)
{
	agree_after(_metadata, &self->e, step_reset, NEED_USER_READ);
}

TEST_F(agree, after_read_then_mmap)
{
	agree_after(_metadata, &self->e, step_read_then_mmap, NEED_USER_READ);
}

TEST_F(agree, after_period)
{
	agree_after(_metadata, &self->e, step_period, NEED_USER_READ);
}

TEST_F(agree, after_refresh)
{
	agree_after(_metadata, &self->e, step_refresh, NEED_USER_READ);
}

TEST_F(agree, after_disable_enable)
{
	agree_after(_metadata, &self->e, step_enable, NEED_USER_READ);
}

TEST_F(agree, after_second_mmap)
{
	agree_after(_metadata, &self->e, step_second_mmap, NEED_USER_READ);
}

TEST_F(agree, after_migration)
{
	agree_after(_metadata, &self->e, step_migrate, NEED_TWO_CPUS);
}

/*
 * More events than counters: the core rotates them (perf_rotate_context()),
 * so that some event is on the PMU part of the time (0 < running <
 * enabled), and the times a task extends by itself (uapi: "enabled +=
 * delta; if (idx) running += delta") still lie between those of the
 * read()s around it.
 */
TEST_F(agree, multiplexed_times)
{
	struct ev e[MAX_EVENTS];
	struct perf_event_attr a;
	unsigned int loop;
	bool rotated = false, all_on = true;
	time_t end = time(NULL) + 2;
	struct up_count s;
	struct counts r0, r1;
	int n, i, ret;

	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	for (n = 0; n < MAX_EVENTS; n++) {
		ret = ev_open(&e[n], &a, -1);
		if (ret)
			break;
	}
	if (refusal(_metadata, n ? 0 : ret))
		SKIP(return, NEED_USER_READ);
	if (!up_pc(e[0].pg)->cap_user_time) {
		for (i = 0; i < n; i++)
			ev_close(&e[i]);
		SKIP(return, NEED_MUX);
	}
	for (loop = 0; loop < LOOPS / 10 || !rotated; loop++) {
		all_on = true;
		for (i = 0; i < n; i++) {
			ASSERT_TRUE(read_counts(e[i].fd, &r0));
			ret = up_self_read(e[i].pg, &s);
			ASSERT_TRUE(read_counts(e[i].fd, &r1));
			ASSERT_LE(0, ret);
			/* perf_rotate_context() republished each page */
			ASSERT_TRUE(ret || (r0.value <= s.count &&
					    s.count <= r1.value))
			TH_LOG("count: read() %llu, user %llu, read() %llu",
			       (unsigned long long)r0.value,
			       (unsigned long long)s.count,
			       (unsigned long long)r1.value);
			ASSERT_TRUE(r0.enabled <= s.enabled &&
				    s.enabled <= r1.enabled)
			TH_LOG("time_enabled: read() %llu, user %llu, read() %llu",
			       (unsigned long long)r0.enabled,
			       (unsigned long long)s.enabled,
			       (unsigned long long)r1.enabled);
			/* index 0: running is the last update's, not extended */
			ASSERT_TRUE((!s.index || r0.running <= s.running) &&
				    s.running <= r1.running)
			TH_LOG("time_running: read() %llu, user %llu, read() %llu",
			       (unsigned long long)r0.running,
			       (unsigned long long)s.running,
			       (unsigned long long)r1.running);
			rotated |= r1.running && r1.running < r1.enabled;
			all_on &= r1.running == r1.enabled;
		}
		work(3000);
		if (all_on || time(NULL) > end)
			break;
	}
	TH_LOG("%d events, %u loops", n, loop);
	for (i = 0; i < n; i++)
		ev_close(&e[i]);
	if (all_on)
		SKIP(return, NEED_MUX);
	ASSERT_TRUE(rotated) TH_LOG("no event was on the PMU part of the time");
}

/*
 * A task with user access reads no counter it has no event on: arm_pmuv3.c
 * armv8pmu_enable_user_access() clears the unused ones (83a7a4d643d3), x86
 * perf_clear_dirty_counters() those a rdpmc task could see (5471eea5d3bf).
 * A child on the same CPU marks every counter its pages publish (events
 * whose period starts them at 2^32 - MARK_PERIOD), then sleeps: none may
 * hold the mark when we read it with our own event on the PMU.
 */
#define MARK_PERIOD 0x2badc0deULL
#define MARK_SPAN 0x1000000ULL

static bool marked(uint64_t v)
{
	uint32_t low = v;

	return low >= (1ULL << 32) - MARK_PERIOD &&
	       low < (1ULL << 32) - MARK_PERIOD + MARK_SPAN;
}

/* The child: the indices its pages published, to the pipe, then sleep. */
static void mark_counters(int out)
{
	uint32_t idx[MAX_EVENTS];
	struct ev ce[MAX_EVENTS];
	struct perf_event_attr a;
	struct up_count s;
	int n, i;

	prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test */
	/* a group: as many as there are counters, each on one */
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, MARK_PERIOD);
	for (n = 0; n < MAX_EVENTS; n++)
		if (ev_open(&ce[n], &a, n ? ce[0].fd : -1))
			break;
	while (n > 1 && try_read(&ce[0], &s))
		ev_close(&ce[--n]);
	work(10000);
	for (i = 0; i < n; i++)
		idx[i] = try_read(&ce[i], &s) ? 0 : s.index;
	if (n && write(out, idx, n * sizeof(idx[0])) == n * (int)sizeof(idx[0]))
		pause(); /* asleep, its events off the CPU, until killed */
	_exit(0);
}

TEST_F(agree, no_counter_leak)
{
	uint32_t idx[MAX_EVENTS], seq, own;
	unsigned int compared = 0, others = 0;
	struct perf_event_attr a;
	int i, j, n, p[2], cpu, status;
	struct up_count s;
	uint64_t v = 0;
	cpu_set_t set;
	struct ev e;
	pid_t child;

#if !defined(__aarch64__) && !defined(UP_X86)
	SKIP(return, NEED_LEAK);
#endif
	/* the child and this task on one CPU, the first this task may use */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0; !CPU_ISSET(cpu, &set); cpu++)
		;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, pipe(p));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		mark_counters(p[1]);
	close(p[1]);
	n = read(p[0], idx, sizeof(idx)) / (int)sizeof(idx[0]);
	close(p[0]);
	if (n <= 0) { /* no event: it exited, unless its own read trapped */
		ASSERT_EQ(child, waitpid(child, &status, 0));
		ASSERT_FALSE(WIFSIGNALED(status)) TH_LOG("child: %x", status);
		SKIP(return, NEED_LEAK);
	}
	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, true, 0);
	if (refusal(_metadata, ev_open(&e, &a, -1)) ||
	    self_read_direct(_metadata, &e, &s)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		ev_close(&e); /* harmless where the open failed */
		SKIP(return, NEED_LEAK);
	}
	TH_LOG("the child's %d events, our index %u", n, s.index);
	/* a child's counter that is not ours now, read while ours held still */
	for (i = 0; i < n; i++) {
		for (j = 0, own = 0; j < 100 && idx[i]; j++) {
			seq = __atomic_load_n(&up_pc(e.pg)->lock,
					      __ATOMIC_ACQUIRE);
			own = up_pc(e.pg)->index;
			if (own && own != idx[i])
				v = up_hw_counter(idx[i] - 1);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (own && up_pc(e.pg)->lock == seq && !(seq & 1))
				break;
		}
		if (!idx[i] || own == idx[i])
			continue;
		others++;
		if (j == 100)
			continue;
		compared++;
		EXPECT_FALSE(marked(v))
		TH_LOG("counter %u (index %u) reads 0x%llx: the child's",
		       idx[i] - 1, idx[i], (unsigned long long)v);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ev_close(&e);
	if (!others)
		SKIP(return, NEED_LEAK);
	ASSERT_LT(0U, compared) TH_LOG("no counter of the child compared");
}

/*
 * No PMU needed: nine pinned software events, each disabled and enabled
 * again in turn.  Every ENABLE reschedules the task's context, and after
 * it each page's time_enabled, extended by the clock, lies between
 * read()'s before and after and never falls below what that page gave.
 */
TEST(time_enabled_holds_through_enables)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.exclude_kernel = 1,
		.pinned = 1,
		.read_format = TIMES,
	};
	uint64_t last[N_CLOCKS] = { 0 };
	struct ev e[N_CLOCKS];
	struct up_count s;
	struct counts r0, r1;
	unsigned int i, j, k;
	int err;

	for (i = 0; i < N_CLOCKS; i++) {
		err = ev_open(&e[i], &a, -1);
		if (err && up_refused(-err))
			SKIP(return, NEED_TIME);
		ASSERT_EQ(0, err);
	}
	/* the clock: an AArch32 task has cap_user_time and no reader here */
	if (!UP_HAVE_HW_READ || !up_pc(e[0].pg)->cap_user_time)
		SKIP(return, NEED_TIME);
	for (i = 0; i < 20 * N_CLOCKS; i++) {
		k = i % N_CLOCKS;
		ASSERT_EQ(0, ioctl(e[k].fd, PERF_EVENT_IOC_DISABLE, 0));
		ASSERT_EQ(0, ioctl(e[k].fd, PERF_EVENT_IOC_ENABLE, 0));
		for (j = 0; j < N_CLOCKS; j++) {
			ASSERT_TRUE(read_counts(e[j].fd, &r0));
			ASSERT_EQ(1, up_self_read(e[j].pg, &s));
			ASSERT_TRUE(read_counts(e[j].fd, &r1));
			ASSERT_TRUE(last[j] <= s.enabled &&
				    r0.enabled <= s.enabled &&
				    s.enabled <= r1.enabled)
			TH_LOG("#%u ev %u enabled: page %llu, read() %llu, page %llu, read() %llu",
			       i, j, (unsigned long long)last[j],
			       (unsigned long long)r0.enabled,
			       (unsigned long long)s.enabled,
			       (unsigned long long)r1.enabled);
			last[j] = s.enabled;
		}
	}
	for (i = 0; i < N_CLOCKS; i++)
		ev_close(&e[i]);
}

/*
 * cap_user_time_zero both ways: a COMM record's PERF_SAMPLE_TIME stamp
 * converted back to cycles lies between the cycles read before and after
 * the prctl() that made it, for the first record after ENABLE and after
 * context switches.  Only COMM records: the newest ends at data_head with
 * the stamp (sample_id_all).
 */
TEST(time_zero_converts_sample_time)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.comm = 1,
		.sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TIME,
		.exclude_kernel = 1,
		.disabled = 1,
	};
	size_t len = 9 * getpagesize();
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	uint64_t snap[UP_HDR_LEN / 8];
	uint64_t c0, c1, t;
	struct up_msg m;
	int fd, i, j;
	void *pg;

	if (!UP_HAVE_HW_READ)
		SKIP(return, NEED_TIME_ZERO);
	fd = up_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && up_refused(errno))
		SKIP(return, NEED_TIME_ZERO);
	ASSERT_LE(0, fd) TH_LOG("dummy: %m");
	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_TRUE(pg != MAP_FAILED);
	if (!up_pc(pg)->cap_user_time_zero) {
		munmap(pg, len);
		close(fd);
		SKIP(return, NEED_TIME_ZERO);
	}
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < 20; i++) {
		c0 = up_hw_cycles();
		ASSERT_EQ(0, prctl(PR_SET_NAME, i % 2 ? "stamp1" : "stamp2"));
		c1 = up_hw_cycles();
		ASSERT_EQ(0, up_snapshot(pg, snap));
		types[PERF_RECORD_COMM] = 0;
		ASSERT_TRUE(up_check_records(pg, types, PERF_RECORD_MAX, &m));
		ASSERT_EQ(i + 1U, types[PERF_RECORD_COMM]);
		memcpy(&t, (char *)pg + getpagesize() + up_data_head(pg) - 8,
		       8);
		ASSERT_TRUE(up_check_stamp_cycles(snap, t, c0, c1, &m))
		TH_LOG("record %d: %s", i, m.s);
		for (j = 0; j < 50; j++)
			sched_yield();
	}
	munmap(pg, len);
	close(fd);
}

/* Put back what this run wrote, while the knob still holds it. */
static void knobs_put_back(void)
{
	int i;

	for (i = 0; i < up_n_knobs; i++)
		if (up_knobs[i].set >= 0 &&
		    up_read_int(up_knobs[i].path) == up_knobs[i].set)
			up_knob_write(up_knobs[i].path, up_knobs[i].start);
}

static void put_back_and_end(int sig)
{
	knobs_put_back();
	signal(sig, SIG_DFL);
	raise(sig);
}

static const int ending[] = { SIGTERM, SIGINT, SIGHUP };
static pid_t forker;

static void note_forker(void)
{
	forker = getpid();
}

/* A forked process ends with its parent, and leaves the knobs to main(). */
static void end_with_parent(void)
{
	unsigned int i;
	int k;

	for (i = 0; i < ARRAY_SIZE(ending); i++)
		signal(ending[i], SIG_DFL);
	for (k = 0; k < up_n_knobs; k++)
		up_knobs[k].set = -1;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != forker)
		_exit(1);
}

int main(int argc, char **argv)
{
	unsigned int i;
	int k;

	for (i = 1; i < (unsigned int)argc; i++)
		if (!strcmp(argv[i], "-l") || !strcmp(argv[i], "-h"))
			return test_harness_run(argc, argv); /* runs nothing */
	pthread_atfork(note_forker, NULL, end_with_parent);
	atexit(knobs_put_back);
	for (i = 0; i < ARRAY_SIZE(ending); i++)
		signal(ending[i], put_back_and_end);
	up_knobs_lock(LOCK_EX);
	for (k = 0; k < up_n_knobs; k++) {
		if (up_knobs[k].start)
			continue;
		up_knobs[k].set = 1; /* first: a signal then puts it back */
		if (up_knob_write(up_knobs[k].path, 1))
			up_knobs[k].set = -1;
	}
	return test_harness_run(argc, argv);
}
