/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sink-t.c - tests for the combined-mode repairs of perf-collector/
 * sample-sink.c, one sample per state a probed call can be sampled in.
 * Timer samples land at any instant of a probe's trap, of its
 * single-step and of its return trampoline; on a machine the instants
 * that matter come a few times in a thousand runs.  Here each is built:
 * registers and a stack copy as the kernel would hand them over, for
 * functions of this file whose code and CFI are fixed (assembly below),
 * mapped where this process has them, with a fake [uprobes] page.  The
 * written samples are read back and their frames compared with where the
 * program logically was.
 */
#include <config.h>

#define _GNU_SOURCE 1
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/datafile.h"
#include "perf-collector/sampling/sample-sink.h"
#include "tests/tap/basic.h"

/*
 * outer() calls mid(), which calls inner(); each starts with push %rbp,
 * which the kernel emulates.  step() starts with sub $8,%rsp, which it
 * single-steps out of line.  moved() starts with endbr64, so its probe is
 * moved to the push after it.  Never called: their code is only read.
 */
/* A function with a frame pointer: push %rbp; mov %rsp,%rbp; BODY;
 * pop %rbp; ret, with its CFI, after PRE (not touching the stack). */
#define FRAME_FUNC(name, pre, body)                                             \
	"	.p2align 4\n"                                                   \
	"	.type " name ", @function\n" name ":\n"                        \
	"	.cfi_startproc\n" pre "	push %rbp\n"                           \
	"	.cfi_def_cfa_offset 16\n"                                       \
	"	.cfi_offset %rbp, -16\n"                                        \
	"	mov %rsp, %rbp\n"                                               \
	"	.cfi_def_cfa_register %rbp\n" body "	pop %rbp\n"             \
	"	.cfi_def_cfa %rsp, 8\n"                                         \
	"	ret\n"                                                          \
	"	.cfi_endproc\n"                                                 \
	"	.size " name ", .-" name "\n"

__asm__("	.text\n"
	FRAME_FUNC("sink_outer", "", "	call sink_mid\n")
	FRAME_FUNC("sink_mid", "", "	call sink_inner\n")
	FRAME_FUNC("sink_inner", "", "	nop\n")
	FRAME_FUNC("sink_moved", "	endbr64\n", "	nop\n")
	"	.p2align 4\n"
	"	.type sink_step, @function\n"
	"sink_step:\n"
	"	.cfi_startproc\n"
	"	sub $8, %rsp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	nop\n"
	"	add $8, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size sink_step, .-sink_step\n");

extern const char sink_outer[], sink_mid[], sink_inner[], sink_step[], sink_moved[];

/* Instruction lengths above: push %rbp 1, mov %rsp,%rbp 3, call 5,
 * sub $8,%rsp 4, endbr64 4. */
enum { AFTER_CALL = 1 + 3 + 5, BODY = 1 + 3, SUB_LEN = 4, ENDBR_LEN = 4 };

/* The fake stack: NWORDS words below TOP; outer's entry, mid's, inner's. */
enum { NWORDS = 64, XOL_SLOT = 128, PAGE = 4096 };
static const uint64_t TOP = 0x7ff000100000ULL;
static const uint64_t SP_OUTER = 0x7ff000100000ULL - 16;
static const uint64_t SP_MID = 0x7ff000100000ULL - 32;
static const uint64_t SP_INNER = 0x7ff000100000ULL - 48;

static pid_t pid;
static uint64_t bias, uprobes; /* load bias of this program; the fake page */
static char exe[PATH_MAX];
static struct vp_sample_sink *ss;
static uint32_t next_tid = 1000;
static uint64_t now = 1000;

static uint64_t rt(const char *f, uint64_t off)
{
	return (uint64_t)(uintptr_t)f + off;
}

static uint64_t link_addr(const char *f, uint64_t off)
{
	return rt(f, off) - bias;
}

static int find_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	bias = info->dlpi_addr; /* the first is the program itself */
	return 1;
}

/* The stack of a thread inside mid() -> inner(), return addresses
 * replaced by the trampoline where @hijacked, as words below TOP. */
struct stack {
	uint64_t w[NWORDS];
};

static void put(struct stack *s, uint64_t addr, uint64_t val)
{
	s->w[(addr - (TOP - NWORDS * 8)) / 8] = val;
}

static void layout(struct stack *s, int hijacked)
{
	uint64_t tramp = uprobes;

	memset(s, 0, sizeof(*s));
	put(s, SP_OUTER, hijacked ? tramp : 0); /* outer's caller: none */
	put(s, SP_OUTER - 8, 0);		  /* its %rbp */
	put(s, SP_MID, hijacked ? tramp : rt(sink_outer, AFTER_CALL));
	put(s, SP_MID - 8, SP_OUTER - 8);	  /* outer's %rbp */
	put(s, SP_INNER, hijacked ? tramp : rt(sink_mid, AFTER_CALL));
	put(s, SP_INNER - 8, SP_MID - 8);	  /* mid's %rbp, once pushed */
}

/* A thread that entered outer() and mid(): their records are in. */
static uint32_t thread_in_mid(void)
{
	uint32_t tid = next_tid++;

	vp_sample_sink_entry(ss, pid, tid, SP_OUTER, 0x1, exe, link_addr(sink_outer, 0));
	vp_sample_sink_entry(ss, pid, tid, SP_MID, rt(sink_outer, AFTER_CALL), exe,
			     link_addr(sink_mid, 0));
	return tid;
}

/* A thread in mid() that has called @f, whose probe is @probe_off into
 * it: its entry record is in too. */
static uint32_t thread_in(const char *f, uint64_t probe_off)
{
	uint32_t tid = thread_in_mid();

	vp_sample_sink_entry(ss, pid, tid, SP_INNER, rt(sink_mid, AFTER_CALL), exe,
			     link_addr(f, probe_off));
	return tid;
}

/* Write one sample of @tid: IP, stack and frame pointers, kernel or not;
 * with @s NULL, one the kernel had no user state for. */
static void sample(uint32_t tid, const struct stack *s, uint64_t ip, uint64_t sp, uint64_t bp,
		   int kernel)
{
	uint64_t len = s ? TOP - sp : 0;
	struct vp_raw_sample *smp = bcalloc(1, sizeof(*smp) + len);
	struct vp_raw r;

	memset(&r, 0, sizeof(r));
	smp->period = 1000;
	smp->kernel = kernel;
	smp->st.pid = pid;
	smp->st.regs[VP_UREG_IP] = ip;
	smp->st.regs[VP_UREG_SP] = sp;
	smp->st.regs[VP_UREG_BP] = bp;
	smp->no_user = !s;
	if (s)
		memcpy(smp->stack, (const char *)s->w + (sp - (TOP - NWORDS * 8)), len);
	smp->st.stack = smp->stack;
	smp->st.len = smp->st.size = len;
	r.type = VP_RAW_SAMPLE;
	r.sample = smp;
	r.time = now += 1000;
	r.pid = (uint32_t)pid;
	r.tid = tid;
	if (vp_sample_sink_write(ss, &r, 0) < 0)
		bail("vp_sample_sink_write failed");
	free(smp);
}

/* What each sample read back: "name+off/name+off/..." and its flags. */
enum { MAX_SEEN = 16 };
static char seen[MAX_SEEN][256];
static uint32_t seen_flags[MAX_SEEN];
static size_t nseen;

static int on_sample(void *ctx, const struct vp_reader *r, const struct vp_sample *s)
{
	char *p;

	(void)ctx;
	if (nseen == MAX_SEEN)
		return 0;
	p = seen[nseen];
	*p = '\0';
	/* outer's caller is 0: the frames past it are of no interest */
	for (uint32_t i = 0; i < s->nframes && i < 4; i++) {
		const struct vp_frame_def *f = vp_reader_frame(r, s->frames[i]);
		const struct vp_symbol *sym = f && f->nlevels ? vp_reader_symbol(r, f->levels[0].symbol)
							      : NULL;
		size_t at = strlen(p);

		if (sym && sym->addr)
			snprintf(p + at, sizeof(seen[0]) - at, "%s%s+%llu", i ? "/" : "", sym->name,
				 (unsigned long long)(f->addr - sym->addr));
		else
			snprintf(p + at, sizeof(seen[0]) - at, "%s?", i ? "/" : "");
		if (sym && !strcmp(sym->name, "sink_outer"))
			break;
	}
	seen_flags[nseen++] = s->flags;
	return 0;
}

int main(void)
{
	char *dir = test_tmpdir(), *path = basprintf("%s/sink.data", dir), err[512] = "";
	struct vp_header h = { 0 };
	struct vp_trailer tr = { 0 };
	struct vp_event ev[4];
	struct vp_reader *rd;
	struct vp_writer *w;
	struct stack s;
	uint32_t tid;
	void *page;
	ssize_t n;
	size_t k = 0;

	plan(24);
	pid = getpid();
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		sysbail("readlink /proc/self/exe");
	exe[n] = '\0';
	dl_iterate_phdr(find_bias, NULL);
	/* a page nothing else is mapped at, for the [uprobes] one */
	page = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		sysbail("mmap");
	uprobes = (uint64_t)(uintptr_t)page;

	h.unit = VP_UNIT_NS;
	h.mode = VP_MODE_COMBINED;
	w = vp_writer_new(path, &h);
	if (!w)
		sysbail("vp_writer_new");
	vp_writer_thread(w, 0, (uint32_t)pid, (uint32_t)pid);
	ss = vp_sample_sink_new(w, NULL, 0);
	if (!ss)
		sysbail("vp_sample_sink_new");
	if (vp_sample_sink_read_maps(ss, pid) < 0)
		bail("cannot read this process's mappings");
	vp_sample_sink_mmap(ss, pid, uprobes, PAGE, 0, "[uprobes]");
	/* the probes, as the recorder has placed them */
	vp_sample_sink_probe(ss, exe, link_addr(sink_outer, 0));
	vp_sample_sink_probe(ss, exe, link_addr(sink_mid, 0));
	vp_sample_sink_probe(ss, exe, link_addr(sink_inner, 0));
	vp_sample_sink_probe(ss, exe, link_addr(sink_step, 0));
	vp_sample_sink_probe(ss, exe, link_addr(sink_moved, ENDBR_LEN));

	/* 1: in inner's body, every return address the trampoline's */
	layout(&s, 1);
	tid = thread_in(sink_inner, 0);
	sample(tid, &s, rt(sink_inner, BODY), SP_INNER - 8, SP_INNER - 8, 0);

	/* 2: inner's trap, before its handler: IP past the int3, its
	 * return address still the program's, its record not yet in */
	layout(&s, 1);
	put(&s, SP_INNER, rt(sink_mid, AFTER_CALL));
	tid = thread_in_mid();
	sample(tid, &s, rt(sink_inner, 1), SP_INNER, SP_MID - 8, 1);

	/* 3: the handler has run: IP back on the probe, return address
	 * replaced, record in */
	layout(&s, 1);
	tid = thread_in(sink_inner, 0);
	sample(tid, &s, rt(sink_inner, 0), SP_INNER, SP_MID - 8, 1);

	/* 4: the push emulated, the kernel not yet left: IP one byte past
	 * the probe as in 2, but the stack pointer 8 lower */
	layout(&s, 1);
	tid = thread_in(sink_inner, 0);
	sample(tid, &s, rt(sink_inner, 1), SP_INNER - 8, SP_MID - 8, 1);

	/* 5: the push emulated (the word written, the stack pointer 8 lower),
	 * the IP not yet moved past it */
	layout(&s, 1);
	tid = thread_in(sink_inner, 0);
	sample(tid, &s, rt(sink_inner, 0), SP_INNER - 8, SP_MID - 8, 1);

	/* 6: inner called itself from its body; the inner call's trap as
	 * in 2, 16 below the outer call's entry */
	layout(&s, 1);
	put(&s, SP_INNER - 16, rt(sink_inner, BODY + 1));
	tid = thread_in(sink_inner, 0);
	sample(tid, &s, rt(sink_inner, 1), SP_INNER - 16, SP_INNER - 8, 1);

	/* 7: step's sub $8,%rsp single-stepped in slot 1 of [uprobes] */
	layout(&s, 1);
	tid = thread_in(sink_step, 0);
	sample(tid, &s, uprobes + XOL_SLOT + SUB_LEN, SP_INNER - 8, SP_MID - 8, 0);

	/* 8: inner has returned into the trampoline (slot 0), which has
	 * pushed three registers; its exit record is in */
	layout(&s, 1);
	tid = thread_in(sink_inner, 0);
	vp_sample_sink_exit(ss, tid, SP_INNER + 8);
	sample(tid, &s, uprobes + 5, SP_INNER + 8 - 24, SP_MID - 8, 1);

	/* 9: step called inner (16 below) and returned right after it, into
	 * the trampoline's system call: three registers pushed (the last
	 * %rax, over step's return address), step's exit record not yet in,
	 * inner's in: one word above the sample's stack pointer too */
	layout(&s, 1);
	put(&s, SP_INNER, 0x1234);
	put(&s, SP_INNER - 8, 0);
	put(&s, SP_INNER - 16, 0);
	tid = thread_in(sink_step, 0);
	vp_sample_sink_entry(ss, pid, tid, SP_INNER - 16, rt(sink_step, SUB_LEN), exe,
			     link_addr(sink_inner, 0));
	vp_sample_sink_exit(ss, tid, SP_INNER - 16 + 8);
	sample(tid, &s, uprobes + 13, SP_INNER - 16, SP_MID - 8, 1);

	/* 10, 11: moved's probe is on the push after endbr64: its trap before
	 * the handler, and after the push */
	layout(&s, 1);
	put(&s, SP_INNER, rt(sink_mid, AFTER_CALL));
	tid = thread_in_mid();
	sample(tid, &s, rt(sink_moved, ENDBR_LEN + 1), SP_INNER, SP_MID - 8, 1);
	layout(&s, 1);
	tid = thread_in(sink_moved, ENDBR_LEN);
	sample(tid, &s, rt(sink_moved, ENDBR_LEN + 1), SP_INNER - 8, SP_MID - 8, 1);

	/* 12: a thread in its exit, past exit_mm(): no user state at all
	 * (PERF_SAMPLE_REGS_ABI_NONE, the IP 0) */
	tid = thread_in(sink_inner, 0);
	sample(tid, NULL, 0, 0, 0, 1);

	vp_sample_sink_free(ss);
	if (vp_writer_finish(w, &tr))
		sysbail("vp_writer_finish");

	if (vp_reader_open(path, &rd, err, sizeof(err)))
		bail("%s", err);
	vp_reader_set_sample_handler(rd, on_sample, NULL);
	while (vp_reader_next(rd, ev, 4) > 0)
		;
	is_int(12, (long long)nseen, "12 samples read back");

#define EXPECT(stack, probe, what)                                                      \
	do {                                                                            \
		is_string(stack, seen[k], "%s", what);                                  \
		is_int(probe, !!(seen_flags[k] & VP_SAMPLE_PROBE), "... %s",            \
		       probe ? "mapped back" : "as sampled");                          \
		k++;                                                                    \
	} while (0)
	EXPECT("sink_inner+4/sink_mid+9/sink_outer+9", 0,
	       "in inner's body: the replaced return addresses put back");
	EXPECT("sink_inner+0/sink_mid+9/sink_outer+9", 1,
	       "in inner's trap before the handler: the IP moved back onto the probe");
	EXPECT("sink_inner+0/sink_mid+9/sink_outer+9", 0,
	       "in inner's trap after the handler: the return address put back");
	EXPECT("sink_inner+1/sink_mid+9/sink_outer+9", 0,
	       "after the emulated push, still in the kernel: the IP left past it");
	EXPECT("sink_inner+0/sink_mid+9/sink_outer+9", 1,
	       "the push emulated, the IP still on the probe: unwound as before the push");
	EXPECT("sink_inner+0/sink_inner+5/sink_mid+9/sink_outer+9", 1,
	       "a recursive call's trap, 16 below the outer call: the IP moved back");
	EXPECT("sink_step+4/sink_mid+9/sink_outer+9", 1,
	       "single-stepped out of line: the IP put back past the instruction");
	EXPECT("sink_mid+9/sink_outer+9", 1,
	       "in the return trampoline: at the return address, in mid");
	EXPECT("sink_mid+9/sink_outer+9", 1,
	       "in the trampoline's system call of a thin caller: at its return address");
	EXPECT("sink_moved+4/sink_mid+9/sink_outer+9", 1,
	       "a moved probe's trap before the handler: the IP moved back onto it");
	ok(!strcmp(seen[k++], "sink_moved+5/sink_mid+9/sink_outer+9"),
	   "a moved probe after its push: the IP left past it");
	is_string("", seen[k], "a task past its exit_mm(): no frames");
	is_int(VP_SAMPLE_KERNEL, (long long)seen_flags[k], "... in the kernel, and not broken");

	vp_reader_free(rd);
	munmap(page, PAGE);
	unlink(path);
	test_tmpdir_free(dir);
	free(path);
	return 0;
}
