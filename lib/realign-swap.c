// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Putting the aligned copy in the original's place.
 *
 * Inode-keeping swaps exchange extents between the two inodes and nothing
 * else: the original keeps its number, links, owner, xattrs, open-by-path
 * identity and its own fsxattr.  That last point decides when they may run:
 * the hint cannot be changed on a file that has extents (XFS returns
 * EINVAL), so after a swap the original carries whatever hint it had.  The
 * caller therefore uses them only when the original already has the wanted
 * hint and merely its extents are off.  Order: XFS exchange-range (logged,
 * restartable after a crash; needs a filesystem made with the exchange
 * feature), XFS swapext (one transaction; the kernel refuses with EBUSY if
 * mtime or ctime moved, closing the window after our own check), ext4
 * MOVE_EXT (journalled per block range; both sides hold identical data, so
 * a crash half way still leaves the right content).
 *
 * Otherwise the copy, which does carry the hint, is renamed over the
 * original (see rl_swap_rename).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/fsinfo.h"
#include "extalign/macro.h"
#include "realign-internal.h"

/* Kernel uapi layouts that Debian 12 ships no header for (xfs_fs.h, ext4.h). */
#ifndef XFS_IOC_EXCHANGE_RANGE
struct xfs_exchange_range {
	int32_t file1_fd;
	uint32_t pad;
	uint64_t file1_offset;
	uint64_t file2_offset;
	uint64_t length;
	uint64_t flags;
};
#define XFS_EXCHANGE_RANGE_TO_EOF (1ULL << 0)
#define XFS_EXCHANGE_RANGE_DSYNC  (1ULL << 1)
#define XFS_IOC_EXCHANGE_RANGE	  _IOW('X', 129, struct xfs_exchange_range)
#endif

#ifndef XFS_IOC_SWAPEXT
struct xfs_bstime {
	long tv_sec; /* __kernel_long_t */
	int32_t tv_nsec;
};

struct xfs_bstat {
	uint64_t bs_ino;
	uint16_t bs_mode;
	uint16_t bs_nlink;
	uint32_t bs_uid;
	uint32_t bs_gid;
	uint32_t bs_rdev;
	int32_t bs_blksize;
	int64_t bs_size;
	struct xfs_bstime bs_atime;
	struct xfs_bstime bs_mtime;
	struct xfs_bstime bs_ctime;
	int64_t bs_blocks;
	uint32_t bs_xflags;
	int32_t bs_extsize;
	int32_t bs_extents;
	uint32_t bs_gen;
	uint16_t bs_projid_lo;
	uint16_t bs_forkoff;
	uint16_t bs_projid_hi;
	uint16_t bs_sick;
	uint16_t bs_checked;
	unsigned char bs_pad[2];
	uint32_t bs_cowextsize;
	uint32_t bs_dmevmask;
	uint16_t bs_dmstate;
	uint16_t bs_aextents;
};

struct xfs_swapext {
	int64_t sx_version;
	int64_t sx_fdtarget;
	int64_t sx_fdtmp;
	int64_t sx_offset;
	int64_t sx_length;
	char sx_pad[16];
	struct xfs_bstat sx_stat;
};
#define XFS_SX_VERSION	0
#define XFS_IOC_SWAPEXT _IOWR('X', 109, struct xfs_swapext)
#endif

#ifndef EXT4_IOC_MOVE_EXT
struct move_extent {
	uint32_t reserved;
	uint32_t donor_fd;
	uint64_t orig_start; /* blocks */
	uint64_t donor_start;
	uint64_t len;
	uint64_t moved_len;
};
#define EXT4_IOC_MOVE_EXT _IOWR('f', 15, struct move_extent)
#endif

/* Answers that mean "this path is not available here", not "it failed". */
static bool unavailable(int err)
{
	return err == -EOPNOTSUPP || err == -ENOTTY || err == -EINVAL || err == -ENOSYS ||
	       err == -EXDEV;
}

static int exchange_range(struct rl_ctx *c)
{
	struct xfs_exchange_range x = {
		.file1_fd = c->tmpfd,
		.length = (uint64_t)c->st.st_size,
		.flags = XFS_EXCHANGE_RANGE_TO_EOF | XFS_EXCHANGE_RANGE_DSYNC,
	};

	return ioctl(c->fd, XFS_IOC_EXCHANGE_RANGE, &x) < 0 ? negative_errno() : 0;
}

static int swapext(struct rl_ctx *c)
{
	struct xfs_swapext sx = {
		.sx_version = XFS_SX_VERSION,
		.sx_fdtarget = c->fd,
		.sx_fdtmp = c->tmpfd,
		.sx_length = (int64_t)c->st.st_size,
	};

	/* The kernel compares these with the inode and answers EBUSY. */
	sx.sx_stat.bs_mtime.tv_sec = c->st.st_mtim.tv_sec;
	sx.sx_stat.bs_mtime.tv_nsec = (int32_t)c->st.st_mtim.tv_nsec;
	sx.sx_stat.bs_ctime.tv_sec = c->st.st_ctim.tv_sec;
	sx.sx_stat.bs_ctime.tv_nsec = (int32_t)c->st.st_ctim.tv_nsec;
	if (ioctl(c->fd, XFS_IOC_SWAPEXT, &sx) < 0)
		return negative_errno();
	return fsync(c->fd) < 0 ? negative_errno() : 0;
}

static int move_ext(struct rl_ctx *c)
{
	uint64_t bs = (uint64_t)c->st.st_blksize ? (uint64_t)c->st.st_blksize : 4096;
	struct move_extent me = {
		.donor_fd = (uint32_t)c->tmpfd,
		.len = ((uint64_t)c->st.st_size + bs - 1) / bs,
	};

	if (ioctl(c->fd, EXT4_IOC_MOVE_EXT, &me) < 0)
		return negative_errno();
	/*
	 * A partial move still leaves the right content (both sides held the
	 * same data), but not the extents we promised.
	 */
	if (me.moved_len != me.len) {
		c->res->detail = "ext4 moved only part of the extents (the content is the same)";
		return -EAGAIN;
	}
	return fsync(c->fd) < 0 ? negative_errno() : 0;
}

int rl_swap_keep_inode(struct rl_ctx *c)
{
	struct ea_fsinfo fs;
	int r;

	r = ea_fsinfo_from_fd(c->fd, &fs);
	if (r < 0)
		return r;
	if (fs.magic == XFS_SUPER_MAGIC) {
		r = exchange_range(c);
		if (!r) {
			c->res->swap = EA_SWAP_EXCHANGE_RANGE;
			return 0;
		}
		if (!unavailable(r))
			return r;
		r = swapext(c);
		if (!r)
			c->res->swap = EA_SWAP_SWAPEXT;
		return r;
	}
	if (fs.magic == EXT4_SUPER_MAGIC) {
		/*
		 * MOVE_EXT stops at end of file, but the last unit goes on past
		 * it (ext4 keeps the blocks past EOF that a hinted allocation
		 * widened to): the original would keep its old blocks there, a
		 * unit split in two.  Only whole units move; otherwise the
		 * rename path (refused for hard links) does it.
		 */
		if ((uint64_t)c->st.st_size % c->o->extsize)
			return -EOPNOTSUPP;
		r = move_ext(c);
		if (!r)
			c->res->swap = EA_SWAP_MOVE_EXT;
		return r;
	}
	return -EOPNOTSUPP;
}

bool rl_swap_unavailable(int err)
{
	return unavailable(err);
}

/*
 * Link the copy to a leftover name, then exchange it with the original's
 * name (RENAME_EXCHANGE, so the old inode stays reachable), check once more
 * that nobody opened or changed the original in the meantime, and only then
 * unlink the old inode.  An opener whose open() blocked on our lease before
 * the exchange resolved the old inode: if the lease broke we exchange back,
 * so that opener gets the original at its name and its writes are kept.
 */
int rl_swap_rename(struct rl_ctx *c)
{
	char name[EA_REALIGN_LEFTOVER_MAX];
	struct rl_record rec = { .fd = -1, .sdir = -1 };
	uint64_t rnd = 0;
	bool exchanged = true;
	struct stat st;
	int r;

	r = rl_meta_copy(c->fd, c->tmpfd, &c->st);
	if (r < 0) {
		c->res->step = "metadata";
		return r;
	}
	if (c->resumed) {
		/* A kept copy: named and recorded already, the record ours. */
		snprintf(name, sizeof(name), "%s", c->resume->name);
		rec = c->resume->rec;
		c->resume->rec = (struct rl_record){ .fd = -1, .sdir = -1 };
		c->resumed = false;
	} else {
		if (c->o->batch) {
			/* The batch's record names this leftover (realign-batch.c). */
			r = rl_batch_record_dir(c->o->batch, c->o->state_dir, c->dirfd, &rnd);
			if (r < 0) {
				c->res->step = "state";
				return r;
			}
			ea_realign_leftover_name(name, (uint64_t)c->st.st_ino, rnd);
		} else {
			if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
				rnd = rl_now_ns() ^ ((uint64_t)getpid() << 32);
			ea_realign_leftover_name(name, (uint64_t)c->st.st_ino, rnd);
			r = rl_record_create(c->o->state_dir, c->dirfd, name, &rec);
			if (r < 0) {
				c->res->step = "state";
				return r;
			}
		}
		r = rl_link_tmpfile(c->tmpfd, c->dirfd, name);
		if (r < 0) {
			c->res->step = "link";
			rl_record_remove(&rec);
			return r;
		}
	}
	rl_progress(c, EA_PHASE_LINKED, 0, 0);

	r = rl_unchanged(c, false);
	if (r < 0)
		goto undo_link;
	rl_progress(c, EA_PHASE_SWAP, 0, 0);
	if (renameat2(c->dirfd, name, c->dirfd, c->base, RENAME_EXCHANGE) < 0) {
		if (errno != EINVAL && errno != ENOSYS) {
			r = negative_errno();
			c->res->step = "rename";
			goto undo_link;
		}
		/* No exchange on this filesystem: plain replace, no way back. */
		if (renameat(c->dirfd, name, c->dirfd, c->base) < 0) {
			r = negative_errno();
			c->res->step = "rename";
			goto undo_link;
		}
		exchanged = false;
	}
	if (exchanged) {
		rl_progress(c, EA_PHASE_EXCHANGED, 0, 0);
		r = rl_unchanged(c, true);
		if (r < 0) {
			if (renameat2(c->dirfd, name, c->dirfd, c->base, RENAME_EXCHANGE) < 0) {
				/* The copy is complete and in place; keep going. */
				r = 0;
			} else {
				goto undo_link;
			}
		}
		/* The old inode now has the leftover name: make sure before unlinking. */
		if (fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_ino == c->st.st_ino && st.st_dev == c->st.st_dev)
			unlinkat(c->dirfd, name, 0);
	}
	c->res->swap = EA_SWAP_RENAME;
	/* With a batch, the directory's fsync and the records' removal come
	 * at its flush, in the same order (realign.h). */
	if (c->o->batch && rl_batch_add(c->o->batch, c->dirfd, &rec) == 0)
		return 0;
	/*
	 * Make the new name durable before the record goes: should this fail,
	 * the data is synced and in place, and a crash could at worst bring
	 * back the leftover name, which the record (removed below only after a
	 * successful sync) would have covered; a failing fsync keeps it.
	 */
	if (fsync(c->dirfd) < 0) {
		closep(&rec.fd);
		closep(&rec.sdir);
	} else {
		rl_record_remove(&rec);
	}
	return 0;

undo_link:
	unlinkat(c->dirfd, name, 0);
	fsync(c->dirfd);
	rl_record_remove(&rec);
	return r;
}
