/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plan-t.c - tests for perf-collector/record/plan.c's judge of the overhead
 * budget while phase 2 runs, vp_plan_over_budget(): what the probes cost,
 * whether that is over the budget beyond a measurement's 10 %, and which
 * functions to stop probing, the most expensive first, until the rest
 * fits.  The figures are worked by hand from the calls and costs below.
 * And vp_plan_build()'s shares, from the samples unwound whole only: a
 * crafted sampling run where cut stacks would rank a callee above its
 * caller.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/datafile.h"
#include "perf-collector/record/plan.h"
#include "tests/tap/basic.h"
#include "util/util.h"

/* a probed call: 1 us on an emulated first instruction, 10 us stepped */
static const struct vp_probe_cost costs[] = {
	{ VP_INSN_EMULATED, 0, 1000, 0 },
	{ VP_INSN_STEPPED, 0, 10000, 0 },
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

static char *names[] = { "main", "work", "leaf" };
static struct vp_module module = { "/crafted/prog", NULL, 0, 0 };

/* One sample of the frames @fr (innermost first, @n of them), or @flags. */
static int sample(struct vp_writer *w, uint64_t *now, const uint32_t *fr, uint32_t n,
		  uint32_t flags)
{
	static const uint64_t cfas[3] = { 0x7f0000001000, 0x7f0000001100, 0x7f0000001200 };
	struct vp_sample s = { *now += 1000000, 1000000, 0, flags, 0, n, fr, cfas };

	return vp_writer_sample(w, &s);
}

/*
 * A sampling run of main > work > leaf: 10 samples unwound whole (6 in
 * leaf, 4 in work), and - when @cut - 10 of leaf alone whose stack copy
 * ended there (VP_SAMPLE_TRUNCATED).  Counted over all 20, leaf (16)
 * would outrank work (10) and main (10).
 */
static int write_run(const char *path, int whole, int cut)
{
	static const uint32_t in_leaf[] = { 2, 1, 0 }, in_work[] = { 1, 0 }, leaf_only[] = { 2 };
	struct vp_frame_level lv[3] = { { 0, 10, "prog.c" }, { 1, 20, "prog.c" },
					{ 2, 30, "prog.c" } };
	struct vp_trailer tr = { 0 };
	struct vp_header hd;
	struct vp_writer *w;
	uint64_t now = 0;
	int err;

	memset(&hd, 0, sizeof(hd));
	hd.unit = VP_UNIT_NS;
	hd.clock = CLOCK_MONOTONIC;
	hd.nmodules = 1;
	hd.modules = &module;
	hd.mode = VP_MODE_SAMPLE;
	hd.sampling.event = VP_SEV_CPU_CLOCK;
	hd.sampling.period = 1000000;
	hd.sampling.freq = 1000;
	hd.sampling.stack_size = 8192;
	w = vp_writer_new(path, &hd);
	if (!w)
		return -1;
	err = vp_writer_thread(w, 0, 100, 100);
	for (uint32_t i = 0; i < 3 && !err; i++) {
		struct vp_symbol s = { 0, 0, 0x1000 + 0x100 * i, 0x100, names[i], names[i] };
		struct vp_frame_def f = { 0, 0x1010 + 0x100 * i, 1, &lv[i] };

		err = vp_writer_symbol(w, i, &s) || vp_writer_frame(w, i, &f);
	}
	for (int k = 0; k < whole && !err; k++)
		err = k % 5 < 3 ? sample(w, &now, in_leaf, 3, 0) : sample(w, &now, in_work, 2, 0);
	for (int k = 0; k < cut && !err; k++)
		err = sample(w, &now, leaf_only, 1, VP_SAMPLE_TRUNCATED);
	tr.flags = VP_END_EXITED;
	return vp_writer_finish(w, &tr) || err ? -1 : 0;
}

/* vp_plan_build() of the run at @path, every function probed at will. */
static int build(struct vp_plan *p, const char *path)
{
	static struct vp_func f[3];

	for (uint32_t i = 0; i < 3; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].name = f[i].display = f[i].base = names[i];
		f[i].addr = 0x1000 + 0x100 * i;
		f[i].size = 0x100;
		f[i].insn_class = VP_INSN_EMULATED;
	}
	return vp_plan_build(p, path, f, 3, &module, costs, 2, 0, 1);
}

static void cut_stacks(void)
{
	char path[] = "plan-t.XXXXXX";
	struct vp_plan p;
	int fd = mkstemp(path);

	if (fd < 0 || close(fd) || write_run(path, 10, 10)) {
		ok(0, "cannot write a sampling run");
		return;
	}
	is_int(0, build(&p, path), "a run with cut stacks: planned");
	is_int(10, (long long)p.samples, "... from the 10 samples unwound whole");
	is_int(10, (long long)p.incomplete, "... leaving out the 10 cut ones");
	is_double(1.0, p.funcs[0].share, 1e-9, "main: in all 10");
	is_double(1.0, p.funcs[1].share, 1e-9, "work: in all 10");
	is_double(0.6, p.funcs[2].share, 1e-9, "leaf: in 6 of 10, below its callers");
	is_int(6, (long long)p.funcs[2].samples, "... its 10 cut samples not counted");
	vp_plan_release(&p);
	if (write_run(path, 0, 10)) {
		ok(0, "cannot write a sampling run");
		return;
	}
	mute_errors(1); /* (it says why, as record would) */
	is_int(-1, build(&p, path), "a run of cut stacks only: no plan");
	mute_errors(0);
	vp_plan_release(&p);
	unlink(path);
}

int main(void)
{
	struct vp_plan_spend s;
	struct vp_plan_verdict v;

	plan(39);
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

	cut_stacks();
	return 0;
}
