// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "extalign/macro.h"
#include "extalign/state.h"
#include "name-table.h"

static const char *const counter_names[_EA_CNT_MAX] = {
	[EA_CNT_EVENTS] = "events",
	[EA_CNT_DIRS_HINTED] = "dirs_hinted",
	[EA_CNT_DIRS_INHERITED] = "dirs_inherited",
	[EA_CNT_FILES_HINTED] = "files_hinted",
	[EA_CNT_FILES_INHERITED] = "files_inherited",
	[EA_CNT_FILES_LATE] = "files_late",
	[EA_CNT_UNSUPPORTED] = "unsupported",
	[EA_CNT_ERRORS] = "errors",
	[EA_CNT_SKIPPED] = "skipped",
	[EA_CNT_OVERFLOWS] = "overflows",
	[EA_CNT_RESCANS] = "rescans",
	[EA_CNT_RELOADS] = "reloads",
	[EA_CNT_RELOAD_FAILURES] = "reload_failures",
	[EA_CNT_JOBS_DONE] = "jobs_done",
	[EA_CNT_JOBS_FAILED] = "jobs_failed",
	[EA_CNT_BYTES_REALIGNED] = "bytes_realigned",
	[EA_CNT_BACKLOG_PEAK] = "backlog_peak_bytes",
};

/* ea_state_counter_name() and ea_state_counter_from_name() */
DEFINE_NAME_OF(ea_state_counter, enum ea_state_counter, counter_names, NULL)
DEFINE_FROM_NAME(ea_state_counter, counter_names)

static const char *const stat_names[_EA_STAT_MAX] = {
	[EA_STAT_FILES_HINTED] = "files_hinted",
	[EA_STAT_FILES_INHERITED] = "files_inherited",
	[EA_STAT_DIRS_HINTED] = "dirs_hinted",
	[EA_STAT_DIRS_INHERITED] = "dirs_inherited",
	[EA_STAT_FILES_LATE] = "files_late",
	[EA_STAT_LATE_PENDING] = "late_pending",
	[EA_STAT_REALIGNED_FILES] = "realigned_files",
	[EA_STAT_REALIGNED_BYTES] = "realigned_bytes",
	[EA_STAT_SKIPPED] = "skipped",
	[EA_STAT_FAIL_UNSUPPORTED] = "failures_unsupported",
	[EA_STAT_FAIL_HINT] = "failures_hint",
	[EA_STAT_FAIL_IO] = "failures_io",
	[EA_STAT_FAIL_LATE_LIST] = "failures_late_list",
	[EA_STAT_FAIL_REALIGN] = "failures_realign",
	[EA_STAT_FAIL_REALIGN_SKIPPED] = "failures_realign_skipped",
	[EA_STAT_FAIL_WATCH] = "failures_watch",
};

/* ea_state_stat_name() and ea_state_stat_from_name() */
DEFINE_NAME_OF(ea_state_stat, enum ea_state_stat, stat_names, NULL)
DEFINE_FROM_NAME(ea_state_stat, stat_names)

const char *ea_state_failure_reason(enum ea_state_stat st)
{
	if ((unsigned)st >= _EA_STAT_MAX || st < EA_STAT_FAIL_FIRST)
		return NULL;
	return stat_names[st] + strlen("failures_");
}

static const char *const late_queue_names[_EA_LATE_MAX] = {
	[EA_LATE_LISTED] = "listed",	       [EA_LATE_QUEUED] = "queued",
	[EA_LATE_RUNNING] = "running",	       [EA_LATE_DONE] = "done",
	[EA_LATE_FAILED] = "failed",	       [EA_LATE_SKIPPED] = "skipped",
	[EA_LATE_UNSUPPORTED] = "unsupported",
};

/* ea_late_queue_name() and ea_late_queue_from_name() */
DEFINE_NAME_OF(ea_late_queue, enum ea_late_queue, late_queue_names, NULL)
DEFINE_FROM_NAME(ea_late_queue, late_queue_names)

bool ea_late_queue_pending(enum ea_late_queue q)
{
	return q == EA_LATE_LISTED || q == EA_LATE_QUEUED || q == EA_LATE_RUNNING;
}

void ea_state_free(struct ea_state *s)
{
	for (size_t i = 0; i < s->n_marks; i++) {
		free(s->marks[i].path);
		free(s->marks[i].fstype);
		free(s->marks[i].how);
	}
	for (size_t i = 0; i < s->n_errors; i++) {
		free(s->errors[i].rule);
		free(s->errors[i].path);
		free(s->errors[i].msg);
	}
	for (size_t i = 0; i < s->n_late; i++) {
		free(s->late[i].rule);
		free(s->late[i].path);
		free(s->late[i].queue);
		free(s->late[i].reason);
	}
	for (size_t i = 0; i < s->n_rule_stats; i++) {
		free(s->rule_stats[i].rule);
		free(s->rule_stats[i].mountpoint);
	}
	free(s->rule_stats);
	free(s->marks);
	free(s->errors);
	free(s->late);
	free(s->config);
	free(s->watcher);
	free(s->phase);
	free(s->last_reload);
	*s = (struct ea_state){ 0 };
}

/* Grow *v (of n elements of size sz) by one zeroed element. */
static void *grow(void *v, size_t n, size_t sz)
{
	char *p = realloc(v, (n + 1) * sz);

	if (p)
		memset(p + n * sz, 0, sz);
	return p;
}

static char *dup0(const char *s)
{
	return strdup(s ? s : "");
}

int ea_state_add_mark(struct ea_state *s, const char *path, const char *fstype, const char *how)
{
	struct ea_state_mark *v = grow(s->marks, s->n_marks, sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->marks = v;
	v += s->n_marks;
	v->path = dup0(path);
	v->fstype = dup0(fstype);
	v->how = dup0(how);
	/* Counted even when incomplete so that ea_state_free() releases it. */
	s->n_marks++;
	return v->path && v->fstype && v->how ? 0 : -ENOMEM;
}

int ea_state_add_error(struct ea_state *s, uint64_t usec, int err, const char *rule,
		       const char *path, const char *msg)
{
	struct ea_state_error *v = grow(s->errors, s->n_errors, sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->errors = v;
	v += s->n_errors;
	v->usec = usec;
	v->err = err;
	v->rule = dup0(rule);
	v->path = dup0(path);
	v->msg = dup0(msg);
	s->n_errors++;
	return v->rule && v->path && v->msg ? 0 : -ENOMEM;
}

int ea_state_add_late(struct ea_state *s, uint64_t usec, const char *rule, const char *path,
		      const char *queue)
{
	struct ea_state_late *v = grow(s->late, s->n_late, sizeof(*v));

	if (!v)
		return -ENOMEM;
	s->late = v;
	v += s->n_late;
	v->usec = usec;
	v->rule = dup0(rule);
	v->path = dup0(path);
	v->queue = dup0(queue);
	v->reason = dup0(NULL);
	v->done = v->total = 0;
	s->n_late++;
	return v->rule && v->path && v->queue && v->reason ? 0 : -ENOMEM;
}

struct ea_state_rule_stats *ea_state_rule_stats(struct ea_state *s, const char *rule,
						const char *mountpoint)
{
	struct ea_state_rule_stats *v;

	rule = rule ? rule : "";
	mountpoint = mountpoint ? mountpoint : "";
	for (size_t i = 0; i < s->n_rule_stats; i++)
		if (!strcmp(s->rule_stats[i].rule, rule) &&
		    !strcmp(s->rule_stats[i].mountpoint, mountpoint))
			return &s->rule_stats[i];
	v = grow(s->rule_stats, s->n_rule_stats, sizeof(*v));
	if (!v)
		return NULL;
	s->rule_stats = v;
	v += s->n_rule_stats;
	v->rule = strdup(rule);
	v->mountpoint = strdup(mountpoint);
	if (!v->rule || !v->mountpoint) {
		free(v->rule);
		free(v->mountpoint);
		*v = (struct ea_state_rule_stats){ 0 };
		return NULL;
	}
	s->n_rule_stats++;
	return v;
}

int ea_state_set_job(struct ea_state *s, const char *reason, uint64_t done, uint64_t total)
{
	struct ea_state_late *l;
	char *r;

	if (!s->n_late)
		return -EINVAL;
	l = &s->late[s->n_late - 1];
	r = dup0(reason);
	if (!r)
		return -ENOMEM;
	free(l->reason);
	l->reason = r;
	l->done = done;
	l->total = total;
	return 0;
}

char *ea_state_escape(const char *s)
{
	size_t n = 0;
	char *ret, *o;

	if (!s)
		s = "";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p == '\\' || *p == '\t' || *p == '\n') ? 2
		     : (*p < 0x20 || *p == 0x7f)	      ? 4
							      : 1;
	ret = o = malloc(n + 1);
	if (!ret)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (*p == '\t') {
			*o++ = '\\';
			*o++ = 't';
		} else if (*p == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else if (*p < 0x20 || *p == 0x7f) {
			o += sprintf(o, "\\x%02x", *p);
		} else {
			*o++ = (char)*p;
		}
	}
	*o = 0;
	return ret;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ea_state_unescape(const char *s, size_t len, char **ret)
{
	_cleanup_free_ char *buf = malloc(len + 1);
	char *o = buf;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\t' || s[i] == '\n' || s[i] == 0)
			return -EBADMSG;
		if (s[i] != '\\') {
			*o++ = s[i];
			continue;
		}
		if (++i >= len)
			return -EBADMSG;
		switch (s[i]) {
		case '\\':
			*o++ = '\\';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'x': {
			int hi, lo;

			if (i + 2 >= len)
				return -EBADMSG;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -EBADMSG;
			*o++ = (char)(hi << 4 | lo);
			i += 2;
			break;
		}
		default:
			return -EBADMSG;
		}
	}
	*o = 0;
	*ret = TAKE_PTR(buf);
	return 0;
}

static void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* Print the fields of one record, escaped and tab-separated; false on ENOMEM. */
static bool put_fields(FILE *f, const char *type, const char *const *fields, size_t n)
{
	fputs(type, f);
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *e = ea_state_escape(fields[i]);

		if (!e)
			return false;
		fputc('\t', f);
		fputs(e, f);
	}
	fputc('\n', f);
	return true;
}

int ea_state_format(const struct ea_state *s, char **ret, size_t *len)
{
	_cleanup_free_ char *buf = NULL;
	size_t size = 0;
	bool ok = true;

	{
		_cleanup_(fclosep) FILE *f = open_memstream(&buf, &size);

		if (!f)
			return -ENOMEM;
		fprintf(f, "extalign-state\t%u\n", EA_STATE_VERSION);
		fprintf(f, "pid\t%d\n", (int)s->pid);
		fprintf(f, "started\t%" PRIu64 "\n", s->started_usec);
		fprintf(f, "updated\t%" PRIu64 "\n", s->updated_usec);
		ok = ok && put_fields(f, "config", (const char *const[]){ s->config }, 1);
		ok = ok && put_fields(f, "watcher", (const char *const[]){ s->watcher }, 1);
		ok = ok && put_fields(f, "phase", (const char *const[]){ s->phase }, 1);
		if (s->last_reload)
			ok = ok &&
			     put_fields(f, "reload", (const char *const[]){ s->last_reload }, 1);
		fprintf(f, "rules\t%u\n", s->rules);
		for (int i = 0; i < _EA_CNT_MAX; i++)
			fprintf(f, "counter\t%s\t%" PRIu64 "\n", counter_names[i], s->counters[i]);
		for (size_t i = 0; ok && i < s->n_marks; i++) {
			const struct ea_state_mark *m = &s->marks[i];

			ok = put_fields(f, "mark",
					(const char *const[]){ m->path, m->fstype, m->how }, 3);
		}
		for (size_t i = 0; ok && i < s->n_errors; i++) {
			const struct ea_state_error *e = &s->errors[i];
			char usec[24], err[16];

			snprintf(usec, sizeof(usec), "%" PRIu64, e->usec);
			snprintf(err, sizeof(err), "%d", e->err);
			ok = put_fields(
				f, "error",
				(const char *const[]){ usec, err, e->rule, e->path, e->msg }, 5);
		}
		for (size_t i = 0; ok && i < s->n_late; i++) {
			const struct ea_state_late *l = &s->late[i];
			char usec[24];

			snprintf(usec, sizeof(usec), "%" PRIu64, l->usec);
			ok = put_fields(f, "late",
					(const char *const[]){ usec, l->rule, l->path, l->queue },
					4);
			if (ok && ((l->reason && *l->reason) || l->total)) {
				char done[24], total[24];

				snprintf(done, sizeof(done), "%" PRIu64, l->done);
				snprintf(total, sizeof(total), "%" PRIu64, l->total);
				ok = put_fields(f, "job",
						(const char *const[]){ l->reason, done, total }, 3);
			}
		}
		for (size_t i = 0; ok && i < s->n_rule_stats; i++) {
			const struct ea_state_rule_stats *rs = &s->rule_stats[i];

			for (int k = 0; ok && k < _EA_STAT_MAX; k++) {
				char v[24];

				snprintf(v, sizeof(v), "%" PRIu64, rs->v[k]);
				ok = put_fields(f, "rule-stat",
						(const char *const[]){ rs->rule, rs->mountpoint,
								       stat_names[k], v },
						4);
			}
		}
		if (fflush(f) != 0 || ferror(f))
			ok = false;
	}
	if (!ok)
		return -ENOMEM;
	*len = size;
	*ret = TAKE_PTR(buf);
	return 0;
}

/* Split a line into at most max raw fields; returns the count. */
static size_t split(const char *line, size_t len, const char **f, size_t *fl, size_t max)
{
	size_t n = 0;
	const char *start = line, *end = line + len;

	for (const char *p = line;; p++) {
		if (p == end || *p == '\t') {
			if (n == max)
				return max + 1;
			f[n] = start;
			fl[n] = (size_t)(p - start);
			n++;
			if (p == end)
				break;
			start = p + 1;
		}
	}
	return n;
}

static int parse_u64(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (!len || len > 20)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*ret = v;
	return 0;
}

static int parse_int(const char *s, size_t len, int *ret)
{
	bool neg = len && s[0] == '-';
	uint64_t v;
	int r = parse_u64(s + neg, len - neg, &v);

	if (r < 0 || v > INT32_MAX)
		return -EBADMSG;
	*ret = neg ? -(int)v : (int)v;
	return 0;
}

#define MAX_FIELDS 6

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
}

static int parse_line(struct ea_state *s, const char *line, size_t len, bool first)
{
	const char *raw[MAX_FIELDS + 1];
	size_t rl[MAX_FIELDS + 1], n;
	char *v[MAX_FIELDS] = { 0 };
	uint64_t u;
	int r = 0, i;

	n = split(line, len, raw, rl, MAX_FIELDS);
	if (n > MAX_FIELDS)
		return -EBADMSG;
	for (size_t k = 0; k < n; k++) {
		r = ea_state_unescape(raw[k], rl[k], &v[k]);
		if (r < 0) {
			free_strv(v, k);
			return r;
		}
	}

#define IS(t, nf) (!strcmp(v[0], t) && n == (nf) + 1)
	if (first) {
		if (n != 2 || strcmp(v[0], "extalign-state") || parse_u64(v[1], strlen(v[1]), &u))
			r = -EBADMSG;
		else if (u != EA_STATE_VERSION)
			r = -EPROTONOSUPPORT;
		else
			s->version = (unsigned)u;
	} else if (IS("pid", 1)) {
		r = parse_int(v[1], strlen(v[1]), &i);
		s->pid = i;
	} else if (IS("started", 1)) {
		r = parse_u64(v[1], strlen(v[1]), &s->started_usec);
	} else if (IS("updated", 1)) {
		r = parse_u64(v[1], strlen(v[1]), &s->updated_usec);
	} else if (IS("config", 1)) {
		free(s->config);
		s->config = TAKE_PTR(v[1]);
	} else if (IS("watcher", 1)) {
		free(s->watcher);
		s->watcher = TAKE_PTR(v[1]);
	} else if (IS("phase", 1)) {
		free(s->phase);
		s->phase = TAKE_PTR(v[1]);
	} else if (IS("reload", 1)) {
		free(s->last_reload);
		s->last_reload = TAKE_PTR(v[1]);
	} else if (IS("rules", 1)) {
		r = parse_u64(v[1], strlen(v[1]), &u);
		if (!r && u > UINT32_MAX)
			r = -EBADMSG;
		if (!r)
			s->rules = (unsigned)u;
	} else if (IS("counter", 2)) {
		r = parse_u64(v[2], strlen(v[2]), &u);
		i = ea_state_counter_from_name(v[1]);
		/* The name of a daemon from before the JSON keys were made one. */
		if (i < 0 && !strcmp(v[1], "dirs_inherit_set"))
			i = EA_CNT_DIRS_HINTED;
		if (!r && i >= 0)
			s->counters[i] = u;
	} else if (IS("mark", 3)) {
		r = ea_state_add_mark(s, v[1], v[2], v[3]);
	} else if (IS("error", 5)) {
		r = parse_u64(v[1], strlen(v[1]), &u);
		if (!r)
			r = parse_int(v[2], strlen(v[2]), &i);
		if (!r)
			r = ea_state_add_error(s, u, i, v[3], v[4], v[5]);
	} else if (IS("late", 4)) {
		r = parse_u64(v[1], strlen(v[1]), &u);
		if (!r)
			r = ea_state_add_late(s, u, v[2], v[3], v[4]);
	} else if (IS("job", 3)) {
		uint64_t done = 0, total = 0;

		r = parse_u64(v[2], strlen(v[2]), &done);
		if (!r)
			r = parse_u64(v[3], strlen(v[3]), &total);
		if (!r)
			r = ea_state_set_job(s, v[1], done, total);
		if (r == -EINVAL)
			r = -EBADMSG; /* a job record before any late record */
	} else if (IS("rule-stat", 4)) {
		struct ea_state_rule_stats *rs;

		r = parse_u64(v[4], strlen(v[4]), &u);
		i = ea_state_stat_from_name(v[3]);
		/* A stat of a newer daemon is skipped like an unknown counter. */
		if (!r && i >= 0) {
			rs = ea_state_rule_stats(s, v[1], v[2]);
			if (rs)
				rs->v[i] = u;
			else
				r = -ENOMEM;
		}
	} else if (!strcmp(v[0], "pid") || !strcmp(v[0], "started") || !strcmp(v[0], "updated") ||
		   !strcmp(v[0], "config") || !strcmp(v[0], "watcher") || !strcmp(v[0], "phase") ||
		   !strcmp(v[0], "reload") || !strcmp(v[0], "rules") || !strcmp(v[0], "counter") ||
		   !strcmp(v[0], "mark") || !strcmp(v[0], "error") || !strcmp(v[0], "late") ||
		   !strcmp(v[0], "job") || !strcmp(v[0], "rule-stat")) {
		r = -EBADMSG; /* a known record with the wrong number of fields */
	}
	/* Anything else is a record from a newer daemon: skipped. */
#undef IS
	free_strv(v, n);
	return r;
}

int ea_state_parse(const char *buf, size_t len, struct ea_state *ret, unsigned *bad_line)
{
	struct ea_state s = { 0 };
	const char *p = buf, *end = buf + len;
	unsigned line = 0;
	int r = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		line++;
		if (!nl) {
			/* A writer always ends its last line: this is a truncated file. */
			r = -EBADMSG;
			break;
		}
		r = parse_line(&s, p, (size_t)(nl - p), line == 1);
		if (r < 0)
			break;
		p = nl + 1;
	}
	if (!r && line == 0)
		r = -EBADMSG;
	if (r < 0) {
		if (bad_line)
			*bad_line = line;
		ea_state_free(&s);
		return r;
	}
	*ret = s;
	return 0;
}

int ea_state_write_at(int dirfd, const char *name, const struct ea_state *s)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r;

	r = ea_state_format(s, &buf, &len);
	if (r < 0)
		return r;
	/* 0644: the state names paths but no contents; status runs unprivileged. */
	return ea_file_replace_at(dirfd, name, buf, len, 0644);
}

int ea_state_read_at(int dirfd, const char *name, struct ea_state *ret, unsigned *bad_line)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return negative_errno();
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 16384;
			char *p;

			/* The daemon bounds what it writes; a huge file is not ours. */
			if (ncap > 64u << 20)
				return -EFBIG;
			p = realloc(buf, ncap);
			if (!p)
				return -ENOMEM;
			buf = p;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return ea_state_parse(buf ? buf : "", len, ret, bad_line);
}
