// SPDX-License-Identifier: LGPL-2.1-or-later
/* The block devices under the filesystems extalignd watches, for metrics. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "extalign/blockdev.h"
#include "extalign/macro.h"
#include "extalign/state.h"

int ea_state_mark_bdevs(const struct ea_state *s, const char *sysroot, struct ea_prom_bdev **ret,
			size_t *n)
{
	_cleanup_free_ struct ea_bdev *list = NULL;
	_cleanup_free_ struct ea_prom_bdev *v = NULL;
	size_t n_list = 0, count = 0;
	int r;

	*ret = NULL;
	*n = 0;
	if (!s->n_marks)
		return 0;
	r = ea_bdev_list(sysroot, &list, &n_list);
	if (r < 0)
		return r;
	v = calloc(s->n_marks, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_marks; i++) {
		struct stat st;
		ssize_t k;
		bool dup = false;

		/* Only looks: the path may be gone or replaced; then it is left out. */
		if (stat(s->marks[i].path, &st) < 0)
			continue;
		k = ea_bdev_find(list, n_list, major(st.st_dev), minor(st.st_dev));
		if (k < 0)
			continue;
		for (size_t j = 0; j < count && !dup; j++)
			dup = !strcmp(v[j].device, list[k].name);
		if (dup)
			continue;
		snprintf(v[count].device, sizeof(v[count].device), "%s", list[k].name);
		/* The range writes to this device may use: the verdict, not the raw queue. */
		v[count].unit_min = list[k].atomic.unit_min;
		v[count].unit_max = list[k].atomic.unit_max;
		count++;
	}
	*ret = TAKE_PTR(v);
	*n = count;
	return 0;
}
