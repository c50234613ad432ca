/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The end of every unit test's main(): its one test case run as a suite. */
#ifndef EXTALIGN_TESTS_RUN_SUITE_H
#define EXTALIGN_TESTS_RUN_SUITE_H

#include <check.h>
#include <stdlib.h>

/* Run tc as the one test case of a suite called name; exit status 1 if a test failed. */
static inline int run_suite(const char *name, TCase *tc)
{
	Suite *s = suite_create(name);
	SRunner *sr;
	int failed;

	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
