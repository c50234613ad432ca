// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The policy loader and lookup: every validation error with its line,
 * libinih's leniencies, drop-in order, /etc/projid and /etc/projects,
 * precedence and path-component matching.
 */
#include <check.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "extalign/policy.h"
#include "run-suite.h"

/* One scratch directory per test, made in setup, removed in teardown. */
static char dir[64];
static char conf[128], dropins[128], projid[128], projects[128];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-policy.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/extalign.conf", dir);
	snprintf(dropins, sizeof(dropins), "%s/extalign.d", dir);
	snprintf(projid, sizeof(projid), "%s/projid", dir);
	snprintf(projects, sizeof(projects), "%s/projects", dir);
	ck_assert_int_eq(mkdir(dropins, 0755), 0);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

static void write_dropin(const char *name, const char *text)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dropins, name);
	write_file(path, text);
}

static int load(const char *text, struct ea_policy **p, struct ea_diags *d)
{
	write_file(conf, text);
	return ea_policy_load(conf, dropins, projid, projects, p, d);
}

/* Load text that must be valid; prints the diagnostics if it is not. */
static struct ea_policy *load_ok(const char *text)
{
	struct ea_diags d = EA_DIAGS_INIT;
	struct ea_policy *p = NULL;
	int r = load(text, &p, &d);

	for (size_t i = 0; i < d.n; i++)
		fprintf(stderr, "unexpected: %s:%u: %s\n", d.items[i].file, d.items[i].line,
			d.items[i].msg);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_ptr_nonnull(p);
	return p;
}

/* Load text that must fail with exactly one error, at line, containing what. */
static void expect_error(const char *text, unsigned line, const char *what)
{
	struct ea_diags d = EA_DIAGS_INIT;
	struct ea_policy *p = (struct ea_policy *)1;
	int r = load(text, &p, &d);

	if (d.n != 1 || d.items[0].line != line || !strstr(d.items[0].msg, what))
		for (size_t i = 0; i < d.n; i++)
			fprintf(stderr, "  got %s:%u: %s\n", d.items[i].file, d.items[i].line,
				d.items[i].msg);
	ck_assert_int_eq(r, -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_str_eq(d.items[0].file, conf);
	ck_assert_uint_eq(d.items[0].line, line);
	ck_assert_msg(strstr(d.items[0].msg, what), "'%s' not in '%s'", what, d.items[0].msg);
	ea_diags_free(&d);
}

static const struct ea_rule *rule(const struct ea_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (!strcmp(p->rules[i].name, name))
			return &p->rules[i];
	ck_abort_msg("no rule %s", name);
	return NULL;
}

/* The name of the rule for path, or "-" for none. */
static const char *lookup(const struct ea_policy *p, const char *path, bool is_dir, uint32_t projid)
{
	const struct ea_rule *r = (const struct ea_rule *)1;

	ck_assert_int_eq(ea_policy_lookup(p, path, is_dir, projid, &r, NULL), 0);
	return r ? r->name : "-";
}

START_TEST(test_valid_full)
{
	struct ea_policy *p = load_ok("; a comment\n"
				      "# another\n"
				      "[daemon]\n"
				      "watch = inotify\n"
				      "idle_io_pressure = 2.5%\n"
				      "idle_disk_util = 20\n"
				      "idle_cpu_load = 0.25\n"
				      "idle_time = 1h30min\n"
				      "idle_poll = 500ms\n"
				      "realign = no\n"
				      "realign_bwlimit = 50M\n"
				      "realign_max_file_size = 64G\n"
				      "realign_max_time = 2h\n"
				      "realign_scan_interval = 12h\n"
				      "realign_queue_max = 5000\n"
				      "realign_windows = 22:00-06:00, 12:00-13:30\n"
				      "\n"
				      "[rule db]\n"
				      "directory = /srv//db/./data/\n"
				      "match = *.ibd  *.frm\n"
				      "exclude = tmp*\n"
				      "extsize = 64k\n"
				      "forcealign = yes\n"
				      "inherit = no\n"
				      "realign = yes\n"
				      "[rule plain]\n"
				      "directory = /srv\n"
				      "extsize = 1MiB\n");
	const struct ea_daemon_conf *d = &p->daemon;
	const struct ea_rule *r = rule(p, "db");

	ck_assert_int_eq(d->watch, EA_WATCH_INOTIFY);
	ck_assert(d->idle_io_pressure == 2.5);
	ck_assert(d->idle_disk_util == 20);
	ck_assert(d->idle_cpu_load == 0.25);
	ck_assert_uint_eq(d->idle_time_usec, 5400ULL * 1000000);
	ck_assert_uint_eq(d->idle_poll_usec, 500000);
	ck_assert(!d->realign);
	ck_assert_uint_eq(d->realign_bwlimit, 50ULL << 20);
	ck_assert_uint_eq(d->realign_max_file_size, 64ULL << 30);
	ck_assert_uint_eq(d->realign_max_time_usec, 7200ULL * 1000000);
	ck_assert_uint_eq(d->realign_scan_interval_usec, 43200ULL * 1000000);
	ck_assert_uint_eq(d->realign_queue_max, 5000);
	ck_assert_uint_eq(d->n_realign_windows, 2);
	ck_assert_uint_eq(d->realign_windows[0].start, 22 * 60);
	ck_assert_uint_eq(d->realign_windows[0].end, 6 * 60);
	ck_assert_uint_eq(d->realign_windows[1].end, 13 * 60 + 30);

	ck_assert_uint_eq(p->n_rules, 2);
	ck_assert_str_eq(r->name, "db");
	ck_assert_str_eq(r->file, conf);
	ck_assert_uint_eq(r->line, 18);
	ck_assert_int_eq(r->kind, EA_RULE_DIRECTORY);
	ck_assert_str_eq(r->directory, "/srv/db/data");
	ck_assert_uint_eq(r->n_match, 2);
	ck_assert_str_eq(r->match[0], "*.ibd");
	ck_assert_str_eq(r->match[1], "*.frm");
	ck_assert_uint_eq(r->n_exclude, 1);
	ck_assert_uint_eq(r->extsize, 65536);
	ck_assert(r->forcealign && !r->inherit && r->realign);

	r = rule(p, "plain");
	ck_assert_uint_eq(r->extsize, 1 << 20);
	/* The documented defaults. */
	ck_assert(!r->forcealign && r->inherit && !r->realign);
	ck_assert_uint_eq(p->n_files, 1);
	/* /srv/db/data lies inside /srv: one tree to watch. */
	ck_assert_uint_eq(p->n_watch, 1);
	ck_assert_str_eq(p->watch[0].path, "/srv");
	ea_policy_free(p);
}
END_TEST

START_TEST(test_daemon_defaults)
{
	struct ea_policy *p = load_ok("[rule a]\ndirectory = /a\nextsize = 16k\n");
	const struct ea_daemon_conf *d = &p->daemon;

	ck_assert_int_eq(d->watch, EA_WATCH_AUTO);
	ck_assert(d->idle_io_pressure == 5 && d->idle_disk_util == 10 && d->idle_cpu_load == 0.5);
	ck_assert_uint_eq(d->idle_time_usec, 60000000);
	ck_assert_uint_eq(d->idle_poll_usec, 1000000);
	ck_assert(d->realign);
	ck_assert_uint_eq(d->realign_bwlimit, 0);
	ck_assert_uint_eq(d->realign_max_file_size, 0);
	ck_assert_uint_eq(d->realign_max_time_usec, 0);
	ck_assert_uint_eq(d->realign_scan_interval_usec, 86400ULL * 1000000);
	ck_assert_uint_eq(d->realign_queue_max, 100000);
	ck_assert_uint_eq(d->n_realign_windows, 0);
	ea_policy_free(p);
}
END_TEST

START_TEST(test_empty_config)
{
	struct ea_policy *p = load_ok("");

	ck_assert_uint_eq(p->n_rules, 0);
	ck_assert_str_eq(lookup(p, "/x", false, 0), "-");
	ea_policy_free(p);
}
END_TEST

/* Each validation error: the line it is reported on and the words that say why. */
START_TEST(test_errors_sections)
{
	expect_error("[rules a]\n", 1, "unknown section [rules a]");
	expect_error("\n[rule]\ndirectory = /a\n", 2, "[rule] without a name");
	expect_error("[rule  ]\n", 1, "[rule] without a name");
	expect_error("[rule a b]\n", 1, "invalid rule name 'a b'");
	expect_error("[rule a] x\n", 1, "text after ']'");
	expect_error("[rule a\n", 1, "without ']'");
	expect_error("directory = /a\n[rule a]\ndirectory = /a\nextsize = 16k\n", 1,
		     "key outside a section");
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\n[daemon]\n[daemon]\n", 5,
		     "second [daemon] section");
	expect_error("[rule a]\ndirectory /b\ndirectory = /a\nextsize = 16k\n", 2,
		     "expected 'key = value'");
	expect_error("[rule a]\ndirectory: /b=c\ndirectory = /a\nextsize = 16k\n", 2,
		     "':' before '='");
}
END_TEST

START_TEST(test_errors_keys)
{
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\nsize = 4k\n", 4,
		     "unknown key 'size' in [rule a]");
	expect_error("[daemon]\nidle = 5\n", 2, "unknown key 'idle' in [daemon]");
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\ndirectory = /b\n", 4,
		     "duplicate key 'directory' in [rule a]; first set at line 2");
	expect_error("[daemon]\nidle_time = 1s\nidle_time = 2s\n", 3,
		     "duplicate key 'idle_time' in [daemon]; first set at line 2");
	expect_error("[rule a]\ndirectory = /a\nextsize =\n", 3, "has no value");
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\nforcealign = maybe\n", 4,
		     "invalid forcealign 'maybe' in rule 'a': expected yes or no");
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\ninherit = 2\n", 4,
		     "invalid inherit '2'");
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\nrealign = yes please\n", 4,
		     "invalid realign");
}
END_TEST

START_TEST(test_errors_paths)
{
	expect_error("[rule a]\ndirectory = data/db\nextsize = 16k\n", 2,
		     "invalid directory 'data/db' in rule 'a': not an absolute path");
	expect_error("[rule a]\ndirectory = /data/../etc\nextsize = 16k\n", 2, "'..'");
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\nmatch = db/*.ibd\n", 4,
		     "a '/' can never match");
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\nexclude = *.log x/y\n", 4,
		     "invalid exclude");
	expect_error("[rule a]\ndirectory = /a\nextsize = 16k\nfilesystem = /a\n", 4,
		     "'filesystem' in rule 'a' is for project rules");
}
END_TEST

START_TEST(test_errors_sizes)
{
	/* The message names the value and the rule. */
	expect_error("[rule db]\ndirectory = /a\nextsize = 12k\n", 3,
		     "invalid extsize '12k' in rule 'db': is not a power of two");
	expect_error("[rule db]\ndirectory = /a\nextsize = 0\n", 3,
		     "invalid extsize '0' in rule 'db': must be greater than zero");
	expect_error("[rule db]\ndirectory = /a\nextsize = 4G\n", 3,
		     "invalid extsize '4G' in rule 'db': does not fit");
	expect_error("[rule db]\ndirectory = /a\nextsize = 16 k\n", 3,
		     "invalid extsize '16 k' in rule 'db': not a size");
	expect_error("[rule db]\ndirectory = /a\nextsize = 99999999999999999999999\n", 3,
		     "too large");
	/* '#' starts no inline comment in libinih: the value keeps it, and fails. */
	expect_error("[rule db]\ndirectory = /a\nextsize = 16k # note\n", 3,
		     "invalid extsize '16k # note'");
}
END_TEST

START_TEST(test_errors_rule_shape)
{
	expect_error("[rule a]\nextsize = 16k\n", 1, "has neither 'directory' nor 'project'");
	expect_error("[rule a]\ndirectory = /a\nproject = 7\nextsize = 16k\n", 1,
		     "both 'directory' (line 2) and 'project' (line 3)");
	expect_error("[rule a]\ndirectory = /a\n", 1, "rule 'a' has no 'extsize'");
	expect_error("[rule a]\ndirectory = /a\nextsize = none\nforcealign = yes\n", 4,
		     "forcealign in rule 'a' needs an extsize");
	expect_error("[rule a]\ndirectory = /a\nextsize = none\nrealign = yes\n", 4,
		     "realign in rule 'a' needs an extsize");
	/* An invalid extsize is reported once, not again as a missing one. */
	expect_error("[rule a]\ndirectory = /a\nextsize = 3\nforcealign = yes\n", 3,
		     "invalid extsize '3'");
}
END_TEST

START_TEST(test_errors_daemon_values)
{
	expect_error("[daemon]\nidle_poll = 5s\n", 2, "'idle_poll' in [daemon] is out of range");
	expect_error("[daemon]\nidle_poll = 10ms\n", 2, "out of range");
	expect_error("[daemon]\nidle_time = 5 min\n", 2, "invalid idle_time '5 min'");
	expect_error("[daemon]\nidle_time = 1h30\n", 2, "invalid idle_time");
	expect_error("[daemon]\nidle_io_pressure = 101\n", 2, "percentage from 0 to 100");
	expect_error("[daemon]\nidle_disk_util = -1\n", 2, "invalid idle_disk_util");
	expect_error("[daemon]\nidle_cpu_load = 1,5\n", 2, "invalid idle_cpu_load");
	expect_error("[daemon]\nrealign_bwlimit = 1k\n", 2, "(0 means no limit)");
	expect_error("[daemon]\nrealign_bwlimit = fast\n", 2, "invalid realign_bwlimit");
	expect_error("[daemon]\nrealign_queue_max = 10k\n", 2, "expected a whole number");
	expect_error("[daemon]\nrealign_queue_max = 0\n", 2, "out of range");
	expect_error("[daemon]\nrealign_scan_interval = 10s\n", 2, "out of range");
	expect_error("[daemon]\nwatch = dnotify\n", 2, "expected auto, fanotify or inotify");
	expect_error("[daemon]\nrealign_windows = 22:00\n", 2, "expected HH:MM-HH:MM");
	expect_error("[daemon]\nrealign_windows = 25:00-01:00\n", 2, "hours 00-23");
	expect_error("[daemon]\nrealign_windows = 01:00-01:00\n", 2, "ambiguous");
	expect_error("[daemon]\nrealign_windows = 00:00-24:00 24:00-01:00\n", 2,
		     "invalid realign_windows");
	expect_error("[daemon]\nrealign_windows = 1-2 3-4 5-6 7-8 9-10 11-12 13-14 15-16 17-18\n",
		     2, "expected HH:MM-HH:MM");
}
END_TEST

START_TEST(test_daemon_zero_means_no_limit)
{
	struct ea_policy *p = load_ok("[daemon]\nrealign_bwlimit = 0\nrealign_max_time = 0\n"
				      "realign_windows = 00:00-24:00\n");

	ck_assert_uint_eq(p->daemon.realign_bwlimit, 0);
	ck_assert_uint_eq(p->daemon.realign_max_time_usec, 0);
	ck_assert_uint_eq(p->daemon.realign_windows[0].end, 1440);
	ea_policy_free(p);
}
END_TEST

START_TEST(test_all_errors_reported)
{
	struct ea_diags d = EA_DIAGS_INIT;
	struct ea_policy *p;

	ck_assert_int_eq(load("[rule a]\n"
			      "directory = rel\n" /* 2 */
			      "extsize = 16k\n"
			      "bogus = 1\n" /* 4 */
			      "[rule b]\n"
			      "directory = /b\n"
			      "extsize = 7\n" /* 7 */
			      "[nope]\n"      /* 8 */
			      "x = 1\n",      /* 9 */
			      &p, &d),
			 -EINVAL);
	/*
	 * Lines 2, 4, 7 and 8 are errors; keys under a broken section header
	 * (line 9) are not reported again.
	 */
	ck_assert_uint_eq(d.n, 4);
	ck_assert_uint_eq(d.items[0].line, 2);
	ck_assert_uint_eq(d.items[1].line, 4);
	ck_assert_uint_eq(d.items[2].line, 7);
	ck_assert_uint_eq(d.items[3].line, 8);
	ck_assert_ptr_null(p);
	ea_diags_free(&d);
}
END_TEST

START_TEST(test_duplicate_rule_name)
{
	struct ea_diags d = EA_DIAGS_INIT;
	struct ea_policy *p;
	char want[256];

	write_dropin("10-more.conf", "\n[rule db]\ndirectory = /b\nextsize = 16k\n");
	ck_assert_int_eq(load("[rule db]\ndirectory = /a\nextsize = 16k\n", &p, &d), -EINVAL);
	ck_assert_uint_eq(d.n, 1);
	ck_assert(strstr(d.items[0].file, "extalign.d/10-more.conf"));
	ck_assert_uint_eq(d.items[0].line, 2);
	snprintf(want, sizeof(want), "duplicate rule name 'db'; first defined at %s:1", conf);
	ck_assert_str_eq(d.items[0].msg, want);
	ea_diags_free(&d);
}
END_TEST

START_TEST(test_ties)
{
	struct ea_diags d = EA_DIAGS_INIT;
	struct ea_policy *p;
	char want[512];

	/* Same directory (after normalisation), neither has match. */
	ck_assert_int_eq(load("[rule a]\ndirectory = /data/db\nextsize = 16k\n"
			      "[rule b]\ndirectory = /data/db/\nextsize = 64k\n",
			      &p, &d),
			 -EINVAL);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_uint_eq(d.items[0].line, 4);
	snprintf(want, sizeof(want),
		 "rule 'b' ties with rule 'a' (%s:1): same directory /data/db, and neither has "
		 "'match'",
		 conf);
	ck_assert_msg(strstr(d.items[0].msg, want), "%s", d.items[0].msg);
	ea_diags_free(&d);

	/* Both have match, even disjoint globs: overlap is not decided. */
	ck_assert_int_eq(load("[rule a]\ndirectory = /d\nextsize = 16k\nmatch = *.ibd\n"
			      "[rule b]\ndirectory = /d\nextsize = 64k\nmatch = *.log\n",
			      &p, &d),
			 -EINVAL);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_uint_eq(d.items[0].line, 5);
	ck_assert(strstr(d.items[0].msg, "both have 'match'"));
	ea_diags_free(&d);

	/* Across files, naming the other file. */
	write_dropin("50-x.conf", "[rule b]\ndirectory = /d\nextsize = 64k\n");
	ck_assert_int_eq(load("[rule a]\ndirectory = /d\nextsize = 16k\n", &p, &d), -EINVAL);
	ck_assert_uint_eq(d.n, 1);
	ck_assert(strstr(d.items[0].file, "50-x.conf"));
	snprintf(want, sizeof(want), "ties with rule 'a' (%s:1)", conf);
	ck_assert(strstr(d.items[0].msg, want));
	ea_diags_free(&d);
	write_dropin("50-x.conf", "");

	/* Project rules: same project and both without filesystem. */
	write_file(projid, "db:42\n");
	write_file(projects, "42:/srv/db\n");
	ck_assert_int_eq(load("[rule a]\nproject = db\nextsize = 16k\n"
			      "[rule b]\nproject = 42\nextsize = 64k\n",
			      &p, &d),
			 -EINVAL);
	ck_assert_uint_eq(d.n, 1);
	ck_assert(strstr(d.items[0].msg, "same project 42 on any filesystem"));
	ea_diags_free(&d);

	/* Not ties: one has match; different filesystems; different directories. */
	p = load_ok("[rule a]\ndirectory = /d\nextsize = 16k\n"
		    "[rule b]\ndirectory = /d\nextsize = 64k\nmatch = *.ibd\n"
		    "[rule c]\nproject = db\nextsize = 16k\n"
		    "[rule e]\nproject = db\nfilesystem = /srv\nextsize = 16k\n"
		    "[rule f]\ndirectory = /d/e\nextsize = 16k\n");
	ea_policy_free(p);
}
END_TEST

/* libinih itself: what our reader protects against (Debian's inih 55). */
static int count_handler(void *user, const char *section, const char *name, const char *value)
{
	(void)section;
	(void)name;
	(void)value;
	(*(int *)user)++;
	return 1;
}

START_TEST(test_inih_is_lenient)
{
	char text[512] = "[rule a]\ndirectory = /";
	int calls = 0;

	/* One 250-character line: libinih's 200-byte buffer cuts it in two keys, silently. */
	memset(text + strlen(text), 'x', 200);
	strcat(text, "=y\n");
	ck_assert_int_eq(ini_parse_string(text, count_handler, &calls), 0);
	ck_assert_int_eq(calls, 2);
	/* An indented line continues the previous key, silently. */
	calls = 0;
	ck_assert_int_eq(ini_parse_string("[s]\na = 1\n  b = 2\n", count_handler, &calls), 0);
	ck_assert_int_eq(calls, 2);
}
END_TEST

/* A directory of n 'a's after '/', then tail, in a rule; its parsed directory. */
static char *directory_with(size_t n, const char *tail)
{
	size_t len = n + strlen(tail) + 64;
	char *text = malloc(len), *dir;
	struct ea_policy *p;
	int off;

	ck_assert_ptr_nonnull(text);
	off = snprintf(text, len, "[rule a]\ndirectory = /");
	memset(text + off, 'a', n);
	snprintf(text + off + n, len - off - n, "%s\nextsize = 16k\n", tail);
	p = load_ok(text);
	dir = strdup(p->rules[0].directory);
	ea_policy_free(p);
	free(text);
	return dir;
}

START_TEST(test_overlong_lines)
{
	/* Up to 197 characters a line goes through libinih's 200-byte buffer
	 * ("directory = /" and 184 more), beyond that through our splitter. */
	static const size_t lengths[] = { 184, 185, 4000 };
	/* A ';' after a blank starts a comment, one after anything else does not. */
	static const char *const tails[][2] = {
		{ "", "" },    { " ; a comment", "" }, { ";b\t ;c", ";b" },
		{ "\t;", "" }, { "#x", "#x" },
	};
	char *text;

	for (size_t t = 0; t < ARRAY_SIZE(tails); t++) {
		for (size_t i = 0; i < ARRAY_SIZE(lengths); i++) {
			_cleanup_free_ char *got = directory_with(lengths[i], tails[t][0]);

			ck_assert_uint_eq(strlen(got), 1 + lengths[i] + strlen(tails[t][1]));
			ck_assert_str_eq(got + 1 + lengths[i], tails[t][1]);
		}
	}

	/* A long comment is read and dropped like a short one. */
	text = malloc(70100);
	ck_assert_ptr_nonnull(text);
	memset(text, '#', 600);
	strcpy(text + 600, "\n[rule a]\ndirectory = /a\nextsize = 16k\n");
	ea_policy_free(load_ok(text));

	/* Beyond 65536 characters a line is refused, and only that line. */
	strcpy(text, "[rule a]\ndirectory = /a\nmatch = ");
	memset(text + strlen(text), 'x', 70000 - strlen("match = "));
	strcpy(text + 70000 + strlen("[rule a]\ndirectory = /a\n"), "\nextsize = 16k\n");
	expect_error(text, 3, "line is 70000 characters long; at most 65536 are allowed");
	free(text);
}
END_TEST

START_TEST(test_lexical)
{
	struct ea_policy *p;

	/* Indentation is ignored, never a continuation; ';' comments cut values. */
	p = load_ok("\xEF\xBB\xBF[rule a]\r\n"
		    "\tdirectory = /a ; the database\r\n"
		    "    extsize = 16k\r\n"
		    "  [ rule b ] ; comment\n"
		    "directory=/b\n"
		    "extsize=none\n");
	ck_assert_str_eq(rule(p, "a")->directory, "/a");
	ck_assert_uint_eq(rule(p, "a")->extsize, 16384);
	ck_assert_str_eq(rule(p, "b")->directory, "/b");
	ck_assert_uint_eq(rule(p, "b")->extsize, 0);
	ea_policy_free(p);

	/* A NUL byte would end the line early for libinih. */
	{
		FILE *f = fopen(conf, "w");
		struct ea_diags d = EA_DIAGS_INIT;

		ck_assert_ptr_nonnull(f);
		fwrite("[rule a]\ndirectory = /a\0/b\nextsize = 16k\n", 1, 41, f);
		fclose(f);
		ck_assert_int_eq(ea_policy_load(conf, dropins, projid, projects, &p, &d), -EINVAL);
		ck_assert_uint_eq(d.n, 2);
		ck_assert_uint_eq(d.items[1].line, 2);
		ck_assert_str_eq(d.items[1].msg, "NUL byte in line");
		ea_diags_free(&d);
	}
}
END_TEST

START_TEST(test_missing_files)
{
	struct ea_diags d = EA_DIAGS_INIT;
	struct ea_policy *p;
	char nodir[256];

	/* The main file must exist. */
	ck_assert_int_eq(
		ea_policy_load("/nonexistent/extalign.conf", dropins, projid, projects, &p, &d),
		-ENOENT);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_uint_eq(d.items[0].line, 0);
	ck_assert(strstr(d.items[0].msg, "cannot read"));
	ea_diags_free(&d);

	/* The drop-in directory need not. */
	write_file(conf, "[rule a]\ndirectory = /a\nextsize = 16k\n");
	snprintf(nodir, sizeof(nodir), "%s/none.d", dir);
	ck_assert_int_eq(ea_policy_load(conf, nodir, projid, projects, &p, &d), 0);
	ea_policy_free(p);
}
END_TEST

START_TEST(test_dropin_order)
{
	struct ea_policy *p;
	char sub[256];

	write_dropin("20-b.conf", "[daemon]\nidle_time = 20s\n[rule b]\ndirectory = /b\n"
				  "extsize = 16k\n");
	write_dropin("10-a.conf", "[daemon]\nidle_time = 10s\nidle_poll = 100ms\n[rule a]\n"
				  "directory = /a\nextsize = 16k\n");
	/* Not drop-ins: other suffix, hidden, a directory. */
	write_dropin("30-c.conf.bak", "garbage\n");
	write_dropin(".40-d.conf", "garbage\n");
	write_dropin("README", "garbage\n");
	snprintf(sub, sizeof(sub), "%s/50-e.conf", dropins);
	ck_assert_int_eq(mkdir(sub, 0755), 0);

	p = load_ok("[daemon]\nidle_time = 1s\nrealign_queue_max = 7\n"
		    "[rule main]\ndirectory = /m\nextsize = 16k\n");
	ck_assert_uint_eq(p->n_files, 3);
	ck_assert_str_eq(p->files[0], conf);
	ck_assert(strstr(p->files[1], "/10-a.conf"));
	ck_assert(strstr(p->files[2], "/20-b.conf"));
	ck_assert_uint_eq(p->n_rules, 3);
	ck_assert_str_eq(p->rules[0].name, "main");
	ck_assert_str_eq(p->rules[1].name, "a");
	ck_assert_str_eq(p->rules[2].name, "b");
	ck_assert_str_eq(p->rules[2].file, p->files[2]);
	/* [daemon]: the last file that sets a key wins, the others stay. */
	ck_assert_uint_eq(p->daemon.idle_time_usec, 20000000);
	ck_assert_uint_eq(p->daemon.idle_poll_usec, 100000);
	ck_assert_uint_eq(p->daemon.realign_queue_max, 7);
	ea_policy_free(p);

	/* No drop-ins at all when asked. */
	{
		struct ea_diags d = EA_DIAGS_INIT;

		ck_assert_int_eq(
			ea_policy_load(conf, EA_POLICY_NO_DROPINS, projid, projects, &p, &d), 0);
		ck_assert_uint_eq(p->n_files, 1);
		ck_assert_uint_eq(p->n_rules, 1);
		ea_policy_free(p);
	}
}
END_TEST

START_TEST(test_precedence_depth_and_match)
{
	struct ea_policy *p =
		load_ok("[rule root]\ndirectory = /\nextsize = 4k\n"
			"[rule data]\ndirectory = /data\nextsize = 16k\n"
			"[rule ibd]\ndirectory = /data\nmatch = *.ibd\nextsize = 64k\n"
			"[rule db]\ndirectory = /data/db\nextsize = 32k\n"
			"[rule none]\ndirectory = /data/db/logs\nextsize = none\n");

	/* Deeper beats shallower, even against a rule with match higher up. */
	ck_assert_str_eq(lookup(p, "/data/db/t.ibd", false, 0), "db");
	/* With match beats without, same directory. */
	ck_assert_str_eq(lookup(p, "/data/t.ibd", false, 0), "ibd");
	ck_assert_str_eq(lookup(p, "/data/t.frm", false, 0), "data");
	ck_assert_str_eq(lookup(p, "/etc/passwd", false, 0), "root");
	/* An exception tree: a rule that sets nothing still wins. */
	ck_assert_str_eq(lookup(p, "/data/db/logs/x.ibd", false, 0), "none");
	/* Directories: the rule with match is not for them. */
	ck_assert_str_eq(lookup(p, "/data", true, 0), "data");
	ea_policy_free(p);
}
END_TEST

START_TEST(test_precedence_project)
{
	struct ea_policy *p;
	struct ea_explain e;
	const struct ea_rule *w;

	write_file(projid, "# names\nmysql:42\npg : 43\n");
	write_file(projects, "42:/srv/mysql\nmysql:/srv/mysql2\n43:/srv/pg\n");
	p = load_ok("[rule deep]\ndirectory = /srv/mysql/data/deeper\nextsize = 16k\n"
		    "[rule my]\nproject = mysql\nextsize = 64k\n"
		    "[rule myfs]\nproject = 42\nfilesystem = /srv/mysql\nextsize = 128k\n"
		    "[rule myibd]\nproject = 42\nfilesystem = /srv/mysql\nmatch = *.ibd\n"
		    "extsize = 256k\n"
		    "[rule pg]\nproject = pg\nfilesystem = /srv/pg\nextsize = 8k\n");

	ck_assert_uint_eq(rule(p, "my")->projid, 42);
	ck_assert_uint_eq(rule(p, "my")->n_project_dirs, 2);
	ck_assert_str_eq(rule(p, "my")->project_dirs[1], "/srv/mysql2");
	ck_assert_uint_eq(rule(p, "pg")->projid, 43);

	/* A project rule beats a deeper directory rule. */
	ck_assert_str_eq(lookup(p, "/srv/mysql/data/deeper/t.ibd", false, 42), "myibd");
	ck_assert_str_eq(lookup(p, "/srv/mysql/data/deeper/t.frm", false, 42), "myfs");
	/* Outside the filesystem only the unlimited project rule is left. */
	ck_assert_str_eq(lookup(p, "/other/t.ibd", false, 42), "my");
	/* Without the project id the directory rule is all there is. */
	ck_assert_str_eq(lookup(p, "/srv/mysql/data/deeper/t.ibd", false, 0), "deep");
	ck_assert_str_eq(lookup(p, "/srv/mysql/data/deeper/t.ibd", false, 7), "deep");

	/* The explain trace: winner, outranked in precedence order, then rejected. */
	ck_assert_int_eq(ea_policy_lookup(p, "/srv/mysql/data/deeper/t.ibd", false, 42, &w, &e), 0);
	ck_assert_ptr_eq(e.winner, w);
	ck_assert_uint_eq(e.n_steps, 5);
	ck_assert_str_eq(e.steps[0].rule->name, "myibd");
	ck_assert_int_eq(e.steps[0].reason, EA_REASON_WINS);
	ck_assert_str_eq(e.steps[1].rule->name, "myfs");
	ck_assert_int_eq(e.steps[1].reason, EA_REASON_MATCH_FIRST);
	ck_assert_str_eq(e.steps[2].rule->name, "my");
	ck_assert_int_eq(e.steps[2].reason, EA_REASON_FILESYSTEM_FIRST);
	ck_assert_str_eq(e.steps[3].rule->name, "deep");
	ck_assert_int_eq(e.steps[3].reason, EA_REASON_PROJECT_FIRST);
	ck_assert_str_eq(e.steps[4].rule->name, "pg");
	ck_assert_int_eq(e.steps[4].reason, EA_REASON_OTHER_PROJECT);
	ck_assert(ea_reason_outranked(e.steps[3].reason));
	ck_assert(!ea_reason_outranked(e.steps[4].reason));
	ea_explain_free(&e);

	ck_assert_int_eq(ea_policy_lookup(p, "/srv/pg/x", false, 43, &w, &e), 0);
	ck_assert_str_eq(w->name, "pg");
	ea_explain_free(&e);
	ck_assert_int_eq(ea_policy_lookup(p, "/srv/x", false, 0, &w, &e), 0);
	ck_assert_ptr_null(w);
	for (size_t i = 0; i < e.n_steps; i++)
		ck_assert_int_ne(e.steps[i].reason, EA_REASON_WINS);
	ck_assert_int_eq(e.steps[1].reason, EA_REASON_NO_PROJECT);
	ea_explain_free(&e);
	ea_policy_free(p);
}
END_TEST

START_TEST(test_deeper_filesystem)
{
	struct ea_policy *p;
	struct ea_explain e;

	write_file(projid, "db:5\n");
	p = load_ok("[rule outer]\nproject = db\nfilesystem = /srv\nextsize = 16k\n"
		    "[rule inner]\nproject = db\nfilesystem = /srv/fast\nextsize = 64k\n");
	ck_assert_int_eq(ea_policy_lookup(p, "/srv/fast/x", false, 5, NULL, &e), 0);
	ck_assert_str_eq(e.winner->name, "inner");
	ck_assert_int_eq(e.steps[1].reason, EA_REASON_DEEPER_WINS);
	ea_explain_free(&e);
	ck_assert_str_eq(lookup(p, "/srv/slow/x", false, 5), "outer");
	ck_assert_str_eq(lookup(p, "/srvx/x", false, 5), "-");
	ea_policy_free(p);
}
END_TEST

START_TEST(test_components)
{
	struct ea_policy *p = load_ok("[rule db]\ndirectory = /data/db\nextsize = 16k\n");
	const struct ea_rule *r;

	ck_assert_str_eq(lookup(p, "/data/db", false, 0), "db");
	ck_assert_str_eq(lookup(p, "/data/db/x", false, 0), "db");
	ck_assert_str_eq(lookup(p, "/data/dbx", false, 0), "-");
	ck_assert_str_eq(lookup(p, "/data/dbx/y", false, 0), "-");
	ck_assert_str_eq(lookup(p, "/data/d", false, 0), "-");
	ck_assert_str_eq(lookup(p, "/data", true, 0), "-");
	/* The lookup normalises its argument. */
	ck_assert_str_eq(lookup(p, "//data/./db///x/", false, 0), "db");
	ck_assert_int_eq(ea_policy_lookup(p, "data/db/x", false, 0, &r, NULL), -EINVAL);
	ck_assert_int_eq(ea_policy_lookup(p, "/data/db/../etc", false, 0, &r, NULL), -EINVAL);
	ck_assert_int_eq(ea_policy_lookup(p, "/data/x/../db/y", false, 0, &r, NULL), -EINVAL);
	ea_policy_free(p);
}
END_TEST

START_TEST(test_globs)
{
	struct ea_policy *p = load_ok("[rule db]\ndirectory = /d\nextsize = 16k\n"
				      "match = *.ibd ib[0-9]* [ ]x\nexclude = tmp* *.bak\n");
	struct ea_explain e;

	ck_assert_str_eq(lookup(p, "/d/t.ibd", false, 0), "db");
	/* '*' matches a leading dot: no FNM_PERIOD. */
	ck_assert_str_eq(lookup(p, "/d/.t.ibd", false, 0), "db");
	ck_assert_str_eq(lookup(p, "/d/ib7", false, 0), "db");
	ck_assert_str_eq(lookup(p, "/d/ ib", false, 0), "-");
	ck_assert_str_eq(lookup(p, "/d/ x", false, 0), "db");
	/* The glob is on the name only, never on the directories above. */
	ck_assert_str_eq(lookup(p, "/d/x.ibd/y", false, 0), "-");
	ck_assert_str_eq(lookup(p, "/d/tmp1.ibd", false, 0), "-");

	ck_assert_int_eq(ea_policy_lookup(p, "/d/t.ibd.bak", false, 0, NULL, &e), 0);
	ck_assert_int_eq(e.steps[0].reason, EA_REASON_NO_MATCH);
	ea_explain_free(&e);
	ck_assert_int_eq(ea_policy_lookup(p, "/d/x.ibd.bak", false, 0, NULL, &e), 0);
	ck_assert_int_eq(e.steps[0].reason, EA_REASON_NO_MATCH);
	ea_explain_free(&e);
	ck_assert_int_eq(ea_policy_lookup(p, "/d/tmp.ibd", false, 0, NULL, &e), 0);
	ck_assert_int_eq(e.steps[0].reason, EA_REASON_EXCLUDED);
	ck_assert_str_eq(e.steps[0].glob, "tmp*");
	ea_explain_free(&e);
	ea_policy_free(p);
}
END_TEST

START_TEST(test_directories)
{
	struct ea_policy *p =
		load_ok("[rule all]\ndirectory = /d\nextsize = 16k\n"
			"[rule ibd]\ndirectory = /d/db\nmatch = *.ibd\nextsize = 64k\n"
			"[rule nolog]\ndirectory = /d/app\nexclude = *.log\n"
			"extsize = 32k\ninherit = no\n");
	struct ea_explain e;
	struct ea_hint h;

	ck_assert_int_eq(ea_policy_lookup(p, "/d/db", true, 0, NULL, &e), 0);
	ck_assert_str_eq(e.winner->name, "all");
	ck_assert_str_eq(e.steps[1].rule->name, "ibd");
	ck_assert_int_eq(e.steps[1].reason, EA_REASON_FILES_ONLY);
	ck_assert(ea_rule_hint(e.winner, true, &h));
	ck_assert_uint_eq(h.extsize, 16384);
	ck_assert(h.inherit);
	ck_assert_int_eq(h.forcealign, 0);
	ea_explain_free(&e);

	/* A rule with only exclude applies to its directories; no glob on a directory's name. */
	ck_assert_str_eq(lookup(p, "/d/app/x.log", true, 0), "nolog");
	/* inherit = no: the directory is to carry no hint. */
	ck_assert(!ea_rule_hint(rule(p, "nolog"), true, &h));
	ck_assert(ea_rule_hint(rule(p, "nolog"), false, &h));
	ck_assert(!h.inherit);
	ea_policy_free(p);
}
END_TEST

START_TEST(test_rule_hint)
{
	struct ea_policy *p = load_ok("[rule f]\ndirectory = /f\nextsize = 64k\nforcealign = yes\n"
				      "[rule n]\ndirectory = /n\nextsize = none\n");
	struct ea_hint h;

	ck_assert(ea_rule_hint(rule(p, "f"), false, &h));
	ck_assert_uint_eq(h.extsize, 65536);
	ck_assert_int_eq(h.forcealign, 1);
	ck_assert(!h.inherit);
	ck_assert(!ea_rule_hint(rule(p, "n"), false, &h));
	ck_assert(!ea_rule_hint(rule(p, "n"), true, &h));
	ea_policy_free(p);
}
END_TEST

START_TEST(test_projects_errors)
{
	/* Unknown name, project 0, nothing to watch, malformed system files. */
	write_file(projid, "db:42\nempty:9\n");
	write_file(projects, "42:/srv/db\n");
	expect_error("[rule a]\nproject = nosuch\nextsize = 16k\n", 2,
		     "project 'nosuch' of rule 'a' is not in");
	expect_error("[rule a]\nproject = 0\nextsize = 16k\n", 2, "project 0 is the default");
	expect_error("[rule a]\nproject = 4294967296\nextsize = 16k\n", 2,
		     "expected a project id (1 to 4294967295)");
	expect_error("[rule a]\nproject = 12ab\nextsize = 16k\n", 2, "expected a project id");
	expect_error("[rule a]\nproject = a:b\nextsize = 16k\n", 2,
		     "invalid project 'a:b' in rule 'a': expected a project id or a name");
	expect_error("[rule a]\nproject = empty\nextsize = 16k\n", 1, "nothing to watch");

	{
		struct ea_policy *p = load_ok("[rule a]\nproject = empty\nfilesystem = /srv/\n"
					      "extsize = 16k\n");

		ck_assert_uint_eq(p->n_watch, 1);
		ck_assert_str_eq(p->watch[0].path, "/srv");
		ck_assert(p->watch[0].filesystem);
		ea_policy_free(p);
	}

	{
		struct ea_diags d = EA_DIAGS_INIT;
		struct ea_policy *p;

		write_file(projid, "db:42\nbroken\ndb:43\nx:-1\n");
		write_file(projects, "42:relative\n42\n77:/ok\n");
		ck_assert_int_eq(load("[rule a]\nproject = db\nextsize = 16k\n", &p, &d), -EINVAL);
		/* Five in the system files, then the rule that found no directory. */
		ck_assert_uint_eq(d.n, 6);
		ck_assert_str_eq(d.items[0].file, projid);
		ck_assert_uint_eq(d.items[0].line, 2);
		ck_assert_uint_eq(d.items[1].line, 3);
		ck_assert(strstr(d.items[1].msg, "listed twice"));
		ck_assert_uint_eq(d.items[2].line, 4);
		ck_assert_str_eq(d.items[3].file, projects);
		ck_assert_uint_eq(d.items[3].line, 1);
		ck_assert(strstr(d.items[3].msg, "absolute path"));
		ck_assert_uint_eq(d.items[4].line, 2);
		ck_assert_str_eq(d.items[5].file, conf);
		ck_assert(strstr(d.items[5].msg, "nothing to watch"));
		ea_diags_free(&d);
	}

	/* Without a project rule the files are not even read. */
	{
		struct ea_policy *p = load_ok("[rule a]\ndirectory = /a\nextsize = 16k\n");

		ea_policy_free(p);
	}
}
END_TEST

START_TEST(test_project_resolve)
{
	uint32_t id = 0;

	write_file(projid, "db:42\n");
	ck_assert_int_eq(ea_project_resolve(projid, "db", &id), 0);
	ck_assert_uint_eq(id, 42);
	ck_assert_int_eq(ea_project_resolve(projid, "17", &id), 0);
	ck_assert_uint_eq(id, 17);
	ck_assert_int_eq(ea_project_resolve(projid, "nope", &id), -ENOENT);
	ck_assert_int_eq(ea_project_resolve(projid, "0", &id), -EINVAL);
	ck_assert_int_eq(ea_project_resolve(projid, "1x", &id), -EINVAL);
	ck_assert_int_eq(ea_project_resolve("/nonexistent", "5", &id), 0);
}
END_TEST

START_TEST(test_dir_cover_and_watch)
{
	struct ea_policy *p;

	write_file(projid, "db:42\n");
	write_file(projects, "42:/srv/db\n42:/data/db/sub\n");
	p = load_ok("[rule a]\ndirectory = /data/db\nextsize = 16k\n"
		    "[rule b]\ndirectory = /data/db/x\nextsize = 16k\nmatch = *.ibd\n"
		    "[rule c]\nproject = db\nextsize = 16k\n"
		    "[rule d]\ndirectory = /data/dbx\nextsize = 16k\n"
		    /* Sorts between /data/db and /data/db/x: still inside /data/db. */
		    "[rule e]\ndirectory = /data/db-x\nextsize = 16k\n"
		    "[rule f]\ndirectory = /data/db/z\nextsize = 16k\n");
	ck_assert_uint_eq(p->n_watch, 4);
	ck_assert_str_eq(p->watch[0].path, "/data/db");
	ck_assert_str_eq(p->watch[1].path, "/data/db-x");
	ck_assert_str_eq(p->watch[2].path, "/data/dbx");
	ck_assert_str_eq(p->watch[3].path, "/srv/db");

	ck_assert_int_eq(ea_policy_dir_cover(p, "/data/db"), EA_DIR_INSIDE);
	ck_assert_int_eq(ea_policy_dir_cover(p, "/data/db/x/y"), EA_DIR_INSIDE);
	ck_assert_int_eq(ea_policy_dir_cover(p, "/data"), EA_DIR_ABOVE);
	ck_assert_int_eq(ea_policy_dir_cover(p, "/"), EA_DIR_ABOVE);
	ck_assert_int_eq(ea_policy_dir_cover(p, "/srv/"), EA_DIR_ABOVE);
	ck_assert_int_eq(ea_policy_dir_cover(p, "/srv/db/q"), EA_DIR_INSIDE);
	ck_assert_int_eq(ea_policy_dir_cover(p, "/srv/dbq"), EA_DIR_OUTSIDE);
	ck_assert_int_eq(ea_policy_dir_cover(p, "/etc"), EA_DIR_OUTSIDE);
	ck_assert_int_eq(ea_policy_dir_cover(p, "etc"), -EINVAL);
	ea_policy_free(p);
}
END_TEST

START_TEST(test_path_normalize)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{ "/", "/" },	       { "//", "/" },	   { "/a/", "/a" },
		{ "/a//b", "/a/b" },   { "/./a/.", "/a" }, { "/a/.b/..c", "/a/.b/..c" },
		{ "/a/./b/", "/a/b" }, { "/...", "/..." },
	};
	static const char *const bad[] = { "", "a", "./a", "/a/..", "/../a", "/a/../b" };
	char *s;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_int_eq(ea_path_normalize(ok[i].in, &s), 0);
		ck_assert_str_eq(s, ok[i].out);
		free(s);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(ea_path_normalize(bad[i], &s), -EINVAL);

	ck_assert(ea_path_under("/a/b", "/a"));
	ck_assert(ea_path_under("/a", "/a"));
	ck_assert(ea_path_under("/a", "/"));
	ck_assert(!ea_path_under("/ab", "/a"));
	ck_assert(!ea_path_under("/a", "/a/b"));
}
END_TEST

START_TEST(test_duration)
{
	uint64_t u;

	ck_assert_int_eq(ea_duration_parse("90", &u), 0);
	ck_assert_uint_eq(u, 90000000);
	ck_assert_int_eq(ea_duration_parse("1h30min", &u), 0);
	ck_assert_uint_eq(u, 5400000000ULL);
	ck_assert_int_eq(ea_duration_parse("2d", &u), 0);
	ck_assert_uint_eq(u, 172800000000ULL);
	ck_assert_int_eq(ea_duration_parse("1s500ms7us", &u), 0);
	ck_assert_uint_eq(u, 1500007);
	ck_assert_int_eq(ea_duration_parse("0", &u), 0);
	ck_assert_uint_eq(u, 0);
	ck_assert_int_eq(ea_duration_parse("", &u), -EINVAL);
	ck_assert_int_eq(ea_duration_parse("5m", &u), -EINVAL);
	ck_assert_int_eq(ea_duration_parse("1h30", &u), -EINVAL);
	ck_assert_int_eq(ea_duration_parse("-1s", &u), -EINVAL);
	ck_assert_int_eq(ea_duration_parse("1 s", &u), -EINVAL);
	ck_assert_int_eq(ea_duration_parse("s", &u), -EINVAL);
	ck_assert_int_eq(ea_duration_parse("99999999999999999999s", &u), -ERANGE);
	ck_assert_int_eq(ea_duration_parse("999999999999d", &u), -ERANGE);
}
END_TEST

START_TEST(test_windows)
{
	struct ea_daemon_conf d = { 0 };

	ck_assert(ea_daemon_in_window(&d, 0));
	d.n_realign_windows = 2;
	d.realign_windows[0] = (struct ea_time_window){ 22 * 60, 6 * 60 };
	d.realign_windows[1] = (struct ea_time_window){ 12 * 60, 13 * 60 };
	ck_assert(ea_daemon_in_window(&d, 23 * 60));
	ck_assert(ea_daemon_in_window(&d, 0));
	ck_assert(ea_daemon_in_window(&d, 5 * 60 + 59));
	ck_assert(!ea_daemon_in_window(&d, 6 * 60));
	ck_assert(ea_daemon_in_window(&d, 12 * 60));
	ck_assert(!ea_daemon_in_window(&d, 13 * 60));
	ck_assert(!ea_daemon_in_window(&d, 21 * 60 + 59));
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_valid_full);
	tcase_add_test(tc, test_daemon_defaults);
	tcase_add_test(tc, test_empty_config);
	tcase_add_test(tc, test_errors_sections);
	tcase_add_test(tc, test_errors_keys);
	tcase_add_test(tc, test_errors_paths);
	tcase_add_test(tc, test_errors_sizes);
	tcase_add_test(tc, test_errors_rule_shape);
	tcase_add_test(tc, test_errors_daemon_values);
	tcase_add_test(tc, test_daemon_zero_means_no_limit);
	tcase_add_test(tc, test_all_errors_reported);
	tcase_add_test(tc, test_duplicate_rule_name);
	tcase_add_test(tc, test_ties);
	tcase_add_test(tc, test_inih_is_lenient);
	tcase_add_test(tc, test_overlong_lines);
	tcase_add_test(tc, test_lexical);
	tcase_add_test(tc, test_missing_files);
	tcase_add_test(tc, test_dropin_order);
	tcase_add_test(tc, test_precedence_depth_and_match);
	tcase_add_test(tc, test_precedence_project);
	tcase_add_test(tc, test_deeper_filesystem);
	tcase_add_test(tc, test_components);
	tcase_add_test(tc, test_globs);
	tcase_add_test(tc, test_directories);
	tcase_add_test(tc, test_rule_hint);
	tcase_add_test(tc, test_projects_errors);
	tcase_add_test(tc, test_project_resolve);
	tcase_add_test(tc, test_dir_cover_and_watch);
	tcase_add_test(tc, test_path_normalize);
	tcase_add_test(tc, test_duration);
	tcase_add_test(tc, test_windows);
	return run_suite("policy", tc);
}
