/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * File names as the terminal gets them, in tables and in messages: a byte
 * that is not printable ASCII becomes \xHH, and so does a backslash that
 * would read as the start of one (libsmartcols' way outside a UTF-8
 * locale, which is ours).  A name cannot move the cursor, fake a second
 * row or split a message over two lines.
 */
#ifndef EXTALIGN_CMD_ESCAPE_H
#define EXTALIGN_CMD_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "extalign/macro.h"

/* Whether the byte at p prints as \xHH. */
static inline bool name_needs_escape(const char *p)
{
	unsigned char c = (unsigned char)*p;

	return c < 0x20 || c > 0x7e || (c == '\\' && p[1] == 'x');
}

/* The four characters \xHH that stand for byte c. */
static inline void name_escape_byte(char out[static 4], unsigned char c)
{
	out[0] = '\\';
	out[1] = 'x';
	out[2] = "0123456789abcdef"[c >> 4];
	out[3] = "0123456789abcdef"[c & 15];
}

/* How long s is escaped (how wide it prints), the NUL not counted. */
size_t name_escaped_len(const char *s);
/* s escaped, malloc()ed; running out of memory is fatal (err()). */
char *name_escape(const char *s);

/* warnx("NAME: MESSAGE") with the name escaped. */
void warnx_path(const char *path, const char *fmt, ...) _printf_(2, 3);
/* warn("NAME") with the name escaped: the message is errno's. */
void warn_path(const char *path);

#endif
