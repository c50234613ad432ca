// SPDX-License-Identifier: GPL-2.0-or-later
/* The state file extalignd writes and extalign status reads. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "extalign/state.h"
#include "extalign/utf8.h"
#include "run-suite.h"

static void fill(struct ea_state *s)
{
	*s = (struct ea_state){
		.version = 1, .pid = 4242, .started_usec = 1, .updated_usec = 2, .rules = 3
	};
	s->config = strdup("/etc/extalign.conf");
	s->watcher = strdup("fanotify");
	s->phase = strdup("running");
	s->last_reload = strdup("refused");
	for (int i = 0; i < _EA_CNT_MAX; i++)
		s->counters[i] = 1000 + (uint64_t)i;
	ck_assert_int_eq(ea_state_add_mark(s, "/srv/db", "xfs", "fanotify-filesystem"), 0);
	/* Paths are the user's: tabs, newlines, backslashes, control bytes. */
	ck_assert_int_eq(ea_state_add_error(s, 99, EACCES, "db", "/srv/db/a\tb\nerror\t0\t0",
					    "cannot \\ open"),
			 0);
	ck_assert_int_eq(ea_state_set_job(s, "no late entry yet", 0, 0), -EINVAL);
	ck_assert_int_eq(ea_state_add_late(s, 7, "db", "/srv/db/\x01\x7f\xc3\xa9", "listed"), 0);
	ck_assert_int_eq(ea_state_set_job(s, "load 2.00 over idle_cpu_load 1.00\tx", 0, 0), 0);
	ck_assert_int_eq(ea_state_add_late(s, 8, NULL, NULL, NULL), 0);
	ck_assert_int_eq(ea_state_add_late(s, 9, "db", "/srv/db/big", "running"), 0);
	ck_assert_int_eq(ea_state_set_job(s, NULL, 4096, 1 << 20), 0);
}

START_TEST(test_roundtrip)
{
	struct ea_state a, b = { 0 };
	_cleanup_free_ char *buf = NULL;
	size_t len;
	unsigned bad = 0;

	fill(&a);
	ck_assert_int_eq(ea_state_format(&a, &buf, &len), 0);
	ck_assert_uint_eq(strlen(buf), len);
	/* One record per line: the forged "error" inside a path stays a field. */
	ck_assert_ptr_null(strstr(buf, "\nerror\t0"));
	ck_assert_int_eq(ea_state_parse(buf, len, &b, &bad), 0);
	ck_assert_int_eq(b.pid, 4242);
	ck_assert_uint_eq(b.rules, 3);
	ck_assert_str_eq(b.config, "/etc/extalign.conf");
	ck_assert_str_eq(b.phase, "running");
	ck_assert_str_eq(b.last_reload, "refused");
	for (int i = 0; i < _EA_CNT_MAX; i++)
		ck_assert_uint_eq(b.counters[i], 1000 + (uint64_t)i);
	ck_assert_uint_eq(b.n_marks, 1);
	ck_assert_str_eq(b.marks[0].how, "fanotify-filesystem");
	ck_assert_uint_eq(b.n_errors, 1);
	ck_assert_int_eq(b.errors[0].err, EACCES);
	ck_assert_str_eq(b.errors[0].path, "/srv/db/a\tb\nerror\t0\t0");
	ck_assert_str_eq(b.errors[0].msg, "cannot \\ open");
	ck_assert_uint_eq(b.n_late, 3);
	ck_assert_str_eq(b.late[0].path, "/srv/db/\x01\x7f\xc3\xa9");
	/* The job record belongs to the late record before it. */
	ck_assert_str_eq(b.late[0].reason, "load 2.00 over idle_cpu_load 1.00\tx");
	ck_assert_str_eq(b.late[1].reason, "");
	ck_assert_uint_eq(b.late[1].total, 0);
	ck_assert_uint_eq(b.late[2].done, 4096);
	ck_assert_uint_eq(b.late[2].total, 1 << 20);
	ck_assert_str_eq(b.late[1].path, "");
	ck_assert_uint_eq(b.late[1].usec, 8);
	ea_state_free(&a);
	ea_state_free(&b);
}
END_TEST

static const struct {
	const char *text;
	int err;
	unsigned line;
} bad_files[] = {
	{ "", -EBADMSG, 0 },
	{ "extalign-state\t1", -EBADMSG, 1 },			     /* truncated: no newline */
	{ "extalign-state\t2\n", -EPROTONOSUPPORT, 1 },		     /* newer format */
	{ "something\t1\n", -EBADMSG, 1 },			     /* not a state file */
	{ "extalign-state\t1\npid\tx\n", -EBADMSG, 2 },		     /* bad number */
	{ "extalign-state\t1\npid\t1\t2\n", -EBADMSG, 2 },	     /* known record, wrong arity */
	{ "extalign-state\t1\nmark\t/a\\q\tx\ty\n", -EBADMSG, 2 },   /* bad escape */
	{ "extalign-state\t1\nmark\t/a\\x00\tx\ty\n", -EBADMSG, 2 }, /* escaped NUL */
	{ "extalign-state\t1\nmark\t/a\\x4\tx\ty\n", -EBADMSG, 2 },  /* short hex */
	{ "extalign-state\t1\nmark\t/a\\\tx\ty\n", -EBADMSG, 2 },    /* lone backslash */
	{ "extalign-state\t1\ncounter\tevents\t99999999999999999999999\n", -EBADMSG, 2 },
	{ "extalign-state\t1\nrule-stat\tdb\t/srv\tskipped\n", -EBADMSG, 2 }, /* no value */
	{ "extalign-state\t1\nrule-stat\tdb\t/srv\tskipped\t-1\n", -EBADMSG, 2 },
};

START_TEST(test_bad)
{
	struct ea_state s = { 0 };
	unsigned line = 12345;
	const char *t = bad_files[_i].text;

	ck_assert_int_eq(ea_state_parse(t, strlen(t), &s, &line), bad_files[_i].err);
	ck_assert_uint_eq(line, bad_files[_i].line);
	ck_assert_ptr_null(s.config);
}
END_TEST

START_TEST(test_forward_compatible)
{
	/* A newer daemon's records and counters are skipped, not errors. */
	static const char t[] = "extalign-state\t1\nfuture\ta\tb\tc\td\te\ncounter\tnew_thing\t5\n"
				"counter\terrors\t3\nrule-stat\tdb\t/srv\tnew_stat\t7\n";
	struct ea_state s = { 0 };

	ck_assert_int_eq(ea_state_parse(t, sizeof(t) - 1, &s, NULL), 0);
	ck_assert_uint_eq(s.counters[EA_CNT_ERRORS], 3);
	ck_assert_uint_eq(s.n_rule_stats, 0);
	ea_state_free(&s);
}
END_TEST

START_TEST(test_escape)
{
	_cleanup_free_ char *e = ea_state_escape("a\\b\tc\nd\x1b");
	char *u = NULL;

	ck_assert_str_eq(e, "a\\\\b\\tc\\nd\\x1b");
	ck_assert_int_eq(ea_state_unescape(e, strlen(e), &u), 0);
	ck_assert_str_eq(u, "a\\b\tc\nd\x1b");
	free(u);
	ck_assert_int_eq(ea_state_unescape("\\X", 2, &u), -EBADMSG);
	ck_assert_int_eq(ea_state_unescape("a\tb", 3, &u), -EBADMSG);
}
END_TEST

START_TEST(test_counter_names)
{
	for (int i = 0; i < _EA_CNT_MAX; i++) {
		ck_assert_ptr_nonnull(ea_state_counter_name(i));
		ck_assert_int_eq(ea_state_counter_from_name(ea_state_counter_name(i)), i);
	}
	ck_assert_int_eq(ea_state_counter_from_name("nope"), -1);
	ck_assert_ptr_null(ea_state_counter_name(_EA_CNT_MAX));
}
END_TEST

START_TEST(test_late_queue_names)
{
	for (int i = 0; i < _EA_LATE_MAX; i++) {
		ck_assert_ptr_nonnull(ea_late_queue_name(i));
		ck_assert_int_eq(ea_late_queue_from_name(ea_late_queue_name(i)), i);
	}
	ck_assert_int_eq(ea_late_queue_from_name("no-engine"), -1);
	ck_assert_ptr_null(ea_late_queue_name(_EA_LATE_MAX));
	ck_assert(ea_late_queue_pending(EA_LATE_RUNNING));
	ck_assert(!ea_late_queue_pending(EA_LATE_UNSUPPORTED));
}
END_TEST

/* How many names dir holds, "." and ".." aside. */
static int names_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

START_TEST(test_file_atomic)
{
	char dir[] = "/tmp/test-state.XXXXXX";
	struct ea_state a, b = { 0 };
	int dfd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(ea_state_read_at(dfd, "state", &b, NULL), -ENOENT);
	fill(&a);
	ck_assert_int_eq(ea_state_write_at(dfd, "state", &a), 0);
	a.pid = 77;
	ck_assert_int_eq(ea_state_write_at(dfd, "state", &a), 0);
	/* No temporary left behind (whatever its name), the second write
	 * replaced the first. */
	ck_assert_int_eq(names_in(dir), 1);
	ck_assert_int_eq(ea_state_read_at(dfd, "state", &b, NULL), 0);
	ck_assert_int_eq(b.pid, 77);
	/* A symlink planted as the state file is not followed. */
	unlinkat(dfd, "state", 0);
	ck_assert_int_eq(symlinkat("/etc/passwd", dfd, "state"), 0);
	ea_state_free(&b);
	ck_assert_int_eq(ea_state_read_at(dfd, "state", &b, NULL), -ELOOP);
	unlinkat(dfd, "state", 0);
	rmdir(dir);
	close(dfd);
	ea_state_free(&a);
}
END_TEST

START_TEST(test_prometheus)
{
	struct ea_state a;
	struct ea_prom_bdev dev = { .device = "nvme0n1", .unit_min = 4096, .unit_max = 65536 };
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fill(&a);
	/* A rule name or path the user chose cannot break out of its label. */
	free(a.late[0].rule);
	a.late[0].rule = strdup("r\"} 9\n\\");
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ea_state_write_prometheus(f, &a, true, &dev, 1), 0);
	fclose(f);
	ck_assert_ptr_nonnull(
		strstr(buf, "\nextalign_late_files_pending{rule=\"r\\\"} 9\\n\\\\\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_late_files_pending{rule=\"db\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_files_hinted_total{by=\"event\"} 1003\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_last_reload_refused 1\n"));
	ck_assert_ptr_nonnull(
		strstr(buf, "\nextalign_atomic_write_unit_max_bytes{device=\"nvme0n1\"} 65536\n"));
	ck_assert_ptr_nonnull(strstr(buf, "# TYPE extalign_events_total counter\n"));
	ea_state_free(&a);
}
END_TEST

/* Per rule and filesystem counts survive the file, fields escaped. */
START_TEST(test_rule_stats)
{
	struct ea_state a, b = { 0 };
	struct ea_state_rule_stats *rs;
	_cleanup_free_ char *buf = NULL;
	size_t len;

	fill(&a);
	rs = ea_state_rule_stats(&a, "db", "/srv/a\tb");
	ck_assert_ptr_nonnull(rs);
	for (int k = 0; k < _EA_STAT_MAX; k++)
		rs->v[k] = 100 + (uint64_t)k;
	/* The same key again is the same entry. */
	ck_assert_ptr_eq(ea_state_rule_stats(&a, "db", "/srv/a\tb"), rs);
	ck_assert_ptr_nonnull(ea_state_rule_stats(&a, NULL, NULL));
	ck_assert_uint_eq(a.n_rule_stats, 2);
	ck_assert_int_eq(ea_state_format(&a, &buf, &len), 0);
	ck_assert_int_eq(ea_state_parse(buf, len, &b, NULL), 0);
	ck_assert_uint_eq(b.n_rule_stats, 2);
	ck_assert_str_eq(b.rule_stats[0].rule, "db");
	ck_assert_str_eq(b.rule_stats[0].mountpoint, "/srv/a\tb");
	for (int k = 0; k < _EA_STAT_MAX; k++)
		ck_assert_uint_eq(b.rule_stats[0].v[k], 100 + (uint64_t)k);
	ck_assert_str_eq(b.rule_stats[1].rule, "");
	ck_assert_str_eq(b.rule_stats[1].mountpoint, "");
	for (int k = 0; k < _EA_STAT_MAX; k++) {
		ck_assert_int_eq(ea_state_stat_from_name(ea_state_stat_name(k)), k);
		ck_assert_int_eq(ea_state_failure_reason(k) != NULL, k >= EA_STAT_FAIL_FIRST);
	}
	ck_assert_str_eq(ea_state_failure_reason(EA_STAT_FAIL_LATE_LIST), "late_list");
	ea_state_free(&a);
	ea_state_free(&b);
}
END_TEST

/*
 * A state file as the daemon before per rule counts wrote it (the metrics
 * commit, 6d75503): it loads, and the metrics come from its sums.
 */
START_TEST(test_old_state)
{
	static const char t[] =
		"extalign-state\t1\npid\t77\nstarted\t1\nupdated\t2\n"
		"config\t/etc/extalign.conf\nwatcher\tfanotify\nphase\trunning\nrules\t1\n"
		"counter\tevents\t9\ncounter\tdirs_hinted\t1\ncounter\tdirs_inherited\t0\n"
		"counter\tfiles_hinted\t4\ncounter\tfiles_inherited\t2\ncounter\tfiles_late\t1\n"
		"counter\tunsupported\t0\ncounter\terrors\t1\ncounter\tskipped\t0\n"
		"counter\toverflows\t0\ncounter\trescans\t0\ncounter\treloads\t0\n"
		"counter\treload_failures\t0\ncounter\tjobs_done\t0\ncounter\tjobs_failed\t0\n"
		"mark\t/srv/db\txfs\tfanotify-filesystem\n"
		"late\t5\tdb\t/srv/db/x\tlisted\n"
		/* Pending as the daemon counts them: listed, queued or running. */
		"late\t6\tdb\t/srv/db/y\tunsupported\n"
		"late\t7\tdb\t/srv/db/z\tqueued\n"
		"late\t8\tdb\t/srv/db/w\tfailed\n"
		"late\t9\tdb\t/srv/db/v\tfrom-a-newer-daemon\n";
	struct ea_state s = { 0 };
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(ea_state_parse(t, sizeof(t) - 1, &s, NULL), 0);
	ck_assert_uint_eq(s.counters[EA_CNT_FILES_HINTED], 4);
	ck_assert_uint_eq(s.counters[EA_CNT_BYTES_REALIGNED], 0);
	ck_assert_uint_eq(s.n_rule_stats, 0);
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ea_state_write_prometheus(f, &s, true, NULL, 0), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_files_hinted_total{by=\"event\"} 4\n"));
	ck_assert_msg(strstr(buf, "\nextalign_late_files_pending{rule=\"db\"} 2\n"), "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_failures_total{reason=\"error\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_realigned_bytes_total 0\n"));
	ea_state_free(&s);
}
END_TEST

/* A state file of a daemon from before the counter was named dirs_hinted. */
START_TEST(test_old_counter_name)
{
	static const char t[] = "extalign-state\t1\npid\t77\nstarted\t1\nupdated\t2\n"
				"counter\tdirs_inherit_set\t3\n";
	struct ea_state s = { 0 };

	ck_assert_int_eq(ea_state_parse(t, sizeof(t) - 1, &s, NULL), 0);
	ck_assert_uint_eq(s.counters[EA_CNT_DIRS_HINTED], 3);
	ck_assert_str_eq(ea_state_counter_name(EA_CNT_DIRS_HINTED), "dirs_hinted");
	ea_state_free(&s);
}
END_TEST

/* With per rule counts: labels rule and mountpoint on every such family. */
START_TEST(test_prometheus_by_rule)
{
	struct ea_state a;
	struct ea_state_rule_stats *rs;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fill(&a);
	rs = ea_state_rule_stats(&a, "db", "/srv/\"x\"");
	ck_assert_ptr_nonnull(rs);
	rs->v[EA_STAT_FILES_HINTED] = 5;
	rs->v[EA_STAT_FILES_INHERITED] = 6;
	rs->v[EA_STAT_LATE_PENDING] = 2;
	rs->v[EA_STAT_REALIGNED_BYTES] = 1 << 20;
	rs->v[EA_STAT_FAIL_HINT] = 3;
	rs = ea_state_rule_stats(&a, "\xc3\xa9", "/srv/\xff");
	ck_assert_ptr_nonnull(rs);
	rs->v[EA_STAT_LATE_PENDING] = 7;
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ea_state_write_prometheus(f, &a, true, NULL, 0), 0);
	fclose(f);
#define L "{rule=\"db\",mountpoint=\"/srv/\\\"x\\\"\""
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_files_hinted_total" L ",by=\"event\"} 5\n"));
	ck_assert_ptr_nonnull(
		strstr(buf, "\nextalign_files_hinted_total" L ",by=\"inheritance\"} 6\n"));
	/* The daemon's gauge, not a count of the (capped) late list. */
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_late_files_pending" L "} 2\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_realigned_bytes_total" L "} 1048576\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_failures_total" L ",reason=\"hint\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nextalign_failures_total" L ",reason=\"watch\"} 0\n"));
#undef L
	/* A mount point that is not UTF-8 (\xff) stays valid UTF-8; é passes as is. */
	ck_assert_ptr_nonnull(strstr(buf, "{rule=\"\xc3\xa9\",mountpoint=\"/srv/\\\\xff\"} 7\n"));
	for (size_t i = 0, n; i < len; i += n) {
		n = ea_utf8_char_len(buf + i, len - i);
		ck_assert_uint_ne(n, 0);
	}
	/* No sample without its labels next to labelled ones. */
	ck_assert_ptr_null(strstr(buf, "\nextalign_files_hinted_total{by="));
	ck_assert_ptr_null(strstr(buf, "\nextalign_late_files_pending{rule=\"db\"}"));
	ea_state_free(&a);
}
END_TEST

START_TEST(test_file_replace)
{
	char dir[] = "/tmp/test-replace.XXXXXX", path[64], target[64], got[16] = "";
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	/* A symlink at the final name is replaced, its target left alone. */
	fd = open(target, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(ea_file_replace(path, "a 1\n", 4, 0644), 0);
	fd = open(target, O_RDONLY);
	ck_assert_int_eq(read(fd, got, sizeof(got)), 0);
	close(fd);
	fd = open(path, O_RDONLY | O_NOFOLLOW);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, got, sizeof(got)), 4);
	close(fd);
	ck_assert_str_eq(got, "a 1\n");
	ck_assert_int_eq(ea_file_replace("/tmp/a-directory/", "", 0, 0644), -EISDIR);
	unlink(path);
	unlink(target);
	rmdir(dir);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_roundtrip);
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad_files) / sizeof(bad_files[0]));
	tcase_add_test(tc, test_forward_compatible);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_counter_names);
	tcase_add_test(tc, test_late_queue_names);
	tcase_add_test(tc, test_file_atomic);
	tcase_add_test(tc, test_prometheus);
	tcase_add_test(tc, test_file_replace);
	tcase_add_test(tc, test_rule_stats);
	tcase_add_test(tc, test_old_state);
	tcase_add_test(tc, test_old_counter_name);
	tcase_add_test(tc, test_prometheus_by_rule);
	return run_suite("state", tc);
}
