// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ea_realign_file(): one file through the stages, in this order, each
 * able to end the job with its outcome:
 *
 *   look            what the file is, and whether it needs us at all
 *   hint_in_place   no data yet: the hint goes on the file itself
 *   prepare         the empty copy, with the hint, and room for the data
 *   take_lease      the write lease; any change from here ends the job
 *   copy_and_verify the data (realign-plan.c, realign-copy.c), read back
 *   swap            into the original's place (realign-swap.c)
 *
 * and conclude(), the one way out, which maps what ended the job to an
 * outcome and releases everything.
 */
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

/* The XFS stripe unit in bytes, 0 when there is none or this is not XFS. */
static uint64_t xfs_stripe_unit(int fd, unsigned long magic)
{
	struct rl_xfs_geom_v1 g;

	if (magic != XFS_SUPER_MAGIC)
		return 0;
	memset(&g, 0, sizeof(g));
	if (ioctl(fd, RL_XFS_IOC_FSGEOMETRY_V1, &g) < 0)
		return 0;
	return (uint64_t)g.sunit * g.blocksize;
}

/*
 * Whether the filesystem promises physical alignment for this unit: a kept
 * forcealign flag does; on XFS a stripe unit that is a multiple of the
 * extent size makes the allocator start extents on unit boundaries.
 * Otherwise physical alignment is luck, and we only report it.
 */
static bool physical_guarantee(const struct fsxattr *fsx, uint64_t stripe_unit, uint64_t unit)
{
	if (fsx->fsx_xflags & FS_XFLAG_FORCEALIGN)
		return true;
	return stripe_unit && stripe_unit % unit == 0;
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

/* FIEMAP, then the verdicts for the unit. */
static int judge(int fd, uint64_t unit, uint64_t size, struct ea_align_report *rep,
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
	if (nextents)
		*nextents = n;
	return 0;
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

	r = rl_plan_make(fd, size, unit, EA_CSUM_ALIGN, &p);
	if (r < 0)
		return r;
	r = rl_space_of(fd, &p, &res->space);
	rl_plan_free(&p);
	return r;
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

/*
 * Everything one ea_realign_file() call holds, released in one place
 * (conclude()).  The stages below take it in order; each returns 0 to go
 * on, RL_DECIDED once it has put the outcome in the result, or -errno
 * with res->step naming what failed.
 */
#define RL_DECIDED 1

struct job {
	struct rl_ctx c; /* c.fd is set once the lease is held */
	int fd;		 /* the original: read-only until the lease, then O_RDWR */
	struct ea_fsinfo fs;
	uint64_t stripe_unit; /* read once: see physical_guarantee() */
	struct stat first;    /* at the first look, before the lease */
	size_t nextents;
	struct ea_hint want;
	struct rl_lease lease;
	bool leased;
	struct rl_record_ref resume;
	struct rl_plan plan;
	uint64_t csum;
	char *dir_copy, *base_copy; /* dirname() and basename() write into them */
	uint64_t t0;
};

static int decide(struct job *j, enum ea_realign_outcome o)
{
	j->c.res->outcome = o;
	return RL_DECIDED;
}

static int skip(struct job *j, enum ea_realign_skip s)
{
	j->c.res->skip = s;
	return decide(j, EA_REALIGN_SKIPPED);
}

static int fail_at(struct job *j, int err, const char *step)
{
	j->c.res->step = step;
	return err;
}

/* The filesystem keeps no hint here, or offers no way to replace a file. */
static int unsupported(struct job *j, const char *step)
{
	j->c.res->err = -EOPNOTSUPP;
	j->c.res->step = step;
	return decide(j, EA_REALIGN_UNSUPPORTED);
}

/* Stage 1: what the file is, where it lives, and whether it needs us. */
static int look(struct job *j)
{
	struct ea_realign_result *res = j->c.res;
	const struct ea_realign_opts *o = j->c.o;
	struct fsxattr fsx;
	struct stat lst;
	bool aligned;
	int r;

	if (lstat(j->c.path, &lst) < 0)
		return fail_at(j, negative_errno(), "stat");
	if (S_ISLNK(lst.st_mode))
		return skip(j, EA_SKIP_SYMLINK);
	if (!S_ISREG(lst.st_mode))
		return skip(j, EA_SKIP_NOT_REGULAR);
	res->ino_before = res->ino_after = lst.st_ino;
	res->size = (uint64_t)lst.st_size;
	if (o->dev && lst.st_dev != o->dev)
		return skip(j, EA_SKIP_OTHER_FS);

	/* O_NONBLOCK: somebody else's lease makes open() fail, not wait. */
	j->fd = open(j->c.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (j->fd < 0) {
		if (errno == ELOOP)
			return skip(j, EA_SKIP_SYMLINK);
		if (errno == EWOULDBLOCK)
			return skip(j, EA_SKIP_OPEN);
		return fail_at(j, negative_errno(), "open");
	}
	if (fstat(j->fd, &j->first) < 0)
		return fail_at(j, negative_errno(), "stat");
	if (j->first.st_ino != lst.st_ino || j->first.st_dev != lst.st_dev)
		return skip(j, EA_SKIP_CHANGED);
	r = ea_fsinfo_from_fd(j->fd, &j->fs);
	if (r < 0)
		return fail_at(j, r, "statfs");
	res->fs_type = j->fs.type;
	if (!ea_fs_may_support_extsize(j->fs.magic))
		return unsupported(j, "filesystem");
	r = ea_fsx_get(j->fd, &fsx);
	if (r < 0)
		return fail_at(j, r, "fsgetxattr");
	if (fsx.fsx_xflags & FS_XFLAG_IMMUTABLE)
		return skip(j, EA_SKIP_IMMUTABLE);
	if (fsx.fsx_xflags & FS_XFLAG_APPEND)
		return skip(j, EA_SKIP_APPEND_ONLY);
	if (fsx.fsx_xflags & FS_XFLAG_NODEFRAG)
		return skip(j, EA_SKIP_NODEFRAG);

	res->hint_before = hint_matches(&fsx, o);
	j->stripe_unit = xfs_stripe_unit(j->fd, j->fs.magic);
	res->physical_guaranteed = physical_guarantee(&fsx, j->stripe_unit, o->extsize);
	r = judge(j->fd, o->extsize, (uint64_t)j->first.st_size, &res->before, &res->logical,
		  &res->physical, &j->nextents);
	if (r < 0)
		return fail_at(j, r, "fiemap");
	aligned = res->logical == EA_VERDICT_ALIGNED && res->physical == EA_VERDICT_ALIGNED;
	if (res->hint_before && (j->nextents == 0 || (aligned && !o->force)))
		return skip(j, EA_SKIP_ALREADY_ALIGNED);
	/* Where the device side is luck, a copy is as much luck: say so. */
	if (res->hint_before && !o->force && res->logical == EA_VERDICT_ALIGNED &&
	    !res->physical_guaranteed)
		return skip(j, EA_SKIP_LOGICAL_ONLY);
	j->want = (struct ea_hint){ .extsize = o->extsize, .forcealign = o->forcealign };
	return 0;
}

/* Stage 2: nothing allocated, so the hint can go on the file itself. */
static int hint_in_place(struct job *j)
{
	struct ea_realign_result *res = j->c.res;
	int r;

	if (j->nextents > 0)
		return 0;
	if (j->c.o->dry_run || j->c.o->assess)
		return decide(j, EA_REALIGN_WOULD);
	r = put_hint(j->fd, &j->want, res);
	if (r > 0)
		return decide(j, EA_REALIGN_UNSUPPORTED);
	if (!r) {
		res->swap = EA_SWAP_IN_PLACE;
		return decide(j, EA_REALIGN_HINT_SET);
	}
	/*
	 * ext4 refuses a hint once the file has a size, even when all of it
	 * is a hole: such a file goes the copy's way (a copy with nothing to
	 * copy, of the same size).
	 */
	if (r != -EINVAL || j->first.st_size == 0)
		return fail_at(j, r, "hint");
	res->err = 0;
	res->step = NULL;
	return 0;
}

/* Stage 3: the empty copy with the hint on it, and room for the data. */
static int prepare(struct job *j)
{
	const struct ea_realign_opts *o = j->c.o;
	struct ea_realign_result *res = j->c.res;
	struct stat dst; /* the name, still the file we looked at */
	struct fsxattr tfsx;
	int r;

	/*
	 * Swaps keep the original's fsxattr, so without the hint on it only
	 * the rename path can carry the hint, and that would split hard links.
	 */
	if (!res->hint_before && j->first.st_nlink > 1)
		return skip(j, EA_SKIP_HARDLINKS);
	if (o->assess) {
		r = space_check(j->fd, (uint64_t)j->first.st_size, o->extsize, res);
		if (r == -ENOSPC)
			return skip(j, EA_SKIP_NO_SPACE);
		return decide(j, EA_REALIGN_WOULD);
	}

	j->dir_copy = strdup(j->c.path);
	j->base_copy = strdup(j->c.path);
	if (!j->dir_copy || !j->base_copy)
		return fail_at(j, -ENOMEM, "setup");
	j->c.base = basename(j->base_copy);
	j->c.dirfd = open(dirname(j->dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (j->c.dirfd < 0)
		return fail_at(j, negative_errno(), "open directory");
	/* The name still leads to the file we looked at (the rename path needs it). */
	if (fstatat(j->c.dirfd, j->c.base, &dst, AT_SYMLINK_NOFOLLOW) < 0 ||
	    dst.st_ino != j->first.st_ino || dst.st_dev != j->first.st_dev)
		return skip(j, EA_SKIP_CHANGED);

	j->c.tmpfd = openat(j->c.dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (j->c.tmpfd < 0) {
		r = negative_errno();
		if (r == -EOPNOTSUPP || r == -EISDIR)
			return unsupported(j, "tmpfile");
		return fail_at(j, r, "tmpfile");
	}
	/* Before any write: XFS refuses a new hint once a file has extents. */
	r = put_hint(j->c.tmpfd, &j->want, res);
	if (r > 0)
		return decide(j, EA_REALIGN_UNSUPPORTED);
	if (r < 0)
		return fail_at(j, r, "hint");
	if (ea_fsx_get(j->c.tmpfd, &tfsx) == 0)
		res->physical_guaranteed = physical_guarantee(&tfsx, j->stripe_unit, o->extsize);
	r = rl_meta_early(j->fd, j->c.tmpfd);
	if (r < 0)
		return fail_at(j, r, "project id");
	r = space_check(j->fd, (uint64_t)j->first.st_size, o->extsize, res);
	if (r == -ENOSPC)
		return skip(j, EA_SKIP_NO_SPACE);
	if (r < 0)
		return fail_at(j, r, "free space");
	if (o->dry_run)
		return decide(j, EA_REALIGN_WOULD);
	return 0;
}

/* Stage 4: the write lease, and the reference state taken under it. */
static int take_lease(struct job *j)
{
	const struct stat *first = &j->first;
	struct rl_ctx *c = &j->c;
	int r;

	/* Our own read-only descriptor would make the write lease fail. */
	r = rl_reopen_rw(j->fd, c->path, first);
	if (r == -EWOULDBLOCK)
		return skip(j, EA_SKIP_OPEN);
	if (r == -ESTALE)
		return skip(j, EA_SKIP_CHANGED);
	if (r < 0)
		return fail_at(j, r, "open for writing");
	close(j->fd);
	j->fd = r;

	r = rl_lease_take(&j->lease, j->fd);
	if (r == -EAGAIN || r == -EBUSY)
		return skip(j, EA_SKIP_OPEN);
	if (r < 0)
		return fail_at(j, r, "lease");
	j->leased = true;
	c->fd = j->fd;
	/* The reference state: taken under the lease, compared before the swap. */
	if (fstat(c->fd, &c->st) < 0)
		return negative_errno();
	/* Anything since the first look (metadata too: ctime) counts as a change. */
	if (c->st.st_size != first->st_size || c->st.st_mtim.tv_nsec != first->st_mtim.tv_nsec ||
	    c->st.st_mtim.tv_sec != first->st_mtim.tv_sec ||
	    c->st.st_ctim.tv_sec != first->st_ctim.tv_sec ||
	    c->st.st_ctim.tv_nsec != first->st_ctim.tv_nsec)
		return -ESTALE;
	c->res->size = (uint64_t)c->st.st_size;
	return 0;
}

/* Stage 5: the copy (going on with a kept one), verified and judged. */
static int copy_and_verify(struct job *j)
{
	struct rl_ctx *c = &j->c;
	struct ea_realign_result *res = c->res;
	const struct ea_realign_opts *o = c->o;
	enum ea_align_verdict lv, pv;
	int r;

	c->buf = o->batch ? rl_batch_buffer(o->batch) : NULL;
	c->buf_borrowed = c->buf != NULL;
	if (!c->buf && posix_memalign(&c->buf, 4096, RL_CHUNK) != 0) {
		c->buf = NULL;
		return -ENOMEM;
	}
	/* A copy an earlier run kept for this very file: go on with it. */
	r = rl_resume_find(c, &j->resume);
	if (r > 0) {
		close(c->tmpfd);
		c->tmpfd = r;
		res->resumed_from = c->copied_to;
	}
	dio_setup(c, j->fs.blksize);

	/* Under the lease: the data map cannot change any more. */
	r = rl_plan_make(c->fd, (uint64_t)c->st.st_size, o->extsize,
			 c->direct ? c->dio_align : EA_CSUM_ALIGN, &j->plan);
	if (r < 0)
		return fail_at(j, r, "data map");
	r = rl_copy(c, &j->plan, &j->csum);
	/* Stopped far enough in: keep the copy for the next run. */
	if (r == RL_CANCELLED && c->copied_to >= RL_RESUME_MIN && rl_resume_save(c) == 0)
		res->resume_kept = c->copied_to;
	if (r < 0)
		return fail_at(j, r, res->step ? res->step : "copy");
	r = rl_verify(c, j->csum);
	if (r < 0)
		return fail_at(j, r, "verify");
	r = judge(c->tmpfd, o->extsize, (uint64_t)c->st.st_size, &res->after, &lv, &pv, NULL);
	if (r < 0)
		return fail_at(j, r, "fiemap copy");
	res->logical = lv;
	res->physical = pv;
	/*
	 * Not better than what we would replace: keep the original.  The copy
	 * was allocated in whole units at end of file, which is what the
	 * allocator aligns, so this is a filesystem without aligned free space
	 * (fragmented), not an error of ours or of the disk.
	 */
	if (lv != EA_VERDICT_ALIGNED || (res->physical_guaranteed && pv != EA_VERDICT_ALIGNED))
		return skip(j, EA_SKIP_COPY_MISALIGNED);
	return 0;
}

/*
 * Stage 6: the copy's extents into the original (it keeps its inode), or
 * the copy itself in its place (rename).
 */
static int swap(struct job *j)
{
	struct rl_ctx *c = &j->c;
	struct ea_realign_result *res = c->res;
	struct stat st;
	int r;

	r = rl_unchanged(c, false);
	if (r < 0)
		return fail_at(j, r, "final check");
	r = -EOPNOTSUPP;
	if (res->hint_before) {
		rl_progress(c, EA_PHASE_SWAP, 0, 0);
		r = rl_swap_keep_inode(c);
		if (r < 0 && !rl_swap_unavailable(r))
			return fail_at(j, r, "swap");
		if (!r) {
			/* The kept copy's name now holds the old extents. */
			rl_resume_drop(c);
			r = rl_restore_times(c->fd, &c->st);
			if (r < 0)
				return fail_at(j, r, "restore times");
		}
	}
	if (r < 0) {
		if (c->st.st_nlink > 1)
			return skip(j, EA_SKIP_HARDLINKS);
		r = rl_swap_rename(c);
		if (r < 0)
			return fail_at(j, r, res->step ? res->step : "replace");
		if (fstat(c->tmpfd, &st) == 0)
			res->ino_after = st.st_ino;
	}
	/* What the file at the name has now. */
	judge(res->swap == EA_SWAP_RENAME ? c->tmpfd : c->fd, c->o->extsize,
	      (uint64_t)c->st.st_size, &res->after, &res->logical, &res->physical, NULL);
	return decide(j, EA_REALIGN_DONE);
}

/*
 * The one way out.  Before the lease an error is a failure of its step;
 * under it, a lease break, a change or a cancel is what another process or
 * the caller did, and rl_what_happened() tells which.
 */
static int conclude(struct job *j, int r)
{
	struct ea_realign_result *res = j->c.res;
	bool done = r == RL_DECIDED && res->outcome == EA_REALIGN_DONE;

	rl_resume_drop(&j->c); /* a kept copy not used up or saved again */
	rl_lease_drop(&j->lease);
	if (done)
		rl_progress(&j->c, EA_PHASE_DONE, res->size, res->size);
	if (r < 0 && !j->leased) {
		res->err = r;
		res->outcome = EA_REALIGN_FAILED;
	} else if (r == RL_LEASE_BROKEN) {
		res->skip = rl_what_happened(j->fd, &j->c.st, true);
		res->outcome = EA_REALIGN_SKIPPED;
	} else if (r == RL_CANCELLED) {
		res->outcome = EA_REALIGN_CANCELLED;
	} else if (r == -ESTALE || r == -EBUSY) {
		res->skip = rl_what_happened(j->fd, &j->c.st, false);
		res->outcome = EA_REALIGN_SKIPPED;
	} else if (r < 0) {
		res->err = r;
		res->step = res->step ? res->step : "realign";
		res->outcome = EA_REALIGN_FAILED;
	}
	rl_plan_free(&j->plan);
	if (!j->c.buf_borrowed)
		free(j->c.buf);
	free(j->dir_copy);
	free(j->base_copy);
	closep(&j->fd);
	closep(&j->c.tmpfd);
	closep(&j->c.dirfd);
	res->elapsed_ns = rl_now_ns() - j->t0;
	return 0;
}

int ea_realign_file(const char *path, const struct ea_realign_opts *o,
		    struct ea_realign_result *res)
{
	struct job j = {
		.c = { .o = o, .res = res, .path = path, .fd = -1, .tmpfd = -1, .dirfd = -1 },
		.fd = -1,
		.lease = { .fd = -1 },
		.resume = { .rec = { .fd = -1, .sdir = -1 } },
		.t0 = rl_now_ns(),
	};
	int r;

	memset(res, 0, sizeof(*res));
	res->fs_type = "unknown";
	if (!o || !path || ea_extsize_check(o->extsize, 0) != EA_EXTSIZE_OK)
		return -EINVAL;

	rl_progress(&j.c, EA_PHASE_CHECK, 0, 0);
	r = look(&j);
	if (!r)
		r = hint_in_place(&j);
	if (!r)
		r = prepare(&j);
	if (!r)
		r = take_lease(&j);
	if (!r)
		r = copy_and_verify(&j);
	if (!r)
		r = swap(&j);
	return conclude(&j, r);
}
