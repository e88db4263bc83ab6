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
#define UP_HINT_AUX "aux_offset, aux_size: page-aligned, past the data area"

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

#endif /* __SELFTEST_PERF_PAGE_FIELDS_H */
