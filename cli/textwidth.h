/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * textwidth.h - fitting text output to the terminal's width, as ps(1)
 * and systemctl(1) do: lines longer than the width end in an ellipsis.
 */
#ifndef VARPERF_TEXTWIDTH_H
#define VARPERF_TEXTWIDTH_H

#include <stddef.h>
#include <stdio.h>

/**
 * vp_term_width - the width to fit standard output to, in columns
 * @fd: the descriptor the text goes to (standard output)
 *
 * $COLUMNS when it is a whole number greater than 0 (as git's
 * term_columns(): the user's word wins, on a pipe too), else the width of
 * the terminal @fd is (TIOCGWINSZ), else 0: no limit (a pipe or a file).
 */
int vp_term_width(int fd);

/**
 * vp_fit_lines - write @len bytes of text to @out, every line cut to
 * @width columns
 * @width: columns (UTF-8 characters), at least 2; 0: no limit
 * @ret_cut: the number of lines cut
 *
 * A cut line keeps its first @width - 1 characters and ends in "…".
 * Returns 0, or -1 when writing failed.
 */
int vp_fit_lines(FILE *out, const char *buf, size_t len, int width, size_t *ret_cut);

#endif
