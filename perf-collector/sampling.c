/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * sampling.c - open the sampling events (one per CPU and traced thread,
 * inherited, redirected into one ring buffer per CPU), decode their
 * sample, mmap, exec, exit and lost records, and unwind and write the
 * samples.
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

#include "launch.h"
#include "sampling.h"
#include "util.h"

static const uint64_t sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				    PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
				    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

enum {
	/* sample_id_all trailer of non-sample records: pid/tid, time, identifier */
	SAMPLE_ID_SIZE = 24,
	/* attaching: list the threads again at most this often */
	RELIST_ROUNDS = 64,
	/* stack copies are carved out of chunks of this size */
	CHUNK_SIZE = 1 << 20,
	/* empty chunks kept for reuse */
	SPARE_CHUNKS = 4,
};

/* Read /proc/PID/maps for an unknown address at most every 10 ms. */
static const uint64_t maps_read_ns = 10000000;

/* The pseudo-mappings that carry an exec or a thread's exit (sampling.h). */
static const char exec_path[] = "[exec]";
static const char exit_path[] = "[exit]";

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
		return "an unknown event";
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

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
	free(s->known);
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

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Add [@lo, @hi) to the executable ranges known (kept sorted, merged). */
static void known_add(struct vp_sampler *s, uint64_t lo, uint64_t hi)
{
	size_t j = 0;

	if (s->nknown == s->known_cap) {
		s->known_cap = s->known_cap ? s->known_cap * 2 : 64;
		s->known = xrealloc(s->known, s->known_cap * sizeof(*s->known));
	}
	s->known[s->nknown][0] = lo;
	s->known[s->nknown][1] = hi;
	s->nknown++;
	qsort(s->known, s->nknown, sizeof(*s->known), cmp_range);
	for (size_t i = 1; i < s->nknown; i++) {
		if (s->known[i][0] <= s->known[j][1]) {
			if (s->known[i][1] > s->known[j][1])
				s->known[j][1] = s->known[i][1];
		} else {
			s->known[++j][0] = s->known[i][0];
			s->known[j][1] = s->known[i][1];
		}
	}
	s->nknown = j + 1;
}

static int known(const struct vp_sampler *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nknown;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < s->known[mid][0])
			hi = mid;
		else if (addr >= s->known[mid][1])
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

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

	if (!s->own_rings || smp->st.pid != s->pid || !ip || known(s, ip) ||
	    (s->maps_read_time && time < s->maps_read_time + maps_read_ns))
		return;
	s->maps_read_time = time;
	m = xcalloc(1, sizeof(*m));
	if (vp_maps_read(s->pid, m) < 0 || !m->n) {
		vp_maps_release(m);
		free(m);
		return;
	}
	for (size_t i = 0; i < m->n; i++)
		known_add(s, m->v[i].start, m->v[i].start + m->v[i].len);
	smp->maps = m;
	pr_debug("sampling: %#llx in no known mapping: read /proc/%d/maps (%zu mappings)",
		 (unsigned long long)ip, (int)s->pid, m->n);
}

/* ---- one set of events per thread ---- */

static uint64_t tid_hash(uint32_t tid)
{
	return vp_hash_mix(tid, 0);
}

/* The owner entry of thread @tid, made (NO_RANK) if @create. */
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
		die("out of memory (following thread %d)", (int)tid);
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
			 struct cursor *c, struct vp_raw *r)
{
	uint64_t id, ip, pidtid, time, period, abi, size = 0, dyn = 0;
	uint64_t regs[VP_UREG_COUNT] = { 0 };
	const unsigned char *stack = NULL;
	const struct vp_sample_id *sid;
	struct vp_raw_sample *smp;
	uint16_t mode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;

	if (take(c, &id, 8))
		goto out_malformed;
	sid = find_id(s, id);
	if (!sid)
		return 0;
	if (take(c, &ip, 8) || take(c, &pidtid, 8) || take(c, &time, 8) ||
	    take(c, &period, 8) || take(c, &abi, 8))
		goto out_malformed;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		for (int bit = 0; bit < VP_UREG_COUNT; bit++)
			if ((VP_UREG_MASK >> bit & 1) && take(c, &regs[bit], 8))
				goto out_malformed;
	}
	if (take(c, &size, 8))
		goto out_malformed;
	if (size) {
		stack = c->p;
		if ((uint64_t)(c->end - c->p) < size)
			goto out_malformed;
		c->p += size;
		if (take(c, &dyn, 8))
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
	/* A kernel thread or a task between exec and its first user
	 * instruction has no user state: nothing to unwind. */
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

	if (h->size < sizeof(*h) + SAMPLE_ID_SIZE)
		return 0;
	memcpy(&pidtid, end - SAMPLE_ID_SIZE, 8);
	memcpy(&r->time, end - SAMPLE_ID_SIZE + 8, 8);
	memcpy(&id, end - SAMPLE_ID_SIZE + 16, 8);
	r->pid = (uint32_t)pidtid;
	r->tid = (uint32_t)(pidtid >> 32);
	return find_id(s, id) != NULL;
}

/* An exec or a thread's exit, as a pseudo-mapping (see sampling.h). */
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
		       struct cursor *c, struct vp_raw *r)
{
	uint32_t ids[4]; /* COMM: pid, tid; EXIT: pid, ppid, tid, ptid */

	/* with events both of their own and inherited, threads report
	 * their exit twice: either will do */
	if (!decode_trailer(s, h, r))
		return 0;
	if (h->type == PERF_RECORD_COMM) {
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || take(c, ids, 8))
			return 0;
		if ((pid_t)ids[0] == s->pid)
			s->nknown = 0; /* a new image */
		return pseudo_mmap(r, exec_path, ids[0], ids[1]);
	}
	if (take(c, ids, 16))
		return 0;
	thread_exited(s, (pid_t)ids[2], r->time);
	return pseudo_mmap(r, exit_path, ids[0], ids[2]);
}

int vp_sampler_decode(struct vp_sampler *s, const struct perf_event_header *h, int cpu,
		      struct vp_raw *ret)
{
	struct cursor c = { (const unsigned char *)(h + 1), (const unsigned char *)h + h->size };
	int got;

	memset(ret, 0, sizeof(*ret));
	ret->cpu = (uint16_t)cpu;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return decode_sample(s, h, &c, ret);
	case PERF_RECORD_LOST_SAMPLES:
		/* samples the kernel could not write (the probes' decoder
		 * knows PERF_RECORD_LOST only): in combined mode too */
		if (take(&c, &ret->addr, 8) || h->size < sizeof(*h) + 8 + SAMPLE_ID_SIZE)
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
	got = vp_probes_decode(NULL, h, cpu, ret);
	if (got && ret->type == VP_RAW_MMAP && (pid_t)ret->pid == s->pid)
		known_add(s, ret->mmap->start, ret->mmap->start + ret->mmap->len);
	return got;
}

/* ---- the writing side ---- */

enum { MAX_FRAMES = 512 };

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
		die("out of memory (following thread %u)", tid);
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
	if (!len && !strcmp(path, exec_path)) {
		/* a new image: what was mapped and probed is gone */
		vp_unwinder_forget(ss->unw, pid);
		shadow_drop(ss, (uint32_t)start);
	} else if (!len && !strcmp(path, exit_path)) {
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
	to->v = xrealloc(to->v, from->n * sizeof(*to->v));
	memcpy(to->v, from->v, from->n * sizeof(*to->v));
	to->n = to->cap = from->n;
	to->has_gone = 0;
}

int vp_sample_sink_read_maps(struct vp_sample_sink *ss, pid_t pid)
{
	return vp_unwinder_read_maps(ss->unw, pid);
}

/* Remember that an entry probe sits at @vaddr of @path. */
static void probed_add(struct vp_sample_sink *ss, const char *path, uint64_t vaddr)
{
	struct probed key = { vaddr, path };
	void *p;

	if (vp_hashtab_insert(&ss->probed, vp_hash_mix(vaddr, 0), &key, &p) < 0)
		die("out of memory (noting a probe)");
	((struct probed *)p)->vaddr = vaddr;
	((struct probed *)p)->path = path;
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

void vp_sample_sink_probe(struct vp_sample_sink *ss, const char *path, uint64_t vaddr)
{
	probed_add(ss, path, vaddr);
}

void vp_sample_sink_entry(struct vp_sample_sink *ss, pid_t pid, uint32_t tid, uint64_t sp,
			  uint64_t ret, const char *path, uint64_t vaddr)
{
	struct shadow *sh;

	(void)pid;
	if (!sp)
		return;
	sh = shadow_of(ss, tid, 1);
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
