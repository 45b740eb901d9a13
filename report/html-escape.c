/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * html-escape.c - names from the recorded binary and its debug
 * information, escaped for the HTML page: they are the page's only input
 * that nobody checked.
 */
#include <config.h>

#include "html.h"
#include "json-writer.h"
#include "util/util.h"

void html_put_max(FILE *f, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0, len, n;

	for (; *p; p += n, chars++) {
		len = utf8_seq_len(p);
		n = len ? len : 1;
		if (max && chars + 1 == max && p[n]) {
			fputs("\xe2\x80\xa6", f);
			return;
		}
		switch (*p) {
		case '&':
			fputs("&amp;", f);
			continue;
		case '<':
			fputs("&lt;", f);
			continue;
		case '>':
			fputs("&gt;", f);
			continue;
		case '"':
			fputs("&quot;", f);
			continue;
		case '\'':
			fputs("&#39;", f);
			continue;
		}
		if (*p < 0x20 || *p == 0x7f)
			fputc('?', f);
		else if (!len)
			fputs("\xef\xbf\xbd", f);
		else
			fwrite(p, 1, n, f);
	}
}

void html_put(FILE *f, const char *s)
{
	html_put_max(f, s, 0);
}

void html_time(FILE *f, const struct report *r, double v)
{
	char buf[64];

	html_put(f, report_time(r, v, buf, sizeof(buf)));
}

void html_vcg_label(FILE *f, const struct report *r, uint32_t id, size_t max)
{
	char cs[512];

	html_put_max(f, report_func_name(r, r->vcg->nodes[id].func), max);
	report_vcg_callsite(r, id, cs, sizeof(cs));
	if (*cs) {
		fputs(" [", f);
		html_put_max(f, cs, max);
		fputc(']', f);
	}
}
