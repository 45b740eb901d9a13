/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * hashtab.c - the one hash table: open addressing, linear probing, at
 * most half full, deletion by moving back the rest of a probe run.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"

enum { MIN_SLOTS = 16 };

uint64_t vp_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return vp_hash_mix(h, 0);
}

uint64_t vp_hash_mem(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = len, w;

	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, 8);
		h = vp_hash_mix(h, w);
	}
	if (len) {
		w = 0;
		memcpy(&w, b, len);
		h = vp_hash_mix(h, w);
	}
	return h;
}

int vp_hashtab_init(struct vp_hashtab *t, size_t esize, size_t ksize, vp_hashtab_eq_fn *eq)
{
	memset(t, 0, sizeof(*t));
	if (!esize || (!eq && (!ksize || ksize > esize)))
		return -EINVAL;
	t->esize = esize;
	t->ksize = ksize;
	t->eq = eq;
	return 0;
}

void vp_hashtab_release(struct vp_hashtab *t)
{
	free(t->tags);
	free(t->ents);
	t->tags = NULL;
	t->ents = NULL;
	t->mask = 0;
	t->n = 0;
}

void vp_hashtab_clear(struct vp_hashtab *t)
{
	if (t->tags)
		memset(t->tags, 0, (t->mask + 1) * sizeof(*t->tags));
	t->n = 0;
}

/* 0 marks a free slot, so a hash whose low 32 bits are 0 is stored as 1;
 * the slot an entry wants is its tag's, so that growing needs no hash. */
static uint32_t tag_of(uint64_t hash)
{
	uint32_t tag = (uint32_t)hash;

	return tag ? tag : 1;
}

static void *ent(const struct vp_hashtab *t, size_t i)
{
	return t->ents + i * t->esize;
}

static int same(const struct vp_hashtab *t, size_t i, const void *key)
{
	return t->eq ? t->eq(ent(t, i), key) : !memcmp(ent(t, i), key, t->ksize);
}

/* The slot of @key, or the free slot that ends its probe run. */
static size_t slot_of(const struct vp_hashtab *t, uint32_t tag, const void *key)
{
	size_t i = tag & t->mask;

	for (; t->tags[i]; i = (i + 1) & t->mask)
		if (t->tags[i] == tag && same(t, i, key))
			break;
	return i;
}

void *vp_hashtab_find(const struct vp_hashtab *t, uint64_t hash, const void *key)
{
	size_t i;

	if (!t->n)
		return NULL;
	i = slot_of(t, tag_of(hash), key);
	return t->tags[i] ? ent(t, i) : NULL;
}

static int grow(struct vp_hashtab *t)
{
	size_t slots = t->tags ? (t->mask + 1) * 2 : MIN_SLOTS;
	uint32_t *tags;
	unsigned char *ents;

	if (!t->esize)
		return -EINVAL; /* zero-filled, never set up */
	/* tags hold 32 bits of the hash: no more slots than that addresses */
	if (slots - 1 > UINT32_MAX || slots > SIZE_MAX / t->esize)
		return -ENOMEM;
	tags = calloc(slots, sizeof(*tags));
	ents = malloc(slots * t->esize);
	if (!tags || !ents) {
		free(tags);
		free(ents);
		return -ENOMEM;
	}
	for (size_t i = 0; t->tags && i <= t->mask; i++) {
		size_t j;

		if (!t->tags[i])
			continue;
		for (j = t->tags[i] & (slots - 1); tags[j]; j = (j + 1) & (slots - 1))
			;
		tags[j] = t->tags[i];
		memcpy(ents + j * t->esize, ent(t, i), t->esize);
	}
	free(t->tags);
	free(t->ents);
	t->tags = tags;
	t->ents = ents;
	t->mask = slots - 1;
	return 0;
}

int vp_hashtab_insert(struct vp_hashtab *t, uint64_t hash, const void *key, void **ret)
{
	uint32_t tag = tag_of(hash);
	size_t i;
	int err;

	if (t->n) {
		i = slot_of(t, tag, key);
		if (t->tags[i]) {
			*ret = ent(t, i);
			return 0;
		}
	}
	if (!t->tags || (t->n + 1) * 2 > t->mask + 1) {
		err = grow(t);
		if (err) {
			*ret = NULL;
			return err;
		}
	}
	i = slot_of(t, tag, key);
	t->tags[i] = tag;
	memset(ent(t, i), 0, t->esize);
	if (!t->eq)
		memcpy(ent(t, i), key, t->ksize);
	t->n++;
	*ret = ent(t, i);
	return 1;
}

int vp_hashtab_remove(struct vp_hashtab *t, uint64_t hash, const void *key)
{
	size_t i, j;

	if (!t->n)
		return 0;
	i = slot_of(t, tag_of(hash), key);
	if (!t->tags[i])
		return 0;
	/* Move back each later entry of the run that may sit at i: one
	 * whose wanted slot is not between i (excluded) and where it is. */
	for (j = (i + 1) & t->mask; t->tags[j]; j = (j + 1) & t->mask) {
		size_t want = t->tags[j] & t->mask;

		if (((j - want) & t->mask) >= ((j - i) & t->mask)) {
			t->tags[i] = t->tags[j];
			memcpy(ent(t, i), ent(t, j), t->esize);
			i = j;
		}
	}
	t->tags[i] = 0;
	t->n--;
	return 1;
}

void *vp_hashtab_next(const struct vp_hashtab *t, size_t *pos)
{
	for (; t->tags && *pos <= t->mask; (*pos)++)
		if (t->tags[*pos])
			return ent(t, (*pos)++);
	return NULL;
}
