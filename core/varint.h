/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * varint.h - ULEB128 and zig-zag encodings used by the data file.  The
 * decoders are bounds-checked: they never read past @end and report
 * overlong or truncated numbers, because files come from outside.
 */
#ifndef VARPERF_CORE_VARINT_H
#define VARPERF_CORE_VARINT_H

#include <stddef.h>
#include <stdint.h>

enum { VP_ULEB_MAX = 10 };

static inline size_t vp_uleb_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline uint64_t vp_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t vp_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/*
 * vp_uleb_get - decode at *@pp (not past @end) into @ret and advance.
 * Returns 0, or -1 when the number is truncated or longer than 64 bits.
 */
static inline int vp_uleb_get(const uint8_t **pp, const uint8_t *end, uint64_t *ret)
{
	const uint8_t *p = *pp;
	uint64_t v;
	unsigned shift;

	/* Fast path: one byte, the common case for tags and deltas. */
	if (p < end && *p < 0x80) {
		*ret = *p;
		*pp = p + 1;
		return 0;
	}
	v = 0;
	for (shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t b = *p++;

		if (shift == 63 && (b & 0x7e))
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/*
 * vp_uleb_get_fast - decode without an end check; the caller guarantees
 * VP_ULEB_MAX readable bytes.  Returns -1 for a number longer than that.
 */
static inline int vp_uleb_get_fast(const uint8_t **pp, uint64_t *ret)
{
	const uint8_t *p = *pp;
	uint64_t v = *p++;
	unsigned shift;

	if (v < 0x80) {
		*ret = v;
		*pp = p;
		return 0;
	}
	v &= 0x7f;
	for (shift = 7; shift < 70; shift += 7) {
		uint8_t b = *p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

static inline void vp_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t vp_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void vp_put_le64(uint8_t *p, uint64_t v)
{
	vp_put_le32(p, (uint32_t)v);
	vp_put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t vp_get_le64(const uint8_t *p)
{
	return (uint64_t)vp_get_le32(p) | (uint64_t)vp_get_le32(p + 4) << 32;
}

#endif
