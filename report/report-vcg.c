/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-vcg.c - the Variance Characterization Graph in `varperf report`:
 * every pattern as an indented tree with its back-edges (text), the
 * underlying sources of variance per originator, and the whole graph as
 * Graphviz (--format dot).
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/sources.h"
#include "core/vcg.h"
#include "report.h"
#include "util/util.h"

/* Deeper nodes keep this indentation (as in the tree of report-text.c). */
enum { VCG_MAX_INDENT = 16 };
/* Originators listed without --all. */
enum { VCG_TOP_ORIGINS = 20 };
/* ... and by default (a column a level, the name fitted) */
enum { VCG_NARROW_INDENT = 12 };
/* Width of the columns before a node's name (see vcg_pattern()). */
enum { VCG_COLS = 61 };

static const char *vcg_type_word(enum vp_vcg_type t)
{
	switch (t) {
	case VP_VCG_TASK:
		return "Task";
	case VP_VCG_CONTRIBUTOR:
		return "Contributor";
	case VP_VCG_CONTRAST:
		return "Contrast";
	default:
		return "unused";
	}
}

const char *report_vcg_callsite(const struct report *r, uint32_t id, char *buf, size_t len)
{
	const struct vp_vcg *g = r->vcg;
	const struct vp_vcg_node *n = &g->nodes[id];
	uint32_t cs = VP_NO_CALLSITE;

	buf[0] = '\0';
	for (uint32_t i = 0; i < n->nccs; i++) {
		const struct vp_vcg_cc *cc = &g->ccs[n->ccs[i]];
		uint32_t last = cc->len ? cc->elems[cc->len - 1].callsite : VP_NO_CALLSITE;

		if (i && last != cs) {
			snprintf(buf, len, "%" PRIu32 " call sites", n->nccs);
			return buf;
		}
		cs = last;
	}
	return report_callsite_str(r, cs, 1, buf, len);
}

/* "function [call site]" of a VCG node. */
static void vcg_put_node(const struct report *r, FILE *f, uint32_t id)
{
	char cs[512];

	report_put(f, report_func_name(r, r->vcg->nodes[id].func));
	report_vcg_callsite(r, id, cs, sizeof(cs));
	if (*cs) {
		fputs(" [", f);
		report_put(f, cs);
		fputc(']', f);
	}
}

/* Whether a sibling of node @id in pattern @p calls the same function:
 * then only the call site tells them apart. */
static int vcg_site_needed(const struct vp_vcg *g, const struct vp_vcg_pattern *p, uint32_t id)
{
	const struct vp_vcg_node *n = &g->nodes[id];

	for (uint32_t j = p->root; j < p->root + p->nnodes; j++)
		if (j != id && g->nodes[j].parent == n->parent && g->nodes[j].func == n->func)
			return 1;
	return 0;
}

/*
 * The node's name in @room columns (not --wide): without its call site
 * when that does not fit and no sibling needs it, then its name cut in
 * the middle.
 */
static void vcg_put_node_fitted(const struct report *r, FILE *f, const struct vp_vcg_pattern *p,
				uint32_t id, size_t room)
{
	const char *name = report_func_name(r, r->vcg->nodes[id].func);
	char cs[512], line[1024], buf[1024];
	int len;

	report_vcg_callsite(r, id, cs, sizeof(cs));
	len = snprintf(line, sizeof(line), "%s%s%s%s", name, *cs ? " [" : "", cs, *cs ? "]" : "");
	if (len < 0 || (size_t)len >= sizeof(line) ||
	    report_text_width(line, (size_t)len) > room) {
		if (!*cs || !vcg_site_needed(r->vcg, p, id))
			len = snprintf(line, sizeof(line), "%s", name);
		else
			len = snprintf(line, sizeof(line), "%s [%s]",
				       report_fit(name, room > 24 ? room / 2 : 12, buf, sizeof(buf)),
				       cs);
	}
	(void)len;
	report_put(f, report_fit(line, room, buf, sizeof(buf)));
}

/*
 * The call sites of a segment's components, as "a.c:3, a.c:9", each once:
 * merged originators call the same site from their own contexts.
 */
static void vcg_put_components(const struct report *r, FILE *f, const struct vp_vcg_segment *s)
{
	char cs[512], prev[512];
	uint32_t shown = 0;

	for (uint32_t i = 0; i < s->ncomponents; i++) {
		uint32_t id = r->tree->nodes[s->components[i]].callsite, j;

		for (j = 0; j < i; j++)
			if (r->tree->nodes[s->components[j]].callsite == id)
				break;
		if (j < i)
			continue;
		report_callsite_str(r, id, 1, cs, sizeof(cs));
		if (shown && !strcmp(cs, prev))
			continue;
		if (shown++)
			fputs(", ", f);
		report_put(f, *cs ? cs : "?");
		snprintf(prev, sizeof(prev), "%s", cs);
	}
}

/* One call-chain segment: "A [a.c:3] -> B [b.c:9]". */
static void vcg_put_cc(const struct report *r, FILE *f, const struct vp_vcg_cc *cc)
{
	char cs[512];

	for (uint32_t i = 0; i < cc->len; i++) {
		if (i)
			fputs(report_sym(SYM_ARROW), f);
		report_put(f, report_func_name(r, cc->elems[i].func));
		report_callsite_str(r, cc->elems[i].callsite, 1, cs, sizeof(cs));
		if (*cs) {
			fputs(" [", f);
			report_put(f, cs);
			fputc(']', f);
		}
	}
}

static void vcg_pattern(const struct report *r, size_t q, uint32_t *depth)
{
	const struct vp_vcg *g = r->vcg;
	const struct vp_vcg_pattern *p = &g->patterns[q];
	FILE *f = r->out;
	char vim[32], mean[32];
	double share = g->patterns[0].vim > 0 ? 100.0 * p->vim / g->patterns[0].vim : 0.0;

	fprintf(f, "\n  Pattern %zu: VIM %s (%.1f%% of the first), %" PRIu32 " node%s\n", q + 1,
		report_time(r, p->vim, vim, sizeof(vim)), share, p->nnodes,
		p->nnodes == 1 ? "" : "s");
	fprintf(f, "  %7s  %-11s %9s %9s %6s %9s  %s\n", "id", "type", "N", "mean", "CoV", "VIM",
		"node");
	for (uint32_t id = p->root; id < p->root + p->nnodes; id++) {
		const struct vp_vcg_node *n = &g->nodes[id];
		uint32_t d, ind;
		char idbuf[16];

		depth[id] = n->parent == VP_NO_NODE ? 0 : depth[n->parent] + 1;
		d = depth[id];
		/* by default one column a level, as the sampled tree, and the
		 * name fitted to what is left of TEXT_WIDTH */
		if (r->wide)
			ind = 2 * (d > VCG_MAX_INDENT ? VCG_MAX_INDENT : d);
		else
			ind = d > VCG_NARROW_INDENT ? VCG_NARROW_INDENT : d;
		snprintf(idbuf, sizeof(idbuf), "(%" PRIu32 ")", id);
		fprintf(f, "  %7s  %-11s %9" PRIu64 " %9s %6.3f %9s  %*s", idbuf,
			vcg_type_word(n->type), n->stats.n,
			report_time(r, n->stats.mean, mean, sizeof(mean)), vp_stats_cov(&n->stats),
			report_time(r, n->vim, vim, sizeof(vim)), (int)ind, "");
		if (d > (r->wide ? VCG_MAX_INDENT : VCG_NARROW_INDENT))
			fprintf(f, "[depth %" PRIu32 "] ", d);
		if (r->wide)
			vcg_put_node(r, f, id);
		else
			vcg_put_node_fitted(r, f, p, id, REPORT_TEXT_WIDTH - VCG_COLS - ind -
				(d > VCG_NARROW_INDENT ? 12 : 0));
		fputc('\n', f);
		/* back-edges from this node: it underlies the segment; by
		 * default under its id, so that they fit */
		for (uint32_t i = 0; i < n->ncls; i++) {
			const struct vp_vcg_segment *s = &g->segments[n->cls[i]];
			uint32_t h = s->nodes[0];

			if (s->nodes[s->len - 1] != id)
				continue;
			fprintf(f, "%*s%s (%" PRIu32 ") ",
				r->wide ? VCG_COLS + (int)ind + 2 : 6 + (int)ind, "",
				report_sym(SYM_BACK), h);
			report_put(f, report_func_name(r, g->nodes[h].func));
			fputs(" via [", f);
			vcg_put_components(r, f, s);
			fprintf(f, "]: cf %.1f%%", 100.0 * s->cf);
			if (s->how != VP_SOURCE_MATRIX)
				fprintf(f, " (%s)", vp_source_how_name(s->how));
			fputc('\n', f);
		}
		if (!r->contexts)
			continue;
		for (uint32_t i = 0; i < n->nccs; i++) {
			fprintf(f, "%*scontext: ", r->wide ? VCG_COLS + (int)ind + 2 : 8 + (int)ind, "");
			vcg_put_cc(r, f, &g->ccs[n->ccs[i]]);
			fputc('\n', f);
		}
	}
}

void report_vcg_text(const struct report *r)
{
	const struct vp_vcg *g = r->vcg;
	FILE *f = r->out;
	uint32_t *depth;

	fprintf(f, "Variance Characterization Graph (tau_S = %g, beta = %g):\n", g->params.tau,
		g->params.beta);
	fprintf(f, "  %zu pattern%s, %zu node%s, %zu back-edge%s (base layer: %zu pattern%s, %zu "
		   "node%s; %zu merge%s; trimmed: %zu pattern%s, %zu node%s)\n",
		g->npatterns, g->npatterns == 1 ? "" : "s", g->nnodes, g->nnodes == 1 ? "" : "s",
		g->nsegments, g->nsegments == 1 ? "" : "s", g->base_patterns,
		g->base_patterns == 1 ? "" : "s", g->base_nodes, g->base_nodes == 1 ? "" : "s",
		g->merges, g->merges == 1 ? "" : "s", g->trimmed_patterns,
		g->trimmed_patterns == 1 ? "" : "s", g->trimmed_nodes,
		g->trimmed_nodes == 1 ? "" : "s");
	if (!g->npatterns && report_no_calls(r)) {
		fprintf(f, "  (none: %s)\n", report_no_calls(r));
		return;
	}
	if (!g->npatterns) {
		fprintf(f, "  (none: no significant node has CoV >= %g)\n", r->an->cov_threshold);
		return;
	}
	report_vim_words(r);
	depth = xcalloc(g->nnodes, sizeof(*depth));
	for (size_t q = 0; q < g->npatterns; q++)
		vcg_pattern(r, q, depth);
	free(depth);
}

/* ---- Step 2 ---- */

static void sources_origin(const struct report *r, const struct vp_origin *o)
{
	const struct vp_cct_node *h = &r->tree->nodes[o->node];
	double theta = r->sources->params.min_contribution;
	FILE *f = r->out;
	char sigma[32], label[600];

	fputs("  ", f);
	report_put(f, report_node_label(r, o->node, label, sizeof(label)));
	fprintf(f, " (node %" PRIu32 "): sigma %s over %" PRIu64 " calls; %" PRIu32
		   " variables, %" PRIu32 " call%s inlined\n",
		o->node, report_time(r, sqrt(o->variance), sigma, sizeof(sigma)), h->stats.n,
		o->nvars, o->ninlined, o->ninlined == 1 ? "" : "s");
	for (size_t i = 0; i < o->ncomponents; i++) {
		if (o->components[i].node != VP_NO_NODE || o->components[i].share < theta)
			continue;
		fprintf(f, "    %7.1f%% %7.1f%%  self\n", 100.0 * o->components[i].share,
			100.0 * o->components[i].cf);
	}
	for (size_t i = 0; i < o->nsources; i++) {
		const struct vp_source *s = &o->sources[i];

		fprintf(f, "    %7.1f%% %7.1f%%  ", 100.0 * s->share, 100.0 * s->cf);
		report_node_label(r, s->underlier, label, sizeof(label));
		report_put(f, label);
		if (s->len > 1) {
			size_t used = 22 + report_text_width(label, strlen(label)) + 5; /* " via " */
			char *chain = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&chain, &len);

			if (!m)
				die("out of memory");
			fputs(" via", f);
			for (uint32_t k = 0; k + 1 < s->len; k++) {
				if (k)
					fputs(report_sym(SYM_ARROW), m);
				report_node_label(r, s->chain[k], label, sizeof(label));
				fputs(label, m);
			}
			if (fclose(m))
				die("out of memory");
			/* by default on the line when it fits, else on the next,
			 * its ends where it does not fit there either */
			if (!r->wide && used + report_text_width(chain, len) > REPORT_TEXT_WIDTH) {
				fprintf(f, "\n%*s", 15, "");
				used = 15;
			} else {
				fputc(' ', f);
			}
			report_put_chain(f, chain, report_sym(SYM_ARROW),
					 r->wide ? 0 : REPORT_TEXT_WIDTH - used);
			free(chain);
		}
		if (s->how != VP_SOURCE_MATRIX)
			fprintf(f, " (%s)", vp_source_how_name(s->how));
		fputc('\n', f);
	}
	if (!o->nsources)
		fprintf(f, "    (no single source reaches %g%%)\n", 100.0 * theta);
}

void report_sources_text(const struct report *r)
{
	const struct vp_sources *s = r->sources;
	const struct vp_vcg *g = r->vcg;
	uint8_t *shown;
	size_t nshown = 0, nin = 0;
	FILE *f = r->out;

	fprintf(f, "Underlying sources of variance (%zu high-variance node%s with callees; "
		   "%u extra pass%s over the events):\n",
		s->norigins, s->norigins == 1 ? "" : "s", s->passes, s->passes == 1 ? "" : "es");
	if (s->limited)
		fprintf(f, "  the passes stopped at --max-passes: what lies deeper is unexplored\n");
	if (!s->norigins) {
		fprintf(f, "  (none)\n");
		return;
	}
	fprintf(f, "  share: Cov(Y, X) / var(X), cross terms included; cf: var(Y) / var(X)\n");
	fprintf(f, "      share      cf  source\n");
	shown = xcalloc(s->norigins, 1);
	/* originators in the order of the graph, then (with --all) the rest */
	for (size_t i = 0; g && i < g->nnodes; i++) {
		const struct vp_vcg_node *n = &g->nodes[i];

		for (uint32_t k = 0; k < n->ncct; k++) {
			uint32_t o = s->origin_of[n->cct[k]];

			if (o == VP_NO_NODE || shown[o])
				continue;
			shown[o] = 1;
			nin++;
			if (!r->all && nshown >= VCG_TOP_ORIGINS)
				continue;
			sources_origin(r, &s->origins[o]);
			nshown++;
		}
	}
	for (size_t o = 0; r->all && o < s->norigins; o++) {
		if (!shown[o])
			sources_origin(r, &s->origins[o]);
	}
	if (!r->all && s->norigins > nshown)
		fprintf(f, "  %zu more (%zu outside the graph shown); --all lists them\n",
			s->norigins - nshown, s->norigins - nin);
	free(shown);
}

/* ---- Graphviz ---- */

/* A DOT string body: quotes and backslashes escaped, controls as '?'. */
static void dot_put(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
	}
}

/*
 * The legend: what the shapes, the edges and the lines of a node's label
 * mean, drawn with the same attributes as the graph, in a cluster of its
 * own (its node names cannot clash with the graph's n<id>).
 */
static void dot_legend(FILE *f)
{
	fputs("\tsubgraph cluster_legend {\n"
	      "\t\tlabel=\"Legend\";\n\t\tstyle=rounded;\n\t\tcolor=gray80;\n"
	      "\t\tlegend_task [shape=box, label=\"Task\\n(id) function\\n[call site]\\n"
	      "mean  CoV (stddev / mean)\\nN (calls)  VIM (k sigma N)\"];\n"
	      "\t\tlegend_contributor [shape=box, style=dashed, label=\"Contributor\"];\n"
	      "\t\tlegend_contrast [shape=ellipse, label=\"Contrast\"];\n"
	      "\t\tlegend_task -> legend_contributor [label=\"calls, through\\nthe call "
	      "context\"];\n"
	      "\t\tlegend_contributor -> legend_task [style=dashed, color=firebrick, "
	      "fontcolor=firebrick, label=\"back-edge: underlier to\\noriginator, cf "
	      "(variance\\nit alone would give)\"];\n"
	      "\t\tlegend_task -> legend_contrast [style=invis];\n"
	      "\t}\n",
	      f);
}

int report_vcg_dot(const struct report *r)
{
	const struct vp_vcg *g = r->vcg;
	FILE *f = r->out;
	char a[32], b[32], cs[512];

	fputs("digraph vcg {\n", f);
	fputs("\tgraph [fontname=\"Helvetica\", labelloc=t, label=\"Variance Characterization "
	      "Graph of '",
	      f);
	dot_put(f, r->input);
	fprintf(f, "' (tau_S = %g, beta = %g)\"];\n", g->params.tau, g->params.beta);
	fputs("\tnode [fontname=\"Helvetica\", fontsize=10];\n", f);
	fputs("\tedge [fontname=\"Helvetica\", fontsize=9];\n", f);
	for (size_t q = 0; q < g->npatterns; q++) {
		const struct vp_vcg_pattern *p = &g->patterns[q];

		fprintf(f, "\tsubgraph cluster_%zu {\n\t\tlabel=\"Pattern %zu: VIM %s\";\n", q + 1,
			q + 1, report_time(r, p->vim, a, sizeof(a)));
		fputs("\t\tstyle=rounded;\n\t\tcolor=gray60;\n", f);
		for (uint32_t id = p->root; id < p->root + p->nnodes; id++) {
			const struct vp_vcg_node *n = &g->nodes[id];

			/* Kumar and Pande, §8.1: Tasks are boxes, Contrasts ovals, Contributors dashed */
			fprintf(f, "\t\tn%" PRIu32 " [shape=%s%s, label=\"(%" PRIu32 ") ", id,
				n->type == VP_VCG_CONTRAST ? "ellipse" : "box",
				n->type == VP_VCG_CONTRIBUTOR ? ", style=dashed" : "", id);
			dot_put(f, report_func_name(r, n->func));
			report_vcg_callsite(r, id, cs, sizeof(cs));
			if (*cs) {
				fputs("\\n[", f);
				dot_put(f, cs);
				fputc(']', f);
			}
			report_time(r, n->stats.mean, a, sizeof(a));
			fprintf(f, "\\nmean %s  CoV %.3f\\nN %" PRIu64 "  VIM %s\"];\n", a,
				vp_stats_cov(&n->stats), n->stats.n,
				report_time(r, n->vim, b, sizeof(b)));
		}
		fputs("\t}\n", f);
	}
	for (size_t id = 0; id < g->nnodes; id++)
		if (g->nodes[id].parent != VP_NO_NODE)
			fprintf(f, "\tn%" PRIu32 " -> n%zu;\n", g->nodes[id].parent, id);
	for (size_t i = 0; i < g->nsegments; i++) {
		const struct vp_vcg_segment *s = &g->segments[i];

		fprintf(f,
			"\tn%" PRIu32 " -> n%" PRIu32 " [style=dashed, constraint=false, "
			"color=firebrick, fontcolor=firebrick, label=\"%.1f%%\"];\n",
			s->nodes[s->len - 1], s->nodes[0], 100.0 * s->cf);
	}
	dot_legend(f);
	fputs("}\n", f);
	return ferror(f) ? -1 : 0;
}
