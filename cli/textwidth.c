/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * textwidth.c - fitting text output to the terminal's width (textwidth.h).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "textwidth.h"

int vp_term_width(int fd)
{
	const char *s = getenv("COLUMNS");
	struct winsize ws;

	if (s && *s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (!*end && v > 0 && v <= 100000)
			return (int)v;
	}
	if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

/* Bytes of the first @cols characters of @s[0..len) (UTF-8: a character
 * starts at every byte that is not a continuation byte). */
static size_t prefix_bytes(const char *s, size_t len, size_t cols, size_t *ret_chars)
{
	size_t i = 0, n = 0;

	while (i < len) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (n == cols)
				break;
			n++;
		}
		i++;
	}
	*ret_chars = n;
	return i;
}

int vp_fit_lines(FILE *out, const char *buf, size_t len, int width, size_t *ret_cut)
{
	size_t cut = 0;

	for (size_t at = 0; at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t line = nl ? (size_t)(nl - (buf + at)) : len - at;
		size_t chars, keep = line;

		if (width >= 2) {
			keep = prefix_bytes(buf + at, line, (size_t)width, &chars);
			if (keep < line) {
				/* over the width: width - 1 characters and the ellipsis */
				keep = prefix_bytes(buf + at, line, (size_t)width - 1, &chars);
				cut++;
			}
		}
		fwrite(buf + at, 1, keep, out);
		if (keep < line)
			fputs("\xe2\x80\xa6", out);
		if (nl)
			fputc('\n', out);
		at += line + (nl != NULL);
	}
	*ret_cut = cut;
	return ferror(out) ? -1 : 0;
}
