/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * compare.h - profile versus regression (Kumar et al. 2008, §4): the Pattern
 * Set of a profiling recording A evaluated on a regression recording B,
 * their overlap, the patterns that left or entered, and for every pattern
 * the change of mean (Welch's t test) and variance (F test) between the two.
 * Beyond the paper: every significant calling context of either recording
 * is compared too, so that a context that turns high-variance below the
 * Pattern Set's cut is not missed, with the p-values corrected for the
 * number of tests (Holm 1979), and a verdict that can be "cannot tell".
 */
#ifndef VARPERF_CORE_COMPARE_H
#define VARPERF_CORE_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "cct.h"
#include "datafile.h"
#include "patterns.h"
#include "stats.h"

struct vp_compare_params {
	double min_overlap; /* the sets agree at this overlap or more (0.8) */
	double alpha;	    /* significance level of the tests (0.05) */
	int symmetric;	    /* also require |A and B| / |B| >= min_overlap */
};

void vp_compare_params_default(struct vp_compare_params *p);
int vp_compare_params_check(const struct vp_compare_params *p, char *err, size_t errlen);

/* One recording: its tree, the reader for its call sites, its analysis. */
struct vp_compare_input {
	const struct vp_cct *tree;
	const struct vp_header *hdr;
	struct vp_reader *reader; /* call-site definitions; NULL: ids compare */
	const struct vp_analysis *an;
};

/* A two-sided test of the difference B - A. */
struct vp_test {
	double stat;  /* t, or F = s_B^2 / s_A^2 */
	double df1;   /* Welch-Satterthwaite df, or the F test's numerator df */
	double df2;   /* the F test's denominator df (0 for t) */
	double p;     /* two-sided p-value, NaN when undefined (n < 2) */
	double p_adj; /* p corrected for all the comparison's tests (Holm);
		       * p itself from the test functions alone */
};

/* What became of a significant calling context between A and B. */
enum vp_context_change {
	VP_CTX_SAME = 0,   /* high-variance on both sides, or on neither */
	VP_CTX_NEW,	   /* high-variance in B only: absent from A, or its
			    * variance significantly larger */
	VP_CTX_VANISHED,   /* high-variance in A only, the mirror image */
	VP_CTX_UNSURE,	   /* high-variance on one side only, and the test
			    * cannot tell a change from chance (corrected p >=
			    * alpha, too few invocations, or its function not
			    * probed on the other side) */
};

/* One calling context significant in A or in B. */
struct vp_compare_context {
	uint32_t a, b;	    /* its node in A and in B; VP_NO_NODE: absent */
	int hv_a, hv_b;	    /* high-variance on each side */
	struct vp_test mean; /* Welch's t test, B against A */
	struct vp_test var;  /* F test */
	enum vp_context_change change;
};

/* What the two recordings ran: their first module, the program. */
enum vp_compare_program {
	VP_PROG_UNKNOWN = 0, /* not enough said to tell (no build-ids and no
			      * sizes, or no modules) */
	VP_PROG_SAME,	     /* one build-id, or one path and size */
	VP_PROG_OTHER_BUILD, /* the same file name, another build */
	VP_PROG_OTHER,	     /* other file names and builds */
};

enum vp_compare_verdict {
	VP_VERDICT_AGREE = 0,
	VP_VERDICT_DIFFER,	/* the Pattern Sets disagree, or a context
				 * turned high-variance or stopped being */
	VP_VERDICT_CANNOT_TELL, /* no change shown, but some contexts' tests
				 * cannot tell */
};

/* One pattern of A and what became of it in B. */
struct vp_compare_pattern {
	size_t a;	   /* index in A's patterns (A's VIM order) */
	struct vp_stats b; /* B's invocations whose context ends with its chain */
	size_t bnodes;	   /* B's nodes matched */
	double vim_b;	   /* k sigma N in B */
	int in_set_a;	   /* in A's Pattern Set */
	int in_set_b;	   /* in the regression Pattern Set: vp_pattern_in_set() of
			    * VIM_B, A's reliability and max_vim_b */
	struct vp_test mean; /* Welch's t test on the means */
	struct vp_test var;  /* F test on the variances */
};

struct vp_compare {
	struct vp_compare_params params;
	size_t npatterns;
	struct vp_compare_pattern *patterns; /* one per pattern of A, same order */
	double max_vim_b; /* the largest VIM_B of A's reliable patterns */
	size_t nset_a;	/* |A|: A's Pattern Set */
	size_t nset_b;	/* |B|: the regression Pattern Set */
	size_t ncommon; /* |A and B| */
	double overlap;	/* |A and B| / |A|, Kumar et al. 2008's Pattern Set overlap (§4) */
	double overlap_b; /* |A and B| / |B| */
	int agree;	  /* overlap (and, symmetric, overlap_b) >= min_overlap */
	size_t nnew;
	size_t *new_b; /* B's own Pattern Set patterns none of whose nodes any
			* pattern of A matches: behaviour new in B */
	/* every context significant in A or B, in A's node order then B's */
	size_t ncontexts;
	struct vp_compare_context *contexts;
	size_t nctx_new, nctx_vanished, nctx_unsure;
	size_t ntests; /* defined tests, patterns' and contexts': Holm's m */
	enum vp_compare_program program;
	enum vp_compare_verdict verdict;
};

/**
 * vp_compare_run - evaluate @a's patterns on @b, and compare every
 * calling context significant in either.  Chains match by function symbol
 * name and call site ("file:line", else "caller+offset", else the
 * address; call sites sharing a line by their rank on it, see
 * vp_cct_callsite_twins), so the two recordings may number them differently.
 * Both analyses must use the same parameters (beta and k come from @a's).
 * The verdict: DIFFER when the Pattern Sets disagree or a context is NEW
 * or VANISHED, else CANNOT_TELL when one is UNSURE, else AGREE (@c->agree
 * is the Pattern Sets' agreement alone).
 * Returns 0 or a negative errno; release with vp_compare_release().
 */
int vp_compare_run(struct vp_compare *c, const struct vp_compare_input *a,
		   const struct vp_compare_input *b, const struct vp_compare_params *p);
void vp_compare_release(struct vp_compare *c);

/* Regularized incomplete beta I_x(a, b); NaN outside its domain. */
double vp_betai(double a, double b, double x);
/* Two-sided p-value of Student's t with @df degrees of freedom. */
double vp_student_t_p(double t, double df);
/* Welch's test of mean B - mean A from population moments (n, mean, m2). */
struct vp_test vp_welch_test(const struct vp_stats *a, const struct vp_stats *b);
/* F test of var B / var A, two-sided (assumes normal data). */
struct vp_test vp_f_test(const struct vp_stats *a, const struct vp_stats *b);
/*
 * Holm's step-down correction of the @n p-values @p[i] (NaN ones are left
 * out and stay NaN): the corrected values into @ret[i] (may be @p).
 * Valid whatever the dependence between the tests, which nested calling
 * contexts have.  0 or -ENOMEM.
 */
int vp_holm(const double *p, size_t n, double *ret);
/* Whether the first modules of @a and @b are one program (see above). */
enum vp_compare_program vp_compare_programs(const struct vp_header *a,
					    const struct vp_header *b);

#endif
