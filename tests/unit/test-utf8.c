// SPDX-License-Identifier: GPL-2.0-or-later
/* UTF-8 validity as JSON output needs it: RFC 3629's well-formed sequences. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/utf8.h"
#include "run-suite.h"

static const struct {
	const char *s;
	size_t len; /* of the first character; 0: not UTF-8 */
} cases[] = {
	{ "a", 1 },
	{ "\x7f", 1 },
	{ "\xc3\xa9", 2 },	   /* é */
	{ "\xdf\xbf", 2 },	   /* U+07FF */
	{ "\xe0\xa0\x80", 3 },	   /* U+0800 */
	{ "\xe2\x82\xac", 3 },	   /* € */
	{ "\xed\x9f\xbf", 3 },	   /* U+D7FF, below the surrogates */
	{ "\xee\x80\x80", 3 },	   /* U+E000, above them */
	{ "\xef\xbf\xbf", 3 },	   /* U+FFFF */
	{ "\xf0\x90\x80\x80", 4 }, /* U+10000 */
	{ "\xf4\x8f\xbf\xbf", 4 }, /* U+10FFFF */
	{ "\x80", 0 },		   /* a continuation byte alone */
	{ "\xbf", 0 },
	{ "\xc0\x80", 0 },	   /* overlong NUL */
	{ "\xc1\xbf", 0 },	   /* overlong U+007F */
	{ "\xe0\x9f\xbf", 0 },	   /* overlong U+07FF */
	{ "\xf0\x8f\xbf\xbf", 0 }, /* overlong U+FFFF */
	{ "\xed\xa0\x80", 0 },	   /* U+D800 */
	{ "\xed\xbf\xbf", 0 },	   /* U+DFFF */
	{ "\xf4\x90\x80\x80", 0 }, /* U+110000 */
	{ "\xf5\x80\x80\x80", 0 },
	{ "\xff", 0 },
	{ "\xfe", 0 },
	{ "\xc3", 0 }, /* truncated by the end */
	{ "\xc3"
	  "a",
	  0 }, /* cut by an ASCII byte */
	{ "\xe2\x82", 0 },
	{ "\xf0\x90\x80", 0 },
	{ "\xe2\x82\xc3\xa9", 0 }, /* cut by the start of another */
};

START_TEST(test_char_len)
{
	const char *s = cases[_i].s;

	ck_assert_msg(ea_utf8_char_len(s, strlen(s)) == cases[_i].len, "case %d: got %zu, want %zu",
		      _i, ea_utf8_char_len(s, strlen(s)), cases[_i].len);
}
END_TEST

START_TEST(test_bounds)
{
	/* n, not the NUL, ends the bytes: a sequence that runs past n is cut. */
	ck_assert_uint_eq(ea_utf8_char_len("\xe2\x82\xac", 2), 0);
	ck_assert_uint_eq(ea_utf8_char_len("\xe2\x82\xac", 3), 3);
	ck_assert_uint_eq(ea_utf8_char_len("", 1), 1);
	ck_assert_uint_eq(ea_utf8_char_len("a", 0), 0);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_char_len, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_bounds);
	return run_suite("utf8", tc);
}
