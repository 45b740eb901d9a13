/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * plan.c - choose what the automatic mode's second run probes, from the
 * samples of the first, and copy the first run into the final file.
 *
 * The cost of probing a function is its calls times the calibrated cost
 * of a probed call.  Samples count calls only for functions whose calls
 * span several sampling periods (the span of an invocation, see
 * core/sampled.h), and even then back-to-back calls from one place look
 * like one long call: a short function called in a tight loop is counted
 * as a few long calls.  For calls that span less than two samples on
 * average the estimate assumes a quarter period each, or ten probe costs
 * if that is longer (shorter calls are reported as unreliable anyway).
 * Assuming short calls everywhere would price the long, cheap functions
 * out of any budget; so the plan is optimistic, and the recorder measures
 * the real cost while phase 2 runs and stops probing the most expensive
 * functions when the budget is exceeded: vp_plan_over_budget() decides
 * what, record-budget.c applies it.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf-collector/record/plan.h"
#include "perf-collector/probes/probes.h"
#include "perf-collector/sampling/sampler.h"
#include "util/util.h"

/* The candidate that sampled symbol @s is, or -1. */
static long match(const struct vp_reader *r, const struct vp_symbol *s,
		  const struct vp_func *funcs, size_t nfuncs, const struct vp_module *mods)
{
	const struct vp_module *m;

	if (s->flags & (VP_SYM_INLINE | VP_SYM_NONAME) || s->module < 0)
		return -1;
	m = vp_reader_module(r, (uint32_t)s->module);
	if (!m || !m->path)
		return -1;
	for (size_t i = 0; i < nfuncs; i++)
		if (funcs[i].addr == s->addr && mods[funcs[i].module].path &&
		    !strcmp(mods[funcs[i].module].path, m->path))
			return (long)i;
	return -1;
}

/* Open the phase-1 file @path as *@r, if it sampled a clock. */
static int open_phase1(const char *path, struct vp_reader **r)
{
	char msg[512] = "";
	uint32_t ev_kind;
	int err = vp_reader_open(path, r, msg, sizeof(msg));

	if (err)
		return error("cannot read the sampling run: %s", msg[0] ? msg : strerror(-err));
	ev_kind = vp_reader_header(*r)->sampling.event;
	if (ev_kind != VP_SEV_CPU_CLOCK && ev_kind != VP_SEV_TASK_CLOCK)
		return error("'%s' is no sampling run of cpu-clock or task-clock (it sampled %s): "
			     "phase 2 is planned in CPU time",
			     path, ev_kind ? vp_sample_event_name(ev_kind) : "nothing");
	return 0;
}

int vp_plan_check(const char *path)
{
	struct vp_reader *r = NULL;
	int ret = open_phase1(path, &r);

	vp_reader_free(r);
	return ret;
}

static int read_phase1(struct vp_plan *p, const char *path)
{
	const struct vp_trailer *tr;
	struct vp_event ev[256];
	uint64_t lost;
	long n;

	if (open_phase1(path, &p->r) < 0)
		return -1;
	if (vp_sampled_init(&p->tree))
		return error("cannot read the sampling run: %s", strerror(ENOMEM));
	vp_reader_set_sample_handler(p->r, vp_sampled_handler, &p->tree);
	while ((n = vp_reader_next(p->r, ev, 256)) > 0)
		;
	vp_reader_set_sample_handler(p->r, NULL, NULL);
	if (n < 0)
		return error("%s", vp_reader_error(p->r));
	vp_sampled_finish(&p->tree);
	/* (the kernel's count arrives twice, as in core's recording.c) */
	lost = vp_reader_lost(p->r);
	tr = vp_reader_trailer(p->r);
	if (tr && tr->present && tr->lost > lost)
		lost = tr->lost;
	if (!p->tree.samples && lost)
		return error("the sampling run in '%s' has no samples: %llu records were lost, the "
			     "ring buffers overflowed (try a larger --buffer-size, or a lower -F)",
			     path, (unsigned long long)lost);
	if (!p->tree.samples)
		return error("the sampling run in '%s' has no samples", path);
	p->cpu_ns = p->tree.time;
	return 0;
}

/* Per node of the sampled tree: whether it is of samples whose stack was
 * not unwound to its outermost frame (under the INCOMPLETE node). */
static unsigned char *incomplete_nodes(const struct vp_plan *p)
{
	unsigned char *inc = xcalloc(p->tree.nnodes + 1, 1);

	/* (a node comes after its parent) */
	for (size_t i = 1; i < p->tree.nnodes; i++) {
		const struct vp_snode *n = &p->tree.nodes[i];

		inc[i] = n->kind == VP_SNODE_INCOMPLETE || (n->parent < i && inc[n->parent]);
	}
	return inc;
}

/*
 * The samples to plan from: those unwound whole, and per symbol how many
 * hold it - all the samples holding it, less the incomplete ones: a
 * sample counts once under the first node of the symbol on its path, so
 * the incomplete samples holding it are those of such first nodes in the
 * incomplete part of the tree.
 */
static void complete_samples(struct vp_plan *p, size_t nsyms)
{
	unsigned char *inc = incomplete_nodes(p);

	p->sym_samples = xcalloc(nsyms + 1, sizeof(*p->sym_samples));
	for (size_t s = 0; s < nsyms && s < p->tree.nsyms; s++)
		p->sym_samples[s] = p->tree.sym_samples[s];
	p->incomplete = 0;
	for (size_t i = 1; i < p->tree.nnodes; i++) {
		const struct vp_snode *n = &p->tree.nodes[i];
		uint32_t a;

		if (!inc[i])
			continue;
		if (n->kind == VP_SNODE_INCOMPLETE)
			p->incomplete += n->samples;
		if (n->kind != VP_SNODE_FUNC || n->symbol >= nsyms)
			continue;
		for (a = n->parent; a != VP_SNODE_NONE && a < i; a = p->tree.nodes[a].parent)
			if (p->tree.nodes[a].kind == VP_SNODE_FUNC &&
			    p->tree.nodes[a].symbol == n->symbol)
				break;
		if ((a == VP_SNODE_NONE || a >= i) && p->sym_samples[n->symbol] >= n->samples)
			p->sym_samples[n->symbol] -= n->samples;
	}
	p->samples = p->tree.samples > p->incomplete ? p->tree.samples - p->incomplete : 0;
	free(inc);
}

/* The least depth at which each symbol was sampled (UINT32_MAX: never),
 * in the stacks unwound whole. */
static uint32_t *symbol_depths(const struct vp_plan *p, size_t nsyms)
{
	uint32_t *node = xcalloc(p->tree.nnodes + 1, sizeof(*node));
	uint32_t *sym = xmalloc((nsyms + 1) * sizeof(*sym));
	unsigned char *inc = incomplete_nodes(p);

	for (size_t s = 0; s <= nsyms; s++)
		sym[s] = UINT32_MAX;
	/* (a node comes after its parent) */
	for (size_t i = 1; i < p->tree.nnodes; i++) {
		const struct vp_snode *n = &p->tree.nodes[i];

		node[i] = n->parent < i ? node[n->parent] + 1 : 1;
		if (n->kind == VP_SNODE_FUNC && !inc[i] && n->symbol < nsyms &&
		    node[i] < sym[n->symbol])
			sym[n->symbol] = node[i];
	}
	free(inc);
	free(node);
	return sym;
}

/* Calls of each symbol: invocations seen and the samples they spanned,
 * in the stacks unwound whole. */
static void symbol_spans(const struct vp_plan *p, double *inv, double *spanned)
{
	unsigned char *inc = incomplete_nodes(p);

	for (size_t i = 1; i < p->tree.nnodes; i++) {
		const struct vp_snode *n = &p->tree.nodes[i];

		if (n->kind != VP_SNODE_FUNC || inc[i] || n->symbol >= vp_reader_nsymbols(p->r))
			continue;
		inv[n->symbol] += (double)n->span.n;
		spanned[n->symbol] += n->span.mean * (double)n->span.n;
	}
	free(inc);
}

static void estimate(struct vp_plan *p, uint32_t sym, const double *inv, const double *spanned,
		     const struct vp_func *f, const struct vp_probe_cost *costs, size_t ncosts,
		     struct vp_plan_func *pf)
{
	double per_call = vp_probe_class_cost(f->insn_class, costs, ncosts);
	double period = (double)p->tree.period;
	double time = (double)p->sym_samples[sym] / (double)p->samples * p->cpu_ns;

	/* what a call is assumed to last when samples cannot tell */
	double floor = 10 * per_call > period / 4 ? 10 * per_call : period / 4;

	pf->samples = p->sym_samples[sym];
	pf->share = (double)pf->samples / (double)p->samples;
	if (inv[sym] > 0 && spanned[sym] / inv[sym] >= 2) {
		/* calls outlast a period and are seen, unless back to back:
		 * allow for as many unseen */
		pf->calls = 2 * inv[sym];
		pf->observed = 1;
	} else {
		pf->calls = time / floor;
		if (pf->calls < inv[sym])
			pf->calls = inv[sym];
	}
	pf->cost = pf->calls * per_call;
}

static void print_func(const struct vp_func *f, const struct vp_plan_func *pf, double cpu_ns,
		       int width);

static int cmp_share(const void *a, const void *b, void *arg)
{
	const struct vp_plan_func *f = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (f[x].share != f[y].share)
		return f[x].share > f[y].share ? -1 : 1;
	if (f[x].depth != f[y].depth)
		return f[x].depth < f[y].depth ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Print the functions of @p that are @why, the largest shares first. */
static void print_funcs(const struct vp_plan *p, const struct vp_func *funcs, uint32_t why,
			int width)
{
	uint32_t *order = xcalloc(p->nfuncs + 1, sizeof(*order));
	size_t n = 0;

	for (uint32_t i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].why == why)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), cmp_share, p->funcs);
	for (size_t k = 0; k < n; k++)
		print_func(&funcs[order[k]], &p->funcs[order[k]], p->cpu_ns, width);
	free(order);
}

int vp_plan_build(struct vp_plan *p, const char *path, const struct vp_func *funcs,
		  size_t nfuncs, const struct vp_module *mods,
		  const struct vp_probe_cost *costs, size_t ncosts, double cutoff,
		  double overhead)
{
	size_t nsyms;
	double *inv, *spanned;
	uint32_t *order, *depth;

	memset(p, 0, sizeof(*p));
	if (read_phase1(p, path) < 0)
		return -1;
	nsyms = vp_reader_nsymbols(p->r);
	complete_samples(p, nsyms);
	if (!p->samples)
		return error("none of the %llu samples of phase 1 was unwound to its outermost "
			     "frame (a stack copy too small, or code without unwind information): "
			     "no plan is made from cut stacks (try a larger --stack-size)",
			     (unsigned long long)p->tree.samples);
	inv = xcalloc(nsyms + 1, sizeof(*inv));
	spanned = xcalloc(nsyms + 1, sizeof(*spanned));
	symbol_spans(p, inv, spanned);
	depth = symbol_depths(p, nsyms);
	p->funcs = xcalloc(nfuncs + 1, sizeof(*p->funcs));
	p->nfuncs = nfuncs;
	for (uint32_t s = 0; s < nsyms; s++) {
		const struct vp_symbol *sym = vp_reader_symbol(p->r, s);
		long f;

		if (!p->sym_samples[s])
			continue;
		f = match(p->r, sym, funcs, nfuncs, mods);
		if (f >= 0) {
			estimate(p, s, inv, spanned, &funcs[f], costs, ncosts, &p->funcs[f]);
			p->funcs[f].depth = depth[s];
			continue;
		}
		if (sym->flags & VP_SYM_INLINE) {
			p->inline_only++;
		} else if (!(sym->flags & VP_SYM_NONAME)) {
			double share = (double)p->sym_samples[s] / (double)p->samples;

			p->other_modules++;
			if (share > p->other_share) {
				p->other_share = share;
				free(p->other_example);
				p->other_example = xstrdup(sym->display);
			}
		}
	}
	/* The largest shares first, as long as the budget lasts. */
	order = xcalloc(nfuncs + 1, sizeof(*order));
	for (uint32_t i = 0; i < nfuncs; i++)
		order[i] = i;
	qsort_r(order, nfuncs, sizeof(*order), cmp_share, p->funcs);
	p->budget_ns = overhead * p->cpu_ns;
	for (size_t k = 0; k < nfuncs; k++) {
		struct vp_plan_func *pf = &p->funcs[order[k]];

		if (!pf->samples)
			pf->why = VP_PLAN_UNSEEN;
		else if (pf->share < cutoff)
			pf->why = VP_PLAN_CUTOFF;
		else if (p->cost_ns + pf->cost > p->budget_ns)
			pf->why = VP_PLAN_BUDGET;
		else {
			pf->why = VP_PLAN_PROBED;
			p->cost_ns += pf->cost;
			p->nchosen++;
		}
	}
	free(order);
	free(inv);
	free(spanned);
	free(depth);
	return 0;
}

/* how far the measured cost may exceed the budget before probes go */
static const double MEASURED_SLACK = 0.1;

void vp_plan_over_budget(const struct vp_plan_spend *s, struct vp_plan_verdict *ret)
{
	double *cost = xcalloc(s->nfuncs + 1, sizeof(*cost));
	double total = 0;

	memset(ret, 0, sizeof(*ret));
	ret->budget_ns = s->overhead * s->cpu_ns;
	for (uint32_t f = 0; f < s->nfuncs; f++) {
		if (s->dropped && s->dropped[f])
			continue;
		cost[f] = (double)s->calls[f] *
			  vp_probe_class_cost(s->funcs[f].insn_class, s->costs, s->ncosts);
		total += cost[f];
	}
	ret->cost_ns = total;
	/*
	 * A rate measured over a fraction of a second, with a calibrated
	 * cost, is good to some 10 %: act only beyond that, and then drop
	 * the most expensive until the rest fits the budget (all at once:
	 * the kernel takes a while to remove each).
	 */
	ret->over = total > ret->budget_ns * (1 + MEASURED_SLACK);
	if (ret->over)
		ret->drop = xcalloc(s->nfuncs + 1, sizeof(*ret->drop));
	while (ret->over && total > ret->budget_ns) {
		long wf = -1;

		for (uint32_t f = 0; f < s->nfuncs; f++)
			if (cost[f] > 0 && (wf < 0 || cost[f] > cost[wf]))
				wf = f;
		if (wf < 0)
			break;
		ret->drop[ret->ndrop].func = (uint32_t)wf;
		ret->drop[ret->ndrop].cost_ns = cost[wf];
		ret->drop[ret->ndrop++].total_ns = total;
		total -= cost[wf];
		cost[wf] = 0;
	}
	free(cost);
}

void vp_plan_verdict_release(struct vp_plan_verdict *v)
{
	free(v->drop);
	memset(v, 0, sizeof(*v));
}

/* The name column of the table: as wide as its longest name, within limits. */
enum { PLAN_NAME_MIN = 28, PLAN_NAME_MAX = 60 };

static int listed(const struct vp_plan_func *pf, int all)
{
	return pf->why == VP_PLAN_PROBED || pf->why == VP_PLAN_BUDGET ||
	       (all && pf->why == VP_PLAN_CUTOFF);
}

static int name_width(const struct vp_plan *p, const struct vp_func *funcs, int all)
{
	size_t w = PLAN_NAME_MIN;

	for (size_t i = 0; i < p->nfuncs; i++) {
		size_t len = strlen(funcs[i].display);

		if (listed(&p->funcs[i], all) && len > w && len <= PLAN_NAME_MAX)
			w = len;
	}
	return (int)w;
}

static void print_func(const struct vp_func *f, const struct vp_plan_func *pf, double cpu_ns,
		       int width)
{
	const char *name = f->display;

	/* a longer name would push its numbers out of line: they go below it */
	if (strlen(name) > (size_t)width) {
		info("  %s", name);
		name = "";
	}
	info("  %-*s %6.2f%%  ~%.0f calls  +%.2f%%", width, name, pf->share * 100, pf->calls,
	     pf->cost / cpu_ns * 100);
}

void vp_plan_print(const struct vp_plan *p, const struct vp_func *funcs, double cutoff,
		   double overhead, int all)
{
	const struct vp_header *h = vp_reader_header(p->r);
	size_t under = 0, over = 0, unseen = 0;
	int width = name_width(p, funcs, all);
	char a[32], b[32];

	info("phase 1: %llu samples of %s every %s: %s of CPU time",
	     (unsigned long long)p->tree.samples,
	     vp_sample_event_name(h->sampling.event),
	     fmt_duration((double)p->tree.period, a, sizeof(a)),
	     fmt_duration(p->cpu_ns, b, sizeof(b)));
	if (p->incomplete)
		info("phase 1: %llu of them not unwound to their outermost frame are left out of "
		     "the plan (a cut stack misses callers): it counts the other %llu",
		     (unsigned long long)p->incomplete, (unsigned long long)p->samples);
	info("phase 2 probes %zu function%s: estimated cost +%.2f%% of the run (budget %g%%):",
	     p->nchosen, p->nchosen == 1 ? "" : "s", p->cost_ns / p->cpu_ns * 100,
	     overhead * 100);
	print_funcs(p, funcs, VP_PLAN_PROBED, width);
	for (size_t i = 0; i < p->nfuncs; i++) {
		switch (p->funcs[i].why) {
		case VP_PLAN_BUDGET:
			over++;
			break;
		case VP_PLAN_CUTOFF:
			under++;
			break;
		case VP_PLAN_UNSEEN:
			unseen++;
			break;
		default:
			break;
		}
	}
	if (over) {
		info("not probed, over the %g%% budget (their shares stay sampled):",
		     overhead * 100);
		print_funcs(p, funcs, VP_PLAN_BUDGET, width);
	}
	if (under)
		info("not probed: %zu function%s under the %g%% cut-off", under,
		     under == 1 ? "" : "s", cutoff * 100);
	if (all && under)
		print_funcs(p, funcs, VP_PLAN_CUTOFF, width);
	if (unseen)
		info("not probed: %zu function%s never sampled", unseen, unseen == 1 ? "" : "s");
	if (p->inline_only)
		info("not probed: %llu inlined function%s (no entry to probe; sampled only)",
		     (unsigned long long)p->inline_only, p->inline_only == 1 ? "" : "s");
	if (p->other_modules)
		info("not probed: %llu function%s in other modules, such as %s (%.2f%%; see "
		     "--lib)",
		     (unsigned long long)p->other_modules, p->other_modules == 1 ? "" : "s",
		     p->other_example, p->other_share * 100);
}

const struct vp_header *vp_plan_header(const struct vp_plan *p)
{
	return vp_reader_header(p->r);
}

/* ---- copying phase 1 ---- */

struct copy {
	struct vp_writer *w;
	const struct vp_header *hdr; /* of the new file */
	const struct vp_header *old;
	uint32_t *module_map;	     /* old module id -> new */
	size_t nmodules, nsymbols, nframes, nthreads, nmap;
	uint32_t next_module;
	int err;
};

static int copy_modules(struct copy *c, const struct vp_reader *r)
{
	size_t n = vp_reader_nmodules(r);

	if (n > c->nmap) {
		c->module_map = xrealloc(c->module_map, n * sizeof(*c->module_map));
		c->nmap = n;
	}
	for (; c->nmodules < n; c->nmodules++) {
		const struct vp_module *m = vp_reader_module(r, (uint32_t)c->nmodules);
		uint32_t id = UINT32_MAX;
		int err;

		for (size_t i = 0; i < c->hdr->nmodules && m->path; i++)
			if (c->hdr->modules[i].path && !strcmp(c->hdr->modules[i].path, m->path))
				id = (uint32_t)i;
		if (id == UINT32_MAX) {
			id = c->next_module++;
			err = vp_writer_module(c->w, id, m,
					       vp_reader_module_flags(r, (uint32_t)c->nmodules));
			if (err)
				return err;
		}
		c->module_map[c->nmodules] = id;
	}
	return 0;
}

static int32_t new_module(const struct copy *c, int32_t old)
{
	return old < 0 || (size_t)old >= c->nmodules ? -1 : (int32_t)c->module_map[old];
}

/* Write the definitions the reader has seen since the last call. */
static int copy_defs(struct copy *c, const struct vp_reader *r)
{
	int err = copy_modules(c, r);

	for (; !err && c->nthreads < vp_reader_nthreads(r); c->nthreads++) {
		const struct vp_thread_info *t = vp_reader_thread(r, (uint32_t)c->nthreads);

		err = vp_writer_thread(c->w, (uint32_t)c->nthreads, t->tid, t->pid);
	}
	for (; !err && c->nsymbols < vp_reader_nsymbols(r); c->nsymbols++) {
		struct vp_symbol s = *vp_reader_symbol(r, (uint32_t)c->nsymbols);

		s.module = new_module(c, s.module);
		err = vp_writer_symbol(c->w, (uint32_t)c->nsymbols, &s);
	}
	for (; !err && c->nframes < vp_reader_nframes(r); c->nframes++) {
		struct vp_frame_def f = *vp_reader_frame(r, (uint32_t)c->nframes);

		f.module = new_module(c, f.module);
		err = vp_writer_frame(c->w, (uint32_t)c->nframes, &f);
	}
	return err;
}

static int copy_sample(void *ctx, const struct vp_reader *r, const struct vp_sample *s)
{
	struct copy *c = ctx;
	int err = copy_defs(c, r);

	if (!err)
		err = vp_writer_sample(c->w, s);
	return err;
}

int vp_plan_copy(struct vp_plan *p, struct vp_writer *w, const struct vp_header *hdr,
		 uint32_t *nthreads)
{
	struct copy c = { 0 };
	struct vp_event ev[256];
	long n = 0;
	int err;

	c.w = w;
	c.hdr = hdr;
	c.old = vp_reader_header(p->r);
	c.next_module = (uint32_t)hdr->nmodules;
	vp_reader_rewind(p->r);
	vp_reader_set_sample_handler(p->r, copy_sample, &c);
	err = vp_writer_phase(w, 1, c.old->pid);
	while (!err && (n = vp_reader_next(p->r, ev, 256)) > 0)
		;
	if (!err && n < 0)
		err = (int)n;
	if (!err)
		err = copy_defs(&c, p->r);
	if (!err && vp_reader_lost(p->r))
		err = vp_writer_lost(w, 0, vp_reader_lost(p->r));
	vp_reader_set_sample_handler(p->r, NULL, NULL);
	free(c.module_map);
	*nthreads = (uint32_t)c.nthreads;
	return err;
}

void vp_plan_release(struct vp_plan *p)
{
	if (p->r)
		vp_reader_free(p->r);
	if (p->tree.nodes)
		vp_sampled_release(&p->tree);
	free(p->funcs);
	free(p->sym_samples);
	free(p->other_example);
	memset(p, 0, sizeof(*p));
}
