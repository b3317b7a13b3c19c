/* SPDX-License-Identifier: MIT */
/*
 * Small dense linear-programming solver (internal to the policy library).
 *
 *   maximise   c^T x
 *   subject to A_le x <= b_le,  A_eq x = b_eq,  0 <= x <= upper
 *
 * Two-phase primal simplex (revised form: sparse columns, dense explicit
 * basis inverse) with row equilibration. Pricing is Dantzig's (largest reduced cost); after a run
 * of degenerate pivots it switches to Bland's rule until the objective moves again, which rules out
 * cycling. Ties are broken by index, so results are deterministic. Intended for well-scaled
 * problems with up to a few thousand variables and a few hundred rows (the max-min water-filling
 * and property LPs).
 */
#ifndef FAIRSHARE_LP_H
#define FAIRSHARE_LP_H

#include <stddef.h>

struct fs_lp {
	size_t n_vars;	     /* columns of A_le / A_eq */
	size_t n_le;	     /* rows of A_le */
	size_t n_eq;	     /* rows of A_eq */
	const double *c;     /* [n_vars] */
	const double *a_le;  /* [n_le][n_vars] row-major; NULL iff n_le == 0 */
	const double *b_le;  /* [n_le] (any sign) */
	const double *a_eq;  /* [n_eq][n_vars]; NULL iff n_eq == 0 */
	const double *b_eq;  /* [n_eq] */
	const double *upper; /* [n_vars], INFINITY for none; NULL: no upper bounds */
};

struct fs_lp_result {
	double obj;	 /* c^T x at the optimum */
	double *x;	 /* caller-provided [n_vars]: an optimal vertex */
	double *dual_le; /* optional caller-provided [n_le]: optimal duals (>= 0) */
	double *dual_eq; /* optional caller-provided [n_eq]: optimal duals (free sign) */
	int pivots;	 /* simplex pivots over both phases */
};

/*
 * Solves lp. Returns 0 with res filled at an optimum, -EINVAL when the
 * constraints are infeasible (or the input has NaN/inf coefficients),
 * -ERANGE when the objective is unbounded, -ENOMEM, or -EDOM when the
 * iteration cap is hit or the final point fails the feasibility re-check
 * (numerical trouble; should not happen on well-scaled input).
 */
int fs_lp_maximize(const struct fs_lp *lp, struct fs_lp_result *res);

#endif /* FAIRSHARE_LP_H */
