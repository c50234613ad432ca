// SPDX-License-Identifier: LGPL-2.1-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "extalign/blockdev.h"
#include "extalign/macro.h"

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

const char *ea_bdev_type_str(enum ea_bdev_type t)
{
	switch (t) {
	case EA_BDEV_DISK:
		return "disk";
	case EA_BDEV_PART:
		return "part";
	case EA_BDEV_LOOP:
		return "loop";
	case EA_BDEV_DM:
		return "dm";
	case EA_BDEV_MD:
		return "md";
	}
	return "disk";
}

/* SYSROOT/sys/block as a directory fd. */
static int open_sys_block(const char *sysroot)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/sys/block", sysroot ? sysroot : "") >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? negative_errno() : fd;
}

/* One line of a sysfs attribute, newline stripped. */
static int read_line(int dirfd, const char *rel, char *buf, size_t len)
{
	_cleanup_close_ int fd = -1;
	ssize_t n;

	fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return negative_errno();
	n = read(fd, buf, len - 1);
	if (n < 0)
		return negative_errno();
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int read_u64(int dirfd, const char *rel, uint64_t *ret)
{
	char buf[64], *end;
	int r;

	r = read_line(dirfd, rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	*ret = strtoull(buf, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int read_u32(int dirfd, const char *rel, uint32_t *ret)
{
	uint64_t v;
	int r;

	r = read_u64(dirfd, rel, &v);
	if (r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

static bool valid_name(const char *name)
{
	return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) <= NAME_MAX;
}

/* The four atomic_write_* attributes from a queue directory fd. */
static int queue_read_at(int qfd, struct ea_atomic_queue *ret)
{
	int r;

	*ret = (struct ea_atomic_queue){ 0 };
	r = read_u32(qfd, "atomic_write_unit_min_bytes", &ret->unit_min);
	if (r == -ENOENT)
		return 0; /* Linux before 6.11: not "zero", just not there */
	if (r < 0)
		return r;
	ret->present = true;
	r = read_u32(qfd, "atomic_write_unit_max_bytes", &ret->unit_max);
	if (r < 0)
		return r;
	r = read_u32(qfd, "atomic_write_boundary_bytes", &ret->boundary);
	if (r < 0)
		return r;
	return read_u32(qfd, "atomic_write_max_bytes", &ret->max_bytes);
}

int ea_queue_read(const char *sysroot, const char *disk, struct ea_atomic_queue *ret)
{
	_cleanup_close_ int sb = -1, qfd = -1;
	char rel[NAME_MAX + 8];

	if (!valid_name(disk))
		return -ENODEV;
	sb = open_sys_block(sysroot);
	if (sb < 0)
		return sb;
	snprintf(rel, sizeof(rel), "%s/queue", disk);
	qfd = openat(sb, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (qfd < 0)
		return errno == ENOENT ? -ENODEV : negative_errno();
	return queue_read_at(qfd, ret);
}

/* Fill ret from the device directory dfd; diskfd is the disk's own. */
static int bdev_fill(int dfd, int diskfd, const char *name, const char *disk, bool part,
		     struct ea_bdev *ret)
{
	_cleanup_close_ int qfd = -1;
	char buf[64];
	uint64_t sectors;
	int r;

	*ret = (struct ea_bdev){ 0 };
	snprintf(ret->name, sizeof(ret->name), "%s", name);
	snprintf(ret->disk, sizeof(ret->disk), "%s", disk);

	r = read_line(dfd, "dev", buf, sizeof(buf));
	if (r < 0)
		return r;
	if (sscanf(buf, "%u:%u", &ret->major, &ret->minor) != 2)
		return -EINVAL;
	/* sysfs "size" is in 512-byte sectors whatever the logical block size. */
	r = read_u64(dfd, "size", &sectors);
	if (r < 0)
		return r;
	ret->size = sectors * 512;

	if (part) {
		ret->type = EA_BDEV_PART;
		r = read_u64(dfd, "start", &ret->start);
		if (r < 0)
			return r;
	} else if (!strncmp(name, "loop", 4)) {
		ret->type = EA_BDEV_LOOP;
	} else if (!faccessat(dfd, "dm", F_OK, 0)) {
		ret->type = EA_BDEV_DM;
	} else if (!faccessat(dfd, "md", F_OK, 0)) {
		ret->type = EA_BDEV_MD;
	} else {
		ret->type = EA_BDEV_DISK;
	}

	/* Partitions have no queue of their own: the disk's limits apply. */
	qfd = openat(diskfd, "queue", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (qfd < 0)
		return negative_errno();
	r = read_u32(qfd, "logical_block_size", &ret->logical_block);
	if (r < 0)
		return r;
	r = read_u32(qfd, "physical_block_size", &ret->physical_block);
	if (r < 0)
		return r;
	r = queue_read_at(qfd, &ret->queue);
	if (r < 0)
		return r;
	ea_atomic_for_bdev(&ret->queue, part, ret->start, &ret->atomic);
	return 0;
}

static int open_subdir(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? negative_errno() : fd;
}

static bool is_partition_dir(int diskfd, const char *name)
{
	char rel[NAME_MAX + 12];

	if (!valid_name(name))
		return false;
	snprintf(rel, sizeof(rel), "%s/partition", name);
	return !faccessat(diskfd, rel, F_OK, 0);
}

int ea_bdev_read(const char *sysroot, const char *name, struct ea_bdev *ret)
{
	_cleanup_close_ int sb = -1, dfd = -1;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;

	if (!valid_name(name))
		return -ENODEV;
	sb = open_sys_block(sysroot);
	if (sb < 0)
		return sb;
	dfd = open_subdir(sb, name);
	if (dfd >= 0) {
		/* No "dev" or no queue: not a device (any more). */
		int r = bdev_fill(dfd, dfd, name, name, false, ret);

		return r == -ENOENT ? -ENODEV : r;
	}
	if (dfd != -ENOENT && dfd != -ENOTDIR)
		return dfd;

	/* Not a disk: look for a partition of that name under each disk. */
	d = fdopendir(TAKE_FD(sb));
	if (!d)
		return negative_errno();
	while ((de = readdir(d))) {
		_cleanup_close_ int diskfd = -1, pfd = -1;

		if (!valid_name(de->d_name))
			continue;
		diskfd = open_subdir(dirfd(d), de->d_name);
		if (diskfd < 0 || !is_partition_dir(diskfd, name))
			continue;
		pfd = open_subdir(diskfd, name);
		if (pfd < 0)
			return pfd;
		return bdev_fill(pfd, diskfd, name, de->d_name, true, ret);
	}
	return -ENODEV;
}

struct bdev_vec {
	struct ea_bdev *v;
	size_t n, cap;
};

static struct ea_bdev *vec_add(struct bdev_vec *vec)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? vec->cap * 2 : 16;
		struct ea_bdev *v = reallocarray(vec->v, cap, sizeof(*v));

		if (!v)
			return NULL;
		vec->v = v;
		vec->cap = cap;
	}
	return &vec->v[vec->n++];
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct ea_bdev *)a)->name, ((const struct ea_bdev *)b)->name);
}

static int cmp_start(const void *a, const void *b)
{
	uint64_t x = ((const struct ea_bdev *)a)->start, y = ((const struct ea_bdev *)b)->start;

	return x < y ? -1 : x > y;
}

/* Append the partitions of the disk in diskfd, in start order. */
static int add_partitions(int diskfd, const char *disk, struct bdev_vec *vec)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	size_t first = vec->n;
	int fd, r;

	fd = dup(diskfd);
	if (fd < 0)
		return negative_errno();
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return negative_errno();
	}
	while ((de = readdir(d))) {
		_cleanup_close_ int pfd = -1;
		struct ea_bdev *b;

		if (!is_partition_dir(diskfd, de->d_name))
			continue;
		pfd = open_subdir(diskfd, de->d_name);
		if (pfd < 0)
			return pfd;
		b = vec_add(vec);
		if (!b)
			return -ENOMEM;
		r = bdev_fill(pfd, diskfd, de->d_name, disk, true, b);
		if (r == -ENOENT) {
			vec->n--;
			continue;
		}
		if (r < 0)
			return r;
	}
	qsort(vec->v + first, vec->n - first, sizeof(*vec->v), cmp_start);
	return 0;
}

int ea_bdev_list(const char *sysroot, struct ea_bdev **ret, size_t *count)
{
	_cleanup_free_ struct ea_bdev *disks = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	struct bdev_vec dv = { 0 }, all = { 0 };
	struct dirent *de;
	int sb, r = 0;

	sb = open_sys_block(sysroot);
	if (sb < 0)
		return sb;
	d = fdopendir(sb);
	if (!d) {
		r = negative_errno();
		close(sb);
		return r;
	}
	while ((de = readdir(d))) {
		_cleanup_close_ int dfd = -1;
		struct ea_bdev *b;

		if (!valid_name(de->d_name))
			continue;
		dfd = open_subdir(dirfd(d), de->d_name);
		if (dfd < 0)
			continue; /* a stray file in a captured tree */
		b = vec_add(&dv);
		if (!b) {
			r = -ENOMEM;
			break;
		}
		r = bdev_fill(dfd, dfd, de->d_name, de->d_name, false, b);
		if (r == -ENOENT) {
			/* Gone while we looked, or not a device: not an error. */
			dv.n--;
			r = 0;
			continue;
		}
		if (r < 0)
			break;
	}
	disks = dv.v;
	if (r < 0)
		return r;
	qsort(disks, dv.n, sizeof(*disks), cmp_name);

	for (size_t i = 0; i < dv.n; i++) {
		_cleanup_close_ int dfd = -1;
		struct ea_bdev *b = vec_add(&all);

		if (!b) {
			r = -ENOMEM;
			break;
		}
		*b = disks[i];
		dfd = open_subdir(dirfd(d), disks[i].name);
		if (dfd < 0) {
			r = dfd;
			break;
		}
		r = add_partitions(dfd, disks[i].name, &all);
		if (r < 0)
			break;
	}
	if (r < 0) {
		free(all.v);
		return r;
	}
	*ret = all.v;
	*count = all.n;
	return 0;
}

ssize_t ea_bdev_find(const struct ea_bdev *list, size_t n, unsigned major, unsigned minor)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].major == major && list[i].minor == minor)
			return (ssize_t)i;
	return -1;
}
