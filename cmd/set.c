// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign set: put an extent size hint (and forcealign) on files and
 * directories.  Two phases: every path and value is checked before the first
 * change, so a bad argument changes nothing.
 */
#include <dirent.h>
#include <err.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/size.h"
#include "extalign/walk.h"

struct set_opts {
	uint32_t extsize;
	int forcealign; /* -1 as is, 0 clear, 1 set */
	bool recursive;
	bool inherit;
	bool verbose;
};

struct tree_stats {
	const struct set_opts *o;
	unsigned dirs, files, candidates, hinted, skipped;
};

static void usage(FILE *out)
{
	fputs("Usage: extalign set [options] PATH...\n\n"
	      "Set an extent size hint on empty files and, for inheritance by new\n"
	      "files, on directories.  Every hint is read back and verified.\n\n"
	      "Options:\n"
	      "  -e, --extsize SIZE  extent size hint: bytes or 16k, 64K, 1MiB, ...\n"
	      "  -f, --force         also set forcealign (needs --extsize): aligned or ENOSPC\n"
	      "      --no-force      clear forcealign\n"
	      "  -R, --recursive     walk directories (one filesystem, no symlinks): directories\n"
	      "                      inherit, empty files get the hint, files with data are\n"
	      "                      listed as realignment candidates\n"
	      "      --no-inherit    do not set inheritance on directories\n"
	      "  -v, --verbose       print every path changed\n"
	      "  -h, --help          show this help\n",
	      out);
}

/* Checks that need the filesystem, done for every path before any change. */
static int validate(const struct target *t, const struct set_opts *o)
{
	enum ea_extsize_problem p;
	char bs[EA_SIZE_BUFSZ], es[EA_SIZE_BUFSZ];

	if (!ea_fs_may_support_extsize(t->fs.magic)) {
		warnx_path(t->path, "%s does not support extent size hints (only XFS and ext4 do)",
			   t->fs.type);
		return EXIT_UNSUPPORTED;
	}
	if (o->extsize) {
		p = ea_extsize_check(o->extsize, t->fs.blksize);
		if (p != EA_EXTSIZE_OK) {
			warnx_path(t->path, "extent size %s %s (%s block size is %s)",
				   ea_size_format(o->extsize, es), ea_extsize_problem_str(p),
				   t->fs.type, ea_size_format(t->fs.blksize, bs));
			return EXIT_USAGE;
		}
	}
	if (S_ISDIR(t->st.st_mode) && !o->recursive && !o->inherit && o->forcealign < 0) {
		warnx_path(t->path, "is a directory and --no-inherit leaves nothing to set on it");
		return EXIT_USAGE;
	}
	if (target_has_data(t) && !o->recursive) {
		warnx_path(t->path,
			   "has data (%lld bytes); an extent size hint can only be set on an empty "
			   "file (use 'extalign realign' to rewrite it aligned)",
			   (long long)t->st.st_size);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

static struct ea_hint hint_for(const struct set_opts *o, bool is_dir)
{
	return (struct ea_hint){
		.extsize = o->extsize,
		.forcealign = o->forcealign,
		.inherit = is_dir ? o->inherit : false,
	};
}

/* Set the hint on one open file or directory; returns an exit code. */
static int apply(const struct target *t, const struct set_opts *o)
{
	bool is_dir = S_ISDIR(t->st.st_mode);
	struct ea_hint h = hint_for(o, is_dir);
	unsigned dropped;
	int r;

	if (is_dir && !h.inherit && o->forcealign < 0)
		return EXIT_OK; /* --no-inherit -R: directories only walked */
	r = ea_hint_set(t->fd, is_dir, &h, &dropped);
	if (r < 0)
		return report_hint_error(t, r, dropped, o->forcealign > 0);
	if (o->verbose)
		printf("%s: %s\n", t->path, is_dir ? "inherits the hint" : "hint set");
	return EXIT_OK;
}

/* Whether the file carries the hint (and forcealign) that set would give it. */
static bool has_wanted_hint(const struct target *t, const struct set_opts *o)
{
	struct fsxattr fsx;

	if (ea_fsx_get(t->fd, &fsx) < 0 || !(fsx.fsx_xflags & FS_XFLAG_EXTSIZE) ||
	    fsx.fsx_extsize != o->extsize)
		return false;
	return o->forcealign <= 0 || (fsx.fsx_xflags & FS_XFLAG_FORCEALIGN);
}

/* Below a directory of set -R: directories and empty files get the hint. */
static int set_below(const struct target *t, void *userdata)
{
	struct tree_stats *s = userdata;

	if (S_ISDIR(t->st.st_mode)) {
		s->dirs++;
	} else if (!target_has_data(t)) {
		s->files++;
	} else if (has_wanted_hint(t, s->o)) {
		/* Given the hint before its data: its extents follow it already. */
		s->hinted++;
		if (s->o->verbose)
			printf("%s: has data and the hint already\n", t->path);
		return EXIT_OK;
	} else {
		s->candidates++;
		printf("%s: has data, left alone (realignment candidate)\n", t->path);
		return EXIT_OK;
	}
	return apply(t, s->o);
}

static void skipped_below(const char *path, const char *why, void *userdata)
{
	struct tree_stats *s = userdata;

	s->skipped++;
	if (s->o->verbose)
		printf("%s: skipped (%s)\n", path, why);
}

static int set_tree(const struct target *t, const struct set_opts *o)
{
	struct tree_stats s = { .o = o };
	const struct walk_spec spec = { .recursive = true,
					.below_only = true,
					.fn = set_below,
					.skipped = skipped_below,
					.userdata = &s };
	int r;

	/* The top first: when it cannot take the hint, nothing below is tried. */
	r = apply(t, o);
	if (r != EXIT_OK)
		return r;
	r = walk_targets(t, &spec);
	printf("%s: %u %s, %u empty %s hinted; %u %s with data and the hint already; "
	       "%u %s with data left alone; %u skipped\n",
	       t->path, s.dirs + 1, s.dirs + 1 == 1 ? "directory" : "directories", s.files,
	       s.files == 1 ? "file" : "files", s.hinted, s.hinted == 1 ? "file" : "files",
	       s.candidates, s.candidates == 1 ? "file" : "files", s.skipped);
	if (s.candidates) {
		char size[EA_SIZE_BUFSZ];

		printf("To realign them: extalign realign --extsize %s%s %s\n",
		       ea_size_format(o->extsize, size), o->forcealign > 0 ? " --force" : "",
		       t->path);
	}
	return r;
}

/*
 * A directory's hint is inherited by what is made in it from now on; the
 * subdirectories it has already keep what they had.  Say so, with the way
 * to reach them, rather than leave the tree half done in silence.
 */
static void note_subdirs(const struct target *t, const struct set_opts *o)
{
	struct ea_dir_list l = { 0 };
	unsigned subdirs = 0;

	if (!o->extsize || !o->inherit || ea_dir_list_read(t->fd, 65536, &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++) {
		_cleanup_close_ int fd = -1;
		struct fsxattr fsx;

		if (l.v[i]->type != DT_DIR && l.v[i]->type != DT_UNKNOWN)
			continue;
		fd = openat(t->fd, l.v[i]->name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		/* A subdirectory that already hands this hint down is fine. */
		if (fd >= 0 &&
		    (ea_fsx_get(fd, &fsx) < 0 || !(fsx.fsx_xflags & FS_XFLAG_EXTSZINHERIT) ||
		     fsx.fsx_extsize != o->extsize))
			subdirs++;
	}
	ea_dir_list_free(&l);
	if (subdirs)
		warnx_path(t->path,
			   "new files here inherit the hint, but %u existing "
			   "subdirector%s do%s not; use -R to give %s the hint too",
			   subdirs, subdirs == 1 ? "y" : "ies", subdirs == 1 ? "es" : "",
			   subdirs == 1 ? "it" : "them");
}

int cmd_set(int argc, char **argv)
{
	enum { OPT_NO_FORCE = 256, OPT_NO_INHERIT };
	static const struct option longopts[] = {
		{ "extsize", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'f' },
		{ "no-force", no_argument, NULL, OPT_NO_FORCE },
		{ "recursive", no_argument, NULL, 'R' },
		{ "no-inherit", no_argument, NULL, OPT_NO_INHERIT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct set_opts o = { .forcealign = -1, .inherit = true };
	bool force = false, no_force = false;
	_cleanup_free_ struct target *targets = NULL;
	int c, status = EXIT_OK, n;

	while ((c = getopt_long(argc, argv, "e:fRvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (parse_extsize_arg("--extsize", optarg, &o.extsize) != EXIT_OK)
				return EXIT_USAGE;
			break;
		case 'f':
			force = true;
			break;
		case OPT_NO_FORCE:
			no_force = true;
			break;
		case 'R':
			o.recursive = true;
			break;
		case OPT_NO_INHERIT:
			o.inherit = false;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, "set");
			return EXIT_USAGE;
		}
	}
	if (force && no_force) {
		warnx("--force and --no-force contradict each other");
		return EXIT_USAGE;
	}
	if (force && !o.extsize) {
		warnx("--force needs --extsize: forcealign aligns to the extent size hint");
		return EXIT_USAGE;
	}
	if (!o.extsize && !no_force) {
		warnx("nothing to set: give --extsize SIZE (and --force) or --no-force");
		fprintf(stderr, USAGE_HINT, "set");
		return EXIT_USAGE;
	}
	o.forcealign = force ? 1 : no_force ? 0 : -1;
	n = argc - optind;
	if (n <= 0) {
		warnx("no path given");
		fprintf(stderr, USAGE_HINT, "set");
		return EXIT_USAGE;
	}

	targets = calloc(n, sizeof(*targets));
	if (!targets)
		err(EXIT_FAILED, "out of memory");
	for (int i = 0; i < n; i++) {
		int r = target_open(argv[optind + i], &targets[i]);

		if (r == EXIT_OK)
			r = validate(&targets[i], &o);
		status = exit_worst(status, r);
	}
	if (status != EXIT_OK) {
		warnx("nothing was changed");
		goto out;
	}

	for (int i = 0; i < n; i++) {
		const struct target *t = &targets[i];
		int r = EXIT_OK;

		if (o.recursive && S_ISDIR(t->st.st_mode))
			status = exit_worst(status, set_tree(t, &o));
		else if (o.recursive && target_has_data(t))
			printf("%s: has data, left alone (realignment candidate)\n", t->path);
		else if ((r = apply(t, &o)) == EXIT_OK && S_ISDIR(t->st.st_mode))
			note_subdirs(t, &o);
		status = exit_worst(status, r);
	}
out:
	for (int i = 0; i < n; i++)
		target_close(&targets[i]);
	return status;
}
