/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * shell.c - quoting the words of a command for a POSIX shell: single
 * quotes, each ' as '\'' (see shell.h).
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "util/shell.h"
#include "util/util.h"

char *vp_shell_append(char *line, const char *s)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789_./=:,+-%@";
	char *next, *q;
	size_t k = 0;

	if (*s && strspn(s, plain) == strlen(s)) {
		next = xasprintf("%s %s", line, s);
	} else {
		q = xmalloc(4 * strlen(s) + 3);
		q[k++] = '\'';
		for (const char *c = s; *c; c++) {
			if (*c == '\'') {
				memcpy(q + k, "'\\''", 4);
				k += 4;
			} else {
				q[k++] = *c;
			}
		}
		q[k++] = '\'';
		q[k] = 0;
		next = xasprintf("%s %s", line, q);
		free(q);
	}
	free(line);
	return next;
}
