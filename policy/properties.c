/* SPDX-License-Identifier: MIT */
/*
 * Fairness predicates of ALGORITHMS.md section 4 (and NJC, section 8) on an
 * allocation x[N][K]. All comparisons use the relative tolerance tol.
 *
 * max_tasks extension (the papers have no caps): a tenant whose total reached
 * max_tasks (within tol) has everything it asked for, so it needs no
 * bottleneck (PS-DSF), its sharing-incentive and envy-freeness levels are
 * capped at max_tasks, and feasibility also requires x_n <= max_tasks.
 */
#include "policy.h"
#include "error.h"
#include "psdsf_internal.h"

#include <math.h>
#include <stdlib.h>

#define LBL 96

static double total(const struct fs_problem *p, const double *x, size_t n)
{
	double t = 0;

	for (size_t k = 0; k < p->n_pools; k++)
		t += x[n * p->n_pools + k];
	return t;
}

static bool is_capped(const struct fs_problem *p, const double *x, size_t n, double tol)
{
	double mt = fs_max_tasks(p, n);

	return isfinite(mt) && total(p, x, n) >= mt * (1 - tol);
}

static double pool_use(const struct fs_problem *p, const double *x, size_t k, size_t r)
{
	const size_t K = p->n_pools, M = p->n_resources;
	double u = 0;

	for (size_t n = 0; n < p->n_tenants; n++)
		u += x[n * K + k] * p->demand[n * M + r];
	return u;
}

bool fs_check_feasible(const struct fs_problem *p, const double *x, double tol,
		       struct fs_error *why)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	char a[LBL], b[LBL], c[LBL];

	for (size_t n = 0; n < N; n++) {
		for (size_t k = 0; k < K; k++) {
			double v = x[n * K + k], g = fs_gamma(p, n, k);
			if (!isfinite(v) || v < -tol * fmax(1, g))
				return fs_reject(why, "%s has %g tasks on %s",
						 fs_tenant_label(p, n, a, LBL), v,
						 fs_pool_label(p, k, b, LBL));
			if (g <= 0 && fabs(v) > tol)
				return fs_reject(
				    why, "%s has %g tasks on %s, which cannot serve it",
				    fs_tenant_label(p, n, a, LBL), v, fs_pool_label(p, k, b, LBL));
		}
		double t = total(p, x, n), mt = fs_max_tasks(p, n);
		if (t > mt * (1 + tol))
			return fs_reject(why, "%s has %g tasks, above its max_tasks %g",
					 fs_tenant_label(p, n, a, LBL), t, mt);
	}
	for (size_t k = 0; k < K; k++)
		for (size_t r = 0; r < M; r++) {
			double u = pool_use(p, x, k, r), cap = p->capacity[k * M + r];
			if (u > cap * (1 + tol) + tol * (cap > 0 ? 0 : 1))
				return fs_reject(why, "%s: %s used %g > capacity %g",
						 fs_pool_label(p, k, a, LBL),
						 fs_resource_label(p, r, c, LBL), u, cap);
		}
	return true;
}

bool fs_check_sharing_incentive(const struct fs_problem *p, const double *x, double tol,
				struct fs_error *why)
{
	const size_t N = p->n_tenants, K = p->n_pools;
	double wsum = 0;
	char a[LBL];

	for (size_t n = 0; n < N; n++)
		wsum += fs_weight(p, n);
	for (size_t n = 0; n < N; n++) {
		double g = 0;
		for (size_t k = 0; k < K; k++)
			g += fs_gamma(p, n, k);
		double level = fmin(fs_weight(p, n) / wsum * g, fs_max_tasks(p, n));
		double t = total(p, x, n);
		if (t < level * (1 - tol))
			return fs_reject(why,
					 "%s has %g tasks, below its sharing-incentive level %g",
					 fs_tenant_label(p, n, a, LBL), t, level);
	}
	return true;
}

bool fs_check_envy_free(const struct fs_problem *p, const double *x, double tol,
			struct fs_error *why)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	bool *usable_pool = calloc(K, sizeof(bool));
	bool ok = true;
	char a[LBL], b[LBL];

	if (!usable_pool)
		return fs_reject(why, "out of memory checking %zu pools", K);
	for (size_t n = 0; n < N && ok; n++) {
		const double xn = total(p, x, n), mt = fs_max_tasks(p, n);
		const double *dn = &p->demand[n * M];
		for (size_t k = 0; k < K; k++)
			usable_pool[k] = fs_gamma(p, n, k) > 0;
		for (size_t m = 0; m < N && ok; m++) {
			if (m == n)
				continue;
			/* Only m's tasks on pools n could use count (placement-aware EF). */
			double usable = 0, ratio = INFINITY;
			for (size_t k = 0; k < K; k++)
				if (usable_pool[k])
					usable += x[m * K + k];
			for (size_t r = 0; r < M; r++)
				if (dn[r] > 0)
					ratio = fmin(ratio, p->demand[m * M + r] / dn[r]);
			double want = fs_weight(p, n) / fs_weight(p, m) * usable * ratio;
			want = fmin(want, mt);
			if (xn < want * (1 - tol) - tol)
				ok = fs_reject(why, "%s envies %s: %g tasks, %g with its bundle",
					       fs_tenant_label(p, n, a, LBL),
					       fs_tenant_label(p, m, b, LBL), xn, want);
		}
	}
	free(usable_pool);
	return ok;
}

bool fs_check_psdsf(const struct fs_problem *p, const double *x, double tol, struct fs_error *why)
{
	return fs_check_psdsf_gamma(p, x, NULL, tol, why);
}

/*
 * O(N K M): totals, and each pool's use and richest holders, in one pass
 * over x in its own (tenant-major) order; then each tenant's pools are
 * checked, also row by row, and the violation reported is the first in
 * pool order, then tenant order, as when the pools were checked in turn.
 * (Pool by pool with stride-K reads, the sums cost 1.9 ms at N = 1000,
 * K = 100, a fifth of a warm re-solve that changes nothing.)
 */
bool fs_check_psdsf_gamma(const struct fs_problem *p, const double *x, const double *gamma,
			  double tol, struct fs_error *why)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	double *tot = malloc(N * sizeof(double));
	double *use = calloc(K * M, sizeof(double));
	double *richest = malloc(K * M * sizeof(double));
	double *own_gamma = gamma ? NULL : malloc(N * K * sizeof(double));
	bool ok = true;
	char a[LBL], b[LBL];

	if (!tot || !use || !richest || (!gamma && !own_gamma)) {
		ok = fs_reject(why, "out of memory checking %zu tenants", N);
		goto out;
	}
	if (!gamma) {
		fs_gamma_all(p, own_gamma);
		gamma = own_gamma;
	}
	/* richest[k][r]: largest weighted VDS among the holders of r on k. */
	for (size_t j = 0; j < K * M; j++)
		richest[j] = -INFINITY;
	for (size_t n = 0; n < N; n++) {
		const double *dn = &p->demand[n * M], phi = fs_weight(p, n);
		tot[n] = total(p, x, n);
		for (size_t k = 0; k < K; k++) {
			const double xm = x[n * K + k], g = gamma[n * K + k];
			const double *cap = &p->capacity[k * M];
			double *uk = &use[k * M], *rk = &richest[k * M];
			if (xm == 0)
				continue; /* adds 0 to use, holds nothing */
			for (size_t r = 0; r < M; r++)
				uk[r] += xm * dn[r];
			if (g <= 0)
				continue;
			const double v = tot[n] / (phi * g);
			/* fmax's library call, N K times, was a measured part of
			 * the certificate; a NaN v leaves rk as fmax would, and
			 * rk starts at -INFINITY and is never NaN */
			for (size_t r = 0; r < M; r++)
				if (xm * dn[r] > tol * cap[r] && v > rk[r])
					rk[r] = v;
		}
	}
	/*
	 * Row by row (gamma and x are [N][K]: a pool at a time strode N K
	 * entries K apart, and this pass was the certificate's largest part at
	 * N = 1000, K = 100); the failure reported is still the first in pool
	 * order, then tenant order.
	 */
	size_t bad_k = K, bad_n = N;
	double bad_v = 0;
	for (size_t n = 0; n < N; n++) {
		const double mt = fs_max_tasks(p, n), phi = fs_weight(p, n);
		const double *dn = &p->demand[n * M];
		if (isfinite(mt) && tot[n] >= mt * (1 - tol))
			continue;
		for (size_t k = 0; k < bad_k; k++) {
			const double g = gamma[n * K + k];
			const double *cap = &p->capacity[k * M], *uk = &use[k * M],
				     *rk = &richest[k * M];
			if (g <= 0)
				continue;
			const double v = tot[n] / (phi * g);
			bool found = false;
			for (size_t r = 0; r < M && !found; r++)
				found = dn[r] > 0 && uk[r] >= cap[r] * (1 - tol) &&
					v >= rk[r] * (1 - tol);
			if (!found) {
				bad_k = k;
				bad_n = n;
				bad_v = v;
			}
		}
	}
	if (bad_k < K)
		ok = fs_reject(why, "%s has no bottleneck resource on %s (weighted VDS %g)",
			       fs_tenant_label(p, bad_n, a, LBL), fs_pool_label(p, bad_k, b, LBL),
			       bad_v);
out:
	free(tot);
	free(use);
	free(richest);
	free(own_gamma);
	return ok;
}

bool fs_check_njc(const struct fs_problem *p, const double *x, double tol, int *certificate,
		  struct fs_error *why)
{
	const size_t N = p->n_tenants, M = p->n_resources;
	bool ok = true;
	double wsum = 0;
	char a[LBL];

	for (size_t n = 0; certificate && n < N; n++)
		certificate[n] = FS_NO_RESOURCE;
	if (p->n_pools != 1)
		return fs_reject(why, "njc check needs one pool, the problem has %zu", p->n_pools);
	for (size_t n = 0; n < N; n++)
		if (fs_gamma(p, n, 0) > 0)
			wsum += fs_weight(p, n);
	for (size_t n = 0; n < N; n++) {
		if (fs_gamma(p, n, 0) <= 0)
			continue; /* unserved tenants are left out of the entitlements */
		if (is_capped(p, x, n, tol)) {
			if (certificate)
				certificate[n] = FS_CERT_SATISFIED;
			continue;
		}
		/* x_i r_ij = (tasks/max_tasks)(max_tasks d_j/c_j) = tasks d_j / c_j. */
		const double e = fs_weight(p, n) / wsum;
		int best = FS_NO_RESOURCE;
		double best_share = -1;
		for (size_t r = 0; r < M; r++) {
			double c = p->capacity[r], d = p->demand[n * M + r];
			if (d <= 0 || pool_use(p, x, 0, r) < c * (1 - tol))
				continue;
			double share = x[n] * d / c;
			if (share >= e * (1 - tol) && share > best_share) {
				best_share = share;
				best = (int)r;
			}
		}
		if (certificate)
			certificate[n] = best;
		if (best == FS_NO_RESOURCE && ok)
			ok = fs_reject(
			    why,
			    "%s has a justified complaint: %g tasks, below its request, and "
			    "no saturated resource where its share reaches its entitlement %g",
			    fs_tenant_label(p, n, a, LBL), x[n], e);
	}
	return ok;
}
