// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Removing what dead jobs left: a record whose job is gone names a leftover
 * (realign-record.c), unless it keeps a stopped copy whose original is
 * still unchanged (realign-resume.c), which the next run goes on with.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "realign-internal.h"

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
	const char *sd = rl_state_dir(state_dir);
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
		rec = rl_record_take(sdir, de->d_name);
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
	sdir = open(rl_state_dir(state_dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sdir >= 0) {
		char buf[PATH_MAX];
		ssize_t n;

		rec = rl_record_take(sdir, name);
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
