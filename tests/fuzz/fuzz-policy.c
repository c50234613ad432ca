// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the policy loader on arbitrary bytes.  The input is cut
 * at 0xff bytes into the main file, one drop-in, /etc/projid and
 * /etc/projects.  Loading must succeed with no diagnostics or fail with at
 * least one, each inside the files read; a loaded policy must give the
 * same winner with and without an explain trace, and the winner must be
 * the first step.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/policy.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len);

/* One scratch directory per fuzzing process; files are rewritten each run. */
static char dir[64], conf[96], dropins[96], dropin[128], projid[96], projects[96];

static void cleanup(void)
{
	unlink(dropin);
	rmdir(dropins);
	unlink(conf);
	unlink(projid);
	unlink(projects);
	rmdir(dir);
}

static void init(void)
{
	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "/tmp/fuzz-policy.%d", (int)getpid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		abort();
	snprintf(conf, sizeof(conf), "%s/extalign.conf", dir);
	snprintf(dropins, sizeof(dropins), "%s/d", dir);
	snprintf(dropin, sizeof(dropin), "%s/d/10-x.conf", dir);
	snprintf(projid, sizeof(projid), "%s/projid", dir);
	snprintf(projects, sizeof(projects), "%s/projects", dir);
	if (mkdir(dropins, 0700) < 0 && errno != EEXIST)
		abort();
	atexit(cleanup);
}

static void put(const char *path, const unsigned char *d, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(d, 1, n, f) != n || fclose(f))
		abort();
}

static unsigned lines_of(const unsigned char *d, size_t n)
{
	unsigned count = 1;

	for (size_t i = 0; i < n; i++)
		count += d[i] == '\n';
	return count;
}

static void probe(const struct ea_policy *p, const char *path, uint32_t projid_v)
{
	for (int is_dir = 0; is_dir < 2; is_dir++) {
		const struct ea_rule *a = NULL, *b = NULL;
		struct ea_explain e;
		struct ea_hint h;

		if (ea_policy_lookup(p, path, is_dir, projid_v, &a, NULL) < 0)
			return;
		if (ea_policy_lookup(p, path, is_dir, projid_v, &b, &e) < 0)
			abort();
		if (a != b || e.winner != a || e.n_steps != p->n_rules)
			abort();
		if (a && (e.steps[0].rule != a || e.steps[0].reason != EA_REASON_WINS))
			abort();
		for (size_t i = 1; i < e.n_steps; i++)
			if (e.steps[i].reason == EA_REASON_WINS)
				abort();
		if (a)
			(void)ea_rule_hint(a, is_dir, &h);
		ea_explain_free(&e);
	}
	(void)ea_policy_dir_cover(p, path);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len)
{
	const unsigned char *part[4] = { data, data + len, data + len, data + len };
	size_t plen[4] = { len, 0, 0, 0 };
	struct ea_diags d = EA_DIAGS_INIT;
	struct ea_policy *p = NULL;
	size_t k = 0;
	int r;

	init();
	for (size_t i = 0; i < len && k < 3; i++)
		if (data[i] == 0xff) {
			plen[k] = (size_t)(data + i - part[k]);
			part[++k] = data + i + 1;
			plen[k] = len - i - 1;
		}
	put(conf, part[0], plen[0]);
	put(dropin, part[1], plen[1]);
	put(projid, part[2], plen[2]);
	put(projects, part[3], plen[3]);

	r = ea_policy_load(conf, dropins, projid, projects, &p, &d);
	if (r == 0) {
		if (!p || d.n)
			abort();
	} else if (p || !d.n || r > 0) {
		abort();
	}
	for (size_t i = 0; i < d.n; i++) {
		static const char *const files[] = { conf, dropin, projid, projects };
		int which = -1;

		for (int f = 0; f < 4; f++)
			if (!strcmp(d.items[i].file, files[f]))
				which = f;
		if (which < 0 || !d.items[i].msg[0] ||
		    d.items[i].line > lines_of(part[which], plen[which]))
			abort();
	}
	if (p) {
		for (size_t i = 0; i < p->n_rules; i++) {
			const struct ea_rule *rule = &p->rules[i];
			char path[4096];

			if (rule->kind == EA_RULE_DIRECTORY) {
				snprintf(path, sizeof(path), "%s/x.ibd", rule->directory);
				probe(p, path, EA_PROJID_NONE);
				probe(p, rule->directory, EA_PROJID_NONE);
			} else {
				probe(p, "/srv/x.ibd", rule->projid);
			}
		}
		probe(p, "/", 42);
		/* The watch list: distinct trees, none inside another. */
		for (size_t i = 0; i < p->n_watch; i++)
			for (size_t j = 0; j < p->n_watch; j++)
				if (i != j && ea_path_under(p->watch[i].path, p->watch[j].path))
					abort();
		ea_policy_free(p);
	}
	ea_diags_free(&d);
	return 0;
}
