/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * _varperf.h - what the files of the _varperf extension share: the Python
 * headers under the stable ABI, the Recording object and small builders.
 */
#ifndef VARPERF_GDB_PLUGIN_VARPERF_H
#define VARPERF_GDB_PLUGIN_VARPERF_H

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

#include "core/sources.h"
#include "core/varperf-core.h"
#include "core/vcg.h"

/* Room for one of core's messages with a prefix. */
enum { VPMOD_MSG_LEN = 640 };

/* A loaded recording: reader, calling-context tree, analysis, indexes. */
struct rec {
	PyObject_HEAD
	char *path;
	struct vp_reader *reader;
	const struct vp_header *hdr;
	const struct vp_trailer *trailer;
	struct vp_budget budget; /* of the tree: max_memory */
	struct vp_cct tree;
	struct vp_build_totals totals;
	struct vp_analysis an;
	uint64_t lost;
	int compensated; /* probe costs subtracted from the durations */
	enum vp_time_base time; /* what the durations measure */
	int have_tree;
	int have_an;
	/* indexes built once after the analysis */
	uint32_t *func_by_addr; /* function ids sorted by (module, addr) */
	size_t *fnode_start;	/* nodes of function f: fnode_ids[start[f]..start[f+1]) */
	uint32_t *fnode_ids;
	size_t *npat_start;   /* patterns of node n: npat_ids[start[n]..start[n+1]) */
	uint32_t *npat_ids;   /* pattern index (rank - 1) */
	uint32_t *cs_by_addr; /* call-site ids sorted by (module, offset) */
	size_t ncs;
	long *fsum_of; /* function -> index in an.funcs, -1 if none */
};

extern PyObject *vpmod_error;
extern PyTypeObject *vpmod_rec_type;

/* Raise varperf.Error(errno, @msg or strerror) with .filename = @path;
 * returns NULL. */
PyObject *vpmod_raise(int err, const char *msg, const char *path);

/* Builders: new references, NULL with an exception on failure. */
PyObject *vpmod_u64(uint64_t v);
PyObject *vpmod_str(const char *s); /* UTF-8, bad bytes replaced; NULL is "" */
PyObject *vpmod_none(void);
PyObject *vpmod_bool(int v);
PyObject *vpmod_ids(const uint32_t *ids, size_t n); /* list of ints */
PyObject *vpmod_stats(const struct vp_stats *s);    /* dict, as report-json.c */
/* d[key] = v, dropping the reference to v; -1 on error (v dropped too). */
int vpmod_put(PyObject *d, const char *key, PyObject *v);
int vpmod_put_stats(PyObject *d, const struct vp_stats *s);
/* A zero-filled instance of heap type @tp, and a tp_new that refuses. */
PyObject *vpmod_alloc(PyTypeObject *tp);
PyObject *vpmod_no_new(PyTypeObject *tp, PyObject *args, PyObject *kw);

/* match.c: a live call stack against the tree. */
PyObject *vpmod_rec_lookup(PyObject *self, PyObject *args);
PyObject *vpmod_rec_nearest(PyObject *self, PyObject *args);

/* writer.c: data files for the tests. */
int vpmod_writer_register(PyObject *module);
PyObject *vpmod_create(PyObject *module, PyObject *args);

/* vcgraph.c: the Variance Characterization Graph. */
PyObject *vpmod_rec_vcg(PyObject *self, PyObject *args, PyObject *kw);

#endif
