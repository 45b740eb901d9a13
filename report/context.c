/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * context.c - a calling context as a user writes it on the command line
 * ("main/compress/BZ2_blockSort", or a flame graph's
 * "main;compress;BZ2_blockSort") and the nodes of the tree it names.  The
 * rules are the GDB plugin's `varperf break --context` and the tests'
 * CHAIN: outermost first, matched against the end of a node's path, a
 * leading separator anchoring it at the top, FUNC:LINE also requiring the
 * line of the call site.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util/util.h"

static int context_is_sep(char c)
{
	return c == '/' || c == ';';
}

/*
 * Split one element "FUNC", "FUNC:LINE" or "FUNC@SITE" (a node label as
 * the reports print it, "f@file.c:12").  A trailing ":digits" is a line
 * only after a name that does not end in ':' (C++ "ns::f" stays whole).
 */
static void context_elem(char *s, struct report_context_elem *e)
{
	char *at = strchr(s, '@'), *colon;

	e->name = s;
	e->site = NULL;
	e->line = 0;
	if (at && at != s) {
		*at = '\0';
		e->site = at + 1;
		return;
	}
	colon = strrchr(s, ':');
	if (colon && colon != s && colon[-1] != ':' && colon[1] &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
		unsigned long v = strtoul(colon + 1, NULL, 10);

		if (v && v <= UINT32_MAX) {
			*colon = '\0';
			e->line = (uint32_t)v;
		}
	}
}

int report_context_parse(const char *text, struct report_context *ret)
{
	size_t n = 1;
	char *p;

	memset(ret, 0, sizeof(*ret));
	ret->anchored = context_is_sep(*text);
	ret->buf = xstrdup(text + ret->anchored);
	for (p = ret->buf; *p; p++)
		n += context_is_sep(*p);
	ret->e = xcalloc(n, sizeof(*ret->e));
	for (p = ret->buf;;) {
		char *end = p + strcspn(p, "/;");
		int last = !*end;

		*end = '\0';
		if (!*p) {
			error("invalid context '%s': an empty function name", text);
			report_context_release(ret);
			return -1;
		}
		context_elem(p, &ret->e[ret->n++]);
		if (last)
			break;
		p = end + 1;
	}
	return 0;
}

void report_context_release(struct report_context *c)
{
	free(c->e);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

/* Function @func is the one named @name: any of its names, or a C++
 * display name up to its parameters. */
static int context_name_matches(const struct report *r, uint32_t func, const char *name)
{
	const struct vp_func *f = func < r->hdr->nfuncs ? &r->hdr->funcs[func] : NULL;
	const char *display = report_func_name(r, func);
	size_t len = strlen(name);

	if (!strcmp(display, name) || (!strncmp(display, name, len) && display[len] == '('))
		return 1;
	return f && ((f->name && !strcmp(f->name, name)) || (f->base && !strcmp(f->base, name)));
}

static int context_elem_matches(const struct report *r, const struct report_context_elem *e,
				const struct vp_cct_node *n)
{
	const struct vp_callsite *cs;
	char buf[512];

	if (!context_name_matches(r, n->func, e->name))
		return 0;
	if (e->site)
		return !strcmp(report_callsite_str(r, n->callsite, 1, buf, sizeof(buf)), e->site) ||
		       !strcmp(report_callsite_str(r, n->callsite, 0, buf, sizeof(buf)), e->site);
	if (!e->line)
		return 1;
	cs = n->callsite == VP_NO_CALLSITE ? NULL : vp_reader_callsite(r->reader, n->callsite);
	return cs && cs->line == e->line;
}

int report_context_match(const struct report *r, const struct report_context *c, uint32_t id)
{
	uint32_t node = id;

	for (size_t i = c->n; i-- > 0;) {
		if (node == VP_NODE_ROOT || node == VP_NO_NODE || node >= r->tree->nnodes)
			return 0;
		if (!context_elem_matches(r, &c->e[i], &r->tree->nodes[node]))
			return 0;
		node = r->tree->nodes[node].parent;
	}
	return !c->anchored || node == VP_NODE_ROOT;
}
