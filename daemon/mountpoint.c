// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a filesystem is mounted, for the metrics' mountpoint label.  Apart
 * from util.c: libmount brings <sys/mount.h>, whose open_tree() is not ours.
 */
#include <libmount.h>
#include <stdlib.h>
#include <string.h>

#include "mountpoint.h"

char *mountpoint_of(dev_t dev)
{
	struct libmnt_table *tb = mnt_new_table_from_file("/proc/self/mountinfo");
	struct libmnt_iter *it = mnt_new_iter(MNT_ITER_FORWARD);
	struct libmnt_fs *fs;
	const char *found = NULL;
	char *ret;

	while (tb && it && mnt_table_next_fs(tb, it, &fs) == 0) {
		const char *root = mnt_fs_get_root(fs);

		if (mnt_fs_get_devno(fs) != dev)
			continue;
		/* A bind mount of a subdirectory names less of the filesystem. */
		if (!found || (root && !strcmp(root, "/"))) {
			found = mnt_fs_get_target(fs);
			if (root && !strcmp(root, "/"))
				break;
		}
	}
	ret = strdup(found ? found : "");
	mnt_free_iter(it);
	mnt_unref_table(tb);
	return ret;
}
