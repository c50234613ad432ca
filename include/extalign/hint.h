/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Extent size hints through FS_IOC_FSGETXATTR/FS_IOC_FSSETXATTR, always read
 * back: a kernel may accept a hint with success and keep nothing (ext4 before
 * our series does exactly that), so "the ioctl returned 0" is not an answer.
 */
#ifndef EXTALIGN_HINT_H
#define EXTALIGN_HINT_H

#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>

#include "extalign/uapi.h"

/* What a caller wants set.  forcealign: -1 leave as is, 0 clear, 1 set. */
struct ea_hint {
	uint32_t extsize; /* bytes; 0 leaves the size as it is */
	int forcealign;
	bool inherit; /* directories: set FS_XFLAG_EXTSZINHERIT */
};

/* Parts of a request the kernel accepted without keeping them. */
enum {
	EA_DROPPED_EXTSIZE = 1 << 0,
	EA_DROPPED_FORCEALIGN = 1 << 1,
	EA_DROPPED_INHERIT = 1 << 2,
	EA_DROPPED_CLEAR = 1 << 3,
};

int ea_fsx_get(int fd, struct fsxattr *ret);

/*
 * Apply the hint to an open regular file or directory and verify it by
 * reading it back.  Returns 0 when everything asked for is in place, the
 * ioctl's -errno when the kernel refused, or -EOPNOTSUPP with *dropped
 * naming what the kernel silently did not keep.  *dropped is 0 otherwise.
 */
int ea_hint_set(int fd, bool is_dir, const struct ea_hint *want, unsigned *dropped);

/*
 * ea_hint_set() for a caller that has just read the file's attributes with
 * ea_fsx_get() (cur): one FS_IOC_FSGETXATTR fewer per file.
 */
int ea_hint_set_from(int fd, bool is_dir, const struct fsxattr *cur, const struct ea_hint *want,
		     unsigned *dropped);

/*
 * ea_hint_set_from() without the read back, for a caller that has seen this
 * filesystem keep this same kind of request (ea_hint_kind()) before: a
 * silent drop is the kernel's and the filesystem's (ext4 without our
 * series drops every hint), not one file's, so after one verified success
 * the ioctl's own answer is the answer.  Returns 0 or the ioctl's -errno.
 */
int ea_hint_set_trusted(int fd, bool is_dir, const struct fsxattr *cur, const struct ea_hint *want);
/* What a request asks the kernel to keep (EA_DROPPED_* bits): the kind of it. */
unsigned ea_hint_kind(bool is_dir, const struct ea_hint *want);

/* Remove extsize, inheritance and forcealign, and verify it like ea_hint_set. */
int ea_hint_clear(int fd, unsigned *dropped);

#endif
