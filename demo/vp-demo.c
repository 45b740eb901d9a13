/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vp-demo.c - a game-like frame loop with known sources of variance, to
 * try varperf on: `varperf record -- vp-demo && varperf report`.
 *
 * Per frame: input() and audio() cost the same every time; physics() calls
 * collide() once per object and the object count changes from frame to
 * frame (variance from a child in a loop); ai() is cheap except for a spike
 * every 16th frame; render() takes either render_simple() or
 * render_detailed() (mutually exclusive: negative covariance).  The demo
 * times its own frames and prints their mean and CoV at the end.
 */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The helpers are inlined so that only the game's functions are probed. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))

enum { DEFAULT_FRAMES = 300, AI_SPIKE_PERIOD = 16 };

static uint32_t lcg_state = 2024;

ALWAYS_INLINE uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy-wait: on a loaded machine the cost stays what the demo says. */
ALWAYS_INLINE void spin_us(unsigned us)
{
	uint64_t end = now_ns() + (uint64_t)us * 1000;

	while (now_ns() < end)
		;
}

/* Deterministic pseudo-random integer in [lo, hi]. */
ALWAYS_INLINE unsigned lcg_range(unsigned lo, unsigned hi)
{
	lcg_state = lcg_state * 1664525u + 1013904223u;
	return lo + (unsigned)(((uint64_t)(lcg_state >> 8) * (hi - lo + 1)) >> 24);
}

static NOINLINE void input(void)
{
	spin_us(100);
}

static NOINLINE void collide(unsigned size)
{
	spin_us(size);
}

/* A broad phase, then 4 to 48 objects of 30 to 90 us each. */
static NOINLINE void physics(unsigned n_objects)
{
	spin_us(20);
	for (unsigned i = 0; i < n_objects; i++)
		collide(lcg_range(30, 90));
}

/* Path finding runs in full every 16th frame. */
static NOINLINE void ai(unsigned frame_no)
{
	spin_us(frame_no % AI_SPIKE_PERIOD == AI_SPIKE_PERIOD - 1 ? 2000 : 50);
}

static NOINLINE void render_simple(void)
{
	spin_us(500);
}

static NOINLINE void render_detailed(void)
{
	spin_us(2000);
}

/* About 30 % of the frames have something close to the camera. */
static NOINLINE void render(unsigned detail)
{
	spin_us(40);
	if (detail)
		render_detailed();
	else
		render_simple();
}

static NOINLINE void audio(void)
{
	spin_us(150);
}

static NOINLINE void frame(unsigned frame_no)
{
	input();
	physics(lcg_range(4, 48));
	ai(frame_no);
	render(lcg_range(0, 9) < 3);
	audio();
}

/* Returns the frame times' mean and CoV through @mean and @cov. */
static NOINLINE void run_frames(unsigned n_frames, double *mean, double *cov)
{
	double m = 0, m2 = 0;

	for (unsigned i = 0; i < n_frames; i++) {
		uint64_t t0 = now_ns();
		double x, d;

		frame(i);
		x = (double)(now_ns() - t0);
		/* Welford: numerically stable running mean and variance */
		d = x - m;
		m += d / (i + 1);
		m2 += d * (x - m);
	}
	*mean = m;
	*cov = 0;
	if (n_frames && m > 0) {
		double var = m2 / n_frames, sd = var > 1 ? var / 2 : 1;

		/* Newton's square root: keeps the demo free of libm */
		for (int k = 0; k < 60 && var > 0; k++)
			sd = 0.5 * (sd + var / sd);
		*cov = var > 0 ? sd / m : 0;
	}
}

int main(int argc, char **argv)
{
	unsigned n_frames = DEFAULT_FRAMES;
	double mean, cov;

	if (argc > 2 || (argc == 2 && (n_frames = (unsigned)strtoul(argv[1], NULL, 10)) == 0)) {
		fprintf(stderr, "usage: vp-demo [FRAMES]\n");
		return 2;
	}
	run_frames(n_frames, &mean, &cov);
	printf("vp-demo: %u frames, frame time mean %.3f ms, CoV %.3f\n", n_frames, mean / 1e6,
	       cov);
	return 0;
}
