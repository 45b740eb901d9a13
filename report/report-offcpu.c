/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-offcpu.c - the text report's words on off-CPU time split in two:
 * preempted (the machine took the CPU away: not the program's doing) and
 * blocked (the program waited: I/O, a lock, a sleep), per node with the
 * shares of its variance and where it waited; and the note at the top
 * when the durations are own time (wall clock less preemption) by
 * default.  Needs a file whose off-CPU times are split (format 5).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/cct.h"
#include "report.h"
#include "util/util.h"

/* Nodes the section shows at most, and waits per node. */
enum { OFFCPU_TEXT_NODES = 8, OFFCPU_TEXT_WAITS = 3 };

const char *report_offcpu_time_base(const struct report *r)
{
	switch (r->time) {
	case VP_TIME_BLOCKED:
		return "blocked (--time=blocked): only the time threads were asleep "
		       "(I/O, locks, sleeps)";
	case VP_TIME_PREEMPTED:
		return "preempted (--time=preempted): only the time threads could run "
		       "but had no CPU";
	case VP_TIME_OWN:
		return r->time_auto ? "own: wall clock less preemption (the default here: "
				      "--time=wall for plain wall-clock time)"
				    : "own (--time=own): wall clock less preemption";
	default:
		return NULL;
	}
}

void report_offcpu_note(const struct report *r)
{
	if (!r->time_auto)
		return;
	fprintf(r->out,
		"note: preemption (the machine taking the CPU away) made %.0f%% of the "
		"high-variance nodes' wall-clock variance: the durations below are own time, "
		"wall clock less preemption; --time=wall for plain wall-clock time\n",
		100 * r->preempted_share);
}

struct offcpu_row {
	uint32_t id;
	int high; /* high-variance node */
	double weight; /* n Var(W): its part of the variance */
	struct vp_offcpu_split sp;
};

static int row_cmp(const void *a, const void *b)
{
	const struct offcpu_row *x = a, *y = b;

	if (x->high != y->high)
		return x->high ? -1 : 1;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* "pread64 1.2 ms (62%, 340x)": its top waits, most time first. */
static void offcpu_waits(const struct report *r, uint32_t id)
{
	struct vp_cct_wait w[VP_CCT_WAITS + 1];
	size_t n = vp_cct_waits_sorted(r->tree, id, w);
	uint64_t total = 0;
	char name[64], t[32];

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		total += w[i].ns;
	fprintf(r->out, "      waits:");
	for (size_t i = 0; i < n && i < OFFCPU_TEXT_WAITS; i++) {
		fprintf(r->out, "%s %s %s (%.0f%%, %" PRIu64 "x)", i ? "," : "",
			w[i].reason == UINT32_MAX
				? "other"
				: vp_wait_reason_name(r->hdr, w[i].reason, name, sizeof(name)),
			report_time(r, (double)w[i].ns, t, sizeof(t)),
			total ? 100.0 * (double)w[i].ns / (double)total : 0.0, w[i].count);
	}
	if (n > OFFCPU_TEXT_WAITS)
		fprintf(r->out, ", ...");
	fputc('\n', r->out);
}

void report_offcpu_text(const struct report *r)
{
	const struct vp_cct *t = r->tree;
	struct offcpu_row *rows;
	size_t n = 0;
	char m[32], p[32], b[32], label[600];

	if (!t->blocked || t->nnodes < 2)
		return;
	rows = xcalloc(t->nnodes, sizeof(*rows));
	for (uint32_t id = 1; id < t->nnodes; id++) {
		struct offcpu_row *row = &rows[n];

		if (vp_cct_offcpu_split(t, id, &row->sp) < 0 || !row->sp.has_blocked ||
		    !(row->sp.off_mean > 0))
			continue;
		row->id = id;
		row->high = id < r->an->nnodes && r->an->high_variance[id];
		row->weight = (double)row->sp.n * row->sp.wall_var;
		n++;
	}
	if (!n)
		goto out;
	qsort(rows, n, sizeof(*rows), row_cmp);
	fprintf(r->out, "Off the CPU: preempted (no CPU to run on) and blocked (waiting), "
			"means per call and shares of the variance\n");
	for (size_t i = 0; i < n && i < OFFCPU_TEXT_NODES; i++) {
		const struct vp_offcpu_split *sp = &rows[i].sp;

		fprintf(r->out, "  %s", rows[i].high ? "* " : "  ");
		report_put(r->out, report_node_label(r, rows[i].id, label, sizeof(label)));
		fprintf(r->out, ": mean %s, preempted %s (%.0f%%), blocked %s (%.0f%%)\n",
			report_time(r, sp->wall_mean, m, sizeof(m)),
			report_time(r, sp->preempted_mean, p, sizeof(p)),
			sp->wall_var > 0 ? 100 * sp->preempted_share : 0.0,
			report_time(r, sp->blocked_mean, b, sizeof(b)),
			sp->wall_var > 0 ? 100 * sp->blocked_share : 0.0);
		offcpu_waits(r, rows[i].id);
	}
	if (n > OFFCPU_TEXT_NODES)
		fprintf(r->out, "  (%zu more nodes off the CPU: --format=json lists them all)\n",
			n - OFFCPU_TEXT_NODES);
	fputc('\n', r->out);
out:
	free(rows);
}
