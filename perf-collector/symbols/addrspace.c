/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * addrspace.c - a process's mappings (one set kept sorted, one reader of
 * /proc/PID/maps), and the target's address space for naming call sites:
 * its mappings and the ELF files mapped there.
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf-collector/symbols/addrspace.h"
#include "perf-collector/symbols/symbols.h"
#include "util/util.h"

/* ---- mappings ---- */

static void maps_grow(struct vp_maps *m, size_t n)
{
	if (n <= m->cap)
		return;
	m->cap = m->cap * 2 > n ? m->cap * 2 : n + 16;
	m->v = xrealloc(m->v, m->cap * sizeof(*m->v));
}

struct vp_map *vp_maps_insert(struct vp_maps *m, uint64_t start, uint64_t len, uint64_t pgoff,
			      const char *path)
{
	uint64_t end = start + len;
	size_t n = 0, i, cap = m->n + 2;
	struct vp_map *out;

	if (!strcmp(path, "[uprobes]")) {
		m->uprobes_lo = start;
		m->uprobes_hi = end;
		return NULL;
	}
	/* past all of them, as /proc lists them: append */
	if (!m->n || m->v[m->n - 1].end <= start) {
		maps_grow(m, m->n + 1);
		m->v[m->n] = (struct vp_map){ start, end, pgoff, xstrdup(path), 0, NULL };
		return &m->v[m->n++];
	}
	out = xcalloc(cap, sizeof(*out));
	for (i = 0; i < m->n; i++) {
		struct vp_map o = m->v[i], part = o;

		if (o.end <= start || o.start >= end) {
			out[n++] = o;
			continue;
		}
		if (o.start < start) {
			part.end = start;
			part.path = xstrdup(o.path);
			out[n++] = part;
		}
		if (o.end > end) {
			part = o;
			part.start = end;
			part.pgoff = o.pgoff + (end - o.start);
			part.path = xstrdup(o.path);
			out[n++] = part;
		}
		free(o.path);
	}
	for (i = 0; i < n && out[i].start < start; i++)
		;
	memmove(&out[i + 1], &out[i], (n - i) * sizeof(*out));
	out[i] = (struct vp_map){ start, end, pgoff, xstrdup(path), 0, NULL };
	free(m->v);
	m->v = out;
	m->n = n + 1;
	m->cap = cap;
	return &out[i];
}

const struct vp_map *vp_maps_find(const struct vp_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

int vp_maps_in_uprobes(const struct vp_maps *m, uint64_t addr)
{
	return addr >= m->uprobes_lo && addr < m->uprobes_hi;
}

void vp_maps_add(struct vp_maps *m, const struct vp_maps *from)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct vp_map *f = &from->v[i];
		struct vp_map *to = vp_maps_insert(m, f->start, f->end - f->start, f->pgoff,
						   f->path);

		to->bias = f->bias;
		to->data = f->data;
	}
	if (from->uprobes_hi) {
		m->uprobes_lo = from->uprobes_lo;
		m->uprobes_hi = from->uprobes_hi;
	}
}

void vp_maps_release(struct vp_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

int vp_maps_read(pid_t pid, struct vp_maps *ret)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int name = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off,
			   &name) < 4 ||
		    (perms[2] != 'x' && (!name || !strstr(line + name, "[uprobes]"))))
			continue;
		line[strcspn(line, "\n")] = '\0';
		vp_maps_insert(ret, lo, hi - lo, off, name ? line + name : "");
	}
	fclose(f);
	return 0;
}

/* ---- the target's address space, for naming call sites ---- */

struct vp_openfile {
	char *path;
	struct vp_symfile *sf; /* NULL if it could not be opened */
	int borrowed;	       /* the caller's, opened already */
};

struct vp_addrspace {
	pid_t pid;
	struct vp_maps maps; /* the target's file mappings and [uprobes] page */
	const struct vp_module *mods;
	size_t nmods;
	struct vp_openfile *files;
	size_t nfiles;
};

struct vp_addrspace *vp_addrspace_new(pid_t pid, const struct vp_module *mods,
				      struct vp_symfile *const *files, size_t nmods)
{
	struct vp_addrspace *as = xcalloc(1, sizeof(*as));

	as->pid = pid;
	as->mods = mods;
	as->nmods = nmods;
	/* the modules' files are open already: not twice */
	as->files = xcalloc(nmods ? nmods : 1, sizeof(*as->files));
	for (size_t i = 0; files && i < nmods; i++) {
		if (!files[i])
			continue;
		as->files[as->nfiles++] = (struct vp_openfile){ xstrdup(vp_symfile_path(files[i])),
								files[i], 1 };
	}
	return as;
}

void vp_addrspace_free(struct vp_addrspace *as)
{
	if (!as)
		return;
	vp_maps_release(&as->maps);
	for (size_t i = 0; i < as->nfiles; i++) {
		free(as->files[i].path);
		if (!as->files[i].borrowed)
			vp_symfile_free(as->files[i].sf);
	}
	free(as->files);
	free(as);
}

void vp_addrspace_target_gone(struct vp_addrspace *as)
{
	as->pid = 0;
}

void vp_addrspace_mmap(struct vp_addrspace *as, uint64_t start, uint64_t len, uint64_t pgoff,
		       const char *path)
{
	vp_maps_insert(&as->maps, start, len, pgoff, path);
}

/* Merge the live /proc/PID/maps: it also shows the [uprobes] page. */
static void addrspace_read_proc(struct vp_addrspace *as)
{
	struct vp_maps now = { 0 };

	if (as->pid > 0 && vp_maps_read(as->pid, &now) == 0) {
		for (size_t i = 0; i < now.n; i++) {
			const struct vp_map *m = &now.v[i];

			if (m->path[0] == '/' && !(vp_maps_find(&as->maps, m->start) &&
						   vp_maps_find(&as->maps, m->end - 1)))
				vp_maps_insert(&as->maps, m->start, m->end - m->start, m->pgoff,
					       m->path);
		}
		if (now.uprobes_hi) {
			as->maps.uprobes_lo = now.uprobes_lo;
			as->maps.uprobes_hi = now.uprobes_hi;
		}
	}
	vp_maps_release(&now);
}

static struct vp_symfile *addrspace_file(struct vp_addrspace *as, const char *path)
{
	struct vp_openfile *of;

	for (size_t i = 0; i < as->nfiles; i++)
		if (!strcmp(as->files[i].path, path))
			return as->files[i].sf;
	as->files = xrealloc(as->files, (as->nfiles + 1) * sizeof(*as->files));
	of = &as->files[as->nfiles++];
	of->path = xstrdup(path);
	of->sf = NULL;
	if (vp_symfile_open(path, &of->sf) < 0)
		of->sf = NULL;
	return of->sf;
}

void vp_addrspace_callsite(struct vp_addrspace *as, uint64_t addr, struct vp_callsite *cs)
{
	const struct vp_map *m;
	struct vp_symfile *sf;
	uint64_t vaddr;

	memset(cs, 0, sizeof(*cs));
	cs->module = -1;
	cs->offset = addr;
	if (!addr) {
		cs->flags = VP_CS_NONE;
		goto out_empty;
	}
	m = vp_maps_find(&as->maps, addr);
	if (!m && vp_maps_in_uprobes(&as->maps, addr))
		goto out_trampoline;
	if (!m) {
		/* Maybe mapped without an MMAP2 record we saw yet, e.g. at exec. */
		addrspace_read_proc(as);
		m = vp_maps_find(&as->maps, addr);
	}
	if (!m) {
		/* The uretprobe trampoline is the first slot of the [uprobes]
		 * page; once the target is gone only its alignment tells. */
		if (vp_maps_in_uprobes(&as->maps, addr) ||
		    (!as->maps.uprobes_hi && !(addr & 0xfff)))
			goto out_trampoline;
		cs->flags = VP_CS_UNMAPPED;
		goto out_empty;
	}
	for (size_t i = 0; i < as->nmods; i++)
		if (!strcmp(as->mods[i].path, m->path))
			cs->module = (int32_t)i;
	sf = addrspace_file(as, m->path);
	if (!sf || vp_symfile_off_to_vaddr(sf, addr - m->start + m->pgoff, &vaddr) < 0) {
		cs->offset = addr - m->start + m->pgoff;
		goto out_empty;
	}
	cs->offset = vaddr;
	vp_symfile_describe(sf, vaddr, &cs->caller, &cs->file, &cs->line);
	return;
out_trampoline:
	cs->flags = VP_CS_TRAMPOLINE;
out_empty:
	cs->caller = xstrdup("");
	cs->file = xstrdup("");
}

void vp_callsite_release(struct vp_callsite *cs)
{
	free(cs->caller);
	free(cs->file);
	cs->caller = cs->file = NULL;
}
