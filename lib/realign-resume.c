// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Resuming a long copy.  When a deadline or a cancel (SIGTERM in the
 * command, a stop in the daemon) ends a copy that got far enough, the copy
 * is synced, linked to a leftover name and its record in the state
 * directory gets a second line and a third:
 *
 *   <directory>\n
 *   resume2 DEV INO SIZE MTIME_S MTIME_NS CTIME_S CTIME_NS EXTSIZE COPIED_TO CSUM\n
 *   <name of the original>
 *
 * The next run over the same file, unchanged (same inode, size, mtime and
 * ctime: ctime moves on any change, and nobody can set it back), opens the
 * kept copy and goes on at COPIED_TO with the checksum of what was read so
 * far.  The final verification reads the whole copy back, so a kept copy
 * that went bad is caught there.  Anything that does not match drops the
 * kept copy: it is only ever redundant.  So does age: a record last written
 * more than EA_REALIGN_RESUME_MAX_AGE_S ago (its mtime) is not resumed, and
 * cleanup removes it with its copy.  "resume2": CSUM is ea_csum's second
 * version (16 bytes a term); a "resume" record of the first is not resumed
 * (its copy is dropped as a leftover), since the sums would not agree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "extalign/hint.h"
#include "extalign/macro.h"
#include "realign-internal.h"

#define RECORD_MAX 8192

struct resume_line {
	uint64_t dev, ino, size, mtime_s, mtime_ns, ctime_s, ctime_ns, extsize, copied_to, csum;
	const char *dir, *name; /* into the record buffer */
};

/* Split a record read into buf (NUL-terminated); false when it keeps nothing. */
static bool parse(char *buf, struct resume_line *l)
{
	char *nl1 = strchr(buf, '\n'), *nl2;

	if (!nl1)
		return false;
	*nl1 = 0;
	nl2 = strchr(nl1 + 1, '\n');
	if (!nl2)
		return false;
	*nl2 = 0;
	l->dir = buf;
	l->name = nl2 + 1;
	return *l->name && !strchr(l->name, '/') &&
	       sscanf(nl1 + 1,
		      "resume2 %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		      " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
		      &l->dev, &l->ino, &l->size, &l->mtime_s, &l->mtime_ns, &l->ctime_s,
		      &l->ctime_ns, &l->extsize, &l->copied_to, &l->csum) == 10;
}

static bool same_file(const struct resume_line *l, const struct stat *st)
{
	return l->dev == (uint64_t)st->st_dev && l->ino == (uint64_t)st->st_ino &&
	       l->size == (uint64_t)st->st_size && l->mtime_s == (uint64_t)st->st_mtim.tv_sec &&
	       l->mtime_ns == (uint64_t)st->st_mtim.tv_nsec &&
	       l->ctime_s == (uint64_t)st->st_ctim.tv_sec &&
	       l->ctime_ns == (uint64_t)st->st_ctim.tv_nsec;
}

/* Written (stopped) longer ago than the limit; an unreadable record counts as old. */
static bool too_old(int recfd)
{
	struct stat st;

	if (fstat(recfd, &st) < 0)
		return true;
	return time(NULL) - st.st_mtim.tv_sec > EA_REALIGN_RESUME_MAX_AGE_S;
}

bool rl_resume_valid(int recfd, const char *record, size_t len)
{
	_cleanup_free_ char *buf = strndup(record, len);
	_cleanup_close_ int dir = -1;
	struct resume_line l;
	struct stat st;

	if (!buf || !parse(buf, &l) || too_old(recfd))
		return false;
	dir = open(l.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dir >= 0 && fstatat(dir, l.name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode) && same_file(&l, &st);
}

/* Rewrite the record: directory, resume line, name; synced. */
static int write_record(int fd, const char *dir, const struct rl_ctx *c)
{
	char line[256];
	size_t len;

	snprintf(line, sizeof(line),
		 "\nresume2 %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		 (uint64_t)c->st.st_dev, (uint64_t)c->st.st_ino, (uint64_t)c->st.st_size,
		 (uint64_t)c->st.st_mtim.tv_sec, (uint64_t)c->st.st_mtim.tv_nsec,
		 (uint64_t)c->st.st_ctim.tv_sec, (uint64_t)c->st.st_ctim.tv_nsec,
		 (uint64_t)c->o->extsize, c->copied_to, c->partial_csum);
	if (ftruncate(fd, 0) < 0)
		return negative_errno();
	len = strlen(dir);
	errno = 0;
	if (pwrite(fd, dir, len, 0) != (ssize_t)len ||
	    pwrite(fd, line, strlen(line), (off_t)len) != (ssize_t)strlen(line) ||
	    pwrite(fd, c->base, strlen(c->base), (off_t)(len + strlen(line))) !=
		    (ssize_t)strlen(c->base))
		return errno ? negative_errno() : -ENOSPC;
	return fsync(fd) < 0 ? negative_errno() : 0;
}

static int read_dir_line(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);
	char *nl;

	if (n < 0)
		return negative_errno();
	buf[n] = 0;
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	return 0;
}

int rl_resume_save(struct rl_ctx *c)
{
	char dir[RECORD_MAX];
	struct rl_record rec;
	char name[EA_REALIGN_LEFTOVER_MAX];
	uint64_t rnd = 0;
	int r;

	if (strchr(c->base, '\n') || !*c->base)
		return -EINVAL; /* a record line cannot hold it */
	if (fsync(c->tmpfd) < 0)
		return negative_errno();
	if (c->resumed) {
		/* Ours already: just move the mark on. */
		r = read_dir_line(c->resume->rec.fd, dir, sizeof(dir));
		if (r < 0)
			return r;
		r = write_record(c->resume->rec.fd, dir, c);
		if (r < 0)
			return r;
		closep(&c->resume->rec.fd);
		closep(&c->resume->rec.sdir);
		c->resume->rec.fd = c->resume->rec.sdir = -1;
		c->resumed = false;
		return 0;
	}
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = rl_now_ns() ^ ((uint64_t)getpid() << 32);
	ea_realign_leftover_name(name, (uint64_t)c->st.st_ino, rnd);
	r = rl_record_create(c->o->state_dir, c->dirfd, name, &rec);
	if (r < 0)
		return r;
	r = read_dir_line(rec.fd, dir, sizeof(dir));
	if (r >= 0)
		r = rl_link_tmpfile(c->tmpfd, c->dirfd, name);
	if (r < 0) {
		rl_record_remove(&rec);
		return r;
	}
	r = write_record(rec.fd, dir, c);
	if (r < 0 || fsync(c->dirfd) < 0) {
		unlinkat(c->dirfd, name, 0);
		rl_record_remove(&rec);
		return r < 0 ? r : negative_errno();
	}
	/* Unlocked from here: a later run may take it. */
	closep(&rec.fd);
	closep(&rec.sdir);
	return 0;
}

void rl_resume_drop(struct rl_ctx *c)
{
	if (!c->resumed)
		return;
	unlinkat(c->dirfd, c->resume->name, 0);
	fsync(c->dirfd);
	rl_record_remove(&c->resume->rec);
	c->resumed = false;
}

/* The kept copy named in this record, opened, if it still fits the file. */
static int open_kept(struct rl_ctx *c, const char *name)
{
	struct fsxattr fsx;
	struct stat st;
	int fd;

	fd = openat(c->dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_dev != c->st.st_dev || st.st_size != c->st.st_size || ea_fsx_get(fd, &fsx) < 0 ||
	    !(fsx.fsx_xflags & FS_XFLAG_EXTSIZE) || fsx.fsx_extsize != c->o->extsize) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int rl_resume_find(struct rl_ctx *c, struct rl_record_ref *ref)
{
	_cleanup_free_ char *here = NULL;
	char prefix[EA_REALIGN_LEFTOVER_MAX], link[64], buf[RECORD_MAX];
	const char *sd =
		c->o->state_dir && *c->o->state_dir ? c->o->state_dir : EA_REALIGN_STATE_DIR;
	struct dirent *de;
	ssize_t n;
	DIR *d;
	int found = 0;

	*ref = (struct rl_record_ref){ .rec = { .fd = -1, .sdir = -1 } };
	snprintf(prefix, sizeof(prefix), EA_REALIGN_LEFTOVER_PREFIX "%" PRIu64 ".",
		 (uint64_t)c->st.st_ino);
	here = malloc(PATH_MAX);
	if (!here)
		return -ENOMEM;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", c->dirfd);
	n = readlink(link, here, PATH_MAX - 1);
	if (n < 0)
		return 0;
	here[n] = 0;
	d = opendir(sd);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		_cleanup_close_ int rec = -1;
		struct resume_line l;
		int fd;

		if (strncmp(de->d_name, prefix, strlen(prefix)) ||
		    !ea_realign_leftover_parse(de->d_name, NULL))
			continue;
		rec = openat(dirfd(d), de->d_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (rec < 0 || flock(rec, LOCK_EX | LOCK_NB) < 0)
			continue; /* a running job's */
		n = pread(rec, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = 0;
		if (!parse(buf, &l) || strcmp(l.dir, here) || strcmp(l.name, c->base) ||
		    !same_file(&l, &c->st) || l.extsize != c->o->extsize)
			continue; /* another file's, or stale: cleanup decides */
		fd = too_old(rec) ? -ESTALE : open_kept(c, de->d_name);
		if (fd < 0) {
			/* The file is this one, the copy is not usable: drop both. */
			unlinkat(c->dirfd, de->d_name, 0);
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		ref->rec.fd = TAKE_FD(rec);
		ref->rec.sdir = open(sd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		/* A leftover name always fits (ea_realign_leftover_parse). */
		snprintf(ref->rec.name, sizeof(ref->rec.name), "%.63s", de->d_name);
		snprintf(ref->name, sizeof(ref->name), "%.63s", de->d_name);
		c->copied_to = l.copied_to;
		c->partial_csum = l.csum;
		c->resume = ref;
		c->resumed = true;
		found = fd;
	}
	closedir(d);
	return found;
}
