// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "name-table.h"

const char *name_table_get(const char *const *table, size_t n, unsigned v, const char *unknown)
{
	return v < n && table[v] ? table[v] : unknown;
}

int name_table_find(const char *const *table, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (table[i] && !strcmp(table[i], name))
			return (int)i;
	return -1;
}
