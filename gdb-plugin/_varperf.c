/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * _varperf.c - the Recording type of the CPython extension under the GDB
 * plugin: core/'s data file, calling-context tree and variance analysis as
 * a Python object, made by _varperf.open().  The extension never imports
 * gdb, so plain python3 can use it (and the tests do); module.c puts it
 * together, pyutil.c holds its Python/C helpers.
 */
#include <config.h>

/* Python.h, in _varperf.h, must come before the system headers */
#include "_varperf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PyTypeObject *vpmod_rec_type; /* varperf.Recording */

/* ---- the Recording object ---- */

static int cmp_func_addr(const void *a, const void *b, void *arg)
{
	const struct rec *r = arg;
	const struct vp_func *x = &r->hdr->funcs[*(const uint32_t *)a];
	const struct vp_func *y = &r->hdr->funcs[*(const uint32_t *)b];

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_cs_addr(const void *a, const void *b, void *arg)
{
	const struct rec *r = arg;
	const struct vp_callsite *x = vp_reader_callsite(r->reader, *(const uint32_t *)a);
	const struct vp_callsite *y = vp_reader_callsite(r->reader, *(const uint32_t *)b);

	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Counting sort of @n items into @nkeys buckets: start[] gets nkeys + 1. */
static int bucket_index(size_t nkeys, size_t n, const uint32_t *keys, const uint32_t *vals,
			size_t **start_ret, uint32_t **ids_ret)
{
	size_t *start = calloc(nkeys + 2, sizeof(*start));
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	size_t *fill;

	if (!start || !ids)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (keys[i] < nkeys)
			start[keys[i] + 1]++;
	for (size_t k = 0; k < nkeys; k++)
		start[k + 1] += start[k];
	fill = malloc((nkeys + 1) * sizeof(*fill));
	if (!fill)
		goto fail;
	memcpy(fill, start, (nkeys + 1) * sizeof(*fill));
	for (size_t i = 0; i < n; i++)
		if (keys[i] < nkeys)
			ids[fill[keys[i]]++] = vals[i];
	free(fill);
	*start_ret = start;
	*ids_ret = ids;
	return 0;
fail:
	free(start);
	free(ids);
	return -ENOMEM;
}

static int rec_build_indexes(struct rec *r)
{
	const struct vp_header *h = r->hdr;
	size_t nnodes = r->tree->nnodes, npairs = 0;
	uint32_t *keys = NULL, *vals = NULL;
	int err = -ENOMEM;

	r->func_by_addr = malloc((h->nfuncs ? h->nfuncs : 1) * sizeof(*r->func_by_addr));
	r->ncs = vp_reader_ncallsites(r->reader);
	r->cs_by_addr = malloc((r->ncs ? r->ncs : 1) * sizeof(*r->cs_by_addr));
	r->fsum_of = malloc((h->nfuncs ? h->nfuncs : 1) * sizeof(*r->fsum_of));
	if (!r->func_by_addr || !r->cs_by_addr || !r->fsum_of)
		goto out;
	for (size_t i = 0; i < h->nfuncs; i++) {
		r->func_by_addr[i] = (uint32_t)i;
		r->fsum_of[i] = -1;
	}
	for (size_t i = 0; i < r->ncs; i++)
		r->cs_by_addr[i] = (uint32_t)i;
	if (h->nfuncs)
		qsort_r(r->func_by_addr, h->nfuncs, sizeof(uint32_t), cmp_func_addr, (void *)r);
	if (r->ncs)
		qsort_r(r->cs_by_addr, r->ncs, sizeof(uint32_t), cmp_cs_addr, (void *)r);
	for (size_t i = 0; i < r->an->nfuncs; i++)
		if (r->an->funcs[i].func < h->nfuncs)
			r->fsum_of[r->an->funcs[i].func] = (long)i;

	/* nodes by function */
	keys = malloc((nnodes ? nnodes : 1) * sizeof(*keys));
	vals = malloc((nnodes ? nnodes : 1) * sizeof(*vals));
	if (!keys || !vals)
		goto out;
	for (size_t i = 1; i < nnodes; i++) {
		keys[i - 1] = r->tree->nodes[i].func;
		vals[i - 1] = (uint32_t)i;
	}
	err = bucket_index(h->nfuncs, nnodes ? nnodes - 1 : 0, keys, vals, &r->fnode_start,
			   &r->fnode_ids);
	if (err)
		goto out;

	/* patterns by node */
	for (size_t p = 0; p < r->an->npatterns; p++)
		npairs += r->an->patterns[p].nnodes;
	free(keys);
	free(vals);
	err = -ENOMEM;
	keys = malloc((npairs ? npairs : 1) * sizeof(*keys));
	vals = malloc((npairs ? npairs : 1) * sizeof(*vals));
	if (!keys || !vals)
		goto out;
	npairs = 0;
	for (size_t p = 0; p < r->an->npatterns; p++) {
		for (size_t k = 0; k < r->an->patterns[p].nnodes; k++) {
			keys[npairs] = r->an->patterns[p].nodes[k];
			vals[npairs++] = (uint32_t)p;
		}
	}
	err = bucket_index(nnodes, npairs, keys, vals, &r->npat_start, &r->npat_ids);
out:
	free(keys);
	free(vals);
	return err;
}

/*
 * Read, build and analyse @r->path as `varperf report` does (@o->raw:
 * --raw, o->time: its --time); on failure return a negative errno with
 * the message in @msg.
 */
static int rec_load(struct rec *r, const struct vp_recording_opts *o, char *msg, size_t len)
{
	int err;

	err = vp_recording_open(r->path, o, &r->vr, msg, len);
	if (err == -ENODATA) {
		size_t n = strlen(msg);

		snprintf(msg + n, len - n, ": no %s time to analyse",
			 o->time == VP_TIME_CPU ? "on-CPU" : "off-CPU");
	}
	if (err < 0)
		return err;
	r->reader = r->vr->reader;
	r->hdr = r->vr->hdr;
	r->trailer = r->vr->trailer;
	r->tree = &r->vr->tree;
	r->totals = &r->vr->totals;
	r->an = &r->vr->an;
	r->lost = r->vr->lost;
	r->compensated = r->vr->compensated;
	err = rec_build_indexes(r);
	if (err < 0)
		snprintf(msg, len, "cannot index '%s': %s", r->path, strerror(-err));
	return err;
}

static void rec_release(struct rec *r)
{
	vp_recording_free(r->vr);
	free(r->path);
	free(r->func_by_addr);
	free(r->fnode_start);
	free(r->fnode_ids);
	free(r->npat_start);
	free(r->npat_ids);
	free(r->cs_by_addr);
	free(r->fsum_of);
}

static void rec_dealloc(PyObject *self)
{
	PyTypeObject *tp = Py_TYPE(self);
	freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);

	rec_release((struct rec *)self);
	tp_free(self);
	Py_DECREF(tp);
}

PyObject *vpmod_open(PyObject *mod, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path",	   "cutoff",	 "probability", "window",
				  "cov_threshold", "similarity", "beta",	"compensate",
				  "time",	   "max_memory", NULL };
	struct vp_recording_opts o;
	struct vp_analysis_params *p = &o.params;
	PyObject *pathobj = NULL;
	char msg[VPMOD_MSG_LEN] = "";
	const char *time = "wall";
	struct rec *r;
	int compensate = 1;
	unsigned long long max_memory;
	enum vp_time_base base;
	int err;

	vp_recording_opts_default(&o);
	max_memory = o.max_memory; /* varperf report's --max-memory default */
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|ddddddpsK:open", kwlist,
					 PyUnicode_FSConverter, &pathobj, &p->cutoff,
					 &p->probability, &p->window, &p->cov_threshold,
					 &p->similarity, &p->beta, &compensate, &time, &max_memory))
		return NULL;
	if (vp_time_base_parse(time, &base) < 0) {
		PyErr_Format(PyExc_ValueError,
			     "time must be 'wall', 'cpu', 'offcpu', 'blocked', 'preempted' or "
			     "'own', not '%s'",
			     time);
		Py_DECREF(pathobj);
		return NULL;
	}
	r = (struct rec *)vpmod_alloc(vpmod_rec_type);
	if (!r) {
		Py_DECREF(pathobj);
		return NULL;
	}
	r->time = o.time = base;
	/* the time asked for, whatever preemption did (GDB compares its
	 * stops' times with it) */
	o.time_auto = 0;
	/* a crafted file must not take GDB's memory: report's --max-memory */
	o.max_memory = max_memory > SIZE_MAX ? SIZE_MAX : (size_t)max_memory;
	o.raw = !compensate;
	r->path = strdup(PyBytes_AsString(pathobj));
	Py_DECREF(pathobj);
	if (!r->path) {
		Py_DECREF(r);
		return PyErr_NoMemory();
	}
	/* A big file takes a while: let other Python threads run. */
	Py_BEGIN_ALLOW_THREADS
	err = rec_load(r, &o, msg, sizeof(msg));
	Py_END_ALLOW_THREADS
	if (err < 0) {
		vpmod_raise(err, msg, r->path);
		Py_DECREF(r);
		return NULL;
	}
	return (PyObject *)r;
}

/* ---- labels: core's (vp_recording_*), those report/common.c gives the renderers ---- */

static const char *func_name(const struct rec *r, uint32_t func)
{
	return vp_recording_func_name(r->vr, func);
}

/* report_callsite_str(): the same label, from core. */
static const char *callsite_str(const struct rec *r, uint32_t id, int short_file, char *buf,
				size_t len)
{
	return vp_recording_callsite_label(r->vr, id, short_file, buf, len);
}

/* report_node_label(): "function@call-site" or "function". */
static const char *node_label(const struct rec *r, uint32_t id, char *buf, size_t len)
{
	return vp_recording_node_label(r->vr, id, buf, len);
}

/* ---- argument helpers ---- */

static int check_func(const struct rec *r, unsigned long f)
{
	if (f >= r->hdr->nfuncs) {
		PyErr_Format(PyExc_IndexError, "no function %lu (there are %zu)", f,
			     r->hdr->nfuncs);
		return -1;
	}
	return 0;
}

/* ---- header, totals, parameters ---- */

static PyObject *rec_get_header(PyObject *self, void *closure)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_header *h = r->hdr;
	PyObject *d = PyDict_New(), *l = NULL;

	if (!d)
		return NULL;
	if (vpmod_put(d, "version", vpmod_u64(h->version)) ||
	    vpmod_put(d, "unit", vpmod_u64(h->unit)) ||
	    vpmod_put(d, "clock", vpmod_u64(h->clock)) ||
	    vpmod_put(d, "start_time", vpmod_u64(h->start_time)) ||
	    vpmod_put(d, "pid", vpmod_u64(h->pid)) || vpmod_put(d, "ncpu", vpmod_u64(h->ncpu)) ||
	    vpmod_put(d, "host", vpmod_str(h->host)) ||
	    vpmod_put(d, "backend", vpmod_u64(h->backend)) ||
	    vpmod_put(d, "offcpu", vpmod_bool(h->offcpu)))
		goto fail;
	if (!(l = PyList_New(0)))
		goto fail;
	for (int i = 0; i < h->argc; i++) {
		PyObject *a = PyUnicode_DecodeFSDefault(h->argv[i] ? h->argv[i] : "");

		if (!a || PyList_Append(l, a) < 0) {
			Py_XDECREF(a);
			goto fail;
		}
		Py_DECREF(a);
	}
	if (vpmod_put(d, "argv", l))
		goto fail_nol;
	if (!(l = PyList_New(0)))
		goto fail;
	for (size_t i = 0; i < h->nmodules; i++) {
		PyObject *m = PyDict_New();

		if (!m ||
		    vpmod_put(m, "path",
			      PyUnicode_DecodeFSDefault(h->modules[i].path ? h->modules[i].path :
									     "")) ||
		    vpmod_put(m, "build_id",
			      vpmod_hex(h->modules[i].build_id, h->modules[i].build_id_len)) ||
		    PyList_Append(l, m) < 0) {
			Py_XDECREF(m);
			goto fail;
		}
		Py_DECREF(m);
	}
	if (vpmod_put(d, "modules", l))
		goto fail_nol;
	if (!(l = PyList_New(0)))
		goto fail;
	for (size_t i = 0; i < h->ncosts; i++) {
		PyObject *c = Py_BuildValue("(IKK)", h->costs[i].insn_class,
					    (unsigned long long)h->costs[i].in_window_ns,
					    (unsigned long long)h->costs[i].full_ns);

		if (!c || PyList_Append(l, c) < 0) {
			Py_XDECREF(c);
			goto fail;
		}
		Py_DECREF(c);
	}
	if (vpmod_put(d, "probe_costs", l))
		goto fail_nol;
	return d;
fail:
	Py_XDECREF(l);
fail_nol:
	Py_DECREF(d);
	return NULL;
}

static PyObject *rec_get_totals(PyObject *self, void *closure)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_build_totals *bt = r->totals;
	const struct vp_trailer *tr = r->trailer;
	PyObject *d = PyDict_New();

	if (!d)
		return NULL;
	if (vpmod_put(d, "events", vpmod_u64(bt->events)) ||
	    vpmod_put(d, "invocations", vpmod_u64(bt->invocations)) ||
	    vpmod_put(d, "lost", vpmod_u64(r->lost)) ||
	    vpmod_put(d, "unpaired", vpmod_u64(bt->unpaired_entries)) ||
	    vpmod_put(d, "unmatched_exits", vpmod_u64(bt->unmatched_exits)) ||
	    vpmod_put(d, "open_at_end", vpmod_u64(bt->open_at_end)) ||
	    vpmod_put(d, "out_of_order", vpmod_u64(bt->out_of_order)) ||
	    vpmod_put(d, "threads", vpmod_u64(bt->threads)) ||
	    vpmod_put(d, "foreign", tr->present ? vpmod_u64(tr->foreign) : vpmod_none()) ||
	    vpmod_put(d, "total_time", vpmod_u64(r->an->total_time)) ||
	    vpmod_put(d, "duration", vpmod_u64(bt->events ? bt->last_time - bt->first_time : 0)) ||
	    vpmod_put(d, "complete", vpmod_bool(tr->present)) ||
	    vpmod_put(d, "exited", vpmod_bool(tr->present && (tr->flags & VP_END_EXITED))) ||
	    vpmod_put(d, "wait_status", vpmod_u64(tr->wait_status)) ||
	    vpmod_put(d, "interrupted", vpmod_bool(tr->flags & VP_END_INTERRUPTED)) ||
	    vpmod_put(d, "write_error", vpmod_bool(tr->flags & VP_END_WRITE_ERROR))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *rec_get_params(PyObject *self, void *closure)
{
	const struct vp_analysis *an = ((const struct rec *)self)->an;
	PyObject *d = PyDict_New();

	if (!d)
		return NULL;
	if (vpmod_put(d, "cutoff", PyFloat_FromDouble(an->params.cutoff)) ||
	    vpmod_put(d, "probability", PyFloat_FromDouble(an->params.probability)) ||
	    vpmod_put(d, "window", PyFloat_FromDouble(an->params.window)) ||
	    vpmod_put(d, "cov_threshold", PyFloat_FromDouble(an->cov_threshold)) ||
	    vpmod_put(d, "similarity", PyFloat_FromDouble(an->params.similarity)) ||
	    vpmod_put(d, "beta", PyFloat_FromDouble(an->params.beta)) ||
	    vpmod_put(d, "k", PyFloat_FromDouble(an->k)) ||
	    vpmod_put(d, "max_vim", PyFloat_FromDouble(an->max_vim))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* The warnings `varperf report` prints for a usable but imperfect file. */
static PyObject *rec_get_warnings(PyObject *self, void *closure)
{
	const struct vp_recording *vr = ((const struct rec *)self)->vr;
	PyObject *l = PyList_New(0);

	for (size_t i = 0; l && i < vr->nwarnings; i++) {
		const char *m = vr->warnings[i].message;
		PyObject *s = PyUnicode_DecodeUTF8(m, (Py_ssize_t)strlen(m), "replace");

		if (!s || PyList_Append(l, s) < 0)
			Py_CLEAR(l);
		Py_XDECREF(s);
	}
	return l;
}

static PyObject *rec_get_path(PyObject *self, void *closure)
{
	return PyUnicode_DecodeFSDefault(((const struct rec *)self)->path);
}

static PyObject *rec_get_nfuncs(PyObject *self, void *closure)
{
	return PyLong_FromSize_t(((const struct rec *)self)->hdr->nfuncs);
}

static PyObject *rec_get_compensated(PyObject *self, void *closure)
{
	return vpmod_bool(((const struct rec *)self)->compensated);
}

static PyObject *rec_get_time(PyObject *self, void *closure)
{
	return PyUnicode_FromString(vp_time_base_name(((const struct rec *)self)->time));
}

static PyObject *rec_get_nnodes(PyObject *self, void *closure)
{
	return PyLong_FromSize_t(((const struct rec *)self)->tree->nnodes);
}

static PyObject *rec_get_ncallsites(PyObject *self, void *closure)
{
	return PyLong_FromSize_t(((const struct rec *)self)->ncs);
}

static PyObject *rec_get_npatterns(PyObject *self, void *closure)
{
	return PyLong_FromSize_t(((const struct rec *)self)->an->npatterns);
}

/* ---- functions ---- */

static PyObject *rec_func(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_func *f;
	unsigned long i;
	PyObject *d;

	if (!PyArg_ParseTuple(args, "k:func", &i) || check_func(r, i) < 0)
		return NULL;
	f = &r->hdr->funcs[i];
	d = PyDict_New();
	if (!d)
		return NULL;
	if (vpmod_put(d, "index", PyLong_FromUnsignedLong(i)) ||
	    vpmod_put(d, "name", vpmod_str(f->name)) ||
	    vpmod_put(d, "display", vpmod_str(func_name(r, (uint32_t)i))) ||
	    vpmod_put(d, "base", vpmod_str(f->base ? f->base : func_name(r, (uint32_t)i))) ||
	    vpmod_put(d, "module", PyLong_FromUnsignedLong(f->module)) ||
	    vpmod_put(d, "addr", vpmod_u64(f->addr)) || vpmod_put(d, "size", vpmod_u64(f->size)) ||
	    vpmod_put(d, "probe_off", vpmod_u64(f->probe_off)) ||
	    vpmod_put(d, "flags", vpmod_u64(f->flags)) ||
	    vpmod_put(d, "insn_class", vpmod_u64(f->insn_class)) ||
	    vpmod_put(d, "clone", vpmod_bool(f->flags & VP_FUNC_CLONE)) ||
	    vpmod_put(d, "from_lib", vpmod_bool(f->flags & VP_FUNC_FROM_LIB)) ||
	    vpmod_put(d, "ncontexts",
		      PyLong_FromSize_t(r->fnode_start[i + 1] - r->fnode_start[i]))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* The probed function of @module holding link-time address @addr, or None. */
static PyObject *rec_func_at(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	unsigned long module;
	unsigned long long addr;
	size_t lo = 0, hi = r->hdr->nfuncs;

	if (!PyArg_ParseTuple(args, "kK:func_at", &module, &addr))
		return NULL;
	/* last function with (module, addr) <= the key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct vp_func *f = &r->hdr->funcs[r->func_by_addr[mid]];

		if (f->module < module || (f->module == module && f->addr <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest start at or below @addr, and its aliases (same start) */
	for (size_t k = lo; k > 0; k--) {
		uint32_t id = r->func_by_addr[k - 1];
		const struct vp_func *f = &r->hdr->funcs[id];

		if (f->module != module || f->addr != r->hdr->funcs[r->func_by_addr[lo - 1]].addr)
			break;
		if (addr < f->addr + (f->size ? f->size : 1))
			return PyLong_FromUnsignedLong(id);
	}
	Py_RETURN_NONE;
}

/* @name as the symbol, the display name, the base name, or the display name up to "(". */
static int name_matches(const struct vp_func *f, const char *name)
{
	size_t n = strlen(name);

	if ((f->name && !strcmp(f->name, name)) || (f->display && !strcmp(f->display, name)) ||
	    (f->base && !strcmp(f->base, name)))
		return 1;
	return f->display && !strncmp(f->display, name, n) && f->display[n] == '(';
}

static PyObject *rec_funcs_named(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const char *name;
	PyObject *l;

	if (!PyArg_ParseTuple(args, "s:funcs_named", &name))
		return NULL;
	l = PyList_New(0);
	for (size_t i = 0; l && i < r->hdr->nfuncs; i++) {
		PyObject *v;

		if (!name_matches(&r->hdr->funcs[i], name))
			continue;
		v = PyLong_FromSize_t(i);
		if (!v || PyList_Append(l, v) < 0) {
			Py_XDECREF(v);
			Py_CLEAR(l);
		}
		Py_XDECREF(v);
	}
	return l;
}

/* Merged statistics of function @func over all its contexts, or None. */
static PyObject *rec_func_stats(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_func_summary *fs;
	unsigned long f;
	PyObject *d;

	if (!PyArg_ParseTuple(args, "k:func_stats", &f) || check_func(r, f) < 0)
		return NULL;
	if (r->fsum_of[f] < 0)
		Py_RETURN_NONE;
	fs = &r->an->funcs[r->fsum_of[f]];
	d = vpmod_stats(&fs->stats);
	if (d && (vpmod_put(d, "contexts", PyLong_FromUnsignedLong(fs->ncontexts)) ||
		  vpmod_put(d, "func", PyLong_FromUnsignedLong(fs->func)) ||
		  vpmod_put(d, "rank", PyLong_FromLong(r->fsum_of[f] + 1))))
		Py_CLEAR(d);
	return d;
}

/* Functions with invocations, sorted by total time (as the report lists them). */
static PyObject *rec_function_summaries(PyObject *self, PyObject *noargs)
{
	const struct rec *r = (const struct rec *)self;
	PyObject *l = PyList_New(0);

	for (size_t i = 0; l && i < r->an->nfuncs; i++) {
		PyObject *d = vpmod_stats(&r->an->funcs[i].stats);

		if (!d || vpmod_put(d, "func", PyLong_FromUnsignedLong(r->an->funcs[i].func)) ||
		    vpmod_put(d, "contexts", PyLong_FromUnsignedLong(r->an->funcs[i].ncontexts)) ||
		    PyList_Append(l, d) < 0)
			Py_CLEAR(l);
		Py_XDECREF(d);
	}
	return l;
}

static PyObject *rec_nodes_of(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	unsigned long f;

	if (!PyArg_ParseTuple(args, "k:nodes_of", &f) || check_func(r, f) < 0)
		return NULL;
	return vpmod_ids(r->fnode_ids + r->fnode_start[f],
			 r->fnode_start[f + 1] - r->fnode_start[f]);
}

/* ---- call sites ---- */

static PyObject *rec_callsite(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_callsite *cs;
	char s[512], l[1024];
	unsigned long id;
	PyObject *d;

	if (!PyArg_ParseTuple(args, "k:callsite", &id))
		return NULL;
	cs = id < r->ncs ? vp_reader_callsite(r->reader, (uint32_t)id) : NULL;
	if (!cs) {
		PyErr_Format(PyExc_IndexError, "no call site %lu (there are %zu)", id, r->ncs);
		return NULL;
	}
	d = PyDict_New();
	if (!d)
		return NULL;
	if (vpmod_put(d, "id", PyLong_FromUnsignedLong(id)) ||
	    vpmod_put(d, "flags", vpmod_u64(cs->flags)) ||
	    vpmod_put(d, "module", cs->module >= 0 ? PyLong_FromLong(cs->module) : vpmod_none()) ||
	    vpmod_put(d, "offset", vpmod_u64(cs->offset)) ||
	    vpmod_put(d, "caller", vpmod_str(cs->caller)) ||
	    vpmod_put(d, "file", vpmod_str(cs->file)) ||
	    vpmod_put(d, "line", cs->line ? PyLong_FromUnsignedLong(cs->line) : vpmod_none()) ||
	    vpmod_put(d, "tail_call", vpmod_bool(cs->flags & VP_CS_TRAMPOLINE)) ||
	    vpmod_put(d, "none", vpmod_bool(cs->flags & VP_CS_NONE)) ||
	    vpmod_put(d, "unmapped", vpmod_bool(cs->flags & VP_CS_UNMAPPED)) ||
	    vpmod_put(d, "label", vpmod_str(callsite_str(r, (uint32_t)id, 1, s, sizeof(s)))) ||
	    vpmod_put(d, "where", vpmod_str(callsite_str(r, (uint32_t)id, 0, l, sizeof(l))))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* Call sites at link-time return address @offset of @module (None: a file
 * that is not one of the recording's modules). */
static PyObject *rec_callsites_at(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	PyObject *modobj, *l;
	unsigned long long off;
	long module = -1;
	size_t lo = 0, hi = r->ncs;

	if (!PyArg_ParseTuple(args, "OK:callsites_at", &modobj, &off))
		return NULL;
	if (modobj != Py_None) {
		module = PyLong_AsLong(modobj);
		if (module == -1 && PyErr_Occurred())
			return NULL;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct vp_callsite *cs = vp_reader_callsite(r->reader, r->cs_by_addr[mid]);

		if (cs->module < module || (cs->module == module && cs->offset < off))
			lo = mid + 1;
		else
			hi = mid;
	}
	l = PyList_New(0);
	for (; l && lo < r->ncs; lo++) {
		const struct vp_callsite *cs = vp_reader_callsite(r->reader, r->cs_by_addr[lo]);
		PyObject *v;

		if (cs->module != module || cs->offset != off)
			break;
		v = PyLong_FromUnsignedLong(r->cs_by_addr[lo]);
		if (!v || PyList_Append(l, v) < 0)
			Py_CLEAR(l);
		Py_XDECREF(v);
	}
	return l;
}

/* "__libc_start_main@@GLIBC_2.34+0xac" -> "__libc_start_main+0xac" in @buf. */
static const char *caller_unversioned(const char *s, char *buf, size_t len)
{
	const char *at = strchr(s, '@'), *plus;

	if (!at)
		return s;
	plus = strchr(at, '+');
	snprintf(buf, len, "%.*s%s", (int)(at - s), s, plus ? plus : "");
	return buf;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/*
 * Call sites whose caller is @caller ("sym+0x1f", symbol versions ignored)
 * or whose source position is @file:@line (@file without a "/" matches the
 * last path component); a module of -1 matches any.  For recordings of
 * another build of the program, where addresses do not match.
 */
static PyObject *rec_callsites_where(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "caller", "file", "line", "module", NULL };
	const struct rec *r = (const struct rec *)self;
	const char *caller = NULL, *file = NULL;
	unsigned long line = 0;
	long module = -1;
	char b1[512], b2[512];
	PyObject *l;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|zzkl:callsites_where", kwlist, &caller, &file,
					 &line, &module))
		return NULL;
	if (caller)
		caller = caller_unversioned(caller, b1, sizeof(b1));
	l = PyList_New(0);
	for (size_t i = 0; l && i < r->ncs; i++) {
		const struct vp_callsite *cs = vp_reader_callsite(r->reader, (uint32_t)i);
		PyObject *v;

		if (module >= 0 && cs->module != module)
			continue;
		if (caller &&
		    (!cs->caller || strcmp(caller_unversioned(cs->caller, b2, sizeof(b2)), caller)))
			continue;
		if (file) {
			if (!cs->file || !*cs->file || cs->line != line)
				continue;
			if (strchr(file, '/') ? strcmp(cs->file, file) :
						strcmp(base_name(cs->file), file))
				continue;
		}
		v = PyLong_FromSize_t(i);
		if (!v || PyList_Append(l, v) < 0)
			Py_CLEAR(l);
		Py_XDECREF(v);
	}
	return l;
}

/* ---- nodes ---- */

/* What node @id's invocations waited for, most blocked time first:
 * [{"reason", "count", "ns"}], "other" last (varperf report's waits). */
static PyObject *waits_list(const struct rec *r, uint32_t id)
{
	struct vp_cct_wait w[VP_CCT_WAITS + 1];
	size_t n = vp_cct_waits_sorted(r->tree, id, w);
	PyObject *l = PyList_New(0);
	char buf[64];

	for (size_t i = 0; l && i < n; i++) {
		PyObject *e = Py_BuildValue("{s:s,s:K,s:K}", "reason",
					    w[i].reason == UINT32_MAX
						    ? "other"
						    : vp_wait_reason_name(r->hdr, w[i].reason, buf,
									  sizeof(buf)),
					    "count", (unsigned long long)w[i].count, "ns",
					    (unsigned long long)w[i].ns);

		if (!e || PyList_Append(l, e))
			Py_CLEAR(l);
		Py_XDECREF(e);
	}
	return l;
}

/* The split of node @id's time into on-CPU and off-CPU time, or None. */
static PyObject *offcpu_dict(const struct rec *r, uint32_t id)
{
	struct vp_offcpu_split sp;
	PyObject *d;

	if (vp_cct_offcpu_split(r->tree, id, &sp) < 0)
		return vpmod_none();
	d = PyDict_New();
	if (d && (vpmod_put(d, "count", vpmod_u64(sp.n)) ||
		  vpmod_put(d, "wall_mean", PyFloat_FromDouble(sp.wall_mean)) ||
		  vpmod_put(d, "on_mean", PyFloat_FromDouble(sp.on_mean)) ||
		  vpmod_put(d, "off_mean", PyFloat_FromDouble(sp.off_mean)) ||
		  vpmod_put(d, "wall_variance", PyFloat_FromDouble(sp.wall_var)) ||
		  vpmod_put(d, "on_variance", PyFloat_FromDouble(sp.on_var)) ||
		  vpmod_put(d, "off_variance", PyFloat_FromDouble(sp.off_var)) ||
		  vpmod_put(d, "covariance", PyFloat_FromDouble(sp.cov)) ||
		  vpmod_put(d, "off_share",
			    sp.wall_var > 0 ? PyFloat_FromDouble(sp.off_share) : vpmod_none()) ||
		  vpmod_put(d, "on_share",
			    sp.wall_var > 0 ? PyFloat_FromDouble(sp.on_share) : vpmod_none())))
		Py_CLEAR(d);
	if (d && sp.has_blocked &&
	    (vpmod_put(d, "blocked_mean", PyFloat_FromDouble(sp.blocked_mean)) ||
	     vpmod_put(d, "preempted_mean", PyFloat_FromDouble(sp.preempted_mean)) ||
	     vpmod_put(d, "blocked_share", sp.wall_var > 0 ? PyFloat_FromDouble(sp.blocked_share)
							   : vpmod_none()) ||
	     vpmod_put(d, "preempted_share", sp.wall_var > 0
						     ? PyFloat_FromDouble(sp.preempted_share)
						     : vpmod_none()) ||
	     vpmod_put(d, "waits", waits_list(r, id))))
		Py_CLEAR(d);
	return d;
}

static PyObject *rec_node(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_cct_node *n;
	unsigned long id;
	char label[1024];
	PyObject *d, *pats;
	double share;
	size_t np;

	if (!PyArg_ParseTuple(args, "k:node", &id) || vpmod_check_node(r, id) < 0)
		return NULL;
	n = &r->tree->nodes[id];
	d = vpmod_stats(&n->stats);
	if (!d)
		return NULL;
	np = r->npat_start[id + 1] - r->npat_start[id];
	pats = PyList_New((Py_ssize_t)np);
	for (size_t i = 0; pats && i < np; i++) {
		PyObject *v = PyLong_FromUnsignedLong(r->npat_ids[r->npat_start[id] + i] + 1);

		if (!v || PyList_SetItem(pats, (Py_ssize_t)i, v) < 0)
			Py_CLEAR(pats);
	}
	share = r->an->total_time ? (double)vp_cct_node_time(n) / (double)r->an->total_time : 0.0;
	if (vpmod_put(d, "id", PyLong_FromUnsignedLong(id)) ||
	    vpmod_put(d, "parent",
		      n->parent == VP_NODE_ROOT || n->parent == VP_NO_NODE ?
			      vpmod_none() :
			      PyLong_FromUnsignedLong(n->parent)) ||
	    vpmod_put(d, "depth", PyLong_FromUnsignedLong(n->depth)) ||
	    vpmod_put(d, "func", PyLong_FromUnsignedLong(n->func)) ||
	    vpmod_put(d, "function", vpmod_str(func_name(r, n->func))) ||
	    vpmod_put(d, "callsite",
		      n->callsite == VP_NO_CALLSITE ? vpmod_none() :
						      PyLong_FromUnsignedLong(n->callsite)) ||
	    vpmod_put(d, "label", vpmod_str(node_label(r, (uint32_t)id, label, sizeof(label)))) ||
	    vpmod_put(d, "unpaired", vpmod_u64(n->unpaired)) ||
	    vpmod_put(d, "significant", vpmod_bool(id < r->an->nnodes && r->an->significant[id])) ||
	    vpmod_put(d, "high_variance",
		      vpmod_bool(id < r->an->nnodes && r->an->high_variance[id])) ||
	    vpmod_put(d, "vim", PyFloat_FromDouble(id < r->an->nnodes ? r->an->vim[id] : 0)) ||
	    vpmod_put(d, "share", PyFloat_FromDouble(share)) ||
	    vpmod_put(d, "children", vpmod_ids(n->children, n->nchildren)) ||
	    vpmod_put(d, "offcpu", offcpu_dict(r, (uint32_t)id)) ||
	    vpmod_put(d, "patterns", pats) || vpmod_put_distribution(d, r, (uint32_t)id)) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* Node ids from the outermost context down to @id. */
static PyObject *rec_node_path(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_cct_node *n;
	unsigned long id;
	uint32_t *ids, depth = 0;
	PyObject *l;

	if (!PyArg_ParseTuple(args, "k:node_path", &id) || vpmod_check_node(r, id) < 0)
		return NULL;
	for (uint32_t p = (uint32_t)id; p != VP_NODE_ROOT && p != VP_NO_NODE;
	     p = r->tree->nodes[p].parent)
		depth++;
	ids = malloc((depth ? depth : 1) * sizeof(*ids));
	if (!ids)
		return PyErr_NoMemory();
	n = &r->tree->nodes[id];
	for (uint32_t i = depth; i > 0; i--) {
		ids[i - 1] = n->id;
		n = &r->tree->nodes[n->parent];
	}
	l = vpmod_ids(ids, depth);
	free(ids);
	return l;
}

/*
 * (variance, [(node or None for self, row sum), ...]) of @id's covariance
 * matrix, largest |row sum| first: variable i contributes sum_j C[i][j],
 * and past VP_CCT_TRACKED children, the rest together as the string
 * "(N other callees)" in place of a node;
 * and the row sums add up to the variance (Kumar and Pande, Eq. 2).  The variance
 * is the matrix's sum, as report-text.c divides by.  None for a leaf.
 */
static PyObject *rec_contributors(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_cct_node *n;
	struct vp_contrib *c;
	unsigned long id;
	PyObject *l, *ret = NULL;
	long dim;

	if (!PyArg_ParseTuple(args, "k:contributors", &id) || vpmod_check_node(r, id) < 0)
		return NULL;
	n = &r->tree->nodes[id];
	if (!n->nchildren || n->cov.dim < 2)
		Py_RETURN_NONE;
	dim = vp_cct_contributors(n, &c);
	if (dim < 0)
		return PyErr_NoMemory();
	l = PyList_New((Py_ssize_t)dim);
	for (long i = 0; l && i < dim; i++) {
		/* cct.h: variable vp_cct_var(i) of the matrix is children[i]'s */
		size_t v = c[i].var;
		PyObject *who;
		PyObject *t;

		if (v > VP_CCT_TRACKED)
			who = PyUnicode_FromFormat("(%lu other callees)",
						   (unsigned long)vp_cct_nother(n->nchildren));
		else if (v == 0 || v > n->nchildren)
			who = vpmod_none();
		else
			who = PyLong_FromUnsignedLong(n->children[v - 1]);
		t = who ? Py_BuildValue("(Nd)", who, c[i].value) : NULL;

		if (!t || PyList_SetItem(l, (Py_ssize_t)i, t) < 0)
			Py_CLEAR(l);
	}
	if (l)
		ret = Py_BuildValue("(dN)", vp_covar_sum(&n->cov), l);
	free(c);
	return ret;
}

/* The full covariance matrix of @id as a list of rows (labels: self, the
 * first VP_CCT_TRACKED children, then the other callees together). */
static PyObject *rec_covariance(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_cct_node *n;
	unsigned long id;
	PyObject *rows;

	if (!PyArg_ParseTuple(args, "k:covariance", &id) || vpmod_check_node(r, id) < 0)
		return NULL;
	n = &r->tree->nodes[id];
	if (!n->nchildren || n->cov.dim < 2)
		Py_RETURN_NONE;
	rows = PyList_New((Py_ssize_t)n->cov.dim);
	for (size_t a = 0; rows && a < n->cov.dim; a++) {
		PyObject *row = PyList_New((Py_ssize_t)n->cov.dim);

		for (size_t b = 0; row && b < n->cov.dim; b++) {
			PyObject *v = PyFloat_FromDouble(vp_covar_get(&n->cov, a, b));

			if (!v || PyList_SetItem(row, (Py_ssize_t)b, v) < 0)
				Py_CLEAR(row);
		}
		if (!row || PyList_SetItem(rows, (Py_ssize_t)a, row) < 0)
			Py_CLEAR(rows);
	}
	return rows;
}

/* Exact merge (Chan) of the statistics of the nodes @ids. */
static PyObject *rec_merge_stats(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	PyObject *seq, *it, *item;
	struct vp_stats s;

	if (!PyArg_ParseTuple(args, "O:merge_stats", &seq))
		return NULL;
	it = PyObject_GetIter(seq);
	if (!it)
		return NULL;
	vp_stats_init(&s);
	while ((item = PyIter_Next(it))) {
		unsigned long id = PyLong_AsUnsignedLong(item);

		Py_DECREF(item);
		if ((id == (unsigned long)-1 && PyErr_Occurred()) || vpmod_check_node(r, id) < 0) {
			Py_DECREF(it);
			return NULL;
		}
		vp_stats_merge(&s, &r->tree->nodes[id].stats);
	}
	Py_DECREF(it);
	if (PyErr_Occurred())
		return NULL;
	return vpmod_stats(&s);
}

/* ---- patterns ---- */

static PyObject *pattern_dict(const struct rec *r, size_t i)
{
	const struct vp_pattern *p = &r->an->patterns[i];
	PyObject *d = vpmod_stats(&p->stats), *chain, *through;

	if (!d)
		return NULL;
	/* pass-through callees folded into the pattern, outermost first */
	through = PyList_New((Py_ssize_t)p->nthrough);
	for (size_t e = 0; through && e < p->nthrough; e++) {
		PyObject *t = Py_BuildValue("(kN)", (unsigned long)p->through[e].func,
					    p->through[e].callsite == VP_NO_CALLSITE ?
						    vpmod_none() :
						    PyLong_FromUnsignedLong(p->through[e].callsite));

		if (!t || PyList_SetItem(through, (Py_ssize_t)e, t) < 0)
			Py_CLEAR(through);
	}
	chain = PyList_New((Py_ssize_t)p->len);
	for (size_t e = 0; chain && e < p->len; e++) {
		PyObject *t = Py_BuildValue("(kN)", (unsigned long)p->chain[e].func,
					    p->chain[e].callsite == VP_NO_CALLSITE ?
						    vpmod_none() :
						    PyLong_FromUnsignedLong(p->chain[e].callsite));

		if (!t || PyList_SetItem(chain, (Py_ssize_t)e, t) < 0)
			Py_CLEAR(chain);
	}
	if (vpmod_put(d, "rank", PyLong_FromSize_t(i + 1)) || vpmod_put(d, "chain", chain) ||
	    vpmod_put(d, "through", through) ||
	    vpmod_put(d, "nodes", vpmod_ids(p->nodes, p->nnodes)) ||
	    vpmod_put(d, "vim", PyFloat_FromDouble(p->vim)) ||
	    vpmod_put(d, "vim_share",
		      PyFloat_FromDouble(r->an->max_vim > 0 ? p->vim / r->an->max_vim : 0)) ||
	    vpmod_put(d, "in_pattern_set", vpmod_bool(p->in_pattern_set))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* All patterns by rank (VIM, descending), or the first @count. */
static PyObject *rec_patterns(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	Py_ssize_t count = -1;
	size_t n = r->an->npatterns;
	PyObject *l;

	if (!PyArg_ParseTuple(args, "|n:patterns", &count))
		return NULL;
	if (count >= 0 && (size_t)count < n)
		n = (size_t)count;
	l = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; l && i < n; i++) {
		PyObject *d = pattern_dict(r, i);

		if (!d || PyList_SetItem(l, (Py_ssize_t)i, d) < 0)
			Py_CLEAR(l);
	}
	return l;
}

static PyObject *rec_pattern(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	Py_ssize_t rank;

	if (!PyArg_ParseTuple(args, "n:pattern", &rank))
		return NULL;
	if (rank < 1 || (size_t)rank > r->an->npatterns) {
		PyErr_Format(PyExc_IndexError, "no pattern of rank %zd (there are %zu)", rank,
			     r->an->npatterns);
		return NULL;
	}
	return pattern_dict(r, (size_t)rank - 1);
}

static PyMethodDef rec_methods[] = {
	{ "func", rec_func, METH_VARARGS, "func(index) -> dict: a probed function." },
	{ "func_at", rec_func_at, METH_VARARGS,
	  "func_at(module, address) -> the function holding that link-time address, or None." },
	{ "funcs_named", rec_funcs_named, METH_VARARGS,
	  "funcs_named(name) -> [index]: symbol, display or base name (or display up to '(')." },
	{ "func_stats", rec_func_stats, METH_VARARGS,
	  "func_stats(index) -> statistics merged over every context, or None." },
	{ "function_summaries", rec_function_summaries, METH_NOARGS,
	  "function_summaries() -> [dict]: called functions by total time." },
	{ "nodes_of", rec_nodes_of, METH_VARARGS,
	  "nodes_of(func) -> [node]: its recorded contexts." },
	{ "callsite", rec_callsite, METH_VARARGS, "callsite(id) -> dict: a call site." },
	{ "callsites_at", rec_callsites_at, METH_VARARGS,
	  "callsites_at(module or None, offset) -> [id]: call sites at that return address." },
	{ "callsites_where", (PyCFunction)(void (*)(void))rec_callsites_where,
	  METH_VARARGS | METH_KEYWORDS,
	  "callsites_where(caller=None, file=None, line=0, module=-1) -> [id]." },
	{ "node", rec_node, METH_VARARGS,
	  "node(id) -> dict: statistics and flags of a node; with 'percentiles'\n"
	  "({p50, p90, p99, p99_9, max} of its durations, nearest rank within 1/128,\n"
	  "None without calls), 'path_calls' (calls of its parent that called it)\n"
	  "and 'path_fraction' (path_calls over the parent's count; None at the top)." },
	{ "histogram", vpmod_rec_histogram, METH_O,
	  "histogram(node or [nodes]) -> [(lo, hi, count, bucket)]: the buckets that hold\n"
	  "durations, as the JSON report's 'histogram' (values lo..hi, both included),\n"
	  "merged over the nodes when given several; bucket is the index of\n"
	  "hist_bucket_range()." },
	{ "quantiles", vpmod_rec_quantiles, METH_VARARGS,
	  "quantiles(node or [nodes], [q, ...]) -> [ns or None]: nearest-rank quantiles\n"
	  "(0 <= q <= 1) of the durations, merged over the nodes, within 1/128 of the\n"
	  "exact ones (exact at 0 and 1); None without calls." },
	{ "slowest", vpmod_rec_slowest, METH_VARARGS,
	  "slowest(id) -> [dict]: the node's slowest calls kept (16), by start: 'start'\n"
	  "(ns, the recording's clock), 'offset' (ns since its first event), 'duration',\n"
	  "'thread' (tid), 'pid', 'thread_index', and 'parts': [(who, ns)] where its time\n"
	  "went, adding up to the duration: who is None (its own code), a child node or\n"
	  "'(N other callees)'." },
	{ "node_path", rec_node_path, METH_VARARGS,
	  "node_path(id) -> [node]: its context, outermost first." },
	{ "contributors", rec_contributors, METH_VARARGS,
	  "contributors(id) -> (variance, [(child node, None for self or '(N other callees)', "
	  "row sum)]) or None." },
	{ "covariance", rec_covariance, METH_VARARGS,
	  "covariance(id) -> rows of the covariance matrix (self, the first 256 children, the "
	  "other callees) or None." },
	{ "merge_stats", rec_merge_stats, METH_VARARGS,
	  "merge_stats(nodes) -> statistics of those nodes merged exactly." },
	{ "patterns", rec_patterns, METH_VARARGS, "patterns([count]) -> [dict] by rank." },
	{ "pattern", rec_pattern, METH_VARARGS,
	  "pattern(rank) -> dict (rank 1 is the largest VIM)." },
	{ "lookup", vpmod_rec_lookup, METH_VARARGS,
	  "lookup(chain[, length]) -> node of that exact context, or None." },
	{ "nearest", vpmod_rec_nearest, METH_VARARGS,
	  "nearest(chain) -> {'node', 'cost', 'ops'} closest recorded context, or None." },
	{ "vcg", (PyCFunction)(void (*)(void))vpmod_rec_vcg, METH_VARARGS | METH_KEYWORDS,
	  "vcg(tau=0.4, beta=0.1, min_contribution=0.1, once_probability=0.95,\n"
	  "    max_passes=8) -> dict: the Variance Characterization Graph." },
	{ "bound", (PyCFunction)(void (*)(void))vpmod_rec_bound, METH_VARARGS | METH_KEYWORDS,
	  "bound(node, alpha=0.05, train=0.5, seed=1) -> dict: the regression MET." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef rec_getset[] = {
	{ "path", rec_get_path, NULL, "data file name", NULL },
	{ "header", rec_get_header, NULL, "the META chunk as a dict", NULL },
	{ "totals", rec_get_totals, NULL, "event and invocation counts", NULL },
	{ "params", rec_get_params, NULL, "analysis parameters", NULL },
	{ "warnings", rec_get_warnings, NULL, "problems of a usable file", NULL },
	{ "nfuncs", rec_get_nfuncs, NULL, "probed functions", NULL },
	{ "nnodes", rec_get_nnodes, NULL, "tree nodes, with the root (node 0)", NULL },
	{ "compensated", rec_get_compensated, NULL,
	  "whether the calibrated probe costs were subtracted from the durations", NULL },
	{ "time", rec_get_time, NULL,
	  "what the durations measure: 'wall', 'cpu' (on-CPU) or 'offcpu' (off-CPU) time", NULL },
	{ "ncallsites", rec_get_ncallsites, NULL, "call sites", NULL },
	{ "npatterns", rec_get_npatterns, NULL, "patterns", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot rec_slots[] = {
	{ Py_tp_dealloc, rec_dealloc },
	{ Py_tp_new, vpmod_no_new },
	{ Py_tp_methods, rec_methods },
	{ Py_tp_getset, rec_getset },
	{ Py_tp_doc, "A loaded varperf recording: calling-context tree and analysis." },
	{ 0, NULL },
};

static PyType_Spec rec_spec = {
	"_varperf.Recording", sizeof(struct rec), 0, Py_TPFLAGS_DEFAULT, rec_slots,
};

/* Make the Recording type and add it to module @m; -1 with an exception. */
int vpmod_rec_register(PyObject *m)
{
	vpmod_rec_type = (PyTypeObject *)PyType_FromSpec(&rec_spec);
	if (!vpmod_rec_type)
		return -1;
	Py_INCREF(vpmod_rec_type);
	if (PyModule_AddObject(m, "Recording", (PyObject *)vpmod_rec_type) < 0) {
		Py_DECREF(vpmod_rec_type);
		return -1;
	}
	return 0;
}
