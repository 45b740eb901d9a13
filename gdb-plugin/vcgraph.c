/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * vcgraph.c - the Variance Characterization Graph of core/vcg.c (Kumar
 * and Pande, §5-7) as Python dicts: Recording.vcg().
 */
#include <config.h>

/* Python.h, in _varperf.h, must come before the system headers */
#include "_varperf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static PyObject *chain_list(const struct vp_chain_elem *e, size_t n)
{
	PyObject *l = PyList_New((Py_ssize_t)n);

	for (size_t i = 0; l && i < n; i++) {
		PyObject *t = Py_BuildValue("(kN)", (unsigned long)e[i].func,
					    e[i].callsite == VP_NO_CALLSITE ?
						    vpmod_none() :
						    PyLong_FromUnsignedLong(e[i].callsite));

		if (!t || PyList_SetItem(l, (Py_ssize_t)i, t) < 0)
			Py_CLEAR(l);
	}
	return l;
}

static PyObject *vcg_node_dict(const struct vp_vcg *g, size_t i)
{
	const struct vp_vcg_node *n = &g->nodes[i];
	PyObject *d = vpmod_stats(&n->stats), *ccs;

	if (!d)
		return NULL;
	ccs = PyList_New(n->nccs);
	for (uint32_t k = 0; ccs && k < n->nccs; k++) {
		const struct vp_vcg_cc *cc = &g->ccs[n->ccs[k]];
		PyObject *c = chain_list(cc->elems, cc->len);

		if (!c || PyList_SetItem(ccs, k, c) < 0)
			Py_CLEAR(ccs);
	}
	if (vpmod_put(d, "id", PyLong_FromSize_t(i)) ||
	    vpmod_put(d, "pattern", PyLong_FromUnsignedLong(n->pattern)) ||
	    vpmod_put(d, "func", PyLong_FromUnsignedLong(n->func)) ||
	    vpmod_put(d, "type", PyUnicode_FromString(vp_vcg_type_name(n->type))) ||
	    vpmod_put(d, "vim", PyFloat_FromDouble(n->vim)) ||
	    vpmod_put(d, "subtree_vim", PyFloat_FromDouble(n->subtree_vim)) ||
	    vpmod_put(d, "parent",
		      n->parent == VP_NO_NODE ? vpmod_none() :
						PyLong_FromUnsignedLong(n->parent)) ||
	    vpmod_put(d, "children", vpmod_ids(n->children, n->nchildren)) ||
	    vpmod_put(d, "ccs", ccs) || vpmod_put(d, "cct", vpmod_ids(n->cct, n->ncct)) ||
	    vpmod_put(d, "ols", vpmod_ids(n->ols, n->nols)) ||
	    vpmod_put(d, "cls", vpmod_ids(n->cls, n->ncls))) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *vcg_dict(const struct vp_vcg *g, const struct vp_sources *s)
{
	PyObject *d = PyDict_New(), *l;

	if (!d)
		return NULL;
	if (vpmod_put(d, "tau", PyFloat_FromDouble(g->params.tau)) ||
	    vpmod_put(d, "beta", PyFloat_FromDouble(g->params.beta)) ||
	    vpmod_put(d, "min_contribution", PyFloat_FromDouble(s->params.min_contribution)) ||
	    vpmod_put(d, "once_probability", PyFloat_FromDouble(s->params.once_probability)) ||
	    vpmod_put(d, "max_passes", PyLong_FromUnsignedLong(s->params.max_passes)) ||
	    vpmod_put(d, "k", PyFloat_FromDouble(g->k)) ||
	    vpmod_put(d, "passes", PyLong_FromUnsignedLong(s->passes)) ||
	    vpmod_put(d, "limited", vpmod_bool(s->limited)) ||
	    vpmod_put(d, "base_patterns", PyLong_FromSize_t(g->base_patterns)) ||
	    vpmod_put(d, "base_nodes", PyLong_FromSize_t(g->base_nodes)) ||
	    vpmod_put(d, "merges", PyLong_FromSize_t(g->merges)) ||
	    vpmod_put(d, "trimmed_patterns", PyLong_FromSize_t(g->trimmed_patterns)) ||
	    vpmod_put(d, "trimmed_nodes", PyLong_FromSize_t(g->trimmed_nodes)))
		goto fail;
	l = PyList_New((Py_ssize_t)g->npatterns);
	for (size_t i = 0; l && i < g->npatterns; i++) {
		PyObject *p = Py_BuildValue(
			"{s:k,s:k,s:d}", "root", (unsigned long)g->patterns[i].root, "nnodes",
			(unsigned long)g->patterns[i].nnodes, "vim", g->patterns[i].vim);

		if (!p || PyList_SetItem(l, (Py_ssize_t)i, p) < 0)
			Py_CLEAR(l);
	}
	if (vpmod_put(d, "patterns", l))
		goto fail;
	l = PyList_New((Py_ssize_t)g->nnodes);
	for (size_t i = 0; l && i < g->nnodes; i++) {
		PyObject *n = vcg_node_dict(g, i);

		if (!n || PyList_SetItem(l, (Py_ssize_t)i, n) < 0)
			Py_CLEAR(l);
	}
	if (vpmod_put(d, "nodes", l))
		goto fail;
	l = PyList_New((Py_ssize_t)g->nsegments);
	for (size_t i = 0; l && i < g->nsegments; i++) {
		const struct vp_vcg_segment *sg = &g->segments[i];
		PyObject *x = Py_BuildValue(
			"{s:N,s:N,s:K,s:d,s:d,s:d,s:s}", "nodes", vpmod_ids(sg->nodes, sg->len),
			"components", vpmod_ids(sg->components, sg->ncomponents), "count",
			(unsigned long long)sg->n, "mean", sg->mean, "variance", sg->variance, "cf",
			sg->cf, "how", vp_source_how_name(sg->how));

		if (!x || PyList_SetItem(l, (Py_ssize_t)i, x) < 0)
			Py_CLEAR(l);
	}
	if (vpmod_put(d, "segments", l))
		goto fail;
	return d;
fail:
	Py_DECREF(d);
	return NULL;
}

/*
 * vcg(tau=0.4, beta=0.1, min_contribution=0.1, once_probability=0.95,
 * max_passes=8) -> dict: Steps 2 to 5 of Kumar and Pande (§7) over this recording
 * (sources of variance with extra passes over the events, then the graph).
 */
PyObject *vpmod_rec_vcg(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "tau",	"beta", "min_contribution", "once_probability",
				  "max_passes", NULL };
	struct rec *r = (struct rec *)self;
	struct vp_sources_params sp;
	struct vp_vcg_params gp;
	struct vp_sources s;
	struct vp_vcg g;
	char msg[VPMOD_MSG_LEN] = "";
	PyObject *ret;
	int err, passes;

	vp_sources_params_default(&sp);
	vp_vcg_params_default(&gp);
	passes = (int)sp.max_passes;
	/* max_passes as a signed int: "I" would wrap -1 round to 4294967295 unchecked */
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|ddddi:vcg", kwlist, &gp.tau, &gp.beta,
					 &sp.min_contribution, &sp.once_probability, &passes))
		return NULL;
	if (passes < 0)
		return vpmod_raise(EINVAL, "max passes must not be negative", NULL);
	sp.max_passes = (unsigned)passes;
	if (vp_sources_params_check(&sp, msg, sizeof(msg)) < 0 ||
	    vp_vcg_params_check(&gp, msg, sizeof(msg)) < 0)
		return vpmod_raise(EINVAL, msg, NULL);
	memset(&s, 0, sizeof(s));
	memset(&g, 0, sizeof(g));
	Py_BEGIN_ALLOW_THREADS
	err = vp_sources_run(&s, r->tree, r->an, r->reader, &sp);
	if (!err)
		err = vp_vcg_build(&g, r->tree, r->an, &s, &gp);
	Py_END_ALLOW_THREADS
	if (err < 0) {
		const char *m = vp_reader_error(r->reader);

		snprintf(msg, sizeof(msg),
			 "cannot build the variance characterization graph of "
			 "'%s': %s",
			 r->path, m && *m ? m : strerror(-err));
		vp_vcg_release(&g);
		vp_sources_release(&s);
		return vpmod_raise(err, msg, r->path);
	}
	ret = vcg_dict(&g, &s);
	vp_vcg_release(&g);
	vp_sources_release(&s);
	return ret;
}
