/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policy: which files get which extent size hint, from /etc/extalign.conf,
 * /etc/extalign.d/\*.conf (lexical order), /etc/projid and /etc/projects.
 * The format is documented in extalign.conf(5).
 *
 * The library never prints: every problem found while loading becomes an
 * ea_diag with file and line, and loading goes on so that all of them are
 * reported at once.  A policy is immutable once loaded; a reload loads a new
 * one and swaps the pointer, so readers need no locks.
 *
 * Precedence, highest first, when several rules cover a path:
 *   1. a project rule beats every directory rule: the project id is carried
 *      by the inode itself and was assigned on purpose (it survives renames),
 *      which is more specific than where the file happens to live;
 *   2. among directory rules the deeper directory wins; among project rules
 *      one with "filesystem =" beats one without, a deeper mount point beats
 *      a shallower one;
 *   3. at the same place (same directory, or same project and filesystem) a
 *      rule with "match =" beats one without.
 * Two rules at the same place that both have "match" or both have none tie
 * (even if their globs look disjoint: overlap of globs is not decided), and a
 * tie is a load error naming both file:line locations.  So for any path at
 * most one rule wins and the answer never depends on definition order.
 */
#ifndef EXTALIGN_POLICY_H
#define EXTALIGN_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "extalign/hint.h"

#define EA_POLICY_CONF	     "/etc/extalign.conf"
#define EA_POLICY_DROPIN_DIR "/etc/extalign.d"
#define EA_POLICY_PROJID     "/etc/projid"
#define EA_POLICY_PROJECTS   "/etc/projects"

/*
 * Pass as dropin_dir to read no drop-ins.  The commands (and extalignd) do
 * this when --config FILE is given without --config-dir DIR: a file named on
 * the command line is the whole configuration, so "policy check --config
 * new.conf" judges exactly that file.
 */
#define EA_POLICY_NO_DROPINS ""

/* "No project": 0 is the project of every file nobody assigned one to. */
#define EA_PROJID_NONE 0

/* ---- diagnostics ---------------------------------------------------------- */

struct ea_diag {
	char *file;    /* the file it is about */
	unsigned line; /* 1-based; 0 when it is about the whole file */
	char *msg;     /* one sentence, no file:line prefix, no newline */
};

struct ea_diags {
	struct ea_diag *items; /* in the order found: file by file, line by line */
	size_t n;
	size_t alloc;
};

#define EA_DIAGS_INIT      \
	{                  \
		NULL, 0, 0 \
	}

void ea_diags_free(struct ea_diags *d);

/* ---- rules ------------------------------------------------------------------ */

enum ea_rule_kind {
	EA_RULE_DIRECTORY,
	EA_RULE_PROJECT,
};

struct ea_rule {
	char *name;	  /* NAME of [rule NAME] */
	const char *file; /* where [rule NAME] is (owned by the policy) */
	unsigned line;
	enum ea_rule_kind kind;

	/* EA_RULE_DIRECTORY: normalised absolute path (no "//", ".", "..",
	 * trailing "/"); the tree below it, on path components. */
	char *directory;
	/* The directory as written when it went through symbolic links, which
	 * were resolved at load time into directory; NULL otherwise. */
	char *directory_link;

	/* EA_RULE_PROJECT */
	uint32_t projid;     /* resolved, never EA_PROJID_NONE */
	char *project;	     /* as written: a name from /etc/projid or a number */
	char *filesystem;    /* normalised mount point, or NULL for any */
	char **project_dirs; /* this project's trees from /etc/projects */
	size_t n_project_dirs;

	/* Globs on the last path component (fnmatch(3), no flags, so "*"
	 * matches a leading dot).  The value is a whitespace-separated list:
	 * any of them may match.  n_match == 0: every name. */
	char **match;
	size_t n_match;
	char **exclude;
	size_t n_exclude;

	uint32_t extsize; /* bytes; 0 for "extsize = none": this tree gets no hint */
	bool forcealign;  /* only with an extsize */
	bool inherit;	  /* default yes: directories carry the hint for new files */
	bool realign;	  /* default no: misaligned files with data are candidates */
};

/*
 * The hint a rule asks for on a file (is_dir false) or directory (is_dir
 * true): false when nothing is to be set, i.e. "extsize = none", or a
 * directory under a rule with "inherit = no".  In both cases the path should
 * carry no hint of ours.  Directory hints have inherit set.
 */
bool ea_rule_hint(const struct ea_rule *r, bool is_dir, struct ea_hint *ret);

/* ---- [daemon] --------------------------------------------------------------- */

enum ea_watch_backend {
	EA_WATCH_AUTO, /* fanotify, falling back to inotify */
	EA_WATCH_FANOTIFY,
	EA_WATCH_INOTIFY,
};

/* A daily window in local time, minutes after midnight.  end < start wraps
 * past midnight (22:00-06:00); start == end is rejected as ambiguous. */
struct ea_time_window {
	uint16_t start;
	uint16_t end;
};

#define EA_TIME_WINDOWS_MAX 8

/* Every field has its default when the key is absent (see extalign.conf(5)).
 * Durations are in microseconds, sizes and rates in bytes; 0 = no limit
 * where said.  A key set in several files: the last file read wins, so a
 * drop-in overrides /etc/extalign.conf; twice in one file is an error. */
struct ea_daemon_conf {
	enum ea_watch_backend watch; /* watch = auto|fanotify|inotify */

	/* Idle gate: realignment starts only after all of these have held for
	 * idle_time and stops within idle_poll of any of them failing. */
	double idle_io_pressure; /* percent, "some avg10" of /proc/pressure/io; default 5 */
	double idle_disk_util;	 /* percent busy of the backing disk (/proc/diskstats); 10 */
	double idle_cpu_load;	 /* 1-minute load average per online CPU; 0.5 */
	uint64_t idle_time_usec; /* default 60 s */
	uint64_t idle_poll_usec; /* sampling period, 50 ms .. 1 s; default 1 s */

	/* Realignment limits. */
	bool realign;			     /* master switch, "realign = yes|no"; default yes */
	uint64_t realign_bwlimit;	     /* bytes per second read+written; 0 none (default) */
	uint64_t realign_max_file_size;	     /* larger files are skipped; 0 none (default) */
	uint64_t realign_max_time_usec;	     /* one job; 0 none (default) */
	uint64_t realign_scan_interval_usec; /* FIEMAP scan of realign=yes trees; 1 day */
	uint64_t realign_queue_max;	     /* candidates kept; default 100000 */
	struct ea_time_window realign_windows[EA_TIME_WINDOWS_MAX];
	size_t n_realign_windows; /* 0: any time of day (default) */

	/* Prometheus text written beside the state file; NULL: none (default). */
	char *metrics_file;
};

/* Is minute_of_day (0..1439, local time) inside a realignment window?  True
 * when there are no windows. */
bool ea_daemon_in_window(const struct ea_daemon_conf *d, unsigned minute_of_day);

/* ---- the policy -------------------------------------------------------------- */

/* A tree the daemon has to watch.  Entries are distinct and none lies inside
 * another (the outer one covers it). */
struct ea_watch {
	char *path;	 /* normalised absolute path */
	bool filesystem; /* from a project rule's "filesystem =": mark it whole */
};

struct ea_policy {
	struct ea_rule *rules; /* in definition order: main file, then drop-ins */
	size_t n_rules;
	struct ea_daemon_conf daemon;
	char **files; /* every configuration file read, in order */
	size_t n_files;
	struct ea_watch *watch;
	size_t n_watch;
};

/*
 * Load the policy.  Any path may be NULL for its default (EA_POLICY_CONF,
 * EA_POLICY_DROPIN_DIR, EA_POLICY_PROJID, EA_POLICY_PROJECTS); dropin_dir
 * may be EA_POLICY_NO_DROPINS.  A missing main file is an error; a missing
 * drop-in directory, /etc/projid or /etc/projects is not (a rule that needs
 * them then fails with its own error).  Drop-ins are the regular files named
 * *.conf (not starting with '.') in strcmp() order.
 *
 * Returns 0 and *ret on success (diags then empty).  On any problem *ret is
 * NULL, every problem found is appended to *diags, and the result is -EINVAL
 * for configuration errors, -ENOMEM, or the -errno of a file that could not
 * be read (also in diags).
 */
int ea_policy_load(const char *main_conf, const char *dropin_dir, const char *projid_path,
		   const char *projects_path, struct ea_policy **ret, struct ea_diags *diags);

void ea_policy_free(struct ea_policy *p);

/* ---- lookup and explain -------------------------------------------------------- */

/* Why a rule is or is not the one for a path. */
enum ea_reason {
	EA_REASON_WINS,
	/* rejected: the rule does not cover the path */
	EA_REASON_OUTSIDE_DIRECTORY,
	EA_REASON_NO_PROJECT,	      /* the path has project id 0 */
	EA_REASON_OTHER_PROJECT,      /* the path has another project id */
	EA_REASON_OUTSIDE_FILESYSTEM, /* not under the rule's filesystem */
	EA_REASON_NO_MATCH,	      /* name matches none of the match globs */
	EA_REASON_EXCLUDED,	      /* name matches an exclude glob */
	EA_REASON_FILES_ONLY,	      /* a directory, and the rule has match:
				       * inheritance would hint every new file,
				       * matching or not */
	/* outranked: covers the path, but the winner comes first */
	EA_REASON_PROJECT_FIRST,    /* winner is a project rule, this a directory rule */
	EA_REASON_DEEPER_WINS,	    /* winner's directory (or filesystem) is deeper */
	EA_REASON_FILESYSTEM_FIRST, /* winner is limited to a filesystem, this is not */
	EA_REASON_MATCH_FIRST,	    /* same place, the winner has match */
};

/* A sentence fragment, e.g. "a deeper directory rule wins". */
const char *ea_reason_str(enum ea_reason r);
static inline bool ea_reason_outranked(enum ea_reason r)
{
	return r >= EA_REASON_PROJECT_FIRST;
}

struct ea_explain_step {
	const struct ea_rule *rule;
	enum ea_reason reason;
	const char *glob; /* NO_MATCH: NULL; EXCLUDED: the exclude glob that hit */
};

struct ea_explain {
	const struct ea_rule *winner; /* NULL: no rule covers the path */
	/* Every rule of the policy: the winner first, then those outranked
	 * (highest precedence first), then the rejected in definition order. */
	struct ea_explain_step *steps;
	size_t n_steps;
};

void ea_explain_free(struct ea_explain *e);

/*
 * The rule for path: absolute, normalised as rule directories are (the
 * function normalises it itself and returns -EINVAL for a relative path or
 * one with ".."); symlinks are the caller's business, the policy compares
 * path components only (/data/db does not cover /data/dbx).  is_dir: the
 * path is a directory, and the question is what it should carry for
 * inheritance.  Rules with match never apply to directories (inheriting
 * them would hint every new file); match/exclude globs are not tested on a
 * directory's own name.  A rule with only exclude does apply, since most new
 * files want its hint before their first write: an excluded file then
 * inherits the hint, and the daemon clears it while the file is still empty.
 * projid: the path's fsx_projid, or EA_PROJID_NONE.
 *
 * Returns 0 with *ret the winning rule or NULL; -EINVAL; -ENOMEM.  When
 * explain is not NULL it is filled (free with ea_explain_free(); its
 * pointers are valid as long as the policy).  ret may be NULL.
 */
int ea_policy_lookup(const struct ea_policy *p, const char *path, bool is_dir, uint32_t projid,
		     const struct ea_rule **ret, struct ea_explain *explain);

/* Where a directory lies relative to the rules' trees (directory rules and
 * project directories from /etc/projects). */
enum ea_dir_cover {
	EA_DIR_OUTSIDE, /* neither in a tree nor on the way to one: ignore */
	EA_DIR_ABOVE,	/* an ancestor of a tree: watch it for the tree to appear */
	EA_DIR_INSIDE,	/* in a tree (or its root): watch and hint */
};

/* -EINVAL for a relative path or one with "..", else an enum ea_dir_cover. */
int ea_policy_dir_cover(const struct ea_policy *p, const char *dir);

/* ---- helpers shared by the commands and the daemon ------------------------------ */

/*
 * Normalise an absolute path into a new string: repeated slashes and "."
 * components dropped, no trailing slash ("/" stays "/").  -EINVAL for a
 * relative path or a ".." component (resolving it would need the filesystem,
 * and lexically it can be wrong across symlinks), -ENOMEM.
 */
int ea_path_normalize(const char *path, char **ret);

/* Is path (normalised) equal to or below dir (normalised)?  On components. */
bool ea_path_under(const char *path, const char *dir);

/*
 * Parse a duration: one or more NUMBER UNIT terms ("90s", "1h30min", "500ms"),
 * units us, ms, s, min, h, d; a bare number is seconds.  -EINVAL, -ERANGE.
 */
int ea_duration_parse(const char *s, uint64_t *usec);

/*
 * Resolve a project given as a number or as a name from projid_path (NULL:
 * EA_POLICY_PROJID), in the "name:id" format xfs_quota uses.  -ENOENT when
 * the name is not there, -EINVAL for a malformed value or "0".
 */
int ea_project_resolve(const char *projid_path, const char *project, uint32_t *ret);

#endif
