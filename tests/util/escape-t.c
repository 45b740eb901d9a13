/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * escape-t.c - tests for util/escape.c, the terminal rule: each control
 * (C0, DEL, C1) and each byte of invalid UTF-8 becomes '?', every valid
 * character else passes, in place and to a stream alike.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap/basic.h"
#include "util/escape.h"

/* @in (@n bytes) through vp_term_putn() and, without NULs, vp_term_clean() */
static void check(const char *in, size_t n, const char *want, const char *what)
{
	char *buf = NULL, *copy;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		bail("open_memstream failed");
	vp_term_putn(f, in, n);
	if (fclose(f))
		bail("writing to memory failed");
	is_string(want, buf, "%s: vp_term_putn", what);
	free(buf);
	if (memchr(in, '\0', n))
		return;
	copy = bmalloc(n + 1);
	memcpy(copy, in, n);
	copy[n] = '\0';
	is_string(want, vp_term_clean(copy), "%s: vp_term_clean", what);
	free(copy);
}

#define CHECK(in, want, what) check(in, sizeof(in) - 1, want, what)

int main(void)
{
	plan_lazy();
	CHECK("main", "main", "plain ASCII passes");
	CHECK("fmt%s%n \"q'\\;", "fmt%s%n \"q'\\;", "printable punctuation passes");
	CHECK("new\nline\ttab\rcr", "new?line?tab?cr", "newline, tab and CR");
	CHECK("\x1b[31mred\x07", "?[31mred?", "ESC and BEL");
	CHECK("del\x7f", "del?", "DEL");
	CHECK("nul\0end", "nul?end", "NUL inside a counted string");
	CHECK("csi\xc2\x9b" "2J", "csi?2J", "C1 CSI, UTF-8 encoded: one '?'");
	CHECK("c1\xc2\x80\xc2\x9f", "c1??", "the ends of C1");
	CHECK("nbsp\xc2\xa0 e\xcc\x81 \xc3\xa9", "nbsp\xc2\xa0 e\xcc\x81 \xc3\xa9",
	      "two-byte characters past C1 pass");
	CHECK("\xe2\x86\x92 \xe2\x80\xa8 \xef\xbf\xbd", "\xe2\x86\x92 \xe2\x80\xa8 \xef\xbf\xbd",
	      "three-byte characters pass (U+2192, U+2028, U+FFFD)");
	CHECK("\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", "\xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf",
	      "four-byte characters pass, up to U+10FFFF");
	CHECK("raw\x9b" "2J", "raw?2J", "a lone C1 byte (CSI in an 8-bit locale)");
	CHECK("bad\xff\xfe\xc3\x28utf8\xed\xa0\x80" "end", "bad??" "?(utf8??" "?end",
	      "invalid bytes, a cut sequence, a surrogate: one '?' per byte");
	CHECK("over\xc0\xaf\xe0\x80\xaf", "over?????", "overlong forms");
	CHECK("big\xf4\x90\x80\x80\xf5\x80", "big??????", "past U+10FFFF");
	CHECK("cut\xe2\x86", "cut??", "a character cut at the end");
	CHECK("", "", "the empty string");
	return 0;
}
