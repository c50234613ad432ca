// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: ea_align_analyze() on arbitrary extent lists, as a buggy
 * or hostile FIEMAP could return them (overlaps, zero lengths, wrap-around).
 * The counters must stay consistent with the input.
 */
#include <stdlib.h>
#include <string.h>

#include "extalign/extent.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len)
{
	const size_t rec = 3 * sizeof(uint64_t) + 1;
	size_t n = len > 9 ? (len - 9) / rec : 0;
	struct ea_extent *ext;
	struct ea_align_report r;
	uint64_t size = 0;
	unsigned shift;

	if (len < 9)
		return 0;
	shift = data[0] % 40;
	memcpy(&size, data + 1, sizeof(size));
	data += 9;
	ext = calloc(n ? n : 1, sizeof(*ext));
	if (!ext)
		return 0;
	for (size_t i = 0; i < n; i++, data += rec) {
		memcpy(&ext[i].logical, data, 8);
		memcpy(&ext[i].physical, data + 8, 8);
		memcpy(&ext[i].length, data + 16, 8);
		ext[i].flags = data[24] & 0x0f;
	}
	ea_align_analyze(ext, n, 1ULL << shift, size, &r);
	if (r.extents > n || r.misaligned_logical > r.extents ||
	    r.misaligned_physical + r.unknown_physical > r.extents)
		abort();
	/* Everything is a multiple of 1; only flags can make it misaligned. */
	if (shift == 0 && r.misaligned_logical)
		abort();
	free(ext);
	return 0;
}
