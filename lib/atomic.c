// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "extalign/atomic.h"
#include "extalign/hint.h"
#include "extalign/macro.h"

const char *ea_atomic_state_str(enum ea_atomic_state s)
{
	switch (s) {
	case EA_ATOMIC_UNKNOWN:
		return "unknown";
	case EA_ATOMIC_UNSUPPORTED:
		return "unsupported";
	case EA_ATOMIC_NONE:
		return "none";
	case EA_ATOMIC_YES:
		return "yes";
	}
	return "unknown";
}

uint32_t ea_rounddown_pow2(uint32_t x)
{
	if (!x)
		return 0;
	return UINT32_C(1) << (31 - __builtin_clz(x));
}

static enum ea_atomic_state verdict(struct ea_atomic *ret, enum ea_atomic_state s, uint32_t min,
				    uint32_t max, const char *reason)
{
	*ret = (struct ea_atomic){ .state = s, .reason = reason };
	if (s == EA_ATOMIC_YES) {
		ret->unit_min = min;
		ret->unit_max = max;
	}
	return s;
}

enum ea_atomic_state ea_atomic_for_bdev(const struct ea_atomic_queue *q, bool partition,
					uint64_t start_sect, struct ea_atomic *ret)
{
	uint32_t align;

	if (!q->present)
		return verdict(ret, EA_ATOMIC_UNSUPPORTED, 0, 0,
			       "kernel has no atomic write limits in sysfs (before 6.11)");
	if (!q->unit_min || !q->unit_max)
		return verdict(ret, EA_ATOMIC_NONE, 0, 0, "device reports no atomic writes");
	/* The kernel publishes only powers of two; anything else is a bad capture. */
	if (!is_power_of_2(q->unit_min) || !is_power_of_2(q->unit_max) || q->unit_min > q->unit_max)
		return verdict(ret, EA_ATOMIC_NONE, 0, 0,
			       "device atomic unit range is inconsistent");
	if (partition) {
		align = q->boundary > q->unit_min ? q->boundary : q->unit_min;
		if ((start_sect * 512) % align)
			return verdict(ret, EA_ATOMIC_NONE, 0, 0,
				       q->boundary > q->unit_min
					       ? "partition start not aligned to atomic boundary"
					       : "partition start not aligned to atomic unit");
		return verdict(ret, EA_ATOMIC_YES, q->unit_min, q->unit_max,
			       "partition aligned to disk's atomic unit");
	}
	return verdict(ret, EA_ATOMIC_YES, q->unit_min, q->unit_max, "device atomic write limits");
}

enum ea_atomic_state ea_atomic_for_fs(const struct ea_atomic_fsfacts *f,
				      const struct ea_atomic *dev, struct ea_atomic *ret)
{
	uint32_t min, max, limit;
	const char *why;

	if (f->fs == EA_FS_XFS)
		return verdict(ret, EA_ATOMIC_UNKNOWN, 0, 0,
			       "XFS decides in the kernel; --probe measures it");
	if (f->fs != EA_FS_EXT4)
		return verdict(ret, EA_ATOMIC_NONE, 0, 0, "filesystem has no atomic writes");
	if (dev->state != EA_ATOMIC_YES)
		return verdict(ret, dev->state, 0, 0, "device below has no atomic writes");
	if (!f->block_size)
		return verdict(ret, EA_ATOMIC_UNKNOWN, 0, 0, "filesystem block size unknown");

	/*
	 * ext4 never issues an atomic write smaller than a block, and never
	 * one larger than what its allocator keeps physically contiguous and
	 * aligned: a block, a bigalloc cluster, or (our series) a forcealign
	 * extent size unit.
	 */
	if (f->extsize && f->forcealign) {
		limit = f->extsize;
		why = "ext4 extsize+forcealign: up to the extent size";
	} else if (f->cluster_size > f->block_size) {
		limit = f->cluster_size;
		why = "ext4 bigalloc: up to the cluster size";
	} else {
		limit = f->block_size;
		why = "ext4: one filesystem block";
	}
	min = f->block_size > dev->unit_min ? f->block_size : dev->unit_min;
	max = ea_rounddown_pow2(limit < dev->unit_max ? limit : dev->unit_max);
	if (min > max)
		return verdict(ret, EA_ATOMIC_NONE, 0, 0,
			       f->block_size > dev->unit_max
				       ? "block size above the device's atomic unit maximum"
				       : "block size below the device's atomic unit minimum");
	return verdict(ret, EA_ATOMIC_YES, min, max, why);
}

const char *ea_untorn_str(enum ea_untorn u)
{
	switch (u) {
	case EA_UNTORN_UNKNOWN:
		break;
	case EA_UNTORN_NONE:
		return "none";
	case EA_UNTORN_HARDWARE:
		return "hardware";
	case EA_UNTORN_SOFTWARE:
		return "software";
	case EA_UNTORN_HARDWARE_SOFTWARE:
		return "hardware+software";
	}
	return "unknown";
}

static enum ea_untorn untorn(struct ea_untorn_verdict *ret, enum ea_untorn by, uint32_t hw_min,
			     uint32_t hw_max, uint32_t sw_min, uint32_t sw_max, const char *reason)
{
	*ret = (struct ea_untorn_verdict){
		.by = by, .sw_min = sw_min, .sw_max = sw_max, .reason = reason
	};
	verdict(&ret->hw, hw_max ? EA_ATOMIC_YES : EA_ATOMIC_NONE, hw_min, hw_max, reason);
	return by;
}

enum ea_untorn ea_atomic_untorn(enum ea_atomic_fs fs, const struct ea_atomic *dev,
				const struct ea_atomic *statx, struct ea_untorn_verdict *ret)
{
	bool dev_yes = dev->state == EA_ATOMIC_YES;
	uint32_t min, max;

	switch (statx->state) {
	case EA_ATOMIC_UNKNOWN:
		return untorn(ret, EA_UNTORN_UNKNOWN, 0, 0, 0, 0, "not measured (--probe)");
	case EA_ATOMIC_UNSUPPORTED:
		return untorn(ret, EA_UNTORN_NONE, 0, 0, 0, 0,
			      "the kernel reports no atomic writes for it (before 6.11?)");
	case EA_ATOMIC_NONE:
		if (dev_yes)
			return untorn(ret, EA_UNTORN_NONE, 0, 0, 0, 0,
				      "the filesystem does not pass the device's atomic writes on");
		if (fs == EA_FS_XFS)
			return untorn(ret, EA_UNTORN_NONE, 0, 0, 0, 0,
				      "device has no atomic writes; XFS's software fallback "
				      "needs reflink (mkfs.xfs -m reflink=1) and Linux 6.16");
		return untorn(ret, EA_UNTORN_NONE, 0, 0, 0, 0,
			      "device has no atomic writes and the filesystem no fallback");
	case EA_ATOMIC_YES:
		break;
	}
	if (!dev_yes)
		return untorn(ret, EA_UNTORN_SOFTWARE, 0, 0, statx->unit_min, statx->unit_max,
			      fs == EA_FS_XFS ? "device has no atomic writes; XFS writes out of "
						"place and swaps the mapping in (slower)"
					      : "device has no atomic writes; done in software");
	min = statx->unit_min > dev->unit_min ? statx->unit_min : dev->unit_min;
	max = statx->unit_max < dev->unit_max ? statx->unit_max : dev->unit_max;
	if (min > max)
		return untorn(ret, fs == EA_FS_XFS ? EA_UNTORN_SOFTWARE : EA_UNTORN_NONE, 0, 0,
			      fs == EA_FS_XFS ? statx->unit_min : 0,
			      fs == EA_FS_XFS ? statx->unit_max : 0,
			      "the file's atomic units and the device's do not overlap");
	if (fs == EA_FS_XFS && statx->unit_max > dev->unit_max)
		return untorn(ret, EA_UNTORN_HARDWARE_SOFTWARE, min, max, statx->unit_min,
			      statx->unit_max,
			      "the device up to its unit where the extent is aligned (extalign "
			      "set/realign), XFS's software fallback for the rest (slower)");
	return untorn(ret, EA_UNTORN_HARDWARE, min, max, 0, 0,
		      fs == EA_FS_XFS ? "the device writes them where the extent is aligned "
					"to the unit (extalign set/realign)"
				      : "the device writes them");
}

int ea_statx(int dirfd, const char *path, int flags, unsigned mask, struct ea_statx *ret)
{
	memset(ret, 0, sizeof(*ret));
	/* glibc's statx() wants its own struct type: go to the kernel directly. */
	if (syscall(SYS_statx, dirfd, path, flags, mask, ret) < 0)
		return negative_errno();
	return 0;
}

enum ea_atomic_state ea_atomic_from_statx(const struct ea_statx *stx, bool is_bdev,
					  struct ea_atomic *ret)
{
	if (!(stx->stx_mask & STATX_WRITE_ATOMIC))
		return verdict(
			ret, EA_ATOMIC_UNSUPPORTED, 0, 0,
			is_bdev ? "statx: kernel or device does not report atomic writes"
				: "statx: kernel or filesystem does not report atomic writes");
	if (!stx->stx_atomic_write_unit_min || !stx->stx_atomic_write_unit_max)
		return verdict(ret, EA_ATOMIC_NONE, 0, 0, "statx: reported, zero unit");
	return verdict(ret, EA_ATOMIC_YES, stx->stx_atomic_write_unit_min,
		       stx->stx_atomic_write_unit_max, "statx: kernel reports these limits");
}

int ea_atomic_statx(int dirfd, const char *path, int flags, struct ea_atomic *ret)
{
	struct ea_statx stx;
	int r;

	r = ea_statx(dirfd, path, flags, STATX_BASIC_STATS | STATX_WRITE_ATOMIC, &stx);
	if (r < 0)
		return r;
	ea_atomic_from_statx(&stx, S_ISBLK(stx.stx_mode), ret);
	return 0;
}

uint32_t ea_atomic_probe_extsize(uint32_t dev_unit_max, uint32_t block_size)
{
	uint32_t e = dev_unit_max ? ea_rounddown_pow2(dev_unit_max) : EA_PROBE_EXTSIZE_DEFAULT;

	if (e > EA_PROBE_EXTSIZE_MAX)
		e = EA_PROBE_EXTSIZE_MAX;
	block_size = ea_rounddown_pow2(block_size);
	if (e < block_size)
		e = block_size;
	return e;
}

const char *ea_probe_file_str(enum ea_probe_file f)
{
	return f == EA_PROBE_HINTED ? "hinted" : "plain";
}

static int open_tmpfile(const char *dir)
{
	int fd;

	/*
	 * O_DIRECT as a database would open it: some filesystems decide at
	 * open time; a filesystem without O_DIRECT fails here, which is an
	 * answer too.
	 */
	fd = open(dir, O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EINVAL)
		fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == EISDIR || errno == EINVAL ? -EOPNOTSUPP : negative_errno();
	return fd;
}

/*
 * Why the hint did not stick.  fd is the probe file the hint failed on; a
 * refusal (EOPNOTSUPP from the ioctl, which is how the VFS and XFS answer
 * an unknown flag) is asked again without forcealign to tell "no
 * forcealign" from "no hints at all".
 */
static const char *probe_note(int fd, uint32_t extsize, int err, unsigned dropped)
{
	struct ea_hint size_only = { .extsize = extsize, .forcealign = -1 };
	unsigned lost;
	int r;

	if (dropped & EA_DROPPED_EXTSIZE)
		return dropped & EA_DROPPED_FORCEALIGN
			       ? "extent size hints and forcealign not supported by this kernel"
			       : "extent size hints not supported by this kernel";
	if (dropped & EA_DROPPED_FORCEALIGN)
		return "forcealign not supported by this kernel";
	switch (err) {
	case -EOPNOTSUPP:
		r = ea_hint_set(fd, false, &size_only, &lost);
		if (r == 0)
			return "forcealign not supported by this kernel";
		if (lost & EA_DROPPED_EXTSIZE)
			return "extent size hints and forcealign not supported by this kernel";
		return "no extent size hints on this filesystem";
	case -ENOTTY:
		return "no extent size hints on this filesystem";
	case -EINVAL:
		return "the filesystem rejected the hint as invalid";
	case -EPERM:
	case -EACCES:
		return "not permitted to set the hint";
	default:
		return "the hint could not be set";
	}
}

int ea_atomic_probe_dir(const char *dir, uint32_t extsize, struct ea_atomic_probe *ret)
{
	const struct ea_hint want = { .extsize = extsize, .forcealign = 1 };
	_cleanup_close_ int fd = -1, plain = -1;
	unsigned dropped;
	int r;

	*ret = (struct ea_atomic_probe){ .file = EA_PROBE_PLAIN, .extsize = extsize };
	if (!is_power_of_2(extsize))
		return -EINVAL;
	fd = open_tmpfile(dir);
	if (fd < 0)
		return fd;
	r = ea_hint_set(fd, false, &want, &dropped);
	if (r == 0) {
		ret->file = EA_PROBE_HINTED;
		return ea_atomic_statx(fd, "", AT_EMPTY_PATH, &ret->atomic);
	}
	ret->hint_err = r;
	ret->dropped = dropped;
	ret->note = probe_note(fd, extsize, r, dropped);

	/* The first file may have kept part of the hint: measure a fresh one. */
	plain = open_tmpfile(dir);
	if (plain < 0)
		return plain;
	return ea_atomic_statx(plain, "", AT_EMPTY_PATH, &ret->atomic);
}
