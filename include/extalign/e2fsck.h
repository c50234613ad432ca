/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether the e2fsck that checks an ext4 at boot knows extent size hints
 * and forcealign (the extalign e2fsprogs series).  One that does not frees
 * the blocks past EOF of a forcealign file on the orphan list one by one
 * after a crash, which breaks the unit that holds EOF.
 */
#ifndef EXTALIGN_E2FSCK_H
#define EXTALIGN_E2FSCK_H

/* The e2fsck fsck.ext4 runs at boot; EXTALIGN_E2FSCK names another. */
#define EA_E2FSCK_PATH "/sbin/e2fsck"

/*
 * Run "PATH -V" and read its answer: 1 if it says it knows extent size
 * hints and forcealign, 0 if not, -errno if it could not be run or did not
 * answer (-ENOENT: no such program).
 */
int ea_e2fsck_knows_forcealign(const char *path);

#endif
