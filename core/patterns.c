/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * patterns.c - Kumar et al. 2008's pattern analysis (§3) over a calling-context tree:
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

/* ---- call chains, ranked ---- */

enum { NONE = UINT32_MAX };

/*
 * The call chain of a node, read upwards (node, caller, ..., outermost),
 * is a string of (function, call site) elements.  Algorithm 1 and the
 * pattern-similarity trees only ever ask how long a prefix two such
 * strings share.  Comparing them element by element costs the depth of
 * the tree per pair, and all pairs of a recursive function's nodes in a
 * deep recursion made that quartic in the depth.  Instead the chains of
 * all significant nodes (the callers of a significant node are
 * significant) are ranked by prefix doubling, as suffix arrays are built:
 * rank[k][i] orders the first 2^k elements of node i's chain, equal ranks
 * meaning equal prefixes, exactly (no hashing).  A longest common prefix
 * then takes log2(depth) steps down the levels, and the last level orders
 * the chains lexicographically, a chain before its extensions.
 */
struct chains {
	uint32_t n;	/* significant nodes */
	uint32_t *idx;	/* node id -> index, NONE when not significant */
	uint32_t *node; /* index -> node id */
	uint32_t nlevels;
	uint32_t *rank[32]; /* [level][index], from 1; 0 is past the outermost */
	uint32_t *anc[32];  /* [level][index]: the 2^level-th caller, or NONE */
};

struct rank_key {
	uint32_t a, b, i;
};

static int cmp_rank_key(const void *x, const void *y)
{
	const struct rank_key *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return 0;
}

static void chains_release(struct chains *ch)
{
	for (uint32_t k = 0; k < 32; k++) {
		free(ch->rank[k]);
		free(ch->anc[k]);
	}
	free(ch->idx);
	free(ch->node);
	memset(ch, 0, sizeof(*ch));
}

/* Rank the sorted @keys into @rank; returns how many ranks differ. */
static uint32_t assign_ranks(const struct rank_key *keys, uint32_t n, uint32_t *rank)
{
	uint32_t r = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!i || cmp_rank_key(&keys[i - 1], &keys[i]))
			r++;
		rank[keys[i].i] = r;
	}
	return r;
}

static int chains_build(struct chains *ch, const struct vp_cct *t, const uint8_t *significant)
{
	struct rank_key *keys = NULL;
	uint32_t distinct, k;
	int err = -ENOMEM;

	memset(ch, 0, sizeof(*ch));
	ch->idx = malloc(t->nnodes * sizeof(*ch->idx));
	ch->node = malloc(t->nnodes * sizeof(*ch->node));
	if (!ch->idx || !ch->node)
		goto out;
	for (size_t i = 0; i < t->nnodes; i++) {
		ch->idx[i] = NONE;
		if (i != VP_NODE_ROOT && significant[i]) {
			ch->idx[i] = ch->n;
			ch->node[ch->n++] = (uint32_t)i;
		}
	}
	keys = malloc((ch->n + 1) * sizeof(*keys));
	ch->rank[0] = malloc((ch->n + 1) * sizeof(**ch->rank));
	ch->anc[0] = malloc((ch->n + 1) * sizeof(**ch->anc));
	if (!keys || !ch->rank[0] || !ch->anc[0])
		goto out;
	for (uint32_t i = 0; i < ch->n; i++) {
		const struct vp_cct_node *nd = &t->nodes[ch->node[i]];

		keys[i] = (struct rank_key){ nd->func, nd->callsite, i };
		ch->anc[0][i] = nd->parent == VP_NODE_ROOT ? NONE : ch->idx[nd->parent];
	}
	qsort(keys, ch->n, sizeof(*keys), cmp_rank_key);
	distinct = assign_ranks(keys, ch->n, ch->rank[0]);
	ch->nlevels = 1;
	/* Until every chain has a rank of its own: at the latest when 2^k
	 * exceeds the depth, so k stays below 32. */
	for (k = 1; distinct < ch->n; k++) {
		const uint32_t *r = ch->rank[k - 1], *a = ch->anc[k - 1];

		ch->rank[k] = malloc(ch->n * sizeof(**ch->rank));
		ch->anc[k] = malloc(ch->n * sizeof(**ch->anc));
		if (!ch->rank[k] || !ch->anc[k])
			goto out;
		for (uint32_t i = 0; i < ch->n; i++) {
			keys[i] = (struct rank_key){ r[i], a[i] == NONE ? 0 : r[a[i]], i };
			ch->anc[k][i] = a[i] == NONE ? NONE : a[a[i]];
		}
		qsort(keys, ch->n, sizeof(*keys), cmp_rank_key);
		distinct = assign_ranks(keys, ch->n, ch->rank[k]);
		ch->nlevels = k + 1;
	}
	err = 0;
out:
	free(keys);
	return err;
}

/* The order of node @id's chain among all chains. */
static uint32_t chain_order(const struct chains *ch, uint32_t id)
{
	return ch->rank[ch->nlevels - 1][ch->idx[id]];
}

/* How many elements the chains of the distinct nodes @x and @y share. */
static uint32_t chains_lcp(const struct chains *ch, uint32_t x, uint32_t y)
{
	uint32_t i = ch->idx[x], j = ch->idx[y], lcp = 0;

	for (uint32_t k = ch->nlevels; k-- > 0 && i != NONE && j != NONE;) {
		if (ch->rank[k][i] == ch->rank[k][j]) {
			lcp += 1u << k;
			i = ch->anc[k][i];
			j = ch->anc[k][j];
		}
	}
	return lcp;
}

/* ---- Minimal Distinguishing Call sequences ---- */

/* A chain of @len elements ending at @node (clipped at the root). */
static uint32_t chain_len(const struct vp_cct *t, uint32_t node, uint32_t want)
{
	return want < t->nodes[node].depth ? want : t->nodes[node].depth;
}

/* A candidate: a tagged node, its current chain length and its order. */
struct cand {
	uint32_t node;
	uint32_t len;
	uint32_t order;
};

struct pstate {
	const struct vp_cct *t;
	const struct vp_analysis_params *p;
	const struct chains *ch;
	double k;
	struct vp_pattern *pats;
	size_t npats, cap;
};

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static int emit_pattern(struct pstate *st, const struct cand *c, size_t n, uint32_t len)
{
	const struct vp_cct *t = st->t;
	struct vp_pattern *pat;
	uint32_t i;

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
	/* the chain itself waits for make_chains(): a deep recursion has
	 * thousands of patterns thousands of elements long, most of which
	 * fold_pass_through() folds away */
	pat->len = len;
	pat->nodes = calloc(n, sizeof(*pat->nodes));
	if (!pat->nodes)
		return -ENOMEM;
	vp_stats_init(&pat->stats);
	pat->nnodes = n;
	for (i = 0; i < n; i++) {
		pat->nodes[i] = c[i].node;
		/* Kumar and Pande, §6.1: exact merge of the members' statistics */
		vp_stats_merge(&pat->stats, &t->nodes[c[i].node].stats);
	}
	/* in the order they were found: the first is the earliest */
	qsort(pat->nodes, n, sizeof(*pat->nodes), cmp_u32);
	pat->vim = st->k * vp_stats_stddev(&pat->stats) * (double)pat->stats.n;
	st->npats++;
	return 0;
}

/*
 * A pattern-similarity tree over a group c[0..n) of candidates with one
 * chain, in chain order.  Growing the chains by one caller splits the
 * group where neighbours share no more than the chains' length, so the
 * tree is the Cartesian tree of the neighbours' common prefix lengths
 * lcp[i] = LCP(c[i], c[i+1]): split s stands for c[lo[s]..hi[s]], which
 * the chains of length lcp[s] + 1 part at s (and at its tied descendants).
 * Growing one caller at a time until a split changes nothing, so jumping
 * there directly gives the same patterns, in time linear in the group.
 */
struct ptree {
	uint32_t *lcp, *left, *right, *lo, *hi;
	double *mmin, *mmax, *cmin, *cmax; /* over c[lo..hi] */
	uint32_t *stack;
};

static void ptree_release(struct ptree *pt)
{
	free(pt->lcp);
	free(pt->left);
	free(pt->right);
	free(pt->lo);
	free(pt->hi);
	free(pt->mmin);
	free(pt->mmax);
	free(pt->cmin);
	free(pt->cmax);
	free(pt->stack);
}

static int ptree_alloc(struct ptree *pt, size_t n)
{
	memset(pt, 0, sizeof(*pt));
	pt->lcp = malloc(n * sizeof(*pt->lcp));
	pt->left = malloc(n * sizeof(*pt->left));
	pt->right = malloc(n * sizeof(*pt->right));
	pt->lo = malloc(n * sizeof(*pt->lo));
	pt->hi = malloc(n * sizeof(*pt->hi));
	pt->mmin = malloc(n * sizeof(*pt->mmin));
	pt->mmax = malloc(n * sizeof(*pt->mmax));
	pt->cmin = malloc(n * sizeof(*pt->cmin));
	pt->cmax = malloc(n * sizeof(*pt->cmax));
	pt->stack = malloc(2 * n * sizeof(*pt->stack));
	if (!pt->lcp || !pt->left || !pt->right || !pt->lo || !pt->hi || !pt->mmin ||
	    !pt->mmax || !pt->cmin || !pt->cmax || !pt->stack)
		return -ENOMEM;
	return 0;
}

/* Fold side @child of split @s (a split, or candidate @cand) into it. */
static void ptree_fold(struct ptree *pt, const struct vp_cct *t, const struct cand *c,
		       uint32_t s, uint32_t child, uint32_t cand)
{
	double m0, m1, c0, c1;

	if (child != NONE) {
		m0 = pt->mmin[child];
		m1 = pt->mmax[child];
		c0 = pt->cmin[child];
		c1 = pt->cmax[child];
	} else {
		const struct vp_stats *st = &t->nodes[c[cand].node].stats;

		m0 = m1 = st->mean;
		c0 = c1 = vp_stats_cov(st);
	}
	pt->mmin[s] = fmin(pt->mmin[s], m0);
	pt->mmax[s] = fmax(pt->mmax[s], m1);
	pt->cmin[s] = fmin(pt->cmin[s], c0);
	pt->cmax[s] = fmax(pt->cmax[s], c1);
}

/* Build the Cartesian tree of the n - 1 splits; returns its root. */
static uint32_t ptree_build(struct ptree *pt, const struct pstate *st, const struct cand *c,
			    uint32_t n)
{
	uint32_t ns = n - 1, sp = 0, npre = 0, *pre = pt->stack + n;

	for (uint32_t s = 0; s < ns; s++) {
		uint32_t last = NONE;

		pt->lcp[s] = chains_lcp(st->ch, c[s].node, c[s + 1].node);
		pt->left[s] = pt->right[s] = NONE;
		/* ties stay below the first: a right-leaning chain */
		while (sp && pt->lcp[pt->stack[sp - 1]] > pt->lcp[s])
			last = pt->stack[--sp];
		pt->left[s] = last;
		if (sp)
			pt->right[pt->stack[sp - 1]] = s;
		pt->stack[sp++] = s;
	}
	/* pre-order; its reverse visits children before their parent */
	sp = 0;
	pt->stack[sp++] = pt->stack[0];
	while (sp) {
		uint32_t s = pt->stack[--sp];

		pre[npre++] = s;
		if (pt->left[s] != NONE)
			pt->stack[sp++] = pt->left[s];
		if (pt->right[s] != NONE)
			pt->stack[sp++] = pt->right[s];
	}
	while (npre) {
		uint32_t s = pre[--npre];

		pt->lo[s] = pt->left[s] == NONE ? s : pt->lo[pt->left[s]];
		pt->hi[s] = pt->right[s] == NONE ? s + 1 : pt->hi[pt->right[s]];
		pt->mmin[s] = pt->cmin[s] = INFINITY;
		pt->mmax[s] = pt->cmax[s] = -INFINITY;
		ptree_fold(pt, st->t, c, s, pt->left[s], s);
		ptree_fold(pt, st->t, c, s, pt->right[s], s + 1);
	}
	return pre[0];
}

/* every pair within tol of each other <=> max - min <= tol * max */
static int ptree_similar(const struct ptree *pt, uint32_t s, double tol)
{
	return pt->mmax[s] - pt->mmin[s] <= tol * pt->mmax[s] &&
	       pt->cmax[s] - pt->cmin[s] <= tol * pt->cmax[s];
}

/* Work item: a split (or a candidate when @split is NONE) with its length. */
struct pwork {
	uint32_t split, cand, len, check;
};

/*
 * If the group's statistics are similar it becomes one pattern; otherwise
 * every chain grows by callers until chains differ, and the groups of
 * identical chains are split on in turn.
 */
static int pst_split(struct pstate *st, struct cand *c, uint32_t n, uint32_t len)
{
	const struct vp_cct *t = st->t;
	struct pwork *work = NULL;
	struct ptree pt;
	size_t nw = 0;
	int err;

	if (n == 1)
		return emit_pattern(st, c, 1, len);
	err = ptree_alloc(&pt, n);
	work = malloc(2 * n * sizeof(*work));
	if (err || !work) {
		err = -ENOMEM;
		goto out;
	}
	work[nw++] = (struct pwork){ ptree_build(&pt, st, c, n), 0, len, 1 };
	while (nw && !err) {
		struct pwork w = work[--nw];
		uint32_t s = w.split, v, kids[2][2];

		if (s == NONE) {
			err = emit_pattern(st, c + w.cand, 1, chain_len(t, c[w.cand].node, w.len));
			continue;
		}
		if (w.check && ptree_similar(&pt, s, st->p->similarity)) {
			err = emit_pattern(st, c + pt.lo[s], pt.hi[s] - pt.lo[s] + 1, w.len);
			continue;
		}
		/* chains of lcp + 1 elements differ across s: its sides are
		 * the next level, except tied splits, which part them too */
		v = pt.lcp[s];
		kids[0][0] = pt.right[s];
		kids[0][1] = s + 1;
		kids[1][0] = pt.left[s];
		kids[1][1] = s;
		for (int i = 0; i < 2; i++) {
			uint32_t k = kids[i][0];

			work[nw++] = (struct pwork){ k, kids[i][1], v + 1,
						     k != NONE && pt.lcp[k] != v };
		}
	}
out:
	ptree_release(&pt);
	free(work);
	return err;
}
static int cmp_pattern(const void *x, const void *y)
{
	const struct vp_pattern *a = x, *b = y;

	if (a->unreliable != b->unreliable)
		return a->unreliable ? 1 : -1;
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

static int cmp_cand_order(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;

	return a->order < b->order ? -1 : a->order > b->order;
}

static int cmp_cand_len(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;

	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return cmp_cand_order(x, y);
}

/*
 * Algorithm 1, "broad brush", for function @f's significant nodes
 * @all[0..@n): the match set is the tagged nodes, the other set the
 * untagged ones; each tagged node's chain grows until it differs from
 * every other-set chain of the same length, that is to one more than the
 * longest prefix it shares with one of them.  In chain order that is one
 * of the nearest untagged nodes before and after it.  Fills @c with the
 * tagged nodes and returns their number.
 */
static size_t mdc_lengths(const struct vp_analysis *a, const struct vp_cct *t,
			  const struct chains *ch, struct cand *all, size_t n, struct cand *c)
{
	uint32_t prev = NONE;
	size_t nc = 0;

	for (size_t i = 0; i < n; i++)
		all[i].order = chain_order(ch, all[i].node);
	qsort(all, n, sizeof(*all), cmp_cand_order);
	for (size_t i = 0; i < n; i++) {
		uint32_t m = all[i].node, len = 1;

		if (!a->high_variance[m]) {
			prev = m;
			continue;
		}
		if (prev != NONE)
			len = chains_lcp(ch, m, prev) + 1;
		all[i].len = len;
		c[nc++] = all[i];
	}
	prev = NONE;
	for (size_t i = n, j = nc; i-- > 0;) {
		uint32_t m = all[i].node;

		if (!a->high_variance[m]) {
			prev = m;
			continue;
		}
		j--;
		if (prev != NONE && chains_lcp(ch, m, prev) + 1 > c[j].len)
			c[j].len = chains_lcp(ch, m, prev) + 1;
		c[j].len = chain_len(t, m, c[j].len);
	}
	return nc;
}

/* ---- pass-through callees ---- */

/* @c's row sum in its parent @p's covariance matrix, over p's variance. */
static double variance_share(const struct vp_cct *t, const struct vp_cct_node *p, uint32_t c)
{
	long slot = vp_cct_child_slot(p, c);
	double var = vp_covar_sum(&p->cov), row = 0;

	/* past VP_CCT_TRACKED, the row is the "other" callees' together */
	if (slot < 0 || slot > VP_CCT_TRACKED || (size_t)slot >= p->cov.dim || !(var > 0))
		return 0;
	(void)t;
	for (size_t j = 0; j < p->cov.dim; j++)
		row += vp_covar_get(&p->cov, (size_t)slot, j);
	return row / var;
}

static int cmp_depth_desc(const void *x, const void *y, void *arg)
{
	const struct vp_cct *t = arg;
	const struct vp_pattern *a = *(struct vp_pattern *const *)x;
	const struct vp_pattern *b = *(struct vp_pattern *const *)y;
	uint32_t da = t->nodes[a->nodes[0]].depth, db = t->nodes[b->nodes[0]].depth;

	if (da != db)
		return da < db ? 1 : -1;
	return a->nodes[0] < b->nodes[0] ? -1 : a->nodes[0] > b->nodes[0];
}

/* Fold @q, a pass-through callee of @p, into @p. */
static int fold_into(const struct vp_cct *t, struct vp_pattern *p, struct vp_pattern *q)
{
	size_t n = p->nthrough + 1 + q->nthrough;
	struct vp_chain_elem *e = realloc(p->through, n * sizeof(*e));

	if (!e)
		return -ENOMEM;
	e[p->nthrough] = (struct vp_chain_elem){ t->nodes[q->nodes[0]].func,
						 t->nodes[q->nodes[0]].callsite };
	if (q->nthrough)
		memcpy(e + p->nthrough + 1, q->through, q->nthrough * sizeof(*e));
	p->through = e;
	p->nthrough = n;
	free(q->chain);
	free(q->nodes);
	free(q->through);
	memset(q, 0, sizeof(*q));
	return 0;
}

/*
 * A wrapper that calls one function once per invocation and whose variance
 * is nearly all that callee's is a transmitter of its variance, not its
 * origin (Kumar and Pande, Dominant Variance Characterization, Section
 * 2.2): a chain of them made one pattern per link, all with the same
 * statistics.  Pattern q is folded into pattern p when p's nodes are
 * exactly the callers of q's, every caller is invoked as often as its
 * callee and the callee carries VP_PASS_THROUGH_SHARE of its variance or
 * more, but no more than that short of 100 % over it (95 % to 105 %).
 * Deepest patterns first, so a chain folds into its top.
 */
static int fold_pass_through(struct vp_analysis *a, const struct vp_cct *t)
{
	uint32_t *pat_of = malloc(t->nnodes * sizeof(*pat_of));
	struct vp_pattern **order = malloc((a->npatterns + 1) * sizeof(*order));
	size_t i, k, n = 0;
	int err = 0;

	if (!pat_of || !order) {
		err = -ENOMEM;
		goto out;
	}
	memset(pat_of, 0xff, t->nnodes * sizeof(*pat_of));
	for (i = 0; i < a->npatterns; i++) {
		order[i] = &a->patterns[i];
		for (k = 0; k < a->patterns[i].nnodes; k++)
			pat_of[a->patterns[i].nodes[k]] = (uint32_t)i;
	}
	qsort_r(order, a->npatterns, sizeof(*order), cmp_depth_desc, (void *)t);
	for (i = 0; i < a->npatterns && !err; i++) {
		struct vp_pattern *q = order[i], *p;
		uint32_t pi = pat_of[t->nodes[q->nodes[0]].parent];
		int pass = pi != NONE && a->patterns[pi].nnodes == q->nnodes &&
			   &a->patterns[pi] != q;

		for (k = 0; pass && k < q->nnodes; k++) {
			const struct vp_cct_node *c = &t->nodes[q->nodes[k]];
			const struct vp_cct_node *pn = &t->nodes[c->parent];

			double share = variance_share(t, pn, c->id);

			/* not beyond 100 % either: a callee over it is offset by
			 * its siblings (exclusive branches), not passed through */
			pass = pat_of[c->parent] == pi && c->stats.n == pn->stats.n &&
			       share >= VP_PASS_THROUGH_SHARE && share <= 2 - VP_PASS_THROUGH_SHARE;
		}
		if (!pass)
			continue;
		p = &a->patterns[pi];
		err = fold_into(t, p, q);
		a->nfolded++;
	}
	/* drop the folded ones, keeping the order */
	for (i = 0; i < a->npatterns; i++)
		if (a->patterns[i].nnodes)
			a->patterns[n++] = a->patterns[i];
	a->npatterns = n;
out:
	free(pat_of);
	free(order);
	return err;
}

/* Every pattern's chain: the len callers of its nodes' (all the same). */
static int make_chains(struct vp_analysis *a, const struct vp_cct *t)
{
	for (size_t i = 0; i < a->npatterns; i++) {
		struct vp_pattern *p = &a->patterns[i];
		uint32_t node = p->nodes[0];

		p->chain = calloc(p->len ? p->len : 1, sizeof(*p->chain));
		if (!p->chain)
			return -ENOMEM;
		for (size_t k = 0; k < p->len; k++, node = t->nodes[node].parent)
			p->chain[p->len - 1 - k] =
				(struct vp_chain_elem){ t->nodes[node].func, t->nodes[node].callsite };
	}
	return 0;
}

int vp_pattern_in_set(const struct vp_analysis_params *p, int unreliable, double vim,
		      double max_vim)
{
	return !unreliable && max_vim > 0.0 && vim >= p->beta * max_vim;
}

/* Sort reliable patterns by VIM before unreliable ones; mark the Set. */
static void rank_patterns(struct vp_analysis *a)
{
	size_t i;

	if (a->npatterns)
		qsort(a->patterns, a->npatterns, sizeof(*a->patterns), cmp_pattern);
	a->max_vim = a->npatterns && !a->patterns[0].unreliable ? a->patterns[0].vim : 0.0;
	for (i = 0; i < a->npatterns; i++)
		a->patterns[i].in_pattern_set = vp_pattern_in_set(
			&a->params, a->patterns[i].unreliable, a->patterns[i].vim, a->max_vim);
}

int vp_analysis_set_unreliable(struct vp_analysis *a, const uint8_t *unreliable, size_t n)
{
	a->nunreliable = 0;
	for (size_t i = 0; i < a->npatterns; i++) {
		struct vp_pattern *p = &a->patterns[i];
		int all = 1;

		for (size_t k = 0; all && k < p->nnodes; k++) {
			if (p->nodes[k] >= n)
				return -EINVAL;
			all = unreliable[p->nodes[k]] != 0;
		}
		p->unreliable = all;
		a->nunreliable += all;
	}
	rank_patterns(a);
	return 0;
}

static int find_patterns(struct vp_analysis *a, const struct vp_cct *t, size_t nfuncs)
{
	struct pstate st = { t, &a->params, NULL, a->k, NULL, 0, 0 };
	struct by_func sig = { 0 };
	struct chains ch;
	struct cand *c = NULL, *all = NULL;
	size_t f, i, nc, start;
	int err;

	err = chains_build(&ch, t, a->significant);
	if (!err)
		err = index_by_func(&sig, t, nfuncs, a->significant);
	if (err)
		goto out;
	st.ch = &ch;
	c = malloc((t->nnodes + 1) * sizeof(*c));
	all = malloc((t->nnodes + 1) * sizeof(*all));
	if (!c || !all) {
		err = -ENOMEM;
		goto out;
	}
	for (f = 0; f < nfuncs; f++) {
		size_t nall = sig.start[f + 1] - sig.start[f];

		for (i = 0; i < nall; i++)
			all[i].node = sig.ids[sig.start[f] + i];
		nc = mdc_lengths(a, t, &ch, all, nall, c);
		/*
		 * Group identical MDC sequences; each group roots a PST.  In
		 * the order of length, then chain, identical chains are
		 * neighbours.
		 */
		qsort(c, nc, sizeof(*c), cmp_cand_len);
		for (start = 0; start < nc; start = i) {
			for (i = start + 1; i < nc && c[i].len == c[start].len &&
					    chains_lcp(&ch, c[i - 1].node, c[i].node) >= c[i].len;
			     i++)
				;
			err = pst_split(&st, c + start, (uint32_t)(i - start), c[start].len);
			if (err)
				goto out;
		}
	}
	a->patterns = st.pats;
	a->npatterns = st.npats;
	st.pats = NULL;
	st.npats = 0;
	err = fold_pass_through(a, t);
	if (!err)
		err = make_chains(a, t);
	if (!err)
		rank_patterns(a);
out:
	for (i = 0; i < st.npats; i++) {
		free(st.pats[i].chain);
		free(st.pats[i].nodes);
	}
	free(st.pats);
	free(sig.start);
	free(sig.ids);
	free(c);
	free(all);
	chains_release(&ch);
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
	/* open invocations count: a run stopped inside main has main's time */
	for (i = 0; i < t->nodes[VP_NODE_ROOT].nchildren; i++)
		a->total_time += vp_cct_node_time(&t->nodes[t->nodes[VP_NODE_ROOT].children[i]]);
	cut = p->cutoff * (double)a->total_time;
	/* Parents have smaller ids than their children: one forward pass is
	 * a pre-order walk for this purpose. */
	for (i = 1; i < t->nnodes; i++) {
		const struct vp_cct_node *n = &t->nodes[i];
		int parent_ok = n->parent == VP_NODE_ROOT || a->significant[n->parent];

		a->significant[i] = parent_ok && (n->stats.n || n->open) &&
				    (double)vp_cct_node_time(n) >= cut;
		/* statistics need invocations that returned */
		a->high_variance[i] = a->significant[i] && n->stats.n &&
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
		free(a->patterns[i].through);
	}
	free(a->patterns);
	free(a->significant);
	free(a->high_variance);
	free(a->vim);
	free(a->funcs);
	memset(a, 0, sizeof(*a));
}

int vp_analysis_set_probe_costs(struct vp_analysis *a, const struct vp_cct *t,
				const double *cost)
{
	uint8_t *flags = calloc(t->nnodes + 1, 1);
	int err;

	if (!flags)
		return -ENOMEM;
	for (uint32_t id = 1; id < t->nnodes; id++)
		flags[id] = vp_cct_unreliable(t, cost, id) != 0;
	err = vp_analysis_set_unreliable(a, flags, t->nnodes);
	free(flags);
	return err;
}
