// SPDX-License-Identifier: GPL-2.0
/*
 * The suite's counter reader (up_self_read() in user_page.h) over
 * crafted user pages and fake counter and cycle reads: sign extension and
 * offset arithmetic for widths 32, 40, 48 and 64, the counter number asked
 * for, the fallback when there is no index, the bounded seqlock retry, a
 * torn update, and the user-space time and scaling arithmetic.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "kselftest_harness.h"

/* the reader over this file's counter and clock (the unit build's user_page.h) */
static bool have_hw = true;
static uint64_t fake_counter(uint32_t counter);
static uint64_t fake_cycles(void);
#define UP_HAVE_HW_READ have_hw
#define UP_TRAP_SIGNAL 0
#define up_hw_counter fake_counter
#define up_hw_cycles fake_cycles
#include "user_page.h"

#define OFF(f) offsetof(struct perf_event_mmap_page, f)

union page {
	unsigned char b[4096];
	struct perf_event_mmap_page pc; /* capabilities through the bitfield */
	uint64_t align[512];
};

static union page pg;
static uint64_t fake_pmc, fake_cyc;
static uint32_t asked; /* counter number of the last read */
static int passes; /* passes of the read loop: one counter read each */
static int bumps; /* lock updates left to simulate */
static uint32_t bump_step; /* what an update adds to the lock */
static int64_t torn_offset; /* offset an update writes, when bumping */

static void put64(size_t off, uint64_t v)
{
	memcpy(pg.b + off, &v, sizeof(v));
}

static void put32(size_t off, uint32_t v)
{
	memcpy(pg.b + off, &v, sizeof(v));
}

static void put16(size_t off, uint16_t v)
{
	memcpy(pg.b + off, &v, sizeof(v));
}

/* The counter; while bumps last, the kernel updates the page meanwhile. */
static uint64_t fake_counter(uint32_t counter)
{
	asked = counter;
	passes++;
	if (bumps > 0) {
		bumps--;
		put32(OFF(lock), up_pc(pg.b)->lock + bump_step);
		if (torn_offset)
			put64(OFF(offset), torn_offset);
	}
	return fake_pmc;
}

static uint64_t fake_cycles(void)
{
	return fake_cyc;
}

static void page(uint32_t index, int64_t offset, uint16_t width)
{
	memset(&pg, 0, sizeof(pg));
	pg.pc.cap_bit0_is_deprecated = 1;
	pg.pc.cap_user_rdpmc = 1;
	put32(OFF(index), index);
	put64(OFF(offset), offset);
	put16(OFF(pmc_width), width);
	put32(OFF(size), UP_SIZE_HDR);
	bumps = 0;
	bump_step = 2;
	torn_offset = 0;
	asked = ~0U;
}

static int self_read(struct up_count *c)
{
	passes = 0;
	return up_self_read(pg.b, c);
}

/*
 * The kernel's side, as perf_event_update_userpage() and the PMU drivers
 * do it: it programs the counter with prev (-left, for a sampling event,
 * or a raw value) and publishes offset = count - prev.  The hardware then
 * holds prev + delta in width bits (with the bits above set on arm64
 * counters biased to 64 bits); the reader must give count + delta.
 */
static void width_case(struct __test_metadata *_metadata, unsigned int width,
		       uint64_t count, int64_t prev, uint64_t delta, bool bias)
{
	uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
	struct up_count c;

	page(3, (int64_t)(count - (uint64_t)prev), width);
	fake_pmc = ((uint64_t)prev + delta) & mask;
	if (bias)
		fake_pmc |= ~mask;
	ASSERT_EQ(0, self_read(&c));
	EXPECT_EQ(count + delta, c.count)
	TH_LOG("width %u count 0x%llx prev %lld delta %llu pmc 0x%llx", width,
	       (unsigned long long)count, (long long)prev,
	       (unsigned long long)delta, (unsigned long long)fake_pmc);
}

TEST(sign_extension_and_offset)
{
	static const unsigned int widths[] = { 32, 40, 48, 64 };
	static const uint64_t counts[] = {
		0,	    1,
		123456789,  1ULL << 40,
		1ULL << 62, (1ULL << 63) + 5, /* offset with its high bit set */
	};
	static const uint64_t deltas[] = { 0, 1, 999 };
	unsigned int w, i, d, b;
	int64_t lefts[3];

	for (w = 0; w < 4; w++) {
		unsigned int width = widths[w];

		lefts[0] = 1000;
		lefts[1] = 20011;
		lefts[2] = (int64_t)((1ULL << (width - 1)) - 1); /* max/2 */
		for (i = 0; i < ARRAY_SIZE(counts); i++)
			for (d = 0; d < 3; d++)
				for (b = 0; b < 3; b++) {
					/* sampling: preloaded with -left */
					width_case(_metadata, width, counts[i],
						   -lefts[b], deltas[d], false);
					width_case(_metadata, width, counts[i],
						   -lefts[b], deltas[d], true);
					/* counting: a small raw value */
					width_case(_metadata, width, counts[i],
						   lefts[b] / 2, deltas[d],
						   false);
				}
	}
}

/* A reader that skipped the sign extension would be 2^width off. */
TEST(width_matters)
{
	struct up_count c;

	page(1, 1000 + 4096, 48);
	fake_pmc = (-4096ULL + 10) & ((1ULL << 48) - 1);
	ASSERT_EQ(0, self_read(&c));
	EXPECT_EQ(1010ULL, c.count);
	/* the same page claiming 64 bits gives the unextended sum */
	put16(OFF(pmc_width), 64);
	ASSERT_EQ(0, self_read(&c));
	EXPECT_EQ(1010ULL + (1ULL << 48), c.count);
	EXPECT_EQ(0xffffffffffffULL, up_sign_extend(0xffffffffffffULL, 0));
	EXPECT_EQ(~0ULL,
		  up_sign_extend(0x80000000ULL << 8, 40) | 0xffffffffffULL);
}

/* uapi: "pmc = rdpmc(index - 1)"; arm64 index 32 is PMCCNTR_EL0. */
TEST(counter_number)
{
	static const uint32_t idx[] = { 1, 2, 7, 32, 0x40000001 };
	struct up_count c;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(idx); i++) {
		page(idx[i], 0, 64);
		fake_pmc = 42;
		ASSERT_EQ(0, self_read(&c));
		EXPECT_EQ(idx[i] - 1, asked);
		EXPECT_EQ(idx[i], c.index);
		EXPECT_EQ(42ULL, c.count);
	}
}

/* index 0, or no cap_user_rdpmc: no counter read, the caller read()s. */
TEST(no_index_falls_back)
{
	struct up_count c;

	page(0, 77, 64);
	ASSERT_EQ(1, self_read(&c));
	EXPECT_EQ(~0U, asked);
	EXPECT_EQ(77ULL, c.count);
	page(5, 77, 64);
	pg.pc.cap_user_rdpmc = 0;
	ASSERT_EQ(1, self_read(&c));
	EXPECT_EQ(~0U, asked);
	/* no counter read on the architecture */
	page(5, 77, 64);
	have_hw = false;
	ASSERT_EQ(1, self_read(&c));
	have_hw = true;
	EXPECT_EQ(~0U, asked);
}

/* An update during the read: retried, and the value of the new page. */
TEST(seqlock_retry_not_torn)
{
	struct up_count c;

	page(2, 100, 64);
	fake_pmc = 5;
	bumps = 3;
	torn_offset = 200;
	ASSERT_EQ(0, self_read(&c));
	EXPECT_EQ(3, passes - 1); /* retries */
	EXPECT_EQ(205ULL, c.count);
}

/*
 * An odd lock is an update in progress (perf's loop: "pc->lock == seq &&
 * !(seq & 1)"): a reader that takes the page then may see a half-written
 * offset and index.  Stuck odd: bounded, -EAGAIN; odd then even: retried.
 */
TEST(seqlock_odd_is_in_progress)
{
	unsigned char snap[UP_HDR_LEN];
	struct up_count c;

	page(2, 100, 64);
	put32(OFF(lock), 7);
	fake_pmc = 5;
	EXPECT_EQ(-EAGAIN, self_read(&c))
	TH_LOG("a page read under an odd lock was taken as stable");
	EXPECT_EQ(-EAGAIN, up_snapshot(pg.b, snap))
	TH_LOG("a page copied under an odd lock was taken as stable");
	/* the update completes during the read: 7 -> 8, read again */
	bumps = 1;
	bump_step = 1;
	torn_offset = 200;
	ASSERT_EQ(0, self_read(&c));
	EXPECT_EQ(1, passes - 1); /* retries */
	EXPECT_EQ(205ULL, c.count);
}

/* A lock that never holds still: bounded, -EAGAIN, no hang. */
TEST(seqlock_bounded)
{
	struct up_count c;

	page(2, 100, 64);
	bumps = UP_SEQ_RETRIES + 10;
	ASSERT_EQ(-EAGAIN, self_read(&c));
	EXPECT_EQ(UP_SEQ_RETRIES, passes);
	bumps = UP_SEQ_RETRIES - 1;
	ASSERT_EQ(0, self_read(&c));
	EXPECT_EQ(UP_SEQ_RETRIES, passes);
}

/*
 * cap_user_time: enabled += delta, running += delta only with an index
 * (uapi), delta = time_offset + cyc_to_ns(cyc); cap_user_time_short
 * first widens cyc from time_cycles by time_mask.
 */
TEST(user_time)
{
	struct up_count c;
	uint64_t delta;

	page(4, 0, 64);
	pg.pc.cap_user_time = 1;
	put64(OFF(time_enabled), 5000);
	put64(OFF(time_running), 3000);
	put16(OFF(time_shift), 4);
	put32(OFF(time_mult), 40); /* 2.5 ns per cycle */
	put64(OFF(time_offset), (uint64_t)-2500000);
	fake_cyc = 1000000 + 3; /* 2500007.5 ns: floor of the rem part */
	delta = 2500007 - 2500000;
	ASSERT_EQ(0, self_read(&c));
	EXPECT_TRUE(c.has_time);
	EXPECT_EQ(5000 + delta, c.enabled);
	EXPECT_EQ(3000 + delta, c.running);
	put32(OFF(index), 0);
	ASSERT_EQ(1, self_read(&c));
	EXPECT_EQ(5000 + delta, c.enabled);
	EXPECT_EQ(3000ULL, c.running);

	/* short: a 16-bit clock that wrapped since time_cycles 0xfff0 */
	put32(OFF(index), 4);
	pg.pc.cap_user_time_short = 1;
	put64(OFF(time_cycles), 0xfff0);
	put64(OFF(time_mask), 0xffff);
	put64(OFF(time_offset), 0);
	put16(OFF(time_shift), 0);
	put32(OFF(time_mult), 1);
	fake_cyc = 0x10; /* 0x20 cycles after time_cycles */
	ASSERT_EQ(0, self_read(&c));
	EXPECT_EQ(5000ULL + 0xfff0 + 0x20, c.enabled);
}

TEST_HARNESS_MAIN
