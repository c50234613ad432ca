// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Realignment of late files, only while the machine is idle.
 *
 * A job is one file, rewritten by ea_realign_file() in a child process so
 * that the event loop keeps serving events while data is copied, and so
 * that stopping a job is closing a pipe: the child's cancel callback sees
 * the hang-up and the library leaves the file untouched.  At most one job
 * runs per physical disk, so two rewrites never compete for one spindle or
 * flash queue.  Idleness is sampled every idle_poll: I/O pressure, the busy
 * share of the file's disk and the load per CPU must all stay under their
 * limits for idle_time before a job starts; any of them failing stops the
 * running jobs (they are queued again).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>

#include "jobs.h"
#include "message-ids.h"
#include "extalign/macro.h"
#include "extalign/realign.h"

struct job {
	pid_t pid;
	int cancel_fd; /* write end; closing it cancels the child */
	int result_fd; /* read end; the child writes progress and its outcome */
	size_t late;   /* index into the late list */
	bool ended;    /* the child's outcome came, in rc */
	int rc;
	int skip; /* enum ea_realign_skip, when rc is EA_REALIGN_SKIPPED */
	uint64_t copied;
	uint64_t ino_after;
	dev_t disk;
};

/* What a child writes on its result pipe: progress now and then (dropped
 * when the pipe is full), then its outcome.  Smaller than PIPE_BUF, so
 * every write is whole. */
struct job_msg {
	int32_t final; /* 1: rc is the outcome */
	int32_t rc;
	int32_t skip;  /* final: enum ea_realign_skip, why it was skipped */
	int32_t phase; /* enum ea_realign_phase */
	uint64_t done, total;
	uint64_t copied;    /* final: data bytes the job rewrote */
	uint64_t ino_after; /* final: the inode now under the name */
};

struct disk_sample {
	dev_t disk;
	uint64_t io_ticks_ms; /* /proc/diskstats: time spent doing I/O */
	uint64_t at_usec;
	double busy; /* percent, over the last poll interval */
};

struct jobs {
	const struct ea_policy *policy;
	struct late_list *late;
	struct report *report;
	bool no_realign;
	const char *realign_dir; /* the engine's records: <persistent dir>/realign */
	/* The inodes jobs put under their files' names, until the rename's
	 * event came: the daemon's own work, not a new file. */
	struct file_id replaced[64];
	size_t n_replaced;
	size_t *queue; /* indices into the late list, oldest first */
	size_t n_queue;
	struct job *run;
	size_t n_run;
	struct disk_sample *disks;
	size_t n_disks;
	uint64_t idle_since; /* monotonic usec; 0: not idle */
	uint64_t last_poll;  /* the last idleness sample */
	uint64_t next_poll;
	uint64_t next_scan; /* monotonic usec of the next realign scan */
	bool scan_rules;    /* some rule has realign = yes: scans are due */
	bool off_said;	    /* the queue was told realignment is off */
};

/* Progress of running jobs is read this often for extalign status. */
#define JOBS_PROGRESS_USEC 200000ULL

struct jobs *jobs_new(struct late_list *late, struct report *report, bool no_realign,
		      const char *realign_dir)
{
	struct jobs *J = calloc(1, sizeof(*J));

	if (J)
		*J = (struct jobs){ .late = late,
				    .report = report,
				    .no_realign = no_realign,
				    .realign_dir = realign_dir };
	return J;
}

void jobs_set_policy(struct jobs *J, const struct ea_policy *p)
{
	J->policy = p;
	J->scan_rules = false;
	if (p->daemon.realign && !J->no_realign)
		for (size_t i = 0; i < p->n_rules; i++)
			if (p->rules[i].kind == EA_RULE_DIRECTORY && p->rules[i].realign)
				J->scan_rules = true;
	/* New limits and switches: look again at once. */
	J->next_poll = 0;
	J->off_said = false;
}

static void job_close(struct job *j)
{
	closep(&j->cancel_fd);
	closep(&j->result_fd);
}

void jobs_free(struct jobs *J)
{
	if (!J)
		return;
	for (size_t i = 0; i < J->n_run; i++)
		job_close(&J->run[i]);
	free(J->queue);
	free(J->run);
	free(J->disks);
	free(J);
}

void jobs_queue(struct jobs *J, size_t late_index)
{
	size_t *v;

	if (!J)
		return;
	v = realloc(J->queue, (J->n_queue + 1) * sizeof(*v));
	if (!v)
		return;
	J->queue = v;
	v[J->n_queue++] = late_index;
	J->late->v[late_index].queue = EA_LATE_QUEUED;
	J->off_said = false; /* the new entry wants its reason too */
}

/* The whole disk a filesystem's device belongs to: a partition's parent. */
static dev_t whole_disk(dev_t dev)
{
	char p[PATH_MAX], real[PATH_MAX], *slash;
	unsigned maj, min;
	FILE *f;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/partition", major(dev), minor(dev));
	if (access(p, F_OK) < 0)
		return dev;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u", major(dev), minor(dev));
	if (!realpath(p, real))
		return dev;
	slash = strrchr(real, '/');
	if (!slash)
		return dev;
	snprintf(slash, sizeof(real) - (size_t)(slash - real), "/dev");
	f = fopen(real, "re");
	if (!f)
		return dev;
	if (fscanf(f, "%u:%u", &maj, &min) != 2)
		maj = major(dev), min = minor(dev);
	fclose(f);
	return makedev(maj, min);
}

/*
 * Milliseconds the disk has spent doing I/O, from sysfs rather than
 * /proc/diskstats: the unit's ProcSubset=pid hides the latter.
 */
static int disk_io_ticks(dev_t disk, uint64_t *ret)
{
	unsigned long long v[10];
	char p[64];
	int r = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/stat", major(disk), minor(disk));
	f = fopen(p, "re");
	if (!f)
		return negative_errno();
	if (fscanf(f, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) != 10)
		r = -EBADMSG;
	else
		*ret = v[9]; /* io_ticks */
	fclose(f);
	return r;
}

static double io_pressure(void)
{
	double avg10 = 0;
	FILE *f = fopen("/proc/pressure/io", "re");

	/* No PSI (kernel without it, or ProcSubset=pid): disk busy-ness and
	 * load still decide. */
	if (!f)
		return 0;
	if (fscanf(f, "some avg10=%lf", &avg10) != 1)
		avg10 = 0;
	fclose(f);
	return avg10;
}

/* sysinfo(), not getloadavg(): /proc/loadavg is hidden by ProcSubset=pid. */
static double load_per_cpu(void)
{
	struct sysinfo si;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (sysinfo(&si) < 0 || cpus <= 0)
		return 0;
	return (double)si.loads[0] / (double)(1 << SI_LOAD_SHIFT) / (double)cpus;
}

static struct disk_sample *disk_sample(struct jobs *J, dev_t disk, uint64_t now)
{
	struct disk_sample *s = NULL, *v;
	uint64_t ticks;

	for (size_t i = 0; i < J->n_disks; i++)
		if (J->disks[i].disk == disk)
			s = &J->disks[i];
	if (!s) {
		v = realloc(J->disks, (J->n_disks + 1) * sizeof(*v));
		if (!v)
			return NULL;
		J->disks = v;
		s = &v[J->n_disks++];
		*s = (struct disk_sample){ .disk = disk };
	}
	if (disk_io_ticks(disk, &ticks) < 0) {
		s->busy = 0; /* loop files, virtual devices: no statistics */
		return s;
	}
	if (s->at_usec && now > s->at_usec)
		s->busy = 100.0 * (double)(ticks - s->io_ticks_ms) * 1000 /
			  (double)(now - s->at_usec);
	s->io_ticks_ms = ticks;
	s->at_usec = now;
	return s;
}

static bool disk_has_job(const struct jobs *J, dev_t disk)
{
	for (size_t i = 0; i < J->n_run; i++)
		if (J->run[i].disk == disk)
			return true;
	return false;
}

static bool in_window(const struct jobs *J)
{
	time_t t = time(NULL);
	struct tm tm;

	if (!localtime_r(&t, &tm))
		return true;
	return ea_daemon_in_window(&J->policy->daemon, (unsigned)(tm.tm_hour * 60 + tm.tm_min));
}

struct child_ctx {
	int cancel_fd; /* read end of the parent's cancel pipe */
	int result_fd; /* write end of the result pipe, O_NONBLOCK */
};

/* The child's cancel callback: the parent closed its end, or died. */
static bool child_cancelled(void *userdata)
{
	struct child_ctx *c = userdata;
	struct pollfd p = { .fd = c->cancel_fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* Progress for extalign status; a full pipe drops it rather than wait. */
static void child_progress(void *userdata, const struct ea_realign_progress *p)
{
	struct child_ctx *c = userdata;
	struct job_msg m = { .phase = (int32_t)p->phase, .done = p->done, .total = p->total };

	if (p->phase != EA_PHASE_COPY && p->phase != EA_PHASE_VERIFY)
		return;
	if (write(c->result_fd, &m, sizeof(m)) < 0) {
		/* EAGAIN: the parent reads at its next tick. */
	}
}

/*
 * In the child: open the file's directory refusing symlinks, make it the
 * working directory (this process is ours alone) so the path-based library
 * call resolves one last component, and check it is still the late file.
 */
static int child_run(const struct jobs *J, const struct late_file *l, struct child_ctx *ctx,
		     struct job_msg *m)
{
	_cleanup_free_ char *dir = strdup(l->path);
	_cleanup_close_ int dfd = -1;
	struct ea_realign_opts o;
	struct ea_realign_result res = { 0 };
	struct ea_ratelimit rl;
	const char *base;
	struct stat st;
	char *slash;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -EINVAL;
	*slash = 0;
	base = slash + 1;
	dfd = open_tree(dir, O_RDONLY);
	if (dfd < 0)
		return dfd;
	if (fchdir(dfd) < 0)
		return negative_errno();
	if (fstatat(AT_FDCWD, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return negative_errno();
	if (st.st_dev != l->id.dev || st.st_ino != l->id.ino)
		return -ESTALE; /* renamed or replaced since it was listed */
	if (J->policy->daemon.realign_max_file_size &&
	    (uint64_t)st.st_size > J->policy->daemon.realign_max_file_size)
		return -EFBIG;

	ea_realign_opts_init(&o, l->extsize);
	o.forcealign = l->forcealign;
	o.dev = l->id.dev;
	o.state_dir = J->realign_dir;
	o.cancel = child_cancelled;
	o.progress = child_progress;
	o.userdata = ctx;
	if (J->policy->daemon.realign_max_time_usec)
		o.deadline_ns = now_usec(CLOCK_MONOTONIC) * 1000 +
				J->policy->daemon.realign_max_time_usec * 1000;
	if (J->policy->daemon.realign_bwlimit) {
		ea_ratelimit_init(&rl, J->policy->daemon.realign_bwlimit,
				  now_usec(CLOCK_MONOTONIC) * 1000);
		o.ratelimit = &rl;
	}
	if (ea_realign_file(base, &o, &res) < 0)
		return -EINVAL;
	m->copied = res.bytes_copied;
	m->ino_after = res.ino_after;
	m->skip = (int32_t)res.skip;
	return (int)res.outcome;
}

static void job_start(struct jobs *J, size_t qi, dev_t disk)
{
	struct late_file *l = &J->late->v[J->queue[qi]];
	int cancel[2], result[2];
	struct job *v;
	pid_t pid;

	if (pipe2(cancel, O_CLOEXEC) < 0)
		return;
	if (pipe2(result, O_CLOEXEC) < 0) {
		close(cancel[0]);
		close(cancel[1]);
		return;
	}
	v = realloc(J->run, (J->n_run + 1) * sizeof(*v));
	if (!v)
		goto fail;
	J->run = v;
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		struct child_ctx ctx = { cancel[0], result[1] };
		struct job_msg m = { .final = 1 };
		sigset_t all;

		/* The parent blocked these for its signalfd; a job wants defaults. */
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		close(cancel[1]);
		close(result[0]);
		fcntl(result[1], F_SETFL, O_NONBLOCK);
		m.rc = child_run(J, l, &ctx, &m);
		/* The outcome must get through: wait for room now. */
		fcntl(result[1], F_SETFL, 0);
		if (write(result[1], &m, sizeof(m)) != sizeof(m))
			_exit(2);
		_exit(0);
	}
	close(cancel[0]);
	close(result[1]);
	/* Progress is read at every tick: never wait for it. */
	fcntl(result[0], F_SETFL, O_NONBLOCK);
	v[J->n_run++] = (struct job){
		.pid = pid,
		.cancel_fd = cancel[1],
		.result_fd = result[0],
		.late = J->queue[qi],
		.disk = disk,
	};
	l->queue = EA_LATE_RUNNING;
	snprintf(l->reason, sizeof(l->reason), "starting");
	l->done = l->total = 0;
	memmove(&J->queue[qi], &J->queue[qi + 1], (J->n_queue - qi - 1) * sizeof(*J->queue));
	J->n_queue--;
	J->report->dirty = true;
	log_full(&J->report->log, LOG_INFO, l->rule, l->path, 0, "realignment started");
	return;
fail:
	close(cancel[0]);
	close(cancel[1]);
	close(result[0]);
	close(result[1]);
}

/* Read what a child said so far: progress into its late entry, the
 * outcome into the job. */
static void job_drain(struct jobs *J, struct job *j)
{
	struct late_file *l = &J->late->v[j->late];
	struct job_msg m;

	while (read(j->result_fd, &m, sizeof(m)) == sizeof(m)) {
		if (m.final) {
			j->ended = true;
			j->rc = m.rc;
			j->skip = m.skip;
			j->copied = m.copied;
			j->ino_after = m.ino_after;
			return;
		}
		snprintf(l->reason, sizeof(l->reason), "%s",
			 m.phase == EA_PHASE_VERIFY ? "verifying" : "copying");
		l->done = m.done;
		l->total = m.total;
		J->report->dirty = true;
	}
}

void jobs_progress(struct jobs *J)
{
	for (size_t i = 0; i < J->n_run; i++)
		if (!J->run[i].ended)
			job_drain(J, &J->run[i]);
}

/* The oldest is forgotten first: its event came long ago. */
static void remember_replaced(struct jobs *J, dev_t dev, uint64_t ino)
{
	if (!ino)
		return;
	J->replaced[J->n_replaced++ % ARRAY_SIZE(J->replaced)] = (struct file_id){ dev, ino };
}

/* A job that ended without realigning: counted by reason, logged for the
 * admin with what to do in the catalog. */
static void job_failed(struct jobs *J, const struct job *j, struct late_file *l, int rc)
{
	/* Over realign_max_file_size: refused by policy, like the engine's skips. */
	bool skipped = rc == EA_REALIGN_SKIPPED || rc == -EFBIG;
	enum ea_state_stat reason = skipped			   ? EA_STAT_FAIL_REALIGN_SKIPPED
				    : rc == EA_REALIGN_UNSUPPORTED ? EA_STAT_FAIL_UNSUPPORTED
								   : EA_STAT_FAIL_REALIGN;

	l->queue = skipped			  ? EA_LATE_SKIPPED
		   : rc == EA_REALIGN_UNSUPPORTED ? EA_LATE_UNSUPPORTED
						  : EA_LATE_FAILED;
	report_stat(J->report, l->rule, l->id.dev, reason, 1);
	/* The unsupported sum is the kernel's; the job failed all the same. */
	if (reason == EA_STAT_FAIL_UNSUPPORTED)
		J->report->counters[EA_CNT_JOBS_FAILED]++;
	if (!j->ended)
		log_id(&J->report->log, MSGID_REALIGN_ABORTED, LOG_WARNING, l->rule, l->path, 0,
		       "realignment aborted: the job ended without an outcome");
	else if (rc == -EFBIG)
		log_id(&J->report->log, MSGID_REALIGN_FAILED, LOG_NOTICE, l->rule, l->path, 0,
		       "realignment skipped: larger than realign_max_file_size");
	else if (rc == EA_REALIGN_SKIPPED)
		/* Why, or an admin cannot tell "in use" from "placed off the unit again". */
		log_id(&J->report->log, MSGID_REALIGN_FAILED, LOG_NOTICE, l->rule, l->path, 0,
		       "realignment skipped: %s", ea_realign_skip_str(j->skip));
	else
		log_id(&J->report->log, MSGID_REALIGN_FAILED, LOG_NOTICE, l->rule, l->path,
		       rc < 0 ? rc : 0, "realignment %s", ea_late_queue_name(l->queue));
}

void jobs_reap(struct jobs *J)
{
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (size_t i = 0; J && i < J->n_run; i++) {
			struct job *j = &J->run[i];
			struct late_file *l;
			int rc = -EIO;

			if (j->pid != pid)
				continue;
			l = &J->late->v[j->late];
			if (!j->ended)
				job_drain(J, j);
			rc = j->ended ? j->rc : -EIO;
			l->reason[0] = 0;
			if (rc == EA_REALIGN_DONE || rc == EA_REALIGN_HINT_SET) {
				l->queue = EA_LATE_DONE;
				report_stat(J->report, l->rule, l->id.dev, EA_STAT_REALIGNED_FILES,
					    1);
				report_stat(J->report, l->rule, l->id.dev, EA_STAT_REALIGNED_BYTES,
					    j->copied);
				log_full(&J->report->log, LOG_INFO, l->rule, l->path, 0,
					 "realigned");
				remember_replaced(J, l->id.dev, j->ino_after);
				/* The old inode is freed: its number may come back
				 * for a new late file, which must not look seen. */
				if (j->ino_after && j->ino_after != l->id.ino)
					late_forget(J->late, l->id);
			} else if (rc == EA_REALIGN_CANCELLED) {
				l->queue = EA_LATE_QUEUED;
				jobs_queue(J, j->late);
			} else {
				job_failed(J, j, l, rc);
			}
			job_close(j);
			*j = J->run[--J->n_run];
			J->report->dirty = true;
			break;
		}
	}
}

void jobs_stop_all(struct jobs *J)
{

	if (!J)
		return;
	for (size_t i = 0; i < J->n_run; i++)
		closep(&J->run[i].cancel_fd);
	/* The children see the hang-up between chunks; wait a bounded time
	 * so that SIGTERM still ends the daemon within a second. */
	for (int t = 0; t < 80 && J->n_run; t++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		jobs_reap(J);
	}
	for (size_t i = 0; i < J->n_run; i++)
		kill(J->run[i].pid, SIGKILL); /* the library survives a kill at any point */
}

bool jobs_running_on(const struct jobs *J, struct file_id id)
{

	for (size_t i = 0; J && i < J->n_run; i++) {
		const struct late_file *l = &J->late->v[J->run[i].late];

		if (l->id.dev == id.dev && l->id.ino == id.ino)
			return true;
	}
	return false;
}

bool jobs_replaced(struct jobs *J, struct file_id id, const char *path)
{
	size_t n;

	if (!J)
		return false;
	n = J->n_replaced < ARRAY_SIZE(J->replaced) ? J->n_replaced : ARRAY_SIZE(J->replaced);
	/* Still running: its rename may come before its outcome. */
	for (size_t i = 0; i < J->n_run; i++)
		if (!strcmp(J->late->v[J->run[i].late].path, path))
			return true;
	for (size_t i = 0; i < n; i++) {
		if (J->replaced[i].dev == id.dev && J->replaced[i].ino == id.ino) {
			/* One rename, one event: later ones are the users'. */
			J->replaced[i] = (struct file_id){ 0, 0 };
			return true;
		}
	}
	return false;
}

/* Why the queued files wait, for extalign status. */
static void __attribute__((format(printf, 2, 3))) queue_reason(struct jobs *J, const char *fmt, ...)
{
	char buf[sizeof(((struct late_file *)0)->reason)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < J->n_queue; i++) {
		struct late_file *l = &J->late->v[J->queue[i]];

		if (strcmp(l->reason, buf)) {
			memcpy(l->reason, buf, sizeof(buf));
			J->report->dirty = true;
		}
	}
}

/* Is the machine idle?  When not, the queue says which limit is over. */
static bool machine_idle(struct jobs *J)
{
	const struct ea_daemon_conf *c = &J->policy->daemon;
	double psi, load;

	if (!c->realign || J->no_realign) {
		queue_reason(J, "realignment is off (%s)",
			     J->no_realign ? "--no-realign" : "realign = no in [daemon]");
		J->off_said = true;
		return false;
	}
	if (!in_window(J)) {
		queue_reason(J, "outside realign_windows");
		return false;
	}
	psi = io_pressure();
	if (psi > c->idle_io_pressure) {
		queue_reason(J, "I/O pressure %.1f%% over idle_io_pressure %.1f%%", psi,
			     c->idle_io_pressure);
		return false;
	}
	load = load_per_cpu();
	if (load > c->idle_cpu_load) {
		queue_reason(J, "load %.2f per CPU over idle_cpu_load %.2f", load,
			     c->idle_cpu_load);
		return false;
	}
	return true;
}

static uint64_t poll_interval(const struct ea_daemon_conf *c)
{
	return c->idle_poll_usec ? c->idle_poll_usec : 1000000;
}

uint64_t jobs_next_wakeup(const struct jobs *J, uint64_t now)
{
	const struct ea_daemon_conf *c = &J->policy->daemon;
	uint64_t poll_at = J->next_poll ? J->next_poll : now, scan_at;

	if (J->n_run)
		return poll_at < now + JOBS_PROGRESS_USEC ? poll_at : now + JOBS_PROGRESS_USEC;
	/* With realignment off, a queue waits for a reload: once told why,
	 * it needs no more polls. */
	if (J->n_queue && ((c->realign && !J->no_realign) || !J->off_said))
		return poll_at;
	if (J->scan_rules) {
		scan_at = J->next_scan ? J->next_scan : now;
		return poll_at > scan_at ? poll_at : scan_at;
	}
	return 0;
}

enum jobs_tick jobs_tick(struct jobs *J)
{
	const struct ea_daemon_conf *c = &J->policy->daemon;
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	bool scan_due;

	jobs_progress(J);
	if (now < J->next_poll)
		return JOBS_WAIT;
	/* The first scan runs at the first idle moment: files that were
	 * misaligned before the daemon came are what realign = yes is for. */
	if (!J->next_scan)
		J->next_scan = now;
	scan_due = J->scan_rules && now >= J->next_scan;
	if (!J->n_queue && !J->n_run && !scan_due)
		return JOBS_WAIT;
	/* Idleness must be seen at every poll: after a pause in the sampling
	 * (nothing was pending, so the timer slept) the streak starts again. */
	if (J->last_poll && now - J->last_poll > 2 * poll_interval(c))
		J->idle_since = 0;
	J->last_poll = now;
	J->next_poll = now + poll_interval(c);

	/* Disk busy-ness is judged per disk when a job would start there: a
	 * running job makes its own disk busy and must not stop itself. */
	if (!machine_idle(J)) {
		J->idle_since = 0;
		for (size_t i = 0; i < J->n_run; i++)
			closep(&J->run[i].cancel_fd);
		return JOBS_WAIT;
	}
	if (!J->idle_since)
		J->idle_since = now;
	if (now - J->idle_since < c->idle_time_usec) {
		queue_reason(J, "idle for %" PRIu64 "s of idle_time %" PRIu64 "s",
			     (now - J->idle_since) / 1000000, c->idle_time_usec / 1000000);
		return JOBS_WAIT;
	}
	if (scan_due) {
		J->next_scan = now + c->realign_scan_interval_usec;
		return JOBS_IDLE_SCAN;
	}
	return JOBS_IDLE;
}

void jobs_start(struct jobs *J)
{
	const struct ea_daemon_conf *c = &J->policy->daemon;
	uint64_t now = now_usec(CLOCK_MONOTONIC);

	for (size_t qi = 0; qi < J->n_queue;) {
		struct late_file *l = &J->late->v[J->queue[qi]];
		dev_t disk = whole_disk(l->id.dev);
		struct disk_sample *s = disk_sample(J, disk, now);

		if (disk_has_job(J, disk)) {
			snprintf(l->reason, sizeof(l->reason), "another job on disk %u:%u",
				 major(disk), minor(disk));
			qi++;
			continue;
		}
		if (s && s->busy > c->idle_disk_util) {
			snprintf(l->reason, sizeof(l->reason),
				 "disk %u:%u %.0f%% busy, over idle_disk_util %.0f%%", major(disk),
				 minor(disk), s->busy, c->idle_disk_util);
			qi++;
			continue;
		}
		job_start(J, qi, disk); /* removes queue[qi] on success */
		if (qi < J->n_queue && &J->late->v[J->queue[qi]] == l)
			qi++;
	}
}
