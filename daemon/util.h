/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers every part of extalignd uses: clocks, logging, error reporting
 * with the counters and the ring of last errors that the state file shows.
 * Near the bottom: util.c includes no other daemon file, and log.c only
 * the leaves message-ids.h and mountpoint.h (mountpoint.c uses libextalign
 * alone), so the parts above (watch, apply, jobs, main) never depend on
 * each other through it.
 */
#ifndef EXTALIGND_UTIL_H
#define EXTALIGND_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "extalign/state.h"

/* util.c */
uint64_t now_usec(int clock);
/* Open an administrator's directory path, refusing symlinks in any component. */
int open_tree(const char *path, int flags);
/*
 * /proc/self/fd, open once: each reopen of a file through its O_PATH
 * descriptor and each directory path read back is then one name to look up,
 * not four.  -errno when it is not procfs.
 */
int proc_fd_open(void);
/* open() the very inode fd holds, through proc_fd (or the path, when -1). */
int fd_reopen(int proc_fd, int fd, int flags);
/* The path fd has now, as this mount namespace sees it: readlink. */
int fd_path(int proc_fd, int fd, char **ret);

/* ---- logging (log.c) ------------------------------------------------------ */

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

struct ealog {
	bool journal;  /* structured fields to the journal, else lines on stderr */
	bool prefix;   /* "<N>" before each line: stderr is not a terminal */
	int max_level; /* LOG_DEBUG with --verbose, LOG_INFO otherwise */
};

/* auto, journal or stderr. */
bool log_target_valid(const char *target);
/* Says on stderr when the journal asked for is not there. */
void log_setup(struct ealog *l, const char *target, bool verbose);
/* err is -errno or 0; rule, path and msgid may be NULL.  msgid is one of
 * message-ids.h, sent as MESSAGE_ID= to the journal.  Falls back to stderr,
 * once said so, when the journal goes away. */
struct log_site {
	const char *file; /* "CODE_FILE=daemon/apply.c", as sd-journal wants it */
	const char *line; /* "CODE_LINE=123" */
	const char *func;
};
#define LOG_STR_(x) #x
#define LOG_STR(x)  LOG_STR_(x)
#define LOG_SITE                                                                          \
	(&(const struct log_site){ "CODE_FILE=" __FILE__, "CODE_LINE=" LOG_STR(__LINE__), \
				   __func__ })
/* The journal's CODE_FILE=, CODE_LINE= and CODE_FUNC= name the caller, not log.c. */
void log_at(const struct log_site *site, struct ealog *l, const char *msgid, int prio,
	    const char *rule, const char *path, int err, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
#define log_id(...)				log_at(LOG_SITE, __VA_ARGS__)
#define log_full(l, prio, rule, path, err, ...) log_id(l, NULL, prio, rule, path, err, __VA_ARGS__)

/* ---- what the daemon counts and the errors it keeps (log.c) --------------- */

#define ERROR_RING 16

/* The counts of one rule on one filesystem (the metrics' labels). */
struct report_key {
	char *rule;	  /* "" for none */
	dev_t dev;	  /* 0 when unknown */
	char *mountpoint; /* of dev, looked up once; "" when unknown */
	uint64_t v[_EA_STAT_MAX];
};

struct report {
	struct ealog log;
	uint64_t counters[_EA_CNT_MAX];
	struct report_key *keys;
	size_t n_keys;
	struct ea_state_error errors[ERROR_RING]; /* ring of the last errors */
	size_t n_errors_total;
	bool dirty; /* something changed since the state file was written */
};

#define report_log(rep, prio, ...) log_full(&(rep)->log, prio, NULL, NULL, 0, __VA_ARGS__)
/*
 * Log at LOG_ERR with the reason's MESSAGE_ID, count it as a failure of
 * that reason (an EA_STAT_FAIL_*) for rule on the filesystem dev, keep it
 * in the ring for extalign status.  rule may be NULL, dev 0.  A reason of
 * _EA_STAT_MAX is an error of no rule's (a refused reload): only counted
 * in the errors.
 */
void report_error_at(const struct log_site *site, struct report *rep, const char *msgid,
		     enum ea_state_stat reason, const char *rule, dev_t dev, const char *path,
		     int err, const char *fmt, ...) __attribute__((format(printf, 9, 10)));
#define report_error_id(...) report_error_at(LOG_SITE, __VA_ARGS__)
/* With the MESSAGE_ID of the reason. */
#define report_error(rep, ...) report_error_id(rep, NULL, __VA_ARGS__)
/* One more of c; the state file is due for a rewrite. */
void report_count(struct report *rep, enum ea_state_counter c);
/* n more of st for rule (NULL: none) on the filesystem dev (0: unknown),
 * and of the global counter that sums it. */
void report_stat(struct report *rep, const char *rule, dev_t dev, enum ea_state_stat st,
		 uint64_t n);
/* The counts of rule on dev, made (with zeros) when missing; NULL on ENOMEM. */
struct report_key *report_key(struct report *rep, const char *rule, dev_t dev);
void report_free(struct report *rep);

#endif
