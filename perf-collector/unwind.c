/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind.c - unwind sampled user stacks offline and name what is found:
 * libunwind's remote API over the stack copy and the mapped ELF files
 * (.eh_frame through .eh_frame_hdr), libdw for modules that only have
 * .debug_frame, and libdw's DWARF scopes for the functions inlined at an
 * address.
 */
#include <config.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_LIBUNWIND
#include <libunwind.h>
#endif
#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

#include "unwind.h"
#include "util.h"

enum {
	/* Beyond the copy but this close above sp: the stack the copy missed. */
	STACK_REACH = 64 << 20,
	/* Re-read /proc/PID/maps for an unknown address at most this often. */
	MAPS_RETRY_SAMPLES = 256,
	NDWREGS = 17, /* DWARF x86-64: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
};

struct uload {
	uint64_t vaddr, off, filesz, memsz;
	int exec;
};

struct usym {
	uint64_t addr, size;
	const char *name;
};

/* One ELF file (or the vDSO image), shared by every process mapping it. */
struct umod {
	char *path;
	uint32_t id;	 /* data-file module id */
	uint32_t mflags; /* VP_MOD_* */
	int defined;	 /* sent to the sink (or a header module) */
	int hdr;	 /* one of the data file's header modules */
	unsigned char *image;
	size_t size;
	int mapped;	 /* image is our mmap of the file */
	Elf *elf;
	struct uload *loads;
	size_t nloads;
	uint64_t lo, hi; /* link-time extent of the PT_LOAD segments */
	int has_ehdr;	 /* usable .eh_frame_hdr binary search table */
	uint64_t ehdr_vaddr, table_vaddr, fde_count;
	int has_debug_frame;
	/* names: libdwfl (symbols, lines, inlines) or our own symbol table */
	Dwfl *dwfl;
	Dwfl_Module *dmod;
	GElf_Addr dbias;
	struct usym *syms;
	size_t nsyms;
	uint32_t unknown_sym; /* UINT32_MAX until needed */
	struct umod *next;
};

/* A module in a process: link-time address + bias = runtime address. */
struct uinst {
	uint64_t lo, hi; /* runtime extent */
	uint64_t bias;
	struct umod *mod;
};

struct uproc {
	pid_t pid;
	struct uinst *insts; /* sorted by lo */
	size_t n, cap;
	uint64_t maps_tried; /* sample count at the last /proc re-read */
	uint64_t uprobes_lo, uprobes_hi; /* the [uprobes] page, once seen */
	Dwfl *dwfl;	     /* runtime layout, for libdw unwinding */
	int dwfl_stale;
	struct uctx *dwctx;  /* what the libdw callbacks read */
	struct uproc *next;
};

/* Per-sample state seen by the accessors. */
struct uctx {
	struct vp_unwinder *u;
	struct uproc *proc;
	const struct vp_ustack *st;
	int beyond; /* an access beyond the end of the stack copy */
	int no_cfi; /* an address in a module without unwind tables */
	int no_cfi_frame; /* the frame that was being unwound then, or -1 */
	const struct uinst *last;
};

/* Frame definitions already written: (module, address, is_ret) -> id. */
struct fkey {
	const struct umod *mod;
	uint64_t addr;
	int is_ret;
	uint32_t id;
};

/* Symbols already written: (module, address or name) -> id. */
struct skey {
	const struct umod *mod;
	uint64_t addr;	  /* physical functions */
	char *name;	  /* inlined functions (addr 0) */
	uint32_t id;
};

struct vp_unwinder {
	struct vp_unwind_sink sink;
	const struct vp_module *hdr_mods;
	size_t nhdr_mods;
	uint32_t next_module;
	uint32_t next_symbol, next_frame;
	struct umod *mods;
	struct uproc *procs;
	struct fkey *frames;
	size_t frames_mask, nframes;
	struct skey *syms;
	size_t syms_mask, nsyms;
	uint32_t unmapped_sym;
	struct vp_unwind_stats stats;
#ifdef HAVE_LIBUNWIND
	unw_addr_space_t as;
#endif
	const unsigned char *vdso;
	size_t vdso_size;
	int err; /* first sink error */
};

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static char *demangle(const char *name)
{
#ifdef HAVE_LIBIBERTY
	if (name[0] == '_' && name[1] == 'Z') {
		char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);

		if (d) {
			char *s = xstrdup(d);

			free(d);
			return s;
		}
	}
#endif
	return xstrdup(name);
}

/* ---- modules ---- */

/* The size of an ELF image in memory: its segments' extent (the vDSO). */
static size_t image_size(const unsigned char *img)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	size_t end = eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize;

	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
	}
	/* section headers come after the segments in the vDSO image */
	if (eh->e_shoff && eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize > end)
		end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	return end;
}

static int read_loads(struct umod *m)
{
	size_t n;

	if (elf_getphdrnum(m->elf, &n) < 0)
		return -ENOEXEC;
	m->loads = xcalloc(n ? n : 1, sizeof(*m->loads));
	m->lo = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(m->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME) {
			m->ehdr_vaddr = ph.p_vaddr;
			m->has_ehdr = ph.p_filesz >= 12;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		m->loads[m->nloads++] = (struct uload){ ph.p_vaddr, ph.p_offset, ph.p_filesz,
							ph.p_memsz, !!(ph.p_flags & PF_X) };
		if (ph.p_vaddr < m->lo)
			m->lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > m->hi)
			m->hi = ph.p_vaddr + ph.p_memsz;
	}
	return m->nloads ? 0 : -ENOEXEC;
}

/* Pointer to @len bytes at link-time address @vaddr of @m, or NULL. */
static const unsigned char *mod_ptr(const struct umod *m, uint64_t vaddr, size_t len)
{
	for (size_t i = 0; i < m->nloads; i++) {
		const struct uload *l = &m->loads[i];

		if (vaddr >= l->vaddr && vaddr + len <= l->vaddr + l->filesz &&
		    l->off + (vaddr - l->vaddr) + len <= m->size)
			return m->image + l->off + (vaddr - l->vaddr);
	}
	return NULL;
}

/* DW_EH_PE_* encoded value at *@pp (only what .eh_frame_hdr uses). */
static int read_encoded(const struct umod *m, uint64_t *vaddr, uint8_t enc, uint64_t datarel,
			uint64_t *ret)
{
	const unsigned char *p;
	uint64_t v, at = *vaddr;
	size_t len;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		len = 4;
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
	case DW_EH_PE_absptr:
		len = 8;
		break;
	default:
		return -1;
	}
	p = mod_ptr(m, at, len);
	if (!p)
		return -1;
	if (len == 4) {
		uint32_t x;

		memcpy(&x, p, 4);
		v = (enc & 0x0f) == DW_EH_PE_sdata4 ? (uint64_t)(int64_t)(int32_t)x : x;
	} else {
		memcpy(&v, p, 8);
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += at;
		break;
	case DW_EH_PE_datarel:
		v += datarel;
		break;
	default:
		return -1;
	}
	*vaddr = at + len;
	*ret = v;
	return 0;
}

/*
 * .eh_frame_hdr: version 1, then the encodings of eh_frame_ptr, fde_count
 * and the table, then those values.  libunwind's remote table lookup wants
 * the standard table of (datarel sdata4 start, datarel sdata4 FDE) pairs.
 */
static void parse_eh_frame_hdr(struct umod *m)
{
	const unsigned char *h = m->has_ehdr ? mod_ptr(m, m->ehdr_vaddr, 4) : NULL;
	uint64_t at, eh_frame, count;

	m->has_ehdr = 0;
	if (!h || h[0] != 1 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return;
	at = m->ehdr_vaddr + 4;
	if (read_encoded(m, &at, h[1], m->ehdr_vaddr, &eh_frame) ||
	    read_encoded(m, &at, h[2], m->ehdr_vaddr, &count) || !count)
		return;
	m->table_vaddr = at;
	m->fde_count = count;
	m->has_ehdr = mod_ptr(m, at, count * 8) != NULL;
}

static void find_debug_frame(struct umod *m)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(m->elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(m->elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_frame") && sh.sh_type != SHT_NOBITS)
			m->has_debug_frame = 1;
	}
}

static int cmp_usym(const void *a, const void *b)
{
	const struct usym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Our own table of function symbols (the vDSO has no file for libdwfl). */
static void read_symtab(struct umod *m)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(m->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(m->elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			m->syms = xrealloc(m->syms, (m->nsyms + 1) * sizeof(*m->syms));
			m->syms[m->nsyms++] = (struct usym){ s.st_value, s.st_size, name };
		}
	}
	qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_usym);
}

static void open_dwfl(struct umod *m)
{
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl)
		return;
	m->dmod = dwfl_report_offline(m->dwfl, m->path, m->path, -1);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->dmod || !dwfl_module_getelf(m->dmod, &m->dbias)) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->dmod = NULL;
	}
}

static struct umod *mod_new(struct vp_unwinder *u, const char *path)
{
	struct umod *m = xcalloc(1, sizeof(*m));

	m->path = xstrdup(path);
	m->unknown_sym = UINT32_MAX;
	m->id = UINT32_MAX;
	for (size_t i = 0; i < u->nhdr_mods; i++) {
		if (u->hdr_mods[i].path && !strcmp(u->hdr_mods[i].path, path)) {
			m->id = (uint32_t)i;
			m->defined = 1;
			m->hdr = 1;
		}
	}
	m->next = u->mods;
	u->mods = m;
	return m;
}

static int mod_load_file(struct umod *m)
{
	struct stat st;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 64) {
		close(fd);
		return -ENOEXEC;
	}
	/* Writable but private: libelf may write into the image it is given. */
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	m->image = p;
	m->size = (size_t)st.st_size;
	m->mapped = 1;
	return 0;
}

/* The module for @path, opened and parsed on first use; NULL if unusable. */
static struct umod *get_mod(struct vp_unwinder *u, const char *path)
{
	struct umod *m;
	int is_vdso = !strcmp(path, "[vdso]");

	for (m = u->mods; m; m = m->next)
		if (!strcmp(m->path, path))
			return m->elf ? m : NULL;
	m = mod_new(u, path);
	if (is_vdso) {
		if (!u->vdso)
			return NULL;
		m->image = (unsigned char *)u->vdso;
		m->size = u->vdso_size;
		m->mflags = VP_MOD_VDSO;
	} else if (mod_load_file(m) < 0) {
		pr_debug("unwind: cannot open '%s'", path);
		return NULL;
	}
	m->elf = elf_memory((char *)m->image, m->size);
	if (!m->elf || read_loads(m) < 0) {
		pr_debug("unwind: '%s' is not a usable ELF file", path);
		if (m->elf)
			elf_end(m->elf);
		m->elf = NULL;
		return NULL;
	}
	parse_eh_frame_hdr(m);
	find_debug_frame(m);
	if (is_vdso)
		read_symtab(m);
	else
		open_dwfl(m);
	pr_debug("unwind: module '%s': %s%s", path, m->has_ehdr ? ".eh_frame_hdr " : "",
		 m->has_debug_frame ? ".debug_frame" : "");
	return m;
}

static void mod_free(struct umod *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	if (m->elf)
		elf_end(m->elf);
	if (m->mapped)
		munmap(m->image, m->size);
	free(m->syms);
	free(m->loads);
	free(m->path);
	free(m);
}

/* ---- processes ---- */

static struct uproc *get_proc(struct vp_unwinder *u, pid_t pid)
{
	struct uproc *p;

	for (p = u->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->next = u->procs;
	u->procs = p;
	return p;
}

static void proc_clear(struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	free(p->insts);
	p->insts = NULL;
	p->n = p->cap = 0;
}

static const struct uinst *find_inst(const struct uproc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < p->insts[mid].lo)
			hi = mid;
		else if (addr >= p->insts[mid].hi)
			lo = mid + 1;
		else
			return &p->insts[mid];
	}
	return NULL;
}

static void add_inst(struct vp_unwinder *u, struct uproc *p, struct umod *m, uint64_t bias)
{
	struct uinst in = { m->lo + bias, m->hi + bias, bias, m };
	size_t i, j;

	/* A new module over old ones replaces them (dlclose, exec). */
	for (i = j = 0; i < p->n; i++)
		if (p->insts[i].hi <= in.lo || p->insts[i].lo >= in.hi)
			p->insts[j++] = p->insts[i];
		else if (p->insts[i].mod == m && p->insts[i].bias == bias)
			return; /* the same module seen again */
	p->n = j;
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->insts = xrealloc(p->insts, p->cap * sizeof(*p->insts));
	}
	for (i = p->n; i > 0 && p->insts[i - 1].lo > in.lo; i--)
		p->insts[i] = p->insts[i - 1];
	p->insts[i] = in;
	p->n++;
	p->dwfl_stale = 1;
#ifdef HAVE_LIBUNWIND
	/* Cached register rules are by address: code moved, forget them. */
	unw_flush_cache(u->as, 0, 0);
#else
	(void)u;
#endif
}

void vp_unwinder_mmap(struct vp_unwinder *u, pid_t pid, uint64_t start, uint64_t len,
		      uint64_t pgoff, const char *path)
{
	struct umod *m;

	if (!strcmp(path, "[uprobes]")) {
		struct uproc *p = get_proc(u, pid);

		p->uprobes_lo = start;
		p->uprobes_hi = start + len;
		return;
	}
	if (path[0] != '/' && strcmp(path, "[vdso]"))
		return;
	m = get_mod(u, path);
	if (!m)
		return;
	/*
	 * The segment this mapping starts in: file offset pgoff is at
	 * address start, so link-time address v of that segment is at
	 * start + (v - seg.vaddr) - (pgoff - seg.off).
	 */
	for (size_t i = 0; i < m->nloads; i++) {
		const struct uload *l = &m->loads[i];
		uint64_t page_off = l->off & ~(uint64_t)4095;

		if (pgoff >= page_off && pgoff < l->off + (l->filesz ? l->filesz : 1)) {
			add_inst(u, get_proc(u, pid), m, start - pgoff - (l->vaddr - l->off));
			return;
		}
	}
}

int vp_unwinder_read_maps(struct vp_unwinder *u, pid_t pid)
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
		    !name || (perms[2] != 'x' && !strstr(line + name, "[uprobes]")))
			continue;
		line[strcspn(line, "\n")] = '\0';
		vp_unwinder_mmap(u, pid, lo, hi - lo, off, line + name);
	}
	fclose(f);
	return 0;
}

void vp_unwinder_forget(struct vp_unwinder *u, pid_t pid)
{
	for (struct uproc *p = u->procs; p; p = p->next)
		if (p->pid == pid)
			proc_clear(p);
}

/* The module instance at @addr, re-reading /proc/PID/maps now and then. */
static const struct uinst *lookup(struct vp_unwinder *u, struct uproc *p, uint64_t addr)
{
	const struct uinst *in = find_inst(p, addr);

	if (!in && u->stats.samples >= p->maps_tried + MAPS_RETRY_SAMPLES) {
		p->maps_tried = u->stats.samples;
		if (vp_unwinder_read_maps(u, p->pid) == 0)
			in = find_inst(p, addr);
	}
	return in;
}

uint64_t vp_unwinder_runtime(struct vp_unwinder *u, pid_t pid, const char *path, uint64_t vaddr)
{
	struct uproc *p = get_proc(u, pid);

	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->insts[i].mod->path, path))
			return vaddr + p->insts[i].bias;
	return 0;
}

int vp_unwinder_in_uprobes(struct vp_unwinder *u, pid_t pid, uint64_t ip)
{
	struct uproc *p = get_proc(u, pid);

	if (!p->uprobes_hi && !find_inst(p, ip) &&
	    u->stats.samples >= p->maps_tried + MAPS_RETRY_SAMPLES / 8) {
		/* the page appears at the first return probe: look again */
		p->maps_tried = u->stats.samples;
		vp_unwinder_read_maps(u, pid);
	}
	if (p->uprobes_hi)
		return ip >= p->uprobes_lo && ip < p->uprobes_hi;
	return !find_inst(p, ip);
}

/* ---- memory ---- */

static int read_word(struct uctx *c, uint64_t addr, uint64_t *val)
{
	const struct vp_ustack *st = c->st;
	uint64_t sp = st->regs[VP_UREG_SP];
	const struct uinst *in;
	const unsigned char *p;

	if (addr >= sp && addr - sp + 8 <= st->len) {
		memcpy(val, st->stack + (addr - sp), 8);
		return 0;
	}
	in = c->last && addr >= c->last->lo && addr < c->last->hi ? c->last
								    : find_inst(c->proc, addr);
	if (in) {
		c->last = in;
		p = mod_ptr(in->mod, addr - in->bias, 8);
		if (p) {
			memcpy(val, p, 8);
			return 0;
		}
	}
	if (addr >= sp && addr - sp < STACK_REACH)
		c->beyond = 1;
	return -1;
}

/* ---- libunwind ---- */

#ifdef HAVE_LIBUNWIND
/* Not declared by libunwind's public headers; perf declares it the same way. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);

static int lu_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			     int need_unwind_info, void *arg)
{
	struct uctx *c = arg;
	const struct uinst *in = find_inst(c->proc, ip);
	unw_dyn_info_t di;
	int ret;

	if (!in)
		return -UNW_ENOINFO;
	if (!in->mod->has_ehdr) {
		c->no_cfi = 1;
		if (!(in->mod->mflags & VP_MOD_VDSO))
			snprintf(c->u->stats.no_cfi_module, sizeof(c->u->stats.no_cfi_module), "%s",
				 in->mod->path);
		return -UNW_ENOINFO;
	}
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = in->lo;
	di.end_ip = in->hi;
	di.u.rti.segbase = in->mod->ehdr_vaddr + in->bias;
	di.u.rti.table_data = in->mod->table_vaddr + in->bias;
	/* in words; each entry is two 32-bit offsets */
	di.u.rti.table_len = in->mod->fde_count * 8 / sizeof(unw_word_t);
	ret = UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
	if (ret == -UNW_ENOINFO) {
		/* the module has tables, but none covers this code */
		c->no_cfi = 1;
		snprintf(c->u->stats.no_cfi_module, sizeof(c->u->stats.no_cfi_module), "%s",
			 in->mod->path);
	}
	return ret;
}

static void lu_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as;
	(void)pi;
	(void)arg;
}

static int lu_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil, void *arg)
{
	(void)as;
	(void)dil;
	(void)arg;
	return -UNW_ENOINFO;
}

static int lu_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
			 void *arg)
{
	uint64_t v;

	(void)as;
	if (write || read_word(arg, addr, &v) < 0)
		return -UNW_EINVAL;
	*valp = v;
	return 0;
}

static int lu_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
			 void *arg)
{
	static const signed char map[] = {
		[UNW_X86_64_RAX] = VP_UREG_AX, [UNW_X86_64_RDX] = VP_UREG_DX,
		[UNW_X86_64_RCX] = VP_UREG_CX, [UNW_X86_64_RBX] = VP_UREG_BX,
		[UNW_X86_64_RSI] = VP_UREG_SI, [UNW_X86_64_RDI] = VP_UREG_DI,
		[UNW_X86_64_RBP] = VP_UREG_BP, [UNW_X86_64_RSP] = VP_UREG_SP,
		[UNW_X86_64_R8] = VP_UREG_R8,  [UNW_X86_64_R9] = VP_UREG_R8 + 1,
		[UNW_X86_64_R10] = VP_UREG_R8 + 2, [UNW_X86_64_R11] = VP_UREG_R8 + 3,
		[UNW_X86_64_R12] = VP_UREG_R8 + 4, [UNW_X86_64_R13] = VP_UREG_R8 + 5,
		[UNW_X86_64_R14] = VP_UREG_R8 + 6, [UNW_X86_64_R15] = VP_UREG_R15,
		[UNW_X86_64_RIP] = VP_UREG_IP,
	};
	struct uctx *c = arg;

	(void)as;
	if (write || reg < 0 || (size_t)reg >= sizeof(map))
		return -UNW_EBADREG;
	*valp = c->st->regs[(int)map[reg]];
	return 0;
}

static int lu_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			   void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int lu_resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	(void)as;
	(void)cu;
	(void)arg;
	return -UNW_EINVAL;
}

static int lu_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			    unw_word_t *offp, void *arg)
{
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)offp;
	(void)arg;
	return -UNW_EINVAL;
}

static unw_accessors_t lu_accessors = {
	.find_proc_info = lu_find_proc_info,
	.put_unwind_info = lu_put_unwind_info,
	.get_dyn_info_list_addr = lu_get_dyn_info_list_addr,
	.access_mem = lu_access_mem,
	.access_reg = lu_access_reg,
	.access_fpreg = lu_access_fpreg,
	.resume = lu_resume,
	.get_proc_name = lu_get_proc_name,
};

/* Returns frames; *@clean is 1 when the chain ended at an outermost frame. */
static size_t unwind_libunwind(struct vp_unwinder *u, struct uctx *c, struct vp_uframe *fr,
			       size_t max, int *clean)
{
	unw_cursor_t cur;
	size_t n = 0;
	int ret;

	*clean = 0;
	if (unw_init_remote(&cur, u->as, c) < 0)
		return 0;
	do {
		unw_word_t ip, sp;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 ||
		    unw_get_reg(&cur, UNW_REG_SP, &sp) < 0)
			break;
		if (n > 0)
			fr[n - 1].cfa = sp;
		if (!ip)
			break;
		fr[n].ip = ip;
		fr[n].cfa = sp;
		n++;
		ret = unw_step(&cur);
		if (c->no_cfi && c->no_cfi_frame < 0)
			c->no_cfi_frame = (int)n - 1;
		if (ret == 0)
			*clean = 1;
	} while (ret > 0 && n < max);
	/* Past code without unwind tables libunwind guesses from the frame
	 * pointer; a guess that did not reach the end is not kept. */
	if (!*clean && c->no_cfi_frame >= 0 && (size_t)c->no_cfi_frame + 1 < n)
		n = (size_t)c->no_cfi_frame + 1;
	return n;
}
#endif

/* ---- libdw (.debug_frame) ---- */

static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = dwfl_arg;
	return true;
}

static pid_t dw_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct uproc *p = dwfl_arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = dwfl_arg;
	return p->pid;
}

static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct uproc *p = dwfl_arg;
	uint64_t v;

	(void)dwfl;
	if (read_word(p->dwctx, addr, &v) < 0)
		return false;
	*result = v;
	return true;
}

static bool dw_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	static const int order[NDWREGS] = {
		VP_UREG_AX, VP_UREG_DX, VP_UREG_CX, VP_UREG_BX, VP_UREG_SI, VP_UREG_DI,
		VP_UREG_BP, VP_UREG_SP, 16, 17, 18, 19, 20, 21, 22, 23, VP_UREG_IP,
	};
	struct uproc *p = thread_arg;
	Dwarf_Word regs[NDWREGS];

	for (int i = 0; i < NDWREGS; i++)
		regs[i] = p->dwctx->st->regs[order[i]];
	return dwfl_thread_state_registers(thread, 0, NDWREGS, regs);
}

static const Dwfl_Thread_Callbacks dw_thread_callbacks = {
	.next_thread = dw_next_thread,
	.get_thread = dw_get_thread,
	.memory_read = dw_memory_read,
	.set_initial_registers = dw_set_initial_registers,
};

/* The process's modules at their runtime addresses, for libdw. */
static int proc_dwfl(struct uproc *p)
{
	Elf *elf = NULL;

	if (p->dwfl && !p->dwfl_stale)
		return 0;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl_stale = 0;
	p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	dwfl_report_begin(p->dwfl);
	for (size_t i = 0; i < p->n; i++) {
		struct umod *m = p->insts[i].mod;

		if (m->mflags & VP_MOD_VDSO)
			continue;
		if (dwfl_report_elf(p->dwfl, m->path, m->path, -1, p->insts[i].bias, false) &&
		    !elf)
			elf = m->elf;
	}
	dwfl_report_end(p->dwfl, NULL, NULL);
	if (!elf || !dwfl_attach_state(p->dwfl, elf, p->pid, &dw_thread_callbacks, p)) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return -ENOENT;
	}
	return 0;
}

struct dw_walk {
	struct vp_uframe *fr;
	size_t n, max;
};

static int dw_frame(Dwfl_Frame *state, void *arg)
{
	struct dw_walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool act;

	if (!dwfl_frame_pc(state, &pc, &act) || !pc)
		return DWARF_CB_ABORT;
	if (dwfl_frame_reg(state, 7, &sp) < 0)
		sp = 0;
	if (w->n > 0)
		w->fr[w->n - 1].cfa = sp;
	w->fr[w->n].ip = pc;
	w->fr[w->n].cfa = sp;
	return ++w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static size_t unwind_libdw(struct uctx *c, struct vp_uframe *fr, size_t max, int *clean)
{
	struct dw_walk w = { fr, 0, max };
	int ret;

	*clean = 0;
	c->proc->dwctx = c;
	if (proc_dwfl(c->proc) < 0)
		return 0;
	ret = dwfl_getthread_frames(c->proc->dwfl, c->st->pid, dw_frame, &w);
	/* 0: the unwinder found the outermost frame by itself */
	*clean = ret == 0;
	return w.n;
}

size_t vp_unwind(struct vp_unwinder *u, const struct vp_ustack *st, struct vp_uframe *frames,
		 size_t max, uint32_t *flags)
{
	struct uctx c = { u, get_proc(u, st->pid), st, 0, 0, -1, NULL };
	const struct uinst *in;
	size_t n = 0;
	int clean = 0;

	*flags = 0;
	u->stats.samples++;
	in = lookup(u, c.proc, st->regs[VP_UREG_IP]);
#ifdef HAVE_LIBUNWIND
	n = unwind_libunwind(u, &c, frames, max, &clean);
#endif
	if (!clean && !c.beyond) {
		/* Stopped in a module libunwind cannot read: .debug_frame? */
		in = n ? find_inst(c.proc, frames[n - 1].ip - (n > 1)) : in;
		if (!n || (in && in->mod->has_debug_frame)) {
			struct uctx c2 = { u, c.proc, st, 0, 0, -1, NULL };
			int clean2;
			size_t n2 = unwind_libdw(&c2, frames, max, &clean2);

			if (n2 > n || clean2) {
				u->stats.libdw++;
				n = n2;
				clean = clean2;
				c = c2;
			}
		}
	}
	if (!n) {
		/* nothing at all: the sampled IP is still worth its frame */
		frames[0].ip = st->regs[VP_UREG_IP];
		frames[0].cfa = 0;
		n = 1;
	}
	if (!clean) {
		*flags = c.beyond || n == max ? VP_SAMPLE_TRUNCATED : VP_SAMPLE_BROKEN;
		if (*flags == VP_SAMPLE_TRUNCATED)
			u->stats.truncated++;
		else
			u->stats.broken++;
		u->stats.no_cfi += c.no_cfi && *flags == VP_SAMPLE_BROKEN;
	}
	u->stats.frames += n;
	return n;
}

/* ---- names ---- */

static uint64_t hash_mix(uint64_t a, uint64_t b)
{
	uint64_t h = (a ^ 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;

	h ^= b + (h >> 31);
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 29);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int sink_error(struct vp_unwinder *u, int err)
{
	if (err && !u->err)
		u->err = err;
	return err;
}

static int define_module(struct vp_unwinder *u, struct umod *m)
{
	struct vp_module vm = { 0 };

	if (m->defined)
		return 0;
	m->defined = 1;
	m->id = u->next_module++;
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
	return sink_error(u, u->sink.module(u->sink.ctx, m->id, &vm, m->mflags));
}

static void skeys_grow(struct vp_unwinder *u);

static struct skey *skey_slot(struct vp_unwinder *u, const struct umod *m, uint64_t addr,
			      const char *name)
{
	size_t i;

	if (2 * (u->nsyms + 1) > u->syms_mask)
		skeys_grow(u);
	i = hash_mix((uint64_t)(uintptr_t)m, name ? str_hash(name) : addr) & u->syms_mask;
	for (;; i = (i + 1) & u->syms_mask) {
		struct skey *k = &u->syms[i];

		if (k->id == UINT32_MAX)
			return k;
		if (k->mod == m && k->addr == addr &&
		    (name ? k->name && !strcmp(k->name, name) : !k->name))
			return k;
	}
}

static void skeys_grow(struct vp_unwinder *u)
{
	struct skey *old = u->syms;
	size_t oldn = old ? u->syms_mask + 1 : 0;

	u->syms_mask = oldn ? oldn * 2 - 1 : 255;
	u->syms = xmalloc((u->syms_mask + 1) * sizeof(*u->syms));
	for (size_t i = 0; i <= u->syms_mask; i++)
		u->syms[i].id = UINT32_MAX;
	u->nsyms = 0;
	for (size_t i = 0; i < oldn; i++)
		if (old[i].id != UINT32_MAX) {
			*skey_slot(u, old[i].mod, old[i].addr, old[i].name) = old[i];
			u->nsyms++;
		}
	free(old);
}

/* The symbol id of (@m, @addr or @name), defined with @flags on first use. */
static uint32_t symbol_id(struct vp_unwinder *u, const struct umod *m, uint64_t addr,
			  uint64_t size, const char *name, uint32_t flags)
{
	struct skey *k = skey_slot(u, m, flags & VP_SYM_INLINE ? 0 : addr,
				   flags & VP_SYM_INLINE ? name : NULL);
	struct vp_symbol s;

	if (k->id != UINT32_MAX)
		return k->id;
	k->mod = m;
	k->addr = flags & VP_SYM_INLINE ? 0 : addr;
	k->name = flags & VP_SYM_INLINE ? xstrdup(name) : NULL;
	k->id = u->next_symbol++;
	u->nsyms++;
	s.flags = flags;
	s.module = m ? (int32_t)m->id : -1;
	s.addr = flags & VP_SYM_INLINE ? 0 : addr;
	s.size = size;
	s.name = (char *)name;
	s.display = demangle(name);
	sink_error(u, u->sink.symbol(u->sink.ctx, k->id, &s));
	free(s.display);
	return k->id;
}

/* Whether link-time address @addr of @m is in a .plt section. */
static int in_plt(struct umod *m, uint64_t addr)
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
static uint32_t unknown_symbol(struct vp_unwinder *u, struct umod *m)
{
	char name[PATH_MAX + 32];
	const char *base;

	if (!m) {
		if (u->unmapped_sym == UINT32_MAX)
			u->unmapped_sym = symbol_id(u, NULL, 1, 0, "[unknown]", VP_SYM_NONAME);
		return u->unmapped_sym;
	}
	if (m->unknown_sym == UINT32_MAX) {
		base = strrchr(m->path, '/');
		snprintf(name, sizeof(name), "[unknown in %s]", base ? base + 1 : m->path);
		m->unknown_sym = symbol_id(u, m, 1, 0, name, VP_SYM_NONAME);
	}
	return m->unknown_sym;
}

/* The function at link-time address @addr of @m: its symbol id. */
static uint32_t physical_symbol(struct vp_unwinder *u, struct umod *m, uint64_t addr)
{
	if (m->dmod) {
		GElf_Off off;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(m->dmod, addr + m->dbias, &off, &sym, NULL,
							NULL, NULL);

		if (name && *name) {
			/* "memcpy@@GLIBC_2.14": the version is no part of the name */
			const char *at = strchr(name, '@');
			char *plain = at ? strndup(name, (size_t)(at - name)) : NULL;
			uint32_t id = symbol_id(u, m, addr - off, sym.st_size, plain ? plain : name,
						0);

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
			return symbol_id(u, m, m->syms[lo - 1].addr, m->syms[lo - 1].size,
					 m->syms[lo - 1].name, 0);
	}
	/* stubs of the procedure linkage table carry no symbols */
	if (in_plt(m, addr))
		return symbol_id(u, m, 2, 0, "[plt]", VP_SYM_NONAME);
	return unknown_symbol(u, m);
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
static void frame_levels(struct vp_unwinder *u, struct umod *m, uint64_t addr, struct levels *l)
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
				   symbol_id(u, m, 0, 0, name ? name : "[inlined]", VP_SYM_INLINE),
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
	level_push(l, physical_symbol(u, m, addr), file, (uint32_t)(line > 0 ? line : 0));
}

static void fkeys_grow(struct vp_unwinder *u);

static struct fkey *fkey_slot(struct vp_unwinder *u, const struct umod *m, uint64_t addr,
			      int is_ret)
{
	size_t i;

	if (2 * (u->nframes + 1) > u->frames_mask)
		fkeys_grow(u);
	i = hash_mix((uint64_t)(uintptr_t)m ^ (uint64_t)is_ret, addr) & u->frames_mask;
	for (;; i = (i + 1) & u->frames_mask) {
		struct fkey *k = &u->frames[i];

		if (k->id == UINT32_MAX ||
		    (k->mod == m && k->addr == addr && k->is_ret == is_ret))
			return k;
	}
}

static void fkeys_grow(struct vp_unwinder *u)
{
	struct fkey *old = u->frames;
	size_t oldn = old ? u->frames_mask + 1 : 0;

	u->frames_mask = oldn ? oldn * 2 - 1 : 1023;
	u->frames = xmalloc((u->frames_mask + 1) * sizeof(*u->frames));
	for (size_t i = 0; i <= u->frames_mask; i++)
		u->frames[i].id = UINT32_MAX;
	u->nframes = 0;
	for (size_t i = 0; i < oldn; i++)
		if (old[i].id != UINT32_MAX) {
			*fkey_slot(u, old[i].mod, old[i].addr, old[i].is_ret) = old[i];
			u->nframes++;
		}
	free(old);
}

long vp_unwinder_frame(struct vp_unwinder *u, pid_t pid, uint64_t ip, int is_ret)
{
	struct uproc *p = get_proc(u, pid);
	const struct uinst *in = lookup(u, p, ip);
	struct umod *m = in ? in->mod : NULL;
	uint64_t addr = in ? ip - in->bias : ip;
	struct vp_frame_def f;
	struct levels l = { 0 };
	struct fkey *k;

	is_ret = !!is_ret;
	k = fkey_slot(u, m, addr, is_ret);
	if (k->id != UINT32_MAX)
		return k->id;
	if (m && define_module(u, m) < 0)
		return u->err;
	k->mod = m;
	k->addr = addr;
	k->is_ret = is_ret;
	k->id = u->next_frame++;
	u->nframes++;
	if (m)
		frame_levels(u, m, is_ret && addr ? addr - 1 : addr, &l);
	else
		level_push(&l, unknown_symbol(u, NULL), NULL, 0);
	f.module = m ? (int32_t)m->id : -1;
	f.addr = addr;
	f.nlevels = (uint32_t)l.n;
	f.levels = l.v;
	sink_error(u, u->sink.frame(u->sink.ctx, k->id, &f));
	free(l.v);
	if (u->err)
		return u->err;
	return k->id;
}

/* ---- set-up ---- */

struct vp_unwinder *vp_unwinder_new(const struct vp_module *mods, size_t nmods,
				    const struct vp_unwind_sink *sink)
{
	struct vp_unwinder *u = xcalloc(1, sizeof(*u));
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);

	elf_version(EV_CURRENT);
	u->sink = *sink;
	u->hdr_mods = mods;
	u->nhdr_mods = nmods;
	u->next_module = (uint32_t)nmods;
	u->unmapped_sym = UINT32_MAX;
	if (vdso) {
		/* A copy: libelf may write into the image it is given. */
		u->vdso_size = image_size((const unsigned char *)vdso);
		u->vdso = xmalloc(u->vdso_size);
		memcpy((void *)u->vdso, (const void *)vdso, u->vdso_size);
	}
#ifdef HAVE_LIBUNWIND
	u->as = unw_create_addr_space(&lu_accessors, 0);
	if (!u->as) {
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
#endif
	return u;
}

void vp_unwinder_free(struct vp_unwinder *u)
{
	if (!u)
		return;
#ifdef HAVE_LIBUNWIND
	unw_destroy_addr_space(u->as);
#endif
	while (u->procs) {
		struct uproc *p = u->procs;

		u->procs = p->next;
		proc_clear(p);
		free(p);
	}
	while (u->mods) {
		struct umod *m = u->mods;

		u->mods = m->next;
		mod_free(m);
	}
	for (size_t i = 0; u->syms && i <= u->syms_mask; i++)
		if (u->syms[i].id != UINT32_MAX)
			free(u->syms[i].name);
	free(u->syms);
	free(u->frames);
	free((void *)u->vdso);
	free(u);
}

void vp_unwinder_stats(const struct vp_unwinder *u, struct vp_unwind_stats *ret)
{
	*ret = u->stats;
}
