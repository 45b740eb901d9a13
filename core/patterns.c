/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * patterns.c - seed 000's pattern analysis over a calling-context tree:
 * significant nodes, high-variance tagging (Chebyshev), Minimal
 * Distinguishing Call sequences (Algorithm 1) grouped and split by
 * pattern-similarity trees, VIM ranking and the Pattern Set.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "patterns.h"

void vp_analysis_params_default(struct vp_analysis_params *p)
{
	p->cutoff = 0.0002;
	p->probability = 0.96;
	p->window = 2.0;
	p->cov_threshold = 0.0;
	p->similarity = 0.10;
	p->beta = 0.1;
}

double vp_analysis_cov_threshold(const struct vp_analysis_params *p)
{
	/*
	 * Chebyshev: P(|X - mean| >= t sigma) <= 1/t^2.  Demanding that X
	 * stays within window*mean with probability p means 1/t^2 = 1 - p
	 * and t sigma = window * mean, so the node is high-variance when
	 * sigma/mean >= window * sqrt(1 - p) (2.0 * 0.2 = 0.4 by default).
	 */
	if (p->cov_threshold > 0.0)
		return p->cov_threshold;
	return p->window * sqrt(1.0 - p->probability);
}

double vp_analysis_chebyshev_k(const struct vp_analysis_params *p)
{
	return 1.0 / sqrt(1.0 - p->probability);
}

int vp_analysis_params_check(const struct vp_analysis_params *p, char *err, size_t errlen)
{
	const char *what = NULL;

	if (!(p->cutoff >= 0.0 && p->cutoff < 1.0))
		what = "cutoff must be at least 0 and below 100%";
	else if (!(p->probability > 0.0 && p->probability < 1.0))
		what = "probability must be between 0 and 1 (exclusive)";
	else if (!(p->window > 0.0 && isfinite(p->window)))
		what = "window must be positive";
	else if (!(p->cov_threshold >= 0.0 && isfinite(p->cov_threshold)))
		what = "cov threshold must not be negative";
	else if (!(p->similarity >= 0.0 && p->similarity <= 1.0))
		what = "similarity must be between 0 and 100%";
	else if (!(p->beta >= 0.0 && p->beta <= 1.0))
		what = "beta must be between 0 and 1";
	return vp_param_result(what, err, errlen);
}

/* ---- Minimal Distinguishing Call sequences ---- */

static int same_elem(const struct vp_cct_node *a, const struct vp_cct_node *b)
{
	return a->func == b->func && a->callsite == b->callsite;
}

/*
 * Length of the shortest chain (node, parent, ...) at which @m's chain
 * differs from @o's chain of the same length.  A chain that reaches the
 * root earlier is shorter and so differs.
 */
static uint32_t distinguish_len(const struct vp_cct *t, uint32_t m, uint32_t o)
{
	uint32_t len = 1;

	for (;;) {
		const struct vp_cct_node *a = &t->nodes[m], *b = &t->nodes[o];

		if (!same_elem(a, b))
			return len;
		m = a->parent;
		o = b->parent;
		len++;
		if (m == VP_NODE_ROOT || o == VP_NODE_ROOT)
			return m == o ? UINT32_MAX : len;
	}
}

/* A chain of @len elements ending at @node (clipped at the root). */
static uint32_t chain_len(const struct vp_cct *t, uint32_t node, uint32_t want)
{
	return want < t->nodes[node].depth ? want : t->nodes[node].depth;
}

static int chains_equal(const struct vp_cct *t, uint32_t a, uint32_t la, uint32_t b, uint32_t lb)
{
	uint32_t i;

	if (la != lb)
		return 0;
	for (i = 0; i < la; i++) {
		if (!same_elem(&t->nodes[a], &t->nodes[b]))
			return 0;
		a = t->nodes[a].parent;
		b = t->nodes[b].parent;
	}
	return 1;
}

/* A candidate: a tagged node and its current chain length. */
struct cand {
	uint32_t node;
	uint32_t len;
};

struct pstate {
	const struct vp_cct *t;
	const struct vp_analysis_params *p;
	double k;
	struct vp_pattern *pats;
	size_t npats, cap;
};

static int similar(const struct vp_cct *t, const struct cand *c, size_t n, double tol)
{
	double mmin = INFINITY, mmax = -INFINITY, cmin = INFINITY, cmax = -INFINITY;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct vp_stats *s = &t->nodes[c[i].node].stats;
		double cov = vp_stats_cov(s);

		mmin = fmin(mmin, s->mean);
		mmax = fmax(mmax, s->mean);
		cmin = fmin(cmin, cov);
		cmax = fmax(cmax, cov);
	}
	/* every pair within tol of each other <=> max - min <= tol * max */
	return mmax - mmin <= tol * mmax && cmax - cmin <= tol * cmax;
}

static int emit_pattern(struct pstate *st, const struct cand *c, size_t n)
{
	const struct vp_cct *t = st->t;
	struct vp_pattern *pat;
	uint32_t i, node;

	if (st->npats == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		struct vp_pattern *q = realloc(st->pats, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		st->pats = q;
		st->cap = cap;
	}
	pat = &st->pats[st->npats];
	memset(pat, 0, sizeof(*pat));
	pat->len = c[0].len;
	pat->chain = calloc(pat->len, sizeof(*pat->chain));
	pat->nodes = calloc(n, sizeof(*pat->nodes));
	if (!pat->chain || !pat->nodes) {
		free(pat->chain);
		free(pat->nodes);
		return -ENOMEM;
	}
	for (i = 0, node = c[0].node; i < pat->len; i++, node = t->nodes[node].parent) {
		pat->chain[pat->len - 1 - i].func = t->nodes[node].func;
		pat->chain[pat->len - 1 - i].callsite = t->nodes[node].callsite;
	}
	vp_stats_init(&pat->stats);
	pat->nnodes = n;
	for (i = 0; i < n; i++) {
		pat->nodes[i] = c[i].node;
		/* seed 001 Section 6.1: exact merge of the members' statistics */
		vp_stats_merge(&pat->stats, &t->nodes[c[i].node].stats);
	}
	pat->vim = st->k * vp_stats_stddev(&pat->stats) * (double)pat->stats.n;
	st->npats++;
	return 0;
}

/*
 * One node of a pattern-similarity tree: @c[0..n) share one chain.  If
 * their statistics are similar they collapse into one pattern; otherwise
 * every chain grows by one caller and identical chains form child groups.
 */
static int pst_split(struct pstate *st, struct cand *c, size_t n)
{
	const struct vp_cct *t = st->t;
	size_t i, j, start;
	int grew = 0, err;

	if (n == 1 || similar(t, c, n, st->p->similarity))
		return emit_pattern(st, c, n);
	for (i = 0; i < n; i++) {
		uint32_t l = chain_len(t, c[i].node, c[i].len + 1);

		grew |= l > c[i].len;
		c[i].len = l;
	}
	if (!grew) /* full paths everywhere: cannot differentiate further */
		return emit_pattern(st, c, n);
	/* Regroup: gather equal chains next to each other (n is small). */
	for (start = 0; start < n; start = i) {
		i = start + 1;
		for (j = i; j < n; j++) {
			if (chains_equal(t, c[start].node, c[start].len, c[j].node, c[j].len)) {
				struct cand tmp = c[i];

				c[i++] = c[j];
				c[j] = tmp;
			}
		}
		err = pst_split(st, c + start, i - start);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_pattern(const void *x, const void *y)
{
	const struct vp_pattern *a = x, *b = y;

	if (a->vim != b->vim)
		return a->vim < b->vim ? 1 : -1;
	if (a->stats.n != b->stats.n)
		return a->stats.n < b->stats.n ? 1 : -1;
	return a->nodes[0] < b->nodes[0] ? -1 : a->nodes[0] > b->nodes[0];
}

static int cmp_func(const void *x, const void *y)
{
	const struct vp_func_summary *a = x, *b = y;

	if (a->stats.total != b->stats.total)
		return a->stats.total < b->stats.total ? 1 : -1;
	return a->func < b->func ? -1 : a->func > b->func;
}

/* Nodes of each function, as one array of ids bucketed by function. */
struct by_func {
	uint32_t *start; /* [nfuncs + 1] */
	uint32_t *ids;
};

static int index_by_func(struct by_func *bf, const struct vp_cct *t, size_t nfuncs,
			 const uint8_t *want)
{
	uint32_t *fill;
	size_t i;

	bf->start = calloc(nfuncs + 2, sizeof(*bf->start));
	bf->ids = malloc((t->nnodes + 1) * sizeof(*bf->ids));
	fill = calloc(nfuncs + 1, sizeof(*fill));
	if (!bf->start || !bf->ids || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 1; i < t->nnodes; i++)
		if (want[i])
			bf->start[t->nodes[i].func + 1]++;
	for (i = 0; i < nfuncs; i++)
		bf->start[i + 1] += bf->start[i];
	for (i = 1; i < t->nnodes; i++) {
		uint32_t f = t->nodes[i].func;

		if (want[i])
			bf->ids[bf->start[f] + fill[f]++] = (uint32_t)i;
	}
	free(fill);
	return 0;
}

static int find_patterns(struct vp_analysis *a, const struct vp_cct *t, size_t nfuncs)
{
	struct pstate st = { t, &a->params, a->k, NULL, 0, 0 };
	struct by_func sig = { 0 };
	struct cand *c = NULL;
	size_t f, i, j, nc, start;
	int err;

	err = index_by_func(&sig, t, nfuncs, a->significant);
	if (err)
		goto out;
	c = malloc((t->nnodes + 1) * sizeof(*c));
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	for (f = 0; f < nfuncs; f++) {
		const uint32_t *all = sig.ids + sig.start[f];
		size_t nall = sig.start[f + 1] - sig.start[f];

		/*
		 * Algorithm 1, "broad brush": the match set is the tagged
		 * nodes of this function, the other set its significant
		 * untagged nodes; each tagged node's chain grows until it
		 * differs from every other-set chain of the same length.
		 */
		for (i = 0, nc = 0; i < nall; i++) {
			uint32_t m = all[i], len = 1;

			if (!a->high_variance[m])
				continue;
			for (j = 0; j < nall; j++) {
				uint32_t d;

				if (a->high_variance[all[j]])
					continue;
				d = distinguish_len(t, m, all[j]);
				if (d != UINT32_MAX && d > len)
					len = d;
			}
			c[nc].node = m;
			c[nc].len = chain_len(t, m, len);
			nc++;
		}
		/* Group identical MDC sequences; each group roots a PST. */
		for (start = 0; start < nc; start = i) {
			i = start + 1;
			for (j = i; j < nc; j++) {
				if (chains_equal(t, c[start].node, c[start].len, c[j].node,
						 c[j].len)) {
					struct cand tmp = c[i];

					c[i++] = c[j];
					c[j] = tmp;
				}
			}
			err = pst_split(&st, c + start, i - start);
			if (err)
				goto out;
		}
	}
	if (st.npats)
		qsort(st.pats, st.npats, sizeof(*st.pats), cmp_pattern);
	a->patterns = st.pats;
	a->npatterns = st.npats;
	st.pats = NULL;
	st.npats = 0;
	a->max_vim = a->npatterns ? a->patterns[0].vim : 0.0;
	for (i = 0; i < a->npatterns; i++)
		a->patterns[i].in_pattern_set =
			a->max_vim > 0.0 && a->patterns[i].vim >= a->params.beta * a->max_vim;
out:
	for (i = 0; i < st.npats; i++) {
		free(st.pats[i].chain);
		free(st.pats[i].nodes);
	}
	free(st.pats);
	free(sig.start);
	free(sig.ids);
	free(c);
	return err;
}

static int summarise_functions(struct vp_analysis *a, const struct vp_cct *t, size_t nfuncs)
{
	struct vp_func_summary *fs = calloc(nfuncs + 1, sizeof(*fs));
	size_t i, n = 0;

	if (!fs)
		return -ENOMEM;
	for (i = 0; i < nfuncs; i++) {
		fs[i].func = (uint32_t)i;
		vp_stats_init(&fs[i].stats);
	}
	for (i = 1; i < t->nnodes; i++) {
		const struct vp_cct_node *nd = &t->nodes[i];

		if (nd->func >= nfuncs)
			continue;
		vp_stats_merge(&fs[nd->func].stats, &nd->stats);
		fs[nd->func].ncontexts++;
	}
	for (i = 0; i < nfuncs; i++)
		if (fs[i].stats.n)
			fs[n++] = fs[i];
	if (n)
		qsort(fs, n, sizeof(*fs), cmp_func);
	a->funcs = fs;
	a->nfuncs = n;
	return 0;
}

int vp_analysis_run(struct vp_analysis *a, const struct vp_cct *t, size_t nfuncs,
		    const struct vp_analysis_params *p)
{
	double cut;
	size_t i;
	int err;

	memset(a, 0, sizeof(*a));
	err = vp_analysis_params_check(p, NULL, 0);
	if (err)
		return err;
	a->params = *p;
	a->cov_threshold = vp_analysis_cov_threshold(p);
	a->k = vp_analysis_chebyshev_k(p);
	a->nnodes = t->nnodes;
	a->significant = calloc(t->nnodes, 1);
	a->high_variance = calloc(t->nnodes, 1);
	a->vim = calloc(t->nnodes, sizeof(*a->vim));
	if (!a->significant || !a->high_variance || !a->vim) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < t->nodes[VP_NODE_ROOT].nchildren; i++)
		a->total_time += t->nodes[t->nodes[VP_NODE_ROOT].children[i]].stats.total;
	cut = p->cutoff * (double)a->total_time;
	/* Parents have smaller ids than their children: one forward pass is
	 * a pre-order walk for this purpose. */
	for (i = 1; i < t->nnodes; i++) {
		const struct vp_cct_node *n = &t->nodes[i];
		int parent_ok = n->parent == VP_NODE_ROOT || a->significant[n->parent];

		a->significant[i] = parent_ok && n->stats.n && (double)n->stats.total >= cut;
		a->high_variance[i] = a->significant[i] &&
				      vp_stats_cov(&n->stats) >= a->cov_threshold;
		a->vim[i] = a->k * vp_stats_stddev(&n->stats) * (double)n->stats.n;
	}
	err = find_patterns(a, t, nfuncs);
	if (!err)
		err = summarise_functions(a, t, nfuncs);
	if (err)
		goto fail;
	return 0;
fail:
	vp_analysis_release(a);
	return err;
}

void vp_analysis_release(struct vp_analysis *a)
{
	size_t i;

	for (i = 0; i < a->npatterns; i++) {
		free(a->patterns[i].chain);
		free(a->patterns[i].nodes);
	}
	free(a->patterns);
	free(a->significant);
	free(a->high_variance);
	free(a->vim);
	free(a->funcs);
	memset(a, 0, sizeof(*a));
}
