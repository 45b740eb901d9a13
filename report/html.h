/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * html.h - what the parts of `varperf report --format html` share: the
 * escaping of every name from the recording (html-escape.c), the
 * Variance Characterization Graph laid out by Graphviz (html-graph.c) and
 * the flame graph of the sampled stacks (html-flame.c).  report-html.c
 * puts the page together.
 */
#ifndef VARPERF_REPORT_HTML_H
#define VARPERF_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"

/*
 * @s as HTML text or attribute value, at most @max characters (0: all; a
 * cut one ends in "…"): markup characters as entities, controls as '?',
 * bytes that are not UTF-8 as U+FFFD.
 */
void html_put_max(FILE *f, const char *s, size_t max);
void html_put(FILE *f, const char *s);
/* A time in the file's unit, escaped (report_time's words). */
void html_time(FILE *f, const struct report *r, double v);
/* "function [call site]" of graph node @id, each cut at @max characters. */
void html_vcg_label(FILE *f, const struct report *r, uint32_t id, size_t max);

/* The page's content width in px, which wide drawings are scaled to. */
enum { HTML_PAGE_W = 1240 };

/*
 * html_vcg - the "Variance Characterization Graph" section: each pattern
 * laid out by Graphviz's dot when it runs (the built-in layering
 * otherwise), the patterns wrapped in rows, the SVG scaled to the page.
 */
void html_vcg(FILE *f, const struct report *r);

/* html_flame - the "Flame graph" section of r->sampled's stacks. */
void html_flame(FILE *f, const struct report *r);
/* html_flame_style - its CSS rules. */
extern const char html_flame_style[];

#endif
