// SPDX-License-Identifier: GPL-2.0
/*
 * Self-monitoring: a task that mmaps its own hardware event reads the count
 * with no syscall, by the loop documented in uapi linux/perf_event.h
 * (up_self_read()), and gets what read() gives: read() before <= user read
 * <= read() after.  The times the page lets a task extend by itself are
 * held to read() in the same way, and a PERF_SAMPLE_TIME stamp converts to
 * the cycles read around it.
 *
 * User access is a knob: arm64 and riscv perf_user_access, x86 cpu/rdpmc.
 * Where it is off, the agree tests turn it on as root for the test and put
 * it back when the test ends; the harness's main process puts it back
 * after a test its timeout killed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "user_page.h"

/* arm_pmuv3.c format attributes: config1:0 "long" (64 bit), config1:1 "rdpmc" */
#define CFG1_64BIT 0x1ULL
#define CFG1_RDPMC 0x2ULL

#define LOOPS 500
#define MAX_EVENTS 32
#define TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

/* One SKIP reason per test, wherever it skips (user_page.h) */
#define NEED_USER_READ                                                    \
	"needs user counter reads: a PMU with free counters (64-bit for " \
	"*_64bit), user access on or root, " UP_PARANOID_TASK
#define NEED_LEAK \
	"needs arm64 or x86, user access on or root, and " UP_PARANOID_TASK
#define NEED_KNOB_OFF \
	"needs a PMU, user access off or root, and " UP_PARANOID_TASK
#define NEED_TIME "needs cap_user_time, and " UP_PARANOID_TASK
#define NEED_TIME_ZERO "needs cap_user_time_zero, and " UP_PARANOID_TASK

struct ev {
	int fd;
	void *pg;
};

struct rd {
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

static bool rd(int fd, struct rd *r)
{
	return read(fd, r, sizeof(*r)) == sizeof(*r);
}

/* The user-access knob of this architecture, or NULL. */
static const char *knob_path(void)
{
#ifdef UP_X86
	return "/sys/bus/event_source/devices/cpu/rdpmc";
#else
	return "/proc/sys/kernel/perf_user_access";
#endif
}

/* The knob's value, or -1 where there is none. */
static int knob_read(void)
{
	return up_read_int(knob_path());
}

static int knob_write(int v)
{
	char buf[16];
	int fd = open(knob_path(), O_WRONLY);
	int n = snprintf(buf, sizeof(buf), "%d\n", v);
	bool ok;

	if (fd < 0)
		return -1;
	ok = write(fd, buf, n) == n;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * Sets the knob to want unless it already is (0 for off, anything else
 * for on); *saved is the value to put back, or -1.  Returns 0, or -1 when
 * the knob is missing or cannot be written.
 */
static int knob_set(int want, int *saved)
{
	int v = knob_read();

	*saved = -1;
	if (v < 0)
		return -1;
	if (!v == !want)
		return 0;
	if (knob_write(want))
		return -1;
	*saved = v;
	return 0;
}

/*
 * The agree tests: user access on, turned on for the test where it was
 * off (as root), and put back in the parent of the test's process however
 * the test ended.
 */
FIXTURE(agree)
{
	int saved;
};

FIXTURE_SETUP(agree)
{
	self->saved = -1;
	if (!UP_HAVE_HW_READ)
		SKIP(return, NEED_USER_READ);
	if (knob_read() >= 0 && knob_set(1, &self->saved))
		SKIP(return, NEED_USER_READ);
	if (self->saved >= 0)
		TH_LOG("%s: %d -> 1 for the test", knob_path(), self->saved);
}

FIXTURE_TEARDOWN_PARENT(agree)
{
	if (self->saved >= 0)
		EXPECT_EQ(0, knob_write(self->saved));
}

/*
 * NULL when the open returned err 0, the SKIP reason when the machine
 * refused it; any other error fails the test.
 */
static const char *refusal(struct __test_metadata *_metadata, int err)
{
	if (err && up_refused(-err))
		return NEED_USER_READ;
	ASSERT_EQ(0, err) TH_LOG("perf_event_open: %s", strerror(-err));
	return NULL;
}

/* A few tries for the event to be on a counter: 0 when it is. */
static int self_read_direct(struct ev *e, struct up_count *s)
{
	int i, ret = 1;

	for (i = 0; i < 100 && ret == 1; i++) {
		work(1000);
		ret = up_self_read(e->pg, s);
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
	struct rd r0, r1;
	int ret;

	for (i = 0; i < loops; i++) {
		work(200 + (i % 16) * 37);
		ASSERT_TRUE(rd(e->fd, &r0));
		ret = up_self_read(e->pg, &s);
		ASSERT_TRUE(rd(e->fd, &r1));
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

/*
 * Documentation/arch/arm64/perf.rst: config1:0 clear asks for a 32-bit
 * counter and pmc_width "will indicate the valid width", set for 64 bits.
 */
static void check_width(struct __test_metadata *_metadata,
			const struct up_count *s, bool w64)
{
	TH_LOG("index %u, pmc_width %u", s->index, s->width);
#ifdef __aarch64__
	EXPECT_EQ(w64 ? 64 : 32, s->width);
#endif
}

static void agree_one(struct __test_metadata *_metadata, __u64 config, bool w64,
		      __u64 period)
{
	const char *skip;
	struct perf_event_attr a;
	struct up_count s;
	struct ev e;
	int err;

	hw_attr(&a, config, w64, period);
	err = ev_open(&e, &a, -1);
	/* arm_pmuv3.c: a 64-bit user-readable event needs FEAT_PMUv3p5 */
	if (err == -EOPNOTSUPP && w64)
		SKIP(return, NEED_USER_READ);
	skip = refusal(_metadata, err);
	if (skip)
		SKIP(return, "%s", skip);
	if (self_read_direct(&e, &s)) {
		ev_close(&e);
		SKIP(return, NEED_USER_READ);
	}
	check_width(_metadata, &s, w64);
	EXPECT_LT(0U, bracket(_metadata, &e, LOOPS));
	ev_close(&e);
}

TEST_F(agree, cycles_32bit_counting)
{
	agree_one(_metadata, PERF_COUNT_HW_CPU_CYCLES, false, 0);
}

TEST_F(agree, cycles_64bit_counting)
{
	agree_one(_metadata, PERF_COUNT_HW_CPU_CYCLES, true, 0);
}

/* overflows: the page's offset must follow each new period */
TEST_F(agree, instructions_32bit_sampling)
{
	agree_one(_metadata, PERF_COUNT_HW_INSTRUCTIONS, false, 20011);
}

TEST_F(agree, cycles_64bit_sampling)
{
	agree_one(_metadata, PERF_COUNT_HW_CPU_CYCLES, true, 20011);
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
	unsigned int direct = 0;
	struct up_count s;
	const char *skip;
	int n, i, j;

	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, false, 30011);
	skip = refusal(_metadata, ev_open(&e[0], &a, -1));
	if (skip)
		SKIP(return, "%s", skip);
	for (n = 1; n < MAX_EVENTS; n++) {
		hw_attr(&a,
			n % 2 ? PERF_COUNT_HW_INSTRUCTIONS :
				PERF_COUNT_HW_CPU_CYCLES,
			false, 10007 + 7919 * n);
		if (ev_open(&e[n], &a, e[0].fd))
			break;
	}
	TH_LOG("%d events in the group", n);
	for (i = 0; i < n; i++) {
		seen[i] = self_read_direct(&e[i], &s) ? 0 : s.index;
		for (j = 0; j < i && seen[i]; j++)
			ASSERT_NE(seen[j], seen[i])
		TH_LOG("events %d and %d at index %u", j, i, seen[i]);
	}
	for (i = 0; i < n; i++)
		direct += bracket(_metadata, &e[i], LOOPS / 10);
	for (i = 0; i < n; i++)
		ev_close(&e[i]);
	if (!direct)
		SKIP(return, NEED_USER_READ);
}

/*
 * More events than counters: the core rotates them, and the times a task
 * extends by itself (uapi: "enabled += delta; if (idx) running += delta")
 * still lie between those of the read()s around it.
 */
TEST_F(agree, multiplexed_times)
{
	struct ev e[MAX_EVENTS];
	struct perf_event_attr a;
	unsigned int loop, waited = 0;
	struct up_count s;
	const char *skip;
	struct rd r0, r1;
	int n, i, ret;

	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	for (n = 0; n < MAX_EVENTS; n++) {
		ret = ev_open(&e[n], &a, -1);
		if (ret)
			break;
	}
	skip = refusal(_metadata, n ? 0 : ret);
	if (skip)
		SKIP(return, "%s", skip);
	if (!up_pc(e[0].pg)->cap_user_time) {
		for (i = 0; i < n; i++)
			ev_close(&e[i]);
		SKIP(return, NEED_TIME);
	}
	for (loop = 0; loop < LOOPS / 10; loop++) {
		for (i = 0; i < n; i++) {
			ASSERT_TRUE(rd(e[i].fd, &r0));
			ret = up_self_read(e[i].pg, &s);
			ASSERT_TRUE(rd(e[i].fd, &r1));
			ASSERT_LE(0, ret);
			waited += ret;
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
		}
		work(3000);
	}
	TH_LOG("%d events, %u user reads fell back to read()", n, waited);
	for (i = 0; i < n; i++)
		ev_close(&e[i]);
}

/*
 * A task with user access reads no counter it has no event on: arm_pmuv3.c
 * armv8pmu_enable_user_access() clears the unused ones (83a7a4d643d3), x86
 * x86_pmu_clear_dirty_counters() those a rdpmc task could see
 * (5471eea5d3bf).  A child on the same CPU leaves a mark in every counter:
 * events whose period starts them at 2^32 - MARK_PERIOD, then a little
 * work, then it sleeps.  No counter that is not ours may hold that mark.
 */
#define MARK_PERIOD 0x2badc0deULL
#define MARK_SPAN 0x1000000ULL

static bool marked(uint64_t v)
{
	uint32_t low = v;

	return low >= (1ULL << 32) - MARK_PERIOD &&
	       low < (1ULL << 32) - MARK_PERIOD + MARK_SPAN;
}

TEST_F(agree, no_counter_leak)
{
	int i, n, p[2], err, status;
	struct perf_event_attr a;
	struct up_count s;
	cpu_set_t cpu0;
	struct ev e;
	pid_t child;
	char c = 0;

#if !defined(__aarch64__) && !defined(UP_X86)
	SKIP(return, NEED_LEAK);
#endif
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0));
	ASSERT_EQ(0, pipe(p));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct ev ce[MAX_EVENTS];

		prctl(PR_SET_PDEATHSIG, SIGKILL); /* gone with the test */
		/* a group: as many as there are counters, each on one */
		hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, MARK_PERIOD);
		for (n = 0; n < MAX_EVENTS; n++)
			if (ev_open(&ce[n], &a, n ? ce[0].fd : -1))
				break;
		work(10000);
		c = n;
		if (write(p[1], &c, 1) == 1)
			pause(); /* asleep, its events off the CPU, until killed */
		_exit(0);
	}
	ASSERT_EQ(1, read(p[0], &c, 1));
	n = c;
	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, true, 0);
	err = ev_open(&e, &a, -1);
	if (err || !n || self_read_direct(&e, &s)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		if (!err)
			ev_close(&e);
		ASSERT_TRUE(!err || refusal(_metadata, err));
		SKIP(return, NEED_LEAK);
	}
	TH_LOG("the child marked %d counters; ours is index %u", n, s.index);
	/* arm64: event counters 0..n-1; x86: general counters 0..n-1 */
	for (i = 0; i < n && !up_self_read(e.pg, &s); i++) {
		if (i == (int)s.index - 1)
			continue;
		EXPECT_FALSE(marked(up_hw_counter(i)))
		TH_LOG("counter %d reads 0x%llx: the child's", i,
		       (unsigned long long)up_hw_counter(i));
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	ev_close(&e);
}

/*
 * User access off (arm64 and riscv perf_user_access 0, x86 rdpmc 0): the
 * page offers no user read (uapi: the counter only "if
 * (pc->cap_user_rdpmc && index)"), and a read of the counter traps rather
 * than reading any value.  Set as root for the test and put back.
 */
FIXTURE(access_off)
{
	int saved;
};

FIXTURE_SETUP(access_off)
{
	self->saved = -1;
	if (!UP_HAVE_HW_READ)
		SKIP(return, NEED_KNOB_OFF);
	if (knob_set(0, &self->saved))
		SKIP(return, NEED_KNOB_OFF);
}

FIXTURE_TEARDOWN_PARENT(access_off)
{
	if (self->saved >= 0)
		EXPECT_EQ(0, knob_write(self->saved));
}

TEST_F(access_off, no_user_read_and_reads_trap)
{
	const struct perf_event_mmap_page *pc;
	struct perf_event_attr a;
	struct ev e;
	pid_t child;
	int status;

	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	if (refusal(_metadata, ev_open(&e, &a, -1)))
		SKIP(return, NEED_KNOB_OFF);
	work(1000);
	pc = e.pg;
	EXPECT_FALSE(pc->cap_user_rdpmc && pc->index)
	TH_LOG("cap_user_rdpmc with index %u", pc->index);
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		work(1000);
		up_hw_counter(0);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == UP_TRAP_SIGNAL)
	TH_LOG("the read of counter 0 ended with status 0x%x", status);
	ev_close(&e);
}

/*
 * The time part needs no PMU: a software event's page has cap_user_time
 * where the architecture's clock allows, and the time_enabled a task
 * extends by itself lies between read()'s before and after.
 */
TEST(user_time_enabled_agrees)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.exclude_kernel = 1,
		.read_format = TIMES,
	};
	struct up_count s;
	struct rd r0, r1;
	unsigned int i;
	struct ev e;
	int err;

	err = ev_open(&e, &a, -1);
	if (err && up_refused(-err))
		SKIP(return, NEED_TIME);
	ASSERT_EQ(0, err);
	if (!up_pc(e.pg)->cap_user_time) {
		ev_close(&e);
		SKIP(return, NEED_TIME);
	}
	for (i = 0; i < LOOPS; i++) {
		ASSERT_TRUE(rd(e.fd, &r0));
		ASSERT_EQ(1, up_self_read(e.pg, &s));
		ASSERT_TRUE(rd(e.fd, &r1));
		ASSERT_TRUE(r0.enabled <= s.enabled && s.enabled <= r1.enabled)
		TH_LOG("time_enabled: read() %llu, user %llu, read() %llu",
		       (unsigned long long)r0.enabled,
		       (unsigned long long)s.enabled,
		       (unsigned long long)r1.enabled);
		work(100);
	}
	ev_close(&e);
}

/* The PERF_SAMPLE_TIME stamp of the newest COMM record (sample_id_all). */
static bool last_comm_time(const void *pg, uint64_t *t)
{
	const unsigned char *data =
		(const unsigned char *)pg + up_u64(pg, UP_DATA_OFFSET);
	uint64_t head = up_data_head(pg), pos = 0;
	struct perf_event_header h;
	bool found = false;

	if (head > up_u64(pg, UP_DATA_SIZE))
		return false;
	while (pos + sizeof(h) <= head) {
		memcpy(&h, data + pos, sizeof(h));
		if (h.size < sizeof(h))
			return false;
		if (h.type == PERF_RECORD_COMM) {
			memcpy(t, data + pos + h.size - 8, 8);
			found = true;
		}
		pos += h.size;
	}
	return found;
}

/*
 * cap_user_time_zero both ways: a COMM record's PERF_SAMPLE_TIME stamp
 * converted back to cycles lies between the cycles read before and after
 * the prctl() that made it, for the first record after ENABLE and after
 * context switches.
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
	unsigned char snap[UP_HDR_LEN];
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
	ASSERT_NE(MAP_FAILED, pg);
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
		ASSERT_TRUE(last_comm_time(pg, &t));
		ASSERT_TRUE(up_check_stamp_cycles(snap, t, c0, c1, &m))
		TH_LOG("record %d: %s", i, m.s);
		for (j = 0; j < 50; j++)
			sched_yield();
	}
	munmap(pg, len);
	close(fd);
}

/* A test its timeout killed did not put the knob back: this process does. */
int main(int argc, char **argv)
{
	int knob = knob_read();
	int ret = test_harness_run(argc, argv);

	if (knob >= 0 && knob_read() != knob && knob_write(knob))
		ksft_print_msg("could not put %s back to %d\n", knob_path(),
			       knob);
	return ret;
}
