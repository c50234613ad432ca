/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers in the style of systemd's: scope-bound cleanup so that every
 * early return releases what it holds.
 */
#ifndef EXTALIGN_MACRO_H
#define EXTALIGN_MACRO_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f)   __attribute__((cleanup(f)))
#define _unused_       __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/* The word for n things: PLURAL(n, "file", "files"). */
#define PLURAL(n, one, many) ((n) == 1 ? (one) : (many))

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Leaves -1 behind: a second closep() of the same variable closes nothing. */
static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
		*fd = -1;
	}
}
#define _cleanup_close_ _cleanup_(closep)

/* Hand over ownership: return the value and leave the variable empty. */
#define TAKE_FD(fd)             \
	({                      \
		int _fd = (fd); \
		(fd) = -1;      \
		_fd;            \
	})
#define TAKE_PTR(p)                     \
	({                              \
		__typeof__(p) _p = (p); \
		(p) = NULL;             \
		_p;                     \
	})

/* -errno from the last failed libc call, never 0 even if errno was not set. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

static inline int is_power_of_2(unsigned long long x)
{
	return x && !(x & (x - 1));
}

#endif
