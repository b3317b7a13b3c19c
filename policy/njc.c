/* SPDX-License-Identifier: MIT */
/*
 * No justified complaints ([P3]; ALGORITHMS.md 8): the weighted
 * proportional-fair point argmax sum e_n log x_n over one pool, found through
 * its dual (dual.c), then checked against condition (2) so that a numerical
 * failure can never pass for an NJC answer.
 */
#include "policy.h"
#include "dual.h"
#include "psdsf_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct njc_work {
	size_t *item;		 /* [N] dual item index of a served tenant, or SIZE_MAX */
	double *gamma;		 /* [N] fs_gamma on the pool, for fs_solution_finish_gamma */
	size_t *res;		 /* [M] dual resource index, or SIZE_MAX */
	double *a;		 /* [ns][mr] demand as a fraction of capacity (copy path) */
	double *cap;		 /* [mr] = 1 (copy path) */
	const double *da, *dcap; /* what the dual works on */
	double *A;		 /* [ns] entitlement e_n */
	double *hi;		 /* [ns] max_tasks */
	double *lambda;		 /* [mr] */
	double *x;		 /* [ns] */
	double *used;		 /* [M] */
	size_t ns, mr;
};

static void work_free(struct njc_work *w)
{
	free(w->item);
	free(w->gamma);
	free(w->res);
	free(w->a);
	free(w->cap);
	free(w->A);
	free(w->hi);
	free(w->lambda);
	free(w->x);
	free(w->used);
}

/* Maps served tenants and the resources they contend for to dual indices. */
static int build(const struct fs_problem *p, struct njc_work *w)
{
	const size_t N = p->n_tenants, M = p->n_resources;
	double wsum = 0;
	bool direct = true;

	w->item = malloc(N * sizeof(*w->item));
	w->gamma = malloc(N * sizeof(*w->gamma));
	w->res = malloc(M * sizeof(*w->res));
	w->used = calloc(M, sizeof(*w->used));
	if (!w->item || !w->gamma || !w->res || !w->used)
		return -ENOMEM;
	for (size_t r = 0; r < M; r++) {
		w->res[r] = SIZE_MAX;
		direct &= p->capacity[r] > 0;
	}
	for (size_t n = 0; n < N; n++) {
		w->item[n] = SIZE_MAX;
		w->gamma[n] = fs_gamma(p, n, 0);
		if (w->gamma[n] <= 0)
			continue;
		w->item[n] = direct ? n : w->ns;
		w->ns++;
		wsum += fs_weight(p, n);
		for (size_t r = 0; r < M; r++)
			if (p->demand[n * M + r] > 0 && w->res[r] == SIZE_MAX)
				w->res[r] = w->mr++;
	}
	if (!w->ns)
		return 0;
	if (direct) {
		/* Every capacity is positive: the dual can work on the problem's
		 * own arrays (no N x M copy); unserved tenants get hi = 0. */
		w->ns = N;
		w->mr = M;
		w->da = p->demand;
		w->dcap = p->capacity;
	}
	w->A = malloc(w->ns * sizeof(*w->A));
	w->hi = malloc(w->ns * sizeof(*w->hi));
	w->lambda = calloc(w->mr, sizeof(*w->lambda));
	w->x = malloc(w->ns * sizeof(*w->x));
	if (!w->A || !w->hi || !w->lambda || !w->x)
		return -ENOMEM;
	if (direct) {
		for (size_t n = 0; n < N; n++) {
			const bool served = w->item[n] != SIZE_MAX;
			w->A[n] = served ? fs_weight(p, n) / wsum : 1;
			w->hi[n] = served ? fs_max_tasks(p, n) : 0;
		}
		return 0;
	}

	/* Some capacity is 0: keep the served tenants and the resources they
	 * demand (all of positive capacity), in capacity units. */
	w->a = calloc(w->ns * w->mr, sizeof(*w->a));
	w->cap = malloc(w->mr * sizeof(*w->cap));
	if (!w->a || !w->cap)
		return -ENOMEM;
	w->da = w->a;
	w->dcap = w->cap;
	for (size_t j = 0; j < w->mr; j++)
		w->cap[j] = 1;
	/* w->used doubles as 1/capacity here (it is zeroed again below). */
	for (size_t r = 0; r < M; r++)
		w->used[r] = w->res[r] != SIZE_MAX ? 1 / p->capacity[r] : 0;
	for (size_t n = 0; n < N; n++) {
		const size_t i = w->item[n];
		if (i == SIZE_MAX)
			continue;
		w->A[i] = fs_weight(p, n) / wsum;
		w->hi[i] = fs_max_tasks(p, n);
		for (size_t r = 0; r < M; r++)
			if (w->res[r] != SIZE_MAX)
				w->a[i * w->mr + w->res[r]] = p->demand[n * M + r] * w->used[r];
	}
	for (size_t r = 0; r < M; r++)
		w->used[r] = 0;
	return 0;
}

/*
 * Condition (2) for tenant n holding x tasks: it got all it asked for, or on
 * some saturated resource it holds at least its entitlement e. Returns the
 * certificate, or FS_NO_RESOURCE with *best = its largest share of a
 * saturated resource.
 */
static int certificate(const struct fs_problem *p, const double *used, size_t n, double x, double e,
		       double vt, double *best)
{
	const size_t M = p->n_resources;
	const double cap = fs_max_tasks(p, n);
	int cert = FS_NO_RESOURCE;

	*best = 0;
	if (isfinite(cap) && x >= cap * (1 - vt))
		return FS_CERT_SATISFIED;
	for (size_t r = 0; r < M; r++) {
		const double c = p->capacity[r], d = p->demand[n * M + r];
		if (d <= 0 || used[r] < c * (1 - vt))
			continue;
		if (x * d / c > *best) {
			*best = x * d / c;
			cert = (int)r;
		}
	}
	return *best >= e * (1 - vt) ? cert : FS_NO_RESOURCE;
}

static int verify(const struct fs_problem *p, struct fs_solution *out, const struct njc_work *w,
		  double vt, struct fs_error *err)
{
	const size_t N = p->n_tenants, M = p->n_resources;
	char a[96], b[96];
	double esum = 0;

	for (size_t n = 0; n < N; n++)
		if (w->item[n] != SIZE_MAX)
			esum += fs_weight(p, n);
	for (size_t n = 0; n < N; n++)
		for (size_t r = 0; r < M; r++)
			w->used[r] += out->x[n] * p->demand[n * M + r];
	for (size_t r = 0; r < M; r++)
		if (w->used[r] > p->capacity[r] * (1 + vt)) {
			snprintf(err->msg, sizeof(err->msg),
				 "njc: %s over capacity (%g > %g): solver failure",
				 fs_resource_label(p, r, a, sizeof(a)), w->used[r], p->capacity[r]);
			return -ERANGE;
		}
	for (size_t n = 0; n < N; n++) {
		const double x = out->x[n], e = fs_weight(p, n) / esum;
		double best;
		if (w->item[n] == SIZE_MAX)
			continue;
		out->tenant[n].certificate = certificate(p, w->used, n, x, e, vt, &best);
		if (out->tenant[n].certificate == FS_NO_RESOURCE) {
			snprintf(err->msg, sizeof(err->msg),
				 "njc: %s has a justified complaint: best share %g of a saturated "
				 "resource < entitlement %g (solver failure)",
				 fs_tenant_label(p, n, b, sizeof(b)), best, e);
			return -ERANGE;
		}
	}
	return 0;
}

int fs_solve_njc(const struct fs_problem *p, const struct fs_options *opt, struct fs_solution *out,
		 struct fs_error *err)
{
	const double tol = opt && opt->tol > 0 ? opt->tol : FS_DEFAULT_TOL;
	const size_t N = p->n_tenants;
	struct njc_work w = {0};
	struct fs_dual_stats st = {0};
	int ret;

	if (p->n_pools != 1) {
		snprintf(err->msg, sizeof(err->msg),
			 "defined for one pool (one host) only; this problem has %zu pools",
			 p->n_pools);
		return -EINVAL;
	}
	ret = build(p, &w);
	if (ret < 0) {
		snprintf(err->msg, sizeof(err->msg), "njc: out of memory for %zu tenants", N);
		goto out;
	}
	if (w.ns) {
		const struct fs_dual_problem dp = {
		    .n = w.ns,
		    .m = w.mr,
		    .a = w.da,
		    .cap = w.dcap,
		    .alpha = 1,
		    .A = w.A,
		    .hi = w.hi,
		};
		const struct fs_dual_options o = {
		    .tol = 1e-3 * tol,
		    .max_iter = opt ? opt->max_iter : 0,
		};
		ret = fs_dual_solve(&dp, &o, w.lambda, w.x, &st);
		/* A timed-out dual still yields a feasible point; verify() decides. */
		if (ret < 0 && ret != -ETIMEDOUT) {
			snprintf(err->msg, sizeof(err->msg), "njc: dual solver failed (%d)", ret);
			goto out;
		}
	}
	for (size_t n = 0; n < N; n++)
		out->x[n] = w.item[n] == SIZE_MAX ? 0 : w.x[w.item[n]];
	out->iterations = st.newton + st.fallback;
	fs_solution_finish_gamma(out, p, w.gamma, tol);
	for (size_t n = 0; n < N; n++) {
		const double cap = fs_max_tasks(p, n);
		out->tenant[n].share = isfinite(cap) ? out->x[n] / cap : out->x[n];
	}
	ret = verify(p, out, &w, 1e3 * tol, err);
out:
	work_free(&w);
	return ret;
}
