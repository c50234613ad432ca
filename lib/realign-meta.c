// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a rewritten file must carry over from the original besides its data:
 * owner, mode, extended attributes (POSIX ACLs are the system.posix_acl_*
 * ones), project id, inode flags and times.  Only the rename path needs
 * this; the swap paths keep the inode and so all of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "extalign/hint.h"
#include "extalign/macro.h"
#include "realign-internal.h"

/*
 * Inode flags to copy.  The hint bits are the copy's own, immutable and
 * append-only files are never rewritten, and PREALLOC/REALTIME/HASATTR are
 * facts about the allocation rather than wishes.
 */
#define COPY_XFLAGS (FS_XFLAG_SYNC | FS_XFLAG_NOATIME | FS_XFLAG_NODUMP | FS_XFLAG_DAX)

/* The fsxattr of the original and of the copy, for a step that copies part of it. */
static int fsx_get_both(int from, int to, struct fsxattr *a, struct fsxattr *b)
{
	int r;

	r = ea_fsx_get(from, a);
	if (r < 0)
		return r;
	return ea_fsx_get(to, b);
}

static int fsx_put(int fd, const struct fsxattr *fsx)
{
	return ioctl(fd, FS_IOC_FSSETXATTR, fsx) < 0 ? negative_errno() : 0;
}

int rl_meta_early(int from, int to)
{
	struct fsxattr a, b;
	int r;

	/* Project quota is charged while blocks are allocated: set it first. */
	r = fsx_get_both(from, to, &a, &b);
	if (r < 0 || a.fsx_projid == b.fsx_projid)
		return r;
	b.fsx_projid = a.fsx_projid;
	return fsx_put(to, &b);
}

/* A NUL-separated name list from flistxattr; *len 0 when xattrs are unsupported. */
static int list_xattrs(int fd, char **ret, size_t *len)
{
	for (;;) {
		ssize_t n = flistxattr(fd, NULL, 0), m;
		char *buf;

		if (n < 0) {
			if (errno == ENOTSUP) {
				*ret = NULL;
				*len = 0;
				return 0;
			}
			return negative_errno();
		}
		buf = malloc((size_t)n + 1);
		if (!buf)
			return -ENOMEM;
		m = flistxattr(fd, buf, (size_t)n);
		if (m < 0) {
			free(buf);
			if (errno == ERANGE) /* grew meanwhile */
				continue;
			return negative_errno();
		}
		*ret = buf;
		*len = (size_t)m;
		return 0;
	}
}

static bool in_list(const char *list, size_t len, const char *name)
{
	for (size_t i = 0; i < len; i += strlen(list + i) + 1)
		if (!strcmp(list + i, name))
			return true;
	return false;
}

static int copy_xattrs(int from, int to)
{
	_cleanup_free_ char *src = NULL, *dst = NULL;
	size_t slen, dlen;
	int r;

	r = list_xattrs(from, &src, &slen);
	if (r < 0)
		return r;
	r = list_xattrs(to, &dst, &dlen);
	if (r < 0)
		return r;

	/*
	 * The copy was created in the same directory, so it may have picked up
	 * a default ACL or a security label the original does not have.
	 */
	for (size_t i = 0; i < dlen; i += strlen(dst + i) + 1)
		if (!in_list(src, slen, dst + i) && fremovexattr(to, dst + i) < 0 &&
		    errno != ENODATA)
			return negative_errno();

	for (size_t i = 0; i < slen; i += strlen(src + i) + 1) {
		const char *name = src + i;
		_cleanup_free_ char *val = NULL;
		ssize_t n = fgetxattr(from, name, NULL, 0);

		if (n < 0) {
			if (errno == ENODATA) /* removed meanwhile */
				continue;
			return negative_errno();
		}
		val = malloc((size_t)n + 1);
		if (!val)
			return -ENOMEM;
		n = fgetxattr(from, name, val, (size_t)n);
		if (n < 0)
			return negative_errno();
		if (fsetxattr(to, name, val, (size_t)n, 0) < 0)
			return negative_errno();
	}
	return 0;
}

static int copy_xflags(int from, int to)
{
	struct fsxattr a, b;
	int r;

	r = fsx_get_both(from, to, &a, &b);
	if (r < 0 || (a.fsx_xflags & COPY_XFLAGS) == (b.fsx_xflags & COPY_XFLAGS))
		return r;
	b.fsx_xflags = (b.fsx_xflags & ~COPY_XFLAGS) | (a.fsx_xflags & COPY_XFLAGS);
	return fsx_put(to, &b);
}

int rl_restore_times(int fd, const struct stat *st)
{
	const struct timespec ts[2] = { st->st_atim, st->st_mtim };

	return futimens(fd, ts) < 0 ? negative_errno() : 0;
}

int rl_meta_copy(int from, int to, const struct stat *st)
{
	int r;

	/* chown first: it clears set-id bits, which fchmod then restores. */
	if (fchown(to, st->st_uid, st->st_gid) < 0)
		return negative_errno();
	if (fchmod(to, st->st_mode & 07777) < 0)
		return negative_errno();
	/* After the mode: an access ACL sets the group bits it implies. */
	r = copy_xattrs(from, to);
	if (r < 0)
		return r;
	r = copy_xflags(from, to);
	if (r < 0)
		return r;
	/* Last: everything above changes ctime, and setting flags may touch times. */
	return rl_restore_times(to, st);
}
