// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "extalign/extent.h"

static bool contiguous(const struct ea_extent *a, const struct ea_extent *b)
{
	if (a->logical + a->length != b->logical)
		return false;
	if ((a->flags | b->flags) & (EA_EXTENT_UNKNOWN_PHYS | EA_EXTENT_NOT_ALIGNED))
		return false;
	return a->physical + a->length == b->physical;
}

static bool off_unit(uint64_t start, uint64_t end, uint64_t unit, bool reaches_eof)
{
	if (start % unit)
		return true;
	return !reaches_eof && (end - start) % unit;
}

void ea_align_analyze(const struct ea_extent *ext, size_t n, uint64_t unit, uint64_t file_size,
		      struct ea_align_report *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!unit)
		unit = 1;

	for (size_t i = 0; i < n;) {
		struct ea_extent cur = ext[i];
		uint64_t end;
		bool reaches_eof;

		/* Fold in every neighbour that continues this run on disk. */
		for (i++; i < n && contiguous(&cur, &ext[i]); i++) {
			cur.length += ext[i].length;
			cur.flags |= ext[i].flags & EA_EXTENT_LAST;
		}
		end = cur.logical + cur.length;
		reaches_eof = end >= file_size || (cur.flags & EA_EXTENT_LAST);

		ret->extents++;
		ret->mapped_bytes += cur.length;
		if (off_unit(cur.logical, end, unit, reaches_eof))
			ret->misaligned_logical++;
		if (cur.flags & EA_EXTENT_NOT_ALIGNED)
			ret->misaligned_physical++;
		else if (cur.flags & EA_EXTENT_UNKNOWN_PHYS)
			ret->unknown_physical++;
		else if (off_unit(cur.physical, cur.physical + cur.length, unit, reaches_eof))
			ret->misaligned_physical++;
	}
}
