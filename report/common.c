/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * common.c - what every renderer says the same way: function names, call
 * sites, node labels, times in the file's unit, the processes of a
 * recording, and names from the binary made safe for a terminal.
 */
#include <config.h>

#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "core/cct.h"
#include "core/compare.h"
#include "core/datafile.h"
#include "core/patterns.h"
#include "core/recording.h"
#include "core/sampled.h"
#include "report.h"
#include "util/escape.h"
#include "util/util.h"

/*
 * The locale's character set, asked once: a terminal or file that is not
 * UTF-8 (LC_ALL=C, a serial console) gets ASCII.  newlocale(), not
 * setlocale(): the check leaves the program's locale as it is.
 */
int report_utf8(void)
{
	static int utf8 = -1;

	if (utf8 < 0) {
		locale_t loc = newlocale(LC_CTYPE_MASK, "", (locale_t)0);

		utf8 = loc && !strcmp(nl_langinfo_l(CODESET, loc), "UTF-8");
		if (loc)
			freelocale(loc);
	}
	return utf8;
}

const char *report_sym(enum report_sym s)
{
	static const char *const sym[][2] = {
		[SYM_ARROW] = { " -> ", " \xe2\x86\x92 " },
		[SYM_THROUGH] = { " => ", " \xe2\x87\x92 " },
		[SYM_BACK] = { "<-", "\xe2\x86\xb0" },
		[SYM_TIMES] = { " x", " \xc3\x97" },
		[SYM_APPROX] = { "~", "\xe2\x89\x88" },
		[SYM_DASH] = { "-", "\xe2\x80\x94" },
		[SYM_ELLIPSIS] = { "...", "\xe2\x80\xa6" },
		[SYM_SQUARED] = { "^2", "\xc2\xb2" },
		[SYM_PLUSMINUS] = { "+-", "\xc2\xb1" },
	};

	return sym[s][report_utf8()];
}

/*
 * Columns of a character on a terminal: 2 for the East Asian wide and
 * full-width ranges, 0 for combining marks and zero-width spaces, else 1
 * (Unicode's East_Asian_Width W and F, and Mn, in the blocks names use).
 */
static int char_width(uint32_t c)
{
	static const uint32_t zero[][2] = {
		{ 0x0300, 0x036f }, { 0x0483, 0x0489 }, { 0x0591, 0x05bd }, { 0x0610, 0x061a },
		{ 0x064b, 0x065f }, { 0x200b, 0x200f }, { 0x20d0, 0x20ff }, { 0xfe00, 0xfe0f },
		{ 0xfe20, 0xfe2f }, { 0xfeff, 0xfeff },
	};
	static const uint32_t two[][2] = {
		{ 0x1100, 0x115f }, { 0x2e80, 0x303e }, { 0x3041, 0x33ff }, { 0x3400, 0x4dbf },
		{ 0x4e00, 0x9fff }, { 0xa000, 0xa4cf }, { 0xac00, 0xd7a3 }, { 0xf900, 0xfaff },
		{ 0xfe30, 0xfe4f }, { 0xff00, 0xff60 }, { 0xffe0, 0xffe6 }, { 0x1f300, 0x1f64f },
		{ 0x1f900, 0x1f9ff }, { 0x20000, 0x3fffd },
	};

	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
		if (c >= zero[i][0] && c <= zero[i][1])
			return 0;
	for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++)
		if (c >= two[i][0] && c <= two[i][1])
			return 2;
	return 1;
}

size_t report_char_at(const char *s, size_t len, int *cols)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c = u[0];
	size_t n = 1;

	if (c >= 0xc0 && c < 0xf8) {
		size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;

		c &= 0x3f >> (want - 1);
		while (n < want && n < len && (u[n] & 0xc0) == 0x80)
			c = c << 6 | (u[n++] & 0x3f);
		if (n < want) {
			*cols = 1; /* not UTF-8: the bytes print as '?' each */
			return 1;
		}
	}
	*cols = c < 0x80 ? 1 : char_width(c);
	return n;
}

size_t report_text_width(const char *s, size_t len)
{
	size_t w = 0;

	for (size_t i = 0; i < len;) {
		int c;

		i += report_char_at(s + i, len - i, &c);
		w += (size_t)c;
	}
	return w;
}

const char *report_fit(const char *s, size_t cols, char *buf, size_t len)
{
	const char *dots = report_sym(SYM_ELLIPSIS);
	size_t n = strlen(s), dw = report_text_width(dots, strlen(dots));
	size_t head = 0, hw = 0, tail = n, tw = 0, at = 0;

	if (report_text_width(s, n) <= cols || cols <= dw + 2 || len < 8)
		return s;
	/* the head gets the larger half: a name's start tells most */
	while (head < n) {
		int c;
		size_t k = report_char_at(s + head, n - head, &c);

		if (hw + (size_t)c > (cols - dw + 1) / 2)
			break;
		head += k;
		hw += (size_t)c;
	}
	/* the tail: whole characters back from the end */
	while (tail > head) {
		size_t b = tail - 1;
		int c;

		while (b > head && ((unsigned char)s[b] & 0xc0) == 0x80)
			b--;
		report_char_at(s + b, n - b, &c);
		if (hw + dw + tw + (size_t)c > cols)
			break;
		tail = b;
		tw += (size_t)c;
	}
	if (head + strlen(dots) + (n - tail) >= len)
		return s;
	memcpy(buf, s, head);
	at = head;
	memcpy(buf + at, dots, strlen(dots));
	at += strlen(dots);
	memcpy(buf + at, s + tail, n - tail);
	buf[at + n - tail] = '\0';
	return buf;
}

void report_put_chain(FILE *f, const char *chain, const char *sep, size_t cols)
{
	const char *dots = report_sym(SYM_ELLIPSIS), *first_end, *tail;
	size_t n = strlen(chain), ls = strlen(sep), head, room;

	first_end = strstr(chain, sep);
	if (!cols || report_text_width(chain, n) <= cols || !first_end) {
		report_put(f, chain);
		return;
	}
	head = report_text_width(chain, (size_t)(first_end - chain)) +
	       2 * report_text_width(sep, ls) + report_text_width(dots, strlen(dots));
	room = cols > head ? cols - head : 0;
	/* the last elements that fit, at least the innermost */
	tail = NULL;
	for (const char *at = chain + n; at > first_end;) {
		const char *p = at - ls;

		while (p > first_end && strncmp(p, sep, ls))
			p--;
		if (p <= first_end)
			break;
		if (tail && report_text_width(p + ls, n - (size_t)(p + ls - chain)) > room)
			break;
		tail = p + ls;
		at = p;
	}
	if (!tail || tail - ls <= first_end + ls) {
		report_put(f, chain);
		return;
	}
	vp_term_putn(f, chain, (size_t)(first_end - chain));
	fputs(sep, f);
	fputs(dots, f);
	fputs(sep, f);
	report_put(f, tail);
}

void report_vim_words(const struct report *r)
{
	fprintf(r->out,
		"  VIM (Variability Impact Metric) = k sigma N: the spread of one call, k = %g\n"
		"  standard deviations, times the number of calls: time summed over the calls,\n"
		"  not a duration of the run\n",
		r->an ? r->an->k : 5.0);
}

const char *report_func_name(const struct report *r, uint32_t func)
{
	return vp_header_func_name(r->hdr, func);
}

const char *report_callsite_str(const struct report *r, uint32_t id, int short_file, char *buf,
				size_t len)
{
	return vp_callsite_twin_label(r->reader, r->callsite_twins, id, short_file, buf, len);
}

const char *report_node_label(const struct report *r, uint32_t id, char *buf, size_t len)
{
	const struct vp_cct_node *n = &r->tree->nodes[id];
	char cs[512];

	report_callsite_str(r, n->callsite, 1, cs, sizeof(cs));
	snprintf(buf, len, "%s%s%s", report_func_name(r, n->func), *cs ? "@" : "", cs);
	return buf;
}

const char *report_clock_name(uint32_t clock)
{
	/* clockid_t values of <linux/time.h>, fixed by the kernel ABI */
	static const char *const names[] = {
		[0] = "CLOCK_REALTIME",		  [1] = "CLOCK_MONOTONIC",
		[2] = "CLOCK_PROCESS_CPUTIME_ID", [3] = "CLOCK_THREAD_CPUTIME_ID",
		[4] = "CLOCK_MONOTONIC_RAW",	  [5] = "CLOCK_REALTIME_COARSE",
		[6] = "CLOCK_MONOTONIC_COARSE",	  [7] = "CLOCK_BOOTTIME",
		[11] = "CLOCK_TAI",
	};

	if (clock < sizeof(names) / sizeof(names[0]))
		return names[clock];
	return NULL;
}

const char *report_unit_name(uint32_t unit)
{
	switch (unit) {
	case VP_UNIT_NS:
		return "ns";
	case VP_UNIT_CYCLES:
		return "cycles";
	default:
		return "unknown";
	}
}

/* A time in the file's unit, in human units when that unit is ns. */
double report_mean_uncertainty(const struct report *r, uint32_t id)
{
	if (!r->compensated || !r->probe_cost || id >= r->tree->nnodes)
		return 0;
	return r->probe_cost[id] * vp_probe_rel_spread(r->hdr->costs, r->hdr->ncosts);
}

const char *report_time(const struct report *r, double v, char *buf, size_t len)
{
	if (r->hdr->unit == VP_UNIT_NS)
		return fmt_duration(v, buf, len);
	snprintf(buf, len, "%.3g cyc", v);
	return buf;
}

const char *report_time_compact(const struct report *r, double v, char *buf, size_t len)
{
	char *d = buf;

	report_time(r, v, buf, len);
	for (const char *s = buf; *s; s++)
		if (*s != ' ')
			*d++ = *s;
	*d = '\0';
	return buf;
}

/*
 * Names come from the recorded binary and its debug information: printed
 * under the terminal rule of util/escape.h, so that a hostile file cannot
 * drive the terminal.
 */
const char *report_no_calls(const struct report *r)
{
	if (!r->totals || r->totals->invocations)
		return NULL;
	return r->sampled ? "no call was timed, the recording holds samples only"
			  : "no call was timed";
}

void report_put(FILE *f, const char *s)
{
	vp_term_put(f, s);
}

static int cmp_process(const void *a, const void *b)
{
	const struct report_process *x = a, *y = b;

	/* the target first */
	if (!x->ppid != !y->ppid)
		return x->ppid ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t report_processes(const struct report *r, struct report_process **ret)
{
	size_t nt = vp_reader_nthreads(r->reader), np = vp_reader_nprocesses(r->reader), n = 0;
	struct report_process *v;
	uint64_t *pt;

	/* one process (auto mode's phase 1 may be another run: not a child) */
	if (!np)
		return 0;
	v = xcalloc(np + 1, sizeof(*v));
	v[n++] = (struct report_process){ r->hdr->pid, 0, 0, NULL };
	for (size_t i = 0; i < np; i++) {
		const struct vp_process *p = vp_reader_process(r->reader, i);
		size_t j;

		for (j = 0; j < n && v[j].pid != p->pid; j++)
			;
		if (j == n)
			v[n++] = (struct report_process){ p->pid, p->ppid, 0, NULL };
		v[j].exec = j && (p->flags & VP_PROC_EXEC) ? p->exec : NULL;
	}
	qsort(v, n, sizeof(*v), cmp_process);
	/* threads per process, each tid once (auto mode numbers it per phase) */
	pt = xcalloc(nt + 1, sizeof(*pt));
	for (size_t i = 0; i < nt; i++) {
		const struct vp_thread_info *t = vp_reader_thread(r->reader, (uint32_t)i);

		pt[i] = (uint64_t)t->pid << 32 | t->tid;
	}
	qsort(pt, nt, sizeof(*pt), cmp_u64);
	for (size_t i = 0; i < nt; i++) {
		if (i && pt[i] == pt[i - 1])
			continue;
		for (size_t j = 0; j < n; j++)
			if (v[j].pid == (uint32_t)(pt[i] >> 32))
				v[j].threads++;
	}
	free(pt);
	*ret = v;
	return n;
}

int report_offcpu_share(const struct report *r, double *ret)
{
	const struct vp_analysis *an = r->an;
	size_t nnodes = r->tree->nnodes < an->nnodes ? r->tree->nnodes : an->nnodes;
	uint8_t *below;
	double num = 0, den = 0;

	if (!r->tree->offcpu || nnodes < 2)
		return 0;
	/* a parent's id is below its children's: one pass marks the nodes
	 * inside a high-variance node, whose variance is part of its */
	below = xcalloc(nnodes, 1);
	for (uint32_t id = 1; id < nnodes; id++) {
		const struct vp_cct_node *n = &r->tree->nodes[id];
		struct vp_offcpu_split sp;

		if (n->parent != VP_NODE_ROOT && n->parent < nnodes)
			below[id] = below[n->parent] || an->high_variance[n->parent];
		if (!an->high_variance[id] || below[id] ||
		    vp_cct_offcpu_split(r->tree, id, &sp) < 0)
			continue;
		num += (double)sp.n * (sp.off_var + sp.cov);
		den += (double)sp.n * sp.wall_var;
	}
	free(below);
	if (!(den > 0))
		return 0;
	*ret = num / den;
	return 1;
}

/* ---- sampled nodes ---- */

const char *report_snode_name(const struct report *r, uint32_t id)
{
	const struct vp_snode *n = &r->sampled->nodes[id];
	const struct vp_symbol *s;

	switch (n->kind) {
	case VP_SNODE_KERNEL:
		return "[kernel]";
	case VP_SNODE_INCOMPLETE:
		return "[incomplete stacks]";
	case VP_SNODE_CUT:
		return "[deeper levels cut]";
	case VP_SNODE_ROOT:
		return "[root]";
	default:
		s = vp_reader_symbol(r->reader, n->symbol);
		return s ? s->display : "?";
	}
}

int report_snode_inlined(const struct report *r, uint32_t id)
{
	const struct vp_snode *n = &r->sampled->nodes[id];
	const struct vp_symbol *s = NULL;

	if (n->kind == VP_SNODE_FUNC)
		s = vp_reader_symbol(r->reader, n->symbol);

	return s && (s->flags & VP_SYM_INLINE);
}

const char *report_snode_site(const struct report *r, uint32_t id, char *buf, size_t len)
{
	const struct vp_snode *n = &r->sampled->nodes[id];
	const struct vp_frame_def *f;
	const struct vp_frame_level *l;
	const char *base;

	buf[0] = '\0';
	if (n->site_frame == VP_SNODE_NONE)
		return buf;
	f = vp_reader_frame(r->reader, n->site_frame);
	if (!f || n->site_level >= f->nlevels)
		return buf;
	l = &f->levels[n->site_level];
	if (l->file && *l->file && l->line) {
		base = strrchr(l->file, '/');
		snprintf(buf, len, "%s:%" PRIu32, base ? base + 1 : l->file, l->line);
	} else {
		const struct vp_symbol *s = vp_reader_symbol(r->reader, l->symbol);

		snprintf(buf, len, "%s", s ? s->display : "?");
	}
	return buf;
}

/* ---- compare: the words both of its renderers use ---- */

const char *report_compare_status(const struct vp_compare_pattern *cp)
{
	if (cp->in_set_a && cp->in_set_b)
		return "kept";
	if (cp->in_set_a)
		return "left";
	if (cp->in_set_b)
		return "entered";
	return "other";
}

const char *report_compare_change(uint32_t change)
{
	static const char *const changes[] = {
		[VP_CTX_SAME] = "same",
		[VP_CTX_NEW] = "new",
		[VP_CTX_VANISHED] = "vanished",
		[VP_CTX_UNSURE] = "unsure",
	};

	return change < sizeof(changes) / sizeof(changes[0]) ? changes[change] : "?";
}

const char *report_program_path(const struct report *r)
{
	const struct vp_header *h = r->hdr;

	return h->nmodules && h->modules[0].path ? h->modules[0].path : "?";
}

const struct vp_stats *report_node_stats(const struct report *r, uint32_t id)
{
	return id != VP_NO_NODE ? &r->tree->nodes[id].stats : NULL;
}

void report_init(struct report *r, const char *input, const struct vp_recording *rec)
{
	memset(r, 0, sizeof(*r));
	r->input = input;
	r->reader = rec->reader;
	r->hdr = rec->hdr;
	r->trailer = rec->trailer;
	r->tree = &rec->tree;
	r->totals = &rec->totals;
	r->an = &rec->an;
	r->lost = rec->lost;
	r->clamped = rec->clamped;
	r->clamped_max = rec->clamped_max;
	r->compensated = rec->compensated;
	r->time = rec->time;
	r->time_auto = rec->time_auto;
	r->preempted_share = rec->preempted_share;
	r->pid = rec->pid;
	r->sampled = rec->sampled;
	r->probe_cost = rec->probe_cost;
	r->callsite_twins = rec->callsite_twins;
}

/* "7.8 GB": @bytes in decimal units, as df -H and ls -lh --si say them. */
static const char *report_bytes(double bytes, char *buf, size_t len)
{
	static const char *const units[] = { "bytes", "kB", "MB", "GB", "TB", "PB" };
	int u = 0;

	while (u < 5 && bytes >= 1000) {
		bytes /= 1000;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
	return buf;
}

int report_output_size(const struct report *r, const char *what, double bytes)
{
	struct stat in, out;
	struct statvfs vfs;
	char want[32], room[32];
	int fd = r->out ? fileno(r->out) : -1;
	int input_file = stat(r->input, &in) == 0 && S_ISREG(in.st_mode);

	/* a file that cannot hold it: before a byte is written */
	if (fd >= 0 && fstat(fd, &out) == 0 && S_ISREG(out.st_mode) && fstatvfs(fd, &vfs) == 0 &&
	    bytes > (double)vfs.f_bavail * (double)vfs.f_frsize) {
		error("'%s': the %s would take about %s, more than the %s free where it goes",
		      r->input, what, report_bytes(bytes, want, sizeof(want)),
		      report_bytes((double)vfs.f_bavail * (double)vfs.f_frsize, room, sizeof(room)));
		return -2;
	}
	if (bytes > REPORT_OUTPUT_LARGE ||
	    (bytes > REPORT_OUTPUT_LARGE / 16 && input_file &&
	     bytes > REPORT_OUTPUT_RATIO * (double)in.st_size)) {
		if (input_file && in.st_size > 0)
			warning("'%s': the %s will take about %s, %.0f times the data file", r->input,
				what, report_bytes(bytes, want, sizeof(want)),
				bytes / (double)in.st_size);
		else
			warning("'%s': the %s will take about %s", r->input, what,
				report_bytes(bytes, want, sizeof(want)));
	}
	return 0;
}
