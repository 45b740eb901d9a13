/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * gen-events.c - write a synthetic varperf.data file of N events for the
 * analysis benchmark: two threads running a frame loop (frame -> update
 * -> collide x k, render -> draw_simple | draw_detailed, ...) with
 * varying durations, so the builder does real pairing, covariance and
 * tree work.  Usage: gen-events FILE N
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/datafile.h"

enum { F_MAIN, F_FRAME, F_UPDATE, F_COLLIDE, F_RENDER, F_SIMPLE, F_DETAILED, F_AUDIO, NF };

static const char *names[NF] = { "main",   "frame",	      "update",		"collide",
				 "render", "draw_simple", "draw_detailed", "audio" };

struct gen {
	struct vp_writer *w;
	uint64_t now[2];
	uint64_t lcg;
	uint64_t n, want;
	int err;
};

static uint32_t rnd(struct gen *g, uint32_t mod)
{
	g->lcg = g->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((g->lcg >> 33) % mod);
}

static void ev(struct gen *g, uint32_t th, uint32_t kind, uint32_t func, uint32_t cs,
	       uint64_t sp)
{
	struct vp_event e = { g->now[th], kind == VP_EV_EXIT ? sp + 8 : sp, func, cs, th, kind, 0 };

	if (!g->err)
		g->err = vp_writer_event(g->w, &e);
	g->n++;
}

static void leaf(struct gen *g, uint32_t th, uint32_t func, uint32_t cs, uint64_t sp,
		 uint64_t dur)
{
	ev(g, th, VP_EV_ENTRY, func, cs, sp);
	g->now[th] += dur;
	ev(g, th, VP_EV_EXIT, func, cs, sp);
}

static void frame(struct gen *g, uint32_t th)
{
	const uint64_t sp = 0x7ffd00000000ULL - th * 0x100000ULL;
	uint32_t k = 1 + rnd(g, 12), i;

	ev(g, th, VP_EV_ENTRY, F_FRAME, 1, sp - 64);
	g->now[th] += 300;
	ev(g, th, VP_EV_ENTRY, F_UPDATE, 2, sp - 128);
	for (i = 0; i < k; i++)
		leaf(g, th, F_COLLIDE, 3, sp - 192, 2000 + rnd(g, 3000));
	g->now[th] += 100;
	ev(g, th, VP_EV_EXIT, F_UPDATE, 2, sp - 128);
	ev(g, th, VP_EV_ENTRY, F_RENDER, 4, sp - 128);
	if (rnd(g, 4))
		leaf(g, th, F_SIMPLE, 5, sp - 192, 4000 + rnd(g, 500));
	else
		leaf(g, th, F_DETAILED, 6, sp - 192, 20000 + rnd(g, 9000));
	ev(g, th, VP_EV_EXIT, F_RENDER, 4, sp - 128);
	leaf(g, th, F_AUDIO, 7, sp - 128, 1500);
	ev(g, th, VP_EV_EXIT, F_FRAME, 1, sp - 64);
}

int main(int argc, char **argv)
{
	struct vp_func funcs[NF];
	struct vp_module mod = { "synthetic", NULL, 0 };
	char *args[] = { "gen-events" };
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	struct gen g = { 0 };
	uint32_t i;

	if (argc != 3) {
		fprintf(stderr, "usage: gen-events FILE N\n");
		return 129;
	}
	g.want = strtoull(argv[2], NULL, 10);
	memset(funcs, 0, sizeof(funcs));
	for (i = 0; i < NF; i++) {
		funcs[i].addr = funcs[i].probe_off = 0x1000 + i * 0x100;
		funcs[i].size = 0x100;
		funcs[i].name = funcs[i].display = funcs[i].base = (char *)names[i];
	}
	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.argc = 1;
	h.argv = args;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = NF;
	h.funcs = funcs;
	g.w = vp_writer_new(argv[1], &h);
	if (!g.w) {
		fprintf(stderr, "gen-events: cannot create '%s': %s\n", argv[1], strerror(errno));
		return 1;
	}
	g.lcg = 42;
	g.now[0] = g.now[1] = 1000000000ULL;
	for (i = 0; i < 2; i++)
		vp_writer_thread(g.w, i, 1000 + i, 1000);
	for (i = 0; i < 8; i++) {
		struct vp_callsite cs = { i ? 0 : VP_CS_NONE, 0, 0x1000 + i * 0x10, "", "", 0 };

		vp_writer_callsite(g.w, i, &cs);
	}
	/* main on each thread, then frames alternating between threads */
	ev(&g, 0, VP_EV_ENTRY, F_MAIN, 0, 0x7ffd00000000ULL);
	ev(&g, 1, VP_EV_ENTRY, F_MAIN, 0, 0x7ffd00000000ULL - 0x100000ULL);
	while (g.n + 40 < g.want && !g.err)
		frame(&g, (uint32_t)(g.n & 1));
	ev(&g, 0, VP_EV_EXIT, F_MAIN, 0, 0x7ffd00000000ULL);
	ev(&g, 1, VP_EV_EXIT, F_MAIN, 0, 0x7ffd00000000ULL - 0x100000ULL);
	tr.flags = VP_END_EXITED;
	if (g.err || vp_writer_finish(g.w, &tr)) {
		fprintf(stderr, "gen-events: cannot write '%s': %s\n", argv[1],
			strerror(g.err ? -g.err : errno));
		return 1;
	}
	printf("%llu\n", (unsigned long long)g.n);
	return 0;
}
