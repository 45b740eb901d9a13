/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-timed.c - what auto mode says about what it timed (record-auto.h):
 * nothing, too few calls, too little of the run - each with the command
 * that records the plan's functions over a whole run - and, at the end,
 * how long phase 2 came after phase 1 and varperf's own CPU time.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf-collector/record/record-auto.h"
#include "util/shell.h"
#include "util/util.h"

enum {
	/* fewer calls timed than this give no statistics worth a report */
	FEW_CALLS = 30,
};

/*
 * The command that records the functions of phase 2's plan (those left in
 * a->r2's header) for the whole of one run: "varperf record --mode=probe
 * -f ... -o ... -- program args" (or "-p pid").
 */
char *auto_probe_command(const struct auto_run *a)
{
	const struct record *r2 = &a->r2;
	char *line = xstrdup("varperf record --mode=probe"), *next;

	for (size_t i = 0; i < r2->hdr.nfuncs; i++) {
		/* (not those phase 2 found too costly to probe) */
		if (r2->phase.dropped && r2->phase.dropped[i])
			continue;
		line = vp_shell_append(line, "-f");
		line = vp_shell_append(line, r2->hdr.funcs[i].name);
	}
	line = vp_shell_append(line, "-o");
	line = vp_shell_append(line, a->o->output);
	if (a->o->attach) {
		next = xasprintf("%s -p %d", line, (int)a->o->attach);
		free(line);
		return next;
	}
	line = vp_shell_append(line, "--");
	for (int i = 0; i < a->argc; i++)
		line = vp_shell_append(line, a->argv[i]);
	return line;
}

/*
 * The functions phase 2 timed too few calls of (FEW_CALLS) though the plan
 * expected more, listed for a message ("'f' (3 of ~400 calls)"), and how
 * many; NULL when none.
 */
static char *few_calls(const struct auto_run *a, size_t *nfew)
{
	const struct record *r2 = &a->r2;
	char *list = NULL, *next;

	*nfew = 0;
	for (size_t f = 0; r2->phase.kept && f < r2->hdr.nfuncs; f++) {
		uint64_t whole = r2->phase.kept[2 * f] < r2->phase.kept[2 * f + 1]
					 ? r2->phase.kept[2 * f]
					 : r2->phase.kept[2 * f + 1];

		if (r2->phase.dropped[f] || whole >= FEW_CALLS || a->est_calls[f] < FEW_CALLS)
			continue;
		if (++*nfew > 3)
			continue;
		next = xasprintf("%s%s'%s' (%llu of ~%.0f calls)", list ? list : "",
				 list ? ", " : "", r2->hdr.funcs[f].display,
				 (unsigned long long)whole, a->est_calls[f]);
		free(list);
		list = next;
	}
	return list;
}

/*
 * After phase 2: a recording that timed nothing is no recording of the
 * program's calls - said, with the command that records them, and record
 * exits non-zero; one that timed few calls of a function the plan chose,
 * or covered less than half of the run, says so.
 */
int auto_check_timed(struct auto_run *a, int code)
{
	const struct record *r2 = &a->r2;
	uint64_t now = monotonic_ns();
	double run = (double)(now - a->r1_start_ns) / 1e9;
	double probed = (double)(now - r2->target.start_ns) / 1e9;
	char *cmd, *few;
	size_t nfew;

	if (!r2->outcome.finished || r2->output.write_err)
		return code;
	cmd = auto_probe_command(a);
	if (!r2->outcome.events) {
		error("nothing was timed: no call of the %zu function%s probed was recorded in "
		      "phase 2 (%.2f s); '%s' holds the sampled profile only", r2->hdr.nfuncs,
		      r2->hdr.nfuncs == 1 ? "" : "s", probed, a->o->output);
		info("to time them over a whole run: %s", cmd);
		free(cmd);
		return code ? code : 1;
	}
	few = few_calls(a, &nfew);
	if (few)
		warning("phase 2 timed few calls of %zu function%s the plan chose: %s%s; so few "
			"calls make poor statistics (a whole run: %s)", nfew, nfew == 1 ? "" : "s",
			few, nfew > 3 ? ", ..." : "", cmd);
	else if (r2->target.child && a->r1_start_ns && probed < run / 2)
		warning("phase 2 probed %.2f s of the program's %.2f s (%.0f%%): the calls before "
			"are in the samples only (a whole run: %s)", probed, run,
			100 * probed / run, cmd);
	free(few);
	free(cmd);
	return code;
}

/*
 * -v: how long the program ran unobserved between the phases, the same
 * run - phase 1's file written (its samples unwound and named), the plan
 * made, the probes placed - against the 50 ms aimed at.
 */
void auto_print_latency(const struct auto_run *a)
{
	const struct record *r2 = &a->r2;

	if (!verbose || !a->p1_end_ns || !r2->target.child || !r2->target.start_ns)
		return;
	info("phase 2 began %.1f ms after phase 1 ended: %.1f ms writing phase 1 (its samples "
	     "unwound and named), %.1f ms planning, %.1f ms placing the probes",
	     (double)(r2->target.start_ns - a->p1_end_ns) / 1e6,
	     (double)(a->p1_done_ns - a->p1_end_ns) / 1e6,
	     (double)(a->planned_ns - a->p1_done_ns) / 1e6,
	     (double)(r2->target.start_ns - a->planned_ns) / 1e6);
}

/*
 * At the end of one run probed in phase 2: varperf's own CPU time, all its
 * threads (sampling, unwinding and naming, planning, reading the probes'
 * records), against the program's - what record cost beyond the probes,
 * which the probes' budget does not cover.
 */
void auto_print_own_cost(const struct auto_run *a)
{
	const struct record *r2 = &a->r2;
	uint64_t own = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - a->self_cpu0;
	uint64_t target = a->p1_cpu + r2->target.cpu;
	char x[32], y[32];

	if (a->o->quiet || !r2->target.child || !r2->outcome.finished || !target)
		return;
	info("varperf's own CPU time: %s, %.1f%% of the program's %s (beyond the probes' "
	     "cost in it)", fmt_duration((double)own, x, sizeof(x)),
	     100.0 * (double)own / (double)target, fmt_duration((double)target, y, sizeof(y)));
}
