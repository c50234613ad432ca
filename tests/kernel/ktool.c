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
 *   ktool awritefault FILE OFF LEN PAGE
 *                                     the same O_DIRECT write from a buffer
 *                                     whose PAGE-th 4 KiB page (from 0) is
 *                                     PROT_NONE: only the pages before it
 *                                     can be pinned
 *   ktool getx FILE...                FS_IOC_FSGETXATTR flags and extsize
 *                                     (a line per file)
 *   ktool setx FILE XFLAGS EXTSIZE    FS_IOC_FSSETXATTR with exactly these
 *   ktool tmpfile DIR NAME LEN        O_TMPFILE in DIR: getx of it before
 *                                     any write, write LEN bytes, link NAME
 *   ktool mknod FILE                  mknod(S_IFREG), a regular file
 *   ktool moveext ORIG DONOR OSTART DSTART LEN
 *                                     EXT4_IOC_MOVE_EXT (in blocks)
 *   ktool swapboot FILE               EXT4_IOC_SWAP_BOOT
 *   ktool race FILE UNIT COUNT        COUNT rounds, one per UNIT-byte unit
 *                                     of FILE: page faults, fallocate
 *                                     and a direct write fill holes of
 *                                     the unit at the same time
 *
 * On success a command prints its result and exits 0; a failing system
 * call prints "err NAME" (the errno name) and exits 1; misuse exits 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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

#define K_STATX_WRITE_ATOMIC	  0x00010000U
#define K_STATX_ATTR_WRITE_ATOMIC 0x00400000ULL
#define K_RWF_ATOMIC		  0x00000040

/* struct statx as of Linux 6.11, declared here for older headers. */
struct kstatx {
	uint32_t mask, blksize;
	uint64_t attributes;
	uint32_t nlink, uid, gid;
	uint16_t mode, spare0;
	uint64_t ino, size, blocks, attributes_mask;
	struct {
		int64_t sec;
		uint32_t nsec;
		int32_t res;
	} ts[4];
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
	if (syscall(SYS_statx, AT_FDCWD, path, 0, K_STATX_WRITE_ATOMIC, &stx) < 0)
		return fail();
	printf("mask=%d attr=%d min=%u max=%u segments=%u\n", !!(stx.mask & K_STATX_WRITE_ATOMIC),
	       !!(stx.attributes & K_STATX_ATTR_WRITE_ATOMIC), stx.awu_min, stx.awu_max,
	       stx.aw_segments_max);
	return 0;
}

/*
 * One RWF_ATOMIC write of LEN bytes of 0xa5 (a pattern the test can check)
 * at OFF; with BAD_PAGE >= 0 that page of the user buffer is PROT_NONE.
 */
static int atomic_pwrite(int fd, off_t off, size_t len, long bad_page)
{
	struct iovec iov;
	ssize_t done;
	char *buf;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return fail();
	memset(buf, 0xa5, len);
	if (bad_page >= 0 && mprotect(buf + bad_page * 4096, 4096, PROT_NONE) < 0)
		return fail();
	iov.iov_base = buf;
	iov.iov_len = len;
	done = pwritev2(fd, &iov, 1, off, K_RWF_ATOMIC);
	if (done < 0)
		return fail();
	printf("ok %zd\n", done);
	close(fd);
	return 0;
}

static int cmd_awrite(const char *path, const char *off_s, const char *len_s, int buffered)
{
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | (buffered ? 0 : O_DIRECT), 0644);
	if (fd < 0)
		return fail();
	return atomic_pwrite(fd, strtoll(off_s, NULL, 0), strtoull(len_s, NULL, 0), -1);
}

/*
 * An atomic write whose user buffer cannot be pinned whole: the block
 * layer gets only the pages before the PROT_NONE one.  The write must then
 * fail with nothing written, never go out (or complete through the page
 * cache) in part.
 */
static int cmd_awritefault(const char *path, const char *off_s, const char *len_s,
			   const char *page_s)
{
	size_t len = strtoull(len_s, NULL, 0);
	size_t page = strtoull(page_s, NULL, 0);
	int fd;

	if (len % 4096 || (page + 1) * 4096 > len) {
		fprintf(stderr, "awritefault: PAGE must lie inside LEN\n");
		return 2;
	}
	fd = open(path, O_WRONLY | O_DIRECT);
	if (fd < 0)
		return fail();
	return atomic_pwrite(fd, strtoll(off_s, NULL, 0), len, (long)page);
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

/* struct move_extent and the ioctls of <linux/ext4.h>, for old headers. */
struct kmove_extent {
	uint32_t reserved, donor_fd;
	uint64_t orig_start, donor_start, len, moved_len;
};
#define K_EXT4_IOC_MOVE_EXT  _IOWR('f', 15, struct kmove_extent)
#define K_EXT4_IOC_SWAP_BOOT _IO('f', 17)

static int cmd_moveext(char **argv)
{
	struct kmove_extent me = {
		.orig_start = strtoull(argv[2], NULL, 0),
		.donor_start = strtoull(argv[3], NULL, 0),
		.len = strtoull(argv[4], NULL, 0),
	};
	int fd = open(argv[0], O_RDWR);
	int dfd = open(argv[1], O_RDWR);

	if (fd < 0 || dfd < 0)
		return fail();
	me.donor_fd = dfd;
	if (ioctl(fd, K_EXT4_IOC_MOVE_EXT, &me) < 0)
		return fail();
	printf("ok %llu\n", (unsigned long long)me.moved_len);
	return 0;
}

static int cmd_swapboot(const char *path)
{
	int fd = open(path, O_RDWR);

	if (fd < 0 || ioctl(fd, K_EXT4_IOC_SWAP_BOOT) < 0)
		return fail();
	printf("ok\n");
	return 0;
}

/*
 * The race: in every round, RACE_FAULTS threads write through a shared
 * mapping into pages of one unit, one thread fallocates a block of it and
 * one writes a block with O_DIRECT, all released at once.  The unit is a
 * hole to begin with, so each of them may be the one that allocates it.
 * Caches are dropped before every round, so that the allocation and the
 * lookups sleep on reads and the others get to run in between.
 */
#define RACE_FAULTS 8
#define RACE_PAGE   4096

struct race {
	pthread_barrier_t start;
	char *map;
	int fd, dfd;
	off_t unit_off;
	void *dbuf;
	int sigbus, falloc_err, dio_err;
	int first_errno;
};

static __thread sigjmp_buf race_jmp;

static void race_sigbus(int sig)
{
	(void)sig;
	siglongjmp(race_jmp, 1);
}

struct race_arg {
	struct race *r;
	int idx;
};

static void race_errno(struct race *r, int *count, int err)
{
	__atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST);
	if (!r->first_errno)
		r->first_errno = err;
}

static void *race_thread(void *p)
{
	struct race_arg *a = p;
	struct race *r = a->r;
	off_t off;

	pthread_barrier_wait(&r->start);
	if (a->idx < RACE_FAULTS) {
		/* Pages 0, 2, 4, ... of the unit. */
		off = r->unit_off + (off_t)a->idx * 2 * RACE_PAGE;
		if (sigsetjmp(race_jmp, 1) == 0)
			*(volatile char *)(r->map + off) = (char)0xa5;
		else
			race_errno(r, &r->sigbus, EFAULT);
	} else if (a->idx == RACE_FAULTS) {
		off = r->unit_off + 1 * RACE_PAGE;
		if (fallocate(r->fd, 0, off, RACE_PAGE) < 0)
			race_errno(r, &r->falloc_err, errno);
	} else {
		off = r->unit_off + 3 * RACE_PAGE;
		if (pwrite(r->dfd, r->dbuf, RACE_PAGE, off) != RACE_PAGE)
			race_errno(r, &r->dio_err, errno);
	}
	return NULL;
}

static int cmd_race(const char *path, const char *unit_s, const char *count_s)
{
	off_t unit = strtoll(unit_s, NULL, 0);
	int count = atoi(count_s);
	pthread_t th[RACE_FAULTS + 2];
	struct race_arg args[RACE_FAULTS + 2];
	struct sigaction sa = { .sa_handler = race_sigbus };
	struct race r = { 0 };
	int round, i, drop;

	if (unit < 16 * RACE_PAGE || count <= 0) {
		fprintf(stderr, "race: UNIT must be at least 64 KiB\n");
		return 2;
	}
	r.fd = open(path, O_RDWR);
	r.dfd = open(path, O_RDWR | O_DIRECT);
	if (r.fd < 0 || r.dfd < 0 || ftruncate(r.fd, unit * count) < 0)
		return fail();
	r.map = mmap(NULL, unit * count, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	if (r.map == MAP_FAILED || posix_memalign(&r.dbuf, RACE_PAGE, RACE_PAGE))
		return fail();
	memset(r.dbuf, 0xa5, RACE_PAGE);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0)
		return fail();

	for (round = 0; round < count; round++) {
		r.unit_off = (off_t)round * unit;
		drop = open("/proc/sys/vm/drop_caches", O_WRONLY);
		if (drop >= 0) {
			sync();
			if (write(drop, "3", 1) < 0)
				return fail();
			close(drop);
		}
		pthread_barrier_init(&r.start, NULL, RACE_FAULTS + 2);
		for (i = 0; i < RACE_FAULTS + 2; i++) {
			args[i].r = &r;
			args[i].idx = i;
			errno = pthread_create(&th[i], NULL, race_thread, &args[i]);
			if (errno)
				return fail();
		}
		for (i = 0; i < RACE_FAULTS + 2; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&r.start);
	}
	if (msync(r.map, unit * count, MS_SYNC) < 0 || fsync(r.fd) < 0)
		return fail();
	if (r.sigbus || r.falloc_err || r.dio_err) {
		errno = r.first_errno;
		printf("sigbus=%d fallocate=%d dio=%d ", r.sigbus, r.falloc_err, r.dio_err);
		return fail();
	}
	printf("ok %d rounds\n", count);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "statx"))
		return cmd_statx(argv[2]);
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "awrite"))
		return cmd_awrite(argv[2], argv[3], argv[4], argc == 6);
	if (argc == 6 && !strcmp(argv[1], "awritefault"))
		return cmd_awritefault(argv[2], argv[3], argv[4], argv[5]);
	if (argc >= 3 && !strcmp(argv[1], "getx"))
		return cmd_getx(argc - 2, argv + 2);
	if (argc == 5 && !strcmp(argv[1], "tmpfile"))
		return cmd_tmpfile(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "mknod"))
		return cmd_mknod(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "setx"))
		return cmd_setx(argv[2], argv[3], argv[4]);
	if (argc == 7 && !strcmp(argv[1], "moveext"))
		return cmd_moveext(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "swapboot"))
		return cmd_swapboot(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "race"))
		return cmd_race(argv[2], argv[3], argv[4]);
	fprintf(stderr,
		"usage: ktool "
		"statx|awrite|awritefault|getx|setx|tmpfile|mknod|moveext|swapboot|race ...\n");
	return 2;
}
