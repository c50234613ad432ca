// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stage 4 of a new name (pipeline.h): what became of it, counted per rule
 * and filesystem and logged, in one place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "message-ids.h"
#include "pipeline.h"

/*
 * LOG_WARNING the first time a filesystem (and rule) cannot take hints,
 * LOG_DEBUG after that: one file tells the admin, a thousand bury the log.
 * Kept across reloads: a reload changes no kernel.
 */
static int warn_once(struct apply *a, dev_t dev, const char *rule)
{
	struct warned *v;

	for (size_t i = 0; i < a->n_warned; i++)
		if (a->warned[i].dev == dev && !strcmp(a->warned[i].rule, rule ? rule : ""))
			return LOG_DEBUG;
	v = realloc(a->warned, (a->n_warned + 1) * sizeof(*v));
	if (!v)
		return LOG_WARNING;
	a->warned = v;
	v[a->n_warned].dev = dev;
	v[a->n_warned].rule = strdup(rule ? rule : "");
	if (v[a->n_warned].rule)
		a->n_warned++;
	return LOG_WARNING;
}

/* The failures of one kind, a counter and a message each. */
static const struct {
	enum ea_state_stat stat;
	const char *what;
} failures[] = {
	[FATE_OPEN_FAILED] = { EA_STAT_FAIL_IO, "cannot open" },
	[FATE_STAT_FAILED] = { EA_STAT_FAIL_IO, "cannot stat" },
	[FATE_FSXATTR_FAILED] = { EA_STAT_FAIL_IO, "cannot read the file's attributes" },
	[FATE_LOOKUP_FAILED] = { EA_STAT_FAIL_IO, "rule lookup failed" },
	[FATE_HINT_FAILED] = { EA_STAT_FAIL_HINT, "setting the hint failed" },
};

static void report_late(struct apply *a, const struct name_result *r, const char *rule)
{
	if (r->late == 0)
		return; /* listed before */
	report_stat(a->report, rule, r->dev, EA_STAT_FILES_LATE, 1);
	log_id(&a->report->log, MSGID_LATE_FILE, LOG_INFO, rule, r->path, 0,
	       "has data already, hint not set: listed for realignment");
	if (r->late == -ENOSPC)
		report_error(a->report, EA_STAT_FAIL_LATE_LIST, rule, r->dev, r->path, r->late,
			     "realignment queue full, late file not listed");
	else if (r->late < 0)
		report_error(a->report, EA_STAT_FAIL_LATE_LIST, rule, r->dev, r->path, r->late,
			     "late file not listed");
}

void report_name(struct apply *a, const struct name_result *r)
{
	struct report *rep = a->report;
	const char *rule = r->rule ? r->rule->name : NULL;

	/* Every fate from the hint stage on changes what status shows. */
	if (r->fate >= FATE_INHERITED)
		rep->dirty = true;
	switch (r->fate) {
	case FATE_NONE:
	case FATE_NO_RULE:
		break;
	case FATE_OPEN_FAILED:
	case FATE_STAT_FAILED:
	case FATE_FSXATTR_FAILED:
	case FATE_LOOKUP_FAILED:
	case FATE_HINT_FAILED:
		report_error(rep, failures[r->fate].stat, rule, r->dev, r->path, r->err, "%s",
			     failures[r->fate].what);
		break;
	case FATE_NOT_FOLLOWED:
		report_stat(rep, rule, r->dev, EA_STAT_SKIPPED, 1);
		log_full(&rep->log, LOG_INFO, NULL, r->path, 0, "%s, not followed",
			 S_ISLNK(r->mode) ? "a symlink" : "not a file or directory");
		break;
	case FATE_OTHER_FS:
		report_stat(rep, NULL, r->dev, EA_STAT_SKIPPED, 1);
		break;
	case FATE_LEASED:
		report_stat(rep, NULL, r->dev, EA_STAT_SKIPPED, 1);
		log_full(&rep->log, LOG_INFO, NULL, r->path, r->err, "leased, left alone");
		break;
	case FATE_NO_FSXATTR:
		if (r->count)
			report_stat(rep, NULL, r->dev, EA_STAT_FAIL_UNSUPPORTED, 1);
		log_id(&rep->log, MSGID_HINT_UNSUPPORTED, warn_once(a, r->dev, NULL), NULL, r->path,
		       r->err, "filesystem has no fsxattr, no hint possible");
		break;
	case FATE_OUTSIDE:
		report_stat(rep, rule, r->dev, EA_STAT_SKIPPED, 1);
		log_id(&rep->log, MSGID_RULE_DIR_UNSAFE, LOG_WARNING, rule, r->path, r->err,
		       "not inside the rule's directory on disk, left alone");
		break;
	case FATE_INHERITED:
		if (r->count)
			report_stat(rep, rule, r->dev,
				    r->is_dir ? EA_STAT_DIRS_INHERITED : EA_STAT_FILES_INHERITED,
				    1);
		log_full(&rep->log, LOG_DEBUG, rule, r->path, 0, "hint already in place");
		break;
	case FATE_HARDLINKS:
		report_stat(rep, rule, r->dev, EA_STAT_SKIPPED, 1);
		log_full(&rep->log, LOG_WARNING, rule, r->path, 0, "has %ju hard links, left alone",
			 (uintmax_t)r->nlink);
		break;
	case FATE_LATE:
		report_late(a, r, rule);
		break;
	case FATE_HINTED:
		report_stat(rep, rule, r->dev,
			    r->is_dir ? EA_STAT_DIRS_HINTED : EA_STAT_FILES_HINTED, 1);
		log_full(&rep->log, LOG_DEBUG, rule, r->path, 0, "hint set");
		break;
	case FATE_KEPT_NOTHING:
		if (r->count)
			report_stat(rep, rule, r->dev, EA_STAT_FAIL_UNSUPPORTED, 1);
		log_id(&rep->log, MSGID_HINT_UNSUPPORTED, warn_once(a, r->dev, rule), rule, r->path,
		       0, "unsupported: the %s kernel accepted the hint but kept nothing%s",
		       r->fstype ? r->fstype : "filesystem's",
		       r->dropped & EA_DROPPED_FORCEALIGN ? " (forcealign)" : "");
		break;
	}
}
