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
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <syslog.h>

#include "extalignd.h"
#include "extalign/fsinfo.h"
#include "extalign/macro.h"

#define FAN_EVENTS (FAN_CREATE | FAN_MOVED_TO | FAN_ONDIR)
#define IN_EVENTS  (IN_CREATE | IN_MOVED_TO | IN_EXCL_UNLINK)
/* Reads of up to 64 KiB per wake-up (a few thousand events). */
#define READ_BURST 8

const struct fsmark *watch_find_dev(const struct daemon *d, dev_t dev)
{
	for (size_t i = 0; i < d->n_marks; i++)
		if (d->marks[i].dev == dev)
			return &d->marks[i];
	return NULL;
}

static struct fsmark *find_fsid(struct daemon *d, const __kernel_fsid_t *fsid)
{
	for (size_t i = 0; i < d->n_marks; i++)
		if (!memcmp(&d->marks[i].fsid, fsid, sizeof(*fsid)))
			return &d->marks[i];
	return NULL;
}

/* The directory path an fd has now, as this mount namespace sees it. */
static int fd_path(int fd, char **ret)
{
	char proc[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n < 0)
		return negative_errno();
	buf[n] = 0;
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
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
static void watch_above(struct daemon *d, int dirfd, const char *path)
{
	_cleanup_(closedirp) DIR *dir = NULL;
	struct dirent *de;
	int fd;

	if (watch_inotify_add_tree(d, dirfd, path) < 0)
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
		cover = ea_policy_dir_cover(d->policy, sub);
		if (cover == EA_DIR_ABOVE) {
			_cleanup_close_ int sfd = openat(
				dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sfd >= 0)
				watch_above(d, sfd, sub);
		} else if (cover == EA_DIR_INSIDE) {
			struct stat st;

			if (fstat(dirfd, &st) == 0)
				apply_name(d, watch_find_dev(d, st.st_dev), dirfd, path, de->d_name,
					   ORIGIN_CREATE);
		}
	}
}

static int mark_filesystem(struct daemon *d, const char *tree)
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
		daemon_error(d, NULL, tree, fd, "cannot open the tree to watch");
		return fd;
	}
	r = ea_fsinfo_from_fd(fd, &info);
	if (r < 0 || fstatfs(fd, &sfs) < 0)
		return r < 0 ? r : negative_errno();
	/* Hints are ioctls that need a writable mount: under the unit's
	 * ProtectSystem=strict a tree missing from ReadWritePaths= is not. */
	if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
		log_full(&d->log, LOG_WARNING, NULL, where, -EROFS,
			 "read-only here, no hint can be set (ReadWritePaths= of the unit?)");
	/* A tree that does not exist yet: inotify watches the nearest
	 * ancestor so that its creation is seen. */
	if (d->backend == EA_WATCH_INOTIFY && strcmp(where, tree))
		watch_above(d, fd, where);
	if (watch_find_dev(d, info.dev))
		return 0; /* one mark per filesystem covers every tree on it */

	if (d->backend == EA_WATCH_FANOTIFY &&
	    fanotify_mark(d->fan_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_EVENTS, fd, NULL) <
		    0) {
		r = negative_errno();
		daemon_error(d, NULL, where, r, "cannot place a fanotify filesystem mark");
		return r;
	}
	v = realloc(d->marks, (d->n_marks + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	d->marks = v;
	m = &v[d->n_marks++];
	*m = (struct fsmark){
		.dev = info.dev,
		.fd = TAKE_FD(fd),
		.path = TAKE_PTR(where),
		.fstype = strdup(info.type),
		.how = d->backend == EA_WATCH_FANOTIFY ? "fanotify-filesystem" : "inotify",
		.marked = d->backend == EA_WATCH_FANOTIFY,
	};
	memcpy(&m->fsid, &sfs.f_fsid, sizeof(m->fsid));
	log_full(&d->log, LOG_INFO, NULL, m->path, 0, "watching %s filesystem with %s",
		 m->fstype ? m->fstype : "?", m->how);
	return m->fstype ? 0 : -ENOMEM;
}

static int backend_init(struct daemon *d, enum ea_watch_backend want)
{
	if (want != EA_WATCH_INOTIFY) {
		d->fan_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
						  FAN_REPORT_DFID_NAME,
					  O_RDONLY | O_LARGEFILE | O_CLOEXEC);
		if (d->fan_fd >= 0) {
			d->backend = EA_WATCH_FANOTIFY;
			return 0;
		}
		if (want == EA_WATCH_FANOTIFY)
			return negative_errno();
		log_full(&d->log, LOG_NOTICE, NULL, NULL, negative_errno(),
			 "fanotify unavailable, falling back to inotify");
	}
	d->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->ino_fd < 0)
		return negative_errno();
	d->backend = EA_WATCH_INOTIFY;
	return 0;
}

int watch_setup(struct daemon *d)
{
	enum ea_watch_backend want = d->policy->daemon.watch;
	int r = 0;

	if (d->force_watch)
		want = !strcmp(d->force_watch, "inotify")    ? EA_WATCH_INOTIFY
		       : !strcmp(d->force_watch, "fanotify") ? EA_WATCH_FANOTIFY
							     : EA_WATCH_AUTO;
	if (d->fan_fd < 0 && d->ino_fd < 0) {
		r = backend_init(d, want);
		if (r < 0) {
			log_full(&d->log, LOG_ERR, NULL, NULL, r, "cannot start watching");
			return r;
		}
	}
	for (size_t i = 0; i < d->policy->n_watch; i++) {
		int q = mark_filesystem(d, d->policy->watch[i].path);

		/* A tree on a filesystem fanotify refuses (no fsid, FUSE ...)
		 * stays unwatched; the error names it.  Others go on. */
		if (q < 0 && !r)
			r = q;
	}
	return r;
}

/* Drop marks of filesystems no rule needs any more (after a reload). */
void watch_prune(struct daemon *d)
{
	size_t keep = 0;

	for (size_t i = 0; i < d->n_marks; i++) {
		struct fsmark *m = &d->marks[i];
		bool needed = false;

		for (size_t j = 0; j < d->policy->n_watch && !needed; j++) {
			_cleanup_free_ char *where = NULL;
			_cleanup_close_ int fd = open_existing(d->policy->watch[j].path, &where);
			struct stat st;

			needed = fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == m->dev;
		}
		if (needed) {
			d->marks[keep++] = *m;
			continue;
		}
		if (m->marked)
			fanotify_mark(d->fan_fd, FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM, FAN_EVENTS,
				      m->fd, NULL);
		log_full(&d->log, LOG_INFO, NULL, m->path, 0, "no rule left here, not watching");
		fsmark_free(m);
	}
	d->n_marks = keep;
}

void watch_teardown(struct daemon *d)
{
	for (size_t i = 0; i < d->n_marks; i++)
		fsmark_free(&d->marks[i]);
	free(d->marks);
	d->marks = NULL;
	d->n_marks = 0;
	for (size_t i = 0; i < d->n_iwatches; i++) {
		close(d->iwatches[i].fd);
		free(d->iwatches[i].path);
	}
	free(d->iwatches);
	d->iwatches = NULL;
	d->n_iwatches = 0;
}

static void overflow(struct daemon *d)
{
	d->counters[EA_CNT_OVERFLOWS]++;
	d->rescan_pending = true;
	d->state_dirty = true;
	log_msg(d, LOG_WARNING, "event queue overflow: rescanning the watched trees");
}

static void fan_one(struct daemon *d, const struct fan_event *ev)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ char *dirpath = NULL;
	struct fsmark *fs;
	int r;

	d->counters[EA_CNT_EVENTS]++;
	if (ev->mask & FAN_Q_OVERFLOW) {
		overflow(d);
		return;
	}
	if (!ev->dir || !ev->name)
		return;
	fs = find_fsid(d, &ev->fsid);
	if (!fs)
		return; /* a mark removed by a reload, events still queued */
	/* The cast drops const: the kernel only reads the handle. */
	dirfd = open_by_handle_at(fs->fd, (struct file_handle *)ev->dir,
				  O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		if (errno != ESTALE && errno != ENOENT) /* the directory is gone already */
			daemon_error(d, NULL, fs->path, negative_errno(),
				     "cannot open an event's directory by handle");
		return;
	}
	r = fd_path(dirfd, &dirpath);
	if (r < 0)
		return;
	apply_name(d, fs, dirfd, dirpath, ev->name,
		   ev->mask & FAN_MOVED_TO ? ORIGIN_MOVE : ORIGIN_CREATE);
}

int watch_fanotify_read(struct daemon *d)
{
	/* Aligned for the metadata structs the records start with. */
	_Alignas(struct fanotify_event_metadata) unsigned char buf[65536];

	/* A bounded burst, then back to epoll (level-triggered, so the rest
	 * comes next round): a storm must not delay SIGTERM or the watchdog. */
	for (int burst = 0; burst < READ_BURST; burst++) {
		ssize_t n = read(d->fan_fd, buf, sizeof(buf));
		const void *p = buf;
		size_t len;
		struct fan_event ev;
		int r;

		if (n < 0) {
			if (errno == EAGAIN)
				return 0;
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		len = (size_t)n;
		while ((r = fan_event_next(&p, &len, &ev)) > 0)
			fan_one(d, &ev);
		if (r < 0) {
			/* Cannot happen with a sane kernel; recover what we lost. */
			log_msg(d, LOG_ERR, "malformed fanotify record, rescanning");
			overflow(d);
		}
	}
	return 0;
}

/* ---- inotify -------------------------------------------------------------- */

static struct iwatch *find_wd(struct daemon *d, int wd)
{
	for (size_t i = 0; i < d->n_iwatches; i++)
		if (d->iwatches[i].wd == wd)
			return &d->iwatches[i];
	return NULL;
}

int watch_inotify_add_tree(struct daemon *d, int dirfd, const char *path)
{
	char proc[64];
	struct iwatch *v, *w;
	int wd, fd;

	if (d->ino_fd < 0)
		return 0;
	/* Through the fd's magic link: the inode we hold, not a name again. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
	wd = inotify_add_watch(d->ino_fd, proc, IN_EVENTS | IN_ONLYDIR);
	if (wd < 0) {
		int r = negative_errno();

		daemon_error(d, NULL, path, r,
			     r == -ENOSPC
				     ? "inotify watch limit reached (fs.inotify.max_user_watches)"
				     : "cannot add an inotify watch");
		return r;
	}
	if (find_wd(d, wd))
		return 0; /* the same inode again */
	fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return negative_errno();
	v = realloc(d->iwatches, (d->n_iwatches + 1) * sizeof(*v));
	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	d->iwatches = v;
	w = &v[d->n_iwatches++];
	*w = (struct iwatch){ .wd = wd, .fd = fd, .path = strdup(path) };
	return 0;
}

static void iwatch_drop(struct daemon *d, struct iwatch *w)
{
	close(w->fd);
	free(w->path);
	*w = d->iwatches[--d->n_iwatches];
}

static void ino_one(struct daemon *d, const struct inotify_event *ev)
{
	_cleanup_free_ char *dirpath = NULL, *path = NULL;
	const struct fsmark *fs;
	struct iwatch *w;
	struct stat st;

	d->counters[EA_CNT_EVENTS]++;
	if (ev->mask & IN_Q_OVERFLOW) {
		overflow(d);
		return;
	}
	w = find_wd(d, ev->wd);
	if (!w)
		return;
	if (ev->mask & IN_IGNORED) {
		iwatch_drop(d, w);
		return;
	}
	if (!ev->len || fd_path(w->fd, &dirpath) < 0 || fstat(w->fd, &st) < 0)
		return;
	fs = watch_find_dev(d, st.st_dev);
	/* A directory on the way to a tree that does not exist yet: watch it
	 * (apply_name watches and scans those inside a tree itself). */
	if ((ev->mask & IN_ISDIR) && child_path(dirpath, ev->name, &path) == 0 &&
	    ea_policy_dir_cover(d->policy, path) == EA_DIR_ABOVE) {
		_cleanup_close_ int fd =
			openat(w->fd, ev->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd >= 0)
			watch_above(d, fd, path);
	}
	apply_name(d, fs, w->fd, dirpath, ev->name,
		   ev->mask & IN_MOVED_TO ? ORIGIN_MOVE : ORIGIN_CREATE);
}

int watch_inotify_read(struct daemon *d)
{
	_Alignas(struct inotify_event) unsigned char buf[65536];

	for (int burst = 0; burst < READ_BURST; burst++) {
		ssize_t n = read(d->ino_fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EAGAIN)
				return 0;
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *ev = (const void *)(buf + off);

			off += (ssize_t)sizeof(*ev) + ev->len;
			if (off > n)
				break;
			ino_one(d, ev);
		}
	}
	return 0;
}
