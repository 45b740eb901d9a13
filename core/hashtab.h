/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * hashtab.h - the one hash table of varperf: open addressing with linear
 * probing, fixed-size entries, and the hash functions its users key it by.
 */
#ifndef VARPERF_CORE_HASHTAB_H
#define VARPERF_CORE_HASHTAB_H

#include <stddef.h>
#include <stdint.h>

/**
 * vp_hash_mix - a 64-bit hash of the pair (@a, @b), good in every bit:
 * one 64x64->128-bit multiply folded (wyhash's mix), else splitmix64's
 * finalizer.  Hash wider keys by chaining: vp_hash_mix(vp_hash_mix(a, b), c).
 * Not stable across builds: never store it.
 */
static inline uint64_t vp_hash_mix(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 r = (unsigned __int128)(a ^ 0x2d358dccaa6c78a5ULL) *
			      (b ^ 0x8bb84b93962eacc9ULL);

	return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
	uint64_t h = (a ^ 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;

	h ^= b + (h >> 31);
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
#endif
}

/**
 * vp_hash_str - a 64-bit hash of the NUL-terminated string @s (FNV-1a,
 * finished by vp_hash_mix() so that its low bits are as good as its high).
 */
uint64_t vp_hash_str(const char *s);

/**
 * vp_hash_mem - a 64-bit hash of the @len bytes at @p, 8 at a time.
 */
uint64_t vp_hash_mem(const void *p, size_t len);

/**
 * vp_hashtab_eq_fn - whether @entry holds the key @key: for keys that are
 * not the entry's leading bytes (a string, an index into the caller's
 * array).  @key is whatever the caller passes to the lookup, so it can
 * carry the caller's arrays along.
 */
typedef int vp_hashtab_eq_fn(const void *entry, const void *key);

/**
 * struct vp_hashtab - a set of fixed-size entries found by a key and the
 * caller's 64-bit hash of it.  At most half full, so a lookup probes few
 * slots; each slot keeps 32 bits of its entry's hash, which spares most
 * key comparisons and lets the table grow without hashing again.
 * Set up with vp_hashtab_init(); zero-filled, a table is empty and
 * refuses entries (-EINVAL).
 */
struct vp_hashtab {
	uint32_t *tags;		/* per slot: 0 free, else the entry's hash (0 -> 1) */
	unsigned char *ents;	/* per slot: esize bytes */
	vp_hashtab_eq_fn *eq;	/* NULL: the first ksize bytes are the key */
	size_t esize, ksize;
	size_t mask;		/* slots - 1, when slots are allocated */
	size_t n;		/* entries */
};

/**
 * vp_hashtab_init - an empty table of entries of @esize bytes.  With @eq
 * NULL the key is the entry's first @ksize bytes, compared and copied as
 * bytes; with @eq, @eq compares and the caller fills in new entries
 * (@ksize is then unused).  Allocates nothing.  Returns 0, or -EINVAL
 * for a zero @esize or a key longer than the entry.
 */
int vp_hashtab_init(struct vp_hashtab *t, size_t esize, size_t ksize, vp_hashtab_eq_fn *eq);

/**
 * vp_hashtab_release - free @t's slots; the entries are the caller's to
 * release first (see vp_hashtab_next()).  @t is empty and usable after.
 */
void vp_hashtab_release(struct vp_hashtab *t);

/**
 * vp_hashtab_clear - remove every entry, keeping the slots.
 */
void vp_hashtab_clear(struct vp_hashtab *t);

/**
 * vp_hashtab_find - the entry of @key, whose hash is @hash, or NULL.
 * Entries move when the table changes: a pointer to one is good until
 * the next insert or remove.
 */
void *vp_hashtab_find(const struct vp_hashtab *t, uint64_t hash, const void *key);

/**
 * vp_hashtab_find_eq - vp_hashtab_find() inlined, with @eq for the table's
 * own: for a hot path, where @eq is a constant the compiler can inline
 * too (the calling-context tree's index, looked up for every call).
 */
static inline void *vp_hashtab_find_eq(const struct vp_hashtab *t, uint64_t hash, const void *key,
				       vp_hashtab_eq_fn *eq)
{
	uint32_t tag = (uint32_t)hash ? (uint32_t)hash : 1;

	if (!t->n)
		return NULL;
	for (size_t i = tag & t->mask; t->tags[i]; i = (i + 1) & t->mask)
		if (t->tags[i] == tag && eq(t->ents + i * t->esize, key))
			return t->ents + i * t->esize;
	return NULL;
}

/**
 * vp_hashtab_insert - the entry of @key in *@ret, added if need be: a new
 * entry is zero-filled, then given the key's bytes when the table has no
 * eq function.  Returns 1 when added, 0 when found, -ENOMEM (nothing
 * changed), or -EINVAL for a table never set up.
 */
int vp_hashtab_insert(struct vp_hashtab *t, uint64_t hash, const void *key, void **ret);

/**
 * vp_hashtab_remove - remove the entry of @key.  Returns 1 if there was
 * one, else 0.  No tombstones: later entries of the probe run move back.
 */
int vp_hashtab_remove(struct vp_hashtab *t, uint64_t hash, const void *key);

/**
 * vp_hashtab_next - the entry after slot *@pos (start with *@pos = 0),
 * or NULL at the end; in no useful order.  For releasing what entries
 * own: the table must not change meanwhile.
 */
void *vp_hashtab_next(const struct vp_hashtab *t, size_t *pos);

#endif
