/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Block devices as sysfs describes them, mounted filesystems as the mount
 * table lists them, and the superblock facts atomic write limits depend on.
 *
 * Every sysfs reader takes a sysroot ("" or NULL for the live system) and
 * reads SYSROOT/sys/block/<disk>[/<partition>]/..., so that captured trees
 * (tests/data/sysroot/) go through exactly the code the live system does.
 */
#ifndef EXTALIGN_BLOCKDEV_H
#define EXTALIGN_BLOCKDEV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "extalign/atomic.h"

enum ea_bdev_type {
	EA_BDEV_DISK,
	EA_BDEV_PART,
	EA_BDEV_LOOP,
	EA_BDEV_DM,
	EA_BDEV_MD,
};

/* "disk", "part", "loop", "dm", "md" (lsblk's TYPE words where they exist). */
const char *ea_bdev_type_str(enum ea_bdev_type t);

struct ea_bdev {
	char name[NAME_MAX + 1]; /* kernel name: "nvme0n1p1" */
	char disk[NAME_MAX + 1]; /* whole disk; equals name unless a partition */
	enum ea_bdev_type type;
	unsigned major, minor;
	uint64_t size;	/* bytes */
	uint64_t start; /* partitions: offset into the disk, 512-byte sectors */
	uint32_t logical_block;
	uint32_t physical_block;
	struct ea_atomic_queue queue; /* the disk's queue: partitions have none */
	struct ea_atomic atomic;      /* the verdict for this device */
};

/*
 * Read the queue's atomic write limits of a whole disk (or stacked device).
 * A kernel without the files gives present = false and returns 0; other read
 * failures return -errno.
 */
int ea_queue_read(const char *sysroot, const char *disk, struct ea_atomic_queue *ret);

/*
 * Read one device by kernel name, disk or partition, and compute its
 * verdict.  Returns 0, -ENODEV when there is no such device, or -errno.
 */
int ea_bdev_read(const char *sysroot, const char *name, struct ea_bdev *ret);

/*
 * Every block device: disks in name order, each followed by its partitions
 * in start order.  *ret is malloc()ed; free it.  Returns 0 or -errno.
 */
int ea_bdev_list(const char *sysroot, struct ea_bdev **ret, size_t *count);

/* The index of the device with that number in list, or -1. */
ssize_t ea_bdev_find(const struct ea_bdev *list, size_t n, unsigned major, unsigned minor);

/* Superblock facts from libblkid and, for ext4 clusters, the superblock. */
struct ea_super {
	char type[32];	       /* "ext4", "xfs", ... ; "" when nothing found */
	uint32_t block_size;   /* ext2/3/4 only (from the superblock); else 0 */
	uint32_t cluster_size; /* ext4 bigalloc cluster; block_size otherwise */
};

/* Probe a device node (needs read access to it). Returns 0 or -errno. */
int ea_super_read(const char *devnode, struct ea_super *ret);

/*
 * Parse the ext4 superblock fields we need from its 1024 bytes (at byte
 * 1024 of the device): block size and, with bigalloc, the cluster size.
 * Returns 0, or -EINVAL when sb is not a plausible ext2/3/4 superblock.
 */
int ea_ext4_super_parse(const unsigned char *sb, size_t len, struct ea_super *ret);

/* A mounted filesystem backed by a block device. */
struct ea_mount {
	char *target;
	char *fstype;
	unsigned major, minor;
};

/*
 * The mount table (mountinfo at path, or the live /proc/self/mountinfo for
 * NULL), one entry per device number: the first mount of each filesystem
 * (bind mounts repeat it).  Filesystems without a device number from a block
 * major (tmpfs, proc: major 0) are left out.  Returns 0 or -errno; free with
 * ea_mounts_free().
 */
int ea_mounts_read(const char *path, struct ea_mount **ret, size_t *count);
void ea_mounts_free(struct ea_mount *m, size_t count);

#endif
