// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The data copy of realignment and its verification.  Plain reads and
 * writes (or O_DIRECT), never reflink or copy_file_range: those would share
 * or reuse the old, misaligned blocks, which is what we want to get rid of.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "realign-internal.h"

/* Sleep ns in slices, so a cancel or a lease break is seen within 100 ms. */
static int throttle(const struct rl_ctx *c, uint64_t ns)
{
	while (ns) {
		uint64_t slice = ns < 100000000ULL ? ns : 100000000ULL;
		struct timespec ts = { (time_t)(slice / 1000000000ULL),
				       (long)(slice % 1000000000ULL) };
		int r;

		nanosleep(&ts, NULL);
		ns -= slice;
		r = rl_interrupted(c);
		if (r)
			return r;
	}
	return 0;
}

/* Read up to n bytes at off; fewer only at end of file. */
static ssize_t read_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (k == 0)
			break;
		got += (size_t)k;
		/* O_DIRECT: a short read that is not block-sized means EOF. */
	}
	return (ssize_t)got;
}

static int write_full(int fd, const void *buf, size_t n, uint64_t off)
{
	size_t put = 0;

	while (put < n) {
		ssize_t k = pwrite(fd, (const char *)buf + put, n - put, (off_t)(off + put));

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		if (k == 0) /* nothing written and no error: space ran out */
			return -ENOSPC;
		put += (size_t)k;
	}
	return 0;
}

static uint64_t ranges_bytes(const struct ea_range *r, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += r[i].end - r[i].start;
	return total;
}

/*
 * O_DIRECT writes whole blocks; a last block that is partly past end of file
 * would move end of file, and truncating back would free the allocation
 * past it.  So the tail goes through the page cache.
 */
static int write_tail(struct rl_ctx *c, size_t n, uint64_t off)
{
	int fl = fcntl(c->tmpfd, F_GETFL), r;

	if (fl < 0 || fcntl(c->tmpfd, F_SETFL, fl & ~O_DIRECT) < 0)
		return negative_errno();
	r = write_full(c->tmpfd, c->buf, n, off);
	/* Back to O_DIRECT: the verification reads the disk, not the cache. */
	if (fcntl(c->tmpfd, F_SETFL, fl) < 0 && !r)
		r = negative_errno();
	return r;
}

/* Copy [start, end) of the original, chunk by chunk. */
static int copy_range(struct rl_ctx *c, uint64_t start, uint64_t end, size_t chunk,
		      struct ea_csum *cs, uint64_t *done, uint64_t total)
{
	uint64_t size = (uint64_t)c->st.st_size;
	struct rl_csum_job job;
	int ret;

	for (uint64_t off = start; off < end;) {
		size_t want = (size_t)(end - off < chunk ? end - off : chunk);
		ssize_t got = read_full(c->fd, c->buf, want, off);

		/* Which side failed: an I/O error reading the original is not one of the copy. */
		if (got < 0) {
			c->res->step = "read the original";
			return (int)got;
		}
		if (got == 0)
			return 0; /* shrank under us: the final check will say so */
		/* Summed while written: both only read the buffer. */
		rl_csum_start(&job, c->buf, (size_t)got, off);
		if (c->direct && off + (uint64_t)got >= size && (size_t)got % c->dio_align)
			ret = write_tail(c, (size_t)got, off);
		else
			ret = write_full(c->tmpfd, c->buf, (size_t)got, off);
		rl_csum_wait(&job, cs);
		if (ret < 0) {
			c->res->step = "write the copy";
			return ret;
		}
		off += (uint64_t)got;
		*done += (uint64_t)got;
		/*
		 * A resume point on a unit boundary: a later run may go on with
		 * O_DIRECT where this one read through the page cache.
		 */
		if (off % c->o->extsize == 0) {
			c->copied_to = off;
			c->partial_csum = ea_csum_final(cs);
		}
		rl_progress(c, EA_PHASE_COPY, *done, total);
		c->res->bytes_copied = *done;

		ret = rl_interrupted(c);
		if (ret)
			return ret;
		ret = throttle(c,
			       ea_ratelimit_account(c->o->ratelimit, (uint64_t)got, rl_now_ns()));
		if (ret)
			return ret;
		if ((size_t)got < want)
			return 0;
	}
	return 0;
}

/*
 * Unwritten blocks for [start, end) of the copy, whole units (see
 * realign-plan.c).  A filesystem without fallocate gets plain writes.
 */
static int allocate(struct rl_ctx *c, uint64_t start, uint64_t end, bool *can)
{
	if (!*can)
		return 0;
	if (fallocate(c->tmpfd, FALLOC_FL_KEEP_SIZE, (off_t)start, (off_t)(end - start)) == 0)
		return 0;
	if (errno == EOPNOTSUPP) {
		*can = false;
		return 0;
	}
	return negative_errno();
}

int rl_copy(struct rl_ctx *c, const struct rl_plan *p, uint64_t *csum)
{
	uint64_t size = (uint64_t)c->st.st_size, done = 0;
	uint64_t unit = c->o->extsize, step;
	size_t chunk = RL_CHUNK, di = 0;
	bool can_allocate = true;
	struct ea_csum cs;
	int ret;

	uint64_t from = c->resumed ? c->copied_to : 0;
	struct stat tst;

	ea_csum_init(&cs);
	cs.h = c->resumed ? c->partial_csum : 0;
	rl_progress(c, EA_PHASE_COPY, 0, p->data_bytes);
	/*
	 * The size first: allocation and writes then all lie inside it.  Not
	 * again on a kept copy: truncating to the same size frees what lies
	 * beyond end of file.
	 */
	if (fstat(c->tmpfd, &tst) < 0)
		return negative_errno();
	if ((uint64_t)tst.st_size != size && ftruncate(c->tmpfd, (off_t)size) < 0)
		return negative_errno();
	/*
	 * Under a bandwidth limit, about ten chunks a second: the disk sees a
	 * steady trickle instead of bursts, and progress moves smoothly.
	 */
	if (c->o->ratelimit && c->o->ratelimit->rate && c->o->ratelimit->rate / 10 < chunk) {
		uint64_t align = c->direct ? c->dio_align : EA_CSUM_ALIGN;
		uint64_t small = c->o->ratelimit->rate / 10 / align * align;

		chunk = (size_t)(small > 65536 ? small : (65536 + align - 1) / align * align);
		if (chunk > RL_CHUNK)
			chunk = RL_CHUNK;
	}
	/* Allocate a piece, fill it, go on: running out of space stops early. */
	step = (RL_CHUNK + unit - 1) / unit * unit;
	for (size_t i = 0; i < p->n_alloc; i++) {
		for (uint64_t ps = p->alloc[i].start; ps < p->alloc[i].end; ps += step) {
			uint64_t pe = ps + step < p->alloc[i].end ? ps + step : p->alloc[i].end;

			if (pe <= from)
				continue; /* a kept copy has it */

			ret = allocate(c, ps, pe, &can_allocate);
			if (ret < 0) {
				c->res->step = "allocate";
				return ret;
			}
			for (; di < p->n_data && p->data[di].start < pe; di++) {
				uint64_t s = p->data[di].start > ps ? p->data[di].start : ps;
				uint64_t e = p->data[di].end < pe ? p->data[di].end : pe;

				if (s < from)
					s = from;
				if (s < e) {
					ret = copy_range(c, s, e, chunk, &cs, &done, p->data_bytes);
					if (ret)
						return ret;
				}
				if (p->data[di].end > pe)
					break; /* goes on in the next piece */
			}
			ret = rl_interrupted(c);
			if (ret)
				return ret;
		}
	}
	/* Buffered writes meet the disk here: a write error shows up now. */
	if (fsync(c->tmpfd) < 0) {
		c->res->step = "sync the copy";
		return negative_errno();
	}
	*csum = ea_csum_final(&cs);
	return 0;
}

/*
 * Read the ranges of the copy and sum them into cs.  With a spare buffer
 * the reads alternate between it and c->buf, and each chunk is summed
 * while the next is read; the job is always waited for before a return.
 */
static int verify_ranges(struct rl_ctx *c, const struct ea_range *r, size_t n, void *spare,
			 struct ea_csum *cs, uint64_t total)
{
	void *bufs[2] = { c->buf, spare ? spare : c->buf };
	struct rl_csum_job job = { 0 };
	uint64_t done = 0;
	unsigned k = 0;
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		for (uint64_t off = r[i].start; off < r[i].end;) {
			size_t want =
				(size_t)(r[i].end - off < RL_CHUNK ? r[i].end - off : RL_CHUNK);
			ssize_t got = read_full(c->tmpfd, bufs[k], want, off);

			/* The last chunk's buffer is free again (or is this one). */
			rl_csum_wait(&job, cs);
			if (got <= 0) {
				ret = (int)got;
				break;
			}
			if (spare)
				rl_csum_start(&job, bufs[k], (size_t)got, off);
			else
				ea_csum_update(cs, off, bufs[k], (size_t)got);
			k = spare ? k ^ 1 : 0;
			off += (uint64_t)got;
			done += (uint64_t)got;
			rl_progress(c, EA_PHASE_VERIFY, done, total);
			ret = rl_interrupted(c);
			if (ret || (size_t)got < want)
				break;
		}
	}
	rl_csum_wait(&job, cs);
	return ret;
}

int rl_verify(struct rl_ctx *c, uint64_t csum)
{
	_cleanup_free_ struct ea_range *r = NULL;
	uint64_t size = (uint64_t)c->st.st_size, total;
	struct ea_csum cs;
	struct stat st;
	void *spare = NULL;
	size_t n;
	int ret;

	if (fstat(c->tmpfd, &st) < 0)
		return negative_errno();
	if ((uint64_t)st.st_size != size) {
		c->res->detail = "the copy's size differs from the original's";
		return -EBADMSG;
	}
	/*
	 * Read what is on disk, not what we left in the page cache: O_DIRECT
	 * does, and in buffered mode the clean pages (fsync ran) are dropped.
	 */
	if (!c->direct)
		posix_fadvise(c->tmpfd, 0, 0, POSIX_FADV_DONTNEED);
	ret = ea_ranges_read(c->tmpfd, size, &r, &n);
	if (ret < 0)
		return ret;
	n = ea_ranges_align(r, n, c->direct ? c->dio_align : EA_CSUM_ALIGN, size);
	total = ranges_bytes(r, n);
	ea_csum_init(&cs);
	rl_progress(c, EA_PHASE_VERIFY, 0, total);
	/* More than a chunk: the next is read while the last is summed. */
	if (total > RL_CHUNK && posix_memalign(&spare, 4096, RL_CHUNK) != 0)
		spare = NULL;
	ret = verify_ranges(c, r, n, spare, &cs, total);
	free(spare);
	if (ret)
		return ret;
	c->res->checksum = csum;
	if (ea_csum_final(&cs) == csum)
		return 0;
	c->res->detail = "the copy read back differs from what was read from the original";
	return -EBADMSG;
}
