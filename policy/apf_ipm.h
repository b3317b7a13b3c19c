/* SPDX-License-Identifier: MIT */
/*
 * alpha-PF-VDS as one global system (internal to the policy library): a
 * primal-dual interior-point method on the KKT conditions (28)-(31) of
 * ALGORITHMS.md 2.5 with every tenant's max_tasks as one constraint shared by
 * all pools (one price nu_n, the variational equilibrium of the per-pool
 * games). For alpha = 1 this is the Eisenberg-Gale program
 *
 *   maximise sum_n phi_n log x_n  subject to the per-pool capacities and caps
 *
 * whose KKT system it solves to its global optimum (convex, the iteration is
 * the standard infeasible primal-dual path-following method with Mehrotra's
 * predictor-corrector). For alpha != 1 the same Newton system is no longer
 * symmetric (a pool values a task of n by phi_n^alpha gamma_{n,i}^(alpha-1)
 * x_n^-alpha, which differs between pools), so global convergence is not
 * guaranteed; apf.c then checks the answer with best-response sweeps and
 * falls back to them.
 */
#ifndef FAIRSHARE_APF_IPM_H
#define FAIRSHARE_APF_IPM_H

#include "policy.h"

struct fs_apf_ipm_stats {
	int iterations; /* Newton (predictor-corrector) steps */
	double kkt;	/* final relative KKT error (the largest of the three below) */
	double primal;	/* largest capacity/cap violation, in fractions of capacity */
	double dual;	/* largest stationarity residual, relative to its terms */
	double gap;	/* largest complementarity of a tenant or row over its
			   utility flux (see residuals() in apf_ipm.c) */
};

/*
 * Solves p (validated) at alpha (finite, > 0) to relative KKT error tol.
 * x [N][K] receives the allocation, scaled onto the feasible set (it is
 * feasible even when the iteration stops early); stats may be NULL. Returns 0,
 * -ENOMEM, -ETIMEDOUT when max_iter steps (<= 0: a default) did not reach
 * tol or the steps stalled, or -EDOM when a Newton system was singular; x
 * then holds the best point seen.
 */
int fs_apf_ipm(const struct fs_problem *p, double alpha, double tol, int max_iter, double *x,
	       struct fs_apf_ipm_stats *stats);

#endif
