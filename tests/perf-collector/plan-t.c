/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plan-t.c - tests for perf-collector/record/plan.c's judge of the overhead
 * budget while phase 2 runs, vp_plan_over_budget(): what the probes cost,
 * whether that is over the budget beyond a measurement's 10 %, and which
 * functions to stop probing, the most expensive first, until the rest
 * fits.  The figures are worked by hand from the calls and costs below.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/datafile.h"
#include "perf-collector/record/plan.h"
#include "tests/tap/basic.h"

/* a probed call: 1 us on an emulated first instruction, 10 us stepped */
static const struct vp_probe_cost costs[] = {
	{ VP_INSN_EMULATED, 0, 1000 },
	{ VP_INSN_STEPPED, 0, 10000 },
};

static struct vp_func funcs[3];

static void spend(struct vp_plan_spend *s, const uint64_t *calls, const unsigned char *dropped,
		  double cpu_ns, double overhead)
{
	memset(s, 0, sizeof(*s));
	s->funcs = funcs;
	s->nfuncs = 3;
	s->costs = costs;
	s->ncosts = 2;
	s->calls = calls;
	s->dropped = dropped;
	s->cpu_ns = cpu_ns;
	s->overhead = overhead;
}

int main(void)
{
	struct vp_plan_spend s;
	struct vp_plan_verdict v;

	plan(31);
	funcs[0].insn_class = VP_INSN_EMULATED;
	funcs[1].insn_class = VP_INSN_STEPPED;
	funcs[2].insn_class = VP_INSN_EMULATED;

	/* 100 x 1 us + 30 x 10 us + 50 x 1 us = 450 us against 5 % of 5 ms:
	 * the stepped one goes, and the 150 us left fit the 250 us */
	spend(&s, (const uint64_t[]){ 100, 30, 50 }, NULL, 5e6, 0.05);
	vp_plan_over_budget(&s, &v);
	is_double(250000, v.budget_ns, 1e-6, "the budget is its share of the CPU time");
	is_double(450000, v.cost_ns, 1e-6, "the probes cost calls times their class's cost");
	is_int(1, v.over, "450 us are over a 250 us budget");
	is_int(1, (long long)v.ndrop, "one function goes");
	is_int(1, v.drop[0].func, "... the most expensive, the stepped one");
	is_double(300000, v.drop[0].cost_ns, 1e-6, "... with what its probes cost");
	is_double(450000, v.drop[0].total_ns, 1e-6, "... and what all cost before it went");
	vp_plan_verdict_release(&v);
	ok(!v.drop && !v.ndrop, "the verdict is released");

	/* the same calls, the stepped function no longer probed: its cost is
	 * spent and no longer counts */
	spend(&s, (const uint64_t[]){ 100, 30, 50 }, (const unsigned char[]){ 0, 1, 0 }, 5e6,
	      0.05);
	vp_plan_over_budget(&s, &v);
	is_double(150000, v.cost_ns, 1e-6, "a function no longer probed costs nothing more");
	is_int(0, v.over, "... and the rest fits");
	is_int(0, (long long)v.ndrop, "... so nothing goes");
	vp_plan_verdict_release(&v);

	/* 400 us against 370 us: over the budget, but within the 10 % a
	 * measured rate is good to */
	spend(&s, (const uint64_t[]){ 100, 25, 50 }, NULL, 7.4e6, 0.05);
	vp_plan_over_budget(&s, &v);
	is_double(370000, v.budget_ns, 1e-6, "budget 370 us");
	is_double(400000, v.cost_ns, 1e-6, "cost 400 us");
	is_int(0, v.over, "8%% over is within what a measurement tells");
	is_int(0, (long long)v.ndrop, "... nothing goes");
	vp_plan_verdict_release(&v);

	/* 420 us against 370 us: 13.5 % over, acted on */
	spend(&s, (const uint64_t[]){ 100, 27, 50 }, NULL, 7.4e6, 0.05);
	vp_plan_over_budget(&s, &v);
	is_int(1, v.over, "13.5%% over is acted on");
	is_int(1, (long long)v.ndrop, "... one function goes");
	is_int(1, v.drop[0].func, "... the stepped one (270 us)");
	vp_plan_verdict_release(&v);

	/* 300 + 300 + 250 us against 100 us: all go, the most expensive first,
	 * the first of two equal ones first, each with the total before it */
	spend(&s, (const uint64_t[]){ 300, 30, 250 }, NULL, 2e6, 0.05);
	vp_plan_over_budget(&s, &v);
	is_int(1, v.over, "850 us are over a 100 us budget");
	is_int(3, (long long)v.ndrop, "all three go");
	is_int(0, v.drop[0].func, "first the first of the two at 300 us");
	is_double(850000, v.drop[0].total_ns, 1e-6, "... all probes cost 850 us before");
	is_int(1, v.drop[1].func, "then the other at 300 us");
	is_double(550000, v.drop[1].total_ns, 1e-6, "... 550 us before");
	is_int(2, v.drop[2].func, "then the one at 250 us");
	is_double(250000, v.drop[2].total_ns, 1e-6, "... 250 us before");
	vp_plan_verdict_release(&v);

	/* a function never called costs nothing and never goes */
	spend(&s, (const uint64_t[]){ 0, 30, 0 }, NULL, 1e6, 0.01);
	vp_plan_over_budget(&s, &v);
	is_int(1, v.over, "300 us are over a 10 us budget");
	is_int(1, (long long)v.ndrop, "only the function called goes");
	is_int(1, v.drop[0].func, "... the stepped one");
	vp_plan_verdict_release(&v);

	/* without calibrated costs, core's defaults: 1 us emulated, 17 us
	 * stepped (the same the report subtracts) */
	spend(&s, (const uint64_t[]){ 10, 10, 10 }, NULL, 1e9, 0.05);
	s.ncosts = 0;
	vp_plan_over_budget(&s, &v);
	is_double(190000, v.cost_ns, 1e-6, "default costs: 10 x 1 + 10 x 17 + 10 x 1 us");
	is_int(0, v.over, "... within 50 ms");
	vp_plan_verdict_release(&v);
	return 0;
}
