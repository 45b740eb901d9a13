/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-json.c - `varperf report --format json`: one JSON object with the
 * whole analysis, for scripts.  man/varperf-report.1 documents every field.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/cct.h"
#include "core/covar.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "core/sources.h"
#include "core/stats.h"
#include "core/vcg.h"
#include "json-writer.h"
#include "report.h"
#include "util/util.h"

/* Layout version of this JSON; bump on incompatible changes. */
enum { JSON_VERSION = 2 };
/* Elements down to this depth start a new line; deeper ones stay compact. */
enum { JSON_PRETTY_DEPTH = 2 };

/* ---- sections ---- */

static void json_callsite(struct json *j, const struct report *r, const char *key, uint32_t id)
{
	const struct vp_callsite *cs = NULL;

	if (id != VP_NO_CALLSITE)
		cs = vp_reader_callsite(r->reader, id);
	if (!cs || (cs->flags & VP_CS_NONE)) {
		json_null(j, key);
		return;
	}
	json_obj(j, key);
	json_hex(j, "address", cs->offset);
	json_str_or_null(j, "file", cs->file);
	if (cs->line)
		json_u64(j, "line", cs->line);
	else
		json_null(j, "line");
	json_str_or_null(j, "caller", cs->caller);
	if (cs->module >= 0 && (size_t)cs->module < r->hdr->nmodules)
		json_str(j, "module", r->hdr->modules[cs->module].path);
	else
		json_null(j, "module");
	json_bool(j, "tail_call", cs->flags & VP_CS_TRAMPOLINE);
	json_obj_end(j);
}

/* Statistics every node, function and pattern carries. */
static void json_stats(struct json *j, const struct vp_stats *s, int variance)
{
	json_u64(j, "count", s->n);
	json_double(j, "mean", s->n ? s->mean : 0);
	json_double(j, "stddev", vp_stats_stddev(s));
	if (variance)
		json_double(j, "variance", vp_stats_variance(s));
	json_double(j, "cov", vp_stats_cov(s));
	json_u64(j, "total", s->total);
	if (s->n) {
		json_u64(j, "min", s->min);
		json_u64(j, "max", s->max);
	} else {
		json_null(j, "min");
		json_null(j, "max");
	}
}

/*
 * A node's percentiles (nearest rank, within the histogram's error) and
 * its histogram: the buckets that hold durations, [lo, hi, count].
 */
static void json_hist(struct json *j, const struct vp_hist *h)
{
	static const struct {
		const char *key;
		double q;
	} ps[] = { { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p99_9", 0.999 } };
	uint64_t count;

	if (!h->n) {
		json_null(j, "percentiles");
		json_null(j, "histogram");
		return;
	}
	json_obj_as(j, "percentiles", JSON_COMPACT);
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		json_u64(j, ps[i].key, vp_hist_quantile(h, ps[i].q));
	json_u64(j, "max", h->max);
	json_obj_end(j);
	json_arr_as(j, "histogram", JSON_COMPACT);
	for (uint32_t pos = 0, b; vp_hist_next(h, &pos, &b, &count);) {
		uint64_t lo, hi;

		vp_hist_bucket_range(b, &lo, &hi);
		json_arr_as(j, NULL, JSON_COMPACT);
		json_u64(j, NULL, lo);
		json_u64(j, NULL, hi);
		json_u64(j, NULL, count);
		json_arr_end(j);
	}
	json_arr_end(j);
}

static void json_backend(struct json *j, uint32_t backend)
{
	switch (backend) {
	case VP_BACKEND_PERF:
		json_str(j, "backend", "perf");
		break;
	case VP_BACKEND_BPF:
		json_str(j, "backend", "bpf");
		break;
	case VP_BACKEND_USER:
		json_str(j, "backend", "user");
		break;
	default:
		json_null(j, "backend");
		break;
	}
}

/* "processes": null for a single process, else each one (report.h). */
static void json_processes(struct json *j, const struct report *r)
{
	struct report_process *v;
	size_t n = report_processes(r, &v);

	if (r->pid)
		json_u64(j, "shown_pid", r->pid);
	else
		json_null(j, "shown_pid");
	if (!n) {
		json_null(j, "processes");
		return;
	}
	json_arr(j, "processes");
	for (size_t i = 0; i < n; i++) {
		json_obj(j, NULL);
		json_u64(j, "pid", v[i].pid);
		if (v[i].ppid)
			json_u64(j, "ppid", v[i].ppid);
		else
			json_null(j, "ppid");
		json_u64(j, "threads", v[i].threads);
		json_str_or_null(j, "exec", v[i].exec);
		json_obj_end(j);
	}
	json_arr_end(j);
	free(v);
}

static void json_header(struct json *j, const struct report *r)
{
	const struct vp_header *h = r->hdr;
	const char *clock = report_clock_name(h->clock);
	size_t emulated, moved;
	double share;
	char buf[32];

	json_u64(j, "json_version", JSON_VERSION);
	json_str(j, "input", r->input);
	json_u64(j, "data_version", h->version);
	json_str(j, "unit", report_unit_name(h->unit));
	if (!clock) {
		snprintf(buf, sizeof(buf), "clock %" PRIu32, h->clock);
		clock = buf;
	}
	json_str(j, "clock", clock);
	json_u64(j, "clock_id", h->clock);
	json_arr(j, "command");
	for (int i = 0; i < h->argc; i++)
		json_str(j, NULL, h->argv[i]);
	json_arr_end(j);
	json_u64(j, "pid", h->pid);
	/* (target.interrupted says the same, next to the target's status) */
	json_bool(j, "interrupted", r->trailer->present &&
					    (r->trailer->flags & VP_END_INTERRUPTED));
	json_processes(j, r);
	if (h->start_time)
		json_u64(j, "start_time", h->start_time);
	else
		json_null(j, "start_time");
	json_str_or_null(j, "host", h->host);
	json_u64(j, "ncpu", h->ncpu);
	if (h->has_input_size)
		json_u64(j, "input_size", h->input_size);
	vp_header_count_probes(h, &emulated, &moved);
	json_u64(j, "probed_functions", h->nfuncs);
	json_u64(j, "probes_emulated", emulated);
	json_u64(j, "probes_moved", moved);
	json_arr(j, "probe_costs");
	for (size_t i = 0; i < h->ncosts; i++) {
		json_obj(j, NULL);
		json_str(j, "class", vp_insn_class_name(h->costs[i].insn_class));
		json_u64(j, "in_window_ns", h->costs[i].in_window_ns);
		json_u64(j, "full_ns", h->costs[i].full_ns);
		json_u64(j, "spread_ns", h->costs[i].spread_ns);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_bool(j, "compensated", r->compensated);
	json_u64(j, "mode", h->mode);
	/* auto mode: phase 2 probed the process phase 1 sampled */
	if (h->mode == VP_MODE_AUTO)
		json_bool(j, "one_run", (r->trailer->present &&
					 (r->trailer->flags & (VP_END_DETACHED | VP_END_GONE))) ||
						vp_reader_phase1_pid(r->reader) == h->pid);
	else
		json_null(j, "one_run");
	json_backend(j, h->backend);
	json_str(j, "time", vp_time_base_name(r->time));
	/* own time by default: why (preempted share of the variance in wall time) */
	json_bool(j, "time_default", r->time_auto);
	if (r->time_auto)
		json_double(j, "preempted_share", r->preempted_share);
	if (report_offcpu_share(r, &share))
		json_double(j, "offcpu_share", share);
	else
		json_null(j, "offcpu_share");
}

static void json_parameters(struct json *j, const struct report *r)
{
	const struct vp_analysis *an = r->an;

	json_obj(j, "parameters");
	json_double(j, "cutoff", an->params.cutoff);
	json_double(j, "probability", an->params.probability);
	json_double(j, "window", an->params.window);
	json_double(j, "cov_threshold", an->cov_threshold);
	json_double(j, "similarity", an->params.similarity);
	json_double(j, "beta", an->params.beta);
	json_double(j, "k", an->k);
	json_obj_end(j);
}

static void json_totals(struct json *j, const struct report *r)
{
	const struct vp_build_totals *bt = r->totals;
	const struct vp_trailer *tr = r->trailer;

	json_obj(j, "totals");
	json_u64(j, "events", bt->events);
	json_u64(j, "invocations", bt->invocations);
	json_u64(j, "lost", r->lost);
	json_u64(j, "unpaired", bt->unpaired_entries);
	json_u64(j, "unpaired_nested", bt->nest_lost);
	json_u64(j, "unmatched_exits", bt->unmatched_exits);
	json_u64(j, "open_at_end", bt->open_at_end);
	json_u64(j, "clamped", r->clamped);
	json_u64(j, "clamped_max", r->clamped_max);
	json_u64(j, "out_of_order", bt->out_of_order);
	json_u64(j, "threads", bt->threads);
	if (tr->present)
		json_u64(j, "foreign", tr->foreign);
	else
		json_null(j, "foreign");
	if (tr->present)
		json_u64(j, "unfollowed", tr->unfollowed);
	else
		json_null(j, "unfollowed");
	json_u64(j, "total_time", r->an->total_time);
	json_u64(j, "duration", bt->events ? bt->last_time - bt->first_time : 0);
	json_bool(j, "complete", tr->present);
	/* auto mode's phase 2, as the recorder measured it */
	if (tr->present && tr->budget_ppm) {
		json_obj(j, "probe_overhead");
		json_u64(j, "probe_cost_ns", tr->probe_cost_ns);
		json_u64(j, "target_cpu_ns", tr->target_cpu_ns);
		json_double(j, "budget", (double)tr->budget_ppm / 1e6);
		json_bool(j, "over_budget", !!(tr->flags & VP_END_OVER_BUDGET));
		json_obj_end(j);
	} else {
		json_null(j, "probe_overhead");
	}
	json_obj_end(j);
}

static void json_target(struct json *j, const struct report *r)
{
	const struct vp_trailer *tr = r->trailer;
	int ws = (int)tr->wait_status;
	int exited = tr->present && (tr->flags & VP_END_EXITED);

	if (!tr->present) {
		json_null(j, "target");
		return;
	}
	json_obj(j, "target");
	json_bool(j, "exited", exited);
	if (exited)
		json_u64(j, "wait_status", tr->wait_status);
	else
		json_null(j, "wait_status");
	if (exited && WIFEXITED(ws))
		json_i64(j, "exit_code", WEXITSTATUS(ws));
	else
		json_null(j, "exit_code");
	if (exited && WIFSIGNALED(ws))
		json_i64(j, "signal", WTERMSIG(ws));
	else
		json_null(j, "signal");
	json_bool(j, "interrupted", tr->flags & VP_END_INTERRUPTED);
	json_bool(j, "detached", tr->flags & VP_END_DETACHED);
	json_bool(j, "exited_while_attached", tr->flags & VP_END_GONE);
	json_bool(j, "write_error", tr->flags & VP_END_WRITE_ERROR);
	json_obj_end(j);
}

static void json_functions(struct json *j, const struct report *r)
{
	const struct vp_analysis *an = r->an;

	json_arr(j, "functions");
	for (size_t i = 0; i < an->nfuncs; i++) {
		const struct vp_func_summary *fs = &an->funcs[i];
		const struct vp_func *fn = NULL;

		if (fs->func < r->hdr->nfuncs)
			fn = &r->hdr->funcs[fs->func];

		json_obj(j, NULL);
		json_str(j, "function", report_func_name(r, fs->func));
		json_str_or_null(j, "symbol", fn ? fn->name : NULL);
		json_str_or_null(j, "base", fn ? fn->base : NULL);
		json_stats(j, &fs->stats, 0);
		json_u64(j, "contexts", fs->ncontexts);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/*
 * labels[0] = "self", then one per child in the matrix's variable order
 * (children[i] is variable vp_cct_var(i)), and past VP_CCT_TRACKED
 * children, one for the "other" callees together, whose number is
 * other_callees.
 */
static void json_covariance(struct json *j, const struct report *r, const struct vp_cct_node *n)
{
	size_t dim = n->cov.dim;
	uint32_t *child_of;
	char label[600];

	if (!n->nchildren || dim < 2) {
		json_null(j, "children_covariance");
		return;
	}
	child_of = xcalloc(dim, sizeof(*child_of));
	for (uint32_t i = 0; i < vp_cct_ntracked(n->nchildren); i++)
		if (vp_cct_var(i) < dim)
			child_of[vp_cct_var(i)] = n->children[i];
	json_obj(j, "children_covariance");
	if (vp_cct_nother(n->nchildren))
		json_u64(j, "other_callees", vp_cct_nother(n->nchildren));
	json_arr(j, "labels");
	for (size_t v = 0; v < dim; v++) {
		if (v == 0)
			snprintf(label, sizeof(label), "self");
		else if (v > VP_CCT_TRACKED)
			snprintf(label, sizeof(label), "(%" PRIu32 " other callees)",
				 vp_cct_nother(n->nchildren));
		else if (child_of[v])
			report_node_label(r, child_of[v], label, sizeof(label));
		else
			snprintf(label, sizeof(label), "variable %zu", v);
		json_str(j, NULL, label);
	}
	json_arr_end(j);
	json_arr(j, "nodes");
	for (size_t v = 0; v < dim; v++) {
		if (child_of[v])
			json_u64(j, NULL, child_of[v]);
		else
			json_null(j, NULL);
	}
	json_arr_end(j);
	json_arr(j, "matrix");
	for (size_t a = 0; a < dim; a++) {
		json_arr(j, NULL);
		for (size_t b = 0; b < dim; b++)
			json_double(j, NULL, vp_covar_get(&n->cov, a, b));
		json_arr_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
	free(child_of);
}

/*
 * How often the parent takes the path to node @id: of its paired
 * invocations, those that called the node at least once (issue 11's
 * "fallbackSort runs in 21 of 72 BZ2_blockSort calls").  Absent for the
 * outermost nodes, which have no parent's calls to count.
 */
static void json_path(struct json *j, const struct report *r, const struct vp_cct_node *n)
{
	uint64_t of;

	if (n->parent == VP_NODE_ROOT || n->parent == VP_NO_NODE || n->parent >= r->tree->nnodes)
		return;
	of = r->tree->nodes[n->parent].stats.n;
	json_obj_as(j, "path", JSON_COMPACT);
	json_u64(j, "calls", n->path_calls);
	json_u64(j, "of", of);
	json_double(j, "fraction", of ? (double)n->path_calls / (double)of : NAN);
	json_obj_end(j);
}

/* The node's off-CPU time and share of the variance; absent without. */
static void json_offcpu(struct json *j, const struct report *r, uint32_t id)
{
	struct vp_offcpu_split sp;

	if (vp_cct_offcpu_split(r->tree, id, &sp) < 0)
		return;
	json_obj(j, "offcpu");
	json_double(j, "mean", sp.off_mean);
	json_double(j, "stddev", sqrt(sp.off_var));
	json_double(j, "variance_share", sp.wall_var > 0 ? sp.off_share : NAN);
	if (sp.has_blocked) {
		struct vp_cct_wait w[VP_CCT_WAITS + 1];
		size_t nw = vp_cct_waits_sorted(r->tree, id, w);
		char name[64];

		json_obj(j, "preempted");
		json_double(j, "mean", sp.preempted_mean);
		json_double(j, "share", sp.wall_var > 0 ? sp.preempted_share : NAN);
		json_obj_end(j);
		json_obj(j, "blocked");
		json_double(j, "mean", sp.blocked_mean);
		json_double(j, "share", sp.wall_var > 0 ? sp.blocked_share : NAN);
		json_obj_end(j);
		/* where they were blocked, callees included, most time first */
		json_arr(j, "waits");
		for (size_t i = 0; i < nw; i++) {
			json_obj_as(j, NULL, JSON_COMPACT);
			json_str(j, "reason", w[i].reason == UINT32_MAX
						      ? "other"
						      : vp_wait_reason_name(r->hdr, w[i].reason,
									    name, sizeof(name)));
			json_u64(j, "count", w[i].count);
			json_u64(j, "ns", w[i].ns);
			json_obj_end(j);
		}
		json_arr_end(j);
	}
	json_obj_end(j);
}

/*
 * The node's kept slowest calls in start order (core/slowest.h): start
 * from the first event, thread id, duration, and the split of the
 * duration between the node's own code and its children, exactly.
 */
static void json_slowest(struct json *j, const struct report *r, const struct vp_cct_node *n)
{
	const struct vp_slowest *s = &n->slowest;
	char label[600];

	json_arr(j, "slowest");
	for (uint32_t i = 0; i < s->n; i++) {
		const struct vp_slow_call *c = &s->calls[i];
		const struct vp_thread_info *ti = vp_reader_thread(r->reader, c->thread);

		json_obj_as(j, NULL, JSON_COMPACT);
		json_i64(j, "start", report_slow_start(r, c));
		if (ti)
			json_u64(j, "thread", ti->tid);
		else
			json_null(j, "thread");
		json_u64(j, "duration", c->duration);
		json_arr_as(j, "split", JSON_COMPACT);
		for (uint32_t k = 0; k < c->nparts; k++) {
			uint32_t child = report_slow_part_node(n, c->parts[k].var);

			json_obj_as(j, NULL, JSON_COMPACT);
			json_str(j, "callee", report_slow_part_label(r, n, c->parts[k].var, label,
								     sizeof(label)));
			if (child == VP_NO_NODE || child == VP_OTHER_NODE)
				json_null(j, "node");
			else
				json_u64(j, "node", child);
			json_i64(j, "time", c->parts[k].time);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_nodes(struct json *j, const struct report *r)
{
	const struct vp_analysis *an = r->an;
	size_t nnodes = r->tree->nnodes;

	json_arr(j, "nodes");
	for (uint32_t id = 1; id < nnodes; id++) {
		const struct vp_cct_node *n = &r->tree->nodes[id];
		int known = id < an->nnodes;

		json_obj(j, NULL);
		json_u64(j, "id", id);
		if (n->parent == VP_NODE_ROOT || n->parent == VP_NO_NODE)
			json_null(j, "parent");
		else
			json_u64(j, "parent", n->parent);
		json_u64(j, "depth", n->depth);
		json_str(j, "function", report_func_name(r, n->func));
		json_callsite(j, r, "callsite", n->callsite);
		json_stats(j, &n->stats, 1);
		json_hist(j, &n->hist);
		json_u64(j, "unpaired", n->unpaired);
		json_u64(j, "open", n->open);
		json_u64(j, "open_total", n->open_total);
		json_offcpu(j, r, id);
		json_bool(j, "unreliable", report_node_unreliable(r, id));
		if (report_mean_uncertainty(r, id) > 0)
			json_double(j, "mean_uncertainty", report_mean_uncertainty(r, id));
		else
			json_null(j, "mean_uncertainty");
		json_bool(j, "partial", vp_reader_unprobed(r->reader, n->func) != 0);
		json_bool(j, "significant", known && an->significant[id]);
		json_bool(j, "high_variance", known && an->high_variance[id]);
		json_double(j, "vim", known ? an->vim[id] : 0);
		if (r->labels)
			json_str(j, "vcg_type", vp_vcg_type_name(r->labels[id]));
		if (r->sources && id < r->sources->nnodes)
			json_str(j, "calls_per_parent", vp_once_name(r->sources->once[id]));
		json_path(j, r, n);
		json_arr(j, "children");
		for (uint32_t i = 0; i < n->nchildren; i++)
			json_u64(j, NULL, n->children[i]);
		json_arr_end(j);
		json_covariance(j, r, n);
		json_slowest(j, r, n);
		report_runs_json_node(j, r, id);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_patterns(struct json *j, const struct report *r)
{
	const struct vp_analysis *an = r->an;

	json_arr(j, "patterns");
	for (size_t i = 0; i < an->npatterns; i++) {
		const struct vp_pattern *p = &an->patterns[i];

		json_obj(j, NULL);
		json_u64(j, "rank", i + 1);
		json_arr(j, "functions");
		for (size_t e = 0; e < p->len; e++)
			json_str(j, NULL, report_func_name(r, p->chain[e].func));
		json_arr_end(j);
		json_arr(j, "callsites");
		for (size_t e = 0; e < p->len; e++)
			json_callsite(j, r, NULL, p->chain[e].callsite);
		json_arr_end(j);
		json_stats(j, &p->stats, 0);
		json_double(j, "vim", p->vim);
		json_double(j, "vim_share", an->max_vim > 0 ? p->vim / an->max_vim : 0);
		json_bool(j, "in_pattern_set", p->in_pattern_set);
		json_bool(j, "unreliable", p->unreliable != 0);
		json_arr(j, "through");
		for (size_t e = 0; e < p->nthrough; e++)
			json_str(j, NULL, report_func_name(r, p->through[e].func));
		json_arr_end(j);
		json_arr(j, "through_callsites");
		for (size_t e = 0; e < p->nthrough; e++)
			json_callsite(j, r, NULL, p->through[e].callsite);
		json_arr_end(j);
		json_arr(j, "nodes");
		for (size_t e = 0; e < p->nnodes; e++)
			json_u64(j, NULL, p->nodes[e]);
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* ---- the Variance Characterization Graph and its sources ---- */

static void json_cc(struct json *j, const struct report *r, const struct vp_vcg_cc *cc)
{
	json_arr(j, NULL);
	for (uint32_t i = 0; i < cc->len; i++) {
		json_obj(j, NULL);
		json_str(j, "function", report_func_name(r, cc->elems[i].func));
		json_callsite(j, r, "callsite", cc->elems[i].callsite);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_u32_array(struct json *j, const char *key, const uint32_t *v, uint32_t n)
{
	json_arr(j, key);
	for (uint32_t i = 0; i < n; i++)
		json_u64(j, NULL, v[i]);
	json_arr_end(j);
}

static void json_vcg_nodes(struct json *j, const struct report *r)
{
	const struct vp_vcg *g = r->vcg;

	json_arr(j, "nodes");
	for (size_t id = 0; id < g->nnodes; id++) {
		const struct vp_vcg_node *n = &g->nodes[id];

		json_obj(j, NULL);
		json_u64(j, "id", id);
		json_u64(j, "pattern", (uint64_t)n->pattern + 1);
		json_str(j, "function", report_func_name(r, n->func));
		json_str(j, "type", vp_vcg_type_name(n->type));
		if (n->parent == VP_NO_NODE)
			json_null(j, "parent");
		else
			json_u64(j, "parent", n->parent);
		json_u32_array(j, "children", n->children, n->nchildren);
		json_stats(j, &n->stats, 1);
		json_double(j, "vim", n->vim);
		json_double(j, "subtree_vim", n->subtree_vim);
		json_u32_array(j, "cct_nodes", n->cct, n->ncct);
		json_arr(j, "contexts");
		for (uint32_t i = 0; i < n->nccs; i++)
			json_cc(j, r, &g->ccs[n->ccs[i]]);
		json_arr_end(j);
		json_u32_array(j, "originates", n->ols, n->nols);
		json_u32_array(j, "inside", n->cls, n->ncls);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_vcg_segments(struct json *j, const struct report *r)
{
	const struct vp_vcg *g = r->vcg;

	json_arr(j, "segments");
	for (size_t i = 0; i < g->nsegments; i++) {
		const struct vp_vcg_segment *s = &g->segments[i];

		json_obj(j, NULL);
		json_u64(j, "id", i);
		json_u64(j, "originator", s->nodes[0]);
		json_u64(j, "underlier", s->nodes[s->len - 1]);
		json_u32_array(j, "nodes", s->nodes, s->len);
		json_arr(j, "components");
		for (uint32_t k = 0; k < s->ncomponents; k++)
			json_callsite(j, r, NULL, r->tree->nodes[s->components[k]].callsite);
		json_arr_end(j);
		json_u32_array(j, "component_nodes", s->components, s->ncomponents);
		json_u64(j, "count", s->n);
		json_double(j, "mean", s->mean);
		json_double(j, "variance", s->variance);
		json_double(j, "cf", s->cf);
		json_str(j, "how", vp_source_how_name(s->how));
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_sources(struct json *j, const struct report *r)
{
	const struct vp_sources *s = r->sources;
	char label[600];

	json_arr(j, "sources");
	for (size_t i = 0; i < s->norigins; i++) {
		const struct vp_origin *o = &s->origins[i];

		json_obj(j, NULL);
		json_u64(j, "node", o->node);
		json_str(j, "function", report_func_name(r, r->tree->nodes[o->node].func));
		json_double(j, "variance", o->variance);
		json_u64(j, "variables", o->nvars);
		json_u64(j, "inlined", o->ninlined);
		json_arr(j, "components");
		for (size_t k = 0; k < o->ncomponents; k++) {
			const struct vp_component *c = &o->components[k];

			json_obj(j, NULL);
			if (c->node == VP_NO_NODE) {
				json_null(j, "node");
				json_str(j, "label", "self");
			} else if (c->node == VP_OTHER_NODE) {
				json_null(j, "node");
				snprintf(label, sizeof(label), "(%" PRIu32 " other callees)",
					 vp_cct_nother(r->tree->nodes[o->node].nchildren));
				json_str(j, "label", label);
			} else {
				json_u64(j, "node", c->node);
				report_node_label(r, c->node, label, sizeof(label));
				json_str(j, "label", label);
			}
			json_double(j, "share", c->share);
			json_double(j, "cf", c->cf);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_arr(j, "segments");
		for (size_t k = 0; k < o->nsources; k++) {
			const struct vp_source *src = &o->sources[k];

			json_obj(j, NULL);
			json_u64(j, "underlier", src->underlier);
			report_node_label(r, src->underlier, label, sizeof(label));
			json_str(j, "label", label);
			json_u32_array(j, "chain", src->chain, src->len);
			json_double(j, "share", src->share);
			json_double(j, "cf", src->cf);
			json_double(j, "mean", src->mean);
			json_double(j, "variance", src->variance);
			json_str(j, "how", vp_source_how_name(src->how));
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_vcg(struct json *j, const struct report *r)
{
	const struct vp_vcg *g = r->vcg;
	const struct vp_sources *s = r->sources;

	if (!g || !s) {
		json_null(j, "vcg");
		return;
	}
	json_obj(j, "vcg");
	json_obj(j, "parameters");
	json_double(j, "tau", g->params.tau);
	json_double(j, "beta", g->params.beta);
	json_double(j, "min_contribution", s->params.min_contribution);
	json_double(j, "once_probability", s->params.once_probability);
	json_u64(j, "max_passes", s->params.max_passes);
	json_obj_end(j);
	json_u64(j, "passes", s->passes);
	json_bool(j, "pass_limit_reached", s->limited);
	json_obj(j, "sizes");
	json_u64(j, "base_patterns", g->base_patterns);
	json_u64(j, "base_nodes", g->base_nodes);
	json_u64(j, "merged_patterns", g->merged_patterns);
	json_u64(j, "merged_nodes", g->merged_nodes);
	json_u64(j, "merges", g->merges);
	json_u64(j, "layers", g->layers);
	json_u64(j, "trimmed_patterns", g->trimmed_patterns);
	json_u64(j, "trimmed_nodes", g->trimmed_nodes);
	json_obj_end(j);
	json_arr(j, "patterns");
	for (size_t q = 0; q < g->npatterns; q++) {
		json_obj(j, NULL);
		json_u64(j, "id", q + 1);
		json_u64(j, "root", g->patterns[q].root);
		json_u64(j, "nodes", g->patterns[q].nnodes);
		json_double(j, "vim", g->patterns[q].vim);
		json_double(j, "vim_share", g->patterns[0].vim > 0
						    ? g->patterns[q].vim / g->patterns[0].vim
						    : 0);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_vcg_nodes(j, r);
	json_vcg_segments(j, r);
	json_sources(j, r);
	json_obj_end(j);
}

/* Cumulative samples per function (once per sample), largest first. */

static int json_cmp_sym(const void *a, const void *b, void *arg)
{
	const struct vp_sampled *tree = arg;
	uint64_t x = tree->sym_samples[*(const uint32_t *)a];
	uint64_t y = tree->sym_samples[*(const uint32_t *)b];

	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void json_share(struct json *j, const struct report *r, const char *key, uint64_t k)
{
	struct vp_share sh;
	char lo[64], hi[64];

	vp_share(k, r->sampled->samples, r->z, &sh);
	snprintf(lo, sizeof(lo), "%s_lo", key);
	snprintf(hi, sizeof(hi), "%s_hi", key);
	json_double(j, key, sh.p);
	json_double(j, lo, sh.lo);
	json_double(j, hi, sh.hi);
}

static void json_sampled_functions(struct json *j, const struct report *r)
{
	const struct vp_sampled *t = r->sampled;
	size_t nsyms = vp_reader_nsymbols(r->reader), n = 0;
	uint32_t *order = xcalloc(nsyms + 1, sizeof(*order));

	for (uint32_t s = 0; s < nsyms && s < t->nsyms; s++)
		if (t->sym_samples[s])
			order[n++] = s;
	qsort_r(order, n, sizeof(*order), json_cmp_sym, (void *)t);
	json_arr(j, "functions");
	for (size_t i = 0; i < n; i++) {
		const struct vp_symbol *s = vp_reader_symbol(r->reader, order[i]);
		const struct vp_module *m = s->module >= 0 ? vp_reader_module(r->reader,
									     (uint32_t)s->module)
							   : NULL;

		json_obj(j, NULL);
		json_str(j, "function", s->display);
		json_bool(j, "inlined", !!(s->flags & VP_SYM_INLINE));
		json_str_or_null(j, "module", m ? m->path : NULL);
		json_u64(j, "samples", t->sym_samples[order[i]]);
		json_u64(j, "self", t->sym_self[order[i]]);
		json_share(j, r, "share", t->sym_samples[order[i]]);
		json_share(j, r, "self_share", t->sym_self[order[i]]);
		json_obj_end(j);
	}
	json_arr_end(j);
	free(order);
}

static const char *json_snode_kind(uint32_t kind)
{
	switch (kind) {
	case VP_SNODE_KERNEL:
		return "kernel";
	case VP_SNODE_INCOMPLETE:
		return "incomplete";
	case VP_SNODE_CUT:
		return "cut";
	default:
		return "function";
	}
}

static void json_sampled_nodes(struct json *j, const struct report *r)
{
	const struct vp_sampled *t = r->sampled;
	char site[512];

	json_arr(j, "nodes");
	for (uint32_t id = 1; id < t->nnodes; id++) {
		const struct vp_snode *n = &t->nodes[id];
		uint32_t pn = r->probed_of ? r->probed_of[id] : VP_NO_NODE;
		struct vp_sdur d;
		int dur = report_sdur(r, id, &d);

		json_obj(j, NULL);
		json_u64(j, "id", id);
		if (n->parent)
			json_u64(j, "parent", n->parent);
		else
			json_null(j, "parent");
		json_u64(j, "depth", n->depth);
		json_str(j, "kind", json_snode_kind(n->kind));
		json_str(j, "function", report_snode_name(r, id));
		json_bool(j, "inlined", report_snode_inlined(r, id));
		report_snode_site(r, id, site, sizeof(site));
		json_str_or_null(j, "site", *site ? site : NULL);
		json_u64(j, "samples", n->samples);
		json_u64(j, "self", n->self);
		json_share(j, r, "share", n->samples);
		json_share(j, r, "self_share", n->self);
		if (pn != VP_NO_NODE)
			json_u64(j, "probed_node", pn);
		else
			json_null(j, "probed_node");
		/* spans, not invocations: calls back to back make one span */
		json_u64(j, "spans", n->span.n);
		json_double(j, "mean_span", n->span.n ? n->span.mean : 0);
		if (dur) {
			json_double(j, "cpu_per_span", d.mean);
			json_double(j, "sampled_cov", d.cov);
			json_double(j, "sampled_cov_raw", d.cov_raw);
			json_double(j, "quantisation", d.quant);
		} else {
			json_null(j, "cpu_per_span");
			json_null(j, "sampled_cov");
			json_null(j, "sampled_cov_raw");
			json_null(j, "quantisation");
		}
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_sampled(struct json *j, const struct report *r)
{
	const struct vp_sampled *t = r->sampled;
	const struct vp_sampling *sm = &r->hdr->sampling;
	double max_half;

	if (!t) {
		json_null(j, "sampled");
		return;
	}
	json_obj(j, "sampled");
	json_u64(j, "event", sm->event);
	/* the header's: 0 for an event counted in frequency mode */
	json_u64(j, "period", sm->period);
	json_bool(j, "period_varies", t->period_varies);
	json_u64(j, "stack_size", sm->stack_size);
	json_u64(j, "samples", t->samples);
	json_u64(j, "truncated", t->truncated);
	json_u64(j, "broken", t->broken);
	json_u64(j, "kernel", t->kernel);
	json_u64(j, "probe_mapped", t->probe);
	json_u64(j, "cut", t->cut);
	json_double(j, "confidence", r->confidence);
	json_double(j, "z", r->z);
	json_double(j, "precision", r->precision);
	json_u64(j, "wide", report_sampled_wide(r, &max_half));
	json_u64(j, "samples_needed", vp_samples_needed(0.5, r->precision, r->z));
	json_sampled_functions(j, r);
	json_sampled_nodes(j, r);
	json_obj_end(j);
}

int report_json(const struct report *r)
{
	struct json j = { .f = r->out, .pretty_depth = JSON_PRETTY_DEPTH };

	json_obj(&j, NULL);
	json_header(&j, r);
	json_parameters(&j, r);
	json_totals(&j, r);
	json_target(&j, r);
	json_functions(&j, r);
	report_runs_json(&j, r);
	json_nodes(&j, r);
	json_patterns(&j, r);
	json_vcg(&j, r);
	json_sampled(&j, r);
	json_obj_end(&j);
	fputc('\n', r->out);
	return ferror(r->out) ? -1 : 0;
}
