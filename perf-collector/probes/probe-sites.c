/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * probe-sites.c - where probes go in a function's code: the classes of
 * its first instructions (capstone), the move of an entry probe past a
 * straight-line prologue, and the instructions that leave the function.
 */
#include <config.h>

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#ifdef HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif

#include "perf-collector/probes/probe-sites.h"
#include "perf-collector/symbols/symbols-internal.h"
#include "util/util.h"

/* ---- probe placement ---- */

/* pread() of the file's image: up to @len bytes at file offset @off. */
static ssize_t read_file(const struct vp_symfile *sf, void *buf, size_t len, uint64_t off)
{
	const struct vp_elf_file *f = sf->ef;

	if (off >= f->size)
		return 0;
	if (len > f->size - off)
		len = f->size - off;
	memcpy(buf, f->image + off, len);
	return (ssize_t)len;
}

/* @len bytes of code at link-time address @vaddr, malloc'ed, or NULL. */
static unsigned char *read_code(struct vp_symfile *sf, uint64_t vaddr, size_t len)
{
	const struct vp_elf_load *l = vp_elf_file_exec_load(sf->ef, vaddr);
	unsigned char *buf;

	if (!l || !len || vaddr + len > l->vaddr + l->filesz)
		return NULL;
	buf = xmalloc(len);
	if (read_file(sf, buf, len, vaddr - l->vaddr + l->off) != (ssize_t)len) {
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
	int nsyms = dwfl_module_getsymtab(sf->ef->dmod);

	sf->code_map_read = 1;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(sf->ef->dmod, i, &sym, &addr, &shndx,
							   NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		if (strstr(name, ".cold")) {
			if (sym.st_size)
				range_add(&sf->colds, &sf->ncolds, addr - sf->ef->dbias,
					  addr - sf->ef->dbias + sym.st_size);
			continue;
		}
		sf->starts = xrealloc(sf->starts, (sf->nstarts + 1) * sizeof(*sf->starts));
		sf->starts[sf->nstarts++] = addr - sf->ef->dbias;
	}
	qsort(sf->colds, sf->ncolds, sizeof(*sf->colds), cmp_range);
	qsort(sf->starts, sf->nstarts, sizeof(*sf->starts), cmp_u64);
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
	/* .plt, .plt.sec, .plt.got: a jmp there calls another module */
	return vp_elf_file_in_plt(sf->ef, target);
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

/*
 * The probe's place and class: from the whole function when its symbol
 * gives a size (a loop back into the prologue may be anywhere in it),
 * from its first bytes without moving past the first instruction when not
 * (or not @move).
 */
void vp_symfile_place_probe(struct vp_symfile *sf, struct vp_func *f, int move)
{
	enum { HEAD = 64, MAX_CODE = 64 << 20 };
	const struct vp_elf_load *l = vp_elf_file_exec_load(sf->ef, f->addr);
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
		ssize_t n = read_file(sf, head, (size_t)(end - f->addr < HEAD ? end - f->addr : HEAD),
				  f->probe_off);

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

void vp_symfile_probe_first(struct vp_symfile *sf, struct vp_func *f)
{
	const struct vp_elf_load *l = vp_elf_file_exec_load(sf->ef, f->addr);

	f->probe_off = f->addr - l->vaddr + l->off;
	f->flags &= ~(uint32_t)VP_FUNC_MOVED;
	vp_symfile_place_probe(sf, f, 0);
}

/* ---- exits ---- */

void vp_exits_release(struct vp_exits *ex)
{
	free(ex->offs);
	memset(ex, 0, sizeof(*ex));
}

#ifdef HAVE_CAPSTONE
static void add_site(struct vp_exits *ex, const struct vp_elf_load *l, uint64_t vaddr)
{
	ex->offs = xrealloc(ex->offs, (ex->n + 1) * sizeof(*ex->offs));
	ex->offs[ex->n++] = vaddr - l->vaddr + l->off;
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
	const struct vp_elf_load *l = vp_elf_file_exec_load(sf->ef, lo);
	unsigned char *buf;
	const uint8_t *code;
	size_t left = hi - lo;
	cs_insn *insn;
	int err = 0;

	if (!l || hi <= lo || hi > l->vaddr + l->filesz || left > (64u << 20))
		return -ENOEXEC;
	buf = xmalloc(left);
	if (read_file(sf, buf, left, lo - l->vaddr + l->off) != (ssize_t)left) {
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
	const struct vp_elf_load *l = vp_elf_file_exec_load(sf->ef, f->addr);
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
