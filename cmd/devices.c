// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extalign devices: the atomic write limits of block devices, of the
 * filesystems mounted on them and of given files, as an lsblk-like tree.
 *
 * Rows: disks and stacked devices at the top, partitions under their disk,
 * each mounted filesystem under its device (TYPE "fs", NAME the mount point)
 * and each PATH argument under its filesystem (TYPE "file").  One column set
 * serves all rows; a column a row has no value for stays empty (JSON null).
 *
 * With --probe a filesystem row describes the file the probe measured: an
 * O_TMPFILE given the device's atomic unit as extent size hint plus
 * forcealign, what a database file set up by extalign would be, or, where
 * the kernel drops either, a plain one; PROBE and REASON say which.
 */
#include <ctype.h>
#include <err.h>
#include <fcntl.h>
#include <getopt.h>
#include <libsmartcols.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "cmd.h"
#include "escape.h"
#include "extalign/e2fsck.h"
#include "extalign/atomic.h"
#include "extalign/blockdev.h"
#include "extalign/hint.h"
#include "extalign/macro.h"
#include "extalign/size.h"
#include "table.h"

enum {
	COL_NAME,
	COL_TYPE,
	COL_MAJMIN,
	COL_SIZE,
	COL_LOGSEC,
	COL_PHYSEC,
	COL_START,
	COL_FSTYPE,
	COL_BLOCK,
	COL_CLUSTER,
	COL_EXTSIZE,
	COL_FORCEALIGN,
	COL_HWMIN,
	COL_HWMAX,
	COL_BOUNDARY,
	COL_HWLIMIT,
	COL_ATOMIC,
	COL_AWUMIN,
	COL_AWUMAX,
	COL_STATX,
	COL_STATXMIN,
	COL_STATXMAX,
	COL_PROBE,
	COL_UNTORN,
	COL_SWMIN,
	COL_SWMAX,
	COL_REASON,
	COL_COUNT,
};

/* Names are the -o words and, lower-cased by libsmartcols, the JSON keys. */
static const struct column {
	const char *name;
	double width;
	int flags;
	int json_type;
	const char *help;
} columns[COL_COUNT] = {
	[COL_NAME] = { "NAME", 0.25, SCOLS_FL_TREE | SCOLS_FL_NOEXTREMES, SCOLS_JSON_STRING,
		       "device name, mount point or path" },
	[COL_TYPE] = { "TYPE", 4, 0, SCOLS_JSON_STRING, "disk, part, loop, dm, md, fs or file" },
	[COL_MAJMIN] = { "MAJ:MIN", 6, 0, SCOLS_JSON_STRING, "device number" },
	[COL_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "device size" },
	[COL_LOGSEC] = { "LOG-SEC", 4, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "logical sector size" },
	[COL_PHYSEC] = { "PHY-SEC", 4, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "physical sector size" },
	[COL_START] = { "START", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			"partition offset into its disk (bytes)" },
	[COL_FSTYPE] = { "FSTYPE", 5, 0, SCOLS_JSON_STRING, "filesystem type" },
	[COL_BLOCK] = { "BLOCK", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER, "filesystem block size" },
	[COL_CLUSTER] = { "CLUSTER", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "ext4 bigalloc cluster size (block size without bigalloc)" },
	[COL_EXTSIZE] = { "EXTSIZE", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "a file's extent size hint" },
	[COL_FORCEALIGN] = { "FORCEALIGN", 3, 0, SCOLS_JSON_BOOLEAN_OPTIONAL,
			     "a file's forcealign flag" },
	[COL_HWMIN] = { "HW-MIN", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			"sysfs atomic_write_unit_min_bytes (of the disk for partitions)" },
	[COL_HWMAX] = { "HW-MAX", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			"sysfs atomic_write_unit_max_bytes" },
	[COL_BOUNDARY] = { "BOUNDARY", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "sysfs atomic_write_boundary_bytes" },
	[COL_HWLIMIT] = { "HW-LIMIT", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			  "sysfs atomic_write_max_bytes" },
	[COL_ATOMIC] = { "ATOMIC", 5, 0, SCOLS_JSON_STRING,
			 "hardware atomic writes: yes, none, unsupported or unknown (XFS until "
			 "--probe)" },
	[COL_AWUMIN] = { "AWU-MIN", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			 "smallest hardware atomic write unit" },
	[COL_AWUMAX] = { "AWU-MAX", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			 "largest hardware atomic write unit" },
	[COL_STATX] = { "STATX", 5, 0, SCOLS_JSON_STRING,
			"statx(STATX_WRITE_ATOMIC): yes, none, unsupported (not asked: empty)" },
	[COL_STATXMIN] = { "STATX-MIN", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "statx stx_atomic_write_unit_min" },
	[COL_STATXMAX] = { "STATX-MAX", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			   "statx stx_atomic_write_unit_max" },
	[COL_PROBE] = { "PROBE", 6, 0, SCOLS_JSON_STRING,
			"--probe, fs rows: file measured, hinted (extsize+forcealign) or plain" },
	[COL_UNTORN] = { "UNTORN", 8, 0, SCOLS_JSON_STRING,
			 "--probe: who keeps a write untorn: hardware, software, "
			 "hardware+software or none" },
	[COL_SWMIN] = { "SW-MIN", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			"--probe: smallest unit of the filesystem's software fallback" },
	[COL_SWMAX] = { "SW-MAX", 5, SCOLS_FL_RIGHT, SCOLS_JSON_NUMBER,
			"--probe: largest unit of the filesystem's software fallback" },
	[COL_REASON] = { "REASON", 0.3, SCOLS_FL_TRUNC, SCOLS_JSON_STRING, "why, in words" },
};

static const int default_columns[] = {
	COL_NAME,     COL_TYPE,	  COL_SIZE,   COL_FSTYPE, COL_HWMIN, COL_HWMAX,
	COL_BOUNDARY, COL_ATOMIC, COL_AWUMIN, COL_AWUMAX, COL_STATX, COL_REASON,
};

struct ctx {
	const char *sysroot; /* NULL: the live system */
	bool json, bytes, probe;
	struct libscols_table *tb;
	int cols[COL_COUNT]; /* chosen columns, in output order */
	size_t ncols;
	struct ea_bdev *devs;
	size_t ndevs;
	struct ea_mount *mounts;
	size_t nmounts;
	bool *selected;			/* per devs[] entry */
	struct libscols_line **lines;	/* per devs[] entry, once printed */
	struct libscols_line **fslines; /* per devs[] entry: its filesystem row */
	bool saw_ext4;			/* a row is an ext4: say what e2fsck knows */
};

static void usage(FILE *out)
{
	fputs("Usage: extalign devices [options] [DEVICE|PATH...]\n\n"
	      "Show the atomic write limits of block devices, of the filesystems\n"
	      "mounted on them and of files: what the kernel offers and why.\n\n"
	      "Options:\n"
	      "  -J, --json          JSON output (sizes in bytes)\n"
	      "  -o, --output LIST   columns to show (see below)\n"
	      "  -b, --bytes         print sizes in bytes\n"
	      "      --noheadings    do not print a header line\n"
	      "  -p, --probe         measure with statx: each PATH, and in each filesystem an\n"
	      "                      O_TMPFILE with extsize (the device's atomic unit) and\n"
	      "                      forcealign, or a plain one where the kernel drops them\n"
	      "      --sysroot DIR   read DIR/sys instead of /sys (no mounts, no statx)\n"
	      "  -h, --help          show this help\n\n"
	      "Columns:\n",
	      out);
	for (size_t i = 0; i < COL_COUNT; i++)
		fprintf(out, "  %-10s %s\n", columns[i].name, columns[i].help);
}

/*
 * The JSON key of a column: its name with '_' for '-' and ':' ("HW-MIN" is
 * hw_min, "MAJ:MIN" maj_min), one separator across extalign's JSON, and a
 * key jq takes without quotes.  libsmartcols lower-cases it.
 */
static const char *column_json_key(const char *name, char buf[static 32])
{
	size_t i;

	for (i = 0; name[i] && i < 31; i++)
		buf[i] = name[i] == '-' || name[i] == ':' ? '_' : name[i];
	buf[i] = '\0';
	return buf;
}

static void tablep(struct libscols_table **tb)
{
	scols_unref_table(*tb);
}

static int find_column(const char *name, size_t len)
{
	for (size_t i = 0; i < COL_COUNT; i++)
		if (strlen(columns[i].name) == len && !strncasecmp(columns[i].name, name, len))
			return (int)i;
	return -1;
}

/* "-o NAME,SIZE" replaces the defaults, "-o +REASON" adds to them (lsblk). */
static int parse_columns(struct ctx *c, const char *list)
{
	const char *p = list;

	if (*p == '+')
		p++;
	else
		c->ncols = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int col = find_column(p, len);

		if (col < 0) {
			warnx("unknown column: %.*s", (int)len, p);
			return -EINVAL;
		}
		if (c->ncols == COL_COUNT) {
			warnx("too many columns");
			return -EINVAL;
		}
		c->cols[c->ncols++] = col;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!c->ncols) {
		warnx("no columns given");
		return -EINVAL;
	}
	return 0;
}

static void set_data(const struct ctx *c, struct libscols_line *ln, int col, const char *s)
{
	for (size_t i = 0; i < c->ncols; i++)
		if (c->cols[i] == col && scols_line_set_data(ln, i, s) < 0)
			errx(EXIT_FAILED, "out of memory");
}

static void set_size(const struct ctx *c, struct libscols_line *ln, int col, uint64_t v)
{
	char buf[EA_SIZE_BUFSZ];

	if (c->json || c->bytes)
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	else
		ea_size_format(v, buf);
	set_data(c, ln, col, buf);
}

/* A verdict into the ATOMIC/AWU or STATX columns: numbers only when reported. */
static void set_verdict(const struct ctx *c, struct libscols_line *ln, int state_col,
			const struct ea_atomic *a)
{
	int min_col = state_col == COL_ATOMIC ? COL_AWUMIN : COL_STATXMIN;
	int max_col = state_col == COL_ATOMIC ? COL_AWUMAX : COL_STATXMAX;

	set_data(c, ln, state_col, ea_atomic_state_str(a->state));
	if (a->state == EA_ATOMIC_YES || a->state == EA_ATOMIC_NONE) {
		set_size(c, ln, min_col, a->unit_min);
		set_size(c, ln, max_col, a->unit_max);
	}
}

/*
 * UNTORN and the software range from a statx answer; where the rules could
 * not tell the hardware verdict without one (XFS), the answer decides it.
 */
static void set_untorn(const struct ctx *c, struct libscols_line *ln, enum ea_atomic_fs fs,
		       const struct ea_atomic *dev, const struct ea_atomic *statx,
		       struct ea_atomic *hw)
{
	struct ea_untorn_verdict v;

	if (ea_atomic_untorn(fs, dev, statx, &v) == EA_UNTORN_UNKNOWN)
		return;
	set_data(c, ln, COL_UNTORN, ea_untorn_str(v.by));
	set_size(c, ln, COL_SWMIN, v.sw_min);
	set_size(c, ln, COL_SWMAX, v.sw_max);
	if (hw->state == EA_ATOMIC_UNKNOWN)
		*hw = v.hw;
}

/* REASON: the verdict's reason and up to two notes, "; "-separated. */
static void set_reason(const struct ctx *c, struct libscols_line *ln, const char *reason,
		       const char *note, const char *note2)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s%s%s%s%s", reason, note ? "; " : "", note ?: "",
		 note2 ? "; " : "", note2 ?: "");
	set_data(c, ln, COL_REASON, buf);
}

static struct libscols_line *new_line(const struct ctx *c, struct libscols_line *parent)
{
	struct libscols_line *ln = scols_table_new_line(c->tb, parent);

	if (!ln)
		errx(EXIT_FAILED, "out of memory");
	return ln;
}

static void add_device_line(struct ctx *c, size_t i)
{
	const struct ea_bdev *b = &c->devs[i];
	struct libscols_line *parent = NULL, *ln;
	char buf[NAME_MAX + 8];

	if (b->type == EA_BDEV_PART)
		for (size_t j = 0; j < c->ndevs; j++)
			if (c->lines[j] && !strcmp(c->devs[j].name, b->disk))
				parent = c->lines[j];
	ln = c->lines[i] = new_line(c, parent);
	set_data(c, ln, COL_NAME, b->name);
	set_data(c, ln, COL_TYPE, ea_bdev_type_str(b->type));
	snprintf(buf, sizeof(buf), "%u:%u", b->major, b->minor);
	set_data(c, ln, COL_MAJMIN, buf);
	set_size(c, ln, COL_SIZE, b->size);
	set_size(c, ln, COL_LOGSEC, b->logical_block);
	set_size(c, ln, COL_PHYSEC, b->physical_block);
	if (b->type == EA_BDEV_PART)
		set_size(c, ln, COL_START, b->start * 512);
	if (b->queue.present) {
		set_size(c, ln, COL_HWMIN, b->queue.unit_min);
		set_size(c, ln, COL_HWMAX, b->queue.unit_max);
		set_size(c, ln, COL_BOUNDARY, b->queue.boundary);
		set_size(c, ln, COL_HWLIMIT, b->queue.max_bytes);
	}
	set_verdict(c, ln, COL_ATOMIC, &b->atomic);
	set_data(c, ln, COL_REASON, b->atomic.reason);

	/* The kernel's own answer for the node, next to what sysfs implies. */
	if (!c->sysroot) {
		struct ea_atomic sx;

		snprintf(buf, sizeof(buf), "/dev/%s", b->name);
		if (ea_atomic_statx(AT_FDCWD, buf, 0, &sx) == 0)
			set_verdict(c, ln, COL_STATX, &sx);
	}
}

static enum ea_atomic_fs fs_kind(const char *type)
{
	if (!strcmp(type, "ext4"))
		return EA_FS_EXT4;
	if (!strcmp(type, "xfs"))
		return EA_FS_XFS;
	return EA_FS_OTHER;
}

/*
 * Facts of the filesystem on device i mounted at m: the block size from the
 * mounted filesystem itself (right for every type), the ext4 cluster size from
 * its superblock, which needs read access to the device.
 */
static void fs_facts(const struct ctx *c, size_t i, const struct ea_mount *m,
		     struct ea_atomic_fsfacts *f, const char **note)
{
	struct ea_super sup;
	struct statfs sfs;
	char node[NAME_MAX + 6];

	*f = (struct ea_atomic_fsfacts){ .fs = fs_kind(m->fstype) };
	*note = NULL;
	if (statfs(m->target, &sfs) == 0)
		f->block_size = (uint32_t)sfs.f_bsize;
	if (f->fs != EA_FS_EXT4)
		return;
	snprintf(node, sizeof(node), "/dev/%s", c->devs[i].name);
	if (ea_super_read(node, &sup) == 0 && sup.block_size) {
		f->block_size = sup.block_size;
		f->cluster_size = sup.cluster_size;
		return;
	}
	f->cluster_size = 0;
	*note = "cannot read the ext4 superblock: bigalloc cluster unknown";
}

static const struct ea_mount *mount_of(const struct ctx *c, const struct ea_bdev *b)
{
	for (size_t i = 0; i < c->nmounts; i++)
		if (c->mounts[i].major == b->major && c->mounts[i].minor == b->minor)
			return &c->mounts[i];
	return NULL;
}

/*
 * "probe: plain file, forcealign not supported by this kernel": the words
 * for a probe that fell back; the errno only where the note has no cause.
 */
static void probe_note(const struct ea_atomic_probe *p, char *buf, size_t len)
{
	switch (p->dropped ? 0 : p->hint_err) {
	case 0:
	case -EOPNOTSUPP:
	case -ENOTTY:
	case -EINVAL:
	case -EPERM:
	case -EACCES:
		snprintf(buf, len, "probe: plain file, %s", p->note);
		break;
	default:
		snprintf(buf, len, "probe: plain file, %s: %s", p->note, strerror(-p->hint_err));
	}
}

static void add_fs_line(struct ctx *c, size_t i)
{
	const struct ea_mount *m = mount_of(c, &c->devs[i]);
	const struct ea_atomic *dev = &c->devs[i].atomic;
	struct ea_atomic_fsfacts f;
	struct ea_atomic_probe p;
	struct libscols_line *ln;
	const char *note, *pnote = NULL;
	char pbuf[256];
	struct ea_atomic a;
	int r = -1;

	if (!m)
		return;
	fs_facts(c, i, m, &f, &note);
	if (c->probe) {
		uint32_t unit = dev->state == EA_ATOMIC_YES ? dev->unit_max : 0;

		r = ea_atomic_probe_dir(m->target, ea_atomic_probe_extsize(unit, f.block_size), &p);
		/*
		 * No O_TMPFILE (vfat) or read-only: nothing to measure with, and
		 * nothing the user can fix; STATX stays empty.  Other errors are news.
		 */
		if (r < 0 && r != -EOPNOTSUPP && r != -EROFS)
			warnx_path(m->target, "cannot probe with a temporary file: %s",
				   strerror(-r));
		/* The row describes the probe file: the rules for what it kept. */
		if (r == 0 && p.file == EA_PROBE_HINTED) {
			f.extsize = p.extsize;
			f.forcealign = true;
		} else if (r == 0) {
			probe_note(&p, pbuf, sizeof(pbuf));
			pnote = pbuf;
		}
	}
	ln = c->fslines[i] = new_line(c, c->lines[i]);
	set_data(c, ln, COL_NAME, m->target);
	set_data(c, ln, COL_TYPE, "fs");
	set_data(c, ln, COL_FSTYPE, m->fstype);
	c->saw_ext4 |= !strcmp(m->fstype, "ext4");
	if (f.block_size)
		set_size(c, ln, COL_BLOCK, f.block_size);
	if (f.cluster_size)
		set_size(c, ln, COL_CLUSTER, f.cluster_size);
	ea_atomic_for_fs(&f, dev, &a);
	if (r == 0) {
		if (f.extsize)
			set_size(c, ln, COL_EXTSIZE, f.extsize);
		set_data(c, ln, COL_FORCEALIGN, f.forcealign ? "yes" : "no");
		set_verdict(c, ln, COL_STATX, &p.atomic);
		set_data(c, ln, COL_PROBE, ea_probe_file_str(p.file));
		set_untorn(c, ln, f.fs, dev, &p.atomic, &a);
	}
	set_verdict(c, ln, COL_ATOMIC, &a);
	/* The cluster only matters when the device below can write atomically. */
	set_reason(c, ln, a.reason, dev->state == EA_ATOMIC_YES ? note : NULL, pnote);
}

/*
 * A PATH argument: a row under its filesystem with the file's own verdict;
 * a directory's (TYPE dir) is what the files made in it inherit, and statx
 * has nothing to say of a directory.
 */
static int add_file_line(struct ctx *c, const char *path, size_t i)
{
	const struct ea_mount *m = mount_of(c, &c->devs[i]);
	const struct ea_atomic *dev = &c->devs[i].atomic;
	_cleanup_close_ int fd = -1;
	struct ea_atomic_fsfacts f;
	struct libscols_line *ln;
	struct fsxattr fsx;
	struct ea_atomic a;
	struct stat st;
	const char *note;

	if (!m || !c->fslines[i]) {
		warnx_path(path, "its filesystem is not in the mount table");
		return EXIT_FAILED;
	}
	fs_facts(c, i, m, &f, &note);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		warn_path(path);
		return EXIT_FAILED;
	}
	/* No fsxattr (not ext4/XFS, or an old kernel): the file has no hint. */
	if (ea_fsx_get(fd, &fsx) == 0) {
		if (fsx.fsx_xflags & FS_XFLAG_EXTSIZE)
			f.extsize = fsx.fsx_extsize;
		f.forcealign = fsx.fsx_xflags & FS_XFLAG_FORCEALIGN;
	}
	ln = new_line(c, c->fslines[i]);
	set_data(c, ln, COL_NAME, path);
	set_data(c, ln, COL_TYPE, S_ISDIR(st.st_mode) ? "dir" : "file");
	set_data(c, ln, COL_FSTYPE, m->fstype);
	c->saw_ext4 |= !strcmp(m->fstype, "ext4");
	if (f.block_size)
		set_size(c, ln, COL_BLOCK, f.block_size);
	if (f.extsize)
		set_size(c, ln, COL_EXTSIZE, f.extsize);
	set_data(c, ln, COL_FORCEALIGN, f.forcealign ? "yes" : "no");
	ea_atomic_for_fs(&f, dev, &a);
	if (c->probe && !S_ISDIR(st.st_mode)) {
		struct ea_atomic p;
		int r = ea_atomic_statx(fd, "", AT_EMPTY_PATH, &p);

		if (r < 0) {
			warnx_path(path, "statx: %s", strerror(-r));
			return EXIT_FAILED;
		}
		set_verdict(c, ln, COL_STATX, &p);
		set_untorn(c, ln, f.fs, dev, &p, &a);
	}
	set_verdict(c, ln, COL_ATOMIC, &a);
	/* The cluster only matters when the device below can write atomically. */
	if (c->probe && a.state == EA_ATOMIC_UNKNOWN && S_ISDIR(st.st_mode))
		a.reason = "XFS decides per file, and statx measures files, not directories";
	set_reason(c, ln, a.reason, dev->state == EA_ATOMIC_YES ? note : NULL, NULL);
	return EXIT_OK;
}

static ssize_t find_by_name(const struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->ndevs; i++)
		if (!strcmp(c->devs[i].name, name))
			return (ssize_t)i;
	return -1;
}

/* Select device i, and a disk's partitions with it, as lsblk does. */
static void select_dev(struct ctx *c, size_t i)
{
	c->selected[i] = true;
	for (size_t j = 0; j < c->ndevs; j++)
		if (c->devs[j].type == EA_BDEV_PART && !strcmp(c->devs[j].disk, c->devs[i].name))
			c->selected[j] = true;
}

/* What an argument names, and so which rows it brings. */
enum arg_kind {
	ARG_DEVICE, /* a device, and a disk's partitions with it */
	ARG_MOUNT,  /* a mount point: its device, whose fs row it already is */
	ARG_PATH,   /* anything else: a row of its own under its filesystem */
};

/* Is st the root directory of a mount of device i? */
static bool is_mount_root(const struct ctx *c, size_t i, const struct stat *st)
{
	struct stat root;

	if (!S_ISDIR(st->st_mode))
		return false;
	for (size_t j = 0; j < c->nmounts; j++) {
		const struct ea_mount *m = &c->mounts[j];

		if (m->major == c->devs[i].major && m->minor == c->devs[i].minor &&
		    stat(m->target, &root) == 0 && root.st_dev == st->st_dev &&
		    root.st_ino == st->st_ino)
			return true;
	}
	return false;
}

/*
 * Resolve one argument.  Live: an existing block device node by number, an
 * existing other path by the device it lives on.  Either way a name
 * ("nvme0n1", "/dev/nvme0n1") that is a kernel device name also matches,
 * which is all a captured sysroot can offer.  *dev is the device, *kind
 * which rows the argument wants.
 */
static int resolve(struct ctx *c, const char *arg, ssize_t *dev, enum arg_kind *kind)
{
	const char *base = strncmp(arg, "/dev/", 5) ? arg : arg + 5;
	struct stat st;
	int saved;

	*kind = ARG_DEVICE;
	/* A bare kernel name is a device even if a file of that name is here. */
	if (!strchr(arg, '/')) {
		*dev = find_by_name(c, arg);
		if (*dev >= 0)
			return EXIT_OK;
	}
	if (!c->sysroot && stat(arg, &st) == 0) {
		if (S_ISBLK(st.st_mode)) {
			*dev = ea_bdev_find(c->devs, c->ndevs, major(st.st_rdev),
					    minor(st.st_rdev));
			if (*dev < 0) {
				warnx_path(arg, "block device not found in sysfs");
				return EXIT_FAILED;
			}
			return EXIT_OK;
		}
		*dev = ea_bdev_find(c->devs, c->ndevs, major(st.st_dev), minor(st.st_dev));
		if (*dev < 0) {
			warnx_path(arg, "not on a block device (a %s filesystem?)",
				   major(st.st_dev) ? "stacked" : "virtual");
			return EXIT_FAILED;
		}
		*kind = is_mount_root(c, (size_t)*dev, &st) ? ARG_MOUNT : ARG_PATH;
		return EXIT_OK;
	}
	saved = errno;
	*dev = find_by_name(c, base);
	if (*dev >= 0)
		return EXIT_OK;
	if (!c->sysroot && strchr(arg, '/'))
		warnx_path(arg, "%s", strerror(saved)); /* why stat() failed */
	else
		warnx_path(arg, "no such block device%s", c->sysroot ? " in the sysroot" : "");
	return EXIT_FAILED;
}

static void ctx_free(struct ctx *c)
{
	free(c->devs);
	ea_mounts_free(c->mounts, c->nmounts);
	free(c->selected);
	free(c->lines);
	free(c->fslines);
}

/* The e2fsck that checks ext4 at boot, and whether it knows forcealign. */
static const char *e2fsck_path(void)
{
	const char *p = getenv("EXTALIGN_E2FSCK");

	return p && *p ? p : EA_E2FSCK_PATH;
}

static void print_e2fsck_json(void *data)
{
	int r = ea_e2fsck_knows_forcealign(e2fsck_path());

	(void)data;
	fputs(",\n   \"e2fsck\": {\"path\": ", stdout);
	json_str(e2fsck_path());
	printf(", \"knows_forcealign\": %s}\n", r < 0 ? "null" : r ? "true" : "false");
}

static void print_e2fsck_note(void)
{
	const char *path = e2fsck_path();
	int r = ea_e2fsck_knows_forcealign(path);

	if (r > 0)
		printf("\ne2fsck (%s) knows forcealign: a boot-time fsck keeps units whole.\n",
		       path);
	else if (r == 0)
		printf("\ne2fsck (%s) does not know forcealign: after a crash, a boot-time fsck\n"
		       "can break the unit at EOF of a forcealign file (extalign check finds it,\n"
		       "extalign realign mends it); the extalign e2fsprogs packages keep it "
		       "whole.\n",
		       path);
	else
		printf("\ne2fsck (%s): cannot tell whether it knows forcealign: %s\n", path,
		       strerror(-r));
}

int cmd_devices(int argc, char **argv)
{
	enum { OPT_SYSROOT = 0x100, OPT_NOHEADINGS };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "output", required_argument, NULL, 'o' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "noheadings", no_argument, NULL, OPT_NOHEADINGS },
		{ "probe", no_argument, NULL, 'p' },
		{ "sysroot", required_argument, NULL, OPT_SYSROOT },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	_cleanup_(tablep) struct libscols_table *tb = NULL;
	_cleanup_(ctx_free) struct ctx c = { 0 };
	bool noheadings = false;
	const char *output = NULL;
	int opt, r, status = EXIT_OK;
	_cleanup_free_ ssize_t *argdev = NULL;
	_cleanup_free_ enum arg_kind *argkind = NULL;

	while ((opt = getopt_long(argc, argv, "Jo:bnph", longopts, NULL)) != -1) {
		switch (opt) {
		case 'J':
			c.json = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'b':
			c.bytes = true;
			break;
		case 'n': /* the older spelling, kept for scripts; -n is --dry-run elsewhere */
		case OPT_NOHEADINGS:
			noheadings = true;
			break;
		case 'p':
			c.probe = true;
			break;
		case OPT_SYSROOT:
			c.sysroot = optarg;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			fprintf(stderr, USAGE_HINT, "devices");
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(default_columns); i++) {
		c.cols[c.ncols++] = default_columns[i];
		/* --probe: the measured units, and what they were measured on. */
		if (c.probe && default_columns[i] == COL_STATX) {
			c.cols[c.ncols++] = COL_STATXMIN;
			c.cols[c.ncols++] = COL_STATXMAX;
			c.cols[c.ncols++] = COL_PROBE;
			c.cols[c.ncols++] = COL_UNTORN;
		}
	}
	if (output && parse_columns(&c, output) < 0) {
		fprintf(stderr, USAGE_HINT, "devices");
		return EXIT_USAGE;
	}
	if (c.sysroot && c.probe) {
		warnx("--probe measures the live system; it cannot be used with --sysroot");
		return EXIT_USAGE;
	}

	r = ea_bdev_list(c.sysroot, &c.devs, &c.ndevs);
	if (r < 0)
		errx(EXIT_FAILED, "cannot read %s/sys/block: %s", c.sysroot ? c.sysroot : "",
		     strerror(-r));
	/* A captured tree has no mounts we could look at: devices only. */
	if (!c.sysroot) {
		r = ea_mounts_read(NULL, &c.mounts, &c.nmounts);
		if (r < 0)
			warnx("cannot read the mount table: %s", strerror(-r));
	}
	c.selected = calloc(c.ndevs + 1, sizeof(*c.selected));
	c.lines = calloc(c.ndevs + 1, sizeof(*c.lines));
	c.fslines = calloc(c.ndevs + 1, sizeof(*c.fslines));
	argdev = calloc((size_t)argc, sizeof(*argdev));
	argkind = calloc((size_t)argc, sizeof(*argkind));
	if (!c.selected || !c.lines || !c.fslines || !argdev || !argkind)
		errx(EXIT_FAILED, "out of memory");

	for (int i = optind; i < argc; i++) {
		r = resolve(&c, argv[i], &argdev[i], &argkind[i]);
		status = exit_worst(status, r);
		if (r != EXIT_OK) {
			argdev[i] = -1;
			continue;
		}
		if (argkind[i] == ARG_DEVICE)
			select_dev(&c, (size_t)argdev[i]);
		else
			c.selected[argdev[i]] = true;
	}
	/* No arguments: every device with media, as lsblk leaves out empty ones. */
	if (optind == argc)
		for (size_t i = 0; i < c.ndevs; i++)
			c.selected[i] = c.devs[i].size > 0;

	scols_init_debug(0);
	tb = c.tb = scols_new_table();
	if (!tb)
		errx(EXIT_FAILED, "out of memory");
	scols_table_enable_json(tb, c.json);
	scols_table_set_name(tb, "devices");
	scols_table_enable_noheadings(tb, noheadings);
	for (size_t i = 0; i < c.ncols; i++) {
		const struct column *col = &columns[c.cols[i]];
		struct libscols_column *cl;
		char key[32];

		cl = scols_table_new_column(tb,
					    c.json ? column_json_key(col->name, key) : col->name,
					    col->width, col->flags);
		if (!cl)
			errx(EXIT_FAILED, "out of memory");
		scols_column_set_json_type(cl, col->json_type);
	}

	for (size_t i = 0; i < c.ndevs; i++) {
		if (!c.selected[i])
			continue;
		add_device_line(&c, i);
		add_fs_line(&c, i);
	}
	for (int i = optind; i < argc; i++)
		if (argdev[i] >= 0 && argkind[i] == ARG_PATH)
			status = exit_worst(status, add_file_line(&c, argv[i], (size_t)argdev[i]));

	if (c.json) {
		table_print_json_more(tb, c.saw_ext4 ? print_e2fsck_json : NULL, NULL);
	} else {
		table_print(tb, false);
		if (c.saw_ext4 && !noheadings)
			print_e2fsck_note();
	}
	return status;
}
