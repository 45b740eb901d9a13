/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * symbols.c - functions to probe (libdwfl symbol tables, separate debug
 * files, demangling, first-instruction classes), shared-library lookup, and
 * the target's address space for naming call sites.
 */
#include <config.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif
#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

#include "plt-names.h"
#include "symbols.h"
#include "util.h"

struct vp_load {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	int exec;
};

struct vp_symfile {
	char *path;
	int fd; /* our own, for reading instruction bytes */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;
	GElf_Addr bias; /* libdwfl address = link-time address + bias */
	struct vp_load *loads;
	size_t nloads;
	unsigned char *build_id;
	size_t build_id_len;
	/*
	 * For finding exits, read on first use: link-time extents of the
	 * .cold parts and of the PLT sections, and the functions' first
	 * addresses, sorted.
	 */
	struct code_range *colds, *plts;
	size_t ncolds, nplts;
	uint64_t *starts;
	size_t nstarts;
	int code_map_read;
};

struct code_range {
	uint64_t lo, hi;
};

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	/* Looks in /usr/lib/debug/.build-id/xx/rest.debug and follows
	 * .gnu_debuglink, so stripped binaries keep their .symtab and lines. */
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static int is_elf_file(int fd)
{
	unsigned char magic[4];

	if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic))
		return 0;
	return !memcmp(magic, ELFMAG, SELFMAG);
}

static int symfile_read_loads(struct vp_symfile *sf)
{
	size_t n;

	if (elf_getphdrnum(sf->elf, &n) < 0)
		return -ENOEXEC;
	sf->loads = xcalloc(n, sizeof(*sf->loads));
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(sf->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		sf->loads[sf->nloads++] = (struct vp_load){ ph.p_vaddr, ph.p_offset, ph.p_filesz,
							    !!(ph.p_flags & PF_X) };
	}
	return sf->nloads ? 0 : -ENOEXEC;
}

int vp_symfile_open(const char *path, struct vp_symfile **ret)
{
	struct vp_symfile *sf;
	const unsigned char *bits;
	GElf_Addr id_vaddr;
	char *real;
	int err, len;

	real = realpath(path, NULL);
	if (!real)
		return -errno;
	sf = xcalloc(1, sizeof(*sf));
	sf->path = real;
	sf->fd = open(real, O_RDONLY | O_CLOEXEC);
	if (sf->fd < 0) {
		err = -errno;
		goto out_free;
	}
	if (!is_elf_file(sf->fd)) {
		err = -ENOEXEC;
		goto out_free;
	}
	sf->dwfl = dwfl_begin(&offline_callbacks);
	if (!sf->dwfl) {
		err = -ENOMEM;
		goto out_free;
	}
	sf->mod = dwfl_report_offline(sf->dwfl, strrchr(real, '/') + 1, real, -1);
	dwfl_report_end(sf->dwfl, NULL, NULL);
	if (!sf->mod || !(sf->elf = dwfl_module_getelf(sf->mod, &sf->bias))) {
		err = -ENOEXEC;
		goto out_free;
	}
	err = symfile_read_loads(sf);
	if (err)
		goto out_free;
	len = dwfl_module_build_id(sf->mod, &bits, &id_vaddr);
	if (len > 0) {
		sf->build_id = xmalloc((size_t)len);
		memcpy(sf->build_id, bits, (size_t)len);
		sf->build_id_len = (size_t)len;
	}
	*ret = sf;
	return 0;
out_free:
	vp_symfile_free(sf);
	return err;
}

void vp_symfile_free(struct vp_symfile *sf)
{
	if (!sf)
		return;
	if (sf->dwfl)
		dwfl_end(sf->dwfl);
	if (sf->fd >= 0)
		close(sf->fd);
	free(sf->loads);
	free(sf->colds);
	free(sf->plts);
	free(sf->starts);
	free(sf->build_id);
	free(sf->path);
	free(sf);
}

const char *vp_symfile_path(const struct vp_symfile *sf)
{
	return sf->path;
}

size_t vp_symfile_build_id(const struct vp_symfile *sf, const unsigned char **ret)
{
	*ret = sf->build_id;
	return sf->build_id_len;
}

int vp_symfile_off_to_vaddr(const struct vp_symfile *sf, uint64_t off, uint64_t *ret)
{
	for (size_t i = 0; i < sf->nloads; i++) {
		const struct vp_load *l = &sf->loads[i];

		if (off >= l->offset && off < l->offset + l->filesz) {
			*ret = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* The executable segment holding @vaddr, or NULL. */
static const struct vp_load *exec_load(const struct vp_symfile *sf, uint64_t vaddr)
{
	for (size_t i = 0; i < sf->nloads; i++) {
		const struct vp_load *l = &sf->loads[i];

		if (l->exec && vaddr >= l->vaddr && vaddr < l->vaddr + l->filesz)
			return l;
	}
	return NULL;
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

/* ---- probe placement ---- */

/* @len bytes of code at link-time address @vaddr, malloc'ed, or NULL. */
static unsigned char *read_code(struct vp_symfile *sf, uint64_t vaddr, size_t len)
{
	const struct vp_load *l = exec_load(sf, vaddr);
	unsigned char *buf;

	if (!l || !len || vaddr + len > l->vaddr + l->filesz)
		return NULL;
	buf = xmalloc(len);
	if (pread(sf->fd, buf, len, (off_t)(vaddr - l->vaddr + l->offset)) != (ssize_t)len) {
		free(buf);
		return NULL;
	}
	return buf;
}

#ifdef HAVE_CAPSTONE
static int cmp_range(const void *a, const void *b)
{
	const struct code_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void range_add(struct code_range **v, size_t *n, uint64_t lo, uint64_t hi)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[*n].lo = lo;
	(*v)[(*n)++].hi = hi;
}

/* One pass over the symbol table: an address lookup per jump is too slow. */
static void read_code_map(struct vp_symfile *sf)
{
	int nsyms = dwfl_module_getsymtab(sf->mod);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	sf->code_map_read = 1;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(sf->mod, i, &sym, &addr, &shndx, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		if (strstr(name, ".cold")) {
			if (sym.st_size)
				range_add(&sf->colds, &sf->ncolds, addr - sf->bias,
					  addr - sf->bias + sym.st_size);
			continue;
		}
		sf->starts = xrealloc(sf->starts, (sf->nstarts + 1) * sizeof(*sf->starts));
		sf->starts[sf->nstarts++] = addr - sf->bias;
	}
	qsort(sf->colds, sf->ncolds, sizeof(*sf->colds), cmp_range);
	qsort(sf->starts, sf->nstarts, sizeof(*sf->starts), cmp_u64);
	/* .plt, .plt.sec, .plt.got: a jmp there calls another module. */
	if (elf_getshdrstrndx(sf->elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(sf->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(sf->elf, shstrndx, sh.sh_name);
		if (name && !strncmp(name, ".plt", 4))
			range_add(&sf->plts, &sf->nplts, sh.sh_addr, sh.sh_addr + sh.sh_size);
	}
}

static const struct code_range *find_range(const struct code_range *v, size_t n,
					   uint64_t addr)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (addr < v[mid].lo)
			b = mid;
		else if (addr >= v[mid].hi)
			a = mid + 1;
		else
			return &v[mid];
	}
	return NULL;
}

/*
 * The .cold part (GCC's "f.cold", clang's "f.cold.1") that @target lies
 * in: code of the same function that the compiler moved away, reached by
 * jumps and never called.  Returns 1 and its extent, or 0.
 */
static int cold_part(struct vp_symfile *sf, uint64_t target, uint64_t *lo, uint64_t *hi)
{
	const struct code_range *r;

	if (!sf->code_map_read)
		read_code_map(sf);
	r = find_range(sf->colds, sf->ncolds, target);
	if (!r)
		return 0;
	*lo = r->lo;
	*hi = r->hi;
	return 1;
}

/*
 * Whether a jmp to @target calls a function: the first address of a
 * function symbol, or a PLT entry.  Anything else may be a part of the
 * jumping function that has no symbol (a stripped file has no ".cold"
 * names): not an exit we can be sure of.
 */
static int is_call_target(struct vp_symfile *sf, uint64_t target)
{
	if (!sf->code_map_read)
		read_code_map(sf);
	if (bsearch(&target, sf->starts, sf->nstarts, sizeof(*sf->starts), cmp_u64))
		return 1;
	for (size_t i = 0; i < sf->nplts; i++)
		if (target >= sf->plts[i].lo && target < sf->plts[i].hi)
			return 1;
	return 0;
}

/* Address ranges [lo, hi) that hold the code of one function. */
struct code_regions {
	struct code_range *v;
	size_t n;
};

static void regions_add(struct code_regions *r, uint64_t lo, uint64_t hi)
{
	range_add(&r->v, &r->n, lo, hi);
}

static int regions_hold(const struct code_regions *r, uint64_t addr)
{
	for (size_t i = 0; i < r->n; i++)
		if (addr >= r->v[i].lo && addr < r->v[i].hi)
			return 1;
	return 0;
}

/* 1 and the target of a direct branch in @target, 0 for an indirect one. */
static int branch_target(const cs_insn *insn, uint64_t *target)
{
	const cs_x86 *x = &insn->detail->x86;

	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return 0;
	*target = (uint64_t)x->operands[0].imm;
	return 1;
}

static csh capstone_handle(void)
{
	static csh cs;
	static int state; /* 0 unopened, 1 open, -1 failed */

	if (!state) {
		state = -1;
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK) {
			if (cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON) == CS_ERR_OK)
				state = 1;
			else
				cs_close(&cs);
		}
	}
	return state > 0 ? cs : 0;
}

/*
 * The kernel's view of an instruction (arch/x86/kernel/uprobes.c): its
 * legacy prefixes, an optional REX byte, then the opcode.
 */
struct insn_head {
	const uint8_t *op; /* the first opcode byte */
	size_t oplen;	   /* bytes from there to the end */
	int seg_or_lock;   /* a 26, 2e, 36, 3e or f0 prefix */
	int opsize;	   /* a 66 prefix */
};

static void insn_head(const cs_insn *insn, struct insn_head *h)
{
	size_t i = 0;

	memset(h, 0, sizeof(*h));
	for (; i < insn->size; i++) {
		uint8_t b = insn->bytes[i];

		if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0xf0)
			h->seg_or_lock = 1;
		else if (b == 0x66)
			h->opsize = 1;
		else if (b != 0x64 && b != 0x65 && b != 0x67 && b != 0xf2 && b != 0xf3)
			break;
	}
	if (i < insn->size && (insn->bytes[i] & 0xf0) == 0x40)
		i++; /* REX */
	h->op = insn->bytes + i;
	h->oplen = insn->size - i;
}

/* jmp, jcc and call to an immediate: rel8 or rel32. */
static int is_rel_branch(const struct insn_head *h)
{
	uint8_t op = h->oplen ? h->op[0] : 0;

	if (op == 0x0f)
		return h->oplen > 1 && h->op[1] >= 0x80 && h->op[1] <= 0x8f;
	return op == 0xe8 || op == 0xe9 || op == 0xeb || (op >= 0x70 && op <= 0x7f);
}

/*
 * Whether the kernel accepts a uprobe on @insn.  uprobe_init_insn()
 * refuses the segment-override and lock prefixes (3e is also "notrack",
 * 2e the "cs" of the assembler's "cs nopw" padding), and the branch
 * emulation refuses the operand-size prefix 66; we refuse 66 on any
 * branch or ret (a 16-bit return address is no compiler's).  It does so
 * silently when the file is not mapped yet, as when a recording launches
 * its target: the probe then never fires.  rep (f3), bnd (f2), fs/gs and
 * REX are fine.  (It also refuses opcodes no compiler emits in a function
 * body: int3, in/out, hlt, mov to %ss...; no probe is moved onto those.)
 */
static int probeable(csh cs, const cs_insn *insn)
{
	struct insn_head h;

	insn_head(insn, &h);
	if (h.seg_or_lock)
		return 0;
	return !h.opsize || !(is_rel_branch(&h) || cs_insn_group(cs, insn, CS_GRP_JUMP) ||
			      cs_insn_group(cs, insn, CS_GRP_CALL) ||
			      cs_insn_group(cs, insn, CS_GRP_RET));
}

/*
 * The nops the kernel emulates: x86_nops[] of arch/x86/kernel/alternative.c
 * compared byte for byte (a probed "0f 1f 41 00" is single-stepped), plus
 * anything whose opcode is 90 (nop, pause, "66 90").
 */
static int is_kernel_nop(const cs_insn *insn)
{
	static const uint8_t nops[9][8] = {
		[3] = { 0x0f, 0x1f, 0x00 },
		[4] = { 0x0f, 0x1f, 0x40, 0x00 },
		[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		[6] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		[7] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		[8] = { 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};

	return insn->size >= 3 && insn->size <= 8 && !memcmp(insn->bytes, nops[insn->size],
							       insn->size);
}

/*
 * Whether the kernel emulates @insn (a probeable one) rather than
 * single-stepping it out of line, from its bytes as the kernel decides
 * (branch_setup_xol_ops() and push_setup_xol_ops()): direct jmp, jcc and
 * call without 66 (bnd is fine; loop and jrcxz are stepped), the nops
 * above, and push of a register, alone or with the REX prefix 41 only
 * ("push %r12"; "pushw %bp", "rex.W push", "push $1" and "push (%rsp)" are
 * stepped).  Emulated, a probed call costs well under the stepped ones
 * (README, "Costs": 2.7 against 7.6 us on the test VM's BPF backend).
 */
static int is_emulated(const cs_insn *insn)
{
	struct insn_head h;

	insn_head(insn, &h);
	if (!h.oplen || h.seg_or_lock)
		return 0;
	if (h.op[0] == 0x90)
		return 1;
	if (h.op[0] >= 0x50 && h.op[0] <= 0x57)
		return insn->size == 1 || (insn->size == 2 && insn->bytes[0] == 0x41);
	if (is_rel_branch(&h))
		return !h.opsize;
	return is_kernel_nop(insn);
}

static int is_sp(unsigned int reg)
{
	return reg == X86_REG_RSP || reg == X86_REG_ESP || reg == X86_REG_SP ||
	       reg == X86_REG_SPL;
}

/*
 * Whether @op, a memory operand @insn writes, may hit the return address:
 * addressed through the stack pointer and not clear of its 8 bytes (red
 * zone stores below it and stores to the caller's arguments above it are).
 */
static int hits_return_address(const cs_x86_op *op)
{
	int64_t d = op->mem.disp;

	if (is_sp(op->mem.index))
		return 1;
	return is_sp(op->mem.base) && d < 8 && d + op->size > 0;
}

/*
 * Whether a probe may go past @insn: the return address stays on top of
 * the stack, where the entry probe reads it and a return probe replaces
 * it.  So @insn must not branch, change the stack pointer (capstone 4 does
 * not say that enter does), write the return address, or copy the stack
 * pointer to another register that a later store could use.
 */
static int skippable(csh cs, const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	if (insn->id == X86_INS_ENDBR64)
		return 1;
	if (cs_insn_group(cs, insn, CS_GRP_JUMP) || cs_insn_group(cs, insn, CS_GRP_CALL) ||
	    cs_insn_group(cs, insn, CS_GRP_RET) || cs_insn_group(cs, insn, CS_GRP_INT) ||
	    cs_insn_group(cs, insn, CS_GRP_IRET) || cs_insn_group(cs, insn, CS_GRP_PRIVILEGE))
		return 0;
	if (insn->id == X86_INS_ENTER || insn->id == X86_INS_LEAVE ||
	    !strcmp(insn->mnemonic, "syscall") || !strncmp(insn->mnemonic, "loop", 4) ||
	    !strncmp(insn->mnemonic, "rep", 3))
		return 0;
	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 0;
	for (uint8_t i = 0; i < nwr; i++)
		if (is_sp(wr[i]) || wr[i] == X86_REG_RIP)
			return 0;
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_REG && is_sp(op->reg))
			return 0;
		if (op->type != X86_OP_MEM)
			continue;
		if (insn->id == X86_INS_LEA ? is_sp(op->mem.base) || is_sp(op->mem.index)
					    : (op->access & CS_AC_WRITE) && hits_return_address(op))
			return 0;
	}
	return 1;
}

/*
 * Whether a direct branch of the function (@code, @len bytes at @vaddr),
 * or of a .cold part of it, lands in (@vaddr, @hi]: a probe there would
 * fire again without a call (a loop back to just past the endbr64, a
 * retry loop whose back edge the compiler moved out to .cold).  1 when
 * unsure: code that does not decode to its end.
 */
static int branched_into(struct vp_symfile *sf, csh cs, const unsigned char *code, size_t len,
			 uint64_t vaddr, uint64_t hi)
{
	struct code_regions regs = { 0 };
	cs_insn *insn = cs_malloc(cs);
	int hit = !insn;

	regions_add(&regs, vaddr, vaddr + len);
	for (size_t ri = 0; !hit && ri < regs.n; ri++) {
		uint64_t a = regs.v[ri].lo, t, clo, chi;
		size_t left = regs.v[ri].hi - regs.v[ri].lo;
		unsigned char *buf = ri ? read_code(sf, a, left) : NULL;
		const uint8_t *p = ri ? buf : code;

		if (!p) {
			hit = 1;
			break;
		}
		while (!hit && left && cs_disasm_iter(cs, &p, &left, &a, insn)) {
			if ((!cs_insn_group(cs, insn, CS_GRP_JUMP) &&
			     !cs_insn_group(cs, insn, CS_GRP_CALL)) || !branch_target(insn, &t))
				continue;
			if (t > vaddr && t <= hi)
				hit = 1;
			else if (!regions_hold(&regs, t) && cold_part(sf, t, &clo, &chi))
				regions_add(&regs, clo, chi);
		}
		if (left)
			hit = 1;
		free(buf);
	}
	free(regs.v);
	if (insn)
		cs_free(insn, 1);
	return hit;
}
#endif

/*
 * classify - where the entry probe goes and its instruction class.  @code
 * holds the first @len bytes of the function at link-time address @vaddr,
 * all of it when @whole.  The kernel single-steps most instructions (7.6-10.1 us
 * per probed call on the test VM, see README's "Costs") but emulates a few (push
 * of a register, nops, direct branches: 2.7-4.5 us), so when the function starts
 * with a straight-line prologue that keeps the return address on top of
 * the stack ("endbr64; push %rbp", "mov %rdi,%rbx; push %rbp"), the probe
 * moves to the first emulated instruction the kernel accepts: entry and
 * return probes see every call as at its first byte there - unless
 * something branches into the skipped part, which needs the whole
 * function (and its .cold parts) to check.  Likewise "endbr64; ret" is
 * probed at the ret, where one probe records entry and exit.  *@skip gets
 * the probe's offset, *@moved whether it is past a real instruction.
 */
static uint32_t classify(struct vp_symfile *sf, const unsigned char *code, size_t len, int whole,
			 uint64_t vaddr, uint64_t *skip, int *moved)
{
	*skip = 0;
	*moved = 0;
#ifdef HAVE_CAPSTONE
	{
		enum { MAX_WALK = 8 }; /* instructions, the first included */
		csh cs = capstone_handle();
		const uint8_t *p = code;
		size_t left = len;
		uint64_t a = vaddr;
		uint32_t cls = VP_INSN_UNKNOWN;
		cs_insn *insn = cs ? cs_malloc(cs) : NULL;
		int endbr;

		if (!insn)
			return VP_INSN_UNKNOWN;
		if (!cs_disasm_iter(cs, &p, &left, &a, insn))
			goto out;
		cls = is_emulated(insn) && probeable(cs, insn) ? VP_INSN_EMULATED : VP_INSN_STEPPED;
		endbr = insn->id == X86_INS_ENDBR64;
		if (cls == VP_INSN_EMULATED || !whole || !skippable(cs, insn))
			goto out;
		for (int i = 1; i < MAX_WALK && cs_disasm_iter(cs, &p, &left, &a, insn); i++) {
			int emulated = is_emulated(insn);

			if (probeable(cs, insn) &&
			    (emulated || (endbr && i == 1 && insn->id == X86_INS_RET))) {
				/* if so, it branches into every later one too */
				if (branched_into(sf, cs, code, len, vaddr, insn->address))
					break;
				cls = emulated ? VP_INSN_EMULATED : VP_INSN_STEPPED;
				*skip = insn->address - vaddr;
				*moved = !(endbr && i == 1);
				break;
			}
			if (!skippable(cs, insn))
				break;
		}
out:
		cs_free(insn, 1);
		return cls;
	}
#else
	(void)sf;
	(void)code;
	(void)len;
	(void)whole;
	(void)vaddr;
	return VP_INSN_UNKNOWN;
#endif
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
	int nsyms = dwfl_module_getsymtab(sf->mod);

	if (nsyms <= 0) {
		*ret = NULL;
		return 0;
	}
	c = xcalloc((size_t)nsyms, sizeof(*c));
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(sf->mod, i, &sym, &addr, &shndx, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		uint64_t vaddr;

		if (!name || !*name || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		if (shndx == SHN_UNDEF || strstr(name, ".cold") || is_not_called(name))
			continue;
		vaddr = addr - sf->bias;
		if (!exec_load(sf, vaddr))
			continue;
		c[n++] = (struct candidate){ vaddr, sym.st_size, name,
					     GELF_ST_BIND(sym.st_info) != STB_LOCAL, (size_t)i };
	}
	qsort(c, n, sizeof(*c), cmp_candidate);
	*ret = c;
	return n;
}

/*
 * The probe's place and class: from the whole function when its symbol
 * gives a size (a loop back into the prologue may be anywhere in it),
 * from its first bytes without moving past the first instruction when not
 * (or not @move).
 */
static void place_probe(struct vp_symfile *sf, struct vp_func *f, int move)
{
	enum { HEAD = 64, MAX_CODE = 64 << 20 };
	const struct vp_load *l = exec_load(sf, f->addr);
	unsigned char head[HEAD], *code = NULL;
	uint64_t end = l->vaddr + l->filesz, skip;
	size_t len = 0;
	int moved, whole = 0;

	if (move && f->size && f->size <= MAX_CODE && f->size <= end - f->addr) {
		code = read_code(sf, f->addr, (size_t)f->size);
		whole = !!code;
		len = whole ? (size_t)f->size : 0;
	}
	if (!code) {
		ssize_t n = pread(sf->fd, head, (size_t)(end - f->addr < HEAD ? end - f->addr : HEAD),
				  (off_t)f->probe_off);

		len = n > 0 ? (size_t)n : 0;
	}
	f->insn_class = VP_INSN_UNKNOWN;
	if (len) {
		f->insn_class = classify(sf, code ? code : head, len, whole, f->addr, &skip, &moved);
		f->probe_off += skip;
		if (moved)
			f->flags |= VP_FUNC_MOVED;
	}
	free(code);
}

static void fill_func(struct vp_symfile *sf, struct vp_func *f, const struct candidate *c,
		      uint64_t size, uint32_t module, uint32_t flags)
{
	const struct vp_load *l = exec_load(sf, c->vaddr);
	const char *suffix = clone_suffix(c->name);

	memset(f, 0, sizeof(*f));
	f->module = module;
	f->addr = c->vaddr;
	f->size = size;
	f->flags = flags;
	f->probe_off = c->vaddr - l->vaddr + l->offset;
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
	place_probe(sf, f, 1);
}

void vp_symfile_probe_first(struct vp_symfile *sf, struct vp_func *f)
{
	const struct vp_load *l = exec_load(sf, f->addr);

	f->probe_off = f->addr - l->vaddr + l->offset;
	f->flags &= ~(uint32_t)VP_FUNC_MOVED;
	place_probe(sf, f, 0);
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

/* ---- exits ---- */

void vp_exits_release(struct vp_exits *ex)
{
	free(ex->offs);
	memset(ex, 0, sizeof(*ex));
}

#ifdef HAVE_CAPSTONE
static void add_site(struct vp_exits *ex, const struct vp_load *l, uint64_t vaddr)
{
	ex->offs = xrealloc(ex->offs, (ex->n + 1) * sizeof(*ex->offs));
	ex->offs[ex->n++] = vaddr - l->vaddr + l->offset;
}

static int is_cond_jump(csh cs, const cs_insn *insn)
{
	switch (insn->id) {
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
	case X86_INS_JCXZ:
	case X86_INS_JECXZ:
	case X86_INS_JRCXZ:
		return 1;
	default:
		return insn->id != X86_INS_JMP && cs_insn_group(cs, insn, CS_GRP_JUMP);
	}
}

/*
 * Decode one region linearly (compiler output has no data between the
 * instructions of a function; jump tables live in .rodata) and collect its
 * exits into @ex.  Direct jumps to a .cold part add that part to @regs.
 */
static int scan_region(struct vp_symfile *sf, csh cs, struct code_regions *regs, size_t ri,
		       struct vp_exits *ex)
{
	uint64_t lo = regs->v[ri].lo, hi = regs->v[ri].hi, addr = lo, target, clo, chi;
	const struct vp_load *l = exec_load(sf, lo);
	unsigned char *buf;
	const uint8_t *code;
	size_t left = hi - lo;
	cs_insn *insn;
	int err = 0;

	if (!l || hi <= lo || hi > l->vaddr + l->filesz || left > (64u << 20))
		return -ENOEXEC;
	buf = xmalloc(left);
	if (pread(sf->fd, buf, left, (off_t)(lo - l->vaddr + l->offset)) != (ssize_t)left) {
		free(buf);
		return -ENOEXEC;
	}
	code = buf;
	insn = cs_malloc(cs);
	while (left) {
		uint64_t at = addr;

		if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
			err = -ENOEXEC;
			break;
		}
		switch (insn->id) {
		case X86_INS_RET:
			if (!probeable(cs, insn)) {
				err = -ENOEXEC;
				goto out;
			}
			add_site(ex, l, at);
			continue;
		case X86_INS_RETF:
		case X86_INS_RETFQ:
		case X86_INS_LJMP:
		case X86_INS_IRET:
		case X86_INS_IRETQ:
			/* Not compiler output for a function: give up on it. */
			err = -ENOEXEC;
			goto out;
		case X86_INS_JMP:
			if (!branch_target(insn, &target)) {
				ex->indirect++;
				continue;
			}
			if (regions_hold(regs, target))
				continue;
			if (cold_part(sf, target, &clo, &chi)) {
				regions_add(regs, clo, chi);
				continue;
			}
			if (!is_call_target(sf, target)) {
				ex->unknown++;
				continue;
			}
			if (!probeable(cs, insn)) {
				err = -ENOEXEC;
				goto out;
			}
			add_site(ex, l, at); /* a tail call */
			ex->tail++;
			continue;
		case X86_INS_CALL:
			/* regions->v[0] is the function itself, from its start */
			if (branch_target(insn, &target) && target == regs->v[0].lo)
				ex->self_calls++;
			continue;
		default:
			break;
		}
		if (is_cond_jump(cs, insn) && branch_target(insn, &target) &&
		    !regions_hold(regs, target)) {
			if (cold_part(sf, target, &clo, &chi))
				regions_add(regs, clo, chi);
			else
				ex->cond_tail++;
		}
	}
out:
	cs_free(insn, 1);
	free(buf);
	return err;
}

#endif

int vp_symfile_exits(struct vp_symfile *sf, const struct vp_func *f, struct vp_exits *ret)
{
#ifdef HAVE_CAPSTONE
	struct code_regions regs = { 0 };
	const struct vp_load *l = exec_load(sf, f->addr);
	csh cs = capstone_handle();
	uint64_t entry;
	int err = 0;

	memset(ret, 0, sizeof(*ret));
	if (!cs || !l || !f->size) {
		ret->how = VP_EXITS_URETPROBE;
		return -ENOEXEC;
	}
	regions_add(&regs, f->addr, f->addr + f->size);
	/* Regions are appended while scanning (.cold parts). */
	for (size_t i = 0; i < regs.n && !err; i++)
		err = scan_region(sf, cs, &regs, i, ret);
	free(regs.v);
	if (err) {
		vp_exits_release(ret);
		ret->how = VP_EXITS_URETPROBE;
		return err;
	}
	entry = f->probe_off;
	for (uint32_t i = 0; i < ret->n; i++) {
		if (ret->offs[i] == entry) {
			/* Nothing can run between entry and exit: one probe. */
			free(ret->offs);
			ret->offs = NULL;
			ret->n = 0;
			ret->how = VP_EXITS_AT_ENTRY;
			return 0;
		}
	}
	if (ret->n)
		ret->how = VP_EXITS_SITES;
	else if (ret->indirect || ret->cond_tail || ret->unknown)
		ret->how = VP_EXITS_URETPROBE; /* its only ways out are ones we cannot probe */
	else
		ret->how = VP_EXITS_NONE;
	return 0;
#else
	(void)sf;
	(void)f;
	memset(ret, 0, sizeof(*ret));
	ret->how = VP_EXITS_URETPROBE;
	return -ENOTSUP;
#endif
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

	if (elf_getshdrstrndx(sf->elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(sf->elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(sf->elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".gcc_except_table"))
				return 1;
		}
	}
	nsyms = dwfl_module_getsymtab(sf->mod);
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(sf->mod, i, &sym, &addr, NULL, NULL,
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

/* ---- shared libraries ---- */

struct strlist {
	char **v;
	size_t n;
};

static void strlist_add(struct strlist *l, char *s)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = s;
}

static void strlist_clear(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Add the directories of a colon-separated list, expanding $ORIGIN. */
static void add_path_list(struct strlist *dirs, const char *list, const char *origin)
{
	char *copy, *tok, *save = NULL;

	if (!list)
		return;
	copy = xstrdup(list);
	for (char *p = copy; (tok = strtok_r(p, ":", &save)); p = NULL) {
		if (!strncmp(tok, "$ORIGIN", 7))
			strlist_add(dirs, xasprintf("%s%s", origin, tok + 7));
		else if (!strncmp(tok, "${ORIGIN}", 9))
			strlist_add(dirs, xasprintf("%s%s", origin, tok + 9));
		else
			strlist_add(dirs, xstrdup(tok));
	}
	free(copy);
}

static void add_ld_so_conf(struct strlist *dirs, const char *path, int depth)
{
	char line[PATH_MAX];
	FILE *f;

	if (depth > 4 || !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t");

		s[strcspn(s, "#\r\n")] = '\0';
		while (*s && strchr(" \t", s[strlen(s) - 1]))
			s[strlen(s) - 1] = '\0';
		if (!*s)
			continue;
		if (!strncmp(s, "include", 7) && (s[7] == ' ' || s[7] == '\t')) {
			glob_t g;

			s += 8 + strspn(s + 8, " \t");
			if (!glob(s, 0, NULL, &g)) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					add_ld_so_conf(dirs, g.gl_pathv[i], depth + 1);
				globfree(&g);
			}
		} else if (*s == '/') {
			strlist_add(dirs, xstrdup(s));
		}
	}
	fclose(f);
}

/* The dynamic section's DT_NEEDED names and search paths. */
static void read_dynamic(struct vp_symfile *sf, struct strlist *needed, char **rpath,
			 char **runpath)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(sf->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *s;

			if (!gelf_getdyn(data, (int)i, &dyn))
				break;
			if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH &&
			    dyn.d_tag != DT_RUNPATH)
				continue;
			s = elf_strptr(sf->elf, sh.sh_link, dyn.d_un.d_val);
			if (!s)
				continue;
			if (dyn.d_tag == DT_NEEDED)
				strlist_add(needed, xstrdup(s));
			else if (dyn.d_tag == DT_RPATH && !*rpath)
				*rpath = xstrdup(s);
			else if (dyn.d_tag == DT_RUNPATH && !*runpath)
				*runpath = xstrdup(s);
		}
	}
}

/* "libm.so.6" matches "libm.so.6", "libm" and "m". */
static int soname_matches(const char *soname, const char *name)
{
	size_t len = strlen(name);

	if (!strcmp(soname, name))
		return 1;
	if (!strncmp(soname, name, len) && soname[len] == '.')
		return 1;
	return !strncmp(soname, "lib", 3) && !strncmp(soname + 3, name, len) &&
	       soname[3 + len] == '.';
}

static char *search_dirs(const struct strlist *dirs, const char *soname)
{
	for (size_t i = 0; i < dirs->n; i++) {
		char *p = xasprintf("%s/%s", dirs->v[i], soname);
		char *real = access(p, R_OK) == 0 ? realpath(p, NULL) : NULL;

		free(p);
		if (real)
			return real;
	}
	return NULL;
}

int vp_symfile_find_needed(struct vp_symfile *sf, const char *name, char **ret)
{
	static const char *const std_dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
		"/lib", "/usr/lib", "/usr/local/lib",
	};
	struct strlist needed = { 0 }, dirs = { 0 };
	char *rpath = NULL, *runpath = NULL, *origin, *found = NULL;
	const char *soname = NULL;
	int err = -ENOENT;

	if (strchr(name, '/')) {
		found = realpath(name, NULL);
		if (!found)
			return -errno;
		*ret = found;
		return 0;
	}
	read_dynamic(sf, &needed, &rpath, &runpath);
	for (size_t i = 0; i < needed.n && !soname; i++)
		if (soname_matches(needed.v[i], name))
			soname = needed.v[i];
	if (!soname)
		goto out;
	/* The dynamic linker's order: DT_RPATH (unless DT_RUNPATH exists),
	 * LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache's directories, defaults. */
	origin = xstrdup(sf->path);
	*strrchr(origin, '/') = '\0';
	if (!runpath)
		add_path_list(&dirs, rpath, origin);
	add_path_list(&dirs, getenv("LD_LIBRARY_PATH"), origin);
	add_path_list(&dirs, runpath, origin);
	add_ld_so_conf(&dirs, "/etc/ld.so.conf", 0);
	for (size_t i = 0; i < sizeof(std_dirs) / sizeof(std_dirs[0]); i++)
		strlist_add(&dirs, xstrdup(std_dirs[i]));
	free(origin);
	found = search_dirs(&dirs, soname);
	err = found ? 0 : -ENOEXEC;
	*ret = found;
out:
	strlist_clear(&needed);
	strlist_clear(&dirs);
	free(rpath);
	free(runpath);
	return err;
}

void vp_symfile_describe(struct vp_symfile *sf, uint64_t vaddr, char **caller, char **file,
			 uint32_t *line)
{
	GElf_Addr a = vaddr + sf->bias;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Line *l;
	const char *name = dwfl_module_addrinfo(sf->mod, a, &off, &sym, NULL, NULL, NULL);
	const char *src = NULL;
	int lineno = 0;
	uint64_t plt_start, plt_size;
	/* PLT stubs have no symbols, or a wrong neighbour's: libbfd names them */
	const char *plt = vp_plt_name(sf->path, vaddr, &plt_start, &plt_size);

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
		*caller = xstrdup("");
	}
	/* The return address follows the call; its line is the next statement's. */
	l = dwfl_module_getsrc(sf->mod, a - 1);
	if (l)
		src = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
	*file = xstrdup(src ? src : "");
	*line = src && lineno > 0 ? (uint32_t)lineno : 0;
}

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
