// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * compare-tool: the fixtures and one anchor of tests/bench/compare.sh, in C so
 * that making 100,000 files or copying 1,000 costs no fork per file.
 *
 *   mkfiles DIR N BYTES      N files of BYTES bytes (0: empty), 1,000 per
 *                            subdirectory DIR/dK, written and fsynced at once
 *   frag FILE EXTENTS        a file of EXTENTS extents: every other 4 KiB
 *                            block written
 *   copy FILE...             the verified-copy minimum: each FILE read with
 *                            O_DIRECT into FILE.copy written with O_DIRECT and
 *                            fsynced, then the copy read once with O_DIRECT
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PER_DIR 1000
#define IO_SIZE (1 << 20)

static int mkfiles(const char *dir, long n, long bytes)
{
	char *buf = NULL;
	int dfd = -1;

	if (bytes > 0) {
		buf = malloc((size_t)bytes);
		if (!buf)
			err(1, "malloc");
		memset(buf, 'x', (size_t)bytes);
	}
	for (long i = 0; i < n; i++) {
		char name[64];
		int fd;

		if (i % PER_DIR == 0) {
			snprintf(name, sizeof(name), "%s/d%ld", dir, i / PER_DIR);
			if (mkdir(name, 0755) < 0 && errno != EEXIST)
				err(1, "%s", name);
			if (dfd >= 0)
				close(dfd);
			dfd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (dfd < 0)
				err(1, "%s", name);
		}
		snprintf(name, sizeof(name), "f%06ld", i);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			err(1, "%s/%s", dir, name);
		if (bytes > 0 && write(fd, buf, (size_t)bytes) != bytes)
			err(1, "write %s", name);
		close(fd);
	}
	if (dfd >= 0)
		close(dfd);
	free(buf);
	sync();
	return 0;
}

static int frag(const char *path, long extents)
{
	char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		err(1, "%s", path);
	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < extents; i++)
		if (pwrite(fd, buf, sizeof(buf), (off_t)i * 8192) != (ssize_t)sizeof(buf))
			err(1, "write %s", path);
	if (fsync(fd) < 0)
		err(1, "fsync %s", path);
	close(fd);
	return 0;
}

static void read_all(int fd, void *buf, const char *what)
{
	ssize_t n;

	while ((n = read(fd, buf, IO_SIZE)) > 0)
		;
	if (n < 0)
		err(1, "read %s", what);
}

static int copy(int argc, char **argv)
{
	void *buf;

	if (posix_memalign(&buf, 4096, IO_SIZE))
		errx(1, "out of memory");
	for (int i = 0; i < argc; i++) {
		char dst[4096];
		int in, out;
		ssize_t n;

		snprintf(dst, sizeof(dst), "%s.copy", argv[i]);
		in = open(argv[i], O_RDONLY | O_DIRECT | O_CLOEXEC);
		out = open(dst, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644);
		if (in < 0 || out < 0)
			err(1, "%s", argv[i]);
		while ((n = read(in, buf, IO_SIZE)) > 0)
			/* Whole blocks: O_DIRECT takes no tail; our files have none. */
			if (write(out, buf, (size_t)n) != n)
				err(1, "write %s", dst);
		if (n < 0)
			err(1, "read %s", argv[i]);
		if (fsync(out) < 0 || lseek(out, 0, SEEK_SET) < 0)
			err(1, "fsync %s", dst);
		read_all(out, buf, dst);
		close(in);
		close(out);
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "mkfiles"))
		return mkfiles(argv[2], atol(argv[3]), atol(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "frag"))
		return frag(argv[2], atol(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "copy"))
		return copy(argc - 2, argv + 2);
	errx(2, "usage: compare-tool mkfiles DIR N BYTES | frag FILE EXTENTS | copy FILE...");
}
