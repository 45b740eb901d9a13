/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * report-sampled.c - the sampled side of `varperf report`: the sampled
 * calling-context tree with a confidence interval on every share (Schneider,
 * "Analysis"), sample-derived durations where invocations span enough samples,
 * and the exact statistics of the probed nodes the sampled ones are.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cct.h"
#include "core/sampled.h"
#include "report.h"
#include "util/util.h"

/* Show a sampled node from this share up (all with --all). */
static const double SHOW_SHARE = 0.005;

enum {
	/* Sample-derived durations need this many invocations, each spanning
	 * this many samples on average: a duration counts whole periods, so
	 * one period is the error of one invocation. */
	SDUR_MIN_INVOCATIONS = 10,
	SDUR_MIN_SPAN = 5,
	MAX_INDENT = 24,
	/* the default table fits this many columns (--wide: every column) */
	TABLE_WIDTH = 100,
	/* its columns after the calling context: two shares with the half
	 * width of their intervals, then N, mean and CoV (probed) or spans,
	 * ~CPU/span and ~CoV (sampled) */
	NUMBERS_WIDTH = 2 * 15 + 27,
	NAME_WIDTH = TABLE_WIDTH - 2 - NUMBERS_WIDTH,
};

int report_sdur(const struct report *r, uint32_t id, struct vp_sdur *ret)
{
	vp_sampled_durations(r->sampled, id, ret);
	/* A period of time (not of cycles) the same for every sample. */
	return r->hdr->sampling.period && ret->mean > 0 &&
	       ret->invocations >= SDUR_MIN_INVOCATIONS && ret->mean_span >= SDUR_MIN_SPAN;
}

int report_node_unreliable(const struct report *r, uint32_t id)
{
	return vp_cct_unreliable(r->tree, r->probe_cost, id);
}

static int shown(const struct report *r, uint32_t id)
{
	const struct vp_snode *n = &r->sampled->nodes[id];

	if (!n->samples)
		return 0;
	return r->all || (double)n->samples >= SHOW_SHARE * (double)r->sampled->samples;
}

/* Whether a share of @k samples is wider than asked; the widest in @max. */
static int wide(const struct report *r, uint64_t k, double *max_half)
{
	struct vp_share sh;

	vp_share(k, r->sampled->samples, r->z, &sh);
	if (sh.half <= r->precision)
		return 0;
	if (sh.half > *max_half)
		*max_half = sh.half;
	return 1;
}

static size_t text_tree_fitted(const struct report *r, double *max_half, int print);

size_t report_sampled_wide_rows(const struct report *r, double *max_half)
{
	*max_half = 0;
	if (r->wide)
		return report_sampled_wide(r, max_half);
	return text_tree_fitted(r, max_half, 0);
}

size_t report_sampled_wide(const struct report *r, double *max_half)
{
	const struct vp_sampled *t = r->sampled;
	size_t n = 0;

	*max_half = 0;
	for (uint32_t id = 1; id < t->nnodes; id++) {
		if (!shown(r, id))
			continue;
		n += wide(r, t->nodes[id].samples, max_half);
		if (t->nodes[id].self)
			n += wide(r, t->nodes[id].self, max_half);
	}
	return n;
}

/* ---- which probed node a sampled one is ---- */

static int cmp_func_addr(const void *a, const void *b, void *arg)
{
	const struct vp_func *funcs = arg;
	uint64_t x = funcs[*(const uint32_t *)a].addr;
	uint64_t y = funcs[*(const uint32_t *)b].addr;

	return x < y ? -1 : x > y;
}

/* The probed function sampled symbol @sym is, or UINT32_MAX; @by_addr:
 * the header's functions sorted by address. */
static uint32_t probed_func(const struct report *r, const uint32_t *by_addr, uint32_t sym)
{
	const struct vp_symbol *s = vp_reader_symbol(r->reader, sym);
	const struct vp_module *m;
	size_t lo = 0, hi = r->hdr->nfuncs;

	if (!s || (s->flags & (VP_SYM_INLINE | VP_SYM_NONAME)) || s->module < 0)
		return UINT32_MAX;
	m = vp_reader_module(r->reader, (uint32_t)s->module);
	if (!m || !m->path)
		return UINT32_MAX;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->hdr->funcs[by_addr[mid]].addr < s->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the same address in several modules: the path tells */
	for (; lo < r->hdr->nfuncs && r->hdr->funcs[by_addr[lo]].addr == s->addr; lo++) {
		const struct vp_func *pf = &r->hdr->funcs[by_addr[lo]];

		if (pf->module < r->hdr->nmodules &&
		    !strcmp(r->hdr->modules[pf->module].path, m->path))
			return by_addr[lo];
	}
	return UINT32_MAX;
}

/*
 * The child of probed node @ctx for function @func called from the return
 * address of sampled node @sid's site.  A call site in a module the probes
 * did not cover (the C library calling main) has no module to compare:
 * then the one child for @func that cannot be told apart either way, if
 * there is just one; a site that can be compared and differs is another
 * context.
 */
static uint32_t probed_child(const struct report *r, uint32_t ctx, uint32_t func, uint32_t sid)
{
	const struct vp_cct_node *p = &r->tree->nodes[ctx];
	const struct vp_snode *sn = &r->sampled->nodes[sid];
	const struct vp_frame_def *site = NULL;
	uint32_t maybe = VP_NO_NODE, nmaybe = 0;

	if (sn->site_frame != VP_SNODE_NONE && sn->site_level == 0)
		site = vp_reader_frame(r->reader, sn->site_frame);
	for (uint32_t i = 0; i < p->nchildren; i++) {
		const struct vp_cct_node *c = &r->tree->nodes[p->children[i]];
		const struct vp_callsite *cs;

		if (c->func != func)
			continue;
		cs = vp_reader_callsite(r->reader, c->callsite);
		if (site && cs && cs->module >= 0 && site->module >= 0) {
			if (cs->module == site->module && cs->offset == site->addr)
				return p->children[i];
			continue;
		}
		maybe = p->children[i];
		nmaybe++;
	}
	return nmaybe == 1 ? maybe : VP_NO_NODE;
}

/*
 * The probed node of sampled node @sid, which the probed node @ctx of its
 * parent's path leads to: set out[sid] and, in @ctx and @outer, what
 * @sid's children start from.  @outer: no probed function above @sid has
 * matched yet.  Probes attached to a running process (-p, or auto mode's
 * phase 2 in the same run) never saw the entries of the frames open then:
 * the probed tree starts below them, so until one matches, an unmatched
 * one leaves the root as the context.
 */
static void match(const struct report *r, const uint32_t *func_of, uint32_t *out, uint32_t sid,
		  uint32_t *ctx, uint8_t *outer)
{
	const struct vp_snode *n = &r->sampled->nodes[sid];

	out[sid] = VP_NO_NODE;
	if (n->kind == VP_SNODE_FUNC) {
		uint32_t f = n->symbol < vp_reader_nsymbols(r->reader) ? func_of[n->symbol]
								    : UINT32_MAX;

		if (f != UINT32_MAX) {
			uint32_t c = *ctx == VP_NO_NODE ? VP_NO_NODE
							 : probed_child(r, *ctx, f, sid);

			out[sid] = c;
			if (c != VP_NO_NODE)
				*outer = 0;
			/* below an unmatched probed function nothing matches */
			*ctx = c != VP_NO_NODE || !*outer ? c : VP_NODE_ROOT;
		}
	}
}

uint32_t *report_match_probed(const struct report *r)
{
	size_t nsyms, nfuncs = r->hdr->nfuncs;
	uint32_t *out, *by_addr, *func_of, *ctx;
	uint8_t *outer;

	if (!r->sampled || !r->tree || r->tree->nnodes <= 1)
		return NULL;
	/* symbol -> probed function once, not per node */
	by_addr = xmalloc((nfuncs + 1) * sizeof(*by_addr));
	for (uint32_t f = 0; f < nfuncs; f++)
		by_addr[f] = f;
	qsort_r(by_addr, nfuncs, sizeof(*by_addr), cmp_func_addr, (void *)r->hdr->funcs);
	nsyms = vp_reader_nsymbols(r->reader);
	func_of = xmalloc((nsyms + 1) * sizeof(*func_of));
	for (uint32_t s = 0; s < nsyms; s++)
		func_of[s] = probed_func(r, by_addr, s);
	out = xmalloc(r->sampled->nnodes * sizeof(*out));
	/* A node's id is above its parent's: in the order of the ids, each
	 * node finds what its parent passed on (no recursion, which a deep
	 * tree would overflow the stack with). */
	ctx = xmalloc(r->sampled->nnodes * sizeof(*ctx));
	outer = xmalloc(r->sampled->nnodes * sizeof(*outer));
	out[0] = VP_NO_NODE;
	ctx[0] = VP_NODE_ROOT;
	outer[0] = 1;
	for (uint32_t sid = 1; sid < r->sampled->nnodes; sid++) {
		uint32_t p = r->sampled->nodes[sid].parent;

		ctx[sid] = ctx[p];
		outer[sid] = outer[p];
		match(r, func_of, out, sid, &ctx[sid], &outer[sid]);
	}
	free(outer);
	free(ctx);
	free(func_of);
	free(by_addr);
	return out;
}

/* ---- text ---- */

static void put(FILE *f, const char *s)
{
	report_put(f, s);
}

static void text_row(const struct report *r, uint32_t id, uint32_t depth)
{
	const struct vp_sampled *t = r->sampled;
	const struct vp_snode *n = &t->nodes[id];
	uint32_t pn = r->probed_of ? r->probed_of[id] : VP_NO_NODE;
	struct vp_share sh;
	struct vp_sdur d;
	char site[512], a[32], b[32];
	FILE *f = r->out;

	vp_share(n->samples, t->samples, r->z, &sh);
	fprintf(f, "  %5.1f%% [%5.1f,%5.1f]%c", sh.p * 100, sh.lo * 100, sh.hi * 100,
		sh.half > r->precision ? '~' : ' ');
	vp_share(n->self, t->samples, r->z, &sh);
	if (n->self)
		fprintf(f, " %5.1f%% [%5.1f,%5.1f]%c ", sh.p * 100, sh.lo * 100, sh.hi * 100,
			sh.half > r->precision ? '~' : ' ');
	else
		fprintf(f, " %5s  %13s ", "", "");
	/*
	 * Exact invocations and sample-derived spans in columns of their own:
	 * calls made back to back merge into one span, so a span count is no
	 * call count and a span's CPU time no mean duration.
	 */
	if (pn != VP_NO_NODE) {
		const struct vp_cct_node *c = &r->tree->nodes[pn];

		fprintf(f, "P %7" PRIu64 " %9s %5.2f%c ", c->stats.n,
			report_time(r, c->stats.mean, a, sizeof(a)), vp_stats_cov(&c->stats),
			report_node_unreliable(r, pn) ? '!' : ' ');
	} else {
		fprintf(f, "  %7s %9s %5s  ", "", "", "");
	}
	if (pn == VP_NO_NODE && report_sdur(r, id, &d))
		fprintf(f, "%6" PRIu64 " %9s %5.2f  ", d.invocations,
			report_time(r, d.mean, b, sizeof(b)), d.cov);
	else
		fprintf(f, "%6s %9s %5s  ", "", "", "");
	if (depth > MAX_INDENT)
		fprintf(f, "%*s[depth %" PRIu32 "] ", 2 * MAX_INDENT, "", depth);
	else
		fprintf(f, "%*s", 2 * (int)depth, "");
	put(f, report_snode_name(r, id));
	if (report_snode_inlined(r, id))
		fputs(" (inlined)", f);
	if (*report_snode_site(r, id, site, sizeof(site))) {
		fputs(" [", f);
		put(f, site);
		fputc(']', f);
	}
	fputc('\n', f);
}

/*
 * The calling context of a row of the default table, in @w columns: one
 * column of indentation per level (at most a quarter of @w, then the depth
 * said), the name, and its call site where it fits; cut with "..." where
 * the name does not.  Names first: a table of numbers with no name left
 * on a terminal's line says nothing.
 */
static void context_cell(const struct report *r, const char *name, int inlined,
			 const char *site, uint32_t depth, int w)
{
	char cell[1024], depthbuf[32] = "";
	int indent = (int)depth, len;

	if (indent > w / 4) {
		snprintf(depthbuf, sizeof(depthbuf), "[%" PRIu32 "] ", depth);
		indent = w / 4;
	}
	len = snprintf(cell, sizeof(cell), "%s%s%s%s%s%s", depthbuf, name,
		       inlined ? " (inlined)" : "", *site ? " [" : "", site, *site ? "]" : "");
	if (len < 0)
		len = 0;
	if ((size_t)len >= sizeof(cell))
		len = sizeof(cell) - 1;
	if (indent + (int)report_text_width(cell, (size_t)len) > w) {
		/* the site goes first, then the name is cut */
		len = snprintf(cell, sizeof(cell), "%s%s", depthbuf, name);
		if ((size_t)len >= sizeof(cell))
			len = sizeof(cell) - 1;
		if (indent + (int)report_text_width(cell, (size_t)len) > w) {
			len = w - indent - 3 > 0 ? w - indent - 3 : 0;
			/* not inside a UTF-8 sequence */
			while (len > 0 && ((unsigned char)cell[len] & 0xc0) == 0x80)
				len--;
			strcpy(cell + len, "...");
			len += 3;
		}
	}
	len = (int)report_text_width(cell, strlen(cell));
	fprintf(r->out, "  %*s", indent, "");
	report_put(r->out, cell);
	if (indent + len < w)
		fprintf(r->out, "%*s", w - indent - len, "");
}

/* A share with the half width of its interval: " 54.9% +- 3.5~". */
static void share_cell(const struct report *r, uint64_t k, int blank)
{
	struct vp_share sh;

	if (blank) {
		fprintf(r->out, "%15s", "");
		return;
	}
	vp_share(k, r->sampled->samples, r->z, &sh);
	fprintf(r->out, " %5.1f%% +-%4.1f%c", sh.p * 100, sh.half * 100,
		sh.half > r->precision ? '~' : ' ');
}

/*
 * The default table merges what would print as the same row: siblings of
 * one function (called from several lines, or inlined at several), and
 * the frames of one module no symbol covers, called one from another,
 * fold into their caller ("[libz.so.1]").  A row is a group of sampled
 * nodes with disjoint samples: its shares are their sums, exactly.
 */
struct sview {
	uint32_t *ids;	  /* the sampled nodes of the row */
	size_t n;
	uint64_t samples; /* summed over ids */
	uint64_t self;	  /* ... and over the frames folded into them */
	uint32_t depth;
};

/* Whether node @c is a frame of the same unnamed code as @p: one row. */
static int sview_folds(const struct report *r, uint32_t p, uint32_t c)
{
	const struct vp_snode *pn = &r->sampled->nodes[p], *cn = &r->sampled->nodes[c];
	const struct vp_symbol *s;

	if (pn->kind != VP_SNODE_FUNC || cn->kind != VP_SNODE_FUNC || pn->symbol != cn->symbol)
		return 0;
	s = vp_reader_symbol(r->reader, cn->symbol);
	return s && (s->flags & VP_SYM_NONAME);
}

/*
 * The children of row @v, their rows not yet grouped, in @out (@nout of
 * @cap): the nodes' children, those folded into @v replaced by theirs,
 * their self samples added to @v's.
 */
static uint32_t *sview_children(const struct report *r, struct sview *v, uint32_t *out,
				size_t *nout, size_t *cap)
{
	const struct vp_sampled *t = r->sampled;
	uint32_t *todo = NULL;
	size_t ntodo = 0, tcap = 0;

	*nout = 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct vp_snode *n = &t->nodes[v->ids[i]];

		if (ntodo + n->nchildren > tcap) {
			tcap = 2 * (ntodo + n->nchildren) + 16;
			todo = xrealloc(todo, tcap * sizeof(*todo));
		}
		if (n->nchildren) /* (a leaf's children are NULL) */
			memcpy(todo + ntodo, n->children, n->nchildren * sizeof(*todo));
		ntodo += n->nchildren;
		while (ntodo) {
			uint32_t c = todo[--ntodo];
			const struct vp_snode *cn = &t->nodes[c];

			if (!cn->samples)
				continue;
			if (sview_folds(r, v->ids[0], c)) {
				v->self += cn->self;
				if (ntodo + cn->nchildren > tcap) {
					tcap = 2 * (ntodo + cn->nchildren) + 16;
					todo = xrealloc(todo, tcap * sizeof(*todo));
				}
				if (cn->nchildren)
					memcpy(todo + ntodo, cn->children,
					       cn->nchildren * sizeof(*todo));
				ntodo += cn->nchildren;
				continue;
			}
			if (*nout == *cap) {
				*cap = 2 * *cap + 16;
				out = xrealloc(out, *cap * sizeof(*out));
			}
			out[(*nout)++] = c;
		}
	}
	free(todo);
	return out;
}

/* The same row: the same kind of frame and symbol (name, inlined or not). */
static int sview_same(const struct report *r, uint32_t a, uint32_t b)
{
	const struct vp_snode *x = &r->sampled->nodes[a], *y = &r->sampled->nodes[b];

	if (x->kind != y->kind)
		return 0;
	if (x->kind != VP_SNODE_FUNC || x->symbol == y->symbol)
		return 1;
	return !strcmp(report_snode_name(r, a), report_snode_name(r, b)) &&
	       report_snode_inlined(r, a) == report_snode_inlined(r, b);
}

/* The row's probed node's statistics, merged over its nodes when each is
 * probed (exactly: Chan et al.); 0 when one of them is not. */
static int sview_probed(const struct report *r, const struct sview *v, struct vp_stats *st,
			int *unreliable)
{
	vp_stats_init(st);
	*unreliable = 0;
	if (!r->probed_of)
		return 0;
	for (size_t i = 0; i < v->n; i++) {
		uint32_t pn = r->probed_of[v->ids[i]];
		size_t j;

		if (pn == VP_NO_NODE)
			return 0;
		for (j = 0; j < i && r->probed_of[v->ids[j]] != pn; j++)
			;
		if (j < i)
			continue; /* one probed node, several sampled ones */
		vp_stats_merge(st, &r->tree->nodes[pn].stats);
		*unreliable |= report_node_unreliable(r, pn);
	}
	return 1;
}

/* A row of the default table: within TABLE_WIDTH columns. */
static void text_row_fitted(const struct report *r, const struct sview *v)
{
	uint32_t id = v->ids[0];
	const char *name = report_snode_name(r, id);
	struct vp_stats st;
	struct vp_sdur d;
	char a[32], site[512], other[512], unk[512];
	FILE *f = r->out;
	int unreliable;
	int probed = sview_probed(r, v, &st, &unreliable);
	int sdur = !probed && v->n == 1 && report_sdur(r, id, &d);

	/* "[unknown in libz.so.1]" is its module's code: "[libz.so.1]" */
	if (!strncmp(name, "[unknown in ", 12)) {
		snprintf(unk, sizeof(unk), "[%s", name + 12);
		name = unk;
	}
	report_snode_site(r, id, site, sizeof(site));
	/* a caller no symbol covers ("[unknown in git]") says nothing more */
	if (site[0] == '[' || !strcmp(site, "?"))
		site[0] = '\0';
	for (size_t i = 1; i < v->n && *site; i++)
		if (strcmp(report_snode_site(r, v->ids[i], other, sizeof(other)), site)) {
			snprintf(site, sizeof(site), "%zu call sites", v->n);
			break;
		}
	context_cell(r, name, report_snode_inlined(r, id), site, v->depth, NAME_WIDTH);
	share_cell(r, v->samples, 0);
	/* (no blanks at the end of a line) */
	if (v->self || probed || sdur)
		share_cell(r, v->self, !v->self);
	if (probed) {
		fprintf(f, " P %7" PRIu64 " %9s %5.2f%c", st.n,
			report_time(r, st.mean, a, sizeof(a)), vp_stats_cov(&st),
			unreliable ? '!' : ' ');
	} else if (sdur) {
		fprintf(f, " ~ %7" PRIu64 " %9s %5.2f", d.invocations,
			report_time(r, d.mean, a, sizeof(a)), d.cov);
	}
	fputc('\n', f);
}

static int cmp_sview(const void *a, const void *b)
{
	const struct sview *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? 1 : -1; /* popped busiest first */
	return x->ids[0] < y->ids[0] ? 1 : -1;
}

/* The default table's rows, depth first with the busiest child first (an
 * explicit stack: a crafted file's tree can be VP_SAMPLED_MAX_DEPTH deep). */
static size_t text_tree_fitted(const struct report *r, double *max_half, int print)
{
	size_t nwide = 0;

	const struct vp_sampled *t = r->sampled;
	struct sview *stack = xmalloc(16 * sizeof(*stack));
	size_t n = 1, cap = 16, nkids = 0, kcap = 0;
	uint32_t *kids = NULL, root = 0;

	stack[0] = (struct sview){ .ids = xmalloc(sizeof(uint32_t)), .n = 1 };
	stack[0].ids[0] = root;
	stack[0].depth = UINT32_MAX; /* the root's children are at depth 0 */
	while (n) {
		struct sview v = stack[--n];
		size_t first = n;

		kids = sview_children(r, &v, kids, &nkids, &kcap);
		if (v.ids[0] != root) {
			if (print)
				text_row_fitted(r, &v);
			/* the shares of the rows, as the note under the table counts them */
			nwide += wide(r, v.samples, max_half);
			if (v.self)
				nwide += wide(r, v.self, max_half);
		}
		/* group the children into rows, in the order of their ids */
		for (size_t i = 0; i < nkids; i++) {
			uint32_t c = kids[i];
			size_t g;

			if (kids[i] == VP_SNODE_NONE)
				continue;
			if (n == cap) {
				cap *= 2;
				stack = xrealloc(stack, cap * sizeof(*stack));
			}
			g = n++;
			stack[g] = (struct sview){ .ids = xmalloc(sizeof(uint32_t)), .n = 1,
						   .samples = t->nodes[c].samples,
						   .self = t->nodes[c].self, .depth = v.depth + 1 };
			stack[g].ids[0] = c;
			for (size_t j = i + 1; j < nkids; j++) {
				uint32_t o = kids[j];

				if (o == VP_SNODE_NONE || !sview_same(r, c, o))
					continue;
				stack[g].ids = xrealloc(stack[g].ids,
							(stack[g].n + 1) * sizeof(uint32_t));
				stack[g].ids[stack[g].n++] = o;
				stack[g].samples += t->nodes[o].samples;
				stack[g].self += t->nodes[o].self;
				kids[j] = VP_SNODE_NONE;
			}
			/* below the shown share: not a row, nor are its children */
			if (!r->all && (double)stack[g].samples < SHOW_SHARE * (double)t->samples) {
				free(stack[g].ids);
				n--;
			}
		}
		qsort(stack + first, n - first, sizeof(*stack), cmp_sview);
		free(v.ids);
	}
	free(kids);
	free(stack);
	return nwide;
}

static int cmp_samples(const void *a, const void *b, void *arg)
{
	const struct vp_sampled *tree = arg;
	const struct vp_snode *x = &tree->nodes[*(const uint32_t *)a];
	const struct vp_snode *y = &tree->nodes[*(const uint32_t *)b];

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/*
 * The rows of the tree, depth first with the busiest child first.  An
 * explicit stack, not recursion: a crafted file's tree can be as deep as
 * VP_SAMPLED_MAX_DEPTH, and a stack frame per level would overflow.
 */
static void text_tree(const struct report *r)
{
	const struct vp_sampled *t = r->sampled;
	size_t n = 0, cap = 64;
	uint32_t *stack = xmalloc(cap * sizeof(*stack));

	stack[n++] = 0;
	while (n) {
		uint32_t id = stack[--n];
		const struct vp_snode *s = &t->nodes[id];
		size_t first;

		if (id && !shown(r, id))
			continue;
		if (id)
			text_row(r, id, s->depth - 1);
		if (!s->nchildren)
			continue;
		if (n + s->nchildren > cap) {
			while (n + s->nchildren > cap)
				cap *= 2;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		/* pushed busiest first, popped busiest last: reversed */
		first = n;
		memcpy(stack + n, s->children, s->nchildren * sizeof(*stack));
		n += s->nchildren;
		qsort_r(stack + first, s->nchildren, sizeof(*stack), cmp_samples, (void *)t);
		for (size_t a = first, b = n; a + 1 < b; a++, b--) {
			uint32_t x = stack[a];

			stack[a] = stack[b - 1];
			stack[b - 1] = x;
		}
	}
	free(stack);
}

void report_sampled_text(const struct report *r)
{
	const struct vp_sampled *t = r->sampled;
	const struct vp_sampling *sm = &r->hdr->sampling;
	FILE *f = r->out;
	double max_half, rows_half = 0;
	size_t wide, nwide = 0;
	char a[32];

	fprintf(f, "Sampled calling contexts: %" PRIu64 " samples of %s every %s, %g%% "
		   "intervals (Schneider)\n",
		t->samples, vp_sample_event_name(sm->event),
		sm->period && !t->period_varies ? report_time(r, (double)sm->period, a, sizeof(a))
						: "(varying period)",
		r->confidence * 100);
	if (!t->samples) {
		fprintf(f, "  (no samples)\n");
		return;
	}
	if (!r->wide) {
		/* every line within TABLE_WIDTH columns */
		fprintf(f, "  total and self: the share of the samples, +- half its interval; "
			   "~: wider than +-%g%%\n", r->precision * 100);
		if (r->tree && r->tree->nnodes > 1)
			fprintf(f, "  P: probed, exact N, mean, CoV (%s)\n",
				r->compensated ? "probe cost subtracted" : "probe cost included");
		fprintf(f, "  ~: sample-derived spans, ~CPU/span, ~CoV: not invocations "
			   "(--wide says more)\n");
		fprintf(f, "  %-*s %13s  %13s  %9s %9s %5s\n", NAME_WIDTH,
			r->all ? "calling context" : "calling context (shares >= 0.5%)", "total",
			"self", "N", "mean", "CoV");
		nwide = text_tree_fitted(r, &rows_half, 1);
	} else {
		if (r->tree && r->tree->nnodes > 1)
			fprintf(f, "  P: probed, exact (N, mean, CoV%s)\n",
				r->compensated ? ", probe cost subtracted" : ", probe cost included");
		/* (a cycles event in frequency mode gives no durations: see report_sdur) */
		fprintf(f, "  spans, ~CPU/span, ~CoV: sample-derived, not invocations (a span is a "
			   "frame seen from one sample to the next, calls back to back make one; its "
			   "CPU time +/-1 period, CoV less what whole periods add)\n");
		fprintf(f, "  ~: the share's interval is wider than +/-%g%%\n", r->precision * 100);
		fprintf(f, "   total  %4g%% interval    self  %4g%% interval     N      mean   CoV   "
			   "spans ~CPU/span  ~CoV  calling context%s\n",
			r->confidence * 100, r->confidence * 100,
			r->all ? "" : " (shares >= 0.5%)");
		text_tree(r);
	}
	if (t->cut)
		fprintf(f, "  %" PRIu64 " sample%s deeper than %d levels: cut, under "
			   "[deeper levels cut]\n",
			t->cut, t->cut == 1 ? "" : "s", VP_SAMPLED_MAX_DEPTH - 1);
	if (t->truncated || t->broken)
		fprintf(f, "  %" PRIu64 " stack%s truncated (copy too small), %" PRIu64
			   " not unwound to the outermost frame: under [incomplete stacks]\n",
			t->truncated, t->truncated == 1 ? "" : "s", t->broken);
	if (t->probe)
		fprintf(f, "  %" PRIu64 " sample%s in the [uprobes] page mapped back to the probed "
			   "function\n",
			t->probe, t->probe == 1 ? "" : "s");
	/* auto mode's samples only chose what phase 2 probed: no option of
	 * record's would make them more precise, so nothing to say */
	wide = r->hdr->mode == VP_MODE_AUTO ? 0 : r->wide ? report_sampled_wide(r, &max_half) : nwide;
	if (!r->wide)
		max_half = rows_half;
	if (wide) {
		uint64_t need = vp_samples_needed(0.5, r->precision, r->z);

		fprintf(f, "  ~ %zu share%s a %g%% interval wider than +/-%g%% (up to +/-%.2f%%): "
			   "%" PRIu64 " samples would do\n",
			wide, wide == 1 ? " has" : "s have", r->confidence * 100,
			r->precision * 100, max_half * 100, need);
	}
}
