// SPDX-License-Identifier: LGPL-2.1-or-later
/* Superblock facts (libblkid, ext4 superblock) and the mount table (libmount). */
#include <blkid.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libmount.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "extalign/blockdev.h"
#include "extalign/macro.h"

/* ext4 on-disk superblock offsets (Documentation/filesystems/ext4/super.rst). */
#define EXT4_SB_OFFSET		  1024
#define EXT4_SB_LOG_BLOCK_SIZE	  0x18
#define EXT4_SB_LOG_CLUSTER_SIZE  0x1C
#define EXT4_SB_MAGIC		  0x38
#define EXT4_SB_FEATURE_RO_COMPAT 0x64
#define EXT4_MAGIC		  0xEF53
#define EXT4_RO_COMPAT_BIGALLOC	  0x0200

/*
 * libblkid and libmount are opened the first time they are needed, not
 * linked: only "devices" and "status" use them, and linking them (with
 * libselinux and libpcre2 behind them; libselinux's constructor reads
 * /proc/filesystems) cost every start of extalign about 1 ms, a start the
 * CLI makes once per xargs batch: some 40 times for check over 100,000
 * paths, where that millisecond was most of the gap to filefrag
 * (tests/bench/compare.sh).  -ELIBACC when a library is not there.
 */
#define BLKID_SYMBOLS(X)                     \
	X(blkid_new_probe_from_filename)     \
	X(blkid_free_probe)                  \
	X(blkid_probe_enable_superblocks)    \
	X(blkid_probe_set_superblocks_flags) \
	X(blkid_do_safeprobe)                \
	X(blkid_probe_lookup_value)          \
	X(blkid_probe_get_fd)
#define MOUNT_SYMBOLS(X)        \
	X(mnt_new_table)        \
	X(mnt_unref_table)      \
	X(mnt_new_iter)         \
	X(mnt_free_iter)        \
	X(mnt_table_parse_file) \
	X(mnt_reset_iter)       \
	X(mnt_table_next_fs)    \
	X(mnt_fs_get_devno)     \
	X(mnt_fs_get_root)      \
	X(mnt_fs_get_target)    \
	X(mnt_fs_get_fstype)

#define DL_DECLARE(name) static typeof(name) *dl_##name;
BLKID_SYMBOLS(DL_DECLARE)
MOUNT_SYMBOLS(DL_DECLARE)
#define DL_LOAD(name)                                       \
	if (!(dl_##name = (typeof(name) *)dlsym(h, #name))) \
		return -ELIBBAD;

/* The library's state: 1 not tried yet, then 0 or -errno for good. */
static int blkid_loaded = 1, mount_loaded = 1;

static int blkid_open(void)
{
	void *h = dlopen("libblkid.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -ELIBACC;
	BLKID_SYMBOLS(DL_LOAD)
	return 0;
}

static int mount_open(void)
{
	void *h = dlopen("libmount.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -ELIBACC;
	MOUNT_SYMBOLS(DL_LOAD)
	return 0;
}

static int blkid_load(void)
{
	if (blkid_loaded > 0)
		blkid_loaded = blkid_open();
	return blkid_loaded;
}

static int mount_load(void)
{
	if (mount_loaded > 0)
		mount_loaded = mount_open();
	return mount_loaded;
}

static uint32_t le32_at(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int ea_ext4_super_parse(const unsigned char *sb, size_t len, struct ea_super *ret)
{
	uint32_t log_block, log_cluster;

	if (len < EXT4_SB_FEATURE_RO_COMPAT + 4)
		return -EINVAL;
	if ((sb[EXT4_SB_MAGIC] | sb[EXT4_SB_MAGIC + 1] << 8) != EXT4_MAGIC)
		return -EINVAL;
	/* Block sizes run from 1 KiB (0) to 64 KiB (6); refuse garbage. */
	log_block = le32_at(sb + EXT4_SB_LOG_BLOCK_SIZE);
	if (log_block > 6)
		return -EINVAL;
	ret->block_size = UINT32_C(1024) << log_block;
	ret->cluster_size = ret->block_size;
	if (le32_at(sb + EXT4_SB_FEATURE_RO_COMPAT) & EXT4_RO_COMPAT_BIGALLOC) {
		log_cluster = le32_at(sb + EXT4_SB_LOG_CLUSTER_SIZE);
		/* mke2fs allows clusters up to 2^16 blocks, 2^(10+6+16) bytes at most. */
		if (log_cluster < log_block || log_cluster > 22)
			return -EINVAL;
		ret->cluster_size = UINT32_C(1024) << log_cluster;
	}
	return 0;
}

static void blkid_free_probep(blkid_probe *pr)
{
	if (*pr)
		dl_blkid_free_probe(*pr);
}

int ea_super_read(const char *devnode, struct ea_super *ret)
{
	__attribute__((cleanup(blkid_free_probep))) blkid_probe pr = NULL;
	unsigned char sb[1024];
	const char *val;
	int r;

	*ret = (struct ea_super){ 0 };
	r = blkid_load();
	if (r < 0)
		return r;
	errno = 0;
	pr = dl_blkid_new_probe_from_filename(devnode);
	if (!pr)
		return negative_errno();
	dl_blkid_probe_enable_superblocks(pr, 1);
	dl_blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	r = dl_blkid_do_safeprobe(pr);
	if (r < 0)
		return -EIO;
	if (r == 1)
		return 0; /* nothing recognised: type stays "" */
	if (!dl_blkid_probe_lookup_value(pr, "TYPE", &val, NULL))
		snprintf(ret->type, sizeof(ret->type), "%s", val);
	/*
	 * Not libblkid's BLOCK_SIZE: for XFS 2.38 puts the sector size there.
	 * And 2.38 has no cluster size.  For ext4 the superblock has both.
	 */
	if (!strcmp(ret->type, "ext4") || !strcmp(ret->type, "ext3") ||
	    !strcmp(ret->type, "ext2")) {
		ssize_t n = pread(dl_blkid_probe_get_fd(pr), sb, sizeof(sb), EXT4_SB_OFFSET);

		if (n < 0)
			return negative_errno();
		r = ea_ext4_super_parse(sb, (size_t)n, ret);
		if (r < 0)
			return r;
	}
	return 0;
}

void ea_mounts_free(struct ea_mount *m, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(m[i].target);
		free(m[i].fstype);
	}
	free(m);
}

static void mnt_unref_tablep(struct libmnt_table **t)
{
	if (*t)
		dl_mnt_unref_table(*t);
}

static void mnt_free_iterp(struct libmnt_iter **i)
{
	if (*i)
		dl_mnt_free_iter(*i);
}

int ea_mounts_read(const char *path, struct ea_mount **ret, size_t *count)
{
	__attribute__((cleanup(mnt_unref_tablep))) struct libmnt_table *tb = NULL;
	__attribute__((cleanup(mnt_free_iterp))) struct libmnt_iter *it = NULL;
	struct ea_mount *v = NULL;
	struct libmnt_fs *fs;
	size_t n = 0;
	int r;

	r = mount_load();
	if (r < 0)
		return r;
	tb = dl_mnt_new_table();
	it = dl_mnt_new_iter(MNT_ITER_FORWARD);
	if (!tb || !it)
		return -ENOMEM;
	r = dl_mnt_table_parse_file(tb, path ? path : "/proc/self/mountinfo");
	if (r < 0)
		return r;

	/*
	 * Pass 0 takes mounts of a filesystem's root, pass 1 what is left
	 * (a filesystem only visible through a bind mount of a subtree): a
	 * path on the filesystem then resolves to its natural mount point.
	 */
	for (int pass = 0; pass < 2; pass++) {
		dl_mnt_reset_iter(it, MNT_ITER_FORWARD);
		while (dl_mnt_table_next_fs(tb, it, &fs) == 0) {
			dev_t dev = dl_mnt_fs_get_devno(fs);
			const char *root = dl_mnt_fs_get_root(fs);
			bool is_root = root && !strcmp(root, "/");
			struct ea_mount *nv;
			size_t i;

			if (!major(dev) || is_root != (pass == 0))
				continue;
			for (i = 0; i < n; i++)
				if (v[i].major == major(dev) && v[i].minor == minor(dev))
					break;
			if (i < n)
				continue;
			nv = reallocarray(v, n + 1, sizeof(*v));
			if (!nv)
				goto oom;
			v = nv;
			v[n] = (struct ea_mount){
				.target = strdup(dl_mnt_fs_get_target(fs) ?: ""),
				.fstype = strdup(dl_mnt_fs_get_fstype(fs) ?: ""),
				.major = major(dev),
				.minor = minor(dev),
			};
			n++;
			if (!v[n - 1].target || !v[n - 1].fstype)
				goto oom;
		}
	}
	*ret = v;
	*count = n;
	return 0;
oom:
	ea_mounts_free(v, n);
	return -ENOMEM;
}
