// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rename swaps made durable together (see ea_realign_batch in realign.h):
 * the directories to fsync once each, the records to remove after that.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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
	struct batch_dir dirs[EA_REALIGN_BATCH_MAX];
	size_t n_dirs;
	struct rl_record recs[EA_REALIGN_BATCH_MAX];
	size_t n_recs;
	uint64_t first_ns; /* when the oldest swap in it was made */
};

struct ea_realign_batch *ea_realign_batch_new(void)
{
	return calloc(1, sizeof(struct ea_realign_batch));
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
	b->n_dirs = b->n_recs = 0;
	return ret;
}

int ea_realign_batch_free(struct ea_realign_batch *b)
{
	int r = ea_realign_batch_flush(b);

	free(b);
	return r;
}

int rl_batch_add(struct ea_realign_batch *b, int dirfd, struct rl_record *rec)
{
	struct batch_dir *d = NULL;
	uint64_t now = rl_now_ns();
	struct stat st;
	int r;

	if (b->n_recs == EA_REALIGN_BATCH_MAX ||
	    (b->n_recs && now - b->first_ns >= EA_REALIGN_BATCH_MAX_AGE_NS)) {
		r = ea_realign_batch_flush(b);
		if (r < 0)
			return r;
	}
	if (fstat(dirfd, &st) < 0)
		return negative_errno();
	for (size_t i = 0; i < b->n_dirs && !d; i++)
		if (b->dirs[i].dev == st.st_dev && b->dirs[i].ino == st.st_ino)
			d = &b->dirs[i];
	if (!d) {
		int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);

		if (fd < 0)
			return negative_errno();
		d = &b->dirs[b->n_dirs++];
		*d = (struct batch_dir){ .fd = fd, .dev = st.st_dev, .ino = st.st_ino };
	}
	if (!b->n_recs)
		b->first_ns = now;
	b->recs[b->n_recs++] = *rec;
	*rec = (struct rl_record){ .fd = -1, .sdir = -1 };
	return 0;
}
