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
	/* a leaf task has no children array at all: memcpy wants a pointer */
	if (ret->k)
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
