/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A file's extents from FIEMAP, and how well they fit an alignment unit. */
#ifndef EXTALIGN_EXTENT_H
#define EXTALIGN_EXTENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	EA_EXTENT_LAST = 1 << 0,	 /* FIEMAP_EXTENT_LAST */
	EA_EXTENT_UNWRITTEN = 1 << 1,	 /* allocated, reads as zeros */
	EA_EXTENT_UNKNOWN_PHYS = 1 << 2, /* delalloc, inline, ...: no physical */
	EA_EXTENT_NOT_ALIGNED = 1 << 3,	 /* FIEMAP_EXTENT_NOT_ALIGNED, inline data */
};

struct ea_extent {
	uint64_t logical;  /* bytes */
	uint64_t physical; /* bytes */
	uint64_t length;   /* bytes */
	unsigned flags;
};

/*
 * Read all extents of an open file, with FIEMAP_FLAG_SYNC when it has
 * delayed allocations or shared extents (they are forced to disk first, so
 * physical addresses exist and are the ones the data keeps).
 * *ret is malloc()ed; free it.  Returns 0 or -errno (-EOPNOTSUPP when the
 * filesystem has no FIEMAP).
 */
int ea_fiemap_read(int fd, struct ea_extent **ret, size_t *count);

struct ea_align_report {
	size_t extents;		    /* after merging contiguous neighbours */
	size_t misaligned_logical;  /* logical start or length off the unit */
	size_t misaligned_physical; /* physical start or length off the unit */
	size_t unknown_physical;    /* no physical address to judge */
	uint64_t mapped_bytes;
};

/*
 * Judge extents against unit (bytes, a power of two).  Neighbours that are
 * contiguous both logically and physically are merged first: filesystems split
 * extents for their own reasons (ext4's written/unwritten boundary and its
 * 32768-block limit), which does not break a unit.  An extent is misaligned
 * when its start is not a multiple of unit or its length is not, except for
 * the extent that reaches end of file, which may stop short.
 */
void ea_align_analyze(const struct ea_extent *ext, size_t n, uint64_t unit, uint64_t file_size,
		      struct ea_align_report *ret);

static inline bool ea_align_report_ok(const struct ea_align_report *r)
{
	return !r->misaligned_logical && !r->misaligned_physical && !r->unknown_physical;
}

#endif
