// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A JSON string for the commands that write their JSON by hand (realign,
 * status); the tables go through libsmartcols.  NULL prints as "".
 */
#include <stdio.h>

#include "cmd.h"

void json_str(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p == '\t')
			fputs("\\t", stdout);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p); /* file names are bytes: passed through as they are */
	}
	putchar('"');
}
