// SPDX-License-Identifier: GPL-2.0-or-later
/* Sizes as users type them, and back. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "extalign/size.h"
#include "run-suite.h"

static const struct {
	const char *in;
	uint64_t want;
} good[] = {
	{ "0", 0 },
	{ "65536", 65536 },
	{ "16k", 16384 },
	{ "16K", 16384 },
	{ "16KiB", 16384 },
	{ "1m", 1048576 },
	{ "1M", 1048576 },
	{ "1MiB", 1048576 },
	{ "2g", 2147483648ULL },
	{ "1T", 1ULL << 40 },
	{ "1PiB", 1ULL << 50 },
	{ "15E", 15ULL << 60 },
	{ "010", 10 }, /* decimal, not octal */
	{ "18446744073709551615", UINT64_MAX },
};

static const char *const malformed[] = {
	"",	"-1",	 "+1",	" 1",  "1 ",  "0x10", "1.5k", "k",     "16kb", "16KB",
	"16ki", "16Kib", "1mb", "1MB", "12q", "1e3",  "--",   "1,024", "１",   "16k\n",
};

START_TEST(test_parse_good)
{
	uint64_t v = 12345;

	ck_assert_int_eq(ea_size_parse(good[_i].in, UINT64_MAX, &v), 0);
	ck_assert_msg(v == good[_i].want, "%s parsed as %llu", good[_i].in, (unsigned long long)v);
}
END_TEST

START_TEST(test_parse_malformed)
{
	uint64_t v = 777;

	ck_assert_int_eq(ea_size_parse(malformed[_i], UINT64_MAX, &v), -EINVAL);
	ck_assert_msg(v == 777, "%s touched the result", malformed[_i]);
}
END_TEST

START_TEST(test_parse_range)
{
	uint64_t v = 0;

	/* 8g does not fit 32 bits: an error, never 0 after truncation. */
	ck_assert_int_eq(ea_size_parse("8g", EA_EXTSIZE_MAX, &v), -ERANGE);
	ck_assert_int_eq(ea_size_parse("4G", EA_EXTSIZE_MAX, &v), -ERANGE);
	ck_assert_int_eq(ea_size_parse("4294967295", EA_EXTSIZE_MAX, &v), 0);
	ck_assert_uint_eq(v, 4294967295ULL);
	ck_assert_int_eq(ea_size_parse("4294967296", EA_EXTSIZE_MAX, &v), -ERANGE);
	ck_assert_int_eq(ea_size_parse("18446744073709551616", UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(ea_size_parse("16E", UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(ea_size_parse(NULL, UINT64_MAX, &v), -EINVAL);
}
END_TEST

START_TEST(test_extsize_rules)
{
	ck_assert_int_eq(ea_extsize_check(0, 4096), EA_EXTSIZE_ZERO);
	ck_assert_int_eq(ea_extsize_check(12288, 4096), EA_EXTSIZE_NOT_POWER_OF_2);
	ck_assert_int_eq(ea_extsize_check(2048, 4096), EA_EXTSIZE_NOT_BLOCK_MULTIPLE);
	ck_assert_int_eq(ea_extsize_check(1ULL << 32, 4096), EA_EXTSIZE_TOO_LARGE);
	ck_assert_int_eq(ea_extsize_check(65536, 4096), EA_EXTSIZE_OK);
	ck_assert_int_eq(ea_extsize_check(1U << 31, 4096), EA_EXTSIZE_OK);
	ck_assert_int_eq(ea_extsize_check(512, 0), EA_EXTSIZE_OK);
	for (int p = EA_EXTSIZE_OK; p <= EA_EXTSIZE_TOO_LARGE; p++)
		ck_assert_ptr_nonnull(ea_extsize_problem_str(p));
	ck_assert_str_eq(ea_extsize_problem_str(EA_EXTSIZE_NOT_POWER_OF_2),
			 "is not a power of two");
}
END_TEST

START_TEST(test_format)
{
	static const struct {
		uint64_t in;
		const char *want;
	} cases[] = {
		{ 0, "0" },
		{ 1, "1" },
		{ 4095, "4095" },
		{ 4096, "4K" },
		{ 16384, "16K" },
		{ 1536, "1536" },
		{ 1048576, "1M" },
		{ 3ULL << 30, "3G" },
		{ 1ULL << 40, "1T" },
		{ 1ULL << 60, "1E" },
		{ 15ULL << 60, "15E" },
		{ (1ULL << 20) + 1024, "1025K" },
	};
	char buf[EA_SIZE_BUFSZ];
	uint64_t back;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_str_eq(ea_size_format(cases[i].in, buf), cases[i].want);
		/* Everything we print must parse back to the same number. */
		ck_assert_int_eq(ea_size_parse(buf, UINT64_MAX, &back), 0);
		ck_assert_uint_eq(back, cases[i].in);
	}
	ck_assert_str_eq(ea_size_format(UINT64_MAX, buf), "18446744073709551615");
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_parse_good, 0, sizeof(good) / sizeof(good[0]));
	tcase_add_loop_test(tc, test_parse_malformed, 0, sizeof(malformed) / sizeof(malformed[0]));
	tcase_add_test(tc, test_parse_range);
	tcase_add_test(tc, test_extsize_rules);
	tcase_add_test(tc, test_format);
	return run_suite("size", tc);
}
