/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * budget.h - the memory an analysis may take, shared by the structures
 * it builds (the calling-context tree with its covariances, the sampled
 * tree), so that a small crafted file cannot make them take gigabytes: a
 * build that would pass the budget stops with -E2BIG instead.
 */
#ifndef VARPERF_CORE_BUDGET_H
#define VARPERF_CORE_BUDGET_H

#include <errno.h>
#include <stddef.h>

struct vp_budget {
	size_t max;  /* bytes; 0: no limit */
	size_t used; /* charged so far */
};

/* Charge @bytes to @b (NULL: no budget): 0, or -E2BIG past b->max. */
static inline int vp_budget_charge(struct vp_budget *b, size_t bytes)
{
	if (!b)
		return 0;
	if (b->max && (bytes > b->max || b->used > b->max - bytes))
		return -E2BIG;
	b->used += bytes;
	return 0;
}

/* Give back @bytes charged before. */
static inline void vp_budget_refund(struct vp_budget *b, size_t bytes)
{
	if (b)
		b->used = bytes < b->used ? b->used - bytes : 0;
}

#endif
