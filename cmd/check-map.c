// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign check --map: one character per extent size unit, so that a DBA
 * sees at a glance where a tablespace went wrong.  Each unit of the file is
 * judged on its own: is it one piece of one extent, and does that piece
 * start on a unit boundary on the device too?  The characters differ in
 * shape, not only in colour, so the map reads the same in a pipe or a log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "check-map.h"
#include "extalign/macro.h"
#include "extalign/size.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

enum unit_state {
	U_ALIGNED,   /* one extent, on a unit boundary in the file and on disk */
	U_PHYS_OFF,  /* one extent, aligned in the file but not on the device */
	U_SPLIT,     /* more than one extent, or part hole: not one piece */
	U_HOLE,	     /* nothing allocated */
	U_UNWRITTEN, /* allocated, never written (fallocate): reads as zeros */
	U_UNKNOWN,   /* no physical address to judge (inline data, delalloc) */
	U_COUNT
};

static const struct {
	char ch;
	const char *color; /* SGR parameters */
	const char *what;
} states[U_COUNT] = {
	[U_ALIGNED] = { '#', "32", "aligned" },
	[U_PHYS_OFF] = { 'o', "33", "physically off" },
	[U_SPLIT] = { '/', "31;1", "split across extents" },
	[U_HOLE] = { '.', "2", "hole" },
	[U_UNWRITTEN] = { '_', "36", "unwritten" },
	[U_UNKNOWN] = { '?', "35", "no physical address" },
};

int map_color_parse(const char *s)
{
	if (!s || !strcmp(s, "auto"))
		return MAP_COLOR_AUTO;
	if (!strcmp(s, "always"))
		return MAP_COLOR_ALWAYS;
	if (!strcmp(s, "never"))
		return MAP_COLOR_NEVER;
	return -1;
}

bool map_color_enabled(enum map_color c)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

	if (c != MAP_COLOR_AUTO)
		return c == MAP_COLOR_ALWAYS;
	if (no_color && *no_color)
		return false;
	if (term && !strcmp(term, "dumb"))
		return false;
	return isatty(STDOUT_FILENO);
}

/* Columns of the terminal, else $COLUMNS, else 80. */
static unsigned terminal_width(void)
{
	struct winsize ws;
	const char *env;
	long v;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
		return ws.ws_col;
	env = getenv("COLUMNS");
	if (env && (v = strtol(env, NULL, 10)) > 0 && v < 10000)
		return (unsigned)v;
	return 80;
}

/*
 * The state of [start, end), given extents sorted by logical offset, from
 * *first on.  Pieces contiguous in the file and on the device are one piece:
 * filesystems split extents for their own reasons (ext4's 32768-block limit,
 * the written/unwritten boundary of a partly written unit), which does not
 * split the unit on disk.
 */
static enum unit_state judge(const struct ea_extent *e, size_t n, size_t *first, uint64_t start,
			     uint64_t end, uint64_t unit)
{
	const struct ea_extent *head = NULL, *prev = NULL;
	uint64_t covered = 0;
	bool all_unwritten = true, split = false, unknown = false;

	while (*first < n && e[*first].logical + e[*first].length <= start)
		(*first)++;
	for (size_t i = *first; i < n && e[i].logical < end; i++) {
		uint64_t a = MAX(start, e[i].logical), b = MIN(end, e[i].logical + e[i].length);

		covered += b - a;
		if (prev && (prev->logical + prev->length != e[i].logical ||
			     prev->physical + prev->length != e[i].physical))
			split = true;
		unknown |= e[i].flags & EA_EXTENT_UNKNOWN_PHYS;
		all_unwritten &= !!(e[i].flags & EA_EXTENT_UNWRITTEN);
		head = head ?: &e[i];
		prev = &e[i];
	}
	if (!head)
		return U_HOLE;
	if (unknown)
		return U_UNKNOWN;
	if (split || covered < end - start)
		return U_SPLIT;
	if (all_unwritten)
		return U_UNWRITTEN;
	return (head->physical + (start - head->logical)) % unit ? U_PHYS_OFF : U_ALIGNED;
}

static void put_state(enum unit_state s, bool color)
{
	if (color)
		printf("\033[%sm%c\033[0m", states[s].color, states[s].ch);
	else
		putchar(states[s].ch);
}

void check_map_print(const char *path, const struct ea_extent *ext, size_t n, uint64_t unit,
		     uint64_t file_size, bool color)
{
	const struct ea_extent *e = ext;
	char ubuf[EA_SIZE_BUFSZ], obuf[EA_SIZE_BUFSZ];
	unsigned count[U_COUNT] = { 0 }, width, per_row;
	uint64_t limit = file_size, units;
	size_t first = 0, m = n;
	bool shown[U_COUNT] = { false };

	/* Preallocation past end of file (fallocate --keep-size) is drawn too. */
	if (m && e[m - 1].logical + e[m - 1].length > limit)
		limit = e[m - 1].logical + e[m - 1].length;
	units = (limit + unit - 1) / unit;

	printf("%s: %llu units of %s\n", path, (unsigned long long)units,
	       ea_size_format(unit, ubuf));
	width = terminal_width();
	/* Offset column, a space, then rows of whole groups of 8 units. */
	per_row = width > 10 + 8 ? (width - 10) / 8 * 8 : 8;
	for (uint64_t u = 0; u < units; u++) {
		uint64_t start = u * unit, end = MIN(start + unit, limit);
		enum unit_state s = judge(e, m, &first, start, end, unit);

		if (u % per_row == 0) {
			if (u)
				putchar('\n');
			printf("%9s ", ea_size_format(start, obuf));
		}
		put_state(s, color);
		count[s]++;
		shown[s] = true;
	}
	if (units)
		putchar('\n');

	/* The legend names the five states always, the sixth only when drawn. */
	for (unsigned s = 0, col = 0; s < U_COUNT; s++) {
		unsigned len = 2 + (unsigned)strlen(states[s].what);

		if (s == U_UNKNOWN && !shown[s])
			continue;
		if (col && col + 2 + len > width) {
			putchar('\n');
			col = 0;
		} else if (col) {
			fputs("  ", stdout);
			col += 2;
		}
		put_state(s, color);
		printf(" %s", states[s].what);
		col += len;
	}
	printf("\n%llu units: %u aligned, %u physically off, %u split, %u holes, %u unwritten",
	       (unsigned long long)units, count[U_ALIGNED], count[U_PHYS_OFF], count[U_SPLIT],
	       count[U_HOLE], count[U_UNWRITTEN]);
	if (count[U_UNKNOWN])
		printf(", %u without physical address", count[U_UNKNOWN]);
	putchar('\n');
}
