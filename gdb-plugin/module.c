/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * module.c - the _varperf module: its functions (open, create), the
 * varperf.Error exception, the types of the other files and core's
 * constants, put together by PyInit__varperf.
 */
#include <config.h>

/* Python.h, in _varperf.h, must come before the system headers */
#include "_varperf.h"

static PyMethodDef vpmod_methods[] = {
	{ "open", (PyCFunction)(void (*)(void))vpmod_open, METH_VARARGS | METH_KEYWORDS,
	  "open(path, cutoff=0.0002, probability=0.96, window=2.0, cov_threshold=0,\n"
	  "     similarity=0.1, beta=0.1, compensate=True, time='wall',\n"
	  "     max_memory=1 << 30) -> Recording\n\n"
	  "Read a varperf data file, build its calling-context tree and run the\n"
	  "variance analysis with these parameters (varperf report's options;\n"
	  "compensate=False is its --raw: durations as measured, probe costs in;\n"
	  "time is its --time: 'wall', 'cpu' or 'offcpu'; max_memory its\n"
	  "--max-memory: the most bytes the tree may take, 0 for no limit).\n"
	  "Raises varperf.Error with core's message when the file cannot be used." },
	{ "create", vpmod_create, METH_VARARGS,
	  "create(path, header) -> Writer: write a data file with core's writer." },
	{ "hist_bucket", vpmod_hist_bucket, METH_VARARGS,
	  "hist_bucket(ns) -> the index of the histogram bucket holding that duration." },
	{ "hist_bucket_range", vpmod_hist_bucket_range, METH_VARARGS,
	  "hist_bucket_range(index) -> (lo, hi): the durations bucket index holds, both\n"
	  "included.  Buckets are log-linear (128 of 1 ns, then 64 per power of two):\n"
	  "consecutive indices tile the durations, so a range of indices is one row of\n"
	  "a histogram drawn on a log scale." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef vpmod_def = {
	PyModuleDef_HEAD_INIT,
	"_varperf",
	"core/ of varperf: data files, calling-context trees and variance analysis.",
	-1,
	vpmod_methods,
	NULL,
	NULL,
	NULL,
	NULL,
};

static int add_int(PyObject *m, const char *name, long v)
{
	return PyModule_AddIntConstant(m, name, v);
}

PyMODINIT_FUNC PyInit__varperf(void)
{
	PyObject *m = PyModule_Create(&vpmod_def);

	if (!m)
		return NULL;
	vpmod_error = PyErr_NewExceptionWithDoc(
		"_varperf.Error",
		"A varperf data file could not be used; .strerror holds core's message.",
		PyExc_OSError, NULL);
	if (!vpmod_error)
		goto fail;
	Py_INCREF(vpmod_error);
	if (PyModule_AddObject(m, "Error", vpmod_error) < 0)
		goto fail;
	if (vpmod_rec_register(m) < 0 || vpmod_writer_register(m) < 0)
		goto fail;
	if (add_int(m, "UNIT_NS", VP_UNIT_NS) || add_int(m, "UNIT_CYCLES", VP_UNIT_CYCLES) ||
	    add_int(m, "CS_NONE", VP_CS_NONE) || add_int(m, "CS_TRAMPOLINE", VP_CS_TRAMPOLINE) ||
	    add_int(m, "CS_UNMAPPED", VP_CS_UNMAPPED) || add_int(m, "FUNC_CLONE", VP_FUNC_CLONE) ||
	    add_int(m, "FUNC_FROM_LIB", VP_FUNC_FROM_LIB) ||
	    add_int(m, "END_EXITED", VP_END_EXITED) ||
	    add_int(m, "END_INTERRUPTED", VP_END_INTERRUPTED) ||
	    add_int(m, "END_WRITE_ERROR", VP_END_WRITE_ERROR) ||
	    add_int(m, "INSN_EMULATED", VP_INSN_EMULATED) ||
	    add_int(m, "INSN_STEPPED", VP_INSN_STEPPED) ||
	    add_int(m, "BACKEND_PERF", VP_BACKEND_PERF) ||
	    add_int(m, "BACKEND_BPF", VP_BACKEND_BPF) ||
	    add_int(m, "SLOWEST_DEFAULT", VP_SLOWEST_DEFAULT) ||
	    PyModule_AddObject(m, "HIST_REL_ERROR", PyFloat_FromDouble(VP_HIST_REL_ERROR)) < 0 ||
	    PyModule_AddStringConstant(m, "VERSION", PACKAGE_VERSION))
		goto fail;
	return m;
fail:
	Py_XDECREF(vpmod_error);
	Py_DECREF(m);
	return NULL;
}
