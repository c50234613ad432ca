// SPDX-License-Identifier: GPL-2.0-or-later
/* extalign status: what the running extalignd is doing, from its state file. */
#include <err.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "extalign/macro.h"
#include "extalign/state.h"

static void usage(FILE *out)
{
	fputs("Usage: extalign status [--json|--format FORMAT] [--state-dir DIR] [--sysroot "
	      "DIR]\n\n"
	      "Show what extalignd is doing: rules, watched filesystems, counters,\n"
	      "the last errors and the files waiting for realignment.\n\n"
	      "  -J, --json            JSON output (same as --format=json)\n"
	      "      --format FORMAT   text, json or prometheus (the text exposition\n"
	      "                        format of node_exporter's textfile collector)\n"
	      "      --state-dir DIR   read DIR/state instead of " EA_STATE_DIR "/state\n"
	      "      --sysroot DIR     prometheus: the devices' atomic write units from\n"
	      "                        DIR/sys instead of /sys\n"
	      "  -h, --help            this text\n",
	      out);
}

/*
 * Is the daemon that wrote the file still alive?  The pid alone could have
 * been reused since, so the process must also be called extalignd.
 */
static bool daemon_alive(pid_t pid)
{
	char p[64], comm[64] = "";
	FILE *f;

	if (pid <= 0 || (kill(pid, 0) < 0 && errno != EPERM))
		return false;
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	f = fopen(p, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	return !strcmp(comm, "extalignd");
}

/*
 * Without a state file, print_json()'s keys all the same: null for what
 * only a daemon knows, empty arrays for its lists (extalign(8), JSON OUTPUT).
 */
static void print_json_absent(void)
{
	static const char *const unknown[] = {
		"pid",	   "phase",	  "started_usec", "updated_usec", "config",
		"watcher", "last_reload", "rules",	  "counters",
	};

	fputs("{\"running\":false", stdout);
	for (size_t i = 0; i < ARRAY_SIZE(unknown); i++)
		printf(",\"%s\":null", unknown[i]);
	puts(",\"by_rule\":[],\"marks\":[],\"errors\":[],\"late\":[]}");
}

static void print_json(const struct ea_state *s, bool alive)
{
	printf("{\"running\":%s,\"pid\":%d,\"phase\":", alive ? "true" : "false", (int)s->pid);
	json_str_or_null(s->phase);
	printf(",\"started_usec\":%" PRIu64 ",\"updated_usec\":%" PRIu64 ",\"config\":",
	       s->started_usec, s->updated_usec);
	json_str_or_null(s->config);
	fputs(",\"watcher\":", stdout);
	json_str_or_null(s->watcher);
	fputs(",\"last_reload\":", stdout);
	if (s->last_reload)
		json_str(s->last_reload);
	else
		fputs("null", stdout);
	printf(",\"rules\":%u,\"counters\":{", s->rules);
	for (int i = 0; i < _EA_CNT_MAX; i++)
		printf("%s\"%s\":%" PRIu64, i ? "," : "", ea_state_counter_name(i), s->counters[i]);
	/* Per rule and filesystem: what the metrics label rule and mountpoint. */
	fputs("},\"by_rule\":[", stdout);
	for (size_t i = 0; i < s->n_rule_stats; i++) {
		const struct ea_state_rule_stats *rs = &s->rule_stats[i];

		fputs(i ? ",{\"rule\":" : "{\"rule\":", stdout);
		json_str(rs->rule);
		fputs(",\"mountpoint\":", stdout);
		json_str(rs->mountpoint);
		for (int k = 0; k < _EA_STAT_MAX; k++)
			printf(",\"%s\":%" PRIu64, ea_state_stat_name(k), rs->v[k]);
		putchar('}');
	}
	fputs("],\"marks\":[", stdout);
	for (size_t i = 0; i < s->n_marks; i++) {
		fputs(i ? ",{\"path\":" : "{\"path\":", stdout);
		json_str(s->marks[i].path);
		fputs(",\"fstype\":", stdout);
		json_str(s->marks[i].fstype);
		fputs(",\"how\":", stdout);
		json_str(s->marks[i].how);
		putchar('}');
	}
	fputs("],\"errors\":[", stdout);
	for (size_t i = 0; i < s->n_errors; i++) {
		const struct ea_state_error *e = &s->errors[i];

		printf("%s{\"usec\":%" PRIu64 ",\"errno\":%d,\"error\":", i ? "," : "", e->usec,
		       e->err);
		json_str_or_null(e->err ? strerror(e->err) : NULL);
		fputs(",\"rule\":", stdout);
		json_str_or_null(e->rule);
		fputs(",\"path\":", stdout);
		json_str_or_null(e->path);
		fputs(",\"message\":", stdout);
		json_str_or_null(e->msg);
		putchar('}');
	}
	fputs("],\"late\":[", stdout);
	for (size_t i = 0; i < s->n_late; i++) {
		const struct ea_state_late *l = &s->late[i];

		printf("%s{\"usec\":%" PRIu64 ",\"rule\":", i ? "," : "", l->usec);
		json_str_or_null(l->rule);
		fputs(",\"path\":", stdout);
		json_str(l->path);
		fputs(",\"queue\":", stdout);
		json_str(l->queue);
		fputs(",\"reason\":", stdout);
		json_str_or_null(l->reason);
		printf(",\"done_bytes\":%" PRIu64 ",\"total_bytes\":%" PRIu64 "}", l->done,
		       l->total);
	}
	fputs("]}\n", stdout);
}

static int print_prometheus(const struct ea_state *s, bool alive, const char *sysroot)
{
	_cleanup_free_ struct ea_prom_bdev *bdevs = NULL;
	size_t n = 0;
	int r;

	/* The devices are extra: without sysfs the counters still come out. */
	r = ea_state_mark_bdevs(s, sysroot, &bdevs, &n);
	if (r < 0)
		warnx("status: cannot read the block devices: %s", strerror(-r));
	r = ea_state_write_prometheus(stdout, s, alive, bdevs, n);
	if (r < 0)
		warnx("status: write error: %s", strerror(-r));
	return r;
}

static const char *when(uint64_t usec, char *buf, size_t len)
{
	time_t t = (time_t)(usec / 1000000);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, len, "%" PRIu64, usec);
	return buf;
}

/* The fstype of a mark on the filesystem mounted at mountpoint, or NULL. */
static const char *fstype_at(const struct ea_state *s, const char *mountpoint)
{
	size_t n = strlen(mountpoint);

	/* A mark is placed on the filesystem at a rule's directory, below it. */
	for (size_t i = 0; i < s->n_marks; i++)
		if (n && !strncmp(s->marks[i].path, mountpoint, n) &&
		    (s->marks[i].path[n] == '/' || !s->marks[i].path[n] || n == 1))
			return s->marks[i].fstype;
	return NULL;
}

/*
 * Where the unsupported files were: which rule on which filesystem, and
 * what would make hints work there.
 */
static void print_unsupported(const struct ea_state *s)
{
	for (size_t i = 0; i < s->n_rule_stats; i++) {
		const struct ea_state_rule_stats *rs = &s->rule_stats[i];
		uint64_t n = rs->v[EA_STAT_FAIL_UNSUPPORTED];
		const char *fs = fstype_at(s, rs->mountpoint);

		if (!n)
			continue;
		printf("           %" PRIu64 " unsupported %s%s on %s%s%s%s\n", n,
		       *rs->rule ? "under rule " : "(no rule)", rs->rule,
		       *rs->mountpoint ? rs->mountpoint : "an unknown filesystem", fs ? " (" : "",
		       fs ? fs : "", fs ? ")" : "");
		if (fs && !strcmp(fs, "ext4"))
			puts("             this ext4 keeps no hint: it needs a kernel with the "
			     "extalign series");
		else if (fs && strcmp(fs, "xfs"))
			printf("             %s has no extent size hints (XFS has, and ext4 with "
			       "the extalign series)\n",
			       fs);
	}
}

static void print_text(const struct ea_state *s, bool alive)
{
	const uint64_t *c = s->counters;
	char buf[64];

	if (alive)
		printf("extalignd: %s (pid %d) since %s\n", s->phase, (int)s->pid,
		       when(s->started_usec, buf, sizeof(buf)));
	else
		printf("extalignd: not running (last state from pid %d, %s)\n", (int)s->pid,
		       when(s->updated_usec, buf, sizeof(buf)));
	printf("config:    %s, %u %s\n", s->config, s->rules, PLURAL(s->rules, "rule", "rules"));
	printf("watcher:   %s\n", s->watcher);
	for (size_t i = 0; i < s->n_marks; i++)
		printf("%s%s (%s, %s)\n", i ? "           " : "marks:     ", s->marks[i].path,
		       s->marks[i].fstype, s->marks[i].how);
	printf("hinted:    %" PRIu64 " files, %" PRIu64 " directories by the daemon; %" PRIu64
	       " files, %" PRIu64 " directories by inheritance\n",
	       c[EA_CNT_FILES_HINTED], c[EA_CNT_DIRS_HINTED], c[EA_CNT_FILES_INHERITED],
	       c[EA_CNT_DIRS_INHERITED]);
	printf("late:      %" PRIu64 " files had data before their hint\n", c[EA_CNT_FILES_LATE]);
	printf("problems:  %" PRIu64 " unsupported, %" PRIu64 " errors, %" PRIu64
	       " skipped (symlinks, hard links, ...)\n",
	       c[EA_CNT_UNSUPPORTED], c[EA_CNT_ERRORS], c[EA_CNT_SKIPPED]);
	print_unsupported(s);
	printf("events:    %" PRIu64 ", %" PRIu64 " overflows, %" PRIu64
	       " rescans; read ahead at most %.1f of %u MiB\n",
	       c[EA_CNT_EVENTS], c[EA_CNT_OVERFLOWS], c[EA_CNT_RESCANS],
	       c[EA_CNT_BACKLOG_PEAK] / 1048576.0, EA_BACKLOG_MAX >> 20);
	printf("reloads:   %" PRIu64 " (%" PRIu64 " refused)%s\n", c[EA_CNT_RELOADS],
	       c[EA_CNT_RELOAD_FAILURES],
	       s->last_reload && !strcmp(s->last_reload, "refused")
		       ? ", the last one refused: old rules in use"
		       : "");
	printf("realigned: %" PRIu64 " files, %" PRIu64 " bytes (%" PRIu64 " failed)\n",
	       c[EA_CNT_JOBS_DONE], c[EA_CNT_BYTES_REALIGNED], c[EA_CNT_JOBS_FAILED]);
	if (s->n_errors)
		puts("\nLast errors:");
	for (size_t i = 0; i < s->n_errors; i++) {
		const struct ea_state_error *e = &s->errors[i];

		printf("  %s %s%s%s%s%s%s%s%s\n", when(e->usec, buf, sizeof(buf)),
		       *e->rule ? "rule " : "", e->rule, *e->rule ? ": " : "", e->path,
		       *e->path ? ": " : "", e->msg, e->err ? ": " : "",
		       e->err ? strerror(e->err) : "");
	}
	if (s->n_late)
		printf("\nRealignment candidates (%zu shown):\n", s->n_late);
	for (size_t i = 0; i < s->n_late; i++) {
		const struct ea_state_late *l = &s->late[i];
		int q = ea_late_queue_from_name(l->queue);

		printf("  %-11s %-16s %s\n", l->queue, l->rule, l->path);
		/* A running job's progress; a queued one's reason to wait. */
		if (q == EA_LATE_RUNNING && l->total)
			printf("  %-11s %s %" PRIu64 "%%, %" PRIu64 " of %" PRIu64 " bytes\n", "",
			       *l->reason ? l->reason : "copying", l->done * 100 / l->total,
			       l->done, l->total);
		else if ((q == EA_LATE_QUEUED || q == EA_LATE_RUNNING) && *l->reason)
			printf("  %-11s %s\n", "", l->reason);
	}
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "state-dir", required_argument, NULL, 'S' },
		{ "format", required_argument, NULL, 'F' },
		{ "sysroot", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dir = EA_STATE_DIR, *sysroot = NULL;
	struct ea_state s = { 0 };
	_cleanup_close_ int dfd = -1;
	enum { FMT_TEXT, FMT_JSON, FMT_PROMETHEUS } format = FMT_TEXT;
	bool json, alive;
	unsigned bad = 0;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "Jh", opts, NULL)) >= 0) {
		switch (c) {
		case 'J':
			format = FMT_JSON;
			break;
		case 'F':
			if (!strcmp(optarg, "text"))
				format = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				format = FMT_JSON;
			else if (!strcmp(optarg, "prometheus"))
				format = FMT_PROMETHEUS;
			else {
				warnx("status: unknown format '%s' (expected text, json or "
				      "prometheus)",
				      optarg);
				return EXIT_USAGE;
			}
			break;
		case 'S':
			dir = optarg;
			break;
		case 'R':
			sysroot = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, "status");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		warnx("status: unexpected argument '%s'", argv[optind]);
		fprintf(stderr, USAGE_HINT, "status");
		return EXIT_USAGE;
	}
	json = format == FMT_JSON;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = dfd < 0 ? negative_errno() : ea_state_read_at(dfd, EA_STATE_FILE, &s, &bad);
	if (r == -ENOENT) {
		if (format == FMT_PROMETHEUS)
			fputs("# HELP extalign_daemon_running 1 while extalignd runs; 0 once it "
			      "stopped or its process is gone.\n"
			      "# TYPE extalign_daemon_running gauge\n"
			      "extalign_daemon_running 0\n",
			      stdout);
		else if (json)
			print_json_absent();
		else
			printf("extalignd: not running (no %s/%s)\n", dir, EA_STATE_FILE);
		return EXIT_FAILED;
	}
	if (r == -EBADMSG) {
		warnx("%s/%s:%u: malformed state file", dir, EA_STATE_FILE, bad);
		return EXIT_FAILED;
	}
	if (r < 0) {
		warnx("%s/%s: %s", dir, EA_STATE_FILE, strerror(-r));
		return EXIT_FAILED;
	}
	alive = daemon_alive(s.pid);
	if (format == FMT_PROMETHEUS)
		r = print_prometheus(&s, alive, sysroot);
	else if (json)
		print_json(&s, alive);
	else
		print_text(&s, alive);
	ea_state_free(&s);
	return r < 0 || !alive ? EXIT_FAILED : EXIT_OK;
}
