// SPDX-License-Identifier: GPL-3.0-or-later
/*
 * export-pprof.c - `varperf report --format pprof`: the recording as a
 * gzipped pprof profile (profile.proto), the format of pprof, Pyroscope,
 * Parca and Grafana's profilers, written through protobuf-c.
 *
 * Every probed calling context is one sample, its stack innermost frame
 * first, with four values: its calls, its own time (the flame graph's
 * width: its time less its callees'), the sum of its calls' durations and
 * the sum of their squares.  Sums, not means: the profiles of many runs or
 * hosts add up exactly (pprof -proto a.pb.gz b.pb.gz, a fleet's profile
 * store), and each context's mean and variance follow from the sums of
 * its own sample (pprof's "flat" column): mean = time / calls, variance =
 * (time_squared - time^2 / calls) / (calls - 1), the exact merge of Chan
 * et al.  Squares are kept in us^2 so that a run of hours fits in int64;
 * the rounding is one per context, not one per call.  Sampled stacks,
 * where the file has them, are samples of their own, with their counts
 * and times.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util/util.h"

#ifdef HAVE_PROTOBUF_C
#include <zlib.h>

#include "core/hashtab.h"
#include "report/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* The values of a sample, in the order of the profile's sample types. */
enum {
	V_CALLS,
	V_SELF,
	V_TIME,
	V_TIME_SQ,
	V_SAMPLES,
	V_SAMPLED_TIME,
	V_MAX,
};

struct pprof {
	const struct report *r;
	/* the string table, and an index of it */
	char **strings;
	size_t nstrings, strings_cap;
	struct vp_hashtab string_index;
	/* functions and their locations (one each, same id), by name and file */
	pb_function *funcs;
	pb_location *locs;
	pb_line *lines;
	size_t nfuncs, funcs_cap;
	struct vp_hashtab func_index;
	pb_mapping *maps;
	size_t nmaps;
	pb_sample *samples;
	size_t nsamples, samples_cap;
	int64_t *values;     /* nsamples * nvalues */
	uint64_t *stack_ids; /* all samples' stacks, one after another */
	size_t nstack, stack_cap;
	size_t *stack_at;    /* per sample: where its stack starts in stack_ids */
	int nvalues;	     /* 4 probed, 2 sampled, 6 both */
	int vcol[V_MAX];     /* column of each value, -1 when not written */
	pb_label labels[2];  /* "source": "probes" or "samples" */
	pb_label *label_probes, *label_samples;
};

struct string_key {
	const struct pprof *p;
	const char *s;
};

static int string_eq(const void *entry, const void *key)
{
	const struct string_key *k = key;

	return !strcmp(k->p->strings[*(const uint32_t *)entry], k->s);
}

/* The index of @s in the string table, added if need be. */
static int64_t pprof_string(struct pprof *p, const char *s)
{
	struct string_key k = { p, s ? s : "" };
	uint64_t h = vp_hash_str(k.s);
	uint32_t *e;
	int added;

	added = vp_hashtab_insert(&p->string_index, h, &k, (void **)&e);
	if (added < 0)
		die("out of memory");
	if (!added)
		return *e;
	if (p->nstrings == p->strings_cap) {
		p->strings_cap = p->strings_cap ? 2 * p->strings_cap : 256;
		p->strings = xrealloc(p->strings, p->strings_cap * sizeof(*p->strings));
	}
	*e = (uint32_t)p->nstrings;
	p->strings[p->nstrings] = xstrdup(k.s);
	return (int64_t)p->nstrings++;
}

struct func_key {
	const struct pprof *p;
	int64_t name, file;
};

static int func_eq(const void *entry, const void *key)
{
	const struct func_key *k = key;
	const pb_function *f = &k->p->funcs[*(const uint32_t *)entry];

	return f->name == k->name && f->filename == k->file;
}

/*
 * The location id of function @name of module @module (-1: none): one
 * location and one function per (name, file), ids from 1.
 */
static uint64_t pprof_frame(struct pprof *p, const char *name, int32_t module)
{
	const struct vp_header *h = p->r->hdr;
	const char *file = module >= 0 && (size_t)module < h->nmodules ? h->modules[module].path : "";
	struct func_key k = { p, pprof_string(p, name), pprof_string(p, file) };
	uint32_t *e;
	size_t i;
	int added;

	added = vp_hashtab_insert(&p->func_index, vp_hash_mix((uint64_t)k.name, (uint64_t)k.file),
				  &k, (void **)&e);
	if (added < 0)
		die("out of memory");
	if (!added)
		return p->funcs[*e].id;
	if (p->nfuncs == p->funcs_cap) {
		/* the locations point into lines: grow, then point again */
		p->funcs_cap = p->funcs_cap ? 2 * p->funcs_cap : 256;
		p->funcs = xrealloc(p->funcs, p->funcs_cap * sizeof(*p->funcs));
		p->locs = xrealloc(p->locs, p->funcs_cap * sizeof(*p->locs));
		p->lines = xrealloc(p->lines, p->funcs_cap * sizeof(*p->lines));
	}
	i = p->nfuncs++;
	*e = (uint32_t)i;
	perftools__profiles__function__init(&p->funcs[i]);
	p->funcs[i].id = i + 1;
	p->funcs[i].name = k.name;
	p->funcs[i].system_name = k.name;
	p->funcs[i].filename = k.file;
	perftools__profiles__line__init(&p->lines[i]);
	p->lines[i].function_id = i + 1;
	perftools__profiles__location__init(&p->locs[i]);
	p->locs[i].id = i + 1;
	p->locs[i].mapping_id = module >= 0 && (size_t)module < p->nmaps ? (uint64_t)module + 1 : 0;
	return i + 1;
}

/* A new sample of @label, its frames to come (pprof_push), no values yet. */
static size_t pprof_sample(struct pprof *p, pb_label *label)
{
	size_t i;

	if (p->nsamples == p->samples_cap) {
		p->samples_cap = p->samples_cap ? 2 * p->samples_cap : 1024;
		p->samples = xrealloc(p->samples, p->samples_cap * sizeof(*p->samples));
		p->stack_at = xrealloc(p->stack_at, p->samples_cap * sizeof(*p->stack_at));
		p->values = xrealloc(p->values,
				     p->samples_cap * (size_t)p->nvalues * sizeof(*p->values));
	}
	i = p->nsamples++;
	perftools__profiles__sample__init(&p->samples[i]);
	p->samples[i].n_label = 1;
	p->samples[i].label = &p->label_probes;
	if (label == p->label_samples)
		p->samples[i].label = &p->label_samples;
	p->stack_at[i] = p->nstack;
	memset(&p->values[i * (size_t)p->nvalues], 0, (size_t)p->nvalues * sizeof(*p->values));
	return i;
}

static void pprof_push(struct pprof *p, uint64_t loc)
{
	if (p->nstack == p->stack_cap) {
		p->stack_cap = p->stack_cap ? 2 * p->stack_cap : 4096;
		p->stack_ids = xrealloc(p->stack_ids, p->stack_cap * sizeof(*p->stack_ids));
	}
	p->stack_ids[p->nstack++] = loc;
}

static void pprof_value(struct pprof *p, size_t sample, int which, double v)
{
	if (p->vcol[which] >= 0)
		p->values[sample * (size_t)p->nvalues + (size_t)p->vcol[which]] = llround(v);
}

/* A probed node's own time: its calls' time less its callees'. */
static double pprof_self(const struct vp_cct *t, const struct vp_cct_node *n)
{
	double v = (double)n->stats.total;

	for (uint32_t i = 0; i < n->nchildren; i++)
		v -= (double)t->nodes[n->children[i]].stats.total;
	return v;
}

static void pprof_probed(struct pprof *p)
{
	const struct vp_cct *t = p->r->tree;

	for (uint32_t id = 1; id < t->nnodes; id++) {
		const struct vp_cct_node *n = &t->nodes[id];
		long double sq;
		size_t s;

		if (!n->stats.n)
			continue;
		s = pprof_sample(p, p->label_probes);
		for (uint32_t a = id; a != VP_NODE_ROOT && a < t->nnodes; a = t->nodes[a].parent) {
			const struct vp_func *f = &p->r->hdr->funcs[t->nodes[a].func];

			pprof_push(p, pprof_frame(p, report_func_name(p->r, t->nodes[a].func),
						  (int32_t)f->module));
		}
		/* sum of squares = M2 + n mean^2, in us^2 */
		sq = ((long double)n->stats.m2 +
		      (long double)n->stats.n * n->stats.mean * n->stats.mean) / 1e6L;
		pprof_value(p, s, V_CALLS, (double)n->stats.n);
		pprof_value(p, s, V_SELF, pprof_self(t, n));
		pprof_value(p, s, V_TIME, (double)n->stats.total);
		pprof_value(p, s, V_TIME_SQ, (double)sq);
	}
}

static void pprof_sampled(struct pprof *p)
{
	const struct vp_sampled *sd = p->r->sampled;

	for (uint32_t id = 1; id < sd->nnodes; id++) {
		const struct vp_snode *n = &sd->nodes[id];
		size_t s;

		if (!n->self)
			continue;
		s = pprof_sample(p, p->label_samples);
		for (uint32_t a = id; a != 0 && a != VP_SNODE_NONE; a = sd->nodes[a].parent) {
			const struct vp_snode *an = &sd->nodes[a];
			int32_t module = -1;

			if (an->kind == VP_SNODE_FUNC && an->symbol != VP_SNODE_NONE)
				module = vp_reader_symbol(p->r->reader, an->symbol)->module;
			pprof_push(p, pprof_frame(p, report_snode_name(p->r, a), module));
		}
		pprof_value(p, s, V_SAMPLES, (double)n->self);
		pprof_value(p, s, V_SAMPLED_TIME, n->self_time);
	}
}

/* Gzip @len bytes of @buf onto @f (the format wants gzip, not zlib). */
static int pprof_gzip(FILE *f, const uint8_t *buf, size_t len)
{
	unsigned char out[1 << 16];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len; /* (the caller keeps len under 4 GiB) */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			deflateEnd(&z);
			return -1;
		}
	} while (zr == Z_OK);
	deflateEnd(&z);
	if (zr != Z_STREAM_END) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static void pprof_type(struct pprof *p, pb_type *t, const char *type, const char *unit)
{
	perftools__profiles__value_type__init(t);
	t->type = pprof_string(p, type);
	t->unit = pprof_string(p, unit);
}

int report_pprof(const struct report *r)
{
	static const char *const names[V_MAX][2] = {
		[V_CALLS] = { "calls", "count" },
		[V_SELF] = { "self_time", "nanoseconds" },
		[V_TIME] = { "time", "nanoseconds" },
		[V_TIME_SQ] = { "time_squared", "microseconds_squared" },
		[V_SAMPLES] = { "samples", "count" },
		[V_SAMPLED_TIME] = { "sampled_time", "nanoseconds" },
	};
	int probed = r->tree && r->tree->nnodes > 1;
	int sampled = r->sampled && r->sampled->nnodes > 1;
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_type types[V_MAX], period_type;
	pb_sample **sptr = NULL;
	pb_location **lptr = NULL;
	pb_line **lnptr = NULL;
	pb_function **fptr = NULL;
	pb_mapping **mptr = NULL;
	pb_type *tptr[V_MAX];
	int64_t comments[3];
	struct pprof p;
	uint8_t *buf = NULL;
	size_t len;
	char line[512];
	int ret = -1;

	memset(&p, 0, sizeof(p));
	p.r = r;
	if (vp_hashtab_init(&p.string_index, sizeof(uint32_t), 0, string_eq) < 0 ||
	    vp_hashtab_init(&p.func_index, sizeof(uint32_t), 0, func_eq) < 0)
		return -1;
	pprof_string(&p, ""); /* string 0 */
	for (int v = 0; v < V_MAX; v++) {
		int on = v < V_SAMPLES ? probed : sampled;

		p.vcol[v] = on ? p.nvalues++ : -1;
		if (on)
			pprof_type(&p, &types[p.vcol[v]], names[v][0], names[v][1]);
	}
	if (!p.nvalues) {
		/* an empty recording: one type, no sample, still a profile */
		p.vcol[V_CALLS] = p.nvalues++;
		pprof_type(&p, &types[0], names[V_CALLS][0], names[V_CALLS][1]);
	}
	p.label_probes = &p.labels[0];
	p.label_samples = &p.labels[1];
	for (int i = 0; i < 2; i++) {
		perftools__profiles__label__init(&p.labels[i]);
		p.labels[i].key = pprof_string(&p, "source");
		p.labels[i].str = pprof_string(&p, i ? "samples" : "probes");
	}
	/* one mapping per module: file and build-id */
	p.nmaps = r->hdr->nmodules;
	p.maps = xcalloc(p.nmaps ? p.nmaps : 1, sizeof(*p.maps));
	for (size_t m = 0; m < p.nmaps; m++) {
		const struct vp_module *mod = &r->hdr->modules[m];
		char hex[2 * 64 + 1] = "";

		perftools__profiles__mapping__init(&p.maps[m]);
		p.maps[m].id = m + 1;
		p.maps[m].filename = pprof_string(&p, mod->path);
		for (size_t b = 0; b < mod->build_id_len && b < 64; b++)
			snprintf(hex + 2 * b, 3, "%02x", mod->build_id[b]);
		p.maps[m].build_id = pprof_string(&p, hex);
		p.maps[m].has_functions = 1;
	}
	if (probed)
		pprof_probed(&p);
	if (sampled)
		pprof_sampled(&p);

	for (int v = 0; v < p.nvalues; v++)
		tptr[v] = &types[v];
	prof.n_sample_type = (size_t)p.nvalues;
	prof.sample_type = tptr;
	prof.default_sample_type = probed ? types[p.vcol[V_SELF]].type
				   : sampled ? types[p.vcol[V_SAMPLES]].type : 0;
	sptr = xcalloc(p.nsamples + 1, sizeof(*sptr));
	for (size_t s = 0; s < p.nsamples; s++) {
		size_t end = s + 1 < p.nsamples ? p.stack_at[s + 1] : p.nstack;

		p.samples[s].n_location_id = end - p.stack_at[s];
		p.samples[s].location_id = p.stack_ids + p.stack_at[s];
		p.samples[s].n_value = (size_t)p.nvalues;
		p.samples[s].value = p.values + s * (size_t)p.nvalues;
		sptr[s] = &p.samples[s];
	}
	prof.n_sample = p.nsamples;
	prof.sample = sptr;
	lptr = xcalloc(p.nfuncs + 1, sizeof(*lptr));
	lnptr = xcalloc(p.nfuncs + 1, sizeof(*lnptr));
	fptr = xcalloc(p.nfuncs + 1, sizeof(*fptr));
	for (size_t i = 0; i < p.nfuncs; i++) {
		lnptr[i] = &p.lines[i];
		p.locs[i].n_line = 1;
		p.locs[i].line = &lnptr[i];
		lptr[i] = &p.locs[i];
		fptr[i] = &p.funcs[i];
	}
	prof.n_location = prof.n_function = p.nfuncs;
	prof.location = lptr;
	prof.function = fptr;
	mptr = xcalloc(p.nmaps + 1, sizeof(*mptr));
	for (size_t m = 0; m < p.nmaps; m++)
		mptr[m] = &p.maps[m];
	prof.n_mapping = p.nmaps;
	prof.mapping = mptr;
	prof.time_nanos = (int64_t)r->hdr->start_time * 1000000000;
	if (r->reader) {
		uint64_t first, last;

		vp_reader_time_span(r->reader, &first, &last);
		if (last > first)
			prof.duration_nanos = (int64_t)(last - first);
	}
	if (sampled && r->sampled->period) {
		pprof_type(&p, &period_type, "cpu", "nanoseconds");
		prof.period_type = &period_type;
		prof.period = (int64_t)r->sampled->period;
	}
	snprintf(line, sizeof(line), "varperf %s: %s", PACKAGE_VERSION, report_program_path(r));
	comments[0] = pprof_string(&p, line);
	snprintf(line, sizeof(line), "durations: %s time, probe costs %s",
		 vp_time_base_name(r->time), r->compensated ? "subtracted" : "included");
	comments[1] = pprof_string(&p, line);
	comments[2] = pprof_string(&p, "per context: mean = time / calls, variance = "
				       "(time_squared * 1e6 - time^2 / calls) / (calls - 1)");
	prof.n_comment = 3;
	prof.comment = comments;
	prof.n_string_table = p.nstrings;
	prof.string_table = p.strings;

	len = perftools__profiles__profile__get_packed_size(&prof);
	if (len > UINT32_MAX) {
		errno = EFBIG;
		goto out;
	}
	buf = xmalloc(len ? len : 1);
	perftools__profiles__profile__pack(&prof, buf);
	ret = pprof_gzip(r->out, buf, len);
out:
	free(buf);
	free(sptr);
	free(lptr);
	free(lnptr);
	free(fptr);
	free(mptr);
	for (size_t i = 0; i < p.nstrings; i++)
		free(p.strings[i]);
	free(p.strings);
	vp_hashtab_release(&p.string_index);
	vp_hashtab_release(&p.func_index);
	free(p.funcs);
	free(p.locs);
	free(p.lines);
	free(p.maps);
	free(p.samples);
	free(p.values);
	free(p.stack_ids);
	free(p.stack_at);
	return ret;
}

#else /* !HAVE_PROTOBUF_C */

int report_pprof(const struct report *r)
{
	(void)r;
	errno = ENOSYS;
	return -1;
}

#endif
