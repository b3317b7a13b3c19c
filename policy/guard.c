/* SPDX-License-Identifier: MIT */
/*
 * The capacity guard (issue 16): the last step of fs_solve, so that no
 * allocation leaves the library asking for more than a pool has, whatever a
 * rule got wrong. A rule bug (weights 1e16 apart once made PS-DSF hand out 5
 * of 4 cores) then costs tasks, never an over-committed kernel limit.
 */
#include "policy.h"

#include <math.h>
#include <stdlib.h>

/* Rounding: the scaled sum must come out <= capacity in floating point too. */
#define GUARD_MARGIN (1 - 1e-15)
/* Excess below this (relative) is rounding, trimmed without a report. */
#define GUARD_REPORT 1e-9

/* A resource's load, use / capacity (infinite when it has none). */
static double load(double use, double cap)
{
	return cap > 0 ? use / cap : INFINITY;
}

/* Pool k's largest load over its resources (0 if empty), from its column. */
static double pool_overuse(const struct fs_problem *p, const double *x, size_t k)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	double worst = 0;

	for (size_t r = 0; r < M; r++) {
		double use = 0;
		for (size_t n = 0; n < N; n++)
			use += x[n * K + k] * p->demand[n * M + r];
		if (use > 0)
			worst = fmax(worst, load(use, p->capacity[k * M + r]));
	}
	return worst;
}

/*
 * pool_overuse of every pool into over[K], with used[K][M] as scratch, in
 * one pass over the rows that skips zero entries: each sum is the same (n
 * ascending), but pool_overuse reads x at a stride of K, N K M times, which
 * at N = 1000, K = 100 was most of the guard's time.
 */
static void overuse_all(const struct fs_problem *p, const double *x, double *used, double *over)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;

	for (size_t i = 0; i < K * M; i++)
		used[i] = 0;
	for (size_t n = 0; n < N; n++) {
		const double *dn = p->demand + n * M;
		for (size_t k = 0; k < K; k++) {
			const double v = x[n * K + k];
			if (v == 0)
				continue;
			for (size_t r = 0; r < M; r++)
				used[k * M + r] += v * dn[r];
		}
	}
	for (size_t k = 0; k < K; k++) {
		double worst = 0;
		for (size_t r = 0; r < M; r++)
			if (used[k * M + r] > 0)
				worst = fmax(worst, load(used[k * M + r], p->capacity[k * M + r]));
		over[k] = worst;
	}
}

double fs_guard_capacity(const struct fs_problem *p, struct fs_solution *s, double tol)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	/* over[K], then used[K][M]; NULL: a pool at a time, from its column */
	double *over = malloc((K + K * M) * sizeof(double));
	double least = 1;
	/* changed: x was; trimmed: only by factors within rounding (see below) */
	bool changed = false, trimmed = true;

	for (size_t n = 0; n < N; n++) {
		const double mt = fs_max_tasks(p, n);
		double tot = 0;
		for (size_t k = 0; k < K; k++) {
			double *v = &s->x[n * K + k];
			if (isnan(*v) || isinf(*v) || (*v != 0 && fs_gamma(p, n, k) <= 0)) {
				least = 0; /* nothing to scale: a rule bug */
				*v = 0;
				changed = true;
				trimmed = false;
			} else if (*v < 0) {
				*v = 0; /* rounding below 0; zeroing it only adds use,
					   which the pool check below sees */
				changed = true;
				trimmed = false;
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
			trimmed &= f >= 1 - GUARD_REPORT;
		}
	}
	if (over)
		overuse_all(p, s->x, over + K, over);
	for (size_t k = 0; k < K; k++) {
		const double ov = over ? over[k] : pool_overuse(p, s->x, k);
		if (!(ov > 1))
			continue;
		const double f = isfinite(ov) ? GUARD_MARGIN / ov : 0;
		if (f < 1 - GUARD_REPORT)
			least = fmin(least, f);
		for (size_t n = 0; n < N; n++)
			s->x[n * K + k] *= f;
		changed = true;
		trimmed &= f >= 1 - GUARD_REPORT;
	}
	free(over);
	/*
	 * A rounding trim (every factor within GUARD_REPORT of 1, nothing
	 * zeroed) recomputes the totals and capped flags only: the finish's
	 * saturation and bottleneck tests (at 1e3 tol) could flip only where
	 * they sat within about 1e-9 of their threshold, where either answer
	 * is within tolerance, so bottleneck[] and level[] stay as the rule
	 * wrote them. A full finish after every repaired PS-DSF point (its
	 * capped rows and full resources come out a few ulps over) was a fifth
	 * of a warm re-solve at N = 1000, K = 100.
	 */
	if (changed && trimmed)
		fs_solution_retotal(s, p, tol);
	else if (changed)
		fs_solution_finish(s, p, tol);
	return least;
}
