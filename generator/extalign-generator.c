// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign-generator: a systemd generator (systemd.generator(7)) that makes
 * the trees of /etc/extalign.conf's rules writable to extalignd.service.
 *
 * The unit runs with ProtectSystem=strict, so without this a rule on /data
 * or /u01 would watch a read-only tree and set no hint.  systemd runs the
 * generator at boot and at "systemctl daemon-reload", before any unit
 * starts, with three output directories; the drop-in goes into the first:
 *
 *     NORMAL_DIR/extalignd.service.d/50-extalign-rules.conf
 *
 * Errors go to stderr (the journal, or the kernel log early at boot).  A
 * configuration with errors gets no drop-in: extalignd refuses it too.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/macro.h"
#include "extalign/policy.h"
#include "extalign/unit-paths.h"

enum {
	GEN_OK = 0,
	GEN_CONFIG = 1, /* the configuration has errors: no drop-in */
	GEN_USAGE = 2,
	GEN_WRITE = 3, /* the drop-in could not be written */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [--config FILE] [--config-dir DIR] NORMAL_DIR [EARLY_DIR LATE_DIR]\n"
		"\n"
		"A systemd generator: writes NORMAL_DIR/%s.d/%s, the trees the rules of\n"
		"FILE (default %s) watch as ReadWritePaths= of %s.\n"
		"systemd runs it at boot and at \"systemctl daemon-reload\".\n"
		"\n"
		"  -c, --config FILE      the configuration (then no drop-ins unless "
		"--config-dir)\n"
		"      --config-dir DIR   its drop-in directory (default %s)\n"
		"  -h, --help             this help\n"
		"  -V, --version          the version\n"
		"\n"
		"Exit status: 0 written (or no configuration), 1 the configuration has\n"
		"errors (nothing written), 2 usage, 3 the drop-in could not be written.\n"
		"See extalignd(8).\n",
		program_invocation_short_name, EA_UNIT_NAME, EA_UNIT_DROPIN_NAME, EA_POLICY_CONF,
		EA_UNIT_NAME, EA_POLICY_DROPIN_DIR);
}

/* Write text to dir/name through a temporary file renamed over it. */
static int write_replace(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *tmp = NULL, *dst = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);
	int r = 0;

	if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0) {
		tmp = NULL;
		return -ENOMEM;
	}
	if (asprintf(&dst, "%s/%s", dir, name) < 0) {
		dst = NULL;
		return -ENOMEM;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	if (fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t)len || rename(tmp, dst) < 0) {
		r = errno ? -errno : -EIO;
		unlink(tmp);
	}
	return r;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "config-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	const char *conf = NULL, *conf_dir = NULL;
	struct ea_diags diags = EA_DIAGS_INIT;
	struct ea_policy *p = NULL;
	struct ea_unit_paths u = { 0 };
	_cleanup_free_ char *text = NULL, *dir = NULL;
	int c, r, ret = GEN_OK;

	while ((c = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			conf = optarg;
			break;
		case 'D':
			conf_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return GEN_OK;
		case 'V':
			printf("extalign-generator %s\n", EXTALIGN_VERSION);
			return GEN_OK;
		default:
			usage(stderr);
			return GEN_USAGE;
		}
	}
	/* systemd passes three directories; one is enough by hand. */
	if (argc - optind != 1 && argc - optind != 3) {
		warnx("expected NORMAL_DIR [EARLY_DIR LATE_DIR], got %d arguments", argc - optind);
		usage(stderr);
		return GEN_USAGE;
	}
	if (conf && !conf_dir)
		conf_dir = EA_POLICY_NO_DROPINS;

	r = ea_policy_load(conf, conf_dir, NULL, NULL, &p, &diags);
	if (r == -ENOENT && !conf && access(EA_POLICY_CONF, F_OK) < 0)
		return GEN_OK; /* not configured: the unit does not start either */
	if (r < 0) {
		for (size_t i = 0; i < diags.n; i++) {
			const struct ea_diag *d = &diags.items[i];

			if (d->line)
				warnx("%s:%u: %s", d->file, d->line, d->msg);
			else
				warnx("%s: %s", d->file, d->msg);
		}
		if (!diags.n)
			warnx("cannot load the configuration: %s", strerror(-r));
		warnx("no %s drop-in written: %s keeps only its own ReadWritePaths=",
		      EA_UNIT_DROPIN_NAME, EA_UNIT_NAME);
		ea_diags_free(&diags);
		return GEN_CONFIG;
	}

	r = ea_unit_paths_of_policy(p, &u);
	if (r >= 0)
		r = ea_unit_dropin_format(&u, conf ? conf : EA_POLICY_CONF, &text);
	if (r < 0) {
		warnx("%s", strerror(-r));
		ret = GEN_WRITE;
		goto out;
	}
	for (size_t i = 0; i < u.n_skipped; i++)
		warnx("%s stays out of reach of %s: %s", u.skipped[i].path, EA_UNIT_NAME,
		      u.skipped[i].why);

	if (asprintf(&dir, "%s/%s.d", argv[optind], EA_UNIT_NAME) < 0) {
		dir = NULL;
		ret = GEN_WRITE;
		goto out;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		warn("%s", dir);
		ret = GEN_WRITE;
		goto out;
	}
	r = write_replace(dir, EA_UNIT_DROPIN_NAME, text);
	if (r < 0) {
		warnx("%s/%s: %s", dir, EA_UNIT_DROPIN_NAME, strerror(-r));
		ret = GEN_WRITE;
	}
out:
	ea_unit_paths_free(&u);
	ea_policy_free(p);
	return ret;
}
