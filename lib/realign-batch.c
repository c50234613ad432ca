// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rename swaps made durable together (see ea_realign_batch in realign.h).
 *
 * A single swap writes a record naming its leftover and syncs it (the
 * record and the state directory) before the link, and syncs its directory
 * after the exchange: three syncs besides the copy's own.  A batch shares
 * one record among its files: their leftover names end in the batch's
 * random part, and the record lists the directories they are made in, so
 * it is synced once per new directory (twice for its first), not per file;
 * the directories are synced once each at the flush, and the record goes
 * after that.  A crash before the flush leaves the record, which names
 * every leftover the batch may have left (realign-cleanup.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "realign-internal.h"

struct batch_dir {
	int fd;
	dev_t dev;
	ino_t ino;
};

struct ea_realign_batch {
	/* The record and the directories it lists (fd -1: not kept open). */
	struct rl_record rec;
	uint64_t rnd;
	off_t rec_size;
	struct batch_dir listed[EA_REALIGN_BATCH_MAX];
	size_t n_listed;
	/* Swaps made, whose directories the flush syncs. */
	struct batch_dir dirs[EA_REALIGN_BATCH_MAX];
	size_t n_dirs;
	/* Resumed copies' own records, removed at the flush. */
	struct rl_record recs[EA_REALIGN_BATCH_MAX];
	size_t n_recs;
	size_t n_swaps;
	uint64_t first_ns; /* when the oldest swap in it was made */
	void *buf;	   /* rl_batch_buffer() */
};

struct ea_realign_batch *ea_realign_batch_new(void)
{
	struct ea_realign_batch *b = calloc(1, sizeof(struct ea_realign_batch));

	if (b)
		b->rec = (struct rl_record){ .fd = -1, .sdir = -1 };
	return b;
}

int ea_realign_batch_flush(struct ea_realign_batch *b)
{
	int ret = 0;

	if (!b)
		return 0;
	for (size_t i = 0; i < b->n_dirs; i++) {
		if (fsync(b->dirs[i].fd) < 0 && !ret)
			ret = negative_errno();
		closep(&b->dirs[i].fd);
	}
	/*
	 * Records go only when every directory is durable: a failed fsync
	 * keeps them all (closing releases their locks), as a failed fsync
	 * of a single swap keeps its one.
	 */
	for (size_t i = 0; i < b->n_recs; i++) {
		if (!ret) {
			rl_record_remove(&b->recs[i]);
		} else {
			closep(&b->recs[i].fd);
			closep(&b->recs[i].sdir);
		}
	}
	if (!ret) {
		rl_record_remove(&b->rec);
	} else {
		closep(&b->rec.fd);
		closep(&b->rec.sdir);
	}
	b->rec = (struct rl_record){ .fd = -1, .sdir = -1 };
	b->n_dirs = b->n_recs = b->n_listed = b->n_swaps = 0;
	b->rec_size = 0;
	return ret;
}

int ea_realign_batch_free(struct ea_realign_batch *b)
{
	int r = ea_realign_batch_flush(b);

	if (b)
		free(b->buf);
	free(b);
	return r;
}

void *rl_batch_buffer(struct ea_realign_batch *b)
{
	if (!b->buf && posix_memalign(&b->buf, 4096, RL_CHUNK) != 0)
		b->buf = NULL;
	return b->buf;
}

static struct batch_dir *find_dir(struct batch_dir *dirs, size_t n, const struct stat *st)
{
	for (size_t i = 0; i < n; i++)
		if (dirs[i].dev == st->st_dev && dirs[i].ino == st->st_ino)
			return &dirs[i];
	return NULL;
}

/* A new record for the batch: created, locked, still empty. */
static int record_start(struct ea_realign_batch *b, const char *state_dir)
{
	char name[EA_REALIGN_LEFTOVER_MAX];

	if (getrandom(&b->rnd, sizeof(b->rnd), 0) != sizeof(b->rnd))
		b->rnd = rl_now_ns() ^ ((uint64_t)getpid() << 32);
	rl_batch_record_name(name, b->rnd);
	return rl_record_open(state_dir, name, &b->rec);
}

int rl_batch_record_dir(struct ea_realign_batch *b, const char *state_dir, int dirfd, uint64_t *rnd)
{
	_cleanup_free_ char *path = NULL;
	bool first = false;
	struct stat st;
	size_t len;
	int r;

	if (b->n_swaps == EA_REALIGN_BATCH_MAX || b->n_listed == EA_REALIGN_BATCH_MAX ||
	    (b->n_swaps && rl_now_ns() - b->first_ns >= EA_REALIGN_BATCH_MAX_AGE_NS)) {
		r = ea_realign_batch_flush(b);
		if (r < 0)
			return r;
	}
	if (fstat(dirfd, &st) < 0)
		return negative_errno();
	if (b->rec.fd < 0) {
		r = record_start(b, state_dir);
		if (r < 0)
			return r;
		first = true;
	}
	if (!find_dir(b->listed, b->n_listed, &st)) {
		r = rl_record_dir_path(dirfd, &path);
		if (r < 0)
			return r;
		/* With its NUL: paths may hold any other byte. */
		len = strlen(path) + 1;
		errno = 0;
		if (pwrite(b->rec.fd, path, len, b->rec_size) != (ssize_t)len ||
		    (first ? fsync(b->rec.fd) : fdatasync(b->rec.fd)) < 0 ||
		    (first && fsync(b->rec.sdir) < 0))
			/* A short write without an error is a full filesystem. */
			return errno ? negative_errno() : -ENOSPC;
		b->rec_size += (off_t)len;
		b->listed[b->n_listed++] =
			(struct batch_dir){ .fd = -1, .dev = st.st_dev, .ino = st.st_ino };
	}
	*rnd = b->rnd;
	return 0;
}

int rl_batch_add(struct ea_realign_batch *b, int dirfd, struct rl_record *rec)
{
	struct batch_dir *d;
	struct stat st;

	/* Only a resumed copy, which needs no batch record, finds it full. */
	if (b->n_swaps == EA_REALIGN_BATCH_MAX)
		return -ENOBUFS;
	if (fstat(dirfd, &st) < 0)
		return negative_errno();
	d = find_dir(b->dirs, b->n_dirs, &st);
	if (!d) {
		int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);

		if (fd < 0)
			return negative_errno();
		d = &b->dirs[b->n_dirs++];
		*d = (struct batch_dir){ .fd = fd, .dev = st.st_dev, .ino = st.st_ino };
	}
	if (!b->n_swaps++)
		b->first_ns = rl_now_ns();
	if (rec->fd >= 0) {
		b->recs[b->n_recs++] = *rec;
		*rec = (struct rl_record){ .fd = -1, .sdir = -1 };
	}
	return 0;
}
