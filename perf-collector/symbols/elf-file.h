/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * elf-file.h - one ELF file (or the vDSO image) as the collector reads it,
 * opened once for all its users: its image, its loadable segments, its
 * build-id, libdwfl for symbols, lines and separate debug information,
 * and its PLT.  The probe placer (symbols.c, probe-sites.c, libpath.c),
 * the call-site namer (addrspace.c) and the unwinder (unwind-module.c,
 * unwind-names.c) all read their files through it, as perf's dso and
 * drgn's elf_file.
 */
#ifndef VARPERF_ELF_FILE_H
#define VARPERF_ELF_FILE_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

/* A PT_LOAD segment: link-time address, file offset and sizes. */
struct vp_elf_load {
	uint64_t vaddr, off, filesz, memsz;
	int exec;
};

/* A function symbol of a file's own table (the vDSO: no file for libdwfl). */
struct vp_elf_sym {
	uint64_t addr, size;
	const char *name;
};

/* [lo, hi) in link-time addresses. */
struct vp_elf_range {
	uint64_t lo, hi;
};

/*
 * The fields are read directly; vp_elf_file_open() and
 * vp_elf_file_open_image() set them and nothing changes them after.
 */
struct vp_elf_file {
	char *path;
	unsigned char *image;
	size_t size;
	int mapped;	 /* image is our private mmap of the file */
	Elf *elf;	 /* over image */
	struct vp_elf_load *loads;
	size_t nloads;
	uint64_t lo, hi; /* link-time extent of the PT_LOAD segments */
	uint64_t entry;	 /* e_entry: where the kernel starts the program */
	/* PT_GNU_EH_FRAME: link-time address and size (0: none) */
	uint64_t eh_frame_hdr, eh_frame_hdr_size;
	unsigned char *build_id; /* the GNU build-id note (malloc'ed), or NULL */
	size_t build_id_len;
	/* libdwfl (NULL for an image, or when libdwfl cannot read the
	 * file): libdwfl address = link-time address + dbias */
	Dwfl *dwfl;
	Dwfl_Module *dmod;
	GElf_Addr dbias;
	/* an image's own function symbols, sorted by address */
	struct vp_elf_sym *syms;
	size_t nsyms;
	/* the executable .plt, .plt.sec and .plt.got sections */
	struct vp_elf_range *plts;
	size_t nplts;
	/* elf-file.c's: the users of a file opened by path, and the list of
	 * those open */
	unsigned int refs;
	int listed;
	struct vp_elf_file *next;
};

/**
 * vp_elf_file_open - map the ELF file @path (the path is kept as given)
 * and read its segments and build-id; open libdwfl on it, which finds
 * separate debug information by build-id or .gnu_debuglink, so stripped
 * files keep their .symtab and lines (when it cannot, @ret->dmod is NULL).
 * A file open already under the same path is not opened again: its users
 * share it (the probe placer, the call-site namer and the unwinder all
 * open the program and its libraries).  Returns 0, -ENOEXEC when @path is
 * no ELF file with loadable segments, or another -errno.  Each successful
 * open takes one vp_elf_file_free().
 */
int vp_elf_file_open(const char *path, struct vp_elf_file **ret);

/**
 * vp_elf_file_open_image - an ELF image in memory (the vDSO), named @name
 * (copied), with its own symbol table instead of libdwfl.  @img is
 * borrowed and must outlive the result.  Returns 0 or -ENOEXEC.
 */
int vp_elf_file_open_image(const char *name, const unsigned char *img, size_t size,
			   struct vp_elf_file **ret);

/* Drop one user of @f: the last releases what @f holds (its mapping,
 * libelf and libdwfl handles) and @f.  NULL is a no-op. */
void vp_elf_file_free(struct vp_elf_file *f);

/* The callbacks of every libdwfl session over these files. */
const Dwfl_Callbacks *vp_elf_dwfl_callbacks(void);

/* The executable segment of @f holding link-time address @vaddr, or NULL. */
const struct vp_elf_load *vp_elf_file_exec_load(const struct vp_elf_file *f, uint64_t vaddr);

/* Link-time virtual address of file offset @off in @f, or -ENOENT. */
int vp_elf_file_off_to_vaddr(const struct vp_elf_file *f, uint64_t off, uint64_t *ret);

/**
 * vp_elf_file_ptr - @len bytes at link-time address @vaddr of @f
 *
 * Returns a pointer into @f's image (valid as long as @f), or NULL when
 * the bytes are not all in one segment's file contents.
 */
const unsigned char *vp_elf_file_ptr(const struct vp_elf_file *f, uint64_t vaddr, size_t len);

/*
 * Names libdw cannot give.  libdw and libelf have no symbols for the stubs
 * of the procedure linkage table: a jump into one calls another module,
 * code in one belongs to no function of @f.  Their addresses are known
 * here; naming a stub ("memcpy@plt") is for a synthetic symbol table to
 * add, at the places that call vp_elf_file_in_plt() today.
 */

/* Whether link-time address @vaddr of @f is in a PLT section. */
int vp_elf_file_in_plt(const struct vp_elf_file *f, uint64_t vaddr);

/* The size of the ELF image at @img in memory: its segments' and section
 * headers' extent (for copying the vDSO). */
size_t vp_elf_image_size(const unsigned char *img);

#endif
