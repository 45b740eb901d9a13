/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind-module.c - the ELF files (and the vDSO image) the unwinder reads:
 * segments, the .eh_frame_hdr search table libunwind wants, whether there
 * is a .debug_frame, libdw's .eh_frame, and libdwfl (or the vDSO's own
 * symbol table) for names.
 */
#include <config.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/datafile.h"
#include "unwind-module.h"
#include "util.h"

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The size of an ELF image in memory: its segments' extent (the vDSO). */
size_t vp_umod_image_size(const unsigned char *img)
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

static int read_loads(struct vp_umod *m)
{
	GElf_Ehdr eh;
	size_t n;

	if (elf_getphdrnum(m->elf, &n) < 0 || !gelf_getehdr(m->elf, &eh))
		return -ENOEXEC;
	m->entry = eh.e_entry;
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
		m->loads[m->nloads++] = (struct vp_uload){ ph.p_vaddr, ph.p_offset, ph.p_filesz,
							   ph.p_memsz, !!(ph.p_flags & PF_X) };
		if (ph.p_vaddr < m->lo)
			m->lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > m->hi)
			m->hi = ph.p_vaddr + ph.p_memsz;
	}
	return m->nloads ? 0 : -ENOEXEC;
}

/* Pointer to @len bytes at link-time address @vaddr of @m, or NULL. */
const unsigned char *vp_umod_ptr(const struct vp_umod *m, uint64_t vaddr, size_t len)
{
	for (size_t i = 0; i < m->nloads; i++) {
		const struct vp_uload *l = &m->loads[i];

		if (vaddr >= l->vaddr && vaddr + len <= l->vaddr + l->filesz &&
		    l->off + (vaddr - l->vaddr) + len <= m->size)
			return m->image + l->off + (vaddr - l->vaddr);
	}
	return NULL;
}

/* DW_EH_PE_* encoded value at *@pp (only what .eh_frame_hdr uses). */
static int read_encoded(const struct vp_umod *m, uint64_t *vaddr, uint8_t enc, uint64_t datarel,
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
	p = vp_umod_ptr(m, at, len);
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
static void parse_eh_frame_hdr(struct vp_umod *m)
{
	const unsigned char *h = m->has_ehdr ? vp_umod_ptr(m, m->ehdr_vaddr, 4) : NULL;
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
	m->has_ehdr = vp_umod_ptr(m, at, count * 8) != NULL;
}

static void find_debug_frame(struct vp_umod *m)
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
	const struct vp_usym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Our own table of function symbols (the vDSO has no file for libdwfl). */
static void read_symtab(struct vp_umod *m)
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
			m->syms[m->nsyms++] = (struct vp_usym){ s.st_value, s.st_size, name };
		}
	}
	qsort(m->syms, m->nsyms, sizeof(*m->syms), cmp_usym);
}

static void open_dwfl(struct vp_umod *m)
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

struct vp_umod *vp_umod_new(const char *path)
{
	struct vp_umod *m = xcalloc(1, sizeof(*m));

	m->path = xstrdup(path);
	m->unknown_sym = UINT32_MAX;
	m->id = UINT32_MAX;
	m->lacks_cfi = -1;
	return m;
}

static int mod_load_file(struct vp_umod *m)
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

int vp_umod_load(struct vp_umod *m, const unsigned char *vdso, size_t vdso_size)
{
	const char *path = m->path;
	int is_vdso = !strcmp(path, "[vdso]"), err;

	if (is_vdso) {
		if (!vdso)
			return -ENOENT;
		m->image = (unsigned char *)vdso;
		m->size = vdso_size;
		m->mflags = VP_MOD_VDSO;
	} else if ((err = mod_load_file(m)) < 0) {
		size_t len = strlen(path);

		/*
		 * The kernel names a file unlinked after it was mapped "PATH
		 * (deleted)"; what is at PATH now, if anything, is another
		 * file.  Its frames stay unnamed: say why, once.
		 */
		if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
			warning("cannot unwind or name code of '%.*s': the file was deleted "
				"after the program mapped it", (int)(len - 10), path);
		else
			pr_debug("unwind: cannot open '%s': %s", path, strerror(-err));
		return err;
	}
	m->elf = elf_memory((char *)m->image, m->size);
	if (!m->elf || read_loads(m) < 0) {
		pr_debug("unwind: '%s' is not a usable ELF file", path);
		if (m->elf)
			elf_end(m->elf);
		m->elf = NULL;
		return -ENOEXEC;
	}
	parse_eh_frame_hdr(m);
	find_debug_frame(m);
	if (is_vdso)
		read_symtab(m);
	else
		open_dwfl(m);
	pr_debug("unwind: module '%s': %s%s", path, m->has_ehdr ? ".eh_frame_hdr " : "",
		 m->has_debug_frame ? ".debug_frame" : "");
	return 0;
}

void vp_umod_free(struct vp_umod *m)
{
	if (m->cfi)
		dwarf_cfi_end(m->cfi);
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

/* .eh_frame of @m through libdw, parsed on first use (NULL without). */
Dwarf_CFI *vp_umod_cfi(struct vp_umod *m)
{
	if (!m->cfi_tried) {
		m->cfi_tried = 1;
		m->cfi = dwarf_getcfi_elf(m->elf);
	}
	return m->cfi;
}

/*
 * Whether most functions of @m have no CFI, as when it was built without
 * unwind tables (the C runtime's objects still bring an .eh_frame): then
 * its code is to blame for broken stacks, not a stretch of hand-written
 * assembly left out of tables on purpose (glibc's clone3 after its system
 * call).  Asks the CFI about at most 256 function symbols, once.
 */
int vp_umod_lacks_cfi(struct vp_umod *m)
{
	Dwarf_CFI *cfi;
	int nsyms, with = 0, without = 0;

	if (m->lacks_cfi >= 0)
		return m->lacks_cfi;
	m->lacks_cfi = !m->has_debug_frame;
	cfi = m->has_ehdr ? vp_umod_cfi(m) : NULL;
	nsyms = m->dmod ? dwfl_module_getsymtab(m->dmod) : -1;
	if (!cfi || nsyms <= 0)
		return m->lacks_cfi;
	for (int i = 1; i < nsyms; i += nsyms / 256 + 1) {
		GElf_Sym sym;
		GElf_Addr addr;
		Dwarf_Frame *f = NULL;

		if (!dwfl_module_getsym_info(m->dmod, i, &sym, &addr, NULL, NULL, NULL) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		if (dwarf_cfi_addrframe(cfi, addr - m->dbias, &f) == 0)
			with++;
		else
			without++;
		free(f);
	}
	m->lacks_cfi = !m->has_debug_frame && without > with;
	return m->lacks_cfi;
}
