/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind-names.c - name the code addresses the unwinder finds, as the data
 * file's MODULE, SYMBOL and FRAME definitions: libdwfl's symbols (or the
 * vDSO's own table), and libdw's DWARF scopes for the functions inlined
 * at an address.
 */
#include <config.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/datafile.h"
#include "hash.h"
#include "plt-names.h"
#include "symbols.h"
#include "unwind-module.h"
#include "unwind-names.h"
#include "unwind.h"
#include "util.h"

/* Frame definitions already written: (module, address, is_ret) -> id. */
struct fkey {
	const struct vp_umod *mod;
	uint64_t addr;
	int is_ret;
	uint32_t id;
};

/* Symbols already written: (module, address or name) -> id. */
struct skey {
	const struct vp_umod *mod;
	uint64_t addr;	  /* physical functions */
	char *name;	  /* inlined functions (addr 0) */
	uint32_t id;
};

struct vp_unwind_names {
	struct vp_unwind_sink sink;
	uint32_t next_module;
	uint32_t next_symbol, next_frame;
	struct fkey *frames;
	size_t frames_mask, nframes;
	struct skey *syms;
	size_t syms_mask, nsyms;
	uint32_t unmapped_sym;
	int err; /* first sink error */
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int sink_error(struct vp_unwind_names *nm, int err)
{
	if (err && !nm->err)
		nm->err = err;
	return err;
}

static int define_module(struct vp_unwind_names *nm, struct vp_umod *m)
{
	struct vp_module vm = { 0 };

	if (m->defined)
		return 0;
	m->defined = 1;
	m->id = nm->next_module++;
	vm.path = m->path;
	if (m->elf) {
		/* the build-id note, when the file has one */
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(m->elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
				continue;
			d = elf_getdata(scn, NULL);
			while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    !memcmp((char *)d->d_buf + name_off, "GNU", 4)) {
					vm.build_id = (unsigned char *)d->d_buf + desc_off;
					vm.build_id_len = nh.n_descsz;
				}
			}
		}
	}
	return sink_error(nm, nm->sink.module(nm->sink.ctx, m->id, &vm, m->mflags));
}

static void skeys_grow(struct vp_unwind_names *nm);

static struct skey *skey_slot(struct vp_unwind_names *nm, const struct vp_umod *m, uint64_t addr,
			      const char *name)
{
	size_t i;

	if (2 * (nm->nsyms + 1) > nm->syms_mask)
		skeys_grow(nm);
	i = vp_hash_mix((uint64_t)(uintptr_t)m, name ? str_hash(name) : addr) & nm->syms_mask;
	for (;; i = (i + 1) & nm->syms_mask) {
		struct skey *k = &nm->syms[i];

		if (k->id == UINT32_MAX)
			return k;
		if (k->mod == m && k->addr == addr &&
		    (name ? k->name && !strcmp(k->name, name) : !k->name))
			return k;
	}
}

static void skeys_grow(struct vp_unwind_names *nm)
{
	struct skey *old = nm->syms;
	size_t oldn = old ? nm->syms_mask + 1 : 0;

	nm->syms_mask = oldn ? oldn * 2 - 1 : 255;
	nm->syms = xmalloc((nm->syms_mask + 1) * sizeof(*nm->syms));
	for (size_t i = 0; i <= nm->syms_mask; i++)
		nm->syms[i].id = UINT32_MAX;
	nm->nsyms = 0;
	for (size_t i = 0; i < oldn; i++)
		if (old[i].id != UINT32_MAX) {
			*skey_slot(nm, old[i].mod, old[i].addr, old[i].name) = old[i];
			nm->nsyms++;
		}
	free(old);
}

/* The symbol id of (@m, @addr or @name), defined with @flags on first use. */
static uint32_t symbol_id(struct vp_unwind_names *nm, const struct vp_umod *m, uint64_t addr,
			  uint64_t size, const char *name, uint32_t flags)
{
	struct skey *k = skey_slot(nm, m, flags & VP_SYM_INLINE ? 0 : addr,
				   flags & VP_SYM_INLINE ? name : NULL);
	struct vp_symbol s;

	if (k->id != UINT32_MAX)
		return k->id;
	k->mod = m;
	k->addr = flags & VP_SYM_INLINE ? 0 : addr;
	k->name = flags & VP_SYM_INLINE ? xstrdup(name) : NULL;
	k->id = nm->next_symbol++;
	nm->nsyms++;
	s.flags = flags;
	s.module = m ? (int32_t)m->id : -1;
	s.addr = flags & VP_SYM_INLINE ? 0 : addr;
	s.size = size;
	s.name = (char *)name;
	s.display = vp_demangle(name);
	sink_error(nm, nm->sink.symbol(nm->sink.ctx, k->id, &s));
	free(s.display);
	return k->id;
}

/* Whether link-time address @addr of @m is in a .plt section. */
static int in_plt(struct vp_umod *m, uint64_t addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		return 0;
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || addr < sh.sh_addr || addr >= sh.sh_addr + sh.sh_size)
			continue;
		name = elf_strptr(m->elf, shstrndx, sh.sh_name);
		return name && !strncmp(name, ".plt", 4);
	}
	return 0;
}

/* "[unknown in libx.so]": code of @m that no symbol covers. */
static uint32_t unknown_symbol(struct vp_unwind_names *nm, struct vp_umod *m)
{
	char name[PATH_MAX + 32];
	const char *base;

	if (!m) {
		if (nm->unmapped_sym == UINT32_MAX)
			nm->unmapped_sym = symbol_id(nm, NULL, 1, 0, "[unknown]", VP_SYM_NONAME);
		return nm->unmapped_sym;
	}
	if (m->unknown_sym == UINT32_MAX) {
		base = strrchr(m->path, '/');
		snprintf(name, sizeof(name), "[unknown in %s]", base ? base + 1 : m->path);
		m->unknown_sym = symbol_id(nm, m, 1, 0, name, VP_SYM_NONAME);
	}
	return m->unknown_sym;
}

/* The function at link-time address @addr of @m: its symbol id. */
static uint32_t physical_symbol(struct vp_unwind_names *nm, struct vp_umod *m, uint64_t addr)
{
	uint64_t start, size;
	/* PLT stubs have no symbols, or a wrong neighbour's: libbfd names them */
	const char *plt = vp_plt_name(m->path, addr, &start, &size);

	if (plt)
		return symbol_id(nm, m, start, size, plt, 0);
	if (m->dmod) {
		GElf_Off off;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(m->dmod, addr + m->dbias, &off, &sym, NULL,
							NULL, NULL);

		if (name && *name) {
			/* "memcpy@@GLIBC_2.14": the version is no part of the name */
			const char *at = strchr(name, '@');
			char *plain = at ? strndup(name, (size_t)(at - name)) : NULL;
			uint32_t id = symbol_id(nm, m, addr - off, sym.st_size,
						plain ? plain : name, 0);

			free(plain);
			return id;
		}
	} else if (m->nsyms) {
		size_t lo = 0, hi = m->nsyms;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (m->syms[mid].addr <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && addr < m->syms[lo - 1].addr + (m->syms[lo - 1].size ?: 1))
			return symbol_id(nm, m, m->syms[lo - 1].addr, m->syms[lo - 1].size,
					 m->syms[lo - 1].name, 0);
	}
	/* stubs of the procedure linkage table carry no symbols */
	if (in_plt(m, addr))
		return symbol_id(nm, m, 2, 0, "[plt]", VP_SYM_NONAME);
	return unknown_symbol(nm, m);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n;
}

struct levels {
	struct vp_frame_level *v;
	size_t n, cap;
};

static void level_push(struct levels *l, uint32_t sym, const char *file, uint32_t line)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n].symbol = sym;
	l->v[l->n].line = line;
	l->v[l->n].file = (char *)(file ? file : "");
	l->n++;
}

/*
 * The levels of link-time address @addr of @m: the functions inlined
 * there, innermost first, each with its position, then the function that
 * holds them (DWARF scopes of the address).
 */
static void frame_levels(struct vp_unwind_names *nm, struct vp_umod *m, uint64_t addr,
			 struct levels *l)
{
	const char *file = NULL;
	int line = 0;
	Dwarf_Die *scopes = NULL, *cu;
	Dwarf_Addr cubias;
	Dwfl_Line *dl;
	int n = 0;

	/*
	 * Lines and inlined functions for the program (and --lib modules)
	 * only: the DWARF of a system library is often a separate, compressed
	 * debug file, and inflating it would steal time from the target.
	 */
	if (m->dmod && m->hdr) {
		dl = dwfl_module_getsrc(m->dmod, addr + m->dbias);
		if (dl)
			file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
		cu = dwfl_module_addrdie(m->dmod, addr + m->dbias, &cubias);
		if (cu)
			n = dwarf_getscopes(cu, addr + m->dbias - cubias, &scopes);
		/*
		 * dwarf_getscopes() goes on from an inlined instance to its
		 * abstract definition's scopes; the concrete chain of calls
		 * comes from dwarf_getscopes_die() on the innermost one (as
		 * eu-addr2line -i does).
		 */
		for (int i = 0; i < n; i++) {
			if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
				Dwarf_Die in = scopes[i];

				free(scopes);
				scopes = NULL;
				n = dwarf_getscopes_die(&in, &scopes);
				break;
			}
			if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
				n = 0;
				break;
			}
		}
		for (int i = 0; i < n; i++) {
			Dwarf_Files *files;
			Dwarf_Attribute a;
			Dwarf_Word idx = 0, cl = 0;
			const char *name;
			size_t nfiles;

			if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
				break;
			if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
				continue;
			name = die_name(&scopes[i]);
			level_push(l,
				   symbol_id(nm, m, 0, 0, name ? name : "[inlined]", VP_SYM_INLINE),
				   file, (uint32_t)(line > 0 ? line : 0));
			/* the next level out is at this inlined call */
			file = NULL;
			line = 0;
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0)
				line = (int)cl;
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &idx) ==
				    0 &&
			    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
				file = dwarf_filesrc(files, idx, NULL, NULL);
		}
		free(scopes);
	}
	level_push(l, physical_symbol(nm, m, addr), file, (uint32_t)(line > 0 ? line : 0));
}

static void fkeys_grow(struct vp_unwind_names *nm);

static struct fkey *fkey_slot(struct vp_unwind_names *nm, const struct vp_umod *m, uint64_t addr,
			      int is_ret)
{
	size_t i;

	if (2 * (nm->nframes + 1) > nm->frames_mask)
		fkeys_grow(nm);
	i = vp_hash_mix((uint64_t)(uintptr_t)m ^ (uint64_t)is_ret, addr) & nm->frames_mask;
	for (;; i = (i + 1) & nm->frames_mask) {
		struct fkey *k = &nm->frames[i];

		if (k->id == UINT32_MAX ||
		    (k->mod == m && k->addr == addr && k->is_ret == is_ret))
			return k;
	}
}

static void fkeys_grow(struct vp_unwind_names *nm)
{
	struct fkey *old = nm->frames;
	size_t oldn = old ? nm->frames_mask + 1 : 0;

	nm->frames_mask = oldn ? oldn * 2 - 1 : 1023;
	nm->frames = xmalloc((nm->frames_mask + 1) * sizeof(*nm->frames));
	for (size_t i = 0; i <= nm->frames_mask; i++)
		nm->frames[i].id = UINT32_MAX;
	nm->nframes = 0;
	for (size_t i = 0; i < oldn; i++)
		if (old[i].id != UINT32_MAX) {
			*fkey_slot(nm, old[i].mod, old[i].addr, old[i].is_ret) = old[i];
			nm->nframes++;
		}
	free(old);
}

long vp_unwind_names_frame(struct vp_unwind_names *nm, struct vp_umod *m, uint64_t addr,
			   int is_ret)
{
	struct vp_frame_def f;
	struct levels l = { 0 };
	struct fkey *k;

	is_ret = !!is_ret;
	k = fkey_slot(nm, m, addr, is_ret);
	if (k->id != UINT32_MAX)
		return k->id;
	if (m && define_module(nm, m) < 0)
		return nm->err;
	k->mod = m;
	k->addr = addr;
	k->is_ret = is_ret;
	k->id = nm->next_frame++;
	nm->nframes++;
	if (m)
		frame_levels(nm, m, is_ret && addr ? addr - 1 : addr, &l);
	else
		level_push(&l, unknown_symbol(nm, NULL), NULL, 0);
	f.module = m ? (int32_t)m->id : -1;
	f.addr = addr;
	f.nlevels = (uint32_t)l.n;
	f.levels = l.v;
	sink_error(nm, nm->sink.frame(nm->sink.ctx, k->id, &f));
	free(l.v);
	if (nm->err)
		return nm->err;
	return k->id;
}

struct vp_unwind_names *vp_unwind_names_new(const struct vp_unwind_sink *sink,
					    uint32_t first_module)
{
	struct vp_unwind_names *nm = xcalloc(1, sizeof(*nm));

	nm->sink = *sink;
	nm->next_module = first_module;
	nm->unmapped_sym = UINT32_MAX;
	return nm;
}

void vp_unwind_names_free(struct vp_unwind_names *nm)
{
	if (!nm)
		return;
	for (size_t i = 0; nm->syms && i <= nm->syms_mask; i++)
		if (nm->syms[i].id != UINT32_MAX)
			free(nm->syms[i].name);
	free(nm->syms);
	free(nm->frames);
	free(nm);
}
