/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where events come from (watch.c): fanotify filesystem marks, or inotify
 * watches as the fallback.  Watch turns kernel events into "a new name in
 * this directory" and hands each to the on_name callback main wires in; it
 * knows nothing of what is done with it.
 */
#ifndef EXTALIGND_WATCH_H
#define EXTALIGND_WATCH_H

#include <fcntl.h>
#include <linux/fanotify.h>
#include <stdbool.h>
#include <sys/types.h>

#include "extalign/policy.h"
#include "fan-backlog.h"
#include "util.h"

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

enum origin {
	ORIGIN_CREATE,
	ORIGIN_MOVE, /* renamed into place: a directory may bring a tree */
	ORIGIN_SCAN, /* startup or rescan */
};

/* What watch reports: name appeared in the open directory dirfd (path dirpath). */
struct new_name {
	const struct fsmark *fs; /* NULL: on no marked filesystem */
	int dirfd;
	const char *dirpath;
	const char *name;
	enum origin origin;
	/*
	 * Not 0: the same number comes with every name in this directory for
	 * as long as watch holds it open (no directory renamed meanwhile, and
	 * at most a second), so what was found out about the directory itself
	 * holds for all of them.
	 */
	uint64_t dir_id;
};

/* The directory of the last fanotify event, by its file handle. */
struct dir_cache {
	__kernel_fsid_t fsid;
	unsigned char handle[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	size_t handle_len; /* 0: nothing held */
	int fd;
	char *path;
	uint64_t id;
	uint64_t usec; /* monotonic: when it was opened */
};

struct watch {
	const struct ea_policy *policy; /* set by main, swapped on reload */
	struct report *report;
	const char *force_watch;       /* --watch, overrides [daemon] watch */
	enum ea_watch_backend backend; /* the one in use: FANOTIFY or INOTIFY */
	int fan_fd, ino_fd;
	int proc_fd; /* /proc/self/fd, main's; -1: paths */
	struct dir_cache last_dir;
	uint64_t dir_ids;
	struct fan_backlog backlog; /* fanotify records read, not yet handled */

	struct fsmark *marks;
	size_t n_marks;
	/* Trees found read-only at the last setup: no hint can be set there. */
	size_t n_readonly;
	struct iwatch *iwatches;
	size_t n_iwatches;

	/* The queue overflowed: the trees must be walked again (main clears it). */
	bool rescan_pending;

	void (*on_name)(void *userdata, const struct new_name *n);
	void *userdata;
};

/* Start the backend on the first call, then (again on reload) mark the trees. */
int watch_setup(struct watch *w);
/* Drop every mark and watch and close the backend's descriptor. */
void watch_teardown(struct watch *w);
/* After a reload: drop the marks of filesystems no rule needs any more. */
void watch_prune(struct watch *w);
/*
 * Read what the kernel has queued into the backlog and handle a bounded
 * part of it; call it again while watch_backlog_pending().
 */
int watch_fanotify_read(struct watch *w);
bool watch_backlog_pending(const struct watch *w);
int watch_inotify_read(struct watch *w);
const struct fsmark *watch_find_dev(const struct watch *w, dev_t dev);
/* inotify: watch one directory (the callers walk trees); 0 with fanotify. */
int watch_inotify_add_tree(struct watch *w, int dirfd, const char *path);

#endif
