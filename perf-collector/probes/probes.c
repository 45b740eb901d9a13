/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * probes.c - open the uprobes of a recording and decode their records.
 *
 * Layout: uprobe-PMU events with pid = -1, one
 * per CPU, because inherit=1 on the uprobe PMU makes the kernel re-read the
 * probe's path pointer from the *child's* memory at clone() and
 * pthread_create() fails with EFAULT.  Each CPU has one ring buffer and
 * every event of that CPU is redirected into it.  So every process that
 * maps the probed file traps (record warns): an event with pid = the
 * target and no inherit traps in its process only, but counts its first
 * thread only (Linux 6.18: 100 000 of two threads' 200 000 calls, both
 * threads slowed; with inherit=1, pthread_create() failed with EFAULT).
 */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/probes/detach.h"
#include "perf-collector/probes/probes.h"
#include "util/util.h"

struct vp_probe_id {
	uint64_t id;
	uint32_t func;
	uint16_t type; /* VP_RAW_ENTRY, VP_RAW_EXIT or VP_RAW_MMAP */
	uint16_t kind; /* enum vp_probe_kind; the mmap tracker: VP_PROBE_ENTRY */
	uint32_t flags; /* VP_RAW_F_* for its records */
	size_t fdi;	/* its fd: p->fds[fdi] */
	uint64_t seen;	/* records of it decoded */
	uint64_t hits;	/* the kernel's count when its fd was closed early */
};

/* Entry: the return address is the 8 bytes at the stack pointer. */
static const uint64_t entry_sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
					  PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
					  PERF_SAMPLE_STACK_USER;
/* Return: the sample IP is the address returned to.  Exit site: the
 * address of the ret or jmp, and the return address is still on top of
 * the stack. */
static const uint64_t exit_sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
					 PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					 PERF_SAMPLE_REGS_USER;
/* Exit probes of one function. */
static size_t exit_probes(const struct vp_exits *exits, size_t i)
{
	if (!exits)
		return 1;
	switch (exits[i].how) {
	case VP_EXITS_SITES:
		return exits[i].n;
	case VP_EXITS_URETPROBE:
		return 1;
	default:
		return 0;
	}
}

size_t vp_probes_fds_needed(const struct vp_exits *exits, size_t nfuncs, int ncpus)
{
	size_t n = 1; /* the mmap tracker */

	for (size_t i = 0; i < nfuncs; i++)
		n += 1 + exit_probes(exits, i);
	return n * (size_t)ncpus;
}

static int cmp_probe_id(const void *a, const void *b)
{
	const struct vp_probe_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int add_fd(struct vp_probes *p, int fd, uint32_t func, uint16_t type, uint16_t kind,
		  uint32_t flags)
{
	uint64_t id;

	p->fd_is_return[p->nfds] = kind == VP_PROBE_RETURN;
	p->fd_func[p->nfds] = type == VP_RAW_MMAP ? UINT32_MAX : func;
	p->fds[p->nfds++] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		return -errno;
	p->ids[p->nids++] = (struct vp_probe_id){ id, func, type, kind, flags, p->nfds - 1, 0, 0 };
	return 0;
}

/* The CPU's buffer owner: a dummy event on the target reporting mmaps. */
static int open_mmap_tracker(struct vp_probes *p, int ci, pid_t pid, size_t buf_size)
{
	struct perf_event_attr attr;
	char why[256];
	int fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.inherit = 1; /* threads map libraries too; fine for a software event */
	attr.task = 1;	  /* forks: which processes descend from the target */
	attr.comm = 1;	  /* (exec: a child no longer runs the probed program) */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(buf_size / 4);
	fd = vp_perf_event_open(&attr, pid, p->cpus[ci], -1);
	if (fd == -ESRCH)
		return error("process %d has ended: nothing left to probe", (int)pid);
	if (fd < 0)
		return error("cannot open the mmap tracking event on CPU %d: %s", p->cpus[ci],
			     vp_perf_open_strerror(fd, &attr, why, sizeof(why)));
	err = add_fd(p, fd, 0, VP_RAW_MMAP, VP_PROBE_ENTRY, 0);
	if (!err)
		err = vp_ring_map(&p->rings[ci], fd, p->cpus[ci], buf_size);
	if (err == -EPERM || err == -ENOMEM)
		return error("cannot map a %zu-byte ring buffer on CPU %d: %s (try a smaller "
			     "--buffer-size)", buf_size, p->cpus[ci], strerror(-err));
	if (err)
		return error("cannot set up the ring buffer on CPU %d: %s", p->cpus[ci],
			     strerror(-err));
	return 0;
}

/* The attributes of one probe of @kind, as recorded. */
static void probe_attr(struct perf_event_attr *attr, int type, int retbit, int kind,
		       const char *path, uint64_t off)
{
	vp_uprobe_attr(attr, type, retbit, kind == VP_PROBE_RETURN, path, off);
	if (kind != VP_PROBE_ENTRY) {
		attr->sample_type = exit_sample_type;
	} else {
		attr->sample_type = entry_sample_type;
		attr->sample_stack_user = 8;
	}
	attr->sample_regs_user = 1ULL << VP_PERF_REG_SP;
}

static int open_probe(struct vp_probes *p, int ci, pid_t pid, int type, int retbit,
		      const struct vp_func *f, uint32_t func, const char *path, int kind,
		      uint64_t off, uint32_t flags, size_t buf_size)
{
	struct perf_event_attr attr;
	char why[256];
	int fd, err;

	probe_attr(&attr, type, retbit, kind, path, off);
	fd = vp_perf_event_open(&attr, pid, p->cpus[ci], -1);
	if (fd < 0 && kind == VP_PROBE_EXIT_SITE)
		return error("cannot probe the exit of '%s' at file offset %#llx in '%s': %s "
			     "(try --exit-probes=uretprobe)", f->display, (unsigned long long)off,
			     path, vp_perf_open_strerror(fd, &attr, why, sizeof(why)));
	if (fd < 0)
		return error("cannot probe '%s' in '%s': %s", f->display, path,
			     vp_perf_open_strerror(fd, &attr, why, sizeof(why)));
	err = add_fd(p, fd, func, kind == VP_PROBE_ENTRY ? VP_RAW_ENTRY : VP_RAW_EXIT,
		     (uint16_t)kind, flags);
	if (!err && !p->rings[ci].base)
		err = vp_ring_map(&p->rings[ci], fd, p->cpus[ci], buf_size);
	else if (!err)
		err = vp_ring_redirect(&p->rings[ci], fd);
	if (err)
		return error("cannot connect the probe of '%s' to the CPU %d buffer: %s",
			     f->display, p->cpus[ci], strerror(-err));
	return 0;
}

/* The entry probe and the exit probes of function @i on CPU @ci. */
static int open_function(struct vp_probes *p, int ci, pid_t pid, int type, int retbit,
			 const struct vp_func *funcs, const struct vp_exits *exits, size_t i,
			 const char *path, size_t buf_size)
{
	const struct vp_func *f = &funcs[i];
	uint32_t how = exits ? exits[i].how : VP_EXITS_URETPROBE;
	uint32_t func = (uint32_t)i;

	if (open_probe(p, ci, pid, type, retbit, f, func, path, VP_PROBE_ENTRY, f->probe_off,
		       how == VP_EXITS_AT_ENTRY ? VP_RAW_F_EXITS_TOO : 0, buf_size) < 0)
		return -1;
	if (how == VP_EXITS_URETPROBE)
		return open_probe(p, ci, pid, type, retbit, f, func, path, VP_PROBE_RETURN,
				  f->probe_off, 0, buf_size);
	for (uint32_t k = 0; how == VP_EXITS_SITES && k < exits[i].n; k++)
		if (open_probe(p, ci, pid, type, retbit, f, func, path, VP_PROBE_EXIT_SITE,
			       exits[i].offs[k], 0, buf_size) < 0)
			return -1;
	return 0;
}

/*
 * The probed files, open: the process that removes the probes later holds
 * a shared lock on each while it does (see vp_probes_wait_removed()).
 */
static void open_locks(struct vp_probes *p, const struct vp_func *funcs, size_t nfuncs,
		       const struct vp_module *mods)
{
	for (size_t i = 0; i < nfuncs; i++) {
		uint32_t m = funcs[i].module;
		int seen = 0, fd;

		for (size_t k = 0; k < p->nlocks && !seen; k++)
			seen = p->lock_mods[k] == m;
		if (seen || !mods[m].path)
			continue;
		fd = open(mods[m].path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		p->lock_fds = xrealloc(p->lock_fds, (p->nlocks + 1) * sizeof(*p->lock_fds));
		p->lock_mods = xrealloc(p->lock_mods, (p->nlocks + 1) * sizeof(*p->lock_mods));
		p->lock_fds[p->nlocks] = fd;
		p->lock_mods[p->nlocks++] = m;
	}
}

int vp_probes_open(struct vp_probes *p, const struct vp_func *funcs, size_t nfuncs,
		   const struct vp_exits *exits, const struct vp_module *mods, pid_t pid,
		   size_t buf_size, int flags)
{
	pid_t probe_pid = -1;
	int type, retbit, err;
	size_t nfds;

	memset(p, 0, sizeof(*p));
	err = vp_uprobe_pmu(&type, &retbit);
	if (err == -ENOENT)
		return error("the uprobe PMU is not available "
			     "(no /sys/bus/event_source/devices/uprobe)");
	if (err)
		return error("cannot read the uprobe PMU type: %s", strerror(-err));
	if (flags & VP_PROBES_TASK) {
		/* One thread that never migrates records: any CPU, one buffer. */
		p->cpus = xmalloc(sizeof(*p->cpus));
		p->cpus[0] = -1;
		p->ncpus = 1;
		probe_pid = pid;
	} else {
		p->ncpus = vp_online_cpus(&p->cpus);
		if (p->ncpus < 0) {
			err = p->ncpus;
			p->ncpus = 0;
			return error("cannot list the online CPUs: %s", strerror(-err));
		}
	}
	p->rings = xcalloc((size_t)p->ncpus, sizeof(*p->rings));
	nfds = vp_probes_fds_needed(exits, nfuncs, p->ncpus);
	p->fds = xcalloc(nfds, sizeof(*p->fds));
	p->fd_is_return = xcalloc(nfds, sizeof(*p->fd_is_return));
	p->fd_func = xcalloc(nfds, sizeof(*p->fd_func));
	p->ids = xcalloc(nfds, sizeof(*p->ids));
	open_locks(p, funcs, nfuncs, mods);
	for (int ci = 0; ci < p->ncpus; ci++) {
		if (!(flags & VP_PROBES_TASK) && open_mmap_tracker(p, ci, pid, buf_size) < 0)
			goto out_close;
		for (size_t i = 0; i < nfuncs; i++)
			if (open_function(p, ci, probe_pid, type, retbit, funcs, exits, i,
					  mods[funcs[i].module].path, buf_size) < 0)
				goto out_close;
	}
	qsort(p->ids, p->nids, sizeof(*p->ids), cmp_probe_id);
	pr_debug("opened %zu events on %d CPUs", p->nfds, p->ncpus);
	return 0;
out_close:
	vp_probes_close(p);
	return -1;
}

static void join_closers(struct vp_probes *p);

void vp_probes_close(struct vp_probes *p)
{
	join_closers(p);
	for (int ci = 0; ci < p->ncpus; ci++)
		vp_ring_unmap(&p->rings[ci]);
	for (size_t i = 0; i < p->nfds; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
	free(p->rings);
	free(p->fds);
	free(p->fd_is_return);
	free(p->fd_func);
	free(p->ids);
	free(p->cpus);
	for (size_t i = 0; i < p->nlocks; i++)
		close(p->lock_fds[i]);
	free(p->lock_fds);
	free(p->lock_mods);
	memset(p, 0, sizeof(*p));
}

void vp_probes_close_detached(struct vp_probes *p, int flags)
{
	int gate[2], *keep;
	size_t nkeep = 0;
	pid_t pid;

	join_closers(p);
	for (size_t i = 0; i < p->nfds; i++)
		ioctl(p->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t i = 0; (flags & VP_CLOSE_RETURNS_NOW) && i < p->nfds; i++) {
		if (p->fd_is_return[i]) {
			close(p->fds[i]);
			p->fds[i] = -1;
		}
	}
	if (pipe2(gate, O_CLOEXEC) < 0)
		goto sync;
	/* taken before the fork: held by the child's copies once ours close */
	for (size_t i = 0; i < p->nlocks; i++)
		flock(p->lock_fds[i], LOCK_SH);
	/* the events, the locks and the gate: nothing else of varperf's */
	keep = xcalloc(p->nfds + p->nlocks + 1, sizeof(*keep));
	for (size_t i = 0; i < p->nfds; i++)
		if (p->fds[i] >= 0)
			keep[nkeep++] = p->fds[i];
	for (size_t i = 0; i < p->nlocks; i++)
		keep[nkeep++] = p->lock_fds[i];
	keep[nkeep++] = gate[0];
	pid = vp_detach_fork(VP_UNPROBE_NAME, keep, nkeep);
	free(keep);
	if (pid < 0) {
		close(gate[0]);
		close(gate[1]);
		goto sync;
	}
	if (pid == 0) {
		char c;

		/* wait until the parent has dropped its references, then pay
		 * for the removals here */
		while (read(gate[0], &c, 1) < 0 && errno == EINTR)
			;
		/* Return probes first: see probes.h. */
		for (int ret = 1; ret >= 0; ret--)
			for (size_t i = 0; i < p->nfds; i++)
				if (p->fd_is_return[i] == ret && p->fds[i] >= 0)
					close(p->fds[i]);
		_exit(0);
	}
	close(gate[0]);
	/* The child holds the events now: these closes are cheap. */
	vp_probes_close(p);
	close(gate[1]);
	return;
sync:
	vp_probes_close(p);
}

/* The kernel's count of hits of event @fd, or 0 if it cannot be read. */
static uint64_t hits_of(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v) ? v : 0;
}

uint64_t vp_probes_unseen(const struct vp_probes *p)
{
	uint64_t unseen = 0;

	for (size_t k = 0; k < p->nids; k++) {
		const struct vp_probe_id *e = &p->ids[k];
		uint64_t hits;

		if (e->type == VP_RAW_MMAP)
			continue;
		hits = p->fds[e->fdi] >= 0 ? hits_of(p->fds[e->fdi]) : e->hits;
		if (hits > e->seen)
			unseen += hits - e->seen;
	}
	return unseen;
}

struct closer {
	int *fds;
	size_t n;
};

/* Removing a uprobe takes the kernel 60-80 ms: a thread pays for it. */
static void *closer_main(void *arg)
{
	struct closer *c = arg;

	for (size_t i = 0; i < c->n; i++)
		close(c->fds[i]);
	free(c->fds);
	free(c);
	return NULL;
}

/* Wait until every closer thread is done. */
static void join_closers(struct vp_probes *p)
{
	for (size_t i = 0; i < p->nclosers; i++)
		pthread_join(p->closers[i], NULL);
	free(p->closers);
	p->closers = NULL;
	p->nclosers = 0;
}

/* Whether a live (not zombie) process is named @comm. */
static int process_running(const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char path[300], buf[512], *name, *end;
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* "pid (comm) S ...": the name may hold spaces and parentheses */
		if (fgets(buf, sizeof(buf), f) && (name = strchr(buf, '(')) &&
		    (end = strrchr(buf, ')')) && end[1] == ' ' && end[2] != 'Z') {
			*end = '\0';
			found = !strcmp(name + 1, comm);
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/* Whether a process removing probes holds a lock on @fd's file. */
static int file_locked(int fd)
{
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK;
	flock(fd, LOCK_UN);
	return 0;
}

int vp_probes_wait_removed(const char *path, int max_ms, const char *why)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	/* a file that cannot be opened: any removal at all */
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	int busy = fd >= 0 ? file_locked(fd) : process_running(VP_UNPROBE_NAME);

	if (busy && why)
		info("%s", why);
	for (int waited = 0; busy && waited < max_ms; waited += 100) {
		nanosleep(&tick, NULL);
		busy = fd >= 0 ? file_locked(fd) : process_running(VP_UNPROBE_NAME);
	}
	if (fd >= 0)
		close(fd);
	return busy ? -EBUSY : 0;
}

void vp_probes_drop(struct vp_probes *p, uint32_t func)
{
	struct closer *c = xcalloc(1, sizeof(*c));
	pthread_t t;

	/*
	 * No event from now on; what the kernel counted until now is what
	 * the buffers must hold.  Not a process to close them: a fork waits
	 * while any uprobe anywhere is being removed (the kernel's
	 * dup_mmap_sem), seconds when another varperf is cleaning up, and
	 * then the buffers overflow.
	 */
	c->fds = xcalloc(p->nfds + 1, sizeof(*c->fds));
	for (size_t i = 0; i < p->nfds; i++)
		if (p->fd_func[i] == func && p->fds[i] >= 0)
			ioctl(p->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t k = 0; k < p->nids; k++) {
		struct vp_probe_id *e = &p->ids[k];

		if (e->type != VP_RAW_MMAP && e->func == func && p->fds[e->fdi] >= 0)
			e->hits = hits_of(p->fds[e->fdi]);
	}
	/* return probes first, as vp_probes_close_detached() does */
	for (int ret = 1; ret >= 0; ret--) {
		for (size_t i = 0; i < p->nfds; i++) {
			if (p->fd_func[i] == func && p->fd_is_return[i] == ret && p->fds[i] >= 0) {
				c->fds[c->n++] = p->fds[i];
				p->fds[i] = -1;
			}
		}
	}
	p->closers = xrealloc(p->closers, (p->nclosers + 1) * sizeof(*p->closers));
	if (pthread_create(&t, NULL, closer_main, c) == 0) {
		p->closers[p->nclosers++] = t;
	} else {
		/* no thread: close them here, slowly but surely */
		closer_main(c);
	}
}

static struct vp_probe_id *find_id(struct vp_probes *p, uint64_t id)
{
	struct vp_probe_id key = { .id = id };

	return bsearch(&key, p->ids, p->nids, sizeof(key), cmp_probe_id);
}

/* Common prefix after the identifier (and IP for returns): pid/tid, time. */
static int take_tid_time(struct vp_cursor *c, struct vp_raw *r)
{
	uint64_t v;

	if (vp_cursor_u64(c, &v) < 0)
		return -1;
	r->pid = (uint32_t)v;
	r->tid = (uint32_t)(v >> 32);
	return vp_cursor_u64(c, &r->time);
}

/* REGS_USER with only the stack pointer: abi, then sp unless abi is NONE. */
static int take_sp(struct vp_cursor *c, struct vp_raw *r)
{
	uint64_t abi;

	if (vp_cursor_u64(c, &abi) < 0)
		return -1;
	r->sp = 0;
	return abi == PERF_SAMPLE_REGS_ABI_NONE ? 0 : vp_cursor_u64(c, &r->sp);
}

static int decode_sample(struct vp_probes *p, struct vp_cursor *c, struct vp_raw *r)
{
	struct vp_probe_id *pid;
	uint64_t id, size, dyn;

	if (vp_cursor_u64(c, &id) < 0 || !(pid = find_id(p, id)) || pid->type == VP_RAW_MMAP)
		return 0;
	r->func = pid->func;
	r->type = pid->type;
	r->flags = pid->flags;
	if (pid->type == VP_RAW_EXIT) {
		if (vp_cursor_u64(c, &r->addr) < 0 || take_tid_time(c, r) < 0 || take_sp(c, r) < 0)
			return 0;
		/* Before the ret: the data file's exits have the popped sp. */
		if (pid->kind == VP_PROBE_EXIT_SITE && r->sp)
			r->sp += 8;
		/* (one that does not decode counts as lost: vp_probes_unseen) */
		pid->seen++;
		return 1;
	}
	if (take_tid_time(c, r) < 0 || take_sp(c, r) < 0 || vp_cursor_u64(c, &size) < 0)
		return 0;
	r->addr = 0;
	if (size) {
		const unsigned char *data = c->p;

		if (vp_cursor_skip(c, size) < 0 || vp_cursor_u64(c, &dyn) < 0)
			return 0;
		/* dyn_size < 8: the kernel could not copy the stack word. */
		if (size >= 8 && dyn >= 8)
			memcpy(&r->addr, data, 8);
	}
	pid->seen++;
	return 1;
}

int vp_probes_decode(struct vp_probes *p, const struct perf_event_header *h, int cpu,
		     struct vp_raw *ret)
{
	struct vp_cursor c = VP_CURSOR_INIT(h);

	if (h->type != PERF_RECORD_SAMPLE)
		return vp_raw_decode(h, cpu, ret);
	memset(ret, 0, sizeof(*ret));
	ret->cpu = (uint16_t)cpu;
	return p ? decode_sample(p, &c, ret) : 0;
}

int vp_probes_remove_stale(void)
{
	static const char *const files[] = { "/sys/kernel/tracing/uprobe_events",
					     "/sys/kernel/debug/tracing/uprobe_events" };
	char line[4096];
	int removed = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f = fopen(files[i], "re");
		int wfd;

		if (!f)
			continue;
		/* tracefs wants one write() per command, with O_APPEND semantics
		 * not available through stdio's "a" mode. */
		wfd = open(files[i], O_WRONLY | O_APPEND | O_CLOEXEC);
		while (wfd >= 0 && fgets(line, sizeof(line), f)) {
			char *ev = strchr(line, ':'), *sp;
			char cmd[512];

			if (!ev || strncmp(ev + 1, "varperf/", 8))
				continue;
			sp = strpbrk(ev + 1, " \n");
			if (sp)
				*sp = '\0';
			snprintf(cmd, sizeof(cmd), "-:%s", ev + 1);
			if (write(wfd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd))
				removed++;
		}
		if (wfd >= 0)
			close(wfd);
		fclose(f);
		if (removed)
			break;
	}
	return removed;
}
