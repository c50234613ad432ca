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

#endif
