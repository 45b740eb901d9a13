/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sources.c - Step 2 of Dominant Variance Analysis (Kumar and Pande, §2.2, §7):
 * for every high-variance node H, the share of each variable of its
 * covariance matrix, and the linear segments to the underlying sources of
 * its variance, found by cascading into calls made once per invocation and
 * by implicitly inlining call chains, with batched extra passes.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pairing.h"
#include "sources.h"

/* Evaluation recurses along call chains; deeper chains stop there. */
enum { MAX_CHAIN = 4096 };

void vp_sources_params_default(struct vp_sources_params *p)
{
	p->min_contribution = 0.10;
	p->once_probability = 0.95;
	p->max_passes = 8;
}

int vp_sources_params_check(const struct vp_sources_params *p, char *err, size_t errlen)
{
	const char *what = NULL;

	if (!(p->min_contribution > 0.0 && p->min_contribution <= 1.0))
		what = "min contribution must be greater than 0 and at most 1";
	else if (!(p->once_probability >= 0.5 && p->once_probability < 1.0))
		what = "once probability must be at least 0.5 and less than 1";
	else if (p->max_passes > 1000)
		what = "max passes must be at most 1000";
	return vp_param_result(what, err, errlen);
}

const char *vp_once_name(enum vp_once o)
{
	switch (o) {
	case VP_ONCE_NOT:
		return "not-once";
	case VP_ONCE_LIKELY:
		return "likely-once";
	case VP_ONCE_EXACT:
		return "once";
	default:
		return "unknown";
	}
}

const char *vp_source_how_name(enum vp_source_how h)
{
	switch (h) {
	case VP_SOURCE_MATRIX:
		return "matrix";
	case VP_SOURCE_CASCADE:
		return "cascade";
	case VP_SOURCE_POTENTIAL:
		return "potential";
	default:
		return "unexplored";
	}
}

/*
 * The variables of H's matrix as a tree T_H: H's children, and below every
 * inlined node its significant children.  Variables are numbered in
 * depth-first order (0 is H's self time), so the variables of a node and
 * of everything below it in T_H form the range var..var+size-1: its block,
 * whose sum is Y^{H|node}.  An inlined node's own variable is its self time.
 */
struct tview {
	size_t nt, cap;
	uint32_t *node;
	uint32_t *tsize;   /* T_H nodes in the subtree, itself included */
	uint32_t *var;
	uint32_t *vsize;   /* variables in the block */
	uint8_t *explored; /* inlined: children are variables too */
	uint32_t nvars;
};

/* A source found by the evaluation, before its statistics are read. */
struct tsrc {
	uint32_t chain_off, len;
	uint32_t xnode; /* VP_NO_NODE: H's own matrix; else node X's base matrix */
	uint32_t v0, nv;
	uint8_t how;
};

struct ostate {
	uint32_t h;
	uint32_t *inl; /* inlined nodes, sorted */
	size_t ninl, capinl;
	uint32_t *req; /* nodes the last evaluation wants inlined */
	size_t nreq, capreq;
	struct vp_covar mat; /* over tv's variables, once a pass made it */
	int have_mat;
	int pending; /* the current pass computes mat */
	struct tview tv;
	struct tsrc *src;
	size_t nsrc, capsrc;
	uint32_t *chains;
	size_t nchains, capchains;
	size_t nforced; /* requests from cascades, see eval_origin() */
};

struct pframe {
	uint64_t sp, t0;
	uint32_t node, func;
	uint32_t cfunc, ccs, cnode;
	uint32_t *cnt; /* calls per child slot in this invocation */
	size_t ncnt, cntcap;
	double *acc; /* H's variables in this invocation, when H is a target */
	size_t nacc, acccap;
};

struct pthread {
	struct pframe *frames;
	size_t depth, cap;
};

struct pentry {
	uint32_t o;   /* originator state */
	uint32_t add; /* variable that gains the duration */
	uint32_t sub; /* variable of the T_H parent that loses it */
};

struct vp_sources_work {
	const struct vp_cct *t;
	const struct vp_analysis *a;
	size_t nos;
	struct ostate *os;
	uint8_t *sigkids; /* [nnodes]: has a significant child */
	/* evaluation */
	uint32_t chain[MAX_CHAIN];
	uint32_t clen;
	double *rowsum;
	size_t rowsum_cap;
	/* the pass in progress */
	int in_pass;
	uint8_t *count;	 /* [nnodes]: count its children's calls */
	int32_t *target; /* [nnodes]: state index of an originator being computed */
	uint32_t *estart;
	struct pentry *ent;
	size_t nent;
	uint8_t *csflags;
	size_t ncs;
	struct pthread *threads;
	size_t nthreads;
};

static int u32_cmp(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static int in_sorted(const uint32_t *v, size_t n, uint32_t x)
{
	return n && bsearch(&x, v, n, sizeof(*v), u32_cmp) != NULL;
}

/* ---- views of a matrix ---- */

static void tview_release(struct tview *v)
{
	free(v->node);
	free(v->tsize);
	free(v->var);
	free(v->vsize);
	free(v->explored);
	memset(v, 0, sizeof(*v));
}

static int tview_push(struct tview *v, uint32_t node, int explored)
{
	size_t cap = v->cap;

	if (v->nt == cap) {
		cap = cap ? cap * 2 : 8;
		uint32_t *a = realloc(v->node, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		v->node = a;
		a = realloc(v->tsize, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		v->tsize = a;
		a = realloc(v->var, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		v->var = a;
		a = realloc(v->vsize, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		v->vsize = a;
		uint8_t *e = realloc(v->explored, cap);

		if (!e)
			return -ENOMEM;
		v->explored = e;
		v->cap = cap;
	}
	v->node[v->nt] = node;
	v->var[v->nt] = v->nvars++;
	v->explored[v->nt] = (uint8_t)explored;
	v->tsize[v->nt] = 1;
	v->vsize[v->nt] = 1;
	v->nt++;
	return 0;
}

/* The base matrix of H: its own variables, none inlined. */
static int tview_base(struct tview *v, const struct vp_cct *t, uint32_t h)
{
	const struct vp_cct_node *n = &t->nodes[h];
	int err;

	v->nt = 0;
	v->nvars = 1;
	/* the "other" callees (cct.h) are no candidate source, but their
	 * variable's covariances are in the tracked ones' row sums */
	for (uint32_t i = 0; i < vp_cct_ntracked(n->nchildren); i++) {
		/* a child first seen in an invocation that never completed has
		 * no variable yet */
		if (i + 1 >= n->cov.dim)
			break;
		err = tview_push(v, n->children[i], 0);
		if (err)
			return err;
	}
	return 0;
}

static int tview_dfs(struct tview *v, const struct vp_cct *t, const struct vp_analysis *a,
		     const struct ostate *os, uint32_t p, unsigned depth)
{
	const struct vp_cct_node *n = &t->nodes[p];
	int err;

	for (uint32_t i = 0; i < n->nchildren; i++) {
		uint32_t c = n->children[i];
		int explored;
		size_t k;

		if (!a->significant[c] || !t->nodes[c].stats.n)
			continue;
		explored = in_sorted(os->inl, os->ninl, c) && depth < MAX_CHAIN;
		k = v->nt;
		err = tview_push(v, c, explored);
		if (!err && explored)
			err = tview_dfs(v, t, a, os, c, depth + 1);
		if (err)
			return err;
		v->tsize[k] = (uint32_t)(v->nt - k);
		v->vsize[k] = v->nvars - v->var[k];
	}
	return 0;
}

/* H's matrix with the nodes of os->inl inlined. */
static int tview_inlined(struct tview *v, const struct vp_cct *t, const struct vp_analysis *a,
			 const struct ostate *os)
{
	v->nt = 0;
	v->nvars = 1;
	return tview_dfs(v, t, a, os, os->h, 1);
}

/* Sum of C[i][j] over i in [i0, i0+ni) and j in [j0, j0+nj). */
static double block_sum(const struct vp_covar *c, uint32_t i0, uint32_t ni, uint32_t j0,
			uint32_t nj)
{
	double s = 0.0;

	for (uint32_t i = i0; i < i0 + ni; i++)
		for (uint32_t j = j0; j < j0 + nj; j++)
			s += vp_covar_get(c, i, j);
	return s;
}

static double block_mean(const struct vp_covar *c, uint32_t v0, uint32_t nv)
{
	double s = 0.0;

	for (uint32_t i = v0; i < v0 + nv && i < c->dim; i++)
		s += c->mean[i];
	return s;
}

/* ---- evaluation ---- */

struct ectx {
	struct vp_sources *s;
	struct vp_sources_work *w;
	struct ostate *os;
	const struct tview *tv;
	const struct vp_covar *c; /* H's matrix for tv */
	double var;		  /* var(H) */
	double theta;
	int err;
};

static enum vp_once chain_class(const struct ectx *e, uint32_t node)
{
	const struct vp_cct *t = e->w->t;
	enum vp_once cls = VP_ONCE_EXACT;

	for (; node != e->os->h && node != VP_NODE_ROOT; node = t->nodes[node].parent)
		if (e->s->once[node] < cls)
			cls = e->s->once[node];
	return cls;
}

static void request(struct ectx *e, uint32_t node)
{
	struct ostate *os = e->os;

	if (e->err || in_sorted(os->inl, os->ninl, node))
		return;
	e->err = vp_grow((void **)&os->req, &os->capreq, os->nreq + 1, sizeof(*os->req));
	if (!e->err)
		os->req[os->nreq++] = node;
}

/* Inline the chain down to the node on top of it (it included). */
static void request_chain(struct ectx *e)
{
	for (uint32_t i = 0; i < e->w->clen; i++)
		request(e, e->w->chain[i]);
}

static void add_source(struct ectx *e, uint32_t xnode, uint32_t v0, uint32_t nv,
		       enum vp_source_how how)
{
	struct ostate *os = e->os;
	struct vp_sources_work *w = e->w;
	struct tsrc *ts;

	if (e->err)
		return;
	e->err = vp_grow((void **)&os->src, &os->capsrc, os->nsrc + 1, sizeof(*os->src));
	if (!e->err)
		e->err = vp_grow((void **)&os->chains, &os->capchains, os->nchains + w->clen,
			      sizeof(*os->chains));
	if (e->err)
		return;
	ts = &os->src[os->nsrc++];
	ts->chain_off = (uint32_t)os->nchains;
	ts->len = w->clen;
	memcpy(os->chains + os->nchains, w->chain, w->clen * sizeof(*w->chain));
	os->nchains += w->clen;
	ts->xnode = xnode;
	ts->v0 = v0;
	ts->nv = nv;
	ts->how = (uint8_t)how;
}

static int push_chain(struct ectx *e, uint32_t node)
{
	if (e->w->clen >= MAX_CHAIN)
		return 0;
	e->w->chain[e->w->clen++] = node;
	return 1;
}

/*
 * @a's time per invocation of H is (nearly) X_a: compare the terms of a's
 * own matrix against var(H) (Kumar and Pande, §2.2, the cascade).  @xnode,
 * @v0, @nv locate a's own variable, @how_a the quality of its statistics.
 */
static void cascade(struct ectx *e, uint32_t a, enum vp_once cls, uint32_t xnode, uint32_t v0,
		    uint32_t nv, enum vp_source_how how_a)
{
	const struct vp_cct *t = e->w->t;
	const struct vp_cct_node *n = &t->nodes[a];
	const struct vp_covar *c = &n->cov;
	enum vp_source_how how = cls == VP_ONCE_EXACT ? VP_SOURCE_CASCADE : VP_SOURCE_POTENTIAL;
	int selfsig, nsig = 0;

	if (cls != VP_ONCE_EXACT)
		request_chain(e); /* verify with a pass: inline the chain */
	else
		e->os->nforced++;
	selfsig = block_sum(c, 0, 1, 0, (uint32_t)c->dim) / e->var >= e->theta;
	for (uint32_t i = 0; i < vp_cct_ntracked(n->nchildren) && i + 1 < c->dim; i++)
		nsig += block_sum(c, i + 1, 1, 0, (uint32_t)c->dim) / e->var >= e->theta;
	if (!nsig || selfsig)
		add_source(e, xnode, v0, nv, how_a);
	for (uint32_t i = 0; i < vp_cct_ntracked(n->nchildren) && i + 1 < c->dim && !e->err;
	     i++) {
		uint32_t d = n->children[i];
		enum vp_once cd;

		if (block_sum(c, i + 1, 1, 0, (uint32_t)c->dim) / e->var < e->theta)
			continue;
		if (!push_chain(e, d))
			continue;
		cd = e->s->once[d] < cls ? (enum vp_once)e->s->once[d] : cls;
		if (!e->w->sigkids[d]) {
			add_source(e, a, i + 1, 1, how);
		} else if (cd >= VP_ONCE_LIKELY) {
			cascade(e, d, cd, a, i + 1, 1, how);
		} else {
			request_chain(e);
			add_source(e, a, i + 1, 1, VP_SOURCE_UNEXPLORED);
		}
		e->w->clen--;
	}
}

static double tshare(const struct ectx *e, size_t k)
{
	double s = 0.0;

	for (uint32_t v = e->tv->var[k]; v < e->tv->var[k] + e->tv->vsize[k]; v++)
		s += e->w->rowsum[v];
	return s / e->var;
}

/* Node @k of T_H carries a significant share: is it a source or does the
 * variance come from further down? */
static void visit(struct ectx *e, size_t k)
{
	const struct tview *tv = e->tv;
	uint32_t a = tv->node[k];

	if (e->err || !push_chain(e, a))
		return;
	if (tv->explored[k]) {
		int selfsig = e->w->rowsum[tv->var[k]] / e->var >= e->theta, nsig = 0;
		size_t j;

		for (j = k + 1; j < k + tv->tsize[k]; j += tv->tsize[j])
			nsig += tshare(e, j) >= e->theta;
		if (!nsig || selfsig)
			add_source(e, VP_NO_NODE, tv->var[k], tv->vsize[k], VP_SOURCE_MATRIX);
		for (j = k + 1; j < k + tv->tsize[k]; j += tv->tsize[j])
			if (tshare(e, j) >= e->theta)
				visit(e, j);
	} else if (!e->w->sigkids[a]) {
		add_source(e, VP_NO_NODE, tv->var[k], 1, VP_SOURCE_MATRIX);
	} else {
		enum vp_once cls = chain_class(e, a);

		if (cls >= VP_ONCE_LIKELY) {
			cascade(e, a, cls, VP_NO_NODE, tv->var[k], 1, VP_SOURCE_MATRIX);
		} else {
			request(e, a);
			add_source(e, VP_NO_NODE, tv->var[k], 1, VP_SOURCE_UNEXPLORED);
		}
	}
	e->w->clen--;
}

static int eval_origin(struct vp_sources *s, struct ostate *os)
{
	struct vp_sources_work *w = s->work;
	const struct vp_cct_node *h = &w->t->nodes[os->h];
	struct tview base = { 0 };
	struct ectx e = { s, w, os, NULL, NULL, 0, s->params.min_contribution, 0 };
	size_t nreq0;

	os->nsrc = 0;
	os->nchains = 0;
	os->nreq = 0;
	os->nforced = 0;
	if (os->have_mat) {
		e.tv = &os->tv;
		e.c = &os->mat;
	} else {
		e.err = tview_base(&base, w->t, os->h);
		e.tv = &base;
		e.c = &h->cov;
	}
	e.var = vp_stats_variance(&h->stats);
	if (!e.err)
		e.err = vp_grow((void **)&w->rowsum, &w->rowsum_cap, e.tv->nvars, sizeof(*w->rowsum));
	if (e.err)
		goto out;
	for (uint32_t i = 0; i < e.tv->nvars; i++)
		w->rowsum[i] = block_sum(e.c, i, 1, 0, (uint32_t)e.c->dim);
	w->clen = 0;
	for (size_t k = 0; k < e.tv->nt && !e.err; k += e.tv->tsize[k])
		if (tshare(&e, k) >= e.theta)
			visit(&e, k);
	/*
	 * Exactly-once cascades need no pass (Kumar and Pande, §2.2: "this quantification
	 * can be done ... without needing an additional profiling pass"), but
	 * when H gets a pass anyway, inline them too: their shares then count
	 * every cross term and their covariances with the other sources are
	 * known.
	 */
	nreq0 = os->nreq;
	if (nreq0 && os->nforced) {
		for (size_t i = 0; i < os->nsrc && !e.err; i++) {
			const struct tsrc *ts = &os->src[i];

			if (ts->how != VP_SOURCE_CASCADE)
				continue;
			for (uint32_t j = 0; j + 1 < ts->len; j++)
				request(&e, os->chains[ts->chain_off + j]);
		}
	}
out:
	tview_release(&base);
	return e.err;
}

static int eval_all(struct vp_sources *s)
{
	struct vp_sources_work *w = s->work;
	int err = 0;

	for (size_t i = 0; i < w->nos && !err; i++)
		err = eval_origin(s, &w->os[i]);
	return err;
}

/* ---- start and finish ---- */

static void work_free(struct vp_sources_work *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nos; i++) {
		struct ostate *os = &w->os[i];

		free(os->inl);
		free(os->req);
		vp_covar_release(&os->mat);
		tview_release(&os->tv);
		free(os->src);
		free(os->chains);
	}
	for (size_t i = 0; i < w->nthreads; i++) {
		for (size_t j = 0; j < w->threads[i].cap; j++) {
			free(w->threads[i].frames[j].cnt);
			free(w->threads[i].frames[j].acc);
		}
		free(w->threads[i].frames);
	}
	free(w->threads);
	free(w->os);
	free(w->sigkids);
	free(w->rowsum);
	free(w->count);
	free(w->target);
	free(w->estart);
	free(w->ent);
	free(w->csflags);
	free(w);
}

int vp_sources_start(struct vp_sources *s, const struct vp_cct *t, const struct vp_analysis *a,
		     const struct vp_sources_params *p)
{
	struct vp_sources_work *w;
	size_t i;
	int err;

	memset(s, 0, sizeof(*s));
	err = vp_sources_params_check(p, NULL, 0);
	if (err)
		return err;
	if (a->nnodes != t->nnodes)
		return -EINVAL;
	s->params = *p;
	s->nnodes = t->nnodes;
	s->origin_of = malloc(t->nnodes * sizeof(*s->origin_of));
	s->once = calloc(t->nnodes, 1);
	w = s->work = calloc(1, sizeof(*w));
	if (!s->origin_of || !s->once || !w)
		goto nomem;
	w->t = t;
	w->a = a;
	w->sigkids = calloc(t->nnodes, 1);
	w->os = calloc(t->nnodes, sizeof(*w->os));
	if (!w->sigkids || !w->os)
		goto nomem;
	for (i = 0; i < t->nnodes; i++) {
		const struct vp_cct_node *n = &t->nodes[i];

		s->origin_of[i] = VP_NO_NODE;
		if (i != VP_NODE_ROOT && a->significant[i] && n->parent != VP_NO_NODE)
			w->sigkids[n->parent] = 1;
	}
	w->sigkids[VP_NODE_ROOT] = 0;
	/* Originators: high-variance nodes whose matrix has children. */
	for (i = 1; i < t->nnodes; i++) {
		const struct vp_cct_node *n = &t->nodes[i];

		if (!a->high_variance[i] || n->cov.dim < 2 || !(vp_stats_variance(&n->stats) > 0))
			continue;
		s->origin_of[i] = (uint32_t)w->nos;
		w->os[w->nos].h = (uint32_t)i;
		vp_covar_init(&w->os[w->nos].mat);
		w->nos++;
	}
	err = eval_all(s);
	if (err)
		goto fail;
	return 0;
nomem:
	err = -ENOMEM;
fail:
	vp_sources_release(s);
	return err;
}

static int has_work(const struct vp_sources *s)
{
	const struct vp_sources_work *w = s->work;

	for (size_t i = 0; w && i < w->nos; i++)
		if (w->os[i].nreq)
			return 1;
	return 0;
}

int vp_sources_more(const struct vp_sources *s)
{
	return has_work(s) && s->passes < s->params.max_passes;
}

static int cmp_source(const void *x, const void *y)
{
	const struct vp_source *a = x, *b = y;

	if (a->share != b->share)
		return a->share < b->share ? 1 : -1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	for (uint32_t i = 0; i < a->len; i++)
		if (a->chain[i] != b->chain[i])
			return a->chain[i] < b->chain[i] ? -1 : 1;
	return 0;
}

struct sorted_source {
	struct vp_source s;
	uint32_t idx;
};

static int cmp_sorted_source(const void *x, const void *y)
{
	const struct sorted_source *a = x, *b = y;
	int c = cmp_source(&a->s, &b->s);

	return c ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static int cmp_component(const void *x, const void *y)
{
	const struct vp_component *a = x, *b = y;

	if (a->share != b->share)
		return a->share < b->share ? 1 : -1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static int finish_origin(struct vp_sources *s, struct ostate *os, struct vp_origin *o)
{
	const struct vp_cct *t = s->work->t;
	const struct vp_cct_node *h = &t->nodes[os->h];
	const struct vp_covar *bc = &h->cov;
	uint32_t *ord = NULL;
	size_t i, j, ns = os->nsrc;

	o->node = os->h;
	o->n = h->stats.n;
	o->variance = vp_stats_variance(&h->stats);
	o->ninlined = (uint32_t)(os->have_mat ? os->ninl : 0);
	o->nvars = os->have_mat ? os->tv.nvars : (uint32_t)bc->dim;
	o->components = calloc(bc->dim, sizeof(*o->components));
	o->sources = calloc(ns ? ns : 1, sizeof(*o->sources));
	o->cross = malloc((ns ? ns * ns : 1) * sizeof(*o->cross));
	ord = malloc((ns ? ns : 1) * sizeof(*ord));
	if (!o->components || !o->sources || !o->cross || !ord)
		goto nomem;
	for (i = 0; i < bc->dim; i++) {
		struct vp_component *c = &o->components[o->ncomponents++];

		c->node = i == 0		 ? VP_NO_NODE
			  : i > VP_CCT_TRACKED ? VP_OTHER_NODE
					       : h->children[i - 1];
		c->share = block_sum(bc, (uint32_t)i, 1, 0, (uint32_t)bc->dim) / o->variance;
		c->cf = vp_covar_get(bc, i, i) / o->variance;
	}
	qsort(o->components, o->ncomponents, sizeof(*o->components), cmp_component);
	for (i = 0; i < ns; i++) {
		const struct tsrc *ts = &os->src[i];
		struct vp_source *d = &o->sources[i];
		const struct vp_covar *c = ts->xnode == VP_NO_NODE
						   ? (os->have_mat ? &os->mat : bc)
						   : &t->nodes[ts->xnode].cov;
		uint32_t dim = (uint32_t)c->dim;

		d->len = ts->len;
		d->chain = malloc(ts->len * sizeof(*d->chain));
		if (!d->chain)
			goto nomem;
		memcpy(d->chain, os->chains + ts->chain_off, ts->len * sizeof(*d->chain));
		d->underlier = d->chain[ts->len - 1];
		d->share = block_sum(c, ts->v0, ts->nv, 0, dim) / o->variance;
		d->variance = block_sum(c, ts->v0, ts->nv, ts->v0, ts->nv);
		d->cf = d->variance / o->variance;
		d->mean = block_mean(c, ts->v0, ts->nv);
		d->how = (enum vp_source_how)ts->how;
		o->nsources++;
	}
	/* Sort, remembering where each source came from for the cross terms. */
	{
		struct sorted_source *tmp = malloc((ns ? ns : 1) * sizeof(*tmp));

		if (!tmp)
			goto nomem;
		for (i = 0; i < ns; i++) {
			tmp[i].s = o->sources[i];
			tmp[i].idx = (uint32_t)i;
		}
		qsort(tmp, ns, sizeof(*tmp), cmp_sorted_source);
		for (i = 0; i < ns; i++) {
			o->sources[i] = tmp[i].s;
			ord[i] = tmp[i].idx;
		}
		free(tmp);
	}
	for (i = 0; i < ns; i++) {
		const struct tsrc *a = &os->src[ord[i]];

		for (j = 0; j < ns; j++) {
			const struct tsrc *b = &os->src[ord[j]];
			const struct vp_covar *c;

			if (a->xnode != b->xnode) {
				o->cross[i * ns + j] = NAN;
				continue;
			}
			c = a->xnode == VP_NO_NODE ? (os->have_mat ? &os->mat : bc)
						   : &t->nodes[a->xnode].cov;
			o->cross[i * ns + j] = block_sum(c, a->v0, a->nv, b->v0, b->nv);
		}
	}
	free(ord);
	return 0;
nomem:
	free(ord);
	return -ENOMEM;
}

int vp_sources_finish(struct vp_sources *s)
{
	struct vp_sources_work *w = s->work;
	int err = 0;

	if (!w)
		return -EINVAL;
	s->limited = has_work(s);
	s->origins = calloc(w->nos ? w->nos : 1, sizeof(*s->origins));
	if (!s->origins)
		return -ENOMEM;
	for (size_t i = 0; i < w->nos && !err; i++) {
		err = finish_origin(s, &w->os[i], &s->origins[i]);
		s->norigins = i + 1;
	}
	if (err)
		return err;
	work_free(w);
	s->work = NULL;
	return 0;
}

void vp_sources_release(struct vp_sources *s)
{
	for (size_t i = 0; i < s->norigins; i++) {
		struct vp_origin *o = &s->origins[i];

		for (size_t j = 0; j < o->nsources; j++)
			free(o->sources[j].chain);
		free(o->sources);
		free(o->components);
		free(o->cross);
	}
	free(s->origins);
	free(s->origin_of);
	free(s->once);
	free(s->calls);
	work_free(s->work);
	memset(s, 0, sizeof(*s));
}

const struct vp_origin *vp_sources_origin(const struct vp_sources *s, uint32_t node)
{
	if (node >= s->nnodes || s->origin_of[node] == VP_NO_NODE ||
	    s->origin_of[node] >= s->norigins)
		return NULL;
	return &s->origins[s->origin_of[node]];
}

/* ---- extra passes ---- */

static void threads_reset(struct vp_sources_work *w)
{
	for (size_t i = 0; i < w->nthreads; i++)
		w->threads[i].depth = 0;
	w->ncs = 0;
}

/* Merge the requests into the inlined set and lay out the new matrix. */
static int prepare_origin(struct vp_sources_work *w, struct ostate *os)
{
	size_t i, n;
	int err;

	os->pending = 0;
	if (!os->nreq)
		return 0;
	err = vp_grow((void **)&os->inl, &os->capinl, os->ninl + os->nreq, sizeof(*os->inl));
	if (err)
		return err;
	memcpy(os->inl + os->ninl, os->req, os->nreq * sizeof(*os->req));
	n = os->ninl + os->nreq;
	qsort(os->inl, n, sizeof(*os->inl), u32_cmp);
	for (i = 0, os->ninl = 0; i < n; i++)
		if (!os->ninl || os->inl[os->ninl - 1] != os->inl[i])
			os->inl[os->ninl++] = os->inl[i];
	os->nreq = 0;
	err = tview_inlined(&os->tv, w->t, w->a, os);
	if (err)
		return err;
	vp_covar_release(&os->mat);
	err = vp_covar_resize(&os->mat, os->tv.nvars);
	if (err)
		return err;
	os->have_mat = 0;
	os->pending = 1;
	return 0;
}

int vp_sources_pass_begin(struct vp_sources *s)
{
	struct vp_sources_work *w = s->work;
	const struct vp_cct *t;
	size_t i, nent = 0;
	int err;

	if (!w || w->in_pass)
		return -EINVAL;
	t = w->t;
	free(w->target);
	free(w->estart);
	free(w->ent);
	w->ent = NULL;
	w->target = malloc(t->nnodes * sizeof(*w->target));
	w->estart = calloc(t->nnodes + 1, sizeof(*w->estart));
	if (!w->target || !w->estart)
		return -ENOMEM;
	for (i = 0; i < t->nnodes; i++)
		w->target[i] = -1;
	for (i = 0; i < w->nos; i++) {
		struct ostate *os = &w->os[i];

		err = prepare_origin(w, os);
		if (err)
			return err;
		if (!os->pending)
			continue;
		w->target[os->h] = (int32_t)i;
		for (size_t k = 0; k < os->tv.nt; k++)
			w->estart[os->tv.node[k] + 1]++;
		nent += os->tv.nt;
	}
	for (i = 0; i < t->nnodes; i++)
		w->estart[i + 1] += w->estart[i];
	w->ent = malloc((nent ? nent : 1) * sizeof(*w->ent));
	if (!w->ent)
		return -ENOMEM;
	{
		uint32_t *fill = calloc(t->nnodes, sizeof(*fill));

		if (!fill)
			return -ENOMEM;
		for (i = 0; i < w->nos; i++) {
			const struct ostate *os = &w->os[i];
			const struct tview *tv = &os->tv;
			/* var of the T_H parent of each T_H node: the
			 * nearest explored ancestor in depth-first order */
			uint32_t stack[64], *st = stack, *heap = NULL;
			size_t sp = 0;

			if (!os->pending)
				continue;
			if (tv->nt > 64) {
				heap = malloc(tv->nt * sizeof(*heap));
				if (!heap) {
					free(fill);
					return -ENOMEM;
				}
				st = heap;
			}
			for (size_t k = 0; k < tv->nt; k++) {
				uint32_t node = tv->node[k];
				struct pentry *e = &w->ent[w->estart[node] + fill[node]++];

				while (sp && k >= st[sp - 1] + tv->tsize[st[sp - 1]])
					sp--;
				e->o = (uint32_t)i;
				e->add = tv->var[k];
				e->sub = sp ? tv->var[st[sp - 1]] : 0;
				if (tv->explored[k])
					st[sp++] = (uint32_t)k;
			}
			free(heap);
		}
		free(fill);
	}
	w->nent = nent;
	/* The first pass counts calls per invocation of every significant
	 * parent; later ones do not need to. */
	free(w->count);
	w->count = NULL;
	if (!s->calls) {
		s->calls = calloc(3 * t->nnodes, sizeof(*s->calls));
		w->count = calloc(t->nnodes, 1);
		if (!s->calls || !w->count)
			return -ENOMEM;
		for (i = 1; i < t->nnodes; i++)
			w->count[i] = w->a->significant[i] && t->nodes[i].nchildren;
	}
	threads_reset(w);
	w->in_pass = 1;
	return 0;
}

int vp_sources_pass_callsite(struct vp_sources *s, uint32_t id, uint32_t flags)
{
	struct vp_sources_work *w = s->work;
	int err;

	if (!w)
		return -EINVAL;
	err = vp_grow_zeroed((void **)&w->csflags, &w->ncs, (size_t)id + 1, 1);
	if (err)
		return err;
	w->csflags[id] = (uint8_t)flags;
	return 0;
}

static struct pthread *get_thread(struct vp_sources_work *w, uint32_t idx)
{
	if (vp_grow_zeroed((void **)&w->threads, &w->nthreads, (size_t)idx + 1,
			   sizeof(*w->threads)))
		return NULL;
	return &w->threads[idx];
}

static int frame_buffers(struct vp_sources_work *w, struct pframe *f)
{
	const struct vp_cct_node *n = &w->t->nodes[f->node];
	int err;

	f->ncnt = 0;
	f->nacc = 0;
	if (w->count && w->count[f->node]) {
		err = vp_grow((void **)&f->cnt, &f->cntcap, n->nchildren, sizeof(*f->cnt));
		if (err)
			return err;
		memset(f->cnt, 0, n->nchildren * sizeof(*f->cnt));
		f->ncnt = n->nchildren;
	}
	if (w->target[f->node] >= 0) {
		size_t nv = w->os[w->target[f->node]].tv.nvars;

		err = vp_grow((void **)&f->acc, &f->acccap, nv, sizeof(*f->acc));
		if (err)
			return err;
		memset(f->acc, 0, nv * sizeof(*f->acc));
		f->nacc = nv;
	}
	return 0;
}

/* The same pairing as the builder in cct.c, so that every invocation lands
 * in the node and the pairing it had when the tree was built. */
static int pass_call(struct vp_sources_work *w, struct pthread *ts, const struct vp_event *ev)
{
	int tail = ev->callsite < w->ncs && (w->csflags[ev->callsite] & VP_CS_TRAMPOLINE);
	uint32_t id;
	struct pframe *f;

	while (ts->depth) {
		const struct pframe *top = &ts->frames[ts->depth - 1];

		if (!vp_pair_dead_on_call(top->sp, ev->sp, tail))
			break;
		ts->depth--; /* retired: its invocation counts nowhere */
	}
	if (ts->depth) {
		struct pframe *pf = &ts->frames[ts->depth - 1];

		if (pf->cnode != VP_NO_NODE && pf->cfunc == ev->func && pf->ccs == ev->callsite) {
			id = pf->cnode;
		} else {
			id = vp_cct_find(w->t, pf->node, ev->func, ev->callsite);
			pf->cfunc = ev->func;
			pf->ccs = ev->callsite;
			pf->cnode = id;
		}
	} else {
		id = vp_cct_find(w->t, VP_NODE_ROOT, ev->func, ev->callsite);
	}
	/* The tree was built from these very events: a missing node means
	 * the data changed under us. */
	if (id == VP_NO_NODE)
		return -EINVAL;
	if (ts->depth == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 64;
		struct pframe *fr = realloc(ts->frames, cap * sizeof(*fr));

		if (!fr)
			return -ENOMEM;
		memset(fr + ts->cap, 0, (cap - ts->cap) * sizeof(*fr));
		ts->frames = fr;
		ts->cap = cap;
	}
	f = &ts->frames[ts->depth++];
	f->sp = ev->sp;
	f->t0 = ev->time;
	f->node = id;
	f->func = ev->func;
	f->cnode = VP_NO_NODE;
	return frame_buffers(w, f);
}

static void pass_complete(struct vp_sources *s, struct pthread *ts, uint64_t time)
{
	struct vp_sources_work *w = s->work;
	struct pframe *f = &ts->frames[ts->depth - 1];
	const struct vp_cct_node *n = &w->t->nodes[f->node];
	double dur = time >= f->t0 ? (double)(time - f->t0) : 0.0;

	if (f->nacc) {
		struct ostate *os = &w->os[w->target[f->node]];

		f->acc[0] += dur;
		vp_covar_add(&os->mat, f->acc);
	}
	for (size_t i = 0; i < f->ncnt; i++) {
		uint32_t k = f->cnt[i];

		s->calls[3 * (size_t)n->children[i] + (k > 2 ? 2 : k)]++;
	}
	ts->depth--;
	if (!ts->depth)
		return;
	if (ts->frames[ts->depth - 1].ncnt)
		ts->frames[ts->depth - 1].cnt[n->slot]++;
	for (uint32_t e = w->estart[f->node]; e < w->estart[f->node + 1]; e++) {
		const struct pentry *pe = &w->ent[e];
		uint32_t hd = w->t->nodes[w->os[pe->o].h].depth - 1;
		struct pframe *hf;

		if (hd >= ts->depth)
			continue;
		hf = &ts->frames[hd];
		if (hf->node != w->os[pe->o].h || !hf->nacc)
			continue;
		hf->acc[pe->add] += dur;
		hf->acc[pe->sub] -= dur;
	}
}

static void pass_return(struct vp_sources *s, struct pthread *ts, const struct vp_event *ev)
{
	uint64_t sp = vp_pair_entry_sp(ev->sp);
	const struct pframe *top;

	while (ts->depth && vp_pair_dead_on_return(ts->frames[ts->depth - 1].sp, sp))
		ts->depth--;
	top = ts->depth ? &ts->frames[ts->depth - 1] : NULL;
	if (!top || top->sp != sp || top->func != ev->func)
		return;
	pass_complete(s, ts, ev->time);
}

int vp_sources_pass_feed(struct vp_sources *s, const struct vp_event *ev, size_t n)
{
	struct vp_sources_work *w = s->work;
	int err;

	if (!w || !w->in_pass)
		return -EINVAL;
	for (size_t i = 0; i < n; i++, ev++) {
		struct pthread *ts = get_thread(w, ev->thread);

		if (!ts)
			return -ENOMEM;
		s->pass_events++;
		if (ev->kind == VP_EV_ENTRY) {
			err = pass_call(w, ts, ev);
			if (err)
				return err;
		} else {
			pass_return(s, ts, ev);
		}
	}
	return 0;
}

/* 2 when exactly once in every invocation, 1 when in more than @p of them. */
static enum vp_once once_class(const uint64_t *c, double p)
{
	uint64_t total = c[0] + c[1] + c[2];

	if (!total)
		return VP_ONCE_UNKNOWN;
	if (c[1] == total)
		return VP_ONCE_EXACT;
	if ((double)c[1] > p * (double)total)
		return VP_ONCE_LIKELY;
	return VP_ONCE_NOT;
}

int vp_sources_pass_end(struct vp_sources *s)
{
	struct vp_sources_work *w = s->work;

	if (!w || !w->in_pass)
		return -EINVAL;
	w->in_pass = 0;
	if (w->count) {
		for (size_t i = 1; i < w->t->nnodes; i++)
			s->once[i] = (uint8_t)once_class(&s->calls[3 * i],
							 s->params.once_probability);
		free(w->count);
		w->count = NULL;
	}
	for (size_t i = 0; i < w->nos; i++) {
		if (w->os[i].pending) {
			w->os[i].pending = 0;
			w->os[i].have_mat = 1;
		}
	}
	s->passes++;
	return eval_all(s);
}

static int pass_callsite(void *s, uint32_t id, uint32_t flags)
{
	return vp_sources_pass_callsite(s, id, flags);
}

static int pass_feed(void *s, const struct vp_event *ev, size_t n)
{
	return vp_sources_pass_feed(s, ev, n);
}

static int run_pass(struct vp_sources *s, struct vp_reader *r)
{
	struct vp_event_consumer c = { s, pass_callsite, pass_feed };
	int err = vp_reader_rewind(r);

	if (!err)
		err = vp_sources_pass_begin(s);
	if (!err)
		err = vp_reader_pump(r, &c);
	if (!err)
		err = vp_sources_pass_end(s);
	return err;
}

int vp_sources_run(struct vp_sources *s, const struct vp_cct *t, const struct vp_analysis *a,
		   struct vp_reader *r, const struct vp_sources_params *p)
{
	int err;

	err = vp_sources_start(s, t, a, p);
	if (err)
		return err;
	while (r && vp_sources_more(s)) {
		err = run_pass(s, r);
		if (err)
			goto fail;
	}
	err = vp_sources_finish(s);
	if (err)
		goto fail;
	return 0;
fail:
	vp_sources_release(s);
	return err;
}
