// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sysfs parsing against the captured trees in tests/data/sysroot (see the
 * README there for where each number comes from), the ext4 superblock
 * parser and the mount table reader.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "extalign/blockdev.h"
#include "run-suite.h"

#define K 1024u

/* tests/run.sh runs from the top of the tree; EXTALIGN_TESTDATA overrides. */
static const char *fixture(const char *tree, char buf[static 512])
{
	snprintf(buf, 512, "%s/sysroot/%s", getenv("EXTALIGN_TESTDATA") ?: "tests/data", tree);
	return buf;
}

static const struct want {
	const char *name, *disk;
	enum ea_bdev_type type;
	unsigned major, minor;
	uint64_t size, start;
	uint32_t lbs, pbs;
	uint32_t hw_min, hw_max, boundary, max_bytes;
	enum ea_atomic_state state;
	uint32_t min, max;
	const char *reason;
} want618[] = {
	/* In list order: disks by name, each followed by its partitions by start. */
	{ "dm-0", "dm-0", EA_BDEV_DM, 253, 0, 1873283072ULL * 512, 0, 4 * K, 4 * K, 4 * K, 16 * K,
	  0, 16 * K, EA_ATOMIC_YES, 4 * K, 16 * K, "device" },
	{ "loop0", "loop0", EA_BDEV_LOOP, 7, 0, 204800ULL * 512, 0, 512, 512, 0, 0, 0, 0,
	  EA_ATOMIC_NONE, 0, 0, "no atomic" },
	{ "nvme0n1", "nvme0n1", EA_BDEV_DISK, 259, 0, 1875385008ULL * 512, 0, 4 * K, 4 * K, 4 * K,
	  16 * K, 0, 16 * K, EA_ATOMIC_YES, 4 * K, 16 * K, "device" },
	{ "nvme0n1p1", "nvme0n1", EA_BDEV_PART, 259, 1, 2097152ULL * 512, 2048, 4 * K, 4 * K, 4 * K,
	  16 * K, 0, 16 * K, EA_ATOMIC_YES, 4 * K, 16 * K, "aligned" },
	{ "nvme0n1p2", "nvme0n1", EA_BDEV_PART, 259, 2, 1873283072ULL * 512, 2099200, 4 * K, 4 * K,
	  4 * K, 16 * K, 0, 16 * K, EA_ATOMIC_YES, 4 * K, 16 * K, "aligned" },
	{ "nvme1n1", "nvme1n1", EA_BDEV_DISK, 259, 3, 7501476528ULL * 512, 0, 4 * K, 4 * K, 4 * K,
	  64 * K, 64 * K, 64 * K, EA_ATOMIC_YES, 4 * K, 64 * K, "device" },
	{ "nvme1n1p1", "nvme1n1", EA_BDEV_PART, 259, 4, 7501474472ULL * 512, 2056, 4 * K, 4 * K,
	  4 * K, 64 * K, 64 * K, 64 * K, EA_ATOMIC_NONE, 0, 0, "not aligned to atomic boundary" },
	{ "sda", "sda", EA_BDEV_DISK, 8, 0, 3907029168ULL * 512, 0, 512, 4 * K, 4 * K, 64 * K, 0,
	  64 * K, EA_ATOMIC_YES, 4 * K, 64 * K, "device" },
	{ "sda1", "sda", EA_BDEV_PART, 8, 1, 1048576ULL * 512, 63, 512, 4 * K, 4 * K, 64 * K, 0,
	  64 * K, EA_ATOMIC_NONE, 0, 0, "not aligned to atomic unit" },
	{ "sda2", "sda", EA_BDEV_PART, 8, 2, 3905980416ULL * 512, 2048, 512, 4 * K, 4 * K, 64 * K,
	  0, 64 * K, EA_ATOMIC_YES, 4 * K, 64 * K, "aligned" },
	{ "vda", "vda", EA_BDEV_DISK, 254, 0, 41943040ULL * 512, 0, 512, 512, 0, 0, 0, 0,
	  EA_ATOMIC_NONE, 0, 0, "no atomic" },
};

static void check_dev(const struct ea_bdev *b, const struct want *w)
{
	ck_assert_str_eq(b->name, w->name);
	ck_assert_str_eq(b->disk, w->disk);
	ck_assert_msg(b->type == w->type, "%s: type %s", w->name, ea_bdev_type_str(b->type));
	ck_assert_uint_eq(b->major, w->major);
	ck_assert_uint_eq(b->minor, w->minor);
	ck_assert_uint_eq(b->size, w->size);
	ck_assert_uint_eq(b->start, w->start);
	ck_assert_uint_eq(b->logical_block, w->lbs);
	ck_assert_uint_eq(b->physical_block, w->pbs);
	ck_assert(b->queue.present);
	ck_assert_uint_eq(b->queue.unit_min, w->hw_min);
	ck_assert_uint_eq(b->queue.unit_max, w->hw_max);
	ck_assert_uint_eq(b->queue.boundary, w->boundary);
	ck_assert_uint_eq(b->queue.max_bytes, w->max_bytes);
	ck_assert_msg(b->atomic.state == w->state, "%s: %s", w->name,
		      ea_atomic_state_str(b->atomic.state));
	ck_assert_uint_eq(b->atomic.unit_min, w->min);
	ck_assert_uint_eq(b->atomic.unit_max, w->max);
	ck_assert_msg(strstr(b->atomic.reason, w->reason), "%s: reason '%s'", w->name,
		      b->atomic.reason);
}

START_TEST(test_list_618)
{
	struct ea_bdev *v = NULL;
	size_t n = 0;
	char root[512];

	ck_assert_int_eq(ea_bdev_list(fixture("6.18", root), &v, &n), 0);
	ck_assert_uint_eq(n, sizeof(want618) / sizeof(want618[0]));
	for (size_t i = 0; i < n; i++)
		check_dev(&v[i], &want618[i]);
	ck_assert_int_eq(ea_bdev_find(v, n, 8, 1), 8);
	ck_assert_int_eq(ea_bdev_find(v, n, 259, 4), 6);
	ck_assert_int_eq(ea_bdev_find(v, n, 8, 99), -1);
	free(v);
}
END_TEST

/* Reading one device by name gives what the list gives. */
START_TEST(test_read_each_618)
{
	const struct want *w = &want618[_i];
	struct ea_bdev b;
	char root[512];

	ck_assert_int_eq(ea_bdev_read(fixture("6.18", root), w->name, &b), 0);
	check_dev(&b, w);
}
END_TEST

START_TEST(test_read_unknown)
{
	static const char *const bad[] = { "nvme9n1", "sdz1",	  "",	       ".",
					   "..",      "../block", "sda/queue", "queue" };
	struct ea_bdev b;
	char root[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(ea_bdev_read(fixture("6.18", root), bad[i], &b) == -ENODEV,
			      "'%s' accepted", bad[i]);
	ck_assert_int_eq(ea_bdev_read("/nonexistent/extalign", "sda", &b), -ENOENT);
}
END_TEST

START_TEST(test_queue_read)
{
	struct ea_atomic_queue q;
	char root[512];

	ck_assert_int_eq(ea_queue_read(fixture("6.18", root), "nvme1n1", &q), 0);
	ck_assert(q.present);
	ck_assert_uint_eq(q.unit_min, 4 * K);
	ck_assert_uint_eq(q.unit_max, 64 * K);
	ck_assert_uint_eq(q.boundary, 64 * K);
	ck_assert_uint_eq(q.max_bytes, 64 * K);
	/* Partitions have no queue of their own. */
	ck_assert_int_eq(ea_queue_read(fixture("6.18", root), "nvme1n1p1", &q), -ENODEV);
	ck_assert_int_eq(ea_queue_read(fixture("6.1", root), "sda", &q), 0);
	ck_assert(!q.present);
}
END_TEST

/* A kernel before 6.11: no files, which is "unsupported", not zero. */
START_TEST(test_list_61)
{
	struct ea_bdev *v = NULL;
	size_t n = 0;
	char root[512];

	ck_assert_int_eq(ea_bdev_list(fixture("6.1", root), &v, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].name, "sda");
	ck_assert_str_eq(v[1].name, "sda1");
	for (size_t i = 0; i < n; i++) {
		ck_assert(!v[i].queue.present);
		ck_assert_int_eq(v[i].atomic.state, EA_ATOMIC_UNSUPPORTED);
		ck_assert_uint_eq(v[i].physical_block, 4 * K);
	}
	ck_assert_uint_eq(v[1].start, 2048);
	free(v);
}
END_TEST

/* A tree with a stray file and a half-made device: neither is a device. */
START_TEST(test_stray_entries)
{
	char root[] = "/tmp/extalign-sysroot.XXXXXX", path[512];
	struct ea_bdev *v = NULL, b;
	size_t n = 0;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/sys", root);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/sys/block", root);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/sys/block/bogus", root);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	/* A directory without a dev file: gone while we looked, say. */
	snprintf(path, sizeof(path), "%s/sys/block/sdq", root);
	ck_assert_int_eq(mkdir(path, 0700), 0);

	ck_assert_int_eq(ea_bdev_read(root, "bogus", &b), -ENODEV);
	ck_assert_int_eq(ea_bdev_read(root, "sdq", &b), -ENODEV);
	ck_assert_int_eq(ea_bdev_list(root, &v, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(v);

	rmdir(path);
	snprintf(path, sizeof(path), "%s/sys/block/bogus", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sys/block", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/sys", root);
	rmdir(path);
	ck_assert_int_eq(rmdir(root), 0);
}
END_TEST

START_TEST(test_list_missing)
{
	struct ea_bdev *v = NULL;
	size_t n = 0;

	ck_assert_int_eq(ea_bdev_list("/nonexistent/extalign", &v, &n), -ENOENT);
	ck_assert_ptr_null(v);
}
END_TEST

static void put_le32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* A superblock with the fields we read: log block, log cluster, magic, ro_compat. */
static void make_sb(unsigned char sb[static 1024], uint32_t log_block, uint32_t log_cluster,
		    bool bigalloc)
{
	memset(sb, 0, 1024);
	put_le32(sb + 0x18, log_block);
	put_le32(sb + 0x1C, log_cluster);
	sb[0x38] = 0x53;
	sb[0x39] = 0xEF;
	put_le32(sb + 0x64, bigalloc ? 0x0200 | 0x0001 : 0x0001);
}

START_TEST(test_ext4_super)
{
	unsigned char sb[1024];
	struct ea_super s;

	make_sb(sb, 2, 2, false);
	ck_assert_int_eq(ea_ext4_super_parse(sb, sizeof(sb), &s), 0);
	ck_assert_uint_eq(s.block_size, 4 * K);
	ck_assert_uint_eq(s.cluster_size, 4 * K);

	/* Without the bigalloc feature the cluster field is ignored. */
	make_sb(sb, 2, 6, false);
	ck_assert_int_eq(ea_ext4_super_parse(sb, sizeof(sb), &s), 0);
	ck_assert_uint_eq(s.cluster_size, 4 * K);

	make_sb(sb, 2, 6, true);
	ck_assert_int_eq(ea_ext4_super_parse(sb, sizeof(sb), &s), 0);
	ck_assert_uint_eq(s.block_size, 4 * K);
	ck_assert_uint_eq(s.cluster_size, 64 * K);

	make_sb(sb, 0, 0, false);
	ck_assert_int_eq(ea_ext4_super_parse(sb, sizeof(sb), &s), 0);
	ck_assert_uint_eq(s.block_size, K);

	make_sb(sb, 7, 7, false); /* 128 KiB blocks do not exist */
	ck_assert_int_eq(ea_ext4_super_parse(sb, sizeof(sb), &s), -EINVAL);
	make_sb(sb, 2, 1, true); /* cluster smaller than a block */
	ck_assert_int_eq(ea_ext4_super_parse(sb, sizeof(sb), &s), -EINVAL);
	make_sb(sb, 2, 2, false);
	sb[0x38] = 0;
	ck_assert_int_eq(ea_ext4_super_parse(sb, sizeof(sb), &s), -EINVAL);
	make_sb(sb, 2, 2, false);
	ck_assert_int_eq(ea_ext4_super_parse(sb, 0x60, &s), -EINVAL);
}
END_TEST

START_TEST(test_mounts)
{
	/*
	 * A bind mount of a subtree first, then the real mount of the same
	 * filesystem, a second mount of it, tmpfs (major 0) and another disk.
	 */
	static const char text[] =
		"30 1 259:1 /srv/db /var/lib/mysql rw,relatime - ext4 /dev/nvme0n1p1 rw\n"
		"31 1 259:1 / /srv rw,relatime - ext4 /dev/nvme0n1p1 rw\n"
		"32 1 259:1 / /mnt/again rw,relatime - ext4 /dev/nvme0n1p1 rw\n"
		"33 1 0:25 / /tmp rw - tmpfs tmpfs rw\n"
		"34 1 8:2 / /data rw - xfs /dev/sda2 rw\n"
		"35 1 253:0 /sub /only/bind rw - xfs /dev/mapper/vg0-db rw\n";
	char path[] = "/tmp/extalign-mountinfo.XXXXXX";
	struct ea_mount *m = NULL;
	size_t n = 0;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	ck_assert_int_eq(ea_mounts_read(path, &m, &n), 0);
	unlink(path);

	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(m[0].target, "/srv"); /* the root mount wins over the bind */
	ck_assert_str_eq(m[0].fstype, "ext4");
	ck_assert_uint_eq(m[0].major, 259);
	ck_assert_uint_eq(m[0].minor, 1);
	ck_assert_str_eq(m[1].target, "/data");
	ck_assert_str_eq(m[1].fstype, "xfs");
	ck_assert_uint_eq(m[1].major, 8);
	ck_assert_str_eq(m[2].target, "/only/bind"); /* no root mount: the bind will do */
	ck_assert_uint_eq(m[2].major, 253);
	ea_mounts_free(m, n);

	ck_assert_int_lt(ea_mounts_read("/nonexistent/extalign", &m, &n), 0);
}
END_TEST

START_TEST(test_type_names)
{
	ck_assert_str_eq(ea_bdev_type_str(EA_BDEV_DISK), "disk");
	ck_assert_str_eq(ea_bdev_type_str(EA_BDEV_PART), "part");
	ck_assert_str_eq(ea_bdev_type_str(EA_BDEV_LOOP), "loop");
	ck_assert_str_eq(ea_bdev_type_str(EA_BDEV_DM), "dm");
	ck_assert_str_eq(ea_bdev_type_str(EA_BDEV_MD), "md");
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_list_618);
	tcase_add_loop_test(tc, test_read_each_618, 0, sizeof(want618) / sizeof(want618[0]));
	tcase_add_test(tc, test_read_unknown);
	tcase_add_test(tc, test_queue_read);
	tcase_add_test(tc, test_list_61);
	tcase_add_test(tc, test_stray_entries);
	tcase_add_test(tc, test_list_missing);
	tcase_add_test(tc, test_ext4_super);
	tcase_add_test(tc, test_mounts);
	tcase_add_test(tc, test_type_names);
	return run_suite("blockdev", tc);
}
