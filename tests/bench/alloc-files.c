// SPDX-License-Identifier: GPL-2.0
/*
 * alloc-files: the allocation cost the scale benchmark (tests/bench/scale.sh)
 * measures, in one process so that no exec is timed.
 *
 *   alloc-files DIR COUNT BYTES [XFLAGS EXTSIZE]
 *
 * Creates DIR/f0 .. DIR/f<COUNT-1>, gives each (when XFLAGS is given) the
 * FS_IOC_FSSETXATTR flags XFLAGS and extent size EXTSIZE before any data,
 * then writes BYTES with O_DIRECT at offset 0 (the write allocates).  Only
 * the writes are timed.  Prints "files=N write_ns=TOTAL first_ns=NS
 * max_ns=NS"; exits 1 on any error, naming it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <err.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t total = 0, first = 0, max = 0, t0, dt;
	unsigned long count, bytes, xflags = 0, extsize = 0;
	char path[4096];
	void *buf;

	if (argc != 4 && argc != 6)
		errx(2, "usage: alloc-files DIR COUNT BYTES [XFLAGS EXTSIZE]");
	count = strtoul(argv[2], NULL, 0);
	bytes = strtoul(argv[3], NULL, 0);
	if (argc == 6) {
		xflags = strtoul(argv[4], NULL, 0);
		extsize = strtoul(argv[5], NULL, 0);
	}
	if (posix_memalign(&buf, 4096, bytes))
		errx(1, "no memory for %lu bytes", bytes);
	memset(buf, 0xa5, bytes);

	for (unsigned long i = 0; i < count; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%lu", argv[1], i);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_DIRECT, 0644);
		if (fd < 0)
			err(1, "%s", path);
		if (argc == 6) {
			struct fsxattr fa;

			if (ioctl(fd, FS_IOC_FSGETXATTR, &fa))
				err(1, "%s: FS_IOC_FSGETXATTR", path);
			fa.fsx_xflags |= xflags;
			fa.fsx_extsize = extsize;
			if (ioctl(fd, FS_IOC_FSSETXATTR, &fa))
				err(1, "%s: FS_IOC_FSSETXATTR 0x%lx %lu", path, xflags, extsize);
		}
		t0 = now_ns();
		if (pwrite(fd, buf, bytes, 0) != (ssize_t)bytes)
			err(1, "%s: write of %lu bytes", path, bytes);
		dt = now_ns() - t0;
		if (!i)
			first = dt;
		if (dt > max)
			max = dt;
		total += dt;
		if (close(fd))
			err(1, "%s: close", path);
	}
	printf("files=%lu write_ns=%llu first_ns=%llu max_ns=%llu\n", count,
	       (unsigned long long)total, (unsigned long long)first, (unsigned long long)max);
	free(buf);
	return 0;
}
