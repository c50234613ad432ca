/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libsmartcols tables as every subcommand prints them: upper-case headers in
 * the table, the same names in lower case as JSON keys with proper JSON
 * types.  Running out of memory while printing is fatal (err()).
 */
#ifndef EXTALIGN_CMD_TABLE_H
#define EXTALIGN_CMD_TABLE_H

#include <libsmartcols.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct column_def {
	const char *name; /* lower case: the JSON key */
	double width;	  /* as scols_table_new_column() takes it */
	int flags;	  /* SCOLS_FL_* */
	int json_type;	  /* SCOLS_JSON_* */
};

/* A table named name (the JSON array's key) with the given columns. */
struct libscols_table *table_new(const char *name, const struct column_def *cols, size_t n,
				 bool json, bool noheadings);
struct libscols_line *table_add_line(struct libscols_table *tb, struct libscols_line *parent);
void table_set(struct libscols_line *ln, int col, const char *s);
void table_set_u64(struct libscols_line *ln, int col, uint64_t v);
/* "yes"/"no": libsmartcols prints them as JSON true/false. */
void table_set_bool(struct libscols_line *ln, int col, bool v);
/* Print unless it is an empty table in text mode; JSON always prints. */
void table_print(struct libscols_table *tb, bool json);
/* The table (made with json) as JSON, names made UTF-8 as json_str() does. */
void table_print_json(struct libscols_table *tb);
/*
 * The same, and more() prints further members of the document's object
 * (",\n   \"summary\": {...}\n") before it is closed.
 */
void table_print_json_more(struct libscols_table *tb, void (*more)(void *data), void *data);

/*
 * A text table written row by row (table-stream.c): constant memory, the
 * first row on screen at once.  Column widths are the larger of the header
 * and min_widths[i] (may be NULL); a wider cell pushes its row right.  The
 * header goes out with the first row, so no row, no output, like
 * table_print().  Cells are escaped as libsmartcols escapes them.
 */
#define TABLE_STREAM_MAX_COLUMNS 16
struct table_stream {
	FILE *out;
	const struct column_def *cols;
	size_t n;
	size_t width[TABLE_STREAM_MAX_COLUMNS];
	bool header_done;
	char **held; /* n cells a row, for table_stream_hold() */
	size_t n_held, cap_held, max_held;
};
void table_stream_init(struct table_stream *ts, const struct column_def *cols, size_t n,
		       const size_t *min_widths);
void table_stream_row(struct table_stream *ts, const char *const *cells);
/*
 * Keep up to max_rows rows back, widening the columns to fit them, for
 * rows whose widths cannot be known in advance (the paths of a walk):
 * they are printed at the flush, or when the next row would be one too
 * many, and the rows after that stream at the widths reached.
 */
void table_stream_hold(struct table_stream *ts, size_t max_rows);
/* Print the rows held back, and free them. */
void table_stream_flush(struct table_stream *ts);
/* v in decimal, somewhere inside buf (the return value). */
#define TABLE_STREAM_U64_BUFSZ 21
char *table_stream_u64(uint64_t v, char buf[static TABLE_STREAM_U64_BUFSZ]);
/* How wide s prints in a streamed table, escapes included. */
size_t table_stream_width(const char *s);

static inline void table_unrefp(struct libscols_table **tb)
{
	scols_unref_table(*tb);
}
#define _cleanup_table_ __attribute__((cleanup(table_unrefp)))

#endif
