// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The daemon's state in the Prometheus text exposition format, for
 * `extalign status --format=prometheus` and the daemon's metrics_file (read
 * by node_exporter's textfile collector).  Names follow the Prometheus
 * conventions: an extalign_ prefix, _total on counters, bytes and seconds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/state.h"
#include "extalign/utf8.h"

/*
 * Label values escape backslash, double quote and newline, and must be
 * UTF-8: a byte of a path that is not goes out as the four characters
 * \xNN (written \\xNN), so the exposition stays valid and the name
 * readable.
 */
static void put_label_value(FILE *f, const char *v)
{
	const char *p = v ? v : "";
	size_t left = strlen(p);

	fputc('"', f);
	while (left) {
		size_t n = ea_utf8_char_len(p, left);

		if (!n)
			fprintf(f, "\\\\x%02x", (unsigned char)*p);
		else if (*p == '\\' || *p == '"')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fwrite(p, 1, n, f);
		n = n ? n : 1;
		p += n;
		left -= n;
	}
	fputc('"', f);
}

static void put_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_counter(FILE *f, const char *name, const char *help, uint64_t v)
{
	put_family(f, name, "counter", help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* As the daemon counts its pending files: a name we do not know is not one. */
static bool is_pending(const struct ea_state_late *l)
{
	int q = ea_late_queue_from_name(l->queue);

	return q >= 0 && ea_late_queue_pending(q);
}

/*
 * The samples of one family from the per rule and filesystem stats, with
 * labels rule and mountpoint (and label=value when label is not NULL).  A
 * state from a daemon before those stats has only the sum: one sample
 * without rule labels, legacy.
 */
static void put_by_rule(FILE *f, const struct ea_state *s, const char *name, enum ea_state_stat st,
			const char *label, const char *value, uint64_t legacy)
{
	if (!s->n_rule_stats) {
		fputs(name, f);
		if (label) {
			fprintf(f, "{%s=", label);
			put_label_value(f, value);
			fputc('}', f);
		}
		fprintf(f, " %" PRIu64 "\n", legacy);
		return;
	}
	for (size_t i = 0; i < s->n_rule_stats; i++) {
		const struct ea_state_rule_stats *rs = &s->rule_stats[i];

		fprintf(f, "%s{rule=", name);
		put_label_value(f, rs->rule);
		fputs(",mountpoint=", f);
		put_label_value(f, rs->mountpoint);
		if (label) {
			fprintf(f, ",%s=", label);
			put_label_value(f, value);
		}
		fprintf(f, "} %" PRIu64 "\n", rs->v[st]);
	}
}

/* An old daemon's state: the pending files counted from its late list,
 * which holds at most its newest late files. */
static void put_pending_from_list(FILE *f, const struct ea_state *s)
{
	for (size_t i = 0; i < s->n_late; i++) {
		size_t n = 0;
		bool seen = false;

		if (!is_pending(&s->late[i]))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = is_pending(&s->late[j]) && !strcmp(s->late[j].rule, s->late[i].rule);
		if (seen)
			continue;
		for (size_t j = i; j < s->n_late; j++)
			n += is_pending(&s->late[j]) && !strcmp(s->late[j].rule, s->late[i].rule);
		fputs("extalign_late_files_pending{rule=", f);
		put_label_value(f, s->late[i].rule);
		fprintf(f, "} %zu\n", n);
	}
}

/* One gauge family with a sample per block device: its unit min or max. */
static void put_bdev_gauge(FILE *f, const char *name, const char *help,
			   const struct ea_prom_bdev *bdevs, size_t n, bool max)
{
	put_family(f, name, "gauge", help);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{device=", name);
		put_label_value(f, bdevs[i].device);
		fprintf(f, "} %" PRIu32 "\n", max ? bdevs[i].unit_max : bdevs[i].unit_min);
	}
}

int ea_state_write_prometheus(FILE *f, const struct ea_state *s, bool running,
			      const struct ea_prom_bdev *bdevs, size_t n_bdevs)
{
	const uint64_t *c = s->counters;

	put_family(f, "extalign_daemon_running", "gauge",
		   "1 while extalignd runs; 0 once it stopped or its process is gone.");
	fprintf(f, "extalign_daemon_running %d\n", running ? 1 : 0);
	put_family(f, "extalign_daemon_start_time_seconds", "gauge",
		   "When extalignd started, seconds since the epoch.");
	fprintf(f, "extalign_daemon_start_time_seconds %" PRIu64 ".%06" PRIu64 "\n",
		s->started_usec / 1000000, s->started_usec % 1000000);
	put_family(f, "extalign_state_updated_time_seconds", "gauge",
		   "When extalignd last wrote its state, seconds since the epoch.");
	fprintf(f, "extalign_state_updated_time_seconds %" PRIu64 ".%06" PRIu64 "\n",
		s->updated_usec / 1000000, s->updated_usec % 1000000);
	put_family(f, "extalign_rules", "gauge", "Rules in the configuration in use.");
	fprintf(f, "extalign_rules %u\n", s->rules);

	put_family(f, "extalign_watched_filesystem_info", "gauge",
		   "A filesystem or tree extalignd watches, and how.");
	for (size_t i = 0; i < s->n_marks; i++) {
		fputs("extalign_watched_filesystem_info{path=", f);
		put_label_value(f, s->marks[i].path);
		fputs(",fstype=", f);
		put_label_value(f, s->marks[i].fstype);
		fputs(",watch=", f);
		put_label_value(f, s->marks[i].how);
		fputs("} 1\n", f);
	}

	put_counter(f, "extalign_events_total", "Filesystem events read.", c[EA_CNT_EVENTS]);
	/* One family, the way the hint arrived as a label: sums stay meaningful. */
	put_family(f, "extalign_files_hinted_total", "counter",
		   "Files given their extent size hint, by extalignd on an event or by the "
		   "kernel through inheritance.");
	put_by_rule(f, s, "extalign_files_hinted_total", EA_STAT_FILES_HINTED, "by", "event",
		    c[EA_CNT_FILES_HINTED]);
	put_by_rule(f, s, "extalign_files_hinted_total", EA_STAT_FILES_INHERITED, "by",
		    "inheritance", c[EA_CNT_FILES_INHERITED]);
	put_family(f, "extalign_directories_hinted_total", "counter",
		   "Directories given hint inheritance, by extalignd or by the kernel.");
	put_by_rule(f, s, "extalign_directories_hinted_total", EA_STAT_DIRS_HINTED, "by", "event",
		    c[EA_CNT_DIRS_HINTED]);
	put_by_rule(f, s, "extalign_directories_hinted_total", EA_STAT_DIRS_INHERITED, "by",
		    "inheritance", c[EA_CNT_DIRS_INHERITED]);
	put_family(f, "extalign_late_files_total", "counter",
		   "Files found with data before their hint: realignment candidates.");
	put_by_rule(f, s, "extalign_late_files_total", EA_STAT_FILES_LATE, NULL, NULL,
		    c[EA_CNT_FILES_LATE]);

	put_family(f, "extalign_late_files_pending", "gauge",
		   "Late files that wait for realignment (listed, queued or running).");
	if (s->n_rule_stats)
		put_by_rule(f, s, "extalign_late_files_pending", EA_STAT_LATE_PENDING, NULL, NULL,
			    0);
	else
		put_pending_from_list(f, s);

	put_family(f, "extalign_realigned_files_total", "counter",
		   "Late files rewritten with their extents aligned.");
	put_by_rule(f, s, "extalign_realigned_files_total", EA_STAT_REALIGNED_FILES, NULL, NULL,
		    c[EA_CNT_JOBS_DONE]);
	put_family(f, "extalign_realigned_bytes_total", "counter",
		   "Data bytes the realignment jobs rewrote (holes excluded).");
	put_by_rule(f, s, "extalign_realigned_bytes_total", EA_STAT_REALIGNED_BYTES, NULL, NULL,
		    c[EA_CNT_BYTES_REALIGNED]);

	put_family(f, "extalign_failures_total", "counter",
		   "Failures by reason: unsupported (the kernel kept no hint), hint (setting "
		   "it failed), io, late_list (queue full), realign, realign_skipped, watch.");
	if (s->n_rule_stats) {
		for (int k = EA_STAT_FAIL_FIRST; k < _EA_STAT_MAX; k++)
			put_by_rule(f, s, "extalign_failures_total", k, "reason",
				    ea_state_failure_reason(k), 0);
	} else {
		/* A daemon from before the reasons: its three sums. */
		fprintf(f, "extalign_failures_total{reason=\"unsupported\"} %" PRIu64 "\n",
			c[EA_CNT_UNSUPPORTED]);
		fprintf(f, "extalign_failures_total{reason=\"error\"} %" PRIu64 "\n",
			c[EA_CNT_ERRORS]);
		fprintf(f, "extalign_failures_total{reason=\"realign\"} %" PRIu64 "\n",
			c[EA_CNT_JOBS_FAILED]);
	}
	put_family(f, "extalign_skipped_total", "counter",
		   "Entries left alone on purpose: symlinks, hard links, devices, other mounts.");
	put_by_rule(f, s, "extalign_skipped_total", EA_STAT_SKIPPED, NULL, NULL, c[EA_CNT_SKIPPED]);
	put_counter(f, "extalign_event_overflows_total",
		    "Event queue overflows (fanotify or inotify); each costs a rescan.",
		    c[EA_CNT_OVERFLOWS]);
	put_counter(f, "extalign_rescans_total", "Trees walked after an overflow or a move.",
		    c[EA_CNT_RESCANS]);
	put_family(f, "extalign_event_backlog_peak_bytes", "gauge",
		   "Most bytes of fanotify records read ahead of the hinting at once; near "
		   "32 MiB, storms outrun the daemon and the kernel's queue overflows next.");
	fprintf(f, "extalign_event_backlog_peak_bytes %" PRIu64 "\n", c[EA_CNT_BACKLOG_PEAK]);
	put_counter(f, "extalign_reloads_total", "Configurations swapped in on reload.",
		    c[EA_CNT_RELOADS]);
	put_counter(f, "extalign_reload_failures_total",
		    "Configurations refused on reload; the old rules stayed.",
		    c[EA_CNT_RELOAD_FAILURES]);
	if (s->last_reload) {
		put_family(f, "extalign_last_reload_refused", "gauge",
			   "1 when the last reload was refused and the old rules are in use.");
		fprintf(f, "extalign_last_reload_refused %d\n",
			!strcmp(s->last_reload, "refused") ? 1 : 0);
	}

	put_bdev_gauge(f, "extalign_atomic_write_unit_min_bytes",
		       "Smallest atomic write unit of the block device under a watched "
		       "filesystem; 0 when it has none.",
		       bdevs, n_bdevs, false);
	put_bdev_gauge(f, "extalign_atomic_write_unit_max_bytes",
		       "Largest atomic write unit of the block device under a watched "
		       "filesystem; 0 when it has none.",
		       bdevs, n_bdevs, true);
	fflush(f);
	return ferror(f) ? -EIO : 0;
}
