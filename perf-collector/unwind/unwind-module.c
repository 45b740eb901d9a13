/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind-module.c - the ELF files (and the vDSO image) the unwinder reads,
 * opened through elf-file.c: the .eh_frame_hdr search table libunwind
 * wants, whether there is a .debug_frame, and libdw's .eh_frame.
 */
#include <config.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "core/datafile.h"
#include "perf-collector/unwind/unwind-module.h"
#include "util/util.h"

const unsigned char *vp_umod_ptr(const struct vp_umod *m, uint64_t vaddr, size_t len)
{
	return vp_elf_file_ptr(m->file, vaddr, len);
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
	const unsigned char *h;
	uint64_t at, eh_frame, count;

	m->ehdr_vaddr = m->file->eh_frame_hdr;
	h = m->file->eh_frame_hdr_size >= 12 ? vp_umod_ptr(m, m->ehdr_vaddr, 4) : NULL;
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
	Elf *elf = m->file->elf;
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_frame") && sh.sh_type != SHT_NOBITS)
			m->has_debug_frame = 1;
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

int vp_umod_load(struct vp_umod *m, const unsigned char *vdso, size_t vdso_size)
{
	const char *path = m->path;
	int err;

	if (!strcmp(path, "[vdso]")) {
		if (!vdso)
			return -ENOENT;
		err = vp_elf_file_open_image(path, vdso, vdso_size, &m->file);
		m->mflags = VP_MOD_VDSO;
	} else {
		err = vp_elf_file_open(path, &m->file);
	}
	if (err < 0) {
		size_t len = strlen(path);

		/*
		 * The kernel names a file unlinked after it was mapped "PATH
		 * (deleted)"; what is at PATH now, if anything, is another
		 * file.  Its frames stay unnamed: say why, once.
		 */
		if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
			warning("cannot unwind or name code of '%.*s': the file was deleted "
				"after the program mapped it", (int)(len - 10), path);
		else if (err == -ENOEXEC)
			pr_debug("unwind: '%s' is not a usable ELF file", path);
		else
			pr_debug("unwind: cannot open '%s': %s", path, strerror(-err));
		return err;
	}
	parse_eh_frame_hdr(m);
	find_debug_frame(m);
	pr_debug("unwind: module '%s': %s%s", path, m->has_ehdr ? ".eh_frame_hdr " : "",
		 m->has_debug_frame ? ".debug_frame" : "");
	return 0;
}

void vp_umod_free(struct vp_umod *m)
{
	if (m->cfi)
		dwarf_cfi_end(m->cfi);
	vp_elf_file_free(m->file);
	free(m->path);
	free(m);
}

/* .eh_frame of @m through libdw, parsed on first use (NULL without). */
Dwarf_CFI *vp_umod_cfi(struct vp_umod *m)
{
	if (!m->cfi_tried) {
		m->cfi_tried = 1;
		m->cfi = dwarf_getcfi_elf(m->file->elf);
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
	nsyms = m->file->dmod ? dwfl_module_getsymtab(m->file->dmod) : -1;
	if (!cfi || nsyms <= 0)
		return m->lacks_cfi;
	for (int i = 1; i < nsyms; i += nsyms / 256 + 1) {
		GElf_Sym sym;
		GElf_Addr addr;
		Dwarf_Frame *f = NULL;

		if (!dwfl_module_getsym_info(m->file->dmod, i, &sym, &addr, NULL, NULL, NULL) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		if (dwarf_cfi_addrframe(cfi, addr - m->file->dbias, &f) == 0)
			with++;
		else
			without++;
		free(f);
	}
	m->lacks_cfi = !m->has_debug_frame && without > with;
	return m->lacks_cfi;
}
