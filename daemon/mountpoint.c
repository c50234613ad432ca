// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Where a filesystem is mounted, for the metrics' mountpoint label.  Read
 * through libextalign's mount table, which loads libmount only when asked:
 * the daemon pays for it once per filesystem, not at every start.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "extalign/blockdev.h"
#include "mountpoint.h"

char *mountpoint_of(dev_t dev)
{
	struct ea_mount *m = NULL;
	const char *found = "";
	size_t n = 0;
	char *ret;

	if (ea_mounts_read(NULL, &m, &n) >= 0)
		for (size_t i = 0; i < n; i++)
			if (m[i].major == major(dev) && m[i].minor == minor(dev)) {
				found = m[i].target;
				break;
			}
	ret = strdup(found ? found : "");
	ea_mounts_free(m, n);
	return ret;
}
