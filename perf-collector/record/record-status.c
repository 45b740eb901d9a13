/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * record-status.c - the status line "varperf record" keeps on a terminal
 * while the target runs: how long, which phase, the calls timed (or the
 * samples), the records lost, what the probes cost so far, and how to
 * stop.  Drawn about once a second in place (util's status_line(): any
 * message erases it first); nothing off a terminal or under -q.  See
 * record.h.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "perf-collector/record/record.h"
#include "util/util.h"

/* Once a second; the first after a second, so a short run shows none. */
static const uint64_t EVERY_NS = 1000000000ULL;

void record_status_start(struct record *rec)
{
	const char *term = getenv("TERM");

	/* auto mode's phase 1 is quiet but for what it announces */
	rec->status.on = isatty(STDERR_FILENO) && (!rec->opts.quiet || rec->phase.announce) &&
			 !(term && !strcmp(term, "dumb")); /* no clear-to-end there */
	if (!rec->status.on)
		return;
	if (!rec->status.t0)
		rec->status.t0 = rec->target.start_ns;
	rec->status.next_ns = rec->target.start_ns + EVERY_NS;
	if (rec->mode == MODE_SAMPLE || !rec->hdr.nfuncs)
		return;
	/* the entries written add up what the probes cost (record-merge.c) */
	rec->status.cost = xcalloc(rec->hdr.nfuncs, sizeof(*rec->status.cost));
	for (size_t f = 0; f < rec->hdr.nfuncs; f++)
		rec->status.cost[f] = vp_probe_class_cost(rec->hdr.funcs[f].insn_class,
							  rec->hdr.costs, rec->hdr.ncosts);
}

/* Its columns, or 80 when the terminal does not say. */
static size_t term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/*
 * The line at @terse (0: all of it; 1: the probes' cost as a share only;
 * 2: without varperf's prefix; 3: short words) into @line of @size.
 */
/*
 * What the probes cost so far (ns): auto mode's phase 2 counts every call
 * (on BPF the kernel's count, those left out of the file too), as its
 * budget does; otherwise the entries written.
 */
static double probes_cost(const struct record *rec)
{
	double ns = 0;

	if (!rec->phase.calls)
		return rec->counts.probe_ns;
	for (size_t f = 0; f < rec->hdr.nfuncs; f++)
		ns += (double)rec->phase.calls[f] * rec->status.cost[f];
	return ns;
}

static size_t format_line(const struct record *rec, uint64_t now, int terse, char *line,
			  size_t size)
{
	double cost = rec->status.cost ? probes_cost(rec) : 0;
	size_t n = 0;
	uint64_t secs;
	char a[32];

#define ADD(...)                                                                            \
	do {                                                                                \
		if (n < size)                                                               \
			n += (size_t)snprintf(line + n, size - n, __VA_ARGS__);             \
	} while (0)
	secs = (now - rec->status.t0) / 1000000000ULL;
	if (secs < 60)
		ADD("%s%llu s", terse >= 2 ? "" : "varperf: ", (unsigned long long)secs);
	else
		ADD("%s%llu min %02llu s", terse >= 2 ? "" : "varperf: ",
		    (unsigned long long)(secs / 60), (unsigned long long)(secs % 60));
	if (rec->status.phase)
		ADD(terse >= 3 ? ", %d/2" : ", phase %d/2", rec->status.phase);
	if (rec->mode != MODE_SAMPLE)
		ADD(": %llu %s", (unsigned long long)rec->counts.timed,
		    terse >= 3 ? "timed" : rec->counts.timed == 1 ? "call timed" : "calls timed");
	if (rec->mode != MODE_PROBE)
		ADD("%s%llu sample%s", rec->mode == MODE_SAMPLE ? ": " : ", ",
		    (unsigned long long)rec->counts.nsamples, rec->counts.nsamples == 1 ? "" : "s");
	ADD(", %llu lost", (unsigned long long)rec->counts.lost);
	if (rec->status.cost && (!terse || !rec->target.cpu)) {
		ADD(", probes ~%s", fmt_duration(cost, a, sizeof(a)));
		if (rec->target.cpu)
			ADD(" (%.1f%% of its CPU)", cost / (double)rec->target.cpu * 100);
	} else if (rec->status.cost) {
		ADD(", probes ~%.1f%%", cost / (double)rec->target.cpu * 100);
	}
	ADD("; Ctrl-C stops and keeps the data");
#undef ADD
	return n < size ? n : size - 1;
}

void record_status_tick(struct record *rec)
{
	uint64_t now;
	char line[400];
	size_t width;
	int terse = 0;

	uint64_t cpu0;

	if (!rec->status.on || (now = monotonic_ns()) < rec->status.next_ns)
		return;
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	rec->status.next_ns = now + EVERY_NS;
	/* a job in the background keeps off the shell's line */
	if (tcgetpgrp(STDERR_FILENO) != getpgrp())
		return;
	/* the probes' cost against the CPU time the target (and its
	 * children) had */
	if (rec->status.cost)
		record_target_cpu_update(&rec->target);
	/* one terminal line (a wrapped one would not be redrawn in place):
	 * shorter forms, then cut */
	width = term_width();
	while (format_line(rec, now, terse, line, sizeof(line)) >= width && terse < 3)
		terse++;
	if (width > 1 && strlen(line) >= width)
		line[width - 1] = '\0';
	status_line(line);
	rec->status.draws++;
	rec->status.cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
}

void record_status_end(struct record *rec)
{
	if (rec->status.on)
		status_line_clear();
	if (rec->status.draws)
		pr_debug("status line: drawn %llu times in %.1f us of CPU time",
			 (unsigned long long)rec->status.draws, (double)rec->status.cpu_ns / 1e3);
	free(rec->status.cost);
	rec->status.cost = NULL;
}
