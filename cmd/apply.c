// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign apply: bring existing trees in line with the rules of
 * extalign.conf.  Directories get inheritance, empty files their hint; files
 * with data can no longer take a hint and are reported as realignment
 * candidates.  The walk starts at rule trees (or the paths given), never
 * follows a symlink and never leaves the filesystem it started on; a path no
 * rule covers is left alone.  Running it twice changes nothing the second
 * time.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "escape.h"
#include "config.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/policy.h"
#include "extalign/walk.h"

struct apply_opts {
	bool dry_run;
	bool verbose;
	bool quiet;
};

struct apply_run {
	const struct apply_opts *o;
	const struct ea_policy *policy;
	const struct target *root;
	unsigned dirs, files, cleared, in_line, candidates, skipped, uncovered;
	/* candidates whose rule has "realign = yes", which realign --config takes */
	unsigned realignable;
	/* the trees walked that hold realignable candidates, for the command */
	char **cand_trees;
	size_t n_cand_trees;
	/* --dry-run: what setting a hint on a scratch file of this filesystem gave */
	dev_t probed_dev;
	struct ea_hint probed;
	int probe_err;
	unsigned probe_dropped;
	bool have_probe;
	int status;
};

static void usage(FILE *out)
{
	fputs("Usage: extalign apply [options] [PATH...]\n\n"
	      "Apply the rules of extalign.conf to existing files: directories get\n"
	      "inheritance, empty files their hint, files with data are reported as\n"
	      "realignment candidates.  Without PATH, every rule's tree.\n\n"
	      "Options:\n"
	      "  -c, --config FILE      the configuration (default " EA_POLICY_CONF ")\n"
	      "  -d, --config-dir DIR   drop-ins (default " EA_POLICY_DROPIN_DIR
	      "; none with --config)\n"
	      "  -n, --dry-run          change nothing; say what would change, and refuse\n"
	      "                         (with its exit status) what the real run refuses\n"
	      "  -v, --verbose          list every change and every candidate\n"
	      "  -q, --quiet            print nothing but errors\n"
	      "  -h, --help             show this help\n",
	      out);
}

/* Does the file or directory already carry exactly the hint h? */
static bool carries(const struct fsxattr *fsx, bool is_dir, const struct ea_hint *h)
{
	uint32_t flag = is_dir ? FS_XFLAG_EXTSZINHERIT : FS_XFLAG_EXTSIZE;

	if (!(fsx->fsx_xflags & flag) || fsx->fsx_extsize != h->extsize)
		return false;
	return h->forcealign <= 0 || (fsx->fsx_xflags & FS_XFLAG_FORCEALIGN);
}

static bool carries_any(const struct fsxattr *fsx)
{
	return fsx->fsx_xflags & (FS_XFLAG_EXTSIZE | FS_XFLAG_EXTSZINHERIT | FS_XFLAG_FORCEALIGN);
}

static void say(const struct apply_run *run, const char *path, const char *what,
		const struct ea_rule *rule)
{
	if (run->o->verbose)
		printf("%s: %s%s (rule '%s')\n", path, run->o->dry_run ? "would be " : "", what,
		       rule->name);
}

/*
 * What the real run would get from setting h: asked of an unnamed scratch
 * file (O_TMPFILE) in the tree's root on the same filesystem, which vanishes
 * when closed and leaves the tree as it was.  Once per filesystem and hint.
 */
static int dry_run_probe(struct apply_run *run, const struct ea_hint *h, unsigned *dropped)
{
	_cleanup_close_ int fd = -1;

	if (run->have_probe && run->probed_dev == run->root->st.st_dev &&
	    run->probed.extsize == h->extsize && run->probed.forcealign == h->forcealign) {
		*dropped = run->probe_dropped;
		return run->probe_err;
	}
	run->have_probe = true;
	run->probed_dev = run->root->st.st_dev;
	run->probed = *h;
	run->probe_dropped = 0;
	fd = openat(run->root->fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		/* No scratch file here (read-only, no O_TMPFILE): the ioctl would fail alike. */
		run->probe_err = errno == EROFS ? -EROFS : 0;
	else
		run->probe_err = ea_hint_set(
			fd, false,
			&(struct ea_hint){ .extsize = h->extsize, .forcealign = h->forcealign },
			&run->probe_dropped);
	*dropped = run->probe_dropped;
	return run->probe_err;
}

/* A change the real run would refuse on this very file, known without making it. */
static int dry_run_refusal(struct apply_run *run, const struct target *t, const struct ea_hint *h,
			   bool want, unsigned *dropped)
{
	*dropped = 0;
	/* FS_IOC_FSSETXATTR wants the owner (or CAP_FOWNER, which root has). */
	if (geteuid() != 0 && t->st.st_uid != geteuid())
		return -EPERM;
	return want ? dry_run_probe(run, h, dropped) : 0;
}

/* Remember the tree being walked as one for the suggested realign command. */
static void note_candidate_tree(struct apply_run *run)
{
	char **v;

	run->realignable++;
	if (run->n_cand_trees && !strcmp(run->cand_trees[run->n_cand_trees - 1], run->root->path))
		return;
	v = reallocarray(run->cand_trees, run->n_cand_trees + 1, sizeof(*v));
	if (!v || !(v[run->n_cand_trees] = strdup(run->root->path)))
		errx(EXIT_FAILED, "out of memory");
	run->cand_trees = v;
	run->n_cand_trees++;
}

/* One directory or regular file; returns 1 to stop the walk. */
static int apply_one(struct apply_run *run, const struct target *t)
{
	bool is_dir = S_ISDIR(t->st.st_mode);
	const struct ea_rule *rule = NULL;
	struct fsxattr fsx;
	struct ea_hint h;
	bool want;
	unsigned dropped = 0;
	int r;

	r = ea_fsx_get(t->fd, &fsx);
	if (r < 0) {
		warnx_path(t->path, "cannot read its hint: %s", strerror(-r));
		run->status = exit_worst(run->status, EXIT_FAILED);
		return 0;
	}
	r = ea_policy_lookup(run->policy, t->path, is_dir, fsx.fsx_projid, &rule, NULL);
	if (r == -ENOMEM)
		errx(EXIT_FAILED, "out of memory");
	if (r < 0 || !rule) {
		run->uncovered++;
		return 0;
	}
	want = ea_rule_hint(rule, is_dir, &h);

	if (want ? carries(&fsx, is_dir, &h) : !carries_any(&fsx)) {
		run->in_line++;
		return 0;
	}
	if (target_has_data(t)) {
		/* A hint cannot be set or safely removed on a file with data. */
		run->candidates++;
		if (rule->realign && rule->extsize)
			note_candidate_tree(run);
		if (run->o->verbose)
			printf("%s: has data, left alone (realignment candidate, rule '%s')\n",
			       t->path, rule->name);
		return 0;
	}
	if (run->o->dry_run)
		r = dry_run_refusal(run, t, &h, want, &dropped);
	else if (want)
		r = ea_hint_set_from(t->fd, is_dir, &fsx, &h, &dropped);
	else
		r = ea_hint_clear(t->fd, &dropped);
	if (!r) {
		say(run, t->path, !want ? "cleared" : is_dir ? "set to inherit" : "hinted", rule);
		!want ? run->cleared++ : is_dir ? run->dirs++ : run->files++;
	}
	if (r < 0) {
		r = report_hint_error(t, r, dropped, h.forcealign > 0);
		run->status = exit_worst(run->status, r);
		/* A kernel that keeps no hint keeps none below either: one message. */
		return r == EXIT_UNSUPPORTED ? 1 : 0;
	}
	return 0;
}

static int visit(const struct ea_walk_entry *e, void *userdata)
{
	struct apply_run *run = userdata;
	const char *why;
	struct target t;

	switch (walk_entry_classify(e, run->root, &t, &why)) {
	case ENTRY_DIR:
	case ENTRY_EMPTY_FILE:
	case ENTRY_FILE_WITH_DATA:
		return apply_one(run, &t);
	case ENTRY_FAILED:
		run->status = exit_worst(run->status, EXIT_FAILED);
		return 0;
	case ENTRY_SKIPPED:
		run->skipped++;
		return 0;
	}
	return 0;
}

/* Walk one tree given by its path, which must not be a symlink itself. */
static void apply_tree(struct apply_run *run, const char *path, bool may_be_missing)
{
	_cleanup_free_ char *abs = NULL;
	struct target t;
	struct stat st;
	int r;

	if (may_be_missing && lstat(path, &st) < 0 && errno == ENOENT) {
		if (!run->o->quiet)
			printf("%s: does not exist (yet); nothing to apply there\n", path);
		return;
	}
	r = target_open(path, &t);
	if (r != EXIT_OK) {
		run->status = exit_worst(run->status, r);
		return;
	}
	/*
	 * Rules name absolute paths; resolve ours once (ancestors may be
	 * symlinks, as /var often is) and compare what the walk finds below.
	 */
	abs = realpath(path, NULL);
	if (!abs) {
		warn_path(path);
		run->status = exit_worst(run->status, EXIT_FAILED);
		target_close(&t);
		return;
	}
	t.path = abs;
	run->root = &t;
	if (!ea_fs_may_support_extsize(t.fs.magic)) {
		warnx_path(path, "%s does not support extent size hints (only XFS and ext4 do)",
			   t.fs.type);
		run->status = exit_worst(run->status, EXIT_UNSUPPORTED);
	} else if (apply_one(run, &t) == 0 && S_ISDIR(t.st.st_mode)) {
		r = ea_walk(t.fd, abs, visit, run);
		if (r < 0) {
			warnx_path(path, "%s", strerror(-r));
			run->status = exit_worst(run->status, EXIT_FAILED);
		}
	}
	run->root = NULL;
	target_close(&t);
}

/* A path as the shell reads it back: quoted unless it is plain. */
static void print_shell_word(const char *s)
{
	if (s[strspn(s,
		     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@%")]) {
		putchar('\'');
		for (; *s; s++)
			*s == '\'' ? fputs("'\\''", stdout) : putchar(*s);
		putchar('\'');
	} else
		fputs(s, stdout);
}

static void summary(const struct apply_run *run)
{
	const char *w = run->o->dry_run ? "would be " : "";
	unsigned others = run->candidates - run->realignable;

	if (run->o->quiet)
		return;
	printf("%u directories %sset to inherit, %u empty files %shinted, %u hints %scleared, "
	       "%u already in line\n",
	       run->dirs, w, run->files, w, run->cleared, w, run->in_line);
	if (run->realignable && run->policy->n_files == 1) {
		/* realign --config reads one file: the one that was read here. */
		printf("%u %s with data %s realignment %s: run extalign realign --config ",
		       run->realignable, PLURAL(run->realignable, "file", "files"),
		       PLURAL(run->realignable, "is a", "are"),
		       PLURAL(run->realignable, "candidate", "candidates"));
		print_shell_word(run->policy->files[0]);
		for (size_t i = 0; i < run->n_cand_trees; i++) {
			putchar(' ');
			print_shell_word(run->cand_trees[i]);
		}
		putchar('\n');
	} else if (run->realignable) {
		printf("%u %s with data %s realignment %s (extalign realign --config "
		       "FILE PATH... reads one configuration file, not the drop-ins; %s)\n",
		       run->realignable, PLURAL(run->realignable, "file", "files"),
		       PLURAL(run->realignable, "is a", "are"),
		       PLURAL(run->realignable, "candidate", "candidates"),
		       run->o->verbose ? "listed above" : "--verbose lists them");
	}
	if (others)
		printf("%u %s with data %s under rules without 'realign = yes' (%s; "
		       "'extalign realign --extsize SIZE FILE...' rewrites them)\n",
		       others, PLURAL(others, "file", "files"), PLURAL(others, "is", "are"),
		       run->o->verbose ? "listed above" : "--verbose lists them");
	if (run->skipped || run->uncovered)
		printf("%u skipped (symlinks, devices, other filesystems), %u under no rule\n",
		       run->skipped, run->uncovered);
}

int cmd_apply(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "config-dir", required_argument, NULL, 'd' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	_cleanup_(policy_freep) struct ea_policy *policy = NULL;
	struct config_paths paths = { 0 };
	struct apply_opts o = { 0 };
	struct apply_run run = { .o = &o };
	int c;

	while ((c = getopt_long(argc, argv, "c:d:nvqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			paths.config = optarg;
			break;
		case 'd':
			paths.config_dir = optarg;
			break;
		case 'n':
			o.dry_run = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, "apply");
			return EXIT_USAGE;
		}
	}
	if (o.quiet && o.verbose) {
		warnx("--quiet and --verbose contradict each other");
		return EXIT_USAGE;
	}
	if (config_load(&paths, &policy) != EXIT_OK) {
		warnx("nothing was changed");
		return EXIT_FAILED;
	}
	run.policy = policy;

	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			apply_tree(&run, argv[i], false);
	} else {
		if (!policy->n_watch)
			warnx("the configuration has no rule trees; nothing to do");
		for (size_t i = 0; i < policy->n_watch; i++)
			apply_tree(&run, policy->watch[i].path, true);
	}
	summary(&run);
	for (size_t i = 0; i < run.n_cand_trees; i++)
		free(run.cand_trees[i]);
	free(run.cand_trees);
	return run.status;
}
