// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign check: are a file's extents aligned to its extent size hint (or a
 * unit given on the command line)?  Judged from FIEMAP, logically and on disk.
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check-map.h"
#include "cmd.h"
#include "config.h"
#include "escape.h"
#include "extalign/extent.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/size.h"
#include "extalign/walk.h"
#include "table.h"

enum {
	COL_PATH,
	COL_UNIT,
	COL_EXTENTS,
	COL_MISLOG,
	COL_MISPHYS,
	COL_UNKNOWN,
	COL_RULE, /* only with --config */
	COL_VERDICT,
	COL_COUNT
};

static const struct column_def columns[] = {
	[COL_PATH] = { "path", 0.5, SCOLS_FL_NOEXTREMES, SCOLS_JSON_STRING },
	[COL_UNIT] = { "unit", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_EXTENTS] = { "extents", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_MISLOG] = { "misaligned_logical", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_MISPHYS] = { "misaligned_physical", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_UNKNOWN] = { "unknown_physical", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER },
	[COL_RULE] = { "rule", 0.1, 0, SCOLS_JSON_STRING },
	[COL_VERDICT] = { "verdict", 10, 0, SCOLS_JSON_STRING },
};

/*
 * What check says of a file.  The first five judge its extents against a
 * unit; the others say why there was no unit to judge against, or that
 * the file lacks the hint its rule asks for.
 */
enum verdict {
	V_ALIGNED,
	V_MISALIGNED,	/* logically */
	V_LOGICAL_ONLY, /* aligned in the file, not on the device */
	V_UNVERIFIABLE, /* an extent without a physical address */
	V_EMPTY,
	V_NO_HINT,	/* no hint, and nothing says it needs one */
	V_NO_RULE,	/* --config: no rule covers it */
	V_HINT_MISSING, /* --config: its rule's hint is not on it */
	V_COUNT
};

static const char *const verdict_names[V_COUNT] = {
	[V_ALIGNED] = "aligned",
	[V_MISALIGNED] = "misaligned",
	[V_LOGICAL_ONLY] = "logical-only",
	[V_UNVERIFIABLE] = "unverifiable",
	[V_EMPTY] = "empty",
	[V_NO_HINT] = "no-hint",
	[V_NO_RULE] = "no-rule",
	[V_HINT_MISSING] = "hint-missing",
};

/* The verdicts that make the exit status 1. */
static bool verdict_negative(enum verdict v)
{
	return v == V_MISALIGNED || v == V_LOGICAL_ONLY || v == V_UNVERIFIABLE ||
	       v == V_HINT_MISSING;
}

struct check_opts {
	uint32_t unit;		   /* 0: each file's own hint, or its rule's */
	struct rule_finder *rules; /* --config, else NULL */
	bool json, verbose, bytes, noheadings, recursive;
	bool map, color; /* --map (check-map.c) instead of the table */
};

/* Rows go to one of two places: JSON is one document, text is streamed. */
struct check_out {
	struct libscols_table *tb;	    /* --json */
	struct table_stream ts;		    /* text */
	int cols[COL_COUNT];		    /* the columns shown: COL_RULE only with --config */
	struct column_def shown[COL_COUNT]; /* their definitions, for the text table */
	size_t n_cols;
	unsigned verdicts[V_COUNT];    /* how many files got each */
	uint64_t unit;		       /* the last unit and its text: one per run, */
	char unit_text[EA_SIZE_BUFSZ]; /* not one ea_size_format() per row */
};

/*
 * The directory of the previous path, open: check DIR/file... resolves DIR
 * once, and each file is one name to look up, not a whole path.  When many
 * of the paths that follow are in it, its listing says which names are
 * regular files (see check_open()).
 */
struct parent {
	char *dir;		  /* as given, NULL: none open */
	int fd;			  /* AT_FDCWD for paths without a slash */
	struct ea_dir_list types; /* n == 0: none read */
	size_t cursor;
};

/* check -R holds back this many rows (about 100 bytes each) to size the table. */
#define CHECK_HOLD_ROWS 65536

/* Fewer files than this in one directory are not worth reading it for. */
#define PARENT_LIST_MIN 32

static void parent_done(struct parent *p)
{
	if (p->fd >= 0)
		close(p->fd);
	free(p->dir);
	ea_dir_list_free(&p->types);
	*p = (struct parent){ .fd = -1 };
}

/*
 * The directory part of path, slash included ("" for a bare name), and how
 * many of paths[0..n) are names directly in that same directory.
 */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) + 1 : 0;
}

static size_t run_in_dir(char *const *paths, size_t n, const char *dir, size_t len)
{
	size_t k = 0;

	while (k < n && dir_len(paths[k]) == len && !strncmp(paths[k], dir, len))
		k++;
	return k;
}

static void usage(FILE *out)
{
	fputs("Usage: extalign check [options] FILE...\n\n"
	      "Check with FIEMAP that each file's extents start and end on multiples\n"
	      "of its extent size hint, in the file (logical) and on the device\n"
	      "(physical).  Verdicts: aligned, misaligned, logical-only (aligned in\n"
	      "the file, not on disk), unverifiable (no physical address), empty.\n"
	      "A file with no hint is no-hint, and is not judged.\n"
	      "Exit status 0: all aligned; 1: some file is not.\n\n"
	      "Options:\n"
	      "  -e, --extsize SIZE  check against SIZE instead of each file's hint\n"
	      "  -c, --config FILE   check each file against its rule in FILE: no-rule,\n"
	      "                      no-hint for 'extsize = none', hint-missing when\n"
	      "                      the file lacks its rule's hint\n"
	      "  -J, --json          JSON output\n"
	      "  -b, --bytes         print the unit in bytes\n"
	      "      --noheadings    do not print a header line\n"
	      "  -R, --recursive     check every file below each directory given\n"
	      "                      (one filesystem, no symlinks)\n"
	      "  -v, --verbose       list every extent after the file's row\n"
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

/*
 * The directory fd and the name to look up in it for paths[0]; AT_FDCWD
 * and the whole path when the last name is not a plain one or its
 * directory will not open (so the error is about the path the user gave).
 */
static int parent_of(struct parent *p, char *const *paths, size_t n, const char **name)
{
	const char *path = paths[0];
	size_t len = dir_len(path);
	const char *base = path + len;

	*name = path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return AT_FDCWD;
	if (!p->dir || strlen(p->dir) != len || strncmp(p->dir, path, len)) {
		size_t run;
		int fd;

		parent_done(p);
		p->dir = strndup(path, len);
		if (!p->dir)
			err(EXIT_FAILED, "out of memory");
		fd = open(len ? p->dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			parent_done(p);
			return AT_FDCWD;
		}
		p->fd = fd;
		/*
		 * Listing a directory of 100,000 names for a few of them would
		 * cost more than it saves: only for a long run of paths in it,
		 * and only up to a few times as many entries as the run.
		 */
		run = run_in_dir(paths, n, path, len);
		if (run >= PARENT_LIST_MIN)
			(void)ea_dir_list_read(fd, 4 * run + 1024, &p->types);
	}
	*name = base;
	return p->fd;
}

/*
 * Open a file to check: one open and at most one stat (target_open()
 * costs two stats and a statfs more, which check needs none of).  Nothing
 * is opened before a stat or the directory's listing has said it is a
 * regular file: opening a device can have effects (a watchdog starts), and
 * O_NOFOLLOW refuses a symlink put there since.  On the lstat way there is
 * no second stat to prove the open found the inode lstat saw: check only
 * reads, and a name swapped for another regular file in between is reported
 * with what its extents say under that name, as a check a moment later would.
 * A name the listing gave as a regular file is not stat'ed here at all
 * (t->st.st_mode stays 0): check_one() asks for the size only when it
 * changes the verdict (need_stat: always, for --map).
 */
static int check_open(struct parent *p, char *const *paths, size_t n, bool need_stat,
		      struct target *t)
{
	const char *path = paths[0], *name;
	int dfd = parent_of(p, paths, n, &name);

	*t = (struct target){ .path = path, .fd = -1 };
	/*
	 * A name its directory listed as a regular file is opened first and
	 * its fstat is the one stat, as in walk.c: one lookup, not two.  The
	 * listing stands in for the lstat, a name swapped since for something
	 * else is caught on what was opened, and anything unexpected takes
	 * the way below, which says what is wrong.
	 */
	if (p->types.n && dfd == p->fd && ea_dir_list_type(&p->types, name, &p->cursor) == DT_REG) {
		t->fd = openat(dfd, name,
			       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (t->fd >= 0 && !need_stat)
			return EXIT_OK;
		if (t->fd >= 0 && fstat(t->fd, &t->st) == 0 && S_ISREG(t->st.st_mode))
			return EXIT_OK;
		target_close(t);
	}
	if (fstatat(dfd, name, &t->st, AT_SYMLINK_NOFOLLOW) < 0) {
		warn_path(path);
		return EXIT_FAILED;
	}
	if (S_ISLNK(t->st.st_mode)) {
		warnx_path(path, "is a symbolic link (not followed); give the path it points to");
		return EXIT_FAILED;
	}
	if (S_ISDIR(t->st.st_mode)) {
		warnx_path(path, "is a directory; check takes files (-R checks those below it)");
		return EXIT_FAILED;
	}
	if (!S_ISREG(t->st.st_mode)) {
		warnx_path(path, "not a regular file or directory");
		return EXIT_FAILED;
	}
	/* O_NONBLOCK: never wait on a lease or a mandatory lock. */
	t->fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (t->fd < 0) {
		if (errno == ELOOP)
			warnx_path(path, "changed while being opened; try again");
		else
			warn_path(path);
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

/* rep NULL: nothing was judged (no unit), the numbers are left empty. */
static void add_row(struct check_out *out, const struct check_opts *o, const char *path,
		    uint64_t unit, const struct ea_align_report *rep, const char *rule,
		    enum verdict v)
{
	char u[EA_SIZE_BUFSZ], b[4][TABLE_STREAM_U64_BUFSZ];
	const char *unit_cell = "-";

	out->verdicts[v]++;
	if (unit && (o->json || o->bytes)) {
		unit_cell = table_stream_u64(unit, u);
	} else if (unit) {
		if (unit != out->unit) {
			ea_size_format(unit, out->unit_text);
			out->unit = unit;
		}
		unit_cell = out->unit_text;
	}
	const char *none = o->json ? NULL : "-";
	const char *all[] = {
		[COL_PATH] = path,
		[COL_UNIT] = unit ? unit_cell : none,
		[COL_EXTENTS] = rep ? table_stream_u64(rep->extents, b[0]) : none,
		[COL_MISLOG] = rep ? table_stream_u64(rep->misaligned_logical, b[1]) : none,
		[COL_MISPHYS] = rep ? table_stream_u64(rep->misaligned_physical, b[2]) : none,
		[COL_UNKNOWN] = rep ? table_stream_u64(rep->unknown_physical, b[3]) : none,
		[COL_RULE] = rule ? rule : none,
		[COL_VERDICT] = verdict_names[v],
	};
	const char *cells[COL_COUNT];

	for (size_t i = 0; i < out->n_cols; i++)
		cells[i] = all[out->cols[i]];
	if (o->json) {
		struct libscols_line *ln = table_add_line(out->tb, NULL);

		for (size_t i = 0; i < out->n_cols; i++)
			if (cells[i])
				table_set(ln, (int)i, cells[i]);
	} else {
		table_stream_row(&out->ts, cells);
	}
}

/*
 * The unit to judge t against: --extsize, else with --config its rule's
 * (*rule set; *hint_ok false when the file lacks that hint), else its own
 * hint.  0 when there is none: *v then says why.
 */
static uint64_t unit_of(const struct target *t, const struct check_opts *o,
			const struct ea_rule **rule, bool *hint_ok, enum verdict *v)
{
	struct fsxattr fsx;
	bool read = ea_fsx_get(t->fd, &fsx) == 0;
	bool has = read && (fsx.fsx_xflags & FS_XFLAG_EXTSIZE);

	*rule = NULL;
	*hint_ok = true;
	*v = V_NO_HINT;
	if (o->unit)
		return o->unit;
	if (!o->rules)
		return has ? fsx.fsx_extsize : 0;
	if (rule_finder_find(o->rules, t->path, read ? fsx.fsx_projid : EA_PROJID_NONE, rule) < 0 ||
	    !*rule) {
		*v = V_NO_RULE;
		return 0;
	}
	if (!(*rule)->extsize)
		return 0; /* "extsize = none": no hint is what it asks for */
	*hint_ok = has && fsx.fsx_extsize == (*rule)->extsize &&
		   (!(*rule)->forcealign || (fsx.fsx_xflags & FS_XFLAG_FORCEALIGN));
	return (*rule)->extsize;
}

static int check_one(struct check_out *out, const struct target *t, const struct check_opts *o,
		     uint64_t *logical_only)
{
	_cleanup_free_ struct ea_extent *ext = NULL;
	const struct ea_rule *rule;
	struct ea_align_report rep;
	enum verdict v;
	bool hint_ok;
	uint64_t unit;
	size_t n;
	int r;

	unit = unit_of(t, o, &rule, &hint_ok, &v);
	if (!unit) {
		if (o->map)
			printf("%s: %s, nothing to draw against (give --extsize SIZE)\n", t->path,
			       v == V_NO_RULE ? "no rule covers it" : "no extent size hint");
		else
			add_row(out, o, t->path, 0, NULL, rule ? rule->name : NULL, v);
		return EXIT_OK;
	}
	r = ea_fiemap_read(t->fd, &ext, &n);
	if (r < 0) {
		warnx_path(t->path, "cannot read extents: %s",
			   r == -EOPNOTSUPP ? "this filesystem has no FIEMAP" : strerror(-r));
		return r == -EOPNOTSUPP ? EXIT_UNSUPPORTED : EXIT_FAILED;
	}
	if (!t->st.st_mode) {
		struct ea_align_report lenient;

		/*
		 * Not stat'ed (check_open()).  The size only decides whether a
		 * run that is not the last one reaches end of file, which
		 * excuses a length off the unit: judged as if none did and as
		 * if all did, the same report means the size cannot change it,
		 * as for every file of one extent.  Otherwise, one fstat.
		 */
		ea_align_analyze(ext, n, unit, UINT64_MAX, &rep);
		ea_align_analyze(ext, n, unit, 0, &lenient);
		if (memcmp(&rep, &lenient, sizeof(rep))) {
			struct stat st;

			if (fstat(t->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
				warnx_path(t->path, "changed while being checked; try again");
				return EXIT_FAILED;
			}
			ea_align_analyze(ext, n, unit, (uint64_t)st.st_size, &rep);
		}
	} else {
		ea_align_analyze(ext, n, unit, (uint64_t)t->st.st_size, &rep);
	}
	if (o->map) {
		check_map_print(t->path, ext, n, unit, (uint64_t)t->st.st_size, o->color);
		return ea_align_report_ok(&rep) ? EXIT_OK : EXIT_NEGATIVE;
	}

	if (!hint_ok)
		v = V_HINT_MISSING;
	else if (!rep.extents)
		v = V_EMPTY;
	else if (rep.misaligned_logical)
		v = V_MISALIGNED;
	else if (rep.misaligned_physical)
		v = V_LOGICAL_ONLY;
	else if (rep.unknown_physical)
		v = V_UNVERIFIABLE;
	else
		v = V_ALIGNED;

	add_row(out, o, t->path, unit, &rep, rule ? rule->name : NULL, v);
	if (o->verbose && !o->json)
		print_extents(t->path, ext, n, unit);
	/* The largest unit a file is aligned to only in the file: the footnote's. */
	if (v == V_LOGICAL_ONLY && unit > *logical_only)
		*logical_only = unit;
	return verdict_negative(v) ? EXIT_NEGATIVE : EXIT_OK;
}

/* Under a table of more than one file: how many got each verdict. */
static unsigned files_judged(const struct check_out *out)
{
	unsigned total = 0;

	for (int v = 0; v < V_COUNT; v++)
		total += out->verdicts[v];
	return total;
}

static void print_counts(const struct check_out *out)
{
	unsigned total = files_judged(out);
	const char *sep = ": ";

	if (total < 2)
		return;
	printf("\n%u files", total);
	for (int v = 0; v < V_COUNT; v++) {
		if (!out->verdicts[v])
			continue;
		printf("%s%u %s", sep, out->verdicts[v], verdict_names[v]);
		sep = ", ";
	}
	/* The period: a line ending in a verdict would pass for a row. */
	puts(".");
}

/* --json: the counts of print_counts(), every verdict, as "summary". */
static void json_summary(void *data)
{
	const struct check_out *out = data;

	printf(",\n   \"summary\": {\"files\": %u", files_judged(out));
	for (int v = 0; v < V_COUNT; v++) {
		fputs(", ", stdout);
		json_key(verdict_names[v]);
		printf(": %u", out->verdicts[v]);
	}
	puts("}");
}

/* check -R: the tree walk hands each regular file below a directory here. */
struct check_walk {
	struct check_out *out;
	const struct check_opts *o;
	uint64_t *logical_only;
};

static int check_walked(const struct target *t, void *userdata)
{
	struct check_walk *w = userdata;

	if (S_ISDIR(t->st.st_mode)) {
		warnx_path(t->path, "is a directory; check takes files (-R checks those below it)");
		return EXIT_FAILED;
	}
	return check_one(w->out, t, w->o, w->logical_only);
}

int cmd_check(int argc, char **argv)
{
	enum { OPT_COLOR = 256, OPT_NOHEADINGS };
	static const struct option longopts[] = {
		{ "extsize", required_argument, NULL, 'e' },
		{ "config", required_argument, NULL, 'c' },
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
	_cleanup_(parent_done) struct parent parent = { .fd = -1 };
	_cleanup_table_ struct libscols_table *tb = NULL;
	struct check_out out = { 0 };
	struct check_opts o = { 0 };
	uint64_t logical_only = 0;
	struct check_walk walk = { .out = &out, .o = &o, .logical_only = &logical_only };
	struct rule_finder rules = { 0 };
	_cleanup_(policy_freep) struct ea_policy *policy = NULL;
	const char *config = NULL;
	int color = MAP_COLOR_AUTO;
	int c, status = EXIT_OK;

	while ((c = getopt_long(argc, argv, "e:c:JbRmvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (parse_extsize_arg("--extsize", optarg, &o.unit) != EXIT_OK)
				return EXIT_USAGE;
			break;
		case 'c':
			config = optarg;
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
	if (config && o.unit) {
		warnx("--extsize and --config exclude each other: one unit for all, or each "
		      "file's rule");
		return EXIT_USAGE;
	}
	o.color = map_color_enabled(color);
	if (optind >= argc) {
		warnx("no file given");
		fprintf(stderr, USAGE_HINT, "check");
		return EXIT_USAGE;
	}

	if (config) {
		/* As realign --config: the file is the whole configuration. */
		const struct config_paths paths = { .config = config };

		if (config_load(&paths, &policy) != EXIT_OK)
			return EXIT_USAGE;
		rules.policy = policy;
		o.rules = &rules;
	}
	for (int i = 0; i < COL_COUNT; i++)
		if (i != COL_RULE || config || o.json) /* JSON: every key, null for none */
			out.cols[out.n_cols++] = i;
	{
		struct column_def shown[COL_COUNT];
		/* Every path is known now: the path column is as wide as the widest. */
		size_t widths[COL_COUNT] = { 0 }, all[COL_COUNT] = { [COL_UNIT] = 5 };
		char u[EA_SIZE_BUFSZ];

		for (int i = optind; i < argc; i++) {
			size_t w = table_stream_width(argv[i]);

			if (w > all[COL_PATH])
				all[COL_PATH] = w;
		}
		if (o.unit)
			all[COL_UNIT] = o.bytes ? strlen(table_stream_u64(o.unit, u))
						: strlen(ea_size_format(o.unit, u));
		for (size_t i = 0; i < out.n_cols; i++) {
			shown[i] = columns[out.cols[i]];
			widths[i] = all[out.cols[i]];
		}
		if (o.json) {
			tb = table_new("files", shown, out.n_cols, o.json, o.noheadings);
			out.tb = tb;
		} else {
			memcpy(out.shown, shown, sizeof(shown));
			table_stream_init(&out.ts, out.shown, out.n_cols, widths);
			out.ts.header_done = o.noheadings;
			/* A walk's paths are not known in advance: size the columns
			 * on up to this many rows (-v lists extents after each row). */
			if (o.recursive && !o.verbose)
				table_stream_hold(&out.ts, CHECK_HOLD_ROWS);
		}
	}

	for (int i = optind; i < argc; i++) {
		struct target t;
		int r;

		/* A tree is walked by walk.c; the paths given are the hot path. */
		if (o.recursive) {
			r = target_open(argv[i], &t);
			if (r == EXIT_OK)
				r = walk_targets(&t, &(struct walk_spec){ .recursive = true,
									  .files_only = true,
									  .fn = check_walked,
									  .userdata = &walk });
		} else {
			r = check_open(&parent, argv + i, (size_t)(argc - i), o.map, &t);
			if (r == EXIT_OK)
				r = check_one(&out, &t, &o, &logical_only);
		}
		target_close(&t);
		status = exit_worst(status, r);
	}
	if (o.json)
		table_print_json_more(tb, json_summary, &out);
	else
		table_stream_flush(&out.ts);
	rule_finder_done(&rules);
	/* Prose under a table, not in output meant for awk (--noheadings). */
	if (!o.json && !o.map && !o.noheadings)
		print_counts(&out);
	if (logical_only && !o.json && !o.map && !o.noheadings) {
		char su[EA_SIZE_BUFSZ];

		ea_size_format(logical_only, su);
		printf("\nlogical-only: the extents start on unit boundaries in the file but not "
		       "on\n"
		       "the device, and a hardware atomic write needs both.  XFS aligns on disk\n"
		       "only with stripe alignment (mkfs.xfs -d su=%s,sw=1, mount -o swalloc);\n"
		       "ext4 with forcealign (extalign set --force) on a patched kernel.\n",
		       su);
	}
	return status;
}
