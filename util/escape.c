/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * escape.c - text a terminal shows as text (see escape.h).
 */
#include <config.h>

#include <string.h>

#include "util/escape.h"

/*
 * The length of the UTF-8 character at @s (at most @n bytes), 0 when it
 * is none (a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, cut short); its code point in *@cp.
 */
static size_t utf8_len(const unsigned char *s, size_t n, unsigned *cp)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		*cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		*cp = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		*cp = c & 0x07;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* past U+10FFFF */
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	return len;
}

/*
 * The next piece of @s (@n bytes left): its length, and whether it prints
 * as itself (*@ok) or as one '?'.
 */
static size_t piece(const char *s, size_t n, int *ok)
{
	unsigned cp;
	size_t len = utf8_len((const unsigned char *)s, n, &cp);

	if (!len) {
		*ok = 0;
		return 1;
	}
	*ok = !(cp < 0x20 || (cp >= 0x7f && cp <= 0x9f));
	return len;
}

char *vp_term_clean(char *s)
{
	size_t n = strlen(s);
	char *d = s;

	for (const char *p = s; n;) {
		int ok;
		size_t len = piece(p, n, &ok);

		if (ok)
			memmove(d, p, len);
		else
			*d = '?';
		d += ok ? len : 1;
		p += len;
		n -= len;
	}
	*d = '\0';
	return s;
}

void vp_term_putn(FILE *f, const char *s, size_t n)
{
	while (n) {
		int ok;
		size_t len = piece(s, n, &ok);

		if (ok)
			fwrite(s, 1, len, f);
		else
			fputc('?', f);
		s += len;
		n -= len;
	}
}

void vp_term_put(FILE *f, const char *s)
{
	vp_term_putn(f, s, strlen(s));
}
