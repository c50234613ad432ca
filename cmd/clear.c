// SPDX-License-Identifier: GPL-2.0-or-later
/* extalign clear: remove extent size hints, inheritance and forcealign. */
#include <err.h>
#include <getopt.h>
#include <stdio.h>

#include "cmd.h"
#include "extalign/hint.h"
#include "extalign/macro.h"

static void usage(FILE *out)
{
	fputs("Usage: extalign clear [options] PATH...\n\n"
	      "Remove the extent size hint, directory inheritance and forcealign.\n"
	      "Existing extents stay where they are.\n\n"
	      "Options:\n"
	      "  -R, --recursive     also every directory and empty file below each\n"
	      "                      directory (one filesystem, no symlinks); files with\n"
	      "                      data keep their hint and are counted\n"
	      "  -v, --verbose       print every path changed\n"
	      "  -h, --help          show this help\n",
	      out);
}

struct clear_run {
	bool verbose;
	const struct target *top;
	unsigned cleared, kept;
};

/* Clear one path; below a -R top, files with data are left and counted. */
static int clear_one(const struct target *t, void *userdata)
{
	struct clear_run *run = userdata;
	struct fsxattr fsx;
	unsigned dropped;
	int r;

	if (t != run->top) {
		/* Nothing to clear: not worth a call, nor a line with -v. */
		if (ea_fsx_get(t->fd, &fsx) == 0 &&
		    !(fsx.fsx_xflags &
		      (FS_XFLAG_EXTSIZE | FS_XFLAG_EXTSZINHERIT | FS_XFLAG_FORCEALIGN)))
			return EXIT_OK;
		if (target_has_data(t)) {
			run->kept++;
			if (run->verbose)
				printf("%s: has data, its hint stays\n", t->path);
			return EXIT_OK;
		}
	}
	r = ea_hint_clear(t->fd, &dropped);
	if (r < 0)
		return report_hint_error(t, r, dropped, false);
	run->cleared++;
	if (run->verbose)
		printf("%s: hints cleared\n", t->path);
	return EXIT_OK;
}

int cmd_clear(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "recursive", no_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_free_ struct target *targets = NULL;
	struct clear_run run = { 0 };
	struct walk_spec spec;
	bool recursive = false;
	int c, n, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "Rvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'R':
			recursive = true;
			break;
		case 'v':
			run.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, "clear");
			return EXIT_USAGE;
		}
	}
	n = argc - optind;
	if (n <= 0) {
		warnx("no path given");
		fprintf(stderr, USAGE_HINT, "clear");
		return EXIT_USAGE;
	}
	targets = calloc(n, sizeof(*targets));
	if (!targets)
		err(EXIT_FAILED, "out of memory");
	for (int i = 0; i < n; i++)
		status = exit_worst(status, target_open(argv[optind + i], &targets[i]));
	if (status != EXIT_OK) {
		warnx("nothing was changed");
		goto out;
	}
	spec = (struct walk_spec){ .recursive = recursive, .fn = clear_one, .userdata = &run };
	for (int i = 0; i < n; i++) {
		run.top = &targets[i];
		status = exit_worst(status, walk_targets(&targets[i], &spec));
	}
	if (recursive)
		printf("%u cleared; %u %s with data %s hint (a hint cannot be "
		       "removed from a file with data)\n",
		       run.cleared, run.kept, PLURAL(run.kept, "file", "files"),
		       PLURAL(run.kept, "keeps its", "keep their"));
out:
	for (int i = 0; i < n; i++)
		target_close(&targets[i]);
	return status;
}
