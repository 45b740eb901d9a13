/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * calls.c - a call loop for measuring what recording costs per probed
 * call: `calls N` calls leaf() N times and prints the loop's own
 * duration in nanoseconds.  Built with -O0 so leaf() starts with
 * `push %rbp`, the instruction the kernel emulates; `calls N stepped`
 * calls leaf_stepped() instead, optimised so that it starts with a mov
 * from memory, which the kernel single-steps.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i)
{
	sink += i;
}

__attribute__((noinline, optimize("O2"))) void leaf_stepped(unsigned long i)
{
	sink += i;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, i;
	void (*fn)(unsigned long) = argc > 2 ? leaf_stepped : leaf;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		fn(i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	return 0;
}
