// SPDX-License-Identifier: GPL-2.0-or-later
#include <ctype.h>
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

struct libscols_table *table_new(const char *name, const struct column_def *cols, size_t n,
				 bool json, bool noheadings)
{
	struct libscols_table *tb;

	scols_init_debug(0);
	tb = scols_new_table();
	if (!tb || scols_table_set_name(tb, name) < 0)
		errx(EXIT_FAILED, "out of memory");
	scols_table_enable_json(tb, json);
	scols_table_enable_noheadings(tb, noheadings);
	for (size_t i = 0; i < n; i++) {
		struct libscols_column *cl;
		char header[64];
		size_t j;

		for (j = 0; cols[i].name[j] && j < sizeof(header) - 1; j++)
			/* JSON keys use '_' (jq takes .misaligned_logical as is), headers '-'. */
			header[j] = json		     ? cols[i].name[j]
				    : cols[i].name[j] == '_' ? '-'
							     : (char)toupper(cols[i].name[j]);
		header[j] = '\0';
		cl = scols_table_new_column(tb, header, cols[i].width, cols[i].flags);
		if (!cl)
			errx(EXIT_FAILED, "out of memory");
		scols_column_set_json_type(cl, cols[i].json_type);
	}
	return tb;
}

struct libscols_line *table_add_line(struct libscols_table *tb, struct libscols_line *parent)
{
	struct libscols_line *ln = scols_table_new_line(tb, parent);

	if (!ln)
		errx(EXIT_FAILED, "out of memory");
	return ln;
}

void table_set(struct libscols_line *ln, int col, const char *s)
{
	if (scols_line_set_data(ln, col, s) < 0)
		errx(EXIT_FAILED, "out of memory");
}

void table_set_u64(struct libscols_line *ln, int col, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	table_set(ln, col, buf);
}

void table_set_bool(struct libscols_line *ln, int col, bool v)
{
	table_set(ln, col, v ? "yes" : "no");
}

void table_print_json_more(struct libscols_table *tb, void (*more)(void *data), void *data)
{
	char *doc = NULL;
	size_t len;

	/* libsmartcols copies the bytes of names into JSON strings as they are. */
	if (scols_print_table_to_string(tb, &doc) < 0 || !doc)
		errx(EXIT_FAILED, "out of memory");
	len = strlen(doc);
	/* Its document is one object: its closing "\n}\n" waits for the members. */
	if (more && len >= 3 && !strcmp(doc + len - 3, "\n}\n")) {
		doc[len - 3] = '\0';
		json_put_document(doc);
		more(data);
		puts("}");
	} else {
		json_put_document(doc);
	}
	free(doc);
}

void table_print_json(struct libscols_table *tb)
{
	table_print_json_more(tb, NULL, NULL);
}

void table_print(struct libscols_table *tb, bool json)
{
	if (json)
		table_print_json(tb);
	else if (scols_table_get_nlines(tb) > 0)
		scols_print_table(tb);
}
