/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * UTF-8 validity, byte by byte.  File names are bytes; where they must go
 * out as text (JSON), the bytes that are not UTF-8 need another form.
 */
#ifndef EXTALIGN_UTF8_H
#define EXTALIGN_UTF8_H

#include <stddef.h>

/*
 * The length (1 to 4) of the well-formed UTF-8 character at the start of
 * the n bytes at s, or 0 if they do not start with one: a stray
 * continuation byte, a truncated sequence, an overlong form, a surrogate
 * (U+D800-U+DFFF) or a value beyond U+10FFFF (RFC 3629).  A NUL byte is
 * a character of length 1; n == 0 gives 0.
 */
size_t ea_utf8_char_len(const char *s, size_t n);

#endif
