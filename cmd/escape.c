// SPDX-License-Identifier: GPL-2.0-or-later
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"

size_t name_escaped_len(const char *s)
{
	size_t n = 0;

	for (const char *p = s; *p; p++)
		n += name_needs_escape(p) ? 4 : 1;
	return n;
}

char *name_escape(const char *s)
{
	char *ret = malloc(name_escaped_len(s) + 1), *q;

	if (!ret)
		errx(EXIT_FAILED, "out of memory");
	q = ret;
	for (const char *p = s; *p; p++) {
		if (!name_needs_escape(p)) {
			*q++ = *p;
			continue;
		}
		name_escape_byte(q, (unsigned char)*p);
		q += 4;
	}
	*q = '\0';
	return ret;
}

void warnx_path(const char *path, const char *fmt, ...)
{
	_cleanup_free_ char *name = name_escape(path);
	va_list ap;

	/* What warnx() prints, with the escaped name in front. */
	fprintf(stderr, "%s: %s: ", program_invocation_short_name, name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void warn_path(const char *path)
{
	warnx_path(path, "%s", strerror(errno));
}
