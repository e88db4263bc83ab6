/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf user page (struct perf_event_mmap_page, uapi linux/perf_event.h)
 * for the tests of this directory: its ABI facts, a copy taken under its
 * seqlock, and the promises of the uapi header as checks over a page.
 *
 * The checks read the fields through the header in use, whose byte offsets
 * are the ABI's (asserted below), and the capability bits through its
 * bitfield, whose layout is the ABI: cap_bit0 is bit 63 on big-endian
 * targets.
 */
#ifndef __SELFTEST_PERF_USER_PAGE_H
#define __SELFTEST_PERF_USER_PAGE_H

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../kselftest.h"

#define UP_DATA_HEAD 1024 /* uapi: "data_head ... 1k aligned" */
#define UP_HDR_LEN 1088 /* through aux_size */

#define UP_AT(field, off)                                                    \
	static_assert(offsetof(struct perf_event_mmap_page, field) == (off), \
		      #field)
UP_AT(lock, 8);
UP_AT(index, 12);
UP_AT(time_enabled, 24);
UP_AT(time_running, 32);
UP_AT(capabilities, 40);
UP_AT(time_shift, 50);
UP_AT(time_mult, 52);
UP_AT(time_zero, 64);
UP_AT(size, 72);
UP_AT(time_cycles, 80);
UP_AT(time_mask, 88);
UP_AT(data_head, UP_DATA_HEAD);
UP_AT(data_tail, 1032);
UP_AT(data_offset, 1040);
UP_AT(data_size, 1048);
UP_AT(aux_size, UP_HDR_LEN - 8);

/*
 * size, "Header size up to __reserved[] fields": 76 from 3.12, which added
 * it (fa7315871046); 96 from 5.9, which added time_cycles and time_mask
 * (6c0246a4588d); a newer layout's is larger, and below data_head.
 */
#define UP_SIZE_MIN 76
#define UP_SIZE_TIME_SHORT 96
#define UP_SIZE_HDR offsetof(struct perf_event_mmap_page, __reserved)

/* A check's verdict: false, with why in s, when the page breaks a promise. */
struct up_msg {
	char s[256];
};

static inline bool up_fail(struct up_msg *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->s, sizeof(m->s), fmt, ap);
	va_end(ap);
	return false;
}

static inline const struct perf_event_mmap_page *up_pc(const void *pg)
{
	return pg;
}

/* data_head, read as the uapi says: with acquire order */
static inline uint64_t up_data_head(const void *pg)
{
	return __atomic_load_n(&up_pc(pg)->data_head, __ATOMIC_ACQUIRE);
}

#define UP_SEQ_RETRIES 10000

/*
 * Copy the page's header under its seqlock: the uapi loop retries "while
 * (pc->lock != seq)"; a copy is also refused while seq is odd, as
 * perf_event_update_userpage() bumps lock before and after an update.
 * Returns 0, or -EAGAIN when the lock never held still.
 */
static inline int up_snapshot(const void *pg, void *snap)
{
	const uint32_t *lock = &up_pc(pg)->lock;
	uint32_t seq;
	int i;

	for (i = 0; i < UP_SEQ_RETRIES; i++) {
		seq = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
		memcpy(snap, pg, UP_HDR_LEN);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(lock, __ATOMIC_RELAXED) == seq &&
		    !(seq & 1))
			return 0;
	}
	return -EAGAIN;
}

/*
 * uapi: "cap_bit0: Always 0, deprecated, see commit 860f085b74e9" and
 * "cap_bit0_is_deprecated: Always 1, signals that bit 0 is zero"
 * (fa7315871046, 3.12).
 */
static inline bool up_check_caps(const void *pg, struct up_msg *m)
{
	unsigned long long caps = up_pc(pg)->capabilities;

	if (up_pc(pg)->cap_bit0)
		return up_fail(m, "capabilities 0x%llx: cap_bit0 is set", caps);
	if (!up_pc(pg)->cap_bit0_is_deprecated)
		return up_fail(m, "capabilities 0x%llx: bit 1 is 0", caps);
	return true;
}

/*
 * size is a published layout's: 76 from 3.12, 96 from 5.9, the header's,
 * or a newer struct's, 8-byte aligned below data_head.  It is at least
 * promised, what the running kernel's release had, and at least 96 with
 * cap_user_time_short, whose fields lie below it.  x86 never sets that
 * bit: there only promised catches a 5.9 or later kernel back at 76.
 */
static inline bool up_check_size(const void *pg, uint32_t promised,
				 struct up_msg *m)
{
	uint32_t size = up_pc(pg)->size;

	if (size != UP_SIZE_MIN && size != UP_SIZE_TIME_SHORT &&
	    (size < UP_SIZE_HDR || size >= UP_DATA_HEAD || size % 8))
		return up_fail(m, "size %u is no layout's (%u, %u, %zu..%u)",
			       size, UP_SIZE_MIN, UP_SIZE_TIME_SHORT,
			       UP_SIZE_HDR, UP_DATA_HEAD - 8);
	if (size < promised)
		return up_fail(m, "size %u, below this release's %u", size,
			       promised);
	if (up_pc(pg)->cap_user_time_short && size < UP_SIZE_TIME_SHORT)
		return up_fail(m, "cap_user_time_short with size %u", size);
	return true;
}

/* uapi: __reserved "align to 1k": from size up to data_head all zero */
static inline bool up_check_reserved(const void *pg, struct up_msg *m)
{
	const unsigned char *b = pg;
	uint32_t i = up_pc(pg)->size;

	if (i < UP_SIZE_MIN || i > UP_DATA_HEAD)
		i = UP_SIZE_MIN;
	for (; i < UP_DATA_HEAD; i++)
		if (b[i])
			return up_fail(m, "reserved byte %u is 0x%02x", i,
				       b[i]);
	return true;
}

/* uapi data_offset, data_size (e8c6deac6962): the area after the page */
static inline bool up_check_data_area(const void *pg, uint64_t page_size,
				      uint64_t data_pages, struct up_msg *m)
{
	unsigned long long off = up_pc(pg)->data_offset;
	unsigned long long size = up_pc(pg)->data_size;

	if (off != page_size)
		return up_fail(m, "data_offset %llu, page size %llu", off,
			       (unsigned long long)page_size);
	if (size != data_pages * page_size)
		return up_fail(m, "data_size %llu for %llu data pages", size,
			       (unsigned long long)data_pages);
	return true;
}

/*
 * uapi data_tail: user space writes it; "When the mapping is PROT_WRITE
 * ... the kernel will not over-write unread data".  With data_tail never
 * written it is 0, and a writable forward buffer (bounded) holds at most
 * data_size bytes past it.
 */
static inline bool up_check_data_ptrs(const void *pg, bool bounded,
				      struct up_msg *m)
{
	unsigned long long tail = up_pc(pg)->data_tail;
	unsigned long long head = up_data_head(pg);
	unsigned long long size = up_pc(pg)->data_size;

	if (tail)
		return up_fail(m, "data_tail %llu, never written", tail);
	if (bounded && head > size)
		return up_fail(m, "data_head %llu past data_tail 0 + %llu",
			       head, size);
	return true;
}

/*
 * uapi: "index: hardware event identifier", used "if (idx)": a software
 * event is on no hardware counter and publishes 0.
 */
static inline bool up_check_index_none(const void *pg, struct up_msg *m)
{
	uint32_t index = up_pc(pg)->index;

	if (index)
		return up_fail(m, "index %u on an event with no counter",
			       index);
	return true;
}

/*
 * uapi: time_enabled is the time the event was enabled, time_running the
 * part of it spent on a cpu: running <= enabled.  Both only grow, so a
 * read() after the copy (have_read) gives at least the page's values.
 */
static inline bool up_check_times(const void *pg, bool have_read,
				  uint64_t enabled, uint64_t running,
				  struct up_msg *m)
{
	unsigned long long e = up_pc(pg)->time_enabled;
	unsigned long long r = up_pc(pg)->time_running;

	if (r > e)
		return up_fail(m, "time_running %llu > time_enabled %llu", r,
			       e);
	if (have_read && (e > enabled || r > running))
		return up_fail(m, "page %llu/%llu, later read() %llu/%llu", e,
			       r, (unsigned long long)enabled,
			       (unsigned long long)running);
	return true;
}

/*
 * uapi cap_user_time: "quot = cyc >> time_shift; rem = cyc & ((1 <<
 * time_shift) - 1); delta = time_offset + quot * time_mult + ((rem *
 * time_mult) >> time_shift)": a shift below 64 and a non-zero mult (a zero
 * one stops the clock); cap_user_time_short: time_mask is 2^n - 1.
 */
static inline bool up_check_time_conv(const void *pg, struct up_msg *m)
{
	uint16_t shift = up_pc(pg)->time_shift;
	uint32_t mult = up_pc(pg)->time_mult;
	unsigned long long mask = up_pc(pg)->time_mask;

	if (up_pc(pg)->cap_user_time && (shift >= 64 || !mult))
		return up_fail(m, "cap_user_time, time_shift %u, time_mult %u",
			       shift, mult);
	if (up_pc(pg)->cap_user_time_short && (!mask || (mask & (mask + 1))))
		return up_fail(m, "time_mask 0x%llx is not 2^n - 1", mask);
	return true;
}

/*
 * The fields the uapi loop reads under lock, index to time_offset: when
 * any changed between two settled copies, lock moved too.
 */
static inline bool up_check_lock(const void *before, const void *after,
				 struct up_msg *m)
{
	uint32_t a = up_pc(before)->lock;

	if (a == up_pc(after)->lock &&
	    memcmp(&up_pc(before)->index, &up_pc(after)->index,
		   offsetof(struct perf_event_mmap_page, size) -
			   offsetof(struct perf_event_mmap_page, index)))
		return up_fail(m, "fields changed, lock stayed at %u", a);
	return true;
}

/*
 * uapi data_head: "head in the data section": it advanced by exactly the
 * bytes of the records written since it read before.
 */
static inline bool up_check_head_grew(const void *pg, uint64_t before,
				      uint64_t bytes, struct up_msg *m)
{
	unsigned long long head = up_data_head(pg);

	if (head - before != bytes)
		return up_fail(m, "data_head %llu -> %llu, records %llu bytes",
			       (unsigned long long)before, head,
			       (unsigned long long)bytes);
	return true;
}

/*
 * Walk the records from data_tail to data_head: each a struct
 * perf_event_header of a non-zero size that is a multiple of 8, the last
 * ending exactly at data_head.  types[type] counts them (n_types entries).
 */
static inline bool up_check_records(const void *pg, unsigned int *types,
				    unsigned int n_types, struct up_msg *m)
{
	unsigned long long size = up_pc(pg)->data_size;
	unsigned long long head = up_data_head(pg);
	unsigned long long pos = up_pc(pg)->data_tail;
	const unsigned char *data;
	struct perf_event_header h;

	if (!size || !up_pc(pg)->data_offset)
		return up_fail(m, "no data area (data_size %llu)", size);
	if (head - pos > size)
		return up_fail(m, "data_head %llu past data_tail %llu + %llu",
			       head, pos, size);
	data = (const unsigned char *)pg + up_pc(pg)->data_offset;
	while (pos < head) {
		if (head - pos < sizeof(h))
			return up_fail(m,
				       "data_head %llu inside a header at %llu",
				       head, pos);
		memcpy(&h, data + pos % size, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > head - pos)
			return up_fail(m, "record at %llu: size %u, type %u",
				       pos, h.size, h.type);
		if (h.type < n_types)
			types[h.type]++;
		pos += h.size;
	}
	return true;
}

/* uapi pmc_width: "pmc <<= 64 - width; pmc >>= 64 - width; count += pmc" */
static inline uint64_t up_sign_extend(uint64_t pmc, unsigned int width)
{
	if (!width || width >= 64)
		return pmc;
	return (uint64_t)((int64_t)(pmc << (64 - width)) >> (64 - width));
}

/* uapi cap_user_time: cycles to nanoseconds by time_shift and time_mult */
static inline uint64_t up_cyc_to_ns(uint64_t cyc, uint16_t shift, uint32_t mult)
{
	uint64_t rem = shift < 64 ? cyc & ((1ULL << shift) - 1) : 0;

	return shift < 64 ? (cyc >> shift) * mult + ((rem * mult) >> shift) : 0;
}

/* uapi cap_user_time_short: "cyc = time_cycles + ((cyc - time_cycles) & time_mask)" */
static inline uint64_t up_cyc_short(const void *pg, uint64_t cyc)
{
	uint64_t base = up_pc(pg)->time_cycles;

	if (!up_pc(pg)->cap_user_time_short)
		return cyc;
	return base + ((cyc - base) & up_pc(pg)->time_mask);
}

/*
 * uapi cap_user_time_zero, the way back: "time = timestamp - time_zero;
 * quot = time / time_mult; rem = time % time_mult; cyc = (quot <<
 * time_shift) + (rem << time_shift) / time_mult".
 */
static inline uint64_t up_perf_time_to_cyc(const void *pg, uint64_t stamp)
{
	uint64_t time = stamp - up_pc(pg)->time_zero;
	uint16_t shift = up_pc(pg)->time_shift;
	uint32_t mult = up_pc(pg)->time_mult;

	if (!mult || shift >= 64)
		return 0;
	return ((time / mult) << shift) + ((time % mult) << shift) / mult;
}

/*
 * A PERF_SAMPLE_TIME stamp converted back to cycles (truncated to the
 * nanosecond: [cyc(stamp), cyc(stamp + 1)]) meets the cycle readings
 * c0 <= c1 taken before and after the record was made.
 */
static inline bool up_check_stamp_cycles(const void *pg, uint64_t stamp,
					 uint64_t c0, uint64_t c1,
					 struct up_msg *m)
{
	unsigned long long lo, hi, x0, x1;

	if (!up_pc(pg)->cap_user_time_zero)
		return true;
	lo = up_perf_time_to_cyc(pg, stamp);
	hi = up_perf_time_to_cyc(pg, stamp + 1);
	x0 = up_cyc_short(pg, c0);
	x1 = up_cyc_short(pg, c1);
	if (hi < x0 || lo > x1)
		return up_fail(m,
			       "stamp %llu: cycles %llu..%llu, read %llu..%llu",
			       (unsigned long long)stamp, lo, hi, x0, x1);
	return true;
}

/*
 * Counter and clock reads, one leaf per architecture:
 *   UP_HAVE_HW_READ   1 where up_hw_counter() reads a counter from user space
 *   UP_TRAP_SIGNAL    what such a read gets while user access is off
 *   up_hw_counter(n)  the counter the page publishes as index n + 1
 *   up_hw_cycles()    the clock the page's time_* fields convert
 * Elsewhere the page's times are still read and the count comes from read().
 */
#if defined(__aarch64__)
#define UP_HAVE_HW_READ 1
#define UP_TRAP_SIGNAL SIGILL /* PMUSERENR_EL0 clear: undefined at EL0 */
/*
 * Counter 31 is PMCCNTR_EL0, n < 31 PMEVCNTR<n>_EL0, read through
 * PMSELR_EL0 (user access sets PMUSERENR_EL0.ER, which opens both): a
 * switch of task in between reschedules its events, which moves lock.
 */
static inline uint64_t up_hw_counter(uint32_t n)
{
	uint64_t v;

	if (n == 31) {
		asm volatile("mrs %0, pmccntr_el0" : "=r"(v) : : "memory");
		return v;
	}
	asm volatile("msr pmselr_el0, %1\n\tisb\n\tmrs %0, pmxevcntr_el0"
		     : "=r"(v)
		     : "r"((uint64_t)n)
		     : "memory");
	return v;
}

static inline uint64_t up_hw_cycles(void)
{
	uint64_t v;

	asm volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}
#elif defined(__x86_64__) || defined(__i386__)
#define UP_X86 1
#define UP_HAVE_HW_READ 1
#define UP_TRAP_SIGNAL SIGSEGV /* CR4.PCE clear: #GP */
static inline uint64_t up_hw_counter(uint32_t n)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(n) : "memory");
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t up_hw_cycles(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}
#elif defined(__riscv) && __riscv_xlen == 64
#define UP_HAVE_HW_READ 1
#define UP_TRAP_SIGNAL SIGILL /* scounteren clear: illegal instruction */
/*
 * Counter n is CSR 0xc00 + n (cycle, time, instret, hpmcounter3..31):
 * riscv_pmu_event_idx() publishes it as n + 1.  A CSR number is part of
 * the instruction: a table of 32 "csrr; j" pairs, 8 bytes each, jumped
 * into at n.
 */
static inline uint64_t up_hw_counter(uint32_t n)
{
	uint64_t v = 0;

	if (n < 32)
		asm volatile(".option push\n\t.option norvc\n\t"
			     "lla t0, 1f\n\tslli t1, %1, 3\n\t"
			     "add t0, t0, t1\n\tjr t0\n1:\n\t"
			     ".set up_csr, 0xc00\n\t.rept 32\n\t"
			     "csrr %0, up_csr\n\tj 2f\n\t"
			     ".set up_csr, up_csr + 1\n\t.endr\n2:\n\t"
			     ".option pop\n\t"
			     : "=r"(v)
			     : "r"((uint64_t)n)
			     : "t0", "t1", "memory");
	return v;
}

static inline uint64_t up_hw_cycles(void)
{
	uint64_t v;

	asm volatile("csrr %0, time" : "=r"(v) : : "memory");
	return v;
}
#else
#define UP_HAVE_HW_READ 0
#define UP_TRAP_SIGNAL 0
static inline uint64_t up_hw_counter(uint32_t n)
{
	return 0;
}

static inline uint64_t up_hw_cycles(void)
{
	return 0;
}
#endif

/* What one pass of the read loop saw. */
struct up_count {
	uint64_t count; /* offset, + the counter when read */
	uint64_t enabled, running; /* extended by the clock when has_time */
	uint64_t pmc; /* the raw counter value */
	uint32_t index; /* hardware counter + 1, 0: none */
	uint16_t width; /* pmc_width */
	bool has_time; /* cap_user_time */
};

/*
 * The read loop documented above struct perf_event_mmap_page: every field
 * under lock, the counter only "if (pc->cap_user_rdpmc && index)", a copy
 * only from an even lock that held still.  With cap_user_time it extends
 * both times by the clock, whether or not enabled != running (where the
 * uapi loop needs them for scaling): the tests bracket them with read().
 * Returns 0 with the counter read, 1 when the page offers no user read
 * (the caller must read() the count), -EAGAIN when lock never settled.
 */
static inline int up_self_read(const void *pg, struct up_count *c)
{
	const struct perf_event_mmap_page *pc = pg;
	uint64_t cyc = 0, delta;
	uint32_t seq;
	bool rdpmc;
	int i;

	for (i = 0; i < UP_SEQ_RETRIES; i++) {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		c->enabled = pc->time_enabled;
		c->running = pc->time_running;
		c->has_time = pc->cap_user_time;
		if (c->has_time)
			cyc = up_hw_cycles();
		c->index = pc->index;
		c->width = pc->pmc_width;
		c->count = pc->offset;
		c->pmc = 0;
		rdpmc = UP_HAVE_HW_READ && pc->cap_user_rdpmc && c->index;
		if (rdpmc) {
			c->pmc = up_hw_counter(c->index - 1);
			c->count += up_sign_extend(c->pmc, c->width);
		}
		if (c->has_time) {
			if (pc->cap_user_time_short)
				cyc = pc->time_cycles +
				      ((cyc - pc->time_cycles) & pc->time_mask);
			delta = pc->time_offset + up_cyc_to_ns(cyc,
							       pc->time_shift,
							       pc->time_mult);
			c->enabled += delta;
			if (c->index)
				c->running += delta;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) == seq &&
		    !(seq & 1))
			return rdpmc ? 0 : 1;
	}
	return -EAGAIN;
}

/* The number a sysfs, procfs or tracefs file holds, or -1 (none, empty). */
static inline int up_read_int(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) <= 0)
		buf[0] = '\0';
	close(fd);
	return buf[0] ? atoi(buf) : -1;
}

/*
 * A PMU that cannot leave the kernel out (PERF_PMU_CAP_NO_EXCLUDE: riscv
 * without Sscofpmf or in legacy mode, 32-bit ARM PMUs with no event
 * filter) refuses an exclude_* event with EINVAL: EOPNOTSUPP when the same
 * event opens without them, or is refused with EACCES.  Elsewhere EINVAL
 * stays an error.
 */
static inline int up_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				     int cpu, int group, unsigned long flags)
{
	int fd = syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
#if defined(__riscv) || defined(__arm__)
	struct perf_event_attr all = *attr;

	if (fd >= 0 || errno != EINVAL || attr->type != PERF_TYPE_HARDWARE ||
	    !(attr->exclude_kernel || attr->exclude_hv))
		return fd;
	all.exclude_kernel = 0;
	all.exclude_hv = 0;
	fd = syscall(__NR_perf_event_open, &all, pid, cpu, group, flags);
	if (fd >= 0)
		close(fd);
	errno = fd >= 0 || errno == EACCES ? EOPNOTSUPP : EINVAL;
	fd = -1;
#endif
	return fd;
}

/*
 * User access to the counters has a knob per core PMU: x86 rdpmc (cpu, or
 * cpu_core and cpu_atom on a hybrid part; sysfs-bus-event_source-devices-
 * rdpmc), arm64 and riscv kernel.perf_user_access (admin-guide/sysctl/
 * kernel.rst).  A program whose tests depend on their values holds them
 * locked for its whole run, shared to read them, exclusive to change them:
 * overlapping runs take turns, and a lock dies with its holder.
 */
#define UP_MAX_KNOBS 8

struct up_knob {
	char path[128];
	int start; /* the value found, -1 unreadable */
	int set; /* the value this run wrote, -1 none */
};

static struct up_knob up_knobs[UP_MAX_KNOBS];
static int up_n_knobs;

static inline void up_knobs_lock(int op)
{
	glob_t g;
	size_t i;
	int fd;

	glob("/sys/bus/event_source/devices/*/rdpmc", 0, NULL, &g);
	glob("/proc/sys/kernel/perf_user_access", GLOB_APPEND, NULL, &g);
	for (i = 0; i < g.gl_pathc && up_n_knobs < UP_MAX_KNOBS; i++) {
		fd = open(g.gl_pathv[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		flock(fd, op); /* held until exit, where files can be locked */
		snprintf(up_knobs[up_n_knobs].path, sizeof(up_knobs[0].path),
			 "%s", g.gl_pathv[i]);
		up_knobs[up_n_knobs].start = up_read_int(g.gl_pathv[i]);
		up_knobs[up_n_knobs++].set = -1;
	}
	globfree(&g);
}

/* A knob's value (0 to 9) written; async-signal-safe */
static inline int up_knob_write(const char *path, int v)
{
	char buf[2] = { '0' + v, '\n' };
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return -1;
	ok = write(fd, buf, sizeof(buf)) == sizeof(buf);
	close(fd);
	return ok ? 0 : -1;
}

/* True when every knob found allows user reads of a mapped event */
static inline bool up_user_access_on(void)
{
	int i;

	for (i = 0; i < up_n_knobs; i++)
		if (up_read_int(up_knobs[i].path) <= 0)
			return false;
	return up_n_knobs > 0;
}

/*
 * perf_event_open() errors that mean "not on this machine": no such PMU or
 * event (ENOENT, ENODEV, EOPNOTSUPP), no free counter or slot (ENOSPC),
 * not permitted (EACCES, EPERM).  Any other error is a failure.
 */
static inline bool up_refused(int err)
{
	return err == ENOENT || err == ENODEV || err == EOPNOTSUPP ||
	       err == ENOSPC || err == EACCES || err == EPERM;
}

/*
 * A test SKIPs with one reason wherever it skips (a lab's parser makes it
 * part of the test's name): what it needs, never why this machine said no.
 */
#define UP_PARANOID_TASK "perf_event_paranoid <= 2 or CAP_PERFMON"
#define UP_PARANOID_CPU "perf_event_paranoid <= 0 or CAP_PERFMON"
#define UP_PARANOID_KERNEL "perf_event_paranoid <= 1 or CAP_PERFMON"
#define UP_NEED_TASK "needs " UP_PARANOID_TASK

#endif /* __SELFTEST_PERF_USER_PAGE_H */
