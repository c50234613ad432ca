/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading extalign.conf for a subcommand, with every problem reported. */
#ifndef EXTALIGN_CMD_CONFIG_H
#define EXTALIGN_CMD_CONFIG_H

#include "extalign/policy.h"

struct config_paths {
	const char *config;	/* --config: NULL for /etc/extalign.conf */
	const char *config_dir; /* --config-dir: NULL for the default drop-ins */
	const char *projid;	/* NULL for /etc/projid */
	const char *projects;	/* NULL for /etc/projects */
};

/*
 * Load the policy and print each diagnostic as "file:line: message".  A file
 * named with --config is the whole configuration unless --config-dir is
 * given too.  Returns EXIT_OK, or EXIT_FAILED for an unusable configuration.
 */
int config_load(const struct config_paths *paths, struct ea_policy **ret);

/* The same, returning ea_policy_load()'s 0 or -errno (-EINVAL: found invalid). */
int config_read(const struct config_paths *paths, struct ea_policy **ret);

static inline void policy_freep(struct ea_policy **p)
{
	ea_policy_free(*p);
}

/*
 * The rule that covers a regular file, found as the daemon finds it: by
 * its absolute path (the directory resolved, the name not, so a symlink's
 * own name counts) and its project id.  The resolved directory of the last
 * call is kept, so files of one directory cost one lookup each.
 */
struct rule_finder {
	const struct ea_policy *policy;
	char *dir;  /* the directory as given, of the last call */
	char *real; /* and resolved; NULL when it did not resolve */
	int err;    /* why it did not */
};
/* 0 with *rule (NULL: no rule covers it), or -errno (the directory did not resolve). */
int rule_finder_find(struct rule_finder *f, const char *path, uint32_t projid,
		     const struct ea_rule **rule);
void rule_finder_done(struct rule_finder *f);

#endif
