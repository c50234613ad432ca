/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which processes have a file open, as fuser(1) finds them: for messages. */
#ifndef EXTALIGN_CMD_OPENERS_H
#define EXTALIGN_CMD_OPENERS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Up to max processes other than this one with the file (dev, ino) open,
 * found through /proc/PID/fd; how many were found (at most max).
 */
size_t openers_find(dev_t dev, ino_t ino, pid_t *pids, size_t max);

/*
 * " (pid 123 mysqld, pid 456 cp)" for the processes that have path open,
 * or "" when none is found (or they cannot be seen: another user's, as
 * non-root).  The result is in buf.
 */
const char *openers_text(const char *path, char *buf, size_t len);

#endif
