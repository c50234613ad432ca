// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What extalignd does to a new name or a tree: the stages of pipeline.h in
 * order, and the walks (start-up, rescans, the realign scan) that feed
 * their files through the same stages.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <syslog.h>
#include <time.h>

#include "pipeline.h"
#include "message-ids.h"
#include "extalign/extent.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/realign.h"
#include "extalign/walk.h"

void apply_free(struct apply *a)
{
	for (size_t i = 0; i < a->n_warned; i++)
		free(a->warned[i].rule);
	free(a->warned);
	a->warned = NULL;
	a->n_warned = 0;
	free(a->kept);
	a->kept = NULL;
	a->n_kept = 0;
}

void apply_set_policy(struct apply *a, const struct ea_policy *p)
{
	a->policy = p;
	a->inside_rule = NULL; /* the old rules are gone */
	a->project_rules = false;
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].kind == EA_RULE_PROJECT)
			a->project_rules = true;
}

/* Through the hooks: apply never calls the parts that use it. */
static bool busy(const struct apply *a, dev_t dev, ino_t ino)
{
	return a->hooks.busy && a->hooks.busy(a->hooks.userdata, (struct file_id){ dev, ino });
}

static void dir_seen(struct apply *a, int fd, const char *path)
{
	if (a->inotify && a->hooks.dir_seen)
		a->hooks.dir_seen(a->hooks.userdata, fd, path);
}

static bool walk_tree(struct apply *a, const struct fsmark *fs, int dirfd, const char *path,
		      enum origin o);

/*
 * The stages after the open, for t (open for reading, not O_PATH); then,
 * for a directory that may bring a tree, its contents.
 */
static void apply_target(struct apply *a, const struct fsmark *fs, struct target *t)
{
	const struct ea_rule *rule;
	struct fsxattr fsx;
	struct name_result res;

	t->is_dir = S_ISDIR(t->st.st_mode);
	/* A walk after the first one meets what was counted already. */
	t->count = t->origin != ORIGIN_SCAN || !a->rescanning;
	res = (struct name_result){ .path = t->path,
				    .dev = t->st.st_dev,
				    .is_dir = t->is_dir,
				    .count = t->count,
				    .fstype = fs ? fs->fstype : NULL };
	if (match_rule(a, t, &rule, &fsx, &res))
		hint_name(a, t, rule, &fsx, &res);
	report_name(a, &res);
	if (res.fate != FATE_NO_RULE && res.fate != FATE_INHERITED && res.fate != FATE_HINTED)
		return;
	/* A directory renamed into a tree brings its contents; inotify also
	 * needs them for entries made before its watch existed.  Scans walk
	 * on their own. */
	if (!t->is_dir || t->origin == ORIGIN_SCAN ||
	    ea_policy_dir_cover(a->policy, t->path) != EA_DIR_INSIDE)
		return;
	if (a->inotify) {
		dir_seen(a, t->fd, t->path);
		walk_tree(a, fs, t->fd, t->path, t->origin);
	} else if (t->origin == ORIGIN_MOVE) {
		walk_tree(a, fs, t->fd, t->path, t->origin);
	}
}

/* A file or directory a walk from a tree root we opened without symlinks found. */
static void apply_found(struct apply *a, const struct fsmark *fs, int fd, const struct stat *st,
			const char *path)
{
	struct target t = {
		.fd = fd, .st = *st, .path = path, .parentfd = -1, .origin = ORIGIN_SCAN
	};

	apply_target(a, fs, &t);
}

void apply_name(struct apply *a, const struct new_name *n)
{
	_cleanup_free_ char *path = NULL;
	struct target t = { .fd = -1 };
	struct name_result res;

	if (open_name(a, n, &path, &t, &res))
		apply_target(a, n->fs, &t);
	else
		report_name(a, &res);
	closep(&t.fd);
}

struct walk_ctx {
	struct apply *a;
	const struct fsmark *fs;
	enum origin o;
	unsigned seen;
};

/*
 * A walk of a large tree must not keep SIGTERM waiting: the signal stays
 * pending (blocked, for the signalfd) until the loop reads it, so look at
 * the pending set now and then and stop the walk for the loop to exit.
 */
static bool stop_pending(unsigned *seen)
{
	sigset_t set;

	if (++*seen % 256)
		return false;
	return sigpending(&set) == 0 && (sigismember(&set, SIGTERM) || sigismember(&set, SIGINT));
}

#define WALK_STOPPED 1

/*
 * Never open a file one of our realignment jobs is rewriting: any open
 * breaks the job's write lease and makes it give up.
 */
static bool not_in_a_job(struct apply *a, const struct stat *st)
{
	return !busy(a, st->st_dev, st->st_ino);
}

static bool walk_may_open(const struct stat *st, void *userdata)
{
	return not_in_a_job(((struct walk_ctx *)userdata)->a, st);
}

static int walk_cb(const struct ea_walk_entry *e, void *userdata)
{
	struct walk_ctx *c = userdata;

	if (stop_pending(&c->seen))
		return WALK_STOPPED;
	switch (e->kind) {
	case EA_WALK_DIR:
		dir_seen(c->a, e->fd, e->path);
		/* fall through */
	case EA_WALK_FILE:
		if (e->fd < 0)
			break; /* being realigned */
		apply_found(c->a, c->fs, e->fd, &e->st, e->path);
		break;
	case EA_WALK_SYMLINK:
	case EA_WALK_OTHER:
	case EA_WALK_OTHER_FS:
		break;
	case EA_WALK_ERROR:
		if (e->err != -ENOENT)
			report_error(c->a->report, EA_STAT_FAIL_IO, NULL, c->fs ? c->fs->dev : 0,
				     e->path, e->err, "cannot scan");
		break;
	}
	return 0;
}

/* False when the walk was stopped for SIGTERM. */
static bool walk_tree(struct apply *a, const struct fsmark *fs, int dirfd, const char *path,
		      enum origin o)
{
	struct walk_ctx c = { a, fs, o, 0 };
	int r = ea_walk_filtered(dirfd, path, walk_may_open, walk_cb, &c);

	if (r < 0)
		report_error(a->report, EA_STAT_FAIL_IO, NULL, fs ? fs->dev : 0, path, r,
			     "scan failed");
	return r != WALK_STOPPED;
}

void apply_rescan(struct apply *a, bool overflow)
{
	const struct ea_policy *p = a->policy;

	a->rescanning = a->scanned_once;

	for (size_t i = 0; i < p->n_watch; i++) {
		_cleanup_close_ int fd = open_tree(p->watch[i].path, O_RDONLY);
		const struct fsmark *fs;
		struct stat st;

		if (fd < 0) {
			if (fd == -ELOOP)
				report_error_id(a->report, MSGID_RULE_DIR_UNSAFE,
						EA_STAT_FAIL_WATCH, NULL, 0, p->watch[i].path, fd,
						"a symlink in the watched path, not scanned");
			else if (fd == -ENOENT)
				log_id(&a->report->log, MSGID_RULE_DIR_MISSING, LOG_NOTICE, NULL,
				       p->watch[i].path, 0,
				       "does not exist: nothing to scan, its creation will be "
				       "seen");
			continue; /* its creation will be an event */
		}
		if (fstat(fd, &st) < 0)
			continue;
		fs = a->hooks.fs_of ? a->hooks.fs_of(a->hooks.userdata, st.st_dev) : NULL;
		dir_seen(a, fd, p->watch[i].path);
		apply_found(a, fs, fd, &st, p->watch[i].path);
		if (!walk_tree(a, fs, fd, p->watch[i].path, ORIGIN_SCAN))
			break;
	}
	if (overflow)
		report_count(a->report, EA_CNT_RESCANS);
	a->scanned_once = true;
	a->rescanning = false;
}

/*
 * The periodic scan of "realign = yes" trees: files with data that lack the
 * rule's hint or whose extents are off the unit in the file become
 * candidates, like late files.  Only logical alignment is judged: physical
 * alignment depends on the filesystem (XFS stripe unit, ext4 forcealign),
 * and a rewrite that cannot improve it would be repeated at every scan.
 * FIEMAP with FIEMAP_FLAG_SYNC writes dirty data back first, so the caller
 * runs this only when the machine is idle.
 */
struct rscan_ctx {
	struct apply *a;
	const struct ea_rule *rule;
	struct ea_hint h;
	size_t found;
	unsigned seen;
};

static bool rscan_may_open(const struct stat *st, void *userdata)
{
	return not_in_a_job(((struct rscan_ctx *)userdata)->a, st);
}

static int rscan_cb(const struct ea_walk_entry *e, void *userdata)
{
	struct rscan_ctx *c = userdata;
	const struct ea_rule *rule = NULL;
	_cleanup_free_ struct ea_extent *ext = NULL;
	struct ea_align_report rep;
	struct name_result res;
	struct fsxattr fsx;
	size_t n = 0;

	if (stop_pending(&c->seen))
		return WALK_STOPPED;
	if (e->kind != EA_WALK_FILE || !e->st.st_size || e->st.st_nlink != 1)
		return 0;
	if (e->fd < 0) /* being realigned */
		return 0;
	if (ea_fsx_get(e->fd, &fsx) < 0)
		return 0;
	/* A deeper rule may own this file; only this rule's files count. */
	if (ea_policy_lookup(c->a->policy, e->path, false, fsx.fsx_projid, &rule, NULL) < 0 ||
	    rule != c->rule)
		return 0;
	if (has_hint(&fsx, false, &c->h)) {
		if (ea_fiemap_read(e->fd, &ext, &n) < 0)
			return 0;
		ea_align_analyze(ext, n, c->h.extsize, (uint64_t)e->st.st_size, &rep);
		if (!rep.misaligned_logical)
			return 0;
	}
	c->found++;
	res = (struct name_result){ .path = e->path, .rule = rule, .count = true };
	list_late(c->a, &e->st, rule, e->path, &c->h, &res);
	report_name(c->a, &res);
	return 0;
}

void apply_realign_scan(struct apply *a)
{
	const struct ea_policy *p = a->policy;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ea_rule *rule = &p->rules[i];
		struct rscan_ctx c = { .a = a, .rule = rule };
		_cleanup_close_ int fd = -1;

		if (rule->kind != EA_RULE_DIRECTORY || !rule->realign ||
		    !ea_rule_hint(rule, false, &c.h))
			continue;
		fd = open_tree(rule->directory, O_RDONLY);
		if (fd < 0)
			continue;
		if (ea_walk_filtered(fd, rule->directory, rscan_may_open, rscan_cb, &c) ==
		    WALK_STOPPED)
			break;
		log_full(&a->report->log, LOG_INFO, rule->name, rule->directory, 0,
			 "realignment scan: %zu candidates", c.found);
	}
}
