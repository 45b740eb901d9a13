/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vcg.c - Steps 3 to 5 of Dominant Variance Analysis (Kumar and Pande,
 * §4-7): label calling-context nodes Task, Contributor or Contrast, extract
 * the base layer of VCG patterns, merge subtrees bottom-up within each
 * pattern and then whole patterns, layer by layer (the merge of two
 * patterns, with its compatibility checks, exact statistics and
 * Kolmogorov-Smirnov cost under tau_S, is vcg-merge.c's), and finally
 * prioritise and trim by VIM with beta.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vcg-pattern.h"
#include "vcg.h"

void vp_vcg_params_default(struct vp_vcg_params *p)
{
	p->tau = 0.4;
	p->beta = 0.1;
}

int vp_vcg_params_check(const struct vp_vcg_params *p, char *err, size_t errlen)
{
	const char *what = NULL;

	if (!(p->tau >= 0.0 && p->tau <= 1.0))
		what = "tau must be between 0 and 1";
	else if (!(p->beta >= 0.0 && p->beta <= 1.0))
		what = "beta must be between 0 and 1";
	return vp_param_result(what, err, errlen);
}

const char *vp_vcg_type_name(enum vp_vcg_type t)
{
	switch (t) {
	case VP_VCG_TASK:
		return "task";
	case VP_VCG_CONTRIBUTOR:
		return "contributor";
	case VP_VCG_CONTRAST:
		return "contrast";
	default:
		return "unused";
	}
}

/* ---- call contexts ---- */

/* The interned contexts' index: its entries are context ids. */
struct cc_key {
	const struct gctx *c;
	const struct vp_chain_elem *e;
	uint32_t len;
};

static int cc_eq(const void *entry, const void *key)
{
	const struct cc_key *k = key;
	uint32_t id = *(const uint32_t *)entry;

	return k->c->cclen[id] == k->len &&
	       !memcmp(k->c->ccpool + k->c->ccoff[id], k->e, k->len * sizeof(*k->e));
}

static void gctx_init(struct gctx *c)
{
	memset(c, 0, sizeof(*c));
	vp_hashtab_init(&c->ccindex, sizeof(uint32_t), 0, cc_eq);
}

static uint32_t cc_intern(struct gctx *c, const struct vp_chain_elem *e, uint32_t len)
{
	struct cc_key k = { c, e, len };
	uint64_t hash;
	void *entry;

	if (c->err)
		return 0;
	hash = vp_hash_mix(vp_hash_mem(e, len * sizeof(*e)), len);
	entry = vp_hashtab_find(&c->ccindex, hash, &k);
	if (entry)
		return *(uint32_t *)entry;
	{
		size_t cap = c->capcc, cap2 = c->capcc, capp = c->capccpool;

		if (vp_grow((void **)&c->ccoff, &cap, c->ncc + 1, sizeof(*c->ccoff)) ||
		    vp_grow((void **)&c->cclen, &cap2, c->ncc + 1, sizeof(*c->cclen)) ||
		    vp_grow((void **)&c->ccpool, &capp, c->nccpool + len, sizeof(*c->ccpool))) {
			c->err = -ENOMEM;
			return 0;
		}
		c->capcc = cap;
		c->capccpool = capp;
	}
	if (vp_hashtab_insert(&c->ccindex, hash, &k, &entry) < 0) {
		c->err = -ENOMEM;
		return 0;
	}
	*(uint32_t *)entry = (uint32_t)c->ncc;
	memcpy(c->ccpool + c->nccpool, e, len * sizeof(*e));
	c->ccoff[c->ncc] = (uint32_t)c->nccpool;
	c->cclen[c->ncc] = len;
	c->nccpool += len;
	return (uint32_t)c->ncc++;
}

/* ---- Step 3: labels ---- */

int vp_vcg_label(const struct vp_cct *t, const struct vp_analysis *a, const struct vp_sources *s,
		 uint8_t *ret)
{
	uint8_t *role = calloc(t->nnodes, 1); /* 1 underlier, 2 transmitter */
	uint8_t *task_func;
	size_t nf = 0, i;

	if (!role)
		return -ENOMEM;
	for (i = 1; i < t->nnodes; i++)
		if (t->nodes[i].func + 1 > nf)
			nf = t->nodes[i].func + 1;
	task_func = calloc(nf + 1, 1);
	if (!task_func) {
		free(role);
		return -ENOMEM;
	}
	for (size_t o = 0; s && o < s->norigins; o++) {
		const struct vp_origin *or = &s->origins[o];

		for (size_t j = 0; j < or->nsources; j++) {
			const struct vp_source *src = &or->sources[j];

			role[src->underlier] |= 1;
			for (uint32_t k = 0; k + 1 < src->len; k++)
				role[src->chain[k]] |= 2;
		}
	}
	for (i = 1; i < t->nnodes; i++)
		if (a->high_variance[i])
			task_func[t->nodes[i].func] = 1;
	ret[VP_NODE_ROOT] = VP_VCG_UNUSED;
	for (i = 1; i < t->nnodes; i++) {
		if (a->high_variance[i])
			ret[i] = VP_VCG_TASK;
		else if (role[i] & 1)
			ret[i] = VP_VCG_CONTRIBUTOR;
		else if ((role[i] & 2) || (a->significant[i] && task_func[t->nodes[i].func]))
			ret[i] = VP_VCG_CONTRAST;
		else
			ret[i] = VP_VCG_UNUSED;
	}
	free(task_func);
	free(role);
	return 0;
}

/* ---- agglomerative clustering ---- */

/*
 * Groups of patterns with the same root (function and type) of at most
 * this size consider every pair, as the paper does.  Larger groups (a
 * function called from thousands of contexts) consider each pattern's
 * CLUSTER_WINDOW nearest neighbours by root mean, so that a layer costs
 * O(n) merges instead of O(n^2); the cheapest merges are among those.
 */
enum { CLUSTER_EXACT = 64, CLUSTER_WINDOW = 16 };

struct cand {
	double cost;
	uint32_t i, j;
};

static int cmp_cand(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;

	if (a->cost != b->cost)
		return a->cost < b->cost ? -1 : 1;
	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	return (a->j > b->j) - (a->j < b->j);
}

/* Merge costs already computed, by pair of point indices (never reused). */
struct cost_ent {
	uint64_t key;
	double cost;
};

static uint64_t pair_key(uint32_t i, uint32_t j)
{
	return (uint64_t)i << 32 | j;
}

static int cache_put(struct vp_hashtab *cc, uint64_t k, double cost)
{
	void *entry;

	if (vp_hashtab_insert(cc, vp_hash_mix(k, 0), &k, &entry) < 0)
		return -ENOMEM;
	((struct cost_ent *)entry)->cost = cost;
	return 0;
}

static int cache_get(const struct vp_hashtab *cc, uint64_t k, double *cost)
{
	const struct cost_ent *e = vp_hashtab_find(cc, vp_hash_mix(k, 0), &k);

	if (!e)
		return 0;
	*cost = e->cost;
	return 1;
}

/* The cost of merging @p and @q, or -1 when they cannot merge within tau. */
static double pair_cost(struct gctx *c, const struct wpat *p, const struct wpat *q)
{
	struct wpat *m;
	double d, cost;

	if (p->nodes[0].func != q->nodes[0].func || p->nodes[0].type != q->nodes[0].type)
		return -1.0;
	d = vp_ks_gauss(p->nodes[0].st.mean, vp_stats_stddev(&p->nodes[0].st),
			q->nodes[0].st.mean, vp_stats_stddev(&q->nodes[0].st));
	if (d > c->tau)
		return -1.0;
	/* two lone nodes: the root's D is the whole average */
	if (p->nn == 1 && q->nn == 1 && !p->ns && !q->ns)
		return d;
	m = vp_vcg_try_merge(c, p, q, &cost);
	if (!m)
		return -1.0;
	vp_wpat_free(m);
	return cost;
}

struct corder {
	uint32_t idx, func, type;
	double mean;
};

/* 0 when the two points have the same root function and type. */
static int cmp_group(const struct corder *a, const struct corder *b)
{
	return a->func != b->func || a->type != b->type;
}

static int cmp_corder(const void *x, const void *y)
{
	const struct corder *a = x, *b = y;

	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->mean != b->mean)
		return a->mean < b->mean ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int consider(struct gctx *c, struct vp_hashtab *cache, struct wpat **pts, uint32_t i,
		    uint32_t j, struct cand **cv, size_t *ncv, size_t *capcv)
{
	uint64_t k;
	double cost;

	if (i > j) {
		uint32_t t = i;

		i = j;
		j = t;
	}
	k = pair_key(i, j);
	if (!cache_get(cache, k, &cost)) {
		cost = pair_cost(c, pts[i], pts[j]);
		if (c->err)
			return c->err;
		if (cache_put(cache, k, cost))
			return c->err = -ENOMEM;
	}
	if (cost < 0.0)
		return 0;
	if (vp_grow((void **)cv, capcv, *ncv + 1, sizeof(**cv)))
		return c->err = -ENOMEM;
	(*cv)[(*ncv)++] = (struct cand){ cost, i, j };
	return 0;
}

/*
 * Layer by layer: every compatible pair within tau is a candidate; the
 * cheapest disjoint pairs merge and the rest carry over, until a layer
 * merges nothing.  @pts (owned) is replaced by the final layer;
 * @count_layers says whether to count the layers (the pass across
 * patterns).
 */
static int cluster(struct gctx *c, struct wpat ***pts_io, uint32_t *n_io, int count_layers)
{
	struct wpat **pts = *pts_io;
	uint32_t n = *n_io, cap = n;
	uint8_t *alive = NULL;
	struct corder *ord = NULL;
	struct cand *cv = NULL;
	struct vp_hashtab cache;
	size_t ncv = 0, capcv = 0, capord = 0;
	int err = 0;

	if (n < 2)
		return 0;
	vp_hashtab_init(&cache, sizeof(struct cost_ent), sizeof(uint64_t), NULL);
	alive = malloc(n);
	if (!alive)
		return c->err = -ENOMEM;
	memset(alive, 1, n);
	for (;;) {
		uint32_t nmerged = 0, na = 0;

		if (vp_grow((void **)&ord, &capord, n, sizeof(*ord))) {
			err = c->err = -ENOMEM;
			break;
		}
		for (uint32_t i = 0; i < n; i++) {
			if (!alive[i])
				continue;
			const struct wnode *r = &pts[i]->nodes[0];

			ord[na++] = (struct corder){ i, r->func, r->type, r->st.mean };
		}
		qsort(ord, na, sizeof(*ord), cmp_corder);
		ncv = 0;
		for (uint32_t a = 0, b; a < na && !err; a = b) {
			for (b = a + 1; b < na && !cmp_group(&ord[a], &ord[b]); b++)
				;
			for (uint32_t x = a; x < b && !err; x++) {
				uint32_t last = b - a <= CLUSTER_EXACT ? b : x + 1 + CLUSTER_WINDOW;

				for (uint32_t y = x + 1; y < b && y < last && !err; y++)
					err = consider(c, &cache, pts, ord[x].idx, ord[y].idx, &cv,
						       &ncv, &capcv);
			}
		}
		if (err || !ncv)
			break;
		qsort(cv, ncv, sizeof(*cv), cmp_cand);
		for (size_t q = 0; q < ncv && !err; q++) {
			struct wpat *mp;
			double cost;

			if (!alive[cv[q].i] || !alive[cv[q].j])
				continue;
			mp = vp_vcg_try_merge(c, pts[cv[q].i], pts[cv[q].j], &cost);
			if (!mp) {
				err = c->err ? c->err : -EINVAL;
				break;
			}
			if (n == cap) {
				uint32_t ncap = cap * 2;
				struct wpat **np = realloc(pts, ncap * sizeof(*np));
				uint8_t *nal = np ? realloc(alive, ncap) : NULL;

				if (np)
					pts = np;
				if (nal)
					alive = nal;
				if (!np || !nal) {
					vp_wpat_free(mp);
					err = c->err = -ENOMEM;
					break;
				}
				cap = ncap;
			}
			alive[cv[q].i] = alive[cv[q].j] = 0;
			vp_wpat_free(pts[cv[q].i]);
			vp_wpat_free(pts[cv[q].j]);
			pts[cv[q].i] = pts[cv[q].j] = NULL;
			pts[n] = mp;
			alive[n++] = 1;
			nmerged++;
			c->merges++;
		}
		if (err || !nmerged)
			break;
		if (count_layers)
			c->layers++;
	}
	/* compact: the survivors in order of creation */
	{
		uint32_t k = 0;

		for (uint32_t i = 0; i < n; i++) {
			if (alive[i])
				pts[k++] = pts[i];
			else if (pts[i])
				vp_wpat_free(pts[i]);
		}
		n = k;
	}
	free(alive);
	free(ord);
	free(cv);
	vp_hashtab_release(&cache);
	*pts_io = pts;
	*n_io = n;
	return err;
}

/* ---- Step 3: the base layer ---- */

struct base {
	struct wpat *p;
	uint32_t *end0, *endn, *ends; /* per node: segments it is the underlier of */
};

static void base_free(struct base *b)
{
	vp_wpat_free(b->p);
	free(b->end0);
	free(b->endn);
	free(b->ends);
}

/* The CCT node a base node stands for. */
static uint32_t base_ct(const struct base *b, uint32_t v)
{
	return b->p->pool[b->p->nodes[v].ct0];
}

/*
 * Step 4 within a base pattern, bottom-up: the children of every node are
 * the points of one clustering.  Each node's children are kept as
 * references, to a base node (a subtree nothing merged in yet) or to a
 * pattern the clustering made, and the whole is laid out once at the end:
 * building every subtree's pattern on the way copied all below every node
 * again, quadratic in the depth of a recursion.  Only children that share
 * their root's function and type with a sibling, the only ones the
 * clustering can merge, become patterns before that.
 */
struct kref {
	uint32_t v;	 /* base node, when w is NULL */
	struct wpat *w;
};

/* A base node being laid out, and the next of its children. */
struct frame {
	uint32_t v, y, next;
};

struct imerge {
	const struct base *b;
	struct kref *refs; /* children of base node v at refs[kid0 of v ...] */
	uint32_t *cnt;	   /* how many */
};

/*
 * Where a segment entering below frame @top - 1 starts: at the frame of its
 * originator, and @ext becomes NONE (internal); at frame 0 otherwise,
 * still external; at @top (nothing above) when it is internal already.
 */
static uint32_t path_start(const struct base *b, const struct frame *st, uint32_t top,
			   uint32_t ext, uint32_t *ext_ret)
{
	*ext_ret = ext;
	if (ext == NONE)
		return top;
	for (uint32_t j = top; j-- > 0;) {
		if (base_ct(b, st[j].v) == ext) {
			*ext_ret = NONE;
			return j;
		}
	}
	return 0;
}

/* A copy of base node @v under @parent, pushed to be laid out. */
static int lay_base(struct gctx *c, struct wpat *P, const struct imerge *im, uint32_t v,
		    uint32_t parent, struct frame **st, size_t *cap, uint32_t *sp)
{
	const struct wpat *B = im->b->p;
	const struct wnode *bv = &B->nodes[v];
	uint32_t y = vp_wpat_node(c, P), kid0;

	if (c->err)
		return c->err;
	P->nodes[y].func = bv->func;
	P->nodes[y].type = bv->type;
	P->nodes[y].st = bv->st;
	P->nodes[y].parent = parent;
	P->nodes[y].cc0 = vp_wpat_copy(c, P, B->pool + bv->cc0, bv->ncc);
	P->nodes[y].ncc = bv->ncc;
	P->nodes[y].ct0 = vp_wpat_copy(c, P, B->pool + bv->ct0, bv->nct);
	P->nodes[y].nct = bv->nct;
	kid0 = vp_wpat_alloc(c, P, im->cnt[v]);
	if (c->err)
		return c->err;
	P->nodes[y].kid0 = kid0;
	P->nodes[y].nkids = im->cnt[v];
	if (vp_grow((void **)st, cap, (size_t)*sp + 1, sizeof(**st)))
		return c->err = -ENOMEM;
	(*st)[(*sp)++] = (struct frame){ v, y, 0 };
	return 0;
}

/* Pattern @K's nodes and segments, relocated under the top frame; its
 * segments from further up prefixed with the frames from their
 * originator. */
static int lay_pattern(struct gctx *c, struct wpat *P, const struct imerge *im,
		       const struct frame *st, uint32_t sp, const struct wpat *K)
{
	uint32_t off = P->nn;

	for (uint32_t x = 0; x < K->nn; x++) {
		const struct wnode *kn = &K->nodes[x];
		uint32_t y = vp_wpat_node(c, P), o;

		if (c->err)
			return c->err;
		P->nodes[y] = *kn;
		P->nodes[y].parent = kn->parent == NONE ? st[sp - 1].y : kn->parent + off;
		o = vp_wpat_copy(c, P, K->pool + kn->kid0, kn->nkids);
		if (c->err)
			return c->err;
		for (uint32_t i = 0; i < kn->nkids; i++)
			P->pool[o + i] += off;
		P->nodes[y].kid0 = o;
		P->nodes[y].cc0 = vp_wpat_copy(c, P, K->pool + kn->cc0, kn->ncc);
		P->nodes[y].ct0 = vp_wpat_copy(c, P, K->pool + kn->ct0, kn->nct);
	}
	for (uint32_t s = 0; s < K->ns; s++) {
		const struct wseg *ks = &K->segs[s];
		struct wseg *d = vp_wpat_seg(c, P);
		uint32_t ext, j, o;

		if (!d)
			return c->err;
		*d = *ks;
		j = path_start(im->b, st, sp, ks->ext, &ext);
		d->ext = ext;
		d->len = ks->len + (sp - j);
		o = vp_wpat_alloc(c, P, d->len);
		if (c->err)
			return c->err;
		d = &P->segs[P->ns - 1];
		d->n0 = o;
		for (; j < sp; j++)
			P->pool[o++] = st[j].y;
		for (uint32_t i = 0; i < ks->len; i++)
			P->pool[o + i] = K->pool[ks->n0 + i] + off;
		d->g0 = vp_wpat_copy(c, P, K->pool + ks->g0, 2 * ks->ng);
		d = &P->segs[P->ns - 1];
		d->c0 = vp_wpat_copy(c, P, K->pool + ks->c0, ks->nc);
	}
	return c->err;
}

/* The segments ending at the top frame's base node, from an ancestor:
 * their part here starts at the originator's frame, or at frame 0 when it
 * is further up. */
static int lay_ends(struct gctx *c, struct wpat *P, const struct imerge *im,
		    const struct frame *st, uint32_t sp)
{
	const struct base *b = im->b;
	const struct wpat *B = b->p;
	uint32_t v = st[sp - 1].v;

	for (uint32_t e = 0; e < b->endn[v]; e++) {
		const struct wseg *bs = &B->segs[b->ends[b->end0[v] + e]];
		struct wseg *d = vp_wpat_seg(c, P);
		uint32_t ext, j, o;

		if (!d)
			return c->err;
		*d = *bs;
		j = path_start(b, st, sp - 1, base_ct(b, B->pool[bs->n0]), &ext);
		d->ext = ext;
		d->len = sp - j;
		o = vp_wpat_alloc(c, P, d->len);
		if (c->err)
			return c->err;
		for (uint32_t x = 0; j < sp; j++)
			P->pool[o + x++] = st[j].y;
		P->segs[P->ns - 1].n0 = o;
		P->segs[P->ns - 1].g0 = vp_wpat_copy(c, P, B->pool + bs->g0, 2 * bs->ng);
		P->segs[P->ns - 1].c0 = vp_wpat_copy(c, P, B->pool + bs->c0, bs->nc);
	}
	return c->err;
}

/*
 * The pattern of base node @v's subtree with its children as they stand:
 * nodes depth first, segments of each child's subtree in turn, then those
 * ending at the node (what assembling one level at a time gives).  The
 * patterns referenced in the subtree are consumed.
 */
static struct wpat *lay_out(struct gctx *c, const struct imerge *im, uint32_t v)
{
	const struct wpat *B = im->b->p;
	struct wpat *P = vp_wpat_new(c);
	struct frame *st = NULL;
	size_t cap = 0;
	uint32_t sp = 0;

	if (!P || lay_base(c, P, im, v, NONE, &st, &cap, &sp))
		goto fail;
	while (sp) {
		struct frame *f = &st[sp - 1];
		struct kref *r;
		uint32_t y = f->y;

		if (f->next == im->cnt[f->v]) {
			if (lay_ends(c, P, im, st, sp))
				goto fail;
			sp--;
			continue;
		}
		r = &im->refs[B->nodes[f->v].kid0 + f->next];
		P->pool[P->nodes[y].kid0 + f->next++] = P->nn;
		if (!r->w) {
			if (lay_base(c, P, im, r->v, y, &st, &cap, &sp))
				goto fail;
			continue;
		}
		if (lay_pattern(c, P, im, st, sp, r->w))
			goto fail;
		vp_wpat_free(r->w);
		r->w = NULL;
	}
	free(st);
	return P;
fail:
	free(st);
	vp_wpat_free(P);
	return NULL;
}

static uint32_t kref_func(const struct imerge *im, const struct kref *r)
{
	return r->w ? r->w->nodes[0].func : im->b->p->nodes[r->v].func;
}

static uint32_t kref_type(const struct imerge *im, const struct kref *r)
{
	return r->w ? r->w->nodes[0].type : im->b->p->nodes[r->v].type;
}

static const struct vp_stats *kref_stats(const struct imerge *im, const struct kref *r)
{
	return r->w ? &r->w->nodes[0].st : &im->b->p->nodes[r->v].st;
}

/* Whether two of the @n children at @ord (one function and type) are
 * close enough at the root for the clustering to try merging them; past
 * CLUSTER_EXACT, it considers neighbours only: assume so. */
static int may_merge(const struct gctx *c, const struct imerge *im, const uint32_t *ord, uint32_t n)
{
	if (n > CLUSTER_EXACT)
		return 1;
	for (uint32_t x = 0; x < n; x++) {
		const struct vp_stats *a = kref_stats(im, &im->refs[ord[x]]);

		for (uint32_t y = x + 1; y < n; y++) {
			const struct vp_stats *b = kref_stats(im, &im->refs[ord[y]]);

			if (vp_ks_gauss(a->mean, vp_stats_stddev(a), b->mean, vp_stats_stddev(b)) <=
			    c->tau)
				return 1;
		}
	}
	return 0;
}

static int cmp_kref(const void *x, const void *y, void *arg)
{
	const struct imerge *im = arg;
	const struct kref *a = &im->refs[*(const uint32_t *)x];
	const struct kref *b = &im->refs[*(const uint32_t *)y];

	if (kref_func(im, a) != kref_func(im, b))
		return kref_func(im, a) < kref_func(im, b) ? -1 : 1;
	if (kref_type(im, a) != kref_type(im, b))
		return kref_type(im, a) < kref_type(im, b) ? -1 : 1;
	return (*(const uint32_t *)x > *(const uint32_t *)y) -
	       (*(const uint32_t *)x < *(const uint32_t *)y);
}

/*
 * Cluster base node @v's children.  A child alone with its root's function
 * and type cannot merge and stays as it is, and so do the children of a
 * group whose roots are all too far apart (the Kolmogorov-Smirnov distance
 * of the roots alone exceeds tau); the clustering of the others is the
 * clustering of all (the pairs it considers and their order are the
 * same), and its result comes in the same order: the survivors where they
 * were, then what merged.
 */
static int cluster_kids(struct gctx *c, struct imerge *im, uint32_t v)
{
	const struct wnode *bv = &im->b->p->nodes[v];
	struct kref *list = im->refs + bv->kid0;
	uint32_t n = im->cnt[v], m = 0, *ord = malloc(n * sizeof(*ord));
	uint8_t *member = calloc(n, 1);
	struct wpat **pts = malloc(n * sizeof(*pts)), **mw = calloc(n, sizeof(*mw));
	int err = 0;

	if (!ord || !member || !pts || !mw) {
		err = c->err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		ord[i] = bv->kid0 + i;
	qsort_r(ord, n, sizeof(*ord), cmp_kref, im);
	for (uint32_t a = 0, e; a < n; a = e) {
		const struct kref *ra = &im->refs[ord[a]];

		for (e = a + 1; e < n && kref_func(im, &im->refs[ord[e]]) == kref_func(im, ra) &&
				kref_type(im, &im->refs[ord[e]]) == kref_type(im, ra);
		     e++)
			;
		if (e - a < 2 || !may_merge(c, im, ord + a, e - a))
			continue;
		for (uint32_t x = a; x < e; x++)
			member[ord[x] - bv->kid0] = 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (!member[i])
			continue;
		mw[i] = list[i].w ? list[i].w : lay_out(c, im, list[i].v);
		list[i].w = NULL;
		if (!mw[i]) {
			err = c->err ? c->err : -ENOMEM;
			goto out;
		}
		mw[i]->mark = 1;
		pts[m++] = mw[i];
	}
	if (m && (err = cluster(c, &pts, &m, 0)))
		goto out;
	/* survivors in their places, then the merged ones */
	{
		uint32_t k = 0, s = 0;

		for (uint32_t i = 0; i < n; i++) {
			if (!member[i]) {
				list[k++] = list[i];
			} else if (s < m && pts[s] == mw[i] && pts[s]->mark) {
				list[k++] = (struct kref){ 0, pts[s++] };
			}
		}
		for (; s < m; s++)
			list[k++] = (struct kref){ 0, pts[s] };
		for (uint32_t i = 0; i < k; i++)
			if (list[i].w)
				list[i].w->mark = 0;
		for (uint32_t i = k; i < n; i++)
			list[i] = (struct kref){ 0, NULL };
		im->cnt[v] = k;
		m = 0;
	}
out:
	for (uint32_t i = 0; i < m; i++)
		vp_wpat_free(pts[i]);
	free(ord);
	free(member);
	free(pts);
	free(mw);
	return err;
}

/* Step 4 within the base pattern @b: its merged pattern. */
static struct wpat *internal_merge(struct gctx *c, const struct base *b)
{
	const struct wpat *B = b->p;
	struct imerge im = { b, calloc(B->np ? B->np : 1, sizeof(*im.refs)),
			     malloc((B->nn ? B->nn : 1) * sizeof(*im.cnt)) };
	struct wpat *ret = NULL;

	if (!im.refs || !im.cnt) {
		c->err = -ENOMEM;
		goto out;
	}
	/* children come after their parent */
	for (uint32_t v = B->nn; v-- > 0;) {
		const struct wnode *bv = &B->nodes[v];

		im.cnt[v] = bv->nkids;
		for (uint32_t i = 0; i < bv->nkids; i++)
			im.refs[bv->kid0 + i] = (struct kref){ B->pool[bv->kid0 + i], NULL };
		if (bv->nkids > 1 && cluster_kids(c, &im, v))
			goto out;
	}
	ret = lay_out(c, &im, 0);
out:
	for (uint32_t i = 0; im.refs && i < B->np; i++)
		vp_wpat_free(im.refs[i].w);
	free(im.refs);
	free(im.cnt);
	return ret;
}

/* Step 3's working state: where every labelled CCT node went. */
struct extraction {
	const uint8_t *label;
	uint32_t *vpar;	 /* nearest labelled ancestor, NONE at a root */
	uint32_t *pat;	 /* base pattern of a labelled node */
	uint32_t *loc;	 /* its index in that pattern */
	uint32_t *nkid;	 /* labelled nodes whose VCG parent it is */
	struct vp_chain_elem *chain;
	struct base *bs;
	uint32_t nb, capb;
};

/* The call context of CCT node @i from its VCG parent (or the root). */
static uint32_t extract_cc(struct gctx *c, struct extraction *x, uint32_t i)
{
	const struct vp_cct *t = c->t;
	uint32_t len = 0, n;

	for (n = i; n != VP_NODE_ROOT && n != x->vpar[i]; n = t->nodes[n].parent)
		len++;
	n = i;
	for (uint32_t k = len; k > 0; k--, n = t->nodes[n].parent)
		x->chain[k - 1] = (struct vp_chain_elem){ t->nodes[n].func, t->nodes[n].callsite };
	return cc_intern(c, x->chain, len);
}

/* Labelled CCT node @i becomes a node of its pattern (a new one at a root). */
static int extract_node(struct gctx *c, struct extraction *x, uint32_t i)
{
	const struct vp_cct_node *cn = &c->t->nodes[i];
	struct wnode *n;
	struct wpat *P;
	uint32_t at, cc;

	if (x->vpar[i] == NONE) {
		size_t cap = x->capb;

		if (vp_grow((void **)&x->bs, &cap, (size_t)x->nb + 1, sizeof(*x->bs)))
			return c->err = -ENOMEM;
		x->capb = (uint32_t)cap;
		memset(&x->bs[x->nb], 0, sizeof(x->bs[x->nb]));
		x->bs[x->nb].p = vp_wpat_new(c);
		if (!x->bs[x->nb].p)
			return c->err;
		x->pat[i] = x->nb++;
	} else {
		x->pat[i] = x->pat[x->vpar[i]];
	}
	P = x->bs[x->pat[i]].p;
	at = vp_wpat_node(c, P);
	cc = extract_cc(c, x, i);
	if (c->err)
		return c->err;
	x->loc[i] = at;
	P->nodes[at].kid0 = vp_wpat_alloc(c, P, x->nkid[i]);
	P->nodes[at].cc0 = vp_wpat_copy(c, P, &cc, 1);
	P->nodes[at].ct0 = vp_wpat_copy(c, P, &i, 1);
	if (c->err)
		return c->err;
	n = &P->nodes[at];
	n->func = cn->func;
	n->type = x->label[i];
	n->st = cn->stats;
	n->parent = x->vpar[i] == NONE ? NONE : x->loc[x->vpar[i]];
	n->ncc = 1;
	n->nct = 1;
	if (x->vpar[i] != NONE) {
		struct wnode *pn = &P->nodes[x->loc[x->vpar[i]]];

		P->pool[pn->kid0 + pn->nkids++] = at;
	}
	return 0;
}

/* The linear segment of source @j of originator @o, in H's pattern. */
static int extract_segment(struct gctx *c, struct extraction *x, uint32_t o, uint32_t j)
{
	const struct vp_origin *or = &c->s->origins[o];
	const struct vp_source *src = &or->sources[j];
	uint32_t h = or->node, off, k, g[2] = { o, j };
	struct wpat *P;
	struct wseg *d;

	if (!x->label[h])
		return 0;
	for (k = 0; k < src->len; k++)
		if (!x->label[src->chain[k]] || x->pat[src->chain[k]] != x->pat[h])
			return 0; /* cannot happen: segments are labelled */
	P = x->bs[x->pat[h]].p;
	d = vp_wpat_seg(c, P);
	if (!d)
		return c->err;
	d->ext = NONE;
	d->len = src->len + 1;
	d->how = (uint8_t)src->how;
	d->n = or->n;
	d->mean = src->mean;
	d->m2 = src->variance * (double)or->n;
	off = vp_wpat_alloc(c, P, d->len);
	if (c->err)
		return c->err;
	P->pool[off] = x->loc[h];
	for (k = 0; k < src->len; k++)
		P->pool[off + 1 + k] = x->loc[src->chain[k]];
	P->segs[P->ns - 1].n0 = off;
	P->segs[P->ns - 1].g0 = vp_wpat_copy(c, P, g, 2);
	P->segs[P->ns - 1].ng = 1;
	P->segs[P->ns - 1].c0 = vp_wpat_copy(c, P, &src->chain[0], 1);
	P->segs[P->ns - 1].nc = 1;
	return c->err;
}

/* Per node of a base pattern, the segments it is the underlier of. */
static int index_ends(struct base *b)
{
	const struct wpat *P = b->p;

	b->end0 = calloc((size_t)P->nn + 1, sizeof(*b->end0));
	b->endn = calloc((size_t)P->nn + 1, sizeof(*b->endn));
	b->ends = malloc((P->ns ? P->ns : 1) * sizeof(*b->ends));
	if (!b->end0 || !b->endn || !b->ends)
		return -ENOMEM;
	for (uint32_t i = 0; i < P->ns; i++)
		b->end0[P->pool[P->segs[i].n0 + P->segs[i].len - 1] + 1]++;
	for (uint32_t i = 0; i < P->nn; i++)
		b->end0[i + 1] += b->end0[i];
	for (uint32_t i = 0; i < P->ns; i++) {
		uint32_t w = P->pool[P->segs[i].n0 + P->segs[i].len - 1];

		b->ends[b->end0[w] + b->endn[w]++] = i;
	}
	return 0;
}

/* Step 3: one base pattern per root of the labelled forest. */
static int extract(struct gctx *c, const uint8_t *label, struct base **ret, uint32_t *nret)
{
	const struct vp_cct *t = c->t;
	const struct vp_sources *s = c->s;
	size_t nn = t->nnodes;
	struct extraction x = { label, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0 };
	int err = 0;

	*ret = NULL;
	*nret = 0;
	x.vpar = malloc(nn * sizeof(*x.vpar));
	x.pat = malloc(nn * sizeof(*x.pat));
	x.loc = malloc(nn * sizeof(*x.loc));
	x.nkid = calloc(nn, sizeof(*x.nkid));
	x.chain = malloc((nn ? nn : 1) * sizeof(*x.chain));
	if (!x.vpar || !x.pat || !x.loc || !x.nkid || !x.chain) {
		err = -ENOMEM;
		goto out;
	}
	/* parents have smaller ids than their children: one forward pass */
	for (size_t i = 0; i < nn; i++) {
		uint32_t p = i ? t->nodes[i].parent : NONE;

		x.pat[i] = x.loc[i] = x.vpar[i] = NONE;
		if (p != NONE && p != VP_NODE_ROOT)
			x.vpar[i] = label[p] ? p : x.vpar[p];
		if (label[i] && x.vpar[i] != NONE)
			x.nkid[x.vpar[i]]++;
	}
	for (uint32_t i = 1; i < nn && !err; i++)
		if (label[i])
			err = extract_node(c, &x, i);
	for (uint32_t o = 0; s && o < s->norigins && !err; o++)
		for (uint32_t j = 0; j < s->origins[o].nsources && !err; j++)
			err = extract_segment(c, &x, o, j);
	for (uint32_t q = 0; q < x.nb && !err; q++)
		err = index_ends(&x.bs[q]);
out:
	free(x.vpar);
	free(x.pat);
	free(x.loc);
	free(x.nkid);
	free(x.chain);
	if (err) {
		for (uint32_t q = 0; q < x.nb; q++)
			base_free(&x.bs[q]);
		free(x.bs);
		return c->err = err;
	}
	*ret = x.bs;
	*nret = x.nb;
	return 0;
}

/* ---- Step 5: prioritise, trim, and lay out the result ---- */

static void node_vims(struct gctx *c, struct wpat *P)
{
	for (uint32_t i = 0; i < P->nn; i++) {
		struct wnode *n = &P->nodes[i];

		n->vim = c->k * vp_stats_stddev(&n->st) * (double)n->st.n;
	}
	/* a Contributor's impact is the variance it contributes */
	for (uint32_t s = 0; s < P->ns; s++) {
		const struct wseg *d = &P->segs[s];
		struct wnode *w = &P->nodes[P->pool[d->n0 + d->len - 1]];
		double v = d->n ? c->k * sqrt(fmax(d->m2, 0.0) / (double)d->n) * (double)d->n : 0.0;

		if (v > w->vim)
			w->vim = v;
	}
	for (uint32_t i = 0; i < P->nn; i++)
		P->nodes[i].svim = P->nodes[i].vim;
	/* children always come after their parent */
	for (uint32_t i = P->nn; i-- > 1;)
		P->nodes[P->nodes[i].parent].svim += P->nodes[i].svim;
	P->vim = P->nn ? P->nodes[0].svim : 0.0;
}

static int cmp_kid(const void *x, const void *y, void *arg)
{
	const struct wpat *P = arg;
	const struct wnode *a = &P->nodes[*(const uint32_t *)x];
	const struct wnode *b = &P->nodes[*(const uint32_t *)y];

	if (a->svim != b->svim)
		return a->svim < b->svim ? 1 : -1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	return (*(const uint32_t *)x > *(const uint32_t *)y) -
	       (*(const uint32_t *)x < *(const uint32_t *)y);
}

static int cmp_pat(const void *x, const void *y)
{
	const struct wpat *a = *(struct wpat *const *)x, *b = *(struct wpat *const *)y;

	if (a->vim != b->vim)
		return a->vim < b->vim ? 1 : -1;
	if (a->nodes[0].func != b->nodes[0].func)
		return a->nodes[0].func < b->nodes[0].func ? -1 : 1;
	return a->pool[a->nodes[0].ct0] > b->pool[b->nodes[0].ct0] ? 1 : -1;
}

/* Sort children by subtree VIM and keep those within beta of the best. */
static void trim(struct wpat *P, double beta, size_t *removed)
{
	uint32_t *stack = malloc((P->nn ? P->nn : 1) * sizeof(*stack)), sp = 0;

	for (uint32_t i = 0; i < P->nn; i++)
		P->nodes[i].keep = 0;
	if (!stack)
		return; /* caller notices through keep == 0 of the root */
	P->nodes[0].keep = 1;
	stack[sp++] = 0;
	while (sp) {
		struct wnode *n = &P->nodes[stack[--sp]];
		uint32_t *k = P->pool + n->kid0;
		double best = 0.0;

		qsort_r(k, n->nkids, sizeof(*k), cmp_kid, P);
		if (n->nkids)
			best = P->nodes[k[0]].svim;
		for (uint32_t i = 0; i < n->nkids; i++) {
			if (P->nodes[k[i]].svim >= beta * best) {
				P->nodes[k[i]].keep = 1;
				stack[sp++] = k[i];
			}
		}
	}
	for (uint32_t i = 0; i < P->nn; i++)
		*removed += !P->nodes[i].keep;
	free(stack);
}

static int layout(struct gctx *c, struct vp_vcg *g, struct wpat **pts, uint32_t np)
{
	size_t nodes = 0, segs = 0, ids = 0, n = 0, s = 0, at = 0;
	uint32_t *stack = NULL, sp;

	for (uint32_t q = 0; q < np; q++) {
		struct wpat *P = pts[q];

		for (uint32_t i = 0; i < P->nn; i++) {
			const struct wnode *x = &P->nodes[i];

			if (!x->keep)
				continue;
			nodes++;
			ids += x->nkids + x->ncc + x->nct;
		}
		for (uint32_t i = 0; i < P->ns; i++) {
			const struct wseg *d = &P->segs[i];
			uint32_t k;

			for (k = 0; k < d->len && P->nodes[P->pool[d->n0 + k]].keep; k++)
				;
			if (k < d->len)
				continue;
			segs++;
			ids += 2 * d->len + d->nc; /* nodes, ols/cls entries, components */
		}
	}
	g->nodes = calloc(nodes ? nodes : 1, sizeof(*g->nodes));
	g->segments = calloc(segs ? segs : 1, sizeof(*g->segments));
	g->patterns = calloc(np ? np : 1, sizeof(*g->patterns));
	g->idpool = malloc((ids ? ids : 1) * sizeof(*g->idpool));
	if (!g->nodes || !g->segments || !g->patterns || !g->idpool)
		return c->err = -ENOMEM;
	/* nodes in depth-first order, children in priority order */
	for (uint32_t q = 0; q < np; q++) {
		struct wpat *P = pts[q];
		uint32_t first = (uint32_t)n;

		free(stack);
		stack = malloc((P->nn ? P->nn : 1) * sizeof(*stack));
		if (!stack)
			return c->err = -ENOMEM;
		sp = 0;
		stack[sp++] = 0;
		while (sp) {
			uint32_t x = stack[--sp];
			struct wnode *wn = &P->nodes[x];
			struct vp_vcg_node *d = &g->nodes[n];

			wn->gid = (uint32_t)n++;
			d->pattern = q;
			d->func = wn->func;
			d->type = (enum vp_vcg_type)wn->type;
			d->stats = wn->st;
			d->vim = wn->vim;
			d->subtree_vim = wn->svim;
			d->parent = wn->parent == NONE ? VP_NO_NODE : P->nodes[wn->parent].gid;
			for (uint32_t i = wn->nkids; i-- > 0;)
				if (P->nodes[P->pool[wn->kid0 + i]].keep)
					stack[sp++] = P->pool[wn->kid0 + i];
		}
		g->patterns[q].root = first;
		g->patterns[q].nnodes = (uint32_t)(n - first);
		g->patterns[q].vim = P->vim;
	}
	free(stack);
	/* lists of every node */
	for (uint32_t q = 0; q < np; q++) {
		struct wpat *P = pts[q];

		for (uint32_t i = 0; i < P->nn; i++) {
			const struct wnode *wn = &P->nodes[i];
			struct vp_vcg_node *d;

			if (!wn->keep)
				continue;
			d = &g->nodes[wn->gid];
			d->children = g->idpool + at;
			for (uint32_t k = 0; k < wn->nkids; k++)
				if (P->nodes[P->pool[wn->kid0 + k]].keep)
					g->idpool[at + d->nchildren++] =
						P->nodes[P->pool[wn->kid0 + k]].gid;
			at += wn->nkids;
			d->ccs = g->idpool + at;
			d->nccs = wn->ncc;
			memcpy(d->ccs, P->pool + wn->cc0, wn->ncc * sizeof(uint32_t));
			at += wn->ncc;
			d->cct = g->idpool + at;
			d->ncct = wn->nct;
			memcpy(d->cct, P->pool + wn->ct0, wn->nct * sizeof(uint32_t));
			at += wn->nct;
		}
	}
	/* segments; ols and cls come from a count over them */
	for (uint32_t q = 0; q < np; q++) {
		struct wpat *P = pts[q];

		for (uint32_t i = 0; i < P->ns; i++) {
			const struct wseg *ws = &P->segs[i];
			struct vp_vcg_segment *d;
			const struct vp_vcg_node *h;
			uint32_t k;

			for (k = 0; k < ws->len && P->nodes[P->pool[ws->n0 + k]].keep; k++)
				;
			if (k < ws->len)
				continue;
			d = &g->segments[s++];
			d->len = ws->len;
			d->nodes = g->idpool + at;
			for (k = 0; k < ws->len; k++)
				d->nodes[k] = P->nodes[P->pool[ws->n0 + k]].gid;
			at += ws->len;
			d->components = g->idpool + at;
			d->ncomponents = ws->nc;
			memcpy(d->components, P->pool + ws->c0, ws->nc * sizeof(uint32_t));
			at += ws->nc;
			d->n = ws->n;
			d->mean = ws->mean;
			d->variance = ws->n ? fmax(ws->m2, 0.0) / (double)ws->n : 0.0;
			h = &g->nodes[d->nodes[0]];
			d->cf = vp_stats_variance(&h->stats) > 0
					? d->variance / vp_stats_variance(&h->stats)
					: 0.0;
			d->how = (enum vp_source_how)ws->how;
			g->nodes[d->nodes[0]].nols++;
			for (k = 1; k < d->len; k++)
				g->nodes[d->nodes[k]].ncls++;
		}
	}
	for (size_t i = 0; i < n; i++) {
		g->nodes[i].ols = g->idpool + at;
		at += g->nodes[i].nols;
		g->nodes[i].cls = g->idpool + at;
		at += g->nodes[i].ncls;
		g->nodes[i].nols = g->nodes[i].ncls = 0;
	}
	for (size_t i = 0; i < s; i++) {
		const struct vp_vcg_segment *d = &g->segments[i];
		struct vp_vcg_node *h = &g->nodes[d->nodes[0]];

		h->ols[h->nols++] = (uint32_t)i;
		for (uint32_t k = 1; k < d->len; k++) {
			struct vp_vcg_node *x = &g->nodes[d->nodes[k]];

			x->cls[x->ncls++] = (uint32_t)i;
		}
	}
	g->nnodes = n;
	g->nsegments = s;
	g->npatterns = np;
	return 0;
}

int vp_vcg_build(struct vp_vcg *g, const struct vp_cct *t, const struct vp_analysis *a,
		 const struct vp_sources *s, const struct vp_vcg_params *p)
{
	struct gctx c;
	uint8_t *label = NULL;
	struct base *bs = NULL;
	struct wpat **pts = NULL;
	uint32_t nb = 0, np = 0, kept = 0;
	int err;

	memset(g, 0, sizeof(*g));
	gctx_init(&c);
	err = vp_vcg_params_check(p, NULL, 0);
	if (err)
		return err;
	if (a->nnodes != t->nnodes || (s && s->nnodes != t->nnodes))
		return -EINVAL;
	g->params = *p;
	g->k = a->k;
	c.t = t;
	c.a = a;
	c.s = s;
	c.tau = p->tau;
	c.k = a->k;
	label = malloc(t->nnodes ? t->nnodes : 1);
	if (!label) {
		err = -ENOMEM;
		goto out;
	}
	err = vp_vcg_label(t, a, s, label);
	if (!err)
		err = extract(&c, label, &bs, &nb);
	if (err)
		goto out;
	g->base_patterns = nb;
	for (uint32_t q = 0; q < nb; q++)
		g->base_nodes += bs[q].p->nn;
	/* Step 4: within each pattern, bottom-up; then across patterns */
	pts = calloc(nb ? nb : 1, sizeof(*pts));
	if (!pts) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t q = 0; q < nb; q++) {
		pts[q] = internal_merge(&c, &bs[q]);
		if (!pts[q]) {
			err = c.err ? c.err : -ENOMEM;
			goto out;
		}
		np = q + 1;
	}
	err = cluster(&c, &pts, &np, 1);
	if (err)
		goto out;
	g->merges = c.merges;
	g->layers = c.layers;
	g->merged_patterns = np;
	for (uint32_t q = 0; q < np; q++)
		g->merged_nodes += pts[q]->nn;
	/* Step 5 */
	for (uint32_t q = 0; q < np; q++)
		node_vims(&c, pts[q]);
	if (np)
		qsort(pts, np, sizeof(*pts), cmp_pat);
	for (uint32_t q = 0; q < np; q++) {
		struct wpat *P = pts[q];

		pts[q] = NULL;
		if (q && P->vim < p->beta * pts[0]->vim) {
			g->trimmed_patterns++;
			g->trimmed_nodes += P->nn;
			vp_wpat_free(P);
			continue;
		}
		pts[kept++] = P;
		trim(P, p->beta, &g->trimmed_nodes);
		if (!P->nodes[0].keep) {
			err = -ENOMEM;
			goto out;
		}
	}
	np = kept;
	err = layout(&c, g, pts, np);
	if (err)
		goto out;
	/* the call contexts, handed over */
	g->ccs = calloc(c.ncc ? c.ncc : 1, sizeof(*g->ccs));
	if (!g->ccs) {
		err = -ENOMEM;
		goto out;
	}
	g->nccs = c.ncc;
	g->ccpool = c.ccpool;
	c.ccpool = NULL;
	for (size_t i = 0; i < c.ncc; i++) {
		g->ccs[i].len = c.cclen[i];
		g->ccs[i].elems = g->ccpool + c.ccoff[i];
	}
out:
	for (uint32_t q = 0; pts && q < np; q++)
		vp_wpat_free(pts[q]);
	free(pts);
	for (uint32_t q = 0; q < nb; q++)
		base_free(&bs[q]);
	free(bs);
	free(label);
	free(c.ccpool);
	free(c.ccoff);
	free(c.cclen);
	vp_hashtab_release(&c.ccindex);
	if (!err && c.err)
		err = c.err;
	if (err)
		vp_vcg_release(g);
	return err;
}

void vp_vcg_release(struct vp_vcg *g)
{
	free(g->patterns);
	free(g->nodes);
	free(g->segments);
	free(g->ccs);
	free(g->ccpool);
	free(g->idpool);
	memset(g, 0, sizeof(*g));
}
