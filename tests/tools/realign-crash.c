// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper: realign one file and SIGKILL ourselves at a chosen phase, to
 * show that a crash at that exact point loses nothing.
 * Usage: realign-crash PHASE EXTSIZE STATE_DIR FILE
 * PHASE: copy (half way through the data), verify, linked, swap, exchanged,
 * or none (run to the end and print the outcome and swap path).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/realign.h"

struct crash {
	int phase; /* -1: never */
};

static void progress(void *userdata, const struct ea_realign_progress *p)
{
	const struct crash *c = userdata;

	if ((int)p->phase != c->phase)
		return;
	if (p->phase == EA_PHASE_COPY && p->done * 2 < p->total)
		return;
	fflush(stdout);
	raise(SIGKILL);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int phase;
	} phases[] = {
		{ "none", -1 },
		{ "copy", EA_PHASE_COPY },
		{ "verify", EA_PHASE_VERIFY },
		{ "linked", EA_PHASE_LINKED },
		{ "swap", EA_PHASE_SWAP },
		{ "exchanged", EA_PHASE_EXCHANGED },
	};
	struct crash c = { .phase = -2 };
	struct ea_realign_opts o;
	struct ea_realign_result r;

	if (argc != 5) {
		fprintf(stderr, "usage: %s PHASE EXTSIZE STATE_DIR FILE\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (!strcmp(argv[1], phases[i].name))
			c.phase = phases[i].phase;
	if (c.phase == -2) {
		fprintf(stderr, "unknown phase '%s'\n", argv[1]);
		return 2;
	}
	ea_realign_opts_init(&o, (uint32_t)strtoul(argv[2], NULL, 0));
	o.state_dir = argv[3];
	o.force = true;
	o.progress = progress;
	o.userdata = &c;
	if (ea_realign_file(argv[4], &o, &r) < 0) {
		fprintf(stderr, "bad options\n");
		return 2;
	}
	printf("%s %s %s\n", ea_realign_outcome_name(r.outcome),
	       r.outcome == EA_REALIGN_SKIPPED ? ea_realign_skip_name(r.skip) : "-",
	       ea_realign_swap_name(r.swap));
	return r.outcome == EA_REALIGN_DONE ? 0 : 1;
}
