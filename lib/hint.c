// SPDX-License-Identifier: LGPL-2.1-or-later
#include <sys/ioctl.h>

#include "extalign/hint.h"
#include "extalign/macro.h"

#define HINT_FLAGS (FS_XFLAG_EXTSIZE | FS_XFLAG_EXTSZINHERIT | FS_XFLAG_FORCEALIGN)

int ea_fsx_get(int fd, struct fsxattr *ret)
{
	if (ioctl(fd, FS_IOC_FSGETXATTR, ret) < 0)
		return negative_errno();
	return 0;
}

static int fsx_set(int fd, struct fsxattr *fsx)
{
	if (ioctl(fd, FS_IOC_FSSETXATTR, fsx) < 0)
		return negative_errno();
	return 0;
}

int ea_hint_set(int fd, bool is_dir, const struct ea_hint *want, unsigned *dropped)
{
	struct fsxattr fsx;
	int r;

	*dropped = 0;
	r = ea_fsx_get(fd, &fsx);
	if (r < 0)
		return r;
	return ea_hint_set_from(fd, is_dir, &fsx, want, dropped);
}

/*
 * On a directory the size goes with FS_XFLAG_EXTSZINHERIT only: XFS
 * ignores FS_XFLAG_EXTSIZE there and files pick up the size at create.
 */
static uint32_t size_flag_of(bool is_dir)
{
	return is_dir ? FS_XFLAG_EXTSZINHERIT : FS_XFLAG_EXTSIZE;
}

static int hint_write(int fd, bool is_dir, const struct fsxattr *cur, const struct ea_hint *want)
{
	struct fsxattr fsx = *cur;

	if (want->extsize && (!is_dir || want->inherit)) {
		fsx.fsx_xflags |= size_flag_of(is_dir);
		fsx.fsx_extsize = want->extsize;
	}
	if (want->forcealign > 0)
		fsx.fsx_xflags |= FS_XFLAG_FORCEALIGN;
	else if (want->forcealign == 0)
		fsx.fsx_xflags &= ~FS_XFLAG_FORCEALIGN;
	return fsx_set(fd, &fsx);
}

unsigned ea_hint_kind(bool is_dir, const struct ea_hint *want)
{
	unsigned kind = 0;

	if (want->extsize && (!is_dir || want->inherit))
		kind |= is_dir ? EA_DROPPED_INHERIT : EA_DROPPED_EXTSIZE;
	if (want->forcealign > 0)
		kind |= EA_DROPPED_FORCEALIGN;
	return kind;
}

int ea_hint_set_trusted(int fd, bool is_dir, const struct fsxattr *cur, const struct ea_hint *want)
{
	return hint_write(fd, is_dir, cur, want);
}

int ea_hint_set_from(int fd, bool is_dir, const struct fsxattr *cur, const struct ea_hint *want,
		     unsigned *dropped)
{
	uint32_t size_flag = size_flag_of(is_dir);
	unsigned lost = 0;
	struct fsxattr got;
	int r;

	*dropped = 0;
	r = hint_write(fd, is_dir, cur, want);
	if (r < 0)
		return r;
	r = ea_fsx_get(fd, &got);
	if (r < 0)
		return r;

	if (want->extsize && (!is_dir || want->inherit) &&
	    (!(got.fsx_xflags & size_flag) || got.fsx_extsize != want->extsize))
		lost |= is_dir ? EA_DROPPED_INHERIT : EA_DROPPED_EXTSIZE;
	if (want->forcealign > 0 && !(got.fsx_xflags & FS_XFLAG_FORCEALIGN))
		lost |= EA_DROPPED_FORCEALIGN;

	*dropped = lost;
	return lost ? -EOPNOTSUPP : 0;
}

int ea_hint_clear(int fd, unsigned *dropped)
{
	struct fsxattr fsx;
	int r;

	*dropped = 0;
	r = ea_fsx_get(fd, &fsx);
	if (r < 0)
		return r;
	if (!(fsx.fsx_xflags & HINT_FLAGS) && fsx.fsx_extsize == 0)
		return 0;

	fsx.fsx_xflags &= ~HINT_FLAGS;
	fsx.fsx_extsize = 0;
	r = fsx_set(fd, &fsx);
	if (r < 0)
		return r;
	r = ea_fsx_get(fd, &fsx);
	if (r < 0)
		return r;
	if ((fsx.fsx_xflags & HINT_FLAGS) || fsx.fsx_extsize) {
		*dropped = EA_DROPPED_CLEAR;
		return -EOPNOTSUPP;
	}
	return 0;
}
