// SPDX-License-Identifier: GPL-2.0-or-later
/* extalign: per-file aligned allocation for atomic writes on ext4 and XFS. */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "extalign/macro.h"

#ifndef EXTALIGN_VERSION
#define EXTALIGN_VERSION "unknown"
#endif

static const struct subcommand {
	const char *name;
	const char *alias;
	int (*run)(int argc, char **argv);
	const char *summary;
} subcommands[] = {
	{ "set", NULL, cmd_set,
	  "set an extent size hint (and forcealign) on files or directories" },
	{ "get", "show", cmd_get, "show the hints of files and directories" },
	{ "clear", NULL, cmd_clear, "remove extent size hints and forcealign" },
	{ "check", NULL, cmd_check, "check that a file's extents are aligned (FIEMAP)" },
	{ "devices", NULL, cmd_devices, "atomic write limits of devices, filesystems and files" },
	{ "realign", NULL, cmd_realign,
	  "rewrite misaligned files so they carry the hint and aligned extents" },
	{ "policy", NULL, cmd_policy, "check, explain and show the rules of extalign.conf" },
	{ "apply", NULL, cmd_apply, "apply the rules of extalign.conf to existing trees" },
	{ "status", NULL, cmd_status, "show what the running extalignd is doing" },
};

static void usage(FILE *out)
{
	fputs("Usage: extalign [--help | --version] COMMAND [OPTIONS] ARGS...\n\n"
	      "Aligned allocation for hardware atomic writes on ext4 and XFS.\n\n"
	      "Commands:\n",
	      out);
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
		fprintf(out, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
	fputs("\nRun 'extalign help COMMAND' for the options of a command.\n"
	      "See extalign(8) for exit codes and details.\n",
	      out);
}

int main(int argc, char **argv)
{
	static char help_opt[] = "--help";
	char *help_argv[] = { NULL, NULL, help_opt, NULL };
	const char *name;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(name, "-V") || !strcmp(name, "--version")) {
		printf("extalign %s\n", EXTALIGN_VERSION);
		return EXIT_OK;
	}
	/* "help COMMAND" is "COMMAND --help", as git and systemctl have it. */
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			usage(stdout);
			return EXIT_OK;
		}
		if (argc > 3) {
			warnx("help: one command at most");
			return EXIT_USAGE;
		}
		help_argv[0] = argv[0];
		help_argv[1] = argv[2];
		argc = 3;
		argv = help_argv;
		name = argv[1];
	}
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++) {
		const struct subcommand *c = &subcommands[i];

		if (!strcmp(name, c->name) || (c->alias && !strcmp(name, c->alias)))
			return c->run(argc - 1, argv + 1);
	}
	warnx("unknown command '%s'", name);
	fputs("Try 'extalign --help' for the list of commands.\n", stderr);
	return EXIT_USAGE;
}
