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
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>

#include "extalignd.h"
#include "extalign/extent.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/realign.h"
#include "extalign/walk.h"

/*
 * Open an administrator's path (a rule directory, a watched tree) refusing
 * symlinks in every component: a user who owns /srv/db/u must not be able to
 * point a rule's tree elsewhere by replacing a directory with a symlink.
 */
int open_tree(const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_DIRECTORY),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	_cleanup_free_ char *copy = NULL;
	_cleanup_close_ int cur = -1;
	char *save = NULL, *comp, *next;
	bool opened = false;

	if (fd >= 0 || errno != ENOSYS)
		return fd < 0 ? negative_errno() : (int)fd;

	/*
	 * No openat2() (before Linux 5.6, or a sandbox that hides it, such as
	 * valgrind): the same walk by hand, one O_NOFOLLOW component at a time.
	 */
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return negative_errno();
	for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
		int f;

		next = strtok_r(NULL, "/", &save);
		f = openat(cur, comp,
			   (next ? O_PATH : flags) | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
		if (f < 0)
			return negative_errno(); /* a symlink fails as ENOTDIR here */
		close(cur);
		cur = f;
		opened = true;
	}
	if (opened)
		return TAKE_FD(cur);
	/* The path was "/" or "." alone: reopen with the flags asked for. */
	fd = openat(cur, ".", flags | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? negative_errno() : (int)fd;
}

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
static bool born_since_start(const struct daemon *d, int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) < 0 || !(stx.stx_mask & STATX_BTIME))
		return false;
	return (uint64_t)stx.stx_btime.tv_sec * 1000000 + stx.stx_btime.tv_nsec / 1000 >=
	       d->start_realtime_usec;
}

static void late_add(struct daemon *d, const struct stat *st, const struct ea_rule *rule,
		     const char *path, const struct ea_hint *h)
{
	struct file_id id = { st->st_dev, st->st_ino };
	uint64_t max = d->policy->daemon.realign_queue_max;
	struct late_file *v, *l;
	int r;

	r = id_set_add(&d->late_ids, id);
	if (r == 0)
		return; /* already listed (a rescan meets it again) */
	d->counters[EA_CNT_FILES_LATE]++;
	d->state_dirty = true;
	log_full(&d->log, LOG_INFO, rule->name, path, 0,
		 "has data already, hint not set: listed for realignment");
	if (r < 0 || (max && d->n_late >= max)) {
		daemon_error(d, rule->name, path, r < 0 ? r : -ENOSPC,
			     "realignment queue full, late file not listed");
		return;
	}
	v = realloc(d->late, (d->n_late + 1) * sizeof(*v));
	if (!v) {
		daemon_error(d, rule->name, path, -ENOMEM, "late file not listed");
		return;
	}
	d->late = v;
	l = &v[d->n_late];
	*l = (struct late_file){
		.usec = now_usec(CLOCK_REALTIME),
		.id = id,
		.rule = strdup(rule->name),
		.path = strdup(path),
		.queue = "listed",
		.extsize = h->extsize,
		.forcealign = h->forcealign,
	};
	if (!l->rule || !l->path) {
		free(l->rule);
		free(l->path);
		daemon_error(d, rule->name, path, -ENOMEM, "late file not listed");
		return;
	}
	d->n_late++;
	if (rule->realign && d->policy->daemon.realign && !d->no_realign)
		jobs_queue(d, d->n_late - 1);
}

void late_free(struct daemon *d)
{
	for (size_t i = 0; i < d->n_late; i++) {
		free(d->late[i].rule);
		free(d->late[i].path);
	}
	free(d->late);
	d->late = NULL;
	d->n_late = 0;
	id_set_free(&d->late_ids);
}

static bool walk_tree(struct daemon *d, const struct fsmark *fs, int dirfd, const char *path,
		      enum origin o);

/*
 * The file or directory open as fd (for reading, not O_PATH), whose name is
 * path.  parentfd is its directory, or -1 when a walk from a trusted root
 * found it (then containment holds by construction).
 */
static void apply_fd(struct daemon *d, const struct fsmark *fs, int parentfd, int fd,
		     const struct stat *st, const char *path, enum origin o)
{
	bool is_dir = S_ISDIR(st->st_mode);
	const struct ea_rule *rule = NULL;
	struct fsxattr fsx;
	struct ea_hint h;
	unsigned dropped;
	int r;

	r = ea_fsx_get(fd, &fsx);
	if (r < 0) {
		if (r == -ENOTTY || r == -EOPNOTSUPP || r == -EINVAL) {
			d->counters[EA_CNT_UNSUPPORTED]++;
			log_full(&d->log, LOG_WARNING, NULL, path, r,
				 "filesystem has no fsxattr, no hint possible");
		} else {
			daemon_error(d, NULL, path, r, "cannot read the file's attributes");
		}
		return;
	}
	r = ea_policy_lookup(d->policy, path, is_dir, fsx.fsx_projid, &rule, NULL);
	if (r < 0) {
		daemon_error(d, NULL, path, r, "rule lookup failed");
		return;
	}
	if (!rule)
		goto descend;

	if (rule->kind == EA_RULE_DIRECTORY && (parentfd >= 0 || is_dir)) {
		r = dir_is_under(is_dir ? fd : parentfd, rule->directory);
		if (r <= 0) {
			d->counters[EA_CNT_SKIPPED]++;
			log_full(&d->log, LOG_WARNING, rule->name, path, r,
				 "not inside the rule's directory on disk, left alone");
			return;
		}
	}
	if (!ea_rule_hint(rule, is_dir, &h))
		goto descend;
	d->state_dirty = true;

	if (has_hint(&fsx, is_dir, &h)) {
		/* The kernel gave it the hint at creation: the race-free path. */
		d->counters[is_dir ? EA_CNT_DIRS_INHERITED : EA_CNT_FILES_INHERITED]++;
		log_full(&d->log, LOG_DEBUG, rule->name, path, 0, "hint already in place");
		goto descend;
	}
	if (!is_dir) {
		if (st->st_nlink != 1) {
			/* A second name of some other file: never ours to change. */
			d->counters[EA_CNT_SKIPPED]++;
			log_full(&d->log, LOG_WARNING, rule->name, path, 0,
				 "has %ju hard links, left alone", (uintmax_t)st->st_nlink);
			return;
		}
		if (st->st_size || st->st_blocks) {
			if (o == ORIGIN_SCAN && !born_since_start(d, fd))
				return; /* data from before our time: the realign scan's job */
			late_add(d, st, rule, path, &h);
			return;
		}
	}

	r = ea_hint_set(fd, is_dir, &h, &dropped);
	if (r == 0 && !is_dir) {
		struct stat now;

		/*
		 * XFS accepts a hint while written data is still delayed
		 * allocation, which was reserved without it: data that came
		 * between our fstat() and the ioctl makes the file late even
		 * though the hint is now in place.
		 */
		if (fstat(fd, &now) == 0 && (now.st_size || now.st_blocks)) {
			late_add(d, &now, rule, path, &h);
			return;
		}
	}
	if (r == 0) {
		d->counters[is_dir ? EA_CNT_DIRS_INHERIT : EA_CNT_FILES_HINTED]++;
		log_full(&d->log, LOG_DEBUG, rule->name, path, 0, "hint set");
	} else if (r == -EOPNOTSUPP) {
		d->counters[EA_CNT_UNSUPPORTED]++;
		log_full(&d->log, LOG_WARNING, rule->name, path, 0,
			 "unsupported: the %s kernel accepted the hint but kept nothing%s",
			 fs ? fs->fstype : "filesystem's",
			 dropped & EA_DROPPED_FORCEALIGN ? " (forcealign)" : "");
		return;
	} else if (!is_dir && r == -EINVAL) {
		struct stat now;

		/* XFS refuses a new hint once extents exist: data won the race. */
		if (fstat(fd, &now) == 0 && (now.st_size || now.st_blocks)) {
			late_add(d, &now, rule, path, &h);
			return;
		}
		daemon_error(d, rule->name, path, r, "setting the hint failed");
		return;
	} else {
		daemon_error(d, rule->name, path, r, "setting the hint failed");
		return;
	}

descend:
	/* A directory renamed into a tree brings its contents; inotify also
	 * needs them for entries made before its watch existed.  Scans walk
	 * on their own. */
	if (!is_dir || o == ORIGIN_SCAN || ea_policy_dir_cover(d->policy, path) != EA_DIR_INSIDE)
		return;
	if (d->backend == EA_WATCH_INOTIFY) {
		watch_inotify_add_tree(d, fd, path);
		walk_tree(d, fs, fd, path, o);
	} else if (o == ORIGIN_MOVE) {
		walk_tree(d, fs, fd, path, o);
	}
}

void apply_name(struct daemon *d, const struct fsmark *fs, int dirfd, const char *dirpath,
		const char *name, enum origin o)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int pfd = -1, fd = -1;
	struct stat st, st2;
	int r;

	r = child_path(dirpath, name, &path);
	if (r < 0)
		return; /* a directory that is gone, or a bogus name: nothing to do */
	/* The filesystem mark reports every create on the filesystem: most
	 * are outside all rules and cost only this string comparison. */
	if (!d->project_rules && ea_policy_dir_cover(d->policy, path) != EA_DIR_INSIDE)
		return;

	/* The realignment engine's own temporary name: its business only. */
	if (ea_realign_leftover_parse(name, NULL))
		return;

	pfd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		if (errno != ENOENT) /* removed since the event: fine */
			daemon_error(d, NULL, path, negative_errno(), "cannot open");
		return;
	}
	if (fstat(pfd, &st) < 0) {
		daemon_error(d, NULL, path, negative_errno(), "cannot stat");
		return;
	}
	if (S_ISLNK(st.st_mode) || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
		/* Only count what some rule would have covered. */
		if (ea_policy_dir_cover(d->policy, path) == EA_DIR_INSIDE) {
			d->counters[EA_CNT_SKIPPED]++;
			d->state_dirty = true;
			log_full(&d->log, LOG_INFO, NULL, path, 0, "%s, not followed",
				 S_ISLNK(st.st_mode) ? "a symlink" : "not a file or directory");
		}
		return;
	}
	if (fs && st.st_dev != fs->dev) {
		d->counters[EA_CNT_SKIPPED]++;
		return; /* a mount point: another filesystem, another mark */
	}
	/* O_PATH took no lease break; a real open of a job's file would. */
	if (jobs_running_on(d, (struct file_id){ st.st_dev, st.st_ino }))
		return;
	if (S_ISDIR(st.st_mode)) {
		fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		char proc[64];

		/* Reopens the very inode pfd holds; no name is resolved again. */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		fd = open(proc, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	}
	if (fd < 0) {
		if (errno == EWOULDBLOCK) {
			/* Somebody holds a lease on it: in use, so not new and
			 * empty; O_NONBLOCK kept us from waiting for the break. */
			d->counters[EA_CNT_SKIPPED]++;
			log_full(&d->log, LOG_INFO, NULL, path, -EWOULDBLOCK, "leased, left alone");
		} else if (errno != ENOENT) {
			daemon_error(d, NULL, path, negative_errno(), "cannot open");
		}
		return;
	}
	if (fstat(fd, &st2) < 0 || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev) {
		daemon_error(d, NULL, path, -ESTALE, "changed while being opened");
		return;
	}
	apply_fd(d, fs, dirfd, fd, &st2, path, o);
}

struct walk_ctx {
	struct daemon *d;
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
static bool not_in_a_job(struct daemon *d, const struct stat *st)
{
	return !jobs_running_on(d, (struct file_id){ st->st_dev, st->st_ino });
}

static bool walk_may_open(const struct stat *st, void *userdata)
{
	return not_in_a_job(((struct walk_ctx *)userdata)->d, st);
}

static int walk_cb(const struct ea_walk_entry *e, void *userdata)
{
	struct walk_ctx *c = userdata;

	if (stop_pending(&c->seen))
		return WALK_STOPPED;
	switch (e->kind) {
	case EA_WALK_DIR:
		if (c->d->backend == EA_WATCH_INOTIFY)
			watch_inotify_add_tree(c->d, e->fd, e->path);
		/* fall through */
	case EA_WALK_FILE:
		if (e->fd < 0)
			break; /* being realigned */
		/* Found by walking from a tree root we opened without symlinks. */
		apply_fd(c->d, c->fs, -1, e->fd, &e->st, e->path, ORIGIN_SCAN);
		break;
	case EA_WALK_SYMLINK:
	case EA_WALK_OTHER:
	case EA_WALK_OTHER_FS:
		break;
	case EA_WALK_ERROR:
		if (e->err != -ENOENT)
			daemon_error(c->d, NULL, e->path, e->err, "cannot scan");
		break;
	}
	return 0;
}

/* False when the walk was stopped for SIGTERM. */
static bool walk_tree(struct daemon *d, const struct fsmark *fs, int dirfd, const char *path,
		      enum origin o)
{
	struct walk_ctx c = { d, fs, o, 0 };
	int r = ea_walk_filtered(dirfd, path, walk_may_open, walk_cb, &c);

	if (r < 0)
		daemon_error(d, NULL, path, r, "scan failed");
	return r != WALK_STOPPED;
}

void apply_rescan(struct daemon *d, bool overflow)
{
	const struct ea_policy *p = d->policy;

	for (size_t i = 0; i < p->n_watch; i++) {
		_cleanup_close_ int fd = open_tree(p->watch[i].path, O_RDONLY);
		const struct fsmark *fs;
		struct stat st;

		if (fd < 0) {
			if (fd == -ELOOP)
				daemon_error(d, NULL, p->watch[i].path, fd,
					     "a symlink in the watched path, not scanned");
			continue; /* not there (yet): its creation will be an event */
		}
		if (fstat(fd, &st) < 0)
			continue;
		fs = watch_find_dev(d, st.st_dev);
		if (d->backend == EA_WATCH_INOTIFY)
			watch_inotify_add_tree(d, fd, p->watch[i].path);
		apply_fd(d, fs, -1, fd, &st, p->watch[i].path, ORIGIN_SCAN);
		if (!walk_tree(d, fs, fd, p->watch[i].path, ORIGIN_SCAN))
			break;
	}
	if (overflow) {
		d->counters[EA_CNT_RESCANS]++;
		d->state_dirty = true;
	}
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
	struct daemon *d;
	const struct ea_rule *rule;
	struct ea_hint h;
	size_t found;
	unsigned seen;
};

static bool rscan_may_open(const struct stat *st, void *userdata)
{
	return not_in_a_job(((struct rscan_ctx *)userdata)->d, st);
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
	if (ea_policy_lookup(c->d->policy, e->path, false, fsx.fsx_projid, &rule, NULL) < 0 ||
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
	late_add(c->d, &e->st, rule, e->path, &c->h);
	return 0;
}

void apply_realign_scan(struct daemon *d)
{
	const struct ea_policy *p = d->policy;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ea_rule *rule = &p->rules[i];
		struct rscan_ctx c = { .d = d, .rule = rule };
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
		log_full(&d->log, LOG_INFO, rule->name, rule->directory, 0,
			 "realignment scan: %zu candidates", c.found);
	}
}
