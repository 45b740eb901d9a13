/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * export-slow.c - which calls `--slowest[=CONTEXT]` picks for the exports:
 * the K slowest calls every node keeps (core/slowest.h) of the selected
 * nodes, and the invocations nested in them, told apart in a second pass
 * over the events by thread and time range.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/patterns.h"
#include "report.h"
#include "util/util.h"

uint8_t *report_slow_nodes(const struct report *r, int outermost, size_t *n)
{
	const struct vp_cct *t = r->tree;
	uint8_t *sel = xcalloc(t->nnodes ? t->nnodes : 1, 1);
	struct report_context ctx = { 0 };

	*n = 0;
	/* the command line checked it: report_context_parse() fails only then */
	if (r->slowest_context && report_context_parse(r->slowest_context, &ctx) < 0)
		return sel;
	/* a parent's id is below its children's: parents are decided first */
	for (uint32_t id = 1; id < t->nnodes; id++) {
		const struct vp_cct_node *nd = &t->nodes[id];
		int want;

		if (outermost && nd->parent != VP_NO_NODE && nd->parent != VP_NODE_ROOT &&
		    (sel[nd->parent] & 3)) {
			sel[id] = 2; /* below a selected one */
			continue;
		}
		if (r->slowest_context)
			want = report_context_match(r, &ctx, id);
		else
			want = id < r->an->nnodes && r->an->significant[id] &&
			       nd->stats.n > nd->slowest.n;
		if (want && nd->slowest.n) {
			sel[id] = 1;
			(*n)++;
		}
	}
	for (uint32_t id = 1; id < t->nnodes; id++)
		sel[id] &= 1;
	if (r->slowest_context)
		report_context_release(&ctx);
	return sel;
}

uint32_t report_slow_root(const struct report *r, const uint8_t *sel, uint32_t node,
			  uint32_t thread, uint64_t start, uint64_t duration)
{
	const struct vp_cct *t = r->tree;
	uint64_t end = start + duration;

	/* on one thread, a call nested in another is in a descendant context */
	for (uint32_t id = node; id != VP_NODE_ROOT && id < t->nnodes; id = t->nodes[id].parent) {
		const struct vp_slowest *s = &t->nodes[id].slowest;

		if (!sel[id])
			continue;
		for (uint32_t i = 0; i < s->n; i++) {
			const struct vp_slow_call *c = &s->calls[i];

			if (c->thread == thread && c->start <= start &&
			    end <= c->start + c->duration)
				return id;
		}
	}
	return VP_NO_NODE;
}
