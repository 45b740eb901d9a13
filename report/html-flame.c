/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * html-flame.c - the flame graph of the HTML page (Gregg, "The Flame
 * Graph", CACM 2016): the sampled stacks merged into their calling
 * contexts (core/sampled.h, folded as folded stacks are), each a box as
 * wide as the samples with it on their stack, its callees on top of it,
 * the busiest first.  Inline SVG, scaled to the page; boxes under half a
 * pixel are left out (their samples stay in their caller's width), and a
 * stack deeper than HTML_FLAME_DEPTH ends in one box for the rest.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sampled.h"
#include "html.h"
#include "util/util.h"

enum {
	HTML_FLAME_W = 1200,	/* the drawing's width, in px before scaling */
	HTML_FLAME_ROW = 17,	/* a frame's height */
	HTML_FLAME_DEPTH = 160, /* frames drawn per stack */
	HTML_FLAME_CHAR_W = 7,	/* about, at 11 px: how much of a name fits */
};

const char html_flame_style[] =
	".vp-flame rect{stroke:#fff;stroke-width:0.5}"
	".vp-flame text{font-size:11px;pointer-events:none}"
	".vp-flame g.vp-frame:hover rect{stroke:#000;stroke-width:1}";

struct flame {
	const struct report *r;
	FILE *f;
	double scale; /* px per sample */
	uint32_t rows; /* levels drawn */
	uint64_t frames; /* boxes drawn */
};

static int flame_cmp(const void *a, const void *b, void *arg)
{
	const struct vp_sampled *t = arg;
	const struct vp_snode *x = &t->nodes[*(const uint32_t *)a];
	const struct vp_snode *y = &t->nodes[*(const uint32_t *)b];

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* A warm colour from the name, the same for the same function everywhere. */
static unsigned flame_hue(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* How many levels the deepest stack through node @id has above it. */
static uint32_t flame_deeper(const struct vp_sampled *t, uint32_t id)
{
	size_t n = 0, cap = 64;
	uint32_t *stack = xmalloc(cap * sizeof(*stack)), d = 0;

	stack[n++] = id;
	while (n) {
		const struct vp_snode *s = &t->nodes[stack[--n]];

		if (s->depth - t->nodes[id].depth > d)
			d = s->depth - t->nodes[id].depth;
		while (n + s->nchildren > cap) {
			cap *= 2;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		if (s->nchildren) /* (children is NULL then) */
			memcpy(stack + n, s->children, s->nchildren * sizeof(*stack));
		n += s->nchildren;
	}
	free(stack);
	return d;
}

static void flame_box(struct flame *fl, uint32_t id, double x, uint32_t level, uint32_t deeper)
{
	const struct report *r = fl->r;
	const struct vp_snode *n = &r->sampled->nodes[id];
	double w = (double)n->samples * fl->scale, y;
	const char *name = id ? report_snode_name(r, id) : "all";
	unsigned h = flame_hue(name);
	char site[512];
	size_t fit;

	y = (double)(fl->rows - 1 - level) * HTML_FLAME_ROW;
	fprintf(fl->f, "<g class=\"vp-frame\" data-node=\"%" PRIu32 "\" data-samples=\"%" PRIu64
		       "\" data-depth=\"%" PRIu32 "\"><title>",
		id, n->samples, level);
	html_put(fl->f, name);
	if (id && report_snode_inlined(r, id))
		fputs(" (inlined)", fl->f);
	if (id && *report_snode_site(r, id, site, sizeof(site))) {
		fputs(" [", fl->f);
		html_put(fl->f, site);
		fputc(']', fl->f);
	}
	if (deeper)
		fprintf(fl->f, " and %" PRIu32 " levels above it", deeper);
	fprintf(fl->f, ": %" PRIu64 " sample%s, %.2f%%</title>", n->samples,
		n->samples == 1 ? "" : "s",
		100.0 * (double)n->samples / (double)r->sampled->nodes[0].samples);
	fprintf(fl->f, "<rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%d\" "
		       "fill=\"hsl(%u,%u%%,%u%%)\"/>",
		x, y, w, HTML_FLAME_ROW - 1,
		n->kind == VP_SNODE_FUNC ? 10 + h % 45 : 0, n->kind == VP_SNODE_FUNC ? 75 : 0,
		n->kind == VP_SNODE_FUNC ? 55 + (h >> 8) % 15 : 78);
	fit = (size_t)(w / HTML_FLAME_CHAR_W);
	if (fit >= 4) {
		fprintf(fl->f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 12);
		html_put_max(fl->f, name, fit - 1);
		fputs("</text>", fl->f);
	}
	fputs("</g>\n", fl->f);
	fl->frames++;
}

/* Depth first from the root, each level's boxes left to right. */
static void flame_draw(struct flame *fl)
{
	const struct vp_sampled *t = fl->r->sampled;
	size_t n = 0, cap = 64;
	struct {
		uint32_t id, level;
		double x;
	} *stack = xmalloc(cap * sizeof(*stack));

	stack[n].id = 0;
	stack[n].level = 0;
	stack[n++].x = 0;
	while (n) {
		uint32_t id = stack[n - 1].id, level = stack[n - 1].level, deeper = 0;
		double x = stack[n - 1].x;
		const struct vp_snode *s = &t->nodes[id];
		uint32_t *kids;

		n--;
		if ((double)s->samples * fl->scale < 0.5)
			continue;
		if (level + 1 == HTML_FLAME_DEPTH && s->nchildren) {
			deeper = flame_deeper(t, id);
			flame_box(fl, id, x, level, deeper);
			continue;
		}
		flame_box(fl, id, x, level, 0);
		if (!s->nchildren)
			continue;
		kids = xmalloc(s->nchildren * sizeof(*kids));
		memcpy(kids, s->children, s->nchildren * sizeof(*kids));
		qsort_r(kids, s->nchildren, sizeof(*kids), flame_cmp, (void *)t);
		while (n + s->nchildren > cap) {
			cap *= 2;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		for (uint32_t k = 0; k < s->nchildren; k++) {
			stack[n].id = kids[k];
			stack[n].level = level + 1;
			stack[n++].x = x;
			x += (double)t->nodes[kids[k]].samples * fl->scale;
		}
		free(kids);
	}
	free(stack);
}

/* Levels to draw: the deepest box at least half a pixel wide, capped. */
static uint32_t flame_rows(const struct vp_sampled *t, double scale)
{
	uint32_t rows = 1;

	for (size_t i = 1; i < t->nnodes; i++)
		if ((double)t->nodes[i].samples * scale >= 0.5 && t->nodes[i].depth + 1 > rows)
			rows = t->nodes[i].depth + 1;
	return rows > HTML_FLAME_DEPTH ? HTML_FLAME_DEPTH : rows;
}

void html_flame(FILE *f, const struct report *r)
{
	const struct vp_sampled *t = r->sampled;
	struct flame fl = { .r = r, .f = f };
	uint64_t total = t->nnodes ? t->nodes[0].samples : 0;
	double h;

	fprintf(f, "<section id=\"vp-flame\">\n<h2>Flame graph</h2>\n<p class=\"vp-note\">The "
		   "%" PRIu64 " sampled stacks merged: a box is a function in its calling "
		   "context, as wide as the samples with it on their stack, its callees above "
		   "it, the busiest first; hover for its name and count.%s</p>\n",
		total, r->hdr->mode == VP_MODE_AUTO
			       ? " In auto mode these are phase 1's samples, which chose what to "
				 "probe."
			       : "");
	if (!total) {
		fputs("<p>(no samples)</p>\n</section>\n", f);
		return;
	}
	fl.scale = (double)HTML_FLAME_W / (double)total;
	fl.rows = flame_rows(t, fl.scale);
	h = (double)fl.rows * HTML_FLAME_ROW;
	fprintf(f, "<svg class=\"vp-flame\" data-samples=\"%" PRIu64 "\" data-width=\"%d\" "
		   "viewBox=\"0 0 %d %.0f\" width=\"%d\" "
		   "style=\"width:100%%;max-width:%dpx;height:auto\">\n",
		total, HTML_FLAME_W, HTML_FLAME_W, h, HTML_FLAME_W, HTML_FLAME_W);
	flame_draw(&fl);
	fputs("</svg>\n", f);
	if (fl.rows == HTML_FLAME_DEPTH)
		fprintf(f, "<p class=\"vp-note\">Stacks deeper than %d frames end in one box for "
			   "the rest.</p>\n",
			HTML_FLAME_DEPTH);
	fputs("</section>\n", f);
}
