/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sample-sink.c - unwind the decoded samples and write them with the
 * module, symbol and frame definitions they need; in combined mode, put
 * back what return probes took from each stack (the shadow stacks) and
 * move samples out of the [uprobes] page.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf-collector/sampling/sample-sink.h"
#include "util/util.h"

enum { MAX_FRAMES = 512 };

static uint64_t tid_hash(uint32_t tid)
{
	return vp_hash_mix(tid, 0);
}

/* What a probed entry saw: see vp_sample_sink_entry(). */
struct shadow_frame {
	uint64_t sp, ret;
	const char *path;
	uint64_t vaddr;
};

/* A thread's probed frames, innermost last; in a hash table by tid. */
struct shadow {
	uint32_t tid;
	size_t n, cap;
	struct shadow_frame *v;
	/* the frame of the last exit, until the next entry: a sample in the
	 * return trampoline can come after the exit's record */
	struct shadow_frame gone;
	int has_gone;
};

/* An entry of the table of shadows, keyed by the tid. */
struct shadow_ent {
	uint32_t tid;
	struct shadow *sh;
};

/* An entry probe, by its file and link-time address: the table holds
 * each once, whichever copy of the path string it came with. */
struct probed {
	uint64_t vaddr;
	const char *path;
};

static int probed_eq(const void *entry, const void *key)
{
	const struct probed *e = entry, *k = key;

	return e->vaddr == k->vaddr && (e->path == k->path || !strcmp(e->path, k->path));
}

struct vp_sample_sink {
	struct vp_writer *w;
	struct vp_unwinder *unw;
	struct vp_hashtab shadows; /* of struct shadow_ent */
	struct shadow *last_shadow;
	struct vp_hashtab probed; /* the entry probes (struct probed), from
				   * vp_sample_sink_probe() */
	struct vp_uframe frames[MAX_FRAMES];
	uint32_t ids[MAX_FRAMES];
	uint64_t cfas[MAX_FRAMES];
};

static int sink_module(void *ctx, uint32_t id, const struct vp_module *m, uint32_t flags)
{
	return vp_writer_module(ctx, id, m, flags);
}

static int sink_symbol(void *ctx, uint32_t id, const struct vp_symbol *s)
{
	return vp_writer_symbol(ctx, id, s);
}

static int sink_frame(void *ctx, uint32_t id, const struct vp_frame_def *f)
{
	return vp_writer_frame(ctx, id, f);
}

struct vp_sample_sink *vp_sample_sink_new(struct vp_writer *w, const struct vp_module *mods,
					  size_t nmods)
{
	struct vp_sample_sink *ss = xcalloc(1, sizeof(*ss));
	struct vp_unwind_sink sink = { w, sink_module, sink_symbol, sink_frame };

	ss->w = w;
	vp_hashtab_init(&ss->shadows, sizeof(struct shadow_ent), sizeof(uint32_t), NULL);
	vp_hashtab_init(&ss->probed, sizeof(struct probed), 0, probed_eq);
	ss->unw = vp_unwinder_new(mods, nmods, &sink);
	if (!ss->unw) {
		free(ss);
		return NULL;
	}
	return ss;
}

void vp_sample_sink_free(struct vp_sample_sink *ss)
{
	struct shadow_ent *e;

	if (!ss)
		return;
	for (size_t pos = 0; (e = vp_hashtab_next(&ss->shadows, &pos));) {
		free(e->sh->v);
		free(e->sh);
	}
	vp_hashtab_release(&ss->shadows);
	vp_hashtab_release(&ss->probed);
	vp_unwinder_free(ss->unw);
	free(ss);
}

static struct shadow *shadow_of(struct vp_sample_sink *ss, uint32_t tid, int create)
{
	struct shadow_ent *e;
	void *p;

	if (ss->last_shadow && ss->last_shadow->tid == tid)
		return ss->last_shadow;
	e = vp_hashtab_find(&ss->shadows, tid_hash(tid), &tid);
	if (e)
		return ss->last_shadow = e->sh;
	if (!create)
		return NULL;
	if (vp_hashtab_insert(&ss->shadows, tid_hash(tid), &tid, &p) < 0)
		return NULL; /* no memory: the thread's probed frames go unseen */
	e = p;
	e->sh = xcalloc(1, sizeof(*e->sh));
	e->sh->tid = tid;
	return ss->last_shadow = e->sh;
}

/* Thread @tid exited (or exec'd): its probed frames are gone. */
static void shadow_drop(struct vp_sample_sink *ss, uint32_t tid)
{
	struct shadow_ent *e = vp_hashtab_find(&ss->shadows, tid_hash(tid), &tid);
	struct shadow *sh;

	if (!e)
		return;
	sh = e->sh;
	vp_hashtab_remove(&ss->shadows, tid_hash(tid), &tid);
	if (ss->last_shadow == sh)
		ss->last_shadow = NULL;
	free(sh->v);
	free(sh);
}

void vp_sample_sink_mmap(struct vp_sample_sink *ss, pid_t pid, uint64_t start, uint64_t len,
			 uint64_t pgoff, const char *path)
{
	if (!len && !strcmp(path, vp_sampler_exec_path)) {
		/* a new image: what was mapped and probed is gone */
		vp_unwinder_forget(ss->unw, pid);
		shadow_drop(ss, (uint32_t)start);
	} else if (!len && !strcmp(path, vp_sampler_exit_path)) {
		shadow_drop(ss, (uint32_t)start);
		/* the main thread: the process is gone, its pid free for
		 * another one, whose /proc must not be read for it */
		if ((pid_t)start == pid)
			vp_unwinder_gone(ss->unw, pid);
	} else {
		vp_unwinder_mmap(ss->unw, pid, start, len, pgoff, path);
	}
}

void vp_sample_sink_fork(struct vp_sample_sink *ss, pid_t ppid, uint32_t ptid, pid_t pid,
			 uint32_t tid)
{
	struct shadow *from, *to;

	vp_unwinder_fork(ss->unw, ppid, pid);
	/* the child's stack is a copy: the probed frames pending on it too */
	from = shadow_of(ss, ptid, 0);
	if (!from || !from->n || ptid == tid)
		return;
	to = shadow_of(ss, tid, 1);
	if (!to)
		return;
	to->v = xrealloc(to->v, from->n * sizeof(*to->v));
	memcpy(to->v, from->v, from->n * sizeof(*to->v));
	to->n = to->cap = from->n;
	to->has_gone = 0;
}

int vp_sample_sink_read_maps(struct vp_sample_sink *ss, pid_t pid)
{
	return vp_unwinder_read_maps(ss->unw, pid);
}

/* Remember that an entry probe sits at @vaddr of @path: 0 or -ENOMEM. */
static int probed_add(struct vp_sample_sink *ss, const char *path, uint64_t vaddr)
{
	struct probed key = { vaddr, path };
	void *p;
	int err = vp_hashtab_insert(&ss->probed, vp_hash_mix(vaddr, 0), &key, &p);

	if (err < 0)
		return err;
	((struct probed *)p)->vaddr = vaddr;
	((struct probed *)p)->path = path;
	return 0;
}

/* Whether one sits at @vaddr of @path (any copy of the string). */
static int is_probed(const struct vp_sample_sink *ss, const char *path, uint64_t vaddr)
{
	struct probed key = { vaddr, path };

	return vp_hashtab_find(&ss->probed, vp_hash_mix(vaddr, 0), &key) != NULL;
}

/* The innermost frame's ret has left the stack pointer at @sp: keep it as
 * the gone one. */
static void shadow_returned(struct shadow *sh, uint64_t sp)
{
	if (sh->n && sh->v[sh->n - 1].sp + 8 == sp) {
		sh->gone = sh->v[sh->n - 1];
		sh->has_gone = 1;
	}
}

/* Frames at or below @sp are gone (stacks grow down). */
static void shadow_retire(struct shadow *sh, uint64_t sp)
{
	while (sh->n && sh->v[sh->n - 1].sp <= sp)
		sh->n--;
}

int vp_sample_sink_probe(struct vp_sample_sink *ss, const char *path, uint64_t vaddr)
{
	return probed_add(ss, path, vaddr);
}

void vp_sample_sink_entry(struct vp_sample_sink *ss, pid_t pid, uint32_t tid, uint64_t sp,
			  uint64_t ret, const char *path, uint64_t vaddr)
{
	struct shadow *sh;

	(void)pid;
	if (!sp)
		return;
	sh = shadow_of(ss, tid, 1);
	if (!sh)
		return;
	sh->has_gone = 0;
	shadow_retire(sh, sp);
	if (sh->n == sh->cap) {
		sh->cap = sh->cap ? sh->cap * 2 : 64;
		sh->v = xrealloc(sh->v, sh->cap * sizeof(*sh->v));
	}
	sh->v[sh->n++] = (struct shadow_frame){ sp, ret, path, vaddr };
}

void vp_sample_sink_exit(struct vp_sample_sink *ss, uint32_t tid, uint64_t sp)
{
	struct shadow *sh = shadow_of(ss, tid, 0);

	/* the exit's sp is the entry's + 8: that frame and any below it */
	if (!sh || sp < 8)
		return;
	sh->has_gone = 0;
	shadow_returned(sh, sp);
	shadow_retire(sh, sp - 8);
}

/*
 * The kernel single-steps a probed instruction it cannot emulate from a
 * copy in a slot of the [uprobes] page (UPROBE_XOL_SLOT_BYTES, 128 on
 * x86), slots aligned to their size, past the trampoline's.  A sample
 * taken there sees the IP at the copy, or after the step but before the
 * kernel moves the IP back, at its end with the stack pointer as the
 * instruction left it (sub $8,%rsp: 8 lower than at the entry).  The
 * function is the innermost probed frame, entered just before; where the
 * stack pointer is at most a frame's worth below its entry's, the IP is
 * as far into the probed instruction in the program as into the copy.
 */
enum { XOL_PAGE = 4096, XOL_SLOT = 128, INSN_MAX = 15, STEP_SP_MAX = 1 << 20 };

static int stepped(struct vp_sample_sink *ss, const struct shadow *sh, struct vp_raw_sample *smp,
		   pid_t pid)
{
	const struct shadow_frame *f = &sh->v[sh->n - 1];
	uint64_t sp = smp->st.regs[VP_UREG_SP], off = smp->st.regs[VP_UREG_IP] % XOL_SLOT;
	uint64_t at;

	if (off > INSN_MAX || f->sp < sp || f->sp - sp > STEP_SP_MAX)
		return 0;
	at = vp_unwinder_runtime(ss->unw, pid, f->path, f->vaddr);
	if (!at)
		return 0;
	smp->st.regs[VP_UREG_IP] = at + off;
	return 1;
}

/*
 * In the return trampoline, the first slot of the [uprobes] page: a probed
 * function has returned and the kernel is about to take the program back
 * to its caller.  Where the sample fell, the trampoline had pushed up to
 * three registers (kernels whose trampoline makes the uretprobe system
 * call) or none (int3), and the exit's record may have been read already.
 * The function is the one whose entry stack pointer lies within those
 * words of the sample's; the program is logically at its return address,
 * the stack pointer as its ret left it, which the stack copy holds.
 *
 * In the kernel, the trampoline is in its system call (all three words
 * pushed, or none while the kernel has taken them back) or its int3
 * (none).  That tells the last exit's function from its caller's when a
 * thin caller (child_sub: sub $8,%rsp; call; add; ret) returns right
 * after it: at the caller's system call, before its exit's record, the
 * callee's entry stack pointer is one word above the sample's too.
 */
enum { TRAMPOLINE_PUSHED = 3 * 8 };

static int returned_from(const struct shadow_frame *f, uint64_t sp, int kernel)
{
	uint64_t pushed = f->sp + 8 - sp;

	return f->ret && sp <= f->sp + 8 && pushed <= TRAMPOLINE_PUSHED &&
	       (!kernel || !pushed || pushed == TRAMPOLINE_PUSHED);
}

static int returned(const struct shadow *sh, struct vp_raw_sample *smp)
{
	uint64_t sp = smp->st.regs[VP_UREG_SP], skip;
	const struct shadow_frame *f = NULL;

	if (sh->has_gone && returned_from(&sh->gone, sp, smp->kernel))
		f = &sh->gone;
	else if (sh->n && returned_from(&sh->v[sh->n - 1], sp, smp->kernel))
		f = &sh->v[sh->n - 1];
	if (!f)
		return 0;
	skip = f->sp + 8 - sp;
	if (skip > smp->st.len)
		return 0;
	smp->st.regs[VP_UREG_IP] = f->ret;
	smp->st.regs[VP_UREG_SP] = f->sp + 8;
	smp->st.stack += skip;
	smp->st.len -= skip;
	smp->st.size -= skip;
	return 1;
}

/*
 * Whether the kernel, emulating the probed instruction at @vaddr of @path
 * (push %rbp, push %r15, a call), has pushed its word already: the probe's
 * record came first, and the stack pointer is 8 below its entry's.  (A
 * recursive call's trap comes at least 16 below: the push and the call.)
 * Still in the kernel, the IP may be on the probe yet, or past it.
 */
static int emulated_push(const struct shadow *sh, const char *path, uint64_t vaddr,
			 uint64_t sp)
{
	const struct shadow_frame *f = sh && sh->n ? &sh->v[sh->n - 1] : NULL;

	return f && f->vaddr == vaddr && f->sp == sp + 8 && !strcmp(f->path, path);
}

/*
 * The push emulated, the IP not yet moved past it: unwound from the
 * probe, the stack must be as before the push.
 */
static int unpush(struct vp_sample_sink *ss, const struct shadow *sh, struct vp_raw_sample *smp)
{
	uint64_t ip = smp->st.regs[VP_UREG_IP], vaddr;
	const char *path = vp_unwinder_link_addr(ss->unw, smp->st.pid, ip, &vaddr);

	if (!path || smp->st.len < 8 ||
	    !emulated_push(sh, path, vaddr, smp->st.regs[VP_UREG_SP]))
		return 0;
	smp->st.regs[VP_UREG_SP] += 8;
	smp->st.stack += 8;
	smp->st.len -= 8;
	smp->st.size -= 8;
	return 1;
}

/*
 * Put back the return addresses the trampoline replaced, and move an IP in
 * the [uprobes] page to where the program logically is.  Returns
 * VP_SAMPLE_PROBE when it moved the IP.
 */
static uint32_t repair(struct vp_sample_sink *ss, struct vp_raw_sample *smp, uint32_t tid)
{
	struct shadow *sh = shadow_of(ss, tid, 0);
	uint64_t sp = smp->st.regs[VP_UREG_SP], ip = smp->st.regs[VP_UREG_IP], vaddr;
	pid_t pid = smp->st.pid;
	uint32_t flags = 0;
	const char *path;

	/*
	 * Inside the trap of an entry probe (often before its record): the
	 * user IP is past the breakpoint, in the middle of the probed
	 * instruction, until the kernel moves it on.  Unwound from there,
	 * the stack makes no sense.
	 */
	if (smp->kernel && ip && (path = vp_unwinder_link_addr(ss->unw, pid, ip - 1, &vaddr)) &&
	    is_probed(ss, path, vaddr) && !emulated_push(sh, path, vaddr, sp)) {
		smp->st.regs[VP_UREG_IP] = ip - 1;
		flags = VP_SAMPLE_PROBE;
	}
	if (!sh || !sp)
		return flags;
	/* below the stack pointer: returned without a return event (longjmp,
	 * an exception, a lost record), or with one still to come: a frame
	 * whose ret has just popped its return address is the gone one */
	shadow_returned(sh, sp);
	shadow_retire(sh, sp - 1);
	for (size_t i = 0; i < sh->n; i++) {
		const struct shadow_frame *f = &sh->v[i];
		uint64_t word;

		if (!f->ret || f->sp < sp || f->sp - sp + 8 > smp->st.len)
			continue;
		memcpy(&word, smp->stack + (f->sp - sp), 8);
		/* only the trampoline's address is the kernel's doing: any
		 * other word differing from the saved one is the program's */
		if (word != f->ret && vp_unwinder_uprobes_page(ss->unw, pid, word))
			memcpy(smp->stack + (f->sp - sp), &f->ret, 8);
	}
	/* (the return probe of a trapped entry may have replaced its
	 * return address already: put back above, the IP is right) */
	if (flags)
		return flags;
	if (smp->kernel && unpush(ss, sh, smp))
		return VP_SAMPLE_PROBE;
	if (!vp_unwinder_in_uprobes(ss->unw, pid, ip))
		return flags;
	if (ip % XOL_PAGE < XOL_SLOT)
		return returned(sh, smp) ? VP_SAMPLE_PROBE : 0;
	if (!sh->n)
		return 0;
	return stepped(ss, sh, smp, pid) ? VP_SAMPLE_PROBE : 0;
}

int vp_sample_sink_write(struct vp_sample_sink *ss, const struct vp_raw *r, uint32_t thread)
{
	struct vp_raw_sample *smp = r->sample;
	struct vp_sample s;
	uint32_t flags = 0, moved = 0;
	size_t n = 0;
	int is_ret;

	/* mappings read from /proc when this sample was decoded */
	if (smp->maps)
		vp_unwinder_add_maps(ss->unw, smp->st.pid, smp->maps);
	if (ss->shadows.n || ss->probed.n)
		moved = repair(ss, smp, r->tid);
	if (smp->st.regs[VP_UREG_IP] && !smp->no_user)
		n = vp_unwind(ss->unw, &smp->st, ss->frames, MAX_FRAMES, &flags);
	memset(&s, 0, sizeof(s));
	/*
	 * In the kernel, the user IP the sample carries is sometimes no code
	 * address at all (the task was between its user code and the kernel);
	 * the return address at the stack pointer is still right, and the
	 * frames from there on are kept.
	 */
	if (smp->kernel && n > 1 && !(moved & VP_SAMPLE_PROBE) &&
	    vp_unwinder_in_uprobes(ss->unw, smp->st.pid, ss->frames[0].ip)) {
		memmove(ss->frames, ss->frames + 1, (n - 1) * sizeof(*ss->frames));
		n--;
	}
	/*
	 * Return addresses are named by their call.  So is the user IP of a
	 * sample in a system call: the instruction after it (which may end
	 * its function).  A fault or a probe's trap entered the kernel at
	 * the IP itself, and a frame a signal interrupted resumes there.
	 */
	is_ret = smp->kernel && !(moved & VP_SAMPLE_PROBE) && n &&
		 vp_unwinder_after_syscall(ss->unw, smp->st.pid, ss->frames[0].ip);
	for (size_t i = 0; i < n; i++) {
		long id;

		if (i > 0)
			is_ret = !(ss->frames[i].flags & VP_UFRAME_EXACT);
		id = vp_unwinder_frame(ss->unw, smp->st.pid, ss->frames[i].ip, is_ret);

		if (id < 0)
			return (int)id;
		ss->ids[i] = (uint32_t)id;
		ss->cfas[i] = ss->frames[i].cfa;
	}
	s.time = r->time;
	s.period = smp->period;
	s.thread = thread;
	/* (a task exiting has no user frames left, and lacks none) */
	s.flags = flags | moved | (smp->kernel ? VP_SAMPLE_KERNEL : 0) |
		  (n || smp->no_user ? 0 : VP_SAMPLE_BROKEN);
	s.nframes = (uint32_t)n;
	s.frames = ss->ids;
	s.cfas = ss->cfas;
	return vp_writer_sample(ss->w, &s);
}

void vp_sample_sink_stats(const struct vp_sample_sink *ss, struct vp_unwind_stats *ret)
{
	vp_unwinder_stats(ss->unw, ret);
}
