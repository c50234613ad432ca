/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers every part of extalignd uses: clocks, logging, error reporting
 * with the counters and the ring of last errors that the state file shows.
 * A leaf (util.c, log.c): it includes no other daemon file, so the parts
 * above it (watch, apply, jobs, main) never depend on each other through it.
 */
#ifndef EXTALIGND_UTIL_H
#define EXTALIGND_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* err is -errno or 0; rule and path may be NULL.  Falls back to stderr,
 * once said so, when the journal goes away. */
void log_full(struct ealog *l, int prio, const char *rule, const char *path, int err,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ---- what the daemon counts and the errors it keeps (log.c) --------------- */

#define ERROR_RING 16

struct report {
	struct ealog log;
	uint64_t counters[_EA_CNT_MAX];
	struct ea_state_error errors[ERROR_RING]; /* ring of the last errors */
	size_t n_errors_total;
	bool dirty; /* something changed since the state file was written */
};

#define report_log(rep, prio, ...) log_full(&(rep)->log, prio, NULL, NULL, 0, __VA_ARGS__)
/* Log at LOG_ERR, count it, keep it in the ring for extalign status. */
void report_error(struct report *rep, const char *rule, const char *path, int err, const char *fmt,
		  ...) __attribute__((format(printf, 5, 6)));
/* One more of c; the state file is due for a rewrite. */
void report_count(struct report *rep, enum ea_state_counter c);
void report_free(struct report *rep);

#endif
