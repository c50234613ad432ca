// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hint-paths DIR N ROUNDS: the system calls a hinter can make for one new
 * empty file, each sequence timed on its own fresh files in DIR (CPU time
 * of this process, per file, median of ROUNDS), with the ratio against the
 * bare hinter of compare.sh (daemon-bench reader hint).  What the event
 * loop, the rules and the reporting cost is left out: this is the floor of
 * each way of reaching the inode.
 *
 *   bare         the reader: the event's directory by handle, the name
 *                opened for reading, get, set, close (no checks at all)
 *   bare-dir     the same with the directory already open (a hinter that
 *                keeps it between events, as extalignd does)
 *   extalignd    the name opened O_PATH, fstat (type, links, size), the
 *                same inode reopened through /proc/self/fd, get, set,
 *                fstat (data since?), two closes
 *   child-fid    the file itself by its handle (what FAN_REPORT_TARGET_FID
 *                adds to the event): O_PATH, fstat, opened again by the
 *                handle, get, set, fstat, two closes
 *   stat-open    fstatat, the name opened for reading, fstat (the same
 *                inode?), get, set, fstat, close: opens whatever the name
 *                holds by then, a FIFO swapped in too
 *   by-name      fstatat, file_getattr, file_setattr, fstatat (Linux 6.17;
 *                no open at all, but the hint lands on whatever inode the
 *                name holds by then)
 *   opath-attr   the name opened O_PATH, fstat, file_getattr and
 *                file_setattr on that descriptor (AT_EMPTY_PATH), fstat,
 *                close: the exact inode and never a real open, if the
 *                kernel took an O_PATH descriptor there (6.18 says EBADF)
 *
 * Prints one line per sequence; a sequence the kernel lacks says so.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Linux 6.17's uapi, absent from Debian 12's headers. */
#ifndef __NR_file_getattr
#define __NR_file_getattr 468
#define __NR_file_setattr 469
#endif
struct bench_file_attr {
	uint64_t fa_xflags;
	uint32_t fa_extsize, fa_nextents, fa_projid, fa_cowextsize;
};

#define EXTSIZE	   65536
#define MAX_ROUNDS 31

struct ctx {
	int dir, proc, n;
	struct file_handle *dir_fh;
	struct file_handle **fh; /* the files' own handles */
	char name[32];
};

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static const char *name_of(struct ctx *c, int i)
{
	snprintf(c->name, sizeof(c->name), "f%d", i);
	return c->name;
}

static struct file_handle *handle_of(int dir, const char *name, int flags)
{
	struct file_handle *fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
	int mount_id;

	if (!fh)
		err(2, "malloc");
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dir, name, fh, &mount_id, flags) < 0)
		err(2, "name_to_handle_at %s", name);
	return fh;
}

/* N new empty files, and their handles (made untimed). */
static void fresh(struct ctx *c)
{
	for (int i = 0; i < c->n; i++) {
		const char *name = name_of(c, i);
		int fd;

		unlinkat(c->dir, name, 0);
		fd = openat(c->dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			err(2, "create %s", name);
		close(fd);
		free(c->fh[i]);
		c->fh[i] = handle_of(c->dir, name, 0);
	}
}

static void set_hint(int fd)
{
	struct fsxattr fsx;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0)
		err(2, "FS_IOC_FSGETXATTR");
	fsx.fsx_xflags |= FS_XFLAG_EXTSIZE;
	fsx.fsx_extsize = EXTSIZE;
	if (ioctl(fd, FS_IOC_FSSETXATTR, &fsx) < 0)
		err(2, "FS_IOC_FSSETXATTR");
}

static void bare(struct ctx *c, int i)
{
	int d = open_by_handle_at(c->dir, c->dir_fh, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = openat(d, name_of(c, i), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	close(d);
	set_hint(fd);
	close(fd);
}

static void bare_dir(struct ctx *c, int i)
{
	int fd = openat(c->dir, name_of(c, i), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	set_hint(fd);
	close(fd);
}

static void extalignd(struct ctx *c, int i)
{
	int p = openat(c->dir, name_of(c, i), O_PATH | O_NOFOLLOW | O_CLOEXEC), fd;
	char link[16];
	struct stat st;

	fstat(p, &st);
	snprintf(link, sizeof(link), "%d", p);
	fd = openat(c->proc, link, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	set_hint(fd);
	fstat(fd, &st);
	close(fd);
	close(p);
}

static void child_fid(struct ctx *c, int i)
{
	int p = open_by_handle_at(c->dir, c->fh[i], O_PATH | O_CLOEXEC), fd;
	struct stat st;

	fstat(p, &st);
	fd = open_by_handle_at(c->dir, c->fh[i], O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		err(2, "open_by_handle_at");
	set_hint(fd);
	fstat(fd, &st);
	close(fd);
	close(p);
}

static void stat_open(struct ctx *c, int i)
{
	const char *name = name_of(c, i);
	struct stat st, now;
	int fd;

	fstatat(c->dir, name, &st, AT_SYMLINK_NOFOLLOW);
	fd = openat(c->dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	fstat(fd, &now);
	set_hint(fd);
	fstat(fd, &now);
	close(fd);
}

static void by_name(struct ctx *c, int i)
{
	const char *name = name_of(c, i);
	struct bench_file_attr fa;
	struct stat st;

	fstatat(c->dir, name, &st, AT_SYMLINK_NOFOLLOW);
	if (syscall(__NR_file_getattr, c->dir, name, &fa, sizeof(fa), AT_SYMLINK_NOFOLLOW) < 0)
		err(2, "file_getattr");
	fa.fa_xflags |= FS_XFLAG_EXTSIZE;
	fa.fa_extsize = EXTSIZE;
	if (syscall(__NR_file_setattr, c->dir, name, &fa, sizeof(fa), AT_SYMLINK_NOFOLLOW) < 0)
		err(2, "file_setattr");
	fstatat(c->dir, name, &st, AT_SYMLINK_NOFOLLOW);
}

static void opath_attr(struct ctx *c, int i)
{
	int p = openat(c->dir, name_of(c, i), O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct bench_file_attr fa;
	struct stat st;

	fstat(p, &st);
	if (syscall(__NR_file_getattr, p, "", &fa, sizeof(fa), AT_EMPTY_PATH) < 0)
		err(2, "file_getattr");
	fa.fa_xflags |= FS_XFLAG_EXTSIZE;
	fa.fa_extsize = EXTSIZE;
	if (syscall(__NR_file_setattr, p, "", &fa, sizeof(fa), AT_EMPTY_PATH) < 0)
		err(2, "file_setattr");
	fstat(p, &st);
	close(p);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct seq {
	const char *name;
	void (*one)(struct ctx *c, int i);
	double us[MAX_ROUNDS];
	const char *missing; /* why the kernel cannot run it */
};

int main(int argc, char **argv)
{
	struct seq seqs[] = {
		{ "bare", bare },
		{ "bare-dir", bare_dir },
		{ "extalignd", extalignd },
		{ "child-fid", child_fid },
		{ "stat-open", stat_open },
		{ "by-name", by_name },
		{ "opath-attr", opath_attr },
	};
	const size_t n_seqs = sizeof(seqs) / sizeof(seqs[0]);
	struct bench_file_attr fa;
	struct ctx c;
	int rounds;

	if (argc != 4)
		errx(2, "usage: hint-paths DIR FILES ROUNDS");
	c.n = atoi(argv[2]);
	rounds = atoi(argv[3]);
	if (c.n <= 0 || rounds <= 0 || rounds > MAX_ROUNDS)
		errx(2, "FILES > 0, 0 < ROUNDS <= %d", MAX_ROUNDS);
	c.dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	c.proc = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.dir < 0 || c.proc < 0)
		err(2, "%s or /proc/self/fd", argv[1]);
	c.dir_fh = handle_of(c.dir, "", AT_EMPTY_PATH);
	c.fh = calloc((size_t)c.n, sizeof(*c.fh));
	if (!c.fh)
		err(2, "calloc");
	/* The file attribute system calls: Linux 6.17 and later. */
	if (syscall(__NR_file_getattr, c.dir, "", &fa, sizeof(fa), AT_EMPTY_PATH) < 0 &&
	    errno == ENOSYS) {
		seqs[n_seqs - 2].missing = "no file_getattr (Linux 6.17)";
		seqs[n_seqs - 1].missing = "no file_getattr (Linux 6.17)";
	} else {
		int p = openat(c.dir, ".", O_PATH | O_CLOEXEC);

		if (syscall(__NR_file_getattr, p, "", &fa, sizeof(fa), AT_EMPTY_PATH) < 0)
			seqs[n_seqs - 1].missing =
				errno == EBADF ? "file_getattr refuses an O_PATH descriptor (EBADF)"
					       : strerror(errno);
		close(p);
	}

	/* Rounds interleave the sequences, so that a busy minute hits all. */
	for (int r = 0; r < rounds; r++) {
		for (size_t s = 0; s < n_seqs; s++) {
			double t0;

			if (seqs[s].missing)
				continue;
			fresh(&c);
			t0 = cpu_s();
			for (int i = 0; i < c.n; i++)
				seqs[s].one(&c, i);
			seqs[s].us[r] = (cpu_s() - t0) * 1e6 / c.n;
		}
	}
	printf("%-10s %9s %7s %7s %7s  %s\n", "SEQUENCE", "us/file", "min", "max", "/bare",
	       "(CPU per file, median of rounds)");
	double bare_med = 0;

	for (size_t s = 0; s < n_seqs; s++) {
		double *v = seqs[s].us, med;

		if (seqs[s].missing) {
			printf("%-10s   (not here: %s)\n", seqs[s].name, seqs[s].missing);
			continue;
		}
		qsort(v, (size_t)rounds, sizeof(*v), cmp_double);
		med = v[rounds / 2];
		if (s == 0)
			bare_med = med;
		printf("%-10s %9.2f %7.2f %7.2f %7.2f\n", seqs[s].name, med, v[0], v[rounds - 1],
		       med / bare_med);
	}
	for (int i = 0; i < c.n; i++) {
		unlinkat(c.dir, name_of(&c, i), 0);
		free(c.fh[i]);
	}
	free(c.fh);
	free(c.dir_fh);
	return 0;
}
