// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign policy check|explain|show: validate the rules of extalign.conf(5),
 * say which rule applies to a path and why, and list the effective rules.
 */
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <libsmartcols.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "escape.h"
#include "config.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/policy.h"
#include "extalign/unit-paths.h"
#include "extalign/size.h"
#include "table.h"

struct policy_opts {
	const char *config;
	const char *config_dir;
	const char *projid;
	const char *projects;
	const char *project; /* explain --project */
	uint32_t project_id; /* ... resolved */
	bool json;
	bool noheadings;
	bool quiet;
	bool daemon;
};

enum {
	OPT_PROJID = 0x100,
	OPT_PROJECTS,
	OPT_NOHEADINGS,
};

#define COMMON_OPTIONS                                                 \
	{ "config", required_argument, NULL, 'c' },                    \
		{ "config-dir", required_argument, NULL, 'd' },        \
		{ "projid", required_argument, NULL, OPT_PROJID },     \
		{ "projects", required_argument, NULL, OPT_PROJECTS }, \
	{                                                              \
		"help", no_argument, NULL, 'h'                         \
	}

#define COMMON_HELP                                                                            \
	"  -c, --config FILE      read FILE instead of " EA_POLICY_CONF ", and no drop-ins\n"  \
	"  -d, --config-dir DIR   read drop-ins from DIR (default " EA_POLICY_DROPIN_DIR ")\n" \
	"      --projid FILE      project names (default " EA_POLICY_PROJID ")\n"              \
	"      --projects FILE    project directories (default " EA_POLICY_PROJECTS ")\n"

static void usage(FILE *out)
{
	fputs("Usage: extalign policy COMMAND [options]\n\n"
	      "The rules of extalign.conf(5): which files get which extent size hint.\n\n"
	      "Commands:\n"
	      "  check               validate the configuration, print every error\n"
	      "  explain PATH...     the rule for each path, and why the others lost\n"
	      "  show                the effective rules after drop-ins\n\n"
	      "Run 'extalign policy COMMAND --help' for the options of a command.\n",
	      out);
}

static void usage_check(FILE *out)
{
	fputs("Usage: extalign policy check [options]\n\n"
	      "Validate the configuration and print every error with file:line.\n\n"
	      "Options:\n" COMMON_HELP "  -q, --quiet            print nothing when it is valid\n"
	      "  -h, --help             show this help\n",
	      out);
}

static void usage_explain(FILE *out)
{
	fputs("Usage: extalign policy explain [options] PATH...\n\n"
	      "Show the rule that applies to each path, which rules were considered and\n"
	      "why they lost.  A path need not exist (a trailing '/' makes it a directory).\n"
	      "Exit status: 0 a rule applies to every path, 1 some path has none.\n\n"
	      "Options:\n" COMMON_HELP
	      "      --project ID|NAME  take this project id instead of the path's own\n"
	      "  -J, --json             JSON output\n"
	      "      --noheadings       do not print the tables' header lines\n"
	      "  -h, --help             show this help\n",
	      out);
}

static void usage_show(FILE *out)
{
	fputs("Usage: extalign policy show [options]\n\n"
	      "List the effective rules after drop-ins, or the [daemon] settings.\n\n"
	      "Options:\n" COMMON_HELP "  -D, --daemon           the [daemon] settings instead\n"
	      "      --noheadings       do not print the header line\n"
	      "  -J, --json             JSON output (sizes in bytes)\n"
	      "  -h, --help             show this help\n",
	      out);
}

/*
 * Load, print every diagnostic.  EXIT_OK, EXIT_NEGATIVE for a configuration
 * read but found invalid, EXIT_FAILED for one that could not be read.
 */
static int load(const struct policy_opts *o, struct ea_policy **ret)
{
	const struct config_paths paths = {
		.config = o->config,
		.config_dir = o->config_dir,
		.projid = o->projid,
		.projects = o->projects,
	};

	int r = config_read(&paths, ret);

	return r == -EINVAL ? EXIT_NEGATIVE : r < 0 ? EXIT_FAILED : EXIT_OK;
}

static void tablep(struct libscols_table **tb)
{
	scols_unref_table(*tb);
}

static struct libscols_table *new_table(const char *name, bool json, bool noheadings)
{
	struct libscols_table *tb = scols_new_table();

	if (!tb || scols_table_set_name(tb, name) < 0)
		errx(EXIT_FAILED, "out of memory");
	scols_table_enable_json(tb, json);
	scols_table_enable_noheadings(tb, noheadings);
	return tb;
}

static struct libscols_column *new_column(struct libscols_table *tb, const char *name, double width,
					  int flags, int json_type)
{
	struct libscols_column *cl = scols_table_new_column(tb, name, width, flags);

	if (!cl || scols_column_set_json_type(cl, json_type) < 0)
		errx(EXIT_FAILED, "out of memory");
	return cl;
}

static void set(struct libscols_line *ln, struct libscols_column *cl, const char *s)
{
	if (cl && s && scols_line_set_column_data(ln, cl, s) < 0)
		errx(EXIT_FAILED, "out of memory");
}

static void setf(struct libscols_line *ln, struct libscols_column *cl, const char *fmt, ...)
	_printf_(3, 4);
static void setf(struct libscols_line *ln, struct libscols_column *cl, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	if (!cl)
		return;
	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0 || scols_line_refer_column_data(ln, cl, s) < 0)
		errx(EXIT_FAILED, "out of memory");
}

static struct libscols_line *new_line(struct libscols_table *tb)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);

	if (!ln)
		errx(EXIT_FAILED, "out of memory");
	return ln;
}

/* Globs joined by sep; "" for none. */
static char *join(char **v, size_t n, const char *sep)
{
	size_t len = 1;
	char *s, *p;

	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + strlen(sep);
	s = p = malloc(len);
	if (!s)
		errx(EXIT_FAILED, "out of memory");
	*p = '\0';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i ? sep : "", v[i]);
	return s;
}

/*
 * The trees extalignd.service cannot write: those no unit line can name,
 * and, where systemd ran extalign-generator, those its drop-in does not
 * list yet (rules added since the last boot or daemon-reload).  Warnings
 * only: the configuration itself is valid.
 */
static void check_unit_reach(const struct ea_policy *p)
{
	static const char *const unit_own[] = { EA_UNIT_OWN_WRITABLE };
	const char *dropin = secure_getenv("EXTALIGN_UNIT_DROPIN");
	struct ea_unit_paths u = { 0 };
	char **listed = NULL;
	size_t n_listed = 0;
	int r;

	if (ea_unit_paths_of_policy(p, &u) < 0)
		errx(EXIT_FAILED, "out of memory");
	for (size_t i = 0; i < u.n_skipped; i++)
		warnx_path(u.skipped[i].path,
			   "warning: out of reach of %s: %s; move the tree or run extalignd "
			   "outside the unit",
			   EA_UNIT_NAME, u.skipped[i].why);
	r = ea_unit_dropin_read(dropin ? dropin : EA_UNIT_DROPIN_RUN, &listed, &n_listed);
	if (r < 0 && r != -ENOENT)
		warnx("warning: %s: %s", dropin ? dropin : EA_UNIT_DROPIN_RUN, strerror(-r));
	for (size_t i = 0; r >= 0 && i < u.n_writable; i++) {
		const char *t = u.writable[i];

		if (ea_unit_paths_cover(listed, n_listed, t) ||
		    ea_unit_paths_cover((char *const *)unit_own, ARRAY_SIZE(unit_own), t))
			continue;
		warnx_path(t,
			   "warning: read-only to the running %s until \"systemctl "
			   "daemon-reload && systemctl restart extalignd\" (extalign-generator "
			   "then adds it)",
			   EA_UNIT_NAME);
	}
	ea_unit_dropin_paths_free(listed, n_listed);
	ea_unit_paths_free(&u);
}

static int run_check(const struct policy_opts *o, const struct ea_policy *p, char **paths,
		     int n_paths)
{
	(void)paths;
	(void)n_paths;
	if (!o->quiet)
		printf("valid: %zu rule%s from %zu file%s, %zu tree%s to watch\n", p->n_rules,
		       p->n_rules == 1 ? "" : "s", p->n_files, p->n_files == 1 ? "" : "s",
		       p->n_watch, p->n_watch == 1 ? "" : "s");
	check_unit_reach(p);
	return EXIT_OK;
}

/* ---- explain ---- */

struct resolved {
	char *path; /* absolute, parents resolved */
	bool is_dir;
	bool exists;
	uint32_t projid;
};

/* fsx_projid of path, or EA_PROJID_NONE when it cannot be read. */
static uint32_t read_projid(const char *path, bool only_if_inherited)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct fsxattr fsx;

	if (fd < 0 || ea_fsx_get(fd, &fsx) < 0)
		return EA_PROJID_NONE;
	/* A new file takes the directory's project only under PROJINHERIT. */
	if (only_if_inherited && !(fsx.fsx_xflags & FS_XFLAG_PROJINHERIT))
		return EA_PROJID_NONE;
	return fsx.fsx_projid;
}

/* EXIT_OK, or an exit code after saying what is wrong. */
static int resolve(const char *arg, struct resolved *ret)
{
	_cleanup_free_ char *copy = NULL, *copy2 = NULL, *abs = NULL;
	char *parent, *real;
	struct stat st;
	int r;

	*ret = (struct resolved){ 0 };
	if (lstat(arg, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			warnx_path(arg,
				   "is a symbolic link; extalign never sets a hint through one");
			return EXIT_NEGATIVE;
		}
		real = realpath(arg, NULL);
		if (!real) {
			warn_path(arg);
			return EXIT_FAILED;
		}
		ret->path = real;
		ret->exists = true;
		ret->is_dir = S_ISDIR(st.st_mode);
		ret->projid = read_projid(real, false);
		return EXIT_OK;
	}
	if (errno != ENOENT) {
		warn_path(arg);
		return EXIT_FAILED;
	}
	/* Not there (yet): what would a file created there get? */
	ret->is_dir = arg[0] && arg[strlen(arg) - 1] == '/';
	copy = strdup(arg);
	copy2 = strdup(arg);
	if (!copy || !copy2)
		errx(EXIT_FAILED, "out of memory");
	parent = dirname(copy);
	real = realpath(parent, NULL);
	if (real) {
		const char *base = basename(copy2);

		r = asprintf(&abs, "%s/%s", real, base);
		ret->projid = read_projid(real, true);
		free(real);
	} else if (arg[0] == '/') {
		r = asprintf(&abs, "%s", arg);
	} else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);

		if (!cwd) {
			warn("cannot get the current directory");
			return EXIT_FAILED;
		}
		r = asprintf(&abs, "%s/%s", cwd, arg);
	}
	if (r < 0)
		errx(EXIT_FAILED, "out of memory");
	r = ea_path_normalize(abs, &ret->path);
	if (r == -ENOMEM)
		errx(EXIT_FAILED, "out of memory");
	if (r < 0) {
		warnx_path(arg, "does not exist and has a '..' that cannot be resolved");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

struct explain_cols {
	struct libscols_column *path, *type, *projid, *rule, *verdict, *defined, *reason;
};

static const char *verdict_str(enum ea_reason r)
{
	if (r == EA_REASON_WINS)
		return "applies";
	return ea_reason_outranked(r) ? "outranked" : "rejected";
}

/* What the rule covers, in words: "directory /data/db, match *.ibd". */
static char *rule_place(const struct ea_rule *r)
{
	_cleanup_free_ char *globs = join(r->match, r->n_match, " ");
	char *s;
	int n;

	if (r->kind == EA_RULE_DIRECTORY)
		n = asprintf(&s, "directory %s%s%s%s%s%s", r->directory,
			     r->directory_link ? " (through the link " : "",
			     r->directory_link ?: "", r->directory_link ? ")" : "",
			     r->n_match ? ", match " : "", globs);
	else
		n = asprintf(&s, "project %s (%u)%s%s%s%s", r->project, r->projid,
			     r->filesystem ? " on " : "", r->filesystem ?: "",
			     r->n_match ? ", match " : "", globs);
	if (n < 0)
		errx(EXIT_FAILED, "out of memory");
	return s;
}

static void explain_row(struct libscols_table *tb, const struct explain_cols *c,
			const struct resolved *res, const struct ea_explain_step *s)
{
	struct libscols_line *ln = new_line(tb);
	const struct ea_rule *r = s ? s->rule : NULL;

	set(ln, c->path, res->path);
	set(ln, c->type, res->is_dir ? "directory" : "file");
	setf(ln, c->projid, "%u", res->projid);
	if (!s) {
		set(ln, c->verdict, "none");
		set(ln, c->reason, "no rule applies");
		return;
	}
	set(ln, c->rule, r->name);
	set(ln, c->verdict, verdict_str(s->reason));
	setf(ln, c->defined, "%s:%u", r->file, r->line);

	switch (s->reason) {
	case EA_REASON_WINS: {
		_cleanup_free_ char *place = rule_place(r);

		setf(ln, c->reason, "%s", place);
		break;
	}
	case EA_REASON_OUTSIDE_DIRECTORY:
		setf(ln, c->reason, "outside %s", r->directory);
		break;
	case EA_REASON_OTHER_PROJECT:
		setf(ln, c->reason, "project id %u, the rule is for %s (%u)", res->projid,
		     r->project, r->projid);
		break;
	case EA_REASON_OUTSIDE_FILESYSTEM:
		setf(ln, c->reason, "outside filesystem %s", r->filesystem);
		break;
	case EA_REASON_NO_MATCH: {
		_cleanup_free_ char *globs = join(r->match, r->n_match, " ");

		setf(ln, c->reason, "the name matches none of: %s", globs);
		break;
	}
	case EA_REASON_EXCLUDED:
		setf(ln, c->reason, "excluded by '%s'", s->glob);
		break;
	default:
		set(ln, c->reason, ea_reason_str(s->reason));
		break;
	}
}

/* "extsize 64K, forcealign, inherit" or why nothing is set. */
static void print_hint(const struct resolved *res, const struct ea_rule *w)
{
	char buf[EA_SIZE_BUFSZ];
	struct ea_hint h;

	printf("%s: ", res->path);
	if (!w) {
		printf("no rule applies\n");
		return;
	}
	printf("rule '%s' (%s:%u): ", w->name, w->file, w->line);
	if (!ea_rule_hint(w, res->is_dir, &h))
		printf("%s\n", !w->extsize ? "no hint (extsize = none)"
					   : "no inheritance (inherit = no): new files are "
					     "hinted one by one");
	else
		printf("%s%s %s%s%s\n", res->is_dir ? "new files inherit " : "", "extsize",
		       ea_size_format(h.extsize, buf), h.forcealign > 0 ? ", forcealign" : "",
		       w->realign && !res->is_dir ? ", realign" : "");
}

static int run_explain(const struct policy_opts *o, const struct ea_policy *p, char **paths,
		       int n_paths)
{
	_cleanup_(tablep) struct libscols_table *json_tb = NULL;
	int r, rc = EXIT_OK;

	struct explain_cols jc = { 0 };
	if (o->json) {
		json_tb = new_table("verdicts", true, false);
		jc.path = new_column(json_tb, "path", 0, 0, SCOLS_JSON_STRING);
		jc.type = new_column(json_tb, "type", 0, 0, SCOLS_JSON_STRING);
		jc.projid = new_column(json_tb, "projid", 0, 0, SCOLS_JSON_NUMBER);
		jc.rule = new_column(json_tb, "rule", 0, 0, SCOLS_JSON_STRING);
		jc.verdict = new_column(json_tb, "verdict", 0, 0, SCOLS_JSON_STRING);
		jc.defined = new_column(json_tb, "defined", 0, 0, SCOLS_JSON_STRING);
		jc.reason = new_column(json_tb, "reason", 0, 0, SCOLS_JSON_STRING);
	}

	for (int i = 0; i < n_paths; i++) {
		_cleanup_(tablep) struct libscols_table *tb = NULL;
		struct explain_cols tc = { 0 };
		const struct explain_cols *cols = &jc;
		struct resolved res;
		struct ea_explain e;
		int one;

		one = resolve(paths[i], &res);
		if (one != EXIT_OK) {
			rc = exit_worst(rc, one);
			continue;
		}
		if (o->project)
			res.projid = o->project_id;
		r = ea_policy_lookup(p, res.path, res.is_dir, res.projid, NULL, &e);
		if (r < 0) {
			if (r == -ENOMEM)
				errx(EXIT_FAILED, "out of memory");
			warnx_path(paths[i], "cannot be looked up: %s", strerror(-r));
			free(res.path);
			rc = exit_worst(rc, EXIT_FAILED);
			continue;
		}
		if (!e.winner)
			rc = exit_worst(rc, EXIT_NEGATIVE);

		if (!o->json) {
			tb = new_table("explain", false, o->noheadings);
			tc.rule = new_column(tb, "RULE", 0, 0, SCOLS_JSON_STRING);
			tc.verdict = new_column(tb, "VERDICT", 0, 0, SCOLS_JSON_STRING);
			tc.defined = new_column(tb, "DEFINED", 0, 0, SCOLS_JSON_STRING);
			tc.reason = new_column(tb, "REASON", 0, 0, SCOLS_JSON_STRING);
			cols = &tc;
			if (i > 0)
				putchar('\n');
			print_hint(&res, e.winner);
		}
		if (!e.winner && o->json)
			explain_row(json_tb, cols, &res, NULL);
		for (size_t j = 0; j < e.n_steps; j++)
			explain_row(tb ?: json_tb, cols, &res, &e.steps[j]);
		if (tb && e.n_steps)
			scols_print_table(tb);
		ea_explain_free(&e);
		free(res.path);
	}
	if (json_tb)
		table_print_json(json_tb);
	return rc;
}

/* ---- show ---- */

/* "1h30min": the largest units that add up exactly, so it parses back. */
static void format_duration(uint64_t usec, char *buf, size_t len)
{
	static const struct {
		const char *unit;
		uint64_t usec;
	} units[] = { { "d", 86400000000ULL }, { "h", 3600000000ULL }, { "min", 60000000ULL },
		      { "s", 1000000ULL },     { "ms", 1000ULL },      { "us", 1 } };
	size_t n = 0;

	if (!usec) {
		snprintf(buf, len, "0");
		return;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(units) && usec; i++) {
		if (usec < units[i].usec)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%llu%s",
				      (unsigned long long)(usec / units[i].usec), units[i].unit);
		usec %= units[i].usec;
		if (n >= len)
			break;
	}
}

static char *xasprintf(const char *fmt, ...) _printf_(1, 2);
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		errx(EXIT_FAILED, "out of memory");
	return s;
}

static char *duration_str(uint64_t usec)
{
	char buf[64];

	format_duration(usec, buf, sizeof(buf));
	return xasprintf("%s", buf);
}

/* JSON: bytes; text: "64K" as the config would have it. */
static char *size_str(uint64_t v, bool json)
{
	char buf[EA_SIZE_BUFSZ];

	return json ? xasprintf("%llu", (unsigned long long)v)
		    : xasprintf("%s", ea_size_format(v, buf));
}

static char *windows_str(const struct ea_daemon_conf *d)
{
	char buf[EA_TIME_WINDOWS_MAX * 12 + 1] = "";
	size_t n = 0;

	for (size_t i = 0; i < d->n_realign_windows; i++) {
		const struct ea_time_window *w = &d->realign_windows[i];

		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%02u:%02u-%02u:%02u",
				      i ? " " : "", w->start / 60u, w->start % 60u, w->end / 60u,
				      w->end % 60u);
	}
	return xasprintf("%s", buf);
}

/* JSON: seconds, as every duration of extalign's JSON; text: as in the config. */
static char *duration_or_seconds(uint64_t usec, bool json)
{
	return json ? xasprintf("%g", (double)usec / 1e6) : duration_str(usec);
}

static int show_daemon(const struct ea_daemon_conf *d, bool json)
{
	static const char *const watch[] = { "auto", "fanotify", "inotify" };
	/* Sizes and durations: numbers in JSON, the config's words in text. */
	int number_type = json ? SCOLS_JSON_NUMBER : SCOLS_JSON_STRING;
	const struct {
		const char *key;
		int type;
		char *value;
	} kv[] = {
		{ "watch", SCOLS_JSON_STRING, xasprintf("%s", watch[d->watch]) },
		{ "idle_io_pressure", SCOLS_JSON_NUMBER, xasprintf("%g", d->idle_io_pressure) },
		{ "idle_disk_util", SCOLS_JSON_NUMBER, xasprintf("%g", d->idle_disk_util) },
		{ "idle_cpu_load", SCOLS_JSON_NUMBER, xasprintf("%g", d->idle_cpu_load) },
		{ "idle_time", number_type, duration_or_seconds(d->idle_time_usec, json) },
		{ "idle_poll", number_type, duration_or_seconds(d->idle_poll_usec, json) },
		{ "realign", SCOLS_JSON_BOOLEAN, xasprintf("%s", d->realign ? "yes" : "no") },
		{ "realign_bwlimit", number_type, size_str(d->realign_bwlimit, json) },
		{ "realign_max_file_size", number_type, size_str(d->realign_max_file_size, json) },
		{ "realign_max_time", number_type,
		  duration_or_seconds(d->realign_max_time_usec, json) },
		{ "realign_scan_interval", number_type,
		  duration_or_seconds(d->realign_scan_interval_usec, json) },
		{ "realign_queue_max", SCOLS_JSON_NUMBER,
		  xasprintf("%llu", (unsigned long long)d->realign_queue_max) },
		{ "realign_windows", SCOLS_JSON_STRING, windows_str(d) },
		{ "metrics_file", SCOLS_JSON_STRING,
		  xasprintf("%s", d->metrics_file ? d->metrics_file : "") },
	};

	if (!json) {
		/* Text is the config syntax itself, so it can be pasted back. */
		puts("[daemon]");
		for (size_t i = 0; i < ARRAY_SIZE(kv); i++) {
			if (*kv[i].value)
				printf("%s = %s\n", kv[i].key, kv[i].value);
			else
				printf("# %s = %s\n", kv[i].key,
				       strcmp(kv[i].key, "metrics_file") ? "(any time)" : "(none)");
			free(kv[i].value);
		}
		return EXIT_OK;
	}
	/* One thing, so one object, not a table of one row; "" (unset) is null. */
	printf("{\n   \"daemon\": {");
	for (size_t i = 0; i < ARRAY_SIZE(kv); i++) {
		printf("%s\n      \"%s\": ", i ? "," : "", kv[i].key);
		if (!*kv[i].value)
			fputs("null", stdout);
		else if (kv[i].type == SCOLS_JSON_STRING)
			json_str(kv[i].value);
		else if (kv[i].type == SCOLS_JSON_BOOLEAN)
			fputs(strcmp(kv[i].value, "yes") ? "false" : "true", stdout);
		else
			fputs(kv[i].value, stdout);
		free(kv[i].value);
	}
	printf("\n   }\n}\n");
	return EXIT_OK;
}

static int show_rules(const struct ea_policy *p, bool json, bool noheadings)
{
	_cleanup_(tablep) struct libscols_table *tb = new_table("rules", json, noheadings);
	struct libscols_column *name, *defined, *kind, *target, *link, *fs, *match, *exclude,
		*extsize, *force, *inherit, *realign;
	/*
	 * Glob lists stay one string, as in the config: smartcols 2.38 prints an
	 * empty JSON array as [null], which no reader expects.
	 */
	int arr = SCOLS_JSON_STRING;
	const char *sep = " ";

	name = new_column(tb, json ? "name" : "NAME", 0, 0, SCOLS_JSON_STRING);
	defined = new_column(tb, json ? "defined" : "DEFINED", 0, 0, SCOLS_JSON_STRING);
	kind = new_column(tb, json ? "kind" : "KIND", 0, 0, SCOLS_JSON_STRING);
	target = new_column(tb, json ? "target" : "TARGET", 0, 0, SCOLS_JSON_STRING);
	/* A directory written through symbolic links, resolved at load time. */
	link = new_column(tb, json ? "link" : "LINK", 0, 0, SCOLS_JSON_STRING);
	fs = new_column(tb, json ? "filesystem" : "FILESYSTEM", 0, 0, SCOLS_JSON_STRING);
	match = new_column(tb, json ? "match" : "MATCH", 0, 0, arr);
	exclude = new_column(tb, json ? "exclude" : "EXCLUDE", 0, 0, arr);
	extsize =
		new_column(tb, json ? "extsize" : "EXTSIZE", 0, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER);
	force = new_column(tb, json ? "forcealign" : "FORCEALIGN", 0, 0, SCOLS_JSON_BOOLEAN);
	inherit = new_column(tb, json ? "inherit" : "INHERIT", 0, 0, SCOLS_JSON_BOOLEAN);
	realign = new_column(tb, json ? "realign" : "REALIGN", 0, 0, SCOLS_JSON_BOOLEAN);

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ea_rule *r = &p->rules[i];
		struct libscols_line *ln = new_line(tb);
		char buf[EA_SIZE_BUFSZ];

		set(ln, name, r->name);
		setf(ln, defined, "%s:%u", r->file, r->line);
		set(ln, kind, r->kind == EA_RULE_DIRECTORY ? "directory" : "project");
		if (r->kind == EA_RULE_DIRECTORY) {
			set(ln, target, r->directory);
			set(ln, link, r->directory_link);
		} else
			setf(ln, target, "%s (%u)", r->project, r->projid);
		set(ln, fs, r->filesystem);
		if (r->n_match &&
		    scols_line_refer_column_data(ln, match, join(r->match, r->n_match, sep)) < 0)
			errx(EXIT_FAILED, "out of memory");
		if (r->n_exclude && scols_line_refer_column_data(
					    ln, exclude, join(r->exclude, r->n_exclude, sep)) < 0)
			errx(EXIT_FAILED, "out of memory");
		/* JSON: bytes, null for none; text: as written in the config. */
		if (json && r->extsize)
			setf(ln, extsize, "%u", r->extsize);
		else if (!json)
			set(ln, extsize, r->extsize ? ea_size_format(r->extsize, buf) : "none");
		set(ln, force, r->forcealign ? "yes" : "no");
		set(ln, inherit, r->inherit ? "yes" : "no");
		set(ln, realign, r->realign ? "yes" : "no");
	}
	if (json)
		table_print_json(tb);
	else
		scols_print_table(tb);
	return EXIT_OK;
}

static int run_show(const struct policy_opts *o, const struct ea_policy *p, char **paths,
		    int n_paths)
{
	(void)paths;
	(void)n_paths;
	return o->daemon ? show_daemon(&p->daemon, o->json) : show_rules(p, o->json, o->noheadings);
}

/* ---- the part every policy command shares ---- */

static const struct policy_command {
	const char *name;
	const char *shortopts;
	const struct option *longopts;
	void (*usage)(FILE *out);
	bool takes_paths;
	int (*run)(const struct policy_opts *o, const struct ea_policy *p, char **paths,
		   int n_paths);
} commands[] = {
	{ "check", "c:d:qh",
	  (const struct option[]){ COMMON_OPTIONS, { "quiet", no_argument, NULL, 'q' }, {} },
	  usage_check, false, run_check },
	{ "explain", "c:d:p:Jh",
	  (const struct option[]){ COMMON_OPTIONS,
				   { "json", no_argument, NULL, 'J' },
				   { "project", required_argument, NULL, 'p' },
				   { "noheadings", no_argument, NULL, OPT_NOHEADINGS },
				   {} },
	  usage_explain, true, run_explain },
	{ "show", "c:d:DJh",
	  (const struct option[]){ COMMON_OPTIONS,
				   { "json", no_argument, NULL, 'J' },
				   { "daemon", no_argument, NULL, 'D' },
				   { "noheadings", no_argument, NULL, OPT_NOHEADINGS },
				   {} },
	  usage_show, false, run_show },
};

/* Options, arguments, the configuration, then the command itself. */
static int run_command(const struct policy_command *cmd, int argc, char **argv)
{
	_cleanup_free_ char *hint = NULL;
	struct policy_opts o = { 0 };
	struct ea_policy *p;
	int c, r, rc;

	if (asprintf(&hint, "policy %s", cmd->name) < 0)
		errx(EXIT_FAILED, "out of memory");
	while ((c = getopt_long(argc, argv, cmd->shortopts, cmd->longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.config = optarg;
			break;
		case 'd':
			o.config_dir = optarg;
			break;
		case OPT_PROJID:
			o.projid = optarg;
			break;
		case OPT_PROJECTS:
			o.projects = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'J':
			o.json = true;
			break;
		case 'p': /* the older spelling of --project: -p is devices' --probe */
			o.project = optarg;
			break;
		case OPT_NOHEADINGS:
			o.noheadings = true;
			break;
		case 'D':
			o.daemon = true;
			break;
		case 'h':
			cmd->usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, hint);
			return EXIT_USAGE;
		}
	}
	if (cmd->takes_paths && optind == argc) {
		warnx("no path given");
		fprintf(stderr, USAGE_HINT, hint);
		return EXIT_USAGE;
	}
	if (!cmd->takes_paths && optind < argc) {
		warnx("unexpected argument '%s'", argv[optind]);
		fprintf(stderr, USAGE_HINT, hint);
		return EXIT_USAGE;
	}
	if (o.project) {
		r = ea_project_resolve(o.projid, o.project, &o.project_id);
		if (r < 0) {
			warnx("--project '%s': %s", o.project,
			      r == -ENOENT ? "no such project name" : "not a project id above 0");
			return EXIT_USAGE;
		}
	}
	rc = load(&o, &p);
	/* check answers a question: "not valid" is its negative answer. */
	if (rc == EXIT_NEGATIVE && cmd->run != run_check)
		rc = EXIT_FAILED;
	if (rc != EXIT_OK)
		return rc;
	rc = cmd->run(&o, p, argv + optind, argc - optind);
	ea_policy_free(p);
	return rc;
}

int cmd_policy(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(sub, commands[i].name))
			return run_command(&commands[i], argc - 1, argv + 1);
	warnx("unknown policy command '%s'", sub);
	fprintf(stderr, USAGE_HINT, "policy");
	return EXIT_USAGE;
}
