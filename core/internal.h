/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * internal.h - small helpers shared by core's modules and not part of its
 * public interface.
 */
#ifndef VARPERF_CORE_INTERNAL_H
#define VARPERF_CORE_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * vp_grow - make the array *@p of *@cap elements of @size bytes hold at
 * least @want, doubling from 8.  0 or -ENOMEM (the array is unchanged).
 */
static inline int vp_grow(void **p, size_t *cap, size_t want, size_t size)
{
	size_t n = *cap ? *cap : 8;
	void *q;

	if (want <= *cap)
		return 0;
	while (n < want)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/*
 * vp_grow_zeroed - vp_grow() for an array whose elements past *@cap must
 * read as zero bytes once it holds @want (per-thread state, flags by id).
 */
static inline int vp_grow_zeroed(void **p, size_t *cap, size_t want, size_t size)
{
	size_t old = *cap;
	int err = vp_grow(p, cap, want, size);

	if (!err && *cap > old)
		memset((char *)*p + old * size, 0, (*cap - old) * size);
	return err;
}

/*
 * vp_param_result - the end of a *_params_check(): 0 when @what is NULL,
 * else -EINVAL with @what copied to @err (when given).
 */
static inline int vp_param_result(const char *what, char *err, size_t errlen)
{
	if (!what)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s", what);
	return -EINVAL;
}

/* vp_crc32 - the CRC-32 of a data-file chunk's payload (datafile-write.c). */
uint32_t vp_crc32(const uint8_t *p, size_t n);

/* A one-line message for a caller's buffer (@msg may be NULL, @len 0):
 * core returns its errors as text, it never prints them. */
void vp_msgf(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
