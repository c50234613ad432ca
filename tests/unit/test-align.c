// SPDX-License-Identifier: GPL-2.0-or-later
/* The alignment verdict over extent lists as FIEMAP returns them. */
#include <check.h>
#include <stdlib.h>

#include "extalign/extent.h"
#include "run-suite.h"

#define K 1024ULL
#define U (64 * K)

static struct ea_align_report run(const struct ea_extent *e, size_t n, uint64_t size)
{
	struct ea_align_report r;

	ea_align_analyze(e, n, U, size, &r);
	return r;
}

START_TEST(test_aligned)
{
	const struct ea_extent e[] = {
		{ 0, 10 * U, 2 * U, 0 },
		{ 4 * U, 20 * U, U, EA_EXTENT_LAST },
	};
	struct ea_align_report r = run(e, 2, 5 * U);

	ck_assert_uint_eq(r.extents, 2);
	ck_assert_uint_eq(r.misaligned_logical, 0);
	ck_assert_uint_eq(r.misaligned_physical, 0);
	ck_assert_uint_eq(r.mapped_bytes, 3 * U);
	ck_assert(ea_align_report_ok(&r));
}
END_TEST

START_TEST(test_misaligned_physical_start)
{
	/* XFS extsize without stripe alignment: logical fine, disk not. */
	const struct ea_extent e[] = { { 0, 10 * U + 4 * K, 4 * U, EA_EXTENT_LAST } };
	struct ea_align_report r = run(e, 1, 4 * U);

	ck_assert_uint_eq(r.misaligned_logical, 0);
	ck_assert_uint_eq(r.misaligned_physical, 1);
	ck_assert(!ea_align_report_ok(&r));
}
END_TEST

START_TEST(test_misaligned_logical_start)
{
	const struct ea_extent e[] = {
		{ 0, 10 * U, U, 0 },
		{ U + 4 * K, 30 * U + 4 * K, U - 4 * K, EA_EXTENT_LAST },
	};
	struct ea_align_report r = run(e, 2, 2 * U);

	ck_assert_uint_eq(r.extents, 2);
	ck_assert_uint_eq(r.misaligned_logical, 1);
	ck_assert_uint_eq(r.misaligned_physical, 1);
}
END_TEST

START_TEST(test_misaligned_length)
{
	/* A unit cut in two in the middle of the file. */
	const struct ea_extent e[] = {
		{ 0, 10 * U, U + 8 * K, 0 },
		{ 3 * U, 40 * U, U, EA_EXTENT_LAST },
	};
	struct ea_align_report r = run(e, 2, 4 * U);

	ck_assert_uint_eq(r.misaligned_logical, 1);
	ck_assert_uint_eq(r.misaligned_physical, 1);
}
END_TEST

START_TEST(test_last_extent_short_at_eof)
{
	/* A file of 100K: its last extent may stop short of a unit. */
	const struct ea_extent e[] = {
		{ 0, 10 * U, U, 0 },
		{ U, 20 * U, 36 * K, EA_EXTENT_LAST },
	};
	struct ea_align_report r = run(e, 2, 100 * K);

	ck_assert(ea_align_report_ok(&r));
	/* The same short extent before EOF is a misaligned length. */
	r = run(e, 2, 200 * K);
	ck_assert_uint_eq(r.misaligned_logical, 0); /* LAST flag: ends the file's mapping */
	{
		const struct ea_extent f[] = {
			{ 0, 10 * U, 36 * K, 0 },
			{ 2 * U, 20 * U, U, EA_EXTENT_LAST },
		};
		r = run(f, 2, 3 * U);
		ck_assert_uint_eq(r.misaligned_logical, 1);
	}
}
END_TEST

START_TEST(test_merge_contiguous)
{
	/* ext4 splits at the written/unwritten boundary: still one unit. */
	const struct ea_extent e[] = {
		{ 0, 10 * U, 16 * K, 0 },
		{ 16 * K, 10 * U + 16 * K, 48 * K, EA_EXTENT_UNWRITTEN },
		{ U, 10 * U + U, U, EA_EXTENT_LAST },
	};
	struct ea_align_report r = run(e, 3, 2 * U);

	ck_assert_uint_eq(r.extents, 1);
	ck_assert(ea_align_report_ok(&r));
}
END_TEST

START_TEST(test_holes)
{
	/* Sparse file: aligned extents with holes between them are fine. */
	const struct ea_extent e[] = {
		{ 0, 10 * U, U, 0 },
		{ 8 * U, 50 * U, U, 0 },
		{ 100 * U, 90 * U, 2 * U, EA_EXTENT_LAST },
	};
	struct ea_align_report r = run(e, 3, 102 * U);

	ck_assert_uint_eq(r.extents, 3);
	ck_assert(ea_align_report_ok(&r));
}
END_TEST

START_TEST(test_unwritten_prealloc_beyond_eof)
{
	/* fallocate past EOF: a whole unit, unwritten, after the size. */
	const struct ea_extent e[] = { { 0, 4 * U, U, EA_EXTENT_UNWRITTEN | EA_EXTENT_LAST } };
	struct ea_align_report r = run(e, 1, 10 * K);

	ck_assert(ea_align_report_ok(&r));
}
END_TEST

START_TEST(test_unknown_physical)
{
	const struct ea_extent e[] = { { 0, 0, U, EA_EXTENT_UNKNOWN_PHYS | EA_EXTENT_LAST } };
	struct ea_align_report r = run(e, 1, U);

	ck_assert_uint_eq(r.unknown_physical, 1);
	ck_assert_uint_eq(r.misaligned_physical, 0);
	ck_assert(!ea_align_report_ok(&r));
}
END_TEST

START_TEST(test_empty)
{
	struct ea_align_report r = run(NULL, 0, 0);

	ck_assert_uint_eq(r.extents, 0);
	ck_assert(ea_align_report_ok(&r));
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_aligned);
	tcase_add_test(tc, test_misaligned_physical_start);
	tcase_add_test(tc, test_misaligned_logical_start);
	tcase_add_test(tc, test_misaligned_length);
	tcase_add_test(tc, test_last_extent_short_at_eof);
	tcase_add_test(tc, test_merge_contiguous);
	tcase_add_test(tc, test_holes);
	tcase_add_test(tc, test_unwritten_prealloc_beyond_eof);
	tcase_add_test(tc, test_unknown_physical);
	tcase_add_test(tc, test_empty);
	return run_suite("align", tc);
}
