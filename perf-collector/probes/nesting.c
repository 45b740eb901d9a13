/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * nesting.c - a model of the kernel's pending return probes per thread.
 * A return probe's instance exists from its entry until its return; the
 * kernel drops instances whose stack slot is gone (longjmp) when the next
 * return probe arms, and arms none beyond VP_URETPROBE_MAX_DEPTH pending
 * (prepare_uretprobe() in kernel/events/uprobes.c, which only says so in
 * the kernel log).  The same stack-pointer rules as the report's pairing.
 */
#include <config.h>

#include <stdlib.h>

#include "core/pairing.h"
#include "perf-collector/probes/nesting.h"
#include "util/util.h"

struct nest_thread {
	uint64_t sp[VP_URETPROBE_MAX_DEPTH]; /* entry sp of each pending instance */
	size_t depth;
};

struct vp_nesting {
	struct nest_thread **threads;
	size_t nthreads;
	uint64_t *lost;
	size_t nfuncs;
	uint64_t total;
};

struct vp_nesting *vp_nesting_new(size_t nfuncs)
{
	struct vp_nesting *n = xcalloc(1, sizeof(*n));

	n->lost = xcalloc(nfuncs ? nfuncs : 1, sizeof(*n->lost));
	n->nfuncs = nfuncs;
	return n;
}

void vp_nesting_free(struct vp_nesting *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nthreads; i++)
		free(n->threads[i]);
	free(n->threads);
	free(n->lost);
	free(n);
}

static struct nest_thread *thread_of(struct vp_nesting *n, uint32_t thread)
{
	if (thread >= n->nthreads) {
		size_t cap = n->nthreads ? n->nthreads : 8;

		while (cap <= thread)
			cap *= 2;
		n->threads = xrealloc(n->threads, cap * sizeof(*n->threads));
		for (size_t i = n->nthreads; i < cap; i++)
			n->threads[i] = NULL;
		n->nthreads = cap;
	}
	if (!n->threads[thread])
		n->threads[thread] = xcalloc(1, sizeof(*n->threads[thread]));
	return n->threads[thread];
}

int vp_nesting_entry(struct vp_nesting *n, uint32_t thread, uint32_t func, uint64_t sp,
		     int tail)
{
	struct nest_thread *t = thread_of(n, thread);

	while (t->depth && vp_pair_dead_on_call(t->sp[t->depth - 1], sp, tail))
		t->depth--;
	if (t->depth == VP_URETPROBE_MAX_DEPTH) {
		if (func < n->nfuncs)
			n->lost[func]++;
		n->total++;
		return 1;
	}
	t->sp[t->depth++] = sp;
	return 0;
}

void vp_nesting_exit(struct vp_nesting *n, uint32_t thread, uint64_t sp)
{
	struct nest_thread *t = thread_of(n, thread);
	uint64_t entry = vp_pair_entry_sp(sp);

	while (t->depth && vp_pair_dead_on_return(t->sp[t->depth - 1], entry))
		t->depth--;
	if (t->depth && t->sp[t->depth - 1] == entry)
		t->depth--;
}

uint64_t vp_nesting_lost(const struct vp_nesting *n)
{
	return n ? n->total : 0;
}

uint64_t vp_nesting_lost_of(const struct vp_nesting *n, uint32_t func)
{
	return n && func < n->nfuncs ? n->lost[func] : 0;
}
