/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * shell.h - commands varperf prints for the user to run ("varperf record
 * --mode=probe -f ... -- prog args"): each word quoted for a POSIX shell
 * unless it is plain.
 */
#ifndef VARPERF_SHELL_H
#define VARPERF_SHELL_H

/* @line, a space and @word, quoted unless plain; frees @line. */
char *vp_shell_append(char *line, const char *word);

#endif
