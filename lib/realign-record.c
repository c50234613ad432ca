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

const char *rl_state_dir(const char *d)
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

int rl_record_dir_path(int dirfd, char **ret)
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

int rl_record_open(const char *state_dir, const char *name, struct rl_record *r)
{
	const char *sd = rl_state_dir(state_dir);
	int ret;

	*r = (struct rl_record){ .fd = -1, .sdir = -1 };
	ret = mkdir_parents(sd);
	if (ret < 0)
		return ret;
	r->sdir = open(sd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->sdir < 0)
		return negative_errno();
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->fd = openat(r->sdir, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r->fd < 0) {
		ret = negative_errno();
		closep(&r->sdir);
		r->sdir = -1;
		return ret;
	}
	if (flock(r->fd, LOCK_EX) < 0) {
		ret = negative_errno();
		rl_record_remove(r);
		return ret;
	}
	return 0;
}

int rl_record_create(const char *state_dir, int dirfd, const char *name, struct rl_record *r)
{
	_cleanup_free_ char *dir = NULL;
	size_t len;
	int ret;

	*r = (struct rl_record){ .fd = -1, .sdir = -1 };
	ret = rl_record_dir_path(dirfd, &dir);
	if (ret < 0)
		return ret;
	ret = rl_record_open(state_dir, name, r);
	if (ret < 0)
		return ret;
	len = strlen(dir);
	errno = 0;
	if (write(r->fd, dir, len) != (ssize_t)len || fsync(r->fd) < 0 || fsync(r->sdir) < 0) {
		/* A short write without an error is a full filesystem. */
		ret = errno ? negative_errno() : -ENOSPC;
		rl_record_remove(r);
		return ret;
	}
	return 0;
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
int rl_record_take(int sdir, const char *name)
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

int rl_link_tmpfile(int tmpfd, int dirfd, const char *name)
{
	char proc[64];

	if (linkat(tmpfd, "", dirfd, name, AT_EMPTY_PATH) == 0)
		return 0;
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc works for the owner. */
	if (errno != EPERM && errno != ENOENT && errno != EINVAL)
		return negative_errno();
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tmpfd);
	return linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) < 0 ? negative_errno() : 0;
}
