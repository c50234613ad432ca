// SPDX-License-Identifier: GPL-2.0-or-later
/* Opening paths safely and reporting hint errors, for every subcommand. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"
#include "extalign/hint-error.h"
#include "extalign/macro.h"
#include "extalign/size.h"

int target_open(const char *path, struct target *t)
{
	/* One run, many files, few filesystems (see extalign/fsinfo.h). */
	static struct ea_fsinfo_cache fs_cache;
	struct stat st;
	int r;

	*t = (struct target){ .path = path, .fd = -1 };

	if (lstat(path, &st) < 0) {
		warn_path(path);
		return EXIT_FAILED;
	}
	if (S_ISLNK(st.st_mode)) {
		warnx_path(path, "is a symbolic link (not followed); give the path it points to");
		return EXIT_FAILED;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		warnx_path(path, "not a regular file or directory");
		return EXIT_FAILED;
	}
	/*
	 * O_NONBLOCK: never wait on a lease or a mandatory lock held by the
	 * file's user; O_NOFOLLOW with the inode check below: the path must
	 * still be what lstat() saw.
	 */
	t->fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (t->fd < 0) {
		warn_path(path);
		return EXIT_FAILED;
	}
	if (fstat(t->fd, &t->st) < 0) {
		warn_path(path);
		target_close(t);
		return EXIT_FAILED;
	}
	if (t->st.st_dev != st.st_dev || t->st.st_ino != st.st_ino) {
		warnx_path(path, "changed while being opened; try again");
		target_close(t);
		return EXIT_FAILED;
	}
	r = ea_fsinfo_cached(&fs_cache, t->fd, t->st.st_dev, &t->fs);
	if (r < 0) {
		warnx_path(path, "cannot read filesystem facts: %s", strerror(-r));
		target_close(t);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

void target_close(struct target *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

int parse_extsize_arg(const char *opt, const char *value, uint32_t *ret)
{
	enum ea_extsize_problem p;
	uint64_t v;
	int r;

	r = ea_size_parse(value, UINT64_MAX, &v);
	if (r == -ERANGE) {
		warnx("%s '%s': too large", opt, value);
		return EXIT_USAGE;
	}
	if (r < 0) {
		warnx("%s '%s': not a size; use bytes or a binary suffix, e.g. 65536, 64k, 1M", opt,
		      value);
		return EXIT_USAGE;
	}
	p = ea_extsize_check(v, 0);
	if (p != EA_EXTSIZE_OK) {
		warnx("%s '%s': an extent size %s", opt, value, ea_extsize_problem_str(p));
		return EXIT_USAGE;
	}
	*ret = (uint32_t)v;
	return EXIT_OK;
}

int report_hint_error(const struct target *t, int err, unsigned dropped, bool want_forcealign)
{
	struct ea_hint_failure f = {
		.fstype = t->fs.type,
		.err = err,
		.dropped = dropped,
		.has_data = target_has_data(t),
		.want_forcealign = want_forcealign,
	};
	char msg[256];

	warnx_path(t->path, "%s", ea_hint_strerror(&f, msg, sizeof(msg)));
	return ea_hint_failure_kind(&f) == EA_HINT_FAIL_UNSUPPORTED ? EXIT_UNSUPPORTED
								    : EXIT_FAILED;
}
