/* SPDX-License-Identifier: MIT */
/* Internal helpers shared by drf.c, psdsf.c, apf.c and njc.c (not part of the public API). */
#ifndef FAIRSHARE_PSDSF_INTERNAL_H
#define FAIRSHARE_PSDSF_INTERNAL_H

#include "policy.h"

/*
 * Weighted DRF on pool k alone by water-filling (ALGORITHMS.md 2.1), honouring
 * max_tasks: every tenant n with gamma[n] > 0 and tot[n] below its cap climbs
 * the level t with x[n][k] = t * phi_n * gamma[n] until a resource it demands
 * saturates on k or tot[n] reaches max_tasks_n. Other tenants' x[.][k] count
 * as fixed use. On entry x[n][k] must be 0 for the climbing tenants.
 * gamma[N] holds gamma_{n,k}; x is [N][K]; tot[N] is updated in place.
 * O(N log N + N M^2). Returns 0 or -ENOMEM.
 */
int fs_waterfill_pool(const struct fs_problem *p, size_t k, const double *gamma, double *x,
		      double *tot, double tol);

/*
 * Per-server DRF (ALGORITHMS.md 2.1), the start of PS-DSF and alpha-PF-VDS:
 * fills gamma [N][K] with fs_gamma, then water-fills pool after pool in index
 * order (caps make the order matter, so it is fixed). x [N][K] and tot [N]
 * must be zero on entry. Returns 0 or -ENOMEM.
 */
int fs_per_server_drf(const struct fs_problem *p, double *gamma, double *x, double *tot,
		      double tol);

/*
 * The literal [P4] Algorithm I (ALGORITHMS.md 2.2 with its clarifications)
 * from per-server DRF, without fs_solve_psdsf's best-response fast path:
 * the reference the tests hold the fast path's answers against. Same
 * contract as fs_solve_psdsf; iterations counts Algorithm-I rounds.
 */
int fs_psdsf_algorithm1(const struct fs_problem *p, const struct fs_options *opt,
			struct fs_solution *out, struct fs_error *err);

/* gamma [N][K]: fs_gamma of every tenant and pool, in one pass. */
void fs_gamma_all(const struct fs_problem *p, double *gamma);

/* fs_check_psdsf with gamma [N][K] given (NULL: computed as it goes). */
bool fs_check_psdsf_gamma(const struct fs_problem *p, const double *x, const double *gamma,
			  double tol, struct fs_error *why);

/* fs_solution_finish with gamma [N][K] given (NULL: computed). */
void fs_solution_finish_gamma(struct fs_solution *s, const struct fs_problem *p,
			      const double *gamma, double tol);

/* True when tot has reached cap within the relative tolerance. */
static inline bool fs_at_cap(double tot, double cap, double tol)
{
	return tot >= cap * (1 - tol);
}

#endif
