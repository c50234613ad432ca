/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What happens to a new name or a tree (apply.c, through the stages of
 * pipeline.h): find its rule, set the hint, note the kernel's inheritance,
 * or list the file as late.  Apply calls nothing above it: what it needs
 * from the other parts comes through the hooks main fills in.
 */
#ifndef EXTALIGND_APPLY_H
#define EXTALIGND_APPLY_H

#include <stdbool.h>

#include "extalign/policy.h"
#include "event.h"
#include "late.h"
#include "util.h"
#include "watch.h" /* the types of what watch reports, not its functions */

struct apply_hooks {
	void *userdata;
	/* Is a realignment job rewriting this file?  Opening it would break
	 * the job's lease. */
	bool (*busy)(void *userdata, struct file_id id);
	/* Did a realignment job put this file under its name? */
	bool (*replaced)(void *userdata, struct file_id id, const char *path);
	/* A directory inside a tree was met or made (inotify must watch it). */
	void (*dir_seen)(void *userdata, int dirfd, const char *path);
	/* The late file at index asks to be realigned. */
	void (*late_listed)(void *userdata, size_t index);
	/* The watched filesystem of a device, or NULL. */
	const struct fsmark *(*fs_of)(void *userdata, dev_t dev);
};

/* The kinds of hint (ea_hint_kind()) a filesystem was seen to keep. */
struct kept {
	dev_t dev;
	unsigned kinds;
};

/* A filesystem (and rule, "" for none) already warned about. */
struct warned {
	dev_t dev;
	char *rule;
};

struct apply {
	const struct ea_policy *policy; /* apply_set_policy() */
	bool project_rules;		/* any project rule: no cheap path filter then */
	bool inotify;			/* directories must be watched one by one */
	bool no_realign;
	uint64_t start_realtime_usec; /* files born before this are not "late" */
	struct report *report;
	struct late_list *late;
	struct apply_hooks hooks;

	bool scanned_once; /* the start-up scan is done */
	bool rescanning;   /* a later walk: counts nothing a first one counted */
	struct warned *warned;
	size_t n_warned;
	struct kept *kept;
	size_t n_kept;
	int proc_fd; /* /proc/self/fd, main's; -1: paths */
	/* The last event directory found inside a rule's tree: watch's id for
	 * it (see struct new_name) and the rule. */
	uint64_t inside_dir_id;
	const struct ea_rule *inside_rule;
};

void apply_set_policy(struct apply *a, const struct ea_policy *p);
void apply_free(struct apply *a);
/* A name watch reported. */
void apply_name(struct apply *a, const struct new_name *n);
/* Walk every watched tree (after an overflow, at start, after reload). */
void apply_rescan(struct apply *a, bool overflow);
/* Walk the realign = yes trees for misaligned files (idle time only). */
void apply_realign_scan(struct apply *a);

#endif
