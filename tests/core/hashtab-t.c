/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * hashtab-t.c - tests for core/hashtab.c: random inserts, lookups and
 * removals checked against a plain array, with a good hash and with one
 * that puts every key in four probe runs (long runs that wrap around the
 * end, where removal has to move entries back), and keys compared by the
 * caller (interned strings).
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "core/hashtab.h"
#include "tests/tap/basic.h"

struct key {
	uint64_t a, b;
};

struct entry {
	struct key k;
	uint64_t val;
};

enum { NKEYS = 600, NOPS = 200000, CHECK_EVERY = 997 };

/* The reference: key i of keys[] is in the set iff in[i], with val[i]. */
struct ref {
	struct key keys[NKEYS];
	int in[NKEYS];
	uint64_t val[NKEYS];
	size_t n;
};

static uint64_t lcg_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static uint64_t good_hash(const struct key *k)
{
	return vp_hash_mix(k->a, k->b);
}

static uint64_t bad_hash(const struct key *k)
{
	return k->a & 3;
}

/* The byte keys' comparison, for vp_hashtab_find_eq(). */
static int key_eq(const void *entry, const void *key)
{
	return !memcmp(entry, key, sizeof(struct key));
}

/* Whether @t holds exactly what @r does, each entry once. */
static int same_set(const struct vp_hashtab *t, const struct ref *r)
{
	int seen[NKEYS] = { 0 };
	size_t pos = 0, n = 0;
	struct entry *e;

	if (t->n != r->n)
		return 0;
	while ((e = vp_hashtab_next(t, &pos))) {
		size_t i;

		for (i = 0; i < NKEYS; i++)
			if (!memcmp(&r->keys[i], &e->k, sizeof(e->k)))
				break;
		if (i == NKEYS || !r->in[i] || seen[i] || e->val != r->val[i])
			return 0;
		seen[i] = 1;
		n++;
	}
	return n == r->n;
}

/* NOPS random operations on byte keys hashed by @hash. */
static void random_ops(const char *name, uint64_t (*hash)(const struct key *))
{
	static struct ref r;
	struct vp_hashtab t;
	uint64_t s = 42;
	size_t bad_insert = 0, bad_find = 0, bad_find_eq = 0, bad_remove = 0, bad_set = 0;
	size_t checks = 0;
	size_t most = 0;

	memset(&r, 0, sizeof(r));
	for (size_t i = 0; i < NKEYS; i++) {
		/* distinct keys; some differ only in b, some only in a */
		r.keys[i].a = i % 50;
		r.keys[i].b = i / 50 * 0x100000001ULL;
	}
	is_int(0, vp_hashtab_init(&t, sizeof(struct entry), sizeof(struct key), NULL),
	       "%s: init", name);
	for (size_t op = 0; op < NOPS; op++) {
		size_t i = lcg_next(&s) % NKEYS;
		uint64_t h = hash(&r.keys[i]), what = lcg_next(&s) % 10;
		struct entry *e;
		void *p;

		if (what < 4) {
			int ret = vp_hashtab_insert(&t, h, &r.keys[i], &p);

			e = p;
			if (ret != !r.in[i] || !e || memcmp(&e->k, &r.keys[i], sizeof(e->k)) ||
			    (ret == 1 && e->val != 0) || (ret == 0 && e->val != r.val[i]))
				bad_insert++;
			if (e) {
				e->val = lcg_next(&s);
				r.val[i] = e->val;
			}
			if (ret == 1) {
				r.in[i] = 1;
				r.n++;
			}
		} else if (what < 7) {
			e = vp_hashtab_find(&t, h, &r.keys[i]);
			if (r.in[i] ? !e || e->val != r.val[i] ||
					      memcmp(&e->k, &r.keys[i], sizeof(e->k))
				    : e != NULL)
				bad_find++;
			if (vp_hashtab_find_eq(&t, h, &r.keys[i], key_eq) != e)
				bad_find_eq++;
		} else {
			int ret = vp_hashtab_remove(&t, h, &r.keys[i]);

			if (ret != r.in[i])
				bad_remove++;
			if (r.in[i]) {
				r.in[i] = 0;
				r.n--;
			}
		}
		if (r.n > most)
			most = r.n;
		if (op % CHECK_EVERY == 0) {
			checks++;
			if (!same_set(&t, &r))
				bad_set++;
		}
	}
	is_int(0, bad_insert, "%s: %d inserts as the reference says", name, NOPS);
	is_int(0, bad_find, "%s: lookups find what the reference holds, and only that", name);
	is_int(0, bad_find_eq, "%s: the inlined lookup finds the same entries", name);
	is_int(0, bad_remove, "%s: removals remove what the reference holds", name);
	is_int(0, bad_set, "%s: the entries are the reference's, each once (%zu checks)", name,
	       checks);
	ok(most > NKEYS / 3 && t.mask + 1 >= 2 * most, "%s: grew to %zu slots for %zu entries",
	   name, t.mask + 1, most);

	/* empty it by removal: nothing may be left behind */
	for (size_t i = 0; i < NKEYS; i++)
		if (r.in[i] && vp_hashtab_remove(&t, hash(&r.keys[i]), &r.keys[i]) == 1) {
			r.in[i] = 0;
			r.n--;
		}
	is_int(0, t.n, "%s: empty after removing every key", name);
	ok(same_set(&t, &r), "%s: ... and no entry left to iterate", name);
	vp_hashtab_release(&t);
}

/* ---- keys compared by the caller: strings interned to indices ---- */

struct strs {
	const char **v;
	const char *s;
};

static int str_eq(const void *entry, const void *key)
{
	const struct strs *k = key;

	return !strcmp(k->v[*(const uint32_t *)entry], k->s);
}

static void interned(void)
{
	static const char *const words[] = { "main", "frame", "process", "helper",
					     "leaf", "main", "",	"leaf",
					     "frame", "mainx", "",	"process" };
	const char *v[12];
	uint32_t ids[12], n = 0;
	struct vp_hashtab t;
	int ok_ids = 1;

	is_int(0, vp_hashtab_init(&t, sizeof(uint32_t), 0, str_eq), "strings: init");
	for (size_t i = 0; i < 12; i++) {
		struct strs k = { v, words[i] };
		void *p;
		int ret = vp_hashtab_insert(&t, vp_hash_str(words[i]), &k, &p);

		if (ret == 1) {
			if (*(uint32_t *)p != 0)
				ok_ids = 0; /* a new entry is zero-filled */
			v[n] = words[i];
			*(uint32_t *)p = n++;
		}
		ids[i] = *(uint32_t *)p;
	}
	ok(ok_ids, "strings: new entries are zero-filled");
	is_int(7, n, "strings: 7 distinct of 12");
	ok(ids[0] == ids[5] && ids[1] == ids[8] && ids[4] == ids[7] && ids[6] == ids[10] &&
		   ids[2] == ids[11] && ids[0] != ids[9],
	   "strings: equal strings, equal ids; a longer one, another");
	{
		struct strs k = { v, "frame" };
		uint32_t *e = vp_hashtab_find(&t, vp_hash_str("frame"), &k);

		ok(e && *e == ids[1], "strings: found by content");
		k.s = "fram";
		ok(!vp_hashtab_find(&t, vp_hash_str("fram"), &k), "strings: a prefix is not");
	}
	vp_hashtab_clear(&t);
	{
		struct strs k = { v, "main" };
		void *p;

		ok(t.n == 0 && !vp_hashtab_find(&t, vp_hash_str("main"), &k),
		   "strings: cleared, nothing found");
		is_int(1, vp_hashtab_insert(&t, vp_hash_str("main"), &k, &p),
		       "strings: ... and new again");
	}
	vp_hashtab_release(&t);
}

int main(void)
{
	struct vp_hashtab t;
	static const char ab[] = "ab\0";

	plan(33);

	/* what init refuses */
	is_int(-EINVAL, vp_hashtab_init(&t, 0, 0, NULL), "init: no entry size");
	is_int(-EINVAL, vp_hashtab_init(&t, 8, 9, NULL), "init: a key longer than the entry");
	is_int(-EINVAL, vp_hashtab_init(&t, 8, 0, NULL), "init: no key and no eq");
	{
		uint64_t k = 7;
		void *p = &k;

		memset(&t, 0, sizeof(t));
		ok(!vp_hashtab_find(&t, 7, &k) && vp_hashtab_remove(&t, 7, &k) == 0,
		   "zero-filled: empty");
		ok(vp_hashtab_insert(&t, 7, &k, &p) == -EINVAL && !p,
		   "zero-filled: refuses an entry");
	}

	/* the hashes: equal input, equal hash; trailing zero bytes count */
	ok(vp_hash_mem(ab, 2) == vp_hash_mem("ab", 2) && vp_hash_mem(ab, 2) != vp_hash_mem(ab, 3),
	   "vp_hash_mem: same bytes, same hash; a trailing NUL changes it");
	ok(vp_hash_str("leaf") == vp_hash_str("leaf") && vp_hash_str("leaf") != vp_hash_str("lea"),
	   "vp_hash_str: same string, same hash; a prefix differs");

	random_ops("good hash", good_hash);
	random_ops("4 runs", bad_hash);
	interned();
	return 0;
}
