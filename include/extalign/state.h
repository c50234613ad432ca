/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What extalignd is doing, as it publishes it in /run/extalign/state for
 * `extalign status`.  A text file, one record per line, fields separated by
 * tabs, every field escaped (backslash, tab, newline and other control bytes
 * as \\ \t \n \xHH) so that paths users chose cannot forge records:
 *
 *	extalign-state	1
 *	pid	1234
 *	reload	refused
 *	counter	files_hinted	17
 *	mark	/srv/db	xfs	fanotify-filesystem
 *	error	<realtime usec>	<errno>	<rule>	<path>	<message>
 *	late	<realtime usec>	<rule>	<path>	<queue state>
 *	job	<reason>	<bytes done>	<bytes total>
 *	rule-stat	<rule>	<mountpoint>	<name>	<value>
 *
 * A job record belongs to the late record before it: why a queued file
 * waits (load or I/O pressure over its limit, outside the window, ...) or
 * how far a running job is.
 * A rule-stat record is one counter (or gauge) of one rule on one
 * filesystem, for the metrics' rule and mountpoint labels; rule or
 * mountpoint is "" when the event had none (an error before any rule
 * matched).  Daemons before rule-stat records wrote none: such a state
 * has the global counters only.
 * Readers ignore record types and counters they do not know, so the daemon
 * can grow the format without breaking an older `extalign status`.
 */
#ifndef EXTALIGN_STATE_H
#define EXTALIGN_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#define EA_STATE_VERSION 1
#define EA_STATE_DIR	 "/run/extalign"
#define EA_STATE_FILE	 "state"
/*
 * The most bytes of fanotify records extalignd reads ahead of its hinting
 * (daemon/fan-backlog.c): about 400,000 creates.  EA_CNT_BACKLOG_PEAK is
 * measured against it.
 */
#define EA_BACKLOG_MAX (32U << 20)

enum ea_state_counter {
	EA_CNT_EVENTS,		/* filesystem events read */
	EA_CNT_DIRS_HINTED,	/* directories given inheritance by us */
	EA_CNT_DIRS_INHERITED,	/* directories that already had it (kernel) */
	EA_CNT_FILES_HINTED,	/* empty files hinted by us */
	EA_CNT_FILES_INHERITED, /* files that got the hint from the kernel */
	EA_CNT_FILES_LATE,	/* already had data: realignment candidates */
	EA_CNT_UNSUPPORTED,	/* kernel kept nothing of the hint */
	EA_CNT_ERRORS,		/* any other failure */
	EA_CNT_SKIPPED,		/* symlinks, hard links, devices, other mounts */
	EA_CNT_OVERFLOWS,	/* event queue overflows */
	EA_CNT_RESCANS,		/* trees walked after an overflow or a move */
	EA_CNT_RELOADS,		/* configurations swapped in */
	EA_CNT_RELOAD_FAILURES, /* configurations refused, old rules kept */
	EA_CNT_JOBS_DONE,	/* realignment jobs that finished */
	EA_CNT_JOBS_FAILED,	/* realignment jobs that failed */
	EA_CNT_BYTES_REALIGNED, /* data bytes the finished jobs rewrote */
	/* Not a sum: the most bytes of fanotify records read ahead of the
	 * hinting at once, at most EA_BACKLOG_MAX. */
	EA_CNT_BACKLOG_PEAK,
	_EA_CNT_MAX,
};

/* The counter's name in the file and in JSON, e.g. "files_hinted". */
const char *ea_state_counter_name(enum ea_state_counter c);
/* The counter for a name, or -1. */
int ea_state_counter_from_name(const char *name);

/*
 * What is kept per rule and filesystem.  The EA_STAT_FAIL_* are the
 * failures by reason; EA_STAT_LATE_PENDING is a gauge, the others count.
 */
enum ea_state_stat {
	EA_STAT_FILES_HINTED,	      /* empty files hinted by us */
	EA_STAT_FILES_INHERITED,      /* files that got the hint from the kernel */
	EA_STAT_DIRS_HINTED,	      /* directories given inheritance by us */
	EA_STAT_DIRS_INHERITED,	      /* directories that already had it */
	EA_STAT_FILES_LATE,	      /* found with data: realignment candidates */
	EA_STAT_LATE_PENDING,	      /* gauge: late files not realigned (yet) */
	EA_STAT_REALIGNED_FILES,      /* realignment jobs that finished */
	EA_STAT_REALIGNED_BYTES,      /* data bytes they rewrote */
	EA_STAT_SKIPPED,	      /* symlinks, hard links, devices, other mounts */
	EA_STAT_FAIL_UNSUPPORTED,     /* the kernel kept no hint */
	EA_STAT_FAIL_HINT,	      /* setting the hint failed otherwise */
	EA_STAT_FAIL_IO,	      /* a file or tree could not be opened, read, walked */
	EA_STAT_FAIL_LATE_LIST,	      /* a late file not listed: queue full, no memory */
	EA_STAT_FAIL_REALIGN,	      /* a realignment job failed */
	EA_STAT_FAIL_REALIGN_SKIPPED, /* a realignment job refused the file */
	EA_STAT_FAIL_WATCH,	      /* a mark or watch could not be placed, events lost */
	_EA_STAT_MAX,
};
#define EA_STAT_FAIL_FIRST EA_STAT_FAIL_UNSUPPORTED

/* The name in the file and in JSON ("files_hinted", "failures_hint"). */
const char *ea_state_stat_name(enum ea_state_stat st);
int ea_state_stat_from_name(const char *name);
/* The failure's reason label ("hint"), NULL for a stat that is no failure. */
const char *ea_state_failure_reason(enum ea_state_stat st);

struct ea_state_rule_stats {
	char *rule;	  /* "" when none applied */
	char *mountpoint; /* where the filesystem is mounted; "" when unknown */
	uint64_t v[_EA_STAT_MAX];
};

struct ea_state_mark {
	char *path;   /* where the mark was placed */
	char *fstype; /* "xfs", "ext4", ... */
	char *how;    /* "fanotify-filesystem", "fanotify-mount", "inotify" */
};

struct ea_state_error {
	uint64_t usec; /* CLOCK_REALTIME */
	int err;       /* positive errno, 0 when none applies */
	char *rule;
	char *path;
	char *msg;
};

/*
 * Where a late file (one that had data before its hint) stands in the
 * daemon's realignment queue.  The state file and status carry the names.
 */
enum ea_late_queue {
	EA_LATE_LISTED,	     /* found; realignment is off for its rule or daemon */
	EA_LATE_QUEUED,	     /* waits for an idle window */
	EA_LATE_RUNNING,     /* its job runs */
	EA_LATE_DONE,	     /* realigned */
	EA_LATE_FAILED,	     /* its job failed */
	EA_LATE_SKIPPED,     /* refused: open, changed, too big, ... */
	EA_LATE_UNSUPPORTED, /* the filesystem cannot realign it */
	_EA_LATE_MAX,
};

/* "listed", "queued", "running", "done", "failed", "skipped", "unsupported". */
const char *ea_late_queue_name(enum ea_late_queue q);
/* The state of a name; -1 for one this version does not know. */
int ea_late_queue_from_name(const char *name);
/* Listed, queued or running: the file still waits, nothing ended it. */
bool ea_late_queue_pending(enum ea_late_queue q);

struct ea_state_late {
	uint64_t usec; /* when it was found */
	char *rule;
	char *path;
	char *queue;	/* an ea_late_queue_name(), or what a newer daemon wrote */
	char *reason;	/* why it waits; "" when nothing is known */
	uint64_t done;	/* bytes of a running job, of total */
	uint64_t total; /* 0: no progress known */
};

struct ea_state {
	unsigned version;
	pid_t pid;
	uint64_t started_usec; /* CLOCK_REALTIME */
	uint64_t updated_usec;
	char *config;	   /* path of the configuration in use */
	char *watcher;	   /* "fanotify" or "inotify" */
	char *phase;	   /* "starting", "running", "reloading", "stopping" */
	char *last_reload; /* "ok" or "refused"; NULL before the first reload */
	unsigned rules;
	uint64_t counters[_EA_CNT_MAX];
	struct ea_state_mark *marks;
	size_t n_marks;
	struct ea_state_error *errors;
	size_t n_errors;
	struct ea_state_late *late;
	size_t n_late;
	struct ea_state_rule_stats *rule_stats;
	size_t n_rule_stats;
};

void ea_state_free(struct ea_state *s);

/* Append copies of the strings; -ENOMEM or 0.  NULL strings become "". */
int ea_state_add_mark(struct ea_state *s, const char *path, const char *fstype, const char *how);
int ea_state_add_error(struct ea_state *s, uint64_t usec, int err, const char *rule,
		       const char *path, const char *msg);
int ea_state_add_late(struct ea_state *s, uint64_t usec, const char *rule, const char *path,
		      const char *queue);
/* The entry of rule and mountpoint, added with zeros when missing; NULL on ENOMEM. */
struct ea_state_rule_stats *ea_state_rule_stats(struct ea_state *s, const char *rule,
						const char *mountpoint);
/* The job details of the last late entry; -EINVAL when there is none. */
int ea_state_set_job(struct ea_state *s, const char *reason, uint64_t done, uint64_t total);

/* Serialize into a malloc()ed, NUL-terminated buffer. */
int ea_state_format(const struct ea_state *s, char **ret, size_t *len);

/*
 * Parse a buffer written by ea_state_format().  Returns 0, -EBADMSG for a
 * malformed file (*bad_line set to its 1-based number when not NULL),
 * -EPROTONOSUPPORT for a newer major version, -ENOMEM.
 */
int ea_state_parse(const char *buf, size_t len, struct ea_state *ret, unsigned *bad_line);

/*
 * Replace name under dirfd atomically (a temporary file renamed over it),
 * so a reader sees the old or the new state and never half of one, and after
 * a crash the one or the other (ea_file_replace_at()).
 */
int ea_state_write_at(int dirfd, const char *name, const struct ea_state *s);
int ea_state_read_at(int dirfd, const char *name, struct ea_state *ret, unsigned *bad_line);

/* A block device under a watched filesystem, for the metrics. */
struct ea_prom_bdev {
	char device[256];  /* kernel name, "nvme0n1p1" */
	uint32_t unit_min; /* atomic write unit range; 0 when none */
	uint32_t unit_max;
};

/*
 * Write the state as Prometheus text exposition (the format node_exporter's
 * textfile collector reads).  running: the daemon is alive.  bdevs may be
 * NULL.  Prints no errors; returns 0 or -EIO when f failed.
 */
int ea_state_write_prometheus(FILE *f, const struct ea_state *s, bool running,
			      const struct ea_prom_bdev *bdevs, size_t n_bdevs);

/*
 * The block devices under the state's marks, with their atomic write unit
 * range from sysfs (sysroot NULL: the running system).  Marks on the same
 * device give one entry; a mark not on a block device (tmpfs, NFS) none.
 * *ret is malloc()ed.  Returns 0 or -errno.
 */
int ea_state_mark_bdevs(const struct ea_state *s, const char *sysroot, struct ea_prom_bdev **ret,
			size_t *n);

/*
 * Replace path with buf atomically and durably: a temporary file in the
 * same directory, written, fsync()ed and renamed over the name, then the
 * directory fsync()ed.  The directory is opened as given (its symlinks are
 * the administrator's); the final name itself is replaced, never followed.
 */
int ea_file_replace(const char *path, const char *buf, size_t len, mode_t mode);
/* The same for name under an open directory (the state and the late list). */
int ea_file_replace_at(int dfd, const char *name, const char *buf, size_t len, mode_t mode);

/* Field escaping as used by the file; exposed for tests.  malloc()ed results. */
char *ea_state_escape(const char *s);
/* -EBADMSG for a bad escape sequence or an escaped NUL. */
int ea_state_unescape(const char *s, size_t len, char **ret);

#endif
