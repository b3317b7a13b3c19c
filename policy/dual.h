/* SPDX-License-Identifier: MIT */
/*
 * Separable concave maximisation under packing constraints, solved through
 * its dual (internal to the policy library).
 *
 *   maximise   sum_n F_n(x_n)
 *   subject to sum_n a[n][r] x_n <= cap[r]   (r < m),   0 <= x_n <= hi_n
 *
 * where F_n' (x) = ((x + B_n) / A_n)^(-alpha) - offset_n, i.e. the tenant's
 * response to the price p_n = offset_n + sum_r lambda_r a[n][r] is
 *
 *   x_n(p) = clip(A_n p^(-1/alpha) - B_n, 0, hi_n)       (non-increasing in p)
 *
 * This covers the NJC / weighted proportional-fair point (alpha = 1, B = 0,
 * A = entitlement; ALGORITHMS.md 8) and one pool's alpha-PF-VDS best response
 * (A = phi gamma^(1 - 1/alpha), B = the tenant's tasks on other pools; 1.9,
 * 2.5). The dual has one variable per resource:
 *
 *   D(lambda) = sum_n h_n(p_n) + sum_r lambda_r cap_r,   h_n' = -x_n,
 *
 * convex and C^1; it is minimised over lambda >= 0 by projected Newton steps
 * on the free set (Bertsekas 1982) with Levenberg-Marquardt damping (singular
 * Hessians: fewer items than priced resources, collinear resources) and an
 * Armijo line search along the projection arc, accepted either through the
 * convexity bound D(new) - D(old) <= slope at the new point, or through D
 * differences summed from integrals of x_n (no cancellation of huge F values
 * for large alpha); full steps that still descend steeply are extended by
 * doubling. When Newton stalls (kinks where responses clip), one sweep of
 * exact coordinate minimisation (geometric bracketing + bisection) is done.
 * Convergence: |projected gradient_r| <= tol * cap_r beyond the rounding
 * level of the usage sums (which for B_n >> x_n is eps * B_n, not eps * x_n).
 * Cost per Newton step: O(n m + n k^2 + k^3), k = resources not pinned at a
 * zero price (k <= m). A cold solve of n >= 2048 items starts from the
 * prices of a sixteenth of them (dual.c, sample_start).
 */
#ifndef FAIRSHARE_DUAL_H
#define FAIRSHARE_DUAL_H

#include <stdbool.h>
#include <stddef.h>

struct fs_dual_problem {
	size_t n, m;
	const double *a;   /* [n][m], >= 0, row-major */
	const double *cap; /* [m], > 0 */
	double alpha;	   /* > 0 */
	const double *A;   /* [n], > 0 */
	const double *B;   /* [n], >= 0; NULL: all 0 */
	const double *hi;  /* [n], >= 0, may be INFINITY; NULL: all infinite */
	/* [n], >= 0: a fixed price added to p_n (e.g. the multiplier of a
	 * constraint shared with other subproblems); NULL: all 0. */
	const double *offset;
};

struct fs_dual_options {
	double tol;   /* stop when |projected gradient_r| <= tol * cap_r */
	int max_iter; /* Newton steps; <= 0 selects a default */
	bool warm;    /* start from the lambda passed in (if usable) */
};

struct fs_dual_stats {
	int newton;    /* accepted Newton steps */
	int fallback;  /* coordinate-minimisation sweeps */
	int evals;     /* trial-point evaluations (line search) */
	double pg;     /* final max_r |projected gradient_r| / cap_r */
	double scaled; /* factor (<= 1) x was scaled by to make it exactly feasible */
	/* Newton steps spent on the sampled start of a large cold solve
	 * (dual.c, sample_start); 0: none was made. Not in newton. */
	int sample_newton;
};

/*
 * Solves dp. lambda[m] receives the dual prices (and is read first when
 * o->warm); x[n] the primal point x_n(p_n), scaled down uniformly by at most
 * the final gradient tolerance so that it is feasible. stats may be NULL.
 * Returns 0, -EINVAL (bad input, e.g. an item with an all-zero row and no
 * upper bound: unbounded), -ENOMEM, or -ETIMEDOUT when the iteration cap is
 * reached (x then holds the best point found, made feasible).
 */
int fs_dual_solve(const struct fs_dual_problem *dp, const struct fs_dual_options *o, double *lambda,
		  double *x, struct fs_dual_stats *stats);

#endif /* FAIRSHARE_DUAL_H */
