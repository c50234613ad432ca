/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * extalignd's pure helpers (event.c): parsing fanotify records, building
 * child paths, a set of file ids.  They touch no system state, so the unit
 * tests feed them fabricated buffers.  A leaf: includes no other daemon file.
 */
#ifndef EXTALIGND_EVENT_H
#define EXTALIGND_EVENT_H

#include <linux/fanotify.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One fanotify event as reported with FAN_REPORT_DFID_NAME. */
struct fan_event {
	uint64_t mask;
	int32_t pid;
	__kernel_fsid_t fsid;
	const struct file_handle *dir; /* points into the buffer; NULL for overflow */
	const char *name;	       /* NUL-terminated inside the buffer; NULL if none */
};

/*
 * Take the next event from a read() buffer: 1 with *ev filled and *buf and
 * *len advanced, 0 at the end, -EBADMSG for a malformed record (the rest of
 * the buffer is then unusable).  The kernel is trusted with the format but
 * not with our assumptions about it: every length is checked.
 */
int fan_event_next(const void **buf, size_t *len, struct fan_event *ev);

/*
 * A single path component as it came from the kernel or readdir: not empty,
 * no '/', not "." or "..".
 */
bool name_is_component(const char *name);

/*
 * dir + "/" + name into a new string, -EINVAL when name is not one component
 * or dir is not an absolute path as /proc/self/fd shows it (a " (deleted)"
 * suffix means the directory is gone).
 */
int child_path(const char *dir, const char *name, char **ret);

/* (dev, ino) of a file, to remember files without holding them open. */
struct file_id {
	dev_t dev;
	ino_t ino;
};

/* A set of file ids (open addressing); for de-duplicating late files. */
struct id_set {
	struct file_id *v;
	size_t n, cap;
};
/* 1 when added, 0 when already present, -ENOMEM. */
int id_set_add(struct id_set *s, struct file_id id);
bool id_set_has(const struct id_set *s, struct file_id id);
/* 1 when removed, 0 when it was not there. */
int id_set_remove(struct id_set *s, struct file_id id);
void id_set_free(struct id_set *s);

#endif
