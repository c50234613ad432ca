/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sizes as users write them ("16k", "1MiB", "65536") and as we print them. */
#ifndef EXTALIGN_SIZE_H
#define EXTALIGN_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* The largest extent size hint the 32-bit fsx_extsize field can carry. */
#define EA_EXTSIZE_MAX UINT32_MAX

/*
 * Parse a size: decimal digits, optionally followed by one of the binary
 * suffixes k K KiB, m M MiB, g G GiB (and t, p, e likewise).  Leading zeros are decimal, never
 * octal; signs, spaces, hex and fractions are rejected.  Returns 0, -EINVAL for a malformed string
 * or -ERANGE when the value exceeds max.
 */
int ea_size_parse(const char *s, uint64_t max, uint64_t *ret);

/* Why an extent size is unusable; EA_EXTSIZE_OK when it is fine. */
enum ea_extsize_problem {
	EA_EXTSIZE_OK,
	EA_EXTSIZE_ZERO,
	EA_EXTSIZE_NOT_POWER_OF_2,
	EA_EXTSIZE_NOT_BLOCK_MULTIPLE,
	EA_EXTSIZE_TOO_LARGE,
};

/*
 * Check an extent size in bytes against the rules every filesystem shares:
 * positive, a power of two, within the 32-bit field and, when blksize is
 * non-zero, a multiple of the filesystem block size.
 */
enum ea_extsize_problem ea_extsize_check(uint64_t bytes, uint64_t blksize);

/* A sentence fragment naming the rule, e.g. "is not a power of two". */
const char *ea_extsize_problem_str(enum ea_extsize_problem p);

/*
 * Format bytes the way lsblk does for exact binary multiples ("16K", "1M",
 * "4G"), plain bytes otherwise ("4095").  The result parses back with
 * ea_size_parse().  Returns buf.
 */
#define EA_SIZE_BUFSZ 24
char *ea_size_format(uint64_t bytes, char buf[static EA_SIZE_BUFSZ]);

#endif
