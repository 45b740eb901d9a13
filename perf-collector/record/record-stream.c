/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-stream.c - "varperf record" while the target runs: starting or
 * attaching to it, reading the per-CPU buffers, merging their records by
 * time and writing them (events, samples unwound, mappings), signals,
 * auto mode's phase 2 kept within its budget (plan.c decides, this file
 * applies), the end of the recording and its summary.  It never calls the
 * driver (record-auto.c): see record.h.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/probes/calibrate.h"
#include "perf-collector/record/record.h"
#include "util/util.h"

enum {
	POLL_MS = 50,
	/* auto mode's first look comes sooner: a probe too costly for the
	 * budget costs the target all the while */
	POLL_MS_HOLDING = 5,
	/* how long a sampling run waits for an earlier one's probes to go */
	UNPROBE_WAIT_MS = 10000,
};

/*
 * Auto mode on BPF: how long records wait before they are written, so
 * that when a probe turns out too costly what it stretched can be left
 * out (the watchdog looks every round, 50 ms).
 */
static const uint64_t HOLD_NS = 200000000ULL;

/*
 * How often what was read goes into the file (samples unwound, the chunk
 * written): what a varperf killed with SIGKILL, or by the OOM killer,
 * loses at most.  Unwinding a second of samples at 1 kHz takes some 2 ms.
 */
static const uint64_t FLUSH_NS = 1000000000ULL;

/* --duration with a program: how long it may take to stop after SIGINT */
static const uint64_t GRACE_NS = 5000000000ULL;

volatile sig_atomic_t record_signal, record_nsignals;

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
		die("out of memory (numbering threads and call sites)");
	*found = !ret;
	m->n = m->tab.n;
	return &((struct idmap_ent *)e)->val;
}

static void idmap_release(struct idmap *m)
{
	vp_hashtab_release(&m->tab);
	memset(m, 0, sizeof(*m));
}

/* Each probe is one file descriptor per CPU. */
static int raise_nofile(size_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	need += 64; /* stdio, ELF files, pipes */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
		rl.rlim_max = need; /* needs CAP_SYS_RESOURCE */
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return error("cannot raise the open file limit to %zu for %zu probe events: %s "
			     "(probe fewer functions or raise 'ulimit -n')", need, need - 64,
			     strerror(errno));
	return 0;
}

static uint32_t thread_index(struct record *rec, const struct vp_raw *r)
{
	int found;
	uint32_t *idx = idmap_slot(&rec->threads, r->tid, &found);

	if (!found) {
		*idx = rec->thread_base + (uint32_t)(rec->threads.n - 1);
		record_write_failed(rec, vp_writer_thread(rec->w, *idx, r->tid, r->pid));
	}
	return *idx;
}

static uint32_t callsite_id(struct record *rec, uint64_t addr)
{
	int found;
	uint32_t *id = idmap_slot(&rec->callsites, addr, &found);
	struct vp_callsite cs;

	if (!found) {
		*id = (uint32_t)(rec->callsites.n - 1);
		vp_addrspace_callsite(rec->as, addr, &cs);
		pr_debug("call site %u: %#llx -> module %d %#llx %s %s:%u", *id,
			 (unsigned long long)addr, cs.module, (unsigned long long)cs.offset,
			 cs.caller, cs.file, cs.line);
		record_write_failed(rec, vp_writer_callsite(rec->w, *id, &cs));
		if (*id >= rec->ntramp) {
			size_t n = rec->ntramp ? rec->ntramp * 2 : 64;

			while (n <= *id)
				n *= 2;
			rec->tramp = xrealloc(rec->tramp, n);
			memset(rec->tramp + rec->ntramp, 0, n - rec->ntramp);
			rec->ntramp = n;
		}
		rec->tramp[*id] = !!(cs.flags & VP_CS_TRAMPOLINE);
		vp_callsite_release(&cs);
	}
	return *id;
}

/* Whether function @f's exits are return probes. */
static int has_return_probe(const struct record *rec, uint32_t f)
{
	return !rec->probing.exits || rec->probing.exits[f].how == VP_EXITS_URETPROBE;
}

/* Follow the kernel's count of pending return probes (see nesting.h). */
static void follow_nesting(struct record *rec, const struct vp_event *ev)
{
	if (!rec->probing.nesting || !has_return_probe(rec, ev->func))
		return;
	if (ev->kind == VP_EV_ENTRY)
		vp_nesting_entry(rec->probing.nesting, ev->thread, ev->func, ev->sp,
				 ev->callsite < rec->ntramp && rec->tramp[ev->callsite]);
	else
		vp_nesting_exit(rec->probing.nesting, ev->thread, ev->sp);
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
			record_write_failed(rec, vp_sample_sink_write(rec->probing.ss, r, r->func));
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
static void flush_file(struct record *rec)
{
	uint64_t now = monotonic_ns();

	if (now - rec->output.flushed_ns < FLUSH_NS)
		return;
	rec->output.flushed_ns = now;
	flush_deferred(rec);
	record_write_failed(rec, vp_writer_flush(rec->w));
}

/* make bench reads this line: unwinding and naming on one core */
static void print_unwound(struct record *rec)
{
	struct vp_unwind_stats us;

	if (!rec->counts.unwound || !rec->probing.ss)
		return;
	vp_sample_sink_stats(rec->probing.ss, &us);
	pr_debug("unwound %llu samples in %.3f s of CPU time: %.0f samples/s, %.1f frames each",
		 (unsigned long long)rec->counts.unwound, (double)rec->counts.unwind_ns / 1e9,
		 (double)rec->counts.unwound / ((double)rec->counts.unwind_ns / 1e9),
		 (double)us.frames / (double)rec->counts.unwound);
}

/* Queue @r (a sample or an mapping) for flush_deferred(). */
static void defer(struct record *rec, struct vp_raw *r)
{
	/* beyond this, unwind now rather than hold more */
	const size_t max_bytes = 256 << 20;

	if (r->type == VP_RAW_SAMPLE)
		r->func = thread_index(rec, r); /* threads are numbered as they come */
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
static int drop_foreign(struct record *rec, struct vp_raw *r)
{
	if (r->type == VP_RAW_MMAP)
		free(r->mmap);
	else if (r->type == VP_RAW_SAMPLE)
		vp_raw_sample_free(r);
	if (r->type != VP_RAW_MMAP)
		rec->counts.foreign++;
	return 0;
}

/*
 * The processes' side of @r, in time order: forks and execs update the
 * processes followed.  Returns whether @r is to be recorded: 0 for
 * records of processes not followed (dropped and counted).
 */
static int follow_process(struct record *rec, struct vp_raw *r)
{
	int was;

	switch (r->type) {
	case VP_RAW_LOST:
		return 1;
	case VP_RAW_FORK:
		record_procs_fork(rec, (uint32_t)r->addr, r->pid);
		return record_procs_followed(rec, r->pid);
	case VP_RAW_EXEC:
		record_procs_exec(rec, r->pid);
		return 1;
	case VP_RAW_MMAP:
		was = record_procs_followed(rec, r->pid);
		/* the sampler's exec (sampler.h): its mappings go, followed or not */
		if (!r->mmap->len && !strcmp(r->mmap->path, "[exec]"))
			record_procs_exec(rec, r->pid);
		else
			record_procs_mapped(rec, r->pid, r->mmap->path);
		if (was || record_procs_followed(rec, r->pid))
			return 1;
		free(r->mmap);
		return 0;
	default:
		return record_procs_followed(rec, r->pid) || drop_foreign(rec, r);
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
		record_write_failed(rec,
				    vp_sample_sink_write(rec->probing.ss, r, thread_index(rec, r)));
		vp_raw_sample_free(r);
		return;
	case VP_RAW_LOST:
		rec->counts.lost += r->addr;
		record_write_failed(rec, vp_writer_lost(rec->w, r->cpu, r->addr));
		return;
	default:
		break;
	}
	memset(&ev, 0, sizeof(ev));
	ev.time = r->time;
	ev.sp = r->sp;
	ev.func = r->func;
	ev.kind = r->type == VP_RAW_ENTRY ? VP_EV_ENTRY : VP_EV_EXIT;
	ev.thread = thread_index(rec, r);
	/* never below the thread's last one: the file's must not decrease,
	 * and the scheduler's clocks of two CPUs, which the BPF side reads as
	 * the thread migrates, may differ by a little */
	ev.offcpu = r->offcpu;
	if (ev.offcpu < vp_writer_offcpu(rec->w, ev.thread))
		ev.offcpu = vp_writer_offcpu(rec->w, ev.thread);
	if (ev.kind == VP_EV_ENTRY)
		ev.callsite = callsite_id(rec, r->addr);
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
	follow_nesting(rec, &ev);
	if (rec->phase.kept)
		rec->phase.kept[2 * r->func + (ev.kind == VP_EV_EXIT)]++;
	record_write_failed(rec, vp_writer_event(rec->w, &ev));
}

static int cmp_raw(const void *a, const void *b)
{
	const struct vp_raw *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Where process @pid's main stack began at its exec (0: unknown), read
 * from /proc once while it is among the last few asked about. */
static uint64_t stack_start(struct record *rec, uint32_t pid)
{
	size_t i;

	for (i = 0; i < RECORD_STACK_STARTS; i++)
		if (rec->target.stack_starts[i].pid == pid)
			return rec->target.stack_starts[i].start;
	i = rec->target.next_stack_start++ % RECORD_STACK_STARTS;
	rec->target.stack_starts[i].pid = pid;
	if (vp_proc_start_stack((pid_t)pid, &rec->target.stack_starts[i].start) < 0)
		rec->target.stack_starts[i].start = 0;
	return rec->target.stack_starts[i].start;
}

/* An exec gives @pid a stack of its own. */
static void forget_stack_start(struct record *rec, uint32_t pid)
{
	for (size_t i = 0; i < RECORD_STACK_STARTS; i++)
		if (rec->target.stack_starts[i].pid == pid)
			rec->target.stack_starts[i].pid = 0;
}

/*
 * Whether sample @r's stack copy, full as it is, holds every frame: a copy
 * of a main thread that reaches where its stack began at exec (startstack:
 * argv, the environment and auxv lie above, no frame).  A large
 * environment fills any copy of the default size, and the frames are all
 * in it all the same; so in the children forked, which share the stack.
 */
static int copy_has_all_frames(struct record *rec, const struct vp_raw *r)
{
	const struct vp_ustack *st = &r->sample->st;
	uint64_t start;

	if (r->tid != r->pid)
		return 0;
	start = stack_start(rec, r->pid);
	return start && st->regs[VP_UREG_SP] + st->len >= start;
}

static void push_pending(struct record *rec, const struct vp_raw *r)
{
	if (rec->output.npending == rec->output.pending_cap) {
		rec->output.pending_cap =
			rec->output.pending_cap ? rec->output.pending_cap * 2 : 4096;
		rec->output.pending =
			xrealloc(rec->output.pending,
				 rec->output.pending_cap * sizeof(*rec->output.pending));
	}
	rec->output.pending[rec->output.npending] = *r;
	rec->output.pending[rec->output.npending++].seq = rec->output.seq++;
}

/* Queue a decoded record of a process followed (or maybe followed, see
 * below); drop (and count) anyone else's. */
static void take(struct record *rec, struct vp_raw *r)
{
	int ours = r->pid == (uint32_t)rec->target.pid || record_procs_followed(rec, r->pid);

	/*
	 * Other processes run the probed code too (perf's pid = -1), and the
	 * sampling events follow children.  Whether a child is followed is
	 * known once its fork record is emitted, in time order: until then
	 * its records wait with the others.  Not following, they go now.
	 */
	if (!ours && !rec->target.procs.follow && r->type != VP_RAW_LOST &&
	    r->type != VP_RAW_FORK && r->type != VP_RAW_EXEC) {
		drop_foreign(rec, r);
		return;
	}
	push_pending(rec, r);
	if (r->type == VP_RAW_EXEC)
		forget_stack_start(rec, r->pid);
	if (ours && r->type == VP_RAW_SAMPLE) {
		const struct vp_ustack *st = &r->sample->st;

		rec->counts.nsamples++;
		/* the copy held no more: the stack went on beyond it */
		rec->counts.full_stacks +=
			st->size && st->len >= st->size && !copy_has_all_frames(rec, r);
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
		push_pending(rec, r);
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

/*
 * One round: read every CPU's buffer, sort what is pending by time, and
 * write out what can no longer be preceded by a record still unread: a
 * record read in a later round was written after this round started, so
 * its time exceeds every time seen before this round (perf's "finished
 * round" rule).  @all writes everything (the target is gone).
 */
/* Queue what every buffer holds: each CPU's perf ring, the BPF ring. */
static void read_buffers(struct record *rec)
{
	for (int c = 0; c < rec->probing.nrings; c++)
		drain_ring(rec, &rec->probing.rings[c]);
	if (rec->probing.bpf_on)
		vp_bpf_probes_read(&rec->probing.bpf, take_bpf, rec);
	record_user_read(rec, take_bpf);
}

static void round_trip(struct record *rec, int all)
{
	uint64_t limit = rec->output.max_seen;
	size_t i;

	/* auto mode on BPF: the last HOLD_NS stay, for a drop to leave out */
	if (rec->phase.hold_ns) {
		uint64_t held = monotonic_ns() - rec->phase.hold_ns;

		if (held < limit)
			limit = held;
	}
	read_buffers(rec);
	if (rec->phase.holding && !all)
		return;
	qsort(rec->output.pending, rec->output.npending, sizeof(*rec->output.pending), cmp_raw);
	if (rec->output.npending &&
	    rec->output.pending[rec->output.npending - 1].time > rec->output.max_seen)
		rec->output.max_seen = rec->output.pending[rec->output.npending - 1].time;
	for (i = 0; i < rec->output.npending && (all || rec->output.pending[i].time <= limit); i++)
		emit(rec, &rec->output.pending[i]);
	memmove(rec->output.pending, rec->output.pending + i,
		(rec->output.npending - i) * sizeof(*rec->output.pending));
	rec->output.npending -= i;
}

/* Read what the buffers hold and drop the entries and exits held back
 * from before @t (auto mode: probes found too costly were on until then);
 * returns the earliest time dropped (@t if none). */
static uint64_t discard_before(struct record *rec, uint64_t t)
{
	uint64_t n = 0, first = t;
	size_t k = 0;

	read_buffers(rec);
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

static void on_signal(int sig)
{
	record_signal = sig;
	record_nsignals++;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll() returns at once with EINTR. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a closed terminal must not lose what was recorded either */
	sigaction(SIGHUP, &sa, NULL);
}

/* Forward the first SIGINT/SIGTERM; kill the target on the next one. */
static void forward_signals(struct record *rec, int *forwarded)
{
	if (record_nsignals > *forwarded) {
		kill(rec->target.pid, *forwarded ? SIGKILL : record_signal);
		pr_debug("sent signal %d to %d", *forwarded ? SIGKILL : (int)record_signal,
			 (int)rec->target.pid);
		*forwarded = (int)record_nsignals;
	}
}

/* User and system CPU time of @ru in ns. */
static uint64_t rusage_ns(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000ULL;
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

		if (lost) {
			rec->counts.lost += lost;
			record_write_failed(rec, vp_writer_lost(rec->w, 0, lost));
		}
		return;
	}

	if (unseen > rec->counts.lost) {
		pr_debug("%llu probe hits have no record; LOST records said %llu",
			 (unsigned long long)unseen, (unsigned long long)rec->counts.lost);
		rec->counts.lost = unseen;
	}
}

/* Stop every event: nothing new arrives after the final round. */
static void disable_events(struct record *rec)
{
	if (rec->probing.sampler.nfds)
		vp_sampler_disable(&rec->probing.sampler);
	for (size_t i = 0; i < rec->probing.probes.nfds; i++)
		ioctl(rec->probing.probes.fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (rec->probing.bpf_on)
		vp_bpf_probes_stop(&rec->probing.bpf);
	record_user_stop(rec);
}

/* The target's CPU time since the recording began, as far as known, and
 * that of the children it followed (the probes cost them too). */
static void update_cpu(struct record *rec)
{
	uint64_t cpu = record_process_cpu_ns(rec->target.pid);

	/* a parent that only waits for its children spends no CPU time of
	 * its own: theirs counts all the same */
	cpu = (cpu > rec->target.start_cpu ? cpu - rec->target.start_cpu : 0) +
	      record_procs_cpu(rec);
	if (cpu > rec->target.cpu)
		rec->target.cpu = cpu;
}

/*
 * Auto mode, phase 2: what the probes cost is measured, and plan.c judges
 * it against the budget (vp_plan_over_budget()); here its verdict is
 * applied.  Calls of the functions no longer probed stay in the file
 * until then, marked as partial.
 */

/*
 * On the BPF backend the kernel counts every entry, recorded or not (a
 * full buffer, a record not read yet): the calls are those counts.
 */
static void count_calls(struct record *rec)
{
	for (uint32_t f = 0; rec->probing.bpf_on && f < rec->hdr.nfuncs; f++)
		rec->phase.calls[f] = vp_bpf_probes_hits(&rec->probing.bpf, f);
}

/* What the probes cost so far, for plan.c to judge (@dropped: see vp_plan_spend). */
static void spend_of(const struct record *rec, double cpu, const unsigned char *dropped,
		     struct vp_plan_spend *s)
{
	s->funcs = rec->hdr.funcs;
	s->nfuncs = rec->hdr.nfuncs;
	s->costs = rec->hdr.costs;
	s->ncosts = rec->hdr.ncosts;
	s->calls = rec->phase.calls;
	s->dropped = dropped;
	s->cpu_ns = cpu;
	s->overhead = rec->opts.overhead;
}

/* Stop probing the functions of @v (plan.c's verdict): all at once, one new
 * generation of links on BPF. */
static void drop_probes(struct record *rec, const struct vp_plan_verdict *v, double cpu,
			uint64_t now)
{
	unsigned char *drop = xcalloc(rec->hdr.nfuncs, 1);
	char a[32];

	for (size_t i = 0; i < v->ndrop; i++) {
		const struct vp_plan_drop *d = &v->drop[i];

		if (!rec->probing.bpf_on)
			vp_probes_drop(&rec->probing.probes, d->func);
		drop[d->func] = 1;
		rec->phase.dropped[d->func] = 1;
		record_write_failed(rec, vp_writer_unprobed(rec->w, d->func, now));
		warning("phase 2: stopped probing '%s' after %llu calls in %s: its probes took "
			"%.1f%% of the target's CPU time, all probes %.1f%%, over the %g%% budget "
			"(calls shorter than the sampling period cannot be counted from samples)",
			rec->hdr.funcs[d->func].display,
			(unsigned long long)rec->phase.calls[d->func],
			fmt_duration((double)(now - rec->target.start_ns), a, sizeof(a)),
			d->cost_ns / cpu * 100, d->total_ns / cpu * 100, rec->opts.overhead * 100);
	}
	if (v->ndrop && rec->probing.bpf_on) {
		uint64_t t0 = monotonic_ns();

		if (vp_bpf_probes_drop(&rec->probing.bpf, drop, 1) < 0)
			warning("phase 2: the probes over the budget stay: new links failed");
		pr_debug("phase 2: links replaced in %.1f ms",
			 (double)(monotonic_ns() - t0) / 1e6);
	}
	free(drop);
}

/*
 * The first look decides what was held back: every call, if the probes
 * fit the budget; if not, nothing from before the costly ones were gone -
 * those probes stretched every call around theirs, and the report would
 * show their cost as the program's variance.
 */
static void discard_stretched(struct record *rec)
{
	uint64_t t = monotonic_ns(), from;
	char a[32], b[32];

	if (rec->phase.holding) {
		discard_before(rec, t);
		if (!rec->opts.quiet)
			info("phase 2: the calls of its first %s are left out: their times hold "
			     "the cost of the probes removed then",
			     fmt_duration((double)(t - rec->target.start_ns), a, sizeof(a)));
		return;
	}
	/* later: what the last rounds held back, since before the look */
	from = discard_before(rec, t);
	if (from < rec->target.start_ns)
		from = rec->target.start_ns;
	if (!rec->opts.quiet)
		info("phase 2: the calls from %s to %s are left out: their times hold the "
		     "cost of the probes removed then",
		     fmt_duration((double)(from - rec->target.start_ns), a, sizeof(a)),
		     fmt_duration((double)(t - rec->target.start_ns), b, sizeof(b)));
}

/* Phase 2, every round: stop probing what costs more than the budget. */
static void watchdog(struct record *rec)
{
	uint64_t now = monotonic_ns();
	struct vp_plan_spend s;
	struct vp_plan_verdict v;
	double cpu;

	/*
	 * perf_event uprobes: every 40 ms, from 300 ms on: the first calls of
	 * a process cost more, and a rate needs a few rounds to settle; and
	 * removing a probe takes the kernel a while.  BPF links: from 10 ms
	 * of the target's CPU time on, every round - the counts are exact and
	 * new links replace the old ones in milliseconds.
	 */
	if (rec->probing.bpf_on) {
		update_cpu(rec);
		/* 10 ms of CPU give thousands of calls of anything too costly
		 * (an idle target: its calls are counted after 200 ms anyway) */
		if (rec->target.cpu < 10000000 && now - rec->target.start_ns < 200000000)
			return;
	} else if (now - (rec->phase.watched_ns ? rec->phase.watched_ns : rec->target.start_ns) <
		   40000000 || now - rec->target.start_ns < 300000000) {
		return;
	}
	rec->phase.watched_ns = now;
	update_cpu(rec);
	count_calls(rec);
	/* the wall time when the CPU time cannot be read */
	cpu = (double)(rec->target.cpu ? rec->target.cpu : now - rec->target.start_ns);
	spend_of(rec, cpu, rec->phase.dropped, &s);
	vp_plan_over_budget(&s, &v);
	pr_debug("watchdog: %.0f ms, CPU %.1f ms, probes still in place cost %.1f ms, budget "
		 "%.1f ms", (double)(now - rec->target.start_ns) / 1e6, cpu / 1e6, v.cost_ns / 1e6,
		 v.budget_ns / 1e6);
	if (v.over) {
		drop_probes(rec, &v, cpu, now);
		if (v.ndrop && (rec->phase.holding || rec->phase.hold_ns))
			discard_stretched(rec);
	}
	rec->phase.holding = 0;
	vp_plan_verdict_release(&v);
}

/* Phase 2, at the end: what the probes cost in all, measured, into the
 * trailer (and VP_END_OVER_BUDGET). */
static void account_cost(struct record *rec, struct vp_trailer *tr)
{
	struct vp_plan_spend s;
	struct vp_plan_verdict v;

	if (!rec->phase.calls || !rec->target.cpu)
		return;
	count_calls(rec);
	spend_of(rec, (double)rec->target.cpu, NULL, &s);
	vp_plan_over_budget(&s, &v);
	tr->probe_cost_ns = (uint64_t)v.cost_ns;
	tr->target_cpu_ns = rec->target.cpu;
	tr->budget_ppm = (uint32_t)(rec->opts.overhead * 1e6 + 0.5);
	if (v.over)
		tr->flags |= VP_END_OVER_BUDGET;
	vp_plan_verdict_release(&v);
}

/* ... and for the user: over the budget, a warning (report repeats it). */
static void print_measured_cost(const struct record *rec, const struct vp_trailer *tr)
{
	double share;

	if (!tr->target_cpu_ns || !tr->budget_ppm)
		return;
	share = (double)tr->probe_cost_ns / (double)tr->target_cpu_ns * 100;
	if (tr->flags & VP_END_OVER_BUDGET)
		warning("phase 2: the probes cost about %.1f%% of the target's CPU time, over the "
			"%g%% budget: the run took that much longer than the program alone", share,
			rec->opts.overhead * 100);
	else if (!rec->opts.quiet)
		info("phase 2: the probes cost about %.1f%% of the target's CPU time (%g%% budget)",
		     share, rec->opts.overhead * 100);
}

/*
 * ... and the functions still probed that were called, but of which no
 * call reached the file whole: they came while costlier probes were on
 * (left out with them), or were under way at the end.  The report would
 * have no node of theirs, and the user would not know why.
 */
static void print_unkept(struct record *rec)
{
	size_t n = 0, first = 0;
	char *what;
	int one;

	if (!rec->phase.kept)
		return;
	count_calls(rec);
	/* no entry kept, or no exit: no call had both (an exit kept whose
	 * entry was left out is no whole call) */
	for (size_t f = 0; f < rec->hdr.nfuncs; f++)
		if (!rec->phase.dropped[f] && rec->phase.calls[f] &&
		    !(rec->phase.kept[2 * f] && rec->phase.kept[2 * f + 1]) && !n++)
			first = f;
	if (!n)
		return;
	one = n == 1 && rec->phase.calls[first] == 1;
	if (one)
		what = xasprintf("the one call of '%s' was not", rec->hdr.funcs[first].display);
	else if (n == 1)
		what = xasprintf("none of the %llu calls of '%s' was",
				 (unsigned long long)rec->phase.calls[first],
				 rec->hdr.funcs[first].display);
	else
		what = xasprintf("none of the calls of '%s' and %zu other function%s was",
				 rec->hdr.funcs[first].display, n - 1, n == 2 ? "" : "s");
	warning("phase 2: %s recorded whole: %s came while costlier probes were on, and %s left "
		"out with them, or %s under way at the end; record a longer run, or use "
		"--mode=probe",
		what, one ? "it" : "they", one ? "was" : "were", one ? "was" : "were");
	free(what);
}

/* Attached: whether to stop now (signal, --duration, the process exited). */
static int attach_done(struct record *rec, const struct pollfd *pidfd, uint64_t deadline,
		       int *flags)
{
	uint64_t now = monotonic_ns();

	if (record_nsignals) {
		*flags |= VP_END_INTERRUPTED;
		return 1;
	}
	/* auto, phase 1: the file cannot take it whole, no phase 2 follows */
	if (rec->phase.min_samples && rec->output.write_err)
		return 1;
	/* auto, phase 1: an idle process has shown nothing to plan from yet */
	if (deadline && now >= deadline && rec->counts.nsamples < rec->phase.min_samples &&
	    (!rec->phase.until_ns || now < rec->phase.until_ns)) {
		if (!rec->phase.waiting_said && (!rec->opts.quiet || rec->phase.announce))
			info("phase 1: %llu samples so far: sampling until there are %llu",
			     (unsigned long long)rec->counts.nsamples,
			     (unsigned long long)rec->phase.min_samples);
		rec->phase.waiting_said = 1;
	} else if (deadline && now >= deadline) {
		return 1;
	}
	if ((pidfd->fd >= 0 && (pidfd->revents & POLLIN)) ||
	    (kill(rec->target.pid, 0) < 0 && errno == ESRCH)) {
		rec->target.gone = 1;
		return 1;
	}
	return 0;
}

/*
 * Auto mode, phase 1 of a program in one run: enough seen to plan, once
 * the window is over and there are samples enough (or far past it).
 */
static int phase1_window_over(struct record *rec)
{
	uint64_t now = monotonic_ns();

	if (!rec->phase.window_ns)
		return 0;
	/* the file cannot take phase 1 whole: no phase 2 will follow */
	if (rec->output.write_err)
		return 1;
	if (now < rec->target.start_ns + rec->phase.window_ns)
		return 0;
	return rec->counts.nsamples >= rec->phase.min_samples ||
	       (rec->phase.until_ns && now >= rec->phase.until_ns);
}

/*
 * Read the buffers until the end: the target's exit, or attached, a
 * signal to varperf, --duration or the process's exit.  Returns END flags.
 */
static int wait_and_read(struct record *rec, int *status)
{
	size_t n = (size_t)rec->probing.nrings + 2;
	struct pollfd *pfd = xcalloc(n, sizeof(*pfd));
	uint64_t deadline = 0;
	int forwarded = 0, flags = 0, timed_out = 0;
	struct rusage ru;
	pid_t r;

	if (rec->opts.duration > 0)
		deadline = rec->target.start_ns + (uint64_t)(rec->opts.duration * 1e9);
	for (int c = 0; c < rec->probing.nrings; c++) {
		pfd[c].fd = rec->probing.rings[c].fd;
		pfd[c].events = POLLIN;
	}
	pfd[n - 2].fd = rec->probing.bpf_on ? vp_bpf_probes_fd(&rec->probing.bpf) : -1;
	pfd[n - 2].events = POLLIN;
	pfd[n - 1].fd = rec->target.pidfd > 0 ? rec->target.pidfd : -1;
	pfd[n - 1].events = POLLIN;
	for (;;) {
		/* A hung-up buffer (its task gone) would make poll() spin. */
		for (int c = 0; c < rec->probing.nrings; c++)
			if (pfd[c].revents & (POLLHUP | POLLERR))
				pfd[c].fd = -1;
		/* (the user backend's rings fill in tens of ms: no fd says so) */
		if (poll(pfd, (nfds_t)n,
			 rec->phase.holding || rec->probing.user ? POLL_MS_HOLDING : POLL_MS) < 0 &&
		    errno != EINTR)
			warning("poll failed: %s", strerror(errno));
		if (rec->opts.attach && !rec->target.child) {
			if (attach_done(rec, &pfd[n - 1], deadline, &flags))
				break;
		} else {
			forward_signals(rec, &forwarded);
			if (deadline && !timed_out && monotonic_ns() >= deadline) {
				/* --duration with a program: as if Ctrl-C */
				kill(rec->target.pid, SIGINT);
				timed_out = 1;
			} else if (timed_out == 1 && monotonic_ns() >= deadline + GRACE_NS) {
				warning("'%s' did not stop within %d s of SIGINT: killing it",
					rec->target.prog, (int)(GRACE_NS / 1000000000));
				kill(rec->target.pid, SIGKILL);
				timed_out = 2;
			}
			r = wait4(rec->target.pid, status, WNOHANG, &ru);
			if (r == rec->target.pid || (r < 0 && errno == ECHILD)) {
				if (r == rec->target.pid)
					rec->target.cpu = rusage_ns(&ru) - rec->target.start_cpu;
				rec->target.gone = 1;
				break;
			}
			if (phase1_window_over(rec)) {
				rec->target.left_running = 1;
				break;
			}
		}
		round_trip(rec, 0);
		/* before the samples go to the file: those of a truncating stack
		 * copy are dropped, not written */
		if (rec->ops && rec->ops->round(rec)) {
			/* new events, new buffers */
			for (size_t c = 0; c + 2 < n; c++) {
				pfd[c].fd = (int)c < rec->probing.nrings ? rec->probing.rings[c].fd
									 : -1;
				pfd[c].revents = 0;
			}
		}
		/* phase 1 writes no sample its stack check may still drop */
		if (!rec->ops || rec->ops->may_flush(rec))
			flush_file(rec);
		if (rec->phase.calls)
			watchdog(rec);
		if (rec->hdr.ncosts)
			vp_calibrate_track();
	}
	/* (the probes also fire for other processes that run the code) */
	disable_events(rec);
	if (rec->target.left_running || (rec->opts.attach && !rec->target.child))
		update_cpu(rec);
	/* The target is gone or no longer followed: every record is in. */
	if ((!rec->opts.attach && !rec->target.left_running) || rec->target.gone) {
		vp_addrspace_target_gone(rec->as);
		vp_bpf_probes_target_gone(&rec->probing.bpf);
	}
	round_trip(rec, 1);
	flush_deferred(rec);
	print_unwound(rec);
	count_unseen(rec);
	free(pfd);
	if (forwarded || timed_out)
		flags |= VP_END_INTERRUPTED;
	return flags;
}

static void print_sampling_summary(struct record *rec, const struct vp_trailer *tr,
				   long long bytes)
{
	const struct vp_sampling *sm = &rec->hdr.sampling;
	struct vp_unwind_stats us = { 0 };
	uint64_t n = tr->samples;
	char a[32];

	if (rec->probing.ss)
		vp_sample_sink_stats(rec->probing.ss, &us);
	info("recorded %llu samples of %s every %s in '%s' (%lld bytes), %zu thread%s",
	     (unsigned long long)n, vp_sample_event_name(sm->event),
	     sm->period ? fmt_duration((double)sm->period, a, sizeof(a)) : "(frequency mode)",
	     rec->opts.output, bytes, rec->threads.n, rec->threads.n == 1 ? "" : "s");
	if (tr->broken && us.no_cfi_module[0])
		warning("%llu of %llu samples (%.1f%%) could not be unwound past code of '%s', "
			"which has no .eh_frame or .debug_frame (rebuild it with "
			"-fasynchronous-unwind-tables, or keep frame pointers)",
			(unsigned long long)tr->broken, (unsigned long long)n,
			100.0 * (double)tr->broken / (double)n, us.no_cfi_module);
	else if (tr->broken)
		warning("%llu of %llu samples (%.1f%%) could not be unwound to their outermost "
			"frame", (unsigned long long)tr->broken, (unsigned long long)n,
			100.0 * (double)tr->broken / (double)n);
	if (rec->probing.sampler.exclude_kernel)
		info("user mode only: time in the kernel is not sampled (it needs root or "
		     "kernel.perf_event_paranoid <= 1)");
	if (rec->opts.precision_given && n) {
		double z = vp_confidence_z(rec->opts.confidence);
		double half = z * sqrt(0.25 / (double)n);

		if (half > rec->opts.precision)
			warning("%llu samples give shares to +/-%.2f%% at %g%% confidence, not the "
				"+/-%g%% asked: %llu are needed", (unsigned long long)n,
				half * 100, rec->opts.confidence * 100, rec->opts.precision * 100,
				(unsigned long long)vp_samples_needed(0.5, rec->opts.precision, z));
		else
			info("%llu samples: every share is within +/-%.2f%% at %g%% confidence",
			     (unsigned long long)n, half * 100, rec->opts.confidence * 100);
	}
}

/*
 * Truncated stacks make callers look rarer than their callees: said in
 * every mode, quiet or not (auto mode's phase 1 is quiet; it raised the
 * copy already if it could, see phase1_stacks() in record-auto.c).
 */
static void print_truncated(const struct record *rec, const struct vp_trailer *tr)
{
	uint64_t n = tr->samples;
	uint32_t size = rec->opts.sampling.stack_size;
	const char *phase = rec->phase.min_samples ? "phase 1: " : "";

	if (!tr->truncated)
		return;
	if (size < VP_STACK_SIZE_MAX)
		warning("%s%llu of %llu samples (%.1f%%) have truncated stacks: the %u-byte stack "
			"copy ended before their outermost frame (try --stack-size %u)", phase,
			(unsigned long long)tr->truncated, (unsigned long long)n,
			100.0 * (double)tr->truncated / (double)n, (unsigned)size,
			size * 4 > VP_STACK_SIZE_MAX ? VP_STACK_SIZE_MAX : size * 4);
	else
		warning("%s%llu of %llu samples (%.1f%%) have truncated stacks: the %u-byte copy, "
			"the largest the kernel takes, ended before their outermost frame", phase,
			(unsigned long long)tr->truncated, (unsigned long long)n,
			100.0 * (double)tr->truncated / (double)n, (unsigned)size);
}

static void print_detach(const struct record *rec)
{
	double secs = (double)(monotonic_ns() - rec->target.start_ns) / 1e9;

	if (rec->opts.quiet)
		return;
	if (rec->target.gone)
		info("process %d exited after %.1f s of recording", (int)rec->target.pid, secs);
	else
		info("detached from process %d after %.1f s; it keeps running",
		     (int)rec->target.pid, secs);
}

/*
 * The calls whose return probe the kernel never armed: nested more than
 * 64 deep in probed calls.  Their exits are missing from the file (the
 * report counts them as unpaired); say so loudly, quiet or not.
 */
static void print_nesting(const struct record *rec)
{
	uint64_t total = vp_nesting_lost(rec->probing.nesting), most = 0;
	size_t nf = 0;
	uint32_t top = 0;
	char others[256] = "";

	if (!total)
		return;
	for (uint32_t f = 0; f < rec->hdr.nfuncs; f++) {
		uint64_t n = vp_nesting_lost_of(rec->probing.nesting, f);

		nf += n > 0;
		if (n > most) {
			most = n;
			top = f;
		}
	}
	if (nf > 1)
		snprintf(others, sizeof(others), " (%llu of them of '%s', the rest of %zu other "
			 "function%s)", (unsigned long long)most, rec->hdr.funcs[top].display,
			 nf - 1, nf == 2 ? "" : "s");
	warning("%llu call%s%s%s%s lost %s exit%s: the kernel keeps at most %d return probes "
		"pending per thread and drops those of calls nested deeper (record with "
		"--exit-probes=ret%s)", (unsigned long long)total, total == 1 ? "" : "s",
		nf == 1 ? " of '" : "", nf == 1 ? rec->hdr.funcs[top].display : "",
		nf == 1 ? "'" : others, total == 1 ? "its" : "their", total == 1 ? "" : "s",
		VP_URETPROBE_MAX_DEPTH,
		rec->opts.exit_mode == EXIT_URETPROBE ? " or --exit-probes=auto" : "");
}

static void print_summary(struct record *rec, const struct vp_trailer *tr)
{
	struct stat st;
	long long bytes = stat(rec->opts.output, &st) == 0 ? (long long)st.st_size : -1;

	if (rec->output.write_err) {
		error("'%s' is incomplete: only %lld bytes were written", rec->opts.output, bytes);
		return;
	}
	print_nesting(rec);
	if (rec->mode != MODE_PROBE)
		print_truncated(rec, tr);
	if (rec->opts.quiet)
		return;
	if (rec->mode != MODE_SAMPLE)
		info("recorded %llu events in '%s' (%lld bytes, %.1f bytes/event), %llu lost, %zu "
		     "thread%s",
		     (unsigned long long)tr->events, rec->opts.output, bytes,
		     tr->events ? (double)bytes / (double)tr->events : 0.0,
		     (unsigned long long)rec->counts.lost, rec->threads.n,
		     rec->threads.n == 1 ? "" : "s");
	if (rec->mode != MODE_PROBE)
		print_sampling_summary(rec, tr, bytes);
	if (rec->counts.lost)
		warning("%llu records were lost: the ring buffers overflowed (try a larger "
			"--buffer-size)", (unsigned long long)rec->counts.lost);
	if (rec->counts.foreign)
		info("%llu events from other processes were not recorded (processes not "
		     "followed)", (unsigned long long)rec->counts.foreign);
	record_procs_summary(rec);
}

/*
 * Run the target under the probes and write the file: 0, or -errno when
 * it could not run or the file is incomplete; the exit status to pass on
 * goes to @rec->outcome.
 */
static int run(struct record *rec)
{
	struct vp_trailer tr;
	int status = 0, err;

	if (!rec->opts.attach) {
		/* interrupted while getting ready: the program never runs */
		err = record_nsignals ? -EINTR : vp_launch_release(&rec->target.launch);
		if (err) {
			if (err == -EINTR)
				vp_launch_abort(&rec->target.launch);
			else
				error("cannot run '%s': %s", rec->target.prog, strerror(-err));
			vp_writer_free(rec->w);
			rec->w = NULL;
			vp_output_release(&rec->output.file);
			rec->outcome.status = err == -EINTR ? 128 + (int)record_signal : 1;
			return err;
		}
	}
	if (rec->probing.user && record_user_attach(rec) < 0) {
		vp_writer_free(rec->w);
		rec->w = NULL;
		vp_output_release(&rec->output.file);
		rec->outcome.status = 1;
		return -1;
	}
	/* The recording begins: the file takes the output's name.  (After
	 * the exec: if that fails, an existing file stays as it was.) */
	err = vp_output_commit(&rec->output.file);
	if (err < 0) {
		vp_writer_free(rec->w);
		rec->w = NULL;
		vp_output_release(&rec->output.file);
		if (!rec->opts.attach) {
			kill(rec->target.pid, SIGKILL);
			waitpid(rec->target.pid, NULL, 0);
		}
		rec->outcome.status = 1;
		return err;
	}
	rec->target.start_ns = monotonic_ns();
	/* attached, the process has a past; launched, it has just exec'd */
	rec->target.start_cpu = rec->opts.attach ? record_process_cpu_ns(rec->target.pid) : 0;
	memset(&tr, 0, sizeof(tr));
	tr.flags = wait_and_read(rec, &status);
	if (rec->target.left_running) {
		tr.flags |= VP_END_DETACHED;
	} else if (!rec->opts.attach || rec->target.child) {
		tr.flags |= VP_END_EXITED;
		tr.wait_status = (uint64_t)status;
	} else {
		tr.flags |= rec->target.gone ? VP_END_GONE : VP_END_DETACHED;
	}
	record_procs_finish(rec);
	tr.lost = rec->counts.lost;
	tr.foreign = rec->counts.foreign;
	tr.unfollowed = rec->target.procs.unfollowed;
	if (rec->hdr.ncosts)
		tr.ncosts = (uint32_t)vp_calibrate_tracked(tr.costs);
	if (rec->probing.user)
		tr.ncosts = (uint32_t)record_user_tracked(rec, tr.costs);
	tr.end_time = monotonic_ns();
	account_cost(rec, &tr);
	if (rec->output.write_err)
		tr.flags |= VP_END_WRITE_ERROR;
	err = vp_writer_finish(rec->w, &tr);
	rec->w = NULL;
	record_write_failed(rec, err);
	rec->outcome.finished = !err;
	print_summary(rec, &tr);
	print_measured_cost(rec, &tr);
	print_unkept(rec);
	if (rec->opts.attach && !rec->target.child)
		print_detach(rec);
	/* attached, or phase 1 that leaves the program running: no status of its own */
	if ((rec->opts.attach && !rec->target.child) || rec->target.left_running)
		rec->outcome.status = 0;
	else
		rec->outcome.status = exit_code_of(status);
	if (rec->output.write_err)
		rec->outcome.status = 1;
	return rec->output.write_err;
}

static void *calibrate_done_main(void *arg)
{
	(void)arg;
	vp_calibrate_done();
	return NULL;
}

void record_release(struct record *rec)
{
	int calibrating = 0;
	pthread_t calib;

	/* The sampling events first: the probes' clean-up child must not
	 * inherit them (they would sample on until it is done). */
	if (rec->probing.sampler.nfds)
		vp_sampler_close(&rec->probing.sampler);
	/* The kernel removes one uprobe event in 60-80 ms (RCU grace periods
	 * under a global mutex, measured on 6.18): a detached child waits
	 * for that, not the user.  Not for the return probes of a program
	 * that can throw: until removed they would still end it (or another
	 * run of it) at the first exception through a probed function. */
	if (rec->probing.probes.nfds && (rec->probing.bpf_on || rec->probing.user))
		vp_probes_close(&rec->probing.probes); /* mmap tracking only: no uprobe */
	else if (rec->probing.probes.nfds)
		vp_probes_close_detached(&rec->probing.probes,
					 rec->probing.can_throw ? VP_CLOSE_RETURNS_NOW : 0);
	/*
	 * One RCU grace period per link: no need for a helper process.  The
	 * calibration's links go at the same time, in a thread: the grace
	 * periods overlap.
	 */
	if (rec->hdr.ncosts && rec->probing.bpf_on &&
	    pthread_create(&calib, NULL, calibrate_done_main, NULL) == 0)
		calibrating = 1;
	vp_bpf_probes_close(&rec->probing.bpf);
	record_user_release(rec);
	if (calibrating)
		pthread_join(calib, NULL);
	else if (rec->hdr.ncosts)
		vp_calibrate_done();
	for (size_t i = 0; i < rec->hdr.nmodules; i++)
		vp_symfile_free(rec->probing.symfiles ? rec->probing.symfiles[i] : NULL);
	free(rec->probing.symfiles);
	free(rec->probing.probe_vaddr);
	vp_addrspace_free(rec->as);
	for (size_t i = 0; rec->probing.exits && i < rec->hdr.nfuncs; i++)
		vp_exits_release(&rec->probing.exits[i]);
	free(rec->probing.exits);
	record_procs_release(&rec->target.procs);
	for (size_t i = 0; i < rec->output.npending; i++) {
		if (rec->output.pending[i].type == VP_RAW_MMAP)
			free(rec->output.pending[i].mmap);
		if (rec->output.pending[i].type == VP_RAW_SAMPLE)
			vp_raw_sample_free(&rec->output.pending[i]);
	}
	free(rec->output.pending);
	for (size_t i = 0; i < rec->output.ndeferred; i++) {
		if (rec->output.deferred[i].type == VP_RAW_MMAP)
			free(rec->output.deferred[i].mmap);
		else if (rec->output.deferred[i].type == VP_RAW_SAMPLE)
			vp_raw_sample_free(&rec->output.deferred[i]);
	}
	free(rec->output.deferred);
	vp_sample_sink_free(rec->probing.ss);
	vp_output_release(&rec->output.file);
	vp_plan_release(&rec->phase.plan);
	free(rec->phase.calls);
	free(rec->phase.kept);
	free(rec->phase.dropped);
	if (rec->target.pidfd > 0)
		close(rec->target.pidfd);
	idmap_release(&rec->threads);
	idmap_release(&rec->callsites);
	free(rec->tramp);
	vp_nesting_free(rec->probing.nesting);
	vp_header_release(&rec->hdr);
	free(rec->target.path);
	free(rec->probing.unprobeable);
}

/* Open the sampling events (and the writer's sample side). */
static int start_sampling(struct record *rec)
{
	pid_t *tids = NULL;
	int ntids = 0, err;

	rec->probing.ss = vp_sample_sink_new(rec->w, rec->hdr.modules, rec->hdr.nmodules);
	if (!rec->probing.ss)
		return error("cannot set up unwinding: %s", strerror(errno));
	if (rec->mode == MODE_COMBINED) {
		/* where each trap is: past the first instruction if moved */
		rec->probing.probe_vaddr = xcalloc(rec->hdr.nfuncs ? rec->hdr.nfuncs : 1,
					   sizeof(*rec->probing.probe_vaddr));
		for (size_t i = 0; i < rec->hdr.nfuncs; i++) {
			const struct vp_func *f = &rec->hdr.funcs[i];

			if (vp_symfile_off_to_vaddr(rec->probing.symfiles[f->module], f->probe_off,
						    &rec->probing.probe_vaddr[i]) < 0)
				rec->probing.probe_vaddr[i] = f->addr;
			vp_sample_sink_probe(rec->probing.ss, rec->hdr.modules[f->module].path,
					     rec->probing.probe_vaddr[i]);
		}
	}
	if (rec->opts.attach) {
		/* Every thread that runs now; later ones inherit. */
		ntids = vp_task_list(rec->target.pid, &tids);
		if (ntids == -ESRCH)
			return error("cannot attach to process %d: it exited before varperf was "
				     "ready", (int)rec->target.pid);
		if (ntids < 0)
			return error("cannot list the threads of process %d: %s",
				     (int)rec->target.pid, strerror(-ntids));
		vp_sample_sink_read_maps(rec->probing.ss, rec->target.pid);
	}
	/* one event per thread and CPU (twice the threads: new ones come) */
	if (raise_nofile(rec->probing.probes.nfds + (size_t)(ntids > 0 ? 2 * ntids : 1) *
						 (rec->hdr.ncpu ? rec->hdr.ncpu : 1)) < 0) {
		free(tids);
		return -1;
	}
	err = vp_sampler_open(&rec->probing.sampler, &rec->opts.sampling, rec->target.pid, tids,
			      (size_t)ntids,
			      rec->mode == MODE_COMBINED ? rec->probing.probes.rings : NULL,
			      rec->opts.attach ? 0 : VP_SAMPLER_ON_EXEC);
	free(tids);
	if (err < 0)
		return -1;
	if (rec->mode == MODE_SAMPLE) {
		rec->probing.rings = rec->probing.sampler.rings;
		rec->probing.nrings = rec->probing.sampler.ncpus;
		/* Attached, the mappings of now are known now; later ones come
		 * as records, in order with the samples. */
		rec->output.defer = 1;
		/*
		 * All varperf does while the target runs is empty the buffers:
		 * give way to the target when CPUs are short (the target was
		 * forked before this, and keeps its priority).
		 */
		if (!rec->opts.attach)
			setpriority(PRIO_PROCESS, 0, 5);
	}
	return 0;
}

/* Fork the target (or attach), create the file, open the events; 0 or -1
 * after the error. */
static int start(struct record *rec, int argc, char **argv)
{
	size_t need;
	int err;

	if (rec->opts.attach) {
		rec->target.pid = rec->opts.attach;
	} else {
		err = vp_launch_fork(&rec->target.launch, rec->target.path, argv);
		if (err)
			return error("cannot fork: %s", strerror(-err));
		rec->target.pid = rec->target.launch.pid;
	}
	record_header_cmdline(rec, argc, argv);
	/* for the report to tell which unpaired entries the kernel cost */
	for (uint32_t f = 0; rec->mode != MODE_SAMPLE && f < rec->hdr.nfuncs; f++)
		if (has_return_probe(rec, f))
			rec->hdr.funcs[f].flags |= VP_FUNC_URETPROBE;
	/* unnamed until the recording begins (run()): an existing file stays
	 * as it was if it never does */
	if (vp_output_create(&rec->output.file, rec->opts.output) < 0)
		goto out_abort;
	rec->w = vp_writer_new_fd(dup(rec->output.file.fd), &rec->hdr);
	if (!rec->w) {
		error("cannot create '%s': %s", rec->opts.output, strerror(errno));
		goto out_unlink;
	}
	record_procs_start(rec);
	if (rec->phase.plan_from) {
		err = vp_plan_copy(&rec->phase.plan, rec->w, &rec->hdr, &rec->thread_base);
		if (!err)
			err = vp_writer_phase(rec->w, 2, (uint32_t)rec->target.pid);
		if (err) {
			error("cannot write '%s': %s", rec->opts.output, strerror(-err));
			goto out_unlink;
		}
	}
	rec->as = vp_addrspace_new(rec->target.pid, rec->hdr.modules, rec->probing.symfiles,
				   rec->hdr.nmodules);
	if (rec->mode != MODE_SAMPLE && rec->probing.user) {
		if (record_user_start(rec) < 0)
			goto out_unlink;
	} else if (rec->mode != MODE_SAMPLE && rec->probing.bpf_on) {
		/*
		 * perf's part: per-CPU buffers for the target's mappings (and
		 * in combined mode its samples).  Mappings alone need little:
		 * small enough for the unprivileged mlock limit (516 KiB).
		 */
		size_t mmap_buf = rec->mode == MODE_PROBE ? 128 << 10 : (size_t)rec->opts.buf_size;

		if (vp_probes_open(&rec->probing.probes, rec->hdr.funcs, 0, NULL, rec->hdr.modules,
				   rec->target.pid, mmap_buf, 0) < 0 ||
		    vp_bpf_probes_open(&rec->probing.bpf, rec->hdr.funcs, rec->hdr.nfuncs,
				       rec->probing.exits, rec->hdr.modules, rec->target.pid,
				       (size_t)rec->opts.buf_size *
					       (rec->hdr.ncpu ? rec->hdr.ncpu : 1),
				       rec->opts.follow_fork ? VP_BPF_FOLLOW_FORK : 0) < 0)
			goto out_unlink;
		/* children forked before (auto mode's phase 1 in the same run) */
		for (size_t i = 1; i < rec->target.procs.n; i++)
			if (rec->target.procs.v[i].followed)
				vp_bpf_probes_follow(&rec->probing.bpf,
						     (pid_t)rec->target.procs.v[i].pid);
	} else if (rec->mode != MODE_SAMPLE) {
		need = vp_probes_fds_needed(rec->probing.exits, rec->hdr.nfuncs,
					    (int)(rec->hdr.ncpu ? rec->hdr.ncpu : 1));
		if (raise_nofile(need) < 0 ||
		    vp_probes_open(&rec->probing.probes, rec->hdr.funcs, rec->hdr.nfuncs,
				   rec->probing.exits, rec->hdr.modules, rec->target.pid,
				   (size_t)rec->opts.buf_size, 0) < 0)
			goto out_unlink;
	}
	if (rec->mode != MODE_SAMPLE) {
		rec->probing.rings = rec->probing.probes.rings;
		rec->probing.nrings = rec->probing.probes.ncpus;
		rec->probing.nesting = vp_nesting_new(rec->hdr.nfuncs);
		if (rec->phase.plan_from) {
			rec->phase.calls = xcalloc(rec->hdr.nfuncs, sizeof(*rec->phase.calls));
			rec->phase.kept = xcalloc(2 * rec->hdr.nfuncs, sizeof(*rec->phase.kept));
			rec->phase.dropped = xcalloc(rec->hdr.nfuncs, 1);
			/* until the watchdog's first look: watchdog() */
			rec->phase.holding = rec->probing.bpf_on;
			rec->phase.hold_ns = rec->probing.bpf_on ? HOLD_NS : 0;
		}
	}
	if (rec->mode != MODE_PROBE) {
		rec->opts.sampling.buf_size = (size_t)rec->opts.buf_size;
		if (start_sampling(rec) < 0)
			goto out_unlink;
	}
	/* readable when the target exits: the loop wakes at once, not at its
	 * next round (a negative errno where the kernel has none: rounds) */
	rec->target.pidfd = vp_pidfd_open(rec->target.pid);
	if (rec->opts.attach && !rec->target.child) {
		if (!rec->opts.quiet || rec->phase.announce)
			info("attached to process %d (%s)%s", (int)rec->target.pid,
			     rec->target.path, rec->opts.duration > 0 ? "" : ": Ctrl-C to stop");
	}
	return 0;
out_unlink:
	vp_writer_free(rec->w);
	rec->w = NULL;
	vp_output_release(&rec->output.file);
out_abort:
	if (!rec->opts.attach)
		vp_launch_abort(&rec->target.launch);
	return -1;
}

int record_run(struct record *rec, int argc, char **argv)
{

	/*
	 * An earlier recording's return probes, until the kernel has removed
	 * them, put its trampoline in place of return addresses in every
	 * process that runs the code: sampled stacks would end there.
	 */
	for (size_t i = 0; rec->mode != MODE_PROBE && i < rec->hdr.nmodules; i++) {
		const char *path = rec->hdr.modules[i].path;

		if (vp_probes_wait_removed(
			    path, UNPROBE_WAIT_MS,
			    rec->opts.quiet && !rec->phase.announce
				    ? NULL
				    : "waiting for an earlier recording's probes to be "
				      "removed (they would cut sampled stacks short)") < 0)
			warning("an earlier recording's probes are still being removed from '%s': "
				"sampled stacks through the functions it probed end there until "
				"they are gone", path);
	}

	install_signals();
	if (start(rec, argc, argv) < 0) {
		rec->outcome.status = 1;
		return -1;
	}
	return run(rec);
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

int record_resample(struct record *rec, uint32_t stack_size)
{
	pid_t *tids = NULL;
	int ntids, err;

	vp_sampler_close(&rec->probing.sampler);
	rec->output.npending = drop_samples(rec->output.pending, rec->output.npending);
	rec->output.ndeferred = drop_samples(rec->output.deferred, rec->output.ndeferred);
	rec->output.deferred_bytes =
		rec->output.ndeferred * (sizeof(struct vp_raw) + 64); /* mappings */
	rec->opts.sampling.stack_size = stack_size;
	rec->counts.nsamples = rec->counts.full_stacks = 0;
	/* the program has exec'd: its threads now, and those they start */
	ntids = vp_task_list(rec->target.pid, &tids);
	if (ntids < 0)
		return error("cannot list the threads of process %d: %s", (int)rec->target.pid,
			     strerror(-ntids));
	err = vp_sampler_open(&rec->probing.sampler, &rec->opts.sampling, rec->target.pid, tids,
			      (size_t)ntids, NULL, 0);
	free(tids);
	rec->probing.rings = rec->probing.sampler.rings;
	rec->probing.nrings = rec->probing.sampler.ncpus;
	return err < 0 ? -1 : 0;
}
