/* SPDX-License-Identifier: MIT */
/*
 * Baseline (b) for fs_solve_drf: weighted DRF on one pool as max-min
 * fairness by sequential linear programs (GLPK simplex), the textbook
 * water-filling: maximise the common level t of the unfrozen tenants,
 * freeze those whose share cannot rise, repeat.
 *
 * Variables z_n = x_n / gamma_n (the fraction of the pool tenant n would
 * use alone; its dominant share is z_n / phi_n) and t. Rows: capacity
 * sum_n z_n gamma_n d_{n,r} / c_r <= 1 (all coefficients in [0, 1]) and,
 * for unfrozen n, z_n - phi_n t >= 0; bounds 0 <= z_n <= max_tasks_n /
 * gamma_n. Freezing: after a round with optimum t*, the least use of each
 * resource compatible with level t* is reached with every unfrozen tenant
 * at exactly phi_n t*; a resource full there can give nobody more, so the
 * unfrozen tenants that demand it are frozen at phi_n t*, as are those whose
 * max_tasks is reached (z_n fixed, its level row dropped). Every round
 * freezes someone; the LP is re-solved warm from the previous basis.
 */
#ifndef FAIRSHARE_BENCH_GLPK_H
#define FAIRSHARE_BENCH_GLPK_H

#include "policy.h"

struct bench_glpk_stats {
	int rounds;	/* LPs solved */
	int simplex_it; /* simplex iterations over all rounds */
};

/* x[N] receives tasks per tenant. p must have one pool. 0, -EINVAL,
 * -ENOMEM or -EIO (GLPK did not report an optimum). */
int bench_drf_glpk(const struct fs_problem *p, double *x, struct bench_glpk_stats *st);

#endif /* FAIRSHARE_BENCH_GLPK_H */
