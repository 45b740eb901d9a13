/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * gen-tree.c - the GDB plugin's benchmark program, in two roles:
 *
 *	gen-tree write FILE [DEPTH]	write a recording of "gen-tree run"
 *	gen-tree run [DEPTH [STOP]]	run the tree; call stop_here() at STOP
 *
 * main -> run_tree -> t0, and every tI calls t0..t9 from ten call sites
 * down to DEPTH (default 5): 111,113 calling contexts.  The recording is
 * made with core's writer from this very binary's link-time addresses and
 * return addresses, so GDB stopped in "gen-tree run" maps its stack onto
 * it exactly.  Link with -rdynamic: sizes come from dladdr1().
 */
#include <config.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/datafile.h"

#define NOINLINE __attribute__((noinline, noclone))
enum { FANOUT = 10, DEFAULT_DEPTH = 5, PASSES = 3 };
/* Functions of the recording: main, run_tree, t0..t9. */
enum { F_MAIN, F_RUN_TREE, F_T0, NFUNCS = F_T0 + FANOUT };
/* Call sites: none (main's), main -> run_tree, run_tree -> t0, tI -> tJ. */
enum { CS_NONE, CS_RUN_TREE, CS_T0, CS_TT, NCS = CS_TT + FANOUT * FANOUT };

static long visits, stop_at = -1;
static int discovering;
/* Return addresses seen while discovering: [caller][callee], caller
 * FANOUT is run_tree. */
static uintptr_t ra_of[FANOUT + 1][FANOUT];
static uintptr_t ra_run_tree;

/* GDB's breakpoint for the benchmark: not a function of the recording. */
NOINLINE void stop_here(void)
{
	__asm__ volatile("" ::: "memory");
}

#define CALL_ALL(d, me)                                                          \
	do {                                                                     \
		t0(d, me); t1(d, me); t2(d, me); t3(d, me); t4(d, me);           \
		t5(d, me); t6(d, me); t7(d, me); t8(d, me); t9(d, me);           \
	} while (0)

#define T_DECL(i) NOINLINE void t##i(int d, int from)
T_DECL(0); T_DECL(1); T_DECL(2); T_DECL(3); T_DECL(4);
T_DECL(5); T_DECL(6); T_DECL(7); T_DECL(8); T_DECL(9);

/* Each tI records who called it while discovering, counts visits, and
 * calls t0..t9 from ten call instructions of its own. */
#define T_DEF(i)                                                                  \
	T_DECL(i)                                                                 \
	{                                                                         \
		if (discovering)                                                  \
			ra_of[from][i] = (uintptr_t)__builtin_return_address(0); \
		if (++visits == stop_at)                                          \
			stop_here();                                              \
		if (d > 0)                                                        \
			CALL_ALL(d - 1, i);                                       \
		__asm__ volatile("" ::: "memory");                                \
	}
T_DEF(0) T_DEF(1) T_DEF(2) T_DEF(3) T_DEF(4)
T_DEF(5) T_DEF(6) T_DEF(7) T_DEF(8) T_DEF(9)

NOINLINE void run_tree(int depth)
{
	if (discovering)
		ra_run_tree = (uintptr_t)__builtin_return_address(0);
	t0(depth, FANOUT);
	__asm__ volatile("" ::: "memory");
}

static void (*const tfun[FANOUT])(int, int) = { t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 };

/* ---- this binary as the recorder would describe it ---- */

int main(int argc, char **argv);

struct self {
	uintptr_t bias;
	unsigned char build_id[64];
	size_t build_id_len;
};

static int self_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct self *s = data;

	s->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*nh);
			const char *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= sizeof(s->build_id)) {
				memcpy(s->build_id, desc, nh->n_descsz);
				s->build_id_len = nh->n_descsz;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1; /* the first object is the program itself */
}

/* Link-time address and size of function @fn of this program. */
static int func_of(void *fn, const struct self *s, struct vp_func *f)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !info.dli_sname) {
		fprintf(stderr, "gen-tree: no symbol for %p (link with -rdynamic)\n", fn);
		return -1;
	}
	f->module = 0;
	f->addr = (uintptr_t)fn - s->bias;
	f->size = sym->st_size;
	f->probe_off = f->addr;
	f->insn_class = VP_INSN_EMULATED;
	f->name = f->display = f->base = (char *)info.dli_sname;
	return 0;
}

/* ---- writing the recording ---- */

struct gen {
	struct vp_writer *w;
	uint64_t now;
	uint64_t lcg;
	int err;
};

static uint64_t rnd(struct gen *g, uint64_t mod)
{
	g->lcg = g->lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (g->lcg >> 33) % mod;
}

static void ev(struct gen *g, uint32_t kind, uint32_t func, uint32_t cs, uint64_t sp)
{
	struct vp_event e = { .time = g->now, .sp = sp, .func = func, .callsite = cs,
			      .thread = 0, .kind = kind };
	int err = vp_writer_event(g->w, &e);

	if (err && !g->err)
		g->err = err;
}

/* One invocation of tI at depth @d and its subtree, as "run" makes it. */
static void gen_t(struct gen *g, int i, int d, uint32_t cs, uint64_t sp)
{
	ev(g, VP_EV_ENTRY, F_T0 + i, cs, sp);
	g->now += 200 + rnd(g, 800);
	if (d > 0)
		for (int j = 0; j < FANOUT; j++)
			gen_t(g, j, d - 1, CS_TT + i * FANOUT + j, sp - 64);
	g->now += 100 + rnd(g, 300);
	ev(g, VP_EV_EXIT, F_T0 + i, 0, sp + 8);
}

static int gen_write(const char *path, int depth)
{
	struct vp_func funcs[NFUNCS];
	struct vp_module mod;
	struct vp_header h;
	struct vp_trailer tr = { 0 };
	struct gen g = { .now = 1000000, .lcg = 42 };
	struct self s = { 0 };
	char exe[4096], *argv[3] = { exe, "run", NULL };
	ssize_t n;
	int err;

	dl_iterate_phdr(self_phdr, &s);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	if (func_of((void *)main, &s, &funcs[F_MAIN]) ||
	    func_of((void *)run_tree, &s, &funcs[F_RUN_TREE]))
		return -EINVAL;
	for (int i = 0; i < FANOUT; i++)
		if (func_of((void *)tfun[i], &s, &funcs[F_T0 + i]))
			return -EINVAL;
	memset(&h, 0, sizeof(h));
	mod.path = exe;
	mod.build_id = s.build_id;
	mod.build_id_len = s.build_id_len;
	h.version = VP_DATA_VERSION;
	h.unit = VP_UNIT_NS;
	h.clock = 1;
	h.pid = (uint32_t)getpid();
	h.ncpu = 1;
	h.host = "gen-tree";
	h.argc = 2;
	h.argv = argv;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = NFUNCS;
	h.funcs = funcs;
	g.w = vp_writer_new(path, &h);
	if (!g.w)
		return -errno;
	err = vp_writer_thread(g.w, 0, h.pid, h.pid);
	for (uint32_t id = 0; id < NCS && !err; id++) {
		struct vp_callsite cs = { .module = 0, .caller = "", .file = "" };
		uintptr_t ra;

		if (id == CS_NONE) {
			cs.flags = VP_CS_NONE;
			cs.module = -1;
			err = vp_writer_callsite(g.w, id, &cs);
			continue;
		}
		if (id == CS_RUN_TREE)
			ra = ra_run_tree;
		else if (id == CS_T0)
			ra = ra_of[FANOUT][0];
		else
			ra = ra_of[(id - CS_TT) / FANOUT][(id - CS_TT) % FANOUT];
		cs.offset = ra - s.bias;
		err = vp_writer_callsite(g.w, id, &cs);
	}
	ev(&g, VP_EV_ENTRY, F_MAIN, CS_NONE, 0x7ffff000);
	for (int pass = 0; pass < PASSES && !err && !g.err; pass++) {
		ev(&g, VP_EV_ENTRY, F_RUN_TREE, CS_RUN_TREE, 0x7fffef00);
		gen_t(&g, 0, depth, CS_T0, 0x7fffee00);
		ev(&g, VP_EV_EXIT, F_RUN_TREE, 0, 0x7fffef08);
	}
	ev(&g, VP_EV_EXIT, F_MAIN, 0, 0x7ffff008);
	if (err || g.err) {
		vp_writer_free(g.w);
		return err ? err : g.err;
	}
	tr.present = 1;
	tr.flags = VP_END_EXITED;
	tr.end_time = g.now;
	return vp_writer_finish(g.w, &tr);
}

static int usage(void)
{
	fprintf(stderr, "usage: gen-tree write FILE [DEPTH]\n"
			"       gen-tree run [DEPTH [STOP]]\n");
	return 2;
}

int main(int argc, char **argv)
{
	int depth = DEFAULT_DEPTH, passes = PASSES, write = 0, err;

	if (argc >= 3 && !strcmp(argv[1], "write")) {
		write = 1;
		if (argc > 3)
			depth = atoi(argv[3]);
	} else if (argc >= 2 && !strcmp(argv[1], "run")) {
		if (argc > 2)
			depth = atoi(argv[2]);
		if (argc > 3)
			stop_at = atol(argv[3]);
	} else {
		return usage();
	}
	if (depth < 0 || depth > 6)
		return usage();
	/*
	 * "write" first discovers the return address of every call the tree
	 * makes: depth 2 makes every tI call every tJ, and run_tree is called
	 * from this same instruction as in "run".
	 */
	discovering = write;
	if (write)
		passes = 1;
	for (int pass = 0; pass < passes; pass++)
		run_tree(write ? 2 : depth);
	if (!write) {
		printf("%ld visits\n", visits);
		return 0;
	}
	discovering = 0;
	err = gen_write(argv[2], depth);
	if (err) {
		fprintf(stderr, "gen-tree: cannot write '%s': %s\n", argv[2], strerror(-err));
		return 1;
	}
	return 0;
}
