// SPDX-License-Identifier: GPL-2.0-or-later
/* extalign get: the hints of files and directories, as a table or JSON. */
#include <err.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "escape.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/size.h"
#include "table.h"

enum { COL_PATH, COL_FSTYPE, COL_BLOCK, COL_EXTSIZE, COL_FORCEALIGN, COL_INHERIT, COL_PROJID };

static const struct column_def columns[] = {
	[COL_PATH] = { "path", 0.5, SCOLS_FL_NOEXTREMES, SCOLS_JSON_STRING },
	[COL_FSTYPE] = { "fstype", 5, 0, SCOLS_JSON_STRING },
	[COL_BLOCK] = { "block", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_EXTSIZE] = { "extsize", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_FORCEALIGN] = { "forcealign", 3, 0, SCOLS_JSON_BOOLEAN },
	[COL_INHERIT] = { "inherit", 3, 0, SCOLS_JSON_BOOLEAN },
	[COL_PROJID] = { "projid", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
};

static void usage(FILE *out)
{
	fputs("Usage: extalign get [options] PATH...\n\n"
	      "Show the extent size hint, forcealign and inheritance of files and\n"
	      "directories as the kernel reports them (FS_IOC_FSGETXATTR).\n\n"
	      "Options:\n"
	      "  -J, --json          JSON output (sizes in bytes)\n"
	      "  -b, --bytes         print sizes in bytes\n"
	      "      --noheadings    do not print a header line\n"
	      "  -R, --recursive     also every directory and file below each directory\n"
	      "                      (one filesystem, no symlinks)\n"
	      "  -h, --help          show this help\n",
	      out);
}

static void add_size(struct libscols_line *ln, int col, uint64_t v, bool raw, bool none_is_dash)
{
	char buf[EA_SIZE_BUFSZ];

	if (!v && none_is_dash && !raw)
		table_set(ln, col, "-");
	else if (raw) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
		table_set(ln, col, buf);
	} else
		table_set(ln, col, ea_size_format(v, buf));
}

struct get_opts {
	struct libscols_table *tb;
	bool raw, json, recursive;
};

static int add_row(const struct target *t, void *userdata)
{
	const struct get_opts *o = userdata;
	struct libscols_table *tb = o->tb;
	bool raw = o->raw, json = o->json;
	struct libscols_line *ln;
	struct fsxattr fsx;
	bool is_dir = S_ISDIR(t->st.st_mode);
	uint32_t size_flag = is_dir ? FS_XFLAG_EXTSZINHERIT : FS_XFLAG_EXTSIZE;
	uint64_t extsize;
	int r;

	r = ea_fsx_get(t->fd, &fsx);
	if (r < 0) {
		warnx_path(t->path, "cannot read hints from %s: %s", t->fs.type,
			   r == -ENOTTY || r == -EOPNOTSUPP ? "not supported by this filesystem"
							    : strerror(-r));
		return r == -ENOTTY || r == -EOPNOTSUPP ? EXIT_UNSUPPORTED : EXIT_FAILED;
	}
	/* XFS keeps a stale size after the flag is cleared; the flag decides. */
	extsize = (fsx.fsx_xflags & size_flag) ? fsx.fsx_extsize : 0;

	ln = table_add_line(tb, NULL);
	table_set(ln, COL_PATH, t->path);
	table_set(ln, COL_FSTYPE, t->fs.type);
	add_size(ln, COL_BLOCK, t->fs.blksize, raw || json, false);
	/* No hint: "-" in the table, null in JSON, as in every command. */
	if (json && !extsize)
		table_set(ln, COL_EXTSIZE, NULL);
	else
		add_size(ln, COL_EXTSIZE, extsize, raw || json, true);
	table_set_bool(ln, COL_FORCEALIGN, fsx.fsx_xflags & FS_XFLAG_FORCEALIGN);
	if (is_dir || json)
		table_set_bool(ln, COL_INHERIT, is_dir && (fsx.fsx_xflags & FS_XFLAG_EXTSZINHERIT));
	else
		table_set(ln, COL_INHERIT, "-");
	table_set_u64(ln, COL_PROJID, fsx.fsx_projid);
	return EXIT_OK;
}

int cmd_get(int argc, char **argv)
{
	enum { OPT_NOHEADINGS = 256 };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "noheadings", no_argument, NULL, OPT_NOHEADINGS },
		{ "recursive", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_table_ struct libscols_table *tb = NULL;
	struct get_opts o = { 0 };
	bool noheadings = false;
	int c, status = EXIT_OK;

	/* -n: the older spelling of --noheadings, kept for scripts; -n is --dry-run elsewhere. */
	while ((c = getopt_long(argc, argv, "JbnRh", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			o.json = true;
			break;
		case 'b':
			o.raw = true;
			break;
		case 'n':
		case OPT_NOHEADINGS:
			noheadings = true;
			break;
		case 'R':
			o.recursive = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, "get");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		warnx("no path given");
		fprintf(stderr, USAGE_HINT, "get");
		return EXIT_USAGE;
	}

	tb = o.tb = table_new("files", columns, ARRAY_SIZE(columns), o.json, noheadings);

	for (int i = optind; i < argc; i++) {
		struct target t;
		int r = target_open(argv[i], &t);

		if (r == EXIT_OK)
			r = walk_targets(&t, &(struct walk_spec){ .recursive = o.recursive,
								  .fn = add_row,
								  .userdata = &o });
		target_close(&t);
		status = exit_worst(status, r);
	}
	table_print(tb, o.json);
	return status;
}
