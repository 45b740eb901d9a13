/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sampling.c - open the sampling events (one per CPU and traced thread,
 * inherited, redirected into one ring buffer per CPU) and decode their
 * sample, mmap and lost records.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "sampling.h"
#include "util.h"

static const uint64_t sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				    PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
				    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

/* sample_id_all trailer of non-sample records: pid/tid, time, identifier. */
enum { SAMPLE_ID_SIZE = 24 };

const char *vp_sample_event_name(uint32_t event)
{
	switch (event) {
	case VP_SEV_CPU_CLOCK:
		return "cpu-clock";
	case VP_SEV_TASK_CLOCK:
		return "task-clock";
	case VP_SEV_CYCLES:
		return "cycles";
	default:
		return "?";
	}
}

static void event_attr(struct perf_event_attr *a, uint32_t event, uint64_t freq)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (event == VP_SEV_CYCLES) {
		/* cycles vary with the clock speed: let the kernel adjust
		 * the period to the frequency, and weigh by it */
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
		a->freq = 1;
		a->sample_freq = freq;
	} else {
		/* a fixed period of the clock: every sample is the same
		 * slice of time, so a share of samples is a share of time */
		a->type = PERF_TYPE_SOFTWARE;
		a->config = event == VP_SEV_TASK_CLOCK ? PERF_COUNT_SW_TASK_CLOCK
						       : PERF_COUNT_SW_CPU_CLOCK;
		a->sample_period = 1000000000ULL / freq;
	}
}

/* Whether this machine counts cycles: a hardware PMU that takes the event. */
static int have_cycles(void)
{
	struct perf_event_attr a;
	int fd;

	event_attr(&a, VP_SEV_CYCLES, 1000);
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = vp_perf_event_open(&a, 0, -1, -1);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int vp_sampling_resolve(struct vp_sampling_opts *o, int quiet)
{
	int err;

	if (o->event && o->event != VP_SEV_CYCLES)
		return 0;
	err = have_cycles();
	if (!err) {
		o->event = VP_SEV_CYCLES;
		return 0;
	}
	if (o->event == VP_SEV_CYCLES)
		return error("cannot sample cycles: %s (this machine has no hardware PMU that "
			     "counts them; use --event cpu-clock)",
			     err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV
				     ? "no such event"
				     : strerror(-err));
	o->event = VP_SEV_CPU_CLOCK;
	if (!quiet)
		info("no hardware cycle counter (%s): sampling cpu-clock",
		     err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV ? "no PMU"
									     : strerror(-err));
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int open_one(struct vp_sampler *s, struct perf_event_attr *a, pid_t tid, int ci,
		    size_t buf_size)
{
	char why[256];
	uint64_t id;
	int fd, err;

	fd = vp_perf_event_open(a, tid, s->cpus[ci], -1);
	if (fd == -EACCES && !a->exclude_kernel) {
		/* Unprivileged: user-mode samples only (time in system
		 * calls then goes unseen). */
		a->exclude_kernel = 1;
		s->exclude_kernel = 1;
		fd = vp_perf_event_open(a, tid, s->cpus[ci], -1);
	}
	if (fd == -ESRCH)
		return error("cannot sample process %d: no such process", (int)tid);
	if (fd < 0)
		return error("cannot open the %s sampling event on CPU %d: %s",
			     vp_sample_event_name(s->event), s->cpus[ci],
			     vp_perf_open_strerror(fd, a, why, sizeof(why)));
	s->fds[s->nfds++] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return error("cannot read the id of a sampling event: %s", strerror(errno));
	s->ids[s->nids++] = id;
	if (s->own_rings && !s->rings[ci].base) {
		err = vp_ring_map(&s->rings[ci], fd, s->cpus[ci], buf_size);
		if (err == -EPERM || err == -ENOMEM)
			return error("cannot map a %zu-byte ring buffer on CPU %d: %s (try a "
				     "smaller --buffer-size)",
				     buf_size, s->cpus[ci], strerror(-err));
	} else {
		err = vp_ring_redirect(&s->rings[ci], fd);
	}
	if (err)
		return error("cannot set up the ring buffer on CPU %d: %s", s->cpus[ci],
			     strerror(-err));
	/* Only the first event of a buffer reports mmaps, and only once. */
	a->mmap = a->mmap2 = a->comm = a->task = 0;
	return 0;
}

int vp_sampler_open(struct vp_sampler *s, const struct vp_sampling_opts *o, pid_t pid,
		    const pid_t *tids, size_t ntids, struct vp_ring *rings, int flags)
{
	struct perf_event_attr a;
	size_t n = ntids ? ntids : 1;

	memset(s, 0, sizeof(*s));
	s->event = o->event;
	s->ncpus = vp_online_cpus(&s->cpus);
	if (s->ncpus < 0) {
		int err = s->ncpus;

		s->ncpus = 0;
		return error("cannot list the online CPUs: %s", strerror(-err));
	}
	s->own_rings = !rings;
	s->rings = rings ? rings : xcalloc((size_t)s->ncpus, sizeof(*s->rings));
	s->fds = xcalloc(n * (size_t)s->ncpus, sizeof(*s->fds));
	s->ids = xcalloc(n * (size_t)s->ncpus, sizeof(*s->ids));
	for (int ci = 0; ci < s->ncpus; ci++) {
		event_attr(&a, o->event, o->freq);
		s->period = o->event == VP_SEV_CYCLES ? 0 : a.sample_period;
		a.sample_type = sample_type;
		a.sample_regs_user = VP_UREG_MASK;
		a.sample_stack_user = o->stack_size;
		a.sample_id_all = 1;
		a.inherit = 1;
		a.exclude_hv = 1;
		a.exclude_kernel = s->exclude_kernel;
		a.use_clockid = 1;
		a.clockid = CLOCK_MONOTONIC;
		a.disabled = !!(flags & VP_SAMPLER_ON_EXEC);
		a.enable_on_exec = !!(flags & VP_SAMPLER_ON_EXEC);
		a.watermark = 1;
		a.wakeup_watermark = (uint32_t)(o->buf_size / 4);
		/* With our own buffers, these events also say what is mapped
		 * (the probes' buffers have their own mmap tracker). */
		a.mmap = a.mmap2 = a.comm = a.task = s->own_rings;
		for (size_t t = 0; t < n; t++)
			if (open_one(s, &a, ntids ? tids[t] : pid, ci, o->buf_size) < 0)
				goto out_close;
	}
	qsort(s->ids, s->nids, sizeof(*s->ids), cmp_u64);
	pr_debug("sampling %s every %llu ns on %d CPUs (%zu events)%s",
		 vp_sample_event_name(s->event), (unsigned long long)s->period, s->ncpus, s->nfds,
		 s->exclude_kernel ? ", user mode only" : "");
	return 0;
out_close:
	vp_sampler_close(s);
	return -1;
}

void vp_sampler_disable(struct vp_sampler *s)
{
	for (size_t i = 0; i < s->nfds; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

void vp_sampler_close(struct vp_sampler *s)
{
	if (s->own_rings) {
		for (int ci = 0; ci < s->ncpus; ci++)
			vp_ring_unmap(&s->rings[ci]);
		free(s->rings);
	}
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->ids);
	free(s->cpus);
	memset(s, 0, sizeof(*s));
}

/* A cursor over a record's payload that never reads past its end. */
struct cursor {
	const unsigned char *p, *end;
};

static int take(struct cursor *c, void *v, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -1;
	memcpy(v, c->p, n);
	c->p += n;
	return 0;
}

static int is_ours(const struct vp_sampler *s, uint64_t id)
{
	return bsearch(&id, s->ids, s->nids, sizeof(id), cmp_u64) != NULL;
}

static int decode_sample(const struct vp_sampler *s, struct cursor *c, struct vp_raw *r)
{
	uint64_t id, ip, pidtid, time, period, abi, size = 0, dyn = 0;
	uint64_t regs[VP_UREG_COUNT] = { 0 };
	const unsigned char *stack = NULL;
	struct vp_raw_sample *smp;

	if (take(c, &id, 8) || !is_ours(s, id) || take(c, &ip, 8) || take(c, &pidtid, 8) ||
	    take(c, &time, 8) || take(c, &period, 8) || take(c, &abi, 8))
		return 0;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		for (int bit = 0; bit < VP_UREG_COUNT; bit++)
			if ((VP_UREG_MASK >> bit & 1) && take(c, &regs[bit], 8))
				return 0;
	}
	if (take(c, &size, 8))
		return 0;
	if (size) {
		stack = c->p;
		if ((uint64_t)(c->end - c->p) < size)
			return 0;
		c->p += size;
		if (take(c, &dyn, 8))
			return 0;
		if (dyn > size)
			dyn = size;
	}
	smp = xmalloc(sizeof(*smp) + dyn);
	memcpy(smp->stack, stack, dyn);
	smp->ip = ip;
	smp->period = period;
	/* user space ends below the canonical hole on x86-64 */
	smp->kernel = ip >= 0x800000000000ULL;
	smp->st.pid = (pid_t)(uint32_t)pidtid;
	memcpy(smp->st.regs, regs, sizeof(regs));
	smp->st.stack = smp->stack;
	smp->st.len = abi == PERF_SAMPLE_REGS_ABI_NONE ? 0 : dyn;
	smp->st.size = size;
	r->type = VP_RAW_SAMPLE;
	r->pid = (uint32_t)pidtid;
	r->tid = (uint32_t)(pidtid >> 32);
	r->time = time;
	r->sample = smp;
	/* A kernel thread or a task between exec and its first user
	 * instruction has no user state: nothing to unwind. */
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		smp->st.regs[VP_UREG_IP] = 0;
	return 1;
}

int vp_sampler_decode(const struct vp_sampler *s, const struct perf_event_header *h, int cpu,
		      struct vp_raw *ret)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };

	if (h->type == PERF_RECORD_SAMPLE) {
		memset(ret, 0, sizeof(*ret));
		ret->cpu = (uint16_t)cpu;
		return decode_sample(s, &c, ret);
	}
	if (!s->own_rings)
		return 0; /* mmaps and losses: the probes decode those */
	if (h->type == PERF_RECORD_LOST_SAMPLES) {
		uint64_t lost;
		const unsigned char *end = (const unsigned char *)h + h->size;

		memset(ret, 0, sizeof(*ret));
		if (take(&c, &lost, 8) || h->size < sizeof(*h) + 8 + SAMPLE_ID_SIZE)
			return 0;
		memcpy(&ret->time, end - SAMPLE_ID_SIZE + 8, 8);
		ret->type = VP_RAW_LOST;
		ret->cpu = (uint16_t)cpu;
		ret->addr = lost;
		return 1;
	}
	/* MMAP2 and LOST have the probes' layout: one decoder for both. */
	return vp_probes_decode(NULL, h, cpu, ret);
}

/* ---- the writing side ---- */

enum { MAX_FRAMES = 512 };

/* What a probed entry saw: see vp_sample_sink_entry(). */
struct shadow_frame {
	uint64_t sp, ret;
	const char *path;
	uint64_t vaddr;
};

struct shadow {
	uint32_t tid;
	size_t n, cap;
	struct shadow_frame *v;
};

struct vp_sample_sink {
	struct vp_writer *w;
	struct vp_unwinder *unw;
	struct shadow *shadows;
	size_t nshadows;
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
	ss->unw = vp_unwinder_new(mods, nmods, &sink);
	if (!ss->unw) {
		free(ss);
		return NULL;
	}
	return ss;
}

void vp_sample_sink_free(struct vp_sample_sink *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->nshadows; i++)
		free(ss->shadows[i].v);
	free(ss->shadows);
	vp_unwinder_free(ss->unw);
	free(ss);
}

void vp_sample_sink_mmap(struct vp_sample_sink *ss, pid_t pid, uint64_t start, uint64_t len,
			 uint64_t pgoff, const char *path)
{
	vp_unwinder_mmap(ss->unw, pid, start, len, pgoff, path);
}

int vp_sample_sink_read_maps(struct vp_sample_sink *ss, pid_t pid)
{
	return vp_unwinder_read_maps(ss->unw, pid);
}

static struct shadow *shadow_of(struct vp_sample_sink *ss, uint32_t tid, int create)
{
	for (size_t i = 0; i < ss->nshadows; i++)
		if (ss->shadows[i].tid == tid)
			return &ss->shadows[i];
	if (!create)
		return NULL;
	ss->shadows = xrealloc(ss->shadows, (ss->nshadows + 1) * sizeof(*ss->shadows));
	memset(&ss->shadows[ss->nshadows], 0, sizeof(ss->shadows[0]));
	ss->shadows[ss->nshadows].tid = tid;
	return &ss->shadows[ss->nshadows++];
}

/* Frames at or below @sp are gone (stacks grow down). */
static void shadow_retire(struct shadow *sh, uint64_t sp)
{
	while (sh->n && sh->v[sh->n - 1].sp <= sp)
		sh->n--;
}

void vp_sample_sink_entry(struct vp_sample_sink *ss, pid_t pid, uint32_t tid, uint64_t sp,
			  uint64_t ret, const char *path, uint64_t vaddr)
{
	struct shadow *sh = shadow_of(ss, tid, 1);

	(void)pid;
	if (!sp)
		return;
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
	if (sh && sp >= 8)
		shadow_retire(sh, sp - 8);
}

/*
 * Put back the return addresses the trampoline replaced, and move an IP in
 * the [uprobes] page to where the program logically is.  Returns
 * VP_SAMPLE_PROBE when it moved the IP.
 */
static uint32_t repair(struct vp_sample_sink *ss, struct vp_raw_sample *smp, uint32_t tid)
{
	struct shadow *sh = shadow_of(ss, tid, 0);
	uint64_t sp = smp->st.regs[VP_UREG_SP], ip = smp->st.regs[VP_UREG_IP];
	uint32_t flags = 0;

	if (!sh || !sh->n)
		return 0;
	for (size_t i = 0; i < sh->n; i++) {
		const struct shadow_frame *f = &sh->v[i];
		uint64_t word;

		if (f->sp < sp || f->sp - sp + 8 > smp->st.len)
			continue;
		memcpy(&word, smp->stack + (f->sp - sp), 8);
		if (word != f->ret && f->ret)
			memcpy(smp->stack + (f->sp - sp), &f->ret, 8);
	}
	if (!vp_unwinder_in_uprobes(ss->unw, smp->st.pid, ip))
		return 0;
	for (size_t i = sh->n; i-- > 0;) {
		const struct shadow_frame *f = &sh->v[i];

		if (f->sp == sp) {
			/* single-stepping the probed instruction: the stack is
			 * as at the function's entry */
			uint64_t at = vp_unwinder_runtime(ss->unw, smp->st.pid, f->path, f->vaddr);

			if (at) {
				smp->st.regs[VP_UREG_IP] = at;
				flags = VP_SAMPLE_PROBE;
			}
			break;
		}
		if (f->sp + 8 == sp && f->ret) {
			/* in the return trampoline: logically back in the caller */
			smp->st.regs[VP_UREG_IP] = f->ret;
			flags = VP_SAMPLE_PROBE;
			break;
		}
	}
	return flags;
}

int vp_sample_sink_write(struct vp_sample_sink *ss, const struct vp_raw *r, uint32_t thread)
{
	struct vp_raw_sample *smp = r->sample;
	struct vp_sample s;
	uint32_t flags = 0, moved = 0;
	size_t n = 0;

	if (ss->nshadows)
		moved = repair(ss, smp, r->tid);
	if (smp->st.regs[VP_UREG_IP])
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
	for (size_t i = 0; i < n; i++) {
		long id = vp_unwinder_frame(ss->unw, smp->st.pid, ss->frames[i].ip, i > 0);

		if (id < 0)
			return (int)id;
		ss->ids[i] = (uint32_t)id;
		ss->cfas[i] = ss->frames[i].cfa;
	}
	s.time = r->time;
	s.period = smp->period;
	s.thread = thread;
	s.flags = flags | moved | (smp->kernel ? VP_SAMPLE_KERNEL : 0) | (n ? 0 : VP_SAMPLE_BROKEN);
	s.nframes = (uint32_t)n;
	s.frames = ss->ids;
	s.cfas = ss->cfas;
	return vp_writer_sample(ss->w, &s);
}

void vp_sample_sink_stats(const struct vp_sample_sink *ss, struct vp_unwind_stats *ret)
{
	vp_unwinder_stats(ss->unw, ret);
}

void vp_raw_sample_free(struct vp_raw *r)
{
	free(r->sample);
	r->sample = NULL;
}
