/* SPDX-License-Identifier: MIT */
/* Problem validation, per-pool quantities and solution bookkeeping. */
#include "policy.h"
#include "error.h"
#include "psdsf_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *label(const char *const *names, const char *kind, size_t i, char *buf,
			 size_t len)
{
	if (names && names[i])
		snprintf(buf, len, "%s %s", kind, names[i]);
	else
		snprintf(buf, len, "%s %zu", kind, i);
	return buf;
}

const char *fs_tenant_label(const struct fs_problem *p, size_t n, char *buf, size_t len)
{
	return label(p->tenant_names, "tenant", n, buf, len);
}

const char *fs_pool_label(const struct fs_problem *p, size_t k, char *buf, size_t len)
{
	return label(p->pool_names, "pool", k, buf, len);
}

const char *fs_resource_label(const struct fs_problem *p, size_t r, char *buf, size_t len)
{
	return label(p->resource_names, "resource", r, buf, len);
}

/* A validation failure: the reason in err, and -EINVAL. */
#define fail(err, ...) (fs_error_set((err), __VA_ARGS__), -EINVAL)

int fs_problem_validate(const struct fs_problem *p, struct fs_error *err)
{
	char a[96], b[96];
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;

	if (!N || !K || !M)
		return fail(
		    err, "empty problem: %zu tenants, %zu pools, %zu resources (each must be > 0)",
		    N, K, M);
	if (!p->capacity || !p->demand)
		return fail(err, "missing %s array", p->capacity ? "demand" : "capacity");
	/* Guard the N*M and N*K products the solvers allocate. */
	if (N > ((size_t)1 << 28) / M || N > ((size_t)1 << 28) / K || K > ((size_t)1 << 28) / M)
		return fail(err, "problem too large: %zu tenants, %zu pools, %zu resources", N, K,
			    M);

	for (size_t k = 0; k < K; k++)
		for (size_t r = 0; r < M; r++) {
			double c = p->capacity[k * M + r];
			if (!(c >= 0) || isinf(c))
				return fail(err,
					    "%s: capacity of %s is %g (must be finite and >= 0)",
					    fs_pool_label(p, k, a, sizeof(a)),
					    fs_resource_label(p, r, b, sizeof(b)), c);
		}
	for (size_t n = 0; n < N; n++) {
		bool any = false;
		for (size_t r = 0; r < M; r++) {
			double d = p->demand[n * M + r];
			if (!(d >= 0) || isinf(d))
				return fail(err,
					    "%s: demand for %s is %g (must be finite and >= 0)",
					    fs_tenant_label(p, n, a, sizeof(a)),
					    fs_resource_label(p, r, b, sizeof(b)), d);
			any |= d > 0;
		}
		if (!any)
			return fail(err, "%s: all-zero demand (it must demand some resource)",
				    fs_tenant_label(p, n, a, sizeof(a)));
		if (p->weight) {
			double w = p->weight[n];
			if (!(w > 0) || isinf(w))
				return fail(err, "%s: weight %g must be finite and > 0",
					    fs_tenant_label(p, n, a, sizeof(a)), w);
		}
		if (p->max_tasks) {
			double t = p->max_tasks[n];
			if (!(t > 0))
				return fail(err, "%s: max_tasks %g must be > 0 (or inf)",
					    fs_tenant_label(p, n, a, sizeof(a)), t);
		}
	}
	return 0;
}

double fs_weight(const struct fs_problem *p, size_t n)
{
	return p->weight ? p->weight[n] : 1.0;
}

double fs_max_tasks(const struct fs_problem *p, size_t n)
{
	return p->max_tasks ? p->max_tasks[n] : INFINITY;
}

bool fs_eligible(const struct fs_problem *p, size_t n, size_t k)
{
	return p->eligible ? p->eligible[n * p->n_pools + k] : true;
}

/*
 * The tasks of demand row d that capacity row c holds: the least c/d over
 * the demanded resources (INFINITY when none is). fs_gamma and
 * fs_gamma_all's one arithmetic.
 */
static double tasks_that_fit(const double *d, const double *c, size_t M)
{
	double g = INFINITY;

	for (size_t r = 0; r < M; r++)
		if (d[r] > 0) {
			const double t = c[r] / d[r];
			if (t < g)
				g = t;
		}
	return g;
}

double fs_gamma(const struct fs_problem *p, size_t n, size_t k)
{
	const size_t M = p->n_resources;

	if (!fs_eligible(p, n, k))
		return 0.0;
	const double g = tasks_that_fit(&p->demand[n * M], &p->capacity[k * M], M);
	return isfinite(g) ? g : 0.0;
}

void fs_gamma_all(const struct fs_problem *p, double *gamma)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;

	/* fs_gamma with the demand row looked up once per tenant */
	for (size_t n = 0; n < N; n++) {
		const double *d = &p->demand[n * M];
		for (size_t k = 0; k < K; k++) {
			const double g = tasks_that_fit(d, &p->capacity[k * M], M);
			gamma[n * K + k] = fs_eligible(p, n, k) && isfinite(g) ? g : 0.0;
		}
	}
}

int fs_solution_init(struct fs_solution *s, const struct fs_problem *p)
{
	const size_t N = p->n_tenants, K = p->n_pools;

	/* validate() guarantees N, K > 0; max() keeps calloc's result non-NULL. */
	const size_t cells = N * K > 0 ? N * K : 1;

	memset(s, 0, sizeof(*s));
	s->n_tenants = N;
	s->n_pools = K;
	s->n_resources = p->n_resources;
	s->x = calloc(cells, sizeof(*s->x));
	s->tenant = calloc(N ? N : 1, sizeof(*s->tenant));
	s->bottleneck = calloc(cells, sizeof(*s->bottleneck));
	s->level = calloc(K * p->n_resources > 0 ? K * p->n_resources : 1, sizeof(*s->level));
	if (!s->x || !s->tenant || !s->bottleneck || !s->level) {
		fs_solution_free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < N * K; i++)
		s->bottleneck[i] = FS_NO_RESOURCE;
	for (size_t n = 0; n < N; n++)
		s->tenant[n].certificate = FS_NO_RESOURCE;
	return 0;
}

void fs_solution_free(struct fs_solution *s)
{
	if (!s)
		return;
	free(s->x);
	free(s->tenant);
	free(s->bottleneck);
	free(s->level);
	s->x = NULL;
	s->tenant = NULL;
	s->bottleneck = NULL;
	s->level = NULL;
}

/* Whether a total is at n's cap, as fs_solution_finish reports it. */
static bool total_capped(const struct fs_problem *p, size_t n, double tot, double tol)
{
	const double mt = fs_max_tasks(p, n);

	return isfinite(mt) && fs_at_cap(tot, mt, 1e3 * tol);
}

void fs_solution_retotal(struct fs_solution *s, const struct fs_problem *p, double tol)
{
	const size_t N = p->n_tenants, K = p->n_pools;

	if (tol <= 0)
		tol = FS_DEFAULT_TOL;
	for (size_t n = 0; n < N; n++) {
		double tot = 0;
		for (size_t k = 0; k < K; k++)
			tot += s->x[n * K + k];
		s->tenant[n].total = tot;
		s->tenant[n].capped = total_capped(p, n, tot, tol);
	}
}

void fs_solution_finish(struct fs_solution *s, const struct fs_problem *p, double tol)
{
	fs_solution_finish_gamma(s, p, NULL, tol);
}

void fs_solution_finish_gamma(struct fs_solution *s, const struct fs_problem *p,
			      const double *known_gamma, double tol)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	double *used = calloc(K * M, sizeof(double));
	double *richest = calloc(K * M, sizeof(double));
	double *own_gamma = known_gamma ? NULL : malloc(N * K * sizeof(double));
	/* per pool, its saturated resources in ascending order (sat_n[k] of
	 * them from sat[k * M]) */
	size_t *sat = malloc(K * M * sizeof(size_t)), *sat_n = calloc(K, sizeof(size_t));
	const double *gamma = known_gamma ? known_gamma : own_gamma;

	if (tol <= 0)
		tol = FS_DEFAULT_TOL;
	for (size_t n = 0; n < N; n++) {
		double tot = 0;
		bool served = false;
		for (size_t k = 0; k < K; k++) {
			const double g = known_gamma ? known_gamma[n * K + k] : fs_gamma(p, n, k);
			if (own_gamma)
				own_gamma[n * K + k] = g;
			tot += s->x[n * K + k];
			served |= g > 0;
		}
		s->tenant[n].total = tot;
		s->tenant[n].unserved = !served;
		s->tenant[n].capped = total_capped(p, n, tot, tol);
	}
	if (!used || !richest || !gamma || !sat || !sat_n)
		goto out;
	for (size_t i = 0; i < K * M; i++)
		richest[i] = -INFINITY;
	/* Row pointers and skipped zero cells: the same sums and maxima (a zero
	 * cell adds 0 and holds nothing), at N = 10,000 a third of an NJC
	 * solve's time outside its dual before. */
	for (size_t n = 0; n < N; n++) {
		const double *xn = s->x + n * K, *dn = p->demand + n * M, w = fs_weight(p, n);
		for (size_t k = 0; k < K; k++) {
			const double g = gamma[n * K + k], xk = xn[k];
			if (xk == 0)
				continue;
			const double v = g > 0 ? s->tenant[n].total / (w * g) : 0;
			const double *ck = p->capacity + k * M;
			double *uk = used + k * M, *rk = richest + k * M;
			for (size_t r = 0; r < M; r++) {
				uk[r] += xk * dn[r];
				/* richest[k][r]: the largest weighted VDS among the
				 * holders of r on k. */
				if (xk * dn[r] > tol * ck[r] && v > rk[r])
					rk[r] = v;
			}
		}
	}
	for (size_t k = 0; k < K; k++)
		for (size_t r = 0; r < M; r++) {
			const size_t i = k * M + r;
			const bool full = used[i] >= p->capacity[i] * (1 - 1e3 * tol);
			if (full)
				sat[k * M + sat_n[k]++] = r;
			if (s->level) /* (fs_solution_init allocates it) */
				s->level[i] = full && richest[i] > 0 ? richest[i] : 0;
		}
	/* Bottleneck on pool k: a saturated demanded resource where no other user
	 * of it has a larger weighted VDS (Theorem 1); failing that, the saturated
	 * demanded resource with the largest d/c. Only the saturated resources
	 * are walked: at N = 1000, K = 100 most pools have one or two of M, and
	 * this pass over N K entries was the largest part of a warm re-solve
	 * that the repair settles. */
	for (size_t n = 0; n < N; n++) {
		const double *dn = p->demand + n * M, w = fs_weight(p, n);
		for (size_t k = 0; k < K; k++) {
			const double *ck = p->capacity + k * M, *rk = richest + k * M;
			const size_t *sk = sat + k * M;
			const double g = gamma[n * K + k];
			int best = FS_NO_RESOURCE, fallback = FS_NO_RESOURCE;
			double fb_ratio = -1;
			if (g <= 0)
				continue;
			const double v = s->tenant[n].total / (w * g);
			for (size_t a = 0; a < sat_n[k] && best < 0; a++) {
				const size_t r = sk[a];
				if (dn[r] <= 0)
					continue;
				if (dn[r] / ck[r] > fb_ratio) {
					fb_ratio = dn[r] / ck[r];
					fallback = (int)r;
				}
				if (rk[r] <= v * (1 + 1e3 * tol) + tol)
					best = (int)r;
			}
			s->bottleneck[n * K + k] = best >= 0 ? best : fallback;
		}
	}
out:
	free(used);
	free(richest);
	free(own_gamma);
	free(sat);
	free(sat_n);
}
