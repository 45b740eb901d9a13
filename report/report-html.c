/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-html.c - `varperf report --format html`: one self-contained page
 * to look at rather than read.  Inline CSS, SVG and a small script, and
 * nothing fetched (it opens offline, from a mail attachment, in a CI
 * artifact): the recording's facts, the Variance Characterization Graph
 * drawn as a graph, per Task its duration histogram with p50 and p99
 * marked, its invocations over time (a pixel column keeps its fastest
 * and slowest call: spikes stay visible and the page small for millions
 * of calls), its covariance row sums as bars, and the sampled tree as a
 * collapsible table.  Every name from the recording is escaped.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "core/cct.h"
#include "core/covar.h"
#include "core/datafile.h"
#include "core/histogram.h"
#include "core/patterns.h"
#include "core/recording.h"
#include "core/sampled.h"
#include "core/slowest.h"
#include "core/vcg.h"
#include "html.h"
#include "util/util.h"

enum {
	/* the plots' drawing area, in px; a timeline column is one px */
	HTML_PLOT_W = 460,
	HTML_PLOT_H = 150,
	HTML_MARGIN_L = 60,
	HTML_MARGIN_R = 48,
	HTML_MARGIN_B = 26,
	HTML_MARGIN_T = 32,
	/* Tasks drawn in full; past these the page would be too long to read */
	HTML_MAX_TASKS = 60,
	/* covariance rows per context, contexts per Task */
	HTML_TOP_CONTRIB = 8,
	HTML_MAX_CONTEXTS = 4,
	/* timelines of this many columns or fewer circle each */
	HTML_FEW_CALLS = 100,
	/* call contexts listed per Task */
	HTML_MAX_CCS = 20,
	/* the sampled tree: deeper rows keep this indentation */
	HTML_MAX_INDENT = 24,
	/* a histogram's bars at most (coarser bins than the buckets) */
	HTML_HIST_BINS = 48,
	/* a Task's slowest calls listed, and the parts of each named */
	HTML_SLOW_ROWS = 8,
	HTML_SLOW_PARTS = 3,
	/* rows of the off-CPU table */
	HTML_OFFCPU_ROWS = 20,
};

/* The sampled tree shows nodes from this share up (all with --all), as the text does. */
static const double HTML_SHOW_SHARE = 0.005;

/* ---- what the pass over the invocations gathers ---- */

/* One Task of the graph: its histogram and its timeline. */
struct html_task {
	uint32_t vcg;	     /* its node in r->vcg */
	struct vp_hist hist; /* its calling-context nodes' histograms merged */
	/* per column of the timeline: the calls that started in it, and the
	 * shortest and longest of them */
	uint32_t *count;
	uint64_t *lo, *hi;
	uint64_t calls; /* invocations binned */
};

struct report_html {
	size_t ntasks;
	struct html_task *tasks;
	size_t more_tasks; /* Tasks past HTML_MAX_TASKS, not drawn */
	/* per calling-context node, its Tasks: list[first[n]..first[n + 1]] */
	size_t nnodes;
	uint32_t *first, *list;
	uint64_t t0, span; /* the timelines' time range, in the time base */
	/* the recording's warnings, as the command prints them */
	char **warnings;
	size_t nwarnings;
	int timeline;	   /* the invocations were read */
};

static void html_task_bin(struct html_task *t, const struct report_html *h, uint64_t start,
			  uint64_t duration)
{
	double x = start > h->t0 ? (double)(start - h->t0) / (double)h->span : 0;
	size_t c = (size_t)(x * HTML_PLOT_W);

	if (c >= HTML_PLOT_W)
		c = HTML_PLOT_W - 1;
	if (!t->count[c] || duration < t->lo[c])
		t->lo[c] = duration;
	if (!t->count[c] || duration > t->hi[c])
		t->hi[c] = duration;
	t->count[c]++;
	t->calls++;
}

static int html_on_invocation(void *ctx, const struct vp_invocation *inv)
{
	struct report_html *h = ctx;

	if (inv->node >= h->nnodes)
		return 0;
	for (uint32_t i = h->first[inv->node]; i < h->first[inv->node + 1]; i++)
		html_task_bin(&h->tasks[h->list[i]], h, inv->start, inv->duration);
	return 0;
}

/* Which Tasks each calling-context node is part of. */
static void html_index_tasks(struct report_html *h, const struct report *r)
{
	const struct vp_vcg *g = r->vcg;

	h->nnodes = r->tree->nnodes;
	h->first = xcalloc(h->nnodes + 1, sizeof(*h->first));
	for (size_t i = 0; i < h->ntasks; i++) {
		const struct vp_vcg_node *n = &g->nodes[h->tasks[i].vcg];

		for (uint32_t k = 0; k < n->ncct; k++)
			if (n->cct[k] < h->nnodes)
				h->first[n->cct[k] + 1]++;
	}
	for (size_t n = 0; n < h->nnodes; n++)
		h->first[n + 1] += h->first[n];
	h->list = xcalloc(h->first[h->nnodes] + 1, sizeof(*h->list));
	for (size_t i = 0; i < h->ntasks; i++) {
		const struct vp_vcg_node *n = &g->nodes[h->tasks[i].vcg];

		for (uint32_t k = 0; k < n->ncct; k++) {
			uint32_t c = n->cct[k];

			/* first[c] moves up as c's Tasks are filled in */
			if (c < h->nnodes)
				h->list[h->first[c]++] = (uint32_t)i;
		}
	}
	/* ... so that first[c] is now where c + 1's start: shift back */
	memmove(h->first + 1, h->first, h->nnodes * sizeof(*h->first));
	h->first[0] = 0;
}

void report_html_free(struct report_html *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->ntasks; i++) {
		vp_hist_release(&h->tasks[i].hist);
		free(h->tasks[i].count);
		free(h->tasks[i].lo);
		free(h->tasks[i].hi);
	}
	for (size_t i = 0; i < h->nwarnings; i++)
		free(h->warnings[i]);
	free(h->warnings);
	free(h->tasks);
	free(h->first);
	free(h->list);
	free(h);
}

/* The warnings the command prints on standard error, for the page too. */
static void html_prepare_warnings(struct report_html *h, const struct report *r,
				  const struct vp_recording *rec)
{
	double max_half;
	size_t wide;
	char buf[512];

	h->warnings = xcalloc(rec->nwarnings + 2, sizeof(*h->warnings));
	for (size_t i = 0; i < rec->nwarnings; i++) {
		const struct vp_recording_warning *w = &rec->warnings[i];

		snprintf(buf, sizeof(buf), "%s%s", w->message,
			 w->code == VP_WARN_CLAMPED	 ? " (--raw: as measured)"
			 : w->code == VP_WARN_INCOMPLETE ? "; reporting what was recorded"
							 : "");
		h->warnings[h->nwarnings++] = xstrdup(buf);
	}
	/* auto mode's samples only chose what to probe: no result of theirs */
	if (!r->sampled || r->hdr->mode == VP_MODE_AUTO)
		return;
	wide = report_sampled_wide(r, &max_half);
	if (!wide)
		return;
	snprintf(buf, sizeof(buf),
		 "'%s': %zu sampled share%s wider than +/-%g%% at %g%% confidence (up to +/-%.2f%%): "
		 "record longer or at a higher -F (%" PRIu64 " samples needed)",
		 r->input, wide, wide == 1 ? " is" : "s are", r->precision * 100, r->confidence * 100,
		 max_half * 100, vp_samples_needed(0.5, r->precision, r->z));
	h->warnings[h->nwarnings++] = xstrdup(buf);
}

int report_html_prepare(const struct report *r, struct vp_recording *rec,
			struct report_html **ret)
{
	struct report_html *h = xcalloc(1, sizeof(*h));
	const struct vp_vcg *g = r->vcg;
	char msg[512] = "";
	int err = 0;

	*ret = NULL;
	html_prepare_warnings(h, r, rec);
	for (size_t id = 0; g && id < g->nnodes; id++) {
		struct html_task *t;

		if (g->nodes[id].type != VP_VCG_TASK)
			continue;
		if (h->ntasks == HTML_MAX_TASKS) {
			h->more_tasks++;
			continue;
		}
		if (!h->ntasks)
			h->tasks = xcalloc(HTML_MAX_TASKS, sizeof(*h->tasks));
		t = &h->tasks[h->ntasks++];
		t->vcg = (uint32_t)id;
		vp_hist_init(&t->hist);
		for (uint32_t k = 0; k < g->nodes[id].ncct && !err; k++)
			err = vp_hist_merge(&t->hist, &r->tree->nodes[g->nodes[id].cct[k]].hist);
		t->count = xcalloc(HTML_PLOT_W, sizeof(*t->count));
		t->lo = xcalloc(HTML_PLOT_W, sizeof(*t->lo));
		t->hi = xcalloc(HTML_PLOT_W, sizeof(*t->hi));
	}
	if (err < 0) {
		report_html_free(h);
		return error("cannot analyse '%s': %s", r->input, strerror(-err));
	}
	if (!h->ntasks || !r->totals->invocations) {
		*ret = h;
		return 0;
	}
	html_index_tasks(h, r);
	h->t0 = r->totals->first_time;
	h->span = r->totals->last_time > h->t0 ? r->totals->last_time - h->t0 + 1 : 1;
	err = vp_recording_invocations(rec, html_on_invocation, h, msg, sizeof(msg));
	if (err < 0) {
		report_html_free(h);
		return error("%s", *msg ? msg : strerror(-err));
	}
	h->timeline = 1;
	*ret = h;
	return 0;
}

/* ---- the page ---- */

static const char html_style[] =
	"body{font-family:sans-serif;font-size:14px;color:#1d1d1f;background:#fff;"
	"margin:0 auto;max-width:1280px;padding:8px 20px 40px}"
	"h1{font-size:22px;margin:12px 0 4px}h2{font-size:18px;margin:28px 0 8px;"
	"border-bottom:1px solid #ccc}h3{font-size:15px;margin:0 0 4px}"
	"dl.vp-facts{display:grid;grid-template-columns:max-content minmax(0,1fr) max-content "
	"minmax(0,1fr);gap:2px 16px;margin:8px 0}"
	"dl.vp-facts dt{color:#555}dl.vp-facts dd{margin:0}"
	".vp-wide{overflow-x:auto;max-width:100%}"
	"article.vp-task{border:1px solid #d8d8d8;border-radius:6px;padding:10px 14px;"
	"margin:14px 0}"
	".vp-plots{display:flex;flex-wrap:wrap;gap:8px 20px}"
	"figure{margin:4px 0}figcaption{font-size:12px;color:#555}"
	".vp-stats{font-size:13px;margin:2px 0 6px;color:#333}"
	"svg text{font-family:sans-serif;font-size:11px;fill:#1d1d1f}"
	".vp-axis{stroke:#888;stroke-width:1;fill:none}.vp-grid{stroke:#e6e6e6;stroke-width:1;fill:none}"
	".vp-bar{fill:#8fb3d9}.vp-cdf{stroke:#1d1d1f;stroke-width:1.2;fill:none}"
	"text.vp-cdf-axis{fill:#555}.vp-calls{stroke:#c0392b;stroke-width:1.5;fill:none}"
	".vp-dot{fill:none;stroke:#c0392b;stroke-width:1.2}"
	".vp-slow{fill:none;stroke:#6a1b9a;stroke-width:1.5}"
	"table.vp-table{border-collapse:collapse;font-size:12px;margin:4px 0}"
	".vp-table th,.vp-table td{padding:1px 8px;text-align:right;white-space:nowrap}"
	".vp-table td.vp-name,.vp-table th.vp-name{text-align:left;white-space:normal}"
	".vp-table tr:nth-child(even){background:#f7f7f7}"
	".vp-warnings{background:#fff8e1;border:1px solid #e0c36a;border-radius:6px;"
	"padding:6px 14px;margin:10px 0}.vp-warnings li{margin:2px 0}"
	".vp-split{display:inline-block;width:160px;height:10px;background:#4a7fb5;"
	"vertical-align:middle}.vp-split span{display:block;height:100%;background:#c98b2a;"
	"float:right}"
	".vp-mark{stroke-width:1.5;stroke-dasharray:4 3}line.vp-p50{stroke:#2e8b57}"
	"line.vp-p99{stroke:#d35400}text.vp-p50{fill:#2e8b57}text.vp-p99{fill:#d35400}"
	".vp-cbar{fill:#4a7fb5}.vp-cbar.vp-neg{fill:#c98b2a}"
	".vp-vcg-node rect,.vp-vcg-node ellipse{fill:#eef4fb;stroke:#35608f;stroke-width:1.2}"
	".vp-contributor rect{fill:#fff;stroke-dasharray:5 3}"
	".vp-contrast ellipse{fill:#f6f6f6;stroke:#777}"
	".vp-edge{stroke:#555;stroke-width:1.2;fill:none}"
	".vp-back{stroke:#b22222;stroke-width:1.2;fill:none;stroke-dasharray:5 3}"
	"text.vp-back-label{fill:#b22222}"
	".vp-cluster{fill:none;stroke:#bbb;stroke-width:1;rx:8}"
	"table.vp-stree{border-collapse:collapse;font-size:12px}"
	".vp-stree th,.vp-stree td{padding:1px 8px;text-align:right;white-space:nowrap}"
	".vp-stree td.vp-name,.vp-stree th.vp-name{text-align:left}"
	".vp-stree tr:nth-child(even){background:#f7f7f7}"
	".vp-stree td.vp-name{padding-left:calc(8px + var(--d) * 14px)}"
	".vp-tog{border:none;background:none;cursor:pointer;width:16px;padding:0;margin-left:-16px}"
	".vp-note{color:#555;font-size:12px}";

/*
 * The sampled tree's rows fold: a button on each row with rows below it
 * hides or shows them (a closed row's descendants stay hidden when an
 * ancestor opens).  Without scripts every row shows.
 */
static const char html_script[] =
	"(function(){\n"
	"var rows=document.querySelectorAll('tr.vp-srow'),n=0;\n"
	"function dep(r){return +r.getAttribute('data-depth');}\n"
	"function apply(){var cut=Infinity;\n"
	" for(var i=0;i<rows.length;i++){var r=rows[i],d=dep(r);\n"
	"  if(d<=cut)cut=Infinity;r.hidden=d>cut;\n"
	"  if(!r.hidden&&r.classList.contains('vp-closed'))cut=d;}}\n"
	"for(var i=0;i+1<rows.length;i++){\n"
	" if(dep(rows[i+1])<=dep(rows[i]))continue;\n"
	" var b=document.createElement('button');b.className='vp-tog';\n"
	" b.setAttribute('aria-expanded','true');b.textContent='\\u25be';\n"
	" b.addEventListener('click',function(e){var r=e.currentTarget.closest('tr');\n"
	"  var c=r.classList.toggle('vp-closed');e.currentTarget.textContent=c?'\\u25b8':"
	"'\\u25be';\n"
	"  e.currentTarget.setAttribute('aria-expanded',c?'false':'true');apply();});\n"
	" rows[i].querySelector('td.vp-name').prepend(b);n++;}\n"
	"document.body.setAttribute('data-toggles',n);\n"
	"})();\n";

static const char *html_mode_word(uint32_t mode)
{
	switch (mode) {
	case VP_MODE_PROBE:
		return "probe";
	case VP_MODE_SAMPLE:
		return "sample";
	case VP_MODE_AUTO:
		return "auto (phase 1 sampled, phase 2 probed)";
	case VP_MODE_COMBINED:
		return "combined (samples and probes in one run)";
	default:
		return "not said";
	}
}

static void html_fact_start(FILE *f, const char *name)
{
	fprintf(f, "<dt>%s</dt><dd>", name);
}

static const char *html_target_status(const struct vp_trailer *tr, char *buf, size_t len)
{
	int ws = (int)tr->wait_status;

	if (!tr->present)
		snprintf(buf, len, "recording incomplete (no END chunk)");
	else if (tr->flags & VP_END_GONE)
		snprintf(buf, len, "exited while varperf was attached (status unknown)");
	else if (!(tr->flags & VP_END_EXITED))
		snprintf(buf, len, "still running when the recording stopped");
	else if (WIFEXITED(ws))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(ws));
	else if (WIFSIGNALED(ws))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
	else
		snprintf(buf, len, "wait status 0x%x", ws);
	return buf;
}

/* The recording's facts, as the text report's header and totals have them. */
static void html_header(FILE *f, const struct report *r)
{
	const struct vp_header *h = r->hdr;
	const struct vp_build_totals *bt = r->totals;
	const char *clock = report_clock_name(h->clock);
	char tbuf[64];
	struct tm tm;
	time_t t = (time_t)h->start_time;

	fputs("<header id=\"vp-header\">\n<h1>varperf report of <code>", f);
	html_put(f, report_program_path(r));
	fputs("</code></h1>\n<dl class=\"vp-facts\">\n", f);
	html_fact_start(f, "data file");
	html_put(f, r->input);
	fputs("</dd>\n", f);
	html_fact_start(f, "command");
	fputs("<code>", f);
	for (int i = 0; i < h->argc; i++) {
		if (i)
			fputc(' ', f);
		html_put(f, h->argv[i]);
	}
	fputs(h->argc > 0 ? "</code>" : "</code>(not recorded)", f);
	fprintf(f, "</dd>\n<dt>pid</dt><dd>%" PRIu32 "</dd>\n", h->pid);
	if (h->start_time && localtime_r(&t, &tm) &&
	    strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S %z", &tm))
		fprintf(f, "<dt>recorded</dt><dd>%s</dd>\n", tbuf);
	html_fact_start(f, "host");
	html_put(f, h->host && *h->host ? h->host : "(unknown)");
	if (h->ncpu)
		fprintf(f, ", %" PRIu32 " CPU%s", h->ncpu, h->ncpu == 1 ? "" : "s");
	fprintf(f, "</dd>\n<dt>unit</dt><dd>%s, ", report_unit_name(h->unit));
	if (clock)
		fprintf(f, "%s", clock);
	else
		fprintf(f, "clock %" PRIu32, h->clock);
	fprintf(f, "</dd>\n<dt>mode</dt><dd>%s</dd>\n", html_mode_word(h->mode));
	if (r->sampled) {
		fprintf(f, "<dt>samples</dt><dd>%" PRIu64 " of %s every ", r->sampled->samples,
			vp_sample_event_name(h->sampling.event));
		if (h->sampling.period && !r->sampled->period_varies)
			html_time(f, r, (double)h->sampling.period);
		else
			fputs("(varying period)", f);
		fputs("</dd>\n", f);
	}
	if (h->nfuncs) {
		fprintf(f, "<dt>probed functions</dt><dd>%zu</dd>\n", h->nfuncs);
		fprintf(f, "<dt>time</dt><dd>%s%s</dd>\n", vp_time_base_name(r->time),
			r->compensated ? ", probe costs subtracted" : "");
		fprintf(f, "<dt>events</dt><dd>%" PRIu64 "</dd>\n", bt->events);
		fprintf(f, "<dt>invocations</dt><dd>%" PRIu64 "</dd>\n", bt->invocations);
		fprintf(f, "<dt>lost records</dt><dd>%" PRIu64 "</dd>\n", r->lost);
		fprintf(f, "<dt>threads</dt><dd>%" PRIu32 "</dd>\n", bt->threads);
		html_fact_start(f, "duration");
		html_time(f, r, bt->events ? (double)(bt->last_time - bt->first_time) : 0);
		fputs(" (first to last event)</dd>\n", f);
		html_fact_start(f, "total time");
		html_time(f, r, (double)r->an->total_time);
		fputs(" (sum of the outermost invocations)</dd>\n", f);
	}
	fprintf(f, "<dt>target</dt><dd>%s</dd>\n",
		html_target_status(r->trailer, tbuf, sizeof(tbuf)));
	fputs("</dl>\n</header>\n", f);
}

/* ---- per Task: histogram, timeline, slowest calls, covariance ---- */

/* A slow call's parts, the largest first. */
static int html_cmp_part(const void *a, const void *b)
{
	const struct vp_slow_part *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	return x->var > y->var ? 1 : x->var < y->var ? -1 : 0;
}

/* The plots' frame: an SVG of the drawing area plus margins. */
static void html_svg_open(FILE *f, const char *cls)
{
	fprintf(f, "<svg class=\"%s\" width=\"%d\" "
		   "height=\"%d\">\n",
		cls, HTML_MARGIN_L + HTML_PLOT_W + HTML_MARGIN_R,
		HTML_MARGIN_T + HTML_PLOT_H + HTML_MARGIN_B);
	fprintf(f, "<path class=\"vp-axis\" d=\"M%d %d V%d H%d\"/>\n", HTML_MARGIN_L, HTML_MARGIN_T,
		HTML_MARGIN_T + HTML_PLOT_H, HTML_MARGIN_L + HTML_PLOT_W);
}

/* Log-scaled x of the histogram: v + 1 so that a duration of 0 has a place. */
struct html_logx {
	double l0, l1;
};

static double html_logx(const struct html_logx *s, double v)
{
	return HTML_MARGIN_L + (log(v + 1) - s->l0) / (s->l1 - s->l0) * HTML_PLOT_W;
}

/*
 * The x axis: both ends of the range, and ticks at 1, 2 and 5 times the
 * powers of ten inside (1 only when crowded) where the ends leave room.
 */
static void html_hist_ticks(FILE *f, const struct report *r, const struct html_logx *s,
			    uint64_t lo, uint64_t hi)
{
	static const int steps[] = { 1, 2, 5 };
	/* the end labels take about 70 px each */
	double y = HTML_MARGIN_T + HTML_PLOT_H, l = HTML_MARGIN_L + 72,
	       rt = HTML_MARGIN_L + HTML_PLOT_W - 72;
	int nsteps = 3, n = 0;

	for (double d = 1; d <= 1e19 && d <= (double)hi; d *= 10)
		for (int i = 0; i < 3; i++)
			n += d * steps[i] >= (double)lo && d * steps[i] <= (double)hi;
	if (n > 8)
		nsteps = 1;
	for (double d = 1; d <= 1e19 && d <= (double)hi; d *= 10)
		for (int i = 0; i < nsteps; i++) {
			double v = d * steps[i], x = html_logx(s, v);

			if (v < (double)lo || v > (double)hi || x < l || x > rt)
				continue;
			fprintf(f, "<path class=\"vp-axis\" d=\"M%.1f %.1f v4\"/><text x=\"%.1f\" "
				   "y=\"%.1f\" text-anchor=\"middle\">",
				x, y, x, y + 16);
			html_time(f, r, v);
			fputs("</text>\n", f);
		}
	fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"start\">", HTML_MARGIN_L, y + 16);
	html_time(f, r, (double)lo);
	fprintf(f, "</text><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">",
		HTML_MARGIN_L + HTML_PLOT_W, y + 16);
	html_time(f, r, (double)hi);
	fputs("</text>\n", f);
}

/*
 * A marker at percentile @q: a dashed line at its value, labelled on line
 * @row above the plot (p50 and p99 may be close), on the side of the line
 * with room for the label.
 */
static void html_hist_mark(FILE *f, const struct report *r, const struct html_logx *s,
			   const struct vp_hist *h, const char *name, double q, int row)
{
	uint64_t v = vp_hist_quantile(h, q);
	double x = html_logx(s, (double)v);
	int right = x < HTML_MARGIN_L + HTML_PLOT_W / 2;

	fprintf(f, "<line class=\"vp-mark vp-%s\" data-value=\"%" PRIu64 "\" x1=\"%.1f\" "
		   "y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
		name, v, x, HTML_MARGIN_T - 12 * row - 12, x, HTML_MARGIN_T + HTML_PLOT_H);
	fprintf(f, "<text class=\"vp-%s\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s ", name,
		x + (right ? 4 : -4), HTML_MARGIN_T - 12 * row - 4, right ? "start" : "end", name);
	html_time(f, r, (double)v);
	fputs("</text>\n", f);
}

/*
 * The durations on a log time axis: the histogram's buckets (1/128 of an
 * octave) summed into coarser bins, at most HTML_HIST_BINS of them, as
 * bars, and over them the exact buckets' cumulative share as a step line
 * (the CDF, right axis): bars show the modes, the line every quantile.
 */
static void html_hist(FILE *f, const struct report *r, const struct vp_hist *h)
{
	struct html_logx s;
	uint64_t count, most = 0, lo, hi, first_lo = 0, last_hi = 0, seen = 0;
	uint64_t *bins = NULL, *edge;
	uint32_t b, nbars = 0, per_octave = 16, nbins;
	double octaves;

	for (uint32_t pos = 0; vp_hist_next(h, &pos, &b, &count);) {
		vp_hist_bucket_range(b, &lo, &hi);
		if (!seen++)
			first_lo = lo;
		last_hi = hi;
	}
	fprintf(f, "<figure class=\"vp-hist\" data-calls=\"%" PRIu64 "\"", h->n);
	if (!seen) {
		fputs(" data-bars=\"0\">\n<p class=\"vp-note\">no paired invocations</p></figure>\n",
		      f);
		return;
	}
	/* the finest of 16, 8, 4, 2 or 1 bins per octave that fits */
	octaves = log2(((double)last_hi + 2) / ((double)first_lo + 1));
	while (per_octave > 1 && octaves * per_octave > HTML_HIST_BINS)
		per_octave /= 2;
	nbins = (uint32_t)ceil(octaves * per_octave) + 1;
	/* integer edges, so that a bucket is in one bin exactly: bin k holds
	 * [edge[k], edge[k + 1]) */
	bins = xcalloc(nbins, sizeof(*bins));
	edge = xcalloc(nbins + 1, sizeof(*edge));
	for (uint32_t k = 0; k <= nbins; k++) {
		edge[k] = (uint64_t)ceil(((double)first_lo + 1) * exp2((double)k / per_octave) - 1);
		if (k && edge[k] < edge[k - 1])
			edge[k] = edge[k - 1];
	}
	edge[0] = first_lo;
	edge[nbins] = last_hi + 1;
	for (uint32_t pos = 0, k = 0; vp_hist_next(h, &pos, &b, &count);) {
		vp_hist_bucket_range(b, &lo, &hi);
		while (k + 1 < nbins && lo >= edge[k + 1])
			k++;
		bins[k] += count;
	}
	for (uint32_t k = 0; k < nbins; k++) {
		nbars += bins[k] != 0;
		if (bins[k] > most)
			most = bins[k];
	}
	fprintf(f, " data-bars=\"%" PRIu32 "\" data-per-octave=\"%" PRIu32 "\">\n", nbars,
		per_octave);
	s.l0 = log((double)first_lo + 1);
	s.l1 = log((double)last_hi + 2);
	html_svg_open(f, "vp-hist-plot");
	for (uint32_t k = 0; k < nbins; k++) {
		double v0 = (double)edge[k], v1 = (double)edge[k + 1], x0, x1, bh;

		if (!bins[k])
			continue;
		x0 = html_logx(&s, v0);
		x1 = html_logx(&s, v1);
		bh = fmax(1, (double)bins[k] / (double)most * HTML_PLOT_H);
		fprintf(f, "<rect class=\"vp-bar\" data-lo=\"%.0f\" data-hi=\"%.0f\" "
			   "data-count=\"%" PRIu64 "\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
			   "height=\"%.1f\"><title>",
			v0, v1 - 1, bins[k], x0, HTML_MARGIN_T + HTML_PLOT_H - bh,
			fmax(x1 - x0 - 0.5, 1), bh);
		html_time(f, r, v0);
		fputs(" \xe2\x80\x93 ", f);
		html_time(f, r, v1 - 1);
		fprintf(f, ": %" PRIu64 " call%s</title></rect>\n", bins[k],
			bins[k] == 1 ? "" : "s");
	}
	free(bins);
	free(edge);
	/* the CDF: up at each bucket's end by its calls */
	fprintf(f, "<path class=\"vp-cdf\" d=\"M%.1f %d", html_logx(&s, (double)first_lo),
		HTML_MARGIN_T + HTML_PLOT_H);
	seen = 0;
	for (uint32_t pos = 0; vp_hist_next(h, &pos, &b, &count);) {
		double x;

		vp_hist_bucket_range(b, &lo, &hi);
		x = html_logx(&s, (double)hi + 1);
		seen += count;
		fprintf(f, "H%.1fV%.1f", x,
			HTML_MARGIN_T + HTML_PLOT_H - (double)seen / (double)h->n * HTML_PLOT_H);
	}
	fprintf(f, "\" data-calls=\"%" PRIu64 "\"/>\n", seen);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%" PRIu64 "</text>"
		   "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n"
		   "<text class=\"vp-cdf-axis\" x=\"%d\" y=\"%d\">100%%</text>"
		   "<text class=\"vp-cdf-axis\" x=\"%d\" y=\"%d\">50%%</text>\n",
		HTML_MARGIN_L - 4, HTML_MARGIN_T + 10, most, HTML_MARGIN_L - 4,
		HTML_MARGIN_T + HTML_PLOT_H, HTML_MARGIN_L + HTML_PLOT_W + 4, HTML_MARGIN_T + 4,
		HTML_MARGIN_L + HTML_PLOT_W + 4, HTML_MARGIN_T + HTML_PLOT_H / 2 + 4);
	html_hist_ticks(f, r, &s, first_lo, last_hi);
	html_hist_mark(f, r, &s, h, "p50", 0.5, 0);
	html_hist_mark(f, r, &s, h, "p99", 0.99, 1);
	fprintf(f, "</svg>\n<figcaption>Durations of its %" PRIu64 " calls, log scale: bars of "
		   "1/%" PRIu32 " octave (calls per bar up to %" PRIu64 "), and the share of "
		   "calls up to each duration (the line, right axis; within %.2g %%)."
		   "</figcaption>\n</figure>\n",
		h->n, per_octave, most, 100 * VP_HIST_REL_ERROR);
}

/* A Task's kept slowest calls (core/slowest.h), the slowest first. */
struct html_slow {
	uint32_t node;
	const struct vp_slow_call *call;
};

static int html_cmp_slow(const void *a, const void *b)
{
	const struct html_slow *x = a, *y = b;

	if (x->call->duration != y->call->duration)
		return x->call->duration < y->call->duration ? 1 : -1;
	return x->call->start < y->call->start ? -1 : x->call->start > y->call->start;
}

static size_t html_task_slow(const struct report *r, const struct vp_vcg_node *n,
			     struct html_slow **ret)
{
	size_t k = 0, cap = 0;
	struct html_slow *v = NULL;

	for (uint32_t i = 0; i < n->ncct; i++) {
		const struct vp_slowest *s;

		if (n->cct[i] >= r->tree->nnodes)
			continue;
		s = &r->tree->nodes[n->cct[i]].slowest;
		for (uint32_t j = 0; j < s->n; j++) {
			if (k == cap) {
				cap = cap ? 2 * cap : 16;
				v = xrealloc(v, cap * sizeof(*v));
			}
			v[k++] = (struct html_slow){ n->cct[i], &s->calls[j] };
		}
	}
	if (k)
		qsort(v, k, sizeof(*v), html_cmp_slow);
	*ret = v;
	return k;
}

/* The timeline's log y axis, from its shortest call to its longest. */
struct html_logy {
	double l0, l1;
};

static double html_ty(const struct html_logy *s, double v)
{
	double l = log(fmax(v, 0) + 1);

	if (!(s->l1 > s->l0))
		return HTML_MARGIN_T + HTML_PLOT_H / 2.0;
	return HTML_MARGIN_T + HTML_PLOT_H - (l - s->l0) / (s->l1 - s->l0) * HTML_PLOT_H;
}

/* Ticks at 1, 2 and 5 times the powers of ten between the ends. */
static void html_timeline_ticks(FILE *f, const struct report *r, const struct html_logy *s,
				uint64_t lo, uint64_t hi)
{
	static const int steps[] = { 1, 2, 5 };
	double last = 1e9;

	for (int end = 0; end < 2; end++) {
		double y = html_ty(s, (double)(end ? hi : lo));

		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", HTML_MARGIN_L - 4,
			y + 4);
		html_time(f, r, (double)(end ? hi : lo));
		fputs("</text>", f);
	}
	for (double d = 1; d <= 1e19 && d <= (double)hi; d *= 10)
		for (int i = 0; i < 3; i++) {
			double v = d * steps[i], y = html_ty(s, v);

			/* clear of the ends' labels and of the last tick's */
			if (v <= (double)lo || v >= (double)hi || y > html_ty(s, (double)lo) - 14 ||
			    y < html_ty(s, (double)hi) + 14 || last - y < 14)
				continue;
			last = y;
			fprintf(f, "<path class=\"vp-grid\" d=\"M%d %.1f H%d\"/><text x=\"%d\" "
				   "y=\"%.1f\" text-anchor=\"end\">",
				HTML_MARGIN_L + 1, y, HTML_MARGIN_L + HTML_PLOT_W, HTML_MARGIN_L - 4,
				y + 4);
			html_time(f, r, v);
			fputs("</text>", f);
		}
	fputc('\n', f);
}

/*
 * Every call by its start, frame-time style: per pixel column a mark from
 * the shortest call that started in it to the longest, on a log axis so
 * that one spike does not flatten the rest; the Task's kept slowest calls
 * circled (the table below lists them).
 */
static void html_timeline(FILE *f, const struct report *r, const struct report_html *h,
			  const struct html_task *t, const struct html_slow *slow, size_t nslow)
{
	uint64_t top = 0, bottom = UINT64_MAX;
	uint32_t cols = 0;
	struct html_logy s;

	if (!h->timeline)
		return;
	for (size_t c = 0; c < HTML_PLOT_W; c++) {
		if (!t->count[c])
			continue;
		cols++;
		if (t->hi[c] > top)
			top = t->hi[c];
		if (t->lo[c] < bottom)
			bottom = t->lo[c];
	}
	fprintf(f, "<figure class=\"vp-timeline\" data-calls=\"%" PRIu64 "\" data-columns=\"%"
		   PRIu32 "\" data-max=\"%" PRIu64 "\">\n",
		t->calls, cols, top);
	if (!cols) {
		fputs("<p class=\"vp-note\">no paired invocations</p></figure>\n", f);
		return;
	}
	s.l0 = log((double)bottom + 1);
	s.l1 = log((double)top + 1);
	html_svg_open(f, "vp-timeline-plot");
	html_timeline_ticks(f, r, &s, bottom, top);
	/* p50 and p99 under the calls, which they would hide */
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "p99" : "p50";
		uint64_t v = vp_hist_quantile(&t->hist, i ? 0.99 : 0.5);
		double y = html_ty(&s, (double)v);

		fprintf(f, "<line class=\"vp-mark vp-%s\" data-value=\"%" PRIu64 "\" x1=\"%d\" "
			   "y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text class=\"vp-%s\" x=\"%d\" "
			   "y=\"%.1f\">%s</text>\n",
			name, v, HTML_MARGIN_L, y, HTML_MARGIN_L + HTML_PLOT_W, y, name,
			HTML_MARGIN_L + HTML_PLOT_W + 4, y + (i ? -2 : 10), name);
	}
	/* per column a mark from its shortest call to its longest, at least 3 px */
	fputs("\n<path class=\"vp-calls\" d=\"", f);
	for (size_t c = 0; c < HTML_PLOT_W; c++) {
		double y0, y1;

		if (!t->count[c])
			continue;
		y0 = html_ty(&s, (double)t->lo[c]);
		y1 = fmin(html_ty(&s, (double)t->hi[c]), y0 - 3);
		fprintf(f, "M%.1f %.1fV%.1f", HTML_MARGIN_L + c + 0.5, y0, y1);
	}
	fputs("\"/>\n", f);
	/* a few calls would be a few dots hard to see: circle them */
	for (size_t c = 0; cols <= HTML_FEW_CALLS && c < HTML_PLOT_W; c++)
		if (t->count[c])
			fprintf(f, "<circle class=\"vp-dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"/>",
				HTML_MARGIN_L + c + 0.5, html_ty(&s, (double)t->hi[c]));
	for (size_t i = 0; i < nslow && i < HTML_SLOW_ROWS; i++) {
		const struct vp_slow_call *c = slow[i].call;
		double x = c->start > h->t0 ? (double)(c->start - h->t0) / (double)h->span : 0;

		fprintf(f, "<circle class=\"vp-slow\" data-rank=\"%zu\" cx=\"%.1f\" cy=\"%.1f\" "
			   "r=\"4.5\"><title>#%zu: ",
			i + 1, HTML_MARGIN_L + fmin(x, 1) * HTML_PLOT_W,
			html_ty(&s, (double)c->duration), i + 1);
		html_time(f, r, (double)c->duration);
		fputs("</title></circle>", f);
	}
	fprintf(f, "\n<text x=\"%d\" y=\"%d\" text-anchor=\"start\">0</text>"
		   "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
		HTML_MARGIN_L, HTML_MARGIN_T + HTML_PLOT_H + 16, HTML_MARGIN_L + HTML_PLOT_W,
		HTML_MARGIN_T + HTML_PLOT_H + 16);
	html_time(f, r, (double)h->span);
	fprintf(f, "</text>\n</svg>\n<figcaption>Its %" PRIu64 " calls by start time (%s time, "
		   "from the first event), durations on a log scale: per pixel column a mark "
		   "from the shortest call that started in it to the longest; the slowest "
		   "circled.</figcaption>\n</figure>\n",
		t->calls, vp_time_base_name(r->time));
}

/* "2.80 ms childa@f.c:60, 0.61 ms self, ...": where a slow call's time went. */
static void html_slow_split(FILE *f, const struct report *r, const struct vp_cct_node *n,
			    const struct vp_slow_call *c)
{
	struct vp_slow_part *p = xcalloc(c->nparts ? c->nparts : 1, sizeof(*p));
	char label[600];
	int64_t rest = 0;

	memcpy(p, c->parts, c->nparts * sizeof(*p));
	qsort(p, c->nparts, sizeof(*p), html_cmp_part);
	for (uint32_t i = 0; i < c->nparts; i++) {
		if (i >= HTML_SLOW_PARTS) {
			rest += p[i].time;
			continue;
		}
		if (i)
			fputs(", ", f);
		html_time(f, r, (double)p[i].time);
		fputc(' ', f);
		html_put(f, report_slow_part_label(r, n, p[i].var, label, sizeof(label)));
	}
	if (c->nparts > HTML_SLOW_PARTS) {
		fputs(", ", f);
		html_time(f, r, (double)rest);
		fprintf(f, " in %" PRIu32 " more", c->nparts - HTML_SLOW_PARTS);
	}
	free(p);
}

/* The Task's slowest kept calls: when, on which thread, and why. */
static void html_slowest(FILE *f, const struct report *r, const struct vp_vcg_node *n,
			 const struct html_slow *slow, size_t nslow)
{
	double sigma = vp_stats_stddev(&n->stats);
	char label[600];

	if (!nslow)
		return;
	fprintf(f, "<details class=\"vp-slowest\" open><summary>Its slowest calls (%zu of the "
		   "%" PRIu32 " kept per context)</summary>\n<div class=\"vp-wide\"><table class=\"vp-table\"><thead><tr>"
		   "<th>#</th><th>start</th><th>thread</th><th>duration</th><th>z</th>"
		   "<th class=\"vp-name\">where the time went</th>"
		   "<th class=\"vp-name\">context</th></tr></thead>\n<tbody>\n",
		nslow < HTML_SLOW_ROWS ? nslow : (size_t)HTML_SLOW_ROWS, r->tree->keep_slowest);
	for (size_t i = 0; i < nslow && i < HTML_SLOW_ROWS; i++) {
		const struct vp_slow_call *c = slow[i].call;
		const struct vp_thread_info *ti = vp_reader_thread(r->reader, c->thread);

		fprintf(f, "<tr class=\"vp-slow-row\" data-duration=\"%" PRIu64 "\"><td>%zu</td>"
			   "<td>%.3f ms</td><td>",
			c->duration, i + 1, (double)report_slow_start(r, c) / 1e6);
		if (ti)
			fprintf(f, "%" PRIu32, ti->tid);
		else
			fputc('?', f);
		fputs("</td><td>", f);
		html_time(f, r, (double)c->duration);
		if (sigma > 0)
			fprintf(f, "</td><td>%+.1f", ((double)c->duration - n->stats.mean) / sigma);
		else
			fputs("</td><td>-", f);
		fputs("</td><td class=\"vp-name\">", f);
		html_slow_split(f, r, &r->tree->nodes[slow[i].node], c);
		fputs("</td><td class=\"vp-name\">", f);
		html_put(f, report_node_label(r, slow[i].node, label, sizeof(label)));
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></div></details>\n", f);
}

/* The call contexts a Task stands for, outermost first. */
static void html_contexts(FILE *f, const struct report *r, const struct vp_vcg_node *n)
{
	char cs[512];

	if (!n->nccs)
		return;
	fprintf(f, "<details class=\"vp-contexts\"><summary>%" PRIu32 " call context%s</summary>"
		   "<ul>\n",
		n->nccs, n->nccs == 1 ? "" : "s");
	for (uint32_t i = 0; i < n->nccs && i < HTML_MAX_CCS; i++) {
		const struct vp_vcg_cc *cc = &r->vcg->ccs[n->ccs[i]];

		fputs("<li>", f);
		for (uint32_t k = 0; k < cc->len; k++) {
			if (k)
				fputs(" \xe2\x86\x92 ", f);
			html_put(f, report_func_name(r, cc->elems[k].func));
			report_callsite_str(r, cc->elems[k].callsite, 1, cs, sizeof(cs));
			if (*cs) {
				fputs(" [", f);
				html_put(f, cs);
				fputc(']', f);
			}
		}
		fputs("</li>\n", f);
	}
	if (n->nccs > HTML_MAX_CCS)
		fprintf(f, "<li>%" PRIu32 " more</li>\n", n->nccs - HTML_MAX_CCS);
	fputs("</ul></details>\n", f);
}

/* The label of variable @var of node @n's covariance. */
static void html_var_label(const struct report *r, const struct vp_cct_node *n, size_t var,
			   char *buf, size_t len)
{
	if (var == 0) {
		snprintf(buf, len, "self");
		return;
	}
	if (var > VP_CCT_TRACKED) {
		snprintf(buf, len, "(%" PRIu32 " other callees)", vp_cct_nother(n->nchildren));
		return;
	}
	if (var - 1 < n->nchildren) {
		report_node_label(r, n->children[var - 1], buf, len);
		return;
	}
	snprintf(buf, len, "variable %zu", var);
}

/*
 * One calling-context node's covariance row sums as bars, in % of its
 * variance: they add up to it (Kumar and Pande, Eq. 2), a negative one
 * takes variance away (calls that exclude each other).
 */
static void html_contrib_node(FILE *f, const struct report *r, uint32_t id)
{
	const struct vp_cct_node *n = &r->tree->nodes[id];
	double var = vp_covar_sum(&n->cov), lo = 0, hi = 0, rest = 0, zero;
	struct vp_contrib *c = NULL;
	long dim = vp_cct_contributors(n, &c);
	long rows;
	char label[600];
	const double label_w = 300, bar_w = 300;

	if (dim <= 1 || !(var > 0)) {
		free(c);
		return;
	}
	rows = dim > HTML_TOP_CONTRIB ? HTML_TOP_CONTRIB : dim;
	for (long i = 0; i < dim; i++) {
		double pct = 100 * c[i].value / var;

		if (i >= rows)
			rest += pct;
		else
			lo = fmin(lo, pct), hi = fmax(hi, pct);
	}
	lo = fmin(lo, rest);
	hi = fmax(hi, fmax(rest, 1e-9));
	zero = label_w + (0 - lo) / (hi - lo) * bar_w;
	fprintf(f, "<figure class=\"vp-contrib\" data-node=\"%" PRIu32 "\" data-rows=\"%ld\">"
		   "\n<figcaption>",
		id, dim);
	html_put(f, report_node_label(r, id, label, sizeof(label)));
	fprintf(f, " (node %" PRIu32 "): &sigma; ", id);
	html_time(f, r, sqrt(var));
	fprintf(f, " over %" PRIu64 " calls; covariance row sums, %% of its variance</figcaption>\n",
		n->cov.n);
	fprintf(f, "<svg class=\"vp-contrib-plot\" "
		   "width=\"%.0f\" height=\"%ld\">\n",
		label_w + bar_w + 70, 20 * (rows + (dim > rows)) + 4);
	for (long i = 0; i < rows + (dim > rows); i++) {
		double pct = i < rows ? 100 * c[i].value / var : rest;
		double x = label_w + (pct - lo) / (hi - lo) * bar_w, y = 20.0 * i + 2;

		if (i < rows)
			html_var_label(r, n, c[i].var, label, sizeof(label));
		else
			snprintf(label, sizeof(label), "(%ld more)", dim - rows);
		fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\"><title>", label_w - 8,
			y + 13);
		html_put(f, label);
		fputs("</title>", f);
		html_put_max(f, label, 46);
		fprintf(f, "</text><rect class=\"vp-cbar%s\" data-value=\"%.3f\" x=\"%.1f\" "
			   "y=\"%.1f\" width=\"%.1f\" height=\"14\"/><text x=\"%.1f\" "
			   "y=\"%.1f\">%.1f%%</text>\n",
			pct < 0 ? " vp-neg" : "", pct, fmin(x, zero), y + 2, fabs(x - zero),
			fmax(x, zero) + 4, y + 13, fabs(pct) < 0.05 ? 0.0 : pct);
	}
	fprintf(f, "<path class=\"vp-axis\" d=\"M%.1f 0 V%ld\"/>\n</svg>\n</figure>\n", zero,
		20 * (rows + (dim > rows)) + 4);
	free(c);
}

static int html_cmp_variance(const void *a, const void *b, void *arg)
{
	const struct vp_cct *tree = arg;
	const struct vp_cct_node *x = &tree->nodes[*(const uint32_t *)a];
	const struct vp_cct_node *y = &tree->nodes[*(const uint32_t *)b];
	double vx = vp_covar_sum(&x->cov), vy = vp_covar_sum(&y->cov);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The covariance of a Task's contexts, the largest variance first. */
static void html_contrib(FILE *f, const struct report *r, const struct vp_vcg_node *n)
{
	uint32_t *ids = xcalloc(n->ncct + 1, sizeof(*ids)), k = 0;

	for (uint32_t i = 0; i < n->ncct; i++)
		if (r->tree->nodes[n->cct[i]].cov.dim > 1)
			ids[k++] = n->cct[i];
	qsort_r(ids, k, sizeof(*ids), html_cmp_variance, (void *)r->tree);
	if (!k)
		fputs("<p class=\"vp-note\">No probed callees: its variance is its own.</p>\n", f);
	for (uint32_t i = 0; i < k && i < HTML_MAX_CONTEXTS; i++)
		html_contrib_node(f, r, ids[i]);
	if (k > HTML_MAX_CONTEXTS)
		fprintf(f, "<p class=\"vp-note\">%" PRIu32 " more contexts with callees.</p>\n",
			k - HTML_MAX_CONTEXTS);
	free(ids);
}

static void html_task(FILE *f, const struct report *r, const struct report_html *h,
		      const struct html_task *t)
{
	const struct vp_vcg_node *n = &r->vcg->nodes[t->vcg];
	static const struct {
		const char *name;
		double q;
	} ps[] = { { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p99.9", 0.999 } };
	struct html_slow *slow = NULL;
	size_t nslow;

	fprintf(f, "<article class=\"vp-task\" id=\"vp-task-%" PRIu32 "\" data-vcg=\"%" PRIu32
		   "\" data-pattern=\"%" PRIu32 "\">\n<h3>Pattern %" PRIu32 ", (%" PRIu32 ") ",
		t->vcg, t->vcg, n->pattern + 1, n->pattern + 1, t->vcg);
	html_vcg_label(f, r, t->vcg, 0);
	fprintf(f, "</h3>\n<p class=\"vp-stats\">N %" PRIu64 " &middot; mean ", n->stats.n);
	html_time(f, r, n->stats.mean);
	fputs(" &middot; &sigma; ", f);
	html_time(f, r, vp_stats_stddev(&n->stats));
	fprintf(f, " &middot; CoV %.3f &middot; VIM ", vp_stats_cov(&n->stats));
	html_time(f, r, n->vim);
	if (t->hist.n) {
		for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
			fprintf(f, " &middot; %s ", ps[i].name);
			html_time(f, r, (double)vp_hist_quantile(&t->hist, ps[i].q));
		}
		fputs(" &middot; max ", f);
		html_time(f, r, (double)t->hist.max);
	}
	fputs("</p>\n<div class=\"vp-plots\">\n", f);
	nslow = html_task_slow(r, n, &slow);
	html_hist(f, r, &t->hist);
	html_timeline(f, r, h, t, slow, nslow);
	fputs("</div>\n", f);
	html_slowest(f, r, n, slow, nslow);
	free(slow);
	html_contrib(f, r, n);
	html_contexts(f, r, n);
	fputs("</article>\n", f);
}

static void html_tasks(FILE *f, const struct report *r, const struct report_html *h)
{
	fprintf(f, "<section id=\"vp-tasks\">\n<h2>Tasks</h2>\n<p class=\"vp-note\">Where the "
		   "variance is observed: per Task of the graph, its durations (p50 and p99 "
		   "marked), its calls over time, and how its calling contexts' variance "
		   "splits among their callees.</p>\n");
	if (!h->ntasks)
		fputs("<p>(none)</p>\n", f);
	for (size_t i = 0; i < h->ntasks; i++)
		html_task(f, r, h, &h->tasks[i]);
	if (h->more_tasks)
		fprintf(f, "<p class=\"vp-note\">%zu more Tasks not drawn (the text report lists "
			   "them).</p>\n",
			h->more_tasks);
	fputs("</section>\n", f);
}

/* ---- what the text report says first ---- */

/* The warnings the command printed, and what the end of the file says. */
static void html_warnings(FILE *f, const struct report *r, const struct report_html *h)
{
	const struct vp_trailer *tr = r->trailer;
	size_t n = h ? h->nwarnings : 0;
	int interrupted = tr->present && (tr->flags & VP_END_INTERRUPTED);

	fprintf(f, "<section id=\"vp-warnings\" data-warnings=\"%zu\">\n<h2>Warnings</h2>\n",
		n + interrupted);
	if (!n && !interrupted) {
		fputs("<p class=\"vp-note\">None.</p>\n</section>\n", f);
		return;
	}
	fputs("<ul class=\"vp-warnings\">\n", f);
	for (size_t i = 0; i < n; i++) {
		fputs("<li class=\"vp-warning\">", f);
		html_put(f, h->warnings[i]);
		fputs("</li>\n", f);
	}
	if (interrupted)
		fputs("<li class=\"vp-warning\">The recording was interrupted by a signal to "
		      "varperf: it is complete up to there.</li>\n",
		      f);
	fputs("</ul>\n</section>\n", f);
}

/* A chain of calls, a run of three or more equal elements once with its count. */
static void html_elems(FILE *f, const struct report *r, const struct vp_chain_elem *e, size_t n,
		       const char *sep)
{
	char cs[512];

	for (size_t i = 0, k; i < n; i = k) {
		for (k = i + 1; k < n && e[k].func == e[i].func && e[k].callsite == e[i].callsite;
		     k++)
			;
		if (k - i < 3)
			k = i + 1;
		if (i)
			fputs(sep, f);
		html_put(f, report_func_name(r, e[i].func));
		if (*report_callsite_str(r, e[i].callsite, 1, cs, sizeof(cs))) {
			fputs(" [", f);
			html_put(f, cs);
			fputc(']', f);
		}
		if (k - i >= 3)
			fprintf(f, " &times;%zu", k - i);
	}
}

static void html_pattern_row(FILE *f, const struct report *r, size_t rank,
			     const struct vp_pattern *p)
{
	const struct vp_analysis *an = r->an;
	struct vp_hist h;

	fprintf(f, "<tr class=\"vp-pattern-row\" data-rank=\"%zu\" data-n=\"%" PRIu64 "\"><td>%zu"
		   "</td><td>%.1f%%</td><td>%" PRIu64 "</td><td>",
		rank, p->stats.n, rank, an->max_vim > 0 ? 100.0 * p->vim / an->max_vim : 0.0,
		p->stats.n);
	html_time(f, r, p->stats.mean);
	fputs("</td><td>", f);
	html_time(f, r, vp_stats_stddev(&p->stats));
	fprintf(f, "</td><td>%.3f</td><td>", vp_stats_cov(&p->stats));
	html_time(f, r, p->vim);
	fputs("</td>", f);
	/* the quantiles of all its nodes' durations, their histograms merged */
	vp_hist_init(&h);
	for (size_t i = 0; i < p->nnodes; i++)
		if (p->nodes[i] < r->tree->nnodes &&
		    vp_hist_merge(&h, &r->tree->nodes[p->nodes[i]].hist) < 0)
			h.n = 0;
	for (int i = 0; i < 3; i++) {
		fputs("<td>", f);
		if (h.n)
			html_time(f, r,
				  i == 2 ? (double)h.max
					 : (double)vp_hist_quantile(&h, i ? 0.99 : 0.5));
		fputs("</td>", f);
	}
	vp_hist_release(&h);
	fputs("<td class=\"vp-name\">", f);
	html_elems(f, r, p->chain, p->len, " &rarr; ");
	if (p->nthrough) {
		fputs(" &rArr; ", f);
		html_elems(f, r, p->through, p->nthrough, " &rArr; ");
	}
	fputs("</td></tr>\n", f);
}

/* The Pattern Set (Kumar and Pande, §5): the call chains ranked by VIM. */
static void html_patterns(FILE *f, const struct report *r)
{
	const struct vp_analysis *an = r->an;
	size_t nset = 0, nrel = an->npatterns - an->nunreliable;

	for (size_t i = 0; i < an->npatterns; i++)
		nset += an->patterns[i].in_pattern_set != 0;
	fprintf(f, "<section id=\"vp-patterns\" data-patterns=\"%zu\">\n<h2>Pattern Set</h2>\n"
		   "<p class=\"vp-note\">The call chains whose variance matters most: ranked by "
		   "their variance impact (VIM = k &sigma; N, k = %.1f), those from %g%% of the "
		   "largest; share: of the largest VIM.</p>\n",
		nset, an->k, 100.0 * an->params.beta);
	if (!an->npatterns) {
		if (report_no_calls(r))
			fprintf(f, "<p>(none: %s)</p>\n</section>\n", report_no_calls(r));
		else
			fprintf(f, "<p>(none: no significant node has CoV &ge; %g)</p>\n</section>\n",
				an->cov_threshold);
		return;
	}
	fputs("<div class=\"vp-wide\"><table class=\"vp-table\"><thead><tr><th>rank</th><th>share</th><th>N</th>"
	      "<th>mean</th><th>&sigma;</th><th>CoV</th><th>VIM</th><th>p50</th><th>p99</th>"
	      "<th>max</th><th class=\"vp-name\">call chain</th></tr></thead>\n<tbody>\n",
	      f);
	for (size_t i = 0; i < an->npatterns; i++)
		if (an->patterns[i].in_pattern_set || (r->all && i < nrel))
			html_pattern_row(f, r, i + 1, &an->patterns[i]);
	fputs("</tbody></table></div>\n", f);
	if (!nrel)
		fputs("<p class=\"vp-note\">(none: every pattern is unreliable)</p>\n", f);
	if (an->nfolded)
		fprintf(f, "<p class=\"vp-note\">&rArr;: pass-through callees (as many calls as "
			   "their caller, %g%% to %g%% of its variance): %zu pattern%s folded.</p>\n",
			100 * VP_PASS_THROUGH_SHARE, 100 * (2 - VP_PASS_THROUGH_SHARE), an->nfolded,
			an->nfolded == 1 ? "" : "s");
	if (nset < nrel && !r->all)
		fprintf(f, "<p class=\"vp-note\">%zu other pattern%s not in the Pattern Set "
			   "(--all lists them).</p>\n",
			nrel - nset, nrel - nset == 1 ? " is" : "s are");
	if (an->nunreliable)
		fprintf(f, "<p class=\"vp-note\">%zu unreliable pattern%s (mean under 10 times "
			   "the probes' cost inside) not ranked.</p>\n",
			an->nunreliable, an->nunreliable == 1 ? "" : "s");
	fputs("</section>\n", f);
}

/*
 * The cells of node @id's preempted and blocked time (means, shares of
 * the variance) and its top waits, then the name's cell opened; the
 * means as data- attributes for tests.
 */
static void html_offcpu_split(FILE *f, const struct report *r, uint32_t id,
			      const struct vp_offcpu_split *sp)
{
	struct vp_cct_wait w[VP_CCT_WAITS + 1];
	size_t nw = sp->has_blocked ? vp_cct_waits_sorted(r->tree, id, w) : 0;
	char name[64];

	fputs("<td class=\"vp-preempted\"", f);
	if (sp->has_blocked)
		fprintf(f, " data-mean=\"%.17g\">", sp->preempted_mean);
	else
		fputs(">", f);
	if (sp->has_blocked) {
		html_time(f, r, sp->preempted_mean);
		if (sp->wall_var > 0)
			fprintf(f, " (%.1f%%)", 100 * sp->preempted_share);
	}
	fputs("</td><td class=\"vp-blocked\"", f);
	if (sp->has_blocked)
		fprintf(f, " data-mean=\"%.17g\">", sp->blocked_mean);
	else
		fputs(">", f);
	if (sp->has_blocked) {
		html_time(f, r, sp->blocked_mean);
		if (sp->wall_var > 0)
			fprintf(f, " (%.1f%%)", 100 * sp->blocked_share);
	}
	fputs("</td><td class=\"vp-waits\">", f);
	for (size_t i = 0; i < nw && i < 3; i++) {
		if (!w[i].ns)
			continue;
		fputs(i ? ", " : "", f);
		html_put(f, w[i].reason == UINT32_MAX
				    ? "other"
				    : vp_wait_reason_name(r->hdr, w[i].reason, name, sizeof(name)));
		fputs(" ", f);
		html_time(f, r, (double)w[i].ns);
	}
	fputs("</td><td class=\"vp-name\">", f);
}

/*
 * How much of the variance is off-CPU time (preemption, blocking): for
 * the outermost high-variance nodes, as report_offcpu_share() counts,
 * their means on and off the CPU and the share of their variance that is
 * off-CPU time (its variance and its covariance with the on-CPU time).
 */
static void html_offcpu(FILE *f, const struct report *r)
{
	const struct vp_analysis *an = r->an;
	size_t nnodes = r->tree->nnodes < an->nnodes ? r->tree->nnodes : an->nnodes, rows = 0;
	uint8_t *below;
	double share;
	char label[600];

	if (!r->tree->offcpu)
		return;
	fputs("<section id=\"vp-offcpu\">\n<h2>Off-CPU time</h2>\n", f);
	if (r->time == VP_TIME_WALL && report_offcpu_share(r, &share))
		fprintf(f, "<p class=\"vp-offcpu-share\" data-share=\"%.4f\">%.0f%% of the "
			   "high-variance nodes' variance is off-CPU time (preemption, blocking)"
			   "%s.</p>\n",
			share, 100 * share, share > 0.5 ? ", not code" : "");
	fputs("<div class=\"vp-wide\"><table class=\"vp-table\"><thead><tr><th>N</th><th>mean</th><th>on-CPU</th>"
	      "<th>off-CPU</th><th>&sigma;</th><th>off-CPU share of the variance</th><th></th>",
	      f);
	/* version 5: off-CPU time split, preempted (the machine's doing)
	 * and blocked (asleep: the program's), and what it slept in */
	if (r->tree->blocked)
		fputs("<th title=\"runnable but off the CPU: the machine's doing\">preempted</th>"
		      "<th title=\"asleep: I/O, a lock, a sleep\">blocked</th><th>waits</th>",
		      f);
	fputs("<th class=\"vp-name\">calling context</th></tr></thead>\n<tbody>\n", f);
	below = xcalloc(nnodes ? nnodes : 1, 1);
	for (uint32_t id = 1; id < nnodes && rows < HTML_OFFCPU_ROWS; id++) {
		const struct vp_cct_node *n = &r->tree->nodes[id];
		struct vp_offcpu_split sp;
		double off;

		if (n->parent != VP_NODE_ROOT && n->parent < nnodes)
			below[id] = below[n->parent] || an->high_variance[n->parent];
		if (!an->high_variance[id] || below[id] ||
		    vp_cct_offcpu_split(r->tree, id, &sp) < 0)
			continue;
		off = sp.wall_var > 0 ? sp.off_share : 0;
		fprintf(f, "<tr class=\"vp-offcpu-row\" data-node=\"%" PRIu32 "\"><td>%" PRIu64
			   "</td><td>",
			id, sp.n);
		html_time(f, r, sp.wall_mean);
		fputs("</td><td>", f);
		html_time(f, r, sp.on_mean);
		fputs("</td><td>", f);
		html_time(f, r, sp.off_mean);
		fputs("</td><td>", f);
		html_time(f, r, sqrt(fmax(sp.wall_var, 0)));
		fprintf(f, "</td><td>%.1f%%</td><td><span class=\"vp-split\" title=\"on-CPU "
			   "(blue) and off-CPU (brown) shares of the variance\"><span "
			   "style=\"width:%.1f%%\"></span></span></td>",
			100 * off, 100 * fmin(fmax(off, 0), 1));
		if (r->tree->blocked)
			html_offcpu_split(f, r, id, &sp);
		else
			fputs("<td class=\"vp-name\">", f);
		html_put(f, report_node_label(r, id, label, sizeof(label)));
		fputs("</td></tr>\n", f);
		rows++;
	}
	free(below);
	fputs("</tbody></table></div>\n</section>\n", f);
}

/* Links to the sections the page has. */
static void html_nav(FILE *f, const struct report *r, int graph)
{
	fputs("<nav class=\"vp-nav\">", f);
	fputs("<a href=\"#vp-warnings\">Warnings</a>", f);
	if (graph) {
		fputs(" &middot; <a href=\"#vp-patterns\">Pattern Set</a>", f);
		if (r->tree->offcpu)
			fputs(" &middot; <a href=\"#vp-offcpu\">Off-CPU time</a>", f);
		fputs(" &middot; <a href=\"#vp-vcg\">Graph</a> &middot; <a href=\"#vp-tasks\">"
		      "Tasks and their slowest calls</a>",
		      f);
	}
	if (r->sampled)
		fputs(" &middot; <a href=\"#vp-flame\">Flame graph</a> &middot; <a "
		      "href=\"#vp-sampled\">Sampled contexts</a>",
		      f);
	fputs("</nav>\n", f);
}

/* ---- the sampled tree ---- */

static int html_shown(const struct report *r, uint32_t id)
{
	const struct vp_snode *n = &r->sampled->nodes[id];

	if (!n->samples)
		return 0;
	return r->all || (double)n->samples >= HTML_SHOW_SHARE * (double)r->sampled->samples;
}

static void html_share(FILE *f, const struct report *r, uint64_t k)
{
	struct vp_share sh;

	vp_share(k, r->sampled->samples, r->z, &sh);
	fprintf(f, "<td>%.1f%%</td><td>[%.1f, %.1f]%s</td>", sh.p * 100, sh.lo * 100, sh.hi * 100,
		sh.half > r->precision ? "~" : "");
}

static void html_srow(FILE *f, const struct report *r, uint32_t id)
{
	const struct vp_snode *n = &r->sampled->nodes[id];
	uint32_t pn = r->probed_of ? r->probed_of[id] : VP_NO_NODE;
	uint32_t depth = n->depth - 1;
	char site[512];

	fprintf(f, "<tr class=\"vp-srow\" data-depth=\"%" PRIu32 "\" style=\"--d:%d\">", depth,
		depth > HTML_MAX_INDENT ? HTML_MAX_INDENT : (int)depth);
	html_share(f, r, n->samples);
	if (n->self)
		html_share(f, r, n->self);
	else
		fputs("<td></td><td></td>", f);
	if (pn != VP_NO_NODE) {
		const struct vp_cct_node *c = &r->tree->nodes[pn];

		fprintf(f, "<td>%" PRIu64 "</td><td>", c->stats.n);
		html_time(f, r, c->stats.mean);
		fprintf(f, "</td><td>%.2f</td>", vp_stats_cov(&c->stats));
	} else {
		fputs("<td></td><td></td><td></td>", f);
	}
	fputs("<td class=\"vp-name\">", f);
	if (depth > HTML_MAX_INDENT)
		fprintf(f, "[depth %" PRIu32 "] ", depth);
	html_put(f, report_snode_name(r, id));
	if (report_snode_inlined(r, id))
		fputs(" (inlined)", f);
	if (*report_snode_site(r, id, site, sizeof(site))) {
		fputs(" [", f);
		html_put(f, site);
		fputc(']', f);
	}
	fputs("</td></tr>\n", f);
}

static int html_cmp_samples(const void *a, const void *b, void *arg)
{
	const struct vp_sampled *tree = arg;
	const struct vp_snode *x = &tree->nodes[*(const uint32_t *)a];
	const struct vp_snode *y = &tree->nodes[*(const uint32_t *)b];

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Depth first, the busiest child first; an explicit stack for deep trees. */
static void html_stree(FILE *f, const struct report *r)
{
	const struct vp_sampled *t = r->sampled;
	size_t n = 0, cap = 64;
	uint32_t *stack = xmalloc(cap * sizeof(*stack));

	stack[n++] = 0;
	while (n) {
		uint32_t id = stack[--n];
		const struct vp_snode *s = &t->nodes[id];
		size_t first;

		if (id && !html_shown(r, id))
			continue;
		if (id)
			html_srow(f, r, id);
		if (!s->nchildren)
			continue;
		while (n + s->nchildren > cap) {
			cap *= 2;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		first = n;
		memcpy(stack + n, s->children, s->nchildren * sizeof(*stack));
		n += s->nchildren;
		qsort_r(stack + first, s->nchildren, sizeof(*stack), html_cmp_samples, (void *)t);
		for (size_t a = first, b = n; a + 1 < b; a++, b--) {
			uint32_t x = stack[a];

			stack[a] = stack[b - 1];
			stack[b - 1] = x;
		}
	}
	free(stack);
}

static void html_sampled(FILE *f, const struct report *r)
{
	const struct vp_sampled *t = r->sampled;

	fprintf(f, "<section id=\"vp-sampled\">\n<h2>Sampled calling contexts</h2>\n"
		   "<p class=\"vp-note\">%" PRIu64 " samples of %s every ",
		t->samples, vp_sample_event_name(r->hdr->sampling.event));
	if (r->hdr->sampling.period && !t->period_varies)
		html_time(f, r, (double)r->hdr->sampling.period);
	else
		fputs("(varying period)", f);
	fprintf(f, "; shares with %g%% intervals (Schneider, \"Analysis\"), ~ where wider than "
		   "&plusmn;%g%%; N, mean and CoV exact where the function was probed%s. "
		   "&#9662; folds a row's callees.</p>\n",
		r->confidence * 100, r->precision * 100,
		r->all ? "" : "; shares from 0.5% up");
	if (!t->samples) {
		fputs("<p>(no samples)</p>\n</section>\n", f);
		return;
	}
	fputs("<div class=\"vp-wide\"><table class=\"vp-stree\"><thead><tr><th>total</th><th>interval</th><th>self</th>"
	      "<th>interval</th><th>N</th><th>mean</th><th>CoV</th>"
	      "<th class=\"vp-name\">calling context</th></tr></thead>\n<tbody>\n",
	      f);
	html_stree(f, r);
	fputs("</tbody></table></div>\n</section>\n", f);
}

int report_html(const struct report *r)
{
	const struct report_html *h = r->html;
	FILE *f = r->out;
	int graph;

	/* the page fetches nothing, and says so: a browser refuses (and logs)
	 * whatever would try */
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>varperf report of ",
	      f);
	html_put(f, r->input);
	/* two plots side by side in a Task */
	fprintf(f, "</title>\n<style>%s%s.vp-plots figure{flex:0 0 auto;width:%dpx}</style>\n"
		   "</head>\n<body>\n",
		html_style, html_flame_style, HTML_MARGIN_L + HTML_PLOT_W + HTML_MARGIN_R);
	html_header(f, r);
	graph = r->vcg && (r->hdr->nfuncs || !r->sampled);
	html_nav(f, r, graph);
	html_warnings(f, r, h);
	if (graph) {
		html_patterns(f, r);
		html_offcpu(f, r);
		html_vcg(f, r);
		if (h)
			html_tasks(f, r, h);
	}
	if (r->sampled) {
		html_flame(f, r);
		html_sampled(f, r);
	}
	fprintf(f, "<footer><p class=\"vp-note\">%s %s</p></footer>\n<script>\n%s</script>\n"
		   "</body>\n</html>\n",
		PACKAGE_NAME, PACKAGE_VERSION, html_script);
	return ferror(f) ? -1 : 0;
}
