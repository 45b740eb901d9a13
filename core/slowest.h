/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * slowest.h - the K slowest invocations of a calling-context node, kept
 * while the tree is built: when each started, on which thread, how long it
 * took, and how that time split between the node's own code and each of
 * its probed children in that very call ("this 8 ms call spent 6.9 ms in
 * fallbackSort").  A mean and a percentile say that some calls are slow;
 * these say which, and where their time went.
 *
 * While building, a list is a min-heap on the duration, so an invocation
 * that is not among the K slowest so far costs one comparison;
 * vp_slowest_finish() then orders it by start time.  Equal durations keep
 * the earlier call.
 */
#ifndef VARPERF_CORE_SLOWEST_H
#define VARPERF_CORE_SLOWEST_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"

enum { VP_SLOWEST_DEFAULT = 16, VP_SLOWEST_MAX = 4096 };

/*
 * Where the time of one call went: variable @var of its node's covariance
 * (0: the node's own code, vp_cct_var(slot) a child, VP_CCT_TRACKED + 1
 * the callees past the tracked ones), @time ns of it.  The parts of a call
 * add up to its duration exactly; the own part can be below 0 when the
 * children's compensated times exceed the call's.
 */
struct vp_slow_part {
	uint32_t var;
	int64_t time;
};

struct vp_slow_call {
	uint64_t start;	   /* entry time, in the tree's time base */
	uint64_t duration;
	uint32_t thread;   /* thread index of the reader (vp_reader_thread) */
	uint32_t nparts;
	struct vp_slow_part *parts; /* own part first, then by variable; only
				     * variables with time */
};

struct vp_slowest {
	struct vp_slow_call *calls;
	uint32_t n;
	uint32_t cap; /* calls allocated: the k of the first offer */
	int sorted; /* by start (vp_slowest_finish); else a heap */
};

/*
 * vp_slowest_offer - a call of @duration from @start on @thread, whose
 * children took @y[v - 1] in variable v (1 <= v <= @ny): kept when fewer
 * than @k are, or when slower than the fastest kept one.  The memory is
 * charged to @budget (may be NULL).  0, -ENOMEM or -E2BIG.
 */
int vp_slowest_offer(struct vp_slowest *s, uint32_t k, struct vp_budget *budget,
		     uint64_t start, uint64_t duration, uint32_t thread, const double *y,
		     size_t ny);
/* Whether a call of @duration would be kept (the cheap test first). */
static inline int vp_slowest_wants(const struct vp_slowest *s, uint32_t k, uint64_t duration)
{
	return k && (s->n < k || s->sorted || duration >= s->calls[0].duration);
}

/*
 * vp_slowest_merge - keep in @dst the @k slowest of @dst's and @src's
 * calls, @src's parts' variables renamed by @vmap (a variable of @src's
 * node to @dst's); sorted by start.  0, -ENOMEM or -E2BIG.
 */
int vp_slowest_merge(struct vp_slowest *dst, const struct vp_slowest *src, uint32_t k,
		     const size_t *vmap, struct vp_budget *budget);

/* Order @s by start time (then thread), for reading. */
void vp_slowest_finish(struct vp_slowest *s);

void vp_slowest_release(struct vp_slowest *s, struct vp_budget *budget);

#endif
