/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-runs.c - several recordings of one program in one report
 * (core/merge.h): the "Runs" text section, which contexts vary within
 * runs and which between them, and the JSON "runs" and per-node
 * "between_runs" members.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/merge.h"
#include "core/recording.h"
#include "json-writer.h"
#include "report.h"

/* Contexts the text section lists without --all. */
enum { RUNS_TOP = 10, RUNS_NAME_COLS = 40 };

void report_init_runs(struct report *r, const char *input, const struct vp_runs *m)
{
	report_init(r, input, m->recs[0]);
	r->tree = &m->tree;
	r->totals = &m->totals;
	r->an = &m->an;
	r->lost = m->lost;
	r->clamped = m->clamped;
	r->clamped_max = m->clamped_max;
	r->probe_cost = m->probe_cost;
	r->callsite_twins = m->callsite_twins;
	/* merged are the probed calls; samples stay each file's */
	r->sampled = NULL;
	r->runs = m;
}

/* Node @id as "main/run/work", its outer end cut to @cols with "...". */
static const char *runs_path(const struct report *r, uint32_t id, char *buf, size_t len,
			     size_t cols)
{
	char tmp[1024];
	size_t at = sizeof(tmp) - 1, n;

	tmp[at] = '\0';
	while (id != VP_NODE_ROOT && id != VP_NO_NODE) {
		const char *name = report_func_name(r, r->tree->nodes[id].func);

		n = strlen(name);
		if (at < n + 4)
			break;
		if (at != sizeof(tmp) - 1)
			tmp[--at] = '/';
		at -= n;
		memcpy(tmp + at, name, n);
		id = r->tree->nodes[id].parent;
	}
	n = strlen(tmp + at);
	if (n > cols)
		snprintf(buf, len, "...%s", tmp + at + n - (cols - 3));
	else
		snprintf(buf, len, "%s", tmp + at);
	return buf;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The main module's build-id in hex, NULL without one. */
static const char *runs_build_id(const struct vp_header *h, char *buf, size_t len)
{
	const struct vp_module *m = h->nmodules ? &h->modules[0] : NULL;

	if (!m || !m->build_id_len || 2 * m->build_id_len + 1 > len)
		return NULL;
	for (size_t i = 0; i < m->build_id_len; i++)
		snprintf(buf + 2 * i, 3, "%02x", m->build_id[i]);
	return buf;
}

struct runs_rank {
	uint32_t id;
	double ss; /* the context's sum of squares over all runs */
};

static int runs_cmp(const void *a, const void *b)
{
	const struct runs_rank *x = a, *y = b;

	if (x->ss != y->ss)
		return x->ss < y->ss ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The contexts to split: called in two runs or more, significant ones
 * first (the analysis' own choice), by their sum of squares: the time
 * variance adds to the runs together.  Returns their number.
 */
static size_t runs_ranked(const struct report *r, struct runs_rank **ret)
{
	const struct vp_runs *m = r->runs;
	struct runs_rank *v = calloc(m->nnodes ? m->nnodes : 1, sizeof(*v));
	size_t n = 0;

	*ret = v;
	if (!v)
		return 0;
	for (uint32_t id = 1; id < m->nnodes; id++) {
		struct vp_runs_split s;

		if (vp_runs_split(m, id, &s) < 0 || s.runs < 2 || s.n <= s.runs)
			continue;
		if (id < r->an->nnodes && !r->an->significant[id])
			continue;
		v[n].id = id;
		v[n].ss = s.ss_within + s.ss_between;
		n++;
	}
	qsort(v, n, sizeof(*v), runs_cmp);
	return n;
}

int report_runs_text(const struct report *r)
{
	const struct vp_runs *m = r->runs;
	FILE *f = r->out;
	struct runs_rank *rank;
	size_t n, shown;
	char t1[32], t2[32], t3[32], name[256];

	if (!m)
		return 0;
	fprintf(f, "Runs: %zu recordings of ", m->nruns);
	report_put(f, report_program_path(r));
	fprintf(f, ", merged\n");
	fprintf(f, "  %-36s %10s %10s  %s\n", "recording", "calls", "time", "host");
	for (size_t i = 0; i < m->nruns; i++) {
		const struct vp_recording *rec = m->recs[i];
		const struct vp_build_totals *t = &rec->totals;
		char file[64];

		snprintf(file, sizeof(file), "%s", rec->path);
		if (strlen(rec->path) > 36)
			snprintf(file, sizeof(file), "...%s", rec->path + strlen(rec->path) - 33);
		fprintf(f, "  ");
		report_put(f, file);
		fprintf(f, "%*s %10" PRIu64 " %10s  ", (int)(36 - strlen(file)), "", t->invocations,
			report_time(r, t->events ? (double)(t->last_time - t->first_time) : 0, t1,
				    sizeof(t1)));
		report_put(f, rec->hdr->host ? rec->hdr->host : "?");
		fputc('\n', f);
	}
	for (size_t i = 0; i < m->nruns; i++)
		if (m->recs[i]->sampled && m->recs[i]->sampled->samples) {
			fprintf(f, "  (their sampled stacks are not merged: report one file for "
				   "them)\n");
			break;
		}
	n = runs_ranked(r, &rank);
	if (!rank)
		return -1;
	fprintf(f, "\nWithin and between runs (each context's variance split: one-way analysis of\n"
		   "variance, runs as random effects; 'between' is the part of a call's variance\n"
		   "that comes from which run it was in):\n");
	if (!n) {
		fprintf(f, "  no significant context was called in two runs or more\n\n");
		free(rank);
		return ferror(f) ? -1 : 0;
	}
	fprintf(f, "  %-*s %9s %9s %9s %9s %7s %6s\n", RUNS_NAME_COLS, "context", "calls", "mean",
		"sd within", "sd betw.", "between", "p");
	shown = r->all || n < RUNS_TOP ? n : RUNS_TOP;
	for (size_t k = 0; k < shown; k++) {
		uint32_t id = rank[k].id;
		const struct vp_stats *st = &m->tree.nodes[id].stats;
		struct vp_runs_split s;
		char p[16];

		vp_runs_split(m, id, &s);
		if (isnan(s.p))
			snprintf(p, sizeof(p), "-");
		else if (s.p < 1e-4)
			snprintf(p, sizeof(p), "<1e-4");
		else
			snprintf(p, sizeof(p), "%.2g", s.p);
		runs_path(r, id, name, sizeof(name), RUNS_NAME_COLS);
		fprintf(f, "  ");
		report_put(f, name);
		fprintf(f, "%*s %9" PRIu64 " %9s %9s %9s %6.1f%% %6s\n",
			(int)(RUNS_NAME_COLS - strlen(name)), "", s.n,
			report_time_compact(r, st->mean, t1, sizeof(t1)),
			report_time_compact(r, sqrt(s.var_within), t2, sizeof(t2)),
			report_time_compact(r, sqrt(s.var_between), t3, sizeof(t3)),
			s.share * 100, p);
		/* the run means, as many as fit on one line */
		fprintf(f, "    run means:");
		for (size_t i = 0, col = 16; i < m->nruns; i++) {
			const struct vp_stats *rs = vp_runs_stats(m, id, i);
			const char *v = rs->n ? report_time_compact(r, rs->mean, t1, sizeof(t1)) : "-";

			if (col + strlen(v) + 1 > 96) {
				fprintf(f, " ...");
				break;
			}
			fprintf(f, " %s", v);
			col += strlen(v) + 1;
		}
		fputc('\n', f);
	}
	if (shown < n)
		fprintf(f, "  (%zu more: --all lists them)\n", n - shown);
	fputc('\n', f);
	free(rank);
	return ferror(f) ? -1 : 0;
}

void report_runs_json(struct json *j, const struct report *r)
{
	const struct vp_runs *m = r->runs;
	char bid[2 * 64 + 1];

	if (!m)
		return;
	json_arr(j, "runs");
	for (size_t i = 0; i < m->nruns; i++) {
		const struct vp_recording *rec = m->recs[i];

		json_obj(j, NULL);
		json_str(j, "file", rec->path);
		json_str(j, "name", base_name(rec->path));
		json_str_or_null(j, "host", rec->hdr->host);
		json_u64(j, "pid", rec->hdr->pid);
		json_str_or_null(j, "build_id", runs_build_id(rec->hdr, bid, sizeof(bid)));
		json_u64(j, "invocations", rec->totals.invocations);
		/* per merged node that this run called: [id, count, mean, variance] */
		json_arr(j, "nodes");
		for (uint32_t id = 1; id < m->nnodes; id++) {
			const struct vp_stats *s = vp_runs_stats(m, id, i);

			if (!s->n)
				continue;
			json_obj(j, NULL);
			json_u64(j, "id", id);
			json_u64(j, "count", s->n);
			json_double(j, "mean", s->mean);
			json_double(j, "variance", vp_stats_variance(s));
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void report_runs_json_node(struct json *j, const struct report *r, uint32_t id)
{
	struct vp_runs_split s;

	if (!r->runs)
		return;
	if (vp_runs_split(r->runs, id, &s) < 0 || !s.n) {
		json_null(j, "between_runs");
		return;
	}
	json_obj(j, "between_runs");
	json_double(j, "share", s.share);
	json_u64(j, "runs", s.runs);
	json_double(j, "var_within", s.var_within);
	json_double(j, "var_between", s.var_between);
	json_double(j, "ss_within", s.ss_within);
	json_double(j, "ss_between", s.ss_between);
	if (isnan(s.f)) {
		json_null(j, "f");
		json_null(j, "p");
	} else {
		json_double(j, "f", s.f);
		json_double(j, "p", s.p);
	}
	json_obj_end(j);
}
