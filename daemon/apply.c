// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What extalignd does to one new name: open it without following anything,
 * find its rule, make sure it really lies in the rule's tree, then hint it,
 * note that the kernel already did (inheritance), or record it as late.
 *
 * The daemon is root and the trees belong to users, so every step is
 * relative to a file descriptor: the directory comes from the event's file
 * handle, the name is opened O_PATH | O_NOFOLLOW beneath it (a symlink is
 * never followed, a device or FIFO is never really opened), and a regular
 * file is reopened through its own O_PATH descriptor, which names the same
 * inode whatever happens to the name meanwhile.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <syslog.h>
#include <time.h>

#include "apply.h"
#include "message-ids.h"
#include "extalign/extent.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/realign.h"
#include "extalign/walk.h"

/*
 * Is the directory dirfd the directory root or below it?  Decided on inodes
 * by walking "..", so neither a rename of a parent nor a symlink anywhere
 * can make a file outside the tree look inside it.  1 yes, 0 no, -errno.
 */
static int dir_is_under(int dirfd, const char *root)
{
	_cleanup_close_ int rfd = open_tree(root, O_PATH), cur = -1;
	struct stat rst, st, pst;

	if (rfd < 0)
		return rfd;
	if (fstat(rfd, &rst) < 0)
		return negative_errno();
	cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return negative_errno();
	/* PATH_MAX / 2 is the deepest a path can nest ("a/" per level). */
	for (int depth = 0; depth < 2048; depth++) {
		int next;

		if (fstat(cur, &st) < 0)
			return negative_errno();
		if (st.st_dev == rst.st_dev && st.st_ino == rst.st_ino)
			return 1;
		next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next < 0)
			return negative_errno();
		if (fstat(next, &pst) < 0) {
			close(next);
			return negative_errno();
		}
		close(cur);
		cur = next;
		if (pst.st_dev == st.st_dev && pst.st_ino == st.st_ino)
			return 0; /* reached "/" */
	}
	return 0;
}

static bool has_hint(const struct fsxattr *fsx, bool is_dir, const struct ea_hint *h)
{
	uint32_t flag = is_dir ? FS_XFLAG_EXTSZINHERIT : FS_XFLAG_EXTSIZE;

	if (h->extsize && (!(fsx->fsx_xflags & flag) || fsx->fsx_extsize != h->extsize))
		return false;
	if (h->forcealign > 0 && !(fsx->fsx_xflags & FS_XFLAG_FORCEALIGN))
		return false;
	return true;
}

/* Born (statx btime) after the daemon started?  Unknown counts as no. */
static bool born_since_start(const struct apply *a, int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) < 0 || !(stx.stx_mask & STATX_BTIME))
		return false;
	return (uint64_t)stx.stx_btime.tv_sec * 1000000 + stx.stx_btime.tv_nsec / 1000 >=
	       a->start_realtime_usec;
}

/* A file with data before its hint: listed for realignment, never lost. */
static void list_late(struct apply *a, const struct stat *st, const struct ea_rule *rule,
		      const char *path, const struct ea_hint *h)
{
	struct file_id id = { st->st_dev, st->st_ino };
	size_t index;
	int r;

	r = late_add(a->late, id, rule->name, path, h->extsize, h->forcealign,
		     a->policy->daemon.realign_queue_max, &index);
	if (r == 0)
		return; /* already listed (a rescan meets it again) */
	report_stat(a->report, rule->name, st->st_dev, EA_STAT_FILES_LATE, 1);
	log_id(&a->report->log, MSGID_LATE_FILE, LOG_INFO, rule->name, path, 0,
	       "has data already, hint not set: listed for realignment");
	if (r == -ENOSPC) {
		report_error(a->report, EA_STAT_FAIL_LATE_LIST, rule->name, st->st_dev, path, r,
			     "realignment queue full, late file not listed");
		return;
	}
	if (r < 0) {
		report_error(a->report, EA_STAT_FAIL_LATE_LIST, rule->name, st->st_dev, path, r,
			     "late file not listed");
		return;
	}
	if (rule->realign && a->policy->daemon.realign && !a->no_realign && a->hooks.late_listed)
		a->hooks.late_listed(a->hooks.userdata, index);
}

/*
 * LOG_WARNING the first time a filesystem (and rule) cannot take hints,
 * LOG_DEBUG after that: one file tells the admin, a thousand bury the log.
 * Kept across reloads: a reload changes no kernel.
 */
static int warn_once(struct apply *a, dev_t dev, const char *rule)
{
	struct warned *v;

	for (size_t i = 0; i < a->n_warned; i++)
		if (a->warned[i].dev == dev && !strcmp(a->warned[i].rule, rule ? rule : ""))
			return LOG_DEBUG;
	v = realloc(a->warned, (a->n_warned + 1) * sizeof(*v));
	if (!v)
		return LOG_WARNING;
	a->warned = v;
	v[a->n_warned].dev = dev;
	v[a->n_warned].rule = strdup(rule ? rule : "");
	if (v[a->n_warned].rule)
		a->n_warned++;
	return LOG_WARNING;
}

/*
 * Set the hint, read back only until the filesystem has kept one of this
 * kind: then the ioctl's answer is enough (see ea_hint_set_trusted()), one
 * FS_IOC_FSGETXATTR less per new file.  Kept across reloads: a reload
 * changes no kernel.
 */
static int hint_set(struct apply *a, int fd, dev_t dev, bool is_dir, const struct fsxattr *fsx,
		    const struct ea_hint *h, unsigned *dropped)
{
	unsigned kind = ea_hint_kind(is_dir, h);
	struct kept *k = NULL, *v;
	int r;

	*dropped = 0;
	for (size_t i = 0; i < a->n_kept && !k; i++)
		if (a->kept[i].dev == dev)
			k = &a->kept[i];
	if (kind && k && (k->kinds & kind) == kind)
		return ea_hint_set_trusted(fd, is_dir, fsx, h);
	r = ea_hint_set_from(fd, is_dir, fsx, h, dropped);
	if (r < 0 || !kind)
		return r;
	if (!k) {
		v = realloc(a->kept, (a->n_kept + 1) * sizeof(*v));
		if (!v)
			return 0; /* it is set; the next one reads back again */
		a->kept = v;
		k = &v[a->n_kept++];
		*k = (struct kept){ .dev = dev };
	}
	k->kinds |= kind;
	return 0;
}

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
 * Is parentfd (or the directory fd itself) inside the rule's directory?
 * For a file in a directory watch has kept open (dir_id, see struct
 * new_name) the answer found for the name before it still holds: the
 * directory is the same inode and no directory was renamed since.
 */
static int inside_rule(struct apply *a, const struct ea_rule *rule, int parentfd, int fd,
		       bool is_dir, uint64_t dir_id)
{
	int r;

	if (is_dir)
		return dir_is_under(fd, rule->directory);
	if (dir_id && dir_id == a->inside_dir_id && rule == a->inside_rule)
		return 1;
	r = dir_is_under(parentfd, rule->directory);
	if (r > 0 && dir_id) {
		a->inside_dir_id = dir_id;
		a->inside_rule = rule;
	}
	return r;
}

/*
 * The file or directory open as fd (for reading, not O_PATH), whose name is
 * path.  parentfd is its directory, or -1 when a walk from a trusted root
 * found it (then containment holds by construction); dir_id is watch's
 * (0: none).
 */
static void apply_fd(struct apply *a, const struct fsmark *fs, int parentfd, uint64_t dir_id,
		     int fd, const struct stat *st, const char *path, enum origin o)
{
	bool is_dir = S_ISDIR(st->st_mode);
	/* A walk after the first one meets what was counted already. */
	bool count = o != ORIGIN_SCAN || !a->rescanning;
	const struct ea_rule *rule = NULL;
	struct fsxattr fsx;
	struct ea_hint h;
	unsigned dropped;
	int r;

	r = ea_fsx_get(fd, &fsx);
	if (r < 0) {
		if (r == -ENOTTY || r == -EOPNOTSUPP || r == -EINVAL) {
			if (count)
				report_stat(a->report, NULL, st->st_dev, EA_STAT_FAIL_UNSUPPORTED,
					    1);
			log_id(&a->report->log, MSGID_HINT_UNSUPPORTED,
			       warn_once(a, st->st_dev, NULL), NULL, path, r,
			       "filesystem has no fsxattr, no hint possible");
		} else {
			report_error(a->report, EA_STAT_FAIL_IO, NULL, st->st_dev, path, r,
				     "cannot read the file's attributes");
		}
		return;
	}
	r = ea_policy_lookup(a->policy, path, is_dir, fsx.fsx_projid, &rule, NULL);
	if (r < 0) {
		report_error(a->report, EA_STAT_FAIL_IO, NULL, st->st_dev, path, r,
			     "rule lookup failed");
		return;
	}
	if (!rule)
		goto descend;

	if (rule->kind == EA_RULE_DIRECTORY && (parentfd >= 0 || is_dir)) {
		r = inside_rule(a, rule, parentfd, fd, is_dir, dir_id);
		if (r <= 0) {
			report_stat(a->report, rule->name, st->st_dev, EA_STAT_SKIPPED, 1);
			log_id(&a->report->log, MSGID_RULE_DIR_UNSAFE, LOG_WARNING, rule->name,
			       path, r, "not inside the rule's directory on disk, left alone");
			return;
		}
	}
	if (!ea_rule_hint(rule, is_dir, &h))
		goto descend;
	a->report->dirty = true;

	if (has_hint(&fsx, is_dir, &h)) {
		/* The kernel gave it the hint at creation: the race-free path. */
		if (count)
			report_stat(a->report, rule->name, st->st_dev,
				    is_dir ? EA_STAT_DIRS_INHERITED : EA_STAT_FILES_INHERITED, 1);
		log_full(&a->report->log, LOG_DEBUG, rule->name, path, 0, "hint already in place");
		goto descend;
	}
	if (!is_dir) {
		if (st->st_nlink != 1) {
			/* A second name of some other file: never ours to change. */
			report_stat(a->report, rule->name, st->st_dev, EA_STAT_SKIPPED, 1);
			log_full(&a->report->log, LOG_WARNING, rule->name, path, 0,
				 "has %ju hard links, left alone", (uintmax_t)st->st_nlink);
			return;
		}
		if (st->st_size || st->st_blocks) {
			if (o == ORIGIN_SCAN && !born_since_start(a, fd))
				return; /* data from before our time: the realign scan's job */
			list_late(a, st, rule, path, &h);
			return;
		}
	}

	/* From what was read above: the flags not ours stay as they are. */
	r = hint_set(a, fd, st->st_dev, is_dir, &fsx, &h, &dropped);
	if (r == 0 && !is_dir) {
		struct stat now;

		/*
		 * XFS accepts a hint while written data is still delayed
		 * allocation, which was reserved without it: data that came
		 * between our fstat() and the ioctl makes the file late even
		 * though the hint is now in place.
		 */
		if (fstat(fd, &now) == 0 && (now.st_size || now.st_blocks)) {
			list_late(a, &now, rule, path, &h);
			return;
		}
	}
	if (r == 0) {
		report_stat(a->report, rule->name, st->st_dev,
			    is_dir ? EA_STAT_DIRS_HINTED : EA_STAT_FILES_HINTED, 1);
		log_full(&a->report->log, LOG_DEBUG, rule->name, path, 0, "hint set");
	} else if (r == -EOPNOTSUPP) {
		if (count)
			report_stat(a->report, rule->name, st->st_dev, EA_STAT_FAIL_UNSUPPORTED, 1);
		log_id(&a->report->log, MSGID_HINT_UNSUPPORTED,
		       warn_once(a, st->st_dev, rule->name), rule->name, path, 0,
		       "unsupported: the %s kernel accepted the hint but kept nothing%s",
		       fs ? fs->fstype : "filesystem's",
		       dropped & EA_DROPPED_FORCEALIGN ? " (forcealign)" : "");
		return;
	} else if (!is_dir && r == -EINVAL) {
		struct stat now;

		/* XFS refuses a new hint once extents exist: data won the race. */
		if (fstat(fd, &now) == 0 && (now.st_size || now.st_blocks)) {
			list_late(a, &now, rule, path, &h);
			return;
		}
		report_error(a->report, EA_STAT_FAIL_HINT, rule->name, st->st_dev, path, r,
			     "setting the hint failed");
		return;
	} else {
		report_error(a->report, EA_STAT_FAIL_HINT, rule->name, st->st_dev, path, r,
			     "setting the hint failed");
		return;
	}

descend:
	/* A directory renamed into a tree brings its contents; inotify also
	 * needs them for entries made before its watch existed.  Scans walk
	 * on their own. */
	if (!is_dir || o == ORIGIN_SCAN || ea_policy_dir_cover(a->policy, path) != EA_DIR_INSIDE)
		return;
	if (a->inotify) {
		dir_seen(a, fd, path);
		walk_tree(a, fs, fd, path, o);
	} else if (o == ORIGIN_MOVE) {
		walk_tree(a, fs, fd, path, o);
	}
}

void apply_name(struct apply *a, const struct new_name *n)
{
	const struct fsmark *fs = n->fs;
	const char *name = n->name;
	int dirfd = n->dirfd;
	enum origin o = n->origin;
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int pfd = -1, fd = -1;
	struct stat st;
	int r;

	r = child_path(n->dirpath, name, &path);
	if (r < 0)
		return; /* a directory that is gone, or a bogus name: nothing to do */
	/* The filesystem mark reports every create on the filesystem: most
	 * are outside all rules and cost only this string comparison. */
	if (!a->project_rules && ea_policy_dir_cover(a->policy, path) != EA_DIR_INSIDE)
		return;

	/* The realignment engine's own temporary name: its business only. */
	if (ea_realign_leftover_parse(name, NULL))
		return;

	pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		if (errno != ENOENT) /* removed since the event: fine */
			report_error(a->report, EA_STAT_FAIL_IO, NULL, fs ? fs->dev : 0, path,
				     negative_errno(), "cannot open");
		return;
	}
	if (fstat(pfd, &st) < 0) {
		report_error(a->report, EA_STAT_FAIL_IO, NULL, fs ? fs->dev : 0, path,
			     negative_errno(), "cannot stat");
		return;
	}
	if (S_ISLNK(st.st_mode) || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
		/* Only count what some rule would have covered. */
		if (ea_policy_dir_cover(a->policy, path) == EA_DIR_INSIDE) {
			const struct ea_rule *rule = NULL;

			/* The rule its name would have had (project rules need an
			 * inode, which a symlink's is not). */
			(void)ea_policy_lookup(a->policy, path, false, 0, &rule, NULL);
			report_stat(a->report, rule ? rule->name : NULL, st.st_dev, EA_STAT_SKIPPED,
				    1);
			log_full(&a->report->log, LOG_INFO, NULL, path, 0, "%s, not followed",
				 S_ISLNK(st.st_mode) ? "a symlink" : "not a file or directory");
		}
		return;
	}
	if (fs && st.st_dev != fs->dev) {
		report_stat(a->report, NULL, fs->dev, EA_STAT_SKIPPED, 1);
		return; /* a mount point: another filesystem, another mark */
	}
	/* O_PATH took no lease break; a real open of a job's file would. */
	if (busy(a, st.st_dev, st.st_ino))
		return;
	/* A job's rewritten file, renamed into place: has its hint, is no news. */
	if (S_ISREG(st.st_mode) && a->hooks.replaced &&
	    a->hooks.replaced(a->hooks.userdata, (struct file_id){ st.st_dev, st.st_ino }, path))
		return;
	if (S_ISDIR(st.st_mode)) {
		fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fd = negative_errno();
	} else {
		/* Reopens the very inode pfd holds; no name is resolved again. */
		fd = fd_reopen(a->proc_fd, pfd, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	}
	if (fd < 0) {
		if (fd == -EWOULDBLOCK) {
			/* Somebody holds a lease on it: in use, so not new and
			 * empty; O_NONBLOCK kept us from waiting for the break. */
			report_stat(a->report, NULL, st.st_dev, EA_STAT_SKIPPED, 1);
			log_full(&a->report->log, LOG_INFO, NULL, path, -EWOULDBLOCK,
				 "leased, left alone");
		} else if (fd != -ENOENT) {
			report_error(a->report, EA_STAT_FAIL_IO, NULL, st.st_dev, path, fd,
				     "cannot open");
		}
		return;
	}
	/*
	 * The same inode as pfd by construction (a directory's "." from its
	 * O_PATH descriptor, a file's magic link on procfs), so the stat
	 * above holds for it: what it says of the size is checked again
	 * after the hint, which is what catches data that came meanwhile.
	 */
	apply_fd(a, fs, dirfd, n->dir_id, fd, &st, path, o);
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
		/* Found by walking from a tree root we opened without symlinks. */
		apply_fd(c->a, c->fs, -1, 0, e->fd, &e->st, e->path, ORIGIN_SCAN);
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
		apply_fd(a, fs, -1, 0, fd, &st, p->watch[i].path, ORIGIN_SCAN);
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
	list_late(c->a, &e->st, rule, e->path, &c->h);
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
