/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * elf-file.c - open an ELF file once for all the collector's users: map
 * it, read its segments, build-id and PLT sections, and open libdwfl on
 * it (the vDSO image: its own symbol table).
 */
#include <config.h>

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf-collector/symbols/elf-file.h"
#include "util/util.h"

static char *debuginfo_path;

/* The files open by path; a lock, though the collector opens them from
 * one thread today. */
static struct vp_elf_file *open_files;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	/* Looks in /usr/lib/debug/.build-id/xx/rest.debug and follows
	 * .gnu_debuglink, so stripped binaries keep their .symtab and lines. */
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

const Dwfl_Callbacks *vp_elf_dwfl_callbacks(void)
{
	return &dwfl_callbacks;
}

size_t vp_elf_image_size(const unsigned char *img)
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

static int read_loads(struct vp_elf_file *f)
{
	GElf_Ehdr eh;
	size_t n;

	if (elf_getphdrnum(f->elf, &n) < 0 || !gelf_getehdr(f->elf, &eh))
		return -ENOEXEC;
	f->entry = eh.e_entry;
	f->loads = xcalloc(n ? n : 1, sizeof(*f->loads));
	f->lo = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME) {
			f->eh_frame_hdr = ph.p_vaddr;
			f->eh_frame_hdr_size = ph.p_filesz;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		f->loads[f->nloads++] = (struct vp_elf_load){ ph.p_vaddr, ph.p_offset, ph.p_filesz,
							      ph.p_memsz, !!(ph.p_flags & PF_X) };
		if (ph.p_vaddr < f->lo)
			f->lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > f->hi)
			f->hi = ph.p_vaddr + ph.p_memsz;
	}
	return f->nloads ? 0 : -ENOEXEC;
}

/* .plt, .plt.sec, .plt.got: the stubs that call other modules. */
static void read_plts(struct vp_elf_file *f)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(f->elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".plt", 4))
			continue;
		f->plts = xrealloc(f->plts, (f->nplts + 1) * sizeof(*f->plts));
		f->plts[f->nplts++] = (struct vp_elf_range){ sh.sh_addr, sh.sh_addr + sh.sh_size };
	}
}

/* The GNU build-id note of the sections (an image has no libdwfl to ask). */
static void read_build_id_note(struct vp_elf_file *f)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
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
				free(f->build_id);
				f->build_id = xmalloc(nh.n_descsz ? nh.n_descsz : 1);
				memcpy(f->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
				f->build_id_len = nh.n_descsz;
			}
		}
	}
}

static void read_build_id(struct vp_elf_file *f)
{
	const unsigned char *bits;
	GElf_Addr id_vaddr;
	int len;

	if (!f->dmod) {
		read_build_id_note(f);
		return;
	}
	len = dwfl_module_build_id(f->dmod, &bits, &id_vaddr);
	if (len > 0) {
		f->build_id = xmalloc((size_t)len);
		memcpy(f->build_id, bits, (size_t)len);
		f->build_id_len = (size_t)len;
	}
}

static int cmp_sym(const void *a, const void *b)
{
	const struct vp_elf_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Our own table of function symbols (the vDSO has no file for libdwfl). */
static void read_symtab(struct vp_elf_file *f)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
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
			name = elf_strptr(f->elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			f->syms = xrealloc(f->syms, (f->nsyms + 1) * sizeof(*f->syms));
			f->syms[f->nsyms++] = (struct vp_elf_sym){ s.st_value, s.st_size, name };
		}
	}
	qsort(f->syms, f->nsyms, sizeof(*f->syms), cmp_sym);
}

static void open_dwfl(struct vp_elf_file *f)
{
	f->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!f->dwfl)
		return;
	f->dmod = dwfl_report_offline(f->dwfl, f->path, f->path, -1);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->dmod || !dwfl_module_getelf(f->dmod, &f->dbias)) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
		f->dmod = NULL;
	}
}

static int map_file(struct vp_elf_file *f)
{
	struct stat st;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
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
	f->image = p;
	f->size = (size_t)st.st_size;
	f->mapped = 1;
	return 0;
}

/* Segments and PLT of the image of @f. */
static int read_image(struct vp_elf_file *f)
{
	elf_version(EV_CURRENT);
	f->elf = elf_memory((char *)f->image, f->size);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || read_loads(f) < 0)
		return -ENOEXEC;
	read_plts(f);
	return 0;
}

int vp_elf_file_open(const char *path, struct vp_elf_file **ret)
{
	struct vp_elf_file *f;
	int err = 0;

	pthread_mutex_lock(&open_lock);
	for (f = open_files; f; f = f->next)
		if (!strcmp(f->path, path))
			break;
	if (f) {
		f->refs++;
		goto out;
	}
	f = xcalloc(1, sizeof(*f));
	f->path = xstrdup(path);
	f->refs = 1;
	err = map_file(f);
	if (!err)
		err = read_image(f);
	if (err) {
		vp_elf_file_free(f);
		goto out;
	}
	open_dwfl(f);
	read_build_id(f);
	f->next = open_files;
	f->listed = 1;
	open_files = f;
out:
	pthread_mutex_unlock(&open_lock);
	if (!err)
		*ret = f;
	return err;
}

int vp_elf_file_open_image(const char *name, const unsigned char *img, size_t size,
			   struct vp_elf_file **ret)
{
	struct vp_elf_file *f = xcalloc(1, sizeof(*f));

	f->path = xstrdup(name);
	f->refs = 1;
	f->image = (unsigned char *)img;
	f->size = size;
	if (read_image(f) < 0) {
		vp_elf_file_free(f);
		return -ENOEXEC;
	}
	read_symtab(f);
	read_build_id(f);
	*ret = f;
	return 0;
}

/* Take @f out of the files open by path, when it is there. */
static void unlist(struct vp_elf_file *f)
{
	struct vp_elf_file **p;

	for (p = &open_files; *p; p = &(*p)->next) {
		if (*p == f) {
			*p = f->next;
			break;
		}
	}
}

void vp_elf_file_free(struct vp_elf_file *f)
{
	unsigned int left;

	if (!f)
		return;
	/* an image or a failed open was never listed: one user */
	if (f->listed) {
		pthread_mutex_lock(&open_lock);
		left = --f->refs;
		if (!left)
			unlist(f);
		pthread_mutex_unlock(&open_lock);
		if (left)
			return;
	}
	if (f->dwfl)
		dwfl_end(f->dwfl);
	if (f->elf)
		elf_end(f->elf);
	if (f->mapped)
		munmap(f->image, f->size);
	free(f->syms);
	free(f->plts);
	free(f->build_id);
	free(f->loads);
	free(f->path);
	free(f);
}

const struct vp_elf_load *vp_elf_file_exec_load(const struct vp_elf_file *f, uint64_t vaddr)
{
	for (size_t i = 0; i < f->nloads; i++) {
		const struct vp_elf_load *l = &f->loads[i];

		if (l->exec && vaddr >= l->vaddr && vaddr < l->vaddr + l->filesz)
			return l;
	}
	return NULL;
}

int vp_elf_file_off_to_vaddr(const struct vp_elf_file *f, uint64_t off, uint64_t *ret)
{
	for (size_t i = 0; i < f->nloads; i++) {
		const struct vp_elf_load *l = &f->loads[i];

		if (off >= l->off && off < l->off + l->filesz) {
			*ret = off - l->off + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const unsigned char *vp_elf_file_ptr(const struct vp_elf_file *f, uint64_t vaddr, size_t len)
{
	for (size_t i = 0; i < f->nloads; i++) {
		const struct vp_elf_load *l = &f->loads[i];

		if (vaddr >= l->vaddr && vaddr + len <= l->vaddr + l->filesz &&
		    l->off + (vaddr - l->vaddr) + len <= f->size)
			return f->image + l->off + (vaddr - l->vaddr);
	}
	return NULL;
}

int vp_elf_file_in_plt(const struct vp_elf_file *f, uint64_t vaddr)
{
	for (size_t i = 0; i < f->nplts; i++)
		if (vaddr >= f->plts[i].lo && vaddr < f->plts[i].hi)
			return 1;
	return 0;
}
