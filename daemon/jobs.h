/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Realignment of late files at idle time (jobs.c).  Jobs reads the late
 * list and updates each entry's queue state; it calls nothing above it.  A
 * realignment scan is apply's: jobs_tick() only says when one is due.
 */
#ifndef EXTALIGND_JOBS_H
#define EXTALIGND_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "extalign/policy.h"
#include "event.h"
#include "late.h"
#include "util.h"

struct jobs;

/* realign_dir: the engine's state directory for the jobs (kept, not copied). */
struct jobs *jobs_new(struct late_list *late, struct report *report, bool no_realign,
		      const char *realign_dir);
void jobs_free(struct jobs *J);
void jobs_set_policy(struct jobs *J, const struct ea_policy *p);
void jobs_queue(struct jobs *J, size_t late_index);

enum jobs_tick {
	JOBS_WAIT,	/* not idle (long enough), or nothing to do */
	JOBS_IDLE,	/* idle: call jobs_start() */
	JOBS_IDLE_SCAN, /* idle and a realignment scan is due first, then jobs_start() */
};
/* Called from the timer: stop jobs when busy, say whether to start some. */
enum jobs_tick jobs_tick(struct jobs *J);
/*
 * When jobs_tick() has something to do next (monotonic usec; it may be in
 * the past), or 0 when nothing is pending: no queue, no job, no scan due.
 * The loop sleeps without a timer then.
 */
uint64_t jobs_next_wakeup(const struct jobs *J, uint64_t now);
/* Start queued jobs on disks that have none and are not busy. */
void jobs_start(struct jobs *J);
/* Read the running jobs' progress into their late entries (every tick while they run). */
void jobs_progress(struct jobs *J);
/* A job's child ended (SIGCHLD via the signalfd). */
void jobs_reap(struct jobs *J);
void jobs_stop_all(struct jobs *J);
/* Is a job rewriting this file right now?  Opening it would break its lease. */
bool jobs_running_on(const struct jobs *J, struct file_id id);
/*
 * Is the name path (now the inode id) a job's rewritten file: a job on that
 * path still runs, or one just put id there?  Its rename is an event like a
 * user's; counted, it would be a new file that inherited its hint.
 */
bool jobs_replaced(struct jobs *J, struct file_id id, const char *path);

#endif
