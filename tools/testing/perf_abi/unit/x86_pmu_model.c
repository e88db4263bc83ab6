// SPDX-License-Identifier: GPL-2.0
/*
 * A model of the x86 PMU under rdpmc.c, which is compiled to assembly with
 * each rdpmc and rdtsc made a call to x86_pmu_model_rdpmc/_rdtsc (below)
 * and linked with --wrap=syscall,mmap,munmap,read,close: perf_event_open()
 * and its fds come here, everything else goes on to libc.
 *
 * X86_PMU_MODEL="N,F[,wd][,leak][,noexclude]": general counters at rdpmc index 0..N-1,
 * fixed ones at 1 << 30 | k, k < F (0 counts instructions, 1 cycles); "wd":
 * the NMI watchdog's pinned cycles event holds fixed 1, or general 0.
 * rdpmc of any other index, or while the knob RDPMC_KNOB reads 0, raises
 * SIGSEGV as the kernel does for the #GP.  Hardware cycles and instructions
 * of the calling task only (ENOENT for anything else); a group that does
 * not fit on the counters at once is refused with EINVAL (validate_group()).
 * At each open, and every MUX_MS for a group left off (the multiplexing
 * timer, a process of the model's), the task's groups take counters in
 * order, each all or nothing: one that does not fit beside the watchdog and
 * the groups before it is on no counter (index 0).  A close reschedules
 * nothing, as in the kernel; the order never rotates.  Every call into the
 * model ticks a clock; a counter counts STEP a tick from 0, or from 2^48 -
 * sample_period, and its overflow moves the page's offset under the page's
 * lock.  The state is shared by every process of the program (the harness
 * forks each test); the current task is the caller: a counter it has no
 * event on reads 0, as perf_clear_dirty_counters() leaves it, or with
 * "leak" what another task's event left there.  "noexclude": a PMU that
 * cannot leave the kernel out (PERF_PMU_CAP_NO_EXCLUDE): EINVAL for an
 * event with exclude_kernel or exclude_hv.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#define MASK ((1ULL << 48) - 1)
#define STEP 997
#define MUX_MS 4 /* 1000 / HZ */
#define TIMES (PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

union page {
	struct perf_event_mmap_page pc;
	char b[4096];
};

struct event {
	pid_t pid; /* the task counted; 0: a free slot */
	int fd, leader; /* leader: the slot of its group's leader */
	bool cycles; /* else instructions */
	uint32_t counter; /* rdpmc index, or NONE */
	uint64_t read_format, period;
	uint64_t born, start; /* ticks at open and at the counter's start */
	uint64_t count, ran; /* count and time running at start */
};

static struct model {
	union page page[EVENTS]; /* first: page aligned */
	struct event ev[EVENTS];
	unsigned int n, f;
	uint32_t wd; /* the watchdog's counter, or NONE */
	bool leak, noexclude;
	int lock;
	uint64_t now;
} *m;

long __real_syscall(long nr, ...);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off);
int __real_munmap(void *addr, size_t len);
ssize_t __real_read(int fd, void *buf, size_t len);
int __real_close(int fd);
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

static int knob(void)
{
	char buf[16] = "";
	int fd = open(RDPMC_KNOB, O_RDONLY);

	if (fd < 0)
		return -1;
	if (__real_read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	__real_close(fd);
	return buf[0] ? atoi(buf) : -1;
}

static uint64_t count_of(const struct event *e)
{
	return e->count + (e->counter == NONE ? 0 : (m->now - e->start) * STEP);
}

static uint64_t running(const struct event *e)
{
	return e->ran + (e->counter == NONE ? 0 : m->now - e->start);
}

static uint64_t pmc_of(const struct event *e)
{
	return (-e->period + (m->now - e->start) * STEP) & MASK;
}

/* perf_event_update_userpage(): the fields between two bumps of lock */
static void publish(struct event *e)
{
	struct perf_event_mmap_page *pc = &m->page[e - m->ev].pc;
	bool on = e->counter != NONE, user = knob() > 0;

	__atomic_store_n(&pc->lock, pc->lock + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pc->index = on && user ? e->counter + 1 : 0;
	pc->offset = e->count + (on ? e->period : 0);
	pc->time_enabled = m->now - e->born;
	pc->time_running = running(e);
	pc->capabilities = 0;
	pc->cap_bit0_is_deprecated = 1;
	pc->cap_user_rdpmc = user;
	pc->pmc_width = 48;
	pc->size = offsetof(struct perf_event_mmap_page, __reserved);
	pc->data_offset = sizeof(union page);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&pc->lock, pc->lock + 1, __ATOMIC_RELAXED);
}

/* e's counter (re)started on counter, or stopped: NONE */
static void restart(struct event *e, uint32_t counter)
{
	e->count = count_of(e);
	e->ran = running(e);
	e->start = m->now;
	e->counter = counter;
	publish(e);
}

/* A clock tick: the counters past their period overflow and restart. */
static void tick(void)
{
	struct event *e;

	m->now++;
	for (e = m->ev; e < m->ev + EVENTS; e++) {
		if (!e->pid || !e->period || e->counter == NONE ||
		    (m->now - e->start) * STEP < e->period)
			continue;
		restart(e, e->counter);
	}
}

/* A free counter in taken (one bit each), fixed first as x86 prefers. */
static uint32_t take(uint64_t *taken, bool cycles)
{
	unsigned int k = cycles;

	if (k < m->f && !(*taken & 1ULL << (32 + k))) {
		*taken |= 1ULL << (32 + k);
		return FIXED | k;
	}
	for (k = 0; k < m->n; k++)
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

/* The task's groups onto the counters in order, each all or nothing. */
static void schedule(pid_t pid)
{
	uint64_t taken = m->wd == NONE ? 0 : bit(m->wd), t;
	struct event *l, *e;
	uint32_t c;
	bool fits;

	for (l = m->ev; l < m->ev + EVENTS; l++) {
		if (l->pid != pid || l->leader != l - m->ev)
			continue;
		t = taken;
		fits = true;
		for (e = m->ev; e < m->ev + EVENTS; e++)
			if (e->pid == pid && e->leader == l - m->ev)
				fits &= take(&t, e->cycles) != NONE;
		for (e = m->ev; e < m->ev + EVENTS; e++) {
			if (e->pid != pid || e->leader != l - m->ev)
				continue;
			c = fits ? take(&taken, e->cycles) : NONE;
			if (c != e->counter)
				restart(e, c);
		}
	}
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
	uint64_t taken = 0;
	pid_t me = getpid();

	if (a->type != PERF_TYPE_HARDWARE ||
	    (a->config != PERF_COUNT_HW_CPU_CYCLES &&
	     a->config != PERF_COUNT_HW_INSTRUCTIONS) ||
	    a->freq || a->disabled || a->inherit || a->read_format & ~TIMES ||
	    a->sample_period > MASK / 2 || (pid && pid != me) || cpu != -1 ||
	    flags & ~PERF_FLAG_FD_CLOEXEC)
		return -ENOENT;
	if (m->noexclude && (a->exclude_kernel || a->exclude_hv))
		return -EINVAL;
	if (group >= 0) {
		l = find(group);
		if (!l || l->leader != l - m->ev)
			return -EINVAL;
	}
	for (e = m->ev; e < m->ev + EVENTS; e++) {
		if (e->pid && kill(e->pid, 0) && errno == ESRCH)
			e->pid = 0; /* its task is gone */
		if (!e->pid && !slot)
			slot = e;
		if (l && e->pid == me && e->leader == l - m->ev &&
		    take(&taken, e->cycles) == NONE)
			return -EINVAL;
	}
	if (take(&taken, a->config == PERF_COUNT_HW_CPU_CYCLES) == NONE)
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
	e->cycles = a->config == PERF_COUNT_HW_CPU_CYCLES;
	e->read_format = a->read_format;
	e->period = a->sample_period;
	e->born = m->now;
	e->start = m->now;
	e->counter = NONE;
	publish(e);
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
			if (e->pid && e->leader == e - m->ev &&
			    e->counter == NONE)
				schedule(e->pid);
		unlock();
	}
	_exit(0);
}

/* before the harness registers its tests, which maps memory */
__attribute__((constructor(101))) static void model_init(void)
{
	const char *s = getenv("X86_PMU_MODEL");
	int len = 0;

	m = __real_mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || !s ||
	    sscanf(s, "%u,%u%n", &m->n, &m->f, &len) < 2 || m->n > 32 ||
	    m->f > 32) {
		fprintf(stderr,
			"x86_pmu_model: X86_PMU_MODEL=N,F[,wd][,leak][,noexclude]\n");
		exit(2);
	}
	m->wd = !strstr(s + len, ",wd") ? NONE : m->f > 1 ? FIXED | 1 : 0;
	m->leak = strstr(s + len, ",leak");
	m->noexclude = strstr(s + len, ",noexclude");
	if (!fork())
		mux_timer(getppid());
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

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	struct event *e;

	lock();
	e = fd >= 0 ? find(fd) : NULL;
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
	if ((char *)addr >= (char *)m->page &&
	    (char *)addr < (char *)(m->page + EVENTS))
		return 0;
	return __real_munmap(addr, len);
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
		v[n++] = count_of(e);
		if (e->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
			v[n++] = m->now - e->born;
		if (e->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
			v[n++] = running(e);
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
	struct event *e;

	struct event *s;

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

/* rdpmc: the caller's event's counter, 0 if none, SIGSEGV for a #GP. */
uint64_t x86_pmu_model_counter(uint32_t idx)
{
	bool gp = knob() <= 0;
	uint64_t v = 0;
	struct event *e;

	if (idx >= m->n && !(idx & FIXED && (idx & ~FIXED) < m->f))
		gp = true;
	lock();
	tick();
	if (idx == m->wd)
		v = m->now * STEP & MASK; /* a CPU event's: never cleared */
	for (e = m->ev; e < m->ev + EVENTS && !gp && idx != m->wd; e++)
		if (e->pid && e->counter == idx &&
		    (e->pid == getpid() || (m->leak && !v)))
			v = pmc_of(e);
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
