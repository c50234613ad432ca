// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Test helper: realign files and cut the power under them.  At the Nth
 * progress report of the engine, a thread waits a random few microseconds
 * and shuts the XFS filesystem down without flushing its log
 * (XFS_IOC_GOINGDOWN, NOLOGFLUSH): from then on nothing reaches the disk,
 * as at a power cut, while the engine goes on until its calls fail.
 * Usage: realign-cut EVENT DELAY_US STATE_DIR MOUNTPOINT FILE...
 * EVENT 0 never cuts.  REALIGN_CUT_BUFFERED=1 copies through the page
 * cache instead of O_DIRECT; REALIGN_CUT_BATCH=1 makes the files' swaps
 * durable together (struct ea_realign_batch, as extalign realign does for
 * several files), flushed after the last file.  Prints "cut at EVENT" or
 * "no cut (N events)".
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "extalign/realign.h"

#define XFS_IOC_GOINGDOWN		_IOR('X', 125, uint32_t)
#define XFS_FSOP_GOING_FLAGS_NOLOGFLUSH 0x2

struct cut {
	unsigned long at, events, delay_us;
	int mntfd;
	pthread_t thread;
	int started;
};

static void *cut_now(void *userdata)
{
	struct cut *c = userdata;
	uint32_t flags = XFS_FSOP_GOING_FLAGS_NOLOGFLUSH;

	if (c->delay_us)
		usleep((useconds_t)c->delay_us);
	if (ioctl(c->mntfd, XFS_IOC_GOINGDOWN, &flags) < 0)
		perror("XFS_IOC_GOINGDOWN");
	return NULL;
}

static void progress(void *userdata, const struct ea_realign_progress *p)
{
	struct cut *c = userdata;

	(void)p;
	if (++c->events != c->at || c->started)
		return;
	if (pthread_create(&c->thread, NULL, cut_now, c) == 0)
		c->started = 1;
}

int main(int argc, char **argv)
{
	struct cut c = { 0 };
	struct ea_realign_opts o;
	struct ea_realign_result r;

	if (argc < 6) {
		fprintf(stderr, "usage: %s EVENT DELAY_US STATE_DIR MOUNTPOINT FILE...\n", argv[0]);
		return 2;
	}
	c.at = strtoul(argv[1], NULL, 10);
	c.delay_us = strtoul(argv[2], NULL, 10);
	c.mntfd = open(argv[4], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.mntfd < 0) {
		perror(argv[4]);
		return 2;
	}
	ea_realign_opts_init(&o, 65536);
	o.state_dir = argv[3];
	o.force = true; /* hinted files too: the swap paths */
	o.buffered = getenv("REALIGN_CUT_BUFFERED") && !strcmp(getenv("REALIGN_CUT_BUFFERED"), "1");
	o.progress = progress;
	o.userdata = &c;
	if (getenv("REALIGN_CUT_BATCH") && !strcmp(getenv("REALIGN_CUT_BATCH"), "1"))
		o.batch = ea_realign_batch_new();
	for (int i = 5; i < argc; i++)
		if (ea_realign_file(argv[i], &o, &r) < 0)
			return 2;
	/* After a cut the fsyncs fail: the records stay, as they must. */
	ea_realign_batch_free(o.batch);
	if (c.started) {
		pthread_join(c.thread, NULL);
		printf("cut at %lu\n", c.at);
	} else {
		printf("no cut (%lu events)\n", c.events);
	}
	close(c.mntfd);
	return 0;
}
