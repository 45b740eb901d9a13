/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * unwind.c - unwind sampled user stacks offline: the cached simple CFA
 * rules (cfa-rules.c) walk most frames, libunwind's remote API over the
 * stack copy and the mapped ELF files (.eh_frame through .eh_frame_hdr)
 * takes the rest, libdw the modules that only have .debug_frame.  Keeps
 * where each process maps its modules (unwind-module.c) and hands the
 * addresses found to unwind-names.c to be named.
 */
#include <config.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#ifdef HAVE_LIBUNWIND
#include <libunwind.h>
#endif

#include "perf-collector/unwind/cfa-rules.h"
#include "core/hashtab.h"
#include "perf-collector/unwind/unwind-module.h"
#include "perf-collector/unwind/unwind-names.h"
#include "perf-collector/unwind/unwind.h"
#include "util/util.h"

enum {
	/* Beyond the copy but this close above sp: the stack the copy missed. */
	STACK_REACH = 64 << 20,
	/* The entry code of ld.so (_start, _dl_start_user) spans this much. */
	ENTRY_CODE = 64,
	/* Re-read /proc/PID/maps for an unknown address at most this often. */
	MAPS_RETRY_SAMPLES = 256,
	NDWREGS = 17, /* DWARF x86-64: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
	DW_RSP = 7,
};

/*
 * A process's address space: the runtime extent of each module it maps,
 * with the module as the mapping's data and link-time address + bias =
 * runtime address; and its [uprobes] page, once seen.
 */
struct uproc {
	pid_t pid;
	int gone;	     /* exited: /proc/PID is no longer this process */
	struct vp_maps maps;
	uint64_t maps_tried; /* sample count at the last /proc re-read */
	Dwfl *dwfl;	     /* runtime layout, for libdw unwinding */
	int dwfl_stale;
	struct uctx *dwctx;  /* what the libdw callbacks read */
};

/* An entry of the table of processes, keyed by the pid. */
struct proc_ent {
	uint64_t pid;
	struct uproc *p;
};

/* Per-sample state seen by the accessors. */
struct uctx {
	struct vp_unwinder *u;
	struct uproc *proc;
	const struct vp_ustack *st;
	int beyond; /* an access beyond the end of the stack copy */
	int no_cfi; /* an address in a module without unwind tables */
	int no_cfi_frame; /* the frame that was being unwound then, or -1 */
	int step_no_cfi;  /* the last step found no CFI (a frame-pointer guess) */
	struct vp_umod *no_cfi_mod; /* the module of no_cfi */
	const struct vp_map *last;
};

struct vp_unwinder {
	const struct vp_module *hdr_mods;
	size_t nhdr_mods;
	struct vp_umod *mods;
	struct vp_hashtab procs; /* of struct proc_ent: a target may fork a lot */
	struct uproc *last_proc;
	struct vp_cfa_rules *rules;
	struct vp_uframe *scratch; /* libdw's frames, until they are known better */
	size_t scratch_len;
	struct vp_unwind_names *names;
	struct vp_unwind_stats stats;
#ifdef HAVE_LIBUNWIND
	unw_addr_space_t as;
#endif
	const unsigned char *vdso;
	size_t vdso_size;
};

/* ---- modules ---- */

/* The module whose extent @in is. */
static struct vp_umod *inst_mod(const struct vp_map *in)
{
	return in->data;
}

/* The module for @path, opened and parsed on first use; NULL if unusable. */
static struct vp_umod *get_mod(struct vp_unwinder *u, const char *path)
{
	struct vp_umod *m;

	for (m = u->mods; m; m = m->next)
		if (!strcmp(m->path, path))
			return m->file ? m : NULL;
	m = vp_umod_new(path);
	for (size_t i = 0; i < u->nhdr_mods; i++) {
		if (u->hdr_mods[i].path && !strcmp(u->hdr_mods[i].path, path)) {
			m->id = (uint32_t)i;
			m->defined = 1;
			m->hdr = 1;
		}
	}
	m->next = u->mods;
	u->mods = m;
	if (vp_umod_load(m, u->vdso, u->vdso_size) < 0)
		return NULL;
	return m;
}

/* ---- processes ---- */

/* The state of process @pid, made if @create (NULL: none, or no memory). */
static struct uproc *find_proc(struct vp_unwinder *u, pid_t pid, int create)
{
	uint64_t key = (uint64_t)(uint32_t)pid;
	struct proc_ent *e;
	void *p;

	if (u->last_proc && u->last_proc->pid == pid)
		return u->last_proc;
	e = vp_hashtab_find(&u->procs, vp_hash_mix(key, 0), &key);
	if (e)
		return u->last_proc = e->p;
	if (!create)
		return NULL;
	if (vp_hashtab_insert(&u->procs, vp_hash_mix(key, 0), &key, &p) < 0)
		return NULL;
	e = p;
	e->p = xcalloc(1, sizeof(*e->p));
	e->p->pid = pid;
	return u->last_proc = e->p;
}

static struct uproc *get_proc(struct vp_unwinder *u, pid_t pid)
{
	return find_proc(u, pid, 1);
}

/* Forget what @p's address space held (exec, or the end). */
static void proc_clear(struct uproc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->dwfl_stale = 0;
	/* (the new image gets its own [uprobes] page at the first return probe) */
	vp_maps_release(&p->maps);
	p->maps_tried = 0;
}

/* The module extent of @p at @addr, or NULL. */
static const struct vp_map *find_inst(const struct uproc *p, uint64_t addr)
{
	return p ? vp_maps_find(&p->maps, addr) : NULL;
}

static void add_inst(struct vp_unwinder *u, struct uproc *p, struct vp_umod *m, uint64_t bias)
{
	uint64_t lo = m->file->lo + bias, hi = m->file->hi + bias;
	struct vp_map *in;

	for (size_t i = 0; i < p->maps.n; i++) {
		const struct vp_map *o = &p->maps.v[i];

		if (o->end > lo && o->start < hi && o->data == m && o->bias == bias)
			return; /* the same module seen again */
	}
	/* over old ones, it replaces them as mmap() does (dlclose, exec) */
	in = vp_maps_insert(&p->maps, lo, hi - lo, 0, m->path);
	in->bias = bias;
	in->data = m;
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
	const struct vp_elf_load *seg = NULL;
	struct vp_umod *m;
	struct uproc *p;

	if (!strcmp(path, "[uprobes]")) {
		struct uproc *p = get_proc(u, pid);

		if (p)
			vp_maps_insert(&p->maps, start, len, pgoff, path);
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
	 * start + (v - seg.vaddr) - (pgoff - seg.off).  Segments need not
	 * start on a page of their own: lld places the code right after the
	 * read-only data, in the same file page, so two segments hold page
	 * pgoff.  The mappings reported here are executable ones (perf
	 * reports no data mappings without mmap_data; /proc lines are
	 * filtered on 'x'): the executable segment is the one mapped.
	 */
	for (size_t i = 0; i < m->file->nloads; i++) {
		const struct vp_elf_load *l = &m->file->loads[i];
		uint64_t page_off = l->off & ~(uint64_t)4095;

		if (pgoff < page_off || pgoff >= l->off + (l->filesz ? l->filesz : 1))
			continue;
		if (!seg || (l->exec && !seg->exec))
			seg = l;
	}
	p = seg ? get_proc(u, pid) : NULL;
	if (p)
		add_inst(u, p, m, start - pgoff - (seg->vaddr - seg->off));
}

void vp_unwinder_add_maps(struct vp_unwinder *u, pid_t pid, const struct vp_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		vp_unwinder_mmap(u, pid, m->v[i].start, m->v[i].end - m->v[i].start, m->v[i].pgoff,
				 m->v[i].path);
	if (m->uprobes_hi)
		vp_unwinder_mmap(u, pid, m->uprobes_lo, m->uprobes_hi - m->uprobes_lo, 0,
				 "[uprobes]");
}

int vp_unwinder_read_maps(struct vp_unwinder *u, pid_t pid)
{
	struct vp_maps m = { 0 };
	int err = vp_maps_read(pid, &m);

	if (!err)
		vp_unwinder_add_maps(u, pid, &m);
	vp_maps_release(&m);
	return err;
}

void vp_unwinder_forget(struct vp_unwinder *u, pid_t pid)
{
	struct uproc *p = find_proc(u, pid, 0);

	if (p)
		proc_clear(p);
}

void vp_unwinder_fork(struct vp_unwinder *u, pid_t ppid, pid_t pid)
{
	struct uproc *parent = find_proc(u, ppid, 0), *child;

	if (!parent || pid == ppid)
		return;
	child = get_proc(u, pid);
	if (!child)
		return;
	proc_clear(child);
	child->gone = 0;
	vp_maps_add(&child->maps, &parent->maps);
	child->dwfl_stale = 1;
}

void vp_unwinder_gone(struct vp_unwinder *u, pid_t pid)
{
	struct uproc *p = get_proc(u, pid);

	if (p)
		p->gone = 1;
}

/* @p's mappings from /proc again, unless its pid may be another's now. */
static int reread_maps(struct vp_unwinder *u, struct uproc *p)
{
	p->maps_tried = u->stats.samples;
	if (p->gone)
		return -ESRCH;
	return vp_unwinder_read_maps(u, p->pid);
}

/* The module instance at @addr, re-reading /proc/PID/maps now and then. */
static const struct vp_map *lookup(struct vp_unwinder *u, struct uproc *p, uint64_t addr)
{
	const struct vp_map *in = find_inst(p, addr);

	if (!in && p && u->stats.samples >= p->maps_tried + MAPS_RETRY_SAMPLES &&
	    reread_maps(u, p) == 0)
		in = find_inst(p, addr);
	return in;
}

uint64_t vp_unwinder_runtime(struct vp_unwinder *u, pid_t pid, const char *path, uint64_t vaddr)
{
	struct uproc *p = get_proc(u, pid);

	for (size_t i = 0; p && i < p->maps.n; i++)
		if (!strcmp(p->maps.v[i].path, path))
			return vaddr + p->maps.v[i].bias;
	return 0;
}

/* The [uprobes] page of @p: it appears at the first return probe. */
static void find_uprobes(struct vp_unwinder *u, struct uproc *p, uint64_t addr)
{
	if (p && !p->maps.uprobes_hi && !find_inst(p, addr) &&
	    u->stats.samples >= p->maps_tried + MAPS_RETRY_SAMPLES / 8)
		reread_maps(u, p);
}

int vp_unwinder_in_uprobes(struct vp_unwinder *u, pid_t pid, uint64_t ip)
{
	struct uproc *p = get_proc(u, pid);

	find_uprobes(u, p, ip);
	if (p && p->maps.uprobes_hi)
		return vp_maps_in_uprobes(&p->maps, ip);
	return !find_inst(p, ip);
}

const char *vp_unwinder_link_addr(struct vp_unwinder *u, pid_t pid, uint64_t addr,
				  uint64_t *ret)
{
	const struct vp_map *in = find_inst(get_proc(u, pid), addr);

	if (!in)
		return NULL;
	*ret = addr - in->bias;
	return in->path;
}

int vp_unwinder_after_syscall(struct vp_unwinder *u, pid_t pid, uint64_t ip)
{
	const struct vp_map *in = find_inst(get_proc(u, pid), ip - 2);
	const unsigned char *insn = in ? vp_umod_ptr(inst_mod(in), ip - 2 - in->bias, 2) : NULL;

	return insn && insn[0] == 0x0f && insn[1] == 0x05;
}

int vp_unwinder_uprobes_page(struct vp_unwinder *u, pid_t pid, uint64_t addr)
{
	struct uproc *p = get_proc(u, pid);

	find_uprobes(u, p, addr);
	return p && vp_maps_in_uprobes(&p->maps, addr);
}

/* ---- memory ---- */

static int read_word(struct uctx *c, uint64_t addr, uint64_t *val)
{
	const struct vp_ustack *st = c->st;
	uint64_t sp = st->regs[VP_UREG_SP];
	const struct vp_map *in;
	const unsigned char *p;

	if (addr >= sp && addr - sp + 8 <= st->len) {
		memcpy(val, st->stack + (addr - sp), 8);
		return 0;
	}
	in = c->last && addr >= c->last->start && addr < c->last->end ? c->last
								    : find_inst(c->proc, addr);
	if (in) {
		c->last = in;
		p = vp_umod_ptr(inst_mod(in), addr - in->bias, 8);
		if (p) {
			memcpy(val, p, 8);
			return 0;
		}
	}
	if (addr >= sp && addr - sp < STACK_REACH)
		c->beyond = 1;
	return -1;
}

/* Code address of frame @i of @fr for looking up its CFI and name. */
static uint64_t frame_pc(const struct vp_uframe *fr, size_t i)
{
	return fr[i].ip - (i > 0 && !(fr[i].flags & VP_UFRAME_EXACT));
}

/* ---- the rule cache ---- */

/* The CFA rule at link-time address @addr of @m, which has .eh_frame_hdr. */
static const struct vp_cfa_rule *rule_of(struct vp_unwinder *u, struct vp_umod *m, uint64_t addr)
{
	return vp_cfa_rules_get(u->rules, m, vp_umod_cfi(m), addr);
}

/*
 * Unwind with the cached rules alone: libunwind takes two system calls a
 * frame (its cache lock blocks signals), several times what a rule costs
 * here.  Returns the frames when every step had a simple rule up to an
 * outermost frame; else 0, and the caller starts again with libunwind,
 * which knows every other case and says what went wrong.
 */
static size_t unwind_rules(struct vp_unwinder *u, struct uctx *c, struct vp_uframe *fr,
			   size_t max)
{
	const uint64_t *regs = c->st->regs;
	uint64_t ip = regs[VP_UREG_IP], sp = regs[VP_UREG_SP], bp = regs[VP_UREG_BP];
	size_t n = 0;

	while (ip && n < max) {
		const struct vp_map *in = c->last && ip >= c->last->start && ip < c->last->end
						 ? c->last
						 : find_inst(c->proc, ip);
		const struct vp_cfa_rule *r;
		uint64_t cfa;

		if (!in || !inst_mod(in)->has_ehdr)
			return 0;
		c->last = in;
		/* a return address is looked up at its call, which may be the
		 * last instruction of its function */
		r = rule_of(u, inst_mod(in), ip - in->bias - (n > 0));
		if (r->kind != VP_CFA_SIMPLE)
			return 0;
		fr[n].ip = ip;
		fr[n].cfa = sp;
		fr[n].flags = 0;
		n++;
		if (r->outermost)
			return n;
		cfa = (r->cfa_bp ? bp : sp) + (uint64_t)(int64_t)r->cfa_off;
		if (read_word(c, cfa + (uint64_t)(int64_t)r->ra_off, &ip) < 0 ||
		    (r->bp_off && read_word(c, cfa + (uint64_t)(int64_t)r->bp_off, &bp) < 0))
			return 0;
		fr[n - 1].cfa = cfa;
		sp = cfa;
	}
	return 0;
}

/*
 * Whether frame @i of @fr is in the entry code of its module: the kernel
 * enters a program (or ld.so) there with nothing above it on the stack,
 * and ld.so's entry code has no CFI to say so.
 */
static int at_entry(struct uctx *c, const struct vp_uframe *fr, size_t i)
{
	uint64_t pc = frame_pc(fr, i);
	const struct vp_map *in = find_inst(c->proc, pc);

	return in && inst_mod(in)->file->entry && pc - in->bias >= inst_mod(in)->file->entry &&
	       pc - in->bias < inst_mod(in)->file->entry + ENTRY_CODE;
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
	const struct vp_map *in = find_inst(c->proc, ip);
	unw_dyn_info_t di;
	int ret = -UNW_ENOINFO;

	if (!in || !inst_mod(in)->has_ehdr)
		goto out_no_cfi;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = in->start;
	di.end_ip = in->end;
	di.u.rti.segbase = inst_mod(in)->ehdr_vaddr + in->bias;
	di.u.rti.table_data = inst_mod(in)->table_vaddr + in->bias;
	/* in words; each entry is two 32-bit offsets */
	di.u.rti.table_len = inst_mod(in)->fde_count * 8 / sizeof(unw_word_t);
	ret = UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
	if (ret != -UNW_ENOINFO)
		return ret;
	/* the module has tables, but none covers this code */
out_no_cfi:
	/*
	 * libunwind goes on from the frame pointer, and takes rbp = 0 for
	 * the end of the stack: whatever that step gives is a guess.
	 */
	c->step_no_cfi = 1;
	if (in) {
		c->no_cfi = 1;
		c->no_cfi_mod = inst_mod(in);
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

/*
 * Returns frames; *@clean is 1 when the chain ended at an outermost frame
 * that CFI marks as such.  c->step_no_cfi tells afterwards whether the last
 * step (the one that ended or failed) went without CFI.
 */
static size_t unwind_libunwind(struct vp_unwinder *u, struct uctx *c, struct vp_uframe *fr,
			       size_t max, int *clean)
{
	unw_cursor_t cur;
	size_t n = 0;
	int ret, exact = 0;

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
		fr[n].flags = exact ? VP_UFRAME_EXACT : 0;
		n++;
		/* the frame a signal interrupted resumes at its exact IP */
		exact = unw_is_signal_frame(&cur) > 0;
		c->step_no_cfi = 0;
		ret = unw_step(&cur);
		if (c->no_cfi && c->no_cfi_frame < 0)
			c->no_cfi_frame = (int)n - 1;
		/* without CFI, rbp = 0 reads as the end: not an end we trust,
		 * unless the kernel started the program there */
		if (ret == 0 && (!c->step_no_cfi || at_entry(c, fr, n - 1)))
			*clean = 1;
	} while (ret > 0 && n < max);
	/* Past code without unwind tables libunwind guesses from the frame
	 * pointer; a guess that did not reach the end is not kept. */
	if (!*clean && c->no_cfi_frame >= 0 && (size_t)c->no_cfi_frame + 1 < n) {
		n = (size_t)c->no_cfi_frame + 1;
		c->step_no_cfi = 1;
	}
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
	p->dwfl = dwfl_begin(vp_elf_dwfl_callbacks());
	if (!p->dwfl)
		return -ENOMEM;
	dwfl_report_begin(p->dwfl);
	for (size_t i = 0; i < p->maps.n; i++) {
		struct vp_umod *m = inst_mod(&p->maps.v[i]);

		if (m->mflags & VP_MOD_VDSO)
			continue;
		if (dwfl_report_elf(p->dwfl, m->path, m->path, -1, p->maps.v[i].bias, false) &&
		    !elf)
			elf = m->file->elf;
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
	if (dwfl_frame_reg(state, DW_RSP, &sp) < 0)
		sp = 0;
	if (w->n > 0)
		w->fr[w->n - 1].cfa = sp;
	w->fr[w->n].ip = pc;
	w->fr[w->n].cfa = sp;
	/* past a signal frame the PC is where the code was interrupted */
	w->fr[w->n].flags = w->n > 0 && act ? VP_UFRAME_EXACT : 0;
	return ++w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Whether libdw has CFI (.eh_frame or .debug_frame) for @pc of @p. */
static int dw_has_cfi(struct uproc *p, uint64_t pc)
{
	Dwfl_Module *dm = p->dwfl ? dwfl_addrmodule(p->dwfl, pc) : NULL;

	for (int i = 0; dm && i < 2; i++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = i ? dwfl_module_dwarf_cfi(dm, &bias) : dwfl_module_eh_cfi(dm, &bias);
		Dwarf_Frame *f = NULL;

		if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &f) == 0) {
			free(f);
			return 1;
		}
	}
	return 0;
}

/*
 * Like unwind_libunwind().  libdw too guesses from the frame pointer in
 * code without CFI; the frames past the first such one are dropped unless
 * the walk reached an outermost frame its CFI marks (dwfl returns 0 only
 * then).
 */
static size_t unwind_libdw(struct uctx *c, struct vp_uframe *fr, size_t max, int *clean)
{
	struct dw_walk w = { fr, 0, max };
	int ret;

	*clean = 0;
	c->proc->dwctx = c;
	if (proc_dwfl(c->proc) < 0)
		return 0;
	ret = dwfl_getthread_frames(c->proc->dwfl, c->st->pid, dw_frame, &w);
	/* as with libunwind, the kernel's entry point ends a stack too */
	*clean = ret == 0 || (w.n && at_entry(c, fr, w.n - 1));
	if (*clean)
		return w.n;
	for (size_t i = 0; i < w.n; i++) {
		if (!dw_has_cfi(c->proc, frame_pc(fr, i))) {
			c->step_no_cfi = 1;
			return i + 1;
		}
	}
	return w.n;
}

/* Count @n frames of a sample whose unwinding ended @clean or not. */
static uint32_t verdict(struct vp_unwinder *u, const struct uctx *c, size_t n, size_t max,
			int clean)
{
	const struct vp_ustack *st = c->st;
	uint32_t flags;

	u->stats.frames += n;
	if (clean)
		return 0;
	/*
	 * Truncated: the copy was full and the step that failed, following
	 * CFI, needed what lay beyond it - a larger copy would have gone on.
	 * A copy that ended short of its size reached the top of the stack
	 * (an empty one in the kernel is a task leaving, never unwound:
	 * see no_user in sampler.h), and a step without CFI was a guess:
	 * those samples are broken, whatever the stack size.
	 */
	if (st->size && st->len == st->size && ((c->beyond && !c->step_no_cfi) || n == max))
		flags = VP_SAMPLE_TRUNCATED;
	else
		flags = VP_SAMPLE_BROKEN;
	if (flags == VP_SAMPLE_TRUNCATED) {
		u->stats.truncated++;
		return flags;
	}
	u->stats.broken++;
	if (c->no_cfi) {
		u->stats.no_cfi++;
		if (c->no_cfi_mod && !(c->no_cfi_mod->mflags & VP_MOD_VDSO) &&
		    vp_umod_lacks_cfi(c->no_cfi_mod))
			snprintf(u->stats.no_cfi_module, sizeof(u->stats.no_cfi_module), "%s",
				 c->no_cfi_mod->path);
	}
	return flags;
}

/*
 * Unwind @st with the rules, else libunwind, else libdw; the state of the
 * walk that counts into *@ret.  Returns the frames (maybe 0).
 */
static size_t unwind_any(struct vp_unwinder *u, const struct vp_ustack *st,
			 struct vp_uframe *frames, size_t max, struct uctx *ret, int *clean)
{
	const struct uctx fresh = { .u = u, .proc = get_proc(u, st->pid), .st = st,
				    .no_cfi_frame = -1 };
	const struct vp_map *in;
	size_t n = 0;

	*ret = fresh;
	*clean = 0;
	if (!fresh.proc)
		return 0; /* no memory to follow the process */
	n = unwind_rules(u, ret, frames, max);
	if (n) {
		*clean = 1;
		return n;
	}
	*ret = fresh;
#ifdef HAVE_LIBUNWIND
	n = unwind_libunwind(u, ret, frames, max, clean);
#endif
	if (*clean || (ret->beyond && !ret->step_no_cfi))
		return n;
	/* Stopped in a module libunwind cannot read: .debug_frame? */
	in = find_inst(fresh.proc, n ? frame_pc(frames, n - 1) : st->regs[VP_UREG_IP]);
	if (!n || (in && inst_mod(in)->has_debug_frame)) {
		struct uctx c2 = fresh;
		int clean2;
		size_t n2;

		if (u->scratch_len < max) {
			free(u->scratch);
			u->scratch = xcalloc(max, sizeof(*u->scratch));
			u->scratch_len = max;
		}
		n2 = unwind_libdw(&c2, u->scratch, max, &clean2);
		if (n2 > n || (clean2 && n2)) {
			u->stats.libdw++;
			memcpy(frames, u->scratch, n2 * sizeof(*frames));
			n = n2;
			*clean = clean2;
			/* what libunwind saw of missing CFI still says why */
			c2.no_cfi = ret->no_cfi;
			c2.no_cfi_mod = ret->no_cfi_mod;
			*ret = c2;
		}
	}
	return n;
}

/*
 * A sample taken in a system call made where no CFI describes the frame
 * (glibc's clone3 ends its FDE before its syscall, as the child's stack
 * is not the caller's).  If the word at sp is a return address right
 * after a call into the function holding the IP, that function has not
 * touched its frame: the caller continues from there.  Its return
 * address into *@ret.
 */
static int syscall_caller(struct vp_unwinder *u, const struct vp_ustack *st, uint64_t *ret)
{
	struct uproc *p = get_proc(u, st->pid);
	uint64_t ip = st->regs[VP_UREG_IP], ra, target;
	const struct vp_map *in = find_inst(p, ip), *cin;
	const unsigned char *insn;
	int32_t rel;

	if (!in || st->len < 8 || !inst_mod(in)->has_ehdr ||
	    rule_of(u, inst_mod(in), ip - in->bias)->kind != VP_CFA_NONE ||
	    !vp_unwinder_after_syscall(u, st->pid, ip))
		return 0;
	memcpy(&ra, st->stack, 8);
	cin = find_inst(p, ra - 5);
	insn = cin ? vp_umod_ptr(inst_mod(cin), ra - 5 - cin->bias, 5) : NULL;
	if (!insn || insn[0] != 0xe8) /* call rel32 */
		return 0;
	memcpy(&rel, insn + 1, 4);
	target = ra + (uint64_t)(int64_t)rel;
	if (target > ip || ip - target > 4096)
		return 0;
	*ret = ra;
	return 1;
}

size_t vp_unwind(struct vp_unwinder *u, const struct vp_ustack *st, struct vp_uframe *frames,
		 size_t max, uint32_t *flags)
{
	struct vp_ustack up;
	struct uctx c;
	uint64_t ra;
	size_t n;
	int clean;

	*flags = 0;
	u->stats.samples++;
	lookup(u, get_proc(u, st->pid), st->regs[VP_UREG_IP]);
	if (!max)
		return 0;
	n = unwind_any(u, st, frames, max, &c, &clean);
	if (!clean && n <= 1 && max > 1 && syscall_caller(u, st, &ra)) {
		struct uctx c2;
		int clean2;
		size_t n2;

		up = *st;
		up.regs[VP_UREG_IP] = ra;
		up.regs[VP_UREG_SP] += 8;
		up.stack += 8;
		up.len -= 8;
		up.size = up.size >= 8 ? up.size - 8 : 0;
		n2 = unwind_any(u, &up, frames + 1, max - 1, &c2, &clean2);
		if (n2) {
			frames[0] = (struct vp_uframe){ st->regs[VP_UREG_IP], up.regs[VP_UREG_SP], 0 };
			n = n2 + 1;
			clean = clean2;
			c = c2;
		}
	}
	if (!n) {
		/* nothing at all: the sampled IP is still worth its frame */
		frames[0].ip = st->regs[VP_UREG_IP];
		frames[0].cfa = 0;
		frames[0].flags = 0;
		n = 1;
	}
	*flags = verdict(u, &c, n, max, clean);
	return n;
}

/* ---- names ---- */

long vp_unwinder_frame(struct vp_unwinder *u, pid_t pid, uint64_t ip, int is_ret)
{
	const struct vp_map *in = lookup(u, get_proc(u, pid), ip);

	if (!in)
		return vp_unwind_names_frame(u->names, NULL, ip, is_ret);
	return vp_unwind_names_frame(u->names, inst_mod(in), ip - in->bias, is_ret);
}

/* ---- set-up ---- */

struct vp_unwinder *vp_unwinder_new(const struct vp_module *mods, size_t nmods,
				    const struct vp_unwind_sink *sink)
{
	struct vp_unwinder *u = xcalloc(1, sizeof(*u));
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);

	vp_hashtab_init(&u->procs, sizeof(struct proc_ent), sizeof(uint64_t), NULL);
	elf_version(EV_CURRENT);
	u->hdr_mods = mods;
	u->nhdr_mods = nmods;
	if (vdso) {
		/* A copy: libelf may write into the image it is given. */
		u->vdso_size = vp_elf_image_size((const unsigned char *)vdso);
		u->vdso = xmalloc(u->vdso_size);
		memcpy((void *)u->vdso, (const void *)vdso, u->vdso_size);
	}
#ifdef HAVE_LIBUNWIND
	u->as = unw_create_addr_space(&lu_accessors, 0);
	if (!u->as) {
		free((void *)u->vdso);
		free(u);
		errno = ENOMEM;
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
#endif
	u->rules = vp_cfa_rules_new();
	u->names = vp_unwind_names_new(sink, (uint32_t)nmods);
	return u;
}

void vp_unwinder_free(struct vp_unwinder *u)
{
	struct proc_ent *e;

	if (!u)
		return;
#ifdef HAVE_LIBUNWIND
	unw_destroy_addr_space(u->as);
#endif
	for (size_t pos = 0; (e = vp_hashtab_next(&u->procs, &pos));) {
		proc_clear(e->p);
		free(e->p);
	}
	vp_hashtab_release(&u->procs);
	vp_cfa_rules_free(u->rules);
	free(u->scratch);
	while (u->mods) {
		struct vp_umod *m = u->mods;

		u->mods = m->next;
		vp_umod_free(m);
	}
	vp_unwind_names_free(u->names);
	free((void *)u->vdso);
	free(u);
}

void vp_unwinder_stats(const struct vp_unwinder *u, struct vp_unwind_stats *ret)
{
	*ret = u->stats;
}
