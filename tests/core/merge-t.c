/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * merge-t.c - tests for core/merge.c: two recordings merged equal one
 * recording of both workloads (counts exact, means, M2, covariances and
 * histograms to 1e-9), a run numbering its functions and call sites in
 * another order, the within/between split against a two-pass reference,
 * and the refusals with their messages.
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/merge.h"
#include "core/recording.h"
#include "tests/tap/basic.h"

enum { F_MAIN, F_FRAME, F_WORK, F_LEAF, F_EXTRA, NF };
static const char *const names[NF] = { "main", "frame", "work", "leaf", "extra" };

struct rec {
	const uint32_t *fidx; /* file's index of function f */
	const uint32_t *csid; /* file's call-site id of the call to f */
	struct vp_writer *w;
	uint64_t now;
	uint32_t depth;
	uint32_t stack[16];
};

static void ev(struct rec *r, int entry, uint32_t f)
{
	struct vp_event e = { 0 };

	e.time = r->now;
	e.func = r->fidx[f];
	e.kind = entry ? VP_EV_ENTRY : VP_EV_EXIT;
	e.callsite = entry ? r->csid[f] : UINT32_MAX;
	e.sp = 0x7fff0000ULL - 64 * r->depth + (entry ? 0 : 8);
	if (vp_writer_event(r->w, &e))
		sysbail("vp_writer_event");
}

static void call(struct rec *r, uint32_t f)
{
	ev(r, 1, f);
	r->stack[r->depth++] = f;
}

static void leave(struct rec *r)
{
	r->depth--;
	ev(r, 0, r->stack[r->depth]);
}

/* Duration of the i-th work() call of a workload: spread, plus @shift. */
static uint64_t work_ns(int i, uint64_t shift)
{
	return 1000 + (uint64_t)((i * 37) % 41) * 90 + shift;
}

/* main -> frame x @n -> work (+ leaf every 3rd frame); @shift slows work. */
static void workload(struct rec *r, int n, uint64_t shift, int extra)
{
	call(r, F_MAIN);
	for (int i = 0; i < n; i++) {
		call(r, F_FRAME);
		r->now += 50 + (uint64_t)(i % 7) * 10;
		call(r, F_WORK);
		r->now += work_ns(i, shift);
		leave(r);
		if (i % 3 == 0) {
			call(r, F_LEAF);
			r->now += 200 + (uint64_t)(i % 5) * 30;
			leave(r);
		}
		if (extra) {
			call(r, F_EXTRA);
			r->now += 100;
			leave(r);
		}
		leave(r);
	}
	leave(r);
}

struct part {
	int n;
	uint64_t shift;
};

/* A recording of the workloads @parts in order, one after another. */
static void record(const char *path, unsigned char bid, const uint32_t *fidx,
		   const uint32_t *csid, const struct part *parts, size_t nparts, int extra)
{
	struct vp_func funcs[NF];
	unsigned char b[1] = { bid };
	struct vp_module mod = { "/bench", b, sizeof(b), 0 };
	struct vp_header h = { 0 };
	struct rec r = { fidx, csid, NULL, 1000, 0, { 0 } };
	int nf = extra ? NF : NF - 1;

	memset(funcs, 0, sizeof(funcs));
	for (int f = 0; f < nf; f++) {
		struct vp_func *fn = &funcs[fidx[f]];

		fn->name = fn->display = fn->base = (char *)names[f];
		fn->addr = 0x1000 + 0x100 * (uint64_t)f;
	}
	h.unit = VP_UNIT_NS;
	h.clock = CLOCK_MONOTONIC;
	h.nmodules = 1;
	h.modules = &mod;
	h.nfuncs = (size_t)nf;
	h.funcs = funcs;
	r.w = vp_writer_new(path, &h);
	if (!r.w)
		sysbail("vp_writer_new");
	vp_writer_thread(r.w, 0, 1, 1);
	for (uint32_t id = 0; id < (uint32_t)nf; id++)
		for (int f = 0; f < nf; f++) {
			struct vp_callsite cs = { 0, 0, 0x2000 + 16 * (uint64_t)f, "", "bench.c",
						  (uint32_t)(10 + f) };

			if (csid[f] == id && vp_writer_callsite(r.w, id, &cs))
				sysbail("vp_writer_callsite");
		}
	for (size_t p = 0; p < nparts; p++)
		workload(&r, parts[p].n, parts[p].shift, extra);
	if (vp_writer_finish(r.w, &(struct vp_trailer){ 0 }))
		sysbail("vp_writer_finish");
}

static struct vp_recording *open_rec(const char *path)
{
	struct vp_recording_opts o;
	struct vp_recording *rec;
	char msg[256];

	vp_recording_opts_default(&o);
	o.raw = 1;
	o.samples = 0;
	if (vp_recording_open(path, &o, &rec, msg, sizeof(msg)))
		bail("%s", msg);
	return rec;
}

/* The node main/frame/work... of @t by function names (NULL: stop). */
static uint32_t find(const struct vp_cct *t, const struct vp_header *h, const char *const *path)
{
	uint32_t id = VP_NODE_ROOT;

	for (; *path; path++) {
		const struct vp_cct_node *n = &t->nodes[id];
		uint32_t i, next = VP_NO_NODE;

		for (i = 0; i < n->nchildren; i++)
			if (!strcmp(h->funcs[t->nodes[n->children[i]].func].name, *path))
				next = n->children[i];
		if (next == VP_NO_NODE)
			return VP_NO_NODE;
		id = next;
	}
	return id;
}

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

static const char *const p_frame[] = { "main", "frame", NULL };
static const char *const p_work[] = { "main", "frame", "work", NULL };
static const char *const p_leaf[] = { "main", "frame", "leaf", NULL };

/* Every statistic of node @path in the merged tree equals the pooled file's. */
static void same_node(const struct vp_runs *m, const struct vp_recording *pooled,
		      const char *const *path, const char *what)
{
	const struct vp_header *h0 = m->recs[0]->hdr;
	uint32_t a = find(&m->tree, h0, path), b = find(&pooled->tree, pooled->hdr, path);
	const struct vp_cct_node *x, *y;
	int good = 1;

	if (a == VP_NO_NODE || b == VP_NO_NODE) {
		ok_block(5, 0, "%s: node missing", what);
		return;
	}
	x = &m->tree.nodes[a];
	y = &pooled->tree.nodes[b];
	is_int(y->stats.n, x->stats.n, "%s: count %llu", what, (unsigned long long)y->stats.n);
	ok(x->stats.total == y->stats.total && x->stats.min == y->stats.min &&
		   x->stats.max == y->stats.max,
	   "%s: total, min, max", what);
	ok(close_to(x->stats.mean, y->stats.mean) && close_to(x->stats.m2, y->stats.m2),
	   "%s: mean %g and M2 %g as pooled", what, y->stats.mean, y->stats.m2);
	if (x->cov.dim != y->cov.dim || x->cov.n != y->cov.n) {
		good = 0;
	} else {
		/* children in one order in both trees here */
		for (size_t i = 0; i < x->cov.dim; i++)
			for (size_t j = 0; j <= i; j++)
				good &= close_to(vp_covar_get(&x->cov, i, j),
					       vp_covar_get(&y->cov, i, j));
	}
	ok(good, "%s: covariance matrix (%zu variables) as pooled", what, y->cov.dim);
	good = x->hist.n == y->hist.n && x->hist.first == y->hist.first &&
	       x->hist.len == y->hist.len;
	for (uint32_t i = 0; good && i < x->hist.len; i++)
		good = x->hist.counts[i] == y->hist.counts[i];
	ok(good, "%s: histogram as pooled (%u buckets)", what, y->hist.len);
}

/* Two-pass reference of the split of work()'s durations over two runs. */
static void test_split(const struct vp_runs *m, const struct part *parts)
{
	uint32_t id = find(&m->tree, m->recs[0]->hdr, p_work);
	double sum[2] = { 0, 0 }, mean[2], grand = 0, ssw = 0, ssb = 0, N = 0, msw, msb, n0, vb;
	struct vp_runs_split s;

	for (int r = 0; r < 2; r++) {
		for (int i = 0; i < parts[r].n; i++)
			sum[r] += (double)work_ns(i, parts[r].shift);
		mean[r] = sum[r] / parts[r].n;
		grand += sum[r];
		N += parts[r].n;
		for (int i = 0; i < parts[r].n; i++) {
			double d = (double)work_ns(i, parts[r].shift) - mean[r];

			ssw += d * d;
		}
	}
	grand /= N;
	for (int r = 0; r < 2; r++)
		ssb += parts[r].n * (mean[r] - grand) * (mean[r] - grand);
	msw = ssw / (N - 2);
	msb = ssb / 1;
	n0 = N - ((double)parts[0].n * parts[0].n + (double)parts[1].n * parts[1].n) / N;
	vb = (msb - msw) / n0;

	ok(vp_runs_split(m, id, &s) == 0, "split of work");
	is_int(2, s.runs, "split: 2 runs");
	is_int((long)N, (long)s.n, "split: %g calls", N);
	ok(close_to(s.ss_within, ssw) && close_to(s.ss_between, ssb),
	   "split: SS within %g, between %g", ssw, ssb);
	ok(close_to(s.ss_within + s.ss_between, m->tree.nodes[id].stats.m2),
	   "split: SS within + between = the merged M2");
	ok(close_to(s.var_within, msw) && close_to(s.var_between, vb),
	   "split: components within %g, between %g", msw, vb);
	ok(close_to(s.share, vb / (vb + msw)) && s.share > 0.9,
	   "split: between-run share %.3f", s.share);
	ok(s.p < 1e-6, "split: F %.1f, p %.2g: the runs differ", s.f, s.p);
	ok(close_to(vp_runs_stats(m, id, 0)->mean, mean[0]) &&
		   close_to(vp_runs_stats(m, id, 1)->mean, mean[1]),
	   "split: run means %g and %g", mean[0], mean[1]);
}

int main(void)
{
	static const uint32_t fa[NF] = { 0, 1, 2, 3, 4 };
	static const uint32_t ca[NF] = { 0, 1, 2, 3, 4 };
	/* B numbers functions and call sites in another order */
	static const uint32_t fb[NF] = { 3, 0, 1, 2, 4 };
	static const uint32_t cb[NF] = { 2, 3, 0, 1, 4 };
	static const struct part pa = { 60, 0 }, pb = { 45, 0 }, pslow = { 45, 8000 };
	const struct part both[2] = { pa, pb }, slow[2] = { pa, pslow };
	char dir[] = "/tmp/vp-merge-t.XXXXXX", pA[64], pB[64], pS[64], pAB[64], pC[64], pD[64];
	struct vp_recording *A, *B, *S, *AB, *C, *D;
	struct vp_runs m;
	char msg[512];

	plan(37);
	if (!mkdtemp(dir))
		sysbail("mkdtemp");
	snprintf(pA, sizeof(pA), "%s/a.data", dir);
	snprintf(pB, sizeof(pB), "%s/b.data", dir);
	snprintf(pS, sizeof(pS), "%s/slow.data", dir);
	snprintf(pAB, sizeof(pAB), "%s/ab.data", dir);
	snprintf(pC, sizeof(pC), "%s/c.data", dir);
	snprintf(pD, sizeof(pD), "%s/d.data", dir);
	record(pA, 7, fa, ca, &pa, 1, 0);
	record(pB, 7, fb, cb, &pb, 1, 0);
	record(pS, 7, fb, cb, &pslow, 1, 0);
	record(pAB, 7, fa, ca, both, 2, 0);
	record(pC, 8, fa, ca, &pb, 1, 0);
	record(pD, 7, fa, ca, &pb, 1, 1);
	A = open_rec(pA);
	B = open_rec(pB);
	S = open_rec(pS);
	AB = open_rec(pAB);
	C = open_rec(pC);
	D = open_rec(pD);

	/* A and B merged are the recording of both workloads */
	{
		struct vp_recording *recs[2] = { A, B };
		struct vp_recording_opts ap;

		vp_recording_opts_default(&ap);
		is_int(0, vp_runs_merge(&m, recs, 2, &ap, msg, sizeof(msg)), "A + B merge");
		is_int(AB->tree.nnodes, m.tree.nnodes, "as many nodes as the pooled recording");
		is_int(AB->totals.invocations, m.totals.invocations, "invocations %llu",
		       (unsigned long long)AB->totals.invocations);
		same_node(&m, AB, p_frame, "frame");
		same_node(&m, AB, p_work, "work");
		same_node(&m, AB, p_leaf, "leaf");
		is_int(pa.n, vp_runs_stats(&m, find(&m.tree, A->hdr, p_work), 0)->n,
		       "run 0 has its own count");
		is_int(pb.n, vp_runs_stats(&m, find(&m.tree, A->hdr, p_work), 1)->n,
		       "run 1 has its own count");
		vp_runs_release(&m);
	}
	/* a slower run: the variance of work() is between the runs */
	{
		struct vp_recording *recs[2] = { A, S };
		struct vp_recording_opts ap;

		vp_recording_opts_default(&ap);
		if (vp_runs_merge(&m, recs, 2, &ap, msg, sizeof(msg)))
			bail("%s", msg);
		test_split(&m, slow);
		vp_runs_release(&m);
	}
	/* another build is refused, naming both build-ids */
	{
		struct vp_recording *recs[2] = { A, C };
		struct vp_recording_opts ap;
		char want[512];

		vp_recording_opts_default(&ap);
		is_int(-EXDEV, vp_runs_merge(&m, recs, 2, &ap, msg, sizeof(msg)),
		       "another build: -EXDEV");
		snprintf(want, sizeof(want),
			 "'%s' and '%s' are not recordings of one program: their main modules "
			 "are '/bench' (build-id 07) and '/bench' (build-id 08)",
			 pA, pC);
		is_string(want, msg, "another build: the message");
		vp_runs_release(&m);
	}
	/* a function the first run did not probe */
	{
		struct vp_recording *recs[2] = { A, D };
		struct vp_recording_opts ap;
		char want[512];

		vp_recording_opts_default(&ap);
		is_int(-ENOENT, vp_runs_merge(&m, recs, 2, &ap, msg, sizeof(msg)),
		       "a function more: -ENOENT");
		snprintf(want, sizeof(want),
			 "'%s': function 'extra' is not probed in '%s': merging needs recordings "
			 "that probed the same functions (record each with --mode=probe and the "
			 "same -f options: auto mode chooses them run by run)",
			 pD, pA);
		is_string(want, msg, "a function more: the message");
		vp_runs_release(&m);
	}
	/* ... or less: the first run's function not probed in the second */
	{
		struct vp_recording *recs[2] = { D, A };
		struct vp_recording_opts ap;
		char want[512];

		vp_recording_opts_default(&ap);
		is_int(-ENOENT, vp_runs_merge(&m, recs, 2, &ap, msg, sizeof(msg)),
		       "a function less: -ENOENT");
		snprintf(want, sizeof(want),
			 "'%s': function 'extra' is not probed in '%s': merging needs recordings "
			 "that probed the same functions (record each with --mode=probe and the "
			 "same -f options: auto mode chooses them run by run)",
			 pD, pA);
		is_string(want, msg, "a function less: the message");
		vp_runs_release(&m);
	}
	/* the merged tree within max_memory */
	{
		struct vp_recording *recs[2] = { A, B };
		struct vp_recording_opts ap;
		char want[512];

		vp_recording_opts_default(&ap);
		ap.max_memory = 4096;
		is_int(-E2BIG, vp_runs_merge(&m, recs, 2, &ap, msg, sizeof(msg)),
		       "over max_memory: -E2BIG");
		snprintf(want, sizeof(want),
			 "merging '%s' would take more than max_memory allows (4096 bytes)",
			 pA);
		is_string(want, msg, "over max_memory: the message");
		vp_runs_release(&m);
	}
	vp_recording_free(A);
	vp_recording_free(B);
	vp_recording_free(S);
	vp_recording_free(AB);
	vp_recording_free(C);
	vp_recording_free(D);
	unlink(pA);
	unlink(pB);
	unlink(pS);
	unlink(pAB);
	unlink(pC);
	unlink(pD);
	rmdir(dir);
	return 0;
}
