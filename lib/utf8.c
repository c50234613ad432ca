// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdint.h>

#include "extalign/utf8.h"

size_t ea_utf8_char_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t len;

	if (n == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	/* 0x80-0xbf continue a character; 0xc0 and 0xc1 could only start an overlong one. */
	if (p[0] < 0xc2)
		return 0;
	if (p[0] < 0xe0) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] < 0xf0) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] < 0xf5) {
		len = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000))
		return 0; /* overlong */
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}
