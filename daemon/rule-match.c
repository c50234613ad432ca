// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stage 2 of a new name (pipeline.h): its rule, by path or project id, and
 * for a directory rule the proof on inodes that it lies inside the rule's
 * directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "pipeline.h"

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

/*
 * Is the target (a directory itself, or a file's parent) inside the rule's
 * directory?  For a file in a directory watch has kept open (dir_id, see
 * struct new_name) the answer found for the name before it still holds:
 * the directory is the same inode and no directory was renamed since.
 */
static int inside_rule(struct apply *a, const struct ea_rule *rule, const struct target *t)
{
	int r;

	if (t->is_dir)
		return dir_is_under(t->fd, rule->directory);
	if (t->dir_id && t->dir_id == a->inside_dir_id && rule == a->inside_rule)
		return 1;
	r = dir_is_under(t->parentfd, rule->directory);
	if (r > 0 && t->dir_id) {
		a->inside_dir_id = t->dir_id;
		a->inside_rule = rule;
	}
	return r;
}

bool match_rule(struct apply *a, const struct target *t, const struct ea_rule **rule,
		struct fsxattr *fsx, struct name_result *res)
{
	struct ea_hint h;
	int r;

	*rule = NULL;
	r = ea_fsx_get(t->fd, fsx);
	if (r == -ENOTTY || r == -EOPNOTSUPP || r == -EINVAL)
		return end_with(res, FATE_NO_FSXATTR, r);
	if (r < 0)
		return end_with(res, FATE_FSXATTR_FAILED, r);
	r = ea_policy_lookup(a->policy, t->path, t->is_dir, fsx->fsx_projid, rule, NULL);
	if (r < 0)
		return end_with(res, FATE_LOOKUP_FAILED, r);
	res->rule = *rule;
	if (!*rule)
		return end_with(res, FATE_NO_RULE, 0);
	/* A walk from a trusted root (no parentfd) is inside by construction. */
	if ((*rule)->kind == EA_RULE_DIRECTORY && (t->parentfd >= 0 || t->is_dir)) {
		r = inside_rule(a, *rule, t);
		if (r <= 0)
			return end_with(res, FATE_OUTSIDE, r);
	}
	if (!ea_rule_hint(*rule, t->is_dir, &h))
		return end_with(res, FATE_NO_RULE, 0);
	return true;
}
