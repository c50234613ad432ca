// SPDX-License-Identifier: GPL-2.0-or-later
/* Small helpers of extalignd that know nothing of its parts: clocks, paths. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "extalign/macro.h"

uint64_t now_usec(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Open an administrator's path (a rule directory, a watched tree) refusing
 * symlinks in every component: a user who owns /srv/db/u must not be able to
 * point a rule's tree elsewhere by replacing a directory with a symlink.
 */
int open_tree(const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_DIRECTORY),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	_cleanup_free_ char *copy = NULL;
	_cleanup_close_ int cur = -1;
	char *save = NULL, *comp, *next;
	bool opened = false;

	if (fd >= 0 || errno != ENOSYS)
		return fd < 0 ? negative_errno() : (int)fd;

	/*
	 * No openat2() (before Linux 5.6, or a sandbox that hides it, such as
	 * valgrind): the same walk by hand, one O_NOFOLLOW component at a time.
	 */
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return negative_errno();
	for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
		int f;

		next = strtok_r(NULL, "/", &save);
		f = openat(cur, comp,
			   (next ? O_PATH : flags) | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		if (f < 0)
			return negative_errno(); /* a symlink fails as ENOTDIR here */
		close(cur);
		cur = f;
		opened = true;
	}
	if (opened)
		return TAKE_FD(cur);
	/* The path was "/" or "." alone: reopen with the flags asked for. */
	fd = openat(cur, ".", flags | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? negative_errno() : (int)fd;
}

int proc_fd_open(void)
{
	_cleanup_close_ int fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct statfs sfs;

	if (fd < 0)
		return negative_errno();
	if (fstatfs(fd, &sfs) < 0)
		return negative_errno();
	if (sfs.f_type != PROC_SUPER_MAGIC)
		return -ENOTSUP;
	return TAKE_FD(fd);
}

int fd_reopen(int proc_fd, int fd, int flags)
{
	char name[32];
	int r;

	if (proc_fd >= 0) {
		snprintf(name, sizeof(name), "%d", fd);
		r = openat(proc_fd, name, flags);
	} else {
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
		r = open(name, flags);
	}
	return r < 0 ? negative_errno() : r;
}

int fd_path(int proc_fd, int fd, char **ret)
{
	char name[32], buf[PATH_MAX];
	ssize_t n;

	if (proc_fd >= 0) {
		snprintf(name, sizeof(name), "%d", fd);
		n = readlinkat(proc_fd, name, buf, sizeof(buf) - 1);
	} else {
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
		n = readlink(name, buf, sizeof(buf) - 1);
	}
	if (n < 0)
		return negative_errno();
	buf[n] = 0;
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}
