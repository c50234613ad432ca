// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign realign: rewrite files whose data landed before their extent size
 * hint, so they carry the hint and aligned extents.  The work is done by
 * ea_realign_file() (lib/realign*.c); this is the walk, the progress bar,
 * the summary and the JSON.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "escape.h"
#include "config.h"
#include "openers.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/policy.h"
#include "extalign/realign.h"
#include "extalign/size.h"
#include "extalign/walk.h"

/* Reasons of the command, not the engine: what --config says about a file. */
enum {
	WHY_NONE,
	WHY_NO_RULE,   /* no rule covers it, or its rule has no "realign = yes" */
	WHY_TOO_LARGE, /* [daemon] realign-max-file-size */
	WHY_COUNT
};

struct file {
	char *path;
	uint64_t size;
	dev_t dev;		    /* of the command-line path it was found under */
	enum ea_realign_skip early; /* found by the walk: symlink, other fs, ... */
	int why;		    /* WHY_*: left out by the configuration */
	uint32_t extsize;	    /* from the rule; 0: the command line's */
	int forcealign;
};

struct job {
	struct ea_realign_opts o;
	struct file *files;
	size_t n, cap;
	bool json, quiet, bar;
	const char *state_dir;
	struct ea_policy *policy; /* --config */
	struct rule_finder rules; /* in policy */
	unsigned why[WHY_COUNT];
	/* progress */
	uint64_t total, done_before, t0, last_draw;
	const char *cur;
	uint64_t cur_done;
	/* summary */
	unsigned outcomes[EA_REALIGN_FAILED + 1], skips[EA_SKIP_COUNT], swaps[EA_SWAP_IN_PLACE + 1];
	unsigned not_started, leftovers;
	uint64_t copied, discarded; /* into realigned files / copies thrown away */
	uint64_t kept;		    /* in stopped copies kept for the next run */
	uint64_t to_copy, need_max; /* dry run: data to copy, the most one file needs */
	int status;
	bool first_json;
};

static void usage(FILE *out)
{
	fputs("Usage: extalign realign (--extsize SIZE | --config FILE) [options] PATH...\n\n"
	      "Rewrite files whose data was written before their extent size hint, so\n"
	      "that they carry the hint and aligned extents.  Each file is copied into an\n"
	      "unnamed temporary file in its directory that has the hint from the start,\n"
	      "verified (content checksum, FIEMAP alignment) and then swapped in: extents\n"
	      "are exchanged when the file already has the hint (XFS exchange-range or\n"
	      "swapext, ext4 move-ext; the inode stays), otherwise the copy is renamed\n"
	      "over it.  Files open by others, changed meanwhile, hard-linked (rename\n"
	      "path), immutable, append-only or nodefrag are skipped, and so are files\n"
	      "whose copy would not fit in the free space (checked before copying).\n"
	      "Directories are walked on one filesystem, symlinks are never followed.\n\n"
	      "Options:\n"
	      "  -e, --extsize SIZE     the extent size hint to realign every file to\n"
	      "  -c, --config FILE      instead: the rules of FILE (no drop-ins); files\n"
	      "                         whose rule says \"realign = yes\" get its hint\n"
	      "  -f, --force            also set forcealign (aligned extents or ENOSPC)\n"
	      "      --rewrite-aligned  rewrite files that already look aligned\n"
	      "  -n, --dry-run          say what would be done, the bytes to copy and the\n"
	      "                         free space needed; change nothing\n"
	      "  -t, --max-time T       stop after T (seconds, or with s, m, h suffix); a\n"
	      "                         long copy is kept and the next run goes on\n"
	      "      --bwlimit RATE     copy at most RATE bytes per second (e.g. 50M)\n"
	      "      --buffered         use the page cache instead of O_DIRECT\n"
	      "      --state-dir DIR    leftover records (default " EA_REALIGN_STATE_DIR ")\n"
	      "  -J, --json             JSON output\n"
	      "  -q, --quiet            no progress bar, no per-file lines\n"
	      "  -h, --help             show this help\n\n"
	      "Exit status: 0 all done or nothing to do; 1 some file was left as it was\n"
	      "(skipped or stopped); 3 some file failed; 4 the filesystem keeps no hint.\n",
	      out);
}

/* SIGTERM, SIGINT: stop between chunks, keep a long copy for the next run. */
static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	/* A second one means now: a kill loses nothing either, only progress. */
	if (stop_requested) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	stop_requested = 1;
}

static bool stop_cancel(void *userdata)
{
	(void)userdata;
	return stop_requested;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* "90", "90s", "5m", "2h": whole seconds. */
static int parse_duration(const char *s, uint64_t *ret_ns)
{
	uint64_t v, mult = 1;
	char *num, *end;
	size_t len = strlen(s);
	int r;

	if (!len)
		return -EINVAL;
	num = strndup(s, len);
	if (!num)
		return -ENOMEM;
	end = num + len - 1;
	switch (*end) {
	case 's':
		*end = 0;
		break;
	case 'm':
		mult = 60;
		*end = 0;
		break;
	case 'h':
		mult = 3600;
		*end = 0;
		break;
	}
	r = ea_size_parse(num, UINT64_MAX / 1000000000ULL / mult, &v);
	free(num);
	if (r < 0)
		return r;
	*ret_ns = v * mult * 1000000000ULL;
	return 0;
}

static bool f_wanted(const struct file *f)
{
	return f->early == EA_SKIP_NONE && f->why == WHY_NONE;
}

/* The project id the rules may ask about; EA_PROJID_NONE when unreadable. */
static uint32_t projid_of(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct fsxattr fsx;

	if (fd < 0 || ea_fsx_get(fd, &fsx) < 0)
		return EA_PROJID_NONE;
	return fsx.fsx_projid;
}

/* --config: which rule covers f, and does it ask for realignment? */
static void apply_rule(struct job *j, struct file *f)
{
	const struct ea_rule *rule = NULL;
	uint64_t max = j->policy->daemon.realign_max_file_size;

	f->why = WHY_NO_RULE;
	if (rule_finder_find(&j->rules, f->path, projid_of(f->path), &rule) < 0 || !rule ||
	    !rule->realign || !rule->extsize)
		return;
	if (max && f->size > max) {
		f->why = WHY_TOO_LARGE;
		return;
	}
	f->why = WHY_NONE;
	f->extsize = rule->extsize;
	f->forcealign = rule->forcealign ? 1 : -1;
}

static int add_file(struct job *j, const char *path, uint64_t size, dev_t dev,
		    enum ea_realign_skip early)
{
	if (j->n == j->cap) {
		size_t ncap = j->cap ? j->cap * 2 : 64;
		struct file *p = reallocarray(j->files, ncap, sizeof(*p));

		if (!p)
			return -ENOMEM;
		j->files = p;
		j->cap = ncap;
	}
	j->files[j->n] = (struct file){ .path = strdup(path),
					.size = size,
					.dev = dev,
					.early = early,
					.forcealign = j->o.forcealign };
	if (!j->files[j->n].path)
		return -ENOMEM;
	if (j->policy && early == EA_SKIP_NONE)
		apply_rule(j, &j->files[j->n]);
	j->n++;
	if (early == EA_SKIP_NONE && f_wanted(&j->files[j->n - 1]))
		j->total += size;
	return 0;
}

/* A leftover of a killed job met by the walk: remove it, never realign it. */
static bool leftover(struct job *j, const char *path)
{
	_cleanup_free_ char *d = strdup(path), *b = strdup(path);
	_cleanup_close_ int dfd = -1;
	int r;

	if (!d || !b || !ea_realign_leftover_parse(basename(b), NULL))
		return false;
	if (j->o.dry_run)
		return true;
	dfd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return true;
	r = ea_realign_cleanup_name(dfd, basename(b), j->state_dir);
	if (r > 0)
		j->leftovers++;
	else if (r < 0)
		warnx_path(path, "cannot remove leftover: %s", strerror(-r));
	return true;
}

struct walk_ctx {
	struct job *j;
	dev_t dev;
	int err;
};

static int visit(const struct ea_walk_entry *e, void *userdata)
{
	struct walk_ctx *w = userdata;
	int r = 0;

	switch (e->kind) {
	case EA_WALK_FILE:
		if (leftover(w->j, e->path))
			return 0;
		r = add_file(w->j, e->path, (uint64_t)e->st.st_size, w->dev, EA_SKIP_NONE);
		break;
	case EA_WALK_SYMLINK:
		r = add_file(w->j, e->path, 0, w->dev, EA_SKIP_SYMLINK);
		break;
	case EA_WALK_OTHER:
		r = add_file(w->j, e->path, 0, w->dev, EA_SKIP_NOT_REGULAR);
		break;
	case EA_WALK_OTHER_FS:
		r = add_file(w->j, e->path, 0, w->dev, EA_SKIP_OTHER_FS);
		break;
	case EA_WALK_ERROR:
		warnx_path(e->path, "%s", strerror(-e->err));
		w->j->status = exit_worst(w->j->status, EXIT_FAILED);
		break;
	case EA_WALK_DIR:
		break;
	}
	return r;
}

static int collect(struct job *j, const char *path)
{
	struct stat st;
	int r;

	if (lstat(path, &st) < 0) {
		warnx_path(path, "%s", strerror(errno));
		return EXIT_FAILED;
	}
	if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int fd =
			open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct walk_ctx w = { .j = j, .dev = st.st_dev };

		if (fd < 0) {
			warnx_path(path, "%s", strerror(errno));
			return EXIT_FAILED;
		}
		r = ea_walk(fd, path, visit, &w);
		if (r < 0) {
			warnx_path(path, "%s", strerror(-r));
			return EXIT_FAILED;
		}
		return EXIT_OK;
	}
	if (leftover(j, path))
		return EXIT_OK;
	r = add_file(j, path, S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0, st.st_dev,
		     EA_SKIP_NONE);
	if (r < 0)
		errx(EXIT_FAILED, "out of memory");
	return EXIT_OK;
}

static void fmt_time(char *buf, size_t len, uint64_t s)
{
	if (s >= 3600)
		snprintf(buf, len, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
			 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	else
		snprintf(buf, len, "%llu:%02llu", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
}

/* Size rounded to a unit for the bar, where exact binary forms are rare. */
static const char *human(char *buf, size_t len, uint64_t v)
{
	static const char u[] = "BKMGTPE";
	double d = (double)v;
	unsigned i = 0;

	while (d >= 1024 && i < sizeof(u) - 2) {
		d /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f%c" : "%.0f%c", d, u[i]);
	return buf;
}

static void draw(struct job *j, bool force)
{
	uint64_t now = now_ns(), done = j->done_before + j->cur_done, el = now - j->t0;
	char a[24], b[24], r[24], eta[48] = "--:--";
	unsigned pct = j->total ? (unsigned)(done * 100 / j->total) : 100, fill;
	char bar[31];
	_cleanup_free_ char *name = NULL;

	if (!j->bar || (!force && now - j->last_draw < 100000000ULL))
		return;
	j->last_draw = now;
	if (pct > 100)
		pct = 100;
	fill = pct * 30 / 100;
	memset(bar, '#', fill);
	memset(bar + fill, '.', 30 - fill);
	bar[30] = 0;
	name = name_escape(j->cur ? j->cur : "");
	if (done && el > 200000000ULL && j->total > done)
		fmt_time(eta, sizeof(eta),
			 (uint64_t)((double)(j->total - done) * (double)el / (double)done / 1e9));
	fprintf(stderr, "\r\033[K[%s] %3u%% %s/%s %s/s ETA %s %.40s", bar, pct,
		human(a, sizeof(a), done), human(b, sizeof(b), j->total),
		human(r, sizeof(r), el ? (uint64_t)((double)done * 1e9 / (double)el) : 0), eta,
		name);
}

static void on_progress(void *userdata, const struct ea_realign_progress *p)
{
	struct job *j = userdata;

	j->cur = p->path;
	if (p->phase == EA_PHASE_COPY)
		j->cur_done = p->done;
	draw(j, false);
}

static void clear_bar(struct job *j)
{
	if (j->bar)
		fputs("\r\033[K", stderr);
}

static const char *fs_words(const struct ea_realign_result *r)
{
	if (r->dropped)
		return "accepts the extent size hint and keeps nothing: realignment cannot "
		       "help on this kernel";
	if (r->step && !strcmp(r->step, "filesystem"))
		return "has no extent size hints";
	if (r->step && !strcmp(r->step, "tmpfile"))
		return "has no O_TMPFILE, which realignment needs";
	return "does not support this";
}

static void report_human(struct job *j, const char *path, const struct ea_realign_result *r)
{
	char sz[EA_SIZE_BUFSZ];

	switch (r->outcome) {
	case EA_REALIGN_DONE:
		if (j->quiet)
			return;
		printf("%s: realigned to %s via %s (%s), logically %s, physically %s%s\n", path,
		       ea_size_format(j->o.extsize, sz), ea_realign_swap_name(r->swap),
		       r->ino_after == r->ino_before ? "same inode" : "new inode",
		       ea_align_verdict_name(r->logical), ea_align_verdict_name(r->physical),
		       r->physical_guaranteed		   ? " (guaranteed by the filesystem)"
		       : r->physical == EA_VERDICT_ALIGNED ? " (by luck: not guaranteed here)"
							   : " (not guaranteed here)");
		return;
	case EA_REALIGN_HINT_SET:
		if (!j->quiet)
			printf("%s: no data blocks, hint set in place\n", path);
		return;
	case EA_REALIGN_WOULD: {
		char c[EA_SIZE_BUFSZ], n[EA_SIZE_BUFSZ], a[EA_SIZE_BUFSZ];

		if (!j->quiet)
			printf("%s: would realign (%s): copy %s, needs %s, %s free\n", path,
			       r->hint_before ? "extents only: swap" : "hint and extents",
			       human(c, sizeof(c), r->space.copy),
			       human(n, sizeof(n), r->space.needed),
			       human(a, sizeof(a), r->space.available));
		return;
	}
	case EA_REALIGN_SKIPPED:
		if (j->quiet || r->skip == EA_SKIP_ALREADY_ALIGNED)
			return;
		if (r->skip == EA_SKIP_NO_SPACE) {
			char n[EA_SIZE_BUFSZ], a[EA_SIZE_BUFSZ];

			printf("%s: skipped: %s (needs %s, %s free)\n", path,
			       ea_realign_skip_str(r->skip), human(n, sizeof(n), r->space.needed),
			       human(a, sizeof(a), r->space.available));
			return;
		}
		if (r->skip == EA_SKIP_OPEN || r->skip == EA_SKIP_LEASE_BROKEN) {
			char who[160];

			/* Which process: the admin's next question. */
			printf("%s: skipped: %s%s\n", path, ea_realign_skip_str(r->skip),
			       openers_text(path, who, sizeof(who)));
			return;
		}
		printf("%s: skipped: %s\n", path, ea_realign_skip_str(r->skip));
		return;
	case EA_REALIGN_UNSUPPORTED:
		warnx_path(path, "%s %s", r->fs_type, fs_words(r));
		return;
	case EA_REALIGN_CANCELLED: {
		char k[EA_SIZE_BUFSZ];

		if (j->quiet)
			return;
		if (r->resume_kept)
			printf("%s: stopped (time limit or signal), left as it was; the copy of "
			       "its first %s is kept for the next run\n",
			       path, human(k, sizeof(k), r->resume_kept));
		else
			printf("%s: stopped (time limit or signal), left as it was\n", path);
		return;
	}
	case EA_REALIGN_FAILED:
		if (r->err == -ENOSPC && r->space.needed) {
			char n[EA_SIZE_BUFSZ], a[EA_SIZE_BUFSZ];

			/* The check passed: somebody else took the space meanwhile. */
			warnx_path(path,
				   "%s: %s (the copy needs %s; %s were free when it started); "
				   "the file is unchanged",
				   r->step ? r->step : "realign", strerror(-r->err),
				   human(n, sizeof(n), r->space.needed),
				   human(a, sizeof(a), r->space.available));
			return;
		}
		warnx_path(path, "%s: %s; the file is unchanged", r->step ? r->step : "realign",
			   r->detail ? r->detail : strerror(-r->err));
		return;
	}
}

/*
 * One row of --json: every row has every key, in this order, and a key that
 * does not apply to the row's outcome is null (extalign(8), JSON OUTPUT).
 */
static void json_u64_or_null(const char *key, bool known, uint64_t v)
{
	if (known)
		printf(", \"%s\": %llu", key, (unsigned long long)v);
	else
		printf(", \"%s\": null", key);
}

static void json_member_str(const char *key, const char *v)
{
	printf(", \"%s\": ", key);
	json_str_or_null(v);
}

static void json_row_start(struct job *j, const char *path, const char *outcome, const char *reason)
{
	fputs(j->first_json ? "\n    " : ",\n    ", stdout);
	j->first_json = false;
	fputs("{\"path\": ", stdout);
	json_str(path);
	printf(", \"outcome\": \"%s\"", outcome);
	json_member_str("reason", reason);
}

static void report_json(struct job *j, const char *path, const struct ea_realign_result *r)
{
	bool failed = r->outcome == EA_REALIGN_FAILED || r->outcome == EA_REALIGN_UNSUPPORTED;
	bool space = r->space.needed || r->space.available;

	json_row_start(j, path, ea_realign_outcome_name(r->outcome),
		       r->outcome == EA_REALIGN_SKIPPED ? ea_realign_skip_name(r->skip) : NULL);
	printf(", \"swap\": \"%s\"", ea_realign_swap_name(r->swap));
	json_member_str("fstype", r->fs_type && r->fs_type[0] ? r->fs_type : NULL);
	printf(", \"size\": %llu, \"copied\": %llu", (unsigned long long)r->size,
	       (unsigned long long)r->bytes_copied);
	json_u64_or_null("to_copy", space, r->space.copy);
	json_u64_or_null("prealloc", space, r->space.prealloc);
	json_u64_or_null("space_needed", space, r->space.needed);
	json_u64_or_null("space_free", space, r->space.available);
	printf(", \"resumed_from\": %llu, \"resume_kept\": %llu",
	       (unsigned long long)r->resumed_from, (unsigned long long)r->resume_kept);
	json_u64_or_null("inode_before", r->ino_before, r->ino_before);
	json_u64_or_null("inode_after", r->ino_after, r->ino_after);
	printf(", \"logical\": \"%s\", \"physical\": \"%s\", \"physical_guaranteed\": %s",
	       ea_align_verdict_name(r->logical), ea_align_verdict_name(r->physical),
	       r->physical_guaranteed ? "true" : "false");
	json_member_str("step", failed ? (r->step ? r->step : "") : NULL);
	json_member_str("error", failed ? strerror(-r->err) : NULL);
	json_member_str("detail", failed ? r->detail : NULL);
	printf(", \"seconds\": %.3f}", (double)r->elapsed_ns / 1e9);
}

/* A file the configuration leaves out: never looked at, so little is known. */
static void report_json_why(struct job *j, const struct file *f)
{
	static const char *const unknown[] = {
		"copied",      "to_copy",      "prealloc",    "space_needed",
		"space_free",  "resumed_from", "resume_kept", "inode_before",
		"inode_after", "logical",      "physical",    "physical_guaranteed",
		"step",	       "error",	       "detail",      "seconds",
	};

	json_row_start(j, f->path, "skipped", f->why == WHY_TOO_LARGE ? "too-large" : "no-rule");
	printf(", \"swap\": null, \"fstype\": null, \"size\": %llu", (unsigned long long)f->size);
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++)
		printf(", \"%s\": null", unknown[i]);
	putchar('}');
}

static int status_of(const struct ea_realign_result *r)
{
	switch (r->outcome) {
	case EA_REALIGN_FAILED:
		return EXIT_FAILED;
	case EA_REALIGN_UNSUPPORTED:
		return EXIT_UNSUPPORTED;
	case EA_REALIGN_CANCELLED:
		return EXIT_NEGATIVE;
	case EA_REALIGN_SKIPPED:
		switch (r->skip) {
		case EA_SKIP_ALREADY_ALIGNED:
		case EA_SKIP_LOGICAL_ONLY: /* all it can do without luck; the note says so */
		case EA_SKIP_NOT_REGULAR:
		case EA_SKIP_SYMLINK:
		case EA_SKIP_OTHER_FS:
			return EXIT_OK;
		default:
			return EXIT_NEGATIVE;
		}
	default:
		return EXIT_OK;
	}
}

static const char *skip_name(int i)
{
	return ea_realign_skip_name((enum ea_realign_skip)i);
}

static const char *swap_name(int i)
{
	return ea_realign_swap_name((enum ea_realign_swap)i);
}

/* "name": count pairs for the non-zero counters, index 0 ("none") left out. */
static void json_counts(const unsigned *v, int n, const char *(*name)(int))
{
	bool first = true;

	for (int i = 1; i < n; i++) {
		if (!v[i])
			continue;
		fputs(first ? "" : ", ", stdout);
		json_key(name(i));
		printf(": %u", v[i]);
		first = false;
	}
}

static void summary(struct job *j, uint64_t el)
{
	static const enum ea_realign_outcome order[] = {
		EA_REALIGN_DONE,	EA_REALIGN_HINT_SET,  EA_REALIGN_WOULD,	 EA_REALIGN_SKIPPED,
		EA_REALIGN_UNSUPPORTED, EA_REALIGN_CANCELLED, EA_REALIGN_FAILED,
	};
	char a[16], b[16];

	if (j->json) {
		printf("\n  ],\n  \"summary\": {\"files\": %zu", j->n);
		for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
			fputs(", ", stdout);
			json_key(ea_realign_outcome_name(order[i]));
			printf(": %u", j->outcomes[order[i]]);
		}
		printf(", \"no_rule\": %u, \"too_large\": %u", j->why[WHY_NO_RULE],
		       j->why[WHY_TOO_LARGE]);
		printf(", \"not_started\": %u, \"leftovers_removed\": %u, \"copied\": %llu, "
		       "\"discarded\": %llu, \"kept_to_resume\": %llu",
		       j->not_started, j->leftovers, (unsigned long long)j->copied,
		       (unsigned long long)j->discarded, (unsigned long long)j->kept);
		/* What a dry run measures; null after a real one. */
		json_u64_or_null("to_copy", j->o.dry_run, j->to_copy);
		json_u64_or_null("space_needed_max", j->o.dry_run, j->need_max);
		printf(", \"seconds\": %.3f, \"skip_reasons\": {", (double)el / 1e9);
		json_counts(j->skips, EA_SKIP_COUNT, skip_name);
		printf("}, \"swap_paths\": {");
		json_counts(j->swaps, EA_SWAP_IN_PLACE + 1, swap_name);
		printf("}}\n}\n");
		return;
	}
	if (j->o.dry_run)
		/* One file at a time: the largest copy is what must fit at once. */
		printf("would realign %u of %zu %s (%s to copy, at most %s free space needed "
		       "at once)",
		       j->outcomes[EA_REALIGN_WOULD], j->n, PLURAL(j->n, "file", "files"),
		       human(a, sizeof(a), j->to_copy), human(b, sizeof(b), j->need_max));
	else
		printf("realigned %u of %zu %s (%s copied in %.1f s, %s/s)",
		       j->outcomes[EA_REALIGN_DONE], j->n, PLURAL(j->n, "file", "files"),
		       human(a, sizeof(a), j->copied), (double)el / 1e9,
		       human(b, sizeof(b),
			     el ? (uint64_t)((double)j->copied * 1e9 / (double)el) : 0));
	if (j->outcomes[EA_REALIGN_HINT_SET])
		printf("; %u hinted in place", j->outcomes[EA_REALIGN_HINT_SET]);
	if (j->outcomes[EA_REALIGN_SKIPPED]) {
		bool first = true;

		printf("; skipped %u (", j->outcomes[EA_REALIGN_SKIPPED]);
		for (int s = 1; s < EA_SKIP_COUNT; s++)
			if (j->skips[s]) {
				printf("%s%s %u", first ? "" : ", ", ea_realign_skip_str(s),
				       j->skips[s]);
				first = false;
			}
		printf(")");
	}
	if (j->why[WHY_NO_RULE])
		printf("; %u without a realign rule", j->why[WHY_NO_RULE]);
	if (j->why[WHY_TOO_LARGE])
		printf("; %u over realign-max-file-size", j->why[WHY_TOO_LARGE]);
	if (j->outcomes[EA_REALIGN_UNSUPPORTED])
		printf("; unsupported %u", j->outcomes[EA_REALIGN_UNSUPPORTED]);
	if (j->outcomes[EA_REALIGN_CANCELLED] + j->not_started)
		printf("; stopped %u, not started %u", j->outcomes[EA_REALIGN_CANCELLED],
		       j->not_started);
	if (j->outcomes[EA_REALIGN_FAILED])
		printf("; failed %u", j->outcomes[EA_REALIGN_FAILED]);
	if (j->discarded)
		printf("; %s copied into copies then discarded", human(a, sizeof(a), j->discarded));
	if (j->kept)
		printf("; %s of stopped copies kept for the next run",
		       human(a, sizeof(a), j->kept));
	if (j->leftovers)
		printf("; %u leftovers of killed runs removed", j->leftovers);
	putchar('\n');
	if (j->skips[EA_SKIP_LOGICAL_ONLY])
		printf("\nlogical-only: %u %s aligned in the file but not on the device, and the\n"
		       "filesystem does not promise the device side, so a copy would be luck.\n"
		       "XFS promises it with stripe alignment (mkfs.xfs -d su=UNIT,sw=1, mount -o\n"
		       "swalloc), ext4 with forcealign (--force) on a kernel with the extalign\n"
		       "series.  --rewrite-aligned rewrites them anyway.\n",
		       j->skips[EA_SKIP_LOGICAL_ONLY],
		       j->skips[EA_SKIP_LOGICAL_ONLY] == 1 ? "file is" : "files are");
}

static void run(struct job *j)
{
	bool unsupported_said = false;

	for (size_t i = 0; i < j->n; i++) {
		struct file *f = &j->files[i];
		struct ea_realign_result r;

		if ((j->o.deadline_ns && now_ns() >= j->o.deadline_ns) || stop_requested) {
			j->not_started += (unsigned)(j->n - i);
			j->status = exit_worst(j->status, EXIT_NEGATIVE);
			break;
		}
		if (f->why != WHY_NONE) {
			j->why[f->why]++;
			if (j->json)
				report_json_why(j, f);
			else if (!j->quiet && f->why == WHY_TOO_LARGE)
				printf("%s: skipped: larger than realign-max-file-size\n", f->path);
			continue;
		}
		if (f->early != EA_SKIP_NONE) {
			memset(&r, 0, sizeof(r));
			r.outcome = EA_REALIGN_SKIPPED;
			r.skip = f->early;
			r.fs_type = "unknown";
		} else {
			if (f->extsize)
				j->o.extsize = f->extsize;
			j->o.forcealign = f->forcealign;
			j->o.dev = f->dev;
			j->cur = f->path;
			j->cur_done = 0;
			if (ea_realign_file(f->path, &j->o, &r) < 0)
				errx(EXIT_USAGE, "invalid realignment options");
		}
		j->done_before += f_wanted(f) ? f->size : 0;
		j->cur_done = 0;
		j->outcomes[r.outcome]++;
		if (r.outcome == EA_REALIGN_SKIPPED)
			j->skips[r.skip]++;
		if (r.outcome == EA_REALIGN_DONE || r.outcome == EA_REALIGN_HINT_SET)
			j->swaps[r.swap]++;
		if (r.outcome == EA_REALIGN_DONE)
			j->copied += r.bytes_copied;
		else if (!r.resume_kept)
			j->discarded += r.bytes_copied;
		j->kept += r.resume_kept;
		if (r.outcome == EA_REALIGN_WOULD) {
			j->to_copy += r.space.copy;
			if (r.space.needed > j->need_max)
				j->need_max = r.space.needed;
		}
		j->status = exit_worst(j->status, status_of(&r));
		clear_bar(j);
		if (j->json)
			report_json(j, f->path, &r);
		else if (r.outcome != EA_REALIGN_UNSUPPORTED || !unsupported_said)
			report_human(j, f->path, &r);
		/* One filesystem that keeps no hint will not keep it for the next file. */
		if (r.outcome == EA_REALIGN_UNSUPPORTED)
			unsupported_said = true;
		draw(j, true);
	}
	clear_bar(j);
}

/* --config FILE is the whole configuration, as for "extalign policy". */
static int load_policy(const char *config, struct ea_policy **ret)
{
	const struct config_paths paths = { .config = config };

	/* realign documents a configuration it cannot use as a usage error. */
	return config_load(&paths, ret) == EXIT_OK ? EXIT_OK : EXIT_USAGE;
}

int cmd_realign(int argc, char **argv)
{
	enum { OPT_REWRITE = 256, OPT_BUFFERED, OPT_STATE_DIR };
	static const struct option longopts[] = {
		{ "extsize", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'f' },
		{ "rewrite-aligned", no_argument, NULL, OPT_REWRITE },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "max-time", required_argument, NULL, 't' },
		{ "bwlimit", required_argument, NULL, 'b' },
		{ "buffered", no_argument, NULL, OPT_BUFFERED },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "config", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'J' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct job j = { .first_json = true };
	struct ea_ratelimit rl;
	uint64_t bwlimit = 0, max_time = 0, t0;
	uint32_t extsize = 0;
	const char *config = NULL;
	unsigned removed = 0;
	int c, r;

	ea_realign_opts_init(&j.o, 0);
	while ((c = getopt_long(argc, argv, "e:c:fnt:b:Jqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (parse_extsize_arg("--extsize", optarg, &extsize) != EXIT_OK)
				return EXIT_USAGE;
			break;
		case 'f':
			j.o.forcealign = 1;
			break;
		case OPT_REWRITE:
			j.o.force = true;
			break;
		case 'n':
			j.o.dry_run = true;
			break;
		case 't':
			if (parse_duration(optarg, &max_time) < 0 || !max_time) {
				warnx("--max-time '%s': not a duration; use seconds or 30s, 10m, "
				      "2h",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case 'b':
			if (ea_size_parse(optarg, UINT64_MAX, &bwlimit) < 0 || !bwlimit) {
				warnx("--bwlimit '%s': not a rate; use bytes per second, e.g. 50M",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_BUFFERED:
			j.o.buffered = true;
			break;
		case OPT_STATE_DIR:
			j.state_dir = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'J':
			j.json = true;
			break;
		case 'q':
			j.quiet = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, "realign");
			return EXIT_USAGE;
		}
	}
	if (!extsize == !config) {
		warnx(extsize ? "--extsize and --config exclude each other"
			      : "give --extsize SIZE or --config FILE");
		fprintf(stderr, USAGE_HINT, "realign");
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		warnx("no path given");
		fprintf(stderr, USAGE_HINT, "realign");
		return EXIT_USAGE;
	}
	if (config) {
		r = load_policy(config, &j.policy);
		if (r != EXIT_OK)
			return r;
		j.rules.policy = j.policy;
		/* The daemon's limit applies to a manual run too, unless overridden. */
		if (!bwlimit)
			bwlimit = j.policy->daemon.realign_bwlimit;
		/* A valid placeholder: each file gets its rule's size. */
		extsize = 4096;
	}
	j.o.extsize = extsize;
	j.o.state_dir = j.state_dir;
	j.o.progress = on_progress;
	j.o.cancel = stop_cancel;
	{
		struct sigaction sa = { .sa_handler = on_stop };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	j.o.userdata = &j;
	j.bar = !j.json && !j.quiet && isatty(STDERR_FILENO);
	t0 = j.t0 = now_ns();
	if (max_time)
		j.o.deadline_ns = t0 + max_time;
	if (bwlimit) {
		ea_ratelimit_init(&rl, bwlimit, t0);
		j.o.ratelimit = &rl;
	}

	/* What killed runs left behind goes first: it is named, so it is visible. */
	if (!j.o.dry_run) {
		r = ea_realign_cleanup(j.state_dir, &removed);
		if (r < 0)
			warnx("cannot clean up leftovers of earlier runs: %s", strerror(-r));
		j.leftovers = removed;
	}
	for (int i = optind; i < argc; i++)
		j.status = exit_worst(j.status, collect(&j, argv[i]));

	if (j.json) {
		/* With --config each rule gives its own: no one size for the run. */
		printf("{\n  \"extsize\": ");
		if (config)
			fputs("null", stdout);
		else
			printf("%u", extsize);
		printf(", \"dry_run\": %s,\n  \"files\": [", j.o.dry_run ? "true" : "false");
	}
	/* Many files: their directories made durable together (realign.h). */
	if (!j.o.dry_run && j.n > 1)
		j.o.batch = ea_realign_batch_new();
	run(&j);
	r = ea_realign_batch_free(j.o.batch);
	if (r < 0) {
		warnx("the directories of the files realigned were not made durable: %s; "
		      "after a crash the next run cleans up",
		      strerror(-r));
		j.status = exit_worst(j.status, EXIT_FAILED);
	}
	summary(&j, now_ns() - t0);
	for (size_t i = 0; i < j.n; i++)
		free(j.files[i].path);
	free(j.files);
	rule_finder_done(&j.rules);
	ea_policy_free(j.policy);
	return j.status;
}
