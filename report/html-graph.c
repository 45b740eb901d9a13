/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * html-graph.c - the Variance Characterization Graph of the HTML page as
 * inline SVG.  Each pattern is laid out by Graphviz's dot (-Tplain: the
 * boxes' centres and the edges' B-splines, back-edges routed around the
 * boxes), the patterns then wrapped in rows of the page's width, and the
 * whole scaled to the page through its viewBox: nothing is cut off, and
 * the boxes and their labels are drawn here, escaped as every name is.
 * Without dot (it is not installed, or fails), a simpler layering does:
 * leaves side by side, a parent over its children, back-edges curving
 * out on the right, where they may cross a box.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/vcg.h"
#include "html.h"
#include "util/util.h"

enum {
	/* a node's box, the space between, a layer's height (built-in) */
	VCG_BOX_W = 196,
	VCG_BOX_H = 64,
	VCG_GAP_X = 28,
	VCG_LAYER_H = 104,
	VCG_PAD = 14,
	VCG_TITLE_H = 24,
	/* patterns wrap past this width: the page's */
	VCG_ROW_W = HTML_PAGE_W - 16,
	VCG_LABEL_CHARS = 30,
	/* a Contrast's oval is this much larger than a box */
	VCG_OVAL = 6,
	/* dot lays out boxes this much larger on each side, so that edges
	 * pass clear of the drawn ones rather than along their borders */
	VCG_CLEAR = 6,
};

/* dot's unit, the point, in the page's px */
static const double VCG_PT = 72;

/* A point of the page's SVG, in px. */
struct html_xy {
	double x, y;
};

/* An edge as dot routed it: a B-spline's points, in its pattern's frame. */
struct vcg_curve {
	size_t n;
	struct html_xy *p;
	struct html_xy label; /* a back-edge's cf, when has_label */
	int has_label;
};

struct vcg_layout {
	struct html_xy *pos;  /* per node: its box's top left, in its pattern */
	struct html_xy *at;   /* per pattern: its frame's top left on the page */
	struct html_xy *size; /* ... and its width and height */
	struct vcg_curve *edge; /* per node: the edge from its parent (dot) */
	struct vcg_curve *back; /* per segment: its back-edge (dot) */
	uint32_t *nback;	/* built-in: per segment its step out, then per
				 * pattern the steps taken */
	double width, height;
	int dot; /* laid out by dot */
};

/* A node's top left on the page. */
static struct html_xy vcg_at(const struct vp_vcg *g, const struct vcg_layout *l, uint32_t id)
{
	const struct html_xy *q = &l->at[g->nodes[id].pattern];

	return (struct html_xy){ q->x + VCG_PAD + l->pos[id].x,
				 q->y + VCG_TITLE_H + VCG_PAD + l->pos[id].y };
}

/* ---- the built-in layout ---- */

/* Back-edges drawn in pattern @q: each curves out a step further right. */
static uint32_t vcg_nback(const struct vp_vcg *g, size_t q)
{
	uint32_t k = 0;

	for (size_t i = 0; i < g->nsegments; i++)
		k += g->nodes[g->segments[i].nodes[0]].pattern == q;
	return k;
}

/*
 * Layered by depth, the leaves side by side in depth-first order, a parent
 * centred over its children.  Node ids are depth-first, pattern by
 * pattern: a parent's is below its children's.
 */
static void vcg_builtin(const struct vp_vcg *g, struct vcg_layout *l)
{
	for (size_t q = 0; q < g->npatterns; q++) {
		const struct vp_vcg_pattern *p = &g->patterns[q];
		uint32_t slots = 0, depth_max = 0, *depth = xcalloc(p->nnodes + 1, sizeof(*depth));

		for (uint32_t i = 0; i < p->nnodes; i++) {
			const struct vp_vcg_node *n = &g->nodes[p->root + i];

			depth[i] = n->parent == VP_NO_NODE || n->parent < p->root
					   ? 0
					   : depth[n->parent - p->root] + 1;
			if (depth[i] > depth_max)
				depth_max = depth[i];
			if (!n->nchildren)
				l->pos[p->root + i].x = slots++;
		}
		for (uint32_t i = p->nnodes; i-- > 0;) {
			const struct vp_vcg_node *n = &g->nodes[p->root + i];
			double lo = INFINITY, hi = -INFINITY;

			for (uint32_t k = 0; k < n->nchildren; k++) {
				lo = fmin(lo, l->pos[n->children[k]].x);
				hi = fmax(hi, l->pos[n->children[k]].x);
			}
			if (n->nchildren)
				l->pos[p->root + i].x = (lo + hi) / 2;
			l->pos[p->root + i].y = depth[i];
		}
		free(depth);
		for (uint32_t i = 0; i < p->nnodes; i++) {
			struct html_xy *ps = &l->pos[p->root + i];

			ps->x *= VCG_BOX_W + VCG_GAP_X;
			ps->y *= VCG_LAYER_H;
		}
		l->size[q].x = (slots ? slots : 1) * (double)(VCG_BOX_W + VCG_GAP_X) - VCG_GAP_X +
			       2 * VCG_PAD + 60 + 24.0 * vcg_nback(g, q);
		l->size[q].y = VCG_TITLE_H + depth_max * (double)VCG_LAYER_H + VCG_BOX_H +
			       2 * VCG_PAD;
	}
}

/* ---- dot's layout ---- */

/* The patterns as one digraph each, in order; the labels are drawn here. */
static void vcg_dot_input(FILE *f, const struct vp_vcg *g)
{
	for (size_t q = 0; q < g->npatterns; q++) {
		const struct vp_vcg_pattern *p = &g->patterns[q];

		fprintf(f, "digraph p%zu {\ngraph [nodesep=0.4, ranksep=0.5, ordering=out];\n"
			   "node [shape=box, fixedsize=true, label=\"\", width=%.4f, height=%.4f];\n"
			   "edge [arrowsize=0.8, fontsize=11];\n",
			q, (VCG_BOX_W + 2 * VCG_CLEAR) / VCG_PT, (VCG_BOX_H + 2 * VCG_CLEAR) / VCG_PT);
		for (uint32_t i = 0; i < p->nnodes; i++) {
			uint32_t id = p->root + i;
			const struct vp_vcg_node *n = &g->nodes[id];

			if (n->type == VP_VCG_CONTRAST)
				fprintf(f, "n%" PRIu32 " [shape=ellipse, width=%.4f, height=%.4f];\n",
					id, (VCG_BOX_W + 2 * VCG_OVAL + 2 * VCG_CLEAR) / VCG_PT,
					(VCG_BOX_H + 2 * VCG_OVAL + 2 * VCG_CLEAR) / VCG_PT);
			else
				fprintf(f, "n%" PRIu32 ";\n", id);
			for (uint32_t k = 0; k < n->nchildren; k++)
				fprintf(f, "n%" PRIu32 " -> n%" PRIu32 ";\n", id, n->children[k]);
		}
		/* back-edges do not rank the nodes: they go up */
		for (size_t i = 0; i < g->nsegments; i++) {
			const struct vp_vcg_segment *s = &g->segments[i];

			if (g->nodes[s->nodes[0]].pattern == q)
				fprintf(f, "n%" PRIu32 " -> n%" PRIu32 " [constraint=false, "
					   "label=\"%.1f%%\"];\n",
					s->nodes[s->len - 1], s->nodes[0], 100.0 * s->cf);
		}
		fputs("}\n", f);
	}
}

/* The next word of a -Tplain line at *@s, unquoted in place; NULL at its end. */
static char *vcg_word(char **s)
{
	char *p = *s, *w, *o;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n')
		return NULL;
	if (*p != '"') {
		w = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		if (*p)
			*p++ = '\0';
		*s = p;
		return w;
	}
	w = o = ++p;
	while (*p && *p != '"') {
		if (*p == '\\' && p[1])
			p++;
		*o++ = *p++;
	}
	if (*p)
		p++;
	*o = '\0';
	*s = p;
	return w;
}

/* "n12" -> 12, or -1. */
static long vcg_dot_id(const char *w, size_t nnodes)
{
	char *end;
	unsigned long v;

	if (!w || w[0] != 'n')
		return -1;
	errno = 0;
	v = strtoul(w + 1, &end, 10);
	if (errno || *end || end == w + 1 || v >= nnodes)
		return -1;
	return (long)v;
}

/* One "edge" line: the tree edge it is, or the first back-edge not yet had. */
static int vcg_dot_edge(const struct vp_vcg *g, struct vcg_layout *l, char *s, double gh)
{
	long t = vcg_dot_id(vcg_word(&s), g->nnodes), h = vcg_dot_id(vcg_word(&s), g->nnodes);
	char *w = vcg_word(&s), *rest[8];
	unsigned long n = w ? strtoul(w, NULL, 10) : 0;
	struct vcg_curve c = { 0 };
	size_t nrest = 0;

	if (t < 0 || h < 0 || n < 2 || n > 100000)
		return -1;
	c.n = n;
	c.p = xcalloc(n, sizeof(*c.p));
	for (size_t i = 0; i < n; i++) {
		char *x = vcg_word(&s), *y = vcg_word(&s);

		if (!x || !y)
			goto bad;
		c.p[i] = (struct html_xy){ atof(x) * VCG_PT, (gh - atof(y)) * VCG_PT };
	}
	while (nrest < 8 && (rest[nrest] = vcg_word(&s)))
		nrest++;
	/* [label xl yl] style color */
	if (nrest == 5) {
		c.has_label = 1;
		c.label = (struct html_xy){ atof(rest[1]) * VCG_PT, (gh - atof(rest[2])) * VCG_PT };
	}
	if (g->nodes[h].parent == (uint32_t)t && !l->edge[h].p) {
		l->edge[h] = c;
		return 0;
	}
	for (size_t i = 0; i < g->nsegments; i++) {
		const struct vp_vcg_segment *sg = &g->segments[i];

		if (!l->back[i].p && sg->nodes[0] == (uint32_t)h &&
		    sg->nodes[sg->len - 1] == (uint32_t)t) {
			l->back[i] = c;
			return 0;
		}
	}
bad:
	free(c.p);
	return -1;
}

/* dot -Tplain's answer: "graph", "node" and "edge" lines, "stop" per graph. */
static int vcg_dot_read(FILE *in, const struct vp_vcg *g, struct vcg_layout *l)
{
	char *line = NULL, *s, *w;
	size_t cap = 0, q = 0, nodes = 0;
	double gh = 0;
	int err = 0, open = 0;

	while (!err && getline(&line, &cap, in) > 0) {
		s = line;
		w = vcg_word(&s);
		if (!w)
			continue;
		if (!strcmp(w, "graph")) {
			char *sc = vcg_word(&s), *gw = vcg_word(&s), *ght = vcg_word(&s);

			if (!sc || !gw || !ght || q >= g->npatterns || open) {
				err = -1;
				break;
			}
			gh = atof(ght);
			l->size[q] = (struct html_xy){ atof(gw) * VCG_PT + 2 * VCG_PAD,
						       gh * VCG_PT + VCG_TITLE_H + 2 * VCG_PAD };
			open = 1;
		} else if (!strcmp(w, "node") && open) {
			long id = vcg_dot_id(vcg_word(&s), g->nnodes);
			char *x = vcg_word(&s), *y = vcg_word(&s), *nw = vcg_word(&s),
			     *nh = vcg_word(&s);

			if (id < 0 || !nh || g->nodes[id].pattern != q) {
				err = -1;
				break;
			}
			l->pos[id] = (struct html_xy){ atof(x) * VCG_PT - VCG_BOX_W / 2.0,
						       (gh - atof(y)) * VCG_PT - VCG_BOX_H / 2.0 };
			(void)nw;
			nodes++;
		} else if (!strcmp(w, "edge") && open) {
			err = vcg_dot_edge(g, l, s, gh);
		} else if (!strcmp(w, "stop") && open) {
			open = 0;
			q++;
		}
	}
	free(line);
	if (err || q != g->npatterns || nodes != g->nnodes)
		return -1;
	for (size_t id = 0; id < g->nnodes; id++)
		if (g->nodes[id].parent != VP_NO_NODE && !l->edge[id].p)
			return -1;
	for (size_t i = 0; i < g->nsegments; i++)
		if (!l->back[i].p)
			return -1;
	return 0;
}

/*
 * Run dot on the patterns: 0 with @l's positions and curves set, -1 when
 * it cannot run or says what cannot be read (the caller lays out itself).
 */
static int vcg_dot(const struct vp_vcg *g, struct vcg_layout *l)
{
	FILE *in = tmpfile(), *out = NULL;
	int fd[2] = { -1, -1 }, st = 0, ret = -1;
	pid_t pid;

	if (!in || pipe(fd) < 0)
		goto out;
	vcg_dot_input(in, g);
	if (fflush(in) || ferror(in) || fseek(in, 0, SEEK_SET) < 0)
		goto out;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (dup2(fileno(in), 0) < 0 || dup2(fd[1], 1) < 0 || null < 0 || dup2(null, 2) < 0)
			_exit(127);
		close(fd[0]);
		close(fd[1]);
		execlp("dot", "dot", "-Tplain", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	fd[1] = -1;
	out = fdopen(fd[0], "r");
	if (out) {
		fd[0] = -1;
		ret = vcg_dot_read(out, g, l);
		/* what is left unread, so that dot is not stopped mid-write */
		while (getc(out) != EOF)
			;
		fclose(out);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		ret = -1;
out:
	if (fd[0] >= 0)
		close(fd[0]);
	if (fd[1] >= 0)
		close(fd[1]);
	if (in)
		fclose(in);
	return ret;
}

static void vcg_layout_release(const struct vp_vcg *g, struct vcg_layout *l)
{
	for (size_t i = 0; i < g->nnodes; i++)
		free(l->edge[i].p);
	for (size_t i = 0; i < g->nsegments; i++)
		free(l->back[i].p);
	free(l->edge);
	free(l->back);
	free(l->pos);
	free(l->at);
	free(l->size);
	free(l->nback);
}

/* dot's layout, or the built-in one; the patterns left to right in rows. */
static void vcg_layout(const struct vp_vcg *g, struct vcg_layout *l)
{
	double x = 0, y = 0, row_h = 0;

	memset(l, 0, sizeof(*l));
	l->pos = xcalloc(g->nnodes + 1, sizeof(*l->pos));
	l->at = xcalloc(g->npatterns + 1, sizeof(*l->at));
	l->size = xcalloc(g->npatterns + 1, sizeof(*l->size));
	l->edge = xcalloc(g->nnodes + 1, sizeof(*l->edge));
	l->back = xcalloc(g->nsegments + 1, sizeof(*l->back));
	l->nback = xcalloc(g->nsegments + g->npatterns + 1, sizeof(*l->nback));
	l->dot = vcg_dot(g, l) == 0;
	if (!l->dot) {
		/* what dot left half done */
		vcg_layout_release(g, l);
		l->pos = xcalloc(g->nnodes + 1, sizeof(*l->pos));
		l->at = xcalloc(g->npatterns + 1, sizeof(*l->at));
		l->size = xcalloc(g->npatterns + 1, sizeof(*l->size));
		l->edge = xcalloc(g->nnodes + 1, sizeof(*l->edge));
		l->back = xcalloc(g->nsegments + 1, sizeof(*l->back));
		l->nback = xcalloc(g->nsegments + g->npatterns + 1, sizeof(*l->nback));
		vcg_builtin(g, l);
	}
	for (size_t q = 0; q < g->npatterns; q++) {
		/* room for the title */
		double w = fmax(l->size[q].x, 220), h = l->size[q].y;

		l->size[q].x = w;
		if (x > 0 && x + w > VCG_ROW_W) {
			x = 0;
			y += row_h + VCG_GAP_X;
			row_h = 0;
		}
		l->at[q] = (struct html_xy){ x, y };
		x += w + VCG_GAP_X;
		row_h = fmax(row_h, h);
		l->width = fmax(l->width, x - VCG_GAP_X);
		l->height = y + row_h;
	}
}

/* ---- drawing ---- */

static const char *vcg_class(enum vp_vcg_type t)
{
	switch (t) {
	case VP_VCG_TASK:
		return "vp-task";
	case VP_VCG_CONTRIBUTOR:
		return "vp-contributor";
	default:
		return "vp-contrast";
	}
}

/* A node: Tasks are boxes, Contrasts ovals, Contributors dashed (Kumar and Pande, §8.1). */
static void vcg_node(FILE *f, const struct report *r, const struct vcg_layout *l, uint32_t id)
{
	const struct vp_vcg_node *n = &r->vcg->nodes[id];
	struct html_xy p = vcg_at(r->vcg, l, id);
	double mx = p.x + VCG_BOX_W / 2.0;
	char cs[512];

	if (n->type == VP_VCG_TASK)
		fprintf(f, "<a href=\"#vp-task-%" PRIu32 "\">", id);
	fprintf(f, "<g class=\"vp-vcg-node %s\" id=\"vp-vcg-%" PRIu32 "\" data-id=\"%" PRIu32
		   "\"><title>(%" PRIu32 ") %s ",
		vcg_class(n->type), id, id, id, vp_vcg_type_name(n->type));
	html_vcg_label(f, r, id, 0);
	fprintf(f, "</title>\n");
	if (n->type == VP_VCG_CONTRAST)
		fprintf(f, "<ellipse cx=\"%.1f\" cy=\"%.1f\" rx=\"%.1f\" ry=\"%.1f\"/>\n", mx,
			p.y + VCG_BOX_H / 2.0, VCG_BOX_W / 2.0 + VCG_OVAL,
			VCG_BOX_H / 2.0 + VCG_OVAL);
	else
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"4\"/>\n", p.x,
			p.y, VCG_BOX_W, VCG_BOX_H);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-weight=\"bold\">(%"
		   PRIu32 ") ",
		mx, p.y + 14, id);
	html_put_max(f, report_func_name(r, n->func), VCG_LABEL_CHARS - 5);
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", mx, p.y + 28);
	report_vcg_callsite(r, id, cs, sizeof(cs));
	if (*cs) {
		fputc('[', f);
		html_put_max(f, cs, VCG_LABEL_CHARS - 2);
		fputc(']', f);
	}
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">mean ", mx,
		p.y + 42);
	html_time(f, r, n->stats.mean);
	fprintf(f, "  CoV %.3f</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">N %"
		   PRIu64 "  VIM ",
		vp_stats_cov(&n->stats), mx, p.y + 56, n->stats.n);
	html_time(f, r, n->vim);
	fputs("</text></g>", f);
	if (n->type == VP_VCG_TASK)
		fputs("</a>", f);
	fputc('\n', f);
}

/* A curve of dot's, moved to its pattern's place: "M p0 C p1 p2 p3 ...". */
static void vcg_curve_d(FILE *f, const struct vcg_curve *c, struct html_xy o)
{
	fprintf(f, "M%.1f %.1f", o.x + c->p[0].x, o.y + c->p[0].y);
	for (size_t i = 1; i + 2 < c->n; i += 3)
		fprintf(f, " C%.1f %.1f %.1f %.1f %.1f %.1f", o.x + c->p[i].x, o.y + c->p[i].y,
			o.x + c->p[i + 1].x, o.y + c->p[i + 1].y, o.x + c->p[i + 2].x,
			o.y + c->p[i + 2].y);
}

/* The origin of pattern @q's drawing area. */
static struct html_xy vcg_origin(const struct vcg_layout *l, uint32_t q)
{
	return (struct html_xy){ l->at[q].x + VCG_PAD, l->at[q].y + VCG_TITLE_H + VCG_PAD };
}

static void vcg_edge(FILE *f, const struct vp_vcg *g, const struct vcg_layout *l, uint32_t id)
{
	const struct vp_vcg_node *n = &g->nodes[id];
	struct html_xy a, b;

	if (l->dot) {
		fputs("<path class=\"vp-edge\" d=\"", f);
		vcg_curve_d(f, &l->edge[id], vcg_origin(l, n->pattern));
		fputs("\" marker-end=\"url(#vp-arrow-dot)\"/>\n", f);
		return;
	}
	a = vcg_at(g, l, n->parent);
	b = vcg_at(g, l, id);
	fprintf(f, "<path class=\"vp-edge\" d=\"M%.1f %.1f L%.1f %.1f\" "
		   "marker-end=\"url(#vp-arrow)\"/>\n",
		a.x + VCG_BOX_W / 2.0, a.y + VCG_BOX_H, b.x + VCG_BOX_W / 2.0,
		b.y - (n->type == VP_VCG_CONTRAST ? VCG_OVAL : 0));
}

/*
 * A back-edge: the underlier to the originator, as dot routed it, or (the
 * built-in layout) curving out on the right, each of a pattern's a step
 * further out so that their labels stand apart; drawn under the boxes
 * (@label 0), its cf label over them (@label 1).
 */
static void vcg_back_edge(FILE *f, const struct vp_vcg *g, struct vcg_layout *l, size_t i,
			  int label)
{
	const struct vp_vcg_segment *s = &g->segments[i];
	uint32_t o = s->nodes[0], u = s->nodes[s->len - 1];
	struct html_xy pu = vcg_at(g, l, u), po = vcg_at(g, l, o), at;
	double x1 = pu.x + VCG_BOX_W, y1 = pu.y + VCG_BOX_H / 2.0;
	double x2 = po.x + VCG_BOX_W, y2 = po.y + VCG_BOX_H / 2.0;
	double off;

	if (l->dot) {
		at = vcg_origin(l, g->nodes[o].pattern);
		if (label) {
			const struct vcg_curve *c = &l->back[i];
			struct html_xy m = c->has_label ? c->label : c->p[c->n / 2];

			fprintf(f, "<text class=\"vp-back-label\" x=\"%.1f\" y=\"%.1f\" "
				   "text-anchor=\"middle\">%.1f%%</text>\n",
				at.x + m.x, at.y + m.y + 4, 100.0 * s->cf);
			return;
		}
		fprintf(f, "<path class=\"vp-back\" data-from=\"%" PRIu32 "\" data-to=\"%" PRIu32
			   "\" d=\"",
			u, o);
		vcg_curve_d(f, &l->back[i], at);
		fputs("\" marker-end=\"url(#vp-arrow-back-dot)\"/>\n", f);
		return;
	}
	if (label) {
		off = 34 + 24.0 * l->nback[i];
		fprintf(f, "<text class=\"vp-back-label\" x=\"%.1f\" y=\"%.1f\">%.1f%%</text>\n",
			(x1 + x2) / 2 + 0.75 * off + 3, (y1 + y2) / 2 + 4, 100.0 * s->cf);
		return;
	}
	/* the how-manieth of its pattern, for the label too */
	l->nback[i] = l->nback[g->npatterns + g->nodes[o].pattern]++;
	off = 34 + 24.0 * l->nback[i];
	fprintf(f, "<path class=\"vp-back\" data-from=\"%" PRIu32 "\" data-to=\"%" PRIu32
		   "\" d=\"M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f\" "
		   "marker-end=\"url(#vp-arrow-back)\"/>\n",
		u, o, x1, y1, x1 + off, y1, x2 + off, y2, x2 + 2, y2);
}

/* The legend, an SVG of its own: it keeps its size when the graph shrinks. */
static void vcg_legend(FILE *f)
{
	fputs("<svg class=\"vp-legend-svg\" viewBox=\"-2 -2 1014 28\" width=\"1014\" "
	      "style=\"max-width:100%;height:auto\">\n"
	      "<defs><marker id=\"vp-arrow-l\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
	      "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0 L10 5 L0 10 z\" "
	      "fill=\"#555\"/></marker><marker id=\"vp-arrow-back-l\" viewBox=\"0 0 10 10\" "
	      "refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
	      "<path d=\"M0 0 L10 5 L0 10 z\" fill=\"#b22222\"/></marker></defs>\n"
	      "<g class=\"vp-legend\">\n"
	      "<g class=\"vp-vcg-node vp-task\"><rect x=\"0\" y=\"0\" width=\"70\" height=\"22\" "
	      "rx=\"4\"/></g><text x=\"35\" y=\"15\" text-anchor=\"middle\">Task</text>\n"
	      "<g class=\"vp-vcg-node vp-contributor\"><rect x=\"86\" y=\"0\" width=\"90\" "
	      "height=\"22\" rx=\"4\"/></g><text x=\"131\" y=\"15\" "
	      "text-anchor=\"middle\">Contributor</text>\n"
	      "<g class=\"vp-vcg-node vp-contrast\"><ellipse cx=\"236\" cy=\"11\" rx=\"44\" "
	      "ry=\"12\"/></g><text x=\"236\" y=\"15\" text-anchor=\"middle\">Contrast</text>\n"
	      "<path class=\"vp-edge\" d=\"M300 11 H340\" marker-end=\"url(#vp-arrow-l)\"/>"
	      "<text x=\"348\" y=\"15\">calls, through the call context</text>\n"
	      "<path class=\"vp-back\" d=\"M540 11 H580\" marker-end=\"url(#vp-arrow-back-l)\"/>"
	      "<text x=\"588\" y=\"15\">back-edge: underlier to originator, with cf (the "
	      "variance it alone would give)</text>\n</g>\n</svg>\n",
	      f);
}

static const char vcg_markers[] =
	"<defs><marker id=\"vp-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
	"markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0 L10 5 L0 10 z\" "
	"fill=\"#555\"/></marker><marker id=\"vp-arrow-back\" viewBox=\"0 0 10 10\" "
	"refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
	"<path d=\"M0 0 L10 5 L0 10 z\" fill=\"#b22222\"/></marker>"
	/* dot ends a spline where its arrowhead (8 px at arrowsize 0.8)
	 * starts, VCG_CLEAR off the box: the marker's base there, its tip
	 * 8 + 6 px on, at the box */
	"<marker id=\"vp-arrow-dot\" viewBox=\"0 0 10 10\" refX=\"0\" refY=\"5\" "
	"markerUnits=\"userSpaceOnUse\" markerWidth=\"14\" markerHeight=\"8\" "
	"preserveAspectRatio=\"none\" orient=\"auto\">"
	"<path d=\"M0 0 L10 5 L0 10 z\" fill=\"#555\"/></marker>"
	"<marker id=\"vp-arrow-back-dot\" viewBox=\"0 0 10 10\" refX=\"0\" refY=\"5\" "
	"markerUnits=\"userSpaceOnUse\" markerWidth=\"14\" markerHeight=\"8\" "
	"preserveAspectRatio=\"none\" orient=\"auto\">"
	"<path d=\"M0 0 L10 5 L0 10 z\" fill=\"#b22222\"/></marker></defs>\n";

void html_vcg(FILE *f, const struct report *r)
{
	const struct vp_vcg *g = r->vcg;
	struct vcg_layout l;
	double w, h;

	fprintf(f, "<section id=\"vp-vcg\">\n<h2>Variance Characterization Graph</h2>\n"
		   "<p class=\"vp-note\">%zu pattern%s, %zu node%s, %zu back-edge%s "
		   "(tau<sub>S</sub> = %g, beta = %g). A box is a function in its call "
		   "contexts; a Task's box leads to its plots.</p>\n",
		g->npatterns, g->npatterns == 1 ? "" : "s", g->nnodes, g->nnodes == 1 ? "" : "s",
		g->nsegments, g->nsegments == 1 ? "" : "s", g->params.tau, g->params.beta);
	if (!g->npatterns && report_no_calls(r)) {
		fprintf(f, "<p>(none: %s)</p>\n</section>\n", report_no_calls(r));
		return;
	}
	if (!g->npatterns) {
		fprintf(f, "<p>(none: no significant node has CoV &ge; %g)</p>\n</section>\n",
			r->an->cov_threshold);
		return;
	}
	vcg_layout(g, &l);
	w = l.width + 16;
	h = l.height + 16;
	/* as wide as the page at most, the height following the viewBox's */
	fprintf(f, "<div class=\"vp-graph-box\"><svg class=\"vp-graph\" data-layout=\"%s\" "
		   "viewBox=\"-8 -8 %.0f %.0f\" width=\"%.0f\" "
		   "style=\"width:100%%;max-width:%.0fpx;height:auto\">\n%s",
		l.dot ? "dot" : "built-in", w, h, w, w, vcg_markers);
	for (size_t q = 0; q < g->npatterns; q++) {
		fprintf(f, "<g class=\"vp-pattern\" id=\"vp-pattern-%zu\"><rect class=\"vp-cluster\" "
			   "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">Pattern %zu: VIM ",
			q + 1, l.at[q].x, l.at[q].y, l.size[q].x, l.size[q].y, l.at[q].x + 10,
			l.at[q].y + 17, q + 1);
		html_time(f, r, g->patterns[q].vim);
		fputs("</text></g>\n", f);
	}
	for (size_t id = 0; id < g->nnodes; id++)
		if (g->nodes[id].parent != VP_NO_NODE)
			vcg_edge(f, g, &l, (uint32_t)id);
	for (size_t i = 0; i < g->nsegments; i++)
		vcg_back_edge(f, g, &l, i, 0);
	for (size_t id = 0; id < g->nnodes; id++)
		vcg_node(f, r, &l, (uint32_t)id);
	for (size_t i = 0; i < g->nsegments; i++)
		vcg_back_edge(f, g, &l, i, 1);
	fputs("</svg></div>\n", f);
	vcg_legend(f);
	if (!l.dot)
		fputs("<p class=\"vp-note\">Laid out without Graphviz's dot (not found): "
		      "back-edges may cross boxes.</p>\n",
		      f);
	fputs("</section>\n", f);
	vcg_layout_release(g, &l);
}
