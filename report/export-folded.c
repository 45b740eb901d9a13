/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * export-folded.c - `varperf report --format folded`: one line
 * "outer;...;inner value" per calling-context node, the folded stacks that
 * flamegraph.pl, its difffolded.pl and speedscope read.  The value is the
 * node's own time (its time less its callees'; the sampled stacks' own
 * time follows, under a "[sampled]" frame when there are probed calls
 * too), or its share of the
 * variance of the high-variance task above it (see folded_variance), or,
 * with --slowest, the own time spent in the slowest calls of the selected
 * nodes (a second pass over the events), or with --typical that of their
 * calls at large scaled to as many calls: the two files of a differential
 * flame graph.  man/varperf-report.1 says what each number is.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/patterns.h"
#include "core/recording.h"
#include "core/sampled.h"
#include "report.h"
#include "util/util.h"

/* A name as one frame: ';' separates frames and a line ends the stack. */
static void folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/* The stack of node @id, outermost first, and a space. */
static void folded_stack(const struct report *r, uint32_t id, uint32_t *path)
{
	size_t n = 0;

	for (; id != VP_NODE_ROOT && id < r->tree->nnodes; id = r->tree->nodes[id].parent)
		path[n++] = id;
	while (n--) {
		folded_name(r->out, report_func_name(r, r->tree->nodes[path[n]].func));
		if (n)
			fputc(';', r->out);
	}
	fputc(' ', r->out);
}

static uint32_t *folded_path_buf(const struct report *r)
{
	uint32_t depth = 0;

	for (size_t id = 0; id < r->tree->nnodes; id++)
		if (r->tree->nodes[id].depth > depth)
			depth = r->tree->nodes[id].depth;
	return xcalloc((size_t)depth + 2, sizeof(uint32_t));
}

/*
 * Write the lines of @val (NAN: no line), rounded to whole units; values
 * below 0 are left out and counted in *@neg, their sum in *@negsum.
 * Returns the number of lines written.
 */
static size_t folded_write(const struct report *r, const double *val, size_t *neg,
			 double *negsum)
{
	uint32_t *path = folded_path_buf(r);
	size_t lines = 0;

	*neg = 0;
	*negsum = 0;
	for (uint32_t id = 1; id < r->tree->nnodes; id++) {
		if (isnan(val[id]) || llround(val[id]) == 0)
			continue;
		if (val[id] < 0) {
			(*neg)++;
			*negsum += val[id];
			continue;
		}
		folded_stack(r, id, path);
		fprintf(r->out, "%.0f\n", val[id]);
		lines++;
	}
	free(path);
	return lines;
}

/* A node's own time over its paired calls (and open ones with @open). */
static double folded_self(const struct vp_cct *t, uint32_t id, int open)
{
	const struct vp_cct_node *n = &t->nodes[id];
	double v = open ? (double)vp_cct_node_time(n) : (double)n->stats.total;

	for (uint32_t i = 0; i < n->nchildren; i++) {
		const struct vp_cct_node *c = &t->nodes[n->children[i]];

		v -= open ? (double)vp_cct_node_time(c) : (double)c->stats.total;
	}
	return v;
}

/*
 * The sampled stacks (phase 1 of auto mode, sample and combined mode): a
 * line per sampled context with its own samples' time, in ns, under a
 * "[sampled]" frame of its own when @under (probed lines are in the file
 * too: the two trees are different measures of the run and must not add
 * up as one).  Returns the number of lines written.
 */
static size_t folded_sampled(const struct report *r, int under)
{
	const struct vp_sampled *sd = r->sampled;
	uint32_t *path = xcalloc(VP_SAMPLED_MAX_DEPTH + 2, sizeof(*path));
	size_t lines = 0;

	for (uint32_t id = 1; id < sd->nnodes; id++) {
		const struct vp_snode *n = &sd->nodes[id];
		size_t depth = 0;

		if (!n->self || llround(n->self_time) <= 0)
			continue;
		for (uint32_t a = id; a && a != VP_SNODE_NONE; a = sd->nodes[a].parent)
			path[depth++] = a;
		if (under)
			fputs("[sampled];", r->out);
		while (depth--) {
			folded_name(r->out, report_snode_name(r, path[depth]));
			if (depth)
				fputc(';', r->out);
		}
		fprintf(r->out, " %.0f\n", n->self_time);
		lines++;
	}
	free(path);
	return lines;
}

/* The whole run: every node's own time. */
static void folded_time(const struct report *r, double *val)
{
	for (uint32_t id = 1; id < r->tree->nnodes; id++)
		val[id] = folded_self(r->tree, id, 1);
}

/*
 * Variance: the roots (the tasks) are the outermost nodes whose calls
 * vary, each with N Var(X), its durations' squared deviations from their
 * mean summed (so that tasks of different call counts add up).  A node passes what it has
 * down by its covariance row sums (Kumar and Pande, Eq. 2): its own code
 * keeps r_0 / Var of it and child i gets r_i / Var (the callees past the
 * tracked ones share theirs by their time), so that a line says how much
 * of its task's variance its own code brings, and the lines under a root
 * add up to that root's N Var(X).  A node of no variance of its own (its
 * share came from how often it is called) passes it on by time instead.
 */
static int folded_variance(const struct report *r, double *val)
{
	const struct vp_cct *t = r->tree;
	double *has = xcalloc(t->nnodes, sizeof(*has));

	for (uint32_t id = 1; id < t->nnodes; id++)
		val[id] = NAN;
	for (uint32_t id = 1; id < t->nnodes; id++) {
		const struct vp_cct_node *n = &t->nodes[id];
		struct vp_contrib *rows = NULL;
		double have, var = 0, other = 0, other_time = 0, sum_time = 0;
		long nrows = 0;

		if (n->parent != VP_NODE_ROOT && n->parent != VP_NO_NODE && !isnan(val[n->parent])) {
			have = has[id];
		} else if (vp_stats_variance(&n->stats) > 0) {
			have = vp_stats_variance(&n->stats) * (double)n->stats.n;
		} else {
			continue;
		}
		if (n->nchildren) {
			nrows = vp_cct_contributors(n, &rows);
			if (nrows < 0) {
				free(has);
				return -ENOMEM;
			}
		}
		for (long i = 0; i < nrows; i++)
			var += rows[i].value;
		for (uint32_t i = 0; i < n->nchildren; i++) {
			double ct = (double)t->nodes[n->children[i]].stats.total;

			sum_time += ct;
			if (vp_cct_var(i) > VP_CCT_TRACKED)
				other_time += ct;
		}
		if (!n->nchildren) {
			val[id] = have;
		} else if (var > 0) {
			val[id] = 0;
			for (long i = 0; i < nrows; i++) {
				size_t v = rows[i].var;

				if (v == 0)
					val[id] = have * rows[i].value / var;
				else if (v > VP_CCT_TRACKED)
					other = have * rows[i].value / var;
				else if (v - 1 < n->nchildren)
					has[n->children[v - 1]] = have * rows[i].value / var;
			}
			for (uint32_t i = VP_CCT_TRACKED; i < n->nchildren; i++)
				has[n->children[i]] =
					other_time > 0 ? other * t->nodes[n->children[i]].stats.total /
								 other_time : 0;
		} else {
			double self = fmax(folded_self(t, id, 0), 0), all = self + sum_time;

			val[id] = all > 0 ? have * self / all : have;
			for (uint32_t i = 0; i < n->nchildren; i++)
				has[n->children[i]] =
					all > 0 ? have * t->nodes[n->children[i]].stats.total / all : 0;
		}
		free(rows);
	}
	free(has);
	return 0;
}

/* --slowest: own time per node inside the selected nodes' slow calls. */
struct folded_slow {
	const struct report *r;
	const uint8_t *sel;
	double *val;
};

static int folded_slow_inv(void *ctx, const struct vp_invocation *inv)
{
	struct folded_slow *s = ctx;
	int64_t self = (int64_t)inv->duration;

	if (report_slow_root(s->r, s->sel, inv->node, inv->thread, inv->start, inv->duration) ==
	    VP_NO_NODE)
		return 0;
	for (size_t i = 0; i < inv->ny; i++)
		self -= llround(inv->y[i]);
	if (isnan(s->val[inv->node]))
		s->val[inv->node] = 0;
	s->val[inv->node] += (double)self;
	return 0;
}

/* --typical: each selected node's calls at large, scaled to its slow ones. */
static void folded_typical(const struct report *r, const uint8_t *sel, double *val)
{
	const struct vp_cct *t = r->tree;
	double *scale = xcalloc(t->nnodes, sizeof(*scale));

	for (uint32_t id = 1; id < t->nnodes; id++) {
		const struct vp_cct_node *n = &t->nodes[id];

		val[id] = NAN;
		if (sel[id] && n->stats.n)
			scale[id] = (double)n->slowest.n / (double)n->stats.n;
		else if (n->parent != VP_NODE_ROOT && n->parent != VP_NO_NODE)
			scale[id] = scale[n->parent];
		if (scale[id] > 0)
			val[id] = folded_self(t, id, 0) * scale[id];
	}
	free(scale);
}

/*
 * The bytes folded_write() will write for @val: each line's stack is its
 * parent's, a ';' and its own name (folded_name keeps the length), then
 * the value and a newline.
 */
static double folded_bytes(const struct report *r, const double *val)
{
	const struct vp_cct *t = r->tree;
	double *stack = xcalloc(t->nnodes ? t->nnodes : 1, sizeof(*stack)), sum = 0;
	char num[64];

	/* a parent's id is below its children's */
	for (uint32_t id = 1; id < t->nnodes; id++) {
		uint32_t p = t->nodes[id].parent;
		double above = p != VP_NODE_ROOT && p < id ? stack[p] + 1 : 0;

		stack[id] = above + (double)strlen(report_func_name(r, t->nodes[id].func));
		if (isnan(val[id]) || llround(val[id]) <= 0)
			continue;
		sum += stack[id] + 2 + snprintf(num, sizeof(num), "%.0f", val[id]);
	}
	free(stack);
	return sum;
}

/* The same for the sampled lines (folded_sampled) when they are written. */
static double folded_sampled_bytes(const struct report *r)
{
	const struct vp_sampled *sd = r->sampled;
	double *stack, sum = 0;
	char num[64];

	if (r->slowest || r->folded_value != FOLDED_TIME || !sd || sd->nnodes < 2)
		return 0;
	stack = xcalloc(sd->nnodes, sizeof(*stack));
	/* a node is made after its parent: its id is above the parent's */
	for (uint32_t id = 1; id < sd->nnodes; id++) {
		uint32_t p = sd->nodes[id].parent;
		double above = p && p < id ? stack[p] + 1 : sizeof("[sampled];") - 1;

		stack[id] = above + (double)strlen(report_snode_name(r, id));
		if (sd->nodes[id].self && llround(sd->nodes[id].self_time) > 0)
			sum += stack[id] + 2 +
			       snprintf(num, sizeof(num), "%.0f", sd->nodes[id].self_time);
	}
	free(stack);
	return sum;
}

int report_folded(const struct report *r, struct vp_recording *rec)
{
	const struct vp_cct *t = r->tree;
	double *val = xcalloc(t->nnodes ? t->nnodes : 1, sizeof(*val)), negsum;
	uint8_t *sel = NULL;
	char msg[512] = "";
	size_t nsel = 0, neg, lines;
	int err = 0;

	if (r->slowest) {
		sel = report_slow_nodes(r, 1, &nsel);
		if (!nsel && r->slowest_context) {
			error("no calling context in '%s' ends with '%s'", r->input,
			      r->slowest_context);
			goto fail;
		}
		if (!nsel)
			warning("'%s': --slowest selected no calls: no significant node has more "
				"calls than it keeps; --slowest=<context> names one",
				r->input);
	}
	if (r->slowest && r->typical) {
		folded_typical(r, sel, val);
	} else if (r->slowest) {
		struct folded_slow s = { r, sel, val };

		for (uint32_t id = 0; id < t->nnodes; id++)
			val[id] = NAN;
		if (nsel)
			err = vp_recording_invocations(rec, folded_slow_inv, &s, msg, sizeof(msg));
	} else if (r->folded_value == FOLDED_VARIANCE) {
		err = folded_variance(r, val);
	} else {
		folded_time(r, val);
	}
	if (err < 0) {
		error("%s", msg[0] ? msg : strerror(-err));
		goto fail;
	}
	if (report_output_size(r, "folded stacks",
			       folded_bytes(r, val) + folded_sampled_bytes(r)) < 0)
		goto fail;
	lines = folded_write(r, val, &neg, &negsum);
	/* a time profile has the sampled stacks too: all of a sampled
	 * recording's flame graph */
	if (!r->slowest && r->folded_value == FOLDED_TIME && r->sampled && r->sampled->nnodes > 1)
		lines += folded_sampled(r, lines > 0 || neg > 0);
	if (!lines && !neg && !(r->slowest && !nsel))
		warning("'%s': no stacks to fold: %s", r->input,
			!r->totals->invocations ? "no probed calls nor sampled stacks" :
			r->folded_value == FOLDED_VARIANCE && !r->slowest ?
				"no calling context's calls vary" : "no time in the probed calls");
	if (neg)
		warning("'%s': %zu folded value%s below 0 left out (%.3g in all)%s", r->input, neg,
			neg == 1 ? "" : "s",  negsum,
			r->folded_value == FOLDED_VARIANCE && !r->slowest ?
				": their code varies against the rest of the task" :
				": the callees' time exceeds the caller's (lost exits)");
	free(sel);
	free(val);
	return 0;
fail:
	free(sel);
	free(val);
	return -2;
}
