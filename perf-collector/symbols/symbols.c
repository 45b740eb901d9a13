/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbols.c - the functions of an ELF file (libdwfl symbol tables,
 * separate debug files), their names (demangling, clone suffixes), the
 * selection of those to probe, and the naming of a call site.
 */
#include <config.h>

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fnmatch.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

#include "perf-collector/symbols/plt-names.h"
#include "perf-collector/symbols/symbols-internal.h"
#include "perf-collector/symbols/symbols.h"
#include "util/util.h"

int vp_symfile_open(const char *path, struct vp_symfile **ret)
{
	struct vp_symfile *sf;
	char *real;
	int err;

	real = realpath(path, NULL);
	if (!real)
		return -errno;
	sf = xcalloc(1, sizeof(*sf));
	err = vp_elf_file_open(real, &sf->ef);
	free(real);
	/* no symbols without libdwfl */
	if (!err && !sf->ef->dmod)
		err = -ENOEXEC;
	if (err) {
		vp_symfile_free(sf);
		return err;
	}
	*ret = sf;
	return 0;
}

void vp_symfile_free(struct vp_symfile *sf)
{
	if (!sf)
		return;
	vp_elf_file_free(sf->ef);
	free(sf->colds);
	free(sf->starts);
	free(sf);
}

const char *vp_symfile_path(const struct vp_symfile *sf)
{
	return sf->ef->path;
}

size_t vp_symfile_build_id(const struct vp_symfile *sf, const unsigned char **ret)
{
	*ret = sf->ef->build_id;
	return sf->ef->build_id_len;
}

int vp_symfile_off_to_vaddr(const struct vp_symfile *sf, uint64_t off, uint64_t *ret)
{
	return vp_elf_file_off_to_vaddr(sf->ef, off, ret);
}

char *vp_demangle(const char *name)
{
#ifdef HAVE_LIBIBERTY
	if (name[0] == '_' && name[1] == 'Z') {
		char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);

		if (d) {
			/* libiberty allocates with malloc(); copy to keep x*() semantics. */
			char *s = xstrdup(d);

			free(d);
			return s;
		}
	}
#endif
	return xstrdup(name);
}

/*
 * Where the compiler's clone suffixes start in @name (".isra.0",
 * ".constprop.1", ".part.0", ".lto_priv.0", possibly chained), or NULL.
 */
static const char *clone_suffix(const char *name)
{
	static const char *const suffixes[] = { ".isra", ".constprop", ".part", ".lto_priv" };
	const char *first = NULL;

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		const char *p = strstr(name, suffixes[i]);

		if (p && (!first || p < first))
			first = p;
	}
	return first;
}

/*
 * Entry points that are not reached by a call: the word at the stack
 * pointer is not a return address, and a return probe would overwrite it
 * (argc for _start, the signal frame for __restore_rt, the PLT's pushed
 * arguments for the lazy binding resolvers).
 */
static int is_not_called(const char *name)
{
	static const char *const globs[] = {
		"_start", "__start", "_dl_start", "_dl_start_user", "__restore_rt",
		"_dl_runtime_resolve*", "_dl_runtime_profile*", "__sigreturn",
	};

	for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++)
		if (!fnmatch(globs[i], name, 0))
			return 1;
	return 0;
}

struct candidate {
	uint64_t vaddr;
	uint64_t size;
	const char *name;
	int global;
	size_t order;
};

static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	/* Best name first: global, then sized, then symbol table order. */
	if (x->global != y->global)
		return y->global - x->global;
	if (!x->size != !y->size)
		return !x->size - !y->size;
	return x->order < y->order ? -1 : x->order > y->order;
}

static size_t collect_candidates(struct vp_symfile *sf, struct candidate **ret)
{
	struct candidate *c;
	size_t n = 0;
	int nsyms = dwfl_module_getsymtab(sf->ef->dmod);

	if (nsyms <= 0) {
		*ret = NULL;
		return 0;
	}
	c = xcalloc((size_t)nsyms, sizeof(*c));
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(sf->ef->dmod, i, &sym, &addr, &shndx, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		uint64_t vaddr;

		if (!name || !*name || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		if (shndx == SHN_UNDEF || strstr(name, ".cold") || is_not_called(name))
			continue;
		vaddr = addr - sf->ef->dbias;
		if (!vp_elf_file_exec_load(sf->ef, vaddr))
			continue;
		c[n++] = (struct candidate){ vaddr, sym.st_size, name,
					     GELF_ST_BIND(sym.st_info) != STB_LOCAL, (size_t)i };
	}
	qsort(c, n, sizeof(*c), cmp_candidate);
	*ret = c;
	return n;
}

static void fill_func(struct vp_symfile *sf, struct vp_func *f, const struct candidate *c,
		      uint64_t size, uint32_t module, uint32_t flags)
{
	const struct vp_elf_load *l = vp_elf_file_exec_load(sf->ef, c->vaddr);
	const char *suffix = clone_suffix(c->name);

	memset(f, 0, sizeof(*f));
	f->module = module;
	f->addr = c->vaddr;
	f->size = size;
	f->flags = flags;
	f->probe_off = c->vaddr - l->vaddr + l->off;
	f->name = xstrdup(c->name);
	f->display = vp_demangle(c->name);
	if (suffix) {
		char *stripped = xstrdup(c->name);

		stripped[suffix - c->name] = '\0';
		f->base = vp_demangle(stripped);
		free(stripped);
		f->flags |= VP_FUNC_CLONE;
	} else {
		f->base = xstrdup(f->display);
	}
}

size_t vp_symfile_functions(struct vp_symfile *sf, uint32_t module, uint32_t flags,
			    struct vp_func **funcs, size_t *nfuncs)
{
	struct candidate *c;
	size_t n = collect_candidates(sf, &c), added = 0;

	*funcs = xrealloc(*funcs, (*nfuncs + n) * sizeof(**funcs));
	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t size = 0;

		/* Aliases at one address: one function under the best name,
		 * with the largest size any of them gives. */
		for (; j < n && c[j].vaddr == c[i].vaddr; j++)
			if (c[j].size > size)
				size = c[j].size;
		fill_func(sf, &(*funcs)[*nfuncs + added], &c[i], size, module, flags);
		added++;
		i = j;
	}
	*nfuncs += added;
	free(c);
	return added;
}

static int is_throw_symbol(const char *name)
{
	size_t len = strcspn(name, "@"); /* "__cxa_throw@CXXABI_1.3" */

	return (len == 11 && !strncmp(name, "__cxa_throw", len)) ||
	       (len == 22 && !strncmp(name, "_Unwind_RaiseException", len));
}

int vp_symfile_can_throw(struct vp_symfile *sf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int nsyms;

	if (elf_getshdrstrndx(sf->ef->elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(sf->ef->elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(sf->ef->elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".gcc_except_table"))
				return 1;
		}
	}
	nsyms = dwfl_module_getsymtab(sf->ef->dmod);
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(sf->ef->dmod, i, &sym, &addr, NULL, NULL,
							   NULL);

		if (name && is_throw_symbol(name))
			return 1;
	}
	return 0;
}

/*
 * The name people call a function by: without clone suffixes and, for C++,
 * without the parameter list ("ns::A::f" for _ZNK2ns1A1fEi.isra.0).
 */
static char *short_name(const char *name)
{
	const char *suffix = clone_suffix(name);
	char *plain = suffix ? xasprintf("%.*s", (int)(suffix - name), name) : xstrdup(name);

#ifdef HAVE_LIBIBERTY
	if (plain[0] == '_' && plain[1] == 'Z') {
		char *d = cplus_demangle(plain, DMGL_ANSI);

		if (d) {
			free(plain);
			plain = xstrdup(d);
			free(d);
		}
	}
#endif
	return plain;
}

/*
 * Length of @display without its C++ parameter list and qualifiers:
 * "handler(unsigned int)" -> "handler", "ns::A::operator()(int) const" ->
 * "ns::A::operator()".  The list is the parenthesis group that closes last,
 * so parentheses inside template arguments do not end the name.  Returns
 * the whole length when there is no list.
 */
static size_t strip_params(const char *display)
{
	size_t len = strlen(display), close = len, depth = 0;

	while (close && display[close - 1] != ')')
		close--;
	if (!close || strcspn(display + close, "()<>,") != len - close)
		return len; /* no list, or something after it we do not know */
	for (size_t i = close; i-- > 0;) {
		if (display[i] == ')')
			depth++;
		else if (display[i] == '(' && !--depth)
			return i ? i : len;
	}
	return len;
}

static int func_matches(const struct vp_func *f, const char *glob)
{
	size_t len;
	char *s;
	int match;

	if (!fnmatch(glob, f->name, 0) || !fnmatch(glob, f->display, 0))
		return 1;
	/* The demangled name without its parameter list ("handler" for
	 * handler(unsigned int)), also with a clone suffix. */
	len = strip_params(f->display);
	if (len < strlen(f->display)) {
		s = xasprintf("%.*s", (int)len, f->display);
		match = !fnmatch(glob, s, 0);
		free(s);
		if (match)
			return 1;
	}
	s = short_name(f->name);
	match = !fnmatch(glob, s, 0);
	free(s);
	return match;
}

/*
 * Start-up and tear-down code that the toolchain adds to every program.
 * Not probed unless a -f glob names it: each probe costs file descriptors,
 * and the kernel takes 60-80 ms per probe and CPU to remove it at the end.
 */
static int is_boilerplate(const char *name)
{
	static const char *const names[] = {
		"_init", "_fini", "deregister_tm_clones", "register_tm_clones",
		"__do_global_dtors_aux", "frame_dummy", "__libc_csu_init", "__libc_csu_fini",
		"_dl_relocate_static_pie",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

int vp_funcs_select(struct vp_func *funcs, size_t *n, char *const *incl, size_t nincl,
		    char *const *excl, size_t nexcl, const char **unmatched)
{
	size_t kept = 0;

	for (size_t g = 0; g < nincl; g++) {
		size_t i;

		for (i = 0; i < *n && !func_matches(&funcs[i], incl[g]); i++)
			;
		if (i == *n) {
			*unmatched = incl[g];
			return -ENOENT;
		}
	}
	for (size_t i = 0; i < *n; i++) {
		int keep = !nincl && !is_boilerplate(funcs[i].name);

		for (size_t g = 0; g < nincl && !keep; g++)
			keep = func_matches(&funcs[i], incl[g]);
		for (size_t g = 0; g < nexcl && keep; g++)
			keep = !func_matches(&funcs[i], excl[g]);
		if (keep) {
			funcs[kept++] = funcs[i];
		} else {
			free(funcs[i].name);
			free(funcs[i].display);
			free(funcs[i].base);
		}
	}
	*n = kept;
	return 0;
}

void vp_symfile_describe(struct vp_symfile *sf, uint64_t vaddr, char **caller, char **file,
			 uint32_t *line)
{
	GElf_Addr a = vaddr + sf->ef->dbias;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Line *l;
	const char *name = dwfl_module_addrinfo(sf->ef->dmod, a, &off, &sym, NULL, NULL, NULL);
	const char *src = NULL;
	int lineno = 0;
	uint64_t plt_start, plt_size;
	/* PLT stubs have no symbols, or a wrong neighbour's: libbfd names them */
	const char *plt = vp_plt_name(vp_symfile_path(sf), vaddr, &plt_start, &plt_size);

	if (plt) {
		*caller = xasprintf("%s+%#llx", plt, (unsigned long long)(vaddr - plt_start));
	} else if (name) {
		/* "__libc_start_main@@GLIBC_2.34": the version is noise here. */
		char *plain = xasprintf("%.*s", (int)strcspn(name, "@"), name);
		char *d = vp_demangle(plain);

		*caller = xasprintf("%s+%#llx", d, (unsigned long long)off);
		free(plain);
		free(d);
	} else {
		/* no symbol, and no PLT stub libbfd knows */
		*caller = xstrdup("");
	}
	/* The return address follows the call; its line is the next statement's. */
	l = dwfl_module_getsrc(sf->ef->dmod, a - 1);
	if (l)
		src = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
	*file = xstrdup(src ? src : "");
	*line = src && lineno > 0 ? (uint32_t)lineno : 0;
}
