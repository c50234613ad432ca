// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * -R, --recursive for the commands that take paths: the path itself, then
 * (for a directory) every directory and regular file below it, on one
 * filesystem and never through a symbolic link, as walk_entry_classify()
 * sorts them.  Symlinks, devices and other filesystems are skipped.
 */
#include <err.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"

struct walk_ctx {
	const struct target *top;
	const struct walk_spec *spec;
	int status;
};

static int visit(const struct ea_walk_entry *e, void *userdata)
{
	struct walk_ctx *w = userdata;
	const struct walk_spec *spec = w->spec;
	const char *why;
	struct target t;
	int r;

	switch (walk_entry_classify(e, w->top, &t, &why)) {
	case ENTRY_FAILED:
		w->status = exit_worst(w->status, EXIT_FAILED);
		return 0;
	case ENTRY_SKIPPED:
		if (spec->skipped)
			spec->skipped(e->path, why, spec->userdata);
		return 0;
	case ENTRY_DIR:
		if (spec->files_only)
			return 0;
		break;
	case ENTRY_EMPTY_FILE:
	case ENTRY_FILE_WITH_DATA:
		break;
	}
	r = spec->fn(&t, spec->userdata);
	w->status = exit_worst(w->status, r);
	/* A kernel without the feature lacks it for the next file too: one message. */
	return r == EXIT_UNSUPPORTED ? 1 : 0;
}

int walk_targets(const struct target *top, const struct walk_spec *spec)
{
	struct walk_ctx w = { .top = top, .spec = spec };
	bool is_dir = S_ISDIR(top->st.st_mode);
	int r;

	if (!spec->below_only && !(spec->recursive && spec->files_only && is_dir)) {
		w.status = spec->fn(top, spec->userdata);
		if (w.status == EXIT_UNSUPPORTED)
			return w.status;
	}
	if (!spec->recursive || !is_dir)
		return w.status;
	r = ea_walk(top->fd, top->path, visit, &w);
	if (r < 0) {
		warnx_path(top->path, "%s", strerror(-r));
		w.status = exit_worst(w.status, EXIT_FAILED);
	}
	return w.status;
}
