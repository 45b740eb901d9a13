/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * _varperf.h - what the files of the _varperf extension share besides the
 * helpers of pyutil.h: the Recording object and the functions of each file
 * that module.c puts in the module.
 */
#ifndef VARPERF_GDB_PLUGIN_VARPERF_H
#define VARPERF_GDB_PLUGIN_VARPERF_H

/* Python.h under the stable ABI, core's header and the Python/C helpers */
#include "pyutil.h"
#include "core/sources.h"
#include "core/varperf-core.h"
#include "core/vcg.h"

/* A loaded recording: reader, calling-context tree, analysis, indexes. */
struct rec {
	PyObject_HEAD
	char *path;
	struct vp_recording *vr; /* owns all that follows (core/recording.h) */
	struct vp_reader *reader;
	const struct vp_header *hdr;
	const struct vp_trailer *trailer;
	const struct vp_cct *tree;
	const struct vp_build_totals *totals;
	const struct vp_analysis *an;
	uint64_t lost;
	int compensated; /* probe costs subtracted from the durations */
	enum vp_time_base time; /* what the durations measure */
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

extern PyTypeObject *vpmod_rec_type;

/*
 * 0 when @id is a node of @r's tree (not the root), else -1 with
 * IndexError.  Here, not in _varperf.c: durations.c checks its arguments
 * with it, and _varperf.c calls durations.c.
 */
static inline int vpmod_check_node(const struct rec *r, unsigned long id)
{
	if (id == VP_NODE_ROOT || id >= r->tree->nnodes) {
		PyErr_Format(PyExc_IndexError, "no node %lu (nodes are 1..%zu)", id,
			     r->tree->nnodes ? r->tree->nnodes - 1 : 0);
		return -1;
	}
	return 0;
}

/* _varperf.c: _varperf.open() and the Recording type for the module. */
PyObject *vpmod_open(PyObject *module, PyObject *args, PyObject *kw);
int vpmod_rec_register(PyObject *module);

/* durations.c: percentiles, histograms, path fractions, slowest calls. */
int vpmod_put_distribution(PyObject *d, const struct rec *r, uint32_t id);
PyObject *vpmod_rec_histogram(PyObject *self, PyObject *arg);
PyObject *vpmod_rec_quantiles(PyObject *self, PyObject *args);
PyObject *vpmod_rec_slowest(PyObject *self, PyObject *args);
PyObject *vpmod_hist_bucket(PyObject *module, PyObject *args);
PyObject *vpmod_hist_bucket_range(PyObject *module, PyObject *args);

/* match.c: a live call stack against the tree. */
PyObject *vpmod_rec_lookup(PyObject *self, PyObject *args);
PyObject *vpmod_rec_nearest(PyObject *self, PyObject *args);

/* writer.c: data files for the tests. */
int vpmod_writer_register(PyObject *module);
PyObject *vpmod_create(PyObject *module, PyObject *args);

/* vcgraph.c: the Variance Characterization Graph. */
PyObject *vpmod_rec_vcg(PyObject *self, PyObject *args, PyObject *kw);

/* bound.c: the regression MET of a context (Poplavko et al. 2016). */
PyObject *vpmod_rec_bound(PyObject *self, PyObject *args, PyObject *kw);

#endif
