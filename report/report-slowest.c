/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-slowest.c - `varperf report --slowest[=CONTEXT]`: the slowest
 * calls the tree kept of each node (core/slowest.h), in the order they
 * started, each with where its own time went: "this 8 ms call spent
 * 6.9 ms in fallbackSort".  A percentile says that some calls are slow;
 * this says which, when, on which thread, and why.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/slowest.h"
#include "core/stats.h"
#include "report.h"
#include "util/util.h"

/* Parts of a call's split on its line; the rest are summed up. */
enum { SLOWEST_TEXT_PARTS = 4 };

uint32_t report_slow_part_node(const struct vp_cct_node *n, uint32_t var)
{
	if (var == 0)
		return VP_NO_NODE;
	if (var > VP_CCT_TRACKED || var > n->nchildren)
		return VP_OTHER_NODE;
	return n->children[var - 1];
}

const char *report_slow_part_label(const struct report *r, const struct vp_cct_node *n,
				   uint32_t var, char *buf, size_t len)
{
	uint32_t child = report_slow_part_node(n, var);

	if (child == VP_NO_NODE)
		snprintf(buf, len, "self");
	else if (child == VP_OTHER_NODE)
		snprintf(buf, len, "(%" PRIu32 " other callees)", vp_cct_nother(n->nchildren));
	else
		report_node_label(r, child, buf, len);
	return buf;
}

int64_t report_slow_start(const struct report *r, const struct vp_slow_call *c)
{
	return (int64_t)(c->start - r->totals->first_time);
}

/* ---- text ---- */

static int slowest_cmp_part(const void *a, const void *b)
{
	const struct vp_slow_part *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	return x->var > y->var ? 1 : x->var < y->var ? -1 : 0;
}

/* "2.80 ms childa@f.c:60, 0.61 ms self, ...": the largest parts first. */
static void slowest_split(const struct report *r, const struct vp_cct_node *n,
			  const struct vp_slow_call *c)
{
	struct vp_slow_part *p = xcalloc(c->nparts ? c->nparts : 1, sizeof(*p));
	char label[600], t[32];
	int64_t rest = 0;

	memcpy(p, c->parts, c->nparts * sizeof(*p));
	qsort(p, c->nparts, sizeof(*p), slowest_cmp_part);
	for (uint32_t i = 0; i < c->nparts; i++) {
		if (i >= SLOWEST_TEXT_PARTS) {
			rest += p[i].time;
			continue;
		}
		fprintf(r->out, "%s%s ", i ? ", " : "", report_time(r, (double)p[i].time, t, sizeof(t)));
		report_put(r->out, report_slow_part_label(r, n, p[i].var, label, sizeof(label)));
	}
	if (c->nparts > SLOWEST_TEXT_PARTS)
		fprintf(r->out, ", %s in %" PRIu32 " more", report_time(r, (double)rest, t, sizeof(t)),
			c->nparts - SLOWEST_TEXT_PARTS);
	free(p);
}

/* Start from the first event: milliseconds to the microsecond. */
static const char *slowest_start(const struct report *r, const struct vp_slow_call *c, char *buf,
				 size_t len)
{
	int64_t s = report_slow_start(r, c);

	if (r->hdr->unit == VP_UNIT_NS)
		snprintf(buf, len, "%.3f ms", (double)s / 1e6);
	else
		report_time(r, (double)s, buf, len);
	return buf;
}

static void slowest_call(const struct report *r, const struct vp_cct_node *n,
			 const struct vp_slow_call *c)
{
	const struct vp_thread_info *ti = vp_reader_thread(r->reader, c->thread);
	double sigma = vp_stats_stddev(&n->stats);
	char start[48], dur[32], z[16];

	if (sigma > 0)
		snprintf(z, sizeof(z), "%+.2f", ((double)c->duration - n->stats.mean) / sigma);
	else
		snprintf(z, sizeof(z), "-");
	fprintf(r->out, "  %14s ", slowest_start(r, c, start, sizeof(start)));
	if (ti)
		fprintf(r->out, "%8" PRIu32, ti->tid);
	else
		fprintf(r->out, "%8s", "?");
	fprintf(r->out, " %9s %7s  ", report_time(r, (double)c->duration, dur, sizeof(dur)), z);
	slowest_split(r, n, c);
	fputc('\n', r->out);
}

/* "main → compress [c.c:4] → f [c.c:9]", a run of three or more equal
 * elements (recursion) once with its count. */
static void slowest_chain(const struct report *r, uint32_t id)
{
	const struct vp_cct_node *nodes = r->tree->nodes;
	uint32_t *path, depth = nodes[id].depth;
	char cs[512];

	path = xcalloc(depth ? depth : 1, sizeof(*path));
	for (uint32_t p = id, i = depth; p != VP_NODE_ROOT && i > 0; p = nodes[p].parent)
		path[--i] = p;
	for (uint32_t i = 0, k; i < depth; i = k) {
		const struct vp_cct_node *e = &nodes[path[i]];

		for (k = i + 1; k < depth && nodes[path[k]].func == e->func &&
				nodes[path[k]].callsite == e->callsite;
		     k++)
			;
		if (k - i < 3)
			k = i + 1;
		if (i)
			fputs(report_sym(SYM_ARROW), r->out);
		report_put(r->out, report_func_name(r, e->func));
		if (*report_callsite_str(r, e->callsite, 1, cs, sizeof(cs))) {
			fputs(" [", r->out);
			report_put(r->out, cs);
			fputc(']', r->out);
		}
		if (k - i >= 3)
			fprintf(r->out, "%s%" PRIu32, report_sym(SYM_TIMES), k - i);
	}
	free(path);
}

static void slowest_node(const struct report *r, uint32_t id)
{
	const struct vp_cct_node *n = &r->tree->nodes[id];
	const struct vp_slowest *s = &n->slowest;
	char mean[32], sigma[32], max[32];

	fputc('\n', r->out);
	slowest_chain(r, id);
	if (!s->n) { /* only unpaired calls: main that called exit(), ... */
		fprintf(r->out, " (node %" PRIu32 "): no call returned (%" PRIu64 " unpaired)\n", id,
			n->unpaired);
		return;
	}
	/* the context on a line of its own: it is what --slowest=CONTEXT takes */
	fprintf(r->out, " (node %" PRIu32 "):\n  %" PRIu64 " call%s, mean %s, sigma %s, max %s\n", id,
		n->stats.n, n->stats.n == 1 ? "" : "s",
		report_time(r, n->stats.mean, mean, sizeof(mean)),
		report_time(r, vp_stats_stddev(&n->stats), sigma, sizeof(sigma)),
		report_time(r, (double)n->stats.max, max, sizeof(max)));
	fprintf(r->out, "  %14s %8s %9s %7s  %s\n", "start", "thread", "duration", "z",
		"where the time went");
	for (uint32_t i = 0; i < s->n; i++)
		slowest_call(r, n, &s->calls[i]);
}

/* Larger total first, as the text report's tree. */
static int slowest_cmp_total(const void *a, const void *b, void *arg)
{
	const struct vp_cct *tree = arg;
	const struct vp_cct_node *x = &tree->nodes[*(const uint32_t *)a];
	const struct vp_cct_node *y = &tree->nodes[*(const uint32_t *)b];

	if (vp_cct_node_time(x) != vp_cct_node_time(y))
		return vp_cct_node_time(x) < vp_cct_node_time(y) ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * @want's nodes in the text report's order: depth first from the top,
 * siblings by total time.  Returns how many were printed.
 */
static size_t slowest_walk(const struct report *r, const uint8_t *want)
{
	size_t nnodes = r->tree->nnodes, sp = 0, shown = 0;
	uint32_t *stack = xcalloc(nnodes ? nnodes : 1, sizeof(*stack));

	if (nnodes)
		stack[sp++] = VP_NODE_ROOT;
	while (sp) {
		const struct vp_cct_node *n = &r->tree->nodes[stack[--sp]];
		size_t first = sp;

		if (want[n->id]) {
			slowest_node(r, n->id);
			shown++;
		}
		for (uint32_t i = 0; i < n->nchildren; i++)
			stack[sp++] = n->children[i];
		/* the largest pops first */
		qsort_r(stack + first, sp - first, sizeof(*stack), slowest_cmp_total,
			(void *)r->tree);
		for (size_t i = first, j = sp; i + 1 < j; i++, j--) {
			uint32_t t = stack[i];

			stack[i] = stack[j - 1];
			stack[j - 1] = t;
		}
	}
	free(stack);
	return shown;
}

uint8_t *report_slowest_nodes(const struct report *r, size_t *nret)
{
	size_t nnodes = r->tree->nnodes;
	uint8_t *want = xcalloc(nnodes ? nnodes : 1, 1);
	struct report_context ctx;

	*nret = 0;
	if (r->slowest_context && report_context_parse(r->slowest_context, &ctx) < 0) {
		free(want);
		return NULL;
	}
	for (uint32_t id = 1; id < nnodes; id++) {
		if (r->slowest_context)
			want[id] = report_context_match(r, &ctx, id);
		else
			want[id] = id < r->an->nnodes && r->an->significant[id];
		*nret += want[id];
	}
	if (r->slowest_context)
		report_context_release(&ctx);
	return want;
}

int report_slowest_text(const struct report *r)
{
	size_t nwant;
	uint8_t *want = report_slowest_nodes(r, &nwant);

	if (!want)
		return -1;
	fprintf(r->out, "Slowest calls (the %" PRIu32 " slowest of each %s, in start order):\n",
		r->tree->keep_slowest,
		r->slowest_context ? "node in that context" : "significant node");
	fprintf(r->out, "  start: since the first event; z: (duration - mean) / sigma; the "
			"call's parts largest first\n");
	if (!nwant)
		fprintf(r->out, "  (none)\n");
	else
		slowest_walk(r, want);
	free(want);
	return 0;
}
