// SPDX-License-Identifier: GPL-2.0
/*
 * Self-monitoring through the user page: a task that mmaps its own event
 * reads the counter with no syscall, by the loop documented in uapi
 * linux/perf_event.h (up_self_read() in user_page.h), and gets what read()
 * gives.  Counts are compared exactly: read() before <= self-read <= read()
 * after, and the other way round.
 *
 * Only hardware events can be read from user space.  The tests take the
 * machine as it is: where the PMU is missing, user access is off (arm64
 * perf_user_access, x86 cpu/rdpmc), perf_event_paranoid refuses the event,
 * or the event is not on a counter now (index 0, which the uapi loop
 * allows), they SKIP with a fixed reason and log the details.  Only the
 * tests about a knob change it, only as root, and the knob is put back
 * however the test ends (see "Knobs" below).
 */
#define _GNU_SOURCE
#include <fcntl.h>
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
#include "page_fields.h"

#define USER_ACCESS "/proc/sys/kernel/perf_user_access"
#define EXEC_ENV "PERF_EVENTS_RDPMC_EXEC_CHILD"

/* arm_pmuv3.c format: config1:0 "long" (64-bit), config1:1 "rdpmc" */
#define CFG1_64BIT 0x1ULL
#define CFG1_RDPMC 0x2ULL

#define LOOPS 1000
#define MAX_EVENTS 34
#define READ_TIMES \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

/* Fixed SKIP reasons: what is needed, never a value of this machine. */
#define NEED_READER "needs a user-space counter reader for this architecture"
#define NEED_PMU "needs a hardware PMU"
#define NEED_PERM "needs CAP_PERFMON or a lower perf_event_paranoid"
#define NEED_ACCESS \
	"needs user-space counter access (perf_user_access, cpu/rdpmc)"
#define NEED_TWO_COUNTERS "needs a hardware PMU that counts two events at once"
#define NEED_INDEX "the event never got a user-readable counter (index 0)"
#define NEED_ROOT "needs root to change the knob under test"
#define NEED_ARM64 \
	"needs arm64 (perf_user_access means another thing elsewhere)"
#define NEED_X86 "needs the x86 cpu/rdpmc knob"
#define NEED_KNOB "needs a user-access knob (perf_user_access, cpu/rdpmc)"
#define NEED_TCLOCK "needs the task-clock software event"

/*
 * The commits that made the promise a test checks, printed as one "hint:"
 * line when it fails.
 */
#define HINT_READ \
	"c7206205d00a (uapi self-read loop), 83a7a4d643d3 (arm64 user access), 7911d3f7af14 (x86 rdpmc)"
#define HINT_TIME "c7206205d00a (uapi cap_user_time loop)"
#define HINT_TIME_ZERO "c73deb6aecda (cap_user_time_zero)"
#define HINT_ARM64 "83a7a4d643d3 (arm64: perf_user_access)"
#define HINT_X86 \
	"7911d3f7af14 (x86 rdpmc 1: mapped events only), 59af95e028d4 (rdpmc 1: per-task counters)"

#if defined(__aarch64__) || UP_ARCH_X86
#define IS_ARM64_OR_X86 1
#else
#define IS_ARM64_OR_X86 0
#endif

#define HINT_LEAK \
	"83a7a4d643d3 (arm64 clears unused counters), 5471eea5d3bf (x86 clears dirty counters)"

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

/* NEED_PERM for a refusal (err < 0), else the event's own reason. */
static const char *perm_or(int err, const char *reason)
{
	return err == -EACCES || err == -EPERM ? NEED_PERM : reason;
}

/* The fixed reason for a hardware event that did not open (err > 0). */
static const char *why(int err)
{
	return perm_or(-err, NEED_PMU);
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

/* Async-signal-safe: the SIGTERM handler restores knobs with it. */
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

/*
 * Knobs.  A test changes a system setting only when it is root and the
 * test is about that setting.  Before it writes, it notes the old value in
 * a journal the harness's main process mapped shared before any test was
 * forked (no file: nothing another user could plant).  The value goes back
 *  - when the test ends: by the test, else by the fixture's teardown, which
 *    runs in the test's parent where the harness has
 *    FIXTURE_TEARDOWN_PARENT (6.10 on), so also after a fatal signal;
 *  - when the harness's timeout killed the test's process group: the main
 *    process is outside it, and the next test that reads or sets a knob
 *    first puts back every entry whose owner is gone, as does the main
 *    process when it exits or gets SIGTERM (the kselftest runner's
 *    timeout).
 * Several knobs can be changed in one test (one entry each).
 */
#define KNOB_MAX 4

struct knob_entry {
	pid_t owner; /* 0: free */
	char path[96];
	char saved[32];
};

struct shared {
	pid_t main_pid;
	struct knob_entry k[KNOB_MAX];
	pid_t hint_pgrp; /* the test process group the hint is for */
	char hint[192];
};

static struct shared *sh;

static bool owner_gone(pid_t pid)
{
	return kill(pid, 0) && errno == ESRCH;
}

/* Put back the entries of dead owners, and this process's when mine. */
static void knob_put_back(bool mine)
{
	unsigned int i;
	pid_t me = getpid();

	if (!sh)
		return;
	for (i = 0; i < KNOB_MAX; i++) {
		struct knob_entry *k = &sh->k[i];
		pid_t owner = k->owner;

		if (!owner || (owner == me ? !mine : !owner_gone(owner)))
			continue;
		file_write(k->path, k->saved);
		k->owner = 0;
	}
}

static void knob_on_term(int sig)
{
	unsigned int i;

	if (sh && getpid() == sh->main_pid)
		for (i = 0; i < KNOB_MAX; i++)
			if (sh->k[i].owner)
				file_write(sh->k[i].path, sh->k[i].saved);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A failed ASSERT ends the test with abort(): the hint goes out first. */
static void hint_on_abort(int sig)
{
	static const char pre[] =
		"# hint: if this is a kernel regression, check for ";

	if (sh && sh->hint[0] && sh->hint_pgrp == getpgrp()) {
		if (write(STDERR_FILENO, pre, sizeof(pre) - 1) > 0 &&
		    write(STDERR_FILENO, sh->hint, strlen(sh->hint)) > 0 &&
		    write(STDERR_FILENO, "\n", 1) > 0)
			sh->hint[0] = 0;
	}
}

static void __attribute__((constructor)) shared_init(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		sh = NULL;
		return;
	}
	sh->main_pid = getpid();
	signal(SIGTERM, knob_on_term);
	signal(SIGABRT, hint_on_abort);
}

/* Every test is over: whatever is still noted goes back. */
static void __attribute__((destructor)) shared_fini(void)
{
	unsigned int i;

	if (sh && getpid() == sh->main_pid)
		for (i = 0; i < KNOB_MAX; i++)
			if (sh->k[i].owner)
				file_write(sh->k[i].path, sh->k[i].saved);
}

/*
 * Set path to val for this test.  0 when it holds val (changed or not),
 * -EPERM when a change is needed and this is not root, else -errno.
 */
static int knob_set(const char *path, const char *val)
{
	char cur[32];
	unsigned int i;
	int err;

	knob_put_back(false);
	err = file_read(path, cur, sizeof(cur));
	if (err)
		return err;
	if (atoi(cur) == atoi(val))
		return 0;
	if (geteuid() != 0)
		return -EPERM;
	for (i = 0; i < KNOB_MAX && sh && sh->k[i].owner; i++)
		;
	if (!sh || i == KNOB_MAX)
		return -ENOSPC;
	snprintf(sh->k[i].path, sizeof(sh->k[i].path), "%s", path);
	snprintf(sh->k[i].saved, sizeof(sh->k[i].saved), "%s", cur);
	sh->k[i].owner = getpid(); /* noted before the write */
	err = file_write(path, val);
	if (!err &&
	    (file_read(path, cur, sizeof(cur)) || atoi(cur) != atoi(val)))
		err = -EINVAL;
	return err;
}

/* The value of a knob, once what dead tests changed is back; -1: none. */
static int knob_get(const char *path)
{
	char buf[32];

	knob_put_back(false);
	if (!path || file_read(path, buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

/* This test's knobs back now. */
static void knob_restore(void)
{
	knob_put_back(true);
}

/* The 6.12 harness has exit_code; the 6.1 one has passed. */
static bool test_failed(const struct __test_metadata *md)
{
#ifdef FIXTURE_TEARDOWN_PARENT
	return md->exit_code == KSFT_FAIL;
#else
	return !md->passed;
#endif
}

static void hint_at_end(struct __test_metadata **md)
{
	if (*md && test_failed(*md) && sh && sh->hint[0])
		fprintf(TH_LOG_STREAM,
			"# hint: if this is a kernel regression, check for %s\n",
			sh->hint);
	if (sh)
		sh->hint[0] = 0;
}

/* self: the variable set, so that no compiler calls it unused */
static struct __test_metadata *hint_set(struct __test_metadata *md,
					const char *commits, void *self)
{
	if (sh) {
		snprintf(sh->hint, sizeof(sh->hint), "%s", commits);
		sh->hint_pgrp = getpgrp();
	}
	return md;
}

/*
 * First line of a test: the commits of the promise it checks, printed in
 * one "hint:" line if the test fails (an ASSERT's abort(), or at its end).
 */
#define PROMISE(commits)                                                       \
	struct __test_metadata *__hint __attribute__((cleanup(hint_at_end))) = \
		hint_set(_metadata, commits, &__hint)

/* The knob that lets a self-monitoring task read its counters, or NULL. */
static const char *rdpmc_knob(void)
{
#if defined(__aarch64__)
	return access(USER_ACCESS, F_OK) ? NULL : USER_ACCESS;
#elif UP_ARCH_X86
	static const char *const x86[] = {
		"/sys/bus/event_source/devices/cpu/rdpmc",
		"/sys/bus/event_source/devices/cpu_core/rdpmc",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(x86); i++)
		if (!access(x86[i], F_OK))
			return x86[i];
	return NULL;
#else
	return NULL;
#endif
}

/*
 * NULL when a self-monitoring task may read its counters as the machine
 * is set, else the fixed reason why not (details logged).
 */
static const char *user_access(struct __test_metadata *_metadata)
{
	const char *path = rdpmc_knob();
	int v = knob_get(path);

	if (!UP_HAVE_HW_READ)
		return NEED_READER;
	/* arm64 perf_user_access 0, x86 cpu/rdpmc 0: no user read */
	if (path && v == 0) {
		TH_LOG("%s is 0", path);
		return NEED_ACCESS;
	}
	return NULL;
}

/*
 * The agreement: r0 = read(); s = self-read; r1 = read() gives
 * r0 <= s <= r1, and s0 = self-read; r = read(); s1 = self-read gives
 * s0 <= r <= s1.  Also the self-read never goes back, nor jumps by more
 * than the counter's width would (the 2^48 / 2^32 jump of a bad sign
 * extension, or of an offset with its high bit set).  A self-read that
 * finds index 0 (the event is not on a counter now) falls back to read(),
 * as the uapi loop does, and is not compared.  Returns the number of
 * direct reads compared.
 */
static unsigned int bracket_loop(struct __test_metadata *_metadata,
				 struct ev *e, unsigned int loops,
				 unsigned int spin)
{
	unsigned int i, direct = 0, fell_back = 0;
	struct up_count s, s1;
	uint64_t prev = 0;
	struct rd r0, r1;
	int ret, ret1;

	for (i = 0; i < loops; i++) {
		work(spin + (i % 16) * 37);
		EXPECT_TRUE(rd(e->fd, &r0));
		ret = up_self_read(e->pg, &s);
		EXPECT_TRUE(rd(e->fd, &r1));
		/* uapi: the loop retries "while (pc->lock != seq)" */
		ASSERT_NE(-EAGAIN, ret) TH_LOG("the seqlock never held still");
		if (ret) {
			fell_back++;
			continue;
		}
		direct++;
		/* uapi: "count = pc->offset; ... count += pmc" is the count */
		ASSERT_LE(r0.value, s.count)
		TH_LOG("#%u: self-read %llu < read() before %llu (index %u width %u pmc 0x%llx)",
		       i, (unsigned long long)s.count,
		       (unsigned long long)r0.value, s.index, s.width,
		       (unsigned long long)s.pmc);
		ASSERT_LE(s.count, r1.value)
		TH_LOG("#%u: self-read %llu > read() after %llu (index %u width %u pmc 0x%llx)",
		       i, (unsigned long long)s.count,
		       (unsigned long long)r1.value, s.index, s.width,
		       (unsigned long long)s.pmc);
		ASSERT_LE(prev, s.count);
		/* far less than 2^31 events between two reads of one loop */
		if (prev)
			ASSERT_LT(s.count - prev, 1ULL << 31);
		prev = s.count;

		ret = up_self_read(e->pg, &s);
		EXPECT_TRUE(rd(e->fd, &r0));
		ret1 = up_self_read(e->pg, &s1);
		if (ret || ret1)
			continue;
		ASSERT_LE(s.count, r0.value)
		TH_LOG("loop %u: read() %llu < self-read before %llu (index %u)",
		       i, (unsigned long long)r0.value,
		       (unsigned long long)s.count, s.index);
		ASSERT_LE(r0.value, s1.count)
		TH_LOG("loop %u: read() %llu > self-read after %llu (index %u)",
		       i, (unsigned long long)r0.value,
		       (unsigned long long)s1.count, s1.index);
		prev = s1.count;
	}
	if (fell_back)
		TH_LOG("%u of %u self-reads found index 0 and fell back to read()",
		       fell_back, loops);
	return direct;
}

/* Up to a few tries for an event to be on a counter: 0 when it is. */
static int self_read_direct(struct ev *e, struct up_count *s)
{
	int i, ret = 1;

	for (i = 0; i < 100 && ret == 1; i++) {
		work(1000);
		ret = up_self_read(e->pg, s);
	}
	return ret;
}

struct agree_cfg {
	uint64_t config;
	uint64_t period; /* 0: counting */
	bool w64;
	bool evcnt; /* arm64: keep it off the cycle counter */
};

/*
 * uapi pmc_width: "bit-width of the value read": a driver choice between
 * 32 and 64 bits, except where documented.  arm64
 * (Documentation/arch/arm64/perf.rst, "About chained events and counter
 * sizes"): config1:0 == 0 requests a 32-bit counter, whose upper 32 bits
 * are UNKNOWN, and pmc_width "will indicate the valid width"; config1:0 ==
 * 1 a 64-bit one.
 */
static void width_bounds(struct __test_metadata *_metadata,
			 const struct up_count *s, bool w64)
{
	TH_LOG("pmc_width %u, index %u", s->width, s->index);
	EXPECT_LE(32, s->width);
	EXPECT_GE(64, s->width);
#ifdef __aarch64__
	EXPECT_EQ(w64 ? 64 : 32, s->width)
	TH_LOG("a %s counter was requested (config1:0)",
	       w64 ? "64-bit" : "32-bit");
#endif
}

/* NULL when the loop ran, else the fixed reason why it could not. */
static const char *agree_run(struct __test_metadata *_metadata,
			     const struct agree_cfg *v)
{
	struct ev e, hog = { -1, MAP_FAILED };
	const char *skip = user_access(_metadata);
	struct perf_event_attr a;
	struct up_count s;
	uint32_t lock0;
	struct rd r;
	int err;

	if (skip)
		return skip;
	if (v->evcnt) {
#ifndef __aarch64__
		return "needs arm64 (the cycle counter is an arm64 notion)";
#endif
		/* occupy PMCCNTR_EL0: the next cycles event takes PMEVCNTRn */
		hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, true, 0);
		err = ev_open(&hog, &a);
		if (err) {
			TH_LOG("cycles: %s", strerror(-err));
			if (unsupported(-err))
				return why(-err);
			EXPECT_EQ(0, err);
			return NULL;
		}
	}
	hw_attr(&a, v->config, v->w64, v->period);
	err = ev_open(&e, &a);
	if (err) {
		ev_close(&hog);
		TH_LOG("open: %s", strerror(-err));
		/* arm_pmuv3.c: 64-bit user events need FEAT_PMUv3p5 */
		if (err == -EOPNOTSUPP && v->w64)
			return "needs 64-bit counters for user reads (arm64 FEAT_PMUv3p5)";
		if (unsupported(-err))
			return why(-err);
		EXPECT_EQ(0, err);
		return NULL;
	}
	work(1000);
	ASSERT_TRUE(rd(e.fd, &r));
	if (!r.running || self_read_direct(&e, &s)) {
		TH_LOG("running %llu, index %u, cap_user_rdpmc %d",
		       (unsigned long long)r.running, up_u32(e.pg, UP_INDEX),
		       up_cap(e.pg, UP_CAP_USER_RDPMC));
		ev_close(&e);
		ev_close(&hog);
		return NEED_INDEX;
	}
	width_bounds(_metadata, &s, v->w64);
	lock0 = up_u32(e.pg, UP_LOCK);
	if (!bracket_loop(_metadata, &e, LOOPS, 200)) {
		ev_close(&e);
		ev_close(&hog);
		return NEED_INDEX;
	}
	/* driver details, not promises: logged */
	if (v->period)
		TH_LOG("lock %s after the overflows",
		       lock0 == up_u32(e.pg, UP_LOCK) ? "unchanged" :
							"changed");
	if (v->evcnt && !up_self_read(e.pg, &s))
		TH_LOG("with the cycle counter taken: index %u", s.index);
	ev_close(&e);
	ev_close(&hog);
	return NULL;
}

FIXTURE(agree)
{
	int unused;
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
}

FIXTURE_TEARDOWN(agree)
{
}

TEST_F(agree, brackets_read)
{
	PROMISE(HINT_READ);
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
	PROMISE(HINT_READ);
	const char *skip = user_access(_metadata);
	struct ev e[MAX_EVENTS];
	struct perf_event_attr a;
	uint32_t seen[MAX_EVENTS];
	unsigned int direct = 0;
	struct up_count s;
	int n, i, j, err;
	bool insn = true;
	struct rd r;

	if (skip)
		SKIP(return, "%s", skip);
	/* enabled: validate_event() passes over an OFF leader */
	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, false, 30011);
	err = ev_open(&e[0], &a);
	if (err && unsupported(-err)) {
		TH_LOG("cycles: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	for (n = 1; n < MAX_EVENTS; n++) {
		hw_attr(&a,
			insn && n % 2 ? PERF_COUNT_HW_INSTRUCTIONS :
					PERF_COUNT_HW_CPU_CYCLES,
			false, 10007 + 7919 * n);
		err = ev_open_on(&e[n], &a, 0, e[0].fd);
		if (err && insn && n % 2 && unsupported(-err)) {
			/* a PMU without it (QEMU TCG without -icount) */
			TH_LOG("instructions: %s: cycles only", strerror(-err));
			insn = false;
			n--;
			continue;
		}
		if (err)
			break;
	}
	if (n < 2) {
		TH_LOG("a second hardware event in the group: %s",
		       strerror(-err));
		SKIP(return, NEED_TWO_COUNTERS);
	}
	/* x86 validate_group() does not see a pinned NMI watchdog: shrink */
	for (work(5000); n > 2 && rd(e[0].fd, &r) && !r.running; work(5000))
		ev_close(&e[--n]);
	TH_LOG("%d counters in use", n);
	for (i = 0; i < n; i++) {
		seen[i] = 0;
		if (self_read_direct(&e[i], &s)) {
			TH_LOG("member %d of %d: index 0", i, n);
			continue;
		}
		width_bounds(_metadata, &s, false);
		seen[i] = s.index;
		/* one counter per member while the group is on */
		for (j = 0; j < i; j++)
			ASSERT_NE(seen[j], seen[i])
		TH_LOG("members %d and %d both at index %u", j, i, s.index);
	}
	for (i = 0; i < n; i++)
		direct += bracket_loop(_metadata, &e[i], LOOPS / 10, 100);
	for (i = 0; i < n; i++)
		ev_close(&e[i]);
	if (!direct)
		SKIP(return, NEED_INDEX);
}

/*
 * Not counting, no index: perf_event_index() is 0 unless the event is
 * ACTIVE (kernel/events/core.c), and the reader must fall back to read().
 */
TEST(disabled_index_zero)
{
	PROMISE(HINT_READ);
	const char *skip = user_access(_metadata);
	struct perf_event_attr a;
	struct up_count s;
	struct ev e;
	struct rd r;
	int err;

	if (skip)
		SKIP(return, "%s", skip);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	a.disabled = 1;
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("instructions: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_EQ(0, ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0));
	if (self_read_direct(&e, &s)) {
		ev_close(&e);
		SKIP(return, NEED_INDEX);
	}
	bracket_loop(_metadata, &e, 50, 100);
	ASSERT_EQ(0, ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_TRUE(rd(e.fd, &r));
	ASSERT_NE(0ULL, r.value);
	ev_close(&e);
}

/*
 * Count the counters: the largest group of hardware events that opens;
 * -errno when not even one opens.
 */
static int count_counters(void)
{
	struct perf_event_attr a;
	struct ev e[MAX_EVENTS];
	int n, i, err;

	/* enabled: validate_event() passes over an OFF leader */
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e[0], &a);
	if (err)
		return err;
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
	/*
	 * With index 0 time_running is the page's last update: an event the
	 * PMU gives no user index (arm64 before 5.17) counts on meanwhile.
	 */
	if (s->index) {
		ASSERT_LE(r0->running, s->running)
		TH_LOG("user time_running %llu < read() before %llu (index %u)",
		       (unsigned long long)s->running,
		       (unsigned long long)r0->running, s->index);
	}
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
	const char *skip = user_access(_metadata);
	struct ev e[MAX_EVENTS];
	struct perf_event_attr a;
	unsigned int loop, waited = 0, ran = 0;
	struct up_count s;
	struct rd r0, r1;
	int n, i, ret;

	if (skip)
		return skip;
	n = count_counters();
	if (n < 0)
		return why(-n);
	n = n + 2 > MAX_EVENTS ? MAX_EVENTS : n + 2;
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, ev_open(&e[i], &a));
	if (!up_cap(e[0].pg, UP_CAP_USER_TIME)) {
		for (i = 0; i < n; i++)
			ev_close(&e[i]);
		return "needs cap_user_time";
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
	TH_LOG("%d events, %u self-reads, %u fell back", n, ran, waited);
	/* more events than counters: some had to wait */
	for (i = 0; i < n; i++) {
		ASSERT_TRUE(rd(e[i].fd, &r0));
		if (r0.running < r0.enabled)
			break;
	}
	EXPECT_LT(i, n) TH_LOG("no event was ever multiplexed out");
	for (i = 0; i < n; i++)
		ev_close(&e[i]);
	return ran ? NULL : NEED_INDEX;
}

TEST(multiplex)
{
	PROMISE(HINT_TIME);
	const char *skip = multiplex_run(_metadata);

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
	if (err && unsupported(-err)) {
		TH_LOG("task-clock: %s", strerror(-err));
		return perm_or(err, NEED_TCLOCK);
	}
	ASSERT_EQ(0, err);
	if (!up_cap(e.pg, UP_CAP_USER_TIME)) {
		ev_close(&e);
		return "needs cap_user_time";
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
	PROMISE(HINT_TIME);
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

#define COMM_PAGES 9

/*
 * A dummy event recording COMM with PERF_SAMPLE_TIME (sample_id_all), its
 * page and 8 data pages mapped; NULL, or the SKIP reason.
 */
static const char *comm_stamps_open(struct __test_metadata *_metadata,
				    bool disabled, int *fdp, void **pgp)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct perf_event_attr a;
	int fd, err;
	void *pg;

	if (!UP_HAVE_HW_READ)
		return NEED_READER;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.comm = 1;
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TIME;
	a.exclude_kernel = 1;
	a.disabled = disabled;
	fd = up_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	err = fd < 0 ? errno : 0;
	if (err && unsupported(err)) {
		TH_LOG("dummy: %s", strerror(err));
		return perm_or(-err, "needs the dummy software event");
	}
	ASSERT_LE(0, fd);
	pg = mmap(NULL, psz * COMM_PAGES, PROT_READ | PROT_WRITE, MAP_SHARED,
		  fd, 0);
	ASSERT_NE(MAP_FAILED, pg);
	if (!up_cap(pg, UP_CAP_USER_TIME_ZERO)) {
		munmap(pg, psz * COMM_PAGES);
		close(fd);
		return "needs cap_user_time_zero";
	}
	*fdp = fd;
	*pgp = pg;
	return NULL;
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
	uint64_t t[2], cyc, ts;
	const char *skip;
	void *pg;
	int fd, i;

	skip = comm_stamps_open(_metadata, false, &fd, &pg);
	if (skip)
		return skip;
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
	munmap(pg, psz * COMM_PAGES);
	close(fd);
	return NULL;
}

TEST(time_zero)
{
	PROMISE(HINT_TIME_ZERO);
	const char *skip = time_zero_run(_metadata);

	if (skip)
		SKIP(return, "%s", skip);
}

/*
 * One COMM record made between two cycle readings: its PERF_SAMPLE_TIME
 * stamp converted back to cycles lies between them.
 */
static void stamp_bracket(struct __test_metadata *_metadata, const void *pg,
			  const char *when)
{
	unsigned char snap[UP_HDR_LEN];
	uint64_t c0, c1, t;
	struct up_msg m;

	c0 = up_hw_cycles();
	ASSERT_EQ(0, prctl(PR_SET_NAME, "rdpmc-stamp"));
	c1 = up_hw_cycles();
	ASSERT_EQ(0, up_snapshot(pg, snap));
	ASSERT_TRUE(last_comm_times(pg, &t, 1));
	ASSERT_TRUE(up_check_stamp_cycles(snap, t, c0, c1, &m))
	TH_LOG("%s: %s", when, m.s);
}

/*
 * cap_user_time_zero the way back (uapi: "time = timestamp - time_zero;
 * ... cyc = (quot << time_shift) + (rem << time_shift) / time_mult"), for
 * the first record after ENABLE and after a workload of context switches.
 */
static const char *stamp_cycles_run(struct __test_metadata *_metadata)
{
	long psz = sysconf(_SC_PAGESIZE);
	const char *skip;
	void *pg;
	int fd, i, j;

	skip = comm_stamps_open(_metadata, true, &fd, &pg);
	if (skip)
		return skip;
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	stamp_bracket(_metadata, pg, "first record after ENABLE");
	for (i = 0; i < 20; i++) {
		for (j = 0; j < 50; j++)
			sched_yield();
		work(1000);
		stamp_bracket(_metadata, pg, "after a workload");
	}
	munmap(pg, psz * COMM_PAGES);
	close(fd);
	return NULL;
}

TEST(time_zero_stamp_to_cycles)
{
	PROMISE(HINT_TIME_ZERO);
	const char *skip = stamp_cycles_run(_metadata);

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
	unsigned int direct; /* self-reads compared */
	char msg[160];
};

#define THR_MSG "thread %d loop %d: ret %d, %llu <= %llu <= %llu (index %u)"

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
		if (ret == 1) /* index 0: read() is the count */
			continue;
		if (ret || s.count < r0.value || s.count > r1.value) {
			t->bad = i + 1;
			snprintf(t->msg, sizeof(t->msg), THR_MSG, t->n, i, ret,
				 (unsigned long long)r0.value,
				 (unsigned long long)s.count,
				 (unsigned long long)r1.value, s.index);
		}
		t->direct++;
		work(300);
	}
	ev_close(&e);
	return NULL;
}

TEST(threads_migrate)
{
	PROMISE(HINT_READ);
	const char *skip = user_access(_metadata);
	struct thr t[NTHREADS];
	unsigned int direct = 0;
	int i;

	/*
	 * riscv enables user reads per counter and CPU (scounteren) as
	 * counters start and stop: a read between a migration and the
	 * seqlock's retry can trap (SIGILL in the riscv64 guest).
	 */
	if (!IS_ARM64_OR_X86)
		SKIP(return, "needs arm64 or x86 (riscv reads may trap)");
	if (skip)
		SKIP(return, "%s", skip);
	memset(t, 0, sizeof(t));
	for (i = 0; i < NTHREADS; i++) {
		t[i].n = i;
		ASSERT_EQ(0, pthread_create(&t[i].tid, NULL, thread_fn, &t[i]));
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i].tid, NULL);
	if (t[0].err && unsupported(-t[0].err)) {
		TH_LOG("open: %s", strerror(-t[0].err));
		SKIP(return, "%s", why(-t[0].err));
	}
	for (i = 0; i < NTHREADS; i++) {
		/* instructions (odd threads) may be missing where cycles is not */
		if (t[i].err && unsupported(-t[i].err)) {
			TH_LOG("thread %d: %s", i, strerror(-t[i].err));
			continue;
		}
		EXPECT_EQ(0, t[i].err);
		EXPECT_EQ(0, t[i].bad) TH_LOG("%s", t[i].msg);
		direct += t[i].direct;
	}
	TH_LOG("%ld CPUs, %u self-reads", sysconf(_SC_NPROCESSORS_ONLN),
	       direct);
	if (!direct)
		SKIP(return, NEED_INDEX);
}

/* Knob tests: each changes the knob it is about, as root, for itself. */
FIXTURE(knob)
{
	int unused;
};

FIXTURE_SETUP(knob)
{
	knob_put_back(false);
}

#ifdef FIXTURE_TEARDOWN_PARENT
/* 6.10 on: in the test's parent, so also after the test died of a signal */
FIXTURE_TEARDOWN_PARENT(knob)
#else
FIXTURE_TEARDOWN(knob)
#endif
{
	knob_put_back(true);
}

/* Set path to val for the test: NULL, or the fixed reason it cannot. */
static const char *knob_for_test(struct __test_metadata *_metadata,
				 const char *path, const char *val)
{
	int err = knob_set(path, val);

	if (err == -EPERM)
		return NEED_ROOT;
	if (err) {
		TH_LOG("cannot set %s to %s: %s", path, val, strerror(-err));
		return "needs a writable knob under test";
	}
	return NULL;
}

/*
 * In a child with user access as the knob has it: open and map an
 * instructions event when mapped, then read hardware counter 0.  Returns
 * how the child ended: 0 and *v the value it read, the signal that killed
 * it, or -errno: -EACCES when the event was not permitted, else -ENODEV.
 */
static int read_in_child(bool mapped, uint64_t *v)
{
	struct perf_event_attr a;
	int status, p[2], err;
	pid_t child;
	struct ev e;

	*v = 0;
	if (pipe(p))
		return -ENODEV;
	child = fork();
	if (child < 0)
		return -ENODEV;
	if (child == 0) {
		close(p[0]);
		hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
		err = mapped ? ev_open(&e, &a) : 0;
		if (err)
			_exit(err == -EACCES || err == -EPERM ? 4 : 2);
		work(1000);
		*v = up_hw_counter(0);
		if (write(p[1], v, sizeof(*v)) != sizeof(*v))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	if (waitpid(child, &status, 0) != child)
		return -ENODEV;
	if (read(p[0], v, sizeof(*v)) != sizeof(*v))
		*v = 0;
	close(p[0]);
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	if (WEXITSTATUS(status) == 4)
		return -EACCES;
	return WEXITSTATUS(status) ? -ENODEV : 0;
}

/* arm64 perf_user_access 0: no index, the reader falls back. */
TEST_F(knob, user_access_0)
{
	PROMISE(HINT_ARM64);
	const char *skip;
	struct perf_event_attr a;
	struct up_count s;
	struct ev e;
	struct rd r;
	int err;

#ifndef __aarch64__
	SKIP(return, NEED_ARM64);
#endif
	if (access(USER_ACCESS, F_OK))
		SKIP(return, "needs perf_user_access (arm64 PMUv3, 5.17)");
	skip = knob_for_test(_metadata, USER_ACCESS, "0");
	if (skip)
		SKIP(return, "%s", skip);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("instructions: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	work(1000);
	/* arm_pmuv3.c armv8pmu_user_event_idx(): 0 without sysctl */
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_TRUE(rd(e.fd, &r));
	/*
	 * A count only if the event ran: pinned events of another process
	 * may hold every counter (time_running 0, count 0).
	 */
	TH_LOG("read(): value %llu, running %llu ns",
	       (unsigned long long)r.value, (unsigned long long)r.running);
	if (r.running)
		EXPECT_NE(0ULL, r.value);
	ev_close(&e);
	knob_restore();
}

/*
 * With user access off, the counter read itself faults: arm64 EL0 access
 * needs PMUSERENR_EL0 (SIGILL), x86 rdpmc needs CR4.PCE (SIGSEGV); on x86
 * CPUs with counter-level user rdpmc disable (sysfs rdpmc ABI,
 * CPUID.23H.EBX[2]) a disabled counter may read 0 instead.
 */
TEST_F(knob, user_access_0_traps)
{
	PROMISE(HINT_ARM64 ", " HINT_X86);
	const char *skip;
	const char *path = rdpmc_knob();
	uint64_t v;
	int how;

	if (!UP_HAVE_HW_READ)
		SKIP(return, NEED_READER);
	if (!path)
		SKIP(return, NEED_KNOB);
	skip = knob_for_test(_metadata, path, "0");
	if (skip)
		SKIP(return, "%s", skip);
	how = read_in_child(true, &v);
	if (how < 0)
		SKIP(return, "%s", why(-how));
	TH_LOG("the read ended with %d, value 0x%llx", how,
	       (unsigned long long)v);
#if UP_ARCH_X86
	EXPECT_TRUE(how == 0 ? v == 0 : how == UP_TRAP_SIGNAL)
	TH_LOG("want signal %d, or a read of 0", UP_TRAP_SIGNAL);
#else
	EXPECT_EQ(UP_TRAP_SIGNAL, how);
#endif
	knob_restore();
}

/*
 * arm64 perf_user_access 1: an index only for events opened with config1
 * bit 1; without it cap_user_rdpmc is 0 (arm_pmuv3.c
 * arch_perf_update_userpage(), armv8pmu_user_event_idx()).
 */
TEST_F(knob, user_access_1)
{
	PROMISE(HINT_ARM64);
	const char *skip;
	struct perf_event_attr a;
	struct up_count s;
	struct ev e;
	int err;

#ifndef __aarch64__
	SKIP(return, NEED_ARM64);
#endif
	if (access(USER_ACCESS, F_OK))
		SKIP(return, "needs perf_user_access (arm64 PMUv3, 5.17)");
	skip = knob_for_test(_metadata, USER_ACCESS, "1");
	if (skip)
		SKIP(return, "%s", skip);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	a.config1 = 0;
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("instructions: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	work(1000);
	ASSERT_EQ(1, up_self_read(e.pg, &s));
	ASSERT_EQ(0U, s.index);
	ASSERT_FALSE(up_cap(e.pg, UP_CAP_USER_RDPMC));
	ev_close(&e);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	ASSERT_EQ(0, ev_open(&e, &a));
	ASSERT_TRUE(up_cap(e.pg, UP_CAP_USER_RDPMC));
	if (self_read_direct(&e, &s)) {
		ev_close(&e);
		SKIP(return, NEED_INDEX);
	}
	bracket_loop(_metadata, &e, 50, 100);
	ev_close(&e);
	knob_restore();
}

/*
 * x86 cpu/rdpmc (Documentation/ABI/testing/sysfs-bus-event_source-devices-
 * rdpmc): 0 user rdpmc disabled; 1 enabled while an event is mapped (and,
 * with counter-level disable, only for per-task events' counters); 2
 * enabled for every task and counter.  Sets it to VAL for this test, else
 * says what is needed.
 */
static const char *x86_knob_for_test(struct __test_metadata *_metadata,
				     const char *val)
{
#if UP_ARCH_X86
	const char *path = rdpmc_knob();

	if (path)
		return knob_for_test(_metadata, path, val);
#endif
	return NEED_X86;
}

TEST_F(knob, x86_rdpmc_0)
{
	PROMISE(HINT_X86);
	const char *skip;
	struct perf_event_attr a;
	struct up_count s;
	struct ev e;
	int err;

	skip = x86_knob_for_test(_metadata, "0");
	if (skip)
		SKIP(return, "%s", skip);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("instructions: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	work(1000);
	/* no user read offered: the reader falls back to read() */
	EXPECT_EQ(1, up_self_read(e.pg, &s))
	TH_LOG("index %u, cap_user_rdpmc %d", s.index,
	       up_cap(e.pg, UP_CAP_USER_RDPMC));
	ev_close(&e);
	knob_restore();
}

/* rdpmc 1: a per-task event's counter reads from user space. */
TEST_F(knob, x86_rdpmc_1)
{
	PROMISE(HINT_X86);
	const char *skip;
	struct perf_event_attr a;
	struct up_count s;
	struct ev e;
	int err;

	skip = x86_knob_for_test(_metadata, "1");
	if (skip)
		SKIP(return, "%s", skip);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("instructions: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	if (self_read_direct(&e, &s)) {
		ev_close(&e);
		SKIP(return, NEED_INDEX);
	}
	bracket_loop(_metadata, &e, 100, 100);
	ev_close(&e);
	knob_restore();
}

/*
 * rdpmc 1: a task with no event mapped cannot execute rdpmc (CR4.PCE
 * follows mm->context.perf_rdpmc_allowed), or on CPUs with counter-level
 * disable reads 0.
 */
TEST_F(knob, x86_rdpmc_1_unmapped_traps)
{
	PROMISE(HINT_X86);
	const char *skip;
	uint64_t v;
	int how;

	skip = x86_knob_for_test(_metadata, "1");
	if (skip)
		SKIP(return, "%s", skip);
	how = read_in_child(false, &v);
	TH_LOG("the read ended with %d, value 0x%llx", how,
	       (unsigned long long)v);
	EXPECT_TRUE(how == 0 ? v == 0 : how == UP_TRAP_SIGNAL)
	TH_LOG("want signal %d, or a read of 0", UP_TRAP_SIGNAL);
	knob_restore();
}

/*
 * rdpmc 2: any task may execute rdpmc, with no event mapped at all, and a
 * mapped per-task event still agrees with read().
 */
TEST_F(knob, x86_rdpmc_2)
{
	PROMISE(HINT_X86);
	const char *skip;
	struct perf_event_attr a;
	struct up_count s;
	uint64_t v;
	struct ev e;
	int how, err;

	skip = x86_knob_for_test(_metadata, "2");
	if (skip)
		SKIP(return, "%s", skip);
	how = read_in_child(false, &v);
	EXPECT_EQ(0, how) TH_LOG("rdpmc with no event mapped: signal %d", how);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("instructions: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	if (!self_read_direct(&e, &s))
		bracket_loop(_metadata, &e, 100, 100);
	ev_close(&e);
	knob_restore();
}

/*
 * No leak: with user access on, a counter the task does not own reads 0.
 * arm_pmuv3.c armv8pmu_enable_user_access() clears unused counters, x86
 * x86_pmu_clear_dirty_counters() (5.15) those a rdpmc task could see.  A
 * child on the same CPU dirties the counters with events of its own.  A
 * counter that moves between two reads is live: another user's event on
 * this CPU (a system-wide event, the NMI watchdog), readable by design; a
 * stale value stands still.
 */
TEST(no_leak)
{
	PROMISE(HINT_LEAK);
	const char *skip = user_access(_metadata);
	struct perf_event_attr a;
	int n, nread, i, loop, ready[2], err;
	unsigned int live = 0;
	struct up_count s;
	uint64_t v, v2;
	cpu_set_t set;
	pid_t child;
	struct ev e;
	char c;

	/* the promise is arm64's and x86's; riscv gives no access at all */
	if (!IS_ARM64_OR_X86)
		SKIP(return, "needs arm64 or x86 (counters of others cleared)");
	if (skip)
		SKIP(return, "%s", skip);
	n = count_counters();
	if (n < 0)
		SKIP(return, "%s", why(-n));
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
	if (!err && self_read_direct(&e, &s))
		err = 1;
	if (err) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		if (err == 1) {
			ev_close(&e);
			SKIP(return, NEED_INDEX);
		}
		TH_LOG("cycles: %s", strerror(-err));
		if (unsupported(-err))
			SKIP(return, "%s", why(-err));
		ASSERT_EQ(0, err);
	}
	for (loop = 0; loop < 50; loop++) {
		usleep(2000); /* the child runs on this CPU meanwhile */
		if (up_self_read(e.pg, &s))
			continue; /* not on a counter now: no user access */
		for (i = 0; i < nread; i++) {
			if (i == (int)s.index - 1)
				continue;
			v = up_hw_counter(i);
			work(2000);
			v2 = up_hw_counter(i);
			if (up_self_read(e.pg, &s) || i == (int)s.index - 1)
				continue; /* moved meanwhile */
			if (v != v2) {
				live++;
				continue;
			}
			ASSERT_EQ(0ULL, v)
			TH_LOG("counter %d reads 0x%llx, not ours (index %u)",
			       i, (unsigned long long)v, s.index);
		}
	}
	if (live)
		TH_LOG("%u reads of counters live for another event", live);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ev_close(&e);
}

/*
 * Tests 1, 3, 4 and 5 again with no effective capabilities, under the
 * machine's own perf_event_paranoid (what the bodies cannot do is logged;
 * SKIP only when no hardware event opened at all).
 */
TEST(unprivileged)
{
	PROMISE(HINT_READ);
	static const struct agree_cfg cfgs[] = {
		{ PERF_COUNT_HW_CPU_CYCLES, 0, false, false },
		{ PERF_COUNT_HW_CPU_CYCLES, 20011, true, false },
		{ PERF_COUNT_HW_INSTRUCTIONS, 0, true, false },
		{ PERF_COUNT_HW_INSTRUCTIONS, 20011, false, false },
	};
	const char *skip, *first = NULL;
	unsigned int i, ran = 0;
	pthread_t tid;
	struct thr t;
	cap_t caps;

	caps = cap_get_proc();
	ASSERT_NE(NULL, caps);
	ASSERT_EQ(0, cap_clear_flag(caps, CAP_EFFECTIVE));
	ASSERT_EQ(0, cap_set_proc(caps));
	cap_free(caps);
	for (i = 0; i < ARRAY_SIZE(cfgs); i++) {
		skip = agree_run(_metadata, &cfgs[i]);
		if (skip) {
			TH_LOG("config %u: %s", i, skip);
			first = first ? first : skip;
		} else {
			ran++;
		}
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
	if (!ran)
		SKIP(return, "%s", first);
}

/* After exec the new image opens, maps and self-reads (4.14-era fix). */
static void __attribute__((constructor)) exec_child(void)
{
	struct perf_event_attr a;
	int i, ret, direct = 0;
	struct up_count s;
	struct rd r0, r1;
	struct ev e;

	if (!getenv(EXEC_ENV))
		return;
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	if (ev_open(&e, &a))
		_exit(3);
	for (i = 0; i < 100; i++) {
		work(1000);
		if (!rd(e.fd, &r0))
			_exit(4);
		ret = up_self_read(e.pg, &s);
		if (!rd(e.fd, &r1))
			_exit(4);
		if (ret == 1)
			continue; /* index 0: read() is the count */
		if (ret || s.count < r0.value || s.count > r1.value)
			_exit(5);
		direct++;
	}
	_exit(direct ? 0 : 8);
}

TEST(exec_self_read)
{
	PROMISE(HINT_READ);
	const char *skip = user_access(_metadata);
	struct perf_event_attr a;
	struct up_count s;
	int status, err;
	pid_t child;
	struct ev e;

	if (skip)
		SKIP(return, "%s", skip);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("instructions: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	ASSERT_LE(0, self_read_direct(&e, &s));
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct ev ce;

		/* perf_mmap() sets VM_DONTCOPY: the child maps its own */
		if (ev_open(&ce, &a) || self_read_direct(&ce, &s) < 0)
			_exit(6);
		setenv(EXEC_ENV, "1", 1);
		execl("/proc/self/exe", "rdpmc", (char *)NULL);
		_exit(7);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ev_close(&e);
	ASSERT_TRUE(WIFEXITED(status))
	TH_LOG("the exec'd image died by signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status) == 8)
		SKIP(return, NEED_INDEX);
	ASSERT_EQ(0, WEXITSTATUS(status))
	TH_LOG("3 open, 4 read, 5 disagreement, 6 pre-exec, 7 exec");
}

/*
 * An event on another task (stopped, so not counting) offers the observer
 * no read: uapi "this only works on self-monitoring processes", and
 * perf_event_index() is 0 for an event that is not ACTIVE.  No ptrace: a
 * child that stops itself, waited for a bounded time (Yama ptrace_scope 3
 * refuses PTRACE_TRACEME, and nothing here needs it).
 */
TEST(other_task_no_self_read)
{
	PROMISE(HINT_READ);
	struct perf_event_attr a;
	int status = 0, err, i;
	struct up_count s;
	pid_t child, w = 0;
	struct ev e;

	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		raise(SIGSTOP);
		for (;;)
			work(100000);
	}
	for (i = 0; i < 1000 && !w; i++) {
		w = waitpid(child, &status, WUNTRACED | WNOHANG);
		if (!w)
			usleep(10000);
	}
	if (w != child || !WIFSTOPPED(status)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		TH_LOG("waitpid %d, status 0x%x", w, status);
		SKIP(return, "needs a child that stops itself");
	}
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
	err = ev_open_on(&e, &a, child, -1);
	if (err) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		TH_LOG("instructions on the child: %s", strerror(-err));
		if (unsupported(-err))
			SKIP(return, "%s", why(-err));
		ASSERT_EQ(0, err);
	}
	work(10000);
	EXPECT_EQ(1, up_self_read(e.pg, &s));
	EXPECT_EQ(0U, s.index);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ev_close(&e);
}

/*
 * No 2^48 (or 2^32) jumps: a sampling event preloads the counter with
 * -period, so the raw value has its top bits set and offset compensates;
 * the sum must stay monotonic and between the read()s.
 */
TEST(offset_high_bit)
{
	PROMISE(HINT_READ);
	const char *skip = user_access(_metadata);
	struct perf_event_attr a;
	struct up_count s;
	struct ev e;
	int err;

	if (skip)
		SKIP(return, "%s", skip);
	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, (1ULL << 31) - 4096);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("instructions: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	if (self_read_direct(&e, &s)) {
		ev_close(&e);
		SKIP(return, NEED_INDEX);
	}
	TH_LOG("offset 0x%llx pmc 0x%llx width %u",
	       (unsigned long long)up_u64(e.pg, UP_OFFSET),
	       (unsigned long long)s.pmc, s.width);
	bracket_loop(_metadata, &e, LOOPS / 2, 100);
	ev_close(&e);
}

/* A start/stop pair around a sleep (the counter scheduled out between). */
TEST(straddle_sched_out)
{
	PROMISE(HINT_READ);
	const char *skip = user_access(_metadata);
	unsigned int direct = 0;
	struct perf_event_attr a;
	struct up_count s0, s1;
	struct rd r0, rm, r1;
	struct ev e;
	int i, err;

	if (skip)
		SKIP(return, "%s", skip);
	hw_attr(&a, PERF_COUNT_HW_CPU_CYCLES, false, 0);
	err = ev_open(&e, &a);
	if (err && unsupported(-err)) {
		TH_LOG("cycles: %s", strerror(-err));
		SKIP(return, "%s", why(-err));
	}
	ASSERT_EQ(0, err);
	for (i = 0; i < 20; i++) {
		ASSERT_TRUE(rd(e.fd, &r0));
		err = up_self_read(e.pg, &s0);
		usleep(1000);
		ASSERT_TRUE(rd(e.fd, &rm));
		usleep(1000);
		err |= up_self_read(e.pg, &s1);
		ASSERT_TRUE(rd(e.fd, &r1));
		ASSERT_LE(0, err);
		if (err)
			continue; /* index 0 at one end: read() is the count */
		direct++;
		ASSERT_LE(r0.value, s0.count);
		ASSERT_LE(s0.count, rm.value);
		ASSERT_LE(rm.value, s1.count);
		ASSERT_LE(s1.count, r1.value);
	}
	ev_close(&e);
	if (!direct)
		SKIP(return, NEED_INDEX);
}

/*
 * Enabled/running times never go negative nor back, over several
 * open/enable/disable cycles (hardware event, else task-clock).
 */
TEST(times_never_negative)
{
	PROMISE(HINT_TIME);
	struct perf_event_attr a;
	struct rd r, prev;
	struct up_count s;
	int round, i, err;
	struct ev e;

	for (round = 0; round < 5; round++) {
		hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS, false, 0);
		a.disabled = 1;
		if (ev_open(&e, &a)) {
			sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
			a.disabled = 1;
			err = ev_open(&e, &a);
			if (err && unsupported(-err)) {
				TH_LOG("task-clock: %s", strerror(-err));
				SKIP(return, "%s", perm_or(err, NEED_TCLOCK));
			}
			ASSERT_EQ(0, err);
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
}

TEST_HARNESS_MAIN
