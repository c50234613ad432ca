// SPDX-License-Identifier: GPL-2.0-or-later
/* The pure parts of realignment: leftover names, range maths, rate limit, checksum. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/realign.h"
#include "../../lib/realign-internal.h"
#include "run-suite.h"

START_TEST(test_leftover_roundtrip)
{
	static const uint64_t inos[] = { 0, 1, 131, 4294967296ULL, UINT64_MAX };
	char buf[EA_REALIGN_LEFTOVER_MAX];
	uint64_t got;

	for (size_t i = 0; i < sizeof(inos) / sizeof(inos[0]); i++) {
		ea_realign_leftover_name(buf, inos[i], 0x0123456789abcdefULL ^ i);
		ck_assert_msg(ea_realign_leftover_parse(buf, &got), "%s not recognised", buf);
		ck_assert_uint_eq(got, inos[i]);
	}
	ea_realign_leftover_name(buf, 42, 7);
	ck_assert_str_eq(buf, ".extalign-realign.42.0000000000000007");
	ck_assert(ea_realign_leftover_parse(buf, NULL));
}
END_TEST

/* Near misses must never be taken for ours: cleanup deletes what matches. */
static const char *const not_leftovers[] = {
	"",
	"a",
	".extalign-realign.",
	".extalign-realign.42",
	".extalign-realign.42.",
	".extalign-realign..0123456789abcdef",
	".extalign-realign.42.0123456789abcde",	  /* 15 hex */
	".extalign-realign.42.0123456789abcdef0", /* 17 hex */
	".extalign-realign.42.0123456789ABCDEF",  /* upper case: not what we write */
	".extalign-realign.42.0123456789abcdeg",
	".extalign-realign.42.0123456789abcdef.bak",
	".extalign-realign.-4.0123456789abcdef",
	".extalign-realign.4x.0123456789abcdef",
	"x.extalign-realign.42.0123456789abcdef",
	".extalign-realign.18446744073709551616.0123456789abcdef", /* ino overflows */
	"extalign-realign.42.0123456789abcdef",
};

START_TEST(test_leftover_rejects)
{
	ck_assert_msg(!ea_realign_leftover_parse(not_leftovers[_i], NULL), "'%s' accepted",
		      not_leftovers[_i]);
}
END_TEST

START_TEST(test_leftover_null)
{
	ck_assert(!ea_realign_leftover_parse(NULL, NULL));
}
END_TEST

START_TEST(test_ranges_align)
{
	/* 4k-block data ranges of a 1 MiB + 100 byte file, O_DIRECT at 64k. */
	struct ea_range r[] = {
		{ 0, 4096 },	      /* widened to [0, 64k) */
		{ 8192, 12288 },      /* same unit: merged */
		{ 65536, 131072 },    /* touches: merged */
		{ 262144, 266240 },   /* alone: [256k, 320k) */
		{ 1048576, 1048676 }, /* tail: clipped to round_up(size) */
	};
	size_t n = ea_ranges_align(r, 5, 65536, 1048676);

	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(r[0].start, 0);
	ck_assert_uint_eq(r[0].end, 131072);
	ck_assert_uint_eq(r[1].start, 262144);
	ck_assert_uint_eq(r[1].end, 327680);
	ck_assert_uint_eq(r[2].start, 1048576);
	ck_assert_uint_eq(r[2].end, 1048576 + 65536);
}
END_TEST

START_TEST(test_ranges_align_edges)
{
	struct ea_range r[] = { { 5, 100 }, { 200, 300 }, { 5000, 6000 } };
	size_t n;

	/* align 1 (or 0) changes nothing. */
	n = ea_ranges_align(r, 3, 0, 10000);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(r[0].start, 5);
	ck_assert_uint_eq(r[2].end, 6000);
	/* Word alignment for the checksum: [0,104) [200,304) [5000,6000). */
	n = ea_ranges_align(r, 3, 8, 10000);
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(r[0].start, 0);
	ck_assert_uint_eq(r[0].end, 104);
	ck_assert_uint_eq(r[1].start, 200);
	ck_assert_uint_eq(r[1].end, 304);
	/* Everything beyond the size vanishes; an empty file has no ranges. */
	n = ea_ranges_align(r, 3, 4096, 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(ea_ranges_align(r, 0, 4096, 100), 0);
}
END_TEST

#define MS 1000000ULL
#define S  1000000000ULL

START_TEST(test_ratelimit)
{
	struct ea_ratelimit rl;

	/* No limit: never sleep. */
	ea_ratelimit_init(&rl, 0, 0);
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1 << 30, 0), 0);
	ck_assert_uint_eq(ea_ratelimit_account(NULL, 1 << 30, 0), 0);

	/* 1 MB/s: 1 MB after 0 s wants a full second, after 0.4 s the rest. */
	ea_ratelimit_init(&rl, 1000000, 10 * S);
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1000000, 10 * S), S);
	ea_ratelimit_init(&rl, 1000000, 10 * S);
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1000000, 10 * S + 400 * MS), 600 * MS);
	/* Ahead of time: the second MB is due at 2 s. */
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1000000, 11 * S), S);
	/* On time: no sleep. */
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1000000, 13 * S), 0);
}
END_TEST

START_TEST(test_ratelimit_burst_cap)
{
	struct ea_ratelimit rl;

	/* Idle for a minute: the saved credit is one second, not sixty. */
	ea_ratelimit_init(&rl, 1000000, 0);
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1, 60 * S), 0);
	/* 1 s of credit covers 1 MB; the second MB must wait a second. */
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1000000, 60 * S), 0);
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1000000, 60 * S), S);
}
END_TEST

START_TEST(test_ratelimit_large)
{
	struct ea_ratelimit rl;

	/* 1 TB at 1 GB/s: 1000 s; 64-bit bytes * 1e9 would have overflowed. */
	ea_ratelimit_init(&rl, 1000000000ULL, 0);
	ck_assert_uint_eq(ea_ratelimit_account(&rl, 1000000000000ULL, 0), 1000 * S);
}
END_TEST

/* Summed through rl_csum_start()/rl_csum_wait(), two jobs in flight. */
static uint64_t csum_async(const unsigned char *buf, size_t n, size_t chunk)
{
	struct rl_csum_job j[2] = { { 0 }, { 0 } };
	struct ea_csum c;
	unsigned k = 0;

	ea_csum_init(&c);
	for (size_t off = 0; off < n; off += chunk, k ^= 1) {
		rl_csum_wait(&j[k], &c);
		rl_csum_start(&j[k], buf + off, n - off < chunk ? n - off : chunk, off);
	}
	rl_csum_wait(&j[0], &c);
	rl_csum_wait(&j[1], &c);
	return ea_csum_final(&c);
}

static uint64_t csum_of(const unsigned char *buf, size_t n, size_t chunk)
{
	struct ea_csum c;

	ea_csum_init(&c);
	/* Back to front: the order of chunks must not matter. */
	for (size_t end = n; end > 0;) {
		size_t start = end > chunk ? (end - 1) / chunk * chunk : 0;

		ea_csum_update(&c, start, buf + start, end - start);
		end = start;
	}
	return ea_csum_final(&c);
}

START_TEST(test_csum)
{
	enum { N = 65536 + 13 };
	unsigned char *a = malloc(N), *b = malloc(N);
	struct ea_csum c;
	uint64_t h;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	srand(1);
	for (size_t i = 0; i < N; i++)
		a[i] = (unsigned char)rand();
	h = csum_of(a, N, N);
	ck_assert_uint_eq(csum_of(a, N, 4096), h);
	ck_assert_uint_eq(csum_of(a, N, EA_CSUM_ALIGN), h);

	/* One flipped bit anywhere, the tail included, changes it. */
	for (size_t pos = 0; pos < N; pos += 997) {
		memcpy(b, a, N);
		b[pos] ^= 1;
		ck_assert_uint_ne(csum_of(b, N, 4096), h);
	}
	memcpy(b, a, N);
	b[N - 1] ^= 0x80;
	ck_assert_uint_ne(csum_of(b, N, 4096), h);

	/* The two words of a pair swapped, and one word beside a zero one. */
	memcpy(b, a, N);
	memcpy(b + 64, a + 72, 8);
	memcpy(b + 72, a + 64, 8);
	ck_assert_uint_ne(csum_of(b, N, 4096), h);
	memset(a + 128, 0, 8);
	h = csum_of(a, N, N);
	memcpy(b, a, N);
	b[136] ^= 4;
	ck_assert_uint_ne(csum_of(b, N, 4096), h);

	/* Two blocks swapped: same bytes, wrong places. */
	memcpy(b, a, N);
	memcpy(b, a + 4096, 4096);
	memcpy(b + 4096, a, 4096);
	ck_assert_uint_ne(csum_of(b, N, 4096), h);

	/* Zeros add nothing: a hole need not be read. */
	memset(b, 0, N);
	ck_assert_uint_eq(csum_of(b, N, 4096), 0);
	memcpy(b + 8192, a + 8192, 4096);
	ea_csum_init(&c);
	ea_csum_update(&c, 8192, a + 8192, 4096);
	ck_assert_uint_eq(csum_of(b, N, 4096), ea_csum_final(&c));
	ck_assert_uint_ne(ea_csum_final(&c), 0);
	free(a);
	free(b);
}
END_TEST

/*
 * The copy and the verification sum chunks of 1 MiB and more on a second
 * thread, smaller ones at once: either way every chunk counts, and a
 * change in any of them (the last, short one too) shows.
 */
START_TEST(test_csum_async)
{
	enum { MIB = 1 << 20, N = 3 * 4 * MIB + 4096 + 48 };
	unsigned char *a = malloc(N);
	uint64_t h;

	ck_assert_ptr_nonnull(a);
	srand(2);
	for (size_t i = 0; i < N; i++)
		a[i] = (unsigned char)rand();
	h = csum_of(a, N, N);
	ck_assert_uint_eq(csum_async(a, N, 4 * MIB), h);   /* threads */
	ck_assert_uint_eq(csum_async(a, N, 64 * 1024), h); /* at once */
	for (size_t pos = 1; pos < N; pos += 4 * MIB - 1) {
		a[pos] ^= 0x10;
		ck_assert_uint_ne(csum_async(a, N, 4 * MIB), h);
		a[pos] ^= 0x10;
	}
	a[N - 1] ^= 1;
	ck_assert_uint_ne(csum_async(a, N, 4 * MIB), h);
	free(a);
}
END_TEST

START_TEST(test_names)
{
	for (int s = 0; s < EA_SKIP_COUNT; s++) {
		ck_assert_str_ne(ea_realign_skip_name(s), "unknown");
		ck_assert_str_ne(ea_realign_skip_str(s), "skipped");
	}
	ck_assert_str_eq(ea_realign_skip_name(EA_SKIP_OPEN), "open");
	ck_assert_str_eq(ea_realign_skip_name(EA_SKIP_COUNT), "unknown");
	ck_assert_str_eq(ea_realign_swap_name(EA_SWAP_SWAPEXT), "swapext");
	ck_assert_str_eq(ea_realign_swap_name(EA_SWAP_RENAME), "rename");
	ck_assert_str_eq(ea_realign_outcome_name(EA_REALIGN_UNSUPPORTED), "unsupported");
	ck_assert_str_eq(ea_realign_outcome_name(99), "unknown");
	ck_assert_str_eq(ea_align_verdict_name(EA_VERDICT_ALIGNED), "aligned");
}
END_TEST

START_TEST(test_bad_opts)
{
	struct ea_realign_opts o;
	struct ea_realign_result r;

	ea_realign_opts_init(&o, 0);
	ck_assert_int_eq(o.forcealign, -1);
	ck_assert_int_lt(ea_realign_file("/nonexistent", &o, &r), 0);
	ea_realign_opts_init(&o, 3000);
	ck_assert_int_lt(ea_realign_file("/nonexistent", &o, &r), 0);
	/* Good options, missing file: an outcome, not an error. */
	ea_realign_opts_init(&o, 65536);
	o.assess = true;
	ck_assert_int_eq(ea_realign_file("/nonexistent/x", &o, &r), 0);
	ck_assert_int_eq(r.outcome, EA_REALIGN_FAILED);
	ea_realign_opts_init(&o, 65536);
	ck_assert_int_eq(ea_realign_file("/nonexistent/x", &o, &r), 0);
	ck_assert_int_eq(r.outcome, EA_REALIGN_FAILED);
	ck_assert_int_lt(r.err, 0);
}
END_TEST

/* The free-space check: bytes to copy, whole units needed, bad arguments. */
START_TEST(test_space_check)
{
	char path[] = "/tmp/test-realign-space.XXXXXX";
	char buf[8192];
	struct ea_realign_space sp;
	int fd = mkstemp(path), dfd;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	memset(buf, 0x5a, sizeof(buf));
	/* 8 KiB at 0 and 4 KiB at 1 MiB: two 64 KiB units, 12 KiB of data. */
	ck_assert_int_eq(pwrite(fd, buf, 8192, 0), 8192);
	ck_assert_int_eq(pwrite(fd, buf, 4096, 1 << 20), 4096);
	ck_assert_int_eq(fsync(fd), 0);
	ck_assert_int_eq(ea_realign_space_check(fd, 65536, &sp), 0);
	ck_assert_uint_eq(sp.copy, 12288);
	ck_assert_uint_eq(sp.prealloc, 0);
	ck_assert_uint_ge(sp.needed, 2 * 65536);
	ck_assert_uint_le(sp.needed, 2 * 65536 + 128 * 1024);
	ck_assert_uint_gt(sp.available, 0);
	/* One 1 MiB unit covers both runs. */
	ck_assert_int_eq(ea_realign_space_check(fd, 1 << 20, &sp), 0);
	ck_assert_uint_ge(sp.needed, 2 << 20);
	ck_assert_int_eq(ea_realign_space_check(fd, 3000, &sp), -EINVAL);
	dfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	ck_assert_int_eq(ea_realign_space_check(dfd, 65536, &sp), -EINVAL);
	close(dfd);
	close(fd);
}
END_TEST

START_TEST(test_skip_names)
{
	/* Every reason has a name and a phrase, none left as "unknown". */
	for (int i = 0; i < EA_SKIP_COUNT; i++) {
		ck_assert_str_ne(ea_realign_skip_name(i), "unknown");
		ck_assert_ptr_nonnull(ea_realign_skip_str(i));
		ck_assert_ptr_nonnull(ea_realign_skip_name(i));
	}
	ck_assert_str_eq(ea_realign_skip_name(EA_SKIP_COPY_MISALIGNED), "copy-misaligned");
	ck_assert_str_eq(ea_realign_skip_name(EA_SKIP_NO_SPACE), "no-space");
}
END_TEST

static void put(const char *dir, const char *name, const char *content)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
}

static bool exists(const char *dir, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* Records of live jobs are locked: their leftovers must survive a cleanup. */
START_TEST(test_cleanup)
{
	char base[] = "/tmp/test-realign.XXXXXX", dir[64], state[64], rec[256];
	const char *l1 = ".extalign-realign.5.00000000000000aa";
	const char *l2 = ".extalign-realign.6.00000000000000bb";
	unsigned removed = 99;
	int lock, dfd;

	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%.40s/d", base);
	snprintf(state, sizeof(state), "%.40s/state", base);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(mkdir(state, 0700), 0);

	/* No state directory at all is fine. */
	ck_assert_int_eq(ea_realign_cleanup("/nonexistent/state", &removed), 0);
	ck_assert_uint_eq(removed, 0);

	put(dir, l1, "old");
	put(dir, l2, "live");
	put(dir, "data", "keep");
	put(dir, ".extalign-realign.7.0000000000000cc", "not ours: 15 hex digits");
	put(state, l1, dir);
	put(state, l2, dir);
	snprintf(rec, sizeof(rec), "%.64s/%.64s", state, l2);
	lock = open(rec, O_RDONLY);
	ck_assert_int_ge(lock, 0);
	ck_assert_int_eq(flock(lock, LOCK_EX), 0);

	ck_assert_int_eq(ea_realign_cleanup(state, &removed), 0);
	ck_assert_uint_eq(removed, 1);
	ck_assert(!exists(dir, l1));
	ck_assert(!exists(state, l1));
	ck_assert(exists(dir, l2));
	ck_assert(exists(state, l2));
	ck_assert(exists(dir, "data"));
	ck_assert(exists(dir, ".extalign-realign.7.0000000000000cc"));

	/* Met by a walk: still locked, kept; unlocked, removed with its record. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(ea_realign_cleanup_name(dfd, l2, state), 0);
	ck_assert(exists(dir, l2));
	close(lock);
	ck_assert_int_eq(ea_realign_cleanup_name(dfd, l2, state), 1);
	ck_assert(!exists(dir, l2));
	ck_assert(!exists(state, l2));
	ck_assert_int_eq(ea_realign_cleanup_name(dfd, "data", state), 0);
	ck_assert(exists(dir, "data"));
	close(dfd);

	/* A record whose directory is gone is dropped. */
	put(state, l1, "/nonexistent/dir");
	ck_assert_int_eq(ea_realign_cleanup(state, &removed), 0);
	ck_assert_uint_eq(removed, 0);
	ck_assert(!exists(state, l1));

	unlink(rec);
	snprintf(rec, sizeof(rec), "rm -rf '%.40s'", base);
	ck_assert_int_eq(system(rec), 0);
}
END_TEST

/*
 * A batch's record lists directories, each path ended by a NUL, and names
 * every leftover there with the batch's random part: locked, all are kept;
 * dead, exactly those go (a torn last path is ignored).
 */
START_TEST(test_cleanup_batch)
{
	char base[] = "/tmp/test-realign.XXXXXX", d1[64], d2[64], state[64], rec[256];
	const char *recname = ".extalign-realign.batch.00000000000000dd";
	const char *a = ".extalign-realign.11.00000000000000dd";
	const char *b = ".extalign-realign.12.00000000000000dd";
	const char *other = ".extalign-realign.13.00000000000000ee";
	unsigned removed = 99;
	int fd, lock, dfd;

	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(d1, sizeof(d1), "%.40s/d1", base);
	snprintf(d2, sizeof(d2), "%.40s/d2", base);
	snprintf(state, sizeof(state), "%.40s/state", base);
	ck_assert_int_eq(mkdir(d1, 0700), 0);
	ck_assert_int_eq(mkdir(d2, 0700), 0);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	put(d1, a, "copy");
	put(d2, b, "old inode");
	put(d2, other, "another job's");
	put(d2, "data", "keep");
	snprintf(rec, sizeof(rec), "%.64s/%.64s", state, recname);
	fd = open(rec, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, d1, strlen(d1) + 1), (ssize_t)strlen(d1) + 1);
	ck_assert_int_eq(write(fd, d2, strlen(d2) + 1), (ssize_t)strlen(d2) + 1);
	ck_assert_int_eq(write(fd, "/torn", 5), 5);
	close(fd);

	lock = open(rec, O_RDONLY);
	ck_assert_int_ge(lock, 0);
	ck_assert_int_eq(flock(lock, LOCK_EX), 0);
	ck_assert_int_eq(ea_realign_cleanup(state, &removed), 0);
	ck_assert_uint_eq(removed, 0);
	ck_assert(exists(d1, a) && exists(d2, b) && exists(state, recname));
	/* Met by a walk while the batch runs: kept too. */
	dfd = open(d1, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	ck_assert_int_eq(ea_realign_cleanup_name(dfd, a, state), 0);
	ck_assert(exists(d1, a));
	close(dfd);
	close(lock);

	ck_assert_int_eq(ea_realign_cleanup(state, &removed), 0);
	ck_assert_uint_eq(removed, 2);
	ck_assert(!exists(d1, a) && !exists(d2, b) && !exists(state, recname));
	ck_assert(exists(d2, other) && exists(d2, "data"));

	snprintf(rec, sizeof(rec), "rm -rf '%.40s'", base);
	ck_assert_int_eq(system(rec), 0);
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_leftover_roundtrip);
	tcase_add_loop_test(tc, test_leftover_rejects, 0,
			    sizeof(not_leftovers) / sizeof(not_leftovers[0]));
	tcase_add_test(tc, test_leftover_null);
	tcase_add_test(tc, test_ranges_align);
	tcase_add_test(tc, test_ranges_align_edges);
	tcase_add_test(tc, test_ratelimit);
	tcase_add_test(tc, test_ratelimit_burst_cap);
	tcase_add_test(tc, test_ratelimit_large);
	tcase_add_test(tc, test_csum);
	tcase_add_test(tc, test_csum_async);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_bad_opts);
	tcase_add_test(tc, test_cleanup);
	tcase_add_test(tc, test_cleanup_batch);
	tcase_add_test(tc, test_space_check);
	tcase_add_test(tc, test_skip_names);
	return run_suite("realign", tc);
}
