// SPDX-License-Identifier: LGPL-2.1-or-later
/* The trees extalignd.service may write: see extalign/unit-paths.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/unit-paths.h"
#include "extalign/utf8.h"

#define DROPIN_KEY "ReadWritePaths=-\""

/* path is prefix itself or below it, on path components. */
static bool path_at_or_below(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1 && prefix[0] == '/')
		return true;
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

/*
 * Why a tree cannot go into the drop-in, or NULL.  systemd reads the value
 * as words that may be quoted; inside double quotes a space is part of the
 * path, but a quote, a backslash or a control character would need escapes
 * whose reading differs between systemd versions, so such names are left
 * out rather than guessed.  The unit's own /tmp and /var/tmp are private
 * (PrivateTmp=yes): no line makes the real ones reachable.
 */
static const char *unnameable(const char *path)
{
	static const char *const private_tmp[] = { "/tmp", "/var/tmp" };
	size_t len = strlen(path);

	for (size_t i = 0; i < ARRAY_SIZE(private_tmp); i++)
		if (path_at_or_below(path, private_tmp[i]))
			return "the unit has a /tmp and /var/tmp of its own (PrivateTmp=yes)";
	for (size_t i = 0; i < len;) {
		size_t c = ea_utf8_char_len(path + i, len - i);
		unsigned char b = (unsigned char)path[i];

		if (c == 0)
			return "its name is not UTF-8, which a unit file cannot hold";
		if (b < 0x20 || b == 0x7f || b == '"' || b == '\'' || b == '\\')
			return "its name has a quote, a backslash or a control character";
		i += c;
	}
	return NULL;
}

void ea_unit_dropin_paths_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

void ea_unit_paths_free(struct ea_unit_paths *u)
{
	ea_unit_dropin_paths_free(u->writable, u->n_writable);
	for (size_t i = 0; i < u->n_skipped; i++)
		free(u->skipped[i].path);
	free(u->skipped);
	*u = (struct ea_unit_paths){ 0 };
}

int ea_unit_paths_of_policy(const struct ea_policy *p, struct ea_unit_paths *ret)
{
	static const char *const homes[] = { "/home", "/root", "/run/user" };
	struct ea_unit_paths u = { 0 };

	u.writable = calloc(p->n_watch ? p->n_watch : 1, sizeof(*u.writable));
	u.skipped = calloc(p->n_watch ? p->n_watch : 1, sizeof(*u.skipped));
	if (!u.writable || !u.skipped)
		goto nomem;
	for (size_t i = 0; i < p->n_watch; i++) {
		const char *path = p->watch[i].path, *why = unnameable(path);
		char *copy = strdup(path);

		if (!copy)
			goto nomem;
		if (why) {
			u.skipped[u.n_skipped++] =
				(struct ea_unit_skip){ .path = copy, .why = why };
			continue;
		}
		u.writable[u.n_writable++] = copy;
		for (size_t h = 0; h < ARRAY_SIZE(homes); h++)
			if (path_at_or_below(path, homes[h]))
				u.home = true;
	}
	*ret = u;
	return 0;
nomem:
	ea_unit_paths_free(&u);
	return -ENOMEM;
}

int ea_unit_dropin_format(const struct ea_unit_paths *u, const char *conf, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f,
		"# Made by extalign-generator from %s at boot and at \"systemctl\n"
		"# daemon-reload\": the trees its rules watch, which extalignd must be able\n"
		"# to write (a hint is an ioctl that needs a writable mount).  Edit the\n"
		"# rules, not this file; a new tree takes effect at the next start.\n"
		"[Service]\n",
		conf);
	for (size_t i = 0; i < u->n_writable; i++) {
		fputs(DROPIN_KEY, f);
		/* "%" starts a specifier in a unit file; "%%" is one "%". */
		for (const char *c = u->writable[i]; *c; c++) {
			if (*c == '%')
				fputc('%', f);
			fputc(*c, f);
		}
		fputs("\"\n", f);
	}
	if (u->n_skipped)
		fprintf(f,
			"# Left out: %zu %s that no line here can make reachable\n"
			"# (\"extalign policy check\" names them).\n",
			u->n_skipped, PLURAL(u->n_skipped, "tree", "trees"));
	if (u->home)
		fputs("# A tree under /home, /root or /run/user: visible, read-only but for\n"
		      "# the trees above.\n"
		      "ProtectHome=read-only\n",
		      f);
	if (fclose(f) != 0)
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	return 0;
}

int ea_unit_dropin_read(const char *file, char ***ret, size_t *n)
{
	_cleanup_free_ char *line = NULL;
	char **v = NULL;
	size_t cap = 0, len, nv = 0;
	ssize_t got;
	FILE *f = fopen(file, "re");

	if (!f)
		return negative_errno();
	while ((got = getline(&line, &cap, f)) > 0) {
		size_t k = strlen(DROPIN_KEY);
		char *path, *w, **nvv;

		len = (size_t)got;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (strncmp(line, DROPIN_KEY, k) || len < k + 1 || line[len - 1] != '"')
			continue;
		line[len - 1] = '\0';
		path = strdup(line + k);
		nvv = reallocarray(v, nv + 1, sizeof(*v));
		if (nvv)
			v = nvv;
		if (!path || !nvv) {
			free(path);
			fclose(f);
			ea_unit_dropin_paths_free(v, nv);
			return -ENOMEM;
		}
		/* "%%" back to "%". */
		w = path;
		for (const char *c = path; *c; c++) {
			*w++ = *c;
			if (c[0] == '%' && c[1] == '%')
				c++;
		}
		*w = '\0';
		v[nv++] = path;
	}
	fclose(f);
	*ret = v;
	*n = nv;
	return 0;
}

bool ea_unit_paths_cover(char *const *paths, size_t n, const char *tree)
{
	for (size_t i = 0; i < n; i++)
		if (path_at_or_below(tree, paths[i]))
			return true;
	return false;
}
