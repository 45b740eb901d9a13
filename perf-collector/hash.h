/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * hash.h - the hash of the collector's open-addressing tables keyed by a
 * pointer and a number (a module and an address).
 */
#ifndef VARPERF_HASH_H
#define VARPERF_HASH_H

#include <stdint.h>

/**
 * vp_hash_mix - a 64-bit hash of the pair (@a, @b), for masking to the
 * size of a table (splitmix64's finalizer constants).
 */
static inline uint64_t vp_hash_mix(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;

	h ^= b + (h >> 31);
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

#endif
