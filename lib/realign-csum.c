// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The checksum of a chunk on a second thread while this one moves data.
 *
 * Summing costs about 0.09 ms per MiB (realign-util.c) and every realigned
 * byte is summed twice, once read from the original and once read back
 * from the copy: on a 1 GiB file that was most of the time a realignment
 * took beyond a plain O_DIRECT copy (tests/bench/compare.sh, realign row).
 * The sum is additive, so a chunk can be summed apart and added later:
 * the copy sums a chunk while it writes that chunk, the verification while
 * it reads the next one.  compare.sh realign with the image in RAM, where
 * the CPU shows (COMPARE_DIR=/dev/shm, medians of 5): 1 GiB went from
 * 1.23x to 0.91x the verified copy, 1000 files of 1 MiB from 1.99x to
 * 1.45x; on this machine's virtual disk the rounds spread too widely
 * (0.64x to 1.74x) to see it.
 *
 * A thread per chunk, for chunks of at least CSUM_THREAD_MIN: creating
 * one costs tens of microseconds, a small chunk's sum costs about as
 * much.  When no thread can be made (EAGAIN, a seccomp filter), the chunk
 * is summed at once, as before.
 */
#include <pthread.h>

#include "realign-internal.h"

#define CSUM_THREAD_MIN (1U << 20)

static void *sum_chunk(void *arg)
{
	struct rl_csum_job *j = arg;

	j->sum = rl_csum_terms(j->off, j->buf, j->n);
	return NULL;
}

void rl_csum_start(struct rl_csum_job *j, const void *buf, size_t n, uint64_t off)
{
	*j = (struct rl_csum_job){ .buf = buf, .n = n, .off = off, .started = true };
	if (n >= CSUM_THREAD_MIN && pthread_create(&j->thread, NULL, sum_chunk, j) == 0) {
		j->threaded = true;
		return;
	}
	sum_chunk(j);
}

void rl_csum_wait(struct rl_csum_job *j, struct ea_csum *cs)
{
	if (!j->started)
		return;
	if (j->threaded)
		pthread_join(j->thread, NULL);
	cs->h += j->sum;
	*j = (struct rl_csum_job){ 0 };
}
