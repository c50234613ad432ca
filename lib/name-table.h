/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An enum's names kept in one table, [VALUE] = "name", and the lookups in
 * both directions written once here rather than by hand beside each table.
 * Inside lib/ only.
 */
#ifndef EXTALIGN_NAME_TABLE_H
#define EXTALIGN_NAME_TABLE_H

#include <stddef.h>

#include "extalign/macro.h"

/* table[v], or unknown when v is out of range or has no name. */
const char *name_table_get(const char *const *table, size_t n, unsigned v, const char *unknown);
/* The value whose name is name, or -1. */
int name_table_find(const char *const *table, size_t n, const char *name);

/* const char *PREFIX_name(TYPE v), unknown for a value without a name. */
#define DEFINE_NAME_OF(prefix, type, table, unknown)                                   \
	const char *prefix##_name(type v)                                              \
	{                                                                              \
		return name_table_get(table, ARRAY_SIZE(table), (unsigned)v, unknown); \
	}

/* int PREFIX_from_name(const char *name): the value, or -1. */
#define DEFINE_FROM_NAME(prefix, table)                                 \
	int prefix##_from_name(const char *name)                        \
	{                                                               \
		return name_table_find(table, ARRAY_SIZE(table), name); \
	}

#endif
