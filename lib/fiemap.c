// SPDX-License-Identifier: LGPL-2.1-or-later
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>

#include "extalign/extent.h"
#include "extalign/macro.h"

/*
 * Extents fetched per ioctl.  Most files have a handful: the first call asks
 * for 32 (a 1.8 KiB buffer, cheap to clear).  A file that fills it has more,
 * and each further call asks for four times as many, up to 4096 (224 KiB),
 * so a file of 20,000 extents takes 6 calls, not 80.
 */
#define FIEMAP_FIRST_BATCH 32
#define FIEMAP_MAX_BATCH   4096

static unsigned convert_flags(uint32_t f)
{
	unsigned flags = 0;

	if (f & FIEMAP_EXTENT_LAST)
		flags |= EA_EXTENT_LAST;
	if (f & FIEMAP_EXTENT_UNWRITTEN)
		flags |= EA_EXTENT_UNWRITTEN;
	if (f & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_ENCODED))
		flags |= EA_EXTENT_UNKNOWN_PHYS;
	if (f & (FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL))
		flags |= EA_EXTENT_NOT_ALIGNED;
	return flags;
}

int ea_fiemap_read(int fd, struct ea_extent **ret, size_t *count)
{
	/*
	 * The first batch on the stack: a malloc() of 1.8 KiB is past glibc's
	 * per-thread cache, and check asks this once per file (perf showed
	 * _int_malloc and _int_free beside the ioctl).
	 */
	_Alignas(struct fiemap) unsigned char
		first[sizeof(struct fiemap) + FIEMAP_FIRST_BATCH * sizeof(struct fiemap_extent)];
	_cleanup_free_ struct fiemap *heap = NULL;
	_cleanup_free_ struct ea_extent *out = NULL;
	struct fiemap *fm = NULL;
	size_t n = 0, cap = 0, batch = 0, fm_size = 0;
	uint64_t start = 0;
	uint32_t sync = 0, asked;
	bool last = false;

	/*
	 * First without FIEMAP_FLAG_SYNC: writing back a clean file still
	 * walks its page cache, a share of check's time over many small
	 * files.  Only an extent with no settled place (delayed allocation,
	 * or shared, which a write in the page cache will move) sends us back
	 * to the start to ask again with the sync.
	 */
	while (!last) {
		if (!fm) {
			batch = FIEMAP_FIRST_BATCH;
			fm_size = sizeof(first);
			fm = (struct fiemap *)first;
		} else if (fm->fm_mapped_extents == batch && batch < FIEMAP_MAX_BATCH) {
			batch *= 4;
			if (batch > FIEMAP_MAX_BATCH)
				batch = FIEMAP_MAX_BATCH;
			fm_size = sizeof(*fm) + batch * sizeof(struct fiemap_extent);
			free(heap);
			fm = heap = malloc(fm_size);
			if (!fm)
				return -ENOMEM;
		}
		/*
		 * All of it, not just the header: the extents are written by
		 * the kernel, which valgrind cannot see through this ioctl.
		 */
		memset(fm, 0, fm_size);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = asked = sync;
		fm->fm_extent_count = (uint32_t)batch;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0)
			return errno == ENOTTY ? -EOPNOTSUPP : negative_errno();
		if (fm->fm_mapped_extents == 0)
			break;

		if (n + fm->fm_mapped_extents > cap) {
			/* A file of one call gets what it has, a small allocation. */
			size_t ncap = cap ? cap * 2
				      : fm->fm_extents[fm->fm_mapped_extents - 1].fe_flags &
						      FIEMAP_EXTENT_LAST
					      ? fm->fm_mapped_extents
					      : FIEMAP_FIRST_BATCH;
			struct ea_extent *p;

			while (ncap < n + fm->fm_mapped_extents)
				ncap *= 2;
			p = reallocarray(out, ncap, sizeof(*out));
			if (!p)
				return -ENOMEM;
			out = p;
			cap = ncap;
		}
		for (unsigned i = 0; i < fm->fm_mapped_extents && !sync; i++)
			if (fm->fm_extents[i].fe_flags &
			    (FIEMAP_EXTENT_DELALLOC | FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_SHARED))
				sync = FIEMAP_FLAG_SYNC;
		if (sync != asked) {
			n = 0;
			start = 0;
			continue;
		}
		for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
			const struct fiemap_extent *fe = &fm->fm_extents[i];

			out[n++] = (struct ea_extent){
				.logical = fe->fe_logical,
				.physical = fe->fe_physical,
				.length = fe->fe_length,
				.flags = convert_flags(fe->fe_flags),
			};
			if (fe->fe_flags & FIEMAP_EXTENT_LAST)
				last = true;
			start = fe->fe_logical + fe->fe_length;
		}
	}
	*ret = TAKE_PTR(out);
	*count = n;
	return 0;
}
