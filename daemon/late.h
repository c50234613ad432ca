/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The late list: files that had data before their hint could be set.  apply
 * adds to it, jobs works through it, main publishes it.  Entries are never
 * removed while the daemon runs, so an index stays valid.
 */
#ifndef EXTALIGND_LATE_H
#define EXTALIGND_LATE_H

#include <stddef.h>
#include <stdint.h>

#include "extalign/state.h"

#include "event.h"

struct late_file {
	uint64_t usec;
	struct file_id id;
	char *rule;
	char *path;
	enum ea_late_queue queue;
	uint32_t extsize;
	int forcealign;
	/* For extalign status: why a queued file waits, what a running job
	 * does ("copying"), and its bytes done of total (0: unknown). */
	char reason[96];
	uint64_t done, total;
};

struct late_list {
	struct late_file *v;
	size_t n;
	struct id_set ids;
};

/*
 * List a file: 1 with *index set, 0 when it was seen already, -ENOSPC when
 * max (0: no limit) entries are there, -ENOMEM.  A file refused for space
 * counts as seen.
 */
int late_add(struct late_list *l, struct file_id id, const char *rule, const char *path,
	     uint32_t extsize, int forcealign, uint64_t max, size_t *index);
/* The file id is no longer the listed file's (a job replaced the inode):
 * a new file that gets the number is a new file. */
void late_forget(struct late_list *l, struct file_id id);
void late_free(struct late_list *l);

#endif
