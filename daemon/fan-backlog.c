// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Why a backlog: the kernel queues at most fs.fanotify.max_queued_events
 * (16384) events for us, and a create storm outruns the hinting, which
 * costs several system calls per file.  Handled as they were read, the
 * kernel's queue grew by the difference of the two rates until it
 * overflowed, and each overflow costs a walk of every watched tree
 * (tests/bench/compare.sh: 3 overflows in 5 storms of 100,000 files).
 * Reading is cheap, so the daemon reads whatever is queued between small
 * batches of handling and keeps the records here, in the order they came,
 * up to a bound of its own; past that it leaves them in the kernel, whose
 * queue then overflows as before.
 *
 * Not FAN_UNLIMITED_QUEUE: the kernel then allocates events with
 * __GFP_NOFAIL in the writer's context, with no bound but memory, for
 * every create on a marked filesystem, rule or not.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fan-backlog.h"

/* One read's room at least: a read returns only whole records. */
#define READ_MIN 65536
/* An empty buffer larger than this is freed after a storm. */
#define KEEP_MAX (4 * READ_MIN)

static size_t limit(const struct fan_backlog *b)
{
	return b->max ? b->max : EA_BACKLOG_MAX;
}

/* Room for one more read at the tail: false when the backlog is full. */
static bool make_room(struct fan_backlog *b)
{
	size_t used = b->tail - b->head, ncap;
	unsigned char *v;

	if (b->cap - b->tail >= READ_MIN)
		return true;
	if (b->head) {
		memmove(b->buf, b->buf + b->head, used);
		b->head = 0;
		b->tail = used;
		if (b->cap - b->tail >= READ_MIN)
			return true;
	}
	ncap = b->cap ? 2 * b->cap : KEEP_MAX;
	if (ncap > limit(b))
		ncap = limit(b);
	if (ncap - used < READ_MIN)
		return false;
	v = realloc(b->buf, ncap);
	if (!v)
		return false; /* as full: the kernel keeps the rest */
	b->buf = v;
	b->cap = ncap;
	return true;
}

int fan_backlog_fill(struct fan_backlog *b, int fd)
{
	while (make_room(b)) {
		ssize_t n = read(fd, b->buf + b->tail, b->cap - b->tail);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		if (n == 0)
			return 0;
		b->tail += (size_t)n;
		if (b->tail - b->head > b->peak)
			b->peak = b->tail - b->head;
	}
	return 0;
}

void fan_backlog_peek(const struct fan_backlog *b, const void **p, size_t *len)
{
	*p = b->buf ? b->buf + b->head : NULL;
	*len = b->tail - b->head;
}

void fan_backlog_consumed(struct fan_backlog *b, size_t n)
{
	b->head += n;
	if (b->head < b->tail)
		return;
	b->head = b->tail = 0;
	if (b->cap > KEEP_MAX) {
		free(b->buf);
		b->buf = NULL;
		b->cap = 0;
	}
}

void fan_backlog_free(struct fan_backlog *b)
{
	free(b->buf);
	b->buf = NULL;
	b->head = b->tail = b->cap = 0;
}
