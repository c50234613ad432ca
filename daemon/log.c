// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Two targets: the journal with fields a query can select on (RULE=, PATH=,
 * ERRNO=), when stderr is the journal stream systemd gave us; otherwise one
 * line per message on stderr with the "<N>" priority prefix that systemd and
 * syslog-style collectors understand, or without it on a terminal, where a
 * person reads it.
 */
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <systemd/sd-journal.h>

#include "message-ids.h"
#include "mountpoint.h"
#include "util.h"
#include "extalign/macro.h"

/* JOURNAL_STREAM is "dev:ino" of the stream systemd connected to stderr.  It
 * is inherited by children, so it counts only if stderr is still that stream. */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

bool log_target_valid(const char *target)
{
	return !strcmp(target, "auto") || !strcmp(target, "journal") || !strcmp(target, "stderr");
}

/* sd_journal_sendv() reports success when nothing listens: look first. */
static bool journal_listening(void)
{
	struct stat st;

	return stat(JOURNAL_SOCKET, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void journal_gone(struct ealog *l, int err)
{
	fprintf(stderr, "extalignd: the journal is not available (%s: %s), logging to stderr\n",
		JOURNAL_SOCKET, strerror(err));
	l->journal = false;
}

void log_setup(struct ealog *l, const char *target, bool verbose)
{
	if (target && !strcmp(target, "journal"))
		l->journal = true;
	else if (target && !strcmp(target, "stderr"))
		l->journal = false;
	else
		l->journal = stderr_is_journal();
	if (l->journal && !journal_listening())
		journal_gone(l, errno ? errno : ENOTSOCK);
	l->prefix = !isatty(STDERR_FILENO);
	l->max_level = verbose ? LOG_DEBUG : LOG_INFO;
}

/* log_at() with the message formatted already. */
static void log_msg_at(const struct log_site *site, struct ealog *l, const char *msgid, int prio,
		       const char *rule, const char *path, int err, const char *msg)
{
	_cleanup_free_ char *text = NULL;
	char pre[8] = "";
	int saved = errno;

	if (prio > l->max_level)
		return;
	/* One text for both targets, the rule and path in it: journalctl shows
	 * MESSAGE= alone, and "realignment skipped" without the file tells an
	 * admin nothing.  The journal's fields are for queries. */
	if (asprintf(&text, "%s%s%s%s%s%s%s%s", rule ? "rule " : "", rule ? rule : "",
		     rule ? ": " : "", path ? path : "", path ? ": " : "", msg, err ? ": " : "",
		     err ? strerror(-err) : "") < 0)
		text = NULL;

	if (l->journal && text) {
		char *f[7] = { 0 };
		struct iovec iov[7];
		size_t n = 0;
		bool ok = true;

		ok = ok && asprintf(&f[n++], "MESSAGE=%s", text) >= 0;
		ok = ok && asprintf(&f[n++], "PRIORITY=%d", prio) >= 0;
		ok = ok && asprintf(&f[n++], "SYSLOG_IDENTIFIER=extalignd") >= 0;
		if (msgid)
			ok = ok && asprintf(&f[n++], "MESSAGE_ID=%s", msgid) >= 0;
		if (rule)
			ok = ok && asprintf(&f[n++], "RULE=%s", rule) >= 0;
		if (path)
			ok = ok && asprintf(&f[n++], "PATH=%s", path) >= 0;
		if (err)
			ok = ok && asprintf(&f[n++], "ERRNO=%d", -err) >= 0;
		if (ok) {
			for (size_t i = 0; i < n; i++)
				iov[i] = (struct iovec){ f[i], strlen(f[i]) };
			int r = sd_journal_sendv_with_location(site->file, site->line, site->func,
							       iov, (int)n);

			/* journald gone (stopped, or a test): stderr still works. */
			ok = r >= 0;
			if (!ok)
				journal_gone(l, -r);
		}
		for (size_t i = 0; i < n; i++)
			free(f[i]);
		if (ok)
			goto out;
	}
	if (l->prefix)
		snprintf(pre, sizeof(pre), "<%d>", prio);
	/* One fprintf so that concurrent writers do not interleave a line. */
	fprintf(stderr, "%s%s\n", pre, text ? text : msg);
out:
	errno = saved;
}

void log_at(const struct log_site *site, struct ealog *l, const char *msgid, int prio,
	    const char *rule, const char *path, int err, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int saved = errno;

	if (prio > l->max_level)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg)
		log_msg_at(site, l, msgid, prio, rule, path, err, msg);
	errno = saved;
}

/* The MESSAGE_ID of a failure's reason. */
static const char *reason_msgid(enum ea_state_stat reason)
{
	switch (reason) {
	case EA_STAT_FAIL_UNSUPPORTED:
		return MSGID_HINT_UNSUPPORTED;
	case EA_STAT_FAIL_HINT:
		return MSGID_HINT_FAILED;
	case EA_STAT_FAIL_IO:
		return MSGID_FILE_UNREADABLE;
	case EA_STAT_FAIL_LATE_LIST:
		return MSGID_LATE_LIST_FULL;
	case EA_STAT_FAIL_REALIGN:
	case EA_STAT_FAIL_REALIGN_SKIPPED:
		return MSGID_REALIGN_FAILED;
	case EA_STAT_FAIL_WATCH:
		return MSGID_WATCH_FAILED;
	default:
		return NULL;
	}
}

void report_error_at(const struct log_site *site, struct report *rep, const char *msgid,
		     enum ea_state_stat reason, const char *rule, dev_t dev, const char *path,
		     int err, const char *fmt, ...)
{
	struct ea_state_error *e = &rep->errors[rep->n_errors_total % ERROR_RING];
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	log_msg_at(site, &rep->log, msgid ? msgid : reason_msgid(reason), LOG_ERR, rule, path, err,
		   msg ? msg : fmt);

	if (reason < _EA_STAT_MAX) {
		report_stat(rep, rule, dev, reason, 1);
	} else {
		rep->counters[EA_CNT_ERRORS]++;
		rep->dirty = true;
	}
	free(e->rule);
	free(e->path);
	free(e->msg);
	*e = (struct ea_state_error){
		.usec = now_usec(CLOCK_REALTIME),
		.err = -err,
		.rule = rule ? strdup(rule) : NULL,
		.path = path ? strdup(path) : NULL,
		.msg = TAKE_PTR(msg),
	};
	rep->n_errors_total++;
}

void report_count(struct report *rep, enum ea_state_counter c)
{
	rep->counters[c]++;
	rep->dirty = true;
}

struct report_key *report_key(struct report *rep, const char *rule, dev_t dev)
{
	struct report_key *v, *k;
	const char *mp = NULL;

	rule = rule ? rule : "";
	for (size_t i = 0; i < rep->n_keys; i++) {
		if (rep->keys[i].dev == dev && !strcmp(rep->keys[i].rule, rule))
			return &rep->keys[i];
		if (rep->keys[i].dev == dev)
			mp = rep->keys[i].mountpoint;
	}
	v = realloc(rep->keys, (rep->n_keys + 1) * sizeof(*v));
	if (!v)
		return NULL;
	rep->keys = v;
	k = &v[rep->n_keys];
	*k = (struct report_key){ .dev = dev, .rule = strdup(rule) };
	/* The mount table once per filesystem, not once per key. */
	k->mountpoint = mp ? strdup(mp) : dev ? mountpoint_of(dev) : strdup("");
	if (!k->rule || !k->mountpoint) {
		free(k->rule);
		free(k->mountpoint);
		return NULL;
	}
	rep->n_keys++;
	return k;
}

/* The global counter that sums a stat, or -1 (the pending gauge). */
static int stat_counter(enum ea_state_stat st)
{
	switch (st) {
	case EA_STAT_FILES_HINTED:
		return EA_CNT_FILES_HINTED;
	case EA_STAT_FILES_INHERITED:
		return EA_CNT_FILES_INHERITED;
	case EA_STAT_DIRS_HINTED:
		return EA_CNT_DIRS_HINTED;
	case EA_STAT_DIRS_INHERITED:
		return EA_CNT_DIRS_INHERITED;
	case EA_STAT_FILES_LATE:
		return EA_CNT_FILES_LATE;
	case EA_STAT_REALIGNED_FILES:
		return EA_CNT_JOBS_DONE;
	case EA_STAT_REALIGNED_BYTES:
		return EA_CNT_BYTES_REALIGNED;
	case EA_STAT_SKIPPED:
		return EA_CNT_SKIPPED;
	case EA_STAT_FAIL_UNSUPPORTED:
		return EA_CNT_UNSUPPORTED;
	case EA_STAT_FAIL_REALIGN:
	case EA_STAT_FAIL_REALIGN_SKIPPED:
		return EA_CNT_JOBS_FAILED;
	case EA_STAT_FAIL_HINT:
	case EA_STAT_FAIL_IO:
	case EA_STAT_FAIL_LATE_LIST:
	case EA_STAT_FAIL_WATCH:
		return EA_CNT_ERRORS;
	default:
		return -1;
	}
}

void report_stat(struct report *rep, const char *rule, dev_t dev, enum ea_state_stat st, uint64_t n)
{
	struct report_key *k = report_key(rep, rule, dev);
	int c = stat_counter(st);

	/* Without memory for the key the sum still counts. */
	if (k && (unsigned)st < _EA_STAT_MAX)
		k->v[st] += n;
	if (c >= 0)
		rep->counters[c] += n;
	rep->dirty = true;
}

void report_free(struct report *rep)
{
	for (size_t i = 0; i < ERROR_RING; i++) {
		free(rep->errors[i].rule);
		free(rep->errors[i].path);
		free(rep->errors[i].msg);
		rep->errors[i] = (struct ea_state_error){ 0 };
	}
	for (size_t i = 0; i < rep->n_keys; i++) {
		free(rep->keys[i].rule);
		free(rep->keys[i].mountpoint);
	}
	free(rep->keys);
	rep->keys = NULL;
	rep->n_keys = 0;
}
