/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * merge.c - many recordings of one program as one report (see merge.h).
 */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "internal.h"
#include "merge.h"

#define NO_ID UINT32_MAX

/* Main module's build-id as hex, for messages ("no build-id" without one). */
static const char *build_id_hex(const struct vp_header *h, char *buf, size_t len)
{
	const struct vp_module *m = h->nmodules ? &h->modules[0] : NULL;
	size_t i;

	if (!m || !m->build_id_len)
		return "no build-id";
	for (i = 0; i < m->build_id_len && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", m->build_id[i]);
	return buf;
}

static const char *main_path(const struct vp_header *h)
{
	return h->nmodules && h->modules[0].path ? h->modules[0].path : "?";
}

/* One program is one build-id of the main module: a path or a name says
 * nothing of a rebuild, whose functions move. */
static int same_program(const struct vp_recording *a, const struct vp_recording *b, char *msg,
			size_t len)
{
	const struct vp_module *x = a->hdr->nmodules ? &a->hdr->modules[0] : NULL;
	const struct vp_module *y = b->hdr->nmodules ? &b->hdr->modules[0] : NULL;
	char bx[2 * 64 + 1], by[2 * 64 + 1];

	if (x && y && x->build_id_len && x->build_id_len == y->build_id_len &&
	    !memcmp(x->build_id, y->build_id, x->build_id_len))
		return 0;
	vp_msgf(msg, len,
		"'%s' and '%s' are not recordings of one program: their main modules are "
		"'%s' (%s%s) and '%s' (%s%s)",
		a->path, b->path, main_path(a->hdr), x && x->build_id_len ? "build-id " : "",
		build_id_hex(a->hdr, bx, sizeof(bx)), main_path(b->hdr),
		y && y->build_id_len ? "build-id " : "", build_id_hex(b->hdr, by, sizeof(by)));
	return -EXDEV;
}

/* Module @i of @ra and module @j of @rb are one file: one build-id, or
 * one path when either lacks it (a library without a note). */
static int same_module(const struct vp_reader *ra, int64_t i, const struct vp_reader *rb,
		       int64_t j)
{
	const struct vp_module *x, *y;

	if (i < 0 || j < 0)
		return i < 0 && j < 0;
	x = vp_reader_module(ra, (uint32_t)i);
	y = vp_reader_module(rb, (uint32_t)j);
	if (!x || !y)
		return !x && !y;
	if (x->build_id_len && y->build_id_len)
		return x->build_id_len == y->build_id_len &&
		       !memcmp(x->build_id, y->build_id, x->build_id_len);
	return x->path && y->path && !strcmp(x->path, y->path);
}

static int same_func(const struct vp_recording *a, uint32_t fa, const struct vp_recording *b,
		     uint32_t fb)
{
	const struct vp_func *x = &a->hdr->funcs[fa], *y = &b->hdr->funcs[fb];

	return x->addr == y->addr && !strcmp(x->name, y->name) &&
	       same_module(a->reader, x->module, b->reader, y->module);
}

static int same_callsite(const struct vp_recording *a, uint32_t ca,
			 const struct vp_recording *b, uint32_t cb)
{
	const struct vp_callsite *x = vp_reader_callsite(a->reader, ca);
	const struct vp_callsite *y = vp_reader_callsite(b->reader, cb);

	if (!x || !y)
		return 0;
	return x->offset == y->offset && x->flags == y->flags &&
	       same_module(a->reader, x->module, b->reader, y->module);
}

/*
 * @b's function and call-site ids in @a's: the same index first (the
 * same probes give the same order), else a scan.  NO_ID for those @a
 * lacks; only the ones @b's tree uses must be found (see check_ids).
 */
static int map_ids(const struct vp_recording *a, const struct vp_recording *b, uint32_t **fmap,
		   uint32_t **cmap)
{
	size_t nfa = a->hdr->nfuncs, nfb = b->hdr->nfuncs;
	size_t nca = vp_reader_ncallsites(a->reader), ncb = vp_reader_ncallsites(b->reader);
	size_t i, j;

	*fmap = malloc((nfb ? nfb : 1) * sizeof(**fmap));
	*cmap = malloc((ncb ? ncb : 1) * sizeof(**cmap));
	if (!*fmap || !*cmap)
		return -ENOMEM;
	for (i = 0; i < nfb; i++) {
		(*fmap)[i] = NO_ID;
		if (i < nfa && same_func(a, (uint32_t)i, b, (uint32_t)i)) {
			(*fmap)[i] = (uint32_t)i;
			continue;
		}
		for (j = 0; j < nfa; j++)
			if (same_func(a, (uint32_t)j, b, (uint32_t)i)) {
				(*fmap)[i] = (uint32_t)j;
				break;
			}
	}
	for (i = 0; i < ncb; i++) {
		(*cmap)[i] = NO_ID;
		if (i < nca && same_callsite(a, (uint32_t)i, b, (uint32_t)i)) {
			(*cmap)[i] = (uint32_t)i;
			continue;
		}
		for (j = 0; j < nca; j++)
			if (same_callsite(a, (uint32_t)j, b, (uint32_t)i)) {
				(*cmap)[i] = (uint32_t)j;
				break;
			}
	}
	return 0;
}

static int not_probed(const struct vp_recording *in, const char *name,
		      const struct vp_recording *not_in, char *msg, size_t len)
{
	vp_msgf(msg, len,
		"'%s': function '%s' is not probed in '%s': merging needs recordings that "
		"probed the same functions (record each with --mode=probe and the same -f "
		"options: auto mode chooses them run by run)",
		in->path, name, not_in->path);
	return -ENOENT;
}

/*
 * Every function and call site of @b's tree has an id in @a's file, and
 * every function of @a's tree one in @b's: a function probed in some runs
 * only would be its callers' own time in the others, and their
 * covariances would mix the two.
 */
static int check_ids(const struct vp_recording *a, const struct vp_recording *b,
		     const uint32_t *fmap, const uint32_t *cmap, char *msg, size_t len)
{
	uint8_t *in_b;
	size_t i;

	in_b = calloc(a->hdr->nfuncs ? a->hdr->nfuncs : 1, 1);
	if (!in_b)
		return -ENOMEM;
	for (i = 0; i < b->hdr->nfuncs; i++)
		if (fmap[i] != NO_ID)
			in_b[fmap[i]] = 1;
	for (i = 1; i < a->tree.nnodes; i++) {
		uint32_t f = a->tree.nodes[i].func;

		if (f < a->hdr->nfuncs && !in_b[f]) {
			free(in_b);
			return not_probed(a, vp_header_func_name(a->hdr, f), b, msg, len);
		}
	}
	free(in_b);

	for (i = 1; i < b->tree.nnodes; i++) {
		const struct vp_cct_node *n = &b->tree.nodes[i];
		char buf[256];

		if (n->func >= b->hdr->nfuncs || fmap[n->func] == NO_ID)
			return not_probed(b, vp_header_func_name(b->hdr, n->func), a, msg, len);
		if (n->callsite != VP_NO_CALLSITE &&
		    (n->callsite >= vp_reader_ncallsites(b->reader) || cmap[n->callsite] == NO_ID)) {
			vp_msgf(msg, len,
				"'%s': call site %s of '%s' is not in '%s': merging needs "
				"recordings that made the same calls",
				b->path,
				vp_callsite_label(vp_reader_callsite(b->reader, n->callsite), 1, buf,
						  sizeof(buf)),
				vp_header_func_name(b->hdr, n->func), a->path);
			return -ENOENT;
		}
	}
	return 0;
}

static void add_totals(struct vp_build_totals *d, const struct vp_build_totals *s, int first)
{
	uint64_t span = s->last_time > s->first_time ? s->last_time - s->first_time : 0;

	d->events += s->events;
	d->entries += s->entries;
	d->exits += s->exits;
	d->invocations += s->invocations;
	d->unpaired_entries += s->unpaired_entries;
	d->unmatched_exits += s->unmatched_exits;
	d->open_at_end += s->open_at_end;
	d->out_of_order += s->out_of_order;
	d->nest_lost += s->nest_lost;
	/* the function of nest_lost_most: the caller's, in the first file's ids */
	if (s->nest_lost_most > d->nest_lost_most)
		d->nest_lost_most = s->nest_lost_most;
	d->threads += s->threads;
	/* times of different runs do not compare: the spans add up */
	if (first)
		d->first_time = d->last_time = s->first_time;
	d->last_time += span;
}

/* What vp_recording_open() does after its build, on the merged tree. */
static int analyse(struct vp_runs *m, const struct vp_analysis_params *params)
{
	const struct vp_recording *r0 = m->recs[0];
	int err;

	if (r0->time != VP_TIME_OFFCPU) {
		m->probe_cost = vp_cct_probe_costs(&m->tree, r0->hdr);
		if (!m->probe_cost)
			return -ENOMEM;
	}
	err = vp_analysis_run(&m->an, &m->tree, r0->hdr->nfuncs, params);
	if (err < 0)
		return err;
	m->have_an = 1;
	if (m->probe_cost) {
		err = vp_analysis_set_probe_costs(&m->an, &m->tree, m->probe_cost);
		if (err < 0)
			return err;
	}
	errno = 0;
	m->callsite_twins = vp_cct_callsite_twins(&m->tree, r0->reader);
	if (!m->callsite_twins && errno)
		return -errno;
	return 0;
}

int vp_runs_merge(struct vp_runs *m, struct vp_recording *const *recs, size_t n,
		  const struct vp_recording_opts *opts, char *msg, size_t len)
{
	uint32_t **maps = NULL, *fmap = NULL, *cmap = NULL;
	size_t i, r;
	int err;

	memset(m, 0, sizeof(*m));
	m->recs = recs;
	m->nruns = n;
	err = vp_cct_init(&m->tree);
	if (err < 0)
		return err;
	/* a slowest call names a thread and a time of its own run */
	m->tree.keep_slowest = 0;
	m->budget.max = opts->max_memory;
	m->tree.budget = &m->budget;
	if (!n)
		return -EINVAL;
	maps = calloc(n, sizeof(*maps));
	if (!maps) {
		err = -ENOMEM;
		goto fail;
	}
	for (r = 0; r < n; r++) {
		const struct vp_recording *rec = recs[r];

		if (r) {
			err = same_program(recs[0], rec, msg, len);
			if (err < 0)
				goto out;
			if (rec->time != recs[0]->time || rec->tree.offcpu != recs[0]->tree.offcpu ||
			    rec->compensated != recs[0]->compensated) {
				vp_msgf(msg, len,
					"'%s' and '%s' measure different durations (time base, "
					"off-CPU times or probe costs subtracted): they do not merge",
					recs[0]->path, rec->path);
				err = -EINVAL;
				goto out;
			}
			err = map_ids(recs[0], rec, &fmap, &cmap);
			if (err < 0)
				goto fail;
			err = check_ids(recs[0], rec, fmap, cmap, msg, len);
			if (err == -ENOMEM)
				goto fail;
			if (err < 0)
				goto out;
		}
		maps[r] = malloc((rec->tree.nnodes ? rec->tree.nnodes : 1) * sizeof(**maps));
		if (!maps[r]) {
			err = -ENOMEM;
			goto fail;
		}
		err = vp_cct_merge_mapped(&m->tree, &rec->tree, fmap, cmap, maps[r]);
		if (err == -EINVAL) {
			vp_msgf(msg, len, "'%s' and '%s' measure different durations: they do not "
				"merge", recs[0]->path, rec->path);
			goto out;
		}
		if (err == -E2BIG) {
			vp_msgf(msg, len, "merging '%s' would take more than max_memory allows "
				"(%zu bytes)", rec->path, m->budget.max);
			goto out;
		}
		if (err < 0)
			goto fail;
		if (rec->totals.nest_lost_most > m->totals.nest_lost_most)
			m->totals.nest_lost_func = !fmap ? rec->totals.nest_lost_func
				: rec->totals.nest_lost_func < rec->hdr->nfuncs
					? fmap[rec->totals.nest_lost_func]
					: NO_ID;
		add_totals(&m->totals, &rec->totals, !r);
		m->lost += rec->lost;
		m->clamped += rec->clamped;
		if (rec->clamped_max > m->clamped_max)
			m->clamped_max = rec->clamped_max;
		free(fmap);
		free(cmap);
		fmap = cmap = NULL;
	}
	/* each run's statistics, node by node of the merged tree */
	m->nnodes = m->tree.nnodes;
	m->per_run = malloc(m->nnodes * n * sizeof(*m->per_run));
	if (!m->per_run) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < m->nnodes * n; i++)
		vp_stats_init(&m->per_run[i]);
	for (r = 0; r < n; r++) {
		const struct vp_cct *t = &recs[r]->tree;

		for (i = 1; i < t->nnodes; i++)
			vp_stats_merge(&m->per_run[(size_t)maps[r][i] * n + r], &t->nodes[i].stats);
	}
	err = analyse(m, &opts->params);
	if (err < 0)
		goto fail;
	goto out;
fail:
	vp_msgf(msg, len, "cannot merge '%s' with the other recordings: %s", recs[0]->path,
		strerror(-err));
out:
	free(fmap);
	free(cmap);
	if (maps)
		for (r = 0; r < n; r++)
			free(maps[r]);
	free(maps);
	return err;
}

void vp_runs_release(struct vp_runs *m)
{
	if (m->have_an)
		vp_analysis_release(&m->an);
	free(m->probe_cost);
	free(m->callsite_twins);
	free(m->per_run);
	vp_cct_release(&m->tree);
	memset(m, 0, sizeof(*m));
}

const struct vp_stats *vp_runs_stats(const struct vp_runs *m, uint32_t id, size_t run)
{
	static const struct vp_stats empty;

	if (id >= m->nnodes || run >= m->nruns)
		return &empty;
	return &m->per_run[(size_t)id * m->nruns + run];
}

int vp_runs_split(const struct vp_runs *m, uint32_t id, struct vp_runs_split *ret)
{
	double N = 0, sum = 0, sumsq_n = 0, mean, k, msw, msb, n0;
	size_t r;

	memset(ret, 0, sizeof(*ret));
	ret->p = ret->f = NAN;
	if (id >= m->nnodes)
		return -EINVAL;
	for (r = 0; r < m->nruns; r++) {
		const struct vp_stats *s = vp_runs_stats(m, id, r);

		if (!s->n)
			continue;
		ret->runs++;
		ret->n += s->n;
		N += (double)s->n;
		sum += (double)s->n * s->mean;
		sumsq_n += (double)s->n * (double)s->n;
		ret->ss_within += s->m2;
	}
	if (!ret->n)
		return 0;
	mean = sum / N;
	for (r = 0; r < m->nruns; r++) {
		const struct vp_stats *s = vp_runs_stats(m, id, r);
		double d = s->mean - mean;

		if (s->n)
			ret->ss_between += (double)s->n * d * d;
	}
	k = ret->runs;
	if (N > k)
		ret->var_within = ret->ss_within / (N - k);
	if (k < 2)
		return 0;
	msw = ret->var_within;
	msb = ret->ss_between / (k - 1);
	n0 = (N - sumsq_n / N) / (k - 1);
	if (n0 > 0 && msb > msw)
		ret->var_between = (msb - msw) / n0;
	if (ret->var_between + ret->var_within > 0)
		ret->share = ret->var_between / (ret->var_between + ret->var_within);
	if (msw > 0 && N > k) {
		double d1 = k - 1, d2 = N - k;

		ret->f = msb / msw;
		/* upper tail of F(d1, d2) */
		ret->p = vp_betai(d2 / 2, d1 / 2, d2 / (d2 + d1 * ret->f));
	}
	return 0;
}
