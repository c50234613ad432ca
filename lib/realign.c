// SPDX-License-Identifier: LGPL-2.1-or-later
/* ea_realign_file(): the checks, the lease and the order of the steps. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "extalign/fsinfo.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/size.h"
#include "realign-internal.h"

/* xfs_fs.h's version 1 geometry: all we need is the stripe unit. */
struct rl_xfs_geom_v1 {
	uint32_t blocksize, rtextsize, agblocks, agcount, logblocks, sectsize, inodesize, imaxpct;
	uint64_t datablocks, rtblocks, rtextents, logstart;
	unsigned char uuid[16];
	uint32_t sunit, swidth;
	int32_t version;
	uint32_t flags, logsectsize, rtsectsize, dirblocksize;
};
#define RL_XFS_IOC_FSGEOMETRY_V1 _IOR('X', 100, struct rl_xfs_geom_v1)

void ea_realign_opts_init(struct ea_realign_opts *o, uint32_t extsize)
{
	*o = (struct ea_realign_opts){ .extsize = extsize, .forcealign = -1 };
}

/*
 * Whether the filesystem promises physical alignment for this unit: a kept
 * forcealign flag does; on XFS a stripe unit that is a multiple of the
 * extent size makes the allocator start extents on unit boundaries.
 * Otherwise physical alignment is luck, and we only report it.
 */
static bool physical_guarantee(int fd, unsigned long magic, const struct fsxattr *fsx,
			       uint64_t unit)
{
	struct rl_xfs_geom_v1 g;

	if (fsx->fsx_xflags & FS_XFLAG_FORCEALIGN)
		return true;
	if (magic != XFS_SUPER_MAGIC)
		return false;
	memset(&g, 0, sizeof(g));
	if (ioctl(fd, RL_XFS_IOC_FSGEOMETRY_V1, &g) < 0 || !g.sunit)
		return false;
	return ((uint64_t)g.sunit * g.blocksize) % unit == 0;
}

static bool hint_matches(const struct fsxattr *fsx, const struct ea_realign_opts *o)
{
	bool fa = fsx->fsx_xflags & FS_XFLAG_FORCEALIGN;

	if (!(fsx->fsx_xflags & FS_XFLAG_EXTSIZE) || fsx->fsx_extsize != o->extsize)
		return false;
	return o->forcealign < 0 || fa == (o->forcealign > 0);
}

/*
 * Put the wanted hint on fd.  Returns 0 when it is on, 1 when the
 * filesystem accepted it and kept nothing (ext4 before the forcealign
 * series; res then says what was dropped), or a negative errno.
 */
static int put_hint(int fd, const struct ea_hint *want, struct ea_realign_result *res)
{
	unsigned dropped = 0;
	int r;

	r = ea_hint_set(fd, false, want, &dropped);
	if (r == -EOPNOTSUPP && dropped) {
		res->dropped = dropped;
		res->err = r;
		res->step = "hint";
		return 1;
	}
	return r;
}

/* FIEMAP and judge; verdicts go to res when final is set. */
static int judge(int fd, uint64_t unit, uint64_t size, bool guaranteed, struct ea_align_report *rep,
		 enum ea_align_verdict *logical, enum ea_align_verdict *physical, size_t *nextents)
{
	_cleanup_free_ struct ea_extent *ext = NULL;
	size_t n = 0;
	int r;

	r = ea_fiemap_read(fd, &ext, &n);
	if (r < 0)
		return r;
	ea_align_analyze(ext, n, unit, size, rep);
	*logical = rep->misaligned_logical ? EA_VERDICT_MISALIGNED : EA_VERDICT_ALIGNED;
	*physical = rep->misaligned_physical || rep->unknown_physical ? EA_VERDICT_MISALIGNED
								      : EA_VERDICT_ALIGNED;
	(void)guaranteed;
	if (nextents)
		*nextents = n;
	return 0;
}

static int finish(struct ea_realign_result *res, enum ea_realign_outcome o, uint64_t t0)
{
	res->outcome = o;
	res->elapsed_ns = rl_now_ns() - t0;
	return 0;
}

static int skip(struct ea_realign_result *res, enum ea_realign_skip s, uint64_t t0)
{
	res->skip = s;
	return finish(res, EA_REALIGN_SKIPPED, t0);
}

static int fail(struct ea_realign_result *res, int err, const char *step, uint64_t t0)
{
	res->err = err;
	res->step = step;
	return finish(res, EA_REALIGN_FAILED, t0);
}

/*
 * What another process did to the file, once it lets go of our lease: a
 * lease break only says that somebody opened or truncated it.  The opener
 * waited for us; give it a moment to act, then compare with the reference.
 */
static enum ea_realign_skip what_happened(int fd, const struct stat *ref, bool wait)
{
	for (int i = 0; i <= (wait ? 20 : 0); i++) {
		const struct timespec ms10 = { 0, 10 * 1000 * 1000 };
		struct stat st;

		if (fd < 0 || fstat(fd, &st) < 0)
			break;
		if (st.st_size < ref->st_size)
			return EA_SKIP_TRUNCATED;
		if (st.st_size > ref->st_size)
			return EA_SKIP_EXTENDED;
		if (st.st_mtim.tv_sec != ref->st_mtim.tv_sec ||
		    st.st_mtim.tv_nsec != ref->st_mtim.tv_nsec)
			return EA_SKIP_WRITTEN;
		if (wait)
			nanosleep(&ms10, NULL);
	}
	return wait ? EA_SKIP_LEASE_BROKEN : EA_SKIP_CHANGED;
}

/* Map an interruption or a failure of a later step to an outcome. */
static int interrupted(struct ea_realign_result *res, int r, const char *step, int fd,
		       const struct stat *ref, uint64_t t0)
{
	if (r == RL_LEASE_BROKEN)
		return skip(res, what_happened(fd, ref, true), t0);
	if (r == RL_CANCELLED)
		return finish(res, EA_REALIGN_CANCELLED, t0);
	if (r == -ESTALE || r == -EBUSY)
		return skip(res, what_happened(fd, ref, false), t0);
	return fail(res, r, step, t0);
}

/* The lease part: SIGIO blocked while we hold it (see realign.h). */
struct lease {
	int fd;
	bool masked;
	sigset_t old;
};

static int lease_take(struct lease *l, int fd)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGIO);
	l->fd = -1;
	l->masked = false;
	if (pthread_sigmask(SIG_BLOCK, &set, &l->old) == 0)
		l->masked = !sigismember(&l->old, SIGIO);
	if (fcntl(fd, F_SETLEASE, F_WRLCK) < 0)
		return negative_errno();
	l->fd = fd;
	return 0;
}

static void lease_drop(struct lease *l)
{
	if (l->fd >= 0)
		fcntl(l->fd, F_SETLEASE, F_UNLCK);
	l->fd = -1;
	if (l->masked) {
		sigset_t set;
		const struct timespec zero = { 0, 0 };

		/* Swallow the break notice so the restored mask does not kill us. */
		sigemptyset(&set);
		sigaddset(&set, SIGIO);
		while (sigtimedwait(&set, NULL, &zero) == SIGIO)
			;
		pthread_sigmask(SIG_SETMASK, &l->old, NULL);
		l->masked = false;
	}
}

/*
 * The free-space check before a copy: the same plan as the copy's, at 8-byte
 * granularity (the copy's own plan, under the lease, may differ by a block
 * of O_DIRECT rounding per run, far inside the margin).
 */
static int space_check(int fd, uint64_t size, uint32_t unit, struct ea_realign_result *res)
{
	struct rl_plan p;
	int r;

	r = rl_plan_make(fd, size, unit, 8, &p);
	if (r < 0)
		return r;
	r = rl_space_of(fd, &p, &res->space);
	rl_plan_free(&p);
	return r;
}

static void freep_aligned(void **p)
{
	free(*p);
}

static int reopen_rw(int fd, const char *path, const struct stat *want)
{
	char proc[64];
	struct stat st;
	int nfd;

	/* Through /proc the same inode for sure; the path only as a fallback. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	nfd = open(proc, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (nfd < 0 && errno == ENOENT)
		nfd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (nfd < 0)
		return negative_errno();
	if (fstat(nfd, &st) < 0 || st.st_ino != want->st_ino || st.st_dev != want->st_dev) {
		close(nfd);
		return -ESTALE;
	}
	return nfd;
}

static void dio_setup(struct rl_ctx *c, uint64_t blksize)
{
	struct statx stx;
	int fl;

	c->direct = false;
	if (c->o->buffered)
		return;
	c->dio_align = blksize ? blksize : 4096;
	if (statx(c->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN)) {
		if (!stx.stx_dio_offset_align)
			return; /* this file cannot do O_DIRECT */
		/* Whole blocks keep the copy's allocation as the hint wants it. */
		if (stx.stx_dio_offset_align > c->dio_align)
			c->dio_align = stx.stx_dio_offset_align;
	}
	if (c->dio_align > RL_CHUNK || RL_CHUNK % c->dio_align)
		return;
	fl = fcntl(c->fd, F_GETFL);
	if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_DIRECT) < 0)
		return;
	fl = fcntl(c->tmpfd, F_GETFL);
	if (fl < 0 || fcntl(c->tmpfd, F_SETFL, fl | O_DIRECT) < 0) {
		fl = fcntl(c->fd, F_GETFL);
		fcntl(c->fd, F_SETFL, fl & ~O_DIRECT);
		return;
	}
	c->direct = true;
}

int ea_realign_file(const char *path, const struct ea_realign_opts *o,
		    struct ea_realign_result *res)
{
	_cleanup_close_ int fd = -1, dirfd = -1, tmpfd = -1;
	_cleanup_(freep_aligned) void *buf = NULL;
	_cleanup_free_ char *pcopy = NULL, *bcopy = NULL;
	struct rl_ctx c = { .o = o, .res = res, .path = path, .fd = -1, .tmpfd = -1, .dirfd = -1 };
	struct ea_hint want;
	struct rl_plan plan = { 0 };
	struct rl_record_ref resume = { .rec = { .fd = -1, .sdir = -1 } };
	struct ea_fsinfo fs;
	struct fsxattr fsx, tfsx;
	struct stat lst, st, dst;
	struct lease lease = { .fd = -1 };
	uint64_t t0 = rl_now_ns(), csum = 0;
	enum ea_align_verdict lv, pv;
	size_t nextents = 0;
	bool aligned;
	int r;

	memset(res, 0, sizeof(*res));
	res->fs_type = "unknown";
	if (!o || !path || ea_extsize_check(o->extsize, 0) != EA_EXTSIZE_OK)
		return -EINVAL;

	rl_progress(&c, EA_PHASE_CHECK, 0, 0);
	if (lstat(path, &lst) < 0)
		return fail(res, negative_errno(), "stat", t0);
	if (S_ISLNK(lst.st_mode))
		return skip(res, EA_SKIP_SYMLINK, t0);
	if (!S_ISREG(lst.st_mode))
		return skip(res, EA_SKIP_NOT_REGULAR, t0);
	res->ino_before = res->ino_after = lst.st_ino;
	res->size = (uint64_t)lst.st_size;
	if (o->dev && lst.st_dev != o->dev)
		return skip(res, EA_SKIP_OTHER_FS, t0);

	/* O_NONBLOCK: somebody else's lease makes open() fail, not wait. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ELOOP)
			return skip(res, EA_SKIP_SYMLINK, t0);
		if (errno == EWOULDBLOCK)
			return skip(res, EA_SKIP_OPEN, t0);
		return fail(res, negative_errno(), "open", t0);
	}
	if (fstat(fd, &st) < 0)
		return fail(res, negative_errno(), "stat", t0);
	if (st.st_ino != lst.st_ino || st.st_dev != lst.st_dev)
		return skip(res, EA_SKIP_CHANGED, t0);
	r = ea_fsinfo_from_fd(fd, &fs);
	if (r < 0)
		return fail(res, r, "statfs", t0);
	res->fs_type = fs.type;
	if (!ea_fs_may_support_extsize(fs.magic)) {
		res->err = -EOPNOTSUPP;
		res->step = "filesystem";
		return finish(res, EA_REALIGN_UNSUPPORTED, t0);
	}
	r = ea_fsx_get(fd, &fsx);
	if (r < 0)
		return fail(res, r, "fsgetxattr", t0);
	if (fsx.fsx_xflags & FS_XFLAG_IMMUTABLE)
		return skip(res, EA_SKIP_IMMUTABLE, t0);
	if (fsx.fsx_xflags & FS_XFLAG_APPEND)
		return skip(res, EA_SKIP_APPEND_ONLY, t0);
	if (fsx.fsx_xflags & FS_XFLAG_NODEFRAG)
		return skip(res, EA_SKIP_NODEFRAG, t0);

	res->hint_before = hint_matches(&fsx, o);
	res->physical_guaranteed = physical_guarantee(fd, fs.magic, &fsx, o->extsize);
	r = judge(fd, o->extsize, (uint64_t)st.st_size, res->physical_guaranteed, &res->before,
		  &res->logical, &res->physical, &nextents);
	if (r < 0)
		return fail(res, r, "fiemap", t0);
	aligned = res->logical == EA_VERDICT_ALIGNED &&
		  (res->physical == EA_VERDICT_ALIGNED || !res->physical_guaranteed);
	if (res->hint_before && (nextents == 0 || (aligned && !o->force)))
		return skip(res, EA_SKIP_ALREADY_ALIGNED, t0);

	want = (struct ea_hint){ .extsize = o->extsize, .forcealign = o->forcealign };
	if (nextents == 0) {
		/* Nothing allocated: the hint can go on the file itself. */
		if (o->dry_run || o->assess)
			return finish(res, EA_REALIGN_WOULD, t0);
		r = put_hint(fd, &want, res);
		if (r > 0)
			return finish(res, EA_REALIGN_UNSUPPORTED, t0);
		if (!r) {
			res->swap = EA_SWAP_IN_PLACE;
			return finish(res, EA_REALIGN_HINT_SET, t0);
		}
		/*
		 * ext4 refuses a hint once the file has a size, even when all
		 * of it is a hole: such a file goes the copy's way (a copy with
		 * nothing to copy, of the same size).
		 */
		if (r != -EINVAL || st.st_size == 0)
			return fail(res, r, "hint", t0);
		res->err = 0;
		res->step = NULL;
	}
	/*
	 * Swaps keep the original's fsxattr, so without the hint on it only
	 * the rename path can carry the hint, and that would split hard links.
	 */
	if (!res->hint_before && st.st_nlink > 1)
		return skip(res, EA_SKIP_HARDLINKS, t0);
	if (o->assess) {
		r = space_check(fd, (uint64_t)st.st_size, o->extsize, res);
		if (r == -ENOSPC)
			return skip(res, EA_SKIP_NO_SPACE, t0);
		return finish(res, EA_REALIGN_WOULD, t0);
	}

	pcopy = strdup(path);
	bcopy = strdup(path);
	if (!pcopy || !bcopy)
		return fail(res, -ENOMEM, "setup", t0);
	c.base = basename(bcopy);
	dirfd = open(dirname(pcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return fail(res, negative_errno(), "open directory", t0);
	/* The name still leads to the file we looked at (the rename path needs it). */
	if (fstatat(dirfd, c.base, &dst, AT_SYMLINK_NOFOLLOW) < 0 || dst.st_ino != st.st_ino ||
	    dst.st_dev != st.st_dev)
		return skip(res, EA_SKIP_CHANGED, t0);
	c.dirfd = dirfd;

	tmpfd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (tmpfd < 0) {
		r = negative_errno();
		if (r == -EOPNOTSUPP || r == -EISDIR) {
			res->err = -EOPNOTSUPP;
			res->step = "tmpfile";
			return finish(res, EA_REALIGN_UNSUPPORTED, t0);
		}
		return fail(res, r, "tmpfile", t0);
	}
	c.tmpfd = tmpfd;
	/* Before any write: XFS refuses a new hint once a file has extents. */
	r = put_hint(tmpfd, &want, res);
	if (r > 0)
		return finish(res, EA_REALIGN_UNSUPPORTED, t0);
	if (r < 0)
		return fail(res, r, "hint", t0);
	if (ea_fsx_get(tmpfd, &tfsx) == 0)
		res->physical_guaranteed = physical_guarantee(tmpfd, fs.magic, &tfsx, o->extsize);
	r = rl_meta_early(fd, tmpfd);
	if (r < 0)
		return fail(res, r, "project id", t0);
	r = space_check(fd, (uint64_t)st.st_size, o->extsize, res);
	if (r < 0)
		return r == -ENOSPC ? skip(res, EA_SKIP_NO_SPACE, t0)
				    : fail(res, r, "free space", t0);
	if (o->dry_run)
		return finish(res, EA_REALIGN_WOULD, t0);

	/* Our own read-only descriptor would make the write lease fail. */
	r = reopen_rw(fd, path, &st);
	if (r < 0) {
		if (r == -EWOULDBLOCK)
			return skip(res, EA_SKIP_OPEN, t0);
		if (r == -ESTALE)
			return skip(res, EA_SKIP_CHANGED, t0);
		return fail(res, r, "open for writing", t0);
	}
	close(fd);
	fd = r;

	r = lease_take(&lease, fd);
	if (r < 0) {
		lease_drop(&lease);
		if (r == -EAGAIN || r == -EBUSY)
			return skip(res, EA_SKIP_OPEN, t0);
		return fail(res, r, "lease", t0);
	}
	c.fd = fd;
	/* The reference state: taken under the lease, compared before the swap. */
	if (fstat(fd, &c.st) < 0) {
		r = negative_errno();
		goto out_lease;
	}
	/* Anything since the first look (metadata too: ctime) counts as a change. */
	if (c.st.st_size != st.st_size || c.st.st_mtim.tv_nsec != st.st_mtim.tv_nsec ||
	    c.st.st_mtim.tv_sec != st.st_mtim.tv_sec || c.st.st_ctim.tv_sec != st.st_ctim.tv_sec ||
	    c.st.st_ctim.tv_nsec != st.st_ctim.tv_nsec) {
		r = -ESTALE;
		goto out_lease;
	}
	res->size = (uint64_t)c.st.st_size;

	if (posix_memalign(&buf, 4096, RL_CHUNK) != 0) {
		r = -ENOMEM;
		goto out_lease;
	}
	c.buf = buf;
	/* A copy an earlier run kept for this very file: go on with it. */
	r = rl_resume_find(&c, &resume);
	if (r > 0) {
		close(tmpfd);
		tmpfd = c.tmpfd = r;
		res->resumed_from = c.copied_to;
	}
	dio_setup(&c, fs.blksize);

	/* Under the lease: the data map cannot change any more. */
	r = rl_plan_make(fd, (uint64_t)c.st.st_size, o->extsize, c.direct ? c.dio_align : 8, &plan);
	if (r < 0) {
		res->step = "data map";
		goto out_lease;
	}
	r = rl_copy(&c, &plan, &csum);
	rl_plan_free(&plan);
	/* Stopped far enough in: keep the copy for the next run. */
	if (r == RL_CANCELLED && c.copied_to >= RL_RESUME_MIN && rl_resume_save(&c) == 0)
		res->resume_kept = c.copied_to;
	if (r < 0) {
		if (!res->step)
			res->step = "copy";
		goto out_lease;
	}
	r = rl_verify(&c, csum);
	if (r < 0) {
		res->step = "verify";
		goto out_lease;
	}
	r = judge(tmpfd, o->extsize, (uint64_t)c.st.st_size, res->physical_guaranteed, &res->after,
		  &lv, &pv, NULL);
	if (r < 0) {
		res->step = "fiemap copy";
		goto out_lease;
	}
	res->logical = lv;
	res->physical = pv;
	/*
	 * Not better than what we would replace: keep the original.  The copy
	 * was allocated in whole units at end of file, which is what the
	 * allocator aligns, so this is a filesystem without aligned free space
	 * (fragmented), not an error of ours or of the disk.
	 */
	if (lv != EA_VERDICT_ALIGNED || (res->physical_guaranteed && pv != EA_VERDICT_ALIGNED)) {
		rl_resume_drop(&c);
		lease_drop(&lease);
		return skip(res, EA_SKIP_COPY_MISALIGNED, t0);
	}

	r = rl_unchanged(&c, false);
	if (r < 0) {
		res->step = "final check";
		goto out_lease;
	}
	r = -EOPNOTSUPP;
	if (res->hint_before) {
		rl_progress(&c, EA_PHASE_SWAP, 0, 0);
		r = rl_swap_keep_inode(&c);
		if (r < 0 && !rl_swap_unavailable(r)) {
			res->step = "swap";
			goto out_lease;
		}
		/* The kept copy's name now holds the old extents. */
		if (!r)
			rl_resume_drop(&c);
		if (!r && (r = rl_restore_times(fd, &c.st)) < 0) {
			res->step = "restore times";
			goto out_lease;
		}
	}
	if (r < 0) {
		if (c.st.st_nlink > 1) {
			r = 0;
			rl_resume_drop(&c);
			lease_drop(&lease);
			return skip(res, EA_SKIP_HARDLINKS, t0);
		}
		r = rl_swap_rename(&c);
		if (r < 0) {
			if (!res->step)
				res->step = "replace";
			goto out_lease;
		}
		if (fstat(tmpfd, &st) == 0)
			res->ino_after = st.st_ino;
	}
	/* What the file at the name has now. */
	judge(res->swap == EA_SWAP_RENAME ? tmpfd : fd, o->extsize, (uint64_t)c.st.st_size,
	      res->physical_guaranteed, &res->after, &res->logical, &res->physical, NULL);
	lease_drop(&lease);
	rl_progress(&c, EA_PHASE_DONE, res->size, res->size);
	return finish(res, EA_REALIGN_DONE, t0);

out_lease:
	rl_resume_drop(&c);
	lease_drop(&lease);
	return interrupted(res, r, res->step ? res->step : "realign", fd, &c.st, t0);
}
