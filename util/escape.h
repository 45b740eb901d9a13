/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * escape.h - the one rule for text that reaches a terminal: names come
 * from the recorded binary, its debug information and the data file, and
 * a hostile one must not drive the terminal (move the cursor, rewrite a
 * line, set the title) nor split a line in two.
 *
 * The rule: a byte of a valid UTF-8 character passes, except the control
 * characters, C0 (U+0000-U+001F, newline, tab and ESC among them), DEL
 * (U+007F) and C1 (U+0080-U+009F, CSI among them), each of which prints
 * as '?'; so does each byte that is no part of a valid UTF-8 character
 * (a lone 0x9b is CSI to a terminal in an 8-bit locale).  Every message
 * (util.h), the text report's names and record's lists follow it; the
 * GDB plugin applies the same rule (varperf.term_text).
 */
#ifndef VARPERF_ESCAPE_H
#define VARPERF_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* @s made safe in place (it never grows); returns @s. */
char *vp_term_clean(char *s);
/* Print @s, or its first @n bytes, under the rule. */
void vp_term_put(FILE *f, const char *s);
void vp_term_putn(FILE *f, const char *s, size_t n);

#endif
