// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: ea_size_parse() on arbitrary bytes.  Whatever it accepts
 * must be within max, must format back to a string that parses to the same
 * value, and a failure must leave the result untouched.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "extalign/size.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t len)
{
	char *s = malloc(len + 1);
	uint64_t v = 0x5a5a5a5a, back;
	char buf[EA_SIZE_BUFSZ];
	int r;

	if (!s)
		return 0;
	memcpy(s, data, len);
	s[len] = '\0';

	r = ea_size_parse(s, EA_EXTSIZE_MAX, &v);
	if (r == 0) {
		if (v > EA_EXTSIZE_MAX)
			abort();
		if (ea_size_parse(ea_size_format(v, buf), EA_EXTSIZE_MAX, &back) || back != v)
			abort();
		(void)ea_extsize_problem_str(ea_extsize_check(v, 4096));
	} else if ((r != -EINVAL && r != -ERANGE) || v != 0x5a5a5a5a) {
		abort();
	}
	free(s);
	return 0;
}
