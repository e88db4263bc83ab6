// SPDX-License-Identifier: GPL-2.0
/*
 * Crafted pages for the per-field checks of user_page.h: a page that
 * keeps each promise passes, and one bad page per promise is rejected.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "user_page.h"

#define OFF(f) offsetof(struct perf_event_mmap_page, f)

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

/* cap_user_time_zero, through the bitfield */
static void set_time_zero(unsigned char *pg, bool zero)
{
	struct perf_event_mmap_page p;

	memcpy(&p, pg, sizeof(p));
	p.cap_user_time_zero = zero;
	memcpy(pg, &p, sizeof(p));
}

/* A page as a kernel with user time and rdpmc publishes it. */
static void good(unsigned char *pg)
{
	memset(pg, 0, UP_HDR_LEN);
	set_caps(pg, true, true, true);
	put32(pg, OFF(lock), 4);
	put64(pg, OFF(time_enabled), 2000);
	put64(pg, OFF(time_running), 1500);
	put16(pg, OFF(pmc_width), 48);
	put16(pg, OFF(time_shift), 31);
	put32(pg, OFF(time_mult), 1 << 30);
	put64(pg, OFF(time_mask), (1ULL << 40) - 1);
}

/* A rejection gives a reason. */
#define REJECTED(call)                                               \
	do {                                                         \
		struct up_msg m = { 0 };                             \
		EXPECT_FALSE(call) TH_LOG("accepted: " #call);       \
		EXPECT_NE('\0', m.s[0]) TH_LOG("no reason: " #call); \
		TH_LOG("rejected as expected: %s", m.s);             \
	} while (0)

#define ACCEPTED(call)                               \
	do {                                         \
		struct up_msg m = { 0 };             \
		EXPECT_TRUE(call) TH_LOG("%s", m.s); \
	} while (0)

/* The oracle: uapi cap_user_time_zero, "timestamp = time_zero + quot * time_mult + ..." */
static inline uint64_t up_cyc_to_perf_time(const void *pg, uint64_t cyc)
{
	return up_pc(pg)->time_zero +
	       up_cyc_to_ns(up_cyc_short(pg, cyc), up_pc(pg)->time_shift,
			    up_pc(pg)->time_mult);
}

TEST(good_page_passes_every_field_check)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN], b[UP_HDR_LEN];

	good(a);
	memcpy(b, a, sizeof(b));
	ACCEPTED(up_check_lock(a, b, &m));
	put64(b, OFF(time_enabled), 3000);
	put32(b, OFF(lock), 6);
	ACCEPTED(up_check_lock(a, b, &m));
	ACCEPTED(up_check_index_none(a, &m));
	ACCEPTED(up_check_times(a, true, 2000, 1500, &m));
	ACCEPTED(up_check_times(a, false, 0, 0, &m));
	ACCEPTED(up_check_time_conv(a, &m));
}

TEST(changed_fields_under_a_still_lock_are_rejected)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN], b[UP_HDR_LEN];

	good(a);
	memcpy(b, a, sizeof(b));
	put64(b, OFF(time_running), 1600);
	REJECTED(up_check_lock(a, b, &m));
	memcpy(b, a, sizeof(b));
	put32(b, OFF(index), 3);
	REJECTED(up_check_lock(a, b, &m));
}

TEST(index_on_no_counter_is_rejected)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	put32(a, OFF(index), 1);
	REJECTED(up_check_index_none(a, &m));
}

TEST(bad_times_are_rejected)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	put64(a, OFF(time_running), 2001);
	REJECTED(up_check_times(a, false, 0, 0, &m));
	good(a);
	REJECTED(up_check_times(a, true, 1999, 1500, &m));
	REJECTED(up_check_times(a, true, 2000, 1499, &m));
}

TEST(bad_time_conversion_is_rejected)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	put32(a, OFF(time_mult), 0);
	REJECTED(up_check_time_conv(a, &m));
	good(a);
	put16(a, OFF(time_shift), 64);
	REJECTED(up_check_time_conv(a, &m));
	/* without cap_user_time the fields mean nothing */
	set_caps(a, false, true, false);
	ACCEPTED(up_check_time_conv(a, &m));
}

/* cap_user_time_short: time_mask is 2^n - 1 */
TEST(time_mask_not_2n_minus_1_is_rejected)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	put64(a, OFF(time_mask), 0);
	REJECTED(up_check_time_conv(a, &m));
	put64(a, OFF(time_mask), 0xff00);
	REJECTED(up_check_time_conv(a, &m));
	put64(a, OFF(time_mask), ~0ULL);
	ACCEPTED(up_check_time_conv(a, &m));
	/* without cap_user_time_short time_mask means nothing */
	put64(a, OFF(time_mask), 0xff00);
	set_caps(a, true, true, false);
	ACCEPTED(up_check_time_conv(a, &m));
}

/* shift 31, mult 2^30: a cycle is half a nanosecond */
TEST(timestamp_to_cycles)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	set_time_zero(a, true);
	put64(a, OFF(time_zero), 5000);
	EXPECT_EQ(2000ULL, up_perf_time_to_cyc(a, 6000));
	EXPECT_EQ(0ULL, up_perf_time_to_cyc(a, 5000));
	/* and back: the forward conversion of the uapi */
	EXPECT_EQ(6000ULL, up_cyc_to_perf_time(a, 2000));
	/* a zero time_mult converts nothing (up_check_time_conv fails it) */
	put32(a, OFF(time_mult), 0);
	EXPECT_EQ(0ULL, up_perf_time_to_cyc(a, 6000));
}

/*
 * A 3 GHz clock (mult 2^31 / 3, shift 31) at 1000 s: time << time_shift
 * needs 71 bits, the uapi's quot/rem form does not overflow.
 */
TEST(timestamp_to_cycles_past_a_naive_multiply)
{
	const uint64_t time = 1000000000000ULL, zero = 123456789;
	const uint32_t mult = 715827882;
	_Alignas(8) unsigned char a[UP_HDR_LEN];
	uint64_t cyc, naive;

	good(a);
	/* a 64-bit counter: no time_mask below the 42 bits used here */
	set_caps(a, true, true, false);
	set_time_zero(a, true);
	put16(a, OFF(time_shift), 31);
	put32(a, OFF(time_mult), mult);
	put64(a, OFF(time_zero), zero);
	cyc = up_perf_time_to_cyc(a, zero + time);
	naive = (time << 31) / mult;
#ifdef __SIZEOF_INT128__
	EXPECT_EQ((uint64_t)(((unsigned __int128)time << 31) / mult), cyc);
#endif
	EXPECT_NE(naive, cyc);
	/* about 3 cycles a nanosecond */
	EXPECT_LT(2999999999000ULL, cyc);
	EXPECT_GT(3000000003000ULL, cyc);
	/* and back: cyc -> time lands within the nanosecond */
	EXPECT_GE(zero + time, up_cyc_to_perf_time(a, cyc));
	EXPECT_LT(zero + time, up_cyc_to_perf_time(a, cyc + 4));
}

TEST(stamp_between_the_cycle_readings_passes)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	set_time_zero(a, true);
	put64(a, OFF(time_zero), 5000);
	/* stamp 6000 is cycles 2000..2002 */
	ACCEPTED(up_check_stamp_cycles(a, 6000, 1990, 2010, &m));
	ACCEPTED(up_check_stamp_cycles(a, 6000, 2002, 2010, &m));
	ACCEPTED(up_check_stamp_cycles(a, 6000, 1990, 2000, &m));
	/* without cap_user_time_zero there is no way back */
	set_time_zero(a, false);
	ACCEPTED(up_check_stamp_cycles(a, 9999, 1990, 2000, &m));
}

TEST(stamp_outside_the_cycle_readings_is_rejected)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	set_time_zero(a, true);
	put64(a, OFF(time_zero), 5000);
	REJECTED(up_check_stamp_cycles(a, 6000, 2003, 2010, &m));
	REJECTED(up_check_stamp_cycles(a, 6000, 1990, 1999, &m));
	/* a time_zero 1000 ns off */
	put64(a, OFF(time_zero), 4000);
	REJECTED(up_check_stamp_cycles(a, 6000, 1990, 2010, &m));
	/* a time_mult twice what the clock runs at */
	put64(a, OFF(time_zero), 5000);
	put32(a, OFF(time_mult), 1U << 31);
	REJECTED(up_check_stamp_cycles(a, 6000, 1990, 2010, &m));
}

/* time_mask 2^40 - 1: a 40-bit counter, last update 100 cycles to its wrap */
TEST(short_counter_across_its_wrap)
{
	const uint64_t mask = (1ULL << 40) - 1, tc = mask - 99;
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	set_time_zero(a, true);
	put64(a, OFF(time_cycles), tc);
	/* right after the update: the counter reads time_cycles */
	EXPECT_EQ(tc, up_cyc_short(a, tc));
	EXPECT_EQ(tc + 1, up_cyc_short(a, tc + 1));
	/* wrapped past time_mask: 100 cycles to 0, then 50 more */
	EXPECT_EQ(tc + 150, up_cyc_short(a, 50));
	/* bits above the counter's width are not the counter's */
	EXPECT_EQ(tc + 150, up_cyc_short(a, (7ULL << 40) | 50));
	/* perf time keeps going across the wrap */
	EXPECT_EQ(75ULL,
		  up_cyc_to_perf_time(a, 50) - up_cyc_to_perf_time(a, tc));
	/* a stamp 75 ns after time_cycles is the wrapped counter's 50 */
	ACCEPTED(up_check_stamp_cycles(a, up_cyc_to_perf_time(a, tc) + 75, 49,
				       51, &m));
	REJECTED(up_check_stamp_cycles(a, up_cyc_to_perf_time(a, tc) + 75,
				       tc + 160, tc + 170, &m));
	/* without cap_user_time_short the counter is taken whole */
	set_caps(a, true, true, false);
	set_time_zero(a, true);
	EXPECT_EQ(50ULL, up_cyc_short(a, 50));
}

TEST(data_pointers_of_an_unread_buffer_pass)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	put64(a, OFF(data_size), 8192);
	ACCEPTED(up_check_data_ptrs(a, true, &m));
	put64(a, UP_DATA_HEAD, 8192);
	ACCEPTED(up_check_data_ptrs(a, true, &m));
	/* an overwrite or backward buffer runs past its size */
	put64(a, UP_DATA_HEAD, 3 * 8192 + 24);
	ACCEPTED(up_check_data_ptrs(a, false, &m));
}

TEST(data_tail_written_or_unread_data_overwritten_is_rejected)
{
	_Alignas(8) unsigned char a[UP_HDR_LEN];

	good(a);
	put64(a, OFF(data_size), 8192);
	put64(a, OFF(data_tail), 64);
	REJECTED(up_check_data_ptrs(a, true, &m));
	REJECTED(up_check_data_ptrs(a, false, &m));
	put64(a, OFF(data_tail), 0);
	put64(a, UP_DATA_HEAD, 8192 + 8);
	REJECTED(up_check_data_ptrs(a, true, &m));
}

TEST_HARNESS_MAIN
