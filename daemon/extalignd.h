/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * extalignd: applies the extalign.conf rules to new files and directories as
 * they appear.  Everything the daemon knows lives in one struct daemon that
 * is handed around; there is no global state (signals arrive on a signalfd).
 */
#ifndef EXTALIGND_H
#define EXTALIGND_H

#include <linux/fanotify.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "extalign/policy.h"
#include "extalign/state.h"

/* ---- logging (log.c) ------------------------------------------------------ */

struct ealog {
	bool journal;  /* structured fields to the journal, else <N> on stderr */
	int max_level; /* LOG_DEBUG with --verbose, LOG_INFO otherwise */
};

void log_setup(struct ealog *l, const char *target, bool verbose);
/* err is -errno or 0; rule and path may be NULL. */
void log_full(const struct ealog *l, int prio, const char *rule, const char *path, int err,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
#define log_msg(d, prio, ...) log_full(&(d)->log, prio, NULL, NULL, 0, __VA_ARGS__)

/* ---- pure helpers (event.c), unit-tested ----------------------------------- */

/* One fanotify event as reported with FAN_REPORT_DFID_NAME. */
struct fan_event {
	uint64_t mask;
	int32_t pid;
	__kernel_fsid_t fsid;
	const struct file_handle *dir; /* points into the buffer; NULL for overflow */
	const char *name;	       /* NUL-terminated inside the buffer; NULL if none */
};

/*
 * Take the next event from a read() buffer: 1 with *ev filled and *buf and
 * *len advanced, 0 at the end, -EBADMSG for a malformed record (the rest of
 * the buffer is then unusable).  The kernel is trusted with the format but
 * not with our assumptions about it: every length is checked.
 */
int fan_event_next(const void **buf, size_t *len, struct fan_event *ev);

/*
 * A single path component as it came from the kernel or readdir: not empty,
 * no '/', not "." or "..".
 */
bool name_is_component(const char *name);

/*
 * dir + "/" + name into a new string, -EINVAL when name is not one component
 * or dir is not an absolute path as /proc/self/fd shows it (a " (deleted)"
 * suffix means the directory is gone).
 */
int child_path(const char *dir, const char *name, char **ret);

/* (dev, ino) of a file, to remember files without holding them open. */
struct file_id {
	dev_t dev;
	ino_t ino;
};

/* A set of file ids (open addressing); for de-duplicating late files. */
struct id_set {
	struct file_id *v;
	size_t n, cap;
};
/* 1 when added, 0 when already present, -ENOMEM. */
int id_set_add(struct id_set *s, struct file_id id);
bool id_set_has(const struct id_set *s, struct file_id id);
void id_set_free(struct id_set *s);

/* ---- the daemon --------------------------------------------------------------- */

/* A filesystem holding at least one watched tree. */
struct fsmark {
	dev_t dev;
	__kernel_fsid_t fsid;
	int fd;	    /* O_PATH directory on it: open_by_handle_at's mount fd */
	char *path; /* the watched tree (or its nearest existing ancestor) */
	char *fstype;
	char *how;   /* "fanotify-filesystem" or "inotify" */
	bool marked; /* fanotify mark in place */
};

/* An inotify watch: the directory it is on, held as O_PATH. */
struct iwatch {
	int wd;
	int fd;
	char *path;
};

struct late_file {
	uint64_t usec;
	struct file_id id;
	char *rule;
	char *path;
	const char *queue; /* static: "queued", "running", "done", "failed", ... */
	uint32_t extsize;
	int forcealign;
};

#define ERROR_RING 16

struct daemon {
	/* options */
	const char *config;
	const char *config_dir; /* NULL: none with --config, default otherwise */
	const char *state_dir;
	const char *force_watch; /* --watch: overrides [daemon] watch */
	bool no_realign;

	struct ealog log;
	struct ea_policy *policy;
	enum ea_watch_backend backend; /* the one in use: FANOTIFY or INOTIFY */

	int epoll_fd, signal_fd, timer_fd;
	int fan_fd, ino_fd;
	int state_dir_fd;

	struct fsmark *marks;
	size_t n_marks;
	struct iwatch *iwatches;
	size_t n_iwatches;

	uint64_t counters[_EA_CNT_MAX];
	struct ea_state_error errors[ERROR_RING]; /* ring of the last errors */
	size_t n_errors_total;

	struct late_file *late;
	size_t n_late;
	struct id_set late_ids;

	uint64_t start_realtime_usec;
	uint64_t start_boottime_ns; /* files born before this are not "late" */
	uint64_t watchdog_usec;
	uint64_t last_state_usec; /* monotonic */
	bool state_dirty;
	bool rescan_pending;
	const char *phase;
	bool project_rules; /* any project rule: no cheap path filter then */

	/* realignment (jobs.c) */
	struct jobs *jobs;
};

/* main.c */
uint64_t now_usec(int clock);
void daemon_notify_status(struct daemon *d);
void daemon_error(struct daemon *d, const char *rule, const char *path, int err, const char *fmt,
		  ...) __attribute__((format(printf, 5, 6)));

/* apply.c: what happens to a new name or a tree */
enum origin {
	ORIGIN_CREATE,
	ORIGIN_MOVE, /* renamed into place: a directory may bring a tree */
	ORIGIN_SCAN, /* startup or rescan */
};

/* Handle name in the open directory dirfd whose path is dirpath. */
void apply_name(struct daemon *d, const struct fsmark *fs, int dirfd, const char *dirpath,
		const char *name, enum origin o);
/* Walk every watched tree (after an overflow, at start, after reload). */
void apply_rescan(struct daemon *d, bool overflow);
void late_free(struct daemon *d);
/* Walk the realign = yes trees for misaligned files (idle time only). */
void apply_realign_scan(struct daemon *d);
/* Open an administrator's directory path, refusing symlinks in any component. */
int open_tree(const char *path, int flags);

/* watch.c */
int watch_setup(struct daemon *d);
void watch_teardown(struct daemon *d);
/* After a reload: drop the marks of filesystems no rule needs any more. */
void watch_prune(struct daemon *d);
int watch_fanotify_read(struct daemon *d);
int watch_inotify_read(struct daemon *d);
const struct fsmark *watch_find_dev(const struct daemon *d, dev_t dev);
/* inotify: watch one directory (the callers walk trees). */
int watch_inotify_add_tree(struct daemon *d, int dirfd, const char *path);

/* jobs.c: realignment of late files when idle */
int jobs_new(struct daemon *d);
void jobs_free(struct daemon *d);
void jobs_queue(struct daemon *d, size_t late_index);
/* Called from the timer: start or stop jobs per idleness. */
void jobs_tick(struct daemon *d);
/* A job's child ended (SIGCHLD via the signalfd). */
void jobs_reap(struct daemon *d);
void jobs_stop_all(struct daemon *d);
/* Is a job rewriting this file right now?  Opening it would break its lease. */
bool jobs_running_on(const struct daemon *d, struct file_id id);
/* Next time the loop must wake up for jobs, 0: no need. */
uint64_t jobs_poll_usec(const struct daemon *d);

#endif
