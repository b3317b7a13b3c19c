/* SPDX-License-Identifier: MIT */
/*
 * Baseline (a) for fs_solve_njc: the trajectory of [P3] section 5.4
 * (ALGORITHMS.md 8) integrated with Dormand-Prince 5(4).
 *
 * State x_i: the fraction of its request granted (tenants with a finite
 * max_tasks; request = max_tasks * d, plus the dummy resource x_i <= 1), or
 * its tasks (elastic tenants, no dummy). With r_ij the request as a fraction
 * of capacity, s_j = 1 - sum_k x_k r_kj and b_ij = r_ij / s_j, the path keeps
 * x_i g_i(x) = c(t) e_i with g_i = df/dx_i = sum_j b_ij (+ 1 / (1 - x_i)),
 * f(x(t)) = t. Differentiating (13) and dividing row i by x_i gives the
 * symmetric positive-definite system
 *
 *     (diag(g_i / x_i + [capped] / (1 - x_i)^2) + B B^T) y = e / x,
 *     dx/dt = y / sum_i g_i y_i          (so that df/dt = 1),
 *
 * solved by the Woodbury identity in O(N M^2) (an N x N dense solve would
 * make the baseline a strawman). The path starts at x_i = c0 e_i / g_i(0),
 * which is on the path up to O(c0^2); that offset is carried unchanged and
 * vanishes relative to c(t) -> infinity.
 */
#ifndef FAIRSHARE_BENCH_ODE_H
#define FAIRSHARE_BENCH_ODE_H

#include "policy.h"

struct bench_ode_stats {
	int steps;    /* accepted steps */
	int rejected; /* rejected steps (error too large or left the domain) */
	int evals;    /* right-hand-side evaluations */
	double t;     /* barrier level f(x) reached */
};

/*
 * Integrates with relative local error tolerance rtol until the state
 * satisfies the acceptance test fs_solve_njc applies to its own answer:
 * feasible and NJC condition (2) with relative tolerance vt (a resource
 * counts as saturated at >= (1 - vt) of capacity; the certificate needs
 * >= (1 - vt) e_n; a capped tenant is satisfied at >= (1 - vt) max_tasks).
 * x[N] receives tasks per tenant (0 for tenants no resource can serve).
 * p must have one pool. Returns 0, -ENOMEM, -EINVAL or -ETIMEDOUT (step
 * budget exhausted; x holds the last state).
 */
int bench_njc_ode(const struct fs_problem *p, double rtol, double vt, double *x,
		  struct bench_ode_stats *st);

#endif /* FAIRSHARE_BENCH_ODE_H */
