// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalignd: the event loop.  One thread, one epoll: the fanotify (or
 * inotify) descriptor, a signalfd for SIGTERM/SIGINT/SIGHUP/SIGCHLD and a
 * timerfd for the watchdog, the state file and the realignment jobs.  The
 * timer is one-shot, armed for the earliest of those that is pending: an
 * idle daemon sleeps in epoll_wait() until something happens.
 *
 * main owns the loop and wires the parts, whose data flows one way:
 *	watch  kernel events -> "a new name in this directory"
 *	apply  name -> rule -> hint set, inheritance noted, or a late file
 *	jobs   late files -> realigned at idle time
 * None of them calls another; what one needs of another is a hook set here.
 * Everything the daemon knows lives in one struct daemon; there is no
 * global state (signals arrive on a signalfd).
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <syslog.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "apply.h"
#include "jobs.h"
#include "late.h"
#include "message-ids.h"
#include "util.h"
#include "watch.h"
#include "extalign/macro.h"
#include "extalign/realign.h"

#ifndef EXTALIGN_VERSION
#define EXTALIGN_VERSION "unknown"
#endif

/* systemd's StateDirectory=extalign, when not run by systemd. */
#define EA_PERSISTENT_DIR "/var/lib/extalign"

/* The state file and STATUS= are rewritten at most this often. */
#define STATE_MIN_INTERVAL_USEC 500000ULL
/* Late files listed in the state file; the counter has the total. */
#define STATE_LATE_MAX 1000

enum { EV_FANOTIFY = 1, EV_INOTIFY, EV_SIGNAL, EV_TIMER };

struct daemon {
	/* options */
	const char *config;
	const char *config_dir; /* NULL: none with --config, default otherwise */
	const char *state_dir;
	const char *persistent_dir; /* what must survive a reboot: the late list */
	bool no_realign;

	struct report report;
	struct ea_policy *policy;
	struct watch watch;
	struct apply apply;
	struct late_list late;
	struct jobs *jobs;

	int epoll_fd, signal_fd, timer_fd;
	int state_dir_fd;
	int persistent_dir_fd;

	uint64_t start_realtime_usec;
	uint64_t watchdog_usec;
	uint64_t last_watchdog_usec; /* monotonic, like the two below */
	uint64_t last_state_usec;
	uint64_t timer_at; /* when the timer fires; 0: disarmed */
	const char *phase;
	const char *last_reload; /* "ok", "refused"; NULL before any reload */

	/* Metrics: the devices under the marks, read again after a reload. */
	struct ea_prom_bdev *bdevs;
	size_t n_bdevs;
	bool bdevs_read;
	/* The last failure logged of each periodic write, so a full disk logs once. */
	int metrics_err, state_err, late_err;
};

#define log_msg(d, prio, ...) report_log(&(d)->report, prio, __VA_ARGS__)

/*
 * The outcome of a write the daemon repeats (state file every few seconds,
 * late list, metrics): a full or read-only disk fails it every time, so
 * warn once per error and say when it works again.
 */
static void log_rewrite(struct daemon *d, int *last_err, int r, const char *msgid, const char *path,
			const char *what)
{
	if (r < 0 && r != *last_err)
		log_id(&d->report.log, msgid, LOG_WARNING, NULL, path, r, "cannot write %s", what);
	else if (r == 0 && *last_err)
		log_full(&d->report.log, LOG_INFO, NULL, path, 0, "%s written again", what);
	*last_err = r;
}

static unsigned count_diag_errors(const struct ea_diags *diags)
{
	return (unsigned)diags->n;
}

static int policy_load(struct daemon *d, struct ea_policy **ret, struct ea_diags *diags)
{
	const char *dropins = d->config_dir;

	/* A file named with --config is the whole configuration. */
	if (!dropins && d->config)
		dropins = EA_POLICY_NO_DROPINS;
	return ea_policy_load(d->config, dropins, NULL, NULL, ret, diags);
}

static void log_diags(struct daemon *d, const struct ea_diags *diags)
{
	for (size_t i = 0; i < diags->n; i++) {
		const struct ea_diag *g = &diags->items[i];

		/* "file:line: message", as extalign policy check and compilers say it
		 * (and whole in the journal's MESSAGE=). */
		if (g->line)
			log_full(&d->report.log, LOG_ERR, NULL, NULL, 0, "%s:%u: %s", g->file,
				 g->line, g->msg);
		else
			log_full(&d->report.log, LOG_ERR, NULL, NULL, 0, "%s: %s", g->file, g->msg);
	}
}

/*
 * Every directory rule on its filesystem has its counters from the start,
 * at zero: a metric that appears only with its first event breaks rate()
 * and alerts on absent series.
 */
static void report_keys_of_rules(struct daemon *d)
{
	for (size_t i = 0; i < d->policy->n_rules; i++) {
		const struct ea_rule *rule = &d->policy->rules[i];
		_cleanup_close_ int fd = -1;
		struct stat st;

		if (rule->kind != EA_RULE_DIRECTORY)
			continue;
		fd = open_tree(rule->directory, O_PATH);
		if (fd >= 0 && fstat(fd, &st) == 0)
			(void)report_key(&d->report, rule->name, st.st_dev);
	}
}

static void set_policy(struct daemon *d, struct ea_policy *p)
{
	ea_policy_free(d->policy);
	d->policy = p;
	d->watch.policy = p;
	apply_set_policy(&d->apply, p);
	if (d->jobs)
		jobs_set_policy(d->jobs, p);
	d->bdevs_read = false;
	report_keys_of_rules(d);
}

static const char *watcher_name(const struct daemon *d)
{
	return d->watch.backend == EA_WATCH_INOTIFY ? "inotify" : "fanotify";
}

static void daemon_notify_status(struct daemon *d)
{
	const uint64_t *c = d->report.counters;

	/* Said first: "active (running)" alone would hide a rule that can do nothing. */
	char ro[64] = "";

	if (d->watch.n_readonly)
		snprintf(ro, sizeof(ro), "%zu %s READ-ONLY here (see the journal); ",
			 d->watch.n_readonly, PLURAL(d->watch.n_readonly, "tree", "trees"));
	sd_notifyf(0,
		   "STATUS=%s%s: %zu %s, %zu %s (%s), %" PRIu64 " hinted, %" PRIu64
		   " inherited, %" PRIu64 " late, %" PRIu64 " unsupported, %" PRIu64 " %s",
		   ro, d->phase, d->policy ? d->policy->n_rules : 0,
		   PLURAL(d->policy ? d->policy->n_rules : 0, "rule", "rules"), d->watch.n_marks,
		   PLURAL(d->watch.n_marks, "filesystem", "filesystems"), watcher_name(d),
		   c[EA_CNT_FILES_HINTED] + c[EA_CNT_DIRS_HINTED],
		   c[EA_CNT_FILES_INHERITED] + c[EA_CNT_DIRS_INHERITED], c[EA_CNT_FILES_LATE],
		   c[EA_CNT_UNSUPPORTED], c[EA_CNT_ERRORS],
		   PLURAL(c[EA_CNT_ERRORS], "error", "errors"));
}

/*
 * The metrics_file of [daemon]: the state in the Prometheus text format,
 * replaced atomically so that a collector never reads half of it.
 */
static void metrics_write(struct daemon *d, const struct ea_state *s)
{
	const char *path = d->policy ? d->policy->daemon.metrics_file : NULL;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (!path)
		return;
	if (!d->bdevs_read) {
		free(d->bdevs);
		d->bdevs = NULL;
		d->n_bdevs = 0;
		/* Without sysfs the counters are still worth writing. */
		(void)ea_state_mark_bdevs(s, NULL, &d->bdevs, &d->n_bdevs);
		d->bdevs_read = true;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		r = -ENOMEM;
	else {
		/* The last write on the way out: the file left behind says so. */
		r = ea_state_write_prometheus(f, s, strcmp(d->phase, "stopping") != 0, d->bdevs,
					      d->n_bdevs);
		/* buf and len are only valid after fclose(). */
		if (fclose(f) != 0 && r == 0)
			r = -ENOMEM;
	}
	if (r == 0)
		r = ea_file_replace(path, buf, len, 0644);
	log_rewrite(d, &d->metrics_err, r, MSGID_METRICS_UNWRITABLE, path, "the metrics file");
}

/* The counts per rule and filesystem, with the pending late files of each
 * (from the whole list: the state file shows only its newest entries). */
static int state_add_rule_stats(struct daemon *d, struct ea_state *s)
{
	struct report *rep = &d->report;

	for (size_t i = 0; i < rep->n_keys; i++)
		rep->keys[i].v[EA_STAT_LATE_PENDING] = 0;
	for (size_t i = 0; i < d->late.n; i++) {
		struct report_key *k;

		if (!ea_late_queue_pending(d->late.v[i].queue))
			continue;
		k = report_key(rep, d->late.v[i].rule, d->late.v[i].id.dev);
		if (!k)
			return -ENOMEM;
		k->v[EA_STAT_LATE_PENDING]++;
	}
	for (size_t i = 0; i < rep->n_keys; i++) {
		struct ea_state_rule_stats *rs =
			ea_state_rule_stats(s, rep->keys[i].rule, rep->keys[i].mountpoint);

		if (!rs)
			return -ENOMEM;
		/* Two devices at one mountpoint (one unmounted since): one sum. */
		for (int k = 0; k < _EA_STAT_MAX; k++)
			rs->v[k] += rep->keys[i].v[k];
	}
	return 0;
}

static int state_write(struct daemon *d)
{
	struct ea_state s = {
		.version = EA_STATE_VERSION,
		.pid = getpid(),
		.started_usec = d->start_realtime_usec,
		.updated_usec = now_usec(CLOCK_REALTIME),
		.rules = d->policy ? (unsigned)d->policy->n_rules : 0,
	};
	size_t first, n;
	int r = 0;

	if (d->state_dir_fd < 0 && !(d->policy && d->policy->daemon.metrics_file))
		return 0;
	memcpy(s.counters, d->report.counters, sizeof(s.counters));
	s.counters[EA_CNT_BACKLOG_PEAK] = d->watch.backlog.peak;
	s.config = strdup(d->config ? d->config : EA_POLICY_CONF);
	s.watcher = strdup(watcher_name(d));
	s.phase = strdup(d->phase);
	if (!s.config || !s.watcher || !s.phase)
		r = -ENOMEM;
	if (!r && d->last_reload && !(s.last_reload = strdup(d->last_reload)))
		r = -ENOMEM;
	for (size_t i = 0; !r && i < d->watch.n_marks; i++) {
		const struct fsmark *m = &d->watch.marks[i];

		r = ea_state_add_mark(&s, m->path, m->fstype, m->how);
	}
	/* The ring from oldest to newest. */
	n = d->report.n_errors_total < ERROR_RING ? d->report.n_errors_total : ERROR_RING;
	first = d->report.n_errors_total - n;
	for (size_t i = first; !r && i < d->report.n_errors_total; i++) {
		const struct ea_state_error *e = &d->report.errors[i % ERROR_RING];

		r = ea_state_add_error(&s, e->usec, e->err, e->rule, e->path, e->msg);
	}
	r = r ? r : state_add_rule_stats(d, &s);
	first = d->late.n > STATE_LATE_MAX ? d->late.n - STATE_LATE_MAX : 0;
	for (size_t i = first; !r && i < d->late.n; i++) {
		const struct late_file *l = &d->late.v[i];

		r = ea_state_add_late(&s, l->usec, l->rule, l->path, ea_late_queue_name(l->queue));
		if (!r && (l->reason[0] || l->total))
			r = ea_state_set_job(&s, l->reason, l->done, l->total);
	}
	if (!r)
		metrics_write(d, &s);
	if (!r && d->state_dir_fd >= 0)
		r = ea_state_write_at(d->state_dir_fd, EA_STATE_FILE, &s);
	ea_state_free(&s);
	log_rewrite(d, &d->state_err, r, MSGID_STATE_UNWRITABLE, d->state_dir, "the state file");
	return r;
}

#define LATE_FILE "late"

/*
 * The late list that must outlive the daemon (issue: a restart or reboot
 * forgot every file waiting for realignment): the entries not finished, in
 * the state file's format, replaced atomically under the persistent
 * directory.  Only rule and path are kept; the file's identity and hint are
 * established again at load, from the disk and the rules of that time.
 */
static void late_save(struct daemon *d)
{
	struct ea_state s = { .version = EA_STATE_VERSION, .pid = getpid() };
	int r = 0;

	if (d->persistent_dir_fd < 0)
		return;
	for (size_t i = 0; !r && i < d->late.n; i++) {
		const struct late_file *l = &d->late.v[i];

		/* A job that ran is queued again after a restart. */
		if (ea_late_queue_pending(l->queue))
			r = ea_state_add_late(&s, l->usec, l->rule, l->path,
					      ea_late_queue_name(l->queue == EA_LATE_RUNNING
									 ? EA_LATE_QUEUED
									 : l->queue));
	}
	if (!r)
		r = ea_state_write_at(d->persistent_dir_fd, LATE_FILE, &s);
	ea_state_free(&s);
	log_rewrite(d, &d->late_err, r, MSGID_STATE_UNWRITABLE, d->persistent_dir, "the late list");
}

/*
 * One saved entry back into the list, if it still is what it was: its rule
 * exists, the path lies under the rule's directory, its directory opens
 * without a symlink anywhere, and the name is a regular file with one link.
 */
static int late_restore_one(struct daemon *d, const struct ea_state_late *e)
{
	const struct ea_rule *rule = NULL;
	_cleanup_free_ char *dir = strdup(e->path);
	_cleanup_close_ int dfd = -1;
	struct ea_hint h;
	struct stat st;
	size_t len, index;
	char *slash;
	int r;

	if (!dir)
		return -ENOMEM;
	for (size_t i = 0; i < d->policy->n_rules && !rule; i++)
		if (!strcmp(d->policy->rules[i].name, e->rule))
			rule = &d->policy->rules[i];
	if (!rule || rule->kind != EA_RULE_DIRECTORY || !ea_rule_hint(rule, false, &h))
		return 0; /* the rule is gone or changed kind */
	len = strlen(rule->directory);
	if (strncmp(e->path, rule->directory, len) || e->path[len] != '/')
		return 0;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir || !name_is_component(slash + 1))
		return 0;
	*slash = 0;
	dfd = open_tree(dir, O_PATH);
	if (dfd < 0)
		return 0; /* gone, or a symlink now: not ours */
	if (fstatat(dfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 1)
		return 0;
	r = late_add(&d->late, (struct file_id){ st.st_dev, st.st_ino }, rule->name, e->path,
		     h.extsize, h.forcealign, d->policy->daemon.realign_queue_max, &index);
	if (r <= 0)
		return r;
	d->late.v[index].usec = e->usec;
	if (rule->realign && d->policy->daemon.realign && !d->no_realign)
		jobs_queue(d->jobs, index);
	return 1;
}

static void late_load(struct daemon *d)
{
	struct ea_state s = { 0 };
	unsigned n = 0;
	int r;

	if (d->persistent_dir_fd < 0)
		return;
	r = ea_state_read_at(d->persistent_dir_fd, LATE_FILE, &s, NULL);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		log_full(&d->report.log, LOG_WARNING, NULL, d->persistent_dir, r,
			 "cannot read the saved late list, starting without it");
		return;
	}
	for (size_t i = 0; i < s.n_late; i++)
		if (late_restore_one(d, &s.late[i]) > 0)
			n++;
	ea_state_free(&s);
	if (n)
		log_msg(d, LOG_INFO, "%u late files from before the restart listed again", n);
}

/* State file and STATUS= now, whether or not anything changed. */
static void publish(struct daemon *d)
{
	state_write(d);
	late_save(d);
	daemon_notify_status(d);
	d->report.dirty = false;
	d->last_state_usec = now_usec(CLOCK_MONOTONIC);
}

static void reload(struct daemon *d)
{
	struct ea_diags diags = EA_DIAGS_INIT;
	struct ea_policy *p = NULL;
	int r;

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_usec(CLOCK_MONOTONIC));
	d->phase = "reloading";
	log_msg(d, LOG_INFO, "reloading the configuration");
	r = policy_load(d, &p, &diags);
	if (r < 0) {
		unsigned n = count_diag_errors(&diags);

		/* Each line into the errors extalign status shows, not only the log. */
		for (size_t i = 0; i < diags.n; i++) {
			const struct ea_diag *g = &diags.items[i];
			char line[16] = "";

			if (g->line)
				snprintf(line, sizeof(line), ":%u", g->line);
			report_error_id(&d->report, MSGID_RELOAD_REFUSED, _EA_STAT_MAX, NULL, 0,
					NULL, 0, "%s%s: %s", g->file, line, g->msg);
		}
		ea_diags_free(&diags);
		report_error_id(&d->report, MSGID_RELOAD_REFUSED, _EA_STAT_MAX, NULL, 0,
				d->config ? d->config : EA_POLICY_CONF, r,
				"new configuration has %u %s, keeping the old rules", n,
				PLURAL(n, "error", "errors"));
		d->report.counters[EA_CNT_RELOAD_FAILURES]++;
		d->last_reload = "refused";
		d->phase = "running";
		publish(d);
		/* After publish(): this STATUS= is the one a watcher should see. */
		sd_notifyf(0, "READY=1\nSTATUS=reload failed (%u %s), old rules kept: %zu %s", n,
			   PLURAL(n, "error", "errors"), d->policy->n_rules,
			   PLURAL(d->policy->n_rules, "rule", "rules"));
		return;
	}
	ea_diags_free(&diags);
	set_policy(d, p);
	watch_setup(&d->watch);
	watch_prune(&d->watch);
	/* New rules may cover directories that exist already. */
	apply_rescan(&d->apply, false);
	d->report.counters[EA_CNT_RELOADS]++;
	d->last_reload = "ok";
	d->phase = "running";
	log_msg(d, LOG_INFO, "configuration reloaded: %zu %s", p->n_rules,
		PLURAL(p->n_rules, "rule", "rules"));
	publish(d);
	sd_notify(0, "READY=1");
}

static int epoll_add(int ep, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? negative_errno() : 0;
}

static int setup_loop(struct daemon *d, sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
	sigaddset(mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, mask, NULL) < 0)
		return negative_errno();
	/* A job's pipe closing must be an error return, not death. */
	signal(SIGPIPE, SIG_IGN);
	d->signal_fd = signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->signal_fd < 0 || d->epoll_fd < 0 || d->timer_fd < 0)
		return negative_errno();
	if (epoll_add(d->epoll_fd, d->signal_fd, EV_SIGNAL) < 0 ||
	    epoll_add(d->epoll_fd, d->timer_fd, EV_TIMER) < 0)
		return negative_errno();
	return 0;
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return !a ? b : !b ? a : a < b ? a : b;
}

/*
 * Arm the timer for the next thing that is due, or disarm it: the watchdog
 * (twice per WatchdogSec=), a state file to rewrite (at most every
 * STATE_MIN_INTERVAL_USEC), and whatever the jobs wait for.  Called after
 * every round of the loop; the system call only when the time changed.
 */
static void arm_timer(struct daemon *d)
{
	uint64_t now = now_usec(CLOCK_MONOTONIC), at = jobs_next_wakeup(d->jobs, now);
	struct itimerspec its = { 0 };

	if (d->report.dirty)
		at = earliest(at, d->last_state_usec + STATE_MIN_INTERVAL_USEC);
	if (d->watchdog_usec)
		at = earliest(at, d->last_watchdog_usec + d->watchdog_usec / 2);
	if (at == d->timer_at)
		return;
	if (at) {
		its.it_value.tv_sec = (time_t)(at / 1000000);
		its.it_value.tv_nsec = (long)(at % 1000000) * 1000;
	}
	/* A time in the past fires at once; { 0, 0 } disarms. */
	if (timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		report_error(&d->report, _EA_STAT_MAX, NULL, 0, NULL, negative_errno(),
			     "cannot arm the timer");
		return;
	}
	d->timer_at = at;
}

static void on_timer(struct daemon *d)
{
	uint64_t now = now_usec(CLOCK_MONOTONIC), expirations;

	if (read(d->timer_fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return;
	d->timer_at = 0; /* fired: arm_timer() sets it again */
	if (d->watchdog_usec && now - d->last_watchdog_usec >= d->watchdog_usec / 2) {
		sd_notify(0, "WATCHDOG=1");
		d->last_watchdog_usec = now;
	}
	switch (jobs_tick(d->jobs)) {
	case JOBS_IDLE_SCAN:
		apply_realign_scan(&d->apply);
		/* fall through */
	case JOBS_IDLE:
		jobs_start(d->jobs);
		break;
	case JOBS_WAIT:
		break;
	}
	if (d->report.dirty && now - d->last_state_usec >= STATE_MIN_INTERVAL_USEC)
		publish(d);
}

/* Returns true when the daemon is to stop. */
static bool on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			stop = true;
			break;
		case SIGHUP:
			reload(d);
			break;
		case SIGCHLD:
			jobs_reap(d->jobs);
			break;
		}
	}
	return stop;
}

static int run(struct daemon *d)
{
	for (;;) {
		struct epoll_event evs[8];
		bool fan_ready = false;
		int n;

		arm_timer(d);
		/* Records already read are work to do: only look, do not sleep. */
		n = epoll_wait(d->epoll_fd, evs, (int)ARRAY_SIZE(evs),
			       watch_backlog_pending(&d->watch) ? 0 : -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return negative_errno();
		}
		for (int i = 0; i < n; i++) {
			int r = 0;

			switch (evs[i].data.u64) {
			case EV_FANOTIFY:
				fan_ready = true; /* read below, with the backlog */
				break;
			case EV_INOTIFY:
				r = watch_inotify_read(&d->watch);
				break;
			case EV_TIMER:
				on_timer(d);
				break;
			case EV_SIGNAL:
				if (on_signal(d))
					return 0;
				break;
			}
			if (r < 0)
				report_error(&d->report, EA_STAT_FAIL_WATCH, NULL, 0, NULL, r,
					     "reading events failed");
		}
		/* New events, or records read before and not handled yet (the
		 * kernel's queue may be empty while ours is not). */
		if (fan_ready || watch_backlog_pending(&d->watch)) {
			int r = watch_fanotify_read(&d->watch);

			if (r < 0)
				report_error(&d->report, EA_STAT_FAIL_WATCH, NULL, 0, NULL, r,
					     "reading events failed");
		}
		if (d->watch.rescan_pending) {
			d->watch.rescan_pending = false;
			apply_rescan(&d->apply, true);
		}
	}
}

/* ---- the wiring: each part's hooks, answered by the part that knows ---- */

static void on_name(void *userdata, const struct new_name *n)
{
	struct daemon *d = userdata;

	apply_name(&d->apply, n);
}

static bool file_busy(void *userdata, struct file_id id)
{
	struct daemon *d = userdata;

	return jobs_running_on(d->jobs, id);
}

static bool job_replaced(void *userdata, struct file_id id, const char *path)
{
	struct daemon *d = userdata;

	return jobs_replaced(d->jobs, id, path);
}

static void dir_seen(void *userdata, int dirfd, const char *path)
{
	struct daemon *d = userdata;

	watch_inotify_add_tree(&d->watch, dirfd, path);
}

static void late_listed(void *userdata, size_t index)
{
	struct daemon *d = userdata;

	jobs_queue(d->jobs, index);
}

static const struct fsmark *fs_of(void *userdata, dev_t dev)
{
	struct daemon *d = userdata;

	return watch_find_dev(&d->watch, dev);
}

static void wire(struct daemon *d)
{
	d->watch.report = &d->report;
	d->watch.on_name = on_name;
	d->watch.userdata = d;
	d->apply.report = &d->report;
	d->apply.late = &d->late;
	d->apply.no_realign = d->no_realign;
	d->apply.start_realtime_usec = d->start_realtime_usec;
	d->apply.hooks = (struct apply_hooks){
		.userdata = d,
		.busy = file_busy,
		.replaced = job_replaced,
		.dir_seen = dir_seen,
		.late_listed = late_listed,
		.fs_of = fs_of,
	};
}

static void usage(FILE *out)
{
	fputs("Usage: extalignd [OPTIONS]\n\n"
	      "Give new files under extalign.conf rules their extent size hints.\n\n"
	      "  -c, --config FILE      configuration file (only this file, no drop-ins)\n"
	      "      --config-dir DIR   drop-in directory to read as well\n"
	      "  -f, --foreground       stay in the foreground (extalignd never forks)\n"
	      "      --state-dir DIR    where the state file goes (" EA_STATE_DIR ")\n"
	      "      --persistent-dir DIR  where the late list and realignment records are kept\n"
	      "                         ($STATE_DIRECTORY, else " EA_PERSISTENT_DIR ")\n"
	      "      --watch BACKEND    auto, fanotify or inotify (overrides [daemon] watch)\n"
	      "      --log-target T     auto, journal or stderr\n"
	      "      --no-realign       list late files but never rewrite them\n"
	      "      --check-config     load the configuration, report, exit\n"
	      "  -v, --verbose          log every file handled\n"
	      "  -h, --help             this text\n"
	      "  -V, --version          version\n",
	      out);
}

static void daemon_free(struct daemon *d)
{
	jobs_free(d->jobs);
	d->jobs = NULL;
	watch_teardown(&d->watch);
	late_free(&d->late);
	apply_free(&d->apply);
	report_free(&d->report);
	ea_policy_free(d->policy);
	d->policy = NULL;
	free(d->bdevs);
	d->bdevs = NULL;
	closep(&d->watch.proc_fd);
	d->apply.proc_fd = -1; /* the same descriptor */
	closep(&d->epoll_fd);
	closep(&d->signal_fd);
	closep(&d->timer_fd);
	closep(&d->state_dir_fd);
	closep(&d->persistent_dir_fd);
}

/*
 * One daemon per directory: two would overwrite each other's state file and
 * late list, and race on every new file.  The lock is on the directory
 * itself (flock() works on a directory's descriptor), so there is no lock
 * file to leave behind, and the kernel drops it when the daemon dies.
 */
static int lock_dir(struct daemon *d, int fd, const char *path)
{
	struct ea_state s = { 0 };

	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return negative_errno();
	/* The holder's pid, from its state file when it is there. */
	if (d->state_dir_fd >= 0 &&
	    ea_state_read_at(d->state_dir_fd, EA_STATE_FILE, &s, NULL) == 0 && s.pid > 0)
		log_id(&d->report.log, MSGID_ALREADY_RUNNING, LOG_ERR, NULL, NULL, 0,
		       "another extalignd (pid %d) is using %s, not starting", (int)s.pid, path);
	else
		log_id(&d->report.log, MSGID_ALREADY_RUNNING, LOG_ERR, NULL, NULL, 0,
		       "another extalignd is using %s, not starting", path);
	ea_state_free(&s);
	return -EBUSY;
}

static int open_dir(const char *path, mode_t mode, bool trusted, int *ret)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return negative_errno();
	if (trusted) {
		*ret = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return *ret < 0 ? negative_errno() : 0;
	}
	*ret = open_tree(path, O_RDONLY);
	return *ret < 0 ? *ret : 0;
}

/*
 * The persistent directory's late list names files the daemon, as root,
 * will realign after a restart: a directory others can write would let them
 * choose those files.  -EPERM unless only our user can write it.
 */
static int check_private_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	return st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH)) ? 0 : -EPERM;
}

/* -EBUSY when another daemon has one of them; other errors only cost a feature. */
static int open_state_dirs(struct daemon *d)
{
	int r;

	r = open_dir(d->state_dir, 0755, false, &d->state_dir_fd);
	if (r < 0)
		log_full(&d->report.log, LOG_WARNING, NULL, d->state_dir, r,
			 "no state file: extalign status will not see this daemon");
	else if (lock_dir(d, d->state_dir_fd, d->state_dir) == -EBUSY)
		return -EBUSY;
	/* Named by the admin or systemd (StateDirectory= with DynamicUser= is
	 * a symlink into /var/lib/private): opened as given. */
	r = open_dir(d->persistent_dir, 0700, true, &d->persistent_dir_fd);
	if (r == 0 && (r = check_private_dir(d->persistent_dir_fd)) < 0) {
		log_full(&d->report.log, LOG_WARNING, NULL, d->persistent_dir, 0,
			 "the late list is not kept here: it names files to realign after a "
			 "restart, so its directory must be owned by this daemon's user and "
			 "writable by no one else (chmod 0700)");
		closep(&d->persistent_dir_fd);
	} else if (r < 0)
		log_full(&d->report.log, LOG_WARNING, NULL, d->persistent_dir, r,
			 "the late list will not survive a restart");
	else if (lock_dir(d, d->persistent_dir_fd, d->persistent_dir) == -EBUSY)
		return -EBUSY;
	return 0;
}

/* One fd per inotify watch and per filesystem: use all we may have. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	enum {
		OPT_CONFIG_DIR = 256,
		OPT_STATE_DIR,
		OPT_PERSISTENT_DIR,
		OPT_WATCH,
		OPT_LOG,
		OPT_NO_REALIGN,
		OPT_CHECK,
	};
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "config-dir", required_argument, NULL, OPT_CONFIG_DIR },
		{ "foreground", no_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "persistent-dir", required_argument, NULL, OPT_PERSISTENT_DIR },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "log-target", required_argument, NULL, OPT_LOG },
		{ "no-realign", no_argument, NULL, OPT_NO_REALIGN },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct daemon d = {
		.state_dir = EA_STATE_DIR,
		.epoll_fd = -1,
		.signal_fd = -1,
		.timer_fd = -1,
		.watch = { .fan_fd = -1, .ino_fd = -1, .proc_fd = -1, .last_dir = { .fd = -1 } },
		.apply = { .proc_fd = -1 },
		.state_dir_fd = -1,
		.persistent_dir_fd = -1,
		.phase = "starting",
	};
	struct ea_diags diags = EA_DIAGS_INIT;
	struct ea_policy *p = NULL;
	_cleanup_free_ char *config_abs = NULL, *persistent_env = NULL, *realign_dir = NULL;
	const char *log_target = NULL;
	bool verbose = false, check = false;
	sigset_t mask;
	int c, r;

	while ((c = getopt_long(argc, argv, "c:fvhV", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			d.config = optarg;
			break;
		case OPT_CONFIG_DIR:
			d.config_dir = optarg;
			break;
		case 'f':
			break;
		case OPT_STATE_DIR:
			d.state_dir = optarg;
			break;
		case OPT_PERSISTENT_DIR:
			d.persistent_dir = optarg;
			break;
		case OPT_WATCH:
			if (strcmp(optarg, "auto") && strcmp(optarg, "fanotify") &&
			    strcmp(optarg, "inotify")) {
				fprintf(stderr, "extalignd: --watch: auto, fanotify or inotify\n");
				return 2;
			}
			d.watch.force_watch = optarg;
			break;
		case OPT_LOG:
			if (!log_target_valid(optarg)) {
				fprintf(stderr,
					"extalignd: --log-target: '%s': auto, journal or stderr\n",
					optarg);
				return 2;
			}
			log_target = optarg;
			break;
		case OPT_NO_REALIGN:
			d.no_realign = true;
			break;
		case OPT_CHECK:
			check = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("extalignd %s\n", EXTALIGN_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "extalignd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!d.persistent_dir) {
		/* systemd's StateDirectory=; the first when it names several. */
		const char *e = getenv("STATE_DIRECTORY");

		if (e && e[0] == '/') {
			persistent_env = strndup(e, strcspn(e, ":"));
			d.persistent_dir = persistent_env;
		}
		if (!d.persistent_dir)
			d.persistent_dir = EA_PERSISTENT_DIR;
	}
	/*
	 * The engine's records go with the late list, under the directory
	 * given or systemd's: not to a fixed path the unit may not even have
	 * (with the default, the same as "extalign realign" uses).
	 */
	if (asprintf(&realign_dir, "%s/realign", d.persistent_dir) < 0) {
		fprintf(stderr, "extalignd: out of memory\n");
		return 1;
	}
	/* Absolute, so that status shows something usable from anywhere. */
	if (d.config && d.config[0] != '/') {
		config_abs = realpath(d.config, NULL);
		if (config_abs)
			d.config = config_abs;
	}
	log_setup(&d.report.log, log_target, verbose);
	d.start_realtime_usec = now_usec(CLOCK_REALTIME);
	wire(&d);

	r = policy_load(&d, &p, &diags);
	if (r < 0) {
		log_diags(&d, &diags);
		log_id(&d.report.log, MSGID_CONFIG_REFUSED, LOG_ERR, NULL,
		       d.config ? d.config : EA_POLICY_CONF, r,
		       "configuration has %u %s, not starting", count_diag_errors(&diags),
		       PLURAL(count_diag_errors(&diags), "error", "errors"));
		ea_diags_free(&diags);
		return 1;
	}
	set_policy(&d, p);
	if (check) {
		printf("%s: %zu %s, %zu %s to watch\n", d.config ? d.config : EA_POLICY_CONF,
		       p->n_rules, PLURAL(p->n_rules, "rule", "rules"), p->n_watch,
		       PLURAL(p->n_watch, "tree", "trees"));
		daemon_free(&d);
		return 0;
	}

	raise_nofile();
	r = setup_loop(&d, &mask);
	if (r < 0) {
		log_full(&d.report.log, LOG_ERR, NULL, NULL, r, "cannot set up the event loop");
		goto out;
	}
	r = open_state_dirs(&d);
	if (r < 0)
		goto out;
	/* Without it (no procfs), the same through /proc/self/fd paths. */
	r = proc_fd_open();
	d.watch.proc_fd = d.apply.proc_fd = r < 0 ? -1 : r;
	d.jobs = jobs_new(&d.late, &d.report, d.no_realign, realign_dir);
	if (!d.jobs) {
		r = -ENOMEM;
		goto out;
	}
	jobs_set_policy(d.jobs, d.policy);
	if (!d.no_realign) {
		unsigned removed = 0;

		/* A job killed with the previous daemon may have left its
		 * named copy behind; the engine's records say where. */
		r = ea_realign_cleanup(realign_dir, &removed);
		if (r < 0)
			log_full(&d.report.log, LOG_WARNING, NULL, realign_dir, r,
				 "cannot clean up after interrupted realignment jobs");
		else if (removed)
			log_msg(&d, LOG_NOTICE,
				"removed %u leftovers of interrupted realignment jobs", removed);
	}
	r = watch_setup(&d.watch);
	if (d.watch.fan_fd < 0 && d.watch.ino_fd < 0)
		goto out; /* not watching anything at all: systemd should know */
	d.apply.inotify = d.watch.backend == EA_WATCH_INOTIFY;
	if (d.watch.fan_fd >= 0)
		epoll_add(d.epoll_fd, d.watch.fan_fd, EV_FANOTIFY);
	if (d.watch.ino_fd >= 0)
		epoll_add(d.epoll_fd, d.watch.ino_fd, EV_INOTIFY);
	if (sd_watchdog_enabled(0, &d.watchdog_usec) <= 0)
		d.watchdog_usec = 0;
	d.last_watchdog_usec = now_usec(CLOCK_MONOTONIC);

	/*
	 * Marks first, then the scan: nothing made in between is missed.  With
	 * fanotify the marks are the watching, so READY=1 comes before a scan
	 * of possibly large trees (no start timeout); inotify watches are
	 * added by the scan itself.
	 */
	/* Before the first publish(), which saves the list again. */
	late_load(&d);
	if (d.watch.backend == EA_WATCH_FANOTIFY) {
		d.phase = "scanning";
		publish(&d);
		sd_notify(0, "READY=1");
	}
	apply_rescan(&d.apply, false);
	d.phase = "running";
	log_msg(&d, LOG_INFO, "watching %zu %s with %s for %zu %s", d.watch.n_marks,
		PLURAL(d.watch.n_marks, "filesystem", "filesystems"), watcher_name(&d),
		d.policy->n_rules, PLURAL(d.policy->n_rules, "rule", "rules"));
	publish(&d);
	if (d.watch.backend == EA_WATCH_INOTIFY)
		sd_notify(0, "READY=1");

	r = run(&d);
	sd_notify(0, "STOPPING=1");
	d.phase = "stopping";
	jobs_stop_all(d.jobs);
	publish(&d);
	log_msg(&d, LOG_INFO, "stopped");
out:
	daemon_free(&d);
	return r < 0 ? 1 : 0;
}
