/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What kind of filesystem an open file lives on, and what it can do. */
#ifndef EXTALIGN_FSINFO_H
#define EXTALIGN_FSINFO_H

#include <linux/magic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Headers older than the magic, should one be met: the one fallback. */
#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif

struct ea_fsinfo {
	unsigned long magic; /* statfs f_type */
	const char *type;    /* "ext4", "xfs", ... or "unknown" */
	uint64_t blksize;    /* filesystem block size in bytes */
	dev_t dev;	     /* st_dev of the file */
};

int ea_fsinfo_from_fd(int fd, struct ea_fsinfo *ret);

/*
 * The facts of a few filesystems by device (st_dev), for a command that
 * handles many files in one run: one fstatfs() per filesystem instead of one
 * per file.  Zero-initialise it.  Not for a long-running program: a device
 * number is reused by the next filesystem mounted after an unmount.
 */
struct ea_fsinfo_cache {
	struct ea_fsinfo e[8];
	size_t n, next;
};

/* ea_fsinfo_from_fd() for fd, whose st_dev the caller has already read. */
int ea_fsinfo_cached(struct ea_fsinfo_cache *c, int fd, dev_t dev, struct ea_fsinfo *ret);

/* The filesystem name for a statfs magic, "unknown" if we do not know it. */
const char *ea_fs_type_name(unsigned long magic);

/* Filesystems whose kernel code has extent size hints at all. */
bool ea_fs_may_support_extsize(unsigned long magic);

#endif
