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

static inline void table_unrefp(struct libscols_table **tb)
{
	scols_unref_table(*tb);
}
#define _cleanup_table_ __attribute__((cleanup(table_unrefp)))

#endif
