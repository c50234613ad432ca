/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by lib/policy-*.c and lib/projects.c; not installed, not public. */
#ifndef EXTALIGN_POLICY_INTERNAL_H
#define EXTALIGN_POLICY_INTERNAL_H

#include <stdio.h>

#include "extalign/macro.h"
#include "extalign/policy.h"

/* Append a diagnostic; 0 or -ENOMEM. */
int ea_diag_add(struct ea_diags *d, const char *file, unsigned line, const char *fmt, ...)
	_printf_(4, 5);

/* Does d hold a diagnostic for file:line already? */
bool ea_diag_has(const struct ea_diags *d, const char *file, unsigned line);

/* Number of components of a normalised path: "/" 0, "/a/b" 2. */
unsigned ea_path_depth(const char *path);

/*
 * Resolve the symbolic links in a rule's directory path (normalised), as
 * lib/policy-symlink.c explains.  0 with *ret NULL: no link on the way; 0
 * with *ret the resolved path; -EPERM with *why saying why a link may not
 * be followed; -ENOMEM, -errno.  Free both strings.
 */
int ea_policy_resolve_directory(const char *path, char **ret, char **why);

/* Contents of /etc/projid and /etc/projects. */
struct ea_projid_entry {
	char *name;
	uint32_t id;
};

struct ea_project_dir {
	uint32_t id;
	char *path; /* normalised */
};

struct ea_projects {
	struct ea_projid_entry *ids;
	size_t n_ids;
	struct ea_project_dir *dirs;
	size_t n_dirs;
};

/*
 * Read both files (NULL: the defaults).  A missing file reads as empty.
 * Malformed lines go to diags (so they can be fixed) and make the result
 * -EINVAL; everything well-formed is kept either way.  -ENOMEM, -errno.
 */
int ea_projects_load(const char *projid_path, const char *projects_path, struct ea_projects *ret,
		     struct ea_diags *diags);
void ea_projects_free(struct ea_projects *p);

/* A project given as a number or a name: -ENOENT unknown name, -EINVAL bad. */
int ea_projects_resolve(const struct ea_projects *p, const char *project, uint32_t *ret);

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

#endif
