/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * compensate.c - probe-cost compensation: the filter the reader hands
 * every event through, taking what the probes added to each thread's
 * clock out of its times (vp_reader_compensate()), and the calibrated
 * costs it subtracts.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compensate.h"
#include "datafile.h"

double vp_probe_class_cost(uint32_t cls, const struct vp_probe_cost *costs, size_t n)
{
	/* for a file without calibrated costs; calibrate.c measures them */
	enum { TYPICAL_EMULATED_NS = 1000, TYPICAL_STEPPED_NS = 17000 };

	for (size_t i = 0; i < n; i++)
		if (costs[i].insn_class == cls)
			return (double)costs[i].full_ns;
	return cls == VP_INSN_EMULATED ? TYPICAL_EMULATED_NS : TYPICAL_STEPPED_NS;
}

double vp_probe_rel_spread(const struct vp_probe_cost *costs, size_t n)
{
	double rel = 0;

	for (size_t i = 0; i < n; i++)
		if (costs[i].full_ns && (double)costs[i].spread_ns / (double)costs[i].full_ns > rel)
			rel = (double)costs[i].spread_ns / (double)costs[i].full_ns;
	return rel;
}

int vp_probe_cost_of(const struct vp_header *hdr, uint32_t func, uint64_t *in_window,
		     uint64_t *full)
{
	if (func >= hdr->nfuncs)
		return -ENOENT;
	for (size_t i = 0; i < hdr->ncosts; i++) {
		if (hdr->costs[i].insn_class == hdr->funcs[func].insn_class) {
			*in_window = hdr->costs[i].in_window_ns;
			*full = hdr->costs[i].full_ns;
			return 0;
		}
	}
	return -ENOENT;
}

int vp_compensator_set(struct vp_compensator *c, const struct vp_header *h, int on)
{
	size_t n = h->nfuncs;

	c->on = 0;
	if (!on || !n)
		return 0;
	if (!c->in_win) {
		uint64_t *in_win = calloc(n, sizeof(*in_win));
		uint64_t *extra = calloc(n, sizeof(*extra));

		if (!in_win || !extra) {
			free(in_win);
			free(extra);
			return -ENOMEM;
		}
		for (uint32_t f = 0; f < n; f++) {
			uint64_t in, full;

			if (vp_probe_cost_of(h, f, &in, &full))
				continue;
			in_win[f] = in;
			extra[f] = full > in ? full - in : 0;
		}
		c->in_win = in_win;
		c->extra = extra;
	}
	c->on = 1;
	return 0;
}

int vp_compensator_threads(struct vp_compensator *c, size_t cap)
{
	uint64_t *p;

	p = realloc(c->debt, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->debt = p;
	p = realloc(c->last_out, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->last_out = p;
	return 0;
}

void vp_compensator_thread_start(struct vp_compensator *c, uint32_t idx)
{
	c->debt[idx] = 0;
	c->last_out[idx] = 0;
}

/*
 * Probe-cost compensation of one event (see vp_reader_compensate()): the
 * per-thread debt is what the probes added to this thread's clock so far.
 *
 * The debt grows where the time is spent.  The kernel stamps an event in
 * its trap handler; what follows the entry's stamp (emulating or
 * single-stepping the probed instruction, the way back to user space) is
 * nearly all of the in-window cost, so it is owed from the entry on, and
 * the events inside the call (its children) move back with it.  What
 * precedes the stamps - the trap into the kernel - is about the same for
 * every probe.  Owing the in-window cost only at the exit instead would
 * leave a child's exit up to that cost too close to its parent's exit,
 * and the clamp below would lengthen the parent.  The rest of a call's
 * cost (extra) is owed after its exit.
 */
void vp_compensator_apply(struct vp_compensator *c, struct vp_event *ev)
{
	uint64_t *debt, *last;
	uint64_t t;

	if (!c->on)
		return;
	debt = &c->debt[ev->thread];
	last = &c->last_out[ev->thread];
	t = ev->time > *debt ? ev->time - *debt : 0;
	/* per-thread times stay monotonic, whatever the costs: an exit moved
	 * up shortens its call less than the costs say (to 0 at the least),
	 * which the report must say */
	if (t < *last || (ev->time <= *debt && ev->time)) {
		if (ev->kind == VP_EV_EXIT) {
			/* moved up to the last time, or from below 0 to it */
			uint64_t by = (t < *last ? *last - t : 0) +
				      (ev->time <= *debt ? *debt - ev->time : 0);

			c->clamped++;
			if (by > c->clamped_max)
				c->clamped_max = by;
		}
		if (t < *last)
			t = *last;
	}
	*last = t;
	ev->time = t;
	*debt += ev->kind == VP_EV_EXIT ? c->extra[ev->func] : c->in_win[ev->func];
}

void vp_compensator_release(struct vp_compensator *c)
{
	free(c->in_win);
	free(c->extra);
	free(c->debt);
	free(c->last_out);
	memset(c, 0, sizeof(*c));
}
