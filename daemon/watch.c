// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where events come from.  fanotify with a filesystem mark is the primary
 * source: one mark covers every directory of a filesystem, present and
 * future, so a new subdirectory needs no work and none of its entries can be
 * missed while a watch is being added.  inotify is the fallback (no
 * CAP_SYS_ADMIN, or a filesystem fanotify cannot mark): one watch per
 * directory, added as directories appear, with a scan of each new directory
 * for what was made in it before its watch existed.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <time.h>

#include "watch.h"
#include "message-ids.h"
#include "event.h"
#include "extalign/fsinfo.h"
#include "extalign/macro.h"

#define FAN_EVENTS (FAN_CREATE | FAN_MOVED_TO | FAN_ONDIR)
#define IN_EVENTS  (IN_CREATE | IN_MOVED_TO | IN_EXCL_UNLINK)
/* inotify: reads of up to 64 KiB per wake-up (a few thousand events). */
#define READ_BURST 8
/*
 * fanotify: records handled between two reads of the kernel's queue, and
 * batches per wake-up.  A batch of 128 new files takes a few milliseconds,
 * in which no writer makes anywhere near the queue's 16384 events.
 */
#define FAN_BATCH   128
#define FAN_BATCHES 64
/* How long an event's directory and its path are kept at most. */
#define DIR_CACHE_USEC 1000000ULL

const struct fsmark *watch_find_dev(const struct watch *w, dev_t dev)
{
	for (size_t i = 0; i < w->n_marks; i++)
		if (w->marks[i].dev == dev)
			return &w->marks[i];
	return NULL;
}

static struct fsmark *find_fsid(struct watch *w, const __kernel_fsid_t *fsid)
{
	for (size_t i = 0; i < w->n_marks; i++)
		if (!memcmp(&w->marks[i].fsid, fsid, sizeof(*fsid)))
			return &w->marks[i];
	return NULL;
}

/* Hand a name to whoever main wired in; watch itself decides nothing. */
static void new_name(struct watch *w, const struct fsmark *fs, int dirfd, const char *dirpath,
		     const char *name, enum origin o, uint64_t dir_id)
{
	const struct new_name n = { fs, dirfd, dirpath, name, o, dir_id };

	w->on_name(w->userdata, &n);
}

/* Open path, or its nearest existing ancestor when it does not exist yet. */
static int open_existing(const char *path, char **found)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (;;) {
		int fd = open_tree(p, O_RDONLY);
		char *slash;

		if (fd >= 0 || fd != -ENOENT) {
			if (fd >= 0)
				*found = TAKE_PTR(p);
			return fd;
		}
		slash = strrchr(p, '/');
		if (!slash)
			return -ENOENT;
		if (slash == p)
			slash[1] = 0;
		else
			*slash = 0;
	}
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static void fsmark_free(struct fsmark *m)
{
	if (m->fd >= 0)
		close(m->fd);
	free(m->path);
	free(m->fstype);
}

/*
 * inotify: watch a directory on the way to a tree, then look at what is in
 * it already, since a "mkdir -p" may have gone further before the watch was
 * there: directories further on the way are watched the same way, a tree
 * that appeared is handled like a new directory.
 */
static void watch_above(struct watch *w, int dirfd, const char *path)
{
	_cleanup_(closedirp) DIR *dir = NULL;
	struct dirent *de;
	int fd;

	if (watch_inotify_add_tree(w, dirfd, path) < 0)
		return;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((de = readdir(dir))) {
		_cleanup_free_ char *sub = NULL;
		int cover;

		if (de->d_type != DT_DIR || child_path(path, de->d_name, &sub) < 0)
			continue;
		cover = ea_policy_dir_cover(w->policy, sub);
		if (cover == EA_DIR_ABOVE) {
			_cleanup_close_ int sfd = openat(
				dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sfd >= 0)
				watch_above(w, sfd, sub);
		} else if (cover == EA_DIR_INSIDE) {
			struct stat st;

			if (fstat(dirfd, &st) == 0)
				new_name(w, watch_find_dev(w, st.st_dev), dirfd, path, de->d_name,
					 ORIGIN_CREATE, 0);
		}
	}
}

static int mark_filesystem(struct watch *w, const char *tree)
{
	_cleanup_free_ char *where = NULL;
	_cleanup_close_ int fd = -1;
	struct ea_fsinfo info;
	struct statfs sfs;
	struct statvfs vfs;
	struct fsmark *v, *m;
	int r;

	fd = open_existing(tree, &where);
	if (fd < 0) {
		report_error(w->report, EA_STAT_FAIL_WATCH, NULL, 0, tree, fd,
			     "cannot open the tree to watch");
		return fd;
	}
	r = ea_fsinfo_from_fd(fd, &info);
	if (r < 0 || fstatfs(fd, &sfs) < 0)
		return r < 0 ? r : negative_errno();
	/* Hints are ioctls that need a writable mount: under the unit's
	 * ProtectSystem=strict a tree is writable only when extalign-generator
	 * listed it, at the last boot or daemon-reload, not a rule added by a
	 * reload of the daemon alone. */
	if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) {
		w->n_readonly++;
		log_id(&w->report->log, MSGID_HINT_FAILED, LOG_WARNING, NULL, where, -EROFS,
		       "read-only here, no hint can be set; under systemd, \"systemctl "
		       "daemon-reload && systemctl restart extalignd\" makes the rules' trees "
		       "writable");
	}
	/* A tree that does not exist yet: inotify watches the nearest
	 * ancestor so that its creation is seen. */
	if (w->backend == EA_WATCH_INOTIFY && strcmp(where, tree))
		watch_above(w, fd, where);
	if (watch_find_dev(w, info.dev))
		return 0; /* one mark per filesystem covers every tree on it */

	if (w->backend == EA_WATCH_FANOTIFY &&
	    fanotify_mark(w->fan_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_EVENTS, fd, NULL) <
		    0) {
		r = negative_errno();
		report_error(w->report, EA_STAT_FAIL_WATCH, NULL, info.dev, where, r,
			     "cannot place a fanotify filesystem mark");
		return r;
	}
	v = realloc(w->marks, (w->n_marks + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	w->marks = v;
	m = &v[w->n_marks++];
	*m = (struct fsmark){
		.dev = info.dev,
		.fd = TAKE_FD(fd),
		.path = TAKE_PTR(where),
		.fstype = strdup(info.type),
		.how = w->backend == EA_WATCH_FANOTIFY ? "fanotify-filesystem" : "inotify",
		.marked = w->backend == EA_WATCH_FANOTIFY,
	};
	memcpy(&m->fsid, &sfs.f_fsid, sizeof(m->fsid));
	log_full(&w->report->log, LOG_INFO, NULL, m->path, 0, "watching %s filesystem with %s",
		 m->fstype ? m->fstype : "?", m->how);
	return m->fstype ? 0 : -ENOMEM;
}

static void dir_forget(struct watch *w)
{
	struct dir_cache *c = &w->last_dir;

	closep(&c->fd);
	free(c->path);
	c->path = NULL;
	c->handle_len = 0;
}

static int backend_init(struct watch *w, enum ea_watch_backend want)
{
	if (want != EA_WATCH_INOTIFY) {
		w->fan_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
						  FAN_REPORT_DFID_NAME,
					  O_RDONLY | O_LARGEFILE | O_CLOEXEC);
		if (w->fan_fd >= 0) {
			w->backend = EA_WATCH_FANOTIFY;
			return 0;
		}
		if (want == EA_WATCH_FANOTIFY)
			return negative_errno();
		log_full(&w->report->log, LOG_NOTICE, NULL, NULL, negative_errno(),
			 "fanotify unavailable, falling back to inotify");
	}
	w->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino_fd < 0)
		return negative_errno();
	w->backend = EA_WATCH_INOTIFY;
	return 0;
}

int watch_setup(struct watch *w)
{
	dir_forget(w); /* a reload: marks and rules may change */
	enum ea_watch_backend want = w->policy->daemon.watch;
	int r = 0;

	if (w->force_watch)
		want = !strcmp(w->force_watch, "inotify")    ? EA_WATCH_INOTIFY
		       : !strcmp(w->force_watch, "fanotify") ? EA_WATCH_FANOTIFY
							     : EA_WATCH_AUTO;
	if (w->fan_fd < 0 && w->ino_fd < 0) {
		r = backend_init(w, want);
		if (r < 0) {
			log_id(&w->report->log, MSGID_WATCH_FAILED, LOG_ERR, NULL, NULL, r,
			       "cannot start watching");
			return r;
		}
	}
	w->n_readonly = 0;
	for (size_t i = 0; i < w->policy->n_watch; i++) {
		int q = mark_filesystem(w, w->policy->watch[i].path);

		/* A tree on a filesystem fanotify refuses (no fsid, FUSE ...)
		 * stays unwatched; the error names it.  Others go on. */
		if (q < 0 && !r)
			r = q;
	}
	return r;
}

/* Drop marks of filesystems no rule needs any more (after a reload). */
void watch_prune(struct watch *w)
{
	size_t keep = 0;

	for (size_t i = 0; i < w->n_marks; i++) {
		struct fsmark *m = &w->marks[i];
		bool needed = false;

		for (size_t j = 0; j < w->policy->n_watch && !needed; j++) {
			_cleanup_free_ char *where = NULL;
			_cleanup_close_ int fd = open_existing(w->policy->watch[j].path, &where);
			struct stat st;

			needed = fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == m->dev;
		}
		if (needed) {
			w->marks[keep++] = *m;
			continue;
		}
		if (m->marked)
			fanotify_mark(w->fan_fd, FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM, FAN_EVENTS,
				      m->fd, NULL);
		log_full(&w->report->log, LOG_INFO, NULL, m->path, 0,
			 "no rule left here, not watching");
		fsmark_free(m);
	}
	w->n_marks = keep;
}

void watch_teardown(struct watch *w)
{
	dir_forget(w);
	for (size_t i = 0; i < w->n_marks; i++)
		fsmark_free(&w->marks[i]);
	free(w->marks);
	w->marks = NULL;
	w->n_marks = 0;
	for (size_t i = 0; i < w->n_iwatches; i++) {
		close(w->iwatches[i].fd);
		free(w->iwatches[i].path);
	}
	free(w->iwatches);
	w->iwatches = NULL;
	w->n_iwatches = 0;
	fan_backlog_free(&w->backlog);
	/* Opened by backend_init(); proc_fd belongs to main, which opened it. */
	closep(&w->fan_fd);
	closep(&w->ino_fd);
}

static void overflow(struct watch *w)
{
	report_count(w->report, EA_CNT_OVERFLOWS);
	w->rescan_pending = true;
	log_id(&w->report->log, MSGID_QUEUE_OVERFLOW, LOG_WARNING, NULL, NULL, 0,
	       "event queue overflow: rescanning the watched trees");
}

static size_t handle_len(const struct file_handle *h)
{
	return sizeof(*h) + h->handle_bytes;
}

/*
 * The directory of an event, open (O_PATH) and with its path.  A storm is
 * thousands of names in one directory, and so is a program making files
 * one after the other: the directory of the event before is kept, so each
 * of them costs no open_by_handle_at() and no readlink().  Events come in
 * the order things happened, so a rename of any directory (which may change
 * the path) is seen before the names made after it, and drops what is kept;
 * so does an overflow.  Mounts change paths without an event: what is kept
 * is also dropped when it is older than DIR_CACHE_USEC.
 */
static int event_dir(struct watch *w, struct fsmark *fs, const struct fan_event *ev,
		     const struct dir_cache **ret)
{
	struct dir_cache *c = &w->last_dir;
	size_t len = handle_len(ev->dir);
	_cleanup_close_ int fd = -1;
	char *path = NULL;
	int r;

	if (c->handle_len == len && !memcmp(&c->fsid, &ev->fsid, sizeof(c->fsid)) &&
	    !memcmp(c->handle, ev->dir, len)) {
		*ret = c;
		return 0;
	}
	/* The cast drops const: the kernel only reads the handle. */
	fd = open_by_handle_at(fs->fd, (struct file_handle *)ev->dir,
			       O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	r = fd_path(w->proc_fd, fd, &path);
	if (r < 0)
		return r;
	dir_forget(w);
	c->fd = TAKE_FD(fd);
	c->path = path;
	c->id = ++w->dir_ids;
	c->usec = now_usec(CLOCK_MONOTONIC);
	c->fsid = ev->fsid;
	if (len <= sizeof(c->handle)) {
		memcpy(c->handle, ev->dir, len);
		c->handle_len = len;
	}
	*ret = c;
	return 0;
}

static void fan_one(struct watch *w, const struct fan_event *ev)
{
	const struct dir_cache *dir;
	struct fsmark *fs;
	int r;

	w->report->counters[EA_CNT_EVENTS]++;
	if (ev->mask & FAN_Q_OVERFLOW) {
		dir_forget(w);
		overflow(w);
		return;
	}
	/* A directory renamed: the paths below it are not what they were. */
	if ((ev->mask & (FAN_MOVED_TO | FAN_ONDIR)) == (FAN_MOVED_TO | FAN_ONDIR))
		dir_forget(w);
	if (!ev->dir || !ev->name)
		return;
	fs = find_fsid(w, &ev->fsid);
	if (!fs)
		return; /* a mark removed by a reload, events still queued */
	r = event_dir(w, fs, ev, &dir);
	if (r < 0) {
		if (r != -ESTALE && r != -ENOENT) /* the directory is gone already */
			report_error(w->report, EA_STAT_FAIL_IO, NULL, fs->dev, fs->path, r,
				     "cannot open an event's directory by handle");
		return;
	}
	new_name(w, fs, dir->fd, dir->path, ev->name,
		 ev->mask & FAN_MOVED_TO ? ORIGIN_MOVE : ORIGIN_CREATE,
		 dir->handle_len ? dir->id : 0);
}

/* Up to FAN_BATCH records from the front of the backlog. */
static void fan_batch(struct watch *w)
{
	struct fan_event ev;
	const void *p;
	size_t len, left;
	int r = 0;

	fan_backlog_peek(&w->backlog, &p, &len);
	if (w->last_dir.path && now_usec(CLOCK_MONOTONIC) - w->last_dir.usec > DIR_CACHE_USEC)
		dir_forget(w);
	left = len;
	for (int k = 0; k < FAN_BATCH && (r = fan_event_next(&p, &left, &ev)) > 0; k++)
		fan_one(w, &ev);
	if (r < 0) {
		/* Cannot happen with a sane kernel; recover what we lost. */
		report_log(w->report, LOG_ERR, "malformed fanotify record, rescanning");
		overflow(w);
		left = 0;
	}
	fan_backlog_consumed(&w->backlog, len - left);
}

int watch_fanotify_read(struct watch *w)
{
	for (int batch = 0; batch < FAN_BATCHES; batch++) {
		int r = fan_backlog_fill(&w->backlog, w->fan_fd);

		if (r < 0)
			return r;
		if (!watch_backlog_pending(w))
			break;
		fan_batch(w);
		/* All handled: epoll says when there is more (level-triggered),
		 * so a lone event costs no read that finds nothing. */
		if (!watch_backlog_pending(w))
			break;
	}
	return 0;
}

bool watch_backlog_pending(const struct watch *w)
{
	return w->backlog.tail > w->backlog.head;
}

/* ---- inotify -------------------------------------------------------------- */

static struct iwatch *find_wd(struct watch *w, int wd)
{
	for (size_t i = 0; i < w->n_iwatches; i++)
		if (w->iwatches[i].wd == wd)
			return &w->iwatches[i];
	return NULL;
}

int watch_inotify_add_tree(struct watch *w, int dirfd, const char *path)
{
	char proc[64];
	struct iwatch *v, *iw;
	int wd, fd;

	if (w->ino_fd < 0)
		return 0;
	/* Through the fd's magic link: the inode we hold, not a name again. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
	wd = inotify_add_watch(w->ino_fd, proc, IN_EVENTS | IN_ONLYDIR);
	if (wd < 0) {
		int r = negative_errno();

		report_error(w->report, EA_STAT_FAIL_WATCH, NULL, 0, path, r,
			     r == -ENOSPC
				     ? "inotify watch limit reached (fs.inotify.max_user_watches)"
				     : "cannot add an inotify watch");
		return r;
	}
	if (find_wd(w, wd))
		return 0; /* the same inode again */
	fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return negative_errno();
	v = realloc(w->iwatches, (w->n_iwatches + 1) * sizeof(*v));
	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	w->iwatches = v;
	iw = &v[w->n_iwatches++];
	*iw = (struct iwatch){ .wd = wd, .fd = fd, .path = strdup(path) };
	return 0;
}

static void iwatch_drop(struct watch *w, struct iwatch *iw)
{
	close(iw->fd);
	free(iw->path);
	*iw = w->iwatches[--w->n_iwatches];
}

static void ino_one(struct watch *w, const struct inotify_event *ev)
{
	_cleanup_free_ char *dirpath = NULL, *path = NULL;
	const struct fsmark *fs;
	struct iwatch *iw;
	struct stat st;

	w->report->counters[EA_CNT_EVENTS]++;
	if (ev->mask & IN_Q_OVERFLOW) {
		overflow(w);
		return;
	}
	iw = find_wd(w, ev->wd);
	if (!iw)
		return;
	if (ev->mask & IN_IGNORED) {
		iwatch_drop(w, iw);
		return;
	}
	if (!ev->len || fd_path(w->proc_fd, iw->fd, &dirpath) < 0 || fstat(iw->fd, &st) < 0)
		return;
	fs = watch_find_dev(w, st.st_dev);
	/* A directory on the way to a tree that does not exist yet: watch it
	 * (those inside a tree are the consumer's to watch and scan). */
	if ((ev->mask & IN_ISDIR) && child_path(dirpath, ev->name, &path) == 0 &&
	    ea_policy_dir_cover(w->policy, path) == EA_DIR_ABOVE) {
		_cleanup_close_ int fd =
			openat(iw->fd, ev->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd >= 0)
			watch_above(w, fd, path);
	}
	new_name(w, fs, iw->fd, dirpath, ev->name,
		 ev->mask & IN_MOVED_TO ? ORIGIN_MOVE : ORIGIN_CREATE, 0);
}

/* The records of one read from the inotify descriptor. */
static void ino_records(struct watch *w, const unsigned char *buf, size_t len)
{
	for (size_t off = 0; off + sizeof(struct inotify_event) <= len;) {
		const struct inotify_event *ev = (const void *)(buf + off);

		off += sizeof(*ev) + ev->len;
		if (off > len)
			break;
		ino_one(w, ev);
	}
}

/*
 * A bounded burst of reads, then back to epoll (level-triggered, so the
 * rest comes next round): a storm must not delay SIGTERM or the watchdog.
 */
int watch_inotify_read(struct watch *w)
{
	_Alignas(struct inotify_event) unsigned char buf[65536];

	for (int burst = 0; burst < READ_BURST; burst++) {
		ssize_t n = read(w->ino_fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EAGAIN)
				return 0;
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		ino_records(w, buf, (size_t)n);
	}
	return 0;
}
