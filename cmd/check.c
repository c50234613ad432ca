// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign check: are a file's extents aligned to its extent size hint (or a
 * unit given on the command line)?  Judged from FIEMAP, logically and on disk.
 */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "check-map.h"
#include "cmd.h"
#include "extalign/extent.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/size.h"
#include "table.h"

enum { COL_PATH, COL_UNIT, COL_EXTENTS, COL_MISLOG, COL_MISPHYS, COL_UNKNOWN, COL_VERDICT };

static const struct column_def columns[] = {
	[COL_PATH] = { "path", 0.5, SCOLS_FL_NOEXTREMES, SCOLS_JSON_STRING },
	[COL_UNIT] = { "unit", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_EXTENTS] = { "extents", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_MISLOG] = { "misaligned_logical", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_MISPHYS] = { "misaligned_physical", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_UNKNOWN] = { "unknown_physical", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_VERDICT] = { "verdict", 10, 0, SCOLS_JSON_STRING },
};

struct check_opts {
	uint32_t unit; /* 0: each file's own hint */
	bool json, verbose, bytes, noheadings, recursive;
	bool map, color; /* --map (check-map.c) instead of the table */
};

static void usage(FILE *out)
{
	fputs("Usage: extalign check [options] FILE...\n\n"
	      "Check with FIEMAP that each file's extents start and end on multiples\n"
	      "of its extent size hint, in the file (logical) and on the device\n"
	      "(physical).  Verdicts: aligned, misaligned, logical-only (aligned in\n"
	      "the file, not on disk), unverifiable (no physical address), empty.\n"
	      "Exit status 0: all aligned; 1: some file is not.\n\n"
	      "Options:\n"
	      "  -e, --extsize SIZE  check against SIZE instead of each file's hint\n"
	      "  -J, --json          JSON output\n"
	      "  -b, --bytes         print the unit in bytes\n"
	      "      --noheadings    do not print a header line\n"
	      "  -R, --recursive     check every file below each directory given\n"
	      "                      (one filesystem, no symlinks)\n"
	      "  -v, --verbose       list every extent after the table\n"
	      "  -m, --map           draw each file, one character per unit, instead\n"
	      "      --color[=WHEN]  colour the map: auto (default), always, never\n"
	      "  -h, --help          show this help\n",
	      out);
}

static void print_extents(const char *path, const struct ea_extent *ext, size_t n, uint64_t unit)
{
	printf("%s: %zu extents (unit %llu bytes)\n", path, n, (unsigned long long)unit);
	printf("  %14s %14s %12s  %s\n", "LOGICAL", "PHYSICAL", "LENGTH", "FLAGS");
	for (size_t i = 0; i < n; i++) {
		const struct ea_extent *e = &ext[i];

		printf("  %14llu %14llu %12llu  %s%s%s%s%s\n", (unsigned long long)e->logical,
		       (unsigned long long)e->physical, (unsigned long long)e->length,
		       e->logical % unit ? "logical-start-off " : "",
		       (e->flags & EA_EXTENT_UNKNOWN_PHYS) ? "no-physical "
		       : e->physical % unit		   ? "physical-start-off "
							   : "",
		       (e->flags & EA_EXTENT_UNWRITTEN) ? "unwritten " : "",
		       (e->flags & EA_EXTENT_NOT_ALIGNED) ? "not-aligned " : "",
		       (e->flags & EA_EXTENT_LAST) ? "last" : "");
	}
}

struct check_run {
	struct libscols_table *tb;
	const struct check_opts *o;
	bool logical_only;
};

static int check_one(const struct target *t, void *userdata)
{
	struct check_run *run = userdata;
	struct libscols_table *tb = run->tb;
	const struct check_opts *o = run->o;
	bool *logical_only = &run->logical_only;
	_cleanup_free_ struct ea_extent *ext = NULL;
	struct ea_align_report rep;
	struct libscols_line *ln;
	struct fsxattr fsx;
	uint64_t unit = o->unit;
	const char *verdict;
	char buf[EA_SIZE_BUFSZ];
	size_t n;
	int r;

	if (S_ISDIR(t->st.st_mode)) {
		warnx("%s: is a directory; check takes files (-R checks those below it)", t->path);
		return EXIT_FAILED;
	}
	if (!unit) {
		r = ea_fsx_get(t->fd, &fsx);
		if (r == 0 && (fsx.fsx_xflags & FS_XFLAG_EXTSIZE))
			unit = fsx.fsx_extsize;
		if (!unit) {
			warnx("%s: has no extent size hint; give --extsize SIZE to check against a "
			      "unit",
			      t->path);
			return EXIT_USAGE;
		}
	}
	r = ea_fiemap_read(t->fd, &ext, &n);
	if (r < 0) {
		warnx("%s: cannot read extents: %s", t->path,
		      r == -EOPNOTSUPP ? "this filesystem has no FIEMAP" : strerror(-r));
		return r == -EOPNOTSUPP ? EXIT_UNSUPPORTED : EXIT_FAILED;
	}
	ea_align_analyze(ext, n, unit, (uint64_t)t->st.st_size, &rep);
	if (o->map) {
		check_map_print(t->path, ext, n, unit, (uint64_t)t->st.st_size, o->color);
		return ea_align_report_ok(&rep) ? EXIT_OK : EXIT_NEGATIVE;
	}

	if (!rep.extents)
		verdict = "empty";
	else if (rep.misaligned_logical)
		verdict = "misaligned";
	else if (rep.misaligned_physical)
		verdict = "logical-only";
	else if (rep.unknown_physical)
		verdict = "unverifiable";
	else
		verdict = "aligned";

	ln = table_add_line(tb, NULL);
	table_set(ln, COL_PATH, t->path);
	if (o->json || o->bytes)
		table_set_u64(ln, COL_UNIT, unit);
	else
		table_set(ln, COL_UNIT, ea_size_format(unit, buf));
	table_set_u64(ln, COL_EXTENTS, rep.extents);
	table_set_u64(ln, COL_MISLOG, rep.misaligned_logical);
	table_set_u64(ln, COL_MISPHYS, rep.misaligned_physical);
	table_set_u64(ln, COL_UNKNOWN, rep.unknown_physical);
	table_set(ln, COL_VERDICT, verdict);

	if (o->verbose && !o->json)
		print_extents(t->path, ext, n, unit);
	if (rep.misaligned_physical && !rep.misaligned_logical)
		*logical_only = true;
	return ea_align_report_ok(&rep) ? EXIT_OK : EXIT_NEGATIVE;
}

int cmd_check(int argc, char **argv)
{
	enum { OPT_COLOR = 256, OPT_NOHEADINGS };
	static const struct option longopts[] = {
		{ "extsize", required_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'J' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "noheadings", no_argument, NULL, OPT_NOHEADINGS },
		{ "recursive", no_argument, NULL, 'R' },
		{ "map", no_argument, NULL, 'm' },
		{ "color", optional_argument, NULL, OPT_COLOR },
		{ "colour", optional_argument, NULL, OPT_COLOR },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_table_ struct libscols_table *tb = NULL;
	struct check_opts o = { 0 };
	int color = MAP_COLOR_AUTO;
	struct check_run run = { .o = &o };
	int c, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "e:JbRmvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (parse_extsize_arg("--extsize", optarg, &o.unit) != EXIT_OK)
				return EXIT_USAGE;
			break;
		case 'J':
			o.json = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'm':
			o.map = true;
			break;
		case 'b':
			o.bytes = true;
			break;
		case OPT_NOHEADINGS:
			o.noheadings = true;
			break;
		case 'R':
			o.recursive = true;
			break;
		case OPT_COLOR:
			color = map_color_parse(optarg);
			if (color < 0) {
				warnx("--color '%s': use auto, always or never", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, "check");
			return EXIT_USAGE;
		}
	}
	if (o.map && o.json) {
		warnx("--map draws for people; it does not go with --json");
		return EXIT_USAGE;
	}
	o.color = map_color_enabled(color);
	if (optind >= argc) {
		warnx("no file given");
		fprintf(stderr, USAGE_HINT, "check");
		return EXIT_USAGE;
	}

	tb = run.tb = table_new("files", columns, ARRAY_SIZE(columns), o.json, o.noheadings);

	for (int i = optind; i < argc; i++) {
		struct target t;
		int r = target_open(argv[i], &t);

		if (r == EXIT_OK)
			r = walk_targets(&t, o.recursive, true, check_one, &run);
		target_close(&t);
		status = exit_worst(status, r);
	}
	if (!o.map)
		table_print(tb, o.json);
	if (run.logical_only && !o.json && !o.map)
		fputs("\nlogical-only: the extents start on unit boundaries in the file but not "
		      "on\n"
		      "the device, and a hardware atomic write needs both.  XFS aligns on disk\n"
		      "only with stripe alignment (mkfs.xfs -d su=64k,sw=1, mount -o swalloc);\n"
		      "ext4 with forcealign (extalign set --force) on a patched kernel.\n",
		      stdout);
	return status;
}
