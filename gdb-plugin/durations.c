/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * durations.c - the distribution of a calling-context node's durations for
 * Python: its percentiles and histogram (core/histogram.h, the numbers of
 * `varperf report --format json`), how often its parent takes the path to
 * it, and its slowest calls with where their time went (core/slowest.h).
 * Recording.node() carries the short ones; Recording.histogram(),
 * .quantiles() and .slowest() the rest.
 */
#include <config.h>

/* Python.h, in _varperf.h, must come before the system headers */
#include "_varperf.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* The quantiles of a node's `percentiles`, as report-json.c names them. */
static const struct {
	const char *key;
	double q;
} percentiles[] = { { "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p99_9", 0.999 } };

/*
 * Put node @id's "percentiles" ({p50, p90, p99, p99_9, max}, None without
 * paired invocations), "path_calls" (how many of its parent's invocations
 * called it) and "path_fraction" (that over the parent's count; None for
 * a top-level node or a parent without a paired invocation) into @d.
 */
int vpmod_put_distribution(PyObject *d, const struct rec *r, uint32_t id)
{
	const struct vp_cct_node *n = &r->tree->nodes[id];
	const struct vp_cct_node *p = NULL;
	PyObject *ps = vpmod_none();

	if (n->parent != VP_NODE_ROOT && n->parent != VP_NO_NODE)
		p = &r->tree->nodes[n->parent];
	if (n->hist.n) {
		Py_DECREF(ps);
		ps = PyDict_New();
		for (size_t i = 0; ps && i < sizeof(percentiles) / sizeof(percentiles[0]); i++)
			if (vpmod_put(ps, percentiles[i].key,
				      vpmod_u64(vp_hist_quantile(&n->hist, percentiles[i].q))))
				Py_CLEAR(ps);
		if (ps && vpmod_put(ps, "max", vpmod_u64(n->hist.max)))
			Py_CLEAR(ps);
	}
	if (vpmod_put(d, "percentiles", ps) || vpmod_put(d, "path_calls", vpmod_u64(n->path_calls)) ||
	    vpmod_put(d, "path_fraction",
		      p && p->stats.n ? PyFloat_FromDouble((double)n->path_calls /
							   (double)p->stats.n) :
					vpmod_none()))
		return -1;
	return 0;
}

/* One node id from @o, checked; -1 with an exception. */
static int node_arg(const struct rec *r, PyObject *o, uint32_t *id)
{
	unsigned long v = PyLong_AsUnsignedLong(o);

	if (v == (unsigned long)-1 && PyErr_Occurred())
		return -1;
	if (vpmod_check_node(r, v) < 0)
		return -1;
	*id = (uint32_t)v;
	return 0;
}

/*
 * The histogram of @arg, a node id or an iterable of them: the node's own
 * (*@use points at it) or, for several, their merge into @tmp (exact: the
 * same buckets).  -1 with an exception; release @tmp either way.
 */
static int hist_arg(const struct rec *r, PyObject *arg, struct vp_hist *tmp,
		    const struct vp_hist **use)
{
	PyObject *it, *item;
	uint32_t id;

	vp_hist_init(tmp);
	if (PyLong_Check(arg)) {
		if (node_arg(r, arg, &id) < 0)
			return -1;
		*use = &r->tree->nodes[id].hist;
		return 0;
	}
	it = PyObject_GetIter(arg);
	if (!it)
		return -1;
	while ((item = PyIter_Next(it))) {
		int err = node_arg(r, item, &id);

		Py_DECREF(item);
		if (!err && vp_hist_merge(tmp, &r->tree->nodes[id].hist) < 0) {
			PyErr_NoMemory();
			err = -1;
		}
		if (err) {
			Py_DECREF(it);
			return -1;
		}
	}
	Py_DECREF(it);
	if (PyErr_Occurred())
		return -1;
	*use = tmp;
	return 0;
}

PyObject *vpmod_rec_histogram(PyObject *self, PyObject *arg)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_hist *h;
	struct vp_hist tmp;
	PyObject *l = NULL;
	uint64_t count;

	if (hist_arg(r, arg, &tmp, &h) < 0)
		goto out;
	l = PyList_New(0);
	for (uint32_t pos = 0, b; l && vp_hist_next(h, &pos, &b, &count);) {
		uint64_t lo, hi;
		PyObject *t;

		vp_hist_bucket_range(b, &lo, &hi);
		t = Py_BuildValue("(KKKI)", (unsigned long long)lo, (unsigned long long)hi,
				  (unsigned long long)count, (unsigned)b);
		if (!t || PyList_Append(l, t) < 0)
			Py_CLEAR(l);
		Py_XDECREF(t);
	}
out:
	vp_hist_release(&tmp);
	return l;
}

PyObject *vpmod_rec_quantiles(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	PyObject *nodes, *qs, *l = NULL;
	const struct vp_hist *h;
	struct vp_hist tmp;
	Py_ssize_t nq;

	if (!PyArg_ParseTuple(args, "OO:quantiles", &nodes, &qs))
		return NULL;
	if (!PySequence_Check(qs) || (nq = PySequence_Size(qs)) < 0) {
		PyErr_Clear();
		PyErr_SetString(PyExc_TypeError,
				"quantiles: the quantiles must be a sequence of numbers");
		return NULL;
	}
	if (hist_arg(r, nodes, &tmp, &h) < 0)
		goto out;
	l = PyList_New(nq);
	for (Py_ssize_t i = 0; l && i < nq; i++) {
		PyObject *item = PySequence_GetItem(qs, i), *v = NULL;
		double q = item ? PyFloat_AsDouble(item) : -1.0;

		if (PyErr_Occurred())
			;
		else if (!(q >= 0.0 && q <= 1.0))
			PyErr_Format(PyExc_ValueError, "quantiles: %R is not between 0 and 1", item);
		else if (!h->n)
			v = vpmod_none();
		else
			v = vpmod_u64(vp_hist_quantile(h, q));
		Py_XDECREF(item);
		if (!v || PyList_SetItem(l, i, v) < 0)
			Py_CLEAR(l);
	}
out:
	vp_hist_release(&tmp);
	return l;
}

/*
 * Who a part of a slow call is: None for the node's own code, a child's
 * node id, or "(N other callees)" for the callees past the tracked ones
 * (the names of Recording.contributors()).
 */
static PyObject *part_owner(const struct vp_cct_node *n, uint32_t var)
{
	if (var == 0)
		return vpmod_none();
	if (var > VP_CCT_TRACKED)
		return PyUnicode_FromFormat("(%lu other callees)",
					    (unsigned long)vp_cct_nother(n->nchildren));
	if (var > n->nchildren)
		return vpmod_none();
	return PyLong_FromUnsignedLong(n->children[var - 1]);
}

static PyObject *slow_call_dict(const struct rec *r, const struct vp_cct_node *n,
				const struct vp_slow_call *c)
{
	const struct vp_thread_info *ti = vp_reader_thread(r->reader, c->thread);
	uint64_t first = r->totals->first_time;
	PyObject *d = PyDict_New(), *parts;

	if (!d)
		return NULL;
	parts = PyList_New(c->nparts);
	for (uint32_t i = 0; parts && i < c->nparts; i++) {
		PyObject *who = part_owner(n, c->parts[i].var);
		PyObject *t = who ? Py_BuildValue("(NL)", who, (long long)c->parts[i].time) : NULL;

		if (!t || PyList_SetItem(parts, i, t) < 0)
			Py_CLEAR(parts);
	}
	if (vpmod_put(d, "start", vpmod_u64(c->start)) ||
	    vpmod_put(d, "offset", c->start >= first ? vpmod_u64(c->start - first) : vpmod_none()) ||
	    vpmod_put(d, "duration", vpmod_u64(c->duration)) ||
	    vpmod_put(d, "thread_index", PyLong_FromUnsignedLong(c->thread)) ||
	    vpmod_put(d, "thread", ti ? PyLong_FromUnsignedLong(ti->tid) : vpmod_none()) ||
	    vpmod_put(d, "pid", ti ? PyLong_FromUnsignedLong(ti->pid) : vpmod_none()) ||
	    vpmod_put(d, "parts", parts))
		Py_CLEAR(d);
	return d;
}

PyObject *vpmod_rec_slowest(PyObject *self, PyObject *args)
{
	const struct rec *r = (const struct rec *)self;
	const struct vp_cct_node *n;
	unsigned long id;
	PyObject *l;

	if (!PyArg_ParseTuple(args, "k:slowest", &id) || vpmod_check_node(r, id) < 0)
		return NULL;
	n = &r->tree->nodes[id];
	l = PyList_New(n->slowest.n);
	for (uint32_t i = 0; l && i < n->slowest.n; i++) {
		PyObject *d = slow_call_dict(r, n, &n->slowest.calls[i]);

		if (!d || PyList_SetItem(l, i, d) < 0)
			Py_CLEAR(l);
	}
	return l;
}

PyObject *vpmod_hist_bucket(PyObject *mod, PyObject *args)
{
	unsigned long long v;

	if (!PyArg_ParseTuple(args, "K:hist_bucket", &v))
		return NULL;
	return PyLong_FromUnsignedLong(vp_hist_bucket(v));
}

PyObject *vpmod_hist_bucket_range(PyObject *mod, PyObject *args)
{
	unsigned long b;
	uint64_t lo, hi;

	if (!PyArg_ParseTuple(args, "k:hist_bucket_range", &b))
		return NULL;
	if (b >= VP_HIST_NBUCKETS) {
		PyErr_Format(PyExc_IndexError, "no bucket %lu (buckets are 0..%d)", b,
			     VP_HIST_NBUCKETS - 1);
		return NULL;
	}
	vp_hist_bucket_range((uint32_t)b, &lo, &hi);
	return Py_BuildValue("(KK)", (unsigned long long)lo, (unsigned long long)hi);
}
