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
	      "  -v, --verbose       print every path changed\n"
	      "  -h, --help          show this help\n",
	      out);
}

int cmd_clear(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_free_ struct target *targets = NULL;
	bool verbose = false;
	int c, n, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
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
	for (int i = 0; i < n; i++) {
		unsigned dropped;
		int r = ea_hint_clear(targets[i].fd, &dropped);

		if (r < 0)
			status = exit_worst(status,
					    report_hint_error(&targets[i], r, dropped, false));
		else if (verbose)
			printf("%s: hints cleared\n", targets[i].path);
	}
out:
	for (int i = 0; i < n; i++)
		target_close(&targets[i]);
	return status;
}
