/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * events.h - a tiny program simulator for core's tests: calls, returns
 * and time become the entry and exit events varperf record would write
 * (one thread; each depth has its own stack pointer, an exit's is 8
 * higher).  Include it once per test program.
 */
#ifndef VARPERF_TESTS_CORE_EVENTS_H
#define VARPERF_TESTS_CORE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/cct.h"
#include "core/datafile.h"
#include "tests/tap/basic.h"

static struct vp_event *evs;
static size_t nev, evcap;
static uint64_t now;
static uint32_t stack_func[1 << 15]; /* deep enough for vcg-t's recursion */
static size_t depth;

static inline void emit(struct vp_event ev)
{
	if (nev == evcap) {
		evcap = evcap ? evcap * 2 : 4096;
		evs = brealloc(evs, evcap * sizeof(*evs));
	}
	evs[nev++] = ev;
}

static inline uint64_t sp_at(size_t d)
{
	return 0x7fff0000ULL - 64 * d;
}

/* Call @func from call site @cs (here every call site id names one line). */
static inline void call(uint32_t func, uint32_t cs)
{
	emit((struct vp_event){ .time = now, .sp = sp_at(depth), .func = func, .callsite = cs,
				.kind = VP_EV_ENTRY });
	stack_func[depth++] = func;
}

static inline void leave(void)
{
	depth--;
	emit((struct vp_event){ .time = now, .sp = sp_at(depth) + 8, .func = stack_func[depth],
				.kind = VP_EV_EXIT });
}

static inline void work(uint64_t ns)
{
	now += ns;
}

static inline void leaf(uint32_t func, uint32_t cs, uint64_t ns)
{
	call(func, cs);
	work(ns);
	leave();
}

static inline void reset_stream(void)
{
	nev = 0;
	now = 1000;
	depth = 0;
}

/*
 * NODE(tree, func, callsite, func, callsite, ...): the node reached from the
 * root by that path of (function, call site) pairs, or VP_NO_NODE.
 */
static inline uint32_t node_of(const struct vp_cct *t, const uint32_t *path, size_t n)
{
	uint32_t id = VP_NODE_ROOT;

	for (size_t i = 0; i < n && id != VP_NO_NODE; i += 2)
		id = vp_cct_find(t, id, path[i], path[i + 1]);
	return id;
}

#define NODE(t, ...)                                                                             \
	node_of((t), (const uint32_t[]){ __VA_ARGS__ },                                          \
		sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t))

#endif
