// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The parts of extalignd that touch no system state: parsing fanotify
 * records, building child paths, a set of file ids.  Kept apart so the unit
 * tests can include this file and feed it fabricated buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"

int fan_event_next(const void **buf, size_t *len, struct fan_event *ev)
{
	const unsigned char *p = *buf;
	const struct fanotify_event_metadata *m;
	size_t off;

	if (*len == 0)
		return 0;
	if (*len < sizeof(*m))
		return -EBADMSG;
	m = (const struct fanotify_event_metadata *)p;
	if (m->vers != FANOTIFY_METADATA_VERSION || m->event_len < sizeof(*m) ||
	    m->event_len > *len || m->metadata_len < sizeof(*m) || m->metadata_len > m->event_len)
		return -EBADMSG;

	*ev = (struct fan_event){ .mask = m->mask, .pid = m->pid };
	/* Info records follow the metadata; take the directory fid with name. */
	for (off = m->metadata_len; off < m->event_len;) {
		const struct fanotify_event_info_header *h;
		const struct fanotify_event_info_fid *fid;
		const struct file_handle *fh;
		size_t hlen, fixed, rest;

		if (m->event_len - off < sizeof(*h))
			return -EBADMSG;
		h = (const struct fanotify_event_info_header *)(p + off);
		hlen = h->len;
		if (hlen < sizeof(*h) || hlen > m->event_len - off)
			return -EBADMSG;
		if (h->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
			fixed = sizeof(*fid) + sizeof(struct file_handle);
			if (hlen < fixed)
				return -EBADMSG;
			fid = (const struct fanotify_event_info_fid *)h;
			fh = (const struct file_handle *)fid->handle;
			if (fh->handle_bytes > hlen - fixed)
				return -EBADMSG;
			rest = hlen - fixed - fh->handle_bytes;
			{
				const char *name = (const char *)fh->f_handle + fh->handle_bytes;

				/* The name must end inside the record. */
				if (!rest || !memchr(name, 0, rest))
					return -EBADMSG;
				ev->name = name;
			}
			ev->fsid = fid->fsid;
			ev->dir = fh;
		}
		off += hlen;
	}
	*buf = p + m->event_len;
	*len -= m->event_len;
	return 1;
}

bool name_is_component(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

int child_path(const char *dir, const char *name, char **ret)
{
	static const char deleted[] = " (deleted)";
	size_t l;
	int r;

	if (!dir || dir[0] != '/' || !name_is_component(name))
		return -EINVAL;
	l = strlen(dir);
	if (l >= sizeof(deleted) - 1 && !strcmp(dir + l - (sizeof(deleted) - 1), deleted))
		return -EINVAL;
	r = asprintf(ret, "%s%s%s", dir, dir[l - 1] == '/' ? "" : "/", name);
	return r < 0 ? -ENOMEM : 0;
}

static size_t id_hash(struct file_id id, size_t cap)
{
	uint64_t h = (uint64_t)id.ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)id.dev;

	h ^= h >> 29;
	return (size_t)(h & (cap - 1));
}

static bool id_eq(struct file_id a, struct file_id b)
{
	return a.dev == b.dev && a.ino == b.ino;
}

/* ino 0 never names a file on Linux filesystems: it marks an empty slot. */
static int id_set_grow(struct id_set *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 64;
	struct file_id *v = calloc(ncap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->v[i].ino)
			continue;
		for (j = id_hash(s->v[i], ncap); v[j].ino; j = (j + 1) & (ncap - 1))
			;
		v[j] = s->v[i];
	}
	free(s->v);
	s->v = v;
	s->cap = ncap;
	return 0;
}

bool id_set_has(const struct id_set *s, struct file_id id)
{
	if (!s->cap || !id.ino)
		return false;
	for (size_t j = id_hash(id, s->cap); s->v[j].ino; j = (j + 1) & (s->cap - 1))
		if (id_eq(s->v[j], id))
			return true;
	return false;
}

int id_set_add(struct id_set *s, struct file_id id)
{
	size_t j;

	if (!id.ino)
		return -EINVAL;
	if (id_set_has(s, id))
		return 0;
	/* Keep the load under one half so probes stay short. */
	if ((s->n + 1) * 2 > s->cap) {
		int r = id_set_grow(s);

		if (r < 0)
			return r;
	}
	for (j = id_hash(id, s->cap); s->v[j].ino; j = (j + 1) & (s->cap - 1))
		;
	s->v[j] = id;
	s->n++;
	return 1;
}

int id_set_remove(struct id_set *s, struct file_id id)
{
	size_t mask = s->cap - 1, i, k;

	if (!s->cap || !id.ino)
		return 0;
	for (i = id_hash(id, s->cap); !id_eq(s->v[i], id); i = (i + 1) & mask)
		if (!s->v[i].ino)
			return 0;
	/*
	 * Backward shift, no tombstones: each later entry of the run moves
	 * into the hole unless its home slot lies cyclically after the hole,
	 * so every probe still finds what it looks for.
	 */
	for (k = i;;) {
		size_t home;

		s->v[i] = (struct file_id){ 0, 0 };
		for (;;) {
			k = (k + 1) & mask;
			if (!s->v[k].ino) {
				s->n--;
				return 1;
			}
			home = id_hash(s->v[k], s->cap);
			if (i <= k ? (i < home && home <= k) : (i < home || home <= k))
				continue; /* at or after its home already */
			break;
		}
		s->v[i] = s->v[k];
		i = k;
	}
}

void id_set_free(struct id_set *s)
{
	free(s->v);
	*s = (struct id_set){ 0 };
}
