/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bound.c - Recording.bound(node): the regression MET of one calling
 * context (Poplavko et al. 2016; core/regression.c), for `info variance
 * bound`.
 */
#include <config.h>

/* Python.h, in _varperf.h, must come before the system headers */
#include "_varperf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/regression.h"
#include "core/regression-task.h"

static PyObject *term_dict(const struct vp_task_rows *rows, const struct vp_regress_term *t)
{
	PyObject *child = t->col == SIZE_MAX ? vpmod_none()
					     : PyLong_FromUnsignedLong(rows->child[t->col]);

	if (!child)
		return NULL;
	return Py_BuildValue("{s:N,s:d,s:d,s:d,s:d,s:d,s:d}", "child", child, "b", t->b, "lo",
			     t->lo, "hi", t->hi, "xmin", t->xmin, "xmax", t->xmax, "bx", t->bx);
}

static PyObject *model_dict(const struct vp_task_rows *rows, const struct vp_regress_model *m)
{
	PyObject *d = Py_BuildValue(
		"{s:n,s:n,s:n,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:n,s:n,s:n,s:n}", "invocations",
		(Py_ssize_t)m->nrows, "train", (Py_ssize_t)m->ntrain, "test", (Py_ssize_t)m->ntest,
		"alpha", m->alpha, "r2", m->r2, "eps_plus", m->eps_plus, "met", m->met,
		"probability", m->probability, "longest", m->ymax, "ks_d", m->ks_d, "ks_crit",
		m->ks_crit, "bad", (Py_ssize_t)m->nbad, "test_over", (Py_ssize_t)m->test_over,
		"test_under", (Py_ssize_t)m->test_under, "above_met",
		(Py_ssize_t)m->test_met_under);
	static const char *const check[] = { "r2", "residuals", "coverage", "untested" };
	PyObject *l, *failed;

	if (!d)
		return NULL;
	/* the model's own checks (vp_regress_claim), as varperf bound says them */
	failed = PyList_New(0);
	for (size_t i = 0; failed && i < sizeof(check) / sizeof(*check); i++) {
		PyObject *s = m->unclaimed & (1u << i) ? PyUnicode_FromString(check[i]) : NULL;

		if ((m->unclaimed & (1u << i)) && (!s || PyList_Append(failed, s)))
			Py_CLEAR(failed);
		Py_XDECREF(s);
	}
	if (vpmod_put(d, "checks_failed", failed) ||
	    vpmod_put(d, "probability_claimed", PyBool_FromLong(!m->unclaimed)) ||
	    vpmod_put(d, "empirical", PyFloat_FromDouble(m->empirical))) {
		Py_DECREF(d);
		return NULL;
	}
	l = PyList_New((Py_ssize_t)m->nterms);
	for (size_t t = 0; l && t < m->nterms; t++) {
		PyObject *e = term_dict(rows, &m->terms[t]);

		if (!e || PyList_SetItem(l, (Py_ssize_t)t, e)) {
			Py_CLEAR(l);
			break;
		}
	}
	if (vpmod_put(d, "terms", l)) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/*
 * Recording.bound(node, alpha=0.05, train=0.5, seed=1) -> dict: the model
 * of node's durations on its calls per child, its MET and probability.
 */
PyObject *vpmod_rec_bound(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "node", "alpha", "train", "seed", NULL };
	struct rec *r = (struct rec *)self;
	struct vp_regress_opts o;
	struct vp_regress_model *m = NULL;
	struct vp_task_rows rows;
	unsigned long long seed = 1;
	unsigned long node;
	char msg[VPMOD_MSG_LEN] = "";
	PyObject *ret;
	int err;

	vp_regress_opts_default(&o);
	o.train = 0.5;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "k|ddK:bound", kwlist, &node, &o.alpha,
					 &o.train, &seed))
		return NULL;
	o.seed = seed;
	if (node >= r->tree->nnodes)
		return vpmod_raise(EINVAL, "no such node", NULL);
	if (!vp_regress_available())
		return vpmod_raise(ENOSYS, "varperf was built without GSL: no bound", NULL);
	Py_BEGIN_ALLOW_THREADS
	err = vp_task_rows(r->vr, (uint32_t)node, &rows, msg, sizeof(msg));
	if (!err)
		err = vp_regress_fit(rows.y, rows.x, rows.n, rows.k, &o, &m);
	Py_END_ALLOW_THREADS
	if (err == -EDOM) {
		snprintf(msg, sizeof(msg),
			 "%zu paired invocations: too few for a model (the training set needs "
			 "more than 5)",
			 rows.n);
	} else if (err == -EINVAL) {
		snprintf(msg, sizeof(msg), "alpha must be in (0, 1) and train in (0, 1]");
	}
	if (err < 0) {
		vp_task_rows_release(&rows);
		return vpmod_raise(-err, *msg ? msg : NULL, *msg ? NULL : r->path);
	}
	ret = model_dict(&rows, m);
	vp_regress_model_free(m);
	vp_task_rows_release(&rows);
	return ret;
}
