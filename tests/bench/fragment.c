// SPDX-License-Identifier: GPL-2.0
/*
 * fragment: the worst case of the scale benchmark (tests/bench/scale.sh),
 * free space in initialized groups without one free aligned unit.
 *
 *   fragment FILE BYTES UNIT
 *
 * Creates FILE, preallocates BYTES with fallocate (unwritten extents, no
 * data written), then punches holes so that of every UNIT-aligned run of
 * physical blocks the file keeps exactly one block: the first of the run,
 * or the first block of an extent that starts inside the run.
 *
 * The preallocation goes half a UNIT less one block at a time: a request
 * that is not a power of two is not served from aligned buddy chunks, so
 * on a linear scan (mount -o mb_optimize_scan=0, no stream allocation: the
 * caller's part) each request takes a free run it fits in, from its goal
 * on, in the first group of a flex_bg too (which a power of two data
 * request skips).  mballoc leaves a group with up to about twice the
 * request free at its end before it goes on to the next one: with half a
 * UNIT that tail holds no aligned UNIT.  The caller checks the result
 * (scale-guest.sh counts the groups that still have a free aligned unit).
 * What is
 * left free is (UNIT - 1) / UNIT of the space in runs shorter than UNIT,
 * so an allocator looking for UNIT bytes aligned to UNIT finds none there
 * however much its group descriptors say is free.  The physical layout
 * comes from FIEMAP, so extents that start unaligned (around group
 * metadata) keep the rule too.  Prints "extents=N punches=N kept=N
 * kept_bytes=N first_block=B last_block=B" (the lowest and highest
 * physical block of the file: where the fill lies); exits 1 on any error,
 * naming it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <err.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

struct ext {
	uint64_t logical, physical, length; /* bytes */
};

/* All extents of @fd, before any punch changes them. */
static struct ext *map_file(int fd, const char *path, size_t *count)
{
	enum { BATCH = 512 };
	struct fiemap *fm;
	struct ext *exts = NULL;
	size_t n = 0, cap = 0;
	uint64_t start = 0;
	int last = 0;

	fm = calloc(1, sizeof(*fm) + BATCH * sizeof(struct fiemap_extent));
	if (!fm)
		errx(1, "no memory");
	while (!last) {
		memset(fm, 0, sizeof(*fm));
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm))
			err(1, "%s: FS_IOC_FIEMAP", path);
		if (!fm->fm_mapped_extents)
			break;
		for (unsigned int i = 0; i < fm->fm_mapped_extents; i++) {
			struct fiemap_extent *fe = &fm->fm_extents[i];

			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				exts = realloc(exts, cap * sizeof(*exts));
				if (!exts)
					errx(1, "no memory for %zu extents", cap);
			}
			exts[n++] = (struct ext){ fe->fe_logical, fe->fe_physical, fe->fe_length };
			start = fe->fe_logical + fe->fe_length;
			if (fe->fe_flags & FIEMAP_EXTENT_LAST)
				last = 1;
		}
	}
	free(fm);
	*count = n;
	return exts;
}

static void punch(int fd, const char *path, uint64_t off, uint64_t len)
{
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, len))
		err(1, "%s: punch %llu+%llu", path, (unsigned long long)off,
		    (unsigned long long)len);
}

int main(int argc, char **argv)
{
	unsigned long long punches = 0, kept = 0, blksize;
	uint64_t lowest = UINT64_MAX, highest = 0;
	uint64_t bytes, unit;
	struct ext *exts;
	struct stat st;
	size_t n;
	int fd;

	if (argc != 4)
		errx(2, "usage: fragment FILE BYTES UNIT");
	bytes = strtoull(argv[2], NULL, 0);
	unit = strtoull(argv[3], NULL, 0);
	fd = open(argv[1], O_CREAT | O_EXCL | O_RDWR, 0644);
	if (fd < 0)
		err(1, "%s", argv[1]);
	if (fstat(fd, &st))
		err(1, "%s: stat", argv[1]);
	blksize = st.st_blksize;
	if (unit < 4 * blksize || unit % blksize || unit & (unit - 1))
		errx(2, "UNIT %llu: a power of two of 4 blocks of %llu bytes or more",
		     (unsigned long long)unit, blksize);
	for (uint64_t off = 0, step = unit / 2 - blksize; off < bytes; off += step) {
		uint64_t len = bytes - off < step ? bytes - off : step;

		if (fallocate(fd, 0, off, len))
			err(1, "%s: fallocate %llu+%llu", argv[1], (unsigned long long)off,
			    (unsigned long long)len);
	}
	exts = map_file(fd, argv[1], &n);

	for (size_t i = 0; i < n; i++) {
		uint64_t pend = exts[i].physical + exts[i].length;
		/* Keep the extent's first block, whatever its alignment. */
		uint64_t keep = exts[i].physical;

		if (exts[i].physical < lowest)
			lowest = exts[i].physical;
		if (pend > highest)
			highest = pend;

		while (keep < pend) {
			uint64_t next = (keep / unit + 1) * unit;
			uint64_t from = keep + blksize;
			uint64_t to = next < pend ? next : pend;

			kept++;
			if (to > from) {
				punch(fd, argv[1], exts[i].logical + (from - exts[i].physical),
				      to - from);
				punches++;
			}
			keep = next;
		}
	}
	if (fsync(fd))
		err(1, "%s: fsync", argv[1]);
	if (!n)
		errx(1, "%s: no extents after fallocate", argv[1]);
	printf("extents=%zu punches=%llu kept=%llu kept_bytes=%llu first_block=%llu "
	       "last_block=%llu\n",
	       n, punches, kept, kept * blksize, (unsigned long long)(lowest / blksize),
	       (unsigned long long)(highest / blksize - 1));
	free(exts);
	return close(fd) ? 1 : 0;
}
