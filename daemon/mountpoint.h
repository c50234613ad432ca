/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef EXTALIGND_MOUNTPOINT_H
#define EXTALIGND_MOUNTPOINT_H

#include <sys/types.h>

/* Where the filesystem dev is mounted (its root, when it is mounted more
 * than once), malloc()ed; "" when not found, NULL on ENOMEM. */
char *mountpoint_of(dev_t dev);

#endif
