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
#include <time.h>

#include "../kselftest_harness.h"
#include "user_page.h"
#include "page_fields.h"

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
#define NEED_TWO_KINDS "needs two event kinds that open, and " NEED_TASK_PERM
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

enum state {
	S_OPENED, /* opened disabled, nothing else */
	S_ENABLED, /* after ENABLE */
	S_DISABLED, /* ENABLE, a workload, DISABLE */
	S_RESET, /* ENABLE, a workload, RESET */
	S_PERIOD, /* ENABLE, PERIOD, a workload */
	S_REFRESH, /* REFRESH 1, a workload */
	S_WORKLOAD, /* ENABLE, a workload */
};

/* How the fd whose page is checked came to be. */
enum origin {
	FROM_DIRECT, /* perf_event_open() */
	FROM_LEADER, /* a group leader with a sibling */
	FROM_SIBLING, /* a group sibling: its own page */
	FROM_SET_OUTPUT, /* redirected by PERF_EVENT_IOC_SET_OUTPUT */
	FROM_FD_OUTPUT, /* redirected by PERF_FLAG_FD_OUTPUT */
	FROM_FORK, /* mapped in a forked child */
	FROM_EXEC, /* opened by a child, mapped after its exec */
};

enum remap {
	M_ONCE,
	M_SECOND, /* a second mapping of the fd */
	M_AGAIN, /* munmap, then mmap again */
};

enum wakeup {
	W_NONE,
	W_EVENTS, /* wakeup_events = 1 */
	W_WATERMARK, /* watermark, wakeup_watermark = half a page */
};

FIXTURE(page)
{
	struct perf_event_attr attr;
	int fd; /* the case's event */
	int partner; /* its leader, sibling or output event, or -1 */
	int map_fd; /* the fd mapped: fd, or the output event */
	void *base;
	size_t len;
	unsigned char before[UP_HDR_LEN]; /* the page right after mmap */
	const char *skip; /* the SKIP reason when the event is not here */
	char needs[200]; /* what the variant needs, as a SKIP reason */
};

/* One case of the table; a field left out is the default (0). */
FIXTURE_VARIANT(page)
{
	enum kind kind;
	enum state state;
	enum priv priv;
	unsigned int cpu_wide : 1; /* per cpu (pid -1, cpu 0), else per task */
	enum origin origin;
	int pages; /* 1 + 2^n pages mapped; 0: 3 */
	unsigned int read_only : 1; /* PROT_READ: an overwrite buffer */
	enum remap remap;
	unsigned int enable_on_exec : 1;
	unsigned int inherit : 1;
	unsigned int pinned : 1;
	unsigned int exclusive : 1;
	enum wakeup wakeup;
	unsigned int write_backward : 1;
	unsigned int use_clockid : 1;
	int clockid;
	unsigned int sample_id_all : 1;
	unsigned int remove_on_exec : 1;
	unsigned int sigtrap : 1;
	__u64 sample_type; /* 0: PERF_SAMPLE_IP */
	__u64 read_format;
	unsigned int exclude_idle : 1;
	unsigned int exclude_guest : 1;
	unsigned int exclude_callchain_kernel : 1;
};

#include "page_cases.h"

#define NEED_ON_EXEC "perf_event_attr.remove_on_exec and sigtrap (5.13)"

static int case_pages(const FIXTURE_VARIANT(page) * v)
{
	return v->pages ? v->pages : 3;
}

/* PROT_READ alone maps an overwrite buffer */
static int case_prot(const FIXTURE_VARIANT(page) * v)
{
	return v->read_only ? PROT_READ : PROT_READ | PROT_WRITE;
}

/* Software PMUs (and breakpoints, tracepoints) put no event on a counter */
static bool on_no_counter(enum kind k)
{
	return k != K_CYCLES && k != K_INSTRUCTIONS;
}

/* The attr of a case: its kind's, with the case's flags. */
static int case_attr(const FIXTURE_VARIANT(page) * v, struct perf_event_attr *a)
{
	int err = kind_attr(v->kind, a);

	if (err)
		return err;
	a->enable_on_exec = v->enable_on_exec;
	a->inherit = v->inherit;
	a->pinned = v->pinned;
	a->exclusive = v->exclusive;
	if (v->wakeup == W_EVENTS) {
		a->wakeup_events = 1;
	} else if (v->wakeup == W_WATERMARK) {
		a->watermark = 1;
		a->wakeup_watermark = page_size() / 2;
	}
	a->write_backward = v->write_backward;
	a->use_clockid = v->use_clockid;
	a->clockid = v->clockid;
	a->sample_id_all = v->sample_id_all;
#ifdef PERF_ATTR_SIZE_VER7
	a->remove_on_exec = v->remove_on_exec;
	a->sigtrap = v->sigtrap;
#endif
	if (v->sample_type)
		a->sample_type = v->sample_type;
	a->read_format = v->read_format;
	a->exclude_idle = v->exclude_idle;
	a->exclude_guest = v->exclude_guest;
	a->exclude_callchain_kernel = v->exclude_callchain_kernel;
	return 0;
}

/* The SKIP reason of a variant: everything it needs, in a fixed order. */
static void variant_needs(char *buf, size_t len,
			  const FIXTURE_VARIANT(page) * v)
{
	const char *scope = v->cpu_wide ? NEED_CPU_PERM : NEED_TASK_PERM;
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

static int open_case(struct perf_event_attr *attr,
		     const FIXTURE_VARIANT(page) * v, int group,
		     unsigned long flags)
{
	return up_perf_event_open(attr, v->cpu_wide ? -1 : 0,
				  v->cpu_wide ? 0 : -1, group, flags);
}

static void sigtrap_ignore(int sig)
{
}

/*
 * Whether the kernel knows attr.remove_on_exec (5.13): an
 * older one refuses any bit it does not know with EINVAL.
 */
static bool has_on_exec(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd;

#ifdef PERF_ATTR_SIZE_VER7
	a.remove_on_exec = 1;
#endif
	fd = up_perf_event_open(&a, 0, -1, -1, 0);
	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != EINVAL;
}

/*
 * Opens the case's event and the partner its origin asks for, and maps the
 * page to check.  Returns NULL, or the SKIP reason (opening was refused).
 */
static const char *open_origin(struct __test_metadata *_metadata,
			       FIXTURE_DATA(page) * self,
			       const FIXTURE_VARIANT(page) * v)
{
	struct perf_event_attr partner = self->attr;
	int prot = case_prot(v);
	int fd, err, other;

	/* A group sibling may be neither pinned nor exclusive. */
	partner.pinned = 0;
	partner.exclusive = 0;
	switch (v->origin) {
	case FROM_SIBLING:
		self->partner = open_case(&partner, v, -1, 0);
		fd = self->partner < 0 ?
			     -1 :
			     open_case(&self->attr, v, self->partner, 0);
		break;
	case FROM_SET_OUTPUT:
	case FROM_FD_OUTPUT:
		/* the case's event opens once its output event is mapped */
		self->partner = open_case(&partner, v, -1, 0);
		fd = self->partner;
		break;
	default:
		fd = open_case(&self->attr, v, -1, 0);
		break;
	}
	if (fd < 0) {
		err = errno;
		if (err == EINVAL && (v->remove_on_exec || v->sigtrap) &&
		    !has_on_exec()) {
			TH_LOG("perf_event_open: %s; remove_on_exec refused",
			       strerror(err));
			return "needs " NEED_ON_EXEC;
		}
		ASSERT_TRUE(open_refused(_metadata, err, &self->attr,
					 v->cpu_wide - 1))
		TH_LOG("perf_event_open: %s", strerror(err));
		return self->needs;
	}
	if (v->origin == FROM_SET_OUTPUT || v->origin == FROM_FD_OUTPUT) {
		/* The output event is mapped first: it owns the buffer. */
		self->base = mmap(NULL, self->len, prot, MAP_SHARED,
				  self->partner, 0);
		ASSERT_NE(MAP_FAILED, self->base)
		TH_LOG("mmap of the output event: %s", strerror(errno));
		self->map_fd = self->partner;
		if (v->origin == FROM_SET_OUTPUT) {
			fd = open_case(&self->attr, v, -1, 0);
			ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
			ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
					   self->partner))
			TH_LOG("SET_OUTPUT: %s", strerror(errno));
		} else {
			fd = open_case(&self->attr, v, self->partner,
				       PERF_FLAG_FD_OUTPUT |
					       PERF_FLAG_FD_NO_GROUP);
			ASSERT_LE(0, fd)
			TH_LOG("PERF_FLAG_FD_OUTPUT: %s", strerror(errno));
		}
		self->fd = fd;
		/*
		 * perf_mmap(): the redirected event writes into a buffer of
		 * its own size only: another size is EINVAL on every kernel.
		 */
		other = 2;
		if (case_pages(v) == 2)
			other = 3;
		EXPECT_EQ(MAP_FAILED, mmap(NULL, other * page_size(), prot,
					   MAP_SHARED, fd, 0));
		EXPECT_EQ(EINVAL, errno);
		return NULL;
	}
	self->fd = fd;
	self->map_fd = fd;
	if (v->origin == FROM_LEADER) {
		self->partner = open_case(&partner, v, fd, 0);
		if (self->partner < 0) {
			err = errno;
			ASSERT_TRUE(open_refused(_metadata, err, &partner,
						 v->cpu_wide - 1));
			return self->needs;
		}
	}
	self->base = mmap(NULL, self->len, prot, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, self->base) TH_LOG("mmap: %s", strerror(errno));
	return NULL;
}

FIXTURE_SETUP(page)
{
	struct sigaction sa = { .sa_handler = sigtrap_ignore };
	int err;

	self->fd = -1;
	self->partner = -1;
	self->map_fd = -1;
	self->base = MAP_FAILED;
	self->len = case_pages(variant) * page_size();
	variant_needs(self->needs, sizeof(self->needs), variant);
#ifndef PERF_ATTR_SIZE_VER7
	if (variant->remove_on_exec || variant->sigtrap) {
		self->skip = "needs " NEED_ON_EXEC;
		return;
	}
#endif
	/* sigtrap: a SIGTRAP on every overflow, which must not kill */
	if (variant->sigtrap)
		ASSERT_EQ(0, sigaction(SIGTRAP, &sa, NULL));
	/* The 6.1 harness runs the body even after SKIP here: record why. */
	err = case_attr(variant, &self->attr);
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
	self->skip = open_origin(_metadata, self, variant);
	if (!self->skip)
		ASSERT_EQ(0, up_snapshot(self->base, self->before));
}

FIXTURE_TEARDOWN(page)
{
	if (self->base != MAP_FAILED)
		munmap(self->base, self->len);
	if (self->fd >= 0)
		close(self->fd);
	if (self->partner >= 0)
		close(self->partner);
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

/* The state's ioctls on the case's event; 0 or -errno. */
static int enter_state(enum state s, int fd, int leader)
{
	__u64 period = 500000;
	int ret = 0;

	if (s == S_OPENED)
		return 0;
	/* A sibling counts only while its leader is on. */
	if (leader >= 0 && ioctl(leader, PERF_EVENT_IOC_ENABLE, 0))
		return -errno;
	if (s == S_REFRESH)
		ret = ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
	else
		ret = ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (!ret && s == S_PERIOD)
		ret = ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
	if (ret)
		return -errno;
	if (s != S_ENABLED)
		workload();
	if (s == S_DISABLED)
		ret = ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	else if (s == S_RESET)
		ret = ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	return ret ? -errno : 0;
}

/* What a page of the case is checked against. */
struct page_want {
	long page_size;
	int data_pages;
	bool no_counter; /* index must be 0 */
	int read_fd; /* the page's own event for read(), or -1 (shared) */
	__u64 read_format;
	bool sibling; /* read_fd is a group sibling: a GROUP read is not its */
	bool bounded; /* writable and forward: never over-writes unread data */
};

/* What one read() of the page's event gave. */
struct read_vals {
	bool have_count; /* its count: not a GROUP read of a sibling */
	bool have_times; /* read_format has both times */
	uint64_t count, enabled, running;
};

static void read_values(const struct page_want *w, struct read_vals *r)
{
	const __u64 te = PERF_FORMAT_TOTAL_TIME_ENABLED;
	const __u64 tr = PERF_FORMAT_TOTAL_TIME_RUNNING;
	uint64_t v[64];
	ssize_t n;
	int i;

	memset(r, 0, sizeof(*r));
	if (w->read_fd < 0)
		return;
	n = read(w->read_fd, v, sizeof(v));
	if (n < (ssize_t)sizeof(v[0]))
		return;
	n /= sizeof(v[0]);
	/* value or nr first, then time_enabled, time_running */
	if ((w->read_format & (te | tr)) == (te | tr) && n >= 3) {
		r->have_times = true;
		r->enabled = v[1];
		r->running = v[2];
	}
	/* GROUP: nr, the times, then the leader's value first */
	i = 0;
	if (w->read_format & PERF_FORMAT_GROUP) {
		if (w->sibling)
			return;
		i = 1 + !!(w->read_format & te) + !!(w->read_format & tr);
	}
	if (n > i) {
		r->have_count = true;
		r->count = v[i];
	}
}

static int report(bool ok, const struct up_msg *m, const char *where,
		  bool *hinted)
{
	if (ok)
		return 0;
	fprintf(stderr, "# %s: %s\n", where, m->s);
	if (!*hinted)
		fprintf(stderr, "# hint: %s\n", m->hint);
	*hinted = true;
	return 1;
}

/*
 * Every page check, on one settled copy of pg; before is a copy taken
 * earlier (or NULL).  Returns the number of checks that failed, each
 * reported on stderr.  For the harness and for a re-executed image.
 */
static int check_page(const void *pg, const unsigned char *before,
		      const struct page_want *w, const char *where)
{
	unsigned char snap[UP_HDR_LEN];
	bool hinted = false;
	struct read_vals r;
	struct up_msg m;
	int bad = 0;

	/* The page first: read() must come after the update it is held to. */
	if (up_snapshot(pg, snap)) {
		fprintf(stderr, "# %s: page lock never settled\n", where);
		return 1;
	}
	read_values(w, &r);
	/* uapi: cap_bit0 "Always 0", cap_bit0_is_deprecated "Always 1" */
	bad += report(up_check_bit0(snap, &m), &m, where, &hinted);
	bad += report(up_check_bit1(snap, &m), &m, where, &hinted);
	/* uapi: size "Header size up to __reserved[] fields" */
	bad += report(up_check_size(snap, &m), &m, where, &hinted);
	/* uapi: __reserved "align to 1k": never written */
	bad += report(up_check_reserved(snap, &m), &m, where, &hinted);
	/* uapi data_offset/data_size (4.1): the area after the page */
	bad += report(up_check_data_area(snap, w->page_size, w->data_pages, &m),
		      &m, where, &hinted);
	bad += report(up_check_data_ptrs(snap, w->bounded, &m), &m, where,
		      &hinted);
	if (before)
		bad += report(up_check_lock(before, snap, &m), &m, where,
			      &hinted);
	if (w->no_counter)
		bad += report(up_check_index_none(snap, &m), &m, where,
			      &hinted);
	if (w->read_fd >= 0)
		bad += report(up_check_times(snap, r.have_times, r.enabled,
					     r.running, &m),
			      &m, where, &hinted);
	/* uapi read loop: with index 0 the count is offset alone */
	bad += report(up_check_offset_idle(snap, r.have_count, r.count, &m), &m,
		      where, &hinted);
	/* equal when the event is off? not shown for every line: logged */
	if (!up_u32(snap, UP_INDEX) && r.have_count)
		fprintf(stderr, "# %s: index 0, offset %lld, read() %llu\n",
			where, (long long)up_u64(snap, UP_OFFSET),
			(unsigned long long)r.count);
	/* no uapi promise keeps time_cycles below time_mask: logged */
	if (up_time_cycles_past_mask(snap))
		fprintf(stderr, "# %s: time_cycles 0x%llx, time_mask 0x%llx\n",
			where, (unsigned long long)up_u64(snap, UP_TIME_CYCLES),
			(unsigned long long)up_u64(snap, UP_TIME_MASK));
	bad += report(up_check_time_conv(snap, &m), &m, where, &hinted);
	bad += report(up_check_time_short(snap, &m), &m, where, &hinted);
	bad += report(up_check_pmc_width(snap, &m), &m, where, &hinted);
	return bad;
}

static void case_want(const FIXTURE_VARIANT(page) * v, int fd,
		      struct page_want *w)
{
	w->page_size = page_size();
	w->data_pages = case_pages(v) - 1;
	w->no_counter = on_no_counter(v->kind);
	/* A redirected event writes its values into the shared page too. */
	w->read_fd = v->origin == FROM_SET_OUTPUT ||
				     v->origin == FROM_FD_OUTPUT ?
			     -1 :
			     fd;
	w->read_format = v->read_format;
	w->sibling = v->origin == FROM_SIBLING;
	w->bounded = !v->read_only && !v->write_backward;
}

/*
 * A state in which no page update is due: the event (and every event
 * writing the page) is off.  Not a disabled sibling of an enabled leader:
 * a leader that cannot go on updates its siblings' pages
 * (group_update_userpage(), in every line from 5.10).
 */
static bool case_idle(const FIXTURE_VARIANT(page) * v)
{
	return v->state == S_OPENED ||
	       (v->state == S_DISABLED && v->origin != FROM_SIBLING);
}

/*
 * Two settled copies of the page of an event that is off, a context switch
 * and a millisecond apart, nothing done between them: the same lock (and,
 * up_check_lock, the same fields).
 */
static int check_idle_page(const void *pg, const char *where)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	unsigned char a[UP_HDR_LEN], b[UP_HDR_LEN];
	bool hinted = false;
	struct up_msg m;
	int bad = 0;

	if (up_snapshot(pg, a))
		return 1;
	sched_yield();
	nanosleep(&ms, NULL);
	if (up_snapshot(pg, b))
		return 1;
	bad += report(up_check_lock_still(a, b, &m), &m, where, &hinted);
	bad += report(up_check_lock(a, b, &m), &m, where, &hinted);
	return bad;
}

/*
 * Map fd (len bytes: a second mapping must match the buffer's size) and
 * check the page; for processes outside the harness.
 */
static int check_fd_page(int fd, size_t len, int prot,
			 const struct page_want *w, const char *who)
{
	void *pg;
	int bad;

	pg = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		fprintf(stderr, "# %s: mmap of the event fd: %s\n", who,
			strerror(errno));
		return 1;
	}
	workload();
	bad = check_page(pg, NULL, w, who);
	munmap(pg, len);
	return !!bad;
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

/* A child opens the case's event for itself, then execs this program. */
static void exec_case(struct __test_metadata *_metadata,
		      FIXTURE_DATA(page) * self,
		      const FIXTURE_VARIANT(page) * v,
		      const struct page_want *w)
{
	char arg[4][24];
	pid_t pid;
	int fd;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fd = open_case(&self->attr, v, -1, 0);
		if (fd < 0 || enter_state(v->state, fd, -1))
			_exit(3);
		snprintf(arg[0], sizeof(arg[0]), "%d", fd);
		snprintf(arg[1], sizeof(arg[1]), "%zu", self->len);
		snprintf(arg[2], sizeof(arg[2]), "%d", case_prot(v));
		snprintf(arg[3], sizeof(arg[3]), "%d",
			 (int)w->read_format | w->no_counter << 16 |
				 w->bounded << 17);
		execl("/proc/self/exe", "mmap_page", EXEC_CHILD_ARG, arg[0],
		      arg[1], arg[2], arg[3], (char *)NULL);
		fprintf(stderr, "# exec: %s\n", strerror(errno));
		_exit(2);
	}
	expect_child_ok(_metadata, pid, "re-executed image");
}

TEST_F(page, abi)
{
	struct page_want want;
	void *second = MAP_FAILED;
	int prot, err;
	pid_t pid;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	prot = case_prot(variant);
	case_want(variant, self->fd, &want);
	if (variant->origin == FROM_EXEC) {
		exec_case(_metadata, self, variant, &want);
		return;
	}
	if (variant->remap == M_SECOND) {
		second = mmap(NULL, self->len, prot, MAP_SHARED, self->map_fd,
			      0);
		ASSERT_NE(MAP_FAILED, second)
		TH_LOG("second mmap: %s", strerror(errno));
	} else if (variant->remap == M_AGAIN) {
		ASSERT_EQ(0, munmap(self->base, self->len));
		self->base = mmap(NULL, self->len, prot, MAP_SHARED,
				  self->map_fd, 0);
		ASSERT_NE(MAP_FAILED, self->base)
		TH_LOG("mmap again: %s", strerror(errno));
		/* The last munmap freed the buffer: this is a new page. */
		ASSERT_EQ(0, up_snapshot(self->base, self->before));
	}
	err = enter_state(variant->state, self->fd,
			  variant->origin == FROM_SIBLING ? self->partner : -1);
	ASSERT_EQ(0, err) TH_LOG("entering the state: %s", strerror(-err));
	EXPECT_EQ(0, check_page(self->base, self->before, &want, "the page"));
	if (case_idle(variant))
		EXPECT_EQ(0, check_idle_page(self->base, "the idle page"));
	if (second != MAP_FAILED) {
		EXPECT_EQ(0, check_page(second, NULL, &want, "second mapping"));
		munmap(second, self->len);
	}
	if (variant->origin == FROM_FORK) {
		/* Perf mappings are VM_DONTCOPY: the child maps the fd. */
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(check_fd_page(self->map_fd, self->len, prot,
					    &want, "forked child"));
		expect_child_ok(_metadata, pid, "forked child");
	}
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

	EXPECT_EQ(0, report(ok, m, state, &hinted));
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
		SKIP(return, NEED_TWO_KINDS);
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
 * perf_mmap() checks the AUX area's layout in the user page before it asks
 * whether the PMU has an AUX buffer, so each broken rule is EINVAL for any
 * event: aux_offset at or past the data area's end, equal to the mmap
 * offset, aux_size equal to the mapping, a power-of-two number of pages
 * (uapi: "aux_offset, aux_size: ... set by userspace").
 */
TEST(aux_layout_rules)
{
	static const struct {
		int off, size, map_off, map_pages;
	} bad[] = {
		{ 2, 2, 2, 2 }, /* aux_offset inside the data area */
		{ 3, 2, 4, 2 }, /* mapped at another offset than aux_offset */
		{ 3, 4, 3, 2 }, /* aux_size is not the mapping's */
		{ 3, 3, 3, 3 }, /* 3 pages: not a power of two */
	};
	struct perf_event_mmap_page *pg;
	long ps = page_size();
	unsigned int i;
	size_t len;
	void *base, *aux;
	int fd;

	fd = open_sideband(2, &base, &len, PROT_READ | PROT_WRITE);
	if (fd < 0) {
		if (open_refused(_metadata, -fd, &sideband_attr, -1))
			SKIP(return, "needs " NEED_TASK_PERM);
	}
	ASSERT_LE(0, fd) TH_LOG("dummy event: %s", strerror(-fd));
	pg = base;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		pg->aux_offset = bad[i].off * ps;
		pg->aux_size = bad[i].size * ps;
		aux = mmap(NULL, bad[i].map_pages * ps, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, bad[i].map_off * ps);
		EXPECT_EQ(MAP_FAILED, aux) TH_LOG("rule %u: mapped", i);
		EXPECT_EQ(EINVAL, errno)
		TH_LOG("rule %u: %s", i, strerror(errno));
		if (aux != MAP_FAILED)
			munmap(aux, bad[i].map_pages * ps);
	}
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
	struct page_want w = { .page_size = page_size() };
	size_t len;
	int flags;

	/*
	 * a re-executed image: fd, len, prot,
	 * read_format | no_counter << 16 | bounded << 17
	 */
	if (argc == 6 && !strcmp(argv[1], EXEC_CHILD_ARG)) {
		flags = atoi(argv[5]);
		w.read_fd = atoi(argv[2]);
		w.read_format = flags & 0xffff;
		w.no_counter = (flags >> 16) & 1;
		w.bounded = (flags >> 17) & 1;
		len = strtoul(argv[3], NULL, 0);
		w.data_pages = len / w.page_size - 1;
		return check_fd_page(w.read_fd, len, atoi(argv[4]), &w,
				     "re-executed image");
	}
	return test_harness_run(argc, argv);
}
