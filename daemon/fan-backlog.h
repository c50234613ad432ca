/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fanotify records read from the kernel but not handled yet (fan-backlog.c).
 * A leaf: includes no other daemon file, so the unit tests can include the
 * .c and fill it from a pipe.
 */
#ifndef EXTALIGND_FAN_BACKLOG_H
#define EXTALIGND_FAN_BACKLOG_H

#include <stddef.h>

#include "extalign/state.h" /* EA_BACKLOG_MAX, the default bound */

struct fan_backlog {
	unsigned char *buf;
	size_t head, tail; /* the unhandled records are buf[head, tail) */
	size_t cap;
	size_t max;  /* at most this many bytes; 0 means EA_BACKLOG_MAX */
	size_t peak; /* the most unhandled bytes held at once */
};

/*
 * Read everything fd (non-blocking) has queued, as long as the backlog has
 * room: 0 once the kernel's queue is empty or the backlog full, -errno if
 * a read failed.  What does not fit stays in the kernel's queue.
 */
int fan_backlog_fill(struct fan_backlog *b, int fd);
/* The unhandled records, whole ones only (each read returns whole records). */
void fan_backlog_peek(const struct fan_backlog *b, const void **p, size_t *len);
/* n bytes from the front were handled; an empty large buffer is given back. */
void fan_backlog_consumed(struct fan_backlog *b, size_t n);
void fan_backlog_free(struct fan_backlog *b);

#endif
