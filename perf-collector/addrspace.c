/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * addrspace.c - the target's address space for naming call sites: its
 * mappings from PERF_RECORD_MMAP2 records and /proc/PID/maps, and the
 * ELF files mapped there.
 */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addrspace.h"
#include "symbols.h"
#include "util.h"

/* ---- the target's address space ---- */

struct vp_map {
	uint64_t start, end, pgoff;
	char *path;
};

struct vp_openfile {
	char *path;
	struct vp_symfile *sf; /* NULL if it could not be opened */
};

struct vp_addrspace {
	pid_t pid;
	struct vp_map *maps; /* sorted, disjoint */
	size_t nmaps;
	uint64_t uprobes_lo, uprobes_hi; /* the kernel's [uprobes] page(s) */
	const struct vp_module *mods;
	size_t nmods;
	struct vp_openfile *files;
	size_t nfiles;
};

struct vp_addrspace *vp_addrspace_new(pid_t pid, const struct vp_module *mods, size_t nmods)
{
	struct vp_addrspace *as = xcalloc(1, sizeof(*as));

	as->pid = pid;
	as->mods = mods;
	as->nmods = nmods;
	return as;
}

void vp_addrspace_free(struct vp_addrspace *as)
{
	if (!as)
		return;
	for (size_t i = 0; i < as->nmaps; i++)
		free(as->maps[i].path);
	for (size_t i = 0; i < as->nfiles; i++) {
		free(as->files[i].path);
		vp_symfile_free(as->files[i].sf);
	}
	free(as->maps);
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
	uint64_t end = start + len;
	struct vp_map *out = xcalloc(as->nmaps + 2, sizeof(*out));
	size_t n = 0, i;

	/* A new mapping replaces whatever it overlaps (perf does the same). */
	for (i = 0; i < as->nmaps; i++) {
		struct vp_map m = as->maps[i];

		if (m.end <= start || m.start >= end) {
			out[n++] = m;
			continue;
		}
		if (m.start < start)
			out[n++] = (struct vp_map){ m.start, start, m.pgoff, xstrdup(m.path) };
		if (m.end > end)
			out[n++] = (struct vp_map){ end, m.end, m.pgoff + (end - m.start),
						    xstrdup(m.path) };
		free(m.path);
	}
	for (i = 0; i < n && out[i].start < start; i++)
		;
	memmove(&out[i + 1], &out[i], (n - i) * sizeof(*out));
	out[i] = (struct vp_map){ start, end, pgoff, xstrdup(path) };
	free(as->maps);
	as->maps = out;
	as->nmaps = n + 1;
}

static const struct vp_map *addrspace_find(const struct vp_addrspace *as, uint64_t addr)
{
	size_t lo = 0, hi = as->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < as->maps[mid].start)
			hi = mid;
		else if (addr >= as->maps[mid].end)
			lo = mid + 1;
		else
			return &as->maps[mid];
	}
	return NULL;
}

/* Merge the live /proc/PID/maps: it also shows the [uprobes] page. */
static void addrspace_read_proc(struct vp_addrspace *as)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	if (as->pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)as->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int name = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off,
			   &name) < 4 || !name)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line + name, "[uprobes]")) {
			as->uprobes_lo = lo;
			as->uprobes_hi = hi;
		} else if (line[name] == '/' && strchr(perms, 'x') &&
			   !(addrspace_find(as, lo) && addrspace_find(as, hi - 1))) {
			vp_addrspace_mmap(as, lo, hi - lo, off, line + name);
		}
	}
	fclose(f);
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
	m = addrspace_find(as, addr);
	if (!m && addr >= as->uprobes_lo && addr < as->uprobes_hi)
		goto out_trampoline;
	if (!m) {
		/* Maybe mapped without an MMAP2 record we saw yet, e.g. at exec. */
		addrspace_read_proc(as);
		m = addrspace_find(as, addr);
	}
	if (!m) {
		/* The uretprobe trampoline is the first slot of the [uprobes]
		 * page; once the target is gone only its alignment tells. */
		if ((addr >= as->uprobes_lo && addr < as->uprobes_hi) ||
		    (!as->uprobes_hi && !(addr & 0xfff)))
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
