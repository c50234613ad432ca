// SPDX-License-Identifier: GPL-2.0
/*
 * atomic-crash: the writer and the checker of the atomic-write crash test
 * (tests/kernel/90-atomic-crash.sh), run inside UML.
 *
 *   atomic-crash setup DIR          the files and their first layouts
 *   atomic-crash write DIR CYCLES   CYCLES rounds of RWF_ATOMIC writes,
 *                                   each slot re-armed to its layout
 *                                   first, with a thread forcing journal
 *                                   commits (fsync) all along
 *   atomic-crash check DIR          every slot holds one whole generation
 *   atomic-crash rearm-split DIR    re-arm the two-extent slot once more
 *
 * A slot is the range one atomic write covers.  Every write of a slot is
 * the slot's next generation: each 4 KiB block carries the slot, the
 * generation and its index in every 8-byte word, so that any mix of two
 * generations, or of a generation and zeros, shows.  All zeros is the
 * slot's state before its first write and after each re-arm.
 *
 * File "a" (extsize 64 KiB, forcealign) has a slot of 16, 32 and 64 KiB
 * over a hole, an unwritten unit and a mixed unit (the first half of the
 * slot written, the rest unwritten): nine slots, one per unit.  File "b"
 * (extsize 16 KiB, forcealign) has one 16 KiB slot whose unit is two
 * unwritten extents: the unit is the last extent of a full extent tree
 * leaf, and a write of its first block splits it across two leaves,
 * which ext4 never merges; a zero range makes both unwritten again.
 *
 * Re-arming never shows a torn slot: the slot is first written with
 * zeros atomically, so punching, preallocating and writing zeros leave
 * its contents zero throughout.
 *
 * check prints "ok N" or a "TORN ..." line per torn slot and exits 1 if
 * any; "missing" (exit 0) before the files exist.  FIEMAP cannot show
 * the two-extent layout (the extent status cache reports the unit as one
 * extent): the test reads the extent tree with debugfs instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../../include/extalign/uapi.h"

#define BLOCK 4096U
#define KiB   1024U
#define MAGIC 0x4541544fULL /* "EATO" */

enum layout { HOLE, UNWRITTEN, MIXED, SPLIT };
static const char *const layout_names[] = { "hole", "unwritten", "mixed", "split" };

struct slot {
	const char *file;
	enum layout layout;
	uint64_t unit_off, unit_len; /* the extsize unit holding the slot */
	uint64_t off, len;	     /* the slot: one atomic write */
};

/* Leaf of 4 KiB: (4096 - 12) / 12 extents; the split unit is the last. */
#define LEAF_EXTENTS 340
#define B_UNIT	     (16 * KiB)
#define B_SPLIT_OFF  ((uint64_t)(LEAF_EXTENTS - 1) * 2 * B_UNIT)

static struct slot slots[10];
static int nslots;

static void make_slots(void)
{
	static const uint64_t sizes[] = { 16 * KiB, 32 * KiB, 64 * KiB };
	uint64_t unit = 64 * KiB, off = 0;

	for (int l = HOLE; l <= MIXED; l++)
		for (int s = 0; s < 3; s++) {
			/* The slot at the end of its unit, unit apart from the next. */
			slots[nslots++] =
				(struct slot){ "a", l, off, unit, off + unit - sizes[s], sizes[s] };
			off += 2 * unit;
		}
	slots[nslots++] = (struct slot){ "b", SPLIT, B_SPLIT_OFF, B_UNIT, B_SPLIT_OFF, B_UNIT };
}

/* The magic, the slot (8 bits), the generation (20), the block (4). */
static uint64_t word_of(int slot, uint32_t gen, uint32_t blk)
{
	return MAGIC << 32 | (uint64_t)slot << 24 | (uint64_t)gen << 4 | blk;
}

static void die(const char *what)
{
	fprintf(stderr, "atomic-crash: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void *aligned(size_t len)
{
	void *p;

	if (posix_memalign(&p, BLOCK, len))
		die("posix_memalign");
	memset(p, 0, len);
	return p;
}

static int open_in(const char *dir, const char *name, int flags)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, flags, 0644);
	if (fd < 0 && !(flags & O_CREAT) && errno == ENOENT)
		return -1;
	if (fd < 0)
		die(path);
	return fd;
}

static void atomic_write(int fd, const void *buf, uint64_t off, uint64_t len)
{
	struct iovec iov = { (void *)buf, len };

	if (pwritev2(fd, &iov, 1, off, RWF_ATOMIC) != (ssize_t)len)
		die("pwritev2(RWF_ATOMIC)");
}

static void plain_write(int fd, const void *buf, uint64_t off, uint64_t len)
{
	if (pwrite(fd, buf, len, off) != (ssize_t)len)
		die("pwrite");
}

static void falloc(int fd, int mode, uint64_t off, uint64_t len)
{
	if (fallocate(fd, mode, off, len))
		die("fallocate");
}

static void set_hint(int fd, uint32_t extsize)
{
	struct fsxattr fsx;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx))
		die("FS_IOC_FSGETXATTR");
	fsx.fsx_xflags |= FS_XFLAG_EXTSIZE | FS_XFLAG_FORCEALIGN;
	fsx.fsx_extsize = extsize;
	if (ioctl(fd, FS_IOC_FSSETXATTR, &fsx))
		die("FS_IOC_FSSETXATTR extsize + forcealign");
}

/*
 * Bring the slot back to its layout, zeros throughout (see the top).
 * The first time (fresh) the unit is a hole and there is nothing to zero.
 */
static void arm(int fd, const struct slot *s, const void *zeros, int fresh)
{
	if (!fresh) {
		atomic_write(fd, zeros, s->off, s->len);
		falloc(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, s->unit_off, s->unit_len);
	}
	switch (s->layout) {
	case HOLE:
		break;
	case UNWRITTEN:
		falloc(fd, 0, s->unit_off, s->unit_len);
		break;
	case MIXED:
		falloc(fd, 0, s->unit_off, s->unit_len);
		plain_write(fd, zeros, s->off, s->len / 2);
		break;
	case SPLIT:
		falloc(fd, 0, s->unit_off, s->unit_len);
		plain_write(fd, zeros, s->off, BLOCK);
		falloc(fd, FALLOC_FL_ZERO_RANGE, s->unit_off, s->unit_len);
		break;
	}
}

static int setup(const char *dir)
{
	int a = open_in(dir, "a", O_RDWR | O_CREAT | O_DIRECT);
	int b = open_in(dir, "b", O_RDWR | O_CREAT | O_DIRECT);
	void *zeros = aligned(64 * KiB);

	set_hint(a, 64 * KiB);
	set_hint(b, B_UNIT);
	/* A full leaf of file b: one unit every other unit. */
	for (int i = 0; i < LEAF_EXTENTS - 1; i++)
		falloc(b, 0, (uint64_t)i * 2 * B_UNIT, B_UNIT);
	for (int i = 0; i < nslots; i++)
		arm(strcmp(slots[i].file, "a") ? b : a, &slots[i], zeros, 1);
	if (fsync(a) || fsync(b))
		die("fsync");
	printf("setup: %d slots; file b's split unit: blocks %llu-%llu\n", nslots,
	       (unsigned long long)B_SPLIT_OFF / BLOCK,
	       (unsigned long long)(B_SPLIT_OFF + B_UNIT) / BLOCK - 1);
	free(zeros);
	close(a);
	close(b);
	return 0;
}

static atomic_int stop;
static atomic_ulong commits;

/* Journal commits all the time: an fsync after each inode update. */
static void *storm(void *arg)
{
	int fd = open_in(arg, "storm", O_RDWR | O_CREAT);
	char buf[BLOCK] = { 0 };

	for (unsigned long i = 0; !atomic_load(&stop); i++) {
		plain_write(fd, buf, (i % 16) * BLOCK, BLOCK);
		if (fsync(fd))
			die("fsync storm");
		atomic_fetch_add(&commits, 1);
	}
	close(fd);
	return NULL;
}

static void fill(void *buf, int slot, uint32_t gen, uint64_t len)
{
	uint64_t *w = buf;

	for (uint32_t blk = 0; blk < len / BLOCK; blk++)
		for (unsigned int i = 0; i < BLOCK / 8; i++)
			*w++ = word_of(slot, gen, blk);
}

static int write_cycles(const char *dir, int cycles)
{
	int a = open_in(dir, "a", O_RDWR | O_DIRECT);
	int b = open_in(dir, "b", O_RDWR | O_DIRECT);
	void *zeros = aligned(64 * KiB), *buf = aligned(64 * KiB);
	pthread_t t;

	if (a < 0 || b < 0)
		die("the files of setup");
	if (pthread_create(&t, NULL, storm, (void *)dir))
		die("pthread_create");
	for (uint32_t gen = 1; gen <= (uint32_t)cycles; gen++)
		for (int i = 0; i < nslots; i++) {
			const struct slot *s = &slots[i];
			int fd = strcmp(s->file, "a") ? b : a;

			if (gen > 1)
				arm(fd, s, zeros, 0);
			fill(buf, i, gen, s->len);
			atomic_write(fd, buf, s->off, s->len);
		}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	if (fsync(a) || fsync(b))
		die("fsync");
	printf("write: %d cycles of %d slots, %lu storm commits\n", cycles, nslots,
	       atomic_load(&commits));
	free(zeros);
	free(buf);
	return 0;
}

/* Re-arm the split slot once more: the test checks its layout after. */
static int rearm_split(const char *dir)
{
	int b = open_in(dir, "b", O_RDWR | O_DIRECT);
	void *zeros = aligned(64 * KiB);

	if (b < 0)
		die("file b");
	arm(b, &slots[nslots - 1], zeros, 0);
	if (fsync(b))
		die("fsync");
	free(zeros);
	close(b);
	return 0;
}

/* The generation of a block, 0 for zeros, -1 for anything else. */
static int64_t gen_of(const uint64_t *w, int slot, uint32_t blk)
{
	uint64_t first = w[0];
	uint32_t gen = (first >> 4) & 0xfffff;
	int zero = first == 0;

	if (!zero && first != word_of(slot, gen, blk))
		return -1;
	for (unsigned int i = 1; i < BLOCK / 8; i++)
		if (w[i] != first)
			return -1;
	return zero ? 0 : gen;
}

static int check(const char *dir)
{
	int a = open_in(dir, "a", O_RDONLY | O_DIRECT);
	int b = open_in(dir, "b", O_RDONLY | O_DIRECT);
	void *buf = aligned(64 * KiB);
	int torn = 0;

	if (a < 0 || b < 0) {
		printf("missing\n");
		return 0;
	}
	for (int i = 0; i < nslots; i++) {
		const struct slot *s = &slots[i];
		ssize_t got = pread(strcmp(s->file, "a") ? b : a, buf, s->len, s->off);
		char gens[256] = "";
		int64_t g0 = 0, g;
		int whole = 1, n = 0;

		if (got < 0)
			die("pread");
		/* Past EOF reads short: that part is zeros. */
		if ((uint64_t)got < s->len)
			memset((char *)buf + got, 0, s->len - got);
		for (uint32_t blk = 0; blk < s->len / BLOCK; blk++) {
			g = gen_of((uint64_t *)buf + blk * (BLOCK / 8), i, blk);
			if (blk == 0)
				g0 = g;
			if (g != g0 || g < 0)
				whole = 0;
			n += snprintf(gens + n, sizeof(gens) - n, "%s%lld", blk ? "," : "",
				      (long long)g);
		}
		if (!whole) {
			printf("TORN slot %d (%s %s, %llu KiB at %llu): block generations %s\n", i,
			       s->file, layout_names[s->layout], (unsigned long long)s->len / KiB,
			       (unsigned long long)s->off, gens);
			torn++;
		}
	}
	if (!torn)
		printf("ok %d\n", nslots);
	free(buf);
	return torn ? 1 : 0;
}

int main(int argc, char **argv)
{
	make_slots();
	if (argc == 3 && !strcmp(argv[1], "setup"))
		return setup(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "write"))
		return write_cycles(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "check"))
		return check(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "rearm-split"))
		return rearm_split(argv[2]);
	fprintf(stderr, "usage: atomic-crash setup|write|check DIR [CYCLES]\n");
	return 2;
}
