// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Text tables written row by row.  libsmartcols keeps every row until the
 * end to size the columns: over 100,000 files that is memory, and its
 * per-cell width work costs more than the system calls behind the row
 * (tests/bench/compare.sh).  Here the widths are fixed before the first row,
 * from the headers and from what the caller knows in advance (the paths on
 * the command line), and a wider cell just pushes its row to the right.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"
#include "table.h"

size_t table_stream_width(const char *s)
{
	return name_escaped_len(s);
}

/*
 * A row is put together in memory and written with one call: writing it
 * cell by cell and space by space through stdio was most of check's time
 * outside the kernel.  A row longer than the buffer goes out in pieces.
 * The program has one thread: stdio's locking is skipped (_unlocked).
 */
struct line {
	FILE *out;
	size_t len;
	char buf[4096];
};

static inline void line_put(struct line *l, const char *s, size_t n)
{
	if (l->len + n > sizeof(l->buf)) {
		fwrite_unlocked(l->buf, 1, l->len, l->out);
		l->len = 0;
		if (n > sizeof(l->buf)) {
			fwrite_unlocked(s, 1, n, l->out);
			return;
		}
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void line_pad(struct line *l, size_t n)
{
	if (l->len + n <= sizeof(l->buf)) {
		memset(l->buf + l->len, ' ', n);
		l->len += n;
		return;
	}
	while (n--)
		line_put(l, " ", 1);
}

static void line_put_escaped(struct line *l, const char *s)
{
	const char *p = s;

	for (;;) {
		size_t plain = 0;
		char hex[4];

		while (p[plain] && !name_needs_escape(p + plain))
			plain++;
		line_put(l, p, plain);
		p += plain;
		if (!*p)
			break;
		name_escape_byte(hex, (unsigned char)*p);
		line_put(l, hex, sizeof(hex));
		p++;
	}
}

void table_stream_init(struct table_stream *ts, const struct column_def *cols, size_t n,
		       const size_t *min_widths)
{
	if (n > TABLE_STREAM_MAX_COLUMNS)
		errx(EXIT_FAILED, "internal error: a table of %zu columns", n);
	*ts = (struct table_stream){ .out = stdout, .cols = cols, .n = n };
	for (size_t i = 0; i < n; i++) {
		size_t w = strlen(cols[i].name);

		ts->width[i] = min_widths && min_widths[i] > w ? min_widths[i] : w;
	}
}

/* The plain bytes at the start of s: up to the first one to escape. */
static size_t plain_len(const char *s)
{
	size_t n = 0;

	while (s[n] && !name_needs_escape(s + n))
		n++;
	return n;
}

static void put_row(struct table_stream *ts, const char *const *cells, bool upper)
{
	struct line l;

	l.out = ts->out;
	l.len = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const char *c = cells[i];
		size_t plain = plain_len(c);
		/* Most cells have nothing to escape: one scan gives the width. */
		size_t w = c[plain] ? table_stream_width(c) : plain;
		size_t fill = w < ts->width[i] ? ts->width[i] - w : 0;
		bool right = ts->cols[i].flags & SCOLS_FL_RIGHT, last = i + 1 == ts->n;

		if (right)
			line_pad(&l, fill);
		if (upper) {
			for (const char *p = c; *p; p++) {
				/* As table_new(): '_' of a JSON key reads '-' in a header. */
				char u = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A')
					 : *p == '_'		? '-'
								: *p;

				line_put(&l, &u, 1);
			}
		} else if (!c[plain]) {
			line_put(&l, c, plain);
		} else {
			line_put_escaped(&l, c);
		}
		if (!right && !last)
			line_pad(&l, fill);
		line_put(&l, last ? "\n" : " ", 1);
	}
	fwrite_unlocked(l.buf, 1, l.len, l.out);
}

char *table_stream_u64(uint64_t v, char buf[static TABLE_STREAM_U64_BUFSZ])
{
	char *p = buf + TABLE_STREAM_U64_BUFSZ - 1;

	/* snprintf("%llu") per cell was a tenth of check's time in user space. */
	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

void table_stream_hold(struct table_stream *ts, size_t max_rows)
{
	ts->max_held = max_rows;
}

static void put_header(struct table_stream *ts)
{
	const char *names[TABLE_STREAM_MAX_COLUMNS];

	for (size_t i = 0; i < ts->n; i++)
		names[i] = ts->cols[i].name;
	put_row(ts, names, true);
	ts->header_done = true;
}

void table_stream_flush(struct table_stream *ts)
{
	if (ts->n_held && !ts->header_done)
		put_header(ts);
	for (size_t r = 0; r < ts->n_held; r++)
		put_row(ts, (const char *const *)ts->held + r * ts->n, false);
	for (size_t i = 0; i < ts->n_held * ts->n; i++)
		free(ts->held[i]);
	free(ts->held);
	ts->held = NULL;
	ts->n_held = ts->cap_held = ts->max_held = 0;
}

/* Keep the row for later; false when there is no room left for it. */
static bool hold_row(struct table_stream *ts, const char *const *cells)
{
	char **v;

	if (ts->n_held == ts->max_held)
		return false;
	if (ts->n_held == ts->cap_held) {
		size_t cap = ts->cap_held ? ts->cap_held * 2 : 64;

		v = reallocarray(ts->held, cap * ts->n, sizeof(*v));
		if (!v)
			err(EXIT_FAILED, "out of memory");
		ts->held = v;
		ts->cap_held = cap;
	}
	v = ts->held + ts->n_held * ts->n;
	for (size_t i = 0; i < ts->n; i++) {
		size_t w = table_stream_width(cells[i]);

		v[i] = strdup(cells[i]);
		if (!v[i])
			err(EXIT_FAILED, "out of memory");
		if (w > ts->width[i])
			ts->width[i] = w;
	}
	ts->n_held++;
	return true;
}

void table_stream_row(struct table_stream *ts, const char *const *cells)
{
	if (ts->max_held) {
		if (hold_row(ts, cells))
			return;
		table_stream_flush(ts);
	}
	if (!ts->header_done)
		put_header(ts);
	put_row(ts, cells, false);
}
