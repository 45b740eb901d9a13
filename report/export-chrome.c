/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * export-chrome.c - `varperf report --format chrome`: every probed
 * invocation as a complete ("X") event of the Trace Event Format that
 * chrome://tracing and Perfetto UI load, so that one slow call can be seen
 * on its thread's timeline with what it called.  The events are written
 * as the second pass over the file pairs them (core's
 * vp_recording_invocations), in the order they end: memory does not grow
 * with their number, and the viewers sort them.  Their times nest
 * strictly (chrome_span); each call's exact duration is in its args.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/recording.h"
#include "json-writer.h"
#include "report.h"
#include "util/util.h"

struct chrome {
	const struct report *r;
	FILE *f;
	uint64_t origin;    /* ns of ts 0: the first event's time */
	const uint8_t *sel; /* --slowest: the selected nodes, else NULL */
	uint8_t *seen;	    /* per thread index that had an event (bit 0) */
	size_t nseen;
	uint64_t events;
};

/* @ns nanoseconds as microseconds, exactly: "12.345". */
static void chrome_us(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, "\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

/*
 * "ts" and "dur" of a call at @depth over [@start, @start + @dur): moved
 * inward by @depth ns at each end, so that the times nest strictly.  A
 * call ends where its caller ends, or starts where the call before it
 * ended, whenever the code between took less than the clock's tick (after
 * compensation, often): viewers that order the begin and end events of
 * "X" events by time then mis-nest them.  A callee is one level deeper
 * than its caller, so it ends at least 1 ns before it now, and two calls
 * that touched are 2 depth ns apart.  A call too short for that shrinks
 * to its middle.  The exact duration stays in the args ("dur_ns"), and no
 * statistic is computed from these.
 */
static void chrome_span(struct chrome *c, uint32_t depth, uint64_t start, uint64_t dur)
{
	if (dur > 2 * (uint64_t)depth) {
		start += depth;
		dur -= 2 * (uint64_t)depth;
	} else {
		start += dur / 2;
		dur = 0;
	}
	chrome_us(c->f, "ts", start);
	fputc(',', c->f);
	chrome_us(c->f, "dur", dur);
}

static int chrome_event(void *ctx, const struct vp_invocation *inv)
{
	struct chrome *c = ctx;
	const struct vp_cct_node *n = &c->r->tree->nodes[inv->node];
	const struct vp_thread_info *t = vp_reader_thread(c->r->reader, inv->thread);
	double sd = vp_stats_stddev(&n->stats), mean = n->stats.n ? n->stats.mean : 0;

	if (c->sel && report_slow_root(c->r, c->sel, inv->node, inv->thread, inv->start,
				       inv->duration) == VP_NO_NODE)
		return 0;
	if (inv->thread >= c->nseen) {
		size_t nn = (size_t)inv->thread + 64;

		c->seen = xrealloc(c->seen, nn);
		memset(c->seen + c->nseen, 0, nn - c->nseen);
		c->nseen = nn;
	}
	c->seen[inv->thread] = 1;
	fputs(c->events++ ? ",\n{\"ph\":\"X\",\"name\":" : "\n{\"ph\":\"X\",\"name\":", c->f);
	json_string(c->f, report_func_name(c->r, n->func));
	fprintf(c->f, ",\"cat\":\"varperf\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",",
		t ? t->pid : 0, t ? t->tid : inv->thread);
	chrome_span(c, n->depth, inv->start >= c->origin ? inv->start - c->origin : 0,
		    inv->duration);
	fprintf(c->f, ",\"args\":{\"node\":%" PRIu32 ",\"dur_ns\":%" PRIu64
		",\"mean_us\":%.3f,\"sigma_us\":%.3f,\"z\":%.3f}}",
		inv->node, inv->duration, mean / 1000, sd / 1000,
		sd > 0 ? ((double)inv->duration - mean) / sd : 0);
	return ferror(c->f) ? -EIO : 0;
}

static const char *chrome_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* "M" events: a name for every process and thread that had an event. */
static void chrome_metadata(struct chrome *c)
{
	const struct report *r = c->r;
	const char *prog = chrome_basename(report_program_path(r));
	struct report_process *pv = NULL;
	size_t np = report_processes(r, &pv), nnamed = 0;
	uint32_t *named = xcalloc(c->nseen + 1, sizeof(*named));
	char name[512];

	for (size_t i = 0; i < c->nseen; i++) {
		const struct vp_thread_info *t = vp_reader_thread(r->reader, (uint32_t)i);
		const char *exec = prog;
		size_t k;

		if (!c->seen[i] || !t)
			continue;
		for (size_t p = 0; p < np; p++)
			if (pv[p].pid == t->pid && pv[p].exec && *pv[p].exec)
				exec = chrome_basename(pv[p].exec);
		for (k = 0; k < nnamed && named[k] != t->pid; k++)
			;
		if (k == nnamed) {
			snprintf(name, sizeof(name), "%s (pid %" PRIu32 ")", exec, t->pid);
			fprintf(c->f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32
				",\"tid\":%" PRIu32 ",\"args\":{\"name\":", t->pid, t->tid);
			json_string(c->f, name);
			fputs("}}", c->f);
			named[nnamed++] = t->pid;
		}
		snprintf(name, sizeof(name), "%s (tid %" PRIu32 ")", exec, t->tid);
		fprintf(c->f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32
			",\"tid\":%" PRIu32 ",\"args\":{\"name\":", t->pid, t->tid);
		json_string(c->f, name);
		fputs("}}", c->f);
	}
	free(named);
	free(pv);
}

/*
 * About the bytes of the trace: per invocation an event of its function's
 * name and CHROME_EVENT_BYTES more (keys, ids, times: 155 in recordings of
 * a second or less, more in longer ones).  --slowest writes fewer.
 */
#define CHROME_EVENT_BYTES 155

static double chrome_bytes(const struct report *r)
{
	double sum = 0;

	for (uint32_t id = 1; id < r->tree->nnodes; id++) {
		const struct vp_cct_node *n = &r->tree->nodes[id];

		sum += (double)n->stats.n *
		       (CHROME_EVENT_BYTES + (double)strlen(report_func_name(r, n->func)));
	}
	return sum;
}

int report_chrome(const struct report *r, struct vp_recording *rec)
{
	struct chrome c = { .r = r, .f = r->out, .origin = r->totals->first_time };
	uint8_t *sel = NULL;
	char msg[512] = "";
	size_t nsel = 0;
	int err;

	if (r->slowest) {
		sel = report_slow_nodes(r, 0, &nsel);
		if (!nsel && r->slowest_context) {
			free(sel);
			error("no calling context in '%s' ends with '%s'", r->input,
			      r->slowest_context);
			return -2;
		}
		c.sel = sel;
	}
	if (!r->slowest && report_output_size(r, "chrome trace", chrome_bytes(r)) < 0) {
		free(sel);
		return -2;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"varperf "
	      PACKAGE_VERSION "\",\"time\":", r->out);
	json_string(r->out, vp_time_base_name(r->time));
	fputs(",\"input\":", r->out);
	json_string(r->out, r->input);
	fputs("},\n\"traceEvents\":[", r->out);
	/* --slowest that selected nothing: no second pass for nothing */
	err = r->slowest && !nsel ? 0 :
		vp_recording_invocations(rec, chrome_event, &c, msg, sizeof(msg));
	if (err == -EIO && ferror(r->out)) {
		free(c.seen);
		free(sel);
		errno = EIO;
		return -1;
	}
	if (err < 0) {
		free(c.seen);
		free(sel);
		error("%s", msg[0] ? msg : strerror(-err));
		return -2;
	}
	if (c.events)
		chrome_metadata(&c);
	fputs("\n]}\n", r->out);
	if (!r->slowest && !c.events)
		warning("'%s': no probed calls (a sampled recording?): the trace is empty",
			r->input);
	if (r->slowest && !c.events)
		warning("'%s': --slowest selected no calls: no significant node has more "
			"calls than it keeps; --slowest=<context> names one",
			r->input);
	free(c.seen);
	free(sel);
	return 0;
}
