// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * JSON output is UTF-8 whatever the file names are.  A name is bytes; a
 * byte that is not part of a well-formed UTF-8 character is written as the
 * escape \udcNN (U+DC80 to U+DCFF for the bytes 0x80 to 0xff), Python's
 * "surrogateescape": json.loads() and then
 * name.encode("utf-8", "surrogateescape") give back the exact bytes, and
 * no valid name can produce such an escape.  extalign(8) documents it.
 */
#include <stdio.h>
#include <string.h>

#include "extalign/utf8.h"

#include "cmd.h"

/* Write the n bytes at s; a byte that is not UTF-8 as \udcNN.  The length used. */
static size_t put_utf8_or_escape(FILE *out, const char *s, size_t n)
{
	size_t len = ea_utf8_char_len(s, n);

	if (len == 0) {
		fprintf(out, "\\udc%02x", (unsigned char)*s);
		return 1;
	}
	fwrite(s, 1, len, out);
	return len;
}

void json_str(const char *s)
{
	const char *p = s ? s : "";
	size_t n = strlen(p);

	putchar('"');
	while (n) {
		unsigned char c = (unsigned char)*p;
		size_t used = 1;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else
			used = put_utf8_or_escape(stdout, p, n);
		p += used;
		n -= used;
	}
	putchar('"');
}

void json_put_document(const char *doc)
{
	size_t n = strlen(doc);

	while (n) {
		size_t used = put_utf8_or_escape(stdout, doc, n);

		doc += used;
		n -= used;
	}
}

void json_str_or_null(const char *s)
{
	if (s && *s)
		json_str(s);
	else
		fputs("null", stdout);
}

void json_key(const char *word)
{
	putchar('"');
	for (const char *p = word; *p; p++)
		putchar(*p == '-' ? '_' : *p);
	putchar('"');
}
