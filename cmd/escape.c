// SPDX-License-Identifier: GPL-2.0-or-later
#include <err.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"

char *name_escape(const char *s)
{
	size_t n = 0;
	char *ret, *q;

	for (const char *p = s; *p; p++)
		n += name_needs_escape(p) ? 4 : 1;
	ret = malloc(n + 1);
	if (!ret)
		errx(EXIT_FAILED, "out of memory");
	q = ret;
	for (const char *p = s; *p; p++) {
		if (!name_needs_escape(p)) {
			*q++ = *p;
			continue;
		}
		*q++ = '\\';
		*q++ = 'x';
		*q++ = "0123456789abcdef"[(unsigned char)*p >> 4];
		*q++ = "0123456789abcdef"[(unsigned char)*p & 15];
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
	int saved = errno;
	_cleanup_free_ char *name = name_escape(path);

	warnx("%s: %s", name, strerror(saved));
}
