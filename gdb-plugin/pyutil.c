/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pyutil.c - the Python/C helpers of the _varperf extension: core's errors
 * as varperf.Error, and small builders of Python values (numbers, strings,
 * id lists, statistics dicts, instances of heap types).
 */
#include <config.h>

/* Python.h, in pyutil.h, must come before the system headers */
#include "pyutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PyObject *vpmod_error; /* varperf.Error */

/* ---- errors ---- */

/*
 * Raise varperf.Error(errno, message).  Error derives from OSError: core
 * reports failures as errno values (ENOENT for a missing file, EBADMSG for
 * a damaged one), so callers can catch OSError like for any other file,
 * and read core's one-line message in .strerror and the file in .filename.
 */
PyObject *vpmod_raise(int err, const char *msg, const char *path)
{
	PyObject *exc;

	if (err < 0)
		err = -err;
	if (!err)
		err = EIO;
	if (err == ENOMEM && (!msg || !*msg))
		return PyErr_NoMemory();
	if (!msg || !*msg)
		msg = strerror(err);
	/* names from the file may not be UTF-8: never fail on them here */
	exc = PyObject_CallFunction(vpmod_error, "iN", err,
				    PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace"));
	if (!exc)
		return NULL;
	if (path) {
		PyObject *p = PyUnicode_DecodeFSDefault(path);

		if (!p || PyObject_SetAttrString(exc, "filename", p) < 0) {
			Py_XDECREF(p);
			Py_DECREF(exc);
			return NULL;
		}
		Py_DECREF(p);
	}
	PyErr_SetObject(vpmod_error, exc);
	Py_DECREF(exc);
	return NULL;
}

/* ---- small builders ---- */

/* Set d[key] = v and drop the reference to v; -1 (with v dropped) on error. */
int vpmod_put(PyObject *d, const char *key, PyObject *v)
{
	int ret;

	if (!v)
		return -1;
	ret = PyDict_SetItemString(d, key, v);
	Py_DECREF(v);
	return ret;
}

PyObject *vpmod_u64(uint64_t v)
{
	return PyLong_FromUnsignedLongLong(v);
}

PyObject *vpmod_str(const char *s)
{
	return PyUnicode_DecodeUTF8(s ? s : "", (Py_ssize_t)strlen(s ? s : ""), "replace");
}

PyObject *vpmod_none(void)
{
	Py_INCREF(Py_None);
	return Py_None;
}

PyObject *vpmod_bool(int v)
{
	return PyBool_FromLong(v != 0);
}

/* A list of uint32 ids. */
PyObject *vpmod_ids(const uint32_t *ids, size_t n)
{
	PyObject *l = PyList_New((Py_ssize_t)n);

	if (!l)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		PyObject *v = PyLong_FromUnsignedLong(ids[i]);

		if (!v || PyList_SetItem(l, (Py_ssize_t)i, v) < 0) {
			Py_DECREF(l);
			return NULL;
		}
	}
	return l;
}

/*
 * The statistics of one node, function or pattern, with the formulas of
 * `varperf report --format json` (report-json.c): population variance,
 * mean 0 and min/max None without invocations.
 */
int vpmod_put_stats(PyObject *d, const struct vp_stats *s)
{
	if (vpmod_put(d, "count", vpmod_u64(s->n)) ||
	    vpmod_put(d, "mean", PyFloat_FromDouble(s->n ? s->mean : 0)) ||
	    vpmod_put(d, "stddev", PyFloat_FromDouble(vp_stats_stddev(s))) ||
	    vpmod_put(d, "variance", PyFloat_FromDouble(vp_stats_variance(s))) ||
	    vpmod_put(d, "cov", PyFloat_FromDouble(vp_stats_cov(s))) ||
	    vpmod_put(d, "total", vpmod_u64(s->total)) ||
	    vpmod_put(d, "min", s->n ? vpmod_u64(s->min) : vpmod_none()) ||
	    vpmod_put(d, "max", s->n ? vpmod_u64(s->max) : vpmod_none()))
		return -1;
	return 0;
}

PyObject *vpmod_stats(const struct vp_stats *s)
{
	PyObject *d = PyDict_New();

	if (d && vpmod_put_stats(d, s) < 0)
		Py_CLEAR(d);
	return d;
}

/* @n bytes as lower-case hex digits: a build-id as readelf prints it. */
PyObject *vpmod_hex(const unsigned char *p, size_t n)
{
	char *s = malloc(2 * n + 1);
	PyObject *v;

	if (!s)
		return PyErr_NoMemory();
	for (size_t i = 0; i < n; i++)
		snprintf(s + 2 * i, 3, "%02x", p[i]);
	s[2 * n] = '\0';
	v = PyUnicode_FromString(s);
	free(s);
	return v;
}

/* ---- heap types ---- */

PyObject *vpmod_no_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
	PyErr_Format(PyExc_TypeError, "use _varperf.open() or _varperf.create()");
	return NULL;
}

/* A zero-filled instance of heap type @tp. */
PyObject *vpmod_alloc(PyTypeObject *tp)
{
	allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);

	return alloc(tp, 0);
}
