// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The unit's writable trees (lib/unit-paths.c): which trees a drop-in can
 * name, the drop-in read back to the same paths, and "covers" on whole
 * path components.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extalign/unit-paths.h"
#include "run-suite.h"

/* A policy with only a watch list, as ea_policy_load() would build it. */
static struct ea_policy *policy_of(const char *const *trees, size_t n)
{
	struct ea_policy *p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	p->watch = calloc(n, sizeof(*p->watch));
	ck_assert_ptr_nonnull(p->watch);
	for (size_t i = 0; i < n; i++)
		p->watch[i].path = strdup(trees[i]);
	p->n_watch = n;
	return p;
}

static void policy_free(struct ea_policy *p)
{
	for (size_t i = 0; i < p->n_watch; i++)
		free(p->watch[i].path);
	free(p->watch);
	free(p);
}

START_TEST(test_sorting)
{
	static const char *const trees[] = {
		"/data/db",   "/tmp/x",	    "/var/tmp",	  "/var/tmpfoo", "/data/a\"b",
		"/data/a\\b", "/data/\x01", "/data/\xff", "/home/pg",	 "/data/ü 100%",
	};
	struct ea_policy *p = policy_of(trees, sizeof(trees) / sizeof(trees[0]));
	struct ea_unit_paths u;

	ck_assert_int_eq(ea_unit_paths_of_policy(p, &u), 0);
	ck_assert_uint_eq(u.n_writable, 4);
	ck_assert_str_eq(u.writable[0], "/data/db");
	ck_assert_str_eq(u.writable[1], "/var/tmpfoo"); /* not below /var/tmp */
	ck_assert_str_eq(u.writable[2], "/home/pg");
	ck_assert_str_eq(u.writable[3], "/data/ü 100%");
	ck_assert_uint_eq(u.n_skipped, 6);
	ck_assert(strstr(u.skipped[0].why, "PrivateTmp"));
	ck_assert(strstr(u.skipped[1].why, "PrivateTmp"));
	ck_assert(strstr(u.skipped[2].why, "quote"));
	ck_assert(strstr(u.skipped[3].why, "backslash"));
	ck_assert(strstr(u.skipped[4].why, "control"));
	ck_assert(strstr(u.skipped[5].why, "UTF-8"));
	ck_assert(u.home);
	ea_unit_paths_free(&u);
	policy_free(p);
}
END_TEST

START_TEST(test_round_trip)
{
	static const char *const trees[] = { "/data/ü 100%", "/srv/%%x", "/u01" };
	struct ea_policy *p = policy_of(trees, 3);
	struct ea_unit_paths u;
	char path[] = "/tmp/test-unit-paths.XXXXXX", *text = NULL, **back = NULL;
	size_t n = 0;
	int fd;

	ck_assert_int_eq(ea_unit_paths_of_policy(p, &u), 0);
	ck_assert(!u.home);
	ck_assert_int_eq(ea_unit_dropin_format(&u, "/etc/extalign.conf", &text), 0);
	ck_assert(strstr(text, "ReadWritePaths=-\"/data/ü 100%%\"\n"));
	ck_assert(strstr(text, "ReadWritePaths=-\"/srv/%%%%x\"\n"));
	ck_assert(!strstr(text, "ProtectHome"));
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	ck_assert_int_eq(ea_unit_dropin_read(path, &back, &n), 0);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_str_eq(back[i], trees[i]);
	ea_unit_dropin_paths_free(back, n);
	unlink(path);
	ck_assert_int_eq(ea_unit_dropin_read(path, &back, &n), -ENOENT);
	free(text);
	ea_unit_paths_free(&u);
	policy_free(p);
}
END_TEST

START_TEST(test_cover)
{
	char *const paths[] = { "/data", "/srv/db" };

	ck_assert(ea_unit_paths_cover(paths, 2, "/data"));
	ck_assert(ea_unit_paths_cover(paths, 2, "/data/x/y"));
	ck_assert(!ea_unit_paths_cover(paths, 2, "/database"));
	ck_assert(!ea_unit_paths_cover(paths, 2, "/srv"));
	ck_assert(ea_unit_paths_cover(paths, 2, "/srv/db/1"));
	ck_assert(!ea_unit_paths_cover(paths, 0, "/data"));
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("unit-paths");

	tcase_add_test(tc, test_sorting);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_cover);
	return run_suite("unit-paths", tc);
}
