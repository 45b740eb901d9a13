/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sampled.c - fold sampled call stacks into a tree of sample counts,
 * reconstruct invocations from consecutive samples, and Schneider's
 * statistics of sampled shares ("Analysis": N = Z^2 p q / e^2).
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sampled.h"

/* The path of a thread's last sample, root first. */
struct vp_sampled_thread {
	size_t n, cap;
	uint32_t *nodes;
	uint64_t *cfas;
	uint64_t *spans; /* samples each open invocation has spanned so far */
};

struct vp_sampled_site {
	uint32_t outer, inner, line; /* symbols and the line of the call */
	const char *file;	     /* owned by the reader's frame */
	uint32_t frame, level;	     /* the first seen */
};

/* The index of nodes by (parent, kind, symbol, site): its entries are
 * node ids, its keys the nodes' fields. */
struct node_key {
	const struct vp_snode *nodes;
	uint32_t parent, kind, sym, frame, level;
};

static uint64_t node_hash(uint32_t parent, uint32_t kind, uint32_t sym, uint32_t frame,
			  uint32_t level)
{
	return vp_hash_mix(vp_hash_mix((uint64_t)parent << 32 | sym, (uint64_t)frame << 32 | level),
			   kind);
}

static int node_is(const struct vp_snode *n, uint32_t parent, uint32_t kind, uint32_t sym,
		   uint32_t frame, uint32_t level)
{
	return n->parent == parent && n->kind == kind && n->symbol == sym &&
	       n->site_frame == frame && n->site_level == level;
}

static int node_eq(const void *entry, const void *key)
{
	const struct node_key *k = key;

	return node_is(&k->nodes[*(const uint32_t *)entry], k->parent, k->kind, k->sym, k->frame,
		       k->level);
}

/* Inlined call sites: the entries are struct vp_sampled_site. */
struct site_key {
	uint32_t outer, inner, line;
	const char *file;
};

static uint64_t site_hash(const struct site_key *k)
{
	return vp_hash_mix(vp_hash_mix((uint64_t)k->outer << 32 | k->inner, k->line),
			   vp_hash_str(k->file));
}

static int site_eq(const void *entry, const void *key)
{
	const struct vp_sampled_site *e = entry;
	const struct site_key *k = key;

	return e->outer == k->outer && e->inner == k->inner && e->line == k->line &&
	       !strcmp(e->file, k->file);
}

int vp_sampled_init(struct vp_sampled *t)
{
	struct vp_snode *root;

	memset(t, 0, sizeof(*t));
	t->cap = 64;
	t->nodes = calloc(t->cap, sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	vp_hashtab_init(&t->index, sizeof(uint32_t), 0, node_eq);
	vp_hashtab_init(&t->sites, sizeof(struct vp_sampled_site), 0, site_eq);
	root = &t->nodes[0];
	root->parent = VP_SNODE_NONE;
	root->kind = VP_SNODE_ROOT;
	root->symbol = root->site_frame = root->site_level = VP_SNODE_NONE;
	vp_stats_init(&root->span);
	t->nnodes = 1;
	return 0;
}

void vp_sampled_release(struct vp_sampled *t)
{
	if (t->nnodes > 1)
		vp_budget_refund(t->budget, (t->nnodes - 1) * VP_SAMPLED_NODE_BYTES);
	for (size_t i = 0; i < t->nnodes; i++)
		free(t->nodes[i].children);
	for (size_t i = 0; i < t->nthreads; i++) {
		free(t->threads[i].nodes);
		free(t->threads[i].cfas);
		free(t->threads[i].spans);
	}
	free(t->threads);
	free(t->nodes);
	vp_hashtab_release(&t->index);
	free(t->sym_samples);
	free(t->sym_self);
	free(t->sym_stamp);
	free(t->pnodes);
	free(t->pcfas);
	vp_hashtab_release(&t->sites);
	memset(t, 0, sizeof(*t));
}

/*
 * The site of the function at level @j of frame @fid, inlined into level
 * @j + 1: the first (frame, level) seen with the same caller, callee and
 * call position.  Every address of an inlined body is a frame of its own,
 * and without this each would make a node of its own.
 */
static int inline_site(struct vp_sampled *t, const struct vp_frame_def *f, uint32_t fid,
		       uint32_t j, uint32_t *frame, uint32_t *level)
{
	const struct vp_frame_level *out = &f->levels[j + 1];
	struct site_key key = { out->symbol, f->levels[j].symbol, out->line,
				out->file ? out->file : "" };
	struct vp_sampled_site *k;
	void *entry;
	int ret = vp_hashtab_insert(&t->sites, site_hash(&key), &key, &entry);

	if (ret < 0)
		return ret;
	k = entry;
	if (ret) {
		k->outer = key.outer;
		k->inner = key.inner;
		k->line = key.line;
		k->file = key.file;
		k->frame = fid;
		k->level = j + 1;
	}
	*frame = k->frame;
	*level = k->level;
	return 0;
}

uint32_t vp_sampled_find(const struct vp_sampled *t, uint32_t parent, uint32_t kind,
			 uint32_t symbol, uint32_t site_frame, uint32_t site_level)
{
	struct node_key k = { t->nodes, parent, kind, symbol, site_frame, site_level };
	const uint32_t *id = vp_hashtab_find(
		&t->index, node_hash(parent, kind, symbol, site_frame, site_level), &k);

	return id ? *id : VP_SNODE_NONE;
}

static int add_child(struct vp_snode *p, uint32_t id)
{
	if (p->nchildren == p->children_cap) {
		uint32_t cap = p->children_cap ? p->children_cap * 2 : 4;
		uint32_t *c = realloc(p->children, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->children = c;
		p->children_cap = cap;
	}
	p->children[p->nchildren++] = id;
	return 0;
}

/* Find or create; returns the node id or a negative errno. */
static long child(struct vp_sampled *t, uint32_t parent, uint32_t kind, uint32_t sym,
		  uint32_t frame, uint32_t level)
{
	uint32_t id = vp_sampled_find(t, parent, kind, sym, frame, level);
	uint64_t hash = node_hash(parent, kind, sym, frame, level);
	struct node_key k = { NULL, parent, kind, sym, frame, level };
	struct vp_snode *n;
	void *entry;

	if (id != VP_SNODE_NONE)
		return id;
	if (t->nnodes >= UINT32_MAX - 1)
		return -ENOSPC;
	if (t->nnodes == t->cap) {
		size_t cap = t->cap * 2;
		struct vp_snode *nodes = realloc(t->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return -ENOMEM;
		t->nodes = nodes;
		t->cap = cap;
	}
	id = (uint32_t)t->nnodes;
	if (vp_budget_charge(t->budget, VP_SAMPLED_NODE_BYTES))
		return -E2BIG;
	n = &t->nodes[id];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->kind = kind;
	n->symbol = sym;
	n->site_frame = frame;
	n->site_level = level;
	n->depth = t->nodes[parent].depth + 1;
	vp_stats_init(&n->span);
	/* the node is written first: removing its entry again compares it */
	k.nodes = t->nodes;
	if (vp_hashtab_insert(&t->index, hash, &k, &entry) < 0)
		return -ENOMEM;
	*(uint32_t *)entry = id;
	if (add_child(&t->nodes[parent], id)) {
		vp_hashtab_remove(&t->index, hash, &k);
		return -ENOMEM;
	}
	t->nnodes++;
	return id;
}

static int grow_u64(uint64_t **p, size_t old, size_t n)
{
	uint64_t *q = realloc(*p, n * sizeof(*q));

	if (!q)
		return -ENOMEM;
	memset(q + old, 0, (n - old) * sizeof(*q));
	*p = q;
	return 0;
}

static int path_reserve(struct vp_sampled *t, size_t n)
{
	size_t cap = t->pcap ? t->pcap : 64;
	uint32_t *nodes;

	if (n <= t->pcap)
		return 0;
	while (cap < n)
		cap *= 2;
	nodes = realloc(t->pnodes, cap * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	t->pnodes = nodes;
	if (grow_u64(&t->pcfas, t->pcap, cap))
		return -ENOMEM;
	t->pcap = cap;
	return 0;
}

/*
 * Append the node for (kind, sym, site) under the path's last node; in
 * the last place VP_SAMPLED_MAX_DEPTH leaves, the cut node instead, and 1:
 * the path is full.
 */
static int path_push(struct vp_sampled *t, size_t *len, uint32_t kind, uint32_t sym,
		     uint32_t frame, uint32_t level, uint64_t cfa)
{
	uint32_t parent = *len ? t->pnodes[*len - 1] : 0;
	long id;

	if (*len + 1 >= VP_SAMPLED_MAX_DEPTH) {
		kind = VP_SNODE_CUT;
		sym = frame = level = VP_SNODE_NONE;
		cfa = 0;
	}
	if (path_reserve(t, *len + 1))
		return -ENOMEM;
	id = child(t, parent, kind, sym, frame, level);
	if (id < 0)
		return (int)id;
	t->pnodes[*len] = (uint32_t)id;
	t->pcfas[*len] = cfa;
	(*len)++;
	return kind == VP_SNODE_CUT;
}

/* The sample's path from the root: frames outermost first, and in each
 * frame the function it is in, then the functions inlined into it.  1:
 * the path was cut (see VP_SAMPLED_MAX_DEPTH). */
static int build_path(struct vp_sampled *t, const struct vp_reader *r,
		      const struct vp_sample *s, size_t *len)
{
	int err = 0;

	*len = 0;
	/* (a kernel sample without frames had no user state: [kernel] alone) */
	if (s->flags & (VP_SAMPLE_TRUNCATED | VP_SAMPLE_BROKEN) ||
	    (!s->nframes && !(s->flags & VP_SAMPLE_KERNEL)))
		err = path_push(t, len, VP_SNODE_INCOMPLETE, VP_SNODE_NONE, VP_SNODE_NONE,
				VP_SNODE_NONE, 0);
	for (uint32_t i = s->nframes; i-- > 0 && !err;) {
		const struct vp_frame_def *f = vp_reader_frame(r, s->frames[i]);

		if (!f)
			return -EINVAL;
		for (uint32_t j = f->nlevels; j-- > 0 && !err;) {
			uint32_t sf = VP_SNODE_NONE, sl = VP_SNODE_NONE;

			if (j + 1 < f->nlevels) {
				/* inlined: called from the next level out */
				err = inline_site(t, f, s->frames[i], j, &sf, &sl);
			} else if (i + 1 < s->nframes) {
				/* called from the innermost level of the caller */
				sf = s->frames[i + 1];
				sl = 0;
			}
			if (!err)
				err = path_push(t, len, VP_SNODE_FUNC, f->levels[j].symbol, sf, sl,
						s->cfas[i]);
		}
	}
	if (!err && (s->flags & VP_SAMPLE_KERNEL))
		err = path_push(t, len, VP_SNODE_KERNEL, VP_SNODE_NONE, VP_SNODE_NONE,
				VP_SNODE_NONE, 0);
	return err;
}

static void count_symbols(struct vp_sampled *t, size_t len)
{
	uint64_t stamp = t->samples + 1;

	for (size_t i = 0; i < len; i++) {
		const struct vp_snode *n = &t->nodes[t->pnodes[i]];

		if (n->kind != VP_SNODE_FUNC || n->symbol >= t->nsyms)
			continue;
		if (t->sym_stamp[n->symbol] != stamp) {
			t->sym_stamp[n->symbol] = stamp;
			t->sym_samples[n->symbol]++;
		}
		if (i + 1 == len)
			t->sym_self[n->symbol]++;
	}
}

static int syms_reserve(struct vp_sampled *t, size_t n)
{
	size_t cap = t->nsyms ? t->nsyms : 64;

	if (n <= t->nsyms)
		return 0;
	while (cap < n)
		cap *= 2;
	if (grow_u64(&t->sym_samples, t->nsyms, cap) || grow_u64(&t->sym_self, t->nsyms, cap) ||
	    grow_u64(&t->sym_stamp, t->nsyms, cap))
		return -ENOMEM;
	t->nsyms = cap;
	return 0;
}

static void end_invocation(struct vp_sampled *t, uint32_t node, uint64_t span)
{
	struct vp_snode *n = &t->nodes[node];

	if (n->kind == VP_SNODE_FUNC)
		vp_stats_add(&n->span, span);
}

static int thread_reserve(struct vp_sampled *t, uint32_t idx, size_t len)
{
	struct vp_sampled_thread *th;

	if (vp_grow_zeroed((void **)&t->threads, &t->nthreads, (size_t)idx + 1,
			   sizeof(*t->threads)))
		return -ENOMEM;
	th = &t->threads[idx];
	if (len > th->cap) {
		size_t cap = th->cap ? th->cap : 32;
		uint32_t *nodes;

		while (cap < len)
			cap *= 2;
		nodes = realloc(th->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		th->nodes = nodes;
		/* the open invocations' CFAs and spans are kept */
		if (grow_u64(&th->cfas, th->cap, cap) || grow_u64(&th->spans, th->cap, cap))
			return -ENOMEM;
		th->cap = cap;
	}
	return 0;
}

/*
 * An invocation stays the same while its frame - node (function, call site
 * and callers) and canonical frame address - persists from one sample of
 * the thread to the next; the first difference from the root ends it and
 * everything inside it.
 *
 * A sample whose stack was not unwound to its outermost frame (@complete
 * 0) says nothing about the frames it lacks, which are the outer ones:
 * still running, surely, but not seen.  It neither extends nor ends the
 * thread's open invocations, so one truncated stack does not split them
 * all (their spans miss that one sample).
 */
static int track_invocations(struct vp_sampled *t, uint32_t thread, size_t len, int complete)
{
	struct vp_sampled_thread *th;
	size_t k = 0;
	int err = thread_reserve(t, thread, len);

	if (err || !complete)
		return err;
	th = &t->threads[thread];
	while (k < th->n && k < len && th->nodes[k] == t->pnodes[k] && th->cfas[k] == t->pcfas[k])
		th->spans[k++]++;
	for (size_t j = k; j < th->n; j++)
		end_invocation(t, th->nodes[j], th->spans[j]);
	for (size_t j = k; j < len; j++) {
		th->nodes[j] = t->pnodes[j];
		th->cfas[j] = t->pcfas[j];
		th->spans[j] = 1;
	}
	th->n = len;
	return 0;
}

int vp_sampled_add(struct vp_sampled *t, const struct vp_reader *r, const struct vp_sample *s)
{
	double w = (double)s->period;
	size_t len;
	int err, cut = 0;

	if (t->phase && s->phase != t->phase)
		return 0;
	err = syms_reserve(t, vp_reader_nsymbols(r));
	if (!err)
		err = build_path(t, r, s, &len);
	if (err == 1) {
		cut = 1;
		err = 0;
	}
	if (!err)
		err = track_invocations(t, s->thread, len,
					!(s->flags & (VP_SAMPLE_TRUNCATED | VP_SAMPLE_BROKEN)) &&
						s->nframes);
	if (err)
		return err;
	count_symbols(t, len);
	t->nodes[0].samples++;
	t->nodes[0].time += w;
	for (size_t i = 0; i < len; i++) {
		struct vp_snode *n = &t->nodes[t->pnodes[i]];

		n->samples++;
		n->time += w;
	}
	if (len) {
		t->nodes[t->pnodes[len - 1]].self++;
		t->nodes[t->pnodes[len - 1]].self_time += w;
	}
	if (t->samples && s->period != t->period)
		t->period_varies = 1;
	t->samples++;
	t->time += w;
	t->period = s->period;
	t->truncated += !!(s->flags & VP_SAMPLE_TRUNCATED);
	t->broken += !!(s->flags & VP_SAMPLE_BROKEN);
	t->kernel += !!(s->flags & VP_SAMPLE_KERNEL);
	t->probe += !!(s->flags & VP_SAMPLE_PROBE);
	t->cut += cut;
	return 0;
}

int vp_sampled_handler(void *ctx, const struct vp_reader *r, const struct vp_sample *s)
{
	return vp_sampled_add(ctx, r, s);
}

void vp_sampled_finish(struct vp_sampled *t)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		struct vp_sampled_thread *th = &t->threads[i];

		for (size_t j = 0; j < th->n; j++)
			end_invocation(t, th->nodes[j], th->spans[j]);
		th->n = 0;
	}
}

/* ---- statistics ---- */

/*
 * Acklam's rational approximation of the normal quantile (relative error
 * 1.15e-9), polished by one Halley step on erfc, which brings it to double
 * precision.
 */
double vp_normal_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
				    -2.759285104469687e+02, 1.383577518672690e+02,
				    -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
				    -1.556989798598866e+02, 6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
				    -2.400758277161838e+00, -2.549732539343734e+00,
				    4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
				    2.445134137142996e+00, 3.754408661907416e+00 };
	const double lo = 0.02425;
	double q, x, e, u;

	if (!(p > 0 && p < 1))
		return p <= 0 ? -HUGE_VAL : HUGE_VAL;
	if (p < lo) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p <= 1 - lo) {
		double r;

		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	} else {
		q = sqrt(-2 * log(1 - p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	e = 0.5 * erfc(-x / sqrt(2)) - p;
	u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

double vp_confidence_z(double confidence)
{
	/* from the lower tail: 0.5 + c / 2 would lose digits near 1 */
	return -vp_normal_quantile((1 - confidence) / 2);
}

void vp_share(uint64_t k, uint64_t n, double z, struct vp_share *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!n)
		return;
	ret->p = (double)k / (double)n;
	ret->half = z * sqrt(ret->p * (1 - ret->p) / (double)n);
	ret->lo = ret->p - ret->half > 0 ? ret->p - ret->half : 0;
	ret->hi = ret->p + ret->half < 1 ? ret->p + ret->half : 1;
}

uint64_t vp_samples_needed(double p, double e, double z)
{
	double n;

	if (!(e > 0))
		return UINT64_MAX;
	n = ceil(z * z * p * (1 - p) / (e * e) - 1e-9);
	if (n >= 18446744073709551616.0) /* 2^64: not a uint64_t */
		return UINT64_MAX;
	return n > 0 ? (uint64_t)n : 0;
}

/*
 * An invocation of duration D spans floor(D/P) or floor(D/P) + 1 samples
 * of period P, the second with probability f = frac(D/P) when its start
 * falls anywhere in a period: so span * P is an unbiased estimate of D,
 * with a variance of f (1 - f) P^2 on top of the durations' own.  Over
 * durations spread across more than a period, f is uniform and that adds
 * P^2 / 6 on average: the CoV leaves it out (and never goes below zero).
 */
void vp_sampled_durations(const struct vp_sampled *t, uint32_t id, struct vp_sdur *ret)
{
	const struct vp_snode *n = &t->nodes[id];
	double var;

	memset(ret, 0, sizeof(*ret));
	if (!n->span.n || n->span.mean <= 0)
		return;
	ret->invocations = n->span.n;
	ret->mean_span = n->span.mean;
	ret->quant = 1 / n->span.mean;
	ret->cov_raw = vp_stats_cov(&n->span);
	var = vp_stats_variance(&n->span) - 1.0 / 6;
	ret->cov = var > 0 ? sqrt(var) / n->span.mean : 0;
	/* durations need one period for all: not so with frequency mode */
	if (!t->period_varies)
		ret->mean = n->span.mean * (double)t->period;
}
