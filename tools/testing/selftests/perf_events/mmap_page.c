// SPDX-License-Identifier: GPL-2.0
/*
 * The first page of a perf event's mmap (struct perf_event_mmap_page) keeps
 * its ABI in every case of page_cases.h: the capability bits, size and the
 * reserved tail, the data area, and the self-monitoring fields.  The
 * sideband tests check data_head and data_tail against records that the
 * test makes itself.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "user_page.h"

enum kind {
	K_TASK_CLOCK,
	K_PAGE_FAULTS,
	K_CONTEXT_SWITCHES,
	K_TRACEPOINT, /* sched:sched_switch */
	K_INSTRUCTIONS,
};

/*
 * The ioctls after which the page is copied (mid), and after their
 * inverse (after).  Each state but S_OPENED enables the event and runs a
 * workload.
 */
enum state {
	S_OPENED, /* opened disabled, nothing else */
	S_WORKLOAD, /* then DISABLE */
	S_RESET, /* RESET, then nothing */
	S_REFRESH, /* REFRESH 1 instead of ENABLE, then DISABLE */
	S_DETACHED, /* then SET_OUTPUT -1 */
	S_FILTERED, /* ID and SET_FILTER first, then DISABLE */
	S_BPF, /* SET_BPF of a program that drops samples, then DISABLE */
};

/* How the fd whose page is checked came to be. */
enum origin {
	O_OPENED, /* perf_event_open() */
	O_SIBLING, /* a group sibling of a task-clock leader, its own page */
	O_SET_OUTPUT, /* writes into a dummy's ring: PERF_EVENT_IOC_SET_OUTPUT */
};

/* The task that maps the event; the test's own task opens it. */
enum mapper {
	M_SELF,
	M_THREAD, /* another thread of the process */
};

enum { BEFORE, MID, AFTER }; /* the copies of the page */

/* attr bits and other settings a case sets */
enum {
	A_EOE = 1 << 0, /* enable_on_exec */
	A_INHERIT = 1 << 1, /* only on a CPU: perf_mmap() refuses it on -1 */
	A_PINNED = 1 << 2,
	A_BACKWARD = 1 << 3, /* write_backward */
	A_WATERMARK = 1 << 4, /* wakeup_watermark half a page */
	A_READ_ONLY = 1 << 5, /* PROT_READ: an overwrite ring */
	A_KERNEL = 1 << 6, /* exclude_kernel 0, exclude_hv 0 */
	A_FREQ = 1 << 7, /* freq 1, sample_freq 4000 */
	A_ON_CPU = 1 << 8, /* per task, counted on CPU 0 only */
	A_PERFMON = 1 << 9, /* opened and mapped with CAP_PERFMON alone */
};

#define TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

FIXTURE(page)
{
	int fd, partner, map_fd, prog; /* prog: S_BPF's */
	bool must_open; /* A_PERFMON: it opened with every capability */
	void *base;
	size_t len;
	uint64_t snap[3][UP_HDR_LEN / 8]; /* aligned: data_head is a u64 */
};

FIXTURE_VARIANT(page)
{
	enum kind kind;
	enum state state;
	enum origin origin;
	enum mapper mapper;
	int data_pages;
	unsigned int flags; /* A_* */
	int clockid; /* use_clockid with this clock, when not 0 */
	__u64 read_format;
};

#include "page_cases.h"

/* The harness's types of a case and of the data of its test */
#define page_case FIXTURE_VARIANT(page)
#define page_data FIXTURE_DATA(page)

/* sched:sched_switch's id, from tracefs, mounted privately if need be */
static int tracepoint_id(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) &&
	    !unshare(CLONE_NEWNS) &&
	    !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	return up_read_int("/sys/kernel/tracing/events/sched/sched_switch/id");
}

/* The case's attr: user-only and sampling, so that REFRESH applies. */
static int case_attr(const page_case *v, struct perf_event_attr *a)
{
	static const struct {
		__u32 type;
		__u64 config;
	} kinds[] = {
		[K_TASK_CLOCK] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
		[K_PAGE_FAULTS] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		[K_CONTEXT_SWITCHES] = { PERF_TYPE_SOFTWARE,
					 PERF_COUNT_SW_CONTEXT_SWITCHES },
		[K_TRACEPOINT] = { PERF_TYPE_TRACEPOINT, 0 },
		[K_INSTRUCTIONS] = { PERF_TYPE_HARDWARE,
				     PERF_COUNT_HW_INSTRUCTIONS },
	};

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = kinds[v->kind].type;
	a->config = kinds[v->kind].config;
	a->disabled = 1;
	a->exclude_kernel = !(v->flags & A_KERNEL);
	a->exclude_hv = !(v->flags & A_KERNEL);
	a->freq = !!(v->flags & A_FREQ);
	if (a->freq)
		a->sample_freq = 4000;
	else /* S_BPF: every fault a sample for the program to drop */
		a->sample_period = v->state == S_BPF ? 1 : 1000000;
	a->sample_type = PERF_SAMPLE_IP;
	a->read_format = v->read_format;
	a->enable_on_exec = !!(v->flags & A_EOE);
	a->inherit = !!(v->flags & A_INHERIT);
	a->pinned = !!(v->flags & A_PINNED);
	a->write_backward = !!(v->flags & A_BACKWARD);
	if (v->flags & A_WATERMARK) {
		a->watermark = 1;
		a->wakeup_watermark = getpagesize() / 2;
	}
	a->use_clockid = !!v->clockid;
	a->clockid = v->clockid;
	if (v->kind == K_TRACEPOINT) {
		a->config = tracepoint_id();
		a->sample_period = 1;
		return (int)a->config < 0 ? -1 : 0;
	}
	return 0;
}

static int open_case(struct perf_event_attr *a, const page_case *v, int group)
{
	return up_perf_event_open(a, 0, v->flags & A_ON_CPU ? 0 : -1, group, 0);
}

/* The case's one SKIP reason: what its event and its settings need. */
static const char *case_needs(const page_case *v)
{
	if (v->state == S_BPF)
		return "needs CONFIG_BPF_EVENTS, and CAP_BPF with CAP_PERFMON";
	if (v->flags & A_PERFMON)
		return "needs CAP_PERFMON held, and kernel counting allowed to it";
	if (v->data_pages > 8) /* perf_event_mlock_kb's 516: 8 pages of 64K */
		return "needs perf_event_mlock_kb or RLIMIT_MEMLOCK, and " UP_PARANOID_TASK;
	if (v->kind == K_TRACEPOINT)
		return "needs tracefs, and " UP_PARANOID_TASK;
	if (v->kind == K_INSTRUCTIONS)
		return "needs a hardware PMU, and " UP_PARANOID_TASK;
	return UP_NEED_TASK;
}

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"

static bool memlock_holds(size_t len)
{
	struct rlimit r;

	return !getrlimit(RLIMIT_MEMLOCK, &r) && r.rlim_cur >= len;
}

/*
 * Drop every capability but CAP_PERFMON, when the test holds it.  The
 * event must then open if it opened with every capability:
 * perf-security.rst makes CAP_PERFMON "the privileged" path past
 * perf_event_paranoid.  Returns NULL, or why the case cannot run.
 */
static const char *keep_perfmon(struct __test_metadata *_metadata,
				page_data *self, const page_case *v)
{
	const cap_value_t perfmon = CAP_PERFMON;
	cap_flag_value_t held = CAP_CLEAR;
	struct perf_event_attr a;
	cap_t caps;
	int fd;

	caps = cap_get_proc();
	ASSERT_NE(NULL, caps);
	ASSERT_EQ(0, cap_get_flag(caps, perfmon, CAP_PERMITTED, &held));
	if (held != CAP_SET || case_attr(v, &a)) {
		ASSERT_EQ(0, cap_free(caps));
		return case_needs(v);
	}
	fd = open_case(&a, v, -1);
	/* Debian's perf_event_paranoid 3 admits CAP_SYS_ADMIN alone */
	if (fd >= 0 && up_read_int(PARANOID) <= 2)
		self->must_open = true;
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(0, cap_clear(caps));
	ASSERT_EQ(0, cap_set_flag(caps, CAP_PERMITTED, 1, &perfmon, CAP_SET));
	ASSERT_EQ(0, cap_set_flag(caps, CAP_EFFECTIVE, 1, &perfmon, CAP_SET));
	ASSERT_EQ(0, cap_set_proc(caps)) TH_LOG("cap_set_proc: %m");
	ASSERT_EQ(0, cap_free(caps));
	return NULL;
}

struct mapping {
	page_data *self;
	int prot, err;
};

static void *map_in_thread(void *arg)
{
	struct mapping *m = arg;

	m->self->base = mmap(NULL, m->self->len, m->prot, MAP_SHARED,
			     m->self->map_fd, 0);
	m->err = m->self->base == MAP_FAILED ? -errno : 0;
	return NULL;
}

/* mmap() of map_fd by the case's mapper: 0 or -errno. */
static int map_page(page_data *self, enum mapper who, int prot)
{
	struct mapping m = { .self = self, .prot = prot, .err = -EAGAIN };
	pthread_t t;

	if (who == M_THREAD && !pthread_create(&t, NULL, map_in_thread, &m))
		pthread_join(t, NULL);
	else if (who == M_SELF)
		map_in_thread(&m);
	return m.err;
}

/*
 * A program that drops every sample, as filters of rr and perf record
 * --filter do: "Returning zero from the program means that ... sampling
 * event won't be stored in the ring buffer" (aa6a5f3cb2b2).
 */
static int drop_samples_prog(void)
{
	struct bpf_insn insn[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const char gpl[] = "GPL";
	union bpf_attr a = {
		.prog_type = BPF_PROG_TYPE_PERF_EVENT,
		.insn_cnt = 2,
		.insns = (uintptr_t)insn,
		.license = (uintptr_t)gpl,
	};

	return syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

/* Opens the case's events and maps the page; NULL, or why it cannot. */
static const char *open_origin(struct __test_metadata *_metadata,
			       page_data *self, const page_case *v)
{
	int prot = PROT_READ | (v->flags & A_READ_ONLY ? 0 : PROT_WRITE);
	struct perf_event_attr a, other;
	int fd, out = -1, err;

	if (case_attr(v, &a))
		return case_needs(v);
	if (v->state == S_BPF) {
		self->prog = drop_samples_prog();
		if (self->prog < 0) {
			TH_LOG("BPF_PROG_LOAD: %m");
			return case_needs(v);
		}
	}
	/* the partner: a task-clock leader or a dummy output, never pinned */
	other = a;
	other.type = PERF_TYPE_SOFTWARE;
	other.config = v->origin == O_SET_OUTPUT ? PERF_COUNT_SW_DUMMY :
						   PERF_COUNT_SW_TASK_CLOCK;
	other.pinned = 0;
	if (v->origin != O_OPENED) {
		self->partner = open_case(&other, v, -1);
		if (self->partner < 0) {
			err = errno;
			TH_LOG("the partner event: %s", strerror(err));
			ASSERT_TRUE(up_refused(err));
			return case_needs(v);
		}
	}
	if (v->origin == O_SET_OUTPUT) {
		/* the output event is mapped first: it owns the ring */
		out = self->partner;
		self->base = mmap(NULL, self->len, prot, MAP_SHARED, out, 0);
		ASSERT_TRUE(self->base != MAP_FAILED) TH_LOG("mmap: %m");
	}
	fd = open_case(&a, v, v->origin == O_SIBLING ? self->partner : -1);
	if (fd < 0) {
		err = errno;
		TH_LOG("perf_event_open: %s", strerror(err));
		ASSERT_TRUE(up_refused(err));
		ASSERT_FALSE(self->must_open)
		TH_LOG("refused to CAP_PERFMON alone, opened with all");
		return case_needs(v);
	}
	self->fd = fd;
	if (out >= 0) {
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, out))
		TH_LOG("SET_OUTPUT: %m");
		self->map_fd = out;
		return NULL;
	}
	self->map_fd = fd;
	err = map_page(self, v->mapper, prot);
	/*
	 * perf_mmap() refuses with EPERM past perf_event_mlock_kb and then
	 * RLIMIT_MEMLOCK, unless the task has CAP_IPC_LOCK.
	 */
	if (err == -EPERM && (v->data_pages > 8 ||
			      (v->flags & A_PERFMON && !memlock_holds(self->len))))
		return case_needs(v);
	ASSERT_EQ(0, err) TH_LOG("mmap: %s", strerror(-err));
	return NULL;
}

/* Work that moves the count of every kind of event: faults and yields. */
static void workload(void)
{
	long ps = getpagesize();
	char *p;
	int i;

	for (i = 0; i < 10; i++) {
		p = mmap(NULL, ps, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			p[0] = i;
			munmap(p, ps);
		}
		sched_yield();
	}
}

/*
 * The state's ioctls on the case's event.  S_FILTERED's PERF_EVENT_IOC_ID
 * must give the id that read() gives with PERF_FORMAT_ID.
 */
static void enter_state(struct __test_metadata *_metadata, const page_case *v,
			int fd, int leader, int prog)
{
	enum state s = v->state;
	__u64 id, r[2];

	if (s == S_OPENED)
		return;
	if (s == S_FILTERED) {
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ID, &id));
		ASSERT_EQ((ssize_t)sizeof(r), read(fd, r, sizeof(r)));
		ASSERT_EQ(r[1], id);
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_SET_FILTER, "next_pid != 0"))
		TH_LOG("SET_FILTER: %m");
	}
	/* a sibling counts only while its leader is on */
	if (leader >= 0) {
		ASSERT_EQ(0, ioctl(leader, PERF_EVENT_IOC_ENABLE, 0))
		TH_LOG("the leader's ENABLE: %m");
	}
	if (s == S_BPF) {
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog))
		TH_LOG("SET_BPF: %m");
	}
	if (s == S_REFRESH) {
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_REFRESH, 1))
		TH_LOG("REFRESH: %m");
	} else {
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		TH_LOG("ENABLE: %m");
	}
	workload();
	if (s == S_RESET) {
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_RESET, 0))
		TH_LOG("RESET: %m");
	}
}

/* The inverse of the state's last ioctl; 0 or -1 with errno. */
static int leave_state(const page_case *v, int fd)
{
	switch (v->state) {
	case S_OPENED:
	case S_RESET:
		return 0;
	case S_DETACHED:
		/*
		 * -1 as a long.  A 32-bit task's reaches a 64-bit kernel as
		 * 0xffffffff (EBADF), and the page is checked still redirected.
		 */
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, -1L) &&
		    (errno != EBADF || sizeof(long) == 8))
			return -1;
		return 0;
	default: /* a second SET_FILTER is EEXIST; no ioctl detaches a BPF program */
		return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	}
}

FIXTURE_SETUP(page)
{
	const char *skip = NULL;

	self->fd = -1;
	self->partner = -1;
	self->map_fd = -1;
	self->prog = -1;
	self->base = MAP_FAILED;
	self->len = (1 + variant->data_pages) * getpagesize();
	if (variant->flags & A_PERFMON)
		skip = keep_perfmon(_metadata, self, variant);
	if (!skip)
		skip = open_origin(_metadata, self, variant);
	if (skip)
		SKIP(return, "%s", skip);
	ASSERT_EQ(0, up_snapshot(self->base, self->snap[BEFORE]));
	enter_state(_metadata, variant, self->fd,
		    variant->origin == O_SIBLING ? self->partner : -1,
		    self->prog);
	ASSERT_EQ(0, up_snapshot(self->base, self->snap[MID]));
	ASSERT_EQ(0, leave_state(variant, self->fd)) TH_LOG("the inverse: %m");
	ASSERT_EQ(0, up_snapshot(self->base, self->snap[AFTER]));
}

FIXTURE_TEARDOWN(page)
{
	if (self->base != MAP_FAILED)
		munmap(self->base, self->len);
	if (self->fd >= 0)
		close(self->fd);
	if (self->partner >= 0)
		close(self->partner);
	if (self->prog >= 0)
		close(self->prog);
}

/*
 * The smallest size the running kernel's release promises: 96 from 5.9.
 * ksft_min_kernel_version() would say it, but 6.1's kselftest.h, where
 * this test is backported to, does not have it.
 */
static uint32_t size_promised(void)
{
	unsigned int major = 0, minor = 0;
	struct utsname u;

	if (!uname(&u))
		sscanf(u.release, "%u.%u", &major, &minor);
	return major > 5 || (major == 5 && minor >= 9) ? UP_SIZE_TIME_SHORT :
							 UP_SIZE_MIN;
}

/* The checks below, in order: false at the first broken, why in m. */
static bool page_keeps_abi(const page_case *v, const void *pg,
			   const void *prev, bool own_times, const uint64_t *rd,
			   struct up_msg *m)
{
	bool bounded = !(v->flags & (A_READ_ONLY | A_BACKWARD));
	bool hw = v->kind == K_INSTRUCTIONS;

	return up_check_caps(pg, m) && up_check_size(pg, size_promised(), m) &&
	       up_check_reserved(pg, m) &&
	       up_check_data_area(pg, getpagesize(), v->data_pages, m) &&
	       up_check_data_ptrs(pg, bounded, m) &&
	       up_check_times(pg, own_times, rd[1], rd[2], m) &&
	       (hw || up_check_index_none(pg, m)) &&
	       up_check_time_conv(pg, m) && up_check_lock(prev, pg, m) &&
	       (v->state != S_BPF || up_check_head_grew(pg, 0, 0, m));
}

/*
 * The page of every case, after the state's ioctls and after their
 * inverse: cap_bit0 is 0 and cap_bit0_is_deprecated is 1; size is a
 * layout's and nothing is past it; the data area is the one mapped; index,
 * the times and their conversion; lock moves whenever these do.  The times
 * are held to a later read() where the page is this event's alone and
 * read() gives the times.
 */
TEST_F(page, abi)
{
	bool own_times = self->map_fd == self->fd &&
			 (variant->read_format & TIMES) == TIMES;
	uint64_t v[8] = { 0 }; /* value or nr, time_enabled, time_running */
	struct up_msg m;
	int i;

	if (own_times)
		ASSERT_LT(0, read(self->fd, v, sizeof(v))) TH_LOG("read: %m");
	for (i = MID; i <= AFTER; i++) {
		EXPECT_TRUE(page_keeps_abi(variant, self->snap[i],
					   self->snap[i - 1], own_times, v, &m))
		TH_LOG("%s: %s", i == MID ? "mid" : "after", m.s);
	}
}

/* A dummy event's side-band records: MMAP, COMM, FORK of known sizes. */
#define REC_MMAP_ANON \
	(8 + 8 + 24 + 8) /* hdr, pid/tid, addr/len/pgoff, "//anon" */
#define REC_COMM (8 + 8 + 8) /* hdr, pid/tid, a name of up to 7 bytes */
#define REC_FORK (8 + 16 + 8) /* hdr, pid/ppid/tid/ptid, time */

/*
 * A dummy event that records them, and its ring of one data page.  types
 * counts the records by type; it is here and not on the tests' stacks,
 * where gcc -Wextra warns that the 6.12 harness's setjmp() may clobber it.
 */
FIXTURE(sideband)
{
	int fd;
	void *base;
	size_t len;
	unsigned int types[PERF_RECORD_MAX];
};

FIXTURE_SETUP(sideband)
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

	self->base = MAP_FAILED;
	memset(self->types, 0, sizeof(self->types));
	self->fd = up_perf_event_open(&a, 0, -1, -1, 0);
	if (self->fd < 0 && up_refused(errno))
		SKIP(return, UP_NEED_TASK);
	ASSERT_LE(0, self->fd) TH_LOG("dummy event: %m");
	self->len = 2 * getpagesize();
	self->base = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			  self->fd, 0);
	ASSERT_TRUE(self->base != MAP_FAILED) TH_LOG("mmap: %m");
}

FIXTURE_TEARDOWN(sideband)
{
	if (self->base != MAP_FAILED)
		munmap(self->base, self->len);
	if (self->fd >= 0)
		close(self->fd);
}

/* A reader's step: everything up to data_head is read; its new head. */
static uint64_t consume(void *base)
{
	uint64_t head = up_data_head(base);

	__atomic_store_n(&((struct perf_event_mmap_page *)base)->data_tail,
			 head, __ATOMIC_RELEASE);
	return head;
}

/* uapi: data_head, "head in the data section", the u64 at byte 1024 */
TEST_F(sideband, data_head_counts_records)
{
	uint64_t before;
	struct up_msg m;
	void *p;
	pid_t pid;

	before = consume(self->base);
	/* one record at a time: data_head never steps back */
	p = mmap(NULL, getpagesize(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	EXPECT_TRUE(up_check_head_grew(self->base, before, REC_MMAP_ANON, &m))
	TH_LOG("%s", m.s);
	before = up_data_head(self->base);
	prctl(PR_SET_NAME, "pabi");
	EXPECT_TRUE(up_check_head_grew(self->base, before, REC_COMM, &m))
	TH_LOG("%s", m.s);
	before = up_data_head(self->base);
	pid = fork();
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	EXPECT_TRUE(up_check_head_grew(self->base, before, REC_FORK, &m))
	TH_LOG("%s", m.s);
	EXPECT_TRUE(up_check_records(self->base, self->types,
				     PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(1U, self->types[PERF_RECORD_MMAP]);
	EXPECT_EQ(1U, self->types[PERF_RECORD_COMM]);
	EXPECT_EQ(1U, self->types[PERF_RECORD_FORK]);
	munmap(p, getpagesize());
}

/*
 * uapi: "When the mapping is PROT_WRITE the @data_tail value should be
 * written by userspace ... the kernel will not over-write unread data";
 * what it drops, it reports in a PERF_RECORD_LOST.
 */
TEST_F(sideband, data_tail_is_honoured)
{
	uint64_t head, size, i;
	struct up_msg m;

	size = up_pc(self->base)->data_size;
	/* twice what the data area holds, none consumed */
	for (i = 0; i < 2 * (size / REC_COMM + 1); i++)
		prctl(PR_SET_NAME, i % 2 ? "pabi1" : "pabi2");
	head = up_data_head(self->base);
	ASSERT_LE(head, size)
	TH_LOG("data_tail 0, data_head %llu", (unsigned long long)head);
	ASSERT_TRUE(up_check_records(self->base, self->types,
				     PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(0U, self->types[PERF_RECORD_LOST]);
	/* the next record comes after a LOST one */
	consume(self->base);
	prctl(PR_SET_NAME, "pabi3");
	memset(self->types, 0, sizeof(self->types));
	ASSERT_TRUE(up_check_records(self->base, self->types,
				     PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(1U, self->types[PERF_RECORD_LOST]);
	EXPECT_EQ(1U, self->types[PERF_RECORD_COMM]);
}

/*
 * uapi PERF_EVENT_IOC_PAUSE_OUTPUT, as perf record --overwrite uses it
 * around each read (tools/perf/util/evlist.c): a paused buffer takes no
 * record; what it dropped comes as a PERF_RECORD_LOST once resumed.
 */
TEST_F(sideband, paused_output_holds_data_head)
{
	uint64_t head;
	struct up_msg m;

	head = consume(self->base);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1))
	TH_LOG("PAUSE_OUTPUT: %m");
	prctl(PR_SET_NAME, "pabi1");
	EXPECT_EQ(head, up_data_head(self->base));
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0));
	prctl(PR_SET_NAME, "pabi2");
	ASSERT_TRUE(up_check_records(self->base, self->types,
				     PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(1U, self->types[PERF_RECORD_LOST]);
	EXPECT_EQ(1U, self->types[PERF_RECORD_COMM]);
}

/*
 * A buffer mapping is never split (b024d7b56c77, in 6.12 and its stable
 * kernels): unmapping its last page, or shrinking it with mremap(), fails
 * with EINVAL, and the mapping keeps its page and takes records.
 */
TEST_F(sideband, mapping_refuses_split)
{
	size_t ps = getpagesize();
	uint64_t before;
	struct up_msg m;

	ASSERT_EQ(-1, munmap((char *)self->base + ps, ps));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_TRUE(mremap(self->base, self->len, ps, 0) == MAP_FAILED);
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(up_check_caps(self->base, &m)) TH_LOG("%s", m.s);
	before = consume(self->base);
	prctl(PR_SET_NAME, "pabi");
	EXPECT_TRUE(up_check_head_grew(self->base, before, REC_COMM, &m))
	TH_LOG("%s", m.s);
}

TEST_HARNESS_MAIN
