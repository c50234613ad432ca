// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Stage 3 of a new name (pipeline.h): set its rule's hint and read it back,
 * or note that the kernel already did (inheritance), or, when data came
 * first, list it as late for realignment.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/macro.h"
#include "pipeline.h"

bool has_hint(const struct fsxattr *fsx, bool is_dir, const struct ea_hint *h)
{
	uint32_t flag = is_dir ? FS_XFLAG_EXTSZINHERIT : FS_XFLAG_EXTSIZE;

	if (h->extsize && (!(fsx->fsx_xflags & flag) || fsx->fsx_extsize != h->extsize))
		return false;
	if (h->forcealign > 0 && !(fsx->fsx_xflags & FS_XFLAG_FORCEALIGN))
		return false;
	return true;
}

/* Born (statx btime) after the daemon started?  Unknown counts as no. */
static bool born_since_start(const struct apply *a, int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) < 0 || !(stx.stx_mask & STATX_BTIME))
		return false;
	return (uint64_t)stx.stx_btime.tv_sec * 1000000 + stx.stx_btime.tv_nsec / 1000 >=
	       a->start_realtime_usec;
}

void list_late(struct apply *a, const struct stat *st, const struct ea_rule *rule, const char *path,
	       const struct ea_hint *h, struct name_result *res)
{
	struct file_id id = { st->st_dev, st->st_ino };
	size_t index;
	int r;

	r = late_add(a->late, id, rule->name, path, h->extsize, h->forcealign,
		     a->policy->daemon.realign_queue_max, &index);
	res->fate = FATE_LATE;
	res->dev = st->st_dev;
	res->late = r; /* 0: already listed (a rescan meets it again) */
	if (r > 0 && rule->realign && a->policy->daemon.realign && !a->no_realign &&
	    a->hooks.late_listed)
		a->hooks.late_listed(a->hooks.userdata, index);
}

/*
 * Set the hint, read back only until the filesystem has kept one of this
 * kind: then the ioctl's answer is enough (see ea_hint_set_trusted()), one
 * FS_IOC_FSGETXATTR less per new file.  Kept across reloads: a reload
 * changes no kernel.
 */
static int hint_set(struct apply *a, int fd, dev_t dev, bool is_dir, const struct fsxattr *fsx,
		    const struct ea_hint *h, unsigned *dropped)
{
	unsigned kind = ea_hint_kind(is_dir, h);
	struct kept *k = NULL, *v;
	int r;

	*dropped = 0;
	for (size_t i = 0; i < a->n_kept && !k; i++)
		if (a->kept[i].dev == dev)
			k = &a->kept[i];
	if (kind && k && (k->kinds & kind) == kind)
		return ea_hint_set_trusted(fd, is_dir, fsx, h);
	r = ea_hint_set_from(fd, is_dir, fsx, h, dropped);
	if (r < 0 || !kind)
		return r;
	if (!k) {
		v = realloc(a->kept, (a->n_kept + 1) * sizeof(*v));
		if (!v)
			return 0; /* it is set; the next one reads back again */
		a->kept = v;
		k = &v[a->n_kept++];
		*k = (struct kept){ .dev = dev };
	}
	k->kinds |= kind;
	return 0;
}

/* Data since the look before the hint: the file is late after all. */
static bool data_came(struct apply *a, struct target *t, const struct ea_rule *rule,
		      const struct ea_hint *h, struct name_result *res)
{
	struct stat now;

	if (fstat(t->fd, &now) < 0 || (!now.st_size && !now.st_blocks))
		return false;
	list_late(a, &now, rule, t->path, h, res);
	return true;
}

void hint_name(struct apply *a, struct target *t, const struct ea_rule *rule,
	       const struct fsxattr *fsx, struct name_result *res)
{
	const struct stat *st = &t->st;
	struct ea_hint h;
	int r;

	ea_rule_hint(rule, t->is_dir, &h); /* match_rule() saw that there is one */
	if (has_hint(fsx, t->is_dir, &h)) {
		/* The kernel gave it the hint at creation: the race-free path. */
		res->fate = FATE_INHERITED;
		return;
	}
	if (!t->is_dir) {
		if (st->st_nlink != 1) {
			/* A second name of some other file: never ours to change. */
			res->fate = FATE_HARDLINKS;
			res->nlink = st->st_nlink;
			return;
		}
		if (st->st_size || st->st_blocks) {
			/* Data from before our time is the realign scan's job. */
			if (t->origin == ORIGIN_SCAN && !born_since_start(a, t->fd))
				res->fate = FATE_NONE;
			else
				list_late(a, st, rule, t->path, &h, res);
			return;
		}
	}

	/* From what was read above: the flags not ours stay as they are. */
	r = hint_set(a, t->fd, st->st_dev, t->is_dir, fsx, &h, &res->dropped);
	/*
	 * XFS accepts a hint while written data is still delayed allocation,
	 * which was reserved without it: data that came between our fstat()
	 * and the ioctl makes the file late even though the hint is now in
	 * place.  And XFS refuses a new hint once extents exist (EINVAL): data
	 * won the race.
	 */
	if (!t->is_dir && (r == 0 || r == -EINVAL) && data_came(a, t, rule, &h, res))
		return;
	res->err = r;
	if (r == 0)
		res->fate = FATE_HINTED;
	else if (r == -EOPNOTSUPP)
		res->fate = FATE_KEPT_NOTHING;
	else
		res->fate = FATE_HINT_FAILED;
}
