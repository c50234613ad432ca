// SPDX-License-Identifier: GPL-2.0-or-later
/* Atomic write limit rules fed with numbers, and our statx layout. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
/* The system's uapi first, so that we can tell whether it knows the atomic fields. */
#include <linux/stat.h>
#ifdef STATX_WRITE_ATOMIC
#define SYSTEM_HAS_ATOMIC_STATX 1
#endif

#include "extalign/atomic.h"
#include "run-suite.h"

#define K 1024u

/*
 * Offsets as the comments in the kernel's include/uapi/linux/stat.h give
 * them; a wrong type or a missing pad in our copy moves one of these.
 */
#define AT(field, off) _Static_assert(offsetof(struct ea_statx, field) == (off), #field)
AT(stx_mask, 0x00);
AT(stx_attributes, 0x08);
AT(stx_nlink, 0x10);
AT(stx_mode, 0x1c);
AT(stx_ino, 0x20);
AT(stx_attributes_mask, 0x38);
AT(stx_atime, 0x40);
AT(stx_mtime, 0x70);
AT(stx_rdev_major, 0x80);
AT(stx_dev_minor, 0x8c);
AT(stx_mnt_id, 0x90);
AT(stx_dio_mem_align, 0x98);
AT(stx_dio_offset_align, 0x9c);
AT(stx_subvol, 0xa0);
AT(stx_atomic_write_unit_min, 0xa8);
AT(stx_atomic_write_unit_max, 0xac);
AT(stx_atomic_write_segments_max, 0xb0);
AT(__spare3, 0xb8);
_Static_assert(sizeof(struct ea_statx) == 0x100, "struct statx is 256 bytes");
_Static_assert(sizeof(struct ea_statx_timestamp) == 16, "statx_timestamp");
_Static_assert(STATX_WRITE_ATOMIC == 0x00010000, "STATX_WRITE_ATOMIC");

/* And every field the installed (Linux 6.1) uapi has sits where ours does. */
#define SAME(field) \
	_Static_assert(offsetof(struct ea_statx, field) == offsetof(struct statx, field), #field)
SAME(stx_blksize);
SAME(stx_uid);
SAME(stx_blocks);
SAME(stx_btime);
SAME(stx_ctime);
SAME(stx_rdev_minor);
SAME(stx_dev_major);
SAME(stx_mnt_id);
SAME(stx_dio_offset_align);
#ifdef SYSTEM_HAS_ATOMIC_STATX
SAME(stx_atomic_write_unit_min);
SAME(stx_atomic_write_unit_max);
SAME(stx_atomic_write_segments_max);
#endif

START_TEST(test_rounddown_pow2)
{
	static const uint32_t in[][2] = {
		{ 0, 0 },	  { 1, 1 },	    { 2, 2 },
		{ 3, 2 },	  { 4096, 4096 },   { 4097, 4096 },
		{ 49152, 32768 }, { 65535, 32768 }, { UINT32_MAX, 0x80000000u },
	};

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		ck_assert_uint_eq(ea_rounddown_pow2(in[i][0]), in[i][1]);
}
END_TEST

/* One case per line reads better than one field per line. */
/* clang-format off */
/* One case's verdict: returned and stored state, limits, a reason that holds reason. */
static void check_verdict(const char *what, int ret, const struct ea_atomic *a,
			  enum ea_atomic_state want, uint32_t min, uint32_t max, const char *reason)
{
	ck_assert_msg(ret == (int)want, "%s: returned %d", what, ret);
	ck_assert_msg(a->state == want, "%s: state %s", what, ea_atomic_state_str(a->state));
	ck_assert_msg(a->unit_min == min && a->unit_max == max, "%s: %u..%u", what, a->unit_min,
		      a->unit_max);
	ck_assert_ptr_nonnull(a->reason);
	ck_assert_msg(strstr(a->reason, reason), "%s: reason '%s'", what, a->reason);
}

static const struct bdev_case {
	const char *what;
	struct ea_atomic_queue q;
	bool part;
	uint64_t start; /* sectors */
	enum ea_atomic_state want;
	uint32_t min, max;
	const char *reason; /* a substring */
} bdev_cases[] = {
	{ "kernel without sysfs files", { .present = false }, false, 0, EA_ATOMIC_UNSUPPORTED, 0, 0,
	  "before 6.11" },
	{ "kernel without sysfs files, partition", { .present = false }, true, 2048,
	  EA_ATOMIC_UNSUPPORTED, 0, 0, "before 6.11" },
	{ "device reports zeros", { true, 0, 0, 0, 0 }, false, 0, EA_ATOMIC_NONE, 0, 0,
	  "no atomic" },
	{ "NVMe 4K..16K disk", { true, 4 * K, 16 * K, 0, 16 * K }, false, 0, EA_ATOMIC_YES, 4 * K,
	  16 * K, "device" },
	{ "partition at 1 MiB", { true, 4 * K, 16 * K, 0, 16 * K }, true, 2048, EA_ATOMIC_YES,
	  4 * K, 16 * K, "aligned" },
	/* Only unit_min counts without a boundary, as in bdev_can_atomic_write(). */
	{ "partition at 1 MiB + 4 KiB", { true, 4 * K, 16 * K, 0, 16 * K }, true, 2056,
	  EA_ATOMIC_YES, 4 * K, 16 * K, "aligned" },
	{ "partition at sector 63", { true, 4 * K, 64 * K, 0, 64 * K }, true, 63, EA_ATOMIC_NONE, 0,
	  0, "not aligned to atomic unit" },
	{ "partition at sector 1 on a 512-byte unit", { true, 512, 64 * K, 0, 64 * K }, true, 1,
	  EA_ATOMIC_YES, 512, 64 * K, "aligned" },
	{ "partition off the boundary", { true, 4 * K, 64 * K, 64 * K, 64 * K }, true, 2056,
	  EA_ATOMIC_NONE, 0, 0, "boundary" },
	{ "partition on the boundary", { true, 4 * K, 64 * K, 64 * K, 64 * K }, true, 2048,
	  EA_ATOMIC_YES, 4 * K, 64 * K, "aligned" },
	{ "whole disk ignores start", { true, 4 * K, 64 * K, 64 * K, 64 * K }, false, 2056,
	  EA_ATOMIC_YES, 4 * K, 64 * K, "device" },
	{ "min above max", { true, 16 * K, 4 * K, 0, 16 * K }, false, 0, EA_ATOMIC_NONE, 0, 0,
	  "inconsistent" },
	{ "unit not a power of two", { true, 4 * K, 12 * K, 0, 12 * K }, false, 0, EA_ATOMIC_NONE,
	  0, 0, "inconsistent" },
	{ "min set, max zero", { true, 4 * K, 0, 0, 0 }, false, 0, EA_ATOMIC_NONE, 0, 0,
	  "no atomic" },
};
/* clang-format on */

START_TEST(test_bdev_rules)
{
	const struct bdev_case *t = &bdev_cases[_i];
	struct ea_atomic a;

	check_verdict(t->what, ea_atomic_for_bdev(&t->q, t->part, t->start, &a), &a, t->want,
		      t->min, t->max, t->reason);
}
END_TEST

#define DEV(s, lo, hi)                                           \
	{                                                        \
		.state = (s), .unit_min = (lo), .unit_max = (hi) \
	}
#define DEV_YES(lo, hi) DEV(EA_ATOMIC_YES, lo, hi)

/* clang-format off */
static const struct fs_case {
	const char *what;
	struct ea_atomic_fsfacts f;
	struct ea_atomic dev;
	enum ea_atomic_state want;
	uint32_t min, max;
	const char *reason;
} fs_cases[] = {
	{ "ext4 4K on 4K..16K: one block", { EA_FS_EXT4, 4 * K, 4 * K }, DEV_YES(4 * K, 16 * K),
	  EA_ATOMIC_YES, 4 * K, 4 * K, "one filesystem block" },
	{ "ext4 4K, no cluster known", { EA_FS_EXT4, 4 * K, 0 }, DEV_YES(4 * K, 16 * K),
	  EA_ATOMIC_YES, 4 * K, 4 * K, "one filesystem block" },
	{ "ext4 4K on 512..4K", { EA_FS_EXT4, 4 * K, 4 * K }, DEV_YES(512, 4 * K), EA_ATOMIC_YES,
	  4 * K, 4 * K, "one filesystem block" },
	{ "ext4 1K below the device minimum", { EA_FS_EXT4, K, K }, DEV_YES(4 * K, 16 * K),
	  EA_ATOMIC_NONE, 0, 0, "below" },
	{ "ext4 64K above the device maximum", { EA_FS_EXT4, 64 * K, 64 * K },
	  DEV_YES(4 * K, 16 * K), EA_ATOMIC_NONE, 0, 0, "above" },
	{ "bigalloc 64K cluster capped by 16K device", { EA_FS_EXT4, 4 * K, 64 * K },
	  DEV_YES(4 * K, 16 * K), EA_ATOMIC_YES, 4 * K, 16 * K, "cluster" },
	{ "bigalloc 16K cluster on 64K device", { EA_FS_EXT4, 4 * K, 16 * K },
	  DEV_YES(4 * K, 64 * K), EA_ATOMIC_YES, 4 * K, 16 * K, "cluster" },
	{ "bigalloc 1K blocks on a 4K-minimum device", { EA_FS_EXT4, K, 16 * K },
	  DEV_YES(4 * K, 64 * K), EA_ATOMIC_YES, 4 * K, 16 * K, "cluster" },
	{ "extsize+forcealign 32K on 16K device", { EA_FS_EXT4, 4 * K, 4 * K, 32 * K, true },
	  DEV_YES(4 * K, 16 * K), EA_ATOMIC_YES, 4 * K, 16 * K, "extent size" },
	{ "extsize+forcealign 16K on 64K device", { EA_FS_EXT4, 4 * K, 4 * K, 16 * K, true },
	  DEV_YES(4 * K, 64 * K), EA_ATOMIC_YES, 4 * K, 16 * K, "extent size" },
	{ "extsize+forcealign 48K: largest power of two", { EA_FS_EXT4, 4 * K, 4 * K, 48 * K, true },
	  DEV_YES(4 * K, 64 * K), EA_ATOMIC_YES, 4 * K, 32 * K, "extent size" },
	{ "extsize without forcealign: one block", { EA_FS_EXT4, 4 * K, 4 * K, 64 * K, false },
	  DEV_YES(4 * K, 64 * K), EA_ATOMIC_YES, 4 * K, 4 * K, "one filesystem block" },
	{ "forcealign without extsize: one block", { EA_FS_EXT4, 4 * K, 4 * K, 0, true },
	  DEV_YES(4 * K, 64 * K), EA_ATOMIC_YES, 4 * K, 4 * K, "one filesystem block" },
	{ "ext4 on a device that cannot", { EA_FS_EXT4, 4 * K, 4 * K }, DEV(EA_ATOMIC_NONE, 0, 0),
	  EA_ATOMIC_NONE, 0, 0, "device below" },
	{ "ext4 on a kernel without support", { EA_FS_EXT4, 4 * K, 4 * K },
	  DEV(EA_ATOMIC_UNSUPPORTED, 0, 0), EA_ATOMIC_UNSUPPORTED, 0, 0, "device below" },
	{ "ext4 block size unknown", { EA_FS_EXT4, 0, 0 }, DEV_YES(4 * K, 16 * K),
	  EA_ATOMIC_UNKNOWN, 0, 0, "block size unknown" },
	{ "XFS: the kernel decides", { EA_FS_XFS, 4 * K, 4 * K }, DEV_YES(4 * K, 16 * K),
	  EA_ATOMIC_UNKNOWN, 0, 0, "--probe" },
	{ "other filesystems", { EA_FS_OTHER, 4 * K, 4 * K }, DEV_YES(4 * K, 16 * K),
	  EA_ATOMIC_NONE, 0, 0, "filesystem has no" },
};
/* clang-format on */

START_TEST(test_fs_rules)
{
	const struct fs_case *t = &fs_cases[_i];
	struct ea_atomic a;

	check_verdict(t->what, ea_atomic_for_fs(&t->f, &t->dev, &a), &a, t->want, t->min, t->max,
		      t->reason);
}
END_TEST

START_TEST(test_from_statx)
{
	struct ea_statx stx = { 0 };
	struct ea_atomic a;

	/* Bit missing: the kernel did not answer, whatever the fields hold. */
	stx.stx_mask = 0x7ff;
	stx.stx_atomic_write_unit_min = 4 * K;
	stx.stx_atomic_write_unit_max = 16 * K;
	ck_assert_int_eq(ea_atomic_from_statx(&stx, false, &a), EA_ATOMIC_UNSUPPORTED);
	ck_assert_uint_eq(a.unit_min, 0);
	ck_assert_ptr_nonnull(strstr(a.reason, "filesystem"));
	ck_assert_int_eq(ea_atomic_from_statx(&stx, true, &a), EA_ATOMIC_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(a.reason, "device"));

	/* Bit set with zeros: answered, and the answer is no. */
	stx.stx_mask |= STATX_WRITE_ATOMIC;
	stx.stx_atomic_write_unit_min = 0;
	stx.stx_atomic_write_unit_max = 0;
	ck_assert_int_eq(ea_atomic_from_statx(&stx, false, &a), EA_ATOMIC_NONE);

	stx.stx_atomic_write_unit_min = 4 * K;
	stx.stx_atomic_write_unit_max = 16 * K;
	ck_assert_int_eq(ea_atomic_from_statx(&stx, false, &a), EA_ATOMIC_YES);
	ck_assert_uint_eq(a.unit_min, 4 * K);
	ck_assert_uint_eq(a.unit_max, 16 * K);
}
END_TEST

/*
 * Who keeps a write untorn.  The XFS rows copy what the 6.18 host measured
 * on a loop device (no hardware): statx 4K..1M with reflink, none without.
 */
/* clang-format off */
static const struct untorn_case {
	const char *what;
	enum ea_atomic_fs fs;
	struct ea_atomic dev, statx;
	enum ea_untorn want;
	uint32_t hw_min, hw_max, sw_min, sw_max;
	const char *reason;
} untorn_cases[] = {
	{ "not probed", EA_FS_XFS, DEV(EA_ATOMIC_YES, 4 * K, 64 * K), DEV(EA_ATOMIC_UNKNOWN, 0, 0),
	  EA_UNTORN_UNKNOWN, 0, 0, 0, 0, "not measured" },
	{ "old kernel", EA_FS_EXT4, DEV(EA_ATOMIC_UNSUPPORTED, 0, 0), DEV(EA_ATOMIC_UNSUPPORTED, 0, 0),
	  EA_UNTORN_NONE, 0, 0, 0, 0, "before 6.11" },
	{ "XFS reflink on a loop device", EA_FS_XFS, DEV(EA_ATOMIC_NONE, 0, 0), DEV(EA_ATOMIC_YES, 4 * K, 1024 * K),
	  EA_UNTORN_SOFTWARE, 0, 0, 4 * K, 1024 * K, "out of place" },
	{ "XFS without reflink on a loop device", EA_FS_XFS, DEV(EA_ATOMIC_NONE, 0, 0), DEV(EA_ATOMIC_NONE, 0, 0),
	  EA_UNTORN_NONE, 0, 0, 0, 0, "reflink=1" },
	{ "XFS reflink on a 4K..64K NVMe", EA_FS_XFS, DEV(EA_ATOMIC_YES, 4 * K, 64 * K),
	  DEV(EA_ATOMIC_YES, 4 * K, 1024 * K), EA_UNTORN_HARDWARE_SOFTWARE, 4 * K, 64 * K, 4 * K, 1024 * K,
	  "software fallback" },
	{ "XFS without reflink on a 4K..64K NVMe", EA_FS_XFS, DEV(EA_ATOMIC_YES, 4 * K, 64 * K),
	  DEV(EA_ATOMIC_YES, 4 * K, 64 * K), EA_UNTORN_HARDWARE, 4 * K, 64 * K, 0, 0, "extent is aligned" },
	{ "XFS 4K blocks on a 512..16K disk", EA_FS_XFS, DEV(EA_ATOMIC_YES, 512, 16 * K),
	  DEV(EA_ATOMIC_YES, 4 * K, 16 * K), EA_UNTORN_HARDWARE, 4 * K, 16 * K, 0, 0, "device" },
	{ "ext4 forcealign 16K on a 4K..64K NVMe", EA_FS_EXT4, DEV(EA_ATOMIC_YES, 4 * K, 64 * K),
	  DEV(EA_ATOMIC_YES, 4 * K, 16 * K), EA_UNTORN_HARDWARE, 4 * K, 16 * K, 0, 0, "the device writes" },
	{ "ext4 on a loop device", EA_FS_EXT4, DEV(EA_ATOMIC_NONE, 0, 0), DEV(EA_ATOMIC_NONE, 0, 0), EA_UNTORN_NONE,
	  0, 0, 0, 0, "no fallback" },
	{ "ext4 that does not pass them on", EA_FS_EXT4, DEV(EA_ATOMIC_YES, 4 * K, 64 * K), DEV(EA_ATOMIC_NONE, 0, 0),
	  EA_UNTORN_NONE, 0, 0, 0, 0, "does not pass" },
	{ "ranges that do not meet", EA_FS_EXT4, DEV(EA_ATOMIC_YES, 512, 2 * K), DEV(EA_ATOMIC_YES, 4 * K, 4 * K),
	  EA_UNTORN_NONE, 0, 0, 0, 0, "do not overlap" },
};
/* clang-format on */

START_TEST(test_untorn_rules)
{
	const struct untorn_case *t = &untorn_cases[_i];
	struct ea_untorn_verdict v;

	ck_assert_msg(ea_atomic_untorn(t->fs, &t->dev, &t->statx, &v) == t->want, "%s: %s", t->what,
		      ea_untorn_str(v.by));
	ck_assert_msg(v.by == t->want, "%s: by", t->what);
	ck_assert_msg(v.hw.unit_min == t->hw_min && v.hw.unit_max == t->hw_max,
		      "%s: hardware %u..%u", t->what, v.hw.unit_min, v.hw.unit_max);
	ck_assert_msg(v.hw.state == (t->hw_max ? EA_ATOMIC_YES : EA_ATOMIC_NONE), "%s: hw state",
		      t->what);
	ck_assert_msg(v.sw_min == t->sw_min && v.sw_max == t->sw_max, "%s: software %u..%u",
		      t->what, v.sw_min, v.sw_max);
	ck_assert_msg(v.reason && strstr(v.reason, t->reason), "%s: reason '%s'", t->what,
		      v.reason);
}
END_TEST

START_TEST(test_untorn_names)
{
	ck_assert_str_eq(ea_untorn_str(EA_UNTORN_HARDWARE_SOFTWARE), "hardware+software");
	ck_assert_str_eq(ea_untorn_str(EA_UNTORN_SOFTWARE), "software");
	ck_assert_str_eq(ea_untorn_str(EA_UNTORN_UNKNOWN), "unknown");
	ck_assert_str_eq(ea_untorn_str((enum ea_untorn)99), "unknown");
}
END_TEST

START_TEST(test_state_names)
{
	ck_assert_str_eq(ea_atomic_state_str(EA_ATOMIC_UNKNOWN), "unknown");
	ck_assert_str_eq(ea_atomic_state_str(EA_ATOMIC_UNSUPPORTED), "unsupported");
	ck_assert_str_eq(ea_atomic_state_str(EA_ATOMIC_NONE), "none");
	ck_assert_str_eq(ea_atomic_state_str(EA_ATOMIC_YES), "yes");
}
END_TEST

/* The live system: statx works with our struct, errors come back as -errno. */
START_TEST(test_statx_live)
{
	struct ea_statx stx;
	struct ea_atomic a;

	ck_assert_int_eq(ea_statx(AT_FDCWD, "/", 0, STATX_BASIC_STATS, &stx), 0);
	ck_assert(stx.stx_mask & STATX_INO);
	ck_assert_uint_eq(stx.stx_mode & S_IFMT, S_IFDIR);
	ck_assert_int_eq(ea_statx(AT_FDCWD, "/nonexistent/extalign", 0, STATX_BASIC_STATS, &stx),
			 -ENOENT);
	/* Reserved mask bit 31: the kernel refuses with EINVAL. */
	ck_assert_int_eq(ea_statx(AT_FDCWD, "/", 0, 0x80000000u, &stx), -EINVAL);
	ck_assert_int_eq(ea_atomic_statx(AT_FDCWD, "/nonexistent/extalign", 0, &a), -ENOENT);
	ck_assert_int_eq(ea_atomic_statx(AT_FDCWD, "/", 0, &a), 0);
	ck_assert_int_ne(a.state, EA_ATOMIC_UNKNOWN);
}
END_TEST

START_TEST(test_probe_extsize)
{
	/* { device unit max, block size, hint } */
	static const uint32_t in[][3] = {
		{ 64 * K, 4 * K, 64 * K },	 /* the device's unit */
		{ 0, 4 * K, 64 * K },		 /* unknown: the default */
		{ 0, 0, 64 * K },		 /* nothing known */
		{ 16 * K, 4 * K, 16 * K },	 /* small device unit */
		{ 48 * K, 4 * K, 32 * K },	 /* a power of two below */
		{ 4 * K, 64 * K, 64 * K },	 /* never below the block */
		{ 16 * K, 12 * K, 16 * K },	 /* odd block: its power of two */
		{ 16u << 20, 4 * K, 1024 * K },	 /* capped at 1 MiB */
		{ UINT32_MAX, 4 * K, 1024 * K }, /* capped, whatever the device says */
	};

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		uint32_t e = ea_atomic_probe_extsize(in[i][0], in[i][1]);

		ck_assert_msg(e == in[i][2], "device %u block %u: %u, want %u", in[i][0], in[i][1],
			      e, in[i][2]);
	}
	ck_assert_uint_eq(EA_PROBE_EXTSIZE_DEFAULT, 64 * K);
	ck_assert_str_eq(ea_probe_file_str(EA_PROBE_HINTED), "hinted");
	ck_assert_str_eq(ea_probe_file_str(EA_PROBE_PLAIN), "plain");
}
END_TEST

/*
 * The probe on whatever TMPDIR is: either the hint stuck and there is no
 * note, or the answer is a plain file's and the note says why.  The
 * integration tests check the real cases on ext4 and XFS.
 */
START_TEST(test_probe_dir)
{
	struct ea_atomic_probe p;
	const char *tmp = getenv("TMPDIR") ?: "/tmp";
	int r;

	ck_assert_int_eq(ea_atomic_probe_dir("/nonexistent/extalign", 64 * K, &p), -ENOENT);
	ck_assert_int_eq(ea_atomic_probe_dir(tmp, 48 * K, &p), -EINVAL);
	ck_assert_int_eq(ea_atomic_probe_dir(tmp, 0, &p), -EINVAL);
	r = ea_atomic_probe_dir(tmp, 64 * K, &p);
	ck_assert_msg(r == 0 || r == -EOPNOTSUPP, "probe of %s: %s", tmp, strerror(-r));
	if (r < 0)
		return;
	ck_assert_uint_eq(p.extsize, 64 * K);
	ck_assert_int_ne(p.atomic.state, EA_ATOMIC_UNKNOWN);
	ck_assert_ptr_nonnull(p.atomic.reason);
	if (p.file == EA_PROBE_HINTED) {
		ck_assert_ptr_null(p.note);
		ck_assert_int_eq(p.hint_err, 0);
	} else {
		ck_assert_int_eq(p.file, EA_PROBE_PLAIN);
		ck_assert_ptr_nonnull(p.note);
		ck_assert_int_eq(p.hint_err, -EOPNOTSUPP);
	}
}
END_TEST

int main(void)
{
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_rounddown_pow2);
	tcase_add_loop_test(tc, test_bdev_rules, 0, sizeof(bdev_cases) / sizeof(bdev_cases[0]));
	tcase_add_loop_test(tc, test_fs_rules, 0, sizeof(fs_cases) / sizeof(fs_cases[0]));
	tcase_add_test(tc, test_from_statx);
	tcase_add_test(tc, test_state_names);
	tcase_add_loop_test(tc, test_untorn_rules, 0,
			    sizeof(untorn_cases) / sizeof(untorn_cases[0]));
	tcase_add_test(tc, test_untorn_names);
	tcase_add_test(tc, test_statx_live);
	tcase_add_test(tc, test_probe_extsize);
	tcase_add_test(tc, test_probe_dir);
	return run_suite("atomic", tc);
}
