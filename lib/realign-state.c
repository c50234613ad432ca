// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Leftovers.  The rename path gives the finished copy a name before it
 * takes the original's; a kill between the two leaves that name behind.
 * Before linking, a record named like the leftover is written to the state
 * directory with the directory's absolute path and kept flock()ed while
 * the job runs, so a later start can find and remove exactly what a dead
 * job left and never touch what a live one is using.  Records that keep a
 * stopped copy for resuming (realign-resume.c) stay while their original
 * is unchanged.  Either file the
 * leftover name can hold at a crash (the complete copy before the
 * exchange, the old inode after it) is redundant, so removing it is
 * always right.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "realign-internal.h"

static const char *state_dir_or_default(const char *d)
{
	return d && *d ? d : EA_REALIGN_STATE_DIR;
}

/* mkdir -p, mode 0700 for what we create. */
static int mkdir_parents(const char *path)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = 0;
			if (mkdir(p, 0700) < 0 && errno != EEXIST)
				return negative_errno();
			*s = c;
			if (!c)
				break;
		}
	}
	return 0;
}

static int dir_path(int dirfd, char **ret)
{
	char link[64];
	char *buf = malloc(PATH_MAX);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
	n = readlink(link, buf, PATH_MAX - 1);
	if (n < 0) {
		free(buf);
		return negative_errno();
	}
	buf[n] = 0;
	*ret = buf;
	return 0;
}

int rl_record_create(const char *state_dir, int dirfd, const char *name, struct rl_record *r)
{
	_cleanup_free_ char *dir = NULL;
	const char *sd = state_dir_or_default(state_dir);
	size_t len;
	int ret;

	*r = (struct rl_record){ .fd = -1, .sdir = -1 };
	ret = mkdir_parents(sd);
	if (ret < 0)
		return ret;
	ret = dir_path(dirfd, &dir);
	if (ret < 0)
		return ret;
	r->sdir = open(sd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->sdir < 0)
		return negative_errno();
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->fd = openat(r->sdir, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r->fd < 0) {
		ret = negative_errno();
		goto fail;
	}
	if (flock(r->fd, LOCK_EX) < 0) {
		ret = negative_errno();
		goto fail_unlink;
	}
	len = strlen(dir);
	errno = 0;
	if (write(r->fd, dir, len) != (ssize_t)len || fsync(r->fd) < 0 || fsync(r->sdir) < 0) {
		/* A short write without an error is a full filesystem. */
		ret = errno ? negative_errno() : -ENOSPC;
		goto fail_unlink;
	}
	return 0;

fail_unlink:
	unlinkat(r->sdir, name, 0);
fail:
	closep(&r->fd);
	closep(&r->sdir);
	r->fd = r->sdir = -1;
	return ret;
}

void rl_record_remove(struct rl_record *r)
{
	if (r->sdir >= 0 && r->fd >= 0)
		unlinkat(r->sdir, r->name, 0);
	closep(&r->fd);
	closep(&r->sdir);
	r->fd = r->sdir = -1;
}

/* Open and lock the record for name; -EBUSY while its job still runs. */
static int record_take(int sdir, const char *name)
{
	int fd = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return negative_errno();
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = errno == EWOULDBLOCK ? -EBUSY : negative_errno();

		close(fd);
		return r;
	}
	return fd;
}

/* Unlink name in dirfd if it is a regular file with a leftover name. */
static int remove_leftover(int dirfd, const char *name)
{
	struct stat st;

	if (!ea_realign_leftover_parse(name, NULL))
		return 0;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : negative_errno();
	if (!S_ISREG(st.st_mode))
		return 0;
	if (unlinkat(dirfd, name, 0) < 0)
		return errno == ENOENT ? 0 : negative_errno();
	fsync(dirfd);
	return 1;
}

int ea_realign_cleanup(const char *state_dir, unsigned *removed)
{
	const char *sd = state_dir_or_default(state_dir);
	DIR *d;
	struct dirent *de;
	int sdir, ret = 0;

	*removed = 0;
	d = opendir(sd);
	if (!d)
		return errno == ENOENT ? 0 : negative_errno();
	sdir = dirfd(d);
	while ((de = readdir(d))) {
		_cleanup_close_ int rec = -1, dir = -1;
		char path[PATH_MAX];
		ssize_t n;
		int r;

		if (!ea_realign_leftover_parse(de->d_name, NULL))
			continue;
		rec = record_take(sdir, de->d_name);
		if (rec < 0) {
			if (rec != -EBUSY && rec != -ENOENT && !ret)
				ret = rec;
			continue;
		}
		n = pread(rec, path, sizeof(path) - 1, 0);
		/* A stopped copy kept for its unchanged original: not a leftover. */
		if (n > 0 && rl_resume_valid(rec, path, (size_t)n))
			continue;
		if (n > 0) {
			path[n] = 0;
			path[strcspn(path, "\n")] = 0;
			dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			/* A directory that is gone took its leftover with it. */
			if (dir < 0 && errno != ENOENT && errno != ENOTDIR) {
				if (!ret)
					ret = negative_errno();
				continue;
			}
		}
		if (dir >= 0) {
			r = remove_leftover(dir, de->d_name);
			if (r < 0) {
				if (!ret)
					ret = r;
				continue;
			}
			*removed += (unsigned)r;
		}
		if (unlinkat(sdir, de->d_name, 0) < 0 && errno != ENOENT && !ret)
			ret = negative_errno();
	}
	closedir(d);
	return ret;
}

int ea_realign_cleanup_name(int dirfd, const char *name, const char *state_dir)
{
	_cleanup_close_ int sdir = -1, rec = -1;
	int r;

	if (!ea_realign_leftover_parse(name, NULL))
		return 0;
	sdir = open(state_dir_or_default(state_dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sdir >= 0) {
		char buf[PATH_MAX];
		ssize_t n;

		rec = record_take(sdir, name);
		if (rec == -EBUSY)
			return 0; /* a running job's: leave it */
		/* A stopped copy kept to resume: the next run over its file goes on. */
		if (rec >= 0 && (n = pread(rec, buf, sizeof(buf), 0)) > 0 &&
		    rl_resume_valid(rec, buf, (size_t)n))
			return 0;
	}
	r = remove_leftover(dirfd, name);
	if (r >= 0 && rec >= 0)
		unlinkat(sdir, name, 0);
	return r;
}
