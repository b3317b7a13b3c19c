/* SPDX-License-Identifier: MIT */
/*
 * LP-based predicates of ALGORITHMS.md section 4: Pareto optimality and
 * alpha-PF-VDS per-server optimality (Nash equilibrium of [P0] Problem 1).
 *
 * Both LPs use z_{n,k} = y_{n,k} / gamma_{n,k} as variables, so capacity rows
 * divided by c_{k,r} have coefficients in [0, 1].
 */
#include "policy.h"
#include "error.h"
#include "lp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Below this the LP's own round-off dominates any caller tolerance. */
#define MIN_TOL 1e-9

static const char *lp_error(int ret)
{
	switch (ret) {
	case -EINVAL:
		return "infeasible";
	case -ERANGE:
		return "unbounded";
	case -ENOMEM:
		return "out of memory";
	default:
		return "numerical trouble";
	}
}

/* Tenant totals and the largest capacity overshoot of x (>= 1 means some
 * pool resource is over-full). */
static double totals_and_overshoot(const struct fs_problem *p, const double *x, double *tot)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	double worst = 0;

	for (size_t n = 0; n < N; n++) {
		tot[n] = 0;
		for (size_t k = 0; k < K; k++)
			tot[n] += x[n * K + k];
	}
	for (size_t k = 0; k < K; k++)
		for (size_t r = 0; r < M; r++) {
			double used = 0, c = p->capacity[k * M + r];
			for (size_t n = 0; n < N; n++)
				used += x[n * K + k] * p->demand[n * M + r];
			if (c > 0 && used / c > worst)
				worst = used / c;
		}
	return worst;
}

/*
 * Pareto test (section 4): max sum_n w_n y_n s.t. y feasible (capacities,
 * placement, y_n <= max_tasks_n), y_n >= x_n. With w_n = 1/gamma_n (gamma_n =
 * sum_k gamma_{n,k}) every tenant's gain counts in units of its own
 * cluster-wide capacity, so a small tenant's improvement is not lost in a
 * large total. Instead of relaxing y_n >= x_n (1 - tol), which frees capacity
 * that another tenant may convert at a large exchange rate, x is scaled down
 * to be exactly feasible first; then any gain above tol is a real one.
 */
int fs_check_pareto(const struct fs_problem *p, const double *x, double tol, bool *holds,
		    struct fs_error *why)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	size_t n_pairs = 0, n_rows = 0, row;
	size_t *pn = calloc(N * K, sizeof(size_t)), *pk = calloc(N * K, sizeof(size_t));
	double *pg = calloc(N * K, sizeof(double)), *tot = calloc(N, sizeof(double));
	double *G = calloc(N, sizeof(double));
	double *a = NULL, *b = NULL, *c = NULL, *z = NULL;
	char lab[96];
	int ret;

	*holds = false;
	if (tol < MIN_TOL)
		tol = MIN_TOL;
	if (!pn || !pk || !pg || !tot || !G) {
		ret = -ENOMEM;
		goto nomem;
	}
	if (!fs_check_feasible(p, x, tol, why)) {
		ret = 0;
		goto out;
	}
	const double over = totals_and_overshoot(p, x, tot);
	const double shrink = over > 1 ? 1 / over : 1;
	for (size_t n = 0; n < N; n++)
		for (size_t k = 0; k < K; k++) {
			double g = fs_gamma(p, n, k);
			if (g > 0) {
				pn[n_pairs] = n;
				pk[n_pairs] = k;
				pg[n_pairs++] = g;
				G[n] += g;
			}
		}
	/* Rows: capacities, then per tenant a lower bound and maybe a cap. */
	n_rows = K * M;
	for (size_t n = 0; n < N; n++)
		n_rows += G[n] > 0 ? 1 + !!isfinite(fs_max_tasks(p, n)) : 0;
	a = calloc(n_rows * n_pairs + 1, sizeof(double));
	b = calloc(n_rows + 1, sizeof(double));
	c = calloc(n_pairs + 1, sizeof(double));
	z = calloc(n_pairs + 1, sizeof(double));
	if (!a || !b || !c || !z) {
		ret = -ENOMEM;
		goto nomem;
	}
	for (size_t q = 0; q < n_pairs; q++)
		for (size_t r = 0; r < M; r++) {
			double cap = p->capacity[pk[q] * M + r];
			if (cap > 0)
				a[(pk[q] * M + r) * n_pairs + q] =
				    p->demand[pn[q] * M + r] * pg[q] / cap;
		}
	for (size_t i = 0; i < K * M; i++)
		b[i] = 1;
	row = K * M;
	double base = 0;
	for (size_t n = 0; n < N; n++) {
		if (G[n] <= 0)
			continue;
		const double mt = fs_max_tasks(p, n);
		double lo = tot[n] * shrink;
		if (lo > mt)
			lo = mt;
		base += lo / G[n];
		for (size_t q = 0; q < n_pairs; q++)
			if (pn[q] == n) {
				a[row * n_pairs + q] = -pg[q] / G[n];
				c[q] = pg[q] / G[n];
				if (isfinite(mt))
					a[(row + 1) * n_pairs + q] = pg[q] / mt;
			}
		b[row] = -lo / G[n];
		if (isfinite(mt))
			b[++row] = 1;
		row++;
	}
	struct fs_lp lp = {.n_vars = n_pairs, .n_le = n_rows, .c = c, .a_le = a, .b_le = b};
	struct fs_lp_result res = {.x = z};
	ret = fs_lp_maximize(&lp, &res);
	if (ret < 0) {
		fs_error_set(why, "pareto: LP %s", lp_error(ret));
		goto out;
	}
	if (res.obj <= base + tol * (base > 1 ? base : 1)) {
		*holds = true;
		goto out;
	}
	/* Name the tenant that gains most (in units of its gamma_n). */
	size_t best = 0;
	double best_gain = -INFINITY;
	for (size_t n = 0; n < N; n++) {
		double y = 0;
		if (G[n] <= 0)
			continue;
		for (size_t q = 0; q < n_pairs; q++)
			if (pn[q] == n)
				y += z[q] * pg[q];
		if ((y - tot[n] * shrink) / G[n] > best_gain) {
			best_gain = (y - tot[n] * shrink) / G[n];
			best = n;
		}
	}
	fs_error_set(why, "not Pareto optimal: %s can get %.6g tasks more without hurting anyone",
		     fs_tenant_label(p, best, lab, sizeof(lab)), best_gain * G[best]);
	goto out;
nomem:
	fs_error_set(why, "pareto: out of memory for %zu tenants x %zu pools", N, K);
out:
	free(pn);
	free(pk);
	free(pg);
	free(tot);
	free(G);
	free(a);
	free(b);
	free(c);
	free(z);
	return ret;
}

/*
 * alpha-PF-VDS (section 4, [P0] Def. 6): x is a Nash equilibrium of the
 * per-server game iff on every pool i the LP
 *   max sum_n y_{n,i} / (gamma_{n,i} s~_{n,i}^alpha)  over pool i's polytope
 * is attained by x_i itself. In z-variables the objective coefficient is
 * s~_{n,i}^-alpha, computed in logs and normalised to a largest of 1.
 *
 * max_tasks: a capped tenant is a constraint of the game, so pool i's
 * polytope gets y_{n,i} <= max_tasks_n - (x_n - x_{n,i}) (what the rest of
 * the cluster leaves room for). That is the KKT system of Problem 1 with the
 * cap added; a tenant stopped by its cap may then have a large weight
 * without the point failing.
 *
 * A tenant with x_n = 0 on a pool that could serve it has an infinite
 * marginal utility, so x then fails (unless its cap leaves no room).
 */
static int check_pool(const struct fs_problem *p, const double *x, const double *tot, size_t i,
		      double alpha, double tol, bool *holds, struct fs_error *why)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	size_t nv = 0;
	size_t *who = calloc(N, sizeof(size_t));
	double *lw = calloc(N, sizeof(double)), *g = calloc(N, sizeof(double));
	double *up = calloc(N, sizeof(double)), *z = calloc(N, sizeof(double));
	double *a = calloc(M * N + 1, sizeof(double)), *b = calloc(M + 1, sizeof(double));
	char l1[96], l2[96];
	int ret = 0;

	*holds = true;
	if (!who || !lw || !g || !up || !z || !a || !b) {
		fs_error_set(why, "apf: out of memory");
		ret = -ENOMEM;
		goto out;
	}
	double lw_max = -INFINITY;
	for (size_t n = 0; n < N; n++) {
		const double gamma = fs_gamma(p, n, i);
		if (gamma <= 0)
			continue;
		const double room = fs_max_tasks(p, n) - (tot[n] - x[n * K + i]);
		if (tot[n] <= 0) {
			if (room > 0) {
				fs_error_set(why, "%s gets nothing although %s could serve it",
					     fs_tenant_label(p, n, l1, sizeof(l1)),
					     fs_pool_label(p, i, l2, sizeof(l2)));
				*holds = false;
				goto out;
			}
			continue; /* no room: its y is pinned to 0 */
		}
		who[nv] = n;
		g[nv] = gamma;
		lw[nv] = -alpha * log(tot[n] / (fs_weight(p, n) * gamma));
		up[nv] = isfinite(room) ? (room > 0 ? room / gamma : 0) : INFINITY;
		if (lw[nv] > lw_max)
			lw_max = lw[nv];
		nv++;
	}
	if (!nv)
		goto out;
	double cur = 0;
	for (size_t v = 0; v < nv; v++) {
		lw[v] = exp(lw[v] - lw_max);
		cur += lw[v] * x[who[v] * K + i] / g[v];
	}
	for (size_t r = 0; r < M; r++) {
		const double cap = p->capacity[i * M + r];
		b[r] = 1;
		for (size_t v = 0; v < nv && cap > 0; v++)
			a[r * nv + v] = p->demand[who[v] * M + r] * g[v] / cap;
	}
	struct fs_lp lp = {.n_vars = nv, .n_le = M, .c = lw, .a_le = a, .b_le = b, .upper = up};
	struct fs_lp_result res = {.x = z};
	ret = fs_lp_maximize(&lp, &res);
	if (ret < 0) {
		fs_error_set(why, "apf: per-server LP of %s %s",
			     fs_pool_label(p, i, l1, sizeof(l1)), lp_error(ret));
		goto out;
	}
	if (res.obj > cur + tol * (res.obj > 1e-300 ? res.obj : 1e-300)) {
		size_t best = 0;
		for (size_t v = 1; v < nv; v++)
			if ((z[v] * g[v] - x[who[v] * K + i]) * lw[v] / g[v] >
			    (z[best] * g[best] - x[who[best] * K + i]) * lw[best] / g[best])
				best = v;
		fs_error_set(why,
			     "%s is not a best response at alpha %g: utility can rise %.3g%% "
			     "(e.g. %s from %.6g to %.6g tasks there)",
			     fs_pool_label(p, i, l1, sizeof(l1)), alpha,
			     100 * (res.obj - cur) / res.obj,
			     fs_tenant_label(p, who[best], l2, sizeof(l2)), x[who[best] * K + i],
			     z[best] * g[best]);
		*holds = false;
	}
out:
	free(who);
	free(lw);
	free(g);
	free(up);
	free(z);
	free(a);
	free(b);
	return ret;
}

int fs_check_apf(const struct fs_problem *p, const double *x, double alpha, double tol, bool *holds,
		 struct fs_error *why)
{
	const size_t N = p->n_tenants;
	double *tot;
	int ret = 0;

	*holds = false;
	if (!(alpha > 0)) {
		fs_error_set(why, "apf: alpha %g must be > 0", alpha);
		return -EINVAL;
	}
	if (tol < MIN_TOL)
		tol = MIN_TOL;
	if (isinf(alpha)) {
		*holds = fs_check_psdsf(p, x, tol, why);
		return 0;
	}
	if (!fs_check_feasible(p, x, tol, why))
		return 0;
	tot = calloc(N, sizeof(double));
	if (!tot) {
		fs_error_set(why, "apf: out of memory");
		return -ENOMEM;
	}
	totals_and_overshoot(p, x, tot);
	*holds = true;
	for (size_t i = 0; i < p->n_pools && *holds && ret == 0; i++)
		ret = check_pool(p, x, tot, i, alpha, tol, holds, why);
	free(tot);
	if (ret < 0)
		*holds = false;
	return ret;
}
