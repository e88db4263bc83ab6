// SPDX-License-Identifier: GPL-2.0
/*
 * Crafted user pages fed to the suite's up_check_*() functions: each bad
 * page must be rejected with a reason, and a good page accepted by all, so
 * a check that cannot fail (or cannot pass) shows up here.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "user_page.h"

#define OFF(f) offsetof(struct perf_event_mmap_page, f)

#define PAGE 4096
#define DATA 4096

/*
 * Every page is built through bitfields as the compiler lays them out for
 * the target, never by bit numbers: on big-endian targets cap_bit0 is the
 * top bit of capabilities, and the checks must agree.
 */

/* The header of a 3.4-3.11 kernel: every cap_usr_* field is bit 0. */
struct union_page {
	__u32 version, compat_version, lock, index;
	__s64 offset;
	__u64 time_enabled, time_running;
	union {
		__u64 capabilities;
		__u64 cap_usr_time : 1, cap_usr_rdpmc : 1, cap_____res : 62;
	};
};

/* The header of 3.12-rc1 (860f085b74e9 and time_zero): no bit-1 meaning. */
struct rc1_page {
	__u32 version, compat_version, lock, index;
	__s64 offset;
	__u64 time_enabled, time_running;
	union {
		__u64 capabilities;
		struct {
			__u64 cap_usr_time : 1, cap_usr_rdpmc : 1,
				cap_usr_time_zero : 1, cap_____res : 61;
		};
	};
};

union buf {
	unsigned char b[PAGE + DATA];
	struct perf_event_mmap_page pg;
	uint64_t align[(PAGE + DATA) / 8];
};

static void put64(union buf *p, size_t off, uint64_t v)
{
	memcpy(p->b + off, &v, sizeof(v));
}

static void put32(union buf *p, size_t off, uint32_t v)
{
	memcpy(p->b + off, &v, sizeof(v));
}

/* What a 6.x kernel maps for a software event: bit 1 set, size 96. */
static union buf *good_page(void)
{
	union buf *p = calloc(1, sizeof(*p));

	p->pg.cap_bit0_is_deprecated = 1;
	p->pg.size = UP_SIZE_HDR;
	p->pg.time_mask = ~0ULL; /* a field below size: not reserved */
	p->pg.data_offset = PAGE;
	p->pg.data_size = DATA;
	return p;
}

/* Append a record of size bytes at data offset pos; return the new end. */
static uint64_t put_record(union buf *p, uint64_t pos, uint32_t type,
			   uint16_t size)
{
	struct perf_event_header h = { .type = type, .size = size };

	memcpy(p->b + PAGE + pos, &h, sizeof(h));
	return pos + size;
}

/* A rejection gives a reason. */
#define EXPECT_REJECTED(call)                                        \
	do {                                                         \
		struct up_msg m = { 0 };                             \
		EXPECT_FALSE(call) TH_LOG("accepted: " #call);       \
		EXPECT_NE('\0', m.s[0]) TH_LOG("no reason: " #call); \
		TH_LOG("rejected as expected: %s", m.s);             \
	} while (0)

#define EXPECT_ACCEPTED(call)                        \
	do {                                         \
		struct up_msg m = { 0 };             \
		EXPECT_TRUE(call) TH_LOG("%s", m.s); \
	} while (0)

TEST(good_page_passes_every_check)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	union buf *p = good_page();
	uint64_t end;

	end = put_record(p, 0, PERF_RECORD_COMM, 24);
	end = put_record(p, end, PERF_RECORD_FORK, 32);
	put64(p, UP_DATA_HEAD, end);
	EXPECT_ACCEPTED(up_check_caps(p->b, &m));
	EXPECT_ACCEPTED(up_check_size(p->b, UP_SIZE_MIN, &m));
	EXPECT_ACCEPTED(up_check_reserved(p->b, &m));
	EXPECT_ACCEPTED(up_check_data_area(p->b, PAGE, 1, &m));
	EXPECT_ACCEPTED(up_check_head_grew(p->b, 0, 56, &m));
	EXPECT_ACCEPTED(up_check_records(p->b, types, PERF_RECORD_MAX, &m));
	free(p);
}

/* The capabilities a page has when only the field named is set. */
static uint64_t caps_of(unsigned int field)
{
	struct perf_event_mmap_page pg = { 0 };

	switch (field) {
	case 0:
		pg.cap_bit0 = 1;
		break;
	case 1:
		pg.cap_bit0_is_deprecated = 1;
		break;
	case 2:
		pg.cap_user_rdpmc = 1;
		break;
	case 3:
		pg.cap_user_time = 1;
		break;
	case 4:
		pg.cap_user_time_zero = 1;
		break;
	case 5:
		pg.cap_user_time_short = 1;
		break;
	}
	return pg.capabilities;
}

/*
 * The checks read the capabilities through the header's named bitfields,
 * and the pages here set them the same way: on this target (bit 63 down
 * on big-endian) each field is one bit of capabilities, its own.
 */
TEST(capability_fields_are_distinct_bits)
{
	static const char *const name[] = {
		"cap_bit0",	      "cap_bit0_is_deprecated",
		"cap_user_rdpmc",     "cap_user_time",
		"cap_user_time_zero", "cap_user_time_short",
	};
	uint64_t seen = 0, caps;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(name); i++) {
		caps = caps_of(i);
		EXPECT_EQ(1, __builtin_popcountll(caps))
		TH_LOG("%s: capabilities 0x%llx", name[i],
		       (unsigned long long)caps);
		EXPECT_EQ(0ULL, seen & caps)
		TH_LOG("%s: capabilities 0x%llx, a bit of an earlier field",
		       name[i], (unsigned long long)caps);
		seen |= caps;
	}
}

/*
 * The old layouts below are bitfields too, laid out by the same rules:
 * each of their fields lands on the bit of the ABI's field at its place
 * (3.4-3.11: all on bit 0; 3.12-rc1: bits 0, 1, 2 in order).
 */
TEST(old_layouts_land_on_the_abi_bits)
{
	struct union_page u = { 0 };
	struct rc1_page r = { 0 };

	u.cap_usr_time = 1;
	EXPECT_EQ(caps_of(0), u.capabilities);
	u.capabilities = 0;
	u.cap_usr_rdpmc = 1;
	EXPECT_EQ(caps_of(0), u.capabilities);
	r.cap_usr_time = 1;
	EXPECT_EQ(caps_of(0), r.capabilities);
	r.capabilities = 0;
	r.cap_usr_rdpmc = 1;
	EXPECT_EQ(caps_of(1), r.capabilities);
	r.capabilities = 0;
	r.cap_usr_time_zero = 1;
	EXPECT_EQ(caps_of(2), r.capabilities);
}

TEST(bit0_set_is_rejected)
{
	union buf *p = good_page();

	p->pg.cap_bit0 = 1;
	EXPECT_REJECTED(up_check_caps(p->b, &m));
	free(p);
}

TEST(bit1_clear_is_rejected)
{
	union buf *p = good_page();

	p->pg.cap_bit0_is_deprecated = 0;
	p->pg.cap_user_time = 1;
	EXPECT_REJECTED(up_check_caps(p->b, &m));
	free(p);
}

/* 3.4-3.11: bit 0 set whenever user time or rdpmc was offered. */
TEST(union_layout_is_rejected)
{
	union buf *p = good_page();
	struct union_page u = { 0 };

	u.cap_usr_rdpmc = 1;
	put64(p, OFF(capabilities), u.capabilities);
	EXPECT_REJECTED(up_check_caps(p->b, &m));
	free(p);
}

/* 3.12-rc1 (860f085b74e9): time in bit 0, rdpmc in bit 1, no bit-1 meaning. */
TEST(rc1_layout_is_rejected)
{
	union buf *p = good_page();
	struct rc1_page r = { 0 };

	r.cap_usr_time = 1; /* user time only: bit 0 */
	put64(p, OFF(capabilities), r.capabilities);
	EXPECT_REJECTED(up_check_caps(p->b, &m));
	r.cap_usr_rdpmc = 1; /* time and rdpmc: bits 0 and 1 */
	put64(p, OFF(capabilities), r.capabilities);
	EXPECT_REJECTED(up_check_caps(p->b, &m));
	r.cap_usr_time = 0;
	r.cap_usr_rdpmc = 0;
	r.cap_usr_time_zero = 1; /* time_zero alone: bit 2, bit 1 clear */
	put64(p, OFF(capabilities), r.capabilities);
	EXPECT_REJECTED(up_check_caps(p->b, &m));
	put64(p, OFF(capabilities), 0); /* neither */
	EXPECT_REJECTED(up_check_caps(p->b, &m));
	free(p);
}

/*
 * size follows the layout of the kernel, not of the header the suite was
 * built with: an older kernel's 76, 5.9's 96 and a newer kernel's larger,
 * 8-byte aligned value below data_head are all the ABI.
 */
TEST(published_and_newer_sizes_are_accepted)
{
	static const uint32_t good[] = {
		UP_SIZE_MIN, /* 3.12 to 5.8 (fa7315871046) */
		UP_SIZE_TIME_SHORT, /* 5.9 on (6c0246a4588d) */
		UP_SIZE_HDR, /* the header built against */
		UP_SIZE_HDR + 8, /* a kernel newer than the header */
		UP_DATA_HEAD - 8, /* the largest a newer layout can be */
	};
	union buf *p = good_page();
	unsigned int i;

	p->pg.time_mask = 0; /* reserved on the 3.12 layout */
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		put32(p, OFF(size), good[i]);
		EXPECT_ACCEPTED(up_check_size(p->b, UP_SIZE_MIN, &m));
		EXPECT_ACCEPTED(up_check_reserved(p->b, &m));
	}
	/* A newer kernel's fields past the header's size are its own. */
	put32(p, OFF(size), UP_SIZE_HDR + 8);
	put64(p, UP_SIZE_HDR, 0x1234);
	EXPECT_ACCEPTED(up_check_size(p->b, UP_SIZE_MIN, &m));
	EXPECT_ACCEPTED(up_check_reserved(p->b, &m));
	free(p);
}

TEST(bad_sizes_are_rejected)
{
	static const uint32_t bad[] = {
		0, /* never written */
		72, /* offsetof(size): the first 3.12 draft (seed 001) */
		80, /* no layout ends there */
		UP_SIZE_TIME_SHORT - 8, /* one field short (a backport slip) */
		UP_SIZE_HDR + 1, /* above the header's, but unaligned */
		UP_SIZE_HDR + 4, /* the same, 100 on a 96 header */
		UP_DATA_HEAD, /* no newer layout reaches data_head */
		UP_DATA_HEAD + 1, /* past data_head */
		4096,
	};
	union buf *p = good_page();
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		put32(p, OFF(size), bad[i]);
		EXPECT_REJECTED(up_check_size(p->b, UP_SIZE_MIN, &m));
	}
	free(p);
}

/*
 * A kernel of 5.9 or later promises 96: a page back at 76 fails there
 * even without cap_user_time_short, which x86 never sets.
 */
TEST(size_below_the_release_is_rejected)
{
	union buf *p = good_page();

	p->pg.cap_user_time_short = 0;
	put32(p, OFF(size), UP_SIZE_MIN);
	EXPECT_ACCEPTED(up_check_size(p->b, UP_SIZE_MIN, &m));
	EXPECT_REJECTED(up_check_size(p->b, UP_SIZE_TIME_SHORT, &m));
	put32(p, OFF(size), UP_SIZE_TIME_SHORT);
	EXPECT_ACCEPTED(up_check_size(p->b, UP_SIZE_TIME_SHORT, &m));
	put32(p, OFF(size), UP_SIZE_HDR + 8);
	EXPECT_ACCEPTED(up_check_size(p->b, UP_SIZE_TIME_SHORT, &m));
	free(p);
}

/* A 3.12 size with cap_user_time_short: time_cycles/time_mask unsized. */
TEST(time_short_past_size_is_rejected)
{
	union buf *p = good_page();

	p->pg.cap_user_time_short = 1;
	EXPECT_ACCEPTED(up_check_size(p->b, UP_SIZE_MIN, &m));
	put32(p, OFF(size), UP_SIZE_MIN);
	EXPECT_REJECTED(up_check_size(p->b, UP_SIZE_MIN, &m));
	free(p);
}

/* An old kernel (size 76) leaves time_cycles/time_mask reserved: zero. */
TEST(old_layout_dirty_time_fields_are_rejected)
{
	union buf *p = good_page();

	put32(p, OFF(size), UP_SIZE_MIN);
	EXPECT_REJECTED(up_check_reserved(p->b, &m));
	p->pg.time_mask = 0;
	EXPECT_ACCEPTED(up_check_reserved(p->b, &m));
	p->pg.time_cycles = 1;
	EXPECT_REJECTED(up_check_reserved(p->b, &m));
	free(p);
}

TEST(dirty_reserved_tail_is_rejected)
{
	static const size_t at[] = { UP_SIZE_HDR, 500, UP_DATA_HEAD - 1 };
	union buf *p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		p = good_page();
		p->b[at[i]] = 0x5a;
		EXPECT_REJECTED(up_check_reserved(p->b, &m));
		free(p);
	}
	/* With size 0, the tail from the 3.12 size on is still reserved. */
	p = good_page();
	put32(p, OFF(size), 0);
	p->b[UP_SIZE_MIN + 4] = 1;
	EXPECT_REJECTED(up_check_reserved(p->b, &m));
	free(p);
}

/* data_head 8 bytes past 1024: the records are there, byte 1024 is not. */
TEST(moved_head_is_rejected)
{
	union buf *p = good_page();
	uint64_t end = put_record(p, 0, PERF_RECORD_COMM, 24);

	put64(p, UP_DATA_HEAD + 8, end);
	EXPECT_REJECTED(up_check_head_grew(p->b, 0, 24, &m));
	free(p);
}

TEST(head_not_matching_records_is_rejected)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	union buf *p = good_page();
	uint64_t end;

	end = put_record(p, 0, PERF_RECORD_COMM, 24);
	end = put_record(p, end, PERF_RECORD_FORK, 32);
	put64(p, UP_DATA_HEAD, end - 8); /* inside the last record */
	EXPECT_REJECTED(up_check_records(p->b, types, PERF_RECORD_MAX, &m));
	EXPECT_REJECTED(up_check_head_grew(p->b, 0, 56, &m));
	put64(p, UP_DATA_HEAD, end + 4); /* inside a header */
	EXPECT_REJECTED(up_check_records(p->b, types, PERF_RECORD_MAX, &m));
	put64(p, UP_DATA_HEAD, DATA + 8); /* past the tail by more than size */
	EXPECT_REJECTED(up_check_records(p->b, types, PERF_RECORD_MAX, &m));
	free(p);
}

TEST(malformed_records_are_rejected)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	union buf *p = good_page();
	uint64_t end;

	end = put_record(p, 0, PERF_RECORD_COMM, 0); /* would never end */
	put64(p, UP_DATA_HEAD, 64);
	EXPECT_REJECTED(up_check_records(p->b, types, PERF_RECORD_MAX, &m));
	end = put_record(p, 0, PERF_RECORD_COMM, 20); /* not u64 padded */
	put64(p, UP_DATA_HEAD, end);
	EXPECT_REJECTED(up_check_records(p->b, types, PERF_RECORD_MAX, &m));
	free(p);
}

TEST(bad_data_area_is_rejected)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	union buf *p = good_page();

	put64(p, OFF(data_offset), 0);
	EXPECT_REJECTED(up_check_data_area(p->b, PAGE, 1, &m));
	EXPECT_REJECTED(up_check_records(p->b, types, PERF_RECORD_MAX, &m));
	put64(p, OFF(data_offset), PAGE);
	put64(p, OFF(data_size), 2 * DATA);
	EXPECT_REJECTED(up_check_data_area(p->b, PAGE, 1, &m));
	free(p);
}

/* Record types are counted, so a test can demand the ones it produced. */
TEST(record_types_are_counted)
{
	unsigned int types[PERF_RECORD_MAX] = { 0 };
	union buf *p = good_page();
	uint64_t end;

	end = put_record(p, 0, PERF_RECORD_LOST, 24);
	end = put_record(p, end, PERF_RECORD_COMM, 24);
	end = put_record(p, end, PERF_RECORD_COMM, 32);
	put64(p, UP_DATA_HEAD, end);
	EXPECT_ACCEPTED(up_check_records(p->b, types, PERF_RECORD_MAX, &m));
	EXPECT_EQ(1U, types[PERF_RECORD_LOST]);
	EXPECT_EQ(2U, types[PERF_RECORD_COMM]);
	EXPECT_EQ(0U, types[PERF_RECORD_FORK]);
	free(p);
}

TEST_HARNESS_MAIN
