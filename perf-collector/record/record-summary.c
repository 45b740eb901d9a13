/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-summary.c - what "varperf record" says at the end of a run: what
 * was recorded, lost, truncated or not followed.  See record.h.
 */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "perf-collector/record/record.h"
#include "util/util.h"


static void print_sampling_summary(struct record *rec, const struct vp_trailer *tr,
				   long long bytes)
{
	const struct vp_sampling *sm = &rec->hdr.sampling;
	uint64_t n = tr->samples;
	char a[32];

	info("recorded %llu samples of %s every %s in '%s' (%lld bytes), %zu thread%s",
	     (unsigned long long)n, vp_sample_event_name(sm->event),
	     sm->period ? fmt_duration((double)sm->period, a, sizeof(a)) : "(frequency mode)",
	     rec->opts.output, bytes, rec->ids.threads.n, rec->ids.threads.n == 1 ? "" : "s");
	if (rec->probing.sampler.exclude_kernel)
		info("user mode only: time in the kernel is not sampled (it needs root or "
		     "kernel.perf_event_paranoid <= 1)");
	if (rec->opts.precision_given && n) {
		double z = vp_confidence_z(rec->opts.confidence);
		double half = z * sqrt(0.25 / (double)n);

		if (half > rec->opts.precision)
			warning("%llu samples give shares to +/-%.2f%% at %g%% confidence, not the "
				"+/-%g%% asked: %llu are needed", (unsigned long long)n,
				half * 100, rec->opts.confidence * 100, rec->opts.precision * 100,
				(unsigned long long)vp_samples_needed(0.5, rec->opts.precision, z));
		else
			info("%llu samples: every share is within +/-%.2f%% at %g%% confidence",
			     (unsigned long long)n, half * 100, rec->opts.confidence * 100);
	}
}

/*
 * Truncated stacks make callers look rarer than their callees: said in
 * every mode, quiet or not (auto mode's phase 1 is quiet; it raised the
 * copy already if it could, see phase1_stacks() in record-auto.c).
 */
/*
 * Samples not unwound past code without unwind information, or not to
 * their outermost frame: said in every mode, quiet or not, as truncated
 * stacks are (auto mode's phase 1 is quiet, and its plan leaves them
 * out, see plan.c).
 */
/* A share of samples not unwound under which no caller's share moves by
 * as much as a sampled share's usual confidence interval: not a warning
 * (the report counts them, under the incomplete node). */
#define BROKEN_SAY 0.01

static void print_broken(struct vp_sample_sink *ss, int phase1, const struct vp_trailer *tr)
{
	struct vp_unwind_stats us = { 0 };
	uint64_t n = tr->samples;
	const char *phase = phase1 ? "phase 1: " : "";

	if (!tr->broken)
		return;
	if (ss)
		vp_sample_sink_stats(ss, &us);
	if (us.no_cfi_module[0])
		warning("%s%llu of %llu samples (%.1f%%) could not be unwound past code of '%s', "
			"which has no .eh_frame or .debug_frame (rebuild it with "
			"-fasynchronous-unwind-tables, or keep frame pointers)", phase,
			(unsigned long long)tr->broken, (unsigned long long)n,
			100.0 * (double)tr->broken / (double)n, us.no_cfi_module);
	else if ((double)tr->broken >= BROKEN_SAY * (double)n)
		warning("%s%llu of %llu samples (%.1f%%) could not be unwound to their outermost "
			"frame: their callers' sampled shares may be that much low", phase,
			(unsigned long long)tr->broken, (unsigned long long)n,
			100.0 * (double)tr->broken / (double)n);
	else
		pr_debug("%s%llu of %llu samples could not be unwound to their outermost frame",
			 phase, (unsigned long long)tr->broken, (unsigned long long)n);
}

static void print_truncated(uint32_t size, int phase1, const struct vp_trailer *tr)
{
	uint64_t n = tr->samples;
	const char *phase = phase1 ? "phase 1: " : "";

	if (!tr->truncated)
		return;
	if (size < VP_STACK_SIZE_MAX)
		warning("%s%llu of %llu samples (%.1f%%) have truncated stacks: the %u-byte stack "
			"copy ended before their outermost frame (try --stack-size %u)", phase,
			(unsigned long long)tr->truncated, (unsigned long long)n,
			100.0 * (double)tr->truncated / (double)n, (unsigned)size,
			size * 4 > VP_STACK_SIZE_MAX ? VP_STACK_SIZE_MAX : size * 4);
	else
		warning("%s%llu of %llu samples (%.1f%%) have truncated stacks: the %u-byte copy, "
			"the largest the kernel takes, ended before their outermost frame", phase,
			(unsigned long long)tr->truncated, (unsigned long long)n,
			100.0 * (double)tr->truncated / (double)n, (unsigned)size);
}

void record_summary_interrupted(uint64_t t0, int quiet)
{
	static int said;
	uint64_t at = record_signal_ns ? record_signal_ns : monotonic_ns();

	if (said || quiet || !record_nsignals)
		return;
	said = 1;
	info("interrupted after %.1f s; the recording is complete up to there",
	     at > t0 ? (double)(at - t0) / 1e9 : 0.0);
}

void record_summary_detach(const struct record_target *t, int quiet)
{
	double secs = (double)(monotonic_ns() - t->start_ns) / 1e9;

	if (quiet)
		return;
	if (t->gone)
		info("process %d exited after %.1f s of recording", (int)t->pid, secs);
	else
		info("detached from process %d after %.1f s; it keeps running", (int)t->pid, secs);
}

/*
 * The calls whose return probe the kernel never armed: nested more than
 * 64 deep in probed calls.  Their exits are missing from the file (the
 * report counts them as unpaired); say so loudly, quiet or not.
 */
static void print_nesting(const struct vp_nesting *nesting, const struct vp_header *h,
			  enum exit_mode exit_mode)
{
	uint64_t total = vp_nesting_lost(nesting), most = 0;
	size_t nf = 0;
	uint32_t top = 0;
	char others[256] = "";

	if (!total)
		return;
	for (uint32_t f = 0; f < h->nfuncs; f++) {
		uint64_t n = vp_nesting_lost_of(nesting, f);

		nf += n > 0;
		if (n > most) {
			most = n;
			top = f;
		}
	}
	if (nf > 1)
		snprintf(others, sizeof(others), " (%llu of them of '%s', the rest of %zu other "
			 "function%s)", (unsigned long long)most, h->funcs[top].display,
			 nf - 1, nf == 2 ? "" : "s");
	warning("%llu call%s%s%s%s lost %s exit%s: the kernel keeps at most %d return probes "
		"pending per thread and drops those of calls nested deeper (record with "
		"--exit-probes=ret%s)", (unsigned long long)total, total == 1 ? "" : "s",
		nf == 1 ? " of '" : "", nf == 1 ? h->funcs[top].display : "",
		nf == 1 ? "'" : others, total == 1 ? "its" : "their", total == 1 ? "" : "s",
		VP_URETPROBE_MAX_DEPTH,
		exit_mode == EXIT_URETPROBE ? " or --exit-probes=auto" : "");
}

void record_summary_print(struct record *rec, const struct vp_trailer *tr)
{
	struct stat st;
	long long bytes = stat(rec->opts.output, &st) == 0 ? (long long)st.st_size : -1;

	if (rec->output.write_err) {
		error("'%s' is incomplete: only %lld bytes were written", rec->opts.output, bytes);
		return;
	}
	print_nesting(rec->probing.nesting, &rec->hdr, rec->opts.exit_mode);
	if (rec->mode != MODE_PROBE) {
		print_truncated(rec->opts.sampling.stack_size, rec->phase.min_samples != 0, tr);
		print_broken(rec->probing.ss, rec->phase.min_samples != 0, tr);
	}
	if (rec->opts.quiet)
		return;
	if (rec->mode != MODE_SAMPLE)
		info("recorded %llu events in '%s' (%lld bytes, %.1f bytes/event), %llu lost, %zu "
		     "thread%s",
		     (unsigned long long)tr->events, rec->opts.output, bytes,
		     tr->events ? (double)bytes / (double)tr->events : 0.0,
		     (unsigned long long)(rec->counts.lost + rec->counts.lost_phase1),
		     rec->ids.threads.n, rec->ids.threads.n == 1 ? "" : "s");
	if (rec->mode != MODE_PROBE)
		print_sampling_summary(rec, tr, bytes);
	if (rec->counts.lost)
		warning("%llu records were lost: the ring buffers overflowed (try a larger "
			"--buffer-size)", (unsigned long long)rec->counts.lost);
	if (rec->counts.lost_phase1)
		warning("%llu records were lost in phase 1: its sampling buffers overflowed "
			"(try a larger --buffer-size, or a lower -F)",
			(unsigned long long)rec->counts.lost_phase1);
	if (rec->counts.foreign)
		info("%llu foreign events were not recorded: processes other than the program and "
		     "the children it followed ran the probed code",
		     (unsigned long long)rec->counts.foreign);
	record_procs_summary(&rec->target, &rec->probing);
}
