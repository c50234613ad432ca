// SPDX-License-Identifier: LGPL-2.1-or-later
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/walk.h"

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

struct names {
	char **v;
	size_t n, cap;
};

static void names_free(struct names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of an open directory but "." and "..", sorted. */
static int read_names(int dirfd, struct names *ret)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int fd;

	/* fdopendir() owns the fd it is given; hand it a copy. */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	d = fdopendir(fd);
	if (!d) {
		int r = negative_errno();

		close(fd);
		return r;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (ret->n == ret->cap) {
			size_t ncap = ret->cap ? ret->cap * 2 : 32;
			char **p = realloc(ret->v, ncap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			ret->v = p;
			ret->cap = ncap;
		}
		ret->v[ret->n] = strdup(de->d_name);
		if (!ret->v[ret->n])
			return -ENOMEM;
		ret->n++;
	}
	if (errno)
		return negative_errno();
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), name_cmp);
	return 0;
}

static char *join(const char *dir, const char *name)
{
	char *p;
	size_t l = strlen(dir);

	if (asprintf(&p, "%s%s%s", dir, l && dir[l - 1] == '/' ? "" : "/", name) < 0)
		return NULL;
	return p;
}

struct walk {
	dev_t dev;
	ea_walk_open_fn may_open;
	ea_walk_fn fn;
	void *userdata;
};

static int walk_dir(const struct walk *w, int dirfd, const char *path)
{
	_cleanup_(names_free) struct names names = { 0 };
	int r;

	r = read_names(dirfd, &names);
	if (r < 0) {
		struct ea_walk_entry e = {
			.kind = EA_WALK_ERROR, .path = path, .fd = -1, .err = r
		};

		return w->fn(&e, w->userdata);
	}

	for (size_t i = 0; i < names.n; i++) {
		_cleanup_free_ char *sub = join(path, names.v[i]);
		_cleanup_close_ int fd = -1;
		struct ea_walk_entry e = { .path = sub, .fd = -1 };

		if (!sub)
			return -ENOMEM;
		if (fstatat(dirfd, names.v[i], &e.st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT) /* gone since readdir: nothing to do */
				continue;
			e.kind = EA_WALK_ERROR;
			e.err = negative_errno();
		} else if (S_ISLNK(e.st.st_mode)) {
			e.kind = EA_WALK_SYMLINK;
		} else if (!S_ISDIR(e.st.st_mode) && !S_ISREG(e.st.st_mode)) {
			e.kind = EA_WALK_OTHER;
		} else if (e.st.st_dev != w->dev) {
			e.kind = EA_WALK_OTHER_FS;
		} else if (S_ISREG(e.st.st_mode) && w->may_open &&
			   !w->may_open(&e.st, w->userdata)) {
			e.kind = EA_WALK_FILE;
		} else {
			struct stat st;

			/*
			 * O_NOFOLLOW and the inode comparison close the window in
			 * which the name could be swapped for a symlink or another
			 * file after fstatat().
			 */
			fd = openat(dirfd, names.v[i],
				    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
			if (fd < 0) {
				if (errno == ENOENT)
					continue;
				e.kind = EA_WALK_ERROR;
				e.err = negative_errno();
			} else if (fstat(fd, &st) < 0) {
				e.kind = EA_WALK_ERROR;
				e.err = negative_errno();
			} else if (st.st_dev != e.st.st_dev || st.st_ino != e.st.st_ino) {
				e.kind = EA_WALK_ERROR;
				e.err = -ESTALE;
			} else {
				e.st = st;
				e.fd = fd;
				e.kind = S_ISDIR(st.st_mode) ? EA_WALK_DIR : EA_WALK_FILE;
			}
		}

		r = w->fn(&e, w->userdata);
		if (r)
			return r;
		if (e.kind == EA_WALK_DIR) {
			r = walk_dir(w, fd, sub);
			if (r)
				return r;
		}
	}
	return 0;
}

int ea_walk_filtered(int dirfd, const char *path, ea_walk_open_fn may_open, ea_walk_fn fn,
		     void *userdata)
{
	struct walk w = { .may_open = may_open, .fn = fn, .userdata = userdata };
	struct stat st;

	if (fstat(dirfd, &st) < 0)
		return negative_errno();
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	w.dev = st.st_dev;
	return walk_dir(&w, dirfd, path);
}

int ea_walk(int dirfd, const char *path, ea_walk_fn fn, void *userdata)
{
	return ea_walk_filtered(dirfd, path, NULL, fn, userdata);
}
