// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * probes.bpf.c - the BPF side of varperf's probe backend: programs for
 * BPF_TRACE_UPROBE_MULTI links (entries and exit sites in one link per
 * file, returns in another) that write one record per probe hit into a
 * ring buffer with the thread's off-CPU time so far, and count hits per
 * function in the kernel; and, from the scheduler's switches of the
 * recorded threads, a record for every time one went to sleep (blocked:
 * I/O, a lock, a sleep) with how long and in which syscall.  Every
 * link is restricted to one process: the target's own, and following
 * forks, each child's, which varperf makes while the child waits,
 * stopped before its first instruction (on_fork).  A child stopped is in
 * the "held" table until it is continued: by varperf, or, if varperf
 * dies first, by its guard process, which holds that table alone then.
 *
 * Compiled with clang -target bpf; loaded by probes-bpf.c, which sets the
 * expected attach type (libbpf 1.1 knows no "uprobe.multi" section).
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "perf-collector/probes/probes-bpf-abi.h"

char LICENSE[] SEC("license") = "GPL";

/* The fields read of the kernel's structures; CO-RE finds their offsets. */
struct rq {
	__u64 clock;
	__u64 clock_task;
} __attribute__((preserve_access_index));

/* With group scheduling, which distributions' kernels have. */
struct cfs_rq {
	struct rq *rq;
} __attribute__((preserve_access_index));

struct sched_entity {
	__u64 exec_start;
	__u64 sum_exec_runtime;
	struct cfs_rq *cfs_rq; /* its queue on the thread's CPU */
} __attribute__((preserve_access_index));

struct signal_struct {
	unsigned int flags;
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int flags;
	int pid;
	int tgid;
	struct sched_entity se;
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

/* Set by the loader before loading. */
const volatile struct vp_bpf_cfg cfg = { 0, 0, 0, 0 };

/* Following forks: the processes recorded (the target, its descendants). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} followed SEC(".maps");

/* Following forks: the children stopped (SIGSTOP) and not yet continued. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} held SEC(".maps");

/* Per recorded thread: where its current sleep began (see on_switch). */
struct vp_sleep {
	__u64 mark;   /* its off-CPU time (offcpu_of) as it went to sleep */
	__u64 woke;   /* when it was woken (bpf_ktime_get_ns), 0: not yet */
	__u32 reason; /* the syscall it slept in + 1, 0: none */
	__u32 asleep; /* 1 from then until it is back on a CPU */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vp_sleep);
} sleeps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by the loader */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vp_bpf_ctl);
} ctl SEC(".maps");

/* Entries per function, counted even when no record could be written. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* resized to the number of functions */
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VP_BPF_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += 1;
}

/* Whether process @tgid is recorded. */
static __always_inline int is_followed(__u32 tgid)
{
	if (tgid == cfg.target_tgid)
		return 1;
	return cfg.follow && bpf_map_lookup_elem(&followed, &tgid);
}

/*
 * The current thread's off-CPU time so far, from an origin of its own.
 * While a thread runs, the scheduler advances its se.exec_start and
 * se.sum_exec_runtime together; when it is switched back in, exec_start
 * jumps to that moment and the sum stays: their difference grows by the
 * time it spent switched out, whatever switched it out or in.  (Tracing
 * the switches instead misses those that tracing does not see: some
 * hosts hide their own agent's tasks from it, and a switch from one of
 * them into the target was lost, milliseconds taken for on-CPU time.)
 * exec_start is in this CPU's task clock, which stands still for steal
 * and interrupt time and so differs between CPUs; adding what this CPU's
 * task clock is behind its clock puts it on the clock all CPUs share.
 * (The run queue is found through the thread's fair-class queue, on a
 * kernel with group scheduling; the per-CPU "runqueues" symbol is not
 * there without CONFIG_KALLSYMS_ALL.  Without either, a thread that
 * migrates between CPUs gets their difference in steal time.)
 */
static __always_inline __u64 offcpu_of(struct task_struct *t)
{
	/* BTF pointers, read directly: a helper call per field cost 0.1 us a probe */
	__u64 start = t->se.exec_start, sum = t->se.sum_exec_runtime;

	if (bpf_core_field_exists(t->se.cfs_rq)) {
		struct cfs_rq *q = t->se.cfs_rq;
		struct rq *rq = q ? q->rq : 0;

		if (rq)
			start += rq->clock - rq->clock_task;
	}
	return start > sum ? start - sum : 0;
}

static __always_inline __u64 offcpu_now(void)
{
	return offcpu_of(bpf_get_current_task_btf());
}

/* bpf_loop()'s step for delay(): stop once the clock passes *until */
static long delay_step(__u64 index, void *until)
{
	return bpf_ktime_get_ns() >= *(__u64 *)until;
}

/*
 * The test suite's dearer probes (VARPERF_TEST_PROBE_DELAY_NS, HACKING):
 * every hit spins as a slower machine's trap would, before its time is
 * taken, so that the calibration, which runs these programs too, sees it.
 */
static __always_inline void delay(void)
{
	__u64 until;

	if (!cfg.delay_ns)
		return;
	until = bpf_ktime_get_ns() + cfg.delay_ns;
	bpf_loop(1 << 23, delay_step, &until, 0);
}

static __always_inline int emit(struct pt_regs *ctx, int is_return)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), pid_tgid;
	__u32 key = 0, func = VP_BPF_COOKIE_FUNC(cookie);
	__u32 kind = is_return ? VP_BPF_RETURN : VP_BPF_COOKIE_KIND(cookie);
	struct vp_bpf_ctl *c = bpf_map_lookup_elem(&ctl, &key);
	struct vp_bpf_rec *r;
	__u64 *n, avail;

	delay();
	/* a link being replaced: its successor records this call */
	if (!c || c->gen != VP_BPF_COOKIE_GEN(cookie))
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	if (kind == VP_BPF_ENTRY || kind == VP_BPF_ENTRY_EXITS) {
		n = bpf_map_lookup_elem(&hits, &func);
		if (n)
			*n += 1;
	}
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count(VP_BPF_STAT_LOST);
		return 0;
	}
	r->time = bpf_ktime_get_ns();
	r->pid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->func = func;
	r->kind = kind;
	r->sp = PT_REGS_SP(ctx);
	if (kind == VP_BPF_ENTRY || kind == VP_BPF_ENTRY_EXITS) {
		if (bpf_probe_read_user(&r->addr, sizeof(r->addr), (void *)r->sp))
			r->addr = 0;
	} else {
		r->addr = PT_REGS_IP(ctx);
	}
	r->offcpu = offcpu_now();
	/*
	 * Wake the reader once, when the backlog crosses the mark (within a
	 * 4 KiB window, as CPUs reserve concurrently), never per record: a
	 * wake-up costs microseconds, the reader polls on a timer anyway.
	 */
	avail = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(r, avail >= c->wake_bytes && avail - c->wake_bytes < 4096
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int vp_entry(struct pt_regs *ctx)
{
	return emit(ctx, 0);
}

SEC("uretprobe")
int vp_return(struct pt_regs *ctx)
{
	return emit(ctx, 1);
}

enum pid_type { PIDTYPE_PID = 0 };
enum { SIGSTOP_ = 19 };

/* Linux 6.13 on: a signal to another task (a kfunc). */
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __ksym __weak;
/* Linux 6.2 on (the BPF backend wants 6.12): a task by its pid, held. */
extern struct task_struct *bpf_task_from_pid(__s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

enum { PF_EXITING_ = 0x4, SIGNAL_GROUP_EXIT_ = 0x4 };

/*
 * Whether varperf still lives to continue a child it holds: neither gone
 * nor dying.  A SIGKILL marks its signal_struct SIGNAL_GROUP_EXIT as it
 * is sent, long before the kernel has closed its links (a grace period
 * each): from then on no child is stopped, and the guard (probes-bpf.c)
 * has only the ones stopped before to continue.
 */
static __always_inline int recorder_alive(void)
{
	struct task_struct *t = bpf_task_from_pid((__s32)cfg.recorder_tgid);
	int alive;

	if (!t)
		return 0;
	alive = !(t->flags & PF_EXITING_) && !(t->signal->flags & SIGNAL_GROUP_EXIT_);
	bpf_task_release(t);
	return alive;
}

/*
 * The target's children.  Following forks, a child of a recorded process
 * is recorded from its first instruction on: with @hold it gets a SIGSTOP
 * before it ever runs (taken on its way to user space), and varperf,
 * woken at once by the record written here, links its probes and
 * continues it (SIGCONT).  Where the ring has no room it runs on
 * unheld and unprobed (counted).  One that execs another program no
 * longer runs the probed code.
 */
static __always_inline int on_fork(struct task_struct *parent, struct task_struct *child,
				   int hold)
{
	__u32 tgid, ppid;
	struct vp_bpf_rec *r;
	__u8 one = 1;

	if (!parent || !child)
		return 0;
	tgid = (__u32)child->tgid;
	ppid = (__u32)parent->tgid;
	if (tgid == ppid || !is_followed(ppid))
		return 0;
	if (bpf_map_update_elem(&followed, &tgid, &one, BPF_ANY)) {
		count(VP_BPF_STAT_NO_FOLLOW);
		return 0;
	}
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count(VP_BPF_STAT_NO_CHILD);
		return 0;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->time = bpf_ktime_get_ns();
	r->pid = tgid;
	r->tid = ppid;
	r->kind = VP_BPF_CHILD;
	/*
	 * Queued before varperf can read the record: its SIGCONT cancels it
	 * or ends the stop.  In "held" first, so that no stop is ever sent
	 * that the guard cannot find (where the table is full: not held).
	 */
	if (hold && recorder_alive() && !bpf_map_update_elem(&held, &tgid, &one, BPF_ANY)) {
		r->addr = bpf_send_signal_task(child, SIGSTOP_, PIDTYPE_PID, 0) == 0;
		if (!r->addr)
			bpf_map_delete_elem(&held, &tgid);
	}
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* Linux 6.13 on: the child is held until its links are made. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(vp_fork_hold, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child, 1);
}

/* Before: its links come as soon as varperf can make them. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(vp_fork, struct task_struct *parent, struct task_struct *child)
{
	return on_fork(parent, child, 0);
}

/* A followed process ended: its pid may name another process soon, and
 * varperf drops its links. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(vp_exit, struct task_struct *task)
{
	__u32 tgid = (__u32)task->tgid;
	struct vp_bpf_rec *r;

	if (!cfg.follow || task->pid != task->tgid || tgid == cfg.target_tgid ||
	    !bpf_map_lookup_elem(&followed, &tgid))
		return 0;
	bpf_map_delete_elem(&followed, &tgid);
	bpf_map_delete_elem(&held, &tgid); /* killed while stopped */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r)
		return 0; /* its links go at the end */
	__builtin_memset(r, 0, sizeof(*r));
	r->time = bpf_ktime_get_ns();
	r->pid = tgid;
	r->kind = VP_BPF_GONE;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* The syscall @t is in, + 1; 0 when it is in none (a page fault). */
static __always_inline __u32 syscall_of(struct task_struct *t)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	long nr = -1;

	if (!regs || bpf_probe_read_kernel(&nr, sizeof(nr), &regs->orig_rax))
		return 0;
	return nr < 0 || nr > 4096 ? 0 : (__u32)nr + 1;
}

/* The sleep of @t that ended: a WAIT record of its length. */
static __always_inline void wake(struct task_struct *t, struct vp_sleep *s)
{
	__u64 off = offcpu_of(t), now = bpf_ktime_get_ns(), queued = 0;
	struct vp_bpf_rec *r;

	/* woken, it waited for a CPU: that part was the machine's */
	if (s->woke && now > s->woke)
		queued = now - s->woke;
	off = off > s->mark ? off - s->mark : 0;
	off = off > queued ? off - queued : 0;
	s->asleep = 0;
	s->woke = 0;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count(VP_BPF_STAT_NO_WAIT);
		return;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->time = now;
	r->pid = (__u32)t->tgid;
	r->tid = (__u32)t->pid;
	r->kind = VP_BPF_WAIT;
	r->func = s->reason;
	r->addr = off;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * Blocked versus preempted.  A recorded thread switched out while it
 * could still run (preempt, or its state still TASK_RUNNING) was taken
 * off the CPU by the machine; one switched out asleep waits for
 * something of its program's.  The time off the CPU from such a sleep
 * to its wake-up comes in a WAIT record as it is back on a CPU: what it
 * spent off the CPU since it went to sleep (on the clock of the records'
 * off-CPU times, so that a reader's blocked time never exceeds their
 * off-CPU time) less its wait on the run queue since the wake-up, which
 * is the machine's like a preemption.  A switch in that tracing missed
 * (offcpu_now) ends the sleep at the thread's next switch out.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(vp_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct vp_sleep *s;

	if (prev && is_followed((__u32)prev->tgid)) {
		s = bpf_task_storage_get(&sleeps, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (s && s->asleep)
			wake(prev, s);
		if (s && !preempt && (prev_state & 0xff)) {
			s->mark = offcpu_of(prev);
			s->woke = 0;
			s->reason = syscall_of(prev);
			s->asleep = 1;
		}
	}
	if (next && is_followed((__u32)next->tgid)) {
		s = bpf_task_storage_get(&sleeps, next, 0, 0);
		if (s && s->asleep)
			wake(next, s);
	}
	return 0;
}

/* A recorded thread asleep is woken: from now on it waits for a CPU. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(vp_wakeup, struct task_struct *p)
{
	struct vp_sleep *s;

	if (!p || !is_followed((__u32)p->tgid))
		return 0;
	s = bpf_task_storage_get(&sleeps, p, 0, 0);
	if (s && s->asleep && !s->woke)
		s->woke = bpf_ktime_get_ns();
	return 0;
}
