// SPDX-License-Identifier: GPL-2.0
/*
 * The first page of a perf event's mmap (struct perf_event_mmap_page) keeps
 * its ABI in every configuration page_cases.h lists: the capability bits,
 * size and the reserved tail, the data area, and the self-monitoring
 * fields.  The ring tests check data_head and data_tail against records
 * the test makes itself.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/hw_breakpoint.h>
#include <pthread.h>
#include <sched.h>
#include <sys/capability.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "user_page.h"

enum kind {
	K_CPU_CLOCK,
	K_TASK_CLOCK,
	K_PAGE_FAULTS,
	K_CONTEXT_SWITCHES,
	K_DUMMY,
	K_TRACEPOINT, /* sched:sched_switch */
	K_BREAKPOINT, /* a read-write watchpoint on bp_target */
	K_CYCLES,
	K_INSTRUCTIONS,
};

/* PERF_EVENT_IOC_* the page is copied after (mid), then their inverse */
enum state {
	S_OPENED, /* opened disabled, nothing else */
	S_ENABLED, /* ENABLE | DISABLE */
	S_WORKLOAD, /* ENABLE, a workload | DISABLE */
	S_DISABLED, /* ENABLE, a workload, DISABLE | ENABLE */
	S_RESET, /* ENABLE, a workload, RESET | - */
	S_PERIOD, /* ENABLE, PERIOD, a workload | PERIOD back */
	S_REFRESH, /* REFRESH 1, a workload | DISABLE */
	S_PAUSED, /* ENABLE, a workload, PAUSE_OUTPUT 1 | PAUSE_OUTPUT 0 */
	S_DETACHED, /* (SET_OUTPUT) ENABLE, a workload | SET_OUTPUT -1 */
	S_FILTERED, /* ID, SET_FILTER, QUERY_BPF, ENABLE, a workload | DISABLE */
	S_MODIFIED, /* ENABLE, MODIFY_ATTRIBUTES: bp_addr, a workload | back */
	S_BPF, /* SET_BPF of a program dropping samples, ENABLE, a workload | DISABLE */
};

/* How the fd whose page is checked came to be. */
enum origin {
	O_OPENED, /* perf_event_open() */
	O_LEADER, /* a group leader with a task-clock sibling */
	O_SIBLING, /* a group sibling of a task-clock leader, its own page */
	O_SET_OUTPUT, /* writes into a dummy's buffer: PERF_EVENT_IOC_SET_OUTPUT */
};

/* The task that maps the event (the measured task opens it). */
enum mapper {
	M_SELF,
	M_THREAD, /* another thread of the process */
	M_PROCESS, /* a child holding the fd maps it first */
};

enum { BEFORE, MID, AFTER }; /* the copies of the page */

/* The capabilities of the task that opens and maps the event. */
enum privs {
	P_AS_RUN, /* the test's own */
	P_NONE, /* none: a self-monitoring task at perf_event_paranoid 2 */
	P_PERFMON, /* CAP_PERFMON alone (5.8), "for performance monitoring" */
};

/* attr bits a case sets */
enum {
	A_EOE = 1 << 0, /* enable_on_exec */
	A_INHERIT = 1 << 1, /* on a cpu: perf_mmap() refuses it on cpu -1 */
	A_PINNED = 1 << 2,
	A_BACKWARD = 1 << 3, /* write_backward */
	A_WATERMARK = 1 << 4, /* wakeup_watermark half a page */
	A_PER_CPU = 1 << 5, /* pid -1, cpu 0 */
	A_READ_ONLY = 1 << 6, /* PROT_READ: an overwrite buffer */
	A_KERNEL = 1 << 7, /* exclude_kernel 0, exclude_hv 0 */
	A_FREQ = 1 << 8, /* freq 1, sample_freq 4000 */
	A_ON_CPU = 1 << 9, /* per task, counted on cpu 0 only */
	A_TWICE = 1 << 10, /* a second mapping of the fd */
};

#define TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

FIXTURE(page)
{
	int fd, partner, map_fd, prog; /* prog: S_BPF's */
	bool must_open; /* P_PERFMON: it opened with every capability */
	void *base, *again; /* again: A_TWICE's second mapping */
	size_t len;
	uint64_t snap[3][UP_HDR_LEN / 8]; /* aligned: data_head is a u64 */
};

FIXTURE_VARIANT(page)
{
	enum kind kind;
	enum state state;
	enum origin origin;
	enum mapper mapper;
	enum privs privs;
	int data_pages;
	unsigned int flags; /* A_* */
	int clockid; /* use_clockid with this clock, when not 0 */
	__u64 read_format;
};

#include "page_cases.h"

/* written by workload(): K_BREAKPOINT watches [0], S_MODIFIED moves it to [1] */
static uint64_t bp_target[2];

/* sched:sched_switch's id, from tracefs (mounted privately if need be) */
static int tracepoint_id(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) &&
	    !unshare(CLONE_NEWNS) &&
	    !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	return up_read_int("/sys/kernel/tracing/events/sched/sched_switch/id");
}

/* The case's attr: user-only and sampling, so that PERIOD and REFRESH apply. */
static int case_attr(const FIXTURE_VARIANT(page) * v, struct perf_event_attr *a)
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
		[K_DUMMY] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
		[K_TRACEPOINT] = { PERF_TYPE_TRACEPOINT, 0 },
		[K_BREAKPOINT] = { PERF_TYPE_BREAKPOINT, 0 },
		[K_CYCLES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
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
	if (v->kind == K_BREAKPOINT) {
		/* every arch's: 8 bytes are x86_64's; ARMv7 refuses W alone */
		a->bp_type = HW_BREAKPOINT_RW;
		a->bp_addr = (uintptr_t)&bp_target[0];
		a->bp_len = HW_BREAKPOINT_LEN_4;
		a->sample_period = 1;
	}
	return 0;
}

static int open_case(struct perf_event_attr *a, const FIXTURE_VARIANT(page) * v,
		     int group)
{
	bool cpu = v->flags & A_PER_CPU;
	bool on_cpu = v->flags & (A_PER_CPU | A_ON_CPU);

	return up_perf_event_open(a, cpu ? -1 : 0, on_cpu ? 0 : -1, group, 0);
}

/* The case's one SKIP reason: what its kind and its scope need. */
static const char *case_needs(const FIXTURE_VARIANT(page) * v)
{
	bool cpu = v->flags & A_PER_CPU;
	bool hw = v->kind == K_CYCLES || v->kind == K_INSTRUCTIONS;

	if (v->state == S_BPF)
		return "needs CONFIG_BPF_EVENTS, and CAP_BPF with CAP_PERFMON";
	if (v->privs == P_NONE)
		return "needs perf_event_paranoid <= 2, and RLIMIT_MEMLOCK for the buffer";
	if (v->privs == P_PERFMON)
		return "needs CAP_PERFMON held, and kernel counting allowed to it";
	if (v->data_pages > 8) /* perf_event_mlock_kb's 516: 8 pages of 64K */
		return "needs perf_event_mlock_kb or RLIMIT_MEMLOCK, and " UP_PARANOID_TASK;
	if (v->flags & A_KERNEL)
		return hw ? "needs a hardware PMU, and " UP_PARANOID_KERNEL :
			    "needs " UP_PARANOID_KERNEL;
	switch (v->kind) {
	case K_TRACEPOINT:
		return cpu ? "needs tracefs, and " UP_PARANOID_CPU :
			     "needs tracefs, and " UP_PARANOID_TASK;
	case K_BREAKPOINT:
		return cpu ? "needs a breakpoint slot, and " UP_PARANOID_CPU :
			     "needs a breakpoint slot, and " UP_PARANOID_TASK;
	case K_CYCLES:
	case K_INSTRUCTIONS:
		return cpu ? "needs a hardware PMU, and " UP_PARANOID_CPU :
			     "needs a hardware PMU, and " UP_PARANOID_TASK;
	default:
		return cpu ? "needs " UP_PARANOID_CPU : UP_NEED_TASK;
	}
}

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"

static bool memlock_holds(size_t len)
{
	struct rlimit r;

	return !getrlimit(RLIMIT_MEMLOCK, &r) && r.rlim_cur >= len;
}

/*
 * The case's capabilities: all dropped but CAP_PERFMON for P_PERFMON, if
 * in the permitted set.  With it, kernel counting the same open got with
 * every capability must be granted (perf-security.rst: CAP_PERFMON is
 * "the privileged" path past perf_event_paranoid).  NULL, or why not.
 */
static const char *drop_caps(struct __test_metadata *_metadata,
			     FIXTURE_DATA(page) * self,
			     const FIXTURE_VARIANT(page) * v)
{
	const cap_value_t perfmon = CAP_PERFMON;
	cap_flag_value_t held = CAP_CLEAR;
	struct perf_event_attr a;
	cap_t caps;
	int fd;

	caps = cap_get_proc();
	ASSERT_NE(NULL, caps);
	if (v->privs == P_PERFMON) {
		ASSERT_EQ(0, cap_get_flag(caps, perfmon, CAP_PERMITTED, &held));
		if (case_attr(v, &a) || held != CAP_SET)
			held = CAP_CLEAR;
		fd = held == CAP_SET ? open_case(&a, v, -1) : -1;
		/* Debian's paranoid 3 admits CAP_SYS_ADMIN alone */
		if (fd >= 0 && up_read_int(PARANOID) <= 2)
			self->must_open = true;
		if (fd >= 0)
			close(fd);
	}
	ASSERT_EQ(0, cap_clear(caps));
	if (held == CAP_SET) {
		ASSERT_EQ(0, cap_set_flag(caps, CAP_PERMITTED, 1, &perfmon,
					  CAP_SET));
		ASSERT_EQ(0, cap_set_flag(caps, CAP_EFFECTIVE, 1, &perfmon,
					  CAP_SET));
	}
	ASSERT_EQ(0, cap_set_proc(caps)) TH_LOG("cap_set_proc: %m");
	ASSERT_EQ(0, cap_free(caps));
	TH_LOG("uid %u, capabilities: %s", getuid(),
	       held == CAP_SET ? "CAP_PERFMON" : "none");
	if (v->privs == P_PERFMON && held != CAP_SET)
		return case_needs(v);
	return NULL;
}

struct mapping {
	FIXTURE_DATA(page) * self;
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

/*
 * mmap() of map_fd by the case's mapper: 0 or -errno.  M_PROCESS's child
 * maps first, so perf_mmap() sets the buffer up in its context; stopped,
 * it holds it while this process maps it too, to read the page.
 */
static int map_page(FIXTURE_DATA(page) * self, enum mapper who, int prot)
{
	struct mapping m = { .self = self, .prot = prot, .err = -EAGAIN };
	pthread_t t;
	int status;
	pid_t pid;

	if (who == M_THREAD) {
		if (!pthread_create(&t, NULL, map_in_thread, &m))
			pthread_join(t, NULL);
		return m.err;
	}
	if (who == M_PROCESS) {
		pid = fork();
		if (!pid) {
			map_in_thread(&m);
			if (!m.err)
				raise(SIGSTOP);
			_exit(-m.err);
		}
		if (pid < 0 || waitpid(pid, &status, WUNTRACED) != pid)
			return -ECHILD;
		if (!WIFSTOPPED(status))
			return WIFEXITED(status) ? -WEXITSTATUS(status) :
						   -ECHILD;
		map_in_thread(&m);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return m.err;
	}
	map_in_thread(&m);
	return m.err;
}

/*
 * rr's and perf record --filter's filter: "Returning zero from the program
 * means that ... sampling event won't be stored in the ring buffer"
 * (aa6a5f3cb2b2).  r0 = 0; exit.
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
			       FIXTURE_DATA(page) * self,
			       const FIXTURE_VARIANT(page) * v)
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
	/* the partner: the same clock and direction, never pinned */
	other = a;
	other.type = PERF_TYPE_SOFTWARE;
	other.config = v->origin == O_SET_OUTPUT ? PERF_COUNT_SW_DUMMY :
						   PERF_COUNT_SW_TASK_CLOCK;
	other.pinned = 0;
	if (v->origin != O_OPENED && v->origin != O_LEADER) {
		self->partner = open_case(&other, v, -1);
		if (self->partner < 0) {
			err = errno;
			TH_LOG("the partner event: %s", strerror(err));
			ASSERT_TRUE(up_refused(err));
			return case_needs(v);
		}
	}
	if (v->origin == O_SET_OUTPUT) {
		/* the output event is mapped first: it owns the buffer */
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
		{
			TH_LOG("refused to CAP_PERFMON, opened with all");
		}
		return case_needs(v);
	}
	self->fd = fd;
	if (v->origin == O_LEADER) {
		self->partner = open_case(&other, v, fd);
		ASSERT_LE(0, self->partner) TH_LOG("group sibling: %m");
	}
	if (v->origin == O_SET_OUTPUT) {
		ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, out))
		{
			TH_LOG("SET_OUTPUT: %m");
		}
	}
	if (out >= 0) {
		self->map_fd = out;
		return NULL;
	}
	self->map_fd = fd;
	err = map_page(self, v->mapper, prot);
	/*
	 * perf_mmap(): EPERM past perf_event_mlock_kb and then RLIMIT_MEMLOCK,
	 * unless CAP_IPC_LOCK; a task's limit above the buffer always holds it
	 */
	if (err == -EPERM &&
	    (v->data_pages > 8 || (v->privs && !memlock_holds(self->len))))
		return case_needs(v);
	ASSERT_EQ(0, err) TH_LOG("mmap: %s", strerror(-err));
	return NULL;
}

/* Work that moves every kind's count: faults, yields, a watched store. */
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
		__atomic_store_n(&bp_target[i % 2], i, __ATOMIC_RELAXED);
		sched_yield();
	}
}

/* The state's ioctls on the case's event; 0 or -1 with errno. */
static int enter_state(const FIXTURE_VARIANT(page) * v, int fd, int leader,
		       int prog)
{
	enum state s = v->state;
	struct perf_event_query_bpf q = { .ids_len = 0 };
	__u64 period = 500000, id;
	struct perf_event_attr a;

	if (s == S_OPENED)
		return 0;
	if (s == S_FILTERED &&
	    (ioctl(fd, PERF_EVENT_IOC_ID, &id) ||
	     ioctl(fd, PERF_EVENT_IOC_SET_FILTER, "next_pid != 0")))
		return -1;
	/* a query for perfmon_capable() tasks on CONFIG_BPF_EVENTS kernels */
	if (s == S_FILTERED && ioctl(fd, PERF_EVENT_IOC_QUERY_BPF, &q) &&
	    errno != EPERM && errno != EOPNOTSUPP)
		return -1;
	/* a sibling counts only while its leader is on */
	if (leader >= 0 && ioctl(leader, PERF_EVENT_IOC_ENABLE, 0))
		return -1;
	if (s == S_BPF && ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog))
		return -1;
	if (ioctl(fd,
		  s == S_REFRESH ? PERF_EVENT_IOC_REFRESH :
				   PERF_EVENT_IOC_ENABLE,
		  s == S_REFRESH ? 1 : 0))
		return -1;
	if (s == S_PERIOD && ioctl(fd, PERF_EVENT_IOC_PERIOD, &period))
		return -1;
	if (s == S_MODIFIED) {
		case_attr(v, &a);
		a.bp_addr = (uintptr_t)&bp_target[1];
		if (ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a))
			return -1;
	}
	if (s != S_ENABLED)
		workload();
	if (s == S_DISABLED || s == S_RESET || s == S_PAUSED)
		return ioctl(fd,
			     s == S_DISABLED ? PERF_EVENT_IOC_DISABLE :
			     s == S_RESET    ? PERF_EVENT_IOC_RESET :
					       PERF_EVENT_IOC_PAUSE_OUTPUT,
			     s == S_PAUSED);
	return 0;
}

/* The inverse of the state's last ioctl; 0 or -1 with errno. */
static int leave_state(const FIXTURE_VARIANT(page) * v, int fd)
{
	__u64 period = 1000000; /* case_attr()'s */
	struct perf_event_attr a;

	switch (v->state) {
	case S_ENABLED:
	case S_WORKLOAD:
	case S_REFRESH:
	case S_FILTERED: /* a second SET_FILTER: EEXIST */
	case S_BPF: /* no ioctl detaches a program (aa6a5f3cb2b2) */
		return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	case S_DISABLED:
		return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	case S_PERIOD:
		return ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
	case S_PAUSED:
		return ioctl(fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	case S_DETACHED:
		/*
		 * -1 as a long; a 32-bit task's reaches a 64-bit kernel as
		 * 0xffffffff (EBADF): the page is then checked still redirected
		 */
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, -1L) &&
		    (errno != EBADF || sizeof(long) == 8))
			return -1;
		return 0;
	case S_MODIFIED:
		case_attr(v, &a);
		return ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a);
	default: /* S_OPENED, S_RESET */
		return 0;
	}
}

FIXTURE_SETUP(page)
{
	const char *skip;

	self->fd = -1;
	self->partner = -1;
	self->map_fd = -1;
	self->prog = -1;
	self->base = MAP_FAILED;
	self->again = MAP_FAILED;
	self->len = (1 + variant->data_pages) * getpagesize();
	skip = variant->privs ? drop_caps(_metadata, self, variant) : NULL;
	if (!skip)
		skip = open_origin(_metadata, self, variant);
	if (skip)
		SKIP(return, "%s", skip);
	if (variant->flags & A_TWICE) {
		self->again = mmap(NULL, self->len, PROT_READ, MAP_SHARED,
				   self->map_fd, 0);
		ASSERT_TRUE(self->again != MAP_FAILED)
		TH_LOG("second mmap: %m");
	}
	ASSERT_EQ(0, up_snapshot(self->base, self->snap[BEFORE]));
	ASSERT_EQ(0,
		  enter_state(variant, self->fd,
			      variant->origin == O_SIBLING ? self->partner : -1,
			      self->prog))
	TH_LOG("ioctls of the state: %m");
	ASSERT_EQ(0, up_snapshot(self->base, self->snap[MID]));
	ASSERT_EQ(0, leave_state(variant, self->fd)) TH_LOG("the inverse: %m");
	ASSERT_EQ(0, up_snapshot(self->base, self->snap[AFTER]));
}

FIXTURE_TEARDOWN(page)
{
	if (self->base != MAP_FAILED)
		munmap(self->base, self->len);
	if (self->again != MAP_FAILED)
		munmap(self->again, self->len);
	if (self->fd >= 0)
		close(self->fd);
	if (self->partner >= 0)
		close(self->partner);
	if (self->prog >= 0)
		close(self->prog);
}

/* The checks below, in order: false at the first broken, why in m. */
static bool page_keeps_abi(const FIXTURE_VARIANT(page) * v, const void *pg,
			   const void *prev, bool own_times, const uint64_t *rd,
			   struct up_msg *m)
{
	bool bounded = !(v->flags & (A_READ_ONLY | A_BACKWARD));
	bool hw = v->kind == K_CYCLES || v->kind == K_INSTRUCTIONS;

	return up_check_caps(pg, m) && up_check_size(pg, m) &&
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
 * inverse: the capability bits (uapi: cap_bit0 "Always 0",
 * cap_bit0_is_deprecated "Always 1"); size is a layout's, nothing past
 * it, the data area as mapped; index, the times and their conversion, and
 * lock, which moves whenever they do.  The times are held to a later
 * read() only where the page is this event's alone and read() gives its
 * own times (a group read gives the leader's).
 */
TEST_F(page, abi)
{
	bool own_times = self->map_fd == self->fd &&
			 (variant->read_format & TIMES) == TIMES &&
			 !(variant->origin == O_SIBLING &&
			   variant->read_format & PERF_FORMAT_GROUP);
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

/* A dummy event that records them, and its buffer of one data page. */
FIXTURE(sideband)
{
	int fd;
	void *base;
	size_t len;
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
	unsigned int types[PERF_RECORD_MAX] = { 0 };
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
	EXPECT_TRUE(up_check_records(self->base, types, PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(1U, types[PERF_RECORD_MMAP]);
	EXPECT_EQ(1U, types[PERF_RECORD_COMM]);
	EXPECT_EQ(1U, types[PERF_RECORD_FORK]);
	munmap(p, getpagesize());
}

/*
 * uapi: "When the mapping is PROT_WRITE the @data_tail value should be
 * written by userspace ... the kernel will not over-write unread data";
 * what it drops, it reports in a PERF_RECORD_LOST.
 */
TEST_F(sideband, data_tail_is_honoured)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	uint64_t head, size, i;
	struct up_msg m;

	size = up_pc(self->base)->data_size;
	/* twice what the data area holds, none consumed */
	for (i = 0; i < 2 * (size / REC_COMM + 1); i++)
		prctl(PR_SET_NAME, i % 2 ? "pabi1" : "pabi2");
	head = up_data_head(self->base);
	ASSERT_LE(head, size)
	TH_LOG("data_tail 0, data_head %llu", (unsigned long long)head);
	ASSERT_TRUE(up_check_records(self->base, types, PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(0U, types[PERF_RECORD_LOST]);
	/* the next record comes after a LOST one */
	consume(self->base);
	prctl(PR_SET_NAME, "pabi3");
	memset(types, 0, sizeof(types));
	ASSERT_TRUE(up_check_records(self->base, types, PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(1U, types[PERF_RECORD_LOST]);
	EXPECT_EQ(1U, types[PERF_RECORD_COMM]);
}

/*
 * uapi PERF_EVENT_IOC_PAUSE_OUTPUT, as perf record --overwrite uses it
 * around each read (tools/perf/util/evlist.c): a paused buffer takes no
 * record; what it dropped comes as a PERF_RECORD_LOST once resumed.
 */
TEST_F(sideband, paused_output_holds_data_head)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	uint64_t head;
	struct up_msg m;

	head = consume(self->base);
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1))
	TH_LOG("PAUSE_OUTPUT: %m");
	prctl(PR_SET_NAME, "pabi1");
	EXPECT_EQ(head, up_data_head(self->base));
	ASSERT_EQ(0, ioctl(self->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0));
	prctl(PR_SET_NAME, "pabi2");
	ASSERT_TRUE(up_check_records(self->base, types, PERF_RECORD_MAX, &m))
	TH_LOG("%s", m.s);
	EXPECT_EQ(1U, types[PERF_RECORD_LOST]);
	EXPECT_EQ(1U, types[PERF_RECORD_COMM]);
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
