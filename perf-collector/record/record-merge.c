/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-merge.c - the records of a run on their way into the file: read
 * from every buffer, numbered (threads, call sites), merged by time
 * (perf's "finished round" rule), the processes' side followed, samples
 * unwound (at once, or deferred to once a second) and written.  See
 * record.h.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf-collector/record/record.h"
#include "util/util.h"

/*
 * How often what was read goes into the file (samples unwound, the chunk
 * written): what a varperf killed with SIGKILL, or by the OOM killer,
 * loses at most.  Unwinding a second of samples at 1 kHz takes some 2 ms.
 */
static const uint64_t FLUSH_NS = 1000000000ULL;

/*
 * ... and in auto mode's phase 1 every round (50 ms): the unwinding and
 * naming is then done while the program is sampled, not between the
 * phases, where it runs unobserved.
 */
static const uint64_t PHASE1_FLUSH_NS = 50000000ULL;

/* An entry of an idmap: the key, then the index. */
struct idmap_ent {
	uint64_t key;
	uint32_t val;
};


static uint32_t *idmap_slot(struct idmap *m, uint64_t key, int *found)
{
	void *e;
	int ret;

	if (!m->tab.esize)
		vp_hashtab_init(&m->tab, sizeof(struct idmap_ent), sizeof(uint64_t), NULL);
	ret = vp_hashtab_insert(&m->tab, vp_hash_mix(key, 0), &key, &e);
	if (ret < 0)
		return NULL;
	*found = !ret;
	m->n = m->tab.n;
	return &((struct idmap_ent *)e)->val;
}

static void idmap_release(struct idmap *m)
{
	vp_hashtab_release(&m->tab);
	memset(m, 0, sizeof(*m));
}

/* The file's number of @r's thread, written as it first comes. */
static uint32_t thread_index(struct record_ids *ids, struct record_output *out,
			     const struct vp_raw *r)
{
	int found;
	uint32_t *idx = idmap_slot(&ids->threads, r->tid, &found);

	/* out of memory: the file is marked incomplete, its thread 0 takes it */
	if (!idx) {
		record_write_failed(out, -ENOMEM);
		return 0;
	}
	if (!found) {
		*idx = ids->thread_base + (uint32_t)(ids->threads.n - 1);
		record_write_failed(out, vp_writer_thread(out->w, *idx, r->tid, r->pid));
	}
	return *idx;
}

/* The file's number of the call site returning to @addr, written as it
 * first comes (@as names it). */
static uint32_t callsite_id(struct record_ids *ids, struct record_output *out,
			    struct vp_addrspace *as, uint64_t addr)
{
	int found;
	uint32_t *id = idmap_slot(&ids->callsites, addr, &found);
	struct vp_callsite cs;

	/* out of memory: the file is marked incomplete, the call has no site */
	if (!id) {
		record_write_failed(out, -ENOMEM);
		return UINT32_MAX; /* core's VP_NO_CALLSITE */
	}
	if (!found) {
		*id = (uint32_t)(ids->callsites.n - 1);
		vp_addrspace_callsite(as, addr, &cs);
		pr_debug("call site %u: %#llx -> module %d %#llx %s %s:%u", *id,
			 (unsigned long long)addr, cs.module, (unsigned long long)cs.offset,
			 cs.caller, cs.file, cs.line);
		record_write_failed(out, vp_writer_callsite(out->w, *id, &cs));
		if (*id >= ids->ntramp) {
			size_t n = ids->ntramp ? ids->ntramp * 2 : 64;

			while (n <= *id)
				n *= 2;
			ids->tramp = xrealloc(ids->tramp, n);
			memset(ids->tramp + ids->ntramp, 0, n - ids->ntramp);
			ids->ntramp = n;
		}
		ids->tramp[*id] = !!(cs.flags & VP_CS_TRAMPOLINE);
		vp_callsite_release(&cs);
	}
	return *id;
}

int record_has_return_probe(const struct record_probing *p, uint32_t f)
{
	return !p->exits || p->exits[f].how == VP_EXITS_URETPROBE;
}

/* Follow the kernel's count of pending return probes (see nesting.h). */
static void follow_nesting(struct record_probing *p, const struct record_ids *ids,
			   const struct vp_event *ev)
{
	if (!p->nesting || !record_has_return_probe(p, ev->func))
		return;
	if (ev->kind == VP_EV_ENTRY)
		vp_nesting_entry(p->nesting, ev->thread, ev->func, ev->sp,
				 ev->callsite < ids->ntramp && ids->tramp[ev->callsite]);
	else
		vp_nesting_exit(p->nesting, ev->thread, ev->sp);
}

/* Unwind and write what was deferred, in the order it came. */
static void flush_deferred(struct record *rec)
{
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), nsamples = 0;

	if (!rec->output.ndeferred)
		return;
	for (size_t i = 0; i < rec->output.ndeferred; i++) {
		struct vp_raw *r = &rec->output.deferred[i];

		if (r->type == VP_RAW_MMAP) {
			vp_sample_sink_mmap(rec->probing.ss, (pid_t)r->pid, r->mmap->start,
					    r->mmap->len, r->mmap->pgoff, r->mmap->path);
			free(r->mmap);
		} else if (r->type == VP_RAW_FORK) {
			vp_sample_sink_fork(rec->probing.ss, (pid_t)r->addr, (uint32_t)r->sp,
					    (pid_t)r->pid, r->tid);
		} else {
			record_write_failed(&rec->output, vp_sample_sink_write(rec->probing.ss, r, r->func));
			vp_raw_sample_free(r);
			nsamples++;
		}
	}
	rec->output.ndeferred = 0;
	rec->output.deferred_bytes = 0;
	rec->counts.unwound += nsamples;
	rec->counts.unwind_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/*
 * Once a second: what was read goes into the file, so that a varperf
 * that is killed leaves it there (the reader takes a file without its
 * END chunk, up to the last whole chunk).
 */
void record_merge_flush(struct record *rec)
{
	uint64_t now = monotonic_ns();

	if (now - rec->output.flushed_ns < (rec->phase.min_samples ? PHASE1_FLUSH_NS : FLUSH_NS))
		return;
	rec->output.flushed_ns = now;
	flush_deferred(rec);
	record_write_failed(&rec->output, vp_writer_flush(rec->output.w));
}

/* make bench reads this line: unwinding and naming on one core */
static void print_unwound(const struct record_counts *c, struct vp_sample_sink *ss)
{
	struct vp_unwind_stats us;

	if (!c->unwound || !ss)
		return;
	vp_sample_sink_stats(ss, &us);
	pr_debug("unwound %llu samples in %.3f s of CPU time: %.0f samples/s, %.1f frames each",
		 (unsigned long long)c->unwound, (double)c->unwind_ns / 1e9,
		 (double)c->unwound / ((double)c->unwind_ns / 1e9),
		 (double)us.frames / (double)c->unwound);
}

/* Queue @r (a sample or an mapping) for flush_deferred(). */
static void defer(struct record *rec, struct vp_raw *r)
{
	/* beyond this, unwind now rather than hold more */
	const size_t max_bytes = 256 << 20;

	if (r->type == VP_RAW_SAMPLE)
		r->func = thread_index(&rec->ids, &rec->output, r); /* threads are numbered as they come */
	if (rec->output.ndeferred == rec->output.deferred_cap) {
		rec->output.deferred_cap =
			rec->output.deferred_cap ? rec->output.deferred_cap * 2 : 4096;
		rec->output.deferred =
			xrealloc(rec->output.deferred,
				 rec->output.deferred_cap * sizeof(*rec->output.deferred));
	}
	rec->output.deferred[rec->output.ndeferred++] = *r;
	rec->output.deferred_bytes +=
		sizeof(*r) + (r->type == VP_RAW_SAMPLE ? r->sample->st.len : 64);
	r->mmap = NULL;
	r->sample = NULL;
	if (rec->output.deferred_bytes > max_bytes)
		flush_deferred(rec);
}

/* Drop @r (and count it) unless its process is followed. */
static int drop_foreign(struct record_counts *c, struct vp_raw *r)
{
	if (r->type == VP_RAW_MMAP)
		free(r->mmap);
	else if (r->type == VP_RAW_SAMPLE)
		vp_raw_sample_free(r);
	if (r->type != VP_RAW_MMAP)
		c->foreign++;
	return 0;
}

/*
 * The processes' side of @r, in time order: forks and execs update the
 * processes followed.  Returns whether @r is to be recorded: 0 for
 * records of processes not followed (dropped and counted).
 */
static int follow_process(struct record *rec, struct vp_raw *r)
{
	struct record_procs *ps = &rec->target.procs;
	const char *prog = rec->hdr.nmodules ? rec->hdr.modules[0].path : NULL;
	int was;

	switch (r->type) {
	case VP_RAW_LOST:
		return 1;
	case VP_RAW_FORK:
		record_procs_fork(ps, &rec->output, (uint32_t)r->addr, r->pid);
		return record_procs_followed(ps, r->pid);
	case VP_RAW_EXEC:
		record_procs_exec(ps, r->pid);
		return 1;
	case VP_RAW_MMAP:
		was = record_procs_followed(ps, r->pid);
		/* the sampler's exec (sampler.h): its mappings go, followed or not */
		if (!r->mmap->len && !strcmp(r->mmap->path, "[exec]"))
			record_procs_exec(ps, r->pid);
		else
			record_procs_mapped(ps, &rec->output, prog, r->pid, r->mmap->path);
		if (was || record_procs_followed(ps, r->pid))
			return 1;
		free(r->mmap);
		return 0;
	default:
		return record_procs_followed(ps, r->pid) || drop_foreign(&rec->counts, r);
	}
}

static void emit(struct record *rec, struct vp_raw *r)
{
	struct vp_event ev;

	if (!follow_process(rec, r))
		return;
	if (rec->output.defer && (r->type == VP_RAW_SAMPLE || r->type == VP_RAW_MMAP ||
			   r->type == VP_RAW_FORK)) {
		defer(rec, r);
		return;
	}

	switch (r->type) {
	case VP_RAW_FORK:
		if (rec->probing.ss)
			vp_sample_sink_fork(rec->probing.ss, (pid_t)r->addr, (uint32_t)r->sp,
					    (pid_t)r->pid, r->tid);
		return;
	case VP_RAW_EXEC:
		return;
	case VP_RAW_MMAP:
		/* (the call sites are the target's: its children map the same) */
		if (r->mmap->path[0] == '/' && r->pid == (uint32_t)rec->target.pid)
			vp_addrspace_mmap(rec->as, r->mmap->start, r->mmap->len, r->mmap->pgoff,
					  r->mmap->path);
		if (rec->probing.ss)
			vp_sample_sink_mmap(rec->probing.ss, (pid_t)r->pid, r->mmap->start,
					    r->mmap->len, r->mmap->pgoff, r->mmap->path);
		free(r->mmap);
		r->mmap = NULL;
		return;
	case VP_RAW_SAMPLE:
		record_write_failed(&rec->output,
				    vp_sample_sink_write(rec->probing.ss, r,
							 thread_index(&rec->ids, &rec->output, r)));
		vp_raw_sample_free(r);
		return;
	case VP_RAW_LOST:
		rec->counts.lost += r->addr;
		record_write_failed(&rec->output, vp_writer_lost(rec->output.w, r->cpu, r->addr));
		return;
	case VP_RAW_WAIT:
		if (rec->hdr.blocked)
			record_write_failed(&rec->output,
					    vp_writer_wait(rec->output.w,
							   thread_index(&rec->ids, &rec->output, r),
							   r->time, r->addr, r->func));
		return;
	default:
		break;
	}
	memset(&ev, 0, sizeof(ev));
	ev.time = r->time;
	ev.sp = r->sp;
	ev.func = r->func;
	ev.kind = r->type == VP_RAW_ENTRY ? VP_EV_ENTRY : VP_EV_EXIT;
	ev.thread = thread_index(&rec->ids, &rec->output, r);
	/* never below the thread's last one: the file's must not decrease,
	 * and the scheduler's clocks of two CPUs, which the BPF side reads as
	 * the thread migrates, may differ by a little */
	ev.offcpu = r->offcpu;
	if (ev.offcpu < vp_writer_offcpu(rec->output.w, ev.thread))
		ev.offcpu = vp_writer_offcpu(rec->output.w, ev.thread);
	if (ev.kind == VP_EV_ENTRY)
		ev.callsite = callsite_id(&rec->ids, &rec->output, rec->as, r->addr);
	if (rec->mode == MODE_COMBINED && ev.kind == VP_EV_ENTRY) {
		const struct vp_func *f = &rec->hdr.funcs[r->func];

		vp_sample_sink_entry(rec->probing.ss, (pid_t)r->pid, r->tid, r->sp, r->addr,
				     rec->hdr.modules[f->module].path,
				     rec->probing.probe_vaddr[r->func]);
	} else if (rec->mode == MODE_COMBINED) {
		vp_sample_sink_exit(rec->probing.ss, r->tid, r->sp);
	}
	pr_debug2("%s %s tid %u time %llu sp %#llx %s %#llx",
		  ev.kind == VP_EV_ENTRY ? "entry" : "exit ", rec->hdr.funcs[r->func].display,
		  r->tid, (unsigned long long)r->time, (unsigned long long)r->sp,
		  ev.kind == VP_EV_ENTRY ? "ret" : "ip", (unsigned long long)r->addr);
	follow_nesting(&rec->probing, &rec->ids, &ev);
	if (rec->phase.kept)
		rec->phase.kept[2 * r->func + (ev.kind == VP_EV_EXIT)]++;
	/* for the status line (record-status.c) */
	if (ev.kind == VP_EV_EXIT)
		rec->counts.timed++;
	else if (rec->status.cost)
		rec->counts.probe_ns += rec->status.cost[r->func];
	record_write_failed(&rec->output, vp_writer_event(rec->output.w, &ev));
}

static int cmp_raw(const void *a, const void *b)
{
	const struct vp_raw *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Whether @n records are in order already: the user backend hands a
 * thread's records in time order, and a one-thread program's round is
 * then sorted (the sort took 40 % of varperf's time at 10 M records a
 * second).  (cmp_raw is a total order: skipping the sort changes nothing.)
 */
static int sorted(const struct vp_raw *r, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (cmp_raw(&r[i - 1], &r[i]) > 0)
			return 0;
	return 1;
}

/* Where process @pid's main stack began at its exec (0: unknown), read
 * from /proc once while it is among the last few asked about. */
static uint64_t stack_start(struct record_target *t, uint32_t pid)
{
	size_t i;

	for (i = 0; i < RECORD_STACK_STARTS; i++)
		if (t->stack_starts[i].pid == pid)
			return t->stack_starts[i].start;
	i = t->next_stack_start++ % RECORD_STACK_STARTS;
	t->stack_starts[i].pid = pid;
	if (vp_proc_start_stack((pid_t)pid, &t->stack_starts[i].start) < 0)
		t->stack_starts[i].start = 0;
	return t->stack_starts[i].start;
}

/* An exec gives @pid a stack of its own. */
static void forget_stack_start(struct record_target *t, uint32_t pid)
{
	for (size_t i = 0; i < RECORD_STACK_STARTS; i++)
		if (t->stack_starts[i].pid == pid)
			t->stack_starts[i].pid = 0;
}

/*
 * Whether sample @r's stack copy, full as it is, holds every frame: a copy
 * of a main thread that reaches where its stack began at exec (startstack:
 * argv, the environment and auxv lie above, no frame).  A large
 * environment fills any copy of the default size, and the frames are all
 * in it all the same; so in the children forked, which share the stack.
 */
static int copy_has_all_frames(struct record_target *t, const struct vp_raw *r)
{
	const struct vp_ustack *st = &r->sample->st;
	uint64_t start;

	if (r->tid != r->pid)
		return 0;
	start = stack_start(t, r->pid);
	return start && st->regs[VP_UREG_SP] + st->len >= start;
}

static void push_pending(struct record_output *out, const struct vp_raw *r)
{
	if (out->npending == out->pending_cap) {
		out->pending_cap = out->pending_cap ? out->pending_cap * 2 : 4096;
		out->pending = xrealloc(out->pending, out->pending_cap * sizeof(*out->pending));
	}
	out->pending[out->npending] = *r;
	out->pending[out->npending++].seq = out->seq++;
}

/* Queue a decoded record of a process followed (or maybe followed, see
 * below); drop (and count) anyone else's. */
static void take(struct record *rec, struct vp_raw *r)
{
	int ours = r->pid == (uint32_t)rec->target.pid ||
		   record_procs_followed(&rec->target.procs, r->pid);

	/*
	 * Other processes run the probed code too (perf's pid = -1), and the
	 * sampling events follow children.  Whether a child is followed is
	 * known once its fork record is emitted, in time order: until then
	 * its records wait with the others.  Not following, they go now.
	 */
	if (!ours && !rec->target.procs.follow && r->type != VP_RAW_LOST &&
	    r->type != VP_RAW_FORK && r->type != VP_RAW_EXEC) {
		drop_foreign(&rec->counts, r);
		return;
	}
	push_pending(&rec->output, r);
	if (r->type == VP_RAW_EXEC)
		forget_stack_start(&rec->target, r->pid);
	if (ours && r->type == VP_RAW_SAMPLE) {
		const struct vp_ustack *st = &r->sample->st;

		rec->counts.nsamples++;
		/* the copy held no more: the stack went on beyond it */
		rec->counts.full_stacks +=
			st->size && st->len >= st->size && !copy_has_all_frames(&rec->target, r);
	}
	/* (on BPF the kernel counts them: count_calls()) */
	if (ours && r->type == VP_RAW_ENTRY && rec->phase.calls && !rec->probing.bpf_on)
		rec->phase.calls[r->func]++;
	if (r->type == VP_RAW_ENTRY && (r->flags & VP_RAW_F_EXITS_TOO)) {
		/* The probed instruction is the function's ret or tail-call
		 * jmp: it leaves as soon as it entered. */
		r->type = VP_RAW_EXIT;
		r->sp = r->sp ? r->sp + 8 : 0;
		r->addr = 0;
		push_pending(&rec->output, r);
	}
}

static void take_bpf(void *ctx, struct vp_raw *r)
{
	take(ctx, r);
}

static void drain_ring(struct record *rec, struct vp_ring *ring)
{
	const struct perf_event_header *h;

	vp_ring_begin(ring);
	while ((h = vp_ring_next(ring))) {
		struct vp_raw r;
		int got = 0;

		if (rec->probing.sampler.nfds)
			got = vp_sampler_decode(&rec->probing.sampler, h, ring->cpu, &r);
		if (!got && rec->probing.probes.nfds)
			got = vp_probes_decode(&rec->probing.probes, h, ring->cpu, &r);
		if (got)
			take(rec, &r);
	}
	vp_ring_end(ring);
}

void record_merge_read(struct record *rec)
{
	for (int c = 0; c < rec->probing.nrings; c++)
		drain_ring(rec, &rec->probing.rings[c]);
	if (rec->probing.bpf_on)
		vp_bpf_probes_read(&rec->probing.bpf, take_bpf, rec);
	record_user_read(rec, take_bpf);
}

/*
 * A record read in a later round was written after this round started, so
 * its time exceeds every time seen before this round (perf's "finished
 * round" rule).
 */
void record_merge_round(struct record *rec, int all)
{
	uint64_t limit = rec->output.max_seen;
	size_t i;

	/* auto mode on BPF: the last HOLD_NS stay, for a drop to leave out */
	if (rec->phase.hold_ns) {
		uint64_t held = monotonic_ns() - rec->phase.hold_ns;

		if (held < limit)
			limit = held;
	}
	record_merge_read(rec);
	if (rec->phase.holding && !all)
		return;
	if (!sorted(rec->output.pending, rec->output.npending))
		qsort(rec->output.pending, rec->output.npending, sizeof(*rec->output.pending),
		      cmp_raw);
	if (rec->output.npending &&
	    rec->output.pending[rec->output.npending - 1].time > rec->output.max_seen)
		rec->output.max_seen = rec->output.pending[rec->output.npending - 1].time;
	for (i = 0; i < rec->output.npending && (all || rec->output.pending[i].time <= limit); i++)
		emit(rec, &rec->output.pending[i]);
	memmove(rec->output.pending, rec->output.pending + i,
		(rec->output.npending - i) * sizeof(*rec->output.pending));
	rec->output.npending -= i;
}

/* (auto mode: probes found too costly were on until then) */
uint64_t record_merge_discard_before(struct record *rec, uint64_t t)
{
	uint64_t n = 0, first = t;
	size_t k = 0;

	record_merge_read(rec);
	for (size_t i = 0; i < rec->output.npending; i++) {
		struct vp_raw *r = &rec->output.pending[i];

		if ((r->type == VP_RAW_ENTRY || r->type == VP_RAW_EXIT) && r->time < t) {
			if (r->time < first)
				first = r->time;
			n++;
			continue;
		}
		rec->output.pending[k++] = *r;
	}
	rec->output.npending = k;
	pr_debug("phase 2: %llu records before the probes settled left out",
		 (unsigned long long)n);
	return first;
}

/*
 * Records the kernel dropped when a buffer was full are announced by a
 * LOST record once there is room again - never, if the target is gone by
 * then.  The probes' own counts of hits tell: what no record stands for
 * was lost.  (Both kinds of count overlap; the larger is the one.)
 */
static void count_unseen(struct record *rec)
{
	uint64_t unseen = rec->probing.probes.nfds ? vp_probes_unseen(&rec->probing.probes) : 0;

	if (rec->probing.user)
		return record_user_count_lost(rec);
	if (rec->probing.bpf_on) {
		/* the BPF programs count what found no room, exactly */
		uint64_t lost = vp_bpf_probes_lost(&rec->probing.bpf);
		uint64_t waits = vp_bpf_probes_lost_waits(&rec->probing.bpf);

		if (waits)
			warning("%llu sleeps of the target's threads found the BPF ring buffer "
				"full: their time reads as preempted, not blocked (a larger "
				"--buffer-size keeps them)",
				(unsigned long long)waits);
		if (lost) {
			rec->counts.lost += lost;
			record_write_failed(&rec->output, vp_writer_lost(rec->output.w, 0, lost));
		}
		return;
	}

	if (unseen > rec->counts.lost) {
		pr_debug("%llu probe hits have no record; LOST records said %llu",
			 (unsigned long long)unseen, (unsigned long long)rec->counts.lost);
		rec->counts.lost = unseen;
	}
}

/* Drop the samples in @v (n of them) not yet written; keep the rest. */
static size_t drop_samples(struct vp_raw *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i].type == VP_RAW_SAMPLE)
			vp_raw_sample_free(&v[i]);
		else
			v[k++] = v[i];
	}
	return k;
}

void record_merge_drop_samples(struct record_output *out)
{
	out->npending = drop_samples(out->pending, out->npending);
	out->ndeferred = drop_samples(out->deferred, out->ndeferred);
	out->deferred_bytes = out->ndeferred * (sizeof(struct vp_raw) + 64); /* mappings */
}

void record_merge_finish(struct record *rec)
{
	flush_deferred(rec);
	print_unwound(&rec->counts, rec->probing.ss);
	count_unseen(rec);
}

/* Free what @v (n records) still holds. */
static void free_raws(struct vp_raw *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].type == VP_RAW_MMAP)
			free(v[i].mmap);
		else if (v[i].type == VP_RAW_SAMPLE)
			vp_raw_sample_free(&v[i]);
	}
	free(v);
}

void record_merge_release(struct record_output *out, struct record_ids *ids)
{
	free_raws(out->pending, out->npending);
	free_raws(out->deferred, out->ndeferred);
	idmap_release(&ids->threads);
	idmap_release(&ids->callsites);
	free(ids->tramp);
}
