// SPDX-License-Identifier: GPL-2.0-or-later
/* The late list of extalignd: see late.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "late.h"
#include "util.h"

int late_add(struct late_list *l, struct file_id id, const char *rule, const char *path,
	     uint32_t extsize, int forcealign, uint64_t max, size_t *index)
{
	struct late_file *v, *f;
	int r;

	/* Remembered even when the list is full: one complaint per file. */
	r = id_set_add(&l->ids, id);
	if (r <= 0)
		return r; /* 0: already listed (a rescan meets it again) */
	if (max && l->n >= max)
		return -ENOSPC;
	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	f = &v[l->n];
	*f = (struct late_file){
		.usec = now_usec(CLOCK_REALTIME),
		.id = id,
		.rule = strdup(rule),
		.path = strdup(path),
		.queue = EA_LATE_LISTED,
		.extsize = extsize,
		.forcealign = forcealign,
	};
	if (!f->rule || !f->path) {
		free(f->rule);
		free(f->path);
		return -ENOMEM;
	}
	*index = l->n++;
	return 1;
}

void late_forget(struct late_list *l, struct file_id id)
{
	(void)id_set_remove(&l->ids, id);
}

void late_free(struct late_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].rule);
		free(l->v[i].path);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
	id_set_free(&l->ids);
}
