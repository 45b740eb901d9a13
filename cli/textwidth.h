/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * textwidth.h - fitting text output to a width: the terminal's, or 100
 * columns where the text goes to a pipe or a file.  A line that is wider
 * is folded at a space, its rest indented under it, as fmt(1) and
 * par(1) fold text: nothing is lost.
 */
#ifndef VARPERF_TEXTWIDTH_H
#define VARPERF_TEXTWIDTH_H

#include <stddef.h>
#include <stdio.h>

/* The width of text that goes to no terminal (a pipe or a file). */
#define VP_TEXT_WIDTH 100

/**
 * vp_term_width - the width to fit standard output to, in columns
 * @fd: the descriptor the text goes to (standard output)
 *
 * $COLUMNS when it is a whole number greater than 0 (as git's
 * term_columns(): the user's word wins, on a pipe too), else the width of
 * the terminal @fd is (TIOCGWINSZ), else VP_TEXT_WIDTH.
 */
int vp_term_width(int fd);

/**
 * vp_fit_lines - write @len bytes of text to @out, every line within
 * @width display columns
 * @width: columns, at least 20; 0: no limit
 * @ret_folded: the number of lines folded
 *
 * A wider line breaks at the last space that fits (after its
 * indentation), or within a word that has none; the rest follows on
 * lines indented 4 columns deeper than it.  Returns 0, or -1 when
 * writing failed.
 */
int vp_fit_lines(FILE *out, const char *buf, size_t len, int width, size_t *ret_folded);

/**
 * vp_print_fitted - @print(@ctx, f) into memory, then to @out within @width
 * columns (vp_fit_lines); @width 0 or under 20: straight to @out
 *
 * Returns what @print returned, or -1 when writing failed.
 */
int vp_print_fitted(FILE *out, int width, int (*print)(void *ctx, FILE *f), void *ctx);

#endif
