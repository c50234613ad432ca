/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stages a new name goes through in apply.c, in order:
 *
 *   open_name()    name-open.c    open it without following anything
 *   match_rule()   rule-match.c   its rule, and that it lies in the rule's tree
 *   hint_name()    hint-name.c    set the hint and read it back, note the
 *                                 kernel's inheritance, or list it as late
 *   report_name()  name-report.c  count and log what became of it, once
 *
 * Each stage fills in a struct name_result and says whether the next one
 * runs; only the last one counts or logs anything.
 */
#ifndef EXTALIGND_PIPELINE_H
#define EXTALIGND_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "apply.h"
#include "extalign/hint.h"

/* The file a name led to, opened for reading (never O_PATH) by open_name(). */
struct target {
	int fd;
	struct stat st; /* of fd; re-read after a hint, when data may have come */
	const char *path;
	int parentfd;	 /* its directory; -1 when a walk from a root found it */
	uint64_t dir_id; /* watch's (see struct new_name); 0: none */
	enum origin origin;
	bool is_dir;
	bool count; /* a walk after the first one counts nothing again */
};

/* What became of a name: the one thing report_name() reports. */
enum name_fate {
	FATE_NONE,	     /* nothing to say: gone, a job's, data older than us */
	FATE_NO_RULE,	     /* no rule, or none with a hint for its kind */
	FATE_OPEN_FAILED,    /* err */
	FATE_STAT_FAILED,    /* err */
	FATE_NOT_FOLLOWED,   /* a symlink or a device, FIFO, socket (mode) */
	FATE_OTHER_FS,	     /* a mount point below a marked filesystem */
	FATE_LEASED,	     /* somebody holds a lease on it */
	FATE_NO_FSXATTR,     /* the filesystem has no fsxattr (err) */
	FATE_FSXATTR_FAILED, /* err */
	FATE_LOOKUP_FAILED,  /* err */
	FATE_OUTSIDE,	     /* not inside its rule's directory on disk (err) */
	FATE_INHERITED,	     /* the kernel gave it the hint at creation */
	FATE_HARDLINKS,	     /* nlink */
	FATE_LATE,	     /* has data: late_add()'s answer in late */
	FATE_HINTED,	     /* we set the hint */
	FATE_KEPT_NOTHING,   /* the kernel accepted the hint and kept nothing */
	FATE_HINT_FAILED,    /* err */
};

struct name_result {
	enum name_fate fate;
	const char *path;
	const struct ea_rule *rule; /* NULL: none (yet) */
	dev_t dev;
	bool is_dir, count;
	int err;
	mode_t mode;	  /* FATE_NOT_FOLLOWED */
	nlink_t nlink;	  /* FATE_HARDLINKS */
	unsigned dropped; /* FATE_KEPT_NOTHING: EA_DROPPED_* */
	const char *fstype;
	int late; /* FATE_LATE: 0 already listed, 1 listed, -errno */
};

/* A stage's end: res->fate is fate, for err; false, so the next stage does not run. */
static inline bool end_with(struct name_result *res, enum name_fate fate, int err)
{
	res->fate = fate;
	res->err = err;
	return false;
}

/*
 * name-open.c: the new name n opened as t (t->path is *path, which the
 * caller frees).  False when there is nothing to go on with; res says why.
 */
bool open_name(struct apply *a, const struct new_name *n, char **path, struct target *t,
	       struct name_result *res);

/* rule-match.c: t's rule and attributes; false when the hint stage has no work. */
bool match_rule(struct apply *a, const struct target *t, const struct ea_rule **rule,
		struct fsxattr *fsx, struct name_result *res);

/* hint-name.c */
void hint_name(struct apply *a, struct target *t, const struct ea_rule *rule,
	       const struct fsxattr *fsx, struct name_result *res);
/* Does fsx carry h (for a directory: the inheritable kind)? */
bool has_hint(const struct fsxattr *fsx, bool is_dir, const struct ea_hint *h);
/* List a file with data for realignment; the answer goes in res->late. */
void list_late(struct apply *a, const struct stat *st, const struct ea_rule *rule, const char *path,
	       const struct ea_hint *h, struct name_result *res);

/* name-report.c: count and log res, once. */
void report_name(struct apply *a, const struct name_result *res);

#endif
