// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Loading /etc/extalign.conf and its drop-ins with libinih.
 *
 * libinih is lenient in ways that can silently widen a rule: it cuts lines
 * longer than its buffer into pieces and parses each piece, takes an
 * indented line as the continuation of the previous value, ignores text
 * after a section's ']', truncates section names at 50 characters and
 * accepts keys before any section.  This build (Debian's inih 55) also has
 * no line number in the handler and no call on a new section.  So lines
 * reach libinih through our own reader, which counts them, rejects what
 * libinih would mangle (saying why, with the line) and keeps track of the
 * section itself; libinih then splits "key = value" and strips comments.
 * Every line the reader rejects reaches libinih as an empty line, so one
 * reader call stays one line and libinih's own error numbers stay right.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "extalign/policy.h"
#include "extalign/size.h"
#include "policy-internal.h"

enum rule_key {
	RK_DIRECTORY,
	RK_PROJECT,
	RK_FILESYSTEM,
	RK_MATCH,
	RK_EXCLUDE,
	RK_EXTSIZE,
	RK_FORCEALIGN,
	RK_INHERIT,
	RK_REALIGN,
	RK_N,
};

static const char *const rule_keys[RK_N] = {
	[RK_DIRECTORY] = "directory",	[RK_PROJECT] = "project", [RK_FILESYSTEM] = "filesystem",
	[RK_MATCH] = "match",		[RK_EXCLUDE] = "exclude", [RK_EXTSIZE] = "extsize",
	[RK_FORCEALIGN] = "forcealign", [RK_INHERIT] = "inherit", [RK_REALIGN] = "realign",
};

enum daemon_type {
	DT_BOOL,
	DT_PERCENT,
	DT_LOAD,
	DT_DURATION,
	DT_SIZE,
	DT_COUNT,
	DT_WATCH,
	DT_WINDOWS,
	DT_PATH,
};

#define SEC_USEC 1000000ULL
#define MIN_USEC (60 * SEC_USEC)
#define DAY_USEC (86400 * SEC_USEC)

static const struct daemon_key {
	const char *name;
	enum daemon_type type;
	size_t offset;
	uint64_t min, max; /* DT_DURATION, DT_SIZE, DT_COUNT; in the field's unit */
	bool zero_ok;	   /* 0 means "no limit" and is allowed below min */
} daemon_keys[] = {
#define F(field) offsetof(struct ea_daemon_conf, field)
	{ "watch", DT_WATCH, F(watch) },
	{ "idle_io_pressure", DT_PERCENT, F(idle_io_pressure) },
	{ "idle_disk_util", DT_PERCENT, F(idle_disk_util) },
	{ "idle_cpu_load", DT_LOAD, F(idle_cpu_load) },
	{ "idle_time", DT_DURATION, F(idle_time_usec), 0, 7 * DAY_USEC },
	/* The daemon promises to stop a job within a second of activity. */
	{ "idle_poll", DT_DURATION, F(idle_poll_usec), 50000, SEC_USEC },
	{ "realign", DT_BOOL, F(realign) },
	/* Below 64 KiB/s a job on a database file would never finish. */
	{ "realign_bwlimit", DT_SIZE, F(realign_bwlimit), 65536, UINT64_MAX, true },
	{ "realign_max_file_size", DT_SIZE, F(realign_max_file_size), 1, UINT64_MAX, true },
	{ "realign_max_time", DT_DURATION, F(realign_max_time_usec), SEC_USEC, 365 * DAY_USEC,
	  true },
	{ "realign_scan_interval", DT_DURATION, F(realign_scan_interval_usec), MIN_USEC,
	  365 * DAY_USEC },
	{ "realign_queue_max", DT_COUNT, F(realign_queue_max), 1, 100000000 },
	{ "realign_windows", DT_WINDOWS, F(realign_windows) },
	{ "metrics_file", DT_PATH, F(metrics_file) },
#undef F
};

#define DK_N ARRAY_SIZE(daemon_keys)

static const struct ea_daemon_conf daemon_defaults = {
	.watch = EA_WATCH_AUTO,
	.idle_io_pressure = 5,
	.idle_disk_util = 10,
	.idle_cpu_load = 0.5,
	.idle_time_usec = 60 * SEC_USEC,
	.idle_poll_usec = SEC_USEC,
	.realign = true,
	.realign_scan_interval_usec = DAY_USEC,
	.realign_queue_max = 100000,
};

struct draft {
	struct ea_rule r;
	unsigned key_line[RK_N]; /* 0: not given */
	bool key_bad[RK_N];	 /* given, with an error already reported */
	bool bad;		 /* any error: keep it out of the tie check */
};

enum section {
	SEC_NONE,   /* before the first section */
	SEC_IGNORE, /* a broken header, already reported: skip its keys quietly */
	SEC_RULE,
	SEC_DAEMON,
};

struct parser {
	struct ea_policy *p;
	struct ea_diags *diags;
	struct draft *drafts;
	size_t n_drafts;
	int fatal; /* -ENOMEM: stop everything */

	/* the file being read */
	const char *file;
	FILE *f;
	char *buf;
	size_t cap;
	unsigned line;
	enum section sec;
	struct draft *rule; /* SEC_RULE */
	unsigned daemon_line;
	unsigned daemon_key_line[DK_N];
};

#define diag(ps, line, ...)                                                        \
	do {                                                                       \
		if (ea_diag_add((ps)->diags, (ps)->file, (line), __VA_ARGS__) < 0) \
			(ps)->fatal = -ENOMEM;                                     \
	} while (0)

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

static int parse_bool(const char *v, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(v, yes[i])) {
			*ret = true;
			return 0;
		}
		if (!strcmp(v, no[i])) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* "12", "12.5", optionally with '%' when percent; by hand, as strtod follows LC_NUMERIC. */
static int parse_decimal(const char *s, bool percent, double *ret)
{
	double v = 0, scale = 1;
	bool digits = false;

	for (; *s >= '0' && *s <= '9'; s++, digits = true) {
		v = v * 10 + (*s - '0');
		if (v > 1e9)
			return -ERANGE;
	}
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			scale /= 10;
			v += (*s - '0') * scale;
		}
	}
	if (percent && *s == '%')
		s++;
	if (!digits || *s)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_hhmm(const char *s, size_t len, uint16_t *ret, bool end)
{
	unsigned h, m;

	if (len != 5 || !isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1]) ||
	    s[2] != ':' || !isdigit((unsigned char)s[3]) || !isdigit((unsigned char)s[4]))
		return -EINVAL;
	h = (unsigned)(s[0] - '0') * 10 + (unsigned)(s[1] - '0');
	m = (unsigned)(s[3] - '0') * 10 + (unsigned)(s[4] - '0');
	/* 24:00 only as an end, for a window that runs to midnight. */
	if (m > 59 || h > 24 || (h == 24 && (m || !end)))
		return -EINVAL;
	*ret = (uint16_t)(h * 60 + m);
	return 0;
}

/* "22:00-06:00 12:00-13:30": whitespace or comma separated.  A message, or NULL. */
static const char *parse_windows(const char *v, struct ea_time_window *w, size_t *n)
{
	size_t count = 0;

	for (const char *p = v; *p;) {
		size_t len;
		const char *dash;

		p += strspn(p, " \t,");
		if (!*p)
			break;
		len = strcspn(p, " \t,");
		dash = memchr(p, '-', len);
		if (!dash)
			return "expected HH:MM-HH:MM";
		if (count == EA_TIME_WINDOWS_MAX)
			return "too many windows (at most 8)";
		if (parse_hhmm(p, (size_t)(dash - p), &w[count].start, false) < 0 ||
		    parse_hhmm(dash + 1, len - (size_t)(dash - p) - 1, &w[count].end, true) < 0)
			return "expected HH:MM-HH:MM with hours 00-23 and minutes 00-59";
		if (w[count].start == w[count].end)
			return "a window that starts where it ends is ambiguous";
		count++;
		p += len;
	}
	if (!count)
		return "no window given";
	*n = count;
	return NULL;
}

static void daemon_key(struct parser *ps, const char *name, const char *value)
{
	struct ea_daemon_conf *d = &ps->p->daemon;
	const struct daemon_key *k = NULL;
	char *field;
	size_t idx;
	uint64_t u = 0;
	double x;
	bool b;
	const char *msg = NULL;
	int r = 0;

	for (idx = 0; idx < DK_N; idx++)
		if (!strcmp(daemon_keys[idx].name, name)) {
			k = &daemon_keys[idx];
			break;
		}
	if (!k) {
		diag(ps, ps->line, "unknown key '%s' in [daemon]", name);
		return;
	}
	if (ps->daemon_key_line[idx]) {
		diag(ps, ps->line, "duplicate key '%s' in [daemon]; first set at line %u", name,
		     ps->daemon_key_line[idx]);
		return;
	}
	ps->daemon_key_line[idx] = ps->line;
	if (!*value) {
		diag(ps, ps->line, "'%s' in [daemon] has no value", name);
		return;
	}
	field = (char *)d + k->offset;

	switch (k->type) {
	case DT_BOOL:
		if (parse_bool(value, &b) < 0)
			msg = "expected yes or no";
		else
			*(bool *)field = b;
		break;
	case DT_PERCENT:
		if (parse_decimal(value, true, &x) < 0 || x > 100)
			msg = "expected a percentage from 0 to 100";
		else
			*(double *)field = x;
		break;
	case DT_LOAD:
		if (parse_decimal(value, false, &x) < 0 || x > 1000)
			msg = "expected a load average per CPU such as 0.5";
		else
			*(double *)field = x;
		break;
	case DT_DURATION:
	case DT_SIZE:
	case DT_COUNT:
		if (k->type == DT_DURATION) {
			r = ea_duration_parse(value, &u);
			msg = "expected a duration such as 500ms, 30s, 5min, 1h30min or 1d";
		} else if (k->type == DT_SIZE) {
			r = ea_size_parse(value, UINT64_MAX, &u);
			msg = "expected a size such as 4096, 64k, 100M or 2G";
		} else {
			/* A count has no suffixes: "10k" entries is more likely a mix-up. */
			r = value[strspn(value, "0123456789")]
				    ? -EINVAL
				    : ea_size_parse(value, UINT64_MAX, &u);
			msg = "expected a whole number";
		}
		if (r == 0 && !(u == 0 && k->zero_ok) && (u < k->min || u > k->max)) {
			diag(ps, ps->line, "'%s' in [daemon] is out of range: '%s'%s", name, value,
			     k->zero_ok ? " (0 means no limit)" : "");
			return;
		}
		if (r == 0) {
			*(uint64_t *)field = u;
			msg = NULL;
		}
		break;
	case DT_WATCH:
		if (!strcmp(value, "auto"))
			d->watch = EA_WATCH_AUTO;
		else if (!strcmp(value, "fanotify"))
			d->watch = EA_WATCH_FANOTIFY;
		else if (!strcmp(value, "inotify"))
			d->watch = EA_WATCH_INOTIFY;
		else
			msg = "expected auto, fanotify or inotify";
		break;
	case DT_PATH: {
		size_t len = strlen(value);
		char *copy;

		/* The daemon's working directory is /: a relative name means nothing. */
		if (value[0] != '/')
			msg = "expected an absolute path";
		else if (value[len - 1] == '/' ||
			 !strcmp(value + len - (len >= 2 ? 2 : len), "/.") ||
			 (len >= 3 && !strcmp(value + len - 3, "/..")))
			msg = "expected a file name, not a directory";
		else if (!(copy = strdup(value)))
			ps->fatal = -ENOMEM;
		else {
			/* A later file overrides an earlier one. */
			free(*(char **)field);
			*(char **)field = copy;
		}
		break;
	}
	case DT_WINDOWS: {
		struct ea_time_window w[EA_TIME_WINDOWS_MAX];
		size_t n = 0;

		msg = parse_windows(value, w, &n);
		if (!msg) {
			memcpy(d->realign_windows, w, sizeof(w));
			d->n_realign_windows = n;
		}
		break;
	}
	}
	if (msg)
		diag(ps, ps->line, "invalid %s '%s' in [daemon]: %s", name, value, msg);
}

static void free_globs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Length of the glob at p: up to a blank, but "[ ]" is a bracket expression, not a split. */
static size_t glob_len(const char *p)
{
	size_t i = 0;

	while (p[i] && !is_blank(p[i])) {
		if (p[i] == '[') {
			/* fnmatch(3): a ']' right after '[' or "[!" is literal. */
			size_t j = i + 1 + (p[i + 1] == '!');
			const char *close = p[j] ? strchr(p + j + 1, ']') : NULL;

			if (close) {
				i = (size_t)(close - p) + 1;
				continue;
			}
		}
		i++;
	}
	return i;
}

/* Split a whitespace-separated glob list.  A message, or NULL (and ps->fatal on ENOMEM). */
static const char *parse_globs(struct parser *ps, const char *v, char ***ret, size_t *n)
{
	char **globs = NULL;
	size_t count = 0;

	for (const char *p = v; *p;) {
		char **g;
		size_t len;

		p += strspn(p, " \t");
		if (!*p)
			break;
		len = glob_len(p);
		if (memchr(p, '/', len)) {
			free_globs(globs, count);
			return "globs match the file name, so a '/' can never match";
		}
		g = reallocarray(globs, count + 1, sizeof(*g));
		if (!g || !(g[count] = strndup(p, len))) {
			free_globs(g ?: globs, count);
			ps->fatal = -ENOMEM;
			return NULL;
		}
		globs = g;
		count++;
		p += len;
	}
	*ret = globs;
	*n = count;
	return NULL;
}

static void rule_key(struct parser *ps, const char *name, const char *value)
{
	struct draft *d = ps->rule;
	struct ea_rule *r = &d->r;
	unsigned k;
	const char *msg = NULL;
	uint64_t size;
	bool b;
	int e;

	for (k = 0; k < RK_N; k++)
		if (!strcmp(rule_keys[k], name))
			break;
	if (k == RK_N) {
		diag(ps, ps->line, "unknown key '%s' in [rule %s]", name, r->name);
		d->bad = true;
		return;
	}
	if (d->key_line[k]) {
		diag(ps, ps->line, "duplicate key '%s' in [rule %s]; first set at line %u", name,
		     r->name, d->key_line[k]);
		d->bad = true;
		return;
	}
	d->key_line[k] = ps->line;
	if (!*value) {
		diag(ps, ps->line, "'%s' in rule '%s' has no value", name, r->name);
		d->key_bad[k] = d->bad = true;
		return;
	}

	switch ((enum rule_key)k) {
	case RK_DIRECTORY:
	case RK_FILESYSTEM:
		e = ea_path_normalize(value, k == RK_DIRECTORY ? &r->directory : &r->filesystem);
		if (e == -ENOMEM)
			ps->fatal = e;
		else if (e < 0)
			msg = value[0] != '/' ? "not an absolute path"
					      : "'..' is not allowed (it could lead anywhere "
						"through a symlink)";
		break;
	case RK_PROJECT:
		r->project = strdup(value);
		if (!r->project)
			ps->fatal = -ENOMEM;
		else if (!strcmp(value, "0") || strspn(value, "0") == strlen(value))
			msg = "project 0 is the default of every file; use a directory rule";
		else if (isdigit((unsigned char)value[0]) &&
			 (value[strspn(value, "0123456789")] ||
			  ea_size_parse(value, UINT32_MAX, &size) < 0))
			msg = "expected a project id (1 to 4294967295) or a name from /etc/projid";
		else if (!valid_name(value))
			msg = "expected a project id or a name from /etc/projid";
		break;
	case RK_MATCH:
		msg = parse_globs(ps, value, &r->match, &r->n_match);
		break;
	case RK_EXCLUDE:
		msg = parse_globs(ps, value, &r->exclude, &r->n_exclude);
		break;
	case RK_EXTSIZE:
		if (!strcmp(value, "none")) {
			r->extsize = 0;
			break;
		}
		e = ea_size_parse(value, UINT64_MAX, &size);
		if (e < 0)
			msg = e == -ERANGE ? "too large"
					   : "not a size (bytes, or 16k, 64K, 1MiB, ..., or none)";
		else if (ea_extsize_check(size, 0) != EA_EXTSIZE_OK)
			msg = ea_extsize_problem_str(ea_extsize_check(size, 0));
		else
			r->extsize = (uint32_t)size;
		break;
	case RK_FORCEALIGN:
	case RK_INHERIT:
	case RK_REALIGN:
		if (parse_bool(value, &b) < 0)
			msg = "expected yes or no";
		else if (k == RK_FORCEALIGN)
			r->forcealign = b;
		else if (k == RK_INHERIT)
			r->inherit = b;
		else
			r->realign = b;
		break;
	case RK_N:
		break;
	}
	if (msg) {
		diag(ps, ps->line, "invalid %s '%s' in rule '%s': %s", name, value, r->name, msg);
		d->key_bad[k] = d->bad = true;
	}
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parser *ps = user;

	/* libinih's section can be truncated; the reader knows the real one. */
	(void)section;
	if (ps->fatal)
		return 1;
	if (ps->sec == SEC_RULE)
		rule_key(ps, name, value);
	else if (ps->sec == SEC_DAEMON)
		daemon_key(ps, name, value);
	/* Report our own errors; 0 would only add libinih's vaguer one. */
	return 1;
}

static void free_rule(struct ea_rule *r)
{
	free(r->name);
	free(r->directory);
	free(r->directory_link);
	free(r->project);
	free(r->filesystem);
	for (size_t i = 0; i < r->n_project_dirs; i++)
		free(r->project_dirs[i]);
	free(r->project_dirs);
	free_globs(r->match, r->n_match);
	free_globs(r->exclude, r->n_exclude);
}

static void section_header(struct parser *ps, char *s)
{
	char *end = strchr(s, ']'), *name, *rest;
	size_t n;

	ps->sec = SEC_IGNORE;
	if (!end) {
		diag(ps, ps->line, "section header without ']'");
		return;
	}
	rest = end + 1;
	rest += strspn(rest, " \t");
	if (*rest && *rest != ';' && *rest != '#') {
		diag(ps, ps->line, "text after ']' of a section header");
		return;
	}
	*end = '\0';
	name = s + 1 + strspn(s + 1, " \t");
	n = strlen(name);
	while (n && is_blank(name[n - 1]))
		name[--n] = '\0';

	if (!strcmp(name, "daemon")) {
		if (ps->daemon_line)
			diag(ps, ps->line,
			     "second [daemon] section in this file; the first is at "
			     "line %u",
			     ps->daemon_line);
		else
			ps->daemon_line = ps->line;
		ps->sec = SEC_DAEMON;
		return;
	}
	if (strncmp(name, "rule", 4) || (name[4] && !is_blank(name[4]))) {
		diag(ps, ps->line, "unknown section [%s]; expected [rule NAME] or [daemon]", name);
		return;
	}
	name += 4;
	name += strspn(name, " \t");
	if (!*name) {
		diag(ps, ps->line, "[rule] without a name; write [rule NAME]");
		return;
	}
	if (!valid_name(name)) {
		diag(ps, ps->line, "invalid rule name '%s': use letters, digits, '-', '_' and '.'",
		     name);
		return;
	}
	for (size_t i = 0; i < ps->n_drafts; i++)
		if (!strcmp(ps->drafts[i].r.name, name)) {
			diag(ps, ps->line, "duplicate rule name '%s'; first defined at %s:%u", name,
			     ps->drafts[i].r.file, ps->drafts[i].r.line);
			return;
		}

	struct draft *d = reallocarray(ps->drafts, ps->n_drafts + 1, sizeof(*d));
	if (!d) {
		ps->fatal = -ENOMEM;
		return;
	}
	ps->drafts = d;
	d = &ps->drafts[ps->n_drafts];
	*d = (struct draft){ .r = { .file = ps->file, .line = ps->line, .inherit = true } };
	d->r.name = strdup(name);
	if (!d->r.name) {
		ps->fatal = -ENOMEM;
		return;
	}
	ps->n_drafts++;
	ps->rule = d;
	ps->sec = SEC_RULE;
}

/* Hand libinih an empty line in place of one we rejected. */
static char *blank_line(char *str)
{
	str[0] = '\n';
	str[1] = '\0';
	return str;
}

/*
 * The longest line we read.  libinih holds 197 characters; a longer
 * key = value line (a deep directory, a long list of globs) is split by
 * split_long_pair() instead.  A path is at most PATH_MAX, so this leaves
 * room for any key and comment around one.
 */
#define LINE_MAX_CHARS 65536

static char *strip_right(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/*
 * A key = value line too long for libinih's buffer, split the way libinih
 * splits one it holds (ini.c with its defaults, which we build against):
 * the key ends at the first '=', a ';' after a blank ends the value, and
 * blanks (isspace) around key and value go.  Then the handler gets the
 * pair as it would from ini_parse_stream().
 */
static void split_long_pair(struct parser *ps, char *s)
{
	char *eq = strchr(s, '='), *value, *p;
	bool was_space = false;

	*eq = '\0';
	value = eq + 1;
	for (p = value; *p; p++) {
		if (was_space && *p == ';') {
			*p = '\0';
			break;
		}
		was_space = isspace((unsigned char)*p);
	}
	while (isspace((unsigned char)*value))
		value++;
	handler(ps, NULL, strip_right(s), strip_right(value));
}

static char *reader(char *str, int num, void *stream)
{
	struct parser *ps = stream;
	ssize_t len;
	size_t raw;
	char *s;

	if (ps->fatal || num < 4)
		return NULL;
	len = getline(&ps->buf, &ps->cap, ps->f);
	if (len < 0)
		return NULL;
	ps->line++;
	s = ps->buf;
	if (memchr(s, '\0', (size_t)len)) {
		diag(ps, ps->line, "NUL byte in line");
		return blank_line(str);
	}
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = '\0';
	raw = (size_t)len;
	if (raw > LINE_MAX_CHARS) {
		diag(ps, ps->line, "line is %zu characters long; at most %d are allowed", raw,
		     LINE_MAX_CHARS);
		return blank_line(str);
	}
	if (ps->line == 1 && !strncmp(s, "\xEF\xBB\xBF", 3))
		s += 3;
	/* Leading blanks would make libinih continue the previous value. */
	s += strspn(s, " \t");
	len = (ssize_t)strlen(s);
	while (len && is_blank(s[len - 1]))
		s[--len] = '\0';

	if (!*s || *s == '#' || *s == ';')
		return blank_line(str);
	if (*s == '[') {
		section_header(ps, s);
		return blank_line(str);
	}

	size_t eq = strcspn(s, "=");
	size_t colon = strcspn(s, ":");
	if (!s[eq]) {
		diag(ps, ps->line, "expected 'key = value' or a [section] header");
		return blank_line(str);
	}
	if (colon < eq) {
		/* libinih would take the ':' as the separator, configparser style. */
		diag(ps, ps->line, "':' before '=': write 'key = value'");
		return blank_line(str);
	}
	if (ps->sec == SEC_NONE) {
		diag(ps, ps->line, "key outside a section");
		return blank_line(str);
	}
	/*
	 * num is libinih's line buffer; its documentation asks for 3 bytes
	 * beyond the longest line ('\r', '\n', '\0').  A longer line it would
	 * split into several, each parsed as a line of its own: we split it.
	 */
	if (raw > (size_t)num - 3) {
		split_long_pair(ps, s);
		return blank_line(str);
	}
	snprintf(str, (size_t)num, "%s\n", s);
	return str;
}

static int parse_file(struct parser *ps, const char *path)
{
	struct stat st;
	int fd;
	char *copy, **files;
	int r;

	copy = strdup(path);
	files = copy ? reallocarray(ps->p->files, ps->p->n_files + 1, sizeof(*files)) : NULL;
	if (!files) {
		free(copy);
		return -ENOMEM;
	}
	ps->p->files = files;
	files[ps->p->n_files++] = copy;

	ps->file = copy;
	ps->line = 0;
	ps->sec = SEC_NONE;
	ps->rule = NULL;
	ps->daemon_line = 0;
	memset(ps->daemon_key_line, 0, sizeof(ps->daemon_key_line));

	/* O_NONBLOCK: a FIFO put in the configuration's place must not hang
	 * the daemon's reload in open(); only a regular file is read. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = negative_errno();
		if (fd >= 0)
			close(fd);
		diag(ps, 0, "cannot read: %s", strerror(-r));
		return ps->fatal ?: r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		diag(ps, 0, "not a regular file");
		return ps->fatal ?: -EINVAL;
	}
	if (fcntl(fd, F_SETFL, 0) < 0 || !(ps->f = fdopen(fd, "re"))) {
		r = negative_errno();
		close(fd);
		diag(ps, 0, "cannot read: %s", strerror(-r));
		return ps->fatal ?: r;
	}
	r = ini_parse_stream(reader, ps, handler, ps);
	if (!ps->fatal && ferror(ps->f)) {
		diag(ps, 0, "read error");
		r = -EIO;
	} else if (r > 0) {
		/* Should not happen after the reader's checks; never let it pass. */
		if (!ea_diag_has(ps->diags, ps->file, (unsigned)r))
			diag(ps, (unsigned)r, "libinih cannot parse this line");
		r = 0;
	} else if (r < 0) {
		r = -ENOMEM;
	}
	fclose(ps->f);
	ps->f = NULL;
	return ps->fatal ?: r;
}

static int dirent_cmp(const struct dirent **a, const struct dirent **b)
{
	/* strcmp, not alphasort's strcoll: the order must not depend on the locale. */
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int dropin_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && !strcmp(d->d_name + n - 5, ".conf");
}

static int parse_dropins(struct parser *ps, const char *dir)
{
	struct dirent **list = NULL;
	int n, r = 0;

	n = scandir(dir, &list, dropin_filter, dirent_cmp);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		r = negative_errno();
		if (ea_diag_add(ps->diags, dir, 0, "cannot read directory: %s", strerror(-r)) < 0)
			r = -ENOMEM;
		return r;
	}
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *path = NULL;
		struct stat st;
		int e;

		if (r != -ENOMEM && asprintf(&path, "%s/%s", dir, list[i]->d_name) < 0) {
			path = NULL;
			r = -ENOMEM;
		}
		/* Symlinks are followed (as in systemd's drop-ins); only files count. */
		if (path && !r && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			e = parse_file(ps, path);
			if (e == -ENOMEM || (e < 0 && !r))
				r = e;
		}
		free(list[i]);
	}
	free(list);
	return r;
}

static bool same_place(const struct ea_rule *a, const struct ea_rule *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == EA_RULE_DIRECTORY)
		return !strcmp(a->directory, b->directory);
	if (a->projid != b->projid)
		return false;
	if (!a->filesystem || !b->filesystem)
		return !a->filesystem && !b->filesystem;
	return !strcmp(a->filesystem, b->filesystem);
}

/* A directory through symbolic links: resolved now, or refused (policy-symlink.c). */
static void resolve_directory(struct parser *ps, struct draft *d)
{
	struct ea_rule *r = &d->r;
	_cleanup_free_ char *why = NULL;
	char *real = NULL;
	int e;

	e = ea_policy_resolve_directory(r->directory, &real, &why);
	if (e == -ENOMEM) {
		ps->fatal = e;
	} else if (e < 0) {
		diag(ps, d->key_line[RK_DIRECTORY],
		     "directory %s of rule '%s' is refused: %s; name the real directory",
		     r->directory, r->name, why ?: strerror(-e));
		d->key_bad[RK_DIRECTORY] = true;
	} else if (real) {
		r->directory_link = r->directory;
		r->directory = real;
	}
}

/* Cross-key checks, project resolution: everything that needs the whole rule. */
static void finish_rule(struct parser *ps, struct draft *d, struct ea_projects *proj,
			const char *projid_path, const char *projects_path)
{
	struct ea_rule *r = &d->r;
	unsigned *kl = d->key_line;
	size_t errors = ps->diags->n;
	int e;

	ps->file = r->file;
	if (!kl[RK_DIRECTORY] && !kl[RK_PROJECT])
		diag(ps, r->line, "rule '%s' has neither 'directory' nor 'project'", r->name);
	if (kl[RK_DIRECTORY] && kl[RK_PROJECT])
		diag(ps, r->line,
		     "rule '%s' has both 'directory' (line %u) and 'project' (line %u); a rule has "
		     "one",
		     r->name, kl[RK_DIRECTORY], kl[RK_PROJECT]);
	else if (kl[RK_DIRECTORY] && kl[RK_FILESYSTEM])
		diag(ps, kl[RK_FILESYSTEM],
		     "'filesystem' in rule '%s' is for project rules; a directory rule's tree is "
		     "already on one filesystem",
		     r->name);
	if (!kl[RK_EXTSIZE])
		diag(ps, r->line,
		     "rule '%s' has no 'extsize' (write 'extsize = none' for a tree that gets no "
		     "hint)",
		     r->name);
	else if (!d->key_bad[RK_EXTSIZE] && !r->extsize) {
		if (kl[RK_FORCEALIGN] && r->forcealign)
			diag(ps, kl[RK_FORCEALIGN], "forcealign in rule '%s' needs an extsize",
			     r->name);
		if (kl[RK_REALIGN] && r->realign)
			diag(ps, kl[RK_REALIGN],
			     "realign in rule '%s' needs an extsize to realign to", r->name);
	}
	r->kind = kl[RK_PROJECT] ? EA_RULE_PROJECT : EA_RULE_DIRECTORY;
	if (r->kind == EA_RULE_DIRECTORY && r->directory && !d->key_bad[RK_DIRECTORY])
		resolve_directory(ps, d);

	if (kl[RK_PROJECT] && !kl[RK_DIRECTORY] && !d->key_bad[RK_PROJECT]) {
		e = ea_projects_resolve(proj, r->project, &r->projid);
		if (e < 0) {
			diag(ps, kl[RK_PROJECT], "project '%s' of rule '%s' is not in %s",
			     r->project, r->name, projid_path);
		} else {
			for (size_t i = 0; i < proj->n_dirs; i++) {
				char **v;

				if (proj->dirs[i].id != r->projid)
					continue;
				v = reallocarray(r->project_dirs, r->n_project_dirs + 1,
						 sizeof(*v));
				if (!v || !(v[r->n_project_dirs] = strdup(proj->dirs[i].path))) {
					if (v)
						r->project_dirs = v;
					ps->fatal = -ENOMEM;
					return;
				}
				r->project_dirs = v;
				r->n_project_dirs++;
			}
			if (!r->n_project_dirs && !kl[RK_FILESYSTEM])
				diag(ps, r->line,
				     "project '%s' of rule '%s' has no directory in %s and the "
				     "rule "
				     "no 'filesystem': there is nothing to watch",
				     r->project, r->name, projects_path);
		}
	}
	if (ps->diags->n != errors)
		d->bad = true;
}

static void check_ties(struct parser *ps)
{
	for (size_t i = 0; i < ps->n_drafts; i++) {
		const struct ea_rule *b = &ps->drafts[i].r;

		if (ps->drafts[i].bad)
			continue;
		for (size_t j = 0; j < i; j++) {
			const struct ea_rule *a = &ps->drafts[j].r;

			if (ps->drafts[j].bad || !same_place(a, b) || !a->n_match != !b->n_match)
				continue;
			ps->file = b->file;
			if (b->kind == EA_RULE_DIRECTORY)
				diag(ps, b->line,
				     "rule '%s' ties with rule '%s' (%s:%u): same directory %s, "
				     "and %s",
				     b->name, a->name, a->file, a->line, b->directory,
				     b->n_match ? "both have 'match'; drop the 'match' of one (it "
						  "then covers the other files) or use different "
						  "directories"
						: "neither has 'match'; give one a 'match' or a "
						  "different directory");
			else
				diag(ps, b->line,
				     "rule '%s' ties with rule '%s' (%s:%u): same project %u on "
				     "%s, "
				     "and %s; give one a 'match' or a different 'filesystem'",
				     b->name, a->name, a->file, a->line, b->projid,
				     b->filesystem ?: "any filesystem",
				     b->n_match ? "both have 'match'" : "neither has 'match'");
			break;
		}
	}
}

static int watch_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ea_watch *)a)->path, ((const struct ea_watch *)b)->path);
}

static int add_watch(struct ea_policy *p, const char *path, bool filesystem)
{
	struct ea_watch *w = reallocarray(p->watch, p->n_watch + 1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	p->watch = w;
	w[p->n_watch].path = strdup(path);
	if (!w[p->n_watch].path)
		return -ENOMEM;
	w[p->n_watch++].filesystem = filesystem;
	return 0;
}

static int build_watch(struct ea_policy *p)
{
	size_t out = 0;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ea_rule *r = &p->rules[i];
		int e = 0;

		if (r->kind == EA_RULE_DIRECTORY)
			e = add_watch(p, r->directory, false);
		else if (r->filesystem)
			e = add_watch(p, r->filesystem, true);
		else
			for (size_t j = 0; j < r->n_project_dirs && !e; j++)
				e = add_watch(p, r->project_dirs[j], false);
		if (e < 0)
			return e;
	}
	/*
	 * Sorted, a tree comes before everything inside it, though not always
	 * right before ("/a-b" sorts between "/a" and "/a/c"): so check every
	 * tree kept so far.
	 */
	if (p->n_watch) /* qsort's base must not be NULL, even for no elements */
		qsort(p->watch, p->n_watch, sizeof(*p->watch), watch_cmp);
	for (size_t i = 0; i < p->n_watch; i++) {
		struct ea_watch *w = &p->watch[i];
		bool inside = false;

		for (size_t j = 0; j < out && !inside; j++) {
			if (!ea_path_under(w->path, p->watch[j].path))
				continue;
			/* The same tree from a filesystem= rule: mark it whole. */
			if (!strcmp(w->path, p->watch[j].path))
				p->watch[j].filesystem |= w->filesystem;
			inside = true;
		}
		if (inside) {
			free(w->path);
			continue;
		}
		p->watch[out++] = *w;
	}
	p->n_watch = out;
	return 0;
}

struct diag_key {
	size_t file; /* order of the file's first diagnostic */
	size_t seq;
	struct ea_diag d;
};

static int diag_key_cmp(const void *a, const void *b)
{
	const struct diag_key *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->d.line != y->d.line)
		return x->d.line < y->d.line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Checks that need a whole rule (or all of them) run after parsing, so their
 * findings come late; put everything from index from on in file, line order.
 */
static int sort_diags(struct ea_diags *d, size_t from)
{
	size_t n = d->n - from;
	struct diag_key *k = calloc(n ?: 1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		k[i] = (struct diag_key){ .file = i, .seq = i, .d = d->items[from + i] };
		for (size_t j = 0; j < i; j++)
			if (!strcmp(k[j].d.file, k[i].d.file)) {
				k[i].file = k[j].file;
				break;
			}
	}
	qsort(k, n, sizeof(*k), diag_key_cmp);
	for (size_t i = 0; i < n; i++)
		d->items[from + i] = k[i].d;
	free(k);
	return 0;
}

void ea_policy_free(struct ea_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++)
		free_rule(&p->rules[i]);
	free(p->rules);
	for (size_t i = 0; i < p->n_files; i++)
		free(p->files[i]);
	free(p->files);
	for (size_t i = 0; i < p->n_watch; i++)
		free(p->watch[i].path);
	free(p->watch);
	free(p->daemon.metrics_file);
	free(p);
}

int ea_policy_load(const char *main_conf, const char *dropin_dir, const char *projid_path,
		   const char *projects_path, struct ea_policy **ret, struct ea_diags *diags)
{
	struct parser ps = { .diags = diags };
	struct ea_projects proj = { 0 };
	size_t errors = diags->n;
	bool need_projects = false;
	int r = 0, e;

	*ret = NULL;
	main_conf = main_conf ?: EA_POLICY_CONF;
	dropin_dir = dropin_dir ?: EA_POLICY_DROPIN_DIR;
	projid_path = projid_path ?: EA_POLICY_PROJID;
	projects_path = projects_path ?: EA_POLICY_PROJECTS;

	ps.p = calloc(1, sizeof(*ps.p));
	if (!ps.p)
		return -ENOMEM;
	ps.p->daemon = daemon_defaults;

	r = parse_file(&ps, main_conf);
	if (r != -ENOMEM && *dropin_dir) {
		e = parse_dropins(&ps, dropin_dir);
		if (e == -ENOMEM || (e < 0 && !r))
			r = e;
	}
	free(ps.buf);
	if (r == -ENOMEM || ps.fatal)
		goto fail;

	for (size_t i = 0; i < ps.n_drafts; i++)
		need_projects |= ps.drafts[i].key_line[RK_PROJECT] != 0;
	/* Only a project rule makes other people's files our business. */
	if (need_projects) {
		e = ea_projects_load(projid_path, projects_path, &proj, diags);
		if (e == -ENOMEM) {
			r = e;
			goto fail;
		}
	}
	for (size_t i = 0; i < ps.n_drafts && !ps.fatal; i++)
		finish_rule(&ps, &ps.drafts[i], &proj, projid_path, projects_path);
	check_ties(&ps);
	ea_projects_free(&proj);
	if (ps.fatal) {
		r = ps.fatal;
		goto fail;
	}
	if (diags->n != errors) {
		r = sort_diags(diags, errors) ?: r ?: -EINVAL;
		goto fail;
	}

	ps.p->rules = calloc(ps.n_drafts ?: 1, sizeof(*ps.p->rules));
	if (!ps.p->rules) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < ps.n_drafts; i++)
		ps.p->rules[i] = ps.drafts[i].r;
	ps.p->n_rules = ps.n_drafts;
	free(ps.drafts);
	ps.drafts = NULL;
	ps.n_drafts = 0;
	r = build_watch(ps.p);
	if (r < 0)
		goto fail;
	*ret = ps.p;
	return 0;

fail:
	for (size_t i = 0; i < ps.n_drafts; i++)
		free_rule(&ps.drafts[i].r);
	free(ps.drafts);
	ea_policy_free(ps.p);
	return r ?: -EINVAL;
}
