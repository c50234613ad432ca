// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalignd's pure parts: fanotify record parsing from fabricated buffers,
 * child paths, the late-file id set.  The daemon's source is compiled in
 * directly because the daemon is not a library.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../daemon/event.c"
#include "run-suite.h"

/* Append one FAN_REPORT_DFID_NAME event to buf at *off; returns its start. */
static size_t put_event(unsigned char *buf, size_t *off, uint64_t mask, int32_t pid, uint32_t fsid0,
			const unsigned char *fh, unsigned fh_len, const char *name)
{
	struct fanotify_event_metadata m = {
		.vers = FANOTIFY_METADATA_VERSION,
		.metadata_len = sizeof(m),
		.mask = mask,
		.fd = FAN_NOFD,
		.pid = pid,
	};
	size_t start = *off, info = sizeof(struct fanotify_event_info_fid) +
				    sizeof(struct file_handle) + fh_len + strlen(name) + 1;
	struct fanotify_event_info_fid fid = { 0 };
	struct file_handle h = { .handle_bytes = fh_len, .handle_type = 1 };
	unsigned char *p;

	/* The kernel pads records to 4 bytes; so do we. */
	info = (info + 3) & ~(size_t)3;
	m.event_len = (uint32_t)(sizeof(m) + info);
	fid.hdr.info_type = FAN_EVENT_INFO_TYPE_DFID_NAME;
	fid.hdr.len = (uint16_t)info;
	fid.fsid.val[0] = (int)fsid0;
	p = buf + start;
	memset(p, 0, m.event_len);
	memcpy(p, &m, sizeof(m));
	p += sizeof(m);
	memcpy(p, &fid, sizeof(fid));
	p += sizeof(fid);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, fh, fh_len);
	p += fh_len;
	memcpy(p, name, strlen(name) + 1);
	*off += m.event_len;
	return start;
}

static size_t put_overflow(unsigned char *buf, size_t *off)
{
	struct fanotify_event_metadata m = {
		.vers = FANOTIFY_METADATA_VERSION,
		.metadata_len = sizeof(m),
		.event_len = sizeof(m),
		.mask = FAN_Q_OVERFLOW,
		.fd = FAN_NOFD,
	};
	size_t start = *off;

	memcpy(buf + start, &m, sizeof(m));
	*off += sizeof(m);
	return start;
}

static _Alignas(8) unsigned char buf[4096];

START_TEST(test_parse_events)
{
	static const unsigned char fh1[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, fh2[12] = { 9 };
	struct fan_event ev;
	const void *p = buf;
	size_t off = 0, len;

	put_event(buf, &off, FAN_CREATE, 10, 0xabc, fh1, sizeof(fh1), "a.ibd");
	put_overflow(buf, &off);
	put_event(buf, &off, FAN_MOVED_TO | FAN_ONDIR, 11, 0xdef, fh2, sizeof(fh2), "dir");
	len = off;

	ck_assert_int_eq(fan_event_next(&p, &len, &ev), 1);
	ck_assert_uint_eq(ev.mask, FAN_CREATE);
	ck_assert_int_eq(ev.pid, 10);
	ck_assert_int_eq(ev.fsid.val[0], 0xabc);
	ck_assert_ptr_nonnull(ev.dir);
	ck_assert_uint_eq(ev.dir->handle_bytes, 8);
	ck_assert_int_eq(memcmp(ev.dir->f_handle, fh1, 8), 0);
	ck_assert_str_eq(ev.name, "a.ibd");

	ck_assert_int_eq(fan_event_next(&p, &len, &ev), 1);
	ck_assert_uint_eq(ev.mask, FAN_Q_OVERFLOW);
	ck_assert_ptr_null(ev.dir);
	ck_assert_ptr_null(ev.name);

	ck_assert_int_eq(fan_event_next(&p, &len, &ev), 1);
	ck_assert_uint_eq(ev.mask, FAN_MOVED_TO | FAN_ONDIR);
	ck_assert_str_eq(ev.name, "dir");
	ck_assert_uint_eq(ev.dir->handle_bytes, 12);

	ck_assert_int_eq(fan_event_next(&p, &len, &ev), 0);
	ck_assert_uint_eq(len, 0);
}
END_TEST

/* Each corruption of a good record must be refused, never read past. */
enum corrupt {
	C_SHORT_BUFFER,	      /* read returned less than the metadata */
	C_EVENT_LEN_PAST_END, /* event_len beyond the buffer */
	C_EVENT_LEN_SMALL,    /* event_len below the metadata size */
	C_BAD_VERSION,
	C_INFO_LEN_PAST_EVENT,
	C_INFO_LEN_ZERO,  /* would loop forever if accepted */
	C_HANDLE_TOO_BIG, /* handle_bytes beyond the info record */
	C_NAME_UNTERMINATED,
	C_METADATA_LEN_BIG,
	_C_MAX,
};

START_TEST(test_parse_corrupt)
{
	static const unsigned char fh[8] = { 1 };
	struct fanotify_event_metadata *m = (void *)buf;
	struct fanotify_event_info_fid *fid = (void *)(buf + sizeof(*m));
	struct file_handle *h = (void *)fid->handle;
	struct fan_event ev;
	const void *p = buf;
	size_t off = 0, len;

	memset(buf, 0, sizeof(buf));
	put_event(buf, &off, FAN_CREATE, 1, 1, fh, sizeof(fh), "name");
	len = off;
	switch ((enum corrupt)_i) {
	case C_SHORT_BUFFER:
		len = sizeof(*m) - 1;
		break;
	case C_EVENT_LEN_PAST_END:
		m->event_len = (uint32_t)len + 4;
		break;
	case C_EVENT_LEN_SMALL:
		m->event_len = sizeof(*m) - 4;
		break;
	case C_BAD_VERSION:
		m->vers = 0;
		break;
	case C_INFO_LEN_PAST_EVENT:
		fid->hdr.len = (uint16_t)(m->event_len - sizeof(*m) + 4);
		break;
	case C_INFO_LEN_ZERO:
		fid->hdr.len = 0;
		break;
	case C_HANDLE_TOO_BIG:
		h->handle_bytes = 200;
		break;
	case C_NAME_UNTERMINATED:
		/* Fill name and padding up to the record's end with non-NULs. */
		memset((unsigned char *)h->f_handle + h->handle_bytes, 'x',
		       (size_t)(buf + m->event_len -
				((unsigned char *)h->f_handle + h->handle_bytes)));
		break;
	case C_METADATA_LEN_BIG:
		m->metadata_len = (uint16_t)(m->event_len + 1);
		break;
	case _C_MAX:
		break;
	}
	ck_assert_int_eq(fan_event_next(&p, &len, &ev), -EBADMSG);
	/* Nothing consumed: the caller treats the rest as lost (rescan). */
	ck_assert_ptr_eq(p, buf);
}
END_TEST

START_TEST(test_components)
{
	ck_assert(name_is_component("a"));
	ck_assert(name_is_component(".hidden"));
	ck_assert(name_is_component("..."));
	ck_assert(!name_is_component(""));
	ck_assert(!name_is_component("."));
	ck_assert(!name_is_component(".."));
	ck_assert(!name_is_component("a/b"));
	ck_assert(!name_is_component(NULL));
}
END_TEST

START_TEST(test_child_path)
{
	char *p = NULL;

	ck_assert_int_eq(child_path("/srv/db", "f", &p), 0);
	ck_assert_str_eq(p, "/srv/db/f");
	free(p);
	ck_assert_int_eq(child_path("/", "srv", &p), 0);
	ck_assert_str_eq(p, "/srv");
	free(p);
	/* The name cannot climb out or reach sideways. */
	ck_assert_int_eq(child_path("/srv/db", "..", &p), -EINVAL);
	ck_assert_int_eq(child_path("/srv/db", "../../etc/shadow", &p), -EINVAL);
	/* readlink of a removed directory's fd, or something not a path. */
	ck_assert_int_eq(child_path("/srv/db (deleted)", "f", &p), -EINVAL);
	ck_assert_int_eq(child_path("anon_inode:[x]", "f", &p), -EINVAL);
	ck_assert_int_eq(child_path("", "f", &p), -EINVAL);
}
END_TEST

START_TEST(test_id_set)
{
	struct id_set s = { 0 };

	for (ino_t i = 1; i <= 5000; i++)
		ck_assert_int_eq(id_set_add(&s, (struct file_id){ 7, i }), 1);
	ck_assert_uint_eq(s.n, 5000);
	for (ino_t i = 1; i <= 5000; i++) {
		ck_assert(id_set_has(&s, (struct file_id){ 7, i }));
		ck_assert(!id_set_has(&s, (struct file_id){ 8, i }));
	}
	ck_assert_int_eq(id_set_add(&s, (struct file_id){ 7, 42 }), 0);
	ck_assert_int_eq(id_set_add(&s, (struct file_id){ 7, 0 }), -EINVAL);
	ck_assert_uint_eq(s.n, 5000);
	ck_assert(s.n * 2 <= s.cap);
	id_set_free(&s);
	ck_assert(!id_set_has(&s, (struct file_id){ 7, 1 }));
}
END_TEST

/* Removal keeps every other id findable, whatever the probe runs look like:
 * checked against a plain array over random adds and removes. */
START_TEST(test_id_set_remove)
{
	enum { N = 3000 };
	static bool in[N + 1];
	struct id_set s = { 0 };

	srand(19);
	memset(in, 0, sizeof(in));
	for (int round = 0; round < 20000; round++) {
		ino_t ino = 1 + (ino_t)(rand() % N);
		struct file_id id = { 3, ino };

		if (rand() % 3) {
			ck_assert_int_eq(id_set_add(&s, id), in[ino] ? 0 : 1);
			in[ino] = true;
		} else {
			ck_assert_int_eq(id_set_remove(&s, id), in[ino] ? 1 : 0);
			in[ino] = false;
		}
		if (round % 997 == 0) {
			size_t n = 0;

			for (ino_t i = 1; i <= N; i++) {
				ck_assert_int_eq(id_set_has(&s, (struct file_id){ 3, i }), in[i]);
				n += in[i];
			}
			ck_assert_uint_eq(s.n, n);
		}
	}
	ck_assert_int_eq(id_set_remove(&s, (struct file_id){ 3, 0 }), 0);
	ck_assert_int_eq(id_set_remove(&s, (struct file_id){ 4, 1 }), 0);
	id_set_free(&s);
	ck_assert_int_eq(id_set_remove(&s, (struct file_id){ 3, 1 }), 0);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_events);
	tcase_add_loop_test(tc, test_parse_corrupt, 0, _C_MAX);
	tcase_add_test(tc, test_components);
	tcase_add_test(tc, test_child_path);
	tcase_add_test(tc, test_id_set);
	tcase_add_test(tc, test_id_set_remove);
	return run_suite("daemon-event", tc);
}
