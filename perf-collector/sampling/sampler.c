/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
sampler.c - open the sampling events (one per CPU and traced thread,
 * inherited, redirected into one ring buffer per CPU) and decode their
 * sample, mmap, exec, exit and lost records (sample-sink.c unwinds and
 * writes the samples).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/kernel/launch.h"
#include "perf-collector/sampling/sampler.h"
#include "util/util.h"

static const uint64_t sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				    PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
				    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

enum {
	/* attaching: list the threads again at most this often */
	RELIST_ROUNDS = 64,
	/* stack copies are carved out of chunks of this size */
	CHUNK_SIZE = 1 << 20,
	/* empty chunks kept for reuse */
	SPARE_CHUNKS = 4,
};

/* Read /proc/PID/maps for an unknown address at most every 10 ms. */
static const uint64_t maps_read_ns = 10000000;

const char vp_sampler_exec_path[] = "[exec]";
const char vp_sampler_exit_path[] = "[exit]";

/* An event: its id, and the thread it was opened on (its "owner"). */
struct vp_sample_id {
	uint64_t id;
	pid_t owner;
	uint32_t rank; /* the owner's place in the order of opening */
};

/* A thread with events of its own from @since until @until (its exit:
 * the tid may then be another thread's), in CLOCK_MONOTONIC ns. */
struct vp_sample_tid {
	pid_t tid;
	uint32_t rank;
	uint64_t since; /* UINT64_MAX: it was gone before they could open */
	uint64_t until;
};

/* A thread without events of its own: the latest-opened owner seen. */
struct vp_tid_owner {
	uint32_t tid;  /* the key */
	uint32_t rank; /* NO_RANK: the thread exited, the next one decides */
};

enum { NO_RANK = UINT32_MAX };

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

static int cmp_id(const void *a, const void *b)
{
	const struct vp_sample_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct vp_sample_tid *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Thread @tid among the first @n of @s->tids (sorted). */
static struct vp_sample_tid *find_tid(const struct vp_sampler *s, pid_t tid, size_t n)
{
	struct vp_sample_tid key = { .tid = tid };

	return bsearch(&key, s->tids, n, sizeof(key), cmp_tid);
}

/*
 * Open the event of thread @tid on CPU index @ci.  Returns 0, -ESRCH
 * quietly (the thread has exited), or -1 after printing why.
 */
static int open_one(struct vp_sampler *s, struct perf_event_attr *a, pid_t tid, int ci,
		    size_t buf_size, uint32_t rank)
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
		return -ESRCH;
	if (fd < 0)
		return error("cannot open the %s sampling event on CPU %d: %s",
			     vp_sample_event_name(s->event), s->cpus[ci],
			     vp_perf_open_strerror(fd, a, why, sizeof(why)));
	if (s->nfds == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->fds = xrealloc(s->fds, s->cap * sizeof(*s->fds));
		s->ids = xrealloc(s->ids, s->cap * sizeof(*s->ids));
	}
	s->fds[s->nfds++] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return error("cannot read the id of a sampling event: %s", strerror(errno));
	s->ids[s->nids++] = (struct vp_sample_id){ id, tid, rank };
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
	return 0;
}

/*
 * The events of thread @tid on every CPU, one after the other: a thread
 * it creates meanwhile inherits the ones already open, and would miss
 * the others if the CPUs were done one by one over all threads.
 */
static int open_thread(struct vp_sampler *s, struct perf_event_attr *a, pid_t tid,
		       size_t buf_size)
{
	uint32_t rank = (uint32_t)s->ntids;
	uint64_t since = monotonic_ns();
	int err = 0;

	/*
	 * MMAP2 records go to the events of the thread that maps, so every
	 * thread's events report mappings: a library that a thread other
	 * than the first dlopen()s would go unseen otherwise.  With the
	 * probes' buffers, their tracker reports those of the first thread
	 * and its descendants (it is opened on it, inherited).
	 */
	a->mmap = a->mmap2 = s->own_rings || tid != s->pid;
	for (int ci = 0; ci < s->ncpus && !err; ci++)
		err = open_one(s, a, tid, ci, buf_size, rank);
	if (err == -ESRCH && s->nfds && s->ids[s->nids - 1].owner == tid)
		err = 0; /* it exited after its first events opened: they stay */
	if (err && err != -ESRCH)
		return err;
	s->tids = xrealloc(s->tids, (s->ntids + 1) * sizeof(*s->tids));
	s->tids[s->ntids++] = (struct vp_sample_tid){ tid, rank, err ? UINT64_MAX : since,
						      UINT64_MAX };
	return err;
}

/* Open the threads of @list not opened yet; *@fresh: how many were new. */
static int open_list(struct vp_sampler *s, struct perf_event_attr *a, const pid_t *list,
		     size_t n, size_t buf_size, size_t *fresh)
{
	size_t sorted = s->ntids; /* those opened before: the list holds no tid twice */
	int err;

	*fresh = 0;
	for (size_t i = 0; i < n; i++) {
		if (find_tid(s, list[i], sorted))
			continue;
		++*fresh;
		err = open_thread(s, a, list[i], buf_size);
		if (err == -ESRCH && list[i] == s->pid)
			return -ESRCH;
		if (err < 0 && err != -ESRCH)
			return err;
	}
	qsort(s->tids, s->ntids, sizeof(*s->tids), cmp_tid);
	return 0;
}

/*
 * Attaching: the threads of @list, then of /proc/PID/task again until no
 * new one shows up - a thread created after the list was read and before
 * its creator's events opened has none.
 */
static int open_threads(struct vp_sampler *s, struct perf_event_attr *a, const pid_t *list,
			size_t n, size_t buf_size)
{
	pid_t *ordered = xmalloc((n + 1) * sizeof(*ordered));
	size_t m = 0, fresh;
	int err, round;

	/* the main thread first: it must be there, and it is the likely
	 * creator of the others */
	ordered[m++] = s->pid;
	for (size_t i = 0; i < n; i++)
		if (list[i] != s->pid)
			ordered[m++] = list[i];
	err = open_list(s, a, ordered, m, buf_size, &fresh);
	free(ordered);
	for (round = 0; !err && fresh && round < RELIST_ROUNDS; round++) {
		pid_t *tids;
		int nt = vp_task_list(s->pid, &tids);

		if (nt < 0)
			break; /* the process is gone: its records say so */
		err = open_list(s, a, tids, (size_t)nt, buf_size, &fresh);
		free(tids);
	}
	if (!err && fresh)
		pr_debug("sampling: threads still appearing after %d listings", round);
	return err;
}

int vp_sampler_open(struct vp_sampler *s, const struct vp_sampling_opts *o, pid_t pid,
		    const pid_t *tids, size_t ntids, struct vp_ring *rings, int flags)
{
	struct perf_event_attr a;
	int err;

	memset(s, 0, sizeof(*s));
	vp_hashtab_init(&s->owners, sizeof(struct vp_tid_owner), sizeof(uint32_t), NULL);
	s->event = o->event;
	s->pid = pid;
	s->ncpus = vp_online_cpus(&s->cpus);
	if (s->ncpus < 0) {
		err = s->ncpus;
		s->ncpus = 0;
		return error("cannot list the online CPUs: %s", strerror(-err));
	}
	s->own_rings = !rings;
	s->rings = rings ? rings : xcalloc((size_t)s->ncpus, sizeof(*s->rings));
	event_attr(&a, o->event, o->freq);
	s->period = o->event == VP_SEV_CYCLES ? 0 : a.sample_period;
	a.sample_type = sample_type;
	a.sample_regs_user = VP_UREG_MASK;
	a.sample_stack_user = o->stack_size;
	a.sample_id_all = 1;
	a.inherit = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.disabled = !!(flags & VP_SAMPLER_ON_EXEC);
	a.enable_on_exec = !!(flags & VP_SAMPLER_ON_EXEC);
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(o->buf_size / 4);
	/* exec (a COMM record) and thread exits, to forget what they end */
	a.comm = a.task = 1;
	if (ntids)
		err = open_threads(s, &a, tids, ntids, o->buf_size);
	else
		err = open_thread(s, &a, pid, o->buf_size);
	if (err == -ESRCH)
		err = ntids ? error("cannot attach to process %d: it exited before varperf was "
				    "ready", (int)pid)
			    : error("cannot sample process %d: no such process", (int)pid);
	if (err)
		goto out_close;
	qsort(s->ids, s->nids, sizeof(*s->ids), cmp_id);
	pr_debug("sampling %s every %llu ns on %d CPUs (%zu events, %zu threads)%s",
		 vp_sample_event_name(s->event), (unsigned long long)s->period, s->ncpus, s->nfds,
		 s->ntids, s->exclude_kernel ? ", user mode only" : "");
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
	if (s->malformed)
		warning("%llu sample records were too short for their fields: dropped",
			(unsigned long long)s->malformed);
	if (s->duplicates)
		pr_debug("sampling: %llu samples of threads sampled twice dropped",
			 (unsigned long long)s->duplicates);
	if (s->own_rings) {
		for (int ci = 0; ci < s->ncpus; ci++)
			vp_ring_unmap(&s->rings[ci]);
		free(s->rings);
	}
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->ids);
	free(s->tids);
	vp_hashtab_release(&s->owners);
	vp_maps_release(&s->known);
	free(s->cpus);
	memset(s, 0, sizeof(*s));
}

static const struct vp_sample_id *find_id(const struct vp_sampler *s, uint64_t id)
{
	struct vp_sample_id key = { .id = id };

	return bsearch(&key, s->ids, s->nids, sizeof(key), cmp_id);
}

/* ---- stack copies ---- */

/*
 * Samples wait in memory until they are unwound, in sample mode until the
 * target ends: a malloc() each would touch fresh pages one by one while
 * the target runs.  They are carved out of chunks instead, populated in
 * one go, and a chunk whose samples are all freed is used again.  The
 * chunks outlive any sampler (samples are freed after it closes): their
 * spares are kept here.
 */
struct vp_sample_chunk {
	size_t used; /* bytes handed out, this header included */
	size_t live; /* samples not freed yet */
	int retired; /* full: freed once its last sample is */
	struct vp_sample_chunk *next;
};

static struct vp_sample_chunk *chunk_cur, *chunk_spare;
static size_t nchunk_spare;

static size_t chunk_header(void)
{
	return (sizeof(struct vp_sample_chunk) + 63) & ~(size_t)63;
}

static void chunk_recycle(struct vp_sample_chunk *c)
{
	if (nchunk_spare >= SPARE_CHUNKS) {
		munmap(c, CHUNK_SIZE);
		return;
	}
	c->used = chunk_header();
	c->retired = 0;
	c->next = chunk_spare;
	chunk_spare = c;
	nchunk_spare++;
}

static struct vp_sample_chunk *chunk_new(void)
{
	struct vp_sample_chunk *c = chunk_spare;

	if (c) {
		chunk_spare = c->next;
		nchunk_spare--;
		return c;
	}
	c = mmap(NULL, CHUNK_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	c->used = chunk_header();
	c->live = 0;
	c->retired = 0;
	return c;
}

static struct vp_raw_sample *sample_alloc(size_t len)
{
	size_t need = (sizeof(struct vp_raw_sample) + len + 15) & ~(size_t)15;
	struct vp_raw_sample *smp;

	if (need > CHUNK_SIZE / 8)
		goto out_malloc;
	if (!chunk_cur || chunk_cur->used + need > CHUNK_SIZE) {
		struct vp_sample_chunk *c = chunk_new();

		if (!c)
			goto out_malloc;
		if (chunk_cur) {
			chunk_cur->retired = 1;
			if (!chunk_cur->live)
				chunk_recycle(chunk_cur);
		}
		chunk_cur = c;
	}
	smp = (struct vp_raw_sample *)((unsigned char *)chunk_cur + chunk_cur->used);
	chunk_cur->used += need;
	chunk_cur->live++;
	smp->chunk = chunk_cur;
	return smp;
out_malloc:
	smp = xmalloc(sizeof(*smp) + len);
	smp->chunk = NULL;
	return smp;
}

void vp_raw_sample_free(struct vp_raw *r)
{
	struct vp_raw_sample *smp = r->sample;

	r->sample = NULL;
	if (!smp)
		return;
	if (smp->maps) {
		vp_maps_release(smp->maps);
		free(smp->maps);
	}
	if (!smp->chunk) {
		free(smp);
	} else if (!--smp->chunk->live && smp->chunk->retired) {
		chunk_recycle(smp->chunk);
	} else if (!smp->chunk->live) {
		/* the current chunk, empty again: start it over */
		smp->chunk->used = chunk_header();
	}
}

/* ---- what the target has mapped ---- */

/*
 * A sample of the target at an address in no mapping seen yet: take the
 * target's maps along, read now while it runs.  Unwinding comes later (in
 * sample mode, after the target ended), too late for /proc; and an mmap
 * record may be missing (a thread whose events were not yet open).
 */
static void maybe_read_maps(struct vp_sampler *s, struct vp_raw_sample *smp, uint64_t time)
{
	uint64_t ip = smp->st.regs[VP_UREG_IP];
	struct vp_maps *m;

	if (!s->own_rings || smp->st.pid != s->pid || !ip || vp_maps_find(&s->known, ip) ||
	    vp_maps_in_uprobes(&s->known, ip) ||
	    (s->maps_read_time && time < s->maps_read_time + maps_read_ns))
		return;
	s->maps_read_time = time;
	m = xcalloc(1, sizeof(*m));
	if (vp_maps_read(s->pid, m) < 0 || !m->n) {
		vp_maps_release(m);
		free(m);
		return;
	}
	vp_maps_add(&s->known, m);
	smp->maps = m;
	pr_debug("sampling: %#llx in no known mapping: read /proc/%d/maps (%zu mappings)",
		 (unsigned long long)ip, (int)s->pid, m->n);
}

/* ---- one set of events per thread ---- */

static uint64_t tid_hash(uint32_t tid)
{
	return vp_hash_mix(tid, 0);
}

/* The owner entry of thread @tid, made (NO_RANK) if @create (NULL: no
 * memory for it). */
static struct vp_tid_owner *owner_of(struct vp_sampler *s, pid_t tid, int create)
{
	uint32_t key = (uint32_t)tid;
	struct vp_tid_owner *o;
	void *p;
	int ret;

	if (!create)
		return vp_hashtab_find(&s->owners, tid_hash(key), &key);
	ret = vp_hashtab_insert(&s->owners, tid_hash(key), &key, &p);
	if (ret < 0)
		return NULL;
	o = p;
	if (ret)
		o->rank = NO_RANK;
	return o;
}

/*
 * Whether a sample of thread @tid through the event @sid counts.  Opened
 * thread by thread, the events of one thread are inherited by the threads
 * it creates; a thread created while they were being opened then also
 * gets events of its own, and would be sampled twice.  A thread's own
 * events count from the moment they were opened; a thread without any
 * counts those of the latest-opened thread that passed it some (whose
 * set was complete when it was created: else it would have been listed
 * and opened).
 */
static int wanted(struct vp_sampler *s, const struct vp_sample_id *sid, pid_t tid,
		  uint64_t time)
{
	const struct vp_sample_tid *t;
	struct vp_tid_owner *o;

	if (sid->owner == tid || s->ntids <= 1)
		return 1;
	t = find_tid(s, tid, s->ntids);
	if (t)
		return time < t->since || time >= t->until;
	o = owner_of(s, tid, 1);
	if (!o)
		return 1; /* no memory to keep its owner: count it */
	if (o->rank == NO_RANK || sid->rank > o->rank)
		o->rank = sid->rank;
	return sid->rank == o->rank;
}

/*
 * Thread @tid exited at @time: with pid_max at 32768 and threads created
 * by the thousand a second, its tid soon names another thread, which is
 * to be judged afresh.
 */
static void thread_exited(struct vp_sampler *s, pid_t tid, uint64_t time)
{
	struct vp_sample_tid *t;
	struct vp_tid_owner *o;

	if (s->ntids <= 1)
		return;
	t = find_tid(s, tid, s->ntids);
	if (t && t->until > time)
		t->until = time;
	o = t ? NULL : owner_of(s, tid, 0);
	if (o)
		o->rank = NO_RANK;
}

/* ---- decoding ---- */

/* Returns 1 and @r, or 0: not ours, a duplicate, or malformed (counted). */
static int decode_sample(struct vp_sampler *s, const struct perf_event_header *h,
			 struct vp_cursor *c, struct vp_raw *r)
{
	uint64_t id, ip, pidtid, time, period, abi, size = 0, dyn = 0;
	uint64_t regs[VP_UREG_COUNT] = { 0 };
	const unsigned char *stack = NULL;
	const struct vp_sample_id *sid;
	struct vp_raw_sample *smp;
	uint16_t mode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;

	if (vp_cursor_take(c, &id, 8))
		goto out_malformed;
	sid = find_id(s, id);
	if (!sid)
		return 0;
	if (vp_cursor_take(c, &ip, 8) || vp_cursor_take(c, &pidtid, 8) || vp_cursor_take(c, &time, 8) ||
	    vp_cursor_take(c, &period, 8) || vp_cursor_take(c, &abi, 8))
		goto out_malformed;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		for (int bit = 0; bit < VP_UREG_COUNT; bit++)
			if ((VP_UREG_MASK >> bit & 1) && vp_cursor_take(c, &regs[bit], 8))
				goto out_malformed;
	}
	if (vp_cursor_take(c, &size, 8))
		goto out_malformed;
	if (size) {
		stack = c->p;
		if ((uint64_t)(c->end - c->p) < size)
			goto out_malformed;
		c->p += size;
		if (vp_cursor_take(c, &dyn, 8))
			goto out_malformed;
		if (dyn > size)
			dyn = size;
	}
	if (!wanted(s, sid, (pid_t)(pidtid >> 32), time)) {
		s->duplicates++;
		return 0;
	}
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		dyn = 0;
	smp = sample_alloc(dyn);
	if (dyn)
		memcpy(smp->stack, stack, dyn);
	smp->ip = ip;
	smp->period = period;
	smp->kernel = mode != PERF_RECORD_MISC_USER;
	smp->no_user = smp->kernel && (abi == PERF_SAMPLE_REGS_ABI_NONE || (size && !dyn));
	smp->maps = NULL;
	smp->st.pid = (pid_t)(uint32_t)pidtid;
	memcpy(smp->st.regs, regs, sizeof(regs));
	smp->st.stack = smp->stack;
	smp->st.len = dyn;
	smp->st.size = size;
	r->type = VP_RAW_SAMPLE;
	r->pid = (uint32_t)pidtid;
	r->tid = (uint32_t)(pidtid >> 32);
	r->time = time;
	r->sample = smp;
	/* A kernel thread, or a task whose exit has released its memory,
	 * has no user state: nothing to unwind. */
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		smp->st.regs[VP_UREG_IP] = 0;
	maybe_read_maps(s, smp, time);
	return 1;
out_malformed:
	if (!s->malformed++)
		pr_debug("sampling: a sample record of %u bytes is too short for its fields",
			 (unsigned)h->size);
	return 0;
}

/*
 * The sample_id_all trailer of a non-sample record: time, pid and tid,
 * and whether it came from one of these events.
 */
static int decode_trailer(const struct vp_sampler *s, const struct perf_event_header *h,
			  struct vp_raw *r)
{
	const unsigned char *end = (const unsigned char *)h + h->size;
	uint64_t pidtid, id;

	if (h->size < sizeof(*h) + VP_SAMPLE_ID_SIZE)
		return 0;
	memcpy(&pidtid, end - VP_SAMPLE_ID_SIZE, 8);
	memcpy(&r->time, end - VP_SAMPLE_ID_SIZE + 8, 8);
	memcpy(&id, end - VP_SAMPLE_ID_SIZE + 16, 8);
	r->pid = (uint32_t)pidtid;
	r->tid = (uint32_t)(pidtid >> 32);
	return find_id(s, id) != NULL;
}

/* An exec or a thread's exit, as a pseudo-mapping (see sampler.h). */
static int pseudo_mmap(struct vp_raw *r, const char *what, uint32_t pid, uint32_t tid)
{
	size_t len = strlen(what);

	r->type = VP_RAW_MMAP;
	r->pid = pid;
	r->tid = tid;
	r->mmap = xmalloc(sizeof(*r->mmap) + len + 1);
	r->mmap->start = tid;
	r->mmap->len = 0;
	r->mmap->pgoff = 0;
	memcpy(r->mmap->path, what, len + 1);
	return 1;
}

static int decode_task(struct vp_sampler *s, const struct perf_event_header *h,
		       struct vp_cursor *c, struct vp_raw *r)
{
	uint32_t ids[4]; /* COMM: pid, tid; EXIT: pid, ppid, tid, ptid */

	/* with events both of their own and inherited, threads report
	 * their exit twice: either will do */
	if (!decode_trailer(s, h, r))
		return 0;
	if (h->type == PERF_RECORD_COMM) {
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || vp_cursor_take(c, ids, 8))
			return 0;
		if ((pid_t)ids[0] == s->pid)
			vp_maps_release(&s->known); /* a new image */
		return pseudo_mmap(r, vp_sampler_exec_path, ids[0], ids[1]);
	}
	if (vp_cursor_take(c, ids, 16))
		return 0;
	thread_exited(s, (pid_t)ids[2], r->time);
	return pseudo_mmap(r, vp_sampler_exit_path, ids[0], ids[2]);
}

int vp_sampler_decode(struct vp_sampler *s, const struct perf_event_header *h, int cpu,
		      struct vp_raw *ret)
{
	struct vp_cursor c = VP_CURSOR_INIT(h);
	int got;

	memset(ret, 0, sizeof(*ret));
	ret->cpu = (uint16_t)cpu;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return decode_sample(s, h, &c, ret);
	case PERF_RECORD_LOST_SAMPLES:
		/* samples the kernel could not write (the probes' decoder
		 * knows PERF_RECORD_LOST only): in combined mode too */
		if (vp_cursor_take(&c, &ret->addr, 8) || h->size < sizeof(*h) + 8 + VP_SAMPLE_ID_SIZE)
			return 0;
		decode_trailer(s, h, ret);
		ret->pid = ret->tid = 0;
		ret->type = VP_RAW_LOST;
		return 1;
	case PERF_RECORD_COMM:
	case PERF_RECORD_EXIT:
		return decode_task(s, h, &c, ret);
	default:
		break;
	}
	if (!s->own_rings)
		return 0; /* mmaps and losses: the probes decode those */
	/* MMAP2 and LOST have the probes' layout: one decoder for both. */
	got = vp_raw_decode(h, cpu, ret);
	if (got && ret->type == VP_RAW_MMAP && (pid_t)ret->pid == s->pid)
		vp_maps_insert(&s->known, ret->mmap->start, ret->mmap->len, ret->mmap->pgoff,
			       ret->mmap->path);
	return got;
}
