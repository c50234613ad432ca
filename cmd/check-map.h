/* SPDX-License-Identifier: GPL-2.0-or-later */
/* extalign check --map: a file drawn one character per extent size unit. */
#ifndef EXTALIGN_CMD_CHECK_MAP_H
#define EXTALIGN_CMD_CHECK_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "extalign/extent.h"

enum map_color { MAP_COLOR_AUTO, MAP_COLOR_ALWAYS, MAP_COLOR_NEVER };

/* "auto", "always", "never"; -1 for anything else. */
int map_color_parse(const char *s);

/* Does this run colour its output?  auto: a terminal, NO_COLOR unset, TERM not dumb. */
bool map_color_enabled(enum map_color c);

/*
 * Draw the extents ext[n] of the file path (file_size bytes) in units of unit
 * bytes on stdout: rows wrapped to the terminal, a legend and a summary line.
 */
void check_map_print(const char *path, const struct ea_extent *ext, size_t n, uint64_t unit,
		     uint64_t file_size, bool color);

#endif
