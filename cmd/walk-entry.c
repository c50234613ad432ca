// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What an entry of ea_walk() is to a subcommand that works on hints: one
 * place decides what is skipped and why, so set, apply and clear agree.
 */
#include <err.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"

enum entry_class walk_entry_classify(const struct ea_walk_entry *e, const struct target *top,
				     struct target *ret, const char **why)
{
	*ret = (struct target){ .path = e->path, .fd = e->fd, .st = e->st, .fs = top->fs };
	*why = NULL;

	switch (e->kind) {
	case EA_WALK_DIR:
		return ENTRY_DIR;
	case EA_WALK_FILE:
		return target_has_data(ret) ? ENTRY_FILE_WITH_DATA : ENTRY_EMPTY_FILE;
	case EA_WALK_SYMLINK:
		*why = "symbolic link, not followed";
		return ENTRY_SKIPPED;
	case EA_WALK_OTHER:
		*why = "not a regular file or directory";
		return ENTRY_SKIPPED;
	case EA_WALK_OTHER_FS:
		*why = "another filesystem";
		return ENTRY_SKIPPED;
	case EA_WALK_ERROR:
		break;
	}
	warnx_path(e->path, "%s", strerror(-e->err));
	return ENTRY_FAILED;
}
