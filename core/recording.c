/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * recording.c - one data file read, compensated, built and analysed, with
 * what is wrong with it as warnings: the pipeline of every reader of a
 * recording, once.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "recording.h"

void vp_recording_opts_default(struct vp_recording_opts *o)
{
	memset(o, 0, sizeof(*o));
	vp_analysis_params_default(&o->params);
	o->time = VP_TIME_WALL;
	o->max_memory = (size_t)1 << 30;
	o->slowest = VP_SLOWEST_DEFAULT;
	o->time_auto = 1;
}

void vp_msgf(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!msg || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

static int warn(struct vp_recording *rec, enum vp_recording_warning_code code, int missing_data,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int warn(struct vp_recording *rec, enum vp_recording_warning_code code, int missing_data,
		const char *fmt, ...)
{
	struct vp_recording_warning *w;
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	w = realloc(rec->warnings, (rec->nwarnings + 1) * sizeof(*w));
	if (!w) {
		free(s);
		return -ENOMEM;
	}
	rec->warnings = w;
	w[rec->nwarnings++] = (struct vp_recording_warning){ code, missing_data, s };
	return 0;
}

/* The reader's message for a failed pass when it has one. */
static void read_error(const struct vp_recording *rec, int err, char *msg, size_t len)
{
	const char *m = vp_reader_error(rec->reader);

	if (m && *m)
		vp_msgf(msg, len, "%s", m);
	else
		vp_msgf(msg, len, "cannot read '%s': %s", rec->path, strerror(-err));
}

static int set_time(struct vp_recording *rec, enum vp_time_base base, char *msg, size_t len)
{
	int err = vp_reader_set_time(rec->reader, base);

	if (err == -ENODATA && base >= VP_TIME_BLOCKED && rec->hdr->offcpu)
		vp_msgf(msg, len, "'%s': its off-CPU times are not split into blocked and "
			"preempted (recorded before format version 5)", rec->path);
	else if (err == -ENODATA)
		vp_msgf(msg, len, "'%s': no off-CPU times in this recording (they need the BPF "
		     "backend of varperf record)", rec->path);
	else if (err < 0)
		vp_msgf(msg, len, "'%s': cannot use time '%s': %s", rec->path,
		     vp_time_base_name(base), strerror(-err));
	return err;
}

/* A pid the recording has, or -ESRCH with those it has in @msg. */
static int check_pid(const struct vp_recording *rec, char *msg, size_t len)
{
	struct vp_reader *reader = rec->reader;
	size_t n = vp_reader_nthreads(reader), used = 0;
	char list[256] = "";

	for (size_t i = 0; i < n; i++) {
		uint32_t pid = vp_reader_thread(reader, (uint32_t)i)->pid;
		size_t j;

		if (pid == rec->pid)
			return 0;
		for (j = 0; j < i && vp_reader_thread(reader, (uint32_t)j)->pid != pid; j++)
			;
		if (j == i && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%" PRIu32,
						 used ? ", " : "", pid);
	}
	vp_msgf(msg, len, "no process %" PRIu32 " in '%s' (its processes: %s)", rec->pid, rec->path,
	     used ? list : "none");
	return -ESRCH;
}

/* Open, set up and one pass over the events into the trees. */
static int build(struct vp_recording *rec, const struct vp_recording_opts *o, char *msg,
		 size_t len)
{
	int err;

	err = vp_reader_open(rec->path, &rec->reader, msg, len);
	if (err < 0) {
		if (!msg || !*msg)
			vp_msgf(msg, len, "cannot read '%s': %s", rec->path, strerror(-err));
		return err;
	}
	rec->hdr = vp_reader_header(rec->reader);
	err = set_time(rec, o->time, msg, len);
	if (err < 0)
		return err;
	vp_reader_set_pid(rec->reader, o->pid);
	err = vp_cct_init(&rec->tree);
	if (err < 0) {
		vp_msgf(msg, len, "cannot build the calling-context tree: %s", strerror(-err));
		return err;
	}
	rec->have_tree = 1;
	rec->tree.budget = &rec->budget;
	rec->tree.keep_slowest = o->slowest;
	if (o->samples) {
		err = vp_sampled_init(&rec->sampled_tree);
		if (err < 0) {
			vp_msgf(msg, len, "cannot build the sampled tree: %s", strerror(-err));
			return err;
		}
		rec->have_sampled = 1;
		rec->sampled_tree.budget = &rec->budget;
		/* One pass folds the samples too; later passes need not. */
		vp_reader_set_sample_handler(rec->reader, vp_sampled_handler, &rec->sampled_tree);
	}
	err = vp_reader_compensate(rec->reader, !o->raw);
	if (err < 0) {
		vp_msgf(msg, len, "cannot subtract the probe costs: %s", strerror(-err));
		return err;
	}
	err = vp_build_file(rec->reader, &rec->tree, &rec->totals);
	if (rec->have_sampled) {
		vp_reader_set_sample_handler(rec->reader, NULL, NULL);
		vp_sampled_finish(&rec->sampled_tree);
	}
	if (err == -E2BIG) {
		vp_msgf(msg, len, "'%s': analysing it would take more than max_memory allows "
		     "(%zu bytes)", rec->path, rec->budget.max);
		return err;
	}
	if (err < 0) {
		read_error(rec, err, msg, len);
		return err;
	}
	if (rec->pid && (err = check_pid(rec, msg, len)) < 0)
		return err;
	/* per-thread times of another base do not tell the recording's span */
	if (o->time != VP_TIME_WALL)
		vp_reader_time_span(rec->reader, &rec->totals.first_time, &rec->totals.last_time);
	return 0;
}

/*
 * The kernel's count of lost records arrives twice: LOST records and the
 * trailer's total.
 */
static uint64_t lost_records(const struct vp_recording *rec)
{
	uint64_t lost = vp_reader_lost(rec->reader);

	if (rec->trailer->present && rec->trailer->lost > lost)
		lost = rec->trailer->lost;
	return lost;
}

/* The most one probe costs (the largest calibrated full cost), in ns. */
static uint64_t clamp_jitter(const struct vp_header *h)
{
	uint64_t most = 0;

	for (size_t i = 0; i < h->ncosts; i++)
		if (h->costs[i].full_ns > most)
			most = h->costs[i].full_ns;
	return most;
}

/* Problems with the file that still leave a usable analysis. */
static int file_warnings(struct vp_recording *rec)
{
	const struct vp_trailer *tr = rec->trailer;
	const char *w = vp_reader_warning(rec->reader);
	int err = 0;

	if (w)
		err = warn(rec, VP_WARN_DAMAGED, 1, "%s", w);
	else if (!tr->present)
		err = warn(rec, VP_WARN_INCOMPLETE, 1, "'%s': recording incomplete (no END chunk)",
			   rec->path);
	if (!err && tr->present && (tr->flags & VP_END_WRITE_ERROR))
		err = warn(rec, VP_WARN_WRITE_ERROR, 1,
			   "'%s': the recorder could not write all data; some events are missing",
			   rec->path);
	if (!err && tr->present && (tr->flags & VP_END_OVER_BUDGET) && tr->target_cpu_ns)
		err = warn(rec, VP_WARN_OVER_BUDGET, 0,
			   "'%s': phase 2's probes cost about %.1f%% of the program's CPU time, "
			   "over the %g%% budget: the recorded run took that much longer than the "
			   "program alone",
			   rec->path, (double)tr->probe_cost_ns / (double)tr->target_cpu_ns * 100,
			   (double)tr->budget_ppm / 1e4);
	/* (how much says whether it matters: a fraction of a probe's cost
	 * when a call returns right after its last probed callee is the
	 * jitter of subtracting a calibrated mean, nothing to act on - the
	 * totals count it; by more, the calibration does not fit the run) */
	if (!err && rec->clamped && rec->clamped_max > clamp_jitter(rec->hdr))
		err = warn(rec, VP_WARN_CLAMPED, 0,
			   "'%s': %llu compensated durations were clamped, by %.2f us at most: "
			   "the probe costs subtracted exceeded the time measured",
			   rec->path, (unsigned long long)rec->clamped,
			   (double)rec->clamped_max / 1000);
	if (!err && rec->lost)
		err = warn(rec, VP_WARN_LOST, 0,
			   "'%s': %llu records were lost while recording; their invocations are "
			   "counted as unpaired",
			   rec->path, (unsigned long long)rec->lost);
	return err;
}

/*
 * Calls nested too deep for the kernel's return probes: not a few lost
 * records, but every call past a depth - a recursion loses nearly all.
 */
static int nesting_warning(struct vp_recording *rec)
{
	const struct vp_build_totals *bt = &rec->totals;
	const char *most = bt->nest_lost_func < rec->hdr->nfuncs
				   ? rec->hdr->funcs[bt->nest_lost_func].display
				   : "?";

	if (!bt->nest_lost)
		return 0;
	return warn(rec, VP_WARN_NESTING, 0,
		    "'%s': %" PRIu64 " calls (%" PRIu64 " of them of '%s') have no exit: the "
		    "kernel keeps at most 64 return probes pending per thread and drops those of "
		    "calls nested deeper; they are counted as unpaired, their callers' times are "
		    "right (record with --exit-probes=ret or auto)",
		    rec->path, bt->nest_lost, bt->nest_lost_most, most);
}

/* Stacks the samples could not tell well. */
static int sampled_warnings(struct vp_recording *rec)
{
	const struct vp_sampled *t = rec->sampled;
	int err = 0;

	if (t->truncated && rec->hdr->sampling.stack_size < VP_STACK_SIZE_MAX)
		err = warn(rec, VP_WARN_TRUNCATED_STACKS, 0,
			   "'%s': %" PRIu64 " of %" PRIu64 " samples have truncated stacks (the "
			   "stack copy was too small: record with a larger --stack-size)",
			   rec->path, t->truncated, t->samples);
	else if (t->truncated)
		err = warn(rec, VP_WARN_TRUNCATED_STACKS, 0,
			   "'%s': %" PRIu64 " of %" PRIu64 " samples have truncated stacks (the "
			   "stack copy, the largest the kernel takes, was too small)",
			   rec->path, t->truncated, t->samples);
	if (!err && t->broken)
		err = warn(rec, VP_WARN_BROKEN_STACKS, 0,
			   "'%s': %" PRIu64 " of %" PRIu64 " samples could not be unwound to "
			   "their outermost frame",
			   rec->path, t->broken, t->samples);
	return err;
}

/* The pattern analysis; nodes mostly probe cost are left out of the ranking. */
static int analyse(struct vp_recording *rec, const struct vp_recording_opts *o, char *msg,
		   size_t len)
{
	int err;

	/* the probes cost on-CPU time: off-CPU durations hold none of it */
	if (!vp_time_base_offcpu(o->time)) {
		rec->probe_cost = vp_cct_probe_costs(&rec->tree, rec->hdr);
		if (!rec->probe_cost) {
			err = -ENOMEM;
			goto fail;
		}
	}
	err = vp_analysis_run(&rec->an, &rec->tree, rec->hdr->nfuncs, &o->params);
	if (err < 0)
		goto fail;
	rec->have_an = 1;
	if (rec->probe_cost) {
		err = vp_analysis_set_probe_costs(&rec->an, &rec->tree, rec->probe_cost);
		if (err < 0)
			goto fail;
	}
	errno = 0;
	rec->callsite_twins = vp_cct_callsite_twins(&rec->tree, rec->reader);
	if (!rec->callsite_twins && errno) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	vp_msgf(msg, len, "cannot analyse '%s': %s", rec->path, strerror(-err));
	return err;
}

/*
 * The default time base: wall-clock time, unless preemption (the machine
 * taking the CPU away, not the program) makes most of the high-variance
 * nodes' variance; then the program's own time, wall-clock time less the
 * preempted time, read in a second pass.  @rec is the wall-clock reading.
 */
static int own_by_default(struct vp_recording *rec, const struct vp_recording_opts *o,
			  struct vp_recording **ret, char *msg, size_t len)
{
	struct vp_recording_opts own = *o;
	double share;
	int err;

	if (!vp_cct_preempted_share(&rec->tree, rec->an.high_variance, rec->an.nnodes, &share) ||
	    share < VP_PREEMPTED_AUTO) {
		*ret = rec;
		return 0;
	}
	own.time = VP_TIME_OWN;
	own.time_auto = 0;
	err = vp_recording_open(rec->path, &own, ret, msg, len);
	vp_recording_free(rec);
	if (err < 0)
		return err;
	(*ret)->time_auto = 1;
	(*ret)->preempted_share = share;
	return 0;
}

int vp_recording_open(const char *path, const struct vp_recording_opts *opts,
		      struct vp_recording **ret, char *msg, size_t len)
{
	struct vp_recording_opts defaults;
	const struct vp_recording_opts *o = opts;
	struct vp_recording *rec;
	char pmsg[256] = "";
	int err;

	if (msg && len)
		msg[0] = '\0';
	*ret = NULL;
	if (!o) {
		vp_recording_opts_default(&defaults);
		o = &defaults;
	}
	err = vp_analysis_params_check(&o->params, pmsg, sizeof(pmsg));
	if (err < 0) {
		vp_msgf(msg, len, "invalid analysis parameters: %s", *pmsg ? pmsg : "out of range");
		return err;
	}
	rec = calloc(1, sizeof(*rec));
	if (!rec || !(rec->path = strdup(path))) {
		free(rec);
		vp_msgf(msg, len, "cannot read '%s': %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	rec->budget.max = o->max_memory;
	rec->time = o->time;
	rec->pid = o->pid;
	rec->raw = o->raw;
	if (o->slowest > VP_SLOWEST_MAX) {
		vp_msgf(msg, len, "cannot keep %" PRIu32 " slowest calls per node (at most %d)",
		     o->slowest, VP_SLOWEST_MAX);
		err = -EINVAL;
		goto fail;
	}
	err = build(rec, o, msg, len);
	if (err < 0)
		goto fail;
	rec->trailer_copy = *vp_reader_trailer(rec->reader);
	rec->trailer = &rec->trailer_copy;
	rec->lost = lost_records(rec);
	rec->clamped = vp_reader_clamped(rec->reader);
	rec->clamped_max = vp_reader_clamped_max(rec->reader);
	rec->compensated = !o->raw && rec->hdr->ncosts && rec->hdr->nfuncs &&
			   !vp_time_base_offcpu(o->time);
	/* a sampling run that caught nothing still has its samples: none */
	if (rec->have_sampled &&
	    (rec->sampled_tree.samples || vp_reader_samples(rec->reader) ||
	     rec->hdr->mode == VP_MODE_SAMPLE || rec->hdr->mode == VP_MODE_COMBINED ||
	     rec->hdr->mode == VP_MODE_AUTO))
		rec->sampled = &rec->sampled_tree;
	err = file_warnings(rec);
	if (!err)
		err = nesting_warning(rec);
	if (!err && rec->sampled)
		err = sampled_warnings(rec);
	if (err < 0) {
		vp_msgf(msg, len, "cannot read '%s': %s", path, strerror(-err));
		goto fail;
	}
	err = analyse(rec, o, msg, len);
	if (err < 0)
		goto fail;
	if (o->time_auto && o->time == VP_TIME_WALL)
		return own_by_default(rec, o, ret, msg, len);
	*ret = rec;
	return 0;
fail:
	vp_recording_free(rec);
	return err;
}

int vp_recording_same_time(struct vp_recording **recs, size_t n,
			   const struct vp_recording_opts *opts, char *msg, size_t len)
{
	struct vp_recording_opts o = *opts;
	int all_split = 1, differ = 0;

	if (!opts->time_auto)
		return 0;
	for (size_t i = 0; i < n; i++) {
		all_split &= recs[i]->hdr->blocked != 0;
		differ |= recs[i]->time != recs[0]->time;
	}
	if (!differ)
		return 0;
	o.time = all_split ? VP_TIME_OWN : VP_TIME_WALL;
	o.time_auto = 0;
	for (size_t i = 0; i < n; i++) {
		char *path;
		int err;

		if (recs[i]->time == o.time)
			continue;
		path = strdup(recs[i]->path);
		if (!path)
			return -ENOMEM;
		vp_recording_free(recs[i]);
		recs[i] = NULL;
		err = vp_recording_open(path, &o, &recs[i], msg, len);
		free(path);
		if (err < 0)
			return err;
	}
	return 0;
}

void vp_recording_free(struct vp_recording *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; i < rec->nwarnings; i++)
		free(rec->warnings[i].message);
	free(rec->warnings);
	free(rec->callsite_twins);
	free(rec->probe_cost);
	if (rec->have_an)
		vp_analysis_release(&rec->an);
	if (rec->have_sampled)
		vp_sampled_release(&rec->sampled_tree);
	if (rec->have_tree)
		vp_cct_release(&rec->tree);
	vp_reader_free(rec->reader);
	free(rec->path);
	free(rec);
}

int vp_recording_invocations(struct vp_recording *rec, vp_invocation_fn fn, void *ctx,
			     char *msg, size_t len)
{
	struct vp_budget budget = { rec->budget.max, 0 };
	struct vp_build_totals totals;
	struct vp_cct tree;
	int err;

	if (msg && len)
		msg[0] = '\0';
	err = vp_reader_rewind(rec->reader);
	if (!err)
		err = set_time(rec, rec->time, msg, len);
	if (err < 0)
		return err;
	vp_reader_set_pid(rec->reader, rec->pid);
	err = vp_reader_compensate(rec->reader, !rec->raw);
	if (err < 0) {
		vp_msgf(msg, len, "cannot subtract the probe costs: %s", strerror(-err));
		return err;
	}
	err = vp_cct_init(&tree);
	if (err < 0) {
		vp_msgf(msg, len, "cannot build the calling-context tree: %s", strerror(-err));
		return err;
	}
	tree.budget = &budget;
	err = vp_build_file_invocations(rec->reader, &tree, fn, ctx, &totals);
	vp_cct_release(&tree);
	if (err == -E2BIG)
		vp_msgf(msg, len, "'%s': reading it again would take more than max_memory allows "
		     "(%zu bytes)", rec->path, budget.max);
	else if (err < 0 && vp_reader_error(rec->reader) && *vp_reader_error(rec->reader))
		read_error(rec, err, msg, len);
	return err;
}

int vp_recording_samples(struct vp_recording *rec, vp_sample_fn fn, void *ctx, char *msg,
			 size_t len)
{
	struct vp_event buf[256];
	long n;
	int err;

	if (msg && len)
		msg[0] = '\0';
	err = vp_reader_rewind(rec->reader);
	if (!err)
		err = set_time(rec, VP_TIME_WALL, msg, len);
	if (err < 0)
		return err;
	vp_reader_set_pid(rec->reader, rec->pid);
	vp_reader_set_sample_handler(rec->reader, fn, ctx);
	while ((n = vp_reader_next(rec->reader, buf, sizeof(buf) / sizeof(buf[0]))) > 0)
		;
	vp_reader_set_sample_handler(rec->reader, NULL, NULL);
	err = (int)n;
	if (err < 0 && vp_reader_error(rec->reader) && *vp_reader_error(rec->reader))
		read_error(rec, err, msg, len);
	else if (err < 0)
		vp_msgf(msg, len, "'%s': cannot read its samples again: %s", rec->path,
			strerror(-err));
	return err;
}

/* ---- labels ---- */

const char *vp_recording_func_name(const struct vp_recording *rec, uint32_t func)
{
	return vp_header_func_name(rec->hdr, func);
}

const char *vp_callsite_twin_label(const struct vp_reader *reader, const uint32_t *twins,
				   uint32_t id, int short_file, char *buf, size_t len)
{
	const struct vp_callsite *cs;
	size_t n;

	buf[0] = '\0';
	if (id == VP_NO_CALLSITE)
		return buf;
	cs = vp_reader_callsite(reader, id);
	vp_callsite_label(cs, short_file, buf, len);
	if (!cs || !twins || id >= vp_reader_ncallsites(reader) || !twins[id])
		return buf;
	n = strlen(buf);
	if (cs->caller && *cs->caller)
		snprintf(buf + n, len - n, " (%s)", cs->caller);
	else
		snprintf(buf + n, len - n, " (0x%" PRIx64 ")", cs->offset);
	return buf;
}

const char *vp_recording_callsite_label(const struct vp_recording *rec, uint32_t id,
					int short_file, char *buf, size_t len)
{
	return vp_callsite_twin_label(rec->reader, rec->callsite_twins, id, short_file, buf, len);
}

const char *vp_recording_node_label(const struct vp_recording *rec, uint32_t id, char *buf,
				    size_t len)
{
	const struct vp_cct_node *n = &rec->tree.nodes[id];
	char cs[512];

	vp_recording_callsite_label(rec, n->callsite, 1, cs, sizeof(cs));
	snprintf(buf, len, "%s%s%s", vp_recording_func_name(rec, n->func), *cs ? "@" : "", cs);
	return buf;
}

/* ---- covariance row sums ---- */

static int cmp_contrib(const void *a, const void *b)
{
	const struct vp_contrib *x = a, *y = b;
	double fx = fabs(x->value), fy = fabs(y->value);

	if (fx != fy)
		return fx < fy ? 1 : -1;
	return x->var > y->var;
}

long vp_cct_contributors(const struct vp_cct_node *n, struct vp_contrib **ret)
{
	size_t dim = n->cov.dim;
	struct vp_contrib *c;

	*ret = NULL;
	if (!dim)
		return 0;
	c = calloc(dim, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < dim; i++) {
		c[i].var = i;
		for (size_t j = 0; j < dim; j++)
			c[i].value += vp_covar_get(&n->cov, i, j);
	}
	qsort(c, dim, sizeof(*c), cmp_contrib);
	*ret = c;
	return (long)dim;
}
