// SPDX-License-Identifier: GPL-2.0
/*
 * A model of the x86 PMU under rdpmc.c (or user_access_off.c), which is
 * compiled to assembly with each rdpmc and rdtsc made a call to
 * x86_pmu_model_rdpmc/_rdtsc (below) and linked with --wrap=syscall,mmap,
 * munmap,read,close,ioctl,glob,sched_setaffinity,sched_getcpu:
 * perf_event_open() and its fds come here, everything else goes on to
 * libc.  The kernel functions named are those of 7.3.4
 * (arch/x86/events/core.c, kernel/events/core.c), as read for the model.
 *
 * X86_PMU_MODEL="N,F[,hybrid=N2,F2][,wd][,leak][,noexclude][,fixed][,slow=US]
 * [,mut=NAME]" (mut last): general
 * counters at rdpmc index 0..N-1, fixed ones at 1 << 30 | k, k < F (0
 * counts instructions, 1 cycles), all 48 bits wide (cntval_bits), with
 * max_period 2^47 - 1 (AMD, Intel with full-width writes); "wd": the NMI
 * watchdog's pinned cycles event holds fixed 1, or general 0.
 * X86_PMU_ROOT=DIR: a glob() of the program looks under DIR (the knob is
 * DIR/sys/bus/event_source/devices/cpu/rdpmc; there is no
 * perf_user_access on x86).  "hybrid=N2,F2": no cpu PMU, but cpu_core
 * (N,F, type PERF_TYPE_RAW, which a PERF_TYPE_HARDWARE event without an
 * extended type in config's upper 32 bits goes to: perf_init_event()) on
 * CPU 0 and cpu_atom (N2,F2, type HYBRID_ATOM_TYPE) on the other CPUs, each
 * with its own counters, and its knob DIR/.../cpu_core/rdpmc and
 * .../cpu_atom/rdpmc (in the kernel both files show the one
 * x86_pmu.attr_rdpmc; the model reads each PMU's own, so rows keep them
 * equal).  A task runs on the lowest CPU of its affinity (the model's
 * scheduler; sched_getcpu() says so too), and an event counts only while
 * its task runs on a CPU of its PMU (x86_pmu_filter()).
 *
 * As the kernel does:
 * - x86_pmu_event_init() latches user reads (PERF_EVENT_FLAG_USER_READ_CNT)
 *   from the knob at the event's creation; x86_pmu_event_idx() publishes
 *   index (counter + 1) only with it, arch_perf_update_userpage()
 *   cap_user_rdpmc from it and pmc_width 48.
 * - CR4.PCE (cr4_update_pce_mm()): rdpmc raises SIGSEGV (#GP) while the
 *   knob reads 0, never for a valid counter while it reads 2, and with 1
 *   only in a process (the model's mm) that maps a user-read event
 *   (x86_pmu_event_mapped(), _unmapped()); also for an index that is no
 *   counter's.
 * - x86_perf_event_set_period() starts a counter at -left masked to 48
 *   bits and keeps prev_count = (u64)-left, sign-extended, then publishes;
 *   left is period_left (sample_period, or max_period counting), at least
 *   2.  x86_perf_event_update() adds the 48-bit delta to count, takes it
 *   from period_left and keeps prev_count = the raw counter, zero-extended
 *   ("fixed": sign-extended from bit 47, as the fix patch
 *   kernels/fixes/0001-perf-Keep-prev_count-sign-extended-to-the-counter-
 *   width.patch does).
 * - perf_event_update_userpage() publishes only once the buffer exists
 *   (the first mmap(), perf_mmap()), offset = count - prev_count when
 *   index is published, count when not.  So read() (an update) and then a
 *   first mmap(), or PERF_EVENT_IOC_RESET (_perf_event_reset(): update,
 *   count = 0, publish), leave the stock page 2^48 off the uapi read.
 * - ioctl: ENABLE, DISABLE, RESET, REFRESH (sampling only), PERIOD
 *   (sampling only; __perf_event_period(): update, period_left = 0,
 *   set_period); PERF_IOC_FLAG_GROUP is the model's EINVAL, any other
 *   command ENOTTY.  A counter that leaves the PMU is updated and the page
 *   published with index 0 (x86_pmu_del()); one that comes on is
 *   reprogrammed by set_period (x86_pmu_start(PERF_EF_RELOAD)), as is each
 *   of the caller's at sched_setaffinity() (a migration).
 *
 * Hardware cycles and instructions of the calling task only (ENOENT for
 * anything else, inherit included); a group that does not fit on the
 * counters at once is refused with EINVAL (validate_group()).  At each
 * open, ENABLE and every MUX_MS for a group left off (the multiplexing
 * timer, a process of the model's), the task's enabled groups take
 * counters in order, each all or nothing: one that does not fit beside the
 * watchdog and the groups before it is on no counter.  The order never
 * rotates.  Every call into the model ticks a clock; a counter counts
 * STEP a tick, and a sampling counter that passes 2^48 overflows (update,
 * set_period).  The state is shared by every process of the program (the
 * harness forks each test); the current task is the caller: a counter it
 * has no event on reads 0, as perf_clear_dirty_counters() leaves it, or
 * with "leak" what another task's event left there.  "noexclude": a PMU
 * that cannot leave the kernel out (PERF_PMU_CAP_NO_EXCLUDE): EINVAL for
 * an event with exclude_kernel or exclude_hv.  "slow": every rdpmc takes
 * US microseconds more (to make two runs overlap).
 *
 * Mutants (mut=NAME), each a way a kernel could publish wrongly:
 *   width32     pmc_width 32 for the 48-bit counters
 *   index_off   index = the rdpmc index, without the + 1
 *   no_fixed    a fixed counter's index without 1 << 30
 *   cap_off     cap_user_rdpmc 0 while index is published
 *   pce_off     CR4.PCE clear for a process that maps a user-read event
 *   latch_on    user reads latched on whatever the knob (index and
 *               cap_user_rdpmc published with the knob at 0)
 *   hybrid_other  a hybrid event's index is the counter the other PMU
 *               would give it (its layout's: hybrid=6,0 has no fixed
 *               counter, so cpu_core's cycles on fixed 1 is published as
 *               general 0)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EVENTS 128
#define FIXED (1U << 30)
#define NONE UINT32_MAX
#define BITS 48
#define MASK ((1ULL << BITS) - 1)
#define MAX_PERIOD ((1ULL << (BITS - 1)) - 1)
#define STEP 997
#define MUX_MS 4 /* 1000 / HZ */
#define TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)
#define DEVICES "/sys/bus/event_source/devices/"
#define HYBRID_ATOM_TYPE 10
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum mutant {
	M_NONE,
	M_WIDTH32,
	M_INDEX_OFF,
	M_NO_FIXED,
	M_CAP_OFF,
	M_PCE_OFF,
	M_LATCH_ON,
	M_HYBRID_OTHER,
};

static const char *const mutants[] = { "",	  "width32", "index_off",
				       "no_fixed", "cap_off", "pce_off",
				       "latch_on", "hybrid_other" };

union page {
	struct perf_event_mmap_page pc;
	char b[4096];
};

struct pmu {
	char name[16];
	unsigned int n, f; /* general and fixed counters */
	uint32_t type;
};

struct event {
	pid_t pid; /* the task counted; 0: a free slot */
	int pmu; /* m->pmu[] */
	int fd, leader; /* leader: the slot of its group's leader */
	bool cycles; /* else instructions */
	bool user_read; /* PERF_EVENT_FLAG_USER_READ_CNT, latched at open */
	bool enabled, sampling;
	int mmaps; /* mappings of its buffer: 0, no page is published */
	pid_t mapper; /* the process that mapped it */
	int limit; /* event_limit (REFRESH), 0: none */
	uint32_t counter; /* rdpmc index, or NONE */
	uint64_t read_format, period; /* hw.sample_period */
	int64_t left; /* hw.period_left */
	uint64_t prev, count; /* hw.prev_count, count */
	uint64_t raw0, start; /* the counter as written, and the tick */
	uint64_t born, since, en, ran; /* times: at open, at last change */
};

/* an mm: how many user-read events its process maps, where it runs */
struct mm {
	pid_t pid;
	int rdpmc_allowed;
	int pmu; /* the PMU of the CPU it runs on */
};

static struct model {
	union page page[EVENTS]; /* first: page aligned */
	struct event ev[EVENTS];
	struct mm mm[EVENTS];
	struct pmu pmu[2];
	int npmu;
	uint32_t wd; /* the watchdog's counter on each PMU, or NONE */
	bool leak, noexclude, fixed;
	unsigned int slow; /* microseconds per rdpmc */
	enum mutant mut;
	int lock;
	uint64_t now;
	char root[256];
} *m;

long __real_syscall(long nr, ...);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
int __real_munmap(void *addr, size_t len);
ssize_t __real_read(int fd, void *buf, size_t len);
int __real_close(int fd);
int __real_ioctl(int fd, unsigned long req, ...);
int __real_glob(const char *pattern, int flags,
		int (*errfunc)(const char *, int), glob_t *g);
int __real_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set);
int __real_sched_getcpu(void);
uint64_t x86_pmu_model_counter(uint32_t idx);
uint64_t x86_pmu_model_tsc(void);

/*
 * The instructions' stand-ins: ecx in, edx:eax out, every other register
 * kept (SSE by fxsave), the stack aligned for C; the code calling them is
 * built with -mno-red-zone, so the call may push below its stack pointer.
 */
#define STUB(insn, fn)                                                     \
	asm(".globl x86_pmu_model_" #insn "\nx86_pmu_model_" #insn ":\n"   \
	    "push %rbp\nmov %rsp, %rbp\npush %rcx\npush %rsi\npush %rdi\n" \
	    "push %r8\npush %r9\npush %r10\npush %r11\n"                   \
	    "sub $512, %rsp\nand $-16, %rsp\nfxsave64 (%rsp)\n"            \
	    "mov %ecx, %edi\ncall " #fn "\nfxrstor64 (%rsp)\n"             \
	    "lea -56(%rbp), %rsp\npop %r11\npop %r10\npop %r9\npop %r8\n"  \
	    "pop %rdi\npop %rsi\npop %rcx\npop %rbp\n"                     \
	    "mov %rax, %rdx\nshr $32, %rdx\nmov %eax, %eax\nret\n")
STUB(rdpmc, x86_pmu_model_counter);
STUB(rdtsc, x86_pmu_model_tsc);

/* A holder killed inside leaves it held: abort rather than spin forever. */
static void lock(void)
{
	long spins = 0;

	while (__atomic_exchange_n(&m->lock, 1, __ATOMIC_ACQUIRE)) {
		if (++spins > 10000000)
			abort();
		sched_yield();
	}
}

static void unlock(void)
{
	__atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
}

/* a PMU's knob's value now (x86_pmu.attr_rdpmc), -1 without one */
static int knob(int pmu)
{
	char buf[16] = "", path[sizeof(m->root) + sizeof(DEVICES) + 32];
	int fd;

	snprintf(path, sizeof(path), "%s%s%s/rdpmc", m->root, DEVICES,
		 m->pmu[pmu].name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (__real_read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	__real_close(fd);
	return buf[0] ? atoi(buf) : -1;
}

static uint64_t sext(uint64_t v)
{
	return (uint64_t)((int64_t)(v << (64 - BITS)) >> (64 - BITS));
}

/* the counter's value now */
static uint64_t raw(const struct event *e)
{
	return (e->raw0 + (m->now - e->start) * STEP) & MASK;
}

static uint64_t enabled_time(const struct event *e)
{
	return e->en + (e->enabled ? m->now - e->since : 0);
}

static uint64_t running_time(const struct event *e)
{
	return e->ran + (e->counter == NONE ? 0 : m->now - e->since);
}

/* the times up to now, before a change of state */
static void fold(struct event *e)
{
	e->en = enabled_time(e);
	e->ran = running_time(e);
	e->since = m->now;
}

static struct mm *mm_of(pid_t pid, bool add)
{
	struct mm *mm, *free = NULL;

	for (mm = m->mm; mm < m->mm + EVENTS; mm++) {
		if (mm->pid == pid)
			return mm;
		if (!mm->pid && !free)
			free = mm;
	}
	if (add && free) {
		free->pid = pid;
		free->rdpmc_allowed = 0;
	}
	return add ? free : NULL;
}

/* A free counter of pmu in taken (a bit each), fixed first as x86 prefers */
static uint32_t take(uint64_t *taken, int pmu, bool cycles)
{
	unsigned int k = cycles;

	if (k < m->pmu[pmu].f && !(*taken & 1ULL << (32 + k))) {
		*taken |= 1ULL << (32 + k);
		return FIXED | k;
	}
	for (k = 0; k < m->pmu[pmu].n; k++)
		if (!(*taken & 1ULL << k)) {
			*taken |= 1ULL << k;
			return k;
		}
	return NONE;
}

static uint64_t bit(uint32_t counter)
{
	return 1ULL << (counter & FIXED ? 32 + (counter & ~FIXED) : counter);
}

/* x86_pmu_event_idx() */
static uint32_t event_idx(const struct event *e)
{
	if (!e->user_read)
		return 0;
	if (m->mut == M_INDEX_OFF)
		return e->counter;
	if (m->mut == M_NO_FIXED)
		return (e->counter & ~FIXED) + 1;
	if (m->mut == M_HYBRID_OTHER && m->npmu > 1) {
		uint64_t taken = m->wd == NONE ? 0 : bit(m->wd);
		uint32_t c = take(&taken, !e->pmu, e->cycles);

		return c == NONE ? 0 : c + 1;
	}
	return e->counter + 1;
}

/* perf_event_update_userpage(): the fields between two bumps of lock */
static void publish(struct event *e)
{
	struct perf_event_mmap_page *pc = &m->page[e - m->ev].pc;

	if (!e->mmaps)
		return; /* no buffer yet */
	__atomic_store_n(&pc->lock, pc->lock + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pc->index = e->counter == NONE ? 0 : event_idx(e);
	pc->offset = e->count - (pc->index ? e->prev : 0);
	pc->time_enabled = enabled_time(e);
	pc->time_running = running_time(e);
	pc->capabilities = 0;
	pc->cap_bit0_is_deprecated = 1;
	pc->cap_user_rdpmc = e->user_read && m->mut != M_CAP_OFF;
	pc->pmc_width = m->mut == M_WIDTH32 ? 32 : BITS;
	pc->size = offsetof(struct perf_event_mmap_page, __reserved);
	pc->data_offset = sizeof(union page);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&pc->lock, pc->lock + 1, __ATOMIC_RELAXED);
}

/* x86_perf_event_update() */
static void update(struct event *e)
{
	uint64_t now, delta;

	if (e->counter == NONE)
		return;
	now = raw(e);
	delta = ((now << (64 - BITS)) - (e->prev << (64 - BITS))) >>
		(64 - BITS);
	e->prev = m->fixed ? sext(now) : now;
	e->count += delta;
	e->left -= delta;
}

/* x86_perf_event_set_period(), on the event's counter */
static void set_period(struct event *e)
{
	int64_t left = e->left, period = e->period;

	if (left <= -period)
		left = period;
	if (left <= 0)
		left += period;
	e->left = left;
	if (left < 2)
		left = 2;
	if (left > (int64_t)MAX_PERIOD)
		left = MAX_PERIOD;
	e->prev = (uint64_t)-left;
	e->raw0 = (uint64_t)-left & MASK;
	e->start = m->now;
	publish(e);
}

/* e moved to counter: off (update, x86_pmu_del()), on (set_period) */
static void restart(struct event *e, uint32_t counter)
{
	if (counter == e->counter)
		return;
	fold(e);
	update(e);
	e->counter = NONE;
	publish(e);
	e->counter = counter;
	if (counter != NONE)
		set_period(e);
}

static void disable(struct event *e)
{
	struct event *s;

	fold(e);
	e->enabled = false;
	/* a leader takes its group off the PMU (group_sched_out()) */
	for (s = m->ev; s < m->ev + EVENTS; s++)
		if (s == e || (e->leader == e - m->ev && s->pid == e->pid &&
			       s->leader == e->leader))
			restart(s, NONE);
}

/* A clock tick: the sampling counters past 2^48 overflow. */
static void tick(void)
{
	struct event *e;

	m->now++;
	for (e = m->ev; e < m->ev + EVENTS; e++) {
		if (!e->pid || !e->sampling || e->counter == NONE ||
		    e->raw0 + (m->now - e->start) * STEP <= MASK)
			continue;
		update(e);
		if (e->limit && !--e->limit)
			disable(e); /* perf_event_disable_inatomic() */
		else
			set_period(e);
	}
}

static bool member(const struct event *e, const struct event *l, pid_t pid)
{
	return e->pid == pid && e->leader == l - m->ev && e->enabled &&
	       l->enabled;
}

/*
 * The task's enabled groups onto the counters of the PMU it runs on, in
 * order, each all or nothing; those of another PMU off.
 */
static void schedule(pid_t pid)
{
	uint64_t taken = m->wd == NONE ? 0 : bit(m->wd), t;
	struct mm *mm = mm_of(pid, false);
	int on = mm ? mm->pmu : 0;
	struct event *l, *e;
	bool fits;

	for (l = m->ev; l < m->ev + EVENTS; l++) {
		if (l->pid != pid || l->leader != l - m->ev)
			continue;
		t = taken;
		fits = l->pmu == on;
		for (e = m->ev; e < m->ev + EVENTS; e++)
			if (member(e, l, pid))
				fits &= take(&t, l->pmu, e->cycles) != NONE;
		for (e = m->ev; e < m->ev + EVENTS; e++)
			if (member(e, l, pid))
				restart(e, fits ? take(&taken, l->pmu,
						       e->cycles) :
						  NONE);
	}
}

/* the model's scheduler: a task runs on the lowest CPU it may use */
static int cpu_now(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	return cpu;
}

/* The caller's PMU now: moved to another, its events follow. */
static int where(void)
{
	int pmu = m->npmu > 1 && cpu_now() > 0;
	struct mm *mm = mm_of(getpid(), true);

	if (mm && mm->pmu != pmu) {
		mm->pmu = pmu;
		schedule(getpid());
	}
	return pmu;
}

static struct event *find(int fd)
{
	struct event *e;

	for (e = m->ev; e < m->ev + EVENTS; e++)
		if (e->pid == getpid() && e->fd == fd)
			return e;
	return NULL;
}

static int open_event(const struct perf_event_attr *a, pid_t pid, int cpu,
		      int group, unsigned long flags)
{
	struct event *e, *l = NULL, *slot = NULL;
	uint64_t taken = 0, config = a->config & 0xffffffff;
	uint32_t type = a->config >> 32;
	pid_t me = getpid();
	struct mm *mm;
	int pmu;

	for (pmu = 0; type && pmu < m->npmu; pmu++)
		if (m->pmu[pmu].type == type)
			break;
	if (a->type != PERF_TYPE_HARDWARE || pmu == m->npmu ||
	    (config != PERF_COUNT_HW_CPU_CYCLES &&
	     config != PERF_COUNT_HW_INSTRUCTIONS) ||
	    a->freq || a->inherit || a->read_format & ~TIMES ||
	    a->sample_period > MAX_PERIOD || (pid && pid != me) ||
	    cpu != -1 || flags & ~PERF_FLAG_FD_CLOEXEC)
		return -ENOENT;
	if (m->noexclude && (a->exclude_kernel || a->exclude_hv))
		return -EINVAL;
	if (group >= 0) {
		l = find(group);
		if (!l || l->leader != l - m->ev || l->pmu != pmu)
			return -EINVAL;
	}
	for (e = m->ev; e < m->ev + EVENTS; e++) {
		if (e->pid && kill(e->pid, 0) && errno == ESRCH)
			e->pid = 0; /* its task is gone */
		if (!e->pid && !slot)
			slot = e;
		if (l && e->pid == me && e->leader == l - m->ev &&
		    take(&taken, pmu, e->cycles) == NONE)
			return -EINVAL;
	}
	for (mm = m->mm; mm < m->mm + EVENTS; mm++)
		if (mm->pid && kill(mm->pid, 0) && errno == ESRCH)
			mm->pid = 0;
	if (take(&taken, pmu, config == PERF_COUNT_HW_CPU_CYCLES) == NONE)
		return -EINVAL;
	if (!slot)
		return -EMFILE;
	e = slot;
	memset(e, 0, sizeof(*e));
	e->fd = open("/dev/null",
		     O_RDONLY | (flags & PERF_FLAG_FD_CLOEXEC ? O_CLOEXEC : 0));
	if (e->fd < 0)
		return -errno;
	e->pid = me;
	e->leader = l ? l - m->ev : e - m->ev;
	e->pmu = pmu;
	e->cycles = config == PERF_COUNT_HW_CPU_CYCLES;
	e->user_read = knob(pmu) > 0 || m->mut == M_LATCH_ON;
	e->enabled = !a->disabled;
	e->sampling = a->sample_period;
	e->read_format = a->read_format;
	e->period = e->sampling ? a->sample_period : MAX_PERIOD;
	e->left = e->period;
	e->born = m->now;
	e->since = m->now;
	e->counter = NONE;
	where();
	schedule(me);
	return e->fd;
}

/* perf_mux_hrtimer_handler(): groups left off get another try */
static void mux_timer(pid_t parent)
{
	struct event *e;

	while (getppid() == parent) { /* gone with it, never holding lock */
		usleep(MUX_MS * 1000);
		lock();
		tick();
		for (e = m->ev; e < m->ev + EVENTS; e++)
			if (e->pid && e->leader == e - m->ev && e->enabled &&
			    e->counter == NONE)
				schedule(e->pid);
		unlock();
	}
	_exit(0);
}

/* before the harness registers its tests, which maps memory */
__attribute__((constructor(101))) static void model_init(void)
{
	const char *s = getenv("X86_PMU_MODEL"), *root = getenv("X86_PMU_ROOT");
	unsigned int i, n, f;
	const char *mut;
	pid_t parent;
	int len = 0;

	m = __real_mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || !s || !root || strlen(root) >= sizeof(m->root) ||
	    sscanf(s, "%u,%u%n", &n, &f, &len) < 2 || n > 32 || f > 32)
		goto usage;
	strcpy(m->root, root);
	m->pmu[0] = (struct pmu){ "cpu", n, f, PERF_TYPE_RAW };
	m->npmu = 1;
	if (strstr(s + len, ",hybrid=")) {
		if (sscanf(strstr(s + len, ",hybrid=") + 8, "%u,%u", &n, &f) <
			    2 || n > 32 || f > 32)
			goto usage;
		strcpy(m->pmu[0].name, "cpu_core");
		m->pmu[1] = (struct pmu){ "cpu_atom", n, f, HYBRID_ATOM_TYPE };
		m->npmu = 2;
	}
	/* the same counter on each PMU, which has it */
	m->wd = !strstr(s + len, ",wd") ? NONE : f > 1 && m->pmu[0].f > 1 ?
		FIXED | 1 : 0;
	m->leak = strstr(s + len, ",leak");
	m->noexclude = strstr(s + len, ",noexclude");
	m->fixed = strstr(s + len, ",fixed");
	if (strstr(s + len, ",slow="))
		m->slow = atoi(strstr(s + len, ",slow=") + 6);
	mut = strstr(s + len, ",mut=");
	if (mut) {
		for (i = 1; i < ARRAY_SIZE(mutants); i++)
			if (!strcmp(mut + 5, mutants[i]))
				m->mut = i;
		if (!m->mut)
			goto usage;
	}
	/* the program's pid from here: a fast one may be gone before */
	parent = getpid();
	if (!fork())
		mux_timer(parent);
	return;
usage:
	fprintf(stderr,
		"x86_pmu_model: X86_PMU_ROOT=DIR X86_PMU_MODEL=N,F[,hybrid=N2,F2][,wd][,leak][,noexclude][,fixed][,slow=US][,mut=NAME]\n");
	exit(2);
}

long __wrap_syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr != __NR_perf_event_open)
		return __real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	lock();
	tick();
	i = open_event((void *)a[0], a[1], a[2], a[3], a[4]);
	unlock();
	if (i >= 0)
		return i;
	errno = -i;
	return -1;
}

/* perf_mmap(): the first mapping makes the buffer and publishes */
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	struct event *e;
	struct mm *mm;

	lock();
	e = fd >= 0 ? find(fd) : NULL;
	if (e && len == sizeof(union page) && !off) {
		tick();
		if (!e->mmaps++) {
			memset(&m->page[e - m->ev], 0, sizeof(union page));
			publish(e);
		}
		e->mapper = getpid();
		mm = mm_of(e->mapper, true);
		if (e->user_read && mm)
			mm->rdpmc_allowed++; /* x86_pmu_event_mapped() */
	}
	unlock();
	if (!e)
		return __real_mmap(addr, len, prot, flags, fd, off);
	if (len != sizeof(union page) || off) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	return &m->page[e - m->ev];
}

int __wrap_munmap(void *addr, size_t len)
{
	struct event *e;
	struct mm *mm;

	if ((char *)addr < (char *)m->page ||
	    (char *)addr >= (char *)(m->page + EVENTS))
		return __real_munmap(addr, len);
	lock();
	e = &m->ev[(union page *)addr - m->page];
	if (e->mmaps > 0) {
		e->mmaps--;
		mm = mm_of(e->mapper, false);
		if (e->user_read && mm && mm->rdpmc_allowed > 0)
			mm->rdpmc_allowed--; /* x86_pmu_event_unmapped() */
	}
	unlock();
	return 0;
}

ssize_t __wrap_read(int fd, void *buf, size_t len)
{
	uint64_t v[3];
	struct event *e;
	size_t n = 0;

	lock();
	e = find(fd);
	if (e) {
		tick();
		update(e); /* x86_pmu_read() */
		v[n++] = e->count;
		if (e->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
			v[n++] = enabled_time(e);
		if (e->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
			v[n++] = running_time(e);
	}
	unlock();
	if (!e)
		return __real_read(fd, buf, len);
	if (len < n * sizeof(v[0])) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(buf, v, n * sizeof(v[0]));
	return n * sizeof(v[0]);
}

int __wrap_close(int fd)
{
	struct event *e, *s;

	lock();
	e = find(fd);
	if (e) {
		tick();
		e->pid = 0;
		for (s = m->ev; s < m->ev + EVENTS; s++)
			if (s->leader == e - m->ev)
				s->leader = s - m->ev; /* a singleton now */
	}
	unlock();
	return __real_close(fd);
}

/* _perf_event_enable(): ctx_resched() */
static void enable(struct event *e)
{
	if (e->enabled)
		return;
	fold(e);
	e->enabled = true;
	schedule(e->pid);
}

static int event_ioctl(struct event *e, unsigned long req, unsigned long arg)
{
	uint64_t period;

	switch (req) {
	case PERF_EVENT_IOC_RESET: /* _perf_event_reset() */
		if (arg & PERF_IOC_FLAG_GROUP)
			return -EINVAL;
		update(e);
		e->count = 0;
		publish(e);
		return 0;
	case PERF_EVENT_IOC_DISABLE:
		if (arg & PERF_IOC_FLAG_GROUP)
			return -EINVAL;
		if (e->enabled)
			disable(e);
		return 0;
	case PERF_EVENT_IOC_REFRESH: /* _perf_event_refresh() */
		if (!e->sampling)
			return -EINVAL;
		e->limit += (int)arg;
		enable(e);
		return 0;
	case PERF_EVENT_IOC_ENABLE:
		if (arg & PERF_IOC_FLAG_GROUP)
			return -EINVAL;
		enable(e);
		return 0;
	case PERF_EVENT_IOC_PERIOD: /* _perf_event_period() */
		memcpy(&period, (void *)arg, sizeof(period));
		if (!e->sampling || !period || period >> 63)
			return -EINVAL;
		e->period = period;
		update(e);
		e->left = 0;
		if (e->counter != NONE)
			set_period(e);
		return 0;
	}
	return -ENOTTY;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	unsigned long arg;
	struct event *e;
	va_list ap;
	int ret = 0;

	va_start(ap, req);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	lock();
	e = find(fd);
	if (e) {
		tick();
		ret = event_ioctl(e, req, arg);
	}
	unlock();
	if (!e)
		return __real_ioctl(fd, req, arg);
	if (!ret)
		return 0;
	errno = -ret;
	return -1;
}

/* A migration: the caller's events off one CPU's PMU, onto another's. */
int __wrap_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	struct event *e;

	int ret;

	if (pid && pid != getpid())
		return __real_sched_setaffinity(pid, size, set);
	ret = __real_sched_setaffinity(pid, size, set);
	lock();
	tick();
	for (e = m->ev; e < m->ev + EVENTS; e++) {
		if (e->pid != getpid() || e->counter == NONE)
			continue;
		update(e);
		set_period(e);
	}
	where();
	unlock();
	return ret;
}

int __wrap_sched_getcpu(void)
{
	return cpu_now();
}

/* The program's sysfs and procfs, under X86_PMU_ROOT */
int __wrap_glob(const char *pattern, int flags,
		int (*errfunc)(const char *, int), glob_t *g)
{
	char p[512];

	if (pattern[0] != '/' ||
	    snprintf(p, sizeof(p), "%s%s", m->root, pattern) >= (int)sizeof(p))
		return __real_glob(pattern, flags, errfunc, g);
	return __real_glob(p, flags, errfunc, g);
}

/* rdpmc: the caller's event's counter, 0 if none, SIGSEGV for a #GP. */
uint64_t x86_pmu_model_counter(uint32_t idx)
{
	uint64_t v = 0;
	struct event *e;
	struct mm *mm;
	bool gp;
	int k, p;

	if (m->slow)
		usleep(m->slow);
	lock();
	tick();
	p = where();
	k = knob(p);
	gp = k <= 0;
	if (idx >= m->pmu[p].n &&
	    !(idx & FIXED && (idx & ~FIXED) < m->pmu[p].f))
		gp = true;
	mm = mm_of(getpid(), false);
	/* cr4_update_pce_mm() */
	if (k == 1 && (!mm || !mm->rdpmc_allowed || m->mut == M_PCE_OFF))
		gp = true;
	if (idx == m->wd)
		v = m->now * STEP & MASK; /* a CPU event's: never cleared */
	for (e = m->ev; e < m->ev + EVENTS && !gp && idx != m->wd; e++)
		if (e->pid && e->counter == idx && e->pmu == p &&
		    (e->pid == getpid() || (m->leak && !v)))
			v = raw(e);
	unlock();
	/* a handler that returns would run the rdpmc again: so does this */
	while (gp)
		raise(SIGSEGV);
	return v;
}

uint64_t x86_pmu_model_tsc(void)
{
	uint64_t now;

	lock();
	tick();
	now = m->now;
	unlock();
	return now;
}
