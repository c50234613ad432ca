// SPDX-License-Identifier: LGPL-2.1-or-later
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "extalign/fsinfo.h"
#include "extalign/macro.h"

static const struct {
	unsigned long magic;
	const char *name;
} fs_names[] = {
	{ EXT4_SUPER_MAGIC, "ext4" },
	{ XFS_SUPER_MAGIC, "xfs" },
	{ BTRFS_SUPER_MAGIC, "btrfs" },
	{ TMPFS_MAGIC, "tmpfs" },
	{ 0x65735546, "fuse" },
	{ NFS_SUPER_MAGIC, "nfs" },
	{ OVERLAYFS_SUPER_MAGIC, "overlay" },
	{ 0x2011BAB0, "exfat" },
	{ MSDOS_SUPER_MAGIC, "vfat" },
	{ F2FS_SUPER_MAGIC, "f2fs" },
	{ PROC_SUPER_MAGIC, "proc" },
	{ SYSFS_MAGIC, "sysfs" },
	{ RAMFS_MAGIC, "ramfs" },
};

const char *ea_fs_type_name(unsigned long magic)
{
	for (size_t i = 0; i < ARRAY_SIZE(fs_names); i++)
		if (fs_names[i].magic == magic)
			return fs_names[i].name;
	return "unknown";
}

bool ea_fs_may_support_extsize(unsigned long magic)
{
	return magic == EXT4_SUPER_MAGIC || magic == XFS_SUPER_MAGIC;
}

static int fsinfo_statfs(int fd, dev_t dev, struct ea_fsinfo *ret)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return negative_errno();
	*ret = (struct ea_fsinfo){
		.magic = (unsigned long)sfs.f_type,
		.type = ea_fs_type_name((unsigned long)sfs.f_type),
		.blksize = (uint64_t)sfs.f_bsize,
		.dev = dev,
	};
	return 0;
}

int ea_fsinfo_from_fd(int fd, struct ea_fsinfo *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return negative_errno();
	return fsinfo_statfs(fd, st.st_dev, ret);
}

int ea_fsinfo_cached(struct ea_fsinfo_cache *c, int fd, dev_t dev, struct ea_fsinfo *ret)
{
	int r;

	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].dev == dev) {
			*ret = c->e[i];
			return 0;
		}
	r = fsinfo_statfs(fd, dev, ret);
	if (r < 0)
		return r;
	/* Full: the oldest device makes room (round robin). */
	c->e[c->next] = *ret;
	c->next = (c->next + 1) % ARRAY_SIZE(c->e);
	if (c->n < ARRAY_SIZE(c->e))
		c->n++;
	return 0;
}
