// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A rule's directory that is, or goes through, a symbolic link (a MySQL
 * datadir moved to a bigger disk and linked back, or /var itself a link).
 *
 * The daemon never follows a link at run time: a user who can replace a
 * directory with a link would otherwise send it anywhere.  So a configured
 * path with a link in it would cover nothing.  It is resolved here, once,
 * when the configuration is loaded, and only when no one but root could have
 * placed or could change what is followed: every link is owned by root and
 * sits in a directory owned by root that others cannot write to (or that is
 * sticky, as /tmp is), and every directory above the final one is owned by
 * root and not writable by others.  Anything else is refused with a reason,
 * never silently watched as nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "policy-internal.h"

/* As the kernel's limit on links followed in one lookup. */
#define MAX_LINKS 40

/* Nobody but root can rename, replace or add entries in this directory. */
static bool only_root_changes(const struct stat *st)
{
	if (st->st_uid != 0)
		return false;
	return !(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX);
}

static int problem(char **ret, const char *fmt, ...) _printf_(2, 3);
static int problem(char **ret, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (r < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return -EPERM;
}

/* The directory that holds path (both without a trailing slash). */
static const char *dir_of(char *buf, size_t len, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash && slash != path ? (size_t)(slash - path) : 1;

	snprintf(buf, len, "%.*s", (int)n, path);
	return buf;
}

/* Every directory above path, from "/" down, may change only by root's hand. */
static int check_ancestors(const char *path, char **why)
{
	char dir[PATH_MAX];
	struct stat st;

	for (size_t i = 1, n = strlen(path); i < n; i++) {
		if (path[i] != '/' && i != 1)
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)(i == 1 ? 1 : i), path);
		if (stat(dir, &st) < 0)
			return 0; /* not there yet: nothing was followed there */
		if (!only_root_changes(&st))
			return problem(why,
				       "the link leads below %s, which uid %u owns or others may "
				       "write to (mode %04o)",
				       dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	}
	return 0;
}

/* Append "/" comp to the resolved prefix cur (of length *len); -ENAMETOOLONG. */
static int push(char *cur, size_t *len, const char *comp, size_t clen)
{
	if (*len + 1 + clen >= PATH_MAX)
		return -ENAMETOOLONG;
	cur[(*len)++] = '/';
	memcpy(cur + *len, comp, clen);
	*len += clen;
	cur[*len] = '\0';
	return 0;
}

int ea_policy_resolve_directory(const char *path, char **ret, char **why)
{
	_cleanup_free_ char *rest = strdup(path);
	char cur[PATH_MAX] = "", link[PATH_MAX], dir[PATH_MAX];
	size_t len = 0, links = 0;
	const char *p;
	int r;

	*ret = *why = NULL;
	if (!rest)
		return -ENOMEM;
	for (p = rest; *p;) {
		size_t clen;
		struct stat st, dst;
		ssize_t n;
		char *next;

		while (*p == '/')
			p++;
		clen = strcspn(p, "/");
		if (!clen)
			break;
		if (clen == 1 && p[0] == '.') {
			p += clen;
			continue;
		}
		if (clen == 2 && p[0] == '.' && p[1] == '.') {
			/* cur has no link left in it: ".." is its parent. */
			char *slash = strrchr(cur, '/');

			len = slash ? (size_t)(slash - cur) : 0;
			cur[len] = '\0';
			p += clen;
			continue;
		}
		r = push(cur, &len, p, clen);
		if (r < 0)
			return r;
		p += clen;
		if (lstat(cur, &st) < 0) {
			/* Not there (yet), or not ours to see: the rest stays as written. */
			if (*p && push(cur, &len, p + 1, strlen(p + 1)) < 0)
				return -ENAMETOOLONG;
			break;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > MAX_LINKS)
			return problem(why, "more than %d symbolic links on the way", MAX_LINKS);
		dir_of(dir, sizeof(dir), cur);
		if (st.st_uid != 0)
			return problem(why,
				       "%s is a symbolic link owned by uid %u, who could point it "
				       "anywhere; only links owned by root are followed",
				       cur, (unsigned)st.st_uid);
		if (stat(dir, &dst) < 0 || !only_root_changes(&dst))
			return problem(why,
				       "%s is a symbolic link in %s, which is writable by others "
				       "(uid %u, mode %04o) who could replace it",
				       cur, dir, (unsigned)dst.st_uid,
				       (unsigned)(dst.st_mode & 07777));
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		/* Go on from the link's target, then what came after the link. */
		if (asprintf(&next, "%s%s", link, p) < 0)
			return -ENOMEM;
		free(rest);
		rest = next;
		p = rest;
		if (link[0] == '/')
			len = 0;
		else
			len = strlen(dir) == 1 ? 0 : strlen(dir);
		cur[len] = '\0';
	}
	if (!links)
		return 0;
	if (!len)
		strcpy(cur, "/");
	r = check_ancestors(cur, why);
	if (r < 0)
		return r;
	*ret = strdup(cur);
	return *ret ? 0 : -ENOMEM;
}
