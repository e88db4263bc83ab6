/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of the perf user page (struct perf_event_mmap_page).
 *
 * The ABI is read here by byte offsets and by the places the C bitfield
 * layout gives the capability bits, so that a test does not merely agree
 * with whatever header it was built against.  Every
 * check is a pure function over a page pointer, shared by the selftests
 * (on a page the kernel mapped) and by unit tests (on crafted pages that
 * each check must reject).
 */
#ifndef __SELFTEST_PERF_USER_PAGE_H
#define __SELFTEST_PERF_USER_PAGE_H

#include <assert.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Byte offsets of the fields, fixed by the ABI (uapi linux/perf_event.h). */
#define UP_LOCK 8
#define UP_INDEX 12
#define UP_OFFSET 16
#define UP_TIME_ENABLED 24
#define UP_TIME_RUNNING 32
#define UP_CAPS 40
#define UP_PMC_WIDTH 48
#define UP_TIME_SHIFT 50
#define UP_TIME_MULT 52
#define UP_TIME_OFFSET 56
#define UP_TIME_ZERO 64
#define UP_SIZE 72
#define UP_TIME_CYCLES 80
#define UP_TIME_MASK 88
#define UP_DATA_HEAD 1024
#define UP_DATA_TAIL 1032
#define UP_DATA_OFFSET 1040
#define UP_DATA_SIZE 1048
#define UP_HDR_LEN 1088 /* through aux_size */

/*
 * capabilities is a C bitfield (uapi linux/perf_event.h): its fields are
 * bits 0, 1, 2... in declaration order, and the compiler allocates them
 * from the least significant bit on little-endian targets, from the most
 * significant one on big-endian targets (cap_bit0 is bit 63 on s390x).
 * UP_CAP_* are the shifts of the fields in the u64, as the ABI places them.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define UP_CAP_SHIFT(n) (63 - (n))
#else
#define UP_CAP_SHIFT(n) (n)
#endif
#define UP_CAP_BIT0 UP_CAP_SHIFT(0)
#define UP_CAP_BIT0_IS_DEPRECATED UP_CAP_SHIFT(1)
#define UP_CAP_USER_RDPMC UP_CAP_SHIFT(2)
#define UP_CAP_USER_TIME UP_CAP_SHIFT(3)
#define UP_CAP_USER_TIME_ZERO UP_CAP_SHIFT(4)
#define UP_CAP_USER_TIME_SHORT UP_CAP_SHIFT(5)

/*
 * size, "Header size up to __reserved[] fields", grows with the struct:
 * each published layout has its own value.  76 when size was added in 3.12
 * (fa7315871046), 96 since 5.9 added time_cycles and time_mask with
 * cap_user_time_short (6c0246a4588d).  A newer kernel may report more,
 * up to data_head at byte 1024.
 */
#define UP_SIZE_MIN 76
#define UP_SIZE_TIME_SHORT 96
/* offsetof(__reserved) of the header the suite is built against */
#define UP_SIZE_HDR offsetof(struct perf_event_mmap_page, __reserved)

/* The commits that made the promises, for a failing test's hint: line. */
#define UP_HINT_CAPS                                                         \
	"capabilities bit 0 = 0, bit 1 = 1 since 3.12: fa7315871046, which " \
	"retired the layout of 860f085b74e9 and the 3.4-3.11 union"
#define UP_HINT_SIZE                                                   \
	"size is offsetof(__reserved): 76 since fa7315871046 (3.12), " \
	"96 since 6c0246a4588d (5.9, cap_user_time_short)"
#define UP_HINT_RESERVED                                              \
	"__reserved up to data_head is never written: c7206205d00a, " \
	"fa7315871046, 6c0246a4588d"
#define UP_HINT_DATA_HEAD "data_head is the u64 at byte 1024 since c7206205d00a"
#define UP_HINT_DATA_AREA "data_offset and data_size since e8c6deac6962 (4.1)"

/* The header in use must place the fields where the ABI does. */
#define UP_ASSERT_OFF(field, off)                                            \
	static_assert(offsetof(struct perf_event_mmap_page, field) == (off), \
		      #field " is not at byte " #off)
UP_ASSERT_OFF(lock, UP_LOCK);
UP_ASSERT_OFF(index, UP_INDEX);
UP_ASSERT_OFF(offset, UP_OFFSET);
UP_ASSERT_OFF(capabilities, UP_CAPS);
UP_ASSERT_OFF(pmc_width, UP_PMC_WIDTH);
UP_ASSERT_OFF(time_mult, UP_TIME_MULT);
UP_ASSERT_OFF(time_zero, UP_TIME_ZERO);
UP_ASSERT_OFF(size, UP_SIZE);
UP_ASSERT_OFF(time_mask, UP_TIME_MASK);
/* uapi: "data_head ... 1k aligned", core asserts it at 1024 since 3.4 */
UP_ASSERT_OFF(data_head, UP_DATA_HEAD);
UP_ASSERT_OFF(data_tail, UP_DATA_TAIL);
UP_ASSERT_OFF(data_offset, UP_DATA_OFFSET);
UP_ASSERT_OFF(data_size, UP_DATA_SIZE);

/*
 * A check's verdict: true when the page holds, else why it does not (s)
 * and the commits that made the promise it checks (hint).
 */
struct up_msg {
	char s[256];
	const char *hint;
};

/* The 6.12 kselftest.h defines __printf(); the 6.1 one does not. */
#ifdef __printf
#define UP_FORMAT_3_4 __printf(3, 4)
#else
#define UP_FORMAT_3_4
#endif

static inline bool UP_FORMAT_3_4 up_fail(struct up_msg *m, const char *hint,
					 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->s, sizeof(m->s), fmt, ap);
	va_end(ap);
	m->hint = hint;
	return false;
}

static inline uint64_t up_u64(const void *pg, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)pg + off, sizeof(v));
	return v;
}

static inline uint32_t up_u32(const void *pg, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)pg + off, sizeof(v));
	return v;
}

static inline uint16_t up_u16(const void *pg, size_t off)
{
	uint16_t v;

	memcpy(&v, (const char *)pg + off, sizeof(v));
	return v;
}

/* The capability at shift UP_CAP_* (a field of the bitfield) */
static inline bool up_cap(const void *pg, int shift)
{
	return (up_u64(pg, UP_CAPS) >> shift) & 1;
}

/* data_head, as the uapi header says to read it: with acquire order. */
static inline uint64_t up_data_head(const void *pg)
{
	const uint64_t *head = (const void *)((const char *)pg + UP_DATA_HEAD);

	return __atomic_load_n(head, __ATOMIC_ACQUIRE);
}

#define UP_SEQ_RETRIES 10000

/*
 * Copy the self-monitoring part of the page under its seqlock (uapi: the
 * "seq = pc->lock; barrier(); ...; barrier(); while (pc->lock != seq)" loop,
 * as strict as perf's own: "pc->lock == seq && !(seq & 1)", an odd lock is
 * an update in progress).  Returns 0, or -EAGAIN when the lock never held
 * still.
 */
static inline int up_snapshot(const void *pg, unsigned char snap[UP_HDR_LEN])
{
	const uint32_t *lock = (const uint32_t *)((const char *)pg + UP_LOCK);
	uint32_t seq;
	int i;

	for (i = 0; i < UP_SEQ_RETRIES; i++) {
		seq = __atomic_load_n(lock, __ATOMIC_ACQUIRE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		memcpy(snap, pg, UP_HDR_LEN);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(lock, __ATOMIC_RELAXED) == seq &&
		    !(seq & 1))
			return 0;
	}
	return -EAGAIN;
}

/* uapi: "cap_bit0 : 1, Always 0, deprecated, see commit 860f085b74e9" */
static inline bool up_check_bit0(const void *pg, struct up_msg *m)
{
	unsigned long long caps = up_u64(pg, UP_CAPS);

	if (up_cap(pg, UP_CAP_BIT0))
		return up_fail(m, UP_HINT_CAPS,
			       "capabilities 0x%llx: cap_bit0 is set", caps);
	return true;
}

/* uapi: "cap_bit0_is_deprecated : 1, Always 1, signals that bit 0 is zero" */
static inline bool up_check_bit1(const void *pg, struct up_msg *m)
{
	unsigned long long caps = up_u64(pg, UP_CAPS);

	if (!up_cap(pg, UP_CAP_BIT0_IS_DEPRECATED))
		return up_fail(m, UP_HINT_CAPS,
			       "capabilities 0x%llx: bit 1 is 0", caps);
	return true;
}

/* Both bits: the 3.12 promise ("Fix capabilities bitfield compatibility"). */
static inline bool up_check_caps(const void *pg, struct up_msg *m)
{
	return up_check_bit0(pg, m) && up_check_bit1(pg, m);
}

/*
 * uapi: "__u32 size; Header size up to __reserved[] fields."  The size of
 * a published layout (76 or 96, or the header's), or a newer layout's,
 * above the header's and below data_head; and the fields the kernel says
 * it uses lie below size (cap_user_time_short: time_cycles, time_mask).
 */
static inline bool up_check_size(const void *pg, struct up_msg *m)
{
	uint32_t size = up_u32(pg, UP_SIZE);
	uint32_t known_max = UP_SIZE_TIME_SHORT;

	if (known_max < UP_SIZE_HDR)
		known_max = UP_SIZE_HDR;
	if (size < UP_SIZE_MIN)
		return up_fail(m, UP_HINT_SIZE, "size %u is below 3.12's %u",
			       size, UP_SIZE_MIN);
	if (size > UP_DATA_HEAD)
		return up_fail(m, UP_HINT_SIZE, "size %u is past data_head",
			       size);
	if (size <= known_max && size != UP_SIZE_MIN &&
	    size != UP_SIZE_TIME_SHORT && size != UP_SIZE_HDR)
		return up_fail(m, UP_HINT_SIZE,
			       "size %u is no layout's (%u, %u, header %u)",
			       size, UP_SIZE_MIN, UP_SIZE_TIME_SHORT,
			       (unsigned int)UP_SIZE_HDR);
	if (up_cap(pg, UP_CAP_USER_TIME_SHORT) && size < UP_SIZE_TIME_SHORT)
		return up_fail(m, UP_HINT_SIZE,
			       "cap_user_time_short set, size %u < %u", size,
			       UP_SIZE_TIME_SHORT);
	return true;
}

/* One kernel, one struct: every page it maps has the same size. */
static inline bool up_check_same_size(const void *pg, const void *other,
				      struct up_msg *m)
{
	uint32_t a = up_u32(pg, UP_SIZE), b = up_u32(other, UP_SIZE);

	if (a != b)
		return up_fail(m, UP_HINT_SIZE,
			       "size %u here, %u on another page", a, b);
	return true;
}

/*
 * uapi: "__reserved[] align to 1k": bytes from size up to data_head are not
 * written by the kernel, and the ring buffer's pages are allocated zeroed.
 */
static inline bool up_check_reserved(const void *pg, struct up_msg *m)
{
	const unsigned char *b = pg;
	uint32_t size = up_u32(pg, UP_SIZE);
	uint32_t from = size, i;

	if (from < UP_SIZE_MIN || from > UP_DATA_HEAD)
		from = UP_SIZE_MIN;
	for (i = from; i < UP_DATA_HEAD; i++)
		if (b[i])
			return up_fail(m, UP_HINT_RESERVED,
				       "reserved byte %u is 0x%02x (size %u)",
				       i, b[i], size);
	return true;
}

/*
 * uapi: "data_offset: where the buffer starts", "data_size: data buffer
 * size" (since 4.1): the data area follows the user page.
 */
static inline bool up_check_data_area(const void *pg, uint64_t page_size,
				      uint64_t data_pages, struct up_msg *m)
{
	unsigned long long off = up_u64(pg, UP_DATA_OFFSET);
	unsigned long long size = up_u64(pg, UP_DATA_SIZE);
	unsigned long long want = data_pages * page_size;

	if (off != page_size)
		return up_fail(m, UP_HINT_DATA_AREA,
			       "data_offset %llu, not the page size %llu", off,
			       (unsigned long long)page_size);
	if (size != want)
		return up_fail(m, UP_HINT_DATA_AREA, "data_size %llu, not %llu",
			       size, want);
	return true;
}

/*
 * data_head at byte 1024 advanced by exactly the bytes of the records the
 * caller produced since it read before (uapi: "data_head: head in the data
 * section").
 */
static inline bool up_check_head_grew(const void *pg, uint64_t before,
				      uint64_t bytes, struct up_msg *m)
{
	unsigned long long head = up_data_head(pg);
	unsigned long long moved = head - before;

	if (moved != bytes)
		return up_fail(m, UP_HINT_DATA_HEAD,
			       "data_head moved %llu (to %llu), records %llu",
			       moved, head, (unsigned long long)bytes);
	return true;
}

/*
 * Walk the records between data_tail and data_head (no wrap is expected:
 * the caller produced less than the data area holds).  Each record is a
 * struct perf_event_header whose size is a non-zero multiple of 8 (uapi:
 * "struct perf_event_header"; core pads records to u64).  The walk must
 * end exactly at data_head.  Record types found are counted in types[]
 * (indexed by type, n_types entries), when types is not NULL.
 */
static inline bool up_check_records(const void *base, unsigned int *types,
				    unsigned int n_types, struct up_msg *m)
{
	const unsigned char *data;
	unsigned long long off = up_u64(base, UP_DATA_OFFSET);
	unsigned long long size = up_u64(base, UP_DATA_SIZE);
	unsigned long long head = up_data_head(base);
	unsigned long long pos = up_u64(base, UP_DATA_TAIL);
	struct perf_event_header h;

	if (!off || !size)
		return up_fail(m, UP_HINT_DATA_AREA,
			       "data_offset %llu, data_size %llu", off, size);
	if (head - pos > size)
		return up_fail(m, UP_HINT_DATA_HEAD,
			       "data_head %llu > data_tail %llu + size %llu",
			       head, pos, size);
	data = (const unsigned char *)base + off;
	while (pos < head) {
		if (head - pos < sizeof(h))
			return up_fail(m, UP_HINT_DATA_HEAD,
				       "data_head %llu in the header at %llu",
				       head, pos);
		memcpy(&h, data + pos % size, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8)
			return up_fail(m, UP_HINT_DATA_HEAD,
				       "record at %llu: size %u, type %u", pos,
				       h.size, h.type);
		if (h.size > head - pos)
			return up_fail(m, UP_HINT_DATA_HEAD,
				       "record at %llu, size %u: past %llu",
				       pos, h.size, head);
		if (types && h.type < n_types)
			types[h.type]++;
		pos += h.size;
	}
	return true;
}

/*
 * The counter as the user page lets a task read it without a syscall, the
 * loop the uapi header documents above struct perf_event_mmap_page.
 */
struct up_count {
	uint64_t count; /* offset + sign-extended counter */
	uint64_t enabled; /* time_enabled (+ delta when has_time) */
	uint64_t running; /* time_running (+ delta when has_time, index) */
	uint64_t pmc; /* the raw counter value read */
	uint32_t index; /* page index: hardware counter + 1, 0 = none */
	uint16_t width; /* pmc_width */
	bool has_time; /* cap_user_time: enabled/running extended */
	int retries; /* seqlock retries the read took */
};

/* uapi pmc_width: "pmc <<= 64 - width; pmc >>= 64 - width; count += pmc" */
static inline uint64_t up_sign_extend(uint64_t pmc, unsigned int width)
{
	if (!width || width >= 64)
		return pmc;
	return (uint64_t)((int64_t)(pmc << (64 - width)) >> (64 - width));
}

/* uapi cap_user_time: "quot = cyc >> time_shift; rem = ...; delta = ..." */
static inline uint64_t up_cyc_to_ns(uint64_t cyc, uint16_t shift, uint32_t mult)
{
	uint64_t quot = cyc >> shift;
	uint64_t rem = cyc & ((1ULL << shift) - 1);

	return quot * mult + ((rem * mult) >> shift);
}

/* uapi cap_user_time_short: "cyc = time_cycles + ((cyc - time_cycles) & time_mask)" */
static inline uint64_t up_cyc_short(const void *pg, uint64_t cyc)
{
	if (!up_cap(pg, UP_CAP_USER_TIME_SHORT))
		return cyc;
	return up_u64(pg, UP_TIME_CYCLES) +
	       ((cyc - up_u64(pg, UP_TIME_CYCLES)) & up_u64(pg, UP_TIME_MASK));
}

/* uapi cap_user_time_zero: "timestamp = time_zero + quot * time_mult + ..." */
static inline uint64_t up_cyc_to_perf_time(const void *pg, uint64_t cyc)
{
	return up_u64(pg, UP_TIME_ZERO) +
	       up_cyc_to_ns(up_cyc_short(pg, cyc), up_u16(pg, UP_TIME_SHIFT),
			    up_u32(pg, UP_TIME_MULT));
}

/*
 * uapi cap_user_time_zero, the way back: "time = timestamp - time_zero;
 * quot = time / time_mult; rem = time % time_mult; cyc = (quot <<
 * time_shift) + (rem << time_shift) / time_mult" (no time << time_shift,
 * which overflows 64 bits after seconds).  With cap_user_time_short the
 * result is a cycle count as up_cyc_short() extends it.
 */
static inline uint64_t up_perf_time_to_cyc(const void *pg, uint64_t timestamp)
{
	uint64_t time = timestamp - up_u64(pg, UP_TIME_ZERO);
	uint16_t shift = up_u16(pg, UP_TIME_SHIFT);
	uint32_t mult = up_u32(pg, UP_TIME_MULT);
	uint64_t quot, rem;

	if (!mult || shift >= 64)
		return 0;
	quot = time / mult;
	rem = time % mult;
	return (quot << shift) + (rem << shift) / mult;
}

/* uapi: "quot = count / running; ... count = quot * enabled + ..." */
static inline uint64_t up_scale(uint64_t count, uint64_t enabled,
				uint64_t running)
{
	if (!running || running == enabled)
		return running ? count : 0;
	return count / running * enabled + count % running * enabled / running;
}

/*
 * Counter and cycle reads, one leaf per architecture.  A leaf defines
 *   UP_HAVE_HW_READ    1: up_hw_counter() reads a counter from user space
 *   UP_TRAP_SIGNAL     the signal a counter read gets when user access is off
 *   up_hw_counter(n)   the counter whose page index is n + 1 (uapi:
 *                      "pmc = rdpmc(index - 1)")
 *   up_hw_cycles()     the cycle counter the page's time_* fields convert
 * An architecture without a leaf gets UP_HAVE_HW_READ 0: the page is still
 * read (times, offset) and the caller falls back to read() for the count.
 */

/* arm64 hardware counter 31, page index 32: PMCCNTR_EL0 (arm_pmuv3.c) */
#define UP_ARM64_CYCLE_COUNTER 31U

/*
 * x86 in either width has one reader (rdpmc); the tests ask UP_ARCH_X86
 * rather than the compiler's names of the two.
 */
#if defined(__x86_64__)
#define UP_ARCH_X86 1
#elif defined(__i386__)
#define UP_ARCH_X86 1
#else
#define UP_ARCH_X86 0
#endif

#if UP_ARCH_X86
/* --- x86: rdpmc, rdtsc --------------------------------------------------- */
#define UP_HAVE_HW_READ 1
#define UP_TRAP_SIGNAL SIGSEGV /* #GP: CR4.PCE clear */
/* rdpmc, ECX = index - 1 (x86_pmu_event_idx() encodes fixed counters) */
static inline uint64_t up_hw_counter(uint32_t counter)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter) : "memory");
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t up_hw_cycles(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}
#elif defined(__aarch64__)
/* --- arm64: mrs PMCCNTR_EL0 / PMEVCNTR<n>_EL0, CNTVCT_EL0 ----------------- */
#define UP_HAVE_HW_READ 1
#define UP_TRAP_SIGNAL SIGILL /* PMUSERENR_EL0 clear: undefined at EL0 */
/* clang-format off */
#define UP_MRS_EVCNTR(n)						\
	case n:								\
		asm volatile("mrs %0, pmevcntr" #n "_el0"		\
			     : "=r"(v) : : "memory");			\
		break

/* PMCCNTR_EL0 for counter 31, else PMEVCNTR<counter>_EL0. */
static inline uint64_t up_hw_counter(uint32_t counter)
{
	uint64_t v = 0;

	switch (counter) {
	case UP_ARM64_CYCLE_COUNTER:
		asm volatile("mrs %0, pmccntr_el0" : "=r"(v) : : "memory");
		break;
	UP_MRS_EVCNTR(0); UP_MRS_EVCNTR(1); UP_MRS_EVCNTR(2);
	UP_MRS_EVCNTR(3); UP_MRS_EVCNTR(4); UP_MRS_EVCNTR(5);
	UP_MRS_EVCNTR(6); UP_MRS_EVCNTR(7); UP_MRS_EVCNTR(8);
	UP_MRS_EVCNTR(9); UP_MRS_EVCNTR(10); UP_MRS_EVCNTR(11);
	UP_MRS_EVCNTR(12); UP_MRS_EVCNTR(13); UP_MRS_EVCNTR(14);
	UP_MRS_EVCNTR(15); UP_MRS_EVCNTR(16); UP_MRS_EVCNTR(17);
	UP_MRS_EVCNTR(18); UP_MRS_EVCNTR(19); UP_MRS_EVCNTR(20);
	UP_MRS_EVCNTR(21); UP_MRS_EVCNTR(22); UP_MRS_EVCNTR(23);
	UP_MRS_EVCNTR(24); UP_MRS_EVCNTR(25); UP_MRS_EVCNTR(26);
	UP_MRS_EVCNTR(27); UP_MRS_EVCNTR(28); UP_MRS_EVCNTR(29);
	UP_MRS_EVCNTR(30);
		/* clang-format on */
	}
	return v;
}

static inline uint64_t up_hw_cycles(void)
{
	uint64_t v;

	asm volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}
#elif defined(__riscv) && __riscv_xlen == 64
#define UP_HAVE_HW_READ 1
#define UP_TRAP_SIGNAL SIGILL /* scounteren bit clear: illegal instruction */
/* clang-format off */
#define UP_CSRR(n, csr)							\
	case n:								\
		asm volatile("csrr %0, " #csr : "=r"(v) : : "memory");	\
		break

/*
 * CSR cycle (0xc00) + counter: riscv_pmu.c riscv_pmu_event_idx() gives the
 * counter's CSR number - 0xc00, plus 1 (cycle, time, instret, hpmcounter3..31
 * are 0xc00..0xc1f).
 */
static inline uint64_t up_hw_counter(uint32_t counter)
{
	uint64_t v = 0;

	switch (counter) {
	UP_CSRR(0, cycle); UP_CSRR(1, time); UP_CSRR(2, instret);
	UP_CSRR(3, hpmcounter3); UP_CSRR(4, hpmcounter4); UP_CSRR(5, hpmcounter5);
	UP_CSRR(6, hpmcounter6); UP_CSRR(7, hpmcounter7); UP_CSRR(8, hpmcounter8);
	UP_CSRR(9, hpmcounter9); UP_CSRR(10, hpmcounter10); UP_CSRR(11, hpmcounter11);
	UP_CSRR(12, hpmcounter12); UP_CSRR(13, hpmcounter13); UP_CSRR(14, hpmcounter14);
	UP_CSRR(15, hpmcounter15); UP_CSRR(16, hpmcounter16); UP_CSRR(17, hpmcounter17);
	UP_CSRR(18, hpmcounter18); UP_CSRR(19, hpmcounter19); UP_CSRR(20, hpmcounter20);
	UP_CSRR(21, hpmcounter21); UP_CSRR(22, hpmcounter22); UP_CSRR(23, hpmcounter23);
	UP_CSRR(24, hpmcounter24); UP_CSRR(25, hpmcounter25); UP_CSRR(26, hpmcounter26);
	UP_CSRR(27, hpmcounter27); UP_CSRR(28, hpmcounter28); UP_CSRR(29, hpmcounter29);
	UP_CSRR(30, hpmcounter30); UP_CSRR(31, hpmcounter31);
		/* clang-format on */
	}
	return v;
}

/* the time CSR: the clock of sched_clock, which the page's time_* convert */
static inline uint64_t up_hw_cycles(void)
{
	uint64_t v;

	asm volatile("csrr %0, time" : "=r"(v) : : "memory");
	return v;
}
#else
/* --- no leaf: the page is read, the count comes from read() -------------- */
#define UP_HAVE_HW_READ 0
#define UP_TRAP_SIGNAL SIGILL
static inline uint64_t up_hw_counter(uint32_t counter)
{
	return counter * 0;
}

static inline uint64_t up_hw_cycles(void)
{
	return 0;
}
#endif

/*
 * The loop itself, over the counter and cycle reads given (the unit tests
 * pass fakes), as strict as perf's (tools/lib/perf/mmap.c
 * perf_mmap__read_self(), and "pc->lock == seq && !(seq & 1)" of the 3.12
 * fix): every field inside the lock, the counter only with cap_user_rdpmc
 * and a non-zero index, a result only from an even lock that held still.
 * Returns 0 with *c read from the hardware counter; 1 when the page offers
 * no user read (no cap_user_rdpmc, index 0 -- legal: the event is not on a
 * counter now -- or no leaf for this architecture), so the caller must
 * read() for the count (the times are still filled); -EAGAIN when the lock
 * never held still within UP_SEQ_RETRIES.
 */
static inline int up_self_read_with(const void *pg, struct up_count *c,
				    uint64_t (*counter)(uint32_t),
				    uint64_t (*cycles)(void), bool have_hw)
{
	const struct perf_event_mmap_page *pc = pg;
	uint64_t caps, cyc, delta;
	uint32_t seq;
	bool rdpmc;

#define UP_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
	for (c->retries = 0; c->retries < UP_SEQ_RETRIES; c->retries++) {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		c->enabled = UP_LOAD(pc->time_enabled);
		c->running = UP_LOAD(pc->time_running);
		caps = UP_LOAD(pc->capabilities);
		c->has_time = caps >> UP_CAP_USER_TIME & 1;
		/* not only when enabled != running: the bracket needs both */
		cyc = c->has_time ? cycles() : 0;
		c->index = UP_LOAD(pc->index);
		c->width = UP_LOAD(pc->pmc_width);
		c->count = UP_LOAD(pc->offset);
		c->pmc = 0;
		rdpmc = have_hw && (caps >> UP_CAP_USER_RDPMC & 1) && c->index;
		if (rdpmc) {
			c->pmc = counter(c->index - 1);
			c->count += up_sign_extend(c->pmc, c->width);
		}
		if (c->has_time) {
			if (caps >> UP_CAP_USER_TIME_SHORT & 1)
				cyc = UP_LOAD(pc->time_cycles) +
				      ((cyc - UP_LOAD(pc->time_cycles)) &
				       UP_LOAD(pc->time_mask));
			delta = UP_LOAD(pc->time_offset) +
				up_cyc_to_ns(cyc, UP_LOAD(pc->time_shift),
					     UP_LOAD(pc->time_mult));
			c->enabled += delta;
			if (c->index)
				c->running += delta;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) == seq &&
		    !(seq & 1))
			return rdpmc ? 0 : 1;
	}
#undef UP_LOAD
	return -EAGAIN;
}

static inline int up_self_read(const void *pg, struct up_count *c)
{
	return up_self_read_with(pg, c, up_hw_counter, up_hw_cycles,
				 UP_HAVE_HW_READ);
}

static inline int up_perf_event_open(struct perf_event_attr *attr, pid_t pid,
				     int cpu, int group, unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

#endif /* __SELFTEST_PERF_USER_PAGE_H */
