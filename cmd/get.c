// SPDX-License-Identifier: GPL-2.0-or-later
/* extalign get: the hints of files and directories, as a table or JSON. */
#include <ctype.h>
#include <err.h>
#include <getopt.h>
#include <libsmartcols.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/size.h"

enum { COL_PATH, COL_FSTYPE, COL_BLKSIZE, COL_EXTSIZE, COL_FORCEALIGN, COL_INHERIT, COL_PROJID };

static const struct {
	const char *name;
	double width;
	int flags;
	int json_type;
} columns[] = {
	[COL_PATH] = { "path", 0.5, SCOLS_FL_NOEXTREMES, SCOLS_JSON_STRING },
	[COL_FSTYPE] = { "fstype", 5, 0, SCOLS_JSON_STRING },
	[COL_BLKSIZE] = { "blksize", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
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
	      "  -n, --noheadings    do not print a header line\n"
	      "  -h, --help          show this help\n",
	      out);
}

static void tablep(struct libscols_table **tb)
{
	scols_unref_table(*tb);
}

static int set_data(struct libscols_line *ln, int col, const char *s)
{
	if (scols_line_set_data(ln, col, s) < 0)
		errx(EXIT_FAILED, "out of memory");
	return 0;
}

static void add_size(struct libscols_line *ln, int col, uint64_t v, bool raw, bool none_is_dash)
{
	char buf[EA_SIZE_BUFSZ];

	if (!v && none_is_dash && !raw)
		set_data(ln, col, "-");
	else if (raw) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
		set_data(ln, col, buf);
	} else
		set_data(ln, col, ea_size_format(v, buf));
}

static int add_row(struct libscols_table *tb, const struct target *t, bool raw, bool json)
{
	struct libscols_line *ln;
	struct fsxattr fsx;
	bool is_dir = S_ISDIR(t->st.st_mode);
	uint32_t size_flag = is_dir ? FS_XFLAG_EXTSZINHERIT : FS_XFLAG_EXTSIZE;
	uint64_t extsize;
	char buf[32];
	int r;

	r = ea_fsx_get(t->fd, &fsx);
	if (r < 0) {
		warnx("%s: cannot read hints from %s: %s", t->path, t->fs.type,
		      r == -ENOTTY || r == -EOPNOTSUPP ? "not supported by this filesystem"
						       : strerror(-r));
		return r == -ENOTTY || r == -EOPNOTSUPP ? EXIT_UNSUPPORTED : EXIT_FAILED;
	}
	/* XFS keeps a stale size after the flag is cleared; the flag decides. */
	extsize = (fsx.fsx_xflags & size_flag) ? fsx.fsx_extsize : 0;

	ln = scols_table_new_line(tb, NULL);
	if (!ln)
		errx(EXIT_FAILED, "out of memory");
	set_data(ln, COL_PATH, t->path);
	set_data(ln, COL_FSTYPE, t->fs.type);
	add_size(ln, COL_BLKSIZE, t->fs.blksize, raw || json, false);
	add_size(ln, COL_EXTSIZE, extsize, raw || json, true);
	/* libsmartcols prints "no" as JSON false and "yes" as true. */
	set_data(ln, COL_FORCEALIGN, (fsx.fsx_xflags & FS_XFLAG_FORCEALIGN) ? "yes" : "no");
	if (is_dir)
		set_data(ln, COL_INHERIT, (fsx.fsx_xflags & FS_XFLAG_EXTSZINHERIT) ? "yes" : "no");
	else
		set_data(ln, COL_INHERIT, json ? "no" : "-");
	snprintf(buf, sizeof(buf), "%u", fsx.fsx_projid);
	set_data(ln, COL_PROJID, buf);
	return EXIT_OK;
}

int cmd_get(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_(tablep) struct libscols_table *tb = NULL;
	bool json = false, raw = false, noheadings = false;
	int c, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "Jbnh", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			json = true;
			break;
		case 'b':
			raw = true;
			break;
		case 'n':
			noheadings = true;
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

	scols_init_debug(0);
	tb = scols_new_table();
	if (!tb)
		errx(EXIT_FAILED, "out of memory");
	scols_table_enable_json(tb, json);
	scols_table_set_name(tb, "files");
	scols_table_enable_noheadings(tb, noheadings);
	for (size_t i = 0; i < ARRAY_SIZE(columns); i++) {
		struct libscols_column *cl;
		char upper[16];
		size_t j;

		for (j = 0; columns[i].name[j] && j < sizeof(upper) - 1; j++)
			upper[j] = json ? columns[i].name[j] : (char)toupper(columns[i].name[j]);
		upper[j] = '\0';
		cl = scols_table_new_column(tb, upper, columns[i].width, columns[i].flags);
		if (!cl)
			errx(EXIT_FAILED, "out of memory");
		scols_column_set_json_type(cl, columns[i].json_type);
	}

	for (int i = optind; i < argc; i++) {
		struct target t;
		int r = target_open(argv[i], &t);

		if (r == EXIT_OK)
			r = add_row(tb, &t, raw, json);
		target_close(&t);
		status = exit_worst(status, r);
	}
	if (scols_table_get_nlines(tb) > 0 || json)
		scols_print_table(tb);
	return status;
}
