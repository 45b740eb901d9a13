/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-budget.c - auto mode's phase 2 kept within its budget: what the
 * probes cost is measured while the target runs, plan.c judges it
 * against the budget (vp_plan_over_budget()), and here its verdict is
 * applied - the probes over it stop, the calls they stretched are left
 * out - then accounted in the trailer and said.  See record.h.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf-collector/record/record.h"
#include "util/util.h"

/*
 * On the BPF backend the kernel counts every entry, recorded or not (a
 * full buffer, a record not read yet): the calls are those counts.
 */
static void count_calls(const struct record_probing *p, uint64_t *calls, size_t nfuncs)
{
	for (uint32_t f = 0; p->bpf_on && f < nfuncs; f++)
		calls[f] = vp_bpf_probes_hits(&p->bpf, f);
}

/* What the probes cost so far, for plan.c to judge (@dropped: see
 * vp_plan_spend; @overhead: the budget). */
static void spend_of(const struct vp_header *h, const uint64_t *calls, double overhead,
		     double cpu, const unsigned char *dropped, struct vp_plan_spend *s)
{
	s->funcs = h->funcs;
	s->nfuncs = h->nfuncs;
	s->costs = h->costs;
	s->ncosts = h->ncosts;
	s->calls = calls;
	s->dropped = dropped;
	s->cpu_ns = cpu;
	s->overhead = overhead;
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

		if (!rec->probing.bpf_on && !rec->probing.user)
			vp_probes_drop(&rec->probing.probes, d->func);
		drop[d->func] = 1;
		rec->phase.dropped[d->func] = 1;
		record_write_failed(&rec->output, vp_writer_unprobed(rec->output.w, d->func, now));
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
	if (v->ndrop && rec->probing.user) {
		uint64_t t0 = monotonic_ns();

		if (record_user_drop(rec, drop) < 0)
			warning("phase 2: the probes over the budget stay: the process could not "
				"be stopped to unpatch them");
		pr_debug("phase 2: functions unpatched in %.1f ms",
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
		record_merge_discard_before(rec, t);
		if (!rec->opts.quiet)
			info("phase 2: the calls of its first %s are left out: their times hold "
			     "the cost of the probes removed then",
			     fmt_duration((double)(t - rec->target.start_ns), a, sizeof(a)));
		return;
	}
	/* later: what the last rounds held back, since before the look */
	from = record_merge_discard_before(rec, t);
	if (from < rec->target.start_ns)
		from = rec->target.start_ns;
	if (!rec->opts.quiet)
		info("phase 2: the calls from %s to %s are left out: their times hold the "
		     "cost of the probes removed then",
		     fmt_duration((double)(from - rec->target.start_ns), a, sizeof(a)),
		     fmt_duration((double)(t - rec->target.start_ns), b, sizeof(b)));
}

/* Phase 2, every round: stop probing what costs more than the budget. */
void record_budget_watch(struct record *rec)
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
	 * new links replace the old ones in milliseconds.  The user backend
	 * likewise: its rings are read every round, and a patch is undone in
	 * a millisecond.
	 */
	if (rec->probing.bpf_on || rec->probing.user) {
		record_target_cpu_update(&rec->target);
		/* 10 ms of CPU give thousands of calls of anything too costly
		 * (an idle target: its calls are counted after 200 ms anyway) */
		if (rec->target.cpu < 10000000 && now - rec->target.start_ns < 200000000)
			return;
	} else if (now - (rec->phase.watched_ns ? rec->phase.watched_ns : rec->target.start_ns) <
		   40000000 || now - rec->target.start_ns < 300000000) {
		return;
	}
	rec->phase.watched_ns = now;
	record_target_cpu_update(&rec->target);
	count_calls(&rec->probing, rec->phase.calls, rec->hdr.nfuncs);
	/* the wall time when the CPU time cannot be read */
	cpu = (double)(rec->target.cpu ? rec->target.cpu : now - rec->target.start_ns);
	spend_of(&rec->hdr, rec->phase.calls, rec->opts.overhead, cpu, rec->phase.dropped, &s);
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

/* Phase 2, at the end: what the probes cost in all, measured. */
void record_budget_account(struct record *rec, struct vp_trailer *tr)
{
	struct vp_plan_spend s;
	struct vp_plan_verdict v;

	if (!rec->phase.calls || !rec->target.cpu)
		return;
	count_calls(&rec->probing, rec->phase.calls, rec->hdr.nfuncs);
	spend_of(&rec->hdr, rec->phase.calls, rec->opts.overhead, (double)rec->target.cpu, NULL,
		 &s);
	vp_plan_over_budget(&s, &v);
	tr->probe_cost_ns = (uint64_t)v.cost_ns;
	tr->target_cpu_ns = rec->target.cpu;
	tr->budget_ppm = (uint32_t)(rec->opts.overhead * 1e6 + 0.5);
	if (v.over)
		tr->flags |= VP_END_OVER_BUDGET;
	vp_plan_verdict_release(&v);
}

/* ... and for the user: over the budget, a warning (report repeats it). */
static void print_measured_cost(const struct record_opts *o, const struct vp_trailer *tr)
{
	double share;

	if (!tr->target_cpu_ns || !tr->budget_ppm)
		return;
	share = (double)tr->probe_cost_ns / (double)tr->target_cpu_ns * 100;
	if (tr->flags & VP_END_OVER_BUDGET)
		warning("phase 2: the probes cost about %.1f%% of the target's CPU time, over the "
			"%g%% budget: the run took that much longer than the program alone", share,
			o->overhead * 100);
	else if (!o->quiet)
		info("phase 2: the probes cost about %.1f%% of the target's CPU time (%g%% budget)",
		     share, o->overhead * 100);
}

/*
 * ... and the functions still probed that were called, but of which no
 * call reached the file whole: they came while costlier probes were on
 * (left out with them), or were under way at the end.  The report would
 * have no node of theirs, and the user would not know why.
 */
static void print_unkept(struct record_phase *ph, struct record_probing *p,
			 const struct vp_header *h)
{
	size_t n = 0, first = 0;
	char *what;
	int one;

	if (!ph->kept)
		return;
	count_calls(p, ph->calls, h->nfuncs);
	/* no entry kept, or no exit: no call had both (an exit kept whose
	 * entry was left out is no whole call) */
	for (size_t f = 0; f < h->nfuncs; f++)
		if (!ph->dropped[f] && ph->calls[f] &&
		    !(ph->kept[2 * f] && ph->kept[2 * f + 1]) && !n++)
			first = f;
	if (!n)
		return;
	one = n == 1 && ph->calls[first] == 1;
	if (one)
		what = xasprintf("the one call of '%s' was not", h->funcs[first].display);
	else if (n == 1)
		what = xasprintf("none of the %llu calls of '%s' was",
				 (unsigned long long)ph->calls[first],
				 h->funcs[first].display);
	else
		what = xasprintf("none of the calls of '%s' and %zu other function%s was",
				 h->funcs[first].display, n - 1, n == 2 ? "" : "s");
	warning("phase 2: %s recorded whole: %s came while costlier probes were on, and %s left "
		"out with them, or %s under way at the end; record a longer run, or use "
		"--mode=probe",
		what, one ? "it" : "they", one ? "was" : "were", one ? "was" : "were");
	free(what);
}

void record_budget_print(struct record *rec, const struct vp_trailer *tr)
{
	print_measured_cost(&rec->opts, tr);
	print_unkept(&rec->phase, &rec->probing, &rec->hdr);
}
