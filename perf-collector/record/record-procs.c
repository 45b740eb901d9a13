/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-procs.c - which processes a recording follows: the target and,
 * with --follow-fork, every process it (or a followed child) forks, until
 * that child execs another program.  Fed in time order from the fork and
 * exec records of the perf events, so that a child is known before its
 * first event; writes a PROCESS record per followed child (see record.h).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf-collector/record/record.h"
#include "util/util.h"

static void write_proc(struct record_output *out, const struct record_proc *p);

uint64_t record_process_cpu_ns(pid_t pid)
{
	struct timespec ts;
	clockid_t clk;

	if (clock_getcpuclockid(pid, &clk) || clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void record_procs_start(struct record_procs *ps, pid_t pid, int follow,
			struct record_output *out)
{
	/* auto mode's phase 2 in the same run: phase 1's processes go on */
	if (ps->n && ps->v[0].pid == (uint32_t)pid) {
		ps->follow = follow;
		/* their CPU time so far was phase 1's */
		for (size_t i = 1; i < ps->n; i++) {
			ps->v[i].cpu_base = ps->v[i].cpu_last =
				record_process_cpu_ns((pid_t)ps->v[i].pid);
			ps->v[i].cpu_gone = !ps->v[i].cpu_base;
		}
		for (size_t i = 0; ps->forked && i < ps->n; i++)
			if (!i || ps->v[i].followed || (ps->v[i].flags & VP_PROC_EXEC))
				write_proc(out, &ps->v[i]);
		return;
	}
	record_procs_release(ps);
	ps->follow = follow;
	ps->v = xcalloc(1, sizeof(*ps->v));
	ps->cap = 1;
	ps->n = 1;
	ps->v[0].pid = (uint32_t)pid;
	ps->v[0].followed = 1;
}

void record_procs_release(struct record_procs *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->v[i].exec);
	free(ps->v);
	memset(ps, 0, sizeof(*ps));
}

/* The entry of @pid, or NULL; sorted by pid but for the target, first. */
static struct record_proc *find(struct record_procs *ps, uint32_t pid)
{
	size_t lo = 1, hi = ps->n;

	if (ps->n && ps->v[0].pid == pid)
		return &ps->v[0];
	if (ps->last && ps->last->pid == pid)
		return ps->last;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ps->v[mid].pid == pid)
			return ps->last = &ps->v[mid];
		if (ps->v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct record_proc *insert(struct record_procs *ps, uint32_t pid)
{
	size_t i = ps->n;

	if (ps->n == ps->cap) {
		ps->cap *= 2;
		ps->v = xrealloc(ps->v, ps->cap * sizeof(*ps->v));
	}
	while (i > 1 && ps->v[i - 1].pid > pid) {
		ps->v[i] = ps->v[i - 1];
		i--;
	}
	memset(&ps->v[i], 0, sizeof(ps->v[i]));
	ps->v[i].pid = pid;
	ps->n++;
	ps->last = NULL;
	return &ps->v[i];
}

int record_procs_followed(struct record_procs *ps, uint32_t pid)
{
	struct record_proc *p = find(ps, pid);

	return p && p->followed;
}

static void write_proc(struct record_output *out, const struct record_proc *p)
{
	struct vp_process vp = { p->pid, p->ppid, p->flags, p->exec };

	if (out->w)
		record_write_failed(out, vp_writer_process(out->w, &vp));
}

void record_procs_fork(struct record_procs *ps, struct record_output *out, uint32_t ppid,
		       uint32_t pid)
{
	struct record_proc *parent = find(ps, ppid), *p;

	/* the same fork seen by two events (combined mode), or a stranger's */
	if (!parent || !parent->followed || find(ps, pid))
		return;
	if (!ps->follow) {
		ps->unfollowed++;
		return;
	}
	if (!ps->forked++) {
		/* the first child: the target becomes one process of several */
		ps->v[0].exec = xstrdup("");
		write_proc(out, &ps->v[0]);
	}
	p = insert(ps, pid);
	p->ppid = ppid;
	p->flags = VP_PROC_FORKED;
	p->followed = 1;
	p->exec = xstrdup("");
	write_proc(out, p);
}

void record_procs_exec(struct record_procs *ps, uint32_t pid)
{
	struct record_proc *p = find(ps, pid);

	/* the target's own exec (launching it) or a second report of one */
	if (!p || !p->followed || p == &ps->v[0])
		return;
	/* no longer the program probed: its first mapping says what it is */
	p->followed = 0;
	p->exec_pending = 1;
}

void record_procs_mapped(struct record_procs *ps, struct record_output *out, const char *prog,
			 uint32_t pid, const char *path)
{
	struct record_proc *p = find(ps, pid);

	if (!p || !p->exec_pending || path[0] != '/')
		return;
	p->exec_pending = 0;
	if (prog && !strcmp(path, prog)) {
		/* it exec'd the probed program again: still the one probed */
		p->followed = 1;
		return;
	}
	free(p->exec);
	p->exec = xstrdup(path);
	p->flags |= VP_PROC_EXEC;
	ps->execd++;
	write_proc(out, p);
}

void record_procs_finish(struct record_procs *ps, struct record_output *out)
{
	for (size_t i = 0; i < ps->n; i++) {
		struct record_proc *p = &ps->v[i];

		/* exec'd, but nothing was mapped before the end */
		if (p->exec_pending) {
			p->exec_pending = 0;
			p->flags |= VP_PROC_EXEC;
			ps->execd++;
			write_proc(out, p);
		}
	}
}

uint64_t record_procs_cpu(struct record_procs *ps)
{
	uint64_t sum = 0;

	for (size_t i = 1; i < ps->n; i++) {
		struct record_proc *p = &ps->v[i];

		/* an ended child's last reading stands (its pid may be reused) */
		if (p->followed && !p->cpu_gone) {
			uint64_t now = record_process_cpu_ns((pid_t)p->pid);

			if (now > p->cpu_last)
				p->cpu_last = now;
			else if (!now)
				p->cpu_gone = 1;
		}
		sum += p->cpu_last > p->cpu_base ? p->cpu_last - p->cpu_base : 0;
	}
	return sum;
}

void record_target_cpu_update(struct record_target *t)
{
	uint64_t cpu = record_process_cpu_ns(t->pid);

	/* a parent that only waits for its children spends no CPU time of
	 * its own: theirs counts all the same */
	cpu = (cpu > t->start_cpu ? cpu - t->start_cpu : 0) + record_procs_cpu(&t->procs);
	if (cpu > t->cpu)
		t->cpu = cpu;
}

/* "'/bin/true' (2), '/bin/sh'": the programs children exec'd. */
static char *execd_list(const struct record_procs *ps)
{
	char *out = xstrdup("");

	for (size_t i = 0; i < ps->n; i++) {
		const struct record_proc *p = &ps->v[i];
		size_t same = 0, j;
		char *next;

		if (!(p->flags & VP_PROC_EXEC))
			continue;
		for (j = 0; j < i; j++)
			if ((ps->v[j].flags & VP_PROC_EXEC) && !strcmp(ps->v[j].exec, p->exec))
				break;
		if (j < i)
			continue; /* counted with the first */
		for (j = i; j < ps->n; j++)
			same += (ps->v[j].flags & VP_PROC_EXEC) && !strcmp(ps->v[j].exec, p->exec);
		next = same > 1 ? xasprintf("%s%s'%s' (%zu)", out, *out ? ", " : "",
					    *p->exec ? p->exec : "?", same)
				: xasprintf("%s%s'%s'", out, *out ? ", " : "",
					    *p->exec ? p->exec : "?");
		free(out);
		out = next;
	}
	return out;
}

void record_procs_summary(const struct record_target *t, const struct record_probing *pr)
{
	const struct record_procs *ps = &t->procs;
	uint64_t n = ps->forked;
	uint64_t lost = pr->bpf_on ? vp_bpf_probes_unfollowed(&pr->bpf) : 0;
	uint64_t late = pr->bpf_on ? vp_bpf_probes_unheld(&pr->bpf) : 0;

	if (ps->unfollowed)
		info("'%s' forked %llu child process%s, not followed (--no-follow-fork): only "
		     "its own threads are recorded",
		     t->prog, (unsigned long long)ps->unfollowed,
		     ps->unfollowed == 1 ? "" : "es");
	if (lost)
		warning("%llu child process%s could not be followed: the BPF table of followed "
			"processes or the ring buffer was full (their probe hits are not recorded)",
			(unsigned long long)lost, lost == 1 ? "" : "es");
	if (late)
		warning("%llu child process%s ran before %s probes were attached (at most %.1f ms "
			"after the fork, see above): %s first calls are not recorded",
			(unsigned long long)late, late == 1 ? "" : "es",
			late == 1 ? "its" : "their", (double)pr->bpf.unheld_max_ns / 1e6,
			late == 1 ? "its" : "their");
	if (pr->bpf_on && pr->bpf.nheld)
		pr_debug("held %llu child process%s stopped at the fork until %s probes were "
			 "attached: %.2f ms on average, at most %.2f ms",
			 (unsigned long long)pr->bpf.nheld,
			 pr->bpf.nheld == 1 ? "" : "es",
			 pr->bpf.nheld == 1 ? "its" : "their",
			 (double)pr->bpf.held_ns / 1e6 / (double)pr->bpf.nheld,
			 (double)pr->bpf.held_max_ns / 1e6);
	if (n)
		info("followed %llu child process%s of '%s': %llu processes recorded (report "
		     "--pid shows one)",
		     (unsigned long long)n, n == 1 ? "" : "es", t->prog,
		     (unsigned long long)n + 1);
	if (ps->execd) {
		char *list = execd_list(ps);

		info("%llu child process%s exec'd another program and %s not followed from then "
		     "on: %s", (unsigned long long)ps->execd, ps->execd == 1 ? "" : "es",
		     ps->execd == 1 ? "was" : "were", list);
		free(list);
	}
}
