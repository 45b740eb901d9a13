/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench-events.h - the synthetic event stream of the analysis benchmarks
 * (vcg-bench, deep-bench): calls, returns and time as varperf record would
 * write them (one thread; each depth its own stack pointer, an exit's 8
 * higher), a reproducible LCG, a clock and an error line.  Include it once per program,
 * after setting bench_name; point stack_func at room for the deepest call.
 */
#ifndef VARPERF_BENCH_EVENTS_H
#define VARPERF_BENCH_EVENTS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/datafile.h"

static struct vp_event *evs;
static size_t nev, cap;
static uint64_t now;
static uint32_t *stack_func;
static size_t depth;
static uint32_t lcg = 12345;

static unsigned rnd(unsigned n)
{
	lcg = lcg * 1664525u + 1013904223u;
	return (unsigned)(((uint64_t)(lcg >> 8) * n) >> 24);
}

static void emit(struct vp_event ev)
{
	if (nev == cap) {
		cap = cap ? cap * 2 : 1 << 16;
		evs = realloc(evs, cap * sizeof(*evs));
		if (!evs) {
			perror(bench_name);
			exit(1);
		}
	}
	evs[nev++] = ev;
}

static void call(uint32_t func, uint32_t cs)
{
	emit((struct vp_event){ .time = now, .sp = 0x7fff00000000ULL - 64 * depth, .func = func,
				.callsite = cs, .kind = VP_EV_ENTRY });
	stack_func[depth++] = func;
}

static void leave(void)
{
	depth--;
	emit((struct vp_event){ .time = now, .sp = 0x7fff00000000ULL - 64 * depth + 8,
				.func = stack_func[depth], .kind = VP_EV_EXIT });
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Say what failed with core's -errno @err; the exit code. */
static int fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", bench_name, what, strerror(-err));
	return 1;
}

#endif
