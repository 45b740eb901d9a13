/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * regression-task.c - a task's invocations as regression rows (see
 * regression-task.h).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regression-task.h"

/* Whether the callers of @id, innermost first, match @chain's names
 * before its last one, from the end. */
static int chain_matches(const struct vp_recording *rec, uint32_t id, const char *chain)
{
	const char *end = chain + strlen(chain), *p;
	const struct vp_cct_node *n = &rec->tree.nodes[id];

	for (;;) {
		size_t len;

		for (p = end; p > chain && p[-1] != ';'; p--)
			;
		len = (size_t)(end - p);
		if (n->id == 0 && n->parent == VP_NO_NODE)
			return 0; /* the root stands for no function */
		if (strlen(vp_recording_func_name(rec, n->func)) != len ||
		    strncmp(vp_recording_func_name(rec, n->func), p, len))
			return 0;
		if (p == chain)
			return 1;
		end = p - 1;
		if (n->parent == VP_NO_NODE)
			return 0;
		n = &rec->tree.nodes[n->parent];
	}
}

long vp_task_find(const struct vp_recording *rec, const char *func, const char *chain,
		  uint32_t **ret)
{
	const struct vp_cct *t = &rec->tree;
	uint32_t *ids = NULL;
	long n = 0;
	size_t i;

	*ret = NULL;
	for (i = 1; i < t->nnodes; i++) {
		const struct vp_cct_node *nd = &t->nodes[i];
		uint32_t *p;

		if (strcmp(vp_recording_func_name(rec, nd->func), func))
			continue;
		if (chain && !chain_matches(rec, (uint32_t)i, chain))
			continue;
		p = realloc(ids, (size_t)(n + 1) * sizeof(*ids));
		if (!p) {
			free(ids);
			return -ENOMEM;
		}
		ids = p;
		ids[n++] = (uint32_t)i;
	}
	*ret = ids;
	return n;
}

struct rows_ctx {
	struct vp_task_rows *r;
	size_t cap;
};

static int on_invocation(void *ctx, const struct vp_invocation *inv)
{
	struct rows_ctx *c = ctx;
	struct vp_task_rows *r = c->r;
	size_t j;

	if (inv->node != r->node)
		return 0;
	if (r->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		double *y = realloc(r->y, cap * sizeof(*y)), *x;

		if (!y)
			return -ENOMEM;
		r->y = y;
		x = realloc(r->x, cap * (r->k ? r->k : 1) * sizeof(*x));
		if (!x)
			return -ENOMEM;
		r->x = x;
		c->cap = cap;
	}
	r->y[r->n] = (double)inv->duration;
	for (j = 0; j < r->k; j++)
		r->x[r->n * r->k + j] = j < inv->ncalls ? inv->calls[j] : 0;
	r->n++;
	return 0;
}

int vp_task_rows(struct vp_recording *rec, uint32_t node, struct vp_task_rows *ret, char *msg,
		 size_t len)
{
	const struct vp_cct_node *nd;
	struct rows_ctx c = { ret, 0 };
	int err;

	memset(ret, 0, sizeof(*ret));
	if (node >= rec->tree.nnodes) {
		if (msg)
			snprintf(msg, len, "%s: no node %u", rec->path, node);
		return -EINVAL;
	}
	nd = &rec->tree.nodes[node];
	ret->node = node;
	ret->k = nd->nchildren;
	ret->child = malloc((ret->k ? ret->k : 1) * sizeof(*ret->child));
	if (!ret->child)
		return -ENOMEM;
	memcpy(ret->child, nd->children, ret->k * sizeof(*ret->child));
	err = vp_recording_invocations(rec, on_invocation, &c, msg, len);
	if (err < 0) {
		if (err == -ENOMEM && msg && !*msg)
			snprintf(msg, len, "%s: out of memory", rec->path);
		vp_task_rows_release(ret);
	}
	return err < 0 ? err : 0;
}

void vp_task_rows_release(struct vp_task_rows *r)
{
	free(r->y);
	free(r->x);
	free(r->child);
	memset(r, 0, sizeof(*r));
}
