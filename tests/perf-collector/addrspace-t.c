/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * addrspace-t.c - tests for the mappings of perf-collector/symbols/addrspace.c:
 * a new mapping replaces what it overlaps as mmap() does (the part of an
 * old one before and after it stays, at the right file offset, with what
 * its user keeps with it), lookups by address, the [uprobes] page, one
 * address space copied into another, and the reader of /proc/PID/maps
 * against this process.
 */
#include <config.h>

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "perf-collector/symbols/addrspace.h"
#include "tests/tap/basic.h"

/* Whether @m is (start, end, pgoff, path). */
static void is_map(const struct vp_map *m, uint64_t start, uint64_t end, uint64_t pgoff,
		   const char *path, const char *what)
{
	if (!m) {
		ok(0, "%s: found", what);
		return;
	}
	ok(m->start == start && m->end == end && m->pgoff == pgoff && !strcmp(m->path, path),
	   "%s: [%#llx, %#llx) +%#llx %s", what, (unsigned long long)m->start,
	   (unsigned long long)m->end, (unsigned long long)m->pgoff, m->path);
}

static void test_insert(void)
{
	struct vp_maps m = { 0 };

	vp_maps_insert(&m, 0x3000, 0x1000, 0, "/c");
	vp_maps_insert(&m, 0x1000, 0x1000, 0, "/a");
	vp_maps_insert(&m, 0x5000, 0x4000, 0x10000, "/big");
	is_int(3, (long long)m.n, "three disjoint mappings");
	is_map(&m.v[0], 0x1000, 0x2000, 0, "/a", "kept sorted: first");
	is_map(&m.v[1], 0x3000, 0x4000, 0, "/c", "kept sorted: second");
	ok(!vp_maps_find(&m, 0x2000), "a gap is in no mapping");
	ok(!vp_maps_find(&m, 0x9000), "the end is not in the mapping");
	is_map(vp_maps_find(&m, 0x8fff), 0x5000, 0x9000, 0x10000, "/big", "the last byte is");

	/* a new mapping in the middle of /big leaves its two ends */
	vp_maps_insert(&m, 0x6000, 0x1000, 0, "/new");
	is_int(5, (long long)m.n, "the middle of a mapping replaced");
	is_map(vp_maps_find(&m, 0x5000), 0x5000, 0x6000, 0x10000, "/big", "its head stays");
	is_map(vp_maps_find(&m, 0x6800), 0x6000, 0x7000, 0, "/new", "the new one");
	is_map(vp_maps_find(&m, 0x7000), 0x7000, 0x9000, 0x12000, "/big",
	       "its tail stays, at its file offset");

	/* one mapping over several: they go */
	vp_maps_insert(&m, 0x800, 0x3800, 0, "/over");
	is_int(4, (long long)m.n, "a mapping over two replaces them");
	is_map(vp_maps_find(&m, 0x1000), 0x800, 0x4000, 0, "/over", "... all of them");
	is_map(&m.v[1], 0x5000, 0x6000, 0x10000, "/big", "... and nothing else");

	vp_maps_release(&m);
	is_int(0, (long long)m.n, "released: empty");
	vp_maps_insert(&m, 0x1000, 0x1000, 0, "");
	is_map(vp_maps_find(&m, 0x1000), 0x1000, 0x2000, 0, "", "usable again after release");
	vp_maps_release(&m);
}

/* What the unwinder keeps: a module's extent, its bias and the module. */
static void test_data(void)
{
	struct vp_maps m = { 0 }, copy = { 0 };
	int mod_a, mod_b;
	struct vp_map *a = vp_maps_insert(&m, 0x10000, 0x8000, 0, "/a");
	const struct vp_map *f;

	a->bias = 0x10000;
	a->data = &mod_a;
	vp_maps_insert(&m, 0x12000, 0x1000, 0, "/b")->data = &mod_b;
	f = vp_maps_find(&m, 0x11000);
	ok(f && f->data == &mod_a && f->bias == 0x10000,
	   "the head of a split extent keeps its data");
	f = vp_maps_find(&m, 0x13000);
	ok(f && f->data == &mod_a && f->bias == 0x10000 && f->start == 0x13000,
	   "... and so does its tail");
	f = vp_maps_find(&m, 0x12800);
	ok(f && f->data == &mod_b && f->bias == 0, "the new one has its own");

	/* the [uprobes] page is the address space's, no mapping */
	ok(!vp_maps_insert(&m, 0x7000, 0x1000, 0, "[uprobes]"), "[uprobes] makes no mapping");
	ok(!vp_maps_find(&m, 0x7000) && vp_maps_in_uprobes(&m, 0x7fff) &&
	   !vp_maps_in_uprobes(&m, 0x8000), "... it is the [uprobes] page, [start, end)");
	ok(!vp_maps_in_uprobes(&copy, 0), "an empty address space has no [uprobes] page");

	vp_maps_add(&copy, &m);
	is_int(3, (long long)copy.n, "copied: every mapping");
	f = vp_maps_find(&copy, 0x13000);
	ok(f && f->data == &mod_a && f->bias == 0x10000 && f->path != m.v[2].path &&
	   !strcmp(f->path, "/a"), "... with its data, and a path of its own");
	ok(vp_maps_in_uprobes(&copy, 0x7000), "... and the [uprobes] page");
	vp_maps_release(&copy);
	vp_maps_release(&m);
	ok(!m.uprobes_hi, "released: no [uprobes] page either");
}

static void test_read(void)
{
	struct vp_maps m = { 0 };
	const struct vp_map *code;
	int sorted = 1;

	is_int(0, vp_maps_read(getpid(), &m), "reads /proc/self/maps");
	code = vp_maps_find(&m, (uint64_t)(uintptr_t)test_read);
	ok(code && code->path[0] == '/', "this function's code is in a file mapping");
	for (size_t i = 1; i < m.n; i++)
		sorted &= m.v[i - 1].end <= m.v[i].start;
	ok(sorted, "the mappings are sorted and disjoint");
	ok(!vp_maps_find(&m, (uint64_t)(uintptr_t)&m), "the stack is not: no executable mapping");
	vp_maps_release(&m);
	ok(vp_maps_read(-1, &m) < 0, "no such process: an error");
	vp_maps_release(&m);
}

int main(void)
{
	plan(30);
	test_insert();
	test_data();
	test_read();
	return 0;
}
