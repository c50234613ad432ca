// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * daemon-bench: the load and the reference readers for tests/bench/daemon.sh.
 *
 *   writer DIR N        create and immediately write N files, the way a
 *                       database creates tablespaces; prints how many carried
 *                       the hint right before their first write
 *   latency DIR N       create N empty files one at a time and spin until each
 *                       carries a hint; prints create-to-hint p50/p99 in us
 *   storm DIR N         create N empty files at once, then wait for all to be
 *                       hinted; prints files per second
 *   reader noop|hint MNT EXTSIZE
 *                       a fanotify reader with the daemon's flags and mark on
 *                       the filesystem of MNT: noop only reads events (the
 *                       ceiling of event delivery), hint sets EXTSIZE on every
 *                       new empty file with no checks at all (the ceiling of
 *                       any hinter); runs until SIGTERM, prints its event count
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static int has_hint(int fd)
{
	struct fsxattr fsx;

	return ioctl(fd, FS_IOC_FSGETXATTR, &fsx) == 0 && (fsx.fsx_xflags & FS_XFLAG_EXTSIZE) &&
	       fsx.fsx_extsize;
}

static int writer(int dfd, long n)
{
	static char buf[65536];
	long in_time = 0;
	uint64_t t0 = now_ns(), t1;

	memset(buf, 'x', sizeof(buf));
	for (long i = 0; i < n; i++) {
		char name[32];
		int fd;

		snprintf(name, sizeof(name), "w.%ld", i);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			err(1, "%s", name);
		/* The one extra system call before the write; it is the
		 * measurement, and costs about a microsecond. */
		in_time += has_hint(fd);
		if (pwrite(fd, buf, sizeof(buf), 0) != sizeof(buf))
			err(1, "write %s", name);
		close(fd);
	}
	t1 = now_ns();
	printf("writer: %ld files, %ld hinted before the first write (%.1f%%), %.0f files/s\n", n,
	       in_time, 100.0 * (double)in_time / (double)n, (double)n * 1e9 / (double)(t1 - t0));
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int latency(int dfd, long n)
{
	uint64_t *lat = calloc((size_t)n, sizeof(*lat));
	long timeouts = 0, got = 0;

	if (!lat)
		err(1, "calloc");
	for (long i = 0; i < n; i++) {
		char name[32];
		uint64_t t0, t;
		int fd;

		snprintf(name, sizeof(name), "l.%ld", i);
		t0 = now_ns();
		fd = openat(dfd, name, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			err(1, "%s", name);
		for (;;) {
			t = now_ns();
			if (has_hint(fd)) {
				lat[got++] = t - t0;
				break;
			}
			if (t - t0 > 1000000000ULL) {
				timeouts++;
				break;
			}
		}
		close(fd);
	}
	qsort(lat, (size_t)got, sizeof(*lat), cmp_u64);
	if (got)
		printf("latency: %ld files, create-to-hint p50 %.1f us, p99 %.1f us, max %.1f us, "
		       "%ld never hinted within 1 s\n",
		       n, (double)lat[got / 2] / 1e3, (double)lat[(got * 99) / 100] / 1e3,
		       (double)lat[got - 1] / 1e3, timeouts);
	else
		printf("latency: %ld files, none hinted within 1 s\n", n);
	free(lat);
	return 0;
}

static int storm(int dfd, long n)
{
	uint64_t t0 = now_ns(), t1;
	long missing = 0;

	for (long i = 0; i < n; i++) {
		char name[32];
		int fd;

		snprintf(name, sizeof(name), "s.%ld", i);
		fd = openat(dfd, name, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			err(1, "%s", name);
		/* Not kept open: a storm may be larger than the limit on open files. */
		close(fd);
	}
	/* In creation order: the hinter works in that order too. */
	for (long i = 0; i < n; i++) {
		char name[32];
		int fd;

		snprintf(name, sizeof(name), "s.%ld", i);
		fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			err(1, "%s", name);
		while (!has_hint(fd)) {
			if (now_ns() - t0 > 30000000000ULL) {
				missing++;
				break;
			}
		}
		close(fd);
	}
	t1 = now_ns();
	printf("storm: %ld files hinted in %.3f s, %.0f files/s, %ld not hinted within 30 s\n",
	       n - missing, (double)(t1 - t0) / 1e9,
	       (double)(n - missing) * 1e9 / (double)(t1 - t0), missing);
	return 0;
}

/* A bare-bones hinter: no symlink or containment checks.  A ceiling only. */
static void reader_hint(int mnt, const struct fanotify_event_metadata *m, uint32_t extsize)
{
	const struct fanotify_event_info_fid *fid = (const void *)(m + 1);
	struct file_handle *fh = (struct file_handle *)fid->handle;
	const char *name = (const char *)fh->f_handle + fh->handle_bytes;
	struct fsxattr fsx;
	int dfd, fd;

	if (m->mask & FAN_ONDIR)
		return;
	dfd = open_by_handle_at(mnt, fh, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	close(dfd);
	if (fd < 0)
		return;
	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) == 0) {
		fsx.fsx_xflags |= FS_XFLAG_EXTSIZE;
		fsx.fsx_extsize = extsize;
		ioctl(fd, FS_IOC_FSSETXATTR, &fsx);
	}
	close(fd);
}

static int reader(const char *mode, const char *path, uint32_t extsize)
{
	_Alignas(struct fanotify_event_metadata) static unsigned char buf[65536];
	bool hint = !strcmp(mode, "hint");
	unsigned long events = 0, overflows = 0;
	sigset_t mask;
	int fan, mnt, sfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, 0);
	fan = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_NONBLOCK, O_RDONLY);
	mnt = open(path, O_RDONLY | O_DIRECTORY);
	if (sfd < 0 || fan < 0 || mnt < 0)
		err(1, "fanotify reader setup");
	if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
			  FAN_CREATE | FAN_MOVED_TO | FAN_ONDIR, mnt, NULL) < 0)
		err(1, "fanotify_mark");
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct pollfd p[2] = { { fan, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		ssize_t n;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			err(1, "poll");
		if (p[1].revents)
			break;
		while ((n = read(fan, buf, sizeof(buf))) > 0) {
			const struct fanotify_event_metadata *m = (const void *)buf;

			for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
				events++;
				if (m->mask & FAN_Q_OVERFLOW)
					overflows++;
				else if (hint)
					reader_hint(mnt, m, extsize);
			}
		}
	}
	printf("reader %s: %lu events, %lu overflows\n", mode, events, overflows);
	return 0;
}

int main(int argc, char **argv)
{
	int dfd;

	if (argc == 5 && !strcmp(argv[1], "reader"))
		return reader(argv[2], argv[3], (uint32_t)strtoul(argv[4], NULL, 0));
	if (argc != 4)
		errx(2, "usage: daemon-bench writer|latency|storm DIR N | reader noop|hint MNT "
			"EXTSIZE");
	dfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		err(1, "%s", argv[2]);
	if (!strcmp(argv[1], "writer"))
		return writer(dfd, atol(argv[3]));
	if (!strcmp(argv[1], "latency"))
		return latency(dfd, atol(argv[3]));
	if (!strcmp(argv[1], "storm"))
		return storm(dfd, atol(argv[3]));
	errx(2, "unknown mode %s", argv[1]);
}
