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

void ea_dir_list_free(struct ea_dir_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct ea_dir_list){ 0 };
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp((*(struct ea_dirent *const *)a)->name, (*(struct ea_dirent *const *)b)->name);
}

int ea_dir_list_read(int dirfd, size_t max, struct ea_dir_list *ret)
{
	_cleanup_(closedirp) DIR *d = NULL;
	size_t cap = 0;
	struct dirent *de;
	int fd;

	*ret = (struct ea_dir_list){ 0 };
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
		struct ea_dirent *e;
		size_t len;

		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (max && ret->n == max) {
			ea_dir_list_free(ret);
			return -E2BIG;
		}
		if (ret->n == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct ea_dirent **p = realloc(ret->v, ncap * sizeof(*p));

			if (!p) {
				ea_dir_list_free(ret);
				return -ENOMEM;
			}
			ret->v = p;
			cap = ncap;
		}
		len = strlen(de->d_name);
		e = malloc(sizeof(*e) + len + 1);
		if (!e) {
			ea_dir_list_free(ret);
			return -ENOMEM;
		}
		e->type = de->d_type;
		memcpy(e->name, de->d_name, len + 1);
		ret->v[ret->n++] = e;
	}
	if (errno) {
		int r = negative_errno();

		ea_dir_list_free(ret);
		return r;
	}
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), entry_cmp);
	return 0;
}

unsigned char ea_dir_list_type(const struct ea_dir_list *l, const char *name, size_t *cursor)
{
	size_t lo = 0, hi = l->n;

	/* Names asked in the list's order hit at the cursor, with no search. */
	if (*cursor < l->n && !strcmp(l->v[*cursor]->name, name))
		return l->v[(*cursor)++]->type;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, l->v[mid]->name);

		if (!c) {
			*cursor = mid + 1;
			return l->v[mid]->type;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return DT_UNKNOWN;
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
	_cleanup_(ea_dir_list_free) struct ea_dir_list names = { 0 };
	int r;

	r = ea_dir_list_read(dirfd, 0, &names);
	if (r < 0) {
		struct ea_walk_entry e = {
			.kind = EA_WALK_ERROR, .path = path, .fd = -1, .err = r
		};

		return w->fn(&e, w->userdata);
	}

	for (size_t i = 0; i < names.n; i++) {
		const char *name = names.v[i]->name;
		_cleanup_free_ char *sub = join(path, name);
		_cleanup_close_ int fd = -1;
		struct ea_walk_entry e = { .path = sub, .fd = -1 };

		if (!sub)
			return -ENOMEM;
		/*
		 * A regular file by its d_type is opened straight away; the
		 * fstat() below is then its only stat, as set -R and apply
		 * over 100,000 files want.  Anything else, and any file when
		 * the caller must see it before it is opened, is looked at
		 * with fstatat() first: a directory may be a mount point or an
		 * automount trigger, which opening would cross or fire.  Both
		 * ways a name swapped since readdir() or fstatat() is caught
		 * by the same checks on what was opened.
		 */
		if (names.v[i]->type == DT_REG && !w->may_open) {
			e.st.st_mode = S_IFREG;
			e.st.st_dev = w->dev;
		} else if (fstatat(dirfd, name, &e.st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT) /* gone since readdir: nothing to do */
				continue;
			e.kind = EA_WALK_ERROR;
			e.err = negative_errno();
			goto visit;
		}
		if (S_ISLNK(e.st.st_mode)) {
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
			 * O_NOFOLLOW and the type, device and inode comparison
			 * close the window in which the name could be swapped
			 * for a symlink or another file after it was read.
			 */
			fd = openat(dirfd, name,
				    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
			if (fd < 0) {
				if (errno == ENOENT)
					continue;
				e.kind = errno == ELOOP ? EA_WALK_SYMLINK : EA_WALK_ERROR;
				e.err = e.kind == EA_WALK_ERROR ? negative_errno() : 0;
			} else if (fstat(fd, &st) < 0) {
				e.kind = EA_WALK_ERROR;
				e.err = negative_errno();
			} else if (st.st_dev != w->dev && S_ISREG(st.st_mode) && !e.st.st_ino) {
				/* Known by d_type only: a file bind-mounted here. */
				e.st = st;
				e.kind = EA_WALK_OTHER_FS;
			} else if ((st.st_mode & S_IFMT) != (e.st.st_mode & S_IFMT) ||
				   st.st_dev != e.st.st_dev ||
				   (e.st.st_ino && st.st_ino != e.st.st_ino)) {
				e.kind = EA_WALK_ERROR;
				e.err = -ESTALE;
			} else {
				e.st = st;
				e.fd = fd;
				e.kind = S_ISDIR(st.st_mode) ? EA_WALK_DIR : EA_WALK_FILE;
			}
		}

	visit:
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
