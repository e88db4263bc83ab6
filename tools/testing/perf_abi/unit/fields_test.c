// SPDX-License-Identifier: GPL-2.0
/*
 * Crafted pages for the per-field checks of page_fields.h: a page that
 * keeps each promise passes, and one bad page per promise is rejected.
 */
#include <stdlib.h>

#include "../kselftest_harness.h"
#include "page_fields.h"

static void put(unsigned char *pg, size_t off, const void *v, size_t n)
{
	memcpy(pg + off, v, n);
}

static void put64(unsigned char *pg, size_t off, uint64_t v)
{
	put(pg, off, &v, sizeof(v));
}

static void put32(unsigned char *pg, size_t off, uint32_t v)
{
	put(pg, off, &v, sizeof(v));
}

static void put16(unsigned char *pg, size_t off, uint16_t v)
{
	put(pg, off, &v, sizeof(v));
}

/* Set a capability through the bitfield, as the compiler lays it out. */
static void set_caps(unsigned char *pg, bool time, bool rdpmc, bool shrt)
{
	struct perf_event_mmap_page p;

	memcpy(&p, pg, sizeof(p));
	p.cap_bit0_is_deprecated = 1;
	p.cap_user_time = time;
	p.cap_user_rdpmc = rdpmc;
	p.cap_user_time_short = shrt;
	memcpy(pg, &p, sizeof(p));
}

/* A page as a kernel with user time and rdpmc publishes it. */
static void good(unsigned char *pg)
{
	memset(pg, 0, UP_HDR_LEN);
	set_caps(pg, true, true, true);
	put32(pg, UP_LOCK, 4);
	put64(pg, UP_TIME_ENABLED, 2000);
	put64(pg, UP_TIME_RUNNING, 1500);
	put16(pg, UP_PMC_WIDTH, 48);
	put16(pg, UP_TIME_SHIFT, 31);
	put32(pg, UP_TIME_MULT, 1 << 30);
	put64(pg, UP_TIME_MASK, (1ULL << 40) - 1);
}

#define REJECTED(call)                                              \
	do {                                                        \
		struct up_msg m = { 0 };                            \
		EXPECT_FALSE(call) TH_LOG("accepted: " #call);      \
		EXPECT_NE(NULL, m.hint) TH_LOG("no hint: " #call);  \
		TH_LOG("rejected as expected: %s", m.s);            \
	} while (0)

#define ACCEPTED(call)                               \
	do {                                         \
		struct up_msg m = { 0 };             \
		EXPECT_TRUE(call) TH_LOG("%s", m.s); \
	} while (0)

TEST(good_page_passes_every_field_check)
{
	unsigned char a[UP_HDR_LEN], b[UP_HDR_LEN];

	good(a);
	memcpy(b, a, sizeof(b));
	ACCEPTED(up_check_lock(a, b, &m));
	put64(b, UP_TIME_ENABLED, 3000);
	put32(b, UP_LOCK, 6);
	ACCEPTED(up_check_lock(a, b, &m));
	ACCEPTED(up_check_index_none(a, &m));
	ACCEPTED(up_check_times(a, true, 2000, 1500, &m));
	ACCEPTED(up_check_times(a, false, 0, 0, &m));
	ACCEPTED(up_check_time_conv(a, &m));
	ACCEPTED(up_check_time_short(a, &m));
	ACCEPTED(up_check_pmc_width(a, &m));
}

TEST(changed_fields_under_a_still_lock_are_rejected)
{
	unsigned char a[UP_HDR_LEN], b[UP_HDR_LEN];

	good(a);
	memcpy(b, a, sizeof(b));
	put64(b, UP_TIME_RUNNING, 1600);
	REJECTED(up_check_lock(a, b, &m));
	memcpy(b, a, sizeof(b));
	put32(b, UP_INDEX, 3);
	REJECTED(up_check_lock(a, b, &m));
}

TEST(index_on_no_counter_is_rejected)
{
	unsigned char a[UP_HDR_LEN];

	good(a);
	put32(a, UP_INDEX, 1);
	REJECTED(up_check_index_none(a, &m));
}

TEST(bad_times_are_rejected)
{
	unsigned char a[UP_HDR_LEN];

	good(a);
	put64(a, UP_TIME_RUNNING, 2001);
	REJECTED(up_check_times(a, false, 0, 0, &m));
	good(a);
	REJECTED(up_check_times(a, true, 1999, 1500, &m));
	REJECTED(up_check_times(a, true, 2000, 1499, &m));
}

TEST(bad_time_conversion_is_rejected)
{
	unsigned char a[UP_HDR_LEN];

	good(a);
	put32(a, UP_TIME_MULT, 0);
	REJECTED(up_check_time_conv(a, &m));
	good(a);
	put16(a, UP_TIME_SHIFT, 64);
	REJECTED(up_check_time_conv(a, &m));
	/* without cap_user_time the fields mean nothing */
	set_caps(a, false, true, false);
	ACCEPTED(up_check_time_conv(a, &m));
}

TEST(time_mask_not_2n_minus_1_is_rejected)
{
	unsigned char a[UP_HDR_LEN];

	good(a);
	put64(a, UP_TIME_MASK, 0);
	REJECTED(up_check_time_short(a, &m));
	put64(a, UP_TIME_MASK, 0xff00);
	REJECTED(up_check_time_short(a, &m));
	put64(a, UP_TIME_MASK, ~0ULL);
	ACCEPTED(up_check_time_short(a, &m));
}

TEST(pmc_width_out_of_bounds_is_rejected)
{
	unsigned char a[UP_HDR_LEN];

	good(a);
	put32(a, UP_INDEX, 1);
	put16(a, UP_PMC_WIDTH, 0);
	REJECTED(up_check_pmc_width(a, &m));
	put16(a, UP_PMC_WIDTH, 65);
	REJECTED(up_check_pmc_width(a, &m));
	put16(a, UP_PMC_WIDTH, 64);
	ACCEPTED(up_check_pmc_width(a, &m));
	/* index 0: no counter to read, the width means nothing */
	put32(a, UP_INDEX, 0);
	put16(a, UP_PMC_WIDTH, 0);
	ACCEPTED(up_check_pmc_width(a, &m));
}

TEST_HARNESS_MAIN
