/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the extalign subcommands: exit codes, targets, output. */
#ifndef EXTALIGN_CMD_H
#define EXTALIGN_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "extalign/fsinfo.h"
#include "extalign/walk.h"

/* Exit codes, documented in extalign(8).  Several paths: the highest wins. */
enum {
	EXIT_OK = 0,
	EXIT_NEGATIVE = 1,    /* check: misaligned; policy explain: no rule */
	EXIT_USAGE = 2,	      /* bad option or value; nothing was changed */
	EXIT_FAILED = 3,      /* a path could not be handled */
	EXIT_UNSUPPORTED = 4, /* kernel or filesystem lacks the feature */
};

static inline int exit_worst(int a, int b)
{
	return a > b ? a : b;
}

/* A path opened without following symlinks, with its facts. */
struct target {
	const char *path;
	int fd;
	struct stat st;
	struct ea_fsinfo fs;
};

/*
 * Open path for hint work: no symlinks (a symlink is an error, never
 * followed), regular files and directories only.  Prints the reason and
 * returns an exit code on failure, EXIT_OK on success.
 */
int target_open(const char *path, struct target *t);
void target_close(struct target *t);

/* Parse an extent size option value and report a bad one; EXIT_OK or EXIT_USAGE. */
int parse_extsize_arg(const char *opt, const char *value, uint32_t *ret);

/*
 * Report a failed hint operation on path in words a user can act on and
 * return the exit code it deserves.  err is -errno; dropped as from
 * ea_hint_set().
 */
int report_hint_error(const struct target *t, int err, unsigned dropped, bool want_forcealign);

/* The file has data (on-disk size or blocks): a hint can no longer be set. */
static inline bool target_has_data(const struct target *t)
{
	return S_ISREG(t->st.st_mode) && (t->st.st_size > 0 || t->st.st_blocks > 0);
}

/* An entry of ea_walk() as the hint subcommands treat it. */
enum entry_class {
	ENTRY_FAILED,	      /* could not be read; the reason was printed */
	ENTRY_SKIPPED,	      /* symlink, device, other filesystem: never touched */
	ENTRY_DIR,	      /* a directory, open */
	ENTRY_EMPTY_FILE,     /* a regular file without data: it can take a hint */
	ENTRY_FILE_WITH_DATA, /* too late for a hint: a realignment candidate */
};

/*
 * Classify e, found below top, and fill ret with it as a target on top's
 * filesystem (borrowing e's fd).  *why says in words why an entry is skipped.
 */
enum entry_class walk_entry_classify(const struct ea_walk_entry *e, const struct target *top,
				     struct target *ret, const char **why);

/* Called for each path of a command; returns an exit code. */
typedef int (*target_fn)(const struct target *t, void *userdata);

/* What walk_targets() walks, and whom it tells. */
struct walk_spec {
	bool recursive;
	bool files_only; /* regular files only, top not either */
	bool below_only; /* not top itself: the caller did it */
	target_fn fn;
	/* May be NULL: each entry left alone (symlink, device, other filesystem). */
	void (*skipped)(const char *path, const char *why, void *userdata);
	void *userdata;
};

/*
 * Call fn for top and, when recursive and top is a directory, for every
 * directory and regular file below it, as walk_entry_classify() sorts
 * them.  Stops at the first EXIT_UNSUPPORTED.  Returns the worst exit code.
 */
int walk_targets(const struct target *top, const struct walk_spec *spec);

/* The line after a usage error, with the command's name. */
#define USAGE_HINT "Try 'extalign %s --help' for more information.\n"

/*
 * json-str.c: JSON on stdout in UTF-8, a byte of a name that is not UTF-8
 * as \udcNN.  json_str() prints @s as a JSON string ("" for NULL);
 * json_put_document() prints a document libsmartcols made, whose strings
 * carry the bytes of names as they are.
 */
void json_str(const char *s);
/* json_str(), or null for NULL or "": what is not known or does not apply. */
void json_str_or_null(const char *s);
/* A word of ours ("hint-set") as a JSON key: '_' between words ("hint_set"). */
void json_key(const char *word);
void json_put_document(const char *doc);

int cmd_set(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_clear(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_realign(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_status(int argc, char **argv);

#endif
