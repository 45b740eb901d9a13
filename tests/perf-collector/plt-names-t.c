/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plt-names-t.c - tests for perf-collector/symbols/plt-names.c and the call-site
 * names of symbols.c in a PLT: the stub of tiny() in the fx-plt fixture.
 * Where the stub is comes from the ELF file itself, by the x86-64 psABI's
 * layout: the stub of the i-th .rela.plt relocation is entry i + 1 of .plt
 * (entry 0 calls the dynamic linker), or entry i of .plt.sec when the
 * program was linked for IBT; entries are 16 bytes.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf-collector/symbols/plt-names.h"
#include "perf-collector/symbols/symbols.h"
#include "tests/tap/basic.h"

/* The link-time address of the stub of @name in @path, and of the .plt. */
static void stub_address(const char *path, const char *name, uint64_t *stub, uint64_t *plt)
{
	GElf_Shdr relplt = { 0 }, pltsh = { 0 }, pltsec = { 0 }, sh;
	Elf_Data *rel = NULL, *dynsym = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, strndx = 0;
	int fd = open(path, O_RDONLY);
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0)
		bail("cannot read '%s' with libelf", path);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *sname;

		gelf_getshdr(scn, &sh);
		sname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!strcmp(sname, ".rela.plt")) {
			relplt = sh;
			rel = elf_getdata(scn, NULL);
		} else if (!strcmp(sname, ".plt")) {
			pltsh = sh;
		} else if (!strcmp(sname, ".plt.sec")) {
			pltsec = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = elf_getdata(scn, NULL);
			strndx = sh.sh_link;
		}
	}
	if (!rel || !dynsym || !pltsh.sh_addr)
		bail("'%s' has no .rela.plt, .dynsym or .plt", path);
	*stub = 0;
	*plt = pltsh.sh_addr;
	for (size_t i = 0; i < relplt.sh_size / relplt.sh_entsize; i++) {
		GElf_Rela r;
		GElf_Sym s;

		gelf_getrela(rel, (int)i, &r);
		gelf_getsym(dynsym, (int)GELF_R_SYM(r.r_info), &s);
		if (!strcmp(elf_strptr(elf, strndx, s.st_name), name))
			*stub = pltsec.sh_addr ? pltsec.sh_addr + 16 * i : pltsh.sh_addr + 16 * (i + 1);
	}
	if (!*stub)
		bail("'%s' has no PLT relocation of '%s'", path, name);
	elf_end(elf);
	close(fd);
}

#ifdef HAVE_LIBBFD
/* The stub of tiny() at @stub, with libbfd; @plt is the start of .plt. */
static void check_names(const char *path, uint64_t stub, uint64_t plt)
{
	struct vp_plt_names *p;
	struct vp_symfile *sf;
	uint64_t start = 0, size = 0;
	char *caller, *file;
	uint32_t line;

	plan(12);

	/* the table read from the file */
	is_int(0, vp_plt_names_open(path, &p), "fx-plt's PLT read");
	is_string("tiny@plt", vp_plt_names_find(p, stub, &start, &size),
		  "the stub at %#llx is tiny@plt", (unsigned long long)stub);
	is_hex(stub, start, "... it starts there");
	is_uint(16, size, "... and is 16 bytes long");
	is_string("tiny@plt", vp_plt_names_find(p, stub + 15, &start, &size),
		  "its last byte is tiny@plt's too");
	ok(!vp_plt_names_find(p, plt, &start, &size), "the PLT's first entry is no stub");
	ok(!vp_plt_names_find(p, 0, &start, &size), "address 0 is in no stub");
	vp_plt_names_free(p);
	is_int(-ENOENT, vp_plt_names_open("/nonexistent/fx-plt", &p), "a missing file: -ENOENT");

	/* the cache */
	is_string("tiny@plt", vp_plt_name(path, stub + 6, &start, &size), "cached lookup");
	ok(!vp_plt_name("[vdso]", stub, &start, &size), "[vdso] is no file");

	/* a call-site label in the stub */
	if (vp_symfile_open(path, &sf) < 0)
		bail("cannot open '%s'", path);
	vp_symfile_describe(sf, stub + 6, &caller, &file, &line);
	is_string("tiny@plt+0x6", caller, "a call site in the stub is named after it");
	is_string("", file, "... with no source file");
	free(caller);
	free(file);
	vp_symfile_free(sf);
}
#else
/* Without libbfd: no stub has a name. */
static void check_names(const char *path, uint64_t stub, uint64_t plt)
{
	struct vp_plt_names *p;
	uint64_t start, size;

	plan(2);
	is_int(-ENOTSUP, vp_plt_names_open(path, &p), "without libbfd: -ENOTSUP");
	ok(!vp_plt_name(path, stub, &start, &size), "... and no name for the stub");
}
#endif

int main(void)
{
	const char *dir = getenv("FIXTURES");
	uint64_t stub, plt;
	char *path;

	if (!dir)
		skip_all("FIXTURES is not set (run through make check)");
	path = basprintf("%s/fx-plt", dir);
	stub_address(path, "tiny", &stub, &plt);
	check_names(path, stub, plt);
	free(path);
	return 0;
}
