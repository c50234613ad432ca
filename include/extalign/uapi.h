/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel interface values newer than Debian 12's headers (Linux 6.1 uapi,
 * glibc 2.36).  Each is the kernel's own value; #ifndef lets newer headers win.
 */
#ifndef EXTALIGN_UAPI_H
#define EXTALIGN_UAPI_H

#include <linux/fs.h>

/*
 * Strict alignment for the extent size hint.  The RFC used 0x00020000, which
 * mainline has since given to FS_XFLAG_VERITY; 0x00100000 is the first bit
 * free as of Linux 7.2 and is what our ext4 series defines.
 */
#ifndef FS_XFLAG_FORCEALIGN
#define FS_XFLAG_FORCEALIGN 0x00100000
#endif

/* pwritev2() flag for untorn writes, Linux 6.11. */
#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif

/* statx() mask bit and attribute for atomic write limits, Linux 6.11. */
#ifndef STATX_WRITE_ATOMIC
#define STATX_WRITE_ATOMIC 0x00010000U
#endif
#ifndef STATX_ATTR_WRITE_ATOMIC
#define STATX_ATTR_WRITE_ATOMIC 0x00400000
#endif

#endif
