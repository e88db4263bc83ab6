/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks of the self-monitoring fields of the perf user page, one promise
 * each, as pure functions over page snapshots (see user_page.h).
 */
#ifndef __SELFTEST_PERF_PAGE_FIELDS_H
#define __SELFTEST_PERF_PAGE_FIELDS_H

#include "user_page.h"

#define UP_HINT_LOCK \
	"lock is the seqlock of the fields (uapi: the pc->lock loop)"
#define UP_HINT_INDEX "index 0: on no counter (uapi: 'if (idx)' before rdpmc)"
#define UP_HINT_TIMES \
	"time_enabled >= time_running (uapi: time event active, on cpu)"
#define UP_HINT_TIME_CONV "cap_user_time: time_shift, time_mult (uapi, 3.12)"
#define UP_HINT_TIME_SHORT \
	"cap_user_time_short: time_mask is 2^n - 1 (uapi, 6c0246a4588d)"
#define UP_HINT_WIDTH "pmc_width: bits of the rdpmc value (uapi cap_user_rdpmc)"
#define UP_HINT_OFFSET "index 0: the count is offset alone (uapi read loop)"
#define UP_HINT_LOCK_STILL \
	"lock moves per page update, none while the event is off (uapi pc->lock)"
#define UP_HINT_TIME_ZERO \
	"cap_user_time_zero: timestamp -> cyc (uapi, c73deb6aecda)"
#define UP_HINT_AUX "aux_offset, aux_size: page-aligned, past the data area"
#define UP_HINT_DATA_PTRS \
	"data_tail is user space's; the kernel will not over-write unread data (uapi)"

/*
 * uapi: the reader retries "while (pc->lock != seq)": when any field the
 * lock guards differs between two settled copies, the lock moved too.
 */
static inline bool up_check_lock(const void *before, const void *after,
				 struct up_msg *m)
{
	uint32_t a = up_u32(before, UP_LOCK), b = up_u32(after, UP_LOCK);
	size_t from = UP_INDEX, to = UP_SIZE;

	if (a == b && memcmp((const char *)before + from,
			     (const char *)after + from, to - from))
		return up_fail(m, UP_HINT_LOCK,
			       "fields changed, lock stayed at %u", a);
	return true;
}

/* An event on no hardware counter (software PMUs) publishes index 0. */
static inline bool up_check_index_none(const void *pg, struct up_msg *m)
{
	uint32_t index = up_u32(pg, UP_INDEX);

	if (index)
		return up_fail(m, UP_HINT_INDEX,
			       "index %u on an event that has no counter",
			       index);
	return true;
}

/*
 * time_running is part of time_enabled; both only grow, so a later read()
 * (have_read) gives at least the page's values.
 */
static inline bool up_check_times(const void *pg, bool have_read,
				  uint64_t enabled, uint64_t running,
				  struct up_msg *m)
{
	unsigned long long e = up_u64(pg, UP_TIME_ENABLED);
	unsigned long long r = up_u64(pg, UP_TIME_RUNNING);

	if (r > e)
		return up_fail(m, UP_HINT_TIMES,
			       "time_running %llu > time_enabled %llu", r, e);
	if (have_read && (e > enabled || r > running))
		return up_fail(m, UP_HINT_TIMES,
			       "page %llu/%llu, later read() %llu/%llu", e, r,
			       (unsigned long long)enabled,
			       (unsigned long long)running);
	return true;
}

/*
 * With cap_user_time, cyc -> ns is "quot * time_mult + (rem * time_mult)
 * >> time_shift": rem is below 2^time_shift, so time_shift < 64, and a
 * zero time_mult would stop the clock.
 */
static inline bool up_check_time_conv(const void *pg, struct up_msg *m)
{
	uint16_t shift = up_u16(pg, UP_TIME_SHIFT);
	uint32_t mult = up_u32(pg, UP_TIME_MULT);

	if (!up_cap(pg, UP_CAP_USER_TIME))
		return true;
	if (shift >= 64 || !mult)
		return up_fail(m, UP_HINT_TIME_CONV,
			       "time_shift %u, time_mult %u", shift, mult);
	return true;
}

/* uapi: "cyc = time_cycles + ((cyc - time_cycles) & time_mask)" */
static inline bool up_check_time_short(const void *pg, struct up_msg *m)
{
	unsigned long long mask = up_u64(pg, UP_TIME_MASK);

	if (!up_cap(pg, UP_CAP_USER_TIME_SHORT))
		return true;
	if (!mask || (mask & (mask + 1)))
		return up_fail(m, UP_HINT_TIME_SHORT,
			       "time_mask 0x%llx is not 2^n - 1", mask);
	return true;
}

/* uapi: "pmc <<= 64 - width; pmc >>= 64 - width": 0 < width <= 64 */
static inline bool up_check_pmc_width(const void *pg, struct up_msg *m)
{
	uint16_t width = up_u16(pg, UP_PMC_WIDTH);

	/* the uapi loop reads a counter only "if (pc->cap_user_rdpmc && idx)" */
	if (!up_cap(pg, UP_CAP_USER_RDPMC) || !up_u32(pg, UP_INDEX))
		return true;
	if (!width || width > 64)
		return up_fail(m, UP_HINT_WIDTH,
			       "pmc_width %u with cap_user_rdpmc", width);
	return true;
}

/*
 * uapi read loop: "count = pc->offset; if (pc->cap_user_rdpmc && index)
 * ... count += pmc": with index 0 the count is offset alone (core:
 * "offset = perf_event_count(); if (index) offset -= prev_count").  A
 * count is not negative, and only grows (RESET updates the page): a
 * read() after the snapshot (have_read) gives at least offset.
 */
static inline bool up_check_offset_idle(const void *pg, bool have_read,
					uint64_t count, struct up_msg *m)
{
	long long off = (int64_t)up_u64(pg, UP_OFFSET);

	if (up_u32(pg, UP_INDEX))
		return true;
	if (off < 0)
		return up_fail(m, UP_HINT_OFFSET, "index 0, offset %lld < 0",
			       off);
	if (have_read && (uint64_t)off > count)
		return up_fail(m, UP_HINT_OFFSET,
			       "index 0, offset %lld > later read() %llu", off,
			       (unsigned long long)count);
	return true;
}

/*
 * The kernel bumps lock once per update of the page (perf_mmap(), RESET,
 * the event's sched in or time edge); an event that is off and left alone
 * gets none: two settled copies of its page have the same lock.
 */
static inline bool up_check_lock_still(const void *before, const void *after,
				       struct up_msg *m)
{
	uint32_t a = up_u32(before, UP_LOCK), b = up_u32(after, UP_LOCK);

	if (a != b)
		return up_fail(m, UP_HINT_LOCK_STILL,
			       "event off, nothing done: lock %u -> %u", a, b);
	return true;
}

/*
 * uapi cap_user_time_zero: a PERF_SAMPLE_TIME stamp converts back to the
 * cycle count it was taken at (up_perf_time_to_cyc()).  The stamp is
 * truncated to the nanosecond, so that count lies in [cyc(stamp),
 * cyc(stamp + 1)], which must meet the readings c0 <= c1 the caller took
 * before and after making the record (extended by cap_user_time_short).
 */
static inline bool up_check_stamp_cycles(const void *pg, uint64_t stamp,
					 uint64_t c0, uint64_t c1,
					 struct up_msg *m)
{
	unsigned long long lo, hi, x0, x1;

	if (!up_cap(pg, UP_CAP_USER_TIME_ZERO))
		return true;
	lo = up_perf_time_to_cyc(pg, stamp);
	hi = up_perf_time_to_cyc(pg, stamp + 1);
	x0 = up_cyc_short(pg, c0);
	x1 = up_cyc_short(pg, c1);
	if (hi < x0 || lo > x1)
		return up_fail(m, UP_HINT_TIME_ZERO,
			       "stamp %llu: cycles %llu..%llu, read %llu..%llu",
			       (unsigned long long)stamp, lo, hi, x0, x1);
	return true;
}

/*
 * cap_user_time_short: whether time_cycles has bits above time_mask.  The
 * uapi does not say it has none (arm64 publishes sched_clock's epoch_cyc,
 * a raw counter reading): for a log line, not a check.
 */
static inline bool up_time_cycles_past_mask(const void *pg)
{
	return up_cap(pg, UP_CAP_USER_TIME_SHORT) &&
	       (up_u64(pg, UP_TIME_CYCLES) & ~up_u64(pg, UP_TIME_MASK));
}

/*
 * uapi data_tail: "user-space writes" it; "When the mapping is PROT_WRITE
 * ... the kernel will not over-write unread data".  On a page whose
 * data_tail user space never wrote, data_tail is 0, and a writable
 * forward buffer (bounded) holds at most data_size bytes from it.
 */
static inline bool up_check_data_ptrs(const void *pg, bool bounded,
				      struct up_msg *m)
{
	unsigned long long tail = up_u64(pg, UP_DATA_TAIL);
	unsigned long long head = up_data_head(pg);
	unsigned long long size = up_u64(pg, UP_DATA_SIZE);

	if (tail)
		return up_fail(m, UP_HINT_DATA_PTRS,
			       "data_tail %llu, never written by user space",
			       tail);
	if (bounded && head > size)
		return up_fail(m, UP_HINT_DATA_PTRS,
			       "data_head %llu > data_tail 0 + data_size %llu",
			       head, size);
	return true;
}

#endif /* __SELFTEST_PERF_PAGE_FIELDS_H */
