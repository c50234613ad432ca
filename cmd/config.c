// SPDX-License-Identifier: GPL-2.0-or-later
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"
#include "config.h"

int config_read(const struct config_paths *paths, struct ea_policy **ret)
{
	struct ea_diags d = EA_DIAGS_INIT;
	const char *dir = paths->config_dir ?: paths->config ? EA_POLICY_NO_DROPINS : NULL;
	int r;

	r = ea_policy_load(paths->config, dir, paths->projid, paths->projects, ret, &d);
	for (size_t i = 0; i < d.n; i++) {
		_cleanup_free_ char *file = name_escape(d.items[i].file);

		if (d.items[i].line)
			warnx("%s:%u: %s", file, d.items[i].line, d.items[i].msg);
		else
			warnx("%s: %s", file, d.items[i].msg);
	}
	if (r == -ENOMEM)
		errx(EXIT_FAILED, "out of memory");
	if (r == -ENOENT && !paths->config)
		warnx("no configuration at " EA_POLICY_CONF
		      "; write one (extalign.conf(5)) or name one with --config FILE");
	else if (r < 0)
		warnx("%zu error%s in the configuration", d.n, d.n == 1 ? "" : "s");
	ea_diags_free(&d);
	return r;
}

int config_load(const struct config_paths *paths, struct ea_policy **ret)
{
	return config_read(paths, ret) < 0 ? EXIT_FAILED : EXIT_OK;
}

void rule_finder_done(struct rule_finder *f)
{
	free(f->dir);
	free(f->real);
	f->dir = f->real = NULL;
}

int rule_finder_find(struct rule_finder *f, const char *path, uint32_t projid,
		     const struct ea_rule **rule)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	const char *base = slash ? slash + 1 : path;
	_cleanup_free_ char *abs = NULL;

	*rule = NULL;
	if (!f->dir || strlen(f->dir) != dlen || strncmp(f->dir, path, dlen)) {
		rule_finder_done(f);
		f->dir = strndup(path, dlen);
		if (!f->dir)
			return -ENOMEM;
		f->real = realpath(slash ? (dlen ? f->dir : "/") : ".", NULL);
		f->err = f->real ? 0 : negative_errno();
	}
	if (!f->real)
		return f->err;
	if (asprintf(&abs, "%s/%s", strcmp(f->real, "/") ? f->real : "", base) < 0)
		return -ENOMEM;
	return ea_policy_lookup(f->policy, abs, false, projid, rule, NULL);
}
