// SPDX-License-Identifier: GPL-2.0-or-later
/* The fd-based tree walk: order, kinds, symlinks never followed, filter. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/walk.h"
#include "run-suite.h"

static char root[64];

struct seen {
	char log[2048];
	unsigned files_with_fd, files_without_fd;
	int stop_at; /* stop with 7 at this entry number, 0: never */
	unsigned n;
};

static int visit(const struct ea_walk_entry *e, void *userdata)
{
	static const char *const kind[] = { "dir", "file", "symlink", "other", "otherfs", "error" };
	struct seen *s = userdata;
	size_t l = strlen(s->log);

	snprintf(s->log + l, sizeof(s->log) - l, "%s %s\n", kind[e->kind], e->path + strlen(root));
	if (e->kind == EA_WALK_FILE)
		e->fd >= 0 ? s->files_with_fd++ : s->files_without_fd++;
	if ((e->kind == EA_WALK_DIR || e->kind == EA_WALK_FILE) && e->fd >= 0) {
		struct stat st;

		/* The fd is the entry's own inode. */
		ck_assert_int_eq(fstat(e->fd, &st), 0);
		ck_assert_uint_eq(st.st_ino, e->st.st_ino);
	}
	if (s->stop_at && ++s->n == (unsigned)s->stop_at)
		return 7;
	return 0;
}

static bool refuse_empty(const struct stat *st, void *userdata)
{
	(void)userdata;
	return st->st_size > 0;
}

static void make_tree(void)
{
	char p[128];
	int fd;

	strcpy(root, "/tmp/test-walk.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
#define P(x) (snprintf(p, sizeof(p), "%s/%s", root, x), p)
	ck_assert_int_eq(mkdir(P("b"), 0755), 0);
	ck_assert_int_eq(mkdir(P("b/c"), 0755), 0);
	fd = open(P("a"), O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	fd = open(P("b/c/empty"), O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(symlink("/etc", P("b/link")), 0);
	ck_assert_int_eq(mkfifo(P("fifo"), 0644), 0);
#undef P
}

static void remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_walk_order_and_kinds)
{
	struct seen s = { 0 };
	int fd;

	make_tree();
	fd = open(root, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ea_walk(fd, root, visit, &s), 0);
	/* Sorted, directories before their entries, symlink not entered. */
	ck_assert_str_eq(s.log, "file /a\n"
				"dir /b\n"
				"dir /b/c\n"
				"file /b/c/empty\n"
				"symlink /b/link\n"
				"other /fifo\n");
	ck_assert_uint_eq(s.files_with_fd, 2);
	close(fd);
	remove_tree();
}
END_TEST

START_TEST(test_walk_filter_and_stop)
{
	struct seen s = { 0 };
	int fd;

	make_tree();
	fd = open(root, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ea_walk_filtered(fd, root, refuse_empty, visit, &s), 0);
	ck_assert_uint_eq(s.files_with_fd, 1);
	ck_assert_uint_eq(s.files_without_fd, 1);

	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	ck_assert_int_eq(ea_walk(fd, root, visit, &s), 7);
	ck_assert_str_eq(s.log, "file /a\ndir /b\n");
	close(fd);

	/* Not a directory. */
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_eq(ea_walk(fd, "/dev/null", visit, &s), -ENOTDIR);
	close(fd);
	remove_tree();
}
END_TEST

START_TEST(test_dir_list)
{
	struct ea_dir_list l;
	size_t cursor = 0;
	int fd;

	make_tree();
	fd = open(root, O_PATH | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ea_dir_list_read(fd, 0, &l), 0);
	ck_assert_uint_eq(l.n, 3);
	/* In order: each at the cursor; out of order: found by search. */
	ck_assert_uint_eq(ea_dir_list_type(&l, "a", &cursor), DT_REG);
	ck_assert_uint_eq(ea_dir_list_type(&l, "b", &cursor), DT_DIR);
	ck_assert_uint_eq(ea_dir_list_type(&l, "fifo", &cursor), DT_FIFO);
	ck_assert_uint_eq(ea_dir_list_type(&l, "a", &cursor), DT_REG);
	ck_assert_uint_eq(cursor, 1);
	ck_assert_uint_eq(ea_dir_list_type(&l, "nope", &cursor), DT_UNKNOWN);
	ck_assert_uint_eq(ea_dir_list_type(&l, "0", &cursor), DT_UNKNOWN);
	ck_assert_uint_eq(ea_dir_list_type(&l, "z", &cursor), DT_UNKNOWN);
	ea_dir_list_free(&l);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_uint_eq(ea_dir_list_type(&l, "a", &cursor), DT_UNKNOWN);

	/* More entries than the caller will take: nothing, and no leak. */
	ck_assert_int_eq(ea_dir_list_read(fd, 2, &l), -E2BIG);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_int_eq(ea_dir_list_read(fd, 3, &l), 0);
	ea_dir_list_free(&l);
	close(fd);
	remove_tree();
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_walk_order_and_kinds);
	tcase_add_test(tc, test_walk_filter_and_stop);
	tcase_add_test(tc, test_dir_list);
	return run_suite("walk", tc);
}
