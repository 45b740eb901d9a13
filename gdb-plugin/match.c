/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * match.c - a live call stack against the recorded calling-context tree:
 * the exact context of a chain of probed frames, or the nearest recorded
 * context by edit distance, for `info variance`.
 */
#include <config.h>

/* Python.h, in _varperf.h, must come before the system headers */
#include "_varperf.h"

#include <stdlib.h>
#include <string.h>

/* Nearest-context search: candidates aligned in full, and the longest
 * part (from the innermost frame out) of either chain that is aligned. */
enum { NEAREST_CANDIDATES = 32, NEAREST_MAX_LEN = 512 };

/* One probed frame of a live stack: the recorded functions it may be and
 * the recorded call sites its return address may be (any, when GDB does
 * not show its caller: frames past main are hidden by default). */
struct live_elem {
	uint32_t *funcs;
	size_t nfuncs;
	uint32_t *cs;
	size_t ncs;
	int any_cs;
};

struct live_chain {
	struct live_elem *e;
	size_t n;
	uint32_t *ids; /* storage of every elem's funcs and cs */
};

static void live_chain_release(struct live_chain *c)
{
	free(c->e);
	free(c->ids);
}

/* Append the ints of sequence @seq to @c->ids; their count in @n. */
static int take_ids(PyObject *seq, struct live_chain *c, size_t *used, size_t *cap, size_t *n)
{
	PyObject *it = PyObject_GetIter(seq), *item;

	if (!it)
		return -1;
	*n = 0;
	while ((item = PyIter_Next(it))) {
		unsigned long v = PyLong_AsUnsignedLong(item);

		Py_DECREF(item);
		if (v == (unsigned long)-1 && PyErr_Occurred())
			break;
		if (*used == *cap) {
			size_t nc = *cap ? 2 * *cap : 64;
			uint32_t *p = realloc(c->ids, nc * sizeof(*p));

			if (!p) {
				PyErr_NoMemory();
				break;
			}
			c->ids = p;
			*cap = nc;
		}
		c->ids[(*used)++] = (uint32_t)v;
		(*n)++;
	}
	Py_DECREF(it);
	return PyErr_Occurred() ? -1 : 0;
}

/*
 * @seq: outermost first, one (functions, call sites) pair of int sequences
 * per probed frame; call sites None for "any".  Offsets first, pointers
 * after the storage stops moving.
 */
static int parse_chain(PyObject *seq, struct live_chain *c)
{
	Py_ssize_t n = PySequence_Size(seq);
	size_t used = 0, cap = 0, *off = NULL;

	memset(c, 0, sizeof(*c));
	if (n < 0)
		return -1;
	c->e = calloc((size_t)n + 1, sizeof(*c->e));
	off = calloc(2 * (size_t)n + 1, sizeof(*off));
	if (!c->e || !off) {
		free(off);
		PyErr_NoMemory();
		return -1;
	}
	c->n = (size_t)n;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *pair = PySequence_GetItem(seq, i), *fs = NULL, *cs = NULL;
		int bad = !pair || PySequence_Size(pair) != 2;

		if (!bad) {
			fs = PySequence_GetItem(pair, 0);
			cs = PySequence_GetItem(pair, 1);
		}
		bad = bad || !fs || !cs;
		if (!bad) {
			off[2 * i] = used;
			bad = take_ids(fs, c, &used, &cap, &c->e[i].nfuncs) < 0;
		}
		if (!bad) {
			off[2 * i + 1] = used;
			if (cs == Py_None)
				c->e[i].any_cs = 1;
			else
				bad = take_ids(cs, c, &used, &cap, &c->e[i].ncs) < 0;
		}
		Py_XDECREF(fs);
		Py_XDECREF(cs);
		Py_XDECREF(pair);
		if (bad) {
			if (!PyErr_Occurred())
				PyErr_SetString(
					PyExc_TypeError,
					"a chain element must be a pair (functions, call sites)");
			free(off);
			live_chain_release(c);
			return -1;
		}
	}
	for (size_t i = 0; i < c->n; i++) {
		c->e[i].funcs = c->ids + off[2 * i];
		c->e[i].cs = c->ids + off[2 * i + 1];
	}
	free(off);
	return 0;
}

static int has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

static int elem_has_cs(const struct live_elem *e, uint32_t cs)
{
	return e->any_cs || has_id(e->cs, e->ncs, cs);
}

/* Node of the exact context @c[0..n) (every function and call site as
 * recorded), or VP_NO_NODE. */
static uint32_t chain_lookup(const struct rec *r, const struct live_chain *c, size_t n)
{
	uint32_t node = VP_NODE_ROOT;

	for (size_t i = 0; i < n; i++) {
		const struct live_elem *e = &c->e[i];
		uint32_t found = VP_NO_NODE;

		if (e->any_cs) {
			/* any call site: the child of that function called most */
			const struct vp_cct_node *p = &r->tree->nodes[node];

			for (uint32_t k = 0; k < p->nchildren; k++) {
				const struct vp_cct_node *ch = &r->tree->nodes[p->children[k]];

				if (has_id(e->funcs, e->nfuncs, ch->func) &&
				    (found == VP_NO_NODE ||
				     ch->stats.n > r->tree->nodes[found].stats.n))
					found = ch->id;
			}
		}
		for (size_t f = 0; f < e->nfuncs && found == VP_NO_NODE; f++)
			for (size_t s = 0; s < e->ncs && found == VP_NO_NODE; s++)
				found = vp_cct_find(r->tree, node, e->funcs[f], e->cs[s]);
		if (found == VP_NO_NODE)
			return VP_NO_NODE;
		node = found;
	}
	return node;
}

/* lookup(chain, length=None) -> node id of that exact context, or None. */
PyObject *vpmod_rec_lookup(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	struct live_chain c;
	PyObject *seq;
	Py_ssize_t len = -1;
	uint32_t node;

	if (!PyArg_ParseTuple(args, "O|n:lookup", &seq, &len) || parse_chain(seq, &c) < 0)
		return NULL;
	if (len < 0 || (size_t)len > c.n)
		len = (Py_ssize_t)c.n;
	node = len ? chain_lookup(r, &c, (size_t)len) : VP_NO_NODE;
	live_chain_release(&c);
	if (node == VP_NO_NODE)
		Py_RETURN_NONE;
	return PyLong_FromUnsignedLong(node);
}

enum { COST_CALLSITE = 1, COST_GAP = 2, COST_INF = 1 << 28 };
enum { OP_SAME, OP_CALLSITE, OP_LIVE, OP_RECORDED };

/* Substitution cost of live element @e against node @n. */
static int sub_cost(const struct rec *r, const struct live_elem *e, uint32_t n)
{
	const struct vp_cct_node *nd = &r->tree->nodes[n];

	if (!has_id(e->funcs, e->nfuncs, nd->func))
		return COST_INF;
	return elem_has_cs(e, nd->callsite) ? 0 : COST_CALLSITE;
}

struct align {
	int cost;
	size_t nops;
	uint8_t *op;	/* OP_* outermost first */
	uint32_t *live; /* index into the chain, or UINT32_MAX */
	uint32_t *node; /* node id, or VP_NO_NODE */
};

static void align_release(struct align *a)
{
	free(a->op);
	free(a->live);
	free(a->node);
	memset(a, 0, sizeof(*a));
}

/*
 * Edit-distance alignment of the live chain (innermost element forced onto
 * @cand) with @cand's path: a call site that differs costs 1, a frame only
 * on one side 2.  Only the innermost NEAREST_MAX_LEN elements of each side
 * take part.  With @a NULL, only the cost.
 */
static int align_one(const struct rec *r, const struct live_chain *c, uint32_t cand,
		     struct align *a)
{
	size_t l = c->n, p = r->tree->nodes[cand].depth, lo0, po0, L, P, w;
	uint32_t *path = NULL;
	int *d = NULL, ret = -ENOMEM;
	uint8_t *bt = NULL;

	lo0 = l > NEAREST_MAX_LEN ? l - NEAREST_MAX_LEN : 0;
	po0 = p > NEAREST_MAX_LEN ? p - NEAREST_MAX_LEN : 0;
	L = l - lo0 - 1; /* elements before the innermost */
	P = p - po0 - 1;
	w = P + 1;
	path = malloc((p - po0) * sizeof(*path));
	d = malloc((L + 1) * (P + 1) * sizeof(*d));
	bt = malloc((L + 1) * (P + 1));
	if (!path || !d || !bt)
		goto out;
	{
		uint32_t n = cand;

		for (size_t j = p - po0; j > 0; j--) {
			path[j - 1] = n;
			n = r->tree->nodes[n].parent;
		}
	}
	for (size_t i = 0; i <= L; i++) {
		for (size_t j = 0; j <= P; j++) {
			int best, op;

			if (i == 0 && j == 0) {
				d[0] = 0;
				bt[0] = OP_SAME;
				continue;
			}
			best = COST_INF;
			op = OP_SAME;
			if (i && j) {
				int s = sub_cost(r, &c->e[lo0 + i - 1], path[j - 1]);

				if (s < COST_INF && d[(i - 1) * w + j - 1] + s < best) {
					best = d[(i - 1) * w + j - 1] + s;
					op = s ? OP_CALLSITE : OP_SAME;
				}
			}
			if (i && d[(i - 1) * w + j] + COST_GAP < best) {
				best = d[(i - 1) * w + j] + COST_GAP;
				op = OP_LIVE;
			}
			if (j && d[i * w + j - 1] + COST_GAP < best) {
				best = d[i * w + j - 1] + COST_GAP;
				op = OP_RECORDED;
			}
			d[i * w + j] = best;
			bt[i * w + j] = (uint8_t)op;
		}
	}
	ret = d[L * w + P] + sub_cost(r, &c->e[l - 1], cand);
	if (a) {
		size_t i = L, j = P, k, cap = L + P + 2;

		a->cost = ret;
		a->op = malloc(cap);
		a->live = malloc(cap * sizeof(*a->live));
		a->node = malloc(cap * sizeof(*a->node));
		if (!a->op || !a->live || !a->node) {
			align_release(a);
			ret = -ENOMEM;
			goto out;
		}
		/* built innermost first, reversed below */
		k = 0;
		a->op[k] = sub_cost(r, &c->e[l - 1], cand) ? OP_CALLSITE : OP_SAME;
		a->live[k] = (uint32_t)(l - 1);
		a->node[k++] = cand;
		while (i || j) {
			uint8_t op = bt[i * w + j];

			a->op[k] = op;
			a->live[k] = op == OP_RECORDED ? UINT32_MAX : (uint32_t)(lo0 + i - 1);
			a->node[k] = op == OP_LIVE ? VP_NO_NODE : path[j - 1];
			k++;
			if (op != OP_RECORDED)
				i--;
			if (op != OP_LIVE)
				j--;
		}
		a->nops = k;
		for (size_t x = 0, y = k - 1; x < y; x++, y--) {
			uint8_t to = a->op[x];
			uint32_t tl = a->live[x], tn = a->node[x];

			a->op[x] = a->op[y];
			a->op[y] = to;
			a->live[x] = a->live[y];
			a->live[y] = tl;
			a->node[x] = a->node[y];
			a->node[y] = tn;
		}
	}
out:
	free(path);
	free(d);
	free(bt);
	return ret;
}

struct cand {
	uint32_t node;
	int score; /* greedy suffix agreement, higher is closer */
};

/* Matching functions (2) and call sites (1) from the innermost frame out,
 * until the first function that differs. */
static int suffix_score(const struct rec *r, const struct live_chain *c, uint32_t node)
{
	int score = 0;

	for (size_t i = c->n; i > 0 && node != VP_NODE_ROOT; i--) {
		const struct vp_cct_node *nd = &r->tree->nodes[node];
		const struct live_elem *e = &c->e[i - 1];

		if (!has_id(e->funcs, e->nfuncs, nd->func))
			break;
		score += 2 + elem_has_cs(e, nd->callsite);
		node = nd->parent;
	}
	return score;
}

/*
 * nearest(chain) -> {"node", "cost", "ops": [(op, live index | None,
 * node | None), ...]} for the recorded context of the innermost frame's
 * function that is closest to the live chain, or None when that function
 * has no recorded context.  ops, outermost first: "same", "callsite" (same
 * function, another call site), "live" (a frame the recorded context does
 * not have), "recorded" (a recorded frame the live stack does not have).
 */
PyObject *vpmod_rec_nearest(PyObject *self, PyObject *args)
{
	static const char *const opname[] = { "same", "callsite", "live", "recorded" };
	const struct rec *r = (const struct rec *)self;
	struct cand top[NEAREST_CANDIDATES];
	struct align best = { 0 };
	struct live_chain c;
	const struct live_elem *in;
	size_t ntop = 0;
	uint32_t best_node = VP_NO_NODE;
	int best_cost = COST_INF;
	PyObject *seq, *ops = NULL, *ret = NULL;

	if (!PyArg_ParseTuple(args, "O:nearest", &seq) || parse_chain(seq, &c) < 0)
		return NULL;
	if (!c.n) {
		live_chain_release(&c);
		Py_RETURN_NONE;
	}
	in = &c.e[c.n - 1];
	/* keep the NEAREST_CANDIDATES best by suffix score, then align those */
	for (size_t f = 0; f < in->nfuncs; f++) {
		uint32_t fn = in->funcs[f];

		if (fn >= r->hdr->nfuncs)
			continue;
		for (size_t k = r->fnode_start[fn]; k < r->fnode_start[fn + 1]; k++) {
			struct cand x = { r->fnode_ids[k], suffix_score(r, &c, r->fnode_ids[k]) };
			size_t pos = ntop;

			while (pos > 0 && top[pos - 1].score < x.score)
				pos--;
			if (pos >= NEAREST_CANDIDATES)
				continue;
			if (ntop < NEAREST_CANDIDATES)
				ntop++;
			memmove(top + pos + 1, top + pos, (ntop - 1 - pos) * sizeof(*top));
			top[pos] = x;
		}
	}
	for (size_t k = 0; k < ntop; k++) {
		int cost = align_one(r, &c, top[k].node, NULL);
		const struct vp_cct_node *a, *b;

		if (cost < 0) {
			PyErr_NoMemory();
			goto out;
		}
		if (best_node != VP_NO_NODE) {
			a = &r->tree->nodes[top[k].node];
			b = &r->tree->nodes[best_node];
			/* ties: the context with more invocations */
			if (cost > best_cost || (cost == best_cost && a->stats.n <= b->stats.n))
				continue;
		}
		best_cost = cost;
		best_node = top[k].node;
	}
	if (best_node == VP_NO_NODE) {
		ret = vpmod_none();
		goto out;
	}
	if (align_one(r, &c, best_node, &best) < 0) {
		PyErr_NoMemory();
		goto out;
	}
	ops = PyList_New((Py_ssize_t)best.nops);
	for (size_t k = 0; ops && k < best.nops; k++) {
		PyObject *t = Py_BuildValue(
			"(sNN)", opname[best.op[k]],
			best.live[k] == UINT32_MAX ? vpmod_none() :
						     PyLong_FromUnsignedLong(best.live[k]),
			best.node[k] == VP_NO_NODE ? vpmod_none() :
						     PyLong_FromUnsignedLong(best.node[k]));

		if (!t || PyList_SetItem(ops, (Py_ssize_t)k, t) < 0)
			Py_CLEAR(ops);
	}
	if (ops)
		ret = Py_BuildValue("{s:k,s:i,s:N}", "node", (unsigned long)best_node, "cost",
				    best.cost, "ops", ops);
out:
	align_release(&best);
	live_chain_release(&c);
	return ret;
}
