// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which rule applies to a path, why, and what the others lost on. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/policy.h"
#include "policy-internal.h"

/*
 * Precedence as a number, higher wins (policy.h has the order and why):
 * project rules above all directory rules, then depth, then "has match".
 * Paths are far shorter than 2^20 components, so the fields cannot mix.
 */
static uint64_t rank(const struct ea_rule *r)
{
	uint64_t depth;

	if (r->kind == EA_RULE_DIRECTORY)
		depth = ea_path_depth(r->directory);
	else
		depth = r->filesystem ? 1 + ea_path_depth(r->filesystem) : 0;
	return ((uint64_t)(r->kind == EA_RULE_PROJECT) << 40) | (depth << 1) | (r->n_match > 0);
}

static bool glob_any(char **globs, size_t n, const char *name, const char **hit)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], name, 0) == 0) {
			if (hit)
				*hit = globs[i];
			return true;
		}
	return false;
}

/* EA_REASON_WINS when the rule covers the path, else why not. */
static enum ea_reason covers(const struct ea_rule *r, const char *path, const char *name,
			     bool is_dir, uint32_t projid, const char **glob)
{
	*glob = NULL;
	if (r->kind == EA_RULE_DIRECTORY) {
		if (!ea_path_under(path, r->directory))
			return EA_REASON_OUTSIDE_DIRECTORY;
	} else {
		if (projid == EA_PROJID_NONE)
			return EA_REASON_NO_PROJECT;
		if (projid != r->projid)
			return EA_REASON_OTHER_PROJECT;
		if (r->filesystem && !ea_path_under(path, r->filesystem))
			return EA_REASON_OUTSIDE_FILESYSTEM;
	}
	if (is_dir)
		return r->n_match ? EA_REASON_FILES_ONLY : EA_REASON_WINS;
	if (r->n_match && !glob_any(r->match, r->n_match, name, NULL))
		return EA_REASON_NO_MATCH;
	if (glob_any(r->exclude, r->n_exclude, name, glob))
		return EA_REASON_EXCLUDED;
	return EA_REASON_WINS;
}

/* Why the candidate lost to the winner; both cover the path. */
static enum ea_reason outranked_by(const struct ea_rule *r, const struct ea_rule *w)
{
	uint64_t rr = rank(r) >> 1, rw = rank(w) >> 1;

	if (w->kind == EA_RULE_PROJECT && r->kind == EA_RULE_DIRECTORY)
		return EA_REASON_PROJECT_FIRST;
	if (rr != rw) {
		if (w->kind == EA_RULE_PROJECT && !r->filesystem)
			return EA_REASON_FILESYSTEM_FIRST;
		return EA_REASON_DEEPER_WINS;
	}
	return EA_REASON_MATCH_FIRST;
}

struct cand {
	size_t idx;
	uint64_t rank;
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	/* Equal ranks are ties, rejected at load; keep definition order anyway. */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int ea_policy_lookup(const struct ea_policy *p, const char *path, bool is_dir, uint32_t projid,
		     const struct ea_rule **ret, struct ea_explain *explain)
{
	_cleanup_free_ char *norm = NULL;
	_cleanup_free_ struct cand *cands = NULL;
	_cleanup_free_ struct ea_explain_step *steps = NULL;
	const struct ea_rule *winner = NULL;
	uint64_t best = 0;
	const char *name, *glob;
	size_t nc = 0, ns = 0;
	int r;

	if (explain)
		*explain = (struct ea_explain){ 0 };
	r = ea_path_normalize(path, &norm);
	if (r < 0)
		return r;
	name = strrchr(norm, '/') + 1;

	if (explain) {
		cands = calloc(p->n_rules ?: 1, sizeof(*cands));
		steps = calloc(p->n_rules ?: 1, sizeof(*steps));
		if (!cands || !steps)
			return -ENOMEM;
	}
	/* Rejected rules go to the back of steps, candidates are sorted in front. */
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ea_rule *rule = &p->rules[i];
		enum ea_reason why = covers(rule, norm, name, is_dir, projid, &glob);
		uint64_t k;

		if (why != EA_REASON_WINS) {
			if (steps)
				steps[ns++] = (struct ea_explain_step){ rule, why, glob };
			continue;
		}
		k = rank(rule);
		if (!winner || k > best) {
			winner = rule;
			best = k;
		}
		if (cands)
			cands[nc++] = (struct cand){ i, k };
	}

	if (explain) {
		qsort(cands, nc, sizeof(*cands), cand_cmp);
		/* Make room at the front for the candidates. */
		memmove(steps + nc, steps, ns * sizeof(*steps));
		for (size_t i = 0; i < nc; i++) {
			const struct ea_rule *rule = &p->rules[cands[i].idx];

			steps[i] = (struct ea_explain_step){
				rule, i == 0 ? EA_REASON_WINS : outranked_by(rule, winner), NULL
			};
		}
		explain->winner = winner;
		explain->steps = TAKE_PTR(steps);
		explain->n_steps = nc + ns;
	}
	if (ret)
		*ret = winner;
	return 0;
}

void ea_explain_free(struct ea_explain *e)
{
	free(e->steps);
	*e = (struct ea_explain){ 0 };
}

const char *ea_reason_str(enum ea_reason r)
{
	switch (r) {
	case EA_REASON_WINS:
		return "applies";
	case EA_REASON_OUTSIDE_DIRECTORY:
		return "the path is outside the rule's directory";
	case EA_REASON_NO_PROJECT:
		return "the path has no project id";
	case EA_REASON_OTHER_PROJECT:
		return "the path has another project id";
	case EA_REASON_OUTSIDE_FILESYSTEM:
		return "the path is outside the rule's filesystem";
	case EA_REASON_NO_MATCH:
		return "the name matches none of the rule's match globs";
	case EA_REASON_EXCLUDED:
		return "the name matches an exclude glob";
	case EA_REASON_FILES_ONLY:
		return "a rule with match is for files, not for directory inheritance";
	case EA_REASON_PROJECT_FIRST:
		return "a project rule comes before directory rules";
	case EA_REASON_DEEPER_WINS:
		return "a rule on a deeper directory wins";
	case EA_REASON_FILESYSTEM_FIRST:
		return "a project rule limited to a filesystem wins";
	case EA_REASON_MATCH_FIRST:
		return "a rule with match at the same place wins";
	}
	return "unknown";
}

bool ea_rule_hint(const struct ea_rule *r, bool is_dir, struct ea_hint *ret)
{
	*ret = (struct ea_hint){ .forcealign = -1 };
	if (!r->extsize || (is_dir && !r->inherit))
		return false;
	ret->extsize = r->extsize;
	ret->forcealign = r->forcealign;
	ret->inherit = is_dir;
	return true;
}

bool ea_daemon_in_window(const struct ea_daemon_conf *d, unsigned minute)
{
	if (!d->n_realign_windows)
		return true;
	for (size_t i = 0; i < d->n_realign_windows; i++) {
		const struct ea_time_window *w = &d->realign_windows[i];

		if (w->start < w->end ? minute >= w->start && minute < w->end
				      : minute >= w->start || minute < w->end)
			return true;
	}
	return false;
}

int ea_policy_dir_cover(const struct ea_policy *p, const char *dir)
{
	_cleanup_free_ char *norm = NULL;
	int r, cover = EA_DIR_OUTSIDE;

	r = ea_path_normalize(dir, &norm);
	if (r < 0)
		return r;
	/* The watch list holds exactly the trees: directory rules and project trees. */
	for (size_t i = 0; i < p->n_watch; i++) {
		if (ea_path_under(norm, p->watch[i].path))
			return EA_DIR_INSIDE;
		if (ea_path_under(p->watch[i].path, norm))
			cover = EA_DIR_ABOVE;
	}
	return cover;
}
