// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stage 1 of a new name (pipeline.h): open it without following anything.
 *
 * The daemon is root and the trees belong to users, so every step is
 * relative to a file descriptor: the directory comes from the event's file
 * handle, the name is opened O_PATH | O_NOFOLLOW beneath it (a symlink is
 * never followed, a device or FIFO is never really opened), and a regular
 * file is reopened through its own O_PATH descriptor, which names the same
 * inode whatever happens to the name meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/realign.h"
#include "pipeline.h"

/* Through the hooks: apply never calls the parts that use it. */
static bool busy(const struct apply *a, dev_t dev, ino_t ino)
{
	return a->hooks.busy && a->hooks.busy(a->hooks.userdata, (struct file_id){ dev, ino });
}

static bool replaced(const struct apply *a, const struct stat *st, const char *path)
{
	return S_ISREG(st->st_mode) && a->hooks.replaced &&
	       a->hooks.replaced(a->hooks.userdata, (struct file_id){ st->st_dev, st->st_ino },
				 path);
}

bool open_name(struct apply *a, const struct new_name *n, char **path, struct target *t,
	       struct name_result *res)
{
	_cleanup_close_ int pfd = -1;
	struct stat *st = &t->st;
	int fd;

	*res = (struct name_result){ .fate = FATE_NONE, .dev = n->fs ? n->fs->dev : 0 };
	if (child_path(n->dirpath, n->name, path) < 0)
		return false; /* a directory that is gone, or a bogus name */
	res->path = t->path = *path;
	/* The filesystem mark reports every create on the filesystem: most
	 * are outside all rules and cost only this string comparison. */
	if (!a->project_rules && ea_policy_dir_cover(a->policy, t->path) != EA_DIR_INSIDE)
		return false;
	/* The realignment engine's own temporary name: its business only. */
	if (ea_realign_leftover_parse(n->name, NULL))
		return false;

	pfd = openat(n->dirfd, n->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) /* ENOENT: removed since the event, fine */
		return errno == ENOENT ? false : end_with(res, FATE_OPEN_FAILED, negative_errno());
	if (fstat(pfd, st) < 0)
		return end_with(res, FATE_STAT_FAILED, negative_errno());
	if (S_ISLNK(st->st_mode) || (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))) {
		/* Only what some rule would have covered is counted. */
		if (ea_policy_dir_cover(a->policy, t->path) != EA_DIR_INSIDE)
			return false;
		/* The rule its name would have had (project rules need an
		 * inode, which a symlink's is not). */
		(void)ea_policy_lookup(a->policy, t->path, false, 0, &res->rule, NULL);
		res->dev = st->st_dev;
		res->mode = st->st_mode;
		return end_with(res, FATE_NOT_FOLLOWED, 0);
	}
	if (n->fs && st->st_dev != n->fs->dev)
		return end_with(res, FATE_OTHER_FS, 0); /* another filesystem, another mark */
	res->dev = st->st_dev;
	/* O_PATH took no lease break; a real open of a job's file would. */
	if (busy(a, st->st_dev, st->st_ino))
		return false;
	/* A job's rewritten file, renamed into place: has its hint, is no news. */
	if (replaced(a, st, t->path))
		return false;
	if (S_ISDIR(st->st_mode)) {
		fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			fd = negative_errno();
	} else {
		/* Reopens the very inode pfd holds; no name is resolved again. */
		fd = fd_reopen(a->proc_fd, pfd, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	}
	/* Somebody holds a lease on it: in use, so not new and empty;
	 * O_NONBLOCK kept us from waiting for the break. */
	if (fd == -EWOULDBLOCK)
		return end_with(res, FATE_LEASED, fd);
	if (fd < 0)
		return fd == -ENOENT ? false : end_with(res, FATE_OPEN_FAILED, fd);
	/*
	 * The same inode as pfd by construction (a directory's "." from its
	 * O_PATH descriptor, a file's magic link on procfs), so the stat
	 * above holds for it: what it says of the size is checked again
	 * after the hint, which is what catches data that came meanwhile.
	 */
	t->fd = fd;
	t->parentfd = n->dirfd;
	t->dir_id = n->dir_id;
	t->origin = n->origin;
	return true;
}
