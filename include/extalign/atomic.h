/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Hardware atomic ("untorn") write limits: what a block device offers, what a
 * partition on it keeps, what a filesystem passes on to its files, and what
 * statx(STATX_WRITE_ATOMIC) says when asked.
 *
 * Three outcomes are kept apart everywhere, because they call for different
 * actions: the kernel does not report the feature at all (upgrade the
 * kernel), it reports it and the answer is "cannot" (other hardware, other
 * layout), or it reports usable limits.
 */
#ifndef EXTALIGN_ATOMIC_H
#define EXTALIGN_ATOMIC_H

#include <stdbool.h>
#include <stdint.h>

#include "extalign/uapi.h"

/*
 * struct statx as in the kernel's include/uapi/linux/stat.h since 6.11.
 * glibc 2.36's struct statx stops at stx_dio_offset_align and a newer glibc
 * may or may not have the atomic fields, so we use our own type and call
 * the system call directly rather than depend on either.
 */
struct ea_statx_timestamp {
	int64_t tv_sec;
	uint32_t tv_nsec;
	int32_t __reserved;
};

struct ea_statx {
	uint32_t stx_mask;
	uint32_t stx_blksize;
	uint64_t stx_attributes;
	uint32_t stx_nlink;
	uint32_t stx_uid;
	uint32_t stx_gid;
	uint16_t stx_mode;
	uint16_t __spare0[1];
	uint64_t stx_ino;
	uint64_t stx_size;
	uint64_t stx_blocks;
	uint64_t stx_attributes_mask;
	struct ea_statx_timestamp stx_atime;
	struct ea_statx_timestamp stx_btime;
	struct ea_statx_timestamp stx_ctime;
	struct ea_statx_timestamp stx_mtime;
	uint32_t stx_rdev_major;
	uint32_t stx_rdev_minor;
	uint32_t stx_dev_major;
	uint32_t stx_dev_minor;
	uint64_t stx_mnt_id;
	uint32_t stx_dio_mem_align;
	uint32_t stx_dio_offset_align;
	uint64_t stx_subvol;
	uint32_t stx_atomic_write_unit_min;
	uint32_t stx_atomic_write_unit_max;
	uint32_t stx_atomic_write_segments_max;
	uint32_t __spare1[1];
	uint64_t __spare3[9];
};

enum ea_atomic_state {
	EA_ATOMIC_UNKNOWN,     /* not determined (not probed, no data) */
	EA_ATOMIC_UNSUPPORTED, /* the kernel does not report atomic writes */
	EA_ATOMIC_NONE,	       /* reported, and the answer is no */
	EA_ATOMIC_YES,	       /* unit_min..unit_max usable */
};

/* "unknown", "unsupported", "none", "yes". */
const char *ea_atomic_state_str(enum ea_atomic_state s);

/* What a block device's queue says, from sysfs queue/atomic_write_*. */
struct ea_atomic_queue {
	bool present; /* the kernel has the sysfs files (6.11 and later) */
	uint32_t unit_min;
	uint32_t unit_max;
	uint32_t boundary; /* 0: the device has no boundary */
	uint32_t max_bytes;
};

/*
 * A verdict (the compute functions also return its state): the state, the
 * unit range when YES, and why, in words.
 */
struct ea_atomic {
	enum ea_atomic_state state;
	uint32_t unit_min;
	uint32_t unit_max;
	const char *reason; /* static string, never NULL after a compute call */
};

/*
 * The verdict for a whole device (partition false, start ignored) or for a
 * partition starting at start_sect 512-byte sectors into its disk.  The
 * kernel refuses atomic writes on a partition whose start is not a multiple
 * of max(unit_min, boundary) (bdev_can_atomic_write()): a write aligned in
 * the partition would then be misaligned on the disk.
 */
enum ea_atomic_state ea_atomic_for_bdev(const struct ea_atomic_queue *q, bool partition,
					uint64_t start_sect, struct ea_atomic *ret);

/* Filesystem facts the limit rules need. */
enum ea_atomic_fs {
	EA_FS_OTHER,
	EA_FS_EXT4,
	EA_FS_XFS,
};

struct ea_atomic_fsfacts {
	enum ea_atomic_fs fs;
	uint32_t block_size;
	uint32_t cluster_size; /* ext4 bigalloc; 0 or block_size without bigalloc */
	uint32_t extsize;      /* a file's extent size hint in bytes, 0 for none */
	bool forcealign;       /* the file has FS_XFLAG_FORCEALIGN (kernel keeps it) */
};

/*
 * The atomic write unit range a file on that filesystem can get, given the
 * verdict for the device below it:
 * - ext4: [max(block, dev min), largest power of two <= min(cluster, dev max)],
 *   which without bigalloc is one block when the device range holds it;
 * - ext4 file with extsize and forcealign (our kernel series): up to the
 *   largest power of two <= min(extsize, dev max);
 * - XFS: whatever its kernel reports; only a statx probe can tell (UNKNOWN);
 * - others: NONE.
 */
enum ea_atomic_state ea_atomic_for_fs(const struct ea_atomic_fsfacts *f,
				      const struct ea_atomic *dev, struct ea_atomic *ret);

/*
 * Who keeps a write untorn for one file, decided once statx has answered for
 * that file (a probe or the file itself):
 * - statx not YES: NONE (the reason says whether the device or the filesystem
 *   is short);
 * - the device below has atomic writes: HARDWARE for the units both offer,
 *   [max(statx min, device min), min(statx max, device max)]; on XFS, a
 *   statx maximum above the device's is its software fallback: HARDWARE_SOFTWARE,
 *   the device up to its maximum where the extent is aligned, software for
 *   the rest of the statx range;
 * - the device has none and statx still says yes: SOFTWARE (XFS since 6.16
 *   with reflink writes out of place and swaps the mapping in).
 * A database that drops its doublewrite buffer is safe with any of the
 * three; only HARDWARE is as fast as a plain write.
 */
enum ea_untorn {
	EA_UNTORN_UNKNOWN, /* statx not asked or not answered */
	EA_UNTORN_NONE,
	EA_UNTORN_HARDWARE,
	EA_UNTORN_SOFTWARE,
	EA_UNTORN_HARDWARE_SOFTWARE,
};

/* "unknown", "none", "hardware", "software", "hardware+software". */
const char *ea_untorn_str(enum ea_untorn u);

struct ea_untorn_verdict {
	enum ea_untorn by;
	struct ea_atomic hw; /* YES with the device's part, else NONE; reason as below */
	uint32_t sw_min;     /* the software range, 0 when there is none */
	uint32_t sw_max;
	const char *reason; /* static string */
};

enum ea_untorn ea_atomic_untorn(enum ea_atomic_fs fs, const struct ea_atomic *dev,
				const struct ea_atomic *statx, struct ea_untorn_verdict *ret);

/* Largest power of two <= x; 0 for 0. */
uint32_t ea_rounddown_pow2(uint32_t x);

/* statx(2) with our struct; returns 0 or -errno (-ENOSYS before Linux 4.11). */
int ea_statx(int dirfd, const char *path, int flags, unsigned mask, struct ea_statx *ret);

/*
 * Turn a statx answer into a verdict: STATX_WRITE_ATOMIC missing from
 * stx_mask is UNSUPPORTED, present with a zero unit is NONE.  is_bdev
 * matters because block device nodes leave the bit clear when the device
 * cannot (Linux 6.11 to at least 6.12), so there it means "none or
 * unsupported" and the reason says so.
 */
enum ea_atomic_state ea_atomic_from_statx(const struct ea_statx *stx, bool is_bdev,
					  struct ea_atomic *ret);

/* ea_statx() and ea_atomic_from_statx() in one: path relative to dirfd. */
int ea_atomic_statx(int dirfd, const char *path, int flags, struct ea_atomic *ret);

/*
 * The extent size hint a probe gives its file: the device's atomic unit
 * maximum when known (dev_unit_max, 0 for unknown), else
 * EA_PROBE_EXTSIZE_DEFAULT; rounded down to a power of two, at most
 * EA_PROBE_EXTSIZE_MAX and at least the filesystem block size (0: unknown).
 * The block layer never offers atomic units above 1 MiB (BIO_MAX_VECS pages),
 * so a larger hint would measure nothing more.
 */
#define EA_PROBE_EXTSIZE_DEFAULT (64u * 1024)
#define EA_PROBE_EXTSIZE_MAX	 (1024u * 1024)
uint32_t ea_atomic_probe_extsize(uint32_t dev_unit_max, uint32_t block_size);

/* Which file a probe measured. */
enum ea_probe_file {
	EA_PROBE_HINTED, /* one with the extent size hint and forcealign, both kept */
	EA_PROBE_PLAIN,	 /* the kernel refused or dropped them: a plain file */
};

/* "hinted", "plain". */
const char *ea_probe_file_str(enum ea_probe_file f);

struct ea_atomic_probe {
	struct ea_atomic atomic; /* statx's verdict for the file measured */
	enum ea_probe_file file;
	uint32_t extsize; /* the hint asked for, bytes */
	/* PLAIN only: why. */
	int hint_err;	  /* ea_hint_set()'s -errno */
	unsigned dropped; /* EA_DROPPED_* the kernel accepted and did not keep */
	const char *note; /* static words, e.g. "forcealign not supported by this kernel" */
};

/*
 * Probe a filesystem the way a database would use it: an unnamed O_TMPFILE
 * in directory dir (never visible, gone on close) gets extsize (a power of
 * two, see ea_atomic_probe_extsize()) and FS_XFLAG_FORCEALIGN through
 * ea_hint_set(), which reads them back, and then statx tells what such a
 * file can write atomically.  When the kernel refuses or drops either, the
 * answer is that of a second, plain tmpfile (the first may keep half the
 * hint), ret->file is EA_PROBE_PLAIN and ret->note says why.  Returns 0 or
 * -errno (-EOPNOTSUPP when the filesystem has no O_TMPFILE, -EINVAL for an
 * extsize that is not a power of two).
 */
int ea_atomic_probe_dir(const char *dir, uint32_t extsize, struct ea_atomic_probe *ret);

#endif
