// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * atomic-write: the load generator of tests/bench/atomic.sh.
 *
 * Random fixed-size O_DIRECT overwrites of one preallocated file from several
 * threads, each with one write in flight, either with RWF_ATOMIC (untorn
 * writes, Linux 6.11) or without (the baseline a database uses today, with a
 * doublewrite buffer on top).  Debian 12's fio 3.33 takes atomic=1 but never
 * passes RWF_ATOMIC to the kernel, hence this tool.
 *
 * Before an atomic job it proves that the flag reaches the kernel: a plain
 * 12 KiB write must succeed, the same write with RWF_ATOMIC must fail with
 * EINVAL (not a power of two), a misaligned RWF_ATOMIC write must fail with
 * EINVAL and an aligned one of the job's size must succeed.  A kernel that
 * ignores the flag gets no benchmark.
 *
 * --doublewrite puts a doublewrite buffer in front of the plain writes, the
 * way InnoDB protects pages from torn writes without RWF_ATOMIC: every batch
 * of pages is written to a second file with RWF_DSYNC before any page of it
 * overwrites its home.
 *
 * Prints "#" lines of detail and one result line per job:
 *   RESULT job=NAME status=ok|skip|fail key=value... [reason=free text]
 * or with --json one JSON object; --hist saves the latency histogram so that
 * the rounds of a job can be merged.  Exit status: 0 ok, 77 skipped (the
 * file cannot take the job, e.g. no forcealign or atomic unit max below the
 * write size), 1 failed, 2 usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/*
 * RWF_ATOMIC, the statx atomic write fields and FS_XFLAG_FORCEALIGN are
 * newer than Debian 12's headers: take them, and struct ea_statx, from
 * extalign's own headers rather than a copy.
 */
#include "extalign/atomic.h"
#include "extalign/uapi.h"

_Static_assert(offsetof(struct ea_statx, stx_atomic_write_unit_min) == 0xa8,
	       "statx layout differs from the kernel uapi");
_Static_assert(sizeof(struct ea_statx) == 0x100, "statx size differs from the kernel uapi");

#define ALIGN	 4096
#define FILL_BUF (1024 * 1024)
/* Doublewrite batches per thread, written round robin. */
#define DW_RING 4

struct opts {
	const char *path;
	const char *label;
	size_t bs;
	uint64_t size;
	unsigned threads;
	double runtime;
	double warmup;
	long ops;
	bool atomic;
	uint32_t extsize;
	bool forcealign;
	bool reuse;
	bool probe_only;
	bool json;
	uint64_t seed;
	const char *dw_path;
	unsigned dw_batch;
	const char *hist_path;
};

/* What one job found and measured, for the result line. */
struct result {
	const char *status;
	char reason[256];
	uint32_t xflags, extsize;
	bool have_statx;
	uint32_t awu_min, awu_max, awu_segs;
	bool probed;
	bool measured;
	uint64_t ops;
	double secs;
	double iops, mib_s;
	double mean_us, p50_us, p99_us, p999_us, max_us;
};

/*
 * Latencies in nanoseconds in a log-linear histogram: values below 64 exact,
 * above them 64 buckets per power of two (1.6% resolution).
 */
#define SUB_BITS 6
#define SUBS	 (1 << SUB_BITS)
#define NBUCKETS ((64 - SUB_BITS + 1) * SUBS)

struct hist {
	uint64_t n[NBUCKETS];
	uint64_t count;
	uint64_t sum;
	uint64_t max;
};

static unsigned bucket_of(uint64_t v)
{
	unsigned e;

	if (v < SUBS)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	return (e - SUB_BITS + 1) * SUBS + (unsigned)((v >> (e - SUB_BITS)) & (SUBS - 1));
}

/* The middle of the values that land in bucket i. */
static double bucket_mid(unsigned i)
{
	unsigned e, sub;
	double lo, width;

	if (i < SUBS)
		return i;
	e = i / SUBS + SUB_BITS - 1;
	sub = i % SUBS;
	width = (double)(1ULL << (e - SUB_BITS));
	lo = (double)(SUBS + sub) * width;
	return lo + width / 2;
}

static void hist_add(struct hist *h, uint64_t v)
{
	h->n[bucket_of(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

static void hist_merge(struct hist *to, const struct hist *from)
{
	for (unsigned i = 0; i < NBUCKETS; i++)
		to->n[i] += from->n[i];
	to->count += from->count;
	to->sum += from->sum;
	if (from->max > to->max)
		to->max = from->max;
}

/* The value at quantile q (0 < q <= 1), nanoseconds. */
static double hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	rank = (uint64_t)(q * (double)h->count + 0.999999);
	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < NBUCKETS; i++) {
		seen += h->n[i];
		if (seen >= rank) {
			double mid = bucket_mid(i);

			return mid > (double)h->max ? (double)h->max : mid;
		}
	}
	return (double)h->max;
}

/*
 * The histogram as text, for merging the rounds of a job elsewhere: a line
 * "NS COUNT" per bucket in use (NS the middle of the bucket, capped at the
 * largest value seen, as hist_quantile answers), then "max NS".
 */
static int hist_save(const struct hist *h, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	for (unsigned i = 0; i < NBUCKETS; i++) {
		double mid = bucket_mid(i);

		if (!h->n[i])
			continue;
		if (mid > (double)h->max)
			mid = (double)h->max;
		fprintf(f, "%.0f %" PRIu64 "\n", mid, h->n[i]);
	}
	fprintf(f, "max %" PRIu64 "\n", h->max);
	if (ferror(f)) {
		fclose(f);
		errno = EIO;
		return -1;
	}
	return fclose(f);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: a fast per-thread generator of write offsets. */
static uint64_t rnd_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "unknown";
}

static void info(const struct opts *o, const char *fmt, ...)
{
	va_list ap;

	printf("# %s: ", o->label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void set_reason(struct result *r, const char *status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* "16k", "64M", "1GiB", "4096": bytes, or 0 on a malformed or zero size. */
static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return 0;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case '\0':
		return v;
	default:
		return 0;
	}
	end++;
	if (*end && strcmp(end, "iB") && strcmp(end, "B"))
		return 0;
	if (v > (UINT64_MAX >> shift))
		return 0;
	return (uint64_t)v << shift;
}

static void *alloc_buf(size_t len, unsigned char seed)
{
	unsigned char *p;

	if (posix_memalign((void **)&p, ALIGN, len))
		return NULL;
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(seed + i * 131 + (i >> 12));
	return p;
}

static ssize_t write_at(int fd, void *buf, size_t len, off_t off, int flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return pwritev2(fd, &iov, 1, off, flags);
}

/* Allocate and write SIZE bytes of FD once, and make them durable. */
static int fill_file(int fd, uint64_t size, struct result *r)
{
	unsigned char *buf;

	if (fallocate(fd, 0, 0, (off_t)size) < 0) {
		set_reason(r, "fail", "fallocate %" PRIu64 ": %s", size, errname(errno));
		return 1;
	}
	buf = alloc_buf(FILL_BUF, 0x5a);
	if (!buf) {
		set_reason(r, "fail", "out of memory");
		return 1;
	}
	for (uint64_t off = 0; off < size; off += FILL_BUF) {
		size_t len = size - off < FILL_BUF ? (size_t)(size - off) : FILL_BUF;
		ssize_t done = write_at(fd, buf, len, (off_t)off, 0);

		if (done != (ssize_t)len) {
			set_reason(r, "fail", "filling the file at %" PRIu64 ": %s", off,
				   done < 0 ? errname(errno) : "short write");
			free(buf);
			return 1;
		}
	}
	free(buf);
	if (fsync(fd) < 0) {
		set_reason(r, "fail", "fsync: %s", errname(errno));
		return 1;
	}
	return 0;
}

/*
 * A new file: the hints first (ext4 takes forcealign only on a file without
 * blocks), then the whole size allocated and written once, so that the job
 * measures overwrites of written blocks and no unwritten extent conversion.
 */
static int setup_file(const struct opts *o, int fd, struct result *r)
{
	struct fsxattr fsx;

	if (o->extsize || o->forcealign) {
		if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0) {
			set_reason(r, "skip", "FS_IOC_FSGETXATTR: %s: no extent size hints here",
				   errname(errno));
			return 77;
		}
		fsx.fsx_xflags |= FS_XFLAG_EXTSIZE;
		fsx.fsx_extsize = o->extsize;
		if (o->forcealign)
			fsx.fsx_xflags |= FS_XFLAG_FORCEALIGN;
		if (ioctl(fd, FS_IOC_FSSETXATTR, &fsx) < 0) {
			int e = errno;

			/* Is it forcealign or the hint itself that is refused? */
			fsx.fsx_xflags &= ~FS_XFLAG_FORCEALIGN;
			if (o->forcealign && ioctl(fd, FS_IOC_FSSETXATTR, &fsx) == 0)
				set_reason(r, "skip",
					   "forcealign not supported by this kernel "
					   "(FS_IOC_FSSETXATTR: %s)",
					   errname(e));
			else
				set_reason(r, "skip",
					   "extent size hint not supported by this kernel "
					   "(FS_IOC_FSSETXATTR: %s)",
					   errname(e));
			return 77;
		}
		if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0) {
			set_reason(r, "fail", "FS_IOC_FSGETXATTR: %s", errname(errno));
			return 1;
		}
		if (!(fsx.fsx_xflags & FS_XFLAG_EXTSIZE) || fsx.fsx_extsize != o->extsize) {
			set_reason(r, "skip",
				   "extent size hint not supported by this kernel "
				   "(set %u, kernel kept xflags=0x%x extsize=%u)",
				   o->extsize, fsx.fsx_xflags, fsx.fsx_extsize);
			return 77;
		}
		if (o->forcealign && !(fsx.fsx_xflags & FS_XFLAG_FORCEALIGN)) {
			set_reason(r, "skip",
				   "forcealign not supported by this kernel "
				   "(the kernel dropped FS_XFLAG_FORCEALIGN)");
			return 77;
		}
	}

	return fill_file(fd, o->size, r);
}

static int read_hints(int fd, struct result *r)
{
	struct fsxattr fsx;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx) < 0)
		return -1;
	r->xflags = fsx.fsx_xflags;
	r->extsize = fsx.fsx_extsize;
	return 0;
}

static void read_statx(const struct opts *o, struct result *r)
{
	struct ea_statx stx;

	memset(&stx, 0, sizeof(stx));
	if (syscall(SYS_statx, AT_FDCWD, o->path, 0, STATX_WRITE_ATOMIC, &stx) < 0) {
		info(o, "statx: %s", errname(errno));
		return;
	}
	if (!(stx.stx_mask & STATX_WRITE_ATOMIC)) {
		info(o, "statx: the kernel does not report atomic write limits "
			"(no STATX_WRITE_ATOMIC in stx_mask)");
		return;
	}
	r->have_statx = true;
	r->awu_min = stx.stx_atomic_write_unit_min;
	r->awu_max = stx.stx_atomic_write_unit_max;
	r->awu_segs = stx.stx_atomic_write_segments_max;
	info(o, "statx: atomic write unit min %u max %u segments max %u, attribute %s", r->awu_min,
	     r->awu_max, r->awu_segs,
	     stx.stx_attributes & STATX_ATTR_WRITE_ATOMIC ? "set" : "not set");
}

/*
 * One write of the probe: WANT is 0 for success (the whole length) or the
 * errno it must fail with.  Returns true when the kernel answered as wanted.
 */
static bool probe_one(const struct opts *o, int fd, void *buf, size_t len, off_t off, int flags,
		      int want, const char *what)
{
	ssize_t done = write_at(fd, buf, len, off, flags);
	int e = errno;
	bool good;
	char got[64];

	if (done < 0)
		snprintf(got, sizeof(got), "%s", errname(e));
	else
		snprintf(got, sizeof(got), "wrote %zd", done);
	good = want ? done < 0 && e == want : done == (ssize_t)len;
	info(o, "probe: %s%s %zu bytes at %jd: %s (want %s) %s", flags ? "RWF_ATOMIC " : "plain ",
	     what, len, (intmax_t)off, got, want ? errname(want) : "success",
	     good ? "ok" : "WRONG");
	return good;
}

/*
 * Prove RWF_ATOMIC reaches the kernel's checks, with writes of UNIT bytes
 * (the job's size, or the file's atomic maximum when that is smaller).
 */
static int probe_atomic(const struct opts *o, int fd, size_t unit, struct result *r)
{
	const size_t odd = 3 * 4096;
	void *buf = alloc_buf(odd > unit ? odd : unit, 0xa5);
	bool good = true;

	if (!buf) {
		set_reason(r, "fail", "out of memory");
		return 1;
	}
	/* The control: without the flag this write is fine. */
	good &= probe_one(o, fd, buf, odd, 0, 0, 0, "control");
	good &= probe_one(o, fd, buf, odd, 0, RWF_ATOMIC, EINVAL, "length not a power of two");
	if (unit >= 2 * 4096)
		good &= probe_one(o, fd, buf, unit, 4096, RWF_ATOMIC, EINVAL,
				  "offset not aligned to the length");
	good &= probe_one(o, fd, buf, unit, 0, RWF_ATOMIC, 0, "aligned");
	free(buf);
	r->probed = true;
	if (!good) {
		set_reason(r, "fail",
			   "RWF_ATOMIC probe failed: the kernel ignores the flag or "
			   "refuses a valid atomic write; not running the atomic job");
		return 1;
	}
	return 0;
}

struct worker {
	pthread_t tid;
	const struct opts *o;
	int fd;
	int dw_fd;
	unsigned idx;
	struct hist *h;
	uint64_t last_end;
	int err;
	off_t err_off;
};

static pthread_barrier_t start_barrier;
static uint64_t t_start, t_warm_end, t_end;
static atomic_long ops_left;
static atomic_int stop_all;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->o;
	uint64_t nblocks = o->size / o->bs;
	uint64_t s = o->seed * 0x9E3779B97F4A7C15ULL + w->idx + 1;
	int flags = o->atomic ? RWF_ATOMIC : 0;
	void *buf = alloc_buf(o->bs, (unsigned char)w->idx);
	size_t dw_len = (size_t)o->dw_batch * o->bs;
	void *dw_buf = w->dw_fd >= 0 ? alloc_buf(dw_len, (unsigned char)w->idx) : NULL;
	unsigned ring = 0, pending = 0;

	if (!buf || (w->dw_fd >= 0 && !dw_buf)) {
		w->err = ENOMEM;
		atomic_store(&stop_all, 1);
	}
	pthread_barrier_wait(&start_barrier);
	if (w->err) {
		free(buf);
		free(dw_buf);
		return NULL;
	}
	/* Threads that reach here at the same time must not write in step. */
	for (unsigned i = 0; i <= w->idx; i++)
		rnd_next(&s);

	while (!atomic_load_explicit(&stop_all, memory_order_relaxed)) {
		uint64_t t0 = now_ns(), t1;
		bool measured = t0 >= t_warm_end;
		off_t off = (off_t)((rnd_next(&s) % nblocks) * o->bs);
		ssize_t done;

		if (measured) {
			if (o->ops) {
				if (atomic_fetch_sub(&ops_left, 1) <= 0)
					break;
			} else if (t0 >= t_end) {
				break;
			}
		}
		if (w->dw_fd >= 0 && !pending) {
			/*
			 * A doublewrite buffer, as InnoDB's: the next batch of
			 * pages goes there in one write and is durable before
			 * any of them may overwrite its home.  The first write
			 * of a batch carries the cost in its latency.
			 */
			off_t dw_off = (off_t)((w->idx * DW_RING + ring) * dw_len);

			ring = (ring + 1) % DW_RING;
			pending = o->dw_batch;
			done = write_at(w->dw_fd, dw_buf, dw_len, dw_off, RWF_DSYNC);
			if (done != (ssize_t)dw_len) {
				w->err = done < 0 ? errno : EIO;
				w->err_off = dw_off;
				atomic_store(&stop_all, 1);
				break;
			}
		}
		done = write_at(w->fd, buf, o->bs, off, flags);
		t1 = now_ns();
		if (pending)
			pending--;
		if (done != (ssize_t)o->bs) {
			w->err = done < 0 ? errno : EIO;
			w->err_off = off;
			atomic_store(&stop_all, 1);
			break;
		}
		if (measured) {
			hist_add(w->h, t1 - t0);
			w->last_end = t1;
		}
	}
	free(buf);
	free(dw_buf);
	return NULL;
}

static int run_load(const struct opts *o, int fd, int dw_fd, struct result *r)
{
	struct worker *w = calloc(o->threads, sizeof(*w));
	struct hist *total = calloc(1, sizeof(*total));
	uint64_t last = 0;
	unsigned started = 0;
	int rc = 0;

	if (!w || !total) {
		set_reason(r, "fail", "out of memory");
		free(w);
		free(total);
		return 1;
	}
	pthread_barrier_init(&start_barrier, NULL, o->threads + 1);
	atomic_store(&ops_left, o->ops);
	atomic_store(&stop_all, 0);
	for (unsigned i = 0; i < o->threads; i++) {
		w[i].o = o;
		w[i].fd = fd;
		w[i].dw_fd = dw_fd;
		w[i].idx = i;
		w[i].h = calloc(1, sizeof(*w[i].h));
		if (!w[i].h || pthread_create(&w[i].tid, NULL, worker_main, &w[i])) {
			/* A barrier cannot shrink: fail before anyone waits on it. */
			fprintf(stderr, "atomic-write: cannot start thread %u\n", i);
			exit(1);
		}
		started++;
	}
	t_start = now_ns();
	t_warm_end = t_start + (uint64_t)(o->warmup * 1e9);
	t_end = t_warm_end + (uint64_t)(o->runtime * 1e9);
	pthread_barrier_wait(&start_barrier);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(w[i].tid, NULL);
		hist_merge(total, w[i].h);
		if (w[i].last_end > last)
			last = w[i].last_end;
		if (w[i].err && !rc) {
			set_reason(r, "fail", "thread %u: %s%s at offset %jd: %s", i,
				   o->atomic ? "RWF_ATOMIC " : "", "write", (intmax_t)w[i].err_off,
				   errname(w[i].err));
			rc = 1;
		}
		free(w[i].h);
	}
	pthread_barrier_destroy(&start_barrier);
	free(w);

	r->measured = true;
	r->ops = total->count;
	r->secs = last > t_warm_end ? (double)(last - t_warm_end) / 1e9 : 0;
	if (!rc && (!r->ops || r->secs <= 0)) {
		set_reason(r, "fail", "no write completed in the measured time");
		rc = 1;
	}
	if (r->secs > 0) {
		r->iops = (double)r->ops / r->secs;
		r->mib_s = r->iops * (double)o->bs / (1024.0 * 1024.0);
	}
	if (r->ops) {
		r->mean_us = (double)total->sum / (double)total->count / 1e3;
		r->p50_us = hist_quantile(total, 0.50) / 1e3;
		r->p99_us = hist_quantile(total, 0.99) / 1e3;
		r->p999_us = hist_quantile(total, 0.999) / 1e3;
		r->max_us = (double)total->max / 1e3;
	}
	if (o->hist_path && r->ops && hist_save(total, o->hist_path) < 0 && !rc) {
		set_reason(r, "fail", "writing %s: %s", o->hist_path, errname(errno));
		rc = 1;
	}
	free(total);
	return rc;
}

static void json_str(const char *key, const char *s, bool comma)
{
	printf("\"%s\":\"", key);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	printf("\"%s", comma ? "," : "");
}

static void print_result(const struct opts *o, const struct result *r)
{
	if (o->json) {
		putchar('{');
		json_str("job", o->label, true);
		json_str("status", r->status, true);
		json_str("file", o->path, true);
		printf("\"atomic\":%s,\"bs\":%zu,\"threads\":%u,\"qd\":1,\"size\":%" PRIu64 ",",
		       o->atomic ? "true" : "false", o->bs, o->threads, o->size);
		printf("\"xflags\":%u,\"extsize\":%u,", r->xflags, r->extsize);
		if (o->dw_path)
			printf("\"dw_batch\":%u,", o->dw_batch);
		if (r->have_statx)
			printf("\"awu_min\":%u,\"awu_max\":%u,\"awu_segments\":%u,", r->awu_min,
			       r->awu_max, r->awu_segs);
		printf("\"probe\":%s", r->probed ? "true" : "false");
		if (r->measured && !strcmp(r->status, "ok"))
			printf(",\"ops\":%" PRIu64 ",\"secs\":%.3f,\"iops\":%.1f,\"mib_s\":%.2f,"
			       "\"mean_us\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,"
			       "\"max_us\":%.1f",
			       r->ops, r->secs, r->iops, r->mib_s, r->mean_us, r->p50_us, r->p99_us,
			       r->p999_us, r->max_us);
		if (r->reason[0]) {
			putchar(',');
			json_str("reason", r->reason, false);
		}
		printf("}\n");
		return;
	}
	printf("RESULT job=%s status=%s atomic=%d bs=%zu threads=%u qd=1 size=%" PRIu64
	       " xflags=0x%x extsize=%u",
	       o->label, r->status, o->atomic, o->bs, o->threads, o->size, r->xflags, r->extsize);
	if (r->have_statx)
		printf(" awu_min=%u awu_max=%u awu_segments=%u", r->awu_min, r->awu_max,
		       r->awu_segs);
	else
		printf(" awu_min=- awu_max=- awu_segments=-");
	if (o->dw_path)
		printf(" dw_batch=%u", o->dw_batch);
	printf(" probe=%s", r->probed ? "pass" : "-");
	if (r->measured && !strcmp(r->status, "ok"))
		printf(" ops=%" PRIu64 " secs=%.2f iops=%.1f mib_s=%.2f mean_us=%.1f p50_us=%.1f "
		       "p99_us=%.1f p999_us=%.1f max_us=%.1f",
		       r->ops, r->secs, r->iops, r->mib_s, r->mean_us, r->p50_us, r->p99_us,
		       r->p999_us, r->max_us);
	if (r->reason[0])
		printf(" reason=%s", r->reason);
	putchar('\n');
}

static int run_job(const struct opts *o)
{
	struct result r = { .status = "ok" };
	int flags = O_RDWR | O_DIRECT | O_CREAT | (o->reuse ? 0 : O_TRUNC);
	struct opts eff = *o;
	struct stat st;
	int fd, dw_fd = -1, rc = 0;
	char amount[64];

	fd = open(o->path, flags, 0644);
	if (fd < 0) {
		set_reason(&r, "fail", "open %s: %s", o->path, errname(errno));
		rc = 1;
		goto out;
	}
	if (o->reuse) {
		if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < o->bs) {
			set_reason(&r, "fail", "--reuse: %s is smaller than one write", o->path);
			rc = 1;
			goto out;
		}
		eff.size = (uint64_t)st.st_size - (uint64_t)st.st_size % o->bs;
	} else {
		rc = setup_file(o, fd, &r);
		if (rc) {
			/* What the kernel made of the file still goes on record. */
			read_hints(fd, &r);
			info(o, "file %s: xflags 0x%x, extsize %u", o->path, r.xflags, r.extsize);
			read_statx(o, &r);
			goto out;
		}
	}
	read_hints(fd, &r);
	info(o, "file %s: %" PRIu64 " bytes, xflags 0x%x%s, extsize %u", o->path, eff.size,
	     r.xflags, r.xflags & FS_XFLAG_FORCEALIGN ? " (forcealign)" : "", r.extsize);
	read_statx(o, &r);

	if (o->atomic) {
		size_t unit;

		if (!r.have_statx || !r.awu_max) {
			set_reason(&r, "skip", "no atomic writes on this file (statx unit max 0)");
			rc = 77;
			goto out;
		}
		unit = o->bs < r.awu_max ? o->bs : r.awu_max;
		rc = probe_atomic(o, fd, unit, &r);
		if (rc)
			goto out;
		if (o->bs > r.awu_max || o->bs < r.awu_min) {
			/* Show the refusal rather than take anyone's word for it. */
			void *buf = alloc_buf(o->bs, 0xa5);
			ssize_t done = buf ? write_at(fd, buf, o->bs, 0, RWF_ATOMIC) : -1;
			int e = errno;

			free(buf);
			set_reason(&r, "skip",
				   "cannot run: a %zu-byte atomic write is outside this file's "
				   "atomic unit range %u..%u (RWF_ATOMIC %zu bytes: %s)",
				   o->bs, r.awu_min, r.awu_max, o->bs,
				   done < 0 ? errname(e) : "succeeded?!");
			rc = 77;
			goto out;
		}
	}
	if (o->probe_only)
		goto out;
	if (o->dw_path) {
		uint64_t dw_size = (uint64_t)o->threads * DW_RING * o->dw_batch * o->bs;

		dw_fd = open(o->dw_path, O_RDWR | O_DIRECT | O_CREAT | O_TRUNC, 0644);
		if (dw_fd < 0) {
			set_reason(&r, "fail", "open %s: %s", o->dw_path, errname(errno));
			rc = 1;
			goto out;
		}
		rc = fill_file(dw_fd, dw_size, &r);
		if (rc)
			goto out;
		info(o,
		     "doublewrite buffer %s: every %u pages go there first in one RWF_DSYNC "
		     "write",
		     o->dw_path, o->dw_batch);
	}
	if (o->ops)
		snprintf(amount, sizeof(amount), "%ld writes", o->ops);
	else
		snprintf(amount, sizeof(amount), "%.1fs", o->runtime);
	info(o,
	     "%u threads, queue depth 1 each, %s%zu-byte O_DIRECT writes%s, %s after %.1fs warmup",
	     o->threads, o->atomic ? "RWF_ATOMIC " : "", o->bs,
	     o->dw_path ? " behind a doublewrite buffer" : "", amount, o->warmup);
	rc = run_load(&eff, fd, dw_fd, &r);
out:
	if (fd >= 0)
		close(fd);
	if (dw_fd >= 0)
		close(dw_fd);
	print_result(&eff, &r);
	fflush(stdout);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: atomic-write [OPTIONS] FILE\n"
		"\n"
		"Random O_DIRECT overwrites of FILE from several threads, each with one write\n"
		"in flight, with RWF_ATOMIC (default) or without it.  FILE is created (or\n"
		"truncated), given the hints asked for, allocated and written once first.\n"
		"\n"
		"  -l, --label NAME     job name in the output (default: FILE)\n"
		"  -b, --bs SIZE        bytes per write (default 16k)\n"
		"  -s, --size SIZE      file size (default 64m)\n"
		"  -j, --threads N      writer threads, queue depth 1 each (default 4)\n"
		"  -t, --runtime SECS   measured seconds (default 20)\n"
		"  -n, --ops N          stop after N measured writes instead\n"
		"  -w, --warmup SECS    unmeasured seconds first (default 1)\n"
		"  -A, --no-atomic      plain writes without RWF_ATOMIC (the baseline)\n"
		"  -D, --doublewrite F  a doublewrite buffer in file F (with -A): each batch\n"
		"                       of pages goes there in one RWF_DSYNC write first\n"
		"      --dw-batch N     pages per doublewrite batch (default 8)\n"
		"  -e, --extsize SIZE   set the extent size hint (FS_XFLAG_EXTSIZE) first\n"
		"  -f, --forcealign     also set FS_XFLAG_FORCEALIGN (needs --extsize)\n"
		"  -r, --reuse          use FILE as it is: no truncation, hints or fill\n"
		"  -p, --probe-only     statx and the RWF_ATOMIC probe, no load\n"
		"      --seed N         seed of the write offsets (default 1)\n"
		"      --json           the result as one JSON object\n"
		"      --hist FILE      save the latency histogram (\"NS COUNT\" lines, then\n"
		"                       \"max NS\") to merge runs elsewhere\n"
		"  -h, --help           this text\n"
		"\n"
		"Before an atomic job the tool proves the kernel honours RWF_ATOMIC: a 12 KiB\n"
		"write must fail with EINVAL (and succeed without the flag), a misaligned one\n"
		"must fail with EINVAL, an aligned one of the write size must succeed.\n"
		"\n"
		"Output: '#' lines of detail, then one line\n"
		"  RESULT job=NAME status=ok|skip|fail ... iops= p50_us= p99_us= ... [reason=...]\n"
		"Exit status: 0 ok, 77 the job cannot run on this file (skip), 1 failure,\n"
		"2 usage.\n");
}

static bool parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !errno && end != s && !*end && *v >= 0;
}

int main(int argc, char **argv)
{
	enum { OPT_SEED = 256, OPT_JSON, OPT_DW_BATCH, OPT_HIST };
	static const struct option longopts[] = {
		{ "label", required_argument, NULL, 'l' },
		{ "bs", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 'j' },
		{ "runtime", required_argument, NULL, 't' },
		{ "ops", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "no-atomic", no_argument, NULL, 'A' },
		{ "doublewrite", required_argument, NULL, 'D' },
		{ "dw-batch", required_argument, NULL, OPT_DW_BATCH },
		{ "hist", required_argument, NULL, OPT_HIST },
		{ "extsize", required_argument, NULL, 'e' },
		{ "forcealign", no_argument, NULL, 'f' },
		{ "reuse", no_argument, NULL, 'r' },
		{ "probe-only", no_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = {
		.bs = 16384,
		.size = 64ULL << 20,
		.threads = 4,
		.runtime = 20,
		.warmup = 1,
		.atomic = true,
		.seed = 1,
		.dw_batch = 8,
	};
	uint64_t v;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "l:b:s:j:t:n:w:AD:e:frph", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.label = optarg;
			break;
		case 'b':
			v = parse_size(optarg);
			if (!v || v % 512 || v > (1U << 30))
				goto bad;
			o.bs = (size_t)v;
			break;
		case 's':
			o.size = parse_size(optarg);
			if (!o.size)
				goto bad;
			break;
		case 'j':
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || !v || v > 1024)
				goto bad;
			o.threads = (unsigned)v;
			break;
		case 't':
			if (!parse_double(optarg, &o.runtime) || o.runtime <= 0)
				goto bad;
			break;
		case 'n':
			errno = 0;
			o.ops = strtol(optarg, &end, 10);
			if (errno || *end || o.ops <= 0)
				goto bad;
			break;
		case 'w':
			if (!parse_double(optarg, &o.warmup))
				goto bad;
			break;
		case 'A':
			o.atomic = false;
			break;
		case 'D':
			o.dw_path = optarg;
			break;
		case OPT_HIST:
			o.hist_path = optarg;
			break;
		case OPT_DW_BATCH:
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || !v || v > 1024)
				goto bad;
			o.dw_batch = (unsigned)v;
			break;
		case 'e':
			v = parse_size(optarg);
			if (!v || v > UINT32_MAX)
				goto bad;
			o.extsize = (uint32_t)v;
			break;
		case 'f':
			o.forcealign = true;
			break;
		case 'r':
			o.reuse = true;
			break;
		case 'p':
			o.probe_only = true;
			break;
		case OPT_SEED:
			errno = 0;
			o.seed = strtoull(optarg, &end, 0);
			if (errno || *end)
				goto bad;
			break;
		case OPT_JSON:
			o.json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	o.path = argv[optind];
	if (!o.label)
		o.label = o.path;
	if (o.forcealign && !o.extsize) {
		fprintf(stderr, "atomic-write: --forcealign needs --extsize\n");
		return 2;
	}
	if ((o.extsize || o.forcealign) && o.reuse) {
		fprintf(stderr, "atomic-write: --reuse takes the file as it is: no --extsize\n");
		return 2;
	}
	if (o.dw_path && o.atomic) {
		fprintf(stderr, "atomic-write: --doublewrite is the alternative to RWF_ATOMIC: "
				"give --no-atomic\n");
		return 2;
	}
	if (o.size < o.bs || o.size % o.bs) {
		fprintf(stderr, "atomic-write: --size must be a multiple of --bs\n");
		return 2;
	}
	return run_job(&o);

bad:
	for (const struct option *l = longopts; l->name; l++)
		if (l->val == c)
			fprintf(stderr, "atomic-write: bad value '%s' for --%s\n", optarg, l->name);
	return 2;
}
