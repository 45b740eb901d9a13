/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * cct-bench.c - how long the calling-context tree takes to find a child
 * by (function, call site) where a node has more children than the
 * linear scan covers: the hash-table path of every call into a wide
 * dispatcher (an interpreter loop, an event handler, main's callees).
 *
 *   cct-bench [fan-out [lookups]]	(default 40 and 20 000 000)
 *
 * The tree: the root has FAN-OUT children, each of them 100; the lookups
 * pick a child and a grandchild at random, as calls would.  CPU time, so
 * that a busy machine's waiting does not count.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cct.h"

enum { GRANDCHILDREN = 100 };

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(const char *what, long err)
{
	fprintf(stderr, "cct-bench: %s: %s\n", what, strerror((int)-err));
	return 1;
}

int main(int argc, char **argv)
{
	long fanout = argc > 1 ? atol(argv[1]) : 40;
	long lookups = argc > 2 ? atol(argv[2]) : 20000000;
	uint64_t lcg = 1, sum = 0;
	struct vp_cct t;
	double t0, t1;
	long err;

	if (fanout < 1 || fanout > 1000000 || lookups < 1)
		return fprintf(stderr, "usage: cct-bench [fan-out [lookups]]\n"), 129;
	err = vp_cct_init(&t);
	if (err)
		return fail("init", err);
	t0 = cpu_seconds();
	for (uint32_t i = 0; i < (uint32_t)fanout; i++) {
		long c = vp_cct_child(&t, VP_NODE_ROOT, i, i);

		for (uint32_t j = 0; c >= 0 && j < GRANDCHILDREN; j++)
			err = vp_cct_child(&t, (uint32_t)c, j, 1000000 + j);
		if (c < 0 || err < 0)
			return fail("building the tree", c < 0 ? c : err);
	}
	t1 = cpu_seconds();
	printf("tree: %zu nodes, fan-out %ld then %d, built in %.3f s\n", t.nnodes, fanout,
	       GRANDCHILDREN, t1 - t0);
	t0 = cpu_seconds();
	for (long n = 0; n < lookups; n++) {
		uint32_t i, j;
		long c;

		lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
		i = (uint32_t)((lcg >> 33) % (uint64_t)fanout);
		j = (uint32_t)((lcg >> 13) % GRANDCHILDREN);
		c = vp_cct_child(&t, VP_NODE_ROOT, i, i);
		sum += (uint64_t)vp_cct_child(&t, (uint32_t)c, j, 1000000 + j);
	}
	t1 = cpu_seconds();
	/* the sum keeps the lookups from being optimised away */
	printf("lookups: %ld x 2 in %.3f s CPU, %.1f ns each (checksum %llu)\n", lookups,
	       t1 - t0, (t1 - t0) * 1e9 / (double)lookups / 2, (unsigned long long)sum);
	vp_cct_release(&t);
	return 0;
}
