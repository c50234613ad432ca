// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Removing what dead jobs left: a record whose job is gone names a leftover
 * (realign-record.c), unless it keeps a stopped copy whose original is
 * still unchanged (realign-resume.c), which the next run goes on with; a
 * batch's record names the directories where its leftovers may be
 * (realign-batch.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
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

/*
 * A dead batch's record (realign-batch.c): in each directory it lists, the
 * leftovers with its random part.  1 when every directory was looked at
 * (or is gone), so the record can go; -errno otherwise.
 */
static int cleanup_batch(int rec, uint64_t rnd, unsigned *removed)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;
	int ret = 1;

	for (;;) {
		ssize_t n;

		if (cap - len < PATH_MAX) {
			char *nb = realloc(buf, cap + 4 * PATH_MAX);

			if (!nb)
				return -ENOMEM;
			buf = nb;
			cap += 4 * PATH_MAX;
		}
		n = pread(rec, buf + len, cap - len, (off_t)len);
		if (n < 0)
			return negative_errno();
		if (!n)
			break;
		len += (size_t)n;
	}
	/* Each path ends with its NUL; a torn last one is no path at all. */
	for (size_t at = 0; at < len;) {
		const char *path = buf + at;
		size_t plen = strnlen(path, len - at);
		DIR *d;
		struct dirent *de;

		if (plen == len - at)
			break;
		at += plen + 1;
		d = opendir(path);
		if (!d) {
			/* A directory that is gone took its leftovers with it. */
			if (errno != ENOENT && errno != ENOTDIR && ret > 0)
				ret = negative_errno();
			continue;
		}
		while ((de = readdir(d))) {
			uint64_t r;
			int k;

			if (!rl_leftover_split(de->d_name, NULL, &r) || r != rnd)
				continue;
			k = remove_leftover(dirfd(d), de->d_name);
			if (k < 0 && ret > 0)
				ret = k;
			else if (k > 0)
				*removed += (unsigned)k;
		}
		closedir(d);
	}
	return ret;
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
		uint64_t rnd;
		bool batch;
		int r;

		batch = rl_batch_record_parse(de->d_name, &rnd);
		if (!batch && !ea_realign_leftover_parse(de->d_name, NULL))
			continue;
		rec = rl_record_take(sdir, de->d_name);
		if (rec < 0) {
			if (rec != -EBUSY && rec != -ENOENT && !ret)
				ret = rec;
			continue;
		}
		if (batch) {
			r = cleanup_batch(rec, rnd, removed);
			if (r < 0) {
				if (!ret)
					ret = r;
				continue;
			}
			if (unlinkat(sdir, de->d_name, 0) < 0 && errno != ENOENT && !ret)
				ret = negative_errno();
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
	_cleanup_close_ int sdir = -1, rec = -1, batch = -1;
	uint64_t rnd;
	int r;

	if (!rl_leftover_split(name, NULL, &rnd))
		return 0;
	sdir = open(rl_state_dir(state_dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sdir >= 0) {
		char buf[PATH_MAX];
		ssize_t n;

		/* A running batch's leftover (realign-batch.c): leave it too. */
		rl_batch_record_name(buf, rnd);
		batch = rl_record_take(sdir, buf);
		if (batch == -EBUSY)
			return 0;
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
