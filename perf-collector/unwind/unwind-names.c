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
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/datafile.h"
#include "core/hashtab.h"
#include "perf-collector/symbols/plt-names.h"
#include "perf-collector/symbols/symbols.h"
#include "perf-collector/unwind/scope-index.h"
#include "perf-collector/unwind/unwind-module.h"
#include "perf-collector/unwind/unwind-names.h"
#include "util/util.h"

/* Frame definitions already written: (module, address, is_ret) -> id;
 * the key is the fields before id. */
struct fkey {
	uint64_t mod; /* the struct vp_umod */
	uint64_t addr;
	uint32_t is_ret;
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
	struct vp_hashtab frames; /* of struct fkey */
	struct vp_hashtab syms;	  /* of struct skey */
	struct vp_scope_index *scopes; /* the functions of each unit seen */
	uint32_t unmapped_sym;
	int err; /* first sink error */
};

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
	/* the build-id, when the file has one */
	vm.build_id = m->file ? m->file->build_id : NULL;
	vm.build_id_len = m->file ? m->file->build_id_len : 0;
	return sink_error(nm, nm->sink.module(nm->sink.ctx, m->id, &vm, m->mflags));
}

/* A symbol's key: (module, address) of a function, (module, 0, name) of an
 * inlined one. */
static uint64_t skey_hash(const struct skey *k)
{
	return vp_hash_mix(vp_hash_mix((uint64_t)(uintptr_t)k->mod, k->addr),
			   k->name ? vp_hash_str(k->name) : 0);
}

static int skey_eq(const void *entry, const void *key)
{
	const struct skey *e = entry, *k = key;

	return e->mod == k->mod && e->addr == k->addr &&
	       (k->name ? e->name && !strcmp(e->name, k->name) : !e->name);
}

/* The symbol id of (@m, @addr or @name), defined with @flags on first use. */
static uint32_t symbol_id(struct vp_unwind_names *nm, const struct vp_umod *m, uint64_t addr,
			  uint64_t size, const char *name, uint32_t flags)
{
	struct skey key = { m, flags & VP_SYM_INLINE ? 0 : addr,
			    flags & VP_SYM_INLINE ? (char *)name : NULL, 0 };
	struct vp_symbol s;
	struct skey *k;
	void *entry;
	int ret = vp_hashtab_insert(&nm->syms, skey_hash(&key), &key, &entry);
	uint32_t id;

	if (ret < 0) {
		/* vp_unwind_names_frame() returns the error */
		sink_error(nm, ret);
		return 0;
	}
	k = entry;
	if (!ret)
		return k->id;
	k->mod = key.mod;
	k->addr = key.addr;
	k->name = key.name ? xstrdup(key.name) : NULL;
	k->id = id = nm->next_symbol++;
	s.flags = flags;
	s.module = m ? (int32_t)m->id : -1;
	s.addr = flags & VP_SYM_INLINE ? 0 : addr;
	s.size = size;
	s.name = (char *)name;
	s.display = vp_demangle(name);
	sink_error(nm, nm->sink.symbol(nm->sink.ctx, id, &s));
	free(s.display);
	return id;
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
	const struct vp_elf_file *f = m->file;
	uint64_t start, size;
	const char *plt;

	if (!f)
		return unknown_symbol(nm, m);
	/* PLT stubs have no symbols, or a wrong neighbour's: libbfd names them */
	plt = vp_plt_name(f->path, addr, &start, &size);
	if (plt)
		return symbol_id(nm, m, start, size, plt, 0);
	if (f->dmod) {
		GElf_Off off;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(f->dmod, addr + f->dbias, &off, &sym, NULL,
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
	} else if (f->nsyms) {
		size_t lo = 0, hi = f->nsyms;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (f->syms[mid].addr <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && addr < f->syms[lo - 1].addr + (f->syms[lo - 1].size ?: 1))
			return symbol_id(nm, m, f->syms[lo - 1].addr, f->syms[lo - 1].size,
					 f->syms[lo - 1].name, 0);
	}
	/* stubs of the procedure linkage table carry no symbols (elf-file.h:
	 * names libdw cannot give) */
	if (vp_elf_file_in_plt(f, addr))
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
 * The inlined instances at DWARF address @pc of @cu, innermost first, in
 * *@scopes: their number.  From the unit's index of functions (once per
 * unit, scope-index.c); libdw's own search (the whole unit walked per
 * address) only for an address the index places in no function.
 */
static int inlined_scopes(struct vp_unwind_names *nm, Dwarf_Die *cu, Dwarf_Addr pc,
			  Dwarf_Die **scopes)
{
	int n = vp_scope_index_inlined(nm->scopes, cu, pc, scopes);

	if (n >= 0)
		return n;
	n = dwarf_getscopes(cu, pc, scopes);
	/*
	 * dwarf_getscopes() goes on from an inlined instance to its abstract
	 * definition's scopes; the concrete chain of calls comes from
	 * dwarf_getscopes_die() on the innermost one (as eu-addr2line -i
	 * does).
	 */
	for (int i = 0; i < n; i++) {
		if (dwarf_tag(&(*scopes)[i]) == DW_TAG_inlined_subroutine) {
			Dwarf_Die in = (*scopes)[i];

			free(*scopes);
			*scopes = NULL;
			return dwarf_getscopes_die(&in, scopes);
		}
		if (dwarf_tag(&(*scopes)[i]) == DW_TAG_subprogram)
			return 0;
	}
	return n;
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
	if (m->file && m->file->dmod && m->hdr) {
		dl = dwfl_module_getsrc(m->file->dmod, addr + m->file->dbias);
		if (dl)
			file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
		cu = dwfl_module_addrdie(m->file->dmod, addr + m->file->dbias, &cubias);
		if (cu)
			n = inlined_scopes(nm, cu, addr + m->file->dbias - cubias, &scopes);
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

long vp_unwind_names_frame(struct vp_unwind_names *nm, struct vp_umod *m, uint64_t addr,
			   int is_ret)
{
	struct vp_frame_def f;
	struct levels l = { 0 };
	struct fkey key = { (uint64_t)(uintptr_t)m, addr, !!is_ret, 0 }, *k;
	uint64_t hash = vp_hash_mix(key.mod ^ key.is_ret, addr);
	void *entry;
	uint32_t id;

	k = vp_hashtab_find(&nm->frames, hash, &key);
	if (k)
		return k->id;
	if (m && define_module(nm, m) < 0)
		return nm->err;
	if (vp_hashtab_insert(&nm->frames, hash, &key, &entry) < 0)
		return sink_error(nm, -ENOMEM);
	k = entry;
	k->id = id = nm->next_frame++;
	if (m)
		frame_levels(nm, m, is_ret && addr ? addr - 1 : addr, &l);
	else
		level_push(&l, unknown_symbol(nm, NULL), NULL, 0);
	f.module = m ? (int32_t)m->id : -1;
	f.addr = addr;
	f.nlevels = (uint32_t)l.n;
	f.levels = l.v;
	sink_error(nm, nm->sink.frame(nm->sink.ctx, id, &f));
	free(l.v);
	if (nm->err)
		return nm->err;
	return id;
}

struct vp_unwind_names *vp_unwind_names_new(const struct vp_unwind_sink *sink,
					    uint32_t first_module)
{
	struct vp_unwind_names *nm = xcalloc(1, sizeof(*nm));

	nm->sink = *sink;
	nm->next_module = first_module;
	nm->unmapped_sym = UINT32_MAX;
	nm->scopes = vp_scope_index_new();
	vp_hashtab_init(&nm->frames, sizeof(struct fkey), offsetof(struct fkey, id), NULL);
	vp_hashtab_init(&nm->syms, sizeof(struct skey), 0, skey_eq);
	return nm;
}

void vp_unwind_names_free(struct vp_unwind_names *nm)
{
	struct skey *k;
	size_t pos = 0;

	if (!nm)
		return;
	while ((k = vp_hashtab_next(&nm->syms, &pos)))
		free(k->name);
	vp_hashtab_release(&nm->syms);
	vp_hashtab_release(&nm->frames);
	vp_scope_index_free(nm->scopes);
	free(nm);
}
