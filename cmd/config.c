// SPDX-License-Identifier: GPL-2.0-or-later
#include <err.h>
#include <errno.h>

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
	if (r < 0)
		warnx("%zu error%s in the configuration", d.n, d.n == 1 ? "" : "s");
	ea_diags_free(&d);
	return r;
}

int config_load(const struct config_paths *paths, struct ea_policy **ret)
{
	return config_read(paths, ret) < 0 ? EXIT_FAILED : EXIT_OK;
}
