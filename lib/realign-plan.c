// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a copy reads and what it allocates, decided before it starts.
 *
 * The copy allocates whole units (fallocate, unwritten) before writing
 * into them.  Writing small runs into a file with an extent size hint
 * leaves placement to the allocator's "near the inode" search, which on
 * stripe-aligned XFS happily hands out a unit-sized free piece that starts
 * off the stripe unit; an allocation of whole units at end of file is the
 * one XFS aligns to the stripe.  The same allocation keeps the original's
 * unwritten preallocation: its unwritten extents are allocated on the copy
 * too, and only the data is written.
 *
 * The plan also tells how much space the copy needs, which is what the
 * free-space check before a copy compares with what is free.
 */
#include <errno.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "extalign/fsinfo.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/size.h"
#include "realign-internal.h"

int ea_ranges_read(int fd, uint64_t size, struct ea_range **ret, size_t *n)
{
	_cleanup_free_ struct ea_range *r = NULL;
	size_t cnt = 0, cap = 0;
	off_t pos = 0;

	while ((uint64_t)pos < size) {
		off_t data = lseek(fd, pos, SEEK_DATA), hole;

		if (data < 0) {
			if (errno == ENXIO) /* nothing but hole up to EOF */
				break;
			if (errno != EINVAL && errno != EOPNOTSUPP)
				return negative_errno();
			/* No SEEK_DATA here: treat it all as data. */
			data = pos;
			hole = (off_t)size;
		} else {
			hole = lseek(fd, data, SEEK_HOLE);
			if (hole < 0)
				return negative_errno();
		}
		if ((uint64_t)data >= size)
			break;
		if ((uint64_t)hole > size)
			hole = (off_t)size;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct ea_range *p = reallocarray(r, ncap, sizeof(*r));

			if (!p)
				return -ENOMEM;
			r = p;
			cap = ncap;
		}
		r[cnt++] = (struct ea_range){ (uint64_t)data, (uint64_t)hole };
		pos = hole;
	}
	*ret = TAKE_PTR(r);
	*n = cnt;
	return 0;
}

static uint64_t round_down(uint64_t v, uint64_t a)
{
	return v / a * a;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static int push(struct ea_range **r, size_t *n, size_t *cap, uint64_t start, uint64_t end)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct ea_range *p = reallocarray(*r, ncap, sizeof(**r));

		if (!p)
			return -ENOMEM;
		*r = p;
		*cap = ncap;
	}
	(*r)[(*n)++] = (struct ea_range){ start, end };
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct ea_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static uint64_t ranges_bytes(const struct ea_range *r, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += r[i].end - r[i].start;
	return total;
}

/*
 * Preallocation past end of file is the user's (fallocate --keep-size) on
 * ext4; on XFS it may also be the allocator's speculative preallocation,
 * which XFS trims by itself unless the file is marked PREALLOC.
 */
static bool keeps_post_eof(int fd)
{
	struct ea_fsinfo fs;
	struct fsxattr fsx;

	if (ea_fsinfo_from_fd(fd, &fs) < 0)
		return false;
	if (fs.magic != XFS_SUPER_MAGIC)
		return true;
	return ea_fsx_get(fd, &fsx) == 0 && (fsx.fsx_xflags & FS_XFLAG_PREALLOC);
}

/*
 * SEEK_DATA counts unwritten extents as data once their zero pages are in
 * the page cache (anybody read the file); copying them would turn the
 * preallocation into written zeros.  Take them out of the data ranges.
 */
static int subtract_unwritten(struct ea_range **data, size_t *n, const struct ea_extent *ext,
			      size_t n_ext)
{
	_cleanup_free_ struct ea_range *in = *data;
	struct ea_range *out = NULL;
	size_t cnt = 0, cap = 0;
	int r;

	*data = NULL;
	for (size_t i = 0; i < *n; i++) {
		uint64_t s = in[i].start, e = in[i].end;

		for (size_t k = 0; k < n_ext && s < e; k++) {
			uint64_t us = ext[k].logical, ue = us + ext[k].length;

			if (!(ext[k].flags & EA_EXTENT_UNWRITTEN) || ue <= s || us >= e)
				continue;
			if (us > s) {
				r = push(&out, &cnt, &cap, s, us);
				if (r < 0)
					goto fail;
			}
			s = ue;
		}
		if (s < e) {
			r = push(&out, &cnt, &cap, s, e);
			if (r < 0)
				goto fail;
		}
	}
	*data = out;
	*n = cnt;
	return 0;
fail:
	free(out);
	*n = 0;
	return r;
}

void rl_plan_free(struct rl_plan *p)
{
	free(p->data);
	free(p->alloc);
	*p = (struct rl_plan){ 0 };
}

int rl_plan_make(int fd, uint64_t size, uint64_t unit, uint64_t data_align, struct rl_plan *p)
{
	_cleanup_free_ struct ea_extent *ext = NULL;
	struct ea_range *alloc = NULL;
	size_t n_ext = 0, n = 0, cap = 0, out = 0;
	bool post_eof;
	int r;

	*p = (struct rl_plan){ 0 };
	/* First: FIEMAP_FLAG_SYNC writes dirty pages, so unwritten means zeros. */
	r = ea_fiemap_read(fd, &ext, &n_ext);
	if (r < 0 && r != -EOPNOTSUPP)
		return r;
	r = ea_ranges_read(fd, size, &p->data, &p->n_data);
	if (r < 0)
		return r;
	r = subtract_unwritten(&p->data, &p->n_data, ext, n_ext);
	if (r < 0)
		goto fail;
	p->n_data =
		ea_ranges_align(p->data, p->n_data, data_align ? data_align : EA_CSUM_ALIGN, size);
	p->data_bytes = ranges_bytes(p->data, p->n_data);
	post_eof = keeps_post_eof(fd);
	for (size_t i = 0; i < p->n_data; i++) {
		r = push(&alloc, &n, &cap, p->data[i].start, p->data[i].end);
		if (r < 0)
			goto fail;
	}
	for (size_t i = 0; i < n_ext; i++) {
		uint64_t s = ext[i].logical, e = s + ext[i].length;

		if (!(ext[i].flags & EA_EXTENT_UNWRITTEN))
			continue;
		if (!post_eof && e > round_up(size, unit))
			e = round_up(size, unit);
		if (s >= e)
			continue;
		/* The allocator's own past EOF is allocated, not counted as kept. */
		if (post_eof || s < size)
			p->prealloc_bytes += (post_eof || e < size ? e : size) - s;
		r = push(&alloc, &n, &cap, s, e);
		if (r < 0)
			goto fail;
	}
	/* Whole units, sorted, merged where they touch. */
	qsort(alloc, n, sizeof(*alloc), cmp_range);
	for (size_t i = 0; i < n; i++) {
		uint64_t s = round_down(alloc[i].start, unit), e = round_up(alloc[i].end, unit);

		if (out && s <= alloc[out - 1].end) {
			if (e > alloc[out - 1].end)
				alloc[out - 1].end = e;
			continue;
		}
		alloc[out++] = (struct ea_range){ s, e };
	}
	p->alloc = alloc;
	p->n_alloc = out;
	p->alloc_bytes = ranges_bytes(alloc, out);
	return 0;

fail:
	free(alloc);
	rl_plan_free(p);
	return r;
}

/*
 * Room for the extent maps the allocation adds: a few blocks per thousand
 * extents at worst, and the copy has at most one extent per unit.
 */
static uint64_t margin(uint64_t alloc)
{
	return alloc / 256 + 65536;
}

int rl_space_of(int fd, const struct rl_plan *p, struct ea_realign_space *sp)
{
	struct statvfs sv;

	sp->copy = p->data_bytes;
	sp->prealloc = p->prealloc_bytes;
	sp->needed = p->alloc_bytes ? p->alloc_bytes + margin(p->alloc_bytes) : 0;
	if (fstatvfs(fd, &sv) < 0)
		return negative_errno();
	/* f_bavail: the blocks for everyone, not ext4's reserve for root. */
	sp->available = (uint64_t)sv.f_bavail * sv.f_frsize;
	return sp->needed > sp->available ? -ENOSPC : 0;
}

int ea_realign_space_check(int fd, uint32_t extsize, struct ea_realign_space *sp)
{
	struct rl_plan p;
	struct stat st;
	int r;

	memset(sp, 0, sizeof(*sp));
	if (ea_extsize_check(extsize, 0) != EA_EXTSIZE_OK)
		return -EINVAL;
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	r = rl_plan_make(fd, (uint64_t)st.st_size, extsize, 8, &p);
	if (r < 0)
		return r;
	r = rl_space_of(fd, &p, sp);
	rl_plan_free(&p);
	return r;
}
