// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalignd's backlog of fanotify records (daemon/fan-backlog.c), filled
 * from a pipe: bytes come out in the order they went in, across the
 * compaction and growth of the buffer; the bound leaves the rest in the
 * pipe (the kernel's queue); a large empty buffer is given back.
 */
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../daemon/fan-backlog.c"
#include "run-suite.h"

/* A non-blocking pipe that holds 1 MiB, as a queue the test fills. */
static void queue(int fds[2])
{
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	ck_assert_int_ge(fcntl(fds[1], F_SETPIPE_SZ, 1 << 20), 1 << 20);
}

/* Put n bytes of the sequence that starts at *seq into the queue. */
static void put(int fd, size_t n, uint32_t *seq)
{
	unsigned char *b = malloc(n);

	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)((*seq)++ * 7);
	ck_assert_int_eq(write(fd, b, n), (ssize_t)n);
	free(b);
}

/* Take n bytes from the front and check they continue the sequence at *seq. */
static void take(struct fan_backlog *b, size_t n, uint32_t *seq)
{
	const unsigned char *p;
	const void *v;
	size_t len;

	fan_backlog_peek(b, &v, &len);
	ck_assert_uint_ge(len, n);
	p = v;
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(p[i], (unsigned char)((*seq)++ * 7));
	fan_backlog_consumed(b, n);
}

static size_t held(const struct fan_backlog *b)
{
	const void *p;
	size_t len;

	fan_backlog_peek(b, &p, &len);
	return len;
}

START_TEST(test_order)
{
	struct fan_backlog b = { 0 };
	uint32_t in = 0, out = 0;
	int q[2];

	queue(q);
	ck_assert_int_eq(fan_backlog_fill(&b, q[0]), 0);
	ck_assert_uint_eq(held(&b), 0);

	put(q[1], 1000, &in);
	ck_assert_int_eq(fan_backlog_fill(&b, q[0]), 0);
	ck_assert_uint_eq(held(&b), 1000);
	take(&b, 300, &out);
	/* More while some is unhandled: it goes behind what is held. */
	put(q[1], 200000, &in);
	ck_assert_int_eq(fan_backlog_fill(&b, q[0]), 0);
	ck_assert_uint_eq(held(&b), 700 + 200000);
	take(&b, 150000, &out);
	/* Room is made at the front before the buffer grows. */
	put(q[1], 100000, &in);
	ck_assert_int_eq(fan_backlog_fill(&b, q[0]), 0);
	take(&b, held(&b), &out);
	ck_assert_uint_eq(out, in);
	ck_assert_uint_eq(held(&b), 0);
	ck_assert_uint_eq(b.peak, 700 + 200000);
	/* Empty after a storm: the buffer beyond what is kept went back. */
	ck_assert_ptr_null(b.buf);
	fan_backlog_free(&b);
	close(q[0]);
	close(q[1]);
}
END_TEST

START_TEST(test_bound)
{
	struct fan_backlog b = { .max = 4 * READ_MIN };
	uint32_t in = 0, out = 0;
	int q[2];

	queue(q);
	put(q[1], 10 * READ_MIN, &in);
	ck_assert_int_eq(fan_backlog_fill(&b, q[0]), 0);
	/* Full: the rest waits in the queue, nothing is dropped. */
	ck_assert_uint_le(held(&b), 4 * READ_MIN);
	ck_assert_uint_gt(held(&b), 3 * READ_MIN - 1);
	while (held(&b)) {
		take(&b, held(&b) < 5000 ? held(&b) : 5000, &out);
		ck_assert_int_eq(fan_backlog_fill(&b, q[0]), 0);
		ck_assert_uint_le(held(&b), 4 * READ_MIN);
	}
	ck_assert_uint_eq(out, in);
	fan_backlog_free(&b);
	close(q[0]);
	close(q[1]);
}
END_TEST

START_TEST(test_read_error)
{
	struct fan_backlog b = { 0 };

	ck_assert_int_eq(fan_backlog_fill(&b, -1), -EBADF);
	fan_backlog_free(&b);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_order);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_read_error);
	return run_suite("daemon-backlog", tc);
}
