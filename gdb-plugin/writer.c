/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * writer.c - varperf.create() and the Writer object: data files written
 * with core's writer, so that tests know every number they read back.
 */
#include <config.h>

/* Python.h, in _varperf.h, must come before the system headers */
#include "_varperf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PyTypeObject *writer_type;

struct writer {
	PyObject_HEAD
	struct vp_writer *w;
	char *path;
};

static void writer_dealloc(PyObject *self)
{
	struct writer *w = (struct writer *)self;
	PyTypeObject *tp = Py_TYPE(self);
	freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);

	vp_writer_free(w->w);
	free(w->path);
	tp_free(self);
	Py_DECREF(tp);
}

static int writer_open(struct writer *w)
{
	if (!w->w) {
		PyErr_SetString(PyExc_ValueError, "the writer is closed");
		return -1;
	}
	return 0;
}

static PyObject *writer_status(struct writer *w, int err)
{
	if (err < 0)
		return vpmod_raise(err, NULL, w->path);
	Py_RETURN_NONE;
}

static PyObject *writer_thread(PyObject *self, PyObject *args)
{
	struct writer *w = (struct writer *)self;
	unsigned int idx, tid, pid;

	if (!PyArg_ParseTuple(args, "III:thread", &idx, &tid, &pid) || writer_open(w) < 0)
		return NULL;
	return writer_status(w, vp_writer_thread(w->w, idx, tid, pid));
}

static PyObject *writer_callsite(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {
		"id", "flags", "module", "offset", "caller", "file", "line", NULL
	};
	struct writer *w = (struct writer *)self;
	struct vp_callsite cs = { 0 };
	unsigned int id, flags = 0, line = 0;
	int module = -1;
	unsigned long long off = 0;
	const char *caller = "", *file = "";

	if (!PyArg_ParseTupleAndKeywords(args, kw, "I|IiKssI:callsite", kwlist, &id, &flags,
					 &module, &off, &caller, &file, &line) ||
	    writer_open(w) < 0)
		return NULL;
	cs.flags = flags;
	cs.module = module;
	cs.offset = off;
	cs.caller = (char *)caller;
	cs.file = (char *)file;
	cs.line = line;
	return writer_status(w, vp_writer_callsite(w->w, id, &cs));
}

static PyObject *writer_event(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "kind", "func",     "thread", "time",
				  "sp",	  "callsite", "offcpu", NULL };
	struct writer *w = (struct writer *)self;
	struct vp_event ev = { 0 };
	const char *kind;
	unsigned int func, thread, cs = 0;
	unsigned long long time, sp, offcpu = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "sIIKK|IK:event", kwlist, &kind, &func, &thread,
					 &time, &sp, &cs, &offcpu) ||
	    writer_open(w) < 0)
		return NULL;
	if (!strcmp(kind, "entry")) {
		ev.kind = VP_EV_ENTRY;
	} else if (!strcmp(kind, "exit")) {
		ev.kind = VP_EV_EXIT;
	} else {
		PyErr_Format(PyExc_ValueError, "kind must be 'entry' or 'exit', not '%s'", kind);
		return NULL;
	}
	ev.func = func;
	ev.thread = thread;
	ev.time = time;
	ev.sp = sp;
	ev.callsite = cs;
	ev.offcpu = offcpu;
	return writer_status(w, vp_writer_event(w->w, &ev));
}

static PyObject *writer_lost(PyObject *self, PyObject *args)
{
	struct writer *w = (struct writer *)self;
	unsigned int cpu;
	unsigned long long count;

	if (!PyArg_ParseTuple(args, "IK:lost", &cpu, &count) || writer_open(w) < 0)
		return NULL;
	return writer_status(w, vp_writer_lost(w->w, cpu, count));
}

static PyObject *writer_wait(PyObject *self, PyObject *args)
{
	struct writer *w = (struct writer *)self;
	unsigned int thread, reason = 0;
	unsigned long long time, ns;

	if (!PyArg_ParseTuple(args, "IKK|I:wait", &thread, &time, &ns, &reason) ||
	    writer_open(w) < 0)
		return NULL;
	return writer_status(w, vp_writer_wait(w->w, thread, time, ns, reason));
}

static PyObject *writer_flush(PyObject *self, PyObject *noargs)
{
	struct writer *w = (struct writer *)self;

	if (writer_open(w) < 0)
		return NULL;
	return writer_status(w, vp_writer_flush(w->w));
}

static PyObject *writer_finish(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "wait_status", "flags", "lost", "foreign", "end_time", NULL };
	struct writer *w = (struct writer *)self;
	struct vp_trailer tr = { 0 };
	unsigned long long ws = 0, lost = 0, foreign = 0, end = 0;
	unsigned int flags = VP_END_EXITED;
	int err;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "|KIKKK:finish", kwlist, &ws, &flags, &lost,
					 &foreign, &end) ||
	    writer_open(w) < 0)
		return NULL;
	tr.present = 1;
	tr.wait_status = ws;
	tr.flags = flags;
	tr.lost = lost;
	tr.foreign = foreign;
	tr.end_time = end;
	err = vp_writer_finish(w->w, &tr);
	w->w = NULL;
	return writer_status(w, err);
}

/* Close without an END chunk, as a killed recorder leaves the file. */
static PyObject *writer_abandon(PyObject *self, PyObject *noargs)
{
	struct writer *w = (struct writer *)self;

	vp_writer_free(w->w);
	w->w = NULL;
	Py_RETURN_NONE;
}

static PyMethodDef writer_methods[] = {
	{ "thread", writer_thread, METH_VARARGS, "thread(index, tid, pid)" },
	{ "callsite", (PyCFunction)(void (*)(void))writer_callsite, METH_VARARGS | METH_KEYWORDS,
	  "callsite(id, flags=0, module=-1, offset=0, caller='', file='', line=0)" },
	{ "event", (PyCFunction)(void (*)(void))writer_event, METH_VARARGS | METH_KEYWORDS,
	  "event(kind, func, thread, time, sp, callsite=0, offcpu=0): kind 'entry' or 'exit';\n"
	  "offcpu: the thread's off-CPU ns so far, in a file whose header has offcpu" },
	{ "lost", writer_lost, METH_VARARGS, "lost(cpu, count)" },
	{ "wait", writer_wait, METH_VARARGS,
	  "wait(thread, time, ns, reason=0): the thread was blocked (asleep) until @time,\n"
	  "@ns off the CPU, in syscall @reason - 1 (0: none); a header with blocked" },
	{ "flush", writer_flush, METH_NOARGS, "flush(): write out the current EVENTS chunk" },
	{ "finish", (PyCFunction)(void (*)(void))writer_finish, METH_VARARGS | METH_KEYWORDS,
	  "finish(wait_status=0, flags=EXITED, lost=0, foreign=0, end_time=0)" },
	{ "abandon", writer_abandon, METH_NOARGS, "abandon(): close without an END chunk" },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot writer_slots[] = {
	{ Py_tp_dealloc, writer_dealloc },
	{ Py_tp_new, vpmod_no_new },
	{ Py_tp_methods, writer_methods },
	{ Py_tp_doc, "Writes a varperf data file with core's writer (for tests)." },
	{ 0, NULL },
};

static PyType_Spec writer_spec = {
	"_varperf.Writer", sizeof(struct writer), 0, Py_TPFLAGS_DEFAULT, writer_slots,
};

/*
 * Everything create() reads stays referenced by @keep until the writer has
 * written the header: the C strings point into these objects.
 */
static PyObject *keep_ref(PyObject *keep, PyObject *v)
{
	if (v && PyList_Append(keep, v) < 0)
		v = NULL;
	return v;
}

/* The sequence d[key] (an empty list when absent), kept alive by @keep. */
static PyObject *dict_seq(PyObject *keep, PyObject *d, const char *key)
{
	PyObject *v = PyDict_GetItemString(d, key); /* borrowed */

	if (!v) {
		PyObject *l = PyList_New(0);

		v = keep_ref(keep, l);
		Py_XDECREF(l);
	}
	return v;
}

static int dict_u64(PyObject *d, const char *key, uint64_t *ret)
{
	PyObject *v = PyDict_GetItemString(d, key);

	if (!v)
		return 0;
	*ret = PyLong_AsUnsignedLongLong(v);
	return PyErr_Occurred() ? -1 : 0;
}

/* UTF-8 of a str, kept alive by @keep; NULL with an exception on error. */
static char *utf8_of(PyObject *keep, PyObject *s)
{
	PyObject *b = PyUnicode_AsUTF8String(s);
	char *p = NULL;

	if (b && keep_ref(keep, b))
		p = PyBytes_AsString(b);
	Py_XDECREF(b);
	return p;
}

/* d[key] as UTF-8, or @def when absent or None. */
static char *dict_str(PyObject *keep, PyObject *d, const char *key, const char *def, int *err)
{
	PyObject *v = PyDict_GetItemString(d, key);
	char *p;

	if (!v || v == Py_None)
		return (char *)def;
	p = utf8_of(keep, v);
	if (!p)
		*err = 1;
	return p;
}

static int create_header(PyObject *keep, PyObject *hd, struct vp_header *h)
{
	PyObject *seq;
	Py_ssize_t n;
	uint64_t v;
	int err = 0;

	h->version = VP_DATA_VERSION;
	v = VP_UNIT_NS;
	if (dict_u64(hd, "unit", &v) < 0)
		return -1;
	h->unit = (uint32_t)v;
	v = 1; /* CLOCK_MONOTONIC */
	if (dict_u64(hd, "clock", &v) < 0 || dict_u64(hd, "start_time", &h->start_time) < 0)
		return -1;
	h->clock = (uint32_t)v;
	v = 0;
	if (dict_u64(hd, "pid", &v) < 0)
		return -1;
	h->pid = (uint32_t)v;
	v = 1;
	if (dict_u64(hd, "ncpu", &v) < 0)
		return -1;
	h->ncpu = (uint32_t)v;
	v = 0;
	if (dict_u64(hd, "backend", &v) < 0)
		return -1;
	h->backend = (uint32_t)v;
	v = 0;
	if (dict_u64(hd, "offcpu", &v) < 0)
		return -1;
	h->offcpu = v != 0;
	v = 0;
	if (dict_u64(hd, "blocked", &v) < 0)
		return -1;
	h->blocked = v != 0;
	h->host = dict_str(keep, hd, "host", "", &err);
	if (err)
		return -1;

	seq = dict_seq(keep, hd, "argv");
	if (!seq || (n = PySequence_Size(seq)) < 0)
		return -1;
	h->argv = calloc((size_t)n + 1, sizeof(*h->argv));
	if (!h->argv)
		goto nomem;
	h->argc = (int)n;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *a = PySequence_GetItem(seq, i);

		h->argv[i] = a ? utf8_of(keep, a) : NULL;
		Py_XDECREF(a);
		if (!h->argv[i])
			return -1;
	}

	seq = dict_seq(keep, hd, "modules");
	if (!seq || (n = PySequence_Size(seq)) < 0)
		return -1;
	h->modules = calloc((size_t)n + 1, sizeof(*h->modules));
	if (!h->modules)
		goto nomem;
	h->nmodules = (size_t)n;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *m = keep_ref(keep, PySequence_GetItem(seq, i));
		const char *path, *bid;
		Py_ssize_t blen;

		Py_XDECREF(m);
		if (!m || !PyArg_ParseTuple(m, "sy#", &path, &bid, &blen))
			return -1;
		h->modules[i].path = (char *)path;
		h->modules[i].build_id = (unsigned char *)bid;
		h->modules[i].build_id_len = (size_t)blen;
	}

	seq = dict_seq(keep, hd, "functions");
	if (!seq || (n = PySequence_Size(seq)) < 0)
		return -1;
	h->funcs = calloc((size_t)n + 1, sizeof(*h->funcs));
	if (!h->funcs)
		goto nomem;
	h->nfuncs = (size_t)n;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *f = keep_ref(keep, PySequence_GetItem(seq, i));
		struct vp_func *fn = &h->funcs[i];
		uint64_t mod = 0, flags = 0, cls = VP_INSN_EMULATED;

		Py_XDECREF(f);
		if (!f)
			return -1;
		if (!PyDict_Check(f)) {
			PyErr_SetString(PyExc_TypeError, "a function must be a dict");
			return -1;
		}
		fn->name = dict_str(keep, f, "name", NULL, &err);
		if (!fn->name) {
			if (!err)
				PyErr_SetString(PyExc_ValueError, "a function needs a 'name'");
			return -1;
		}
		fn->display = dict_str(keep, f, "display", fn->name, &err);
		fn->base = dict_str(keep, f, "base", fn->display, &err);
		if (err || dict_u64(f, "module", &mod) < 0 || dict_u64(f, "addr", &fn->addr) < 0 ||
		    dict_u64(f, "size", &fn->size) < 0 ||
		    dict_u64(f, "probe_off", &fn->probe_off) < 0 ||
		    dict_u64(f, "flags", &flags) < 0 || dict_u64(f, "insn_class", &cls) < 0)
			return -1;
		fn->module = (uint32_t)mod;
		fn->flags = (uint32_t)flags;
		fn->insn_class = (uint32_t)cls;
	}

	seq = dict_seq(keep, hd, "probe_costs");
	if (!seq || (n = PySequence_Size(seq)) < 0)
		return -1;
	h->costs = calloc((size_t)n + 1, sizeof(*h->costs));
	if (!h->costs)
		goto nomem;
	h->ncosts = (size_t)n;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *c = keep_ref(keep, PySequence_GetItem(seq, i));
		unsigned int cls;
		unsigned long long in, full;

		Py_XDECREF(c);
		if (!c || !PyArg_ParseTuple(c, "IKK", &cls, &in, &full))
			return -1;
		h->costs[i].insn_class = cls;
		h->costs[i].in_window_ns = in;
		h->costs[i].full_ns = full;
	}
	return 0;
nomem:
	PyErr_NoMemory();
	return -1;
}

/*
 * create(path, header) -> Writer.  header: a dict with unit, clock,
 * start_time, pid, ncpu, host, argv, modules [(path, build-id bytes)],
 * functions [{name, display, base, module, addr, size, flags, ...}],
 * probe_costs [(class, in-window ns, full ns)], backend (BACKEND_*) and
 * offcpu (true: events carry off-CPU times, event(..., offcpu=ns)) and
 * blocked (true, with offcpu: wait() records say which part was asleep);
 * all optional.
 */
PyObject *vpmod_create(PyObject *mod, PyObject *args)
{
	PyObject *pathobj = NULL, *hd, *keep;
	struct writer *w = NULL;
	struct vp_header h;

	memset(&h, 0, sizeof(h));
	if (!PyArg_ParseTuple(args, "O&O!:create", PyUnicode_FSConverter, &pathobj, &PyDict_Type,
			      &hd))
		return NULL;
	keep = PyList_New(0);
	if (!keep || create_header(keep, hd, &h) < 0)
		goto out;
	w = (struct writer *)vpmod_alloc(writer_type);
	if (!w)
		goto out;
	w->path = strdup(PyBytes_AsString(pathobj));
	if (!w->path) {
		PyErr_NoMemory();
		Py_CLEAR(w);
		goto out;
	}
	w->w = vp_writer_new(w->path, &h);
	if (!w->w) {
		char msg[VPMOD_MSG_LEN];
		int e = errno;

		snprintf(msg, sizeof(msg), "cannot create '%s': %s", w->path, strerror(e));
		vpmod_raise(e, msg, w->path);
		Py_CLEAR(w);
	}
out:
	Py_XDECREF(keep);
	Py_XDECREF(pathobj);
	free(h.argv);
	free(h.modules);
	free(h.funcs);
	free(h.costs);
	return (PyObject *)w;
}

int vpmod_writer_register(PyObject *m)
{
	writer_type = (PyTypeObject *)PyType_FromSpec(&writer_spec);
	if (!writer_type)
		return -1;
	Py_INCREF(writer_type);
	if (PyModule_AddObject(m, "Writer", (PyObject *)writer_type) < 0) {
		Py_DECREF(writer_type);
		return -1;
	}
	return 0;
}
