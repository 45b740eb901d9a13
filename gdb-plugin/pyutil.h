/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * pyutil.h - the Python/C helpers of the _varperf extension: the Python
 * headers under the stable ABI, core's -errno and messages raised as
 * varperf.Error, and builders of Python values.  Nothing here knows the
 * Recording: every file of the extension may use it.
 */
#ifndef VARPERF_GDB_PLUGIN_PYUTIL_H
#define VARPERF_GDB_PLUGIN_PYUTIL_H

/*
 * The stable ABI of Python 3.8, the oldest Python that a GDB still in
 * distributions embeds (Ubuntu 20.04's GDB 9): one build of the module
 * loads into every Python 3 from 3.8 on, whichever one GDB was linked with.
 * Under it, types are heap types made with PyType_FromSpec, and the
 * exception and the types live in global variables: the module is
 * single-phase and GDB has one interpreter.
 */
#define Py_LIMITED_API 0x03080000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>

#include "core/varperf-core.h"

/* Room for one of core's messages with a prefix. */
enum { VPMOD_MSG_LEN = 640 };

/* varperf.Error, made by PyInit__varperf (module.c). */
extern PyObject *vpmod_error;

/* Raise varperf.Error(errno, @msg or strerror) with .filename = @path;
 * returns NULL. */
PyObject *vpmod_raise(int err, const char *msg, const char *path);

/* Builders: new references, NULL with an exception on failure. */
PyObject *vpmod_u64(uint64_t v);
PyObject *vpmod_str(const char *s); /* UTF-8, bad bytes replaced; NULL is "" */
PyObject *vpmod_none(void);
PyObject *vpmod_bool(int v);
PyObject *vpmod_ids(const uint32_t *ids, size_t n);	 /* list of ints */
PyObject *vpmod_hex(const unsigned char *p, size_t n); /* "00ff..." */
PyObject *vpmod_stats(const struct vp_stats *s);	 /* dict, as report-json.c */
/* d[key] = v, dropping the reference to v; -1 on error (v dropped too). */
int vpmod_put(PyObject *d, const char *key, PyObject *v);
int vpmod_put_stats(PyObject *d, const struct vp_stats *s);
/* A zero-filled instance of heap type @tp, and a tp_new that refuses. */
PyObject *vpmod_alloc(PyTypeObject *tp);
PyObject *vpmod_no_new(PyTypeObject *tp, PyObject *args, PyObject *kw);

#endif
