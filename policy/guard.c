/* SPDX-License-Identifier: MIT */
/*
 * The capacity guard (issue 16): the last step of fs_solve, so that no
 * allocation leaves the library asking for more than a pool has, whatever a
 * rule got wrong. A rule bug (weights 1e16 apart once made PS-DSF hand out 5
 * of 4 cores) then costs tasks, never an over-committed kernel limit.
 */
#include "policy.h"

#include <math.h>

/* Rounding: the scaled sum must come out <= capacity in floating point too. */
#define GUARD_MARGIN (1 - 1e-15)
/* Excess below this (relative) is rounding, trimmed without a report. */
#define GUARD_REPORT 1e-9

/* Pool k's largest use / capacity over its resources (0 if empty). */
static double overuse(const struct fs_problem *p, const double *x, size_t k)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	double worst = 0;

	for (size_t r = 0; r < M; r++) {
		const double cap = p->capacity[k * M + r];
		double use = 0;
		for (size_t n = 0; n < N; n++)
			use += x[n * K + k] * p->demand[n * M + r];
		if (use > 0)
			worst = fmax(worst, cap > 0 ? use / cap : INFINITY);
	}
	return worst;
}

double fs_guard_capacity(const struct fs_problem *p, struct fs_solution *s)
{
	const size_t N = p->n_tenants, K = p->n_pools;
	double least = 1;
	bool changed = false;

	for (size_t n = 0; n < N; n++) {
		const double mt = fs_max_tasks(p, n);
		double tot = 0;
		for (size_t k = 0; k < K; k++) {
			double *v = &s->x[n * K + k];
			if (isnan(*v) || isinf(*v) || (*v != 0 && fs_gamma(p, n, k) <= 0)) {
				least = 0; /* nothing to scale: a rule bug */
				*v = 0;
				changed = true;
			} else if (*v < 0) {
				*v = 0; /* rounding below 0; zeroing it only adds use,
					   which the pool check below sees */
				changed = true;
			}
			tot += *v;
		}
		if (tot > mt) {
			const double f = mt / tot * GUARD_MARGIN;
			if (f < 1 - GUARD_REPORT)
				least = fmin(least, f);
			for (size_t k = 0; k < K; k++)
				s->x[n * K + k] *= f;
			changed = true;
		}
	}
	for (size_t k = 0; k < K; k++) {
		const double over = overuse(p, s->x, k);
		if (!(over > 1))
			continue;
		const double f = isfinite(over) ? GUARD_MARGIN / over : 0;
		if (f < 1 - GUARD_REPORT)
			least = fmin(least, f);
		for (size_t n = 0; n < N; n++)
			s->x[n * K + k] *= f;
		changed = true;
	}
	if (changed)
		fs_solution_finish(s, p, FS_DEFAULT_TOL);
	return least;
}
