// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "extalign/macro.h"
#include "extalign/size.h"

static const struct {
	const char *name;
	unsigned shift;
} suffixes[] = {
	{ "", 0 },     { "k", 10 },   { "K", 10 },   { "KiB", 10 }, { "m", 20 },
	{ "M", 20 },   { "MiB", 20 }, { "g", 30 },   { "G", 30 },   { "GiB", 30 },
	{ "t", 40 },   { "T", 40 },   { "TiB", 40 }, { "p", 50 },   { "P", 50 },
	{ "PiB", 50 }, { "e", 60 },   { "E", 60 },   { "EiB", 60 },
};

int ea_size_parse(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t value = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;

	/* strtoull would take signs, spaces, "0x" and octal: do it by hand. */
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned digit = (unsigned)(*p - '0');

		if (value > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		value = value * 10 + digit;
	}
	if (p == s)
		return -EINVAL;

	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		unsigned shift = suffixes[i].shift;

		if (strcmp(p, suffixes[i].name) != 0)
			continue;
		if (value > (UINT64_MAX >> shift))
			return -ERANGE;
		value <<= shift;
		if (value > max)
			return -ERANGE;
		*ret = value;
		return 0;
	}
	return -EINVAL;
}

enum ea_extsize_problem ea_extsize_check(uint64_t bytes, uint64_t blksize)
{
	if (bytes == 0)
		return EA_EXTSIZE_ZERO;
	if (bytes > EA_EXTSIZE_MAX)
		return EA_EXTSIZE_TOO_LARGE;
	if (!is_power_of_2(bytes))
		return EA_EXTSIZE_NOT_POWER_OF_2;
	if (blksize && bytes % blksize)
		return EA_EXTSIZE_NOT_BLOCK_MULTIPLE;
	return EA_EXTSIZE_OK;
}

const char *ea_extsize_problem_str(enum ea_extsize_problem p)
{
	switch (p) {
	case EA_EXTSIZE_OK:
		return "is valid";
	case EA_EXTSIZE_ZERO:
		return "must be greater than zero";
	case EA_EXTSIZE_NOT_POWER_OF_2:
		return "is not a power of two";
	case EA_EXTSIZE_NOT_BLOCK_MULTIPLE:
		return "is not a multiple of the filesystem block size";
	case EA_EXTSIZE_TOO_LARGE:
		return "does not fit the 32-bit extent size field (at most 2G)";
	}
	return "is invalid";
}

char *ea_size_format(uint64_t bytes, char buf[static EA_SIZE_BUFSZ])
{
	static const char units[] = "KMGTPE";
	unsigned i = 0;

	if (bytes == 0 || bytes % 1024) {
		snprintf(buf, EA_SIZE_BUFSZ, "%llu", (unsigned long long)bytes);
		return buf;
	}
	while (bytes % 1024 == 0 && i < sizeof(units) - 1) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, EA_SIZE_BUFSZ, "%llu%c", (unsigned long long)bytes, units[i - 1]);
	return buf;
}
