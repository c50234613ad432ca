// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Replace a file so that a reader (node_exporter's textfile collector, a
 * script) sees the old or the new content, never half, even after a crash.
 */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "extalign/state.h"

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int ea_file_replace_at(int dfd, const char *name, const char *buf, size_t len, mode_t mode)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	/* The textfile collector reads *.prom only: a dot file is never half-read. */
	if (asprintf(&tmp, ".%s.%d.tmp", name, (int)getpid()) < 0)
		return -ENOMEM;
	/* O_EXCL|O_NOFOLLOW: a link someone placed under our temporary name is refused. */
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return negative_errno();
	/* Whatever the umask (extalignd's unit sets 0077). */
	r = fchmod(fd, mode) < 0 ? negative_errno() : 0;
	if (!r)
		r = write_all(fd, buf, len);
	if (!r && fsync(fd) < 0)
		r = negative_errno();
	/* rename() replaces a symlink at the final name; it never writes through it. */
	if (!r && renameat(dfd, tmp, dfd, name) < 0)
		r = negative_errno();
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		return r;
	}
	/* The rename itself must survive a crash too. */
	if (fsync(dfd) < 0)
		return negative_errno();
	return 0;
}

int ea_file_replace(const char *path, const char *buf, size_t len, mode_t mode)
{
	_cleanup_free_ char *dcopy = NULL, *bcopy = NULL;
	_cleanup_close_ int dfd = -1;
	const char *name;

	if (!path || !*path)
		return -EINVAL;
	/* basename() would strip the slash and write beside the directory. */
	if (path[strlen(path) - 1] == '/')
		return -EISDIR;
	dcopy = strdup(path);
	bcopy = strdup(path);
	if (!dcopy || !bcopy)
		return -ENOMEM;
	name = basename(bcopy);
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "/"))
		return -EISDIR;
	dfd = open(dirname(dcopy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return negative_errno();
	return ea_file_replace_at(dfd, name, buf, len, mode);
}
