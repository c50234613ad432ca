// SPDX-License-Identifier: GPL-2.0
/*
 * ktool: small probes for the extalign kernel tests, run inside UML.
 *
 * Debian 12's headers and tools predate the interfaces the series tests
 * (STATX_WRITE_ATOMIC, RWF_ATOMIC, FS_XFLAG_FORCEALIGN), so this tool
 * defines them itself and reports results as plain text:
 *
 *   ktool statx FILE                  atomic write limits from statx
 *   ktool awrite FILE OFF LEN [buf]   one RWF_ATOMIC pwritev2 (O_DIRECT
 *                                     unless "buf" is given)
 *   ktool getx FILE...                FS_IOC_FSGETXATTR flags and extsize
 *                                     (a line per file)
 *   ktool setx FILE XFLAGS EXTSIZE    FS_IOC_FSSETXATTR with exactly these
 *   ktool tmpfile DIR NAME LEN        O_TMPFILE in DIR: getx of it before
 *                                     any write, write LEN bytes, link NAME
 *   ktool mknod FILE                  mknod(S_IFREG), a regular file
 *
 * On success a command prints its result and exits 0; a failing system
 * call prints "err NAME" (the errno name) and exits 1; misuse exits 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define K_STATX_WRITE_ATOMIC	0x00010000U
#define K_STATX_ATTR_WRITE_ATOMIC 0x00400000ULL
#define K_RWF_ATOMIC		0x00000040

/* struct statx as of Linux 6.11, declared here for older headers. */
struct kstatx {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, spare0;
	uint64_t ino, size, blocks, attributes_mask;
	struct { int64_t sec; uint32_t nsec; int32_t res; } ts[4];
	uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
	uint64_t mnt_id;
	uint32_t dio_mem_align, dio_offset_align;
	uint64_t subvol;
	uint32_t awu_min, awu_max, aw_segments_max;
	uint32_t spare1;
	uint64_t spare3[9];
};

static int fail(void)
{
	const char *name = strerrorname_np(errno);

	printf("err %s\n", name ? name : "unknown");
	return 1;
}

static int cmd_statx(const char *path)
{
	struct kstatx stx;

	memset(&stx, 0, sizeof(stx));
	if (syscall(SYS_statx, AT_FDCWD, path, 0, K_STATX_WRITE_ATOMIC,
		    &stx) < 0)
		return fail();
	printf("mask=%d attr=%d min=%u max=%u segments=%u\n",
	       !!(stx.mask & K_STATX_WRITE_ATOMIC),
	       !!(stx.attributes & K_STATX_ATTR_WRITE_ATOMIC),
	       stx.awu_min, stx.awu_max, stx.aw_segments_max);
	return 0;
}

static int cmd_awrite(const char *path, const char *off_s, const char *len_s,
		      int buffered)
{
	off_t off = strtoll(off_s, NULL, 0);
	size_t len = strtoull(len_s, NULL, 0);
	struct iovec iov;
	ssize_t done;
	void *buf;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | (buffered ? 0 : O_DIRECT), 0644);
	if (fd < 0)
		return fail();
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return fail();
	/* A pattern the test can check: every byte is 0xa5. */
	memset(buf, 0xa5, len);
	iov.iov_base = buf;
	iov.iov_len = len;
	done = pwritev2(fd, &iov, 1, off, K_RWF_ATOMIC);
	if (done < 0)
		return fail();
	printf("ok %zd\n", done);
	close(fd);
	return 0;
}

static int print_getx(int fd)
{
	struct fsxattr fsx;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0)
		return fail();
	printf("xflags=0x%x extsize=%u\n", fsx.fsx_xflags, fsx.fsx_extsize);
	return 0;
}

static int cmd_getx(int n, char **paths)
{
	int i, fd;

	for (i = 0; i < n; i++) {
		fd = open(paths[i], O_RDONLY);
		if (fd < 0 || print_getx(fd))
			return fd < 0 ? fail() : 1;
		close(fd);
	}
	return 0;
}

static int cmd_tmpfile(const char *dir, const char *name, const char *len_s)
{
	size_t len = strtoull(len_s, NULL, 0);
	char proc[64];
	int fd, dfd;
	void *buf;

	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	fd = open(dir, O_TMPFILE | O_RDWR, 0644);
	if (dfd < 0 || fd < 0)
		return fail();
	if (print_getx(fd))
		return 1;
	buf = malloc(len ? len : 1);
	if (!buf)
		return fail();
	memset(buf, 0xa5, len);
	if (write(fd, buf, len) != (ssize_t)len || fsync(fd) < 0)
		return fail();
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW) < 0)
		return fail();
	close(fd);
	close(dfd);
	return 0;
}

static int cmd_mknod(const char *path)
{
	if (mknod(path, S_IFREG | 0644, 0) < 0)
		return fail();
	printf("ok\n");
	return 0;
}

static int cmd_setx(const char *path, const char *flags_s, const char *ext_s)
{
	struct fsxattr fsx;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return fail();
	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0)
		return fail();
	fsx.fsx_xflags = strtoul(flags_s, NULL, 0);
	fsx.fsx_extsize = strtoul(ext_s, NULL, 0);
	if (ioctl(fd, FS_IOC_FSSETXATTR, &fsx) < 0)
		return fail();
	printf("ok\n");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "statx"))
		return cmd_statx(argv[2]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "awrite"))
		return cmd_awrite(argv[2], argv[3], argv[4], argc == 6);
	if (argc >= 3 && !strcmp(argv[1], "getx"))
		return cmd_getx(argc - 2, argv + 2);
	if (argc == 5 && !strcmp(argv[1], "tmpfile"))
		return cmd_tmpfile(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "mknod"))
		return cmd_mknod(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "setx"))
		return cmd_setx(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: ktool statx|awrite|getx|setx|tmpfile|mknod ...\n");
	return 2;
}
