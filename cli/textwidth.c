/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * textwidth.c - fitting text output to a width (textwidth.h).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "report/report.h"
#include "textwidth.h"
#include "util/util.h"

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
	return VP_TEXT_WIDTH;
}

/*
 * Where to break @s[0..len), which does not fit in @room columns: after
 * the last space that fits (not among the first @keep bytes, the
 * indentation), else before the first character that does not fit.
 * Returns the bytes that stay on this line; the spaces at the break go.
 */
static size_t fold_at(const char *s, size_t len, size_t keep, size_t room)
{
	size_t i = 0, w = 0, space = 0, hard = 0;

	while (i < len) {
		int c;
		size_t k = report_char_at(s + i, len - i, &c);

		if (w + (size_t)c > room)
			break;
		if (s[i] == ' ' && i > keep)
			space = i;
		w += (size_t)c;
		i += k;
		hard = i;
	}
	/* a space in the first third leaves most of the line empty: cut the word */
	if (space && space * 3 > room)
		return space;
	return hard ? hard : 1;
}

int vp_fit_lines(FILE *out, const char *buf, size_t len, int width, size_t *ret_folded)
{
	size_t folded = 0;

	for (size_t at = 0; at < len;) {
		const char *s = buf + at, *nl = memchr(s, '\n', len - at);
		size_t line = nl ? (size_t)(nl - s) : len - at, lead = 0, indent = 0;

		while (lead < line && s[lead] == ' ')
			lead++;
		if (width >= 20 && report_text_width(s, line) > (size_t)width) {
			folded++;
			indent = lead + 4 < (size_t)width / 2 ? lead + 4 : (size_t)width / 2;
		}
		for (size_t first = 1; width >= 20;) {
			size_t room = first ? (size_t)width : (size_t)width - indent, k, w;

			if (report_text_width(s, line) <= room)
				break;
			k = fold_at(s, line, first ? lead : 0, room);
			/* no blanks at the end of a line */
			for (w = k; w > 0 && s[w - 1] == ' '; w--)
				;
			fwrite(s, 1, w, out);
			fprintf(out, "\n%*s", (int)indent, "");
			while (k < line && s[k] == ' ')
				k++;
			s += k;
			line -= k;
			first = 0;
		}
		fwrite(s, 1, line, out);
		if (nl)
			fputc('\n', out);
		at = (size_t)(s - buf) + line + (nl != NULL);
	}
	*ret_folded = folded;
	return ferror(out) ? -1 : 0;
}

int vp_print_fitted(FILE *out, int width, int (*print)(void *ctx, FILE *f), void *ctx)
{
	char *buf = NULL;
	size_t len = 0, folded = 0;
	FILE *m;
	int ret;

	if (width < 20)
		return print(ctx, out);
	m = open_memstream(&buf, &len);
	if (!m)
		die("out of memory");
	ret = print(ctx, m);
	if (fclose(m))
		die("out of memory");
	if (ret >= 0 && vp_fit_lines(out, buf, len, width, &folded) < 0)
		ret = -1;
	free(buf);
	pr_debug("%zu line%s folded at %d columns", folded, folded == 1 ? "" : "s", width);
	return ret;
}
