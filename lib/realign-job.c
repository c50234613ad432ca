// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One file's job as every stage of the engine sees it: the clock, progress
 * reports, and whether the job must stop (the file changed, the lease
 * broke, a cancel or a deadline).  The bottom of lib/realign*: the stages
 * use it, it uses none of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "extalign/macro.h"
#include "realign-internal.h"

uint64_t rl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int rl_interrupted(const struct rl_ctx *c)
{
	/*
	 * A lease break or a change (chmod, utimes, setxattr by path do not
	 * open the file, so only ctime tells) ends the copy at once rather than
	 * after the last byte.
	 */
	if (c->fd >= 0) {
		int r = rl_unchanged(c, false);

		if (r)
			return r;
	}
	if (c->o->cancel && c->o->cancel(c->o->userdata))
		return RL_CANCELLED;
	if (c->o->deadline_ns && rl_now_ns() >= c->o->deadline_ns)
		return RL_CANCELLED;
	return 0;
}

void rl_progress(const struct rl_ctx *c, enum ea_realign_phase phase, uint64_t done, uint64_t total)
{
	struct ea_realign_progress p = { c->path, phase, done, total };

	if (c->o->progress)
		c->o->progress(c->o->userdata, &p);
}

/*
 * Size, link count, mtime and, unless @exchanged, ctime as at the start,
 * and our lease still whole.  RENAME_EXCHANGE sets the ctime of both inodes
 * on ext4 (not on XFS), so after our exchange ctime tells nothing: the
 * lease (nobody opened the file) and mtime (nobody wrote it) remain.
 */
int rl_unchanged(const struct rl_ctx *c, bool exchanged)
{
	struct stat st;

	if (fcntl(c->fd, F_GETLEASE) != F_WRLCK)
		return RL_LEASE_BROKEN;
	if (fstat(c->fd, &st) < 0)
		return negative_errno();
	if (st.st_size != c->st.st_size || st.st_nlink != c->st.st_nlink ||
	    st.st_mtim.tv_sec != c->st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != c->st.st_mtim.tv_nsec)
		return -ESTALE;
	if (!exchanged && (st.st_ctim.tv_sec != c->st.st_ctim.tv_sec ||
			   st.st_ctim.tv_nsec != c->st.st_ctim.tv_nsec))
		return -ESTALE;
	return 0;
}
