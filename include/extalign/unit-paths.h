/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The trees extalignd.service may write, as the rules decide.  The unit
 * keeps the whole file system read-only (ProtectSystem=strict) and hides
 * the homes; setting a hint is an ioctl that needs a writable mount, so
 * every tree the rules watch must be named in ReadWritePaths=.
 * extalign-generator writes that drop-in at boot and at "systemctl
 * daemon-reload"; "extalign policy check" reads it back to say which rules
 * the running unit cannot serve yet.
 */
#ifndef EXTALIGN_UNIT_PATHS_H
#define EXTALIGN_UNIT_PATHS_H

#include <stdbool.h>
#include <stddef.h>

#include "extalign/policy.h"

#define EA_UNIT_NAME	    "extalignd.service"
#define EA_UNIT_DROPIN_NAME "50-extalign-rules.conf"
/* Where the generator's drop-in is when systemd ran it (its normal_dir). */
#define EA_UNIT_DROPIN_RUN "/run/systemd/generator/" EA_UNIT_NAME ".d/" EA_UNIT_DROPIN_NAME

/* The trees etc/extalignd.service itself makes writable (its ReadWritePaths=
 * beside the runtime and state directories; tests/integration/units.sh
 * checks that the two agree). */
#define EA_UNIT_OWN_WRITABLE "/var/lib", "/srv"

/* A tree the unit cannot be made to reach, and why (a sentence fragment). */
struct ea_unit_skip {
	char *path;
	const char *why;
};

struct ea_unit_paths {
	char **writable; /* ReadWritePaths=, in the policy's watch order */
	size_t n_writable;
	struct ea_unit_skip *skipped;
	size_t n_skipped;
	/* A tree under /home, /root or /run/user: those must be visible
	 * (ProtectHome=read-only instead of yes) for ReadWritePaths= to open
	 * the tree inside them. */
	bool home;
};

/* The trees of p's watch list, sorted into what the unit can name and not. */
int ea_unit_paths_of_policy(const struct ea_policy *p, struct ea_unit_paths *ret);
void ea_unit_paths_free(struct ea_unit_paths *u);

/*
 * The drop-in's text: a comment naming conf (the configuration it came
 * from), [Service], one ReadWritePaths= line per writable tree ("-": a tree
 * not there at start is no error) and ProtectHome=read-only when needed.
 */
int ea_unit_dropin_format(const struct ea_unit_paths *u, const char *conf, char **ret);

/*
 * The trees of a drop-in written by ea_unit_dropin_format().  -ENOENT when
 * there is no such file: no generator ran (no systemd, or not installed).
 */
int ea_unit_dropin_read(const char *file, char ***ret, size_t *n);

/* Is tree one of paths, or below one of them (on path components)? */
bool ea_unit_paths_cover(char *const *paths, size_t n, const char *tree);

void ea_unit_dropin_paths_free(char **paths, size_t n);

#endif
