// SPDX-License-Identifier: LGPL-2.1-or-later
/* Diagnostics, path normalisation and durations for the policy code. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/policy.h"
#include "policy-internal.h"

int ea_diag_add(struct ea_diags *d, const char *file, unsigned line, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL, *f = NULL;
	va_list ap;
	int r;

	if (d->n == d->alloc) {
		size_t alloc = d->alloc ? d->alloc * 2 : 16;
		struct ea_diag *items = reallocarray(d->items, alloc, sizeof(*items));

		if (!items)
			return -ENOMEM;
		d->items = items;
		d->alloc = alloc;
	}
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0) {
		msg = NULL;
		return -ENOMEM;
	}
	f = strdup(file ? file : "");
	if (!f)
		return -ENOMEM;
	d->items[d->n++] =
		(struct ea_diag){ .file = TAKE_PTR(f), .line = line, .msg = TAKE_PTR(msg) };
	return 0;
}

bool ea_diag_has(const struct ea_diags *d, const char *file, unsigned line)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].line == line && !strcmp(d->items[i].file, file))
			return true;
	return false;
}

void ea_diags_free(struct ea_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->items[i].file);
		free(d->items[i].msg);
	}
	free(d->items);
	*d = (struct ea_diags)EA_DIAGS_INIT;
}

int ea_path_normalize(const char *path, char **ret)
{
	_cleanup_free_ char *out = NULL;
	const char *p = path;
	size_t n = 0;

	if (!path || path[0] != '/')
		return -EINVAL;
	out = malloc(strlen(path) + 2);
	if (!out)
		return -ENOMEM;

	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			p += len;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return -EINVAL;
		out[n++] = '/';
		memcpy(out + n, p, len);
		n += len;
		p += len;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	*ret = TAKE_PTR(out);
	return 0;
}

bool ea_path_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	if (len == 1 && dir[0] == '/')
		return path[0] == '/';
	/* A prefix only counts on a component boundary: /data/db is not /data/dbx. */
	return !strncmp(path, dir, len) && (path[len] == '\0' || path[len] == '/');
}

unsigned ea_path_depth(const char *path)
{
	unsigned depth = 0;

	if (!strcmp(path, "/"))
		return 0;
	for (const char *p = path; *p; p++)
		depth += *p == '/';
	return depth;
}

static const struct {
	const char *name;
	uint64_t usec;
} duration_units[] = {
	{ "us", 1 },
	{ "ms", 1000 },
	{ "s", 1000000 },
	{ "min", 60000000ULL },
	{ "h", 3600000000ULL },
	{ "d", 86400000000ULL },
};

int ea_duration_parse(const char *s, uint64_t *usec)
{
	uint64_t total = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;

	while (*p) {
		const char *unit;
		uint64_t v = 0, mult = 0;
		size_t ulen;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		/* By hand for the same reasons as ea_size_parse: no signs, spaces or octal. */
		for (; *p >= '0' && *p <= '9'; p++) {
			unsigned digit = (unsigned)(*p - '0');

			if (v > (UINT64_MAX - digit) / 10)
				return -ERANGE;
			v = v * 10 + digit;
		}
		unit = p;
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
			p++;
		ulen = (size_t)(p - unit);
		if (ulen == 0) {
			/* A bare number is seconds, but only on its own: "1h30" is a typo. */
			if (unit != s + strspn(s, "0123456789") || *p)
				return -EINVAL;
			mult = 1000000;
		}
		for (size_t i = 0; ulen && i < ARRAY_SIZE(duration_units); i++)
			if (strlen(duration_units[i].name) == ulen &&
			    !strncmp(unit, duration_units[i].name, ulen))
				mult = duration_units[i].usec;
		if (!mult)
			return -EINVAL;
		if (v > UINT64_MAX / mult || total > UINT64_MAX - v * mult)
			return -ERANGE;
		total += v * mult;
	}
	*usec = total;
	return 0;
}
