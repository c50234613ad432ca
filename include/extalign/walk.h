/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Walk a directory tree by file descriptor, the way a root daemon over
 * user-controlled paths must: every step is openat(O_NOFOLLOW) relative to its
 * parent, symlinks are reported and never followed, and the walk never leaves
 * the filesystem it started on.
 */
#ifndef EXTALIGN_WALK_H
#define EXTALIGN_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

enum ea_walk_kind {
	EA_WALK_DIR,	  /* fd open, visited before its entries */
	EA_WALK_FILE,	  /* regular file, fd open */
	EA_WALK_SYMLINK,  /* not followed, fd -1 */
	EA_WALK_OTHER,	  /* device, fifo, socket: fd -1 */
	EA_WALK_OTHER_FS, /* mount point of another filesystem: not entered, fd -1 */
	EA_WALK_ERROR,	  /* could not open or read: err set, fd -1 */
};

struct ea_walk_entry {
	enum ea_walk_kind kind;
	const char *path; /* the start path joined with the names below it */
	int fd;
	struct stat st;
	int err; /* -errno for EA_WALK_ERROR */
};

/*
 * Return 0 to go on, a positive value to stop the walk and have ea_walk()
 * return it, or -errno to stop with that error.
 */
typedef int (*ea_walk_fn)(const struct ea_walk_entry *e, void *userdata);

/*
 * Visit the tree below the open directory dirfd, whose path (for messages
 * only) is path.  dirfd itself is not visited.  Entries are sorted by name
 * so runs are repeatable.  Returns 0, the callback's stop value, or -errno
 * when the walk itself failed (out of memory).
 */
int ea_walk(int dirfd, const char *path, ea_walk_fn fn, void *userdata);

/*
 * Asked before a regular file is opened: return false to have it reported
 * as EA_WALK_FILE with fd -1 instead.  Even a read-only open breaks a write
 * lease, so a daemon walking a tree must not open a file that one of its own
 * realignment jobs is rewriting under a lease.
 */
typedef bool (*ea_walk_open_fn)(const struct stat *st, void *userdata);

/* ea_walk() that consults may_open (may be NULL) before opening a file. */
int ea_walk_filtered(int dirfd, const char *path, ea_walk_open_fn may_open, ea_walk_fn fn,
		     void *userdata);

/* A directory's entries as readdir() gave them: name and d_type. */
struct ea_dirent {
	unsigned char type; /* DT_REG, DT_DIR, ... or DT_UNKNOWN */
	char name[];
};

struct ea_dir_list {
	struct ea_dirent **v; /* sorted by name (strcmp) */
	size_t n;
};

/*
 * Read the entries of the open directory dirfd (an O_PATH fd will do) but
 * "." and "..", sorted.  max > 0: give up with -E2BIG past max entries, for
 * a caller that only wants a few names of what may be a huge directory.
 */
int ea_dir_list_read(int dirfd, size_t max, struct ea_dir_list *ret);
void ea_dir_list_free(struct ea_dir_list *l);

/*
 * The d_type of name, DT_UNKNOWN if it is not in the list.  *cursor (start
 * at 0) makes names asked in sorted order cost one comparison each.  A
 * d_type is what the name was at readdir() time: open with O_NOFOLLOW and
 * check what was opened.
 */
unsigned char ea_dir_list_type(const struct ea_dir_list *l, const char *name, size_t *cursor);

#endif
