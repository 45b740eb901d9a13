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
#include "core/sampled.h"
#include "json-writer.h"
#include "report.h"
#include "util/util.h"

/* A frame of a thread's sampled stack, open while samples see it. */
struct chrome_frame {
	uint32_t symbol; /* the reader's, or VP_SNODE_NONE with @kind */
	uint32_t kind;	 /* enum vp_snode_kind */
	uint64_t cfa;
	uint64_t start; /* a period before its first sample, or the thread's
			 * sample before if later */
	uint64_t last;	/* time of the last sample in it */
	uint64_t samples;
};

struct chrome_stack {
	struct chrome_frame *frames;
	size_t n, cap;
	uint64_t last; /* the thread's last sample's time, 0 before one */
};

/* sampled spans' tracks beside the probed calls': this bit set in the tid */
#define CHROME_SAMPLED_TID 0x40000000u

struct chrome {
	const struct report *r;
	FILE *f;
	uint64_t origin;    /* ns of ts 0: the first event's time */
	const uint8_t *sel; /* --slowest: the selected nodes, else NULL */
	uint8_t *seen;	    /* per thread index: bit 0 probed calls, bit 1 samples */
	size_t nseen;
	uint64_t events;
	/* sampled spans: per thread index, its open frames */
	struct chrome_stack *stacks;
	size_t nstacks;
	const struct vp_reader *reader; /* of the pass over the samples */
	int own_tracks;	    /* the spans go on tracks of their own (there are
			     * probed calls too: two measures of the run) */
	uint64_t spans;
	struct chrome_frame *path; /* the current sample's, outermost first */
	size_t path_cap;
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

/* Mark thread index @thread as having events of @bit's kind. */
static void chrome_seen(struct chrome *c, uint32_t thread, int bit)
{
	if (thread >= c->nseen) {
		size_t nn = (size_t)thread + 64;

		c->seen = xrealloc(c->seen, nn);
		memset(c->seen + c->nseen, 0, nn - c->nseen);
		c->nseen = nn;
	}
	c->seen[thread] |= (uint8_t)bit;
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
	chrome_seen(c, inv->thread, 1);
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

/* The tid of thread @t's sampled spans. */
static uint32_t chrome_sampled_tid(const struct chrome *c, uint32_t tid)
{
	return c->own_tracks ? tid | CHROME_SAMPLED_TID : tid;
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
		for (int bit = 0; bit < 2; bit++) {
			uint32_t tid = bit ? chrome_sampled_tid(c, t->tid) : t->tid;

			if (!(c->seen[i] & (1 << bit)) || (bit && tid == t->tid && (c->seen[i] & 1)))
				continue;
			snprintf(name, sizeof(name), "%s (tid %" PRIu32 "%s)", exec, t->tid,
				 bit && c->own_tracks ? ", sampled stacks" : "");
			fprintf(c->f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32
				",\"tid\":%" PRIu32 ",\"args\":{\"name\":", t->pid, tid);
			json_string(c->f, name);
			fputs("}}", c->f);
		}
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

/* The span of sampled frame @f at @depth of thread index @thread, ended. */
static void chrome_span_end(struct chrome *c, uint32_t thread, const struct chrome_frame *f,
			    uint32_t depth)
{
	const struct vp_thread_info *t = vp_reader_thread(c->reader, thread);
	uint64_t start = f->start;
	const char *name;

	switch (f->kind) {
	case VP_SNODE_KERNEL:
		name = "[kernel]";
		break;
	case VP_SNODE_INCOMPLETE:
		name = "[incomplete stacks]";
		break;
	default: {
		const struct vp_symbol *sym = vp_reader_symbol(c->reader, f->symbol);

		name = sym && sym->display ? sym->display : sym && sym->name ? sym->name : "?";
	}
	}
	chrome_seen(c, thread, 2);
	fputs(c->events++ ? ",\n{\"ph\":\"X\",\"name\":" : "\n{\"ph\":\"X\",\"name\":", c->f);
	json_string(c->f, name);
	fprintf(c->f, ",\"cat\":\"varperf.sampled\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",",
		t ? t->pid : 0, chrome_sampled_tid(c, t ? t->tid : thread));
	start = start >= c->origin ? start - c->origin : 0;
	chrome_span(c, depth, start, f->last - c->origin > start ? f->last - c->origin - start : 0);
	fprintf(c->f, ",\"args\":{\"samples\":%" PRIu64 "}}", f->samples);
	c->spans++;
}

/* Close thread @thread's open frames from level @from on, innermost first. */
static void chrome_close(struct chrome *c, uint32_t thread, size_t from)
{
	struct chrome_stack *st = &c->stacks[thread];

	while (st->n > from) {
		st->n--;
		chrome_span_end(c, thread, &st->frames[st->n], (uint32_t)st->n + 1);
	}
}

static void chrome_path_push(struct chrome *c, size_t *n, uint32_t kind, uint32_t symbol,
			     uint64_t cfa)
{
	if (*n >= VP_SAMPLED_MAX_DEPTH)
		return;
	if (*n == c->path_cap) {
		c->path_cap = c->path_cap ? 2 * c->path_cap : 64;
		c->path = xrealloc(c->path, c->path_cap * sizeof(*c->path));
	}
	c->path[(*n)++] = (struct chrome_frame){ .symbol = symbol, .kind = kind, .cfa = cfa };
}

/*
 * One sample: a frame that the thread's previous sample had at the same
 * level (the same function at the same canonical frame address, and all
 * the frames outside it too) goes on; the others end at the previous
 * sample, and the sample's new frames start a period before it (or at
 * the previous sample, if later).  A span is thus from a period before
 * the first sample that saw the frame to the last one: a call seen in
 * one sample lasts one period.  The levels
 * are those of the sampled tree: each frame's function, then those
 * inlined into it.
 */
static int chrome_sample(void *ctx, const struct vp_reader *rd, const struct vp_sample *s)
{
	struct chrome *c = ctx;
	struct chrome_stack *st;
	size_t n = 0, k;

	c->reader = rd;
	if (s->thread >= c->nstacks) {
		size_t nn = (size_t)s->thread + 64;

		c->stacks = xrealloc(c->stacks, nn * sizeof(*c->stacks));
		memset(c->stacks + c->nstacks, 0, (nn - c->nstacks) * sizeof(*c->stacks));
		c->nstacks = nn;
	}
	if (s->flags & (VP_SAMPLE_TRUNCATED | VP_SAMPLE_BROKEN) ||
	    (!s->nframes && !(s->flags & VP_SAMPLE_KERNEL)))
		chrome_path_push(c, &n, VP_SNODE_INCOMPLETE, VP_SNODE_NONE, 0);
	for (uint32_t i = s->nframes; i-- > 0;) {
		const struct vp_frame_def *f = vp_reader_frame(rd, s->frames[i]);

		if (!f)
			return -EINVAL;
		for (uint32_t j = f->nlevels; j-- > 0;)
			chrome_path_push(c, &n, VP_SNODE_FUNC, f->levels[j].symbol, s->cfas[i]);
	}
	if (s->flags & VP_SAMPLE_KERNEL)
		chrome_path_push(c, &n, VP_SNODE_KERNEL, VP_SNODE_NONE, 0);
	st = &c->stacks[s->thread];
	for (k = 0; k < n && k < st->n; k++)
		if (st->frames[k].kind != c->path[k].kind ||
		    st->frames[k].symbol != c->path[k].symbol || st->frames[k].cfa != c->path[k].cfa)
			break;
	chrome_close(c, s->thread, k);
	if (n > st->cap) {
		st->cap = n + 16;
		st->frames = xrealloc(st->frames, st->cap * sizeof(*st->frames));
	}
	for (size_t i = 0; i < n; i++) {
		struct chrome_frame *f = &st->frames[i];

		if (i >= k) {
			*f = c->path[i];
			f->start = s->time > s->period ? s->time - s->period : 0;
			/* (samples come a period apart, give or take: so that
			 * spans that follow each other do not overlap) */
			if (st->last > f->start && st->last < s->time)
				f->start = st->last;
		}
		f->last = s->time;
		f->samples++;
	}
	st->n = n;
	st->last = s->time;
	return ferror(c->f) ? -EIO : 0;
}

/* The sampled stacks as spans, after the probed calls; 0 or as chrome_event. */
static int chrome_sampled(struct chrome *c, struct vp_recording *rec, char *msg, size_t len)
{
	int err = vp_recording_samples(rec, chrome_sample, c, msg, len);

	for (size_t t = 0; t < c->nstacks; t++) {
		if (!err && c->stacks[t].n)
			chrome_close(c, (uint32_t)t, 0);
		free(c->stacks[t].frames);
	}
	free(c->stacks);
	free(c->path);
	return err;
}

/* The time a period before the earliest sample: the spans' earliest start. */
static int chrome_earliest(void *ctx, const struct vp_reader *rd, const struct vp_sample *s)
{
	uint64_t *t = ctx, start = s->time > s->period ? s->time - s->period : 0;

	(void)rd;
	if (start < *t)
		*t = start;
	return 0;
}

int report_chrome(const struct report *r, struct vp_recording *rec)
{
	struct chrome c = { .r = r, .f = r->out, .origin = r->totals->first_time };
	uint8_t *sel = NULL;
	char msg[512] = "";
	size_t nsel = 0;
	int err, sampled;

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
	/* the sampled stacks, in wall-clock time: ts 0 is the earlier of the
	 * first probed call and a period before the first sample (with
	 * --slowest too, so that its calls have the whole trace's times) */
	sampled = r->time == VP_TIME_WALL && r->sampled && r->sampled->samples;
	if (sampled) {
		uint64_t t = UINT64_MAX;

		err = vp_recording_samples(rec, chrome_earliest, &t, msg, sizeof(msg));
		if (err < 0) {
			free(sel);
			error("%s", msg[0] ? msg : strerror(-err));
			return -2;
		}
		if (t < c.origin || !r->totals->invocations)
			c.origin = t;
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
	/* the sampled stacks, all of a sampled recording's timeline */
	if (!err && sampled && !r->slowest) {
		c.own_tracks = c.events > 0;
		err = chrome_sampled(&c, rec, msg, sizeof(msg));
	}
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
		warning("'%s': no probed calls nor sampled stacks: the trace is empty", r->input);
	if (r->slowest && !c.events)
		warning("'%s': --slowest selected no calls: no significant node has more "
			"calls than it keeps; --slowest=<context> names one",
			r->input);
	free(c.seen);
	free(sel);
	return 0;
}
