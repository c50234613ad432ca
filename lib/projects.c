// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * /etc/projid ("name:id") and /etc/projects ("id:/path"), the files
 * xfs_quota(8) uses to name projects and to find their directory trees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/policy.h"
#include "policy-internal.h"

/* Strict decimal: no sign, no spaces, no hex, no suffix. */
static int parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > UINT32_MAX)
			return -ERANGE;
	}
	*ret = (uint32_t)v;
	return 0;
}

static char *strip(char *s)
{
	size_t n;

	s += strspn(s, " \t");
	n = strlen(s);
	while (n && strchr(" \t\r\n", s[n - 1]))
		s[--n] = '\0';
	return s;
}

typedef int (*line_fn)(struct ea_projects *p, const char *file, unsigned line, char *key,
		       char *value, struct ea_diags *diags);

/* Both files are "a:b" lines with '#' comments; call fn for each. */
static int read_colon_file(const char *file, struct ea_projects *p, line_fn fn,
			   struct ea_diags *diags)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *buf = NULL;
	size_t cap = 0;
	unsigned line = 0;
	int bad = 0, r;

	f = fopen(file, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		r = negative_errno();
		if (ea_diag_add(diags, file, 0, "cannot read: %s", strerror(-r)) < 0)
			return -ENOMEM;
		return r;
	}
	while (getline(&buf, &cap, f) >= 0) {
		char *s = strip(buf), *colon;

		line++;
		if (!*s || *s == '#')
			continue;
		colon = strchr(s, ':');
		if (!colon) {
			if (ea_diag_add(diags, file, line, "expected two fields separated by ':'") <
			    0)
				return -ENOMEM;
			bad = -EINVAL;
			continue;
		}
		*colon = '\0';
		r = fn(p, file, line, strip(s), strip(colon + 1), diags);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			bad = r;
	}
	if (ferror(f)) {
		r = -EIO;
		if (ea_diag_add(diags, file, 0, "read error") < 0)
			return -ENOMEM;
		return r;
	}
	return bad;
}

static int projid_line(struct ea_projects *p, const char *file, unsigned line, char *name, char *id,
		       struct ea_diags *diags)
{
	struct ea_projid_entry *ids;
	uint32_t v;

	if (!*name || parse_u32(id, &v) < 0)
		return ea_diag_add(diags, file, line, "expected 'name:id' with a decimal id")
			       ?: -EINVAL;
	for (size_t i = 0; i < p->n_ids; i++)
		if (!strcmp(p->ids[i].name, name))
			/* xfs_quota would take the first; a second is a mistake to fix. */
			return ea_diag_add(diags, file, line, "project name '%s' is listed twice",
					   name)
				       ?: -EINVAL;
	ids = reallocarray(p->ids, p->n_ids + 1, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	p->ids = ids;
	ids[p->n_ids].name = strdup(name);
	if (!ids[p->n_ids].name)
		return -ENOMEM;
	ids[p->n_ids++].id = v;
	return 0;
}

static int projects_line(struct ea_projects *p, const char *file, unsigned line, char *id,
			 char *path, struct ea_diags *diags)
{
	struct ea_project_dir *dirs;
	char *norm = NULL;
	uint32_t v;
	int r;

	r = ea_projects_resolve(p, id, &v);
	if (r < 0 && r != -EINVAL)
		return ea_diag_add(diags, file, line,
				   "project '%s' is neither a number nor a name from the project "
				   "id file",
				   id)
			       ?: -EINVAL;
	if (r < 0)
		return ea_diag_add(diags, file, line, "expected 'id:/path'") ?: -EINVAL;
	r = ea_path_normalize(path, &norm);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ea_diag_add(diags, file, line,
				   "'%s' is not an absolute path without '..' components", path)
			       ?: -EINVAL;
	dirs = reallocarray(p->dirs, p->n_dirs + 1, sizeof(*dirs));
	if (!dirs) {
		free(norm);
		return -ENOMEM;
	}
	p->dirs = dirs;
	dirs[p->n_dirs++] = (struct ea_project_dir){ .id = v, .path = norm };
	return 0;
}

int ea_projects_resolve(const struct ea_projects *p, const char *project, uint32_t *ret)
{
	if (!*project)
		return -EINVAL;
	if (*project >= '0' && *project <= '9')
		return parse_u32(project, ret) < 0 ? -EINVAL : 0;
	for (size_t i = 0; i < p->n_ids; i++)
		if (!strcmp(p->ids[i].name, project)) {
			*ret = p->ids[i].id;
			return 0;
		}
	return -ENOENT;
}

void ea_projects_free(struct ea_projects *p)
{
	for (size_t i = 0; i < p->n_ids; i++)
		free(p->ids[i].name);
	for (size_t i = 0; i < p->n_dirs; i++)
		free(p->dirs[i].path);
	free(p->ids);
	free(p->dirs);
	*p = (struct ea_projects){ 0 };
}

int ea_projects_load(const char *projid_path, const char *projects_path, struct ea_projects *ret,
		     struct ea_diags *diags)
{
	int r, r2;

	*ret = (struct ea_projects){ 0 };
	/* projid first: /etc/projects may name projects instead of numbering them. */
	r = read_colon_file(projid_path ?: EA_POLICY_PROJID, ret, projid_line, diags);
	if (r == -ENOMEM)
		goto fail;
	r2 = read_colon_file(projects_path ?: EA_POLICY_PROJECTS, ret, projects_line, diags);
	if (r2 == -ENOMEM) {
		r = r2;
		goto fail;
	}
	return r < 0 ? r : r2;
fail:
	ea_projects_free(ret);
	return r;
}

int ea_project_resolve(const char *projid_path, const char *project, uint32_t *ret)
{
	struct ea_projects p;
	struct ea_diags d = EA_DIAGS_INIT;
	uint32_t v;
	int r;

	/* Only the name table matters here; its malformed lines are not ours to report. */
	r = ea_projects_load(projid_path, "/dev/null", &p, &d);
	ea_diags_free(&d);
	if (r == -ENOMEM)
		return r;
	r = ea_projects_resolve(&p, project, &v);
	ea_projects_free(&p);
	if (r < 0)
		return r;
	if (v == EA_PROJID_NONE)
		return -EINVAL;
	*ret = v;
	return 0;
}
