/* SPDX-License-Identifier: MIT */
/*
 * Weighted DRF on one pool (ALGORITHMS.md 1.3) by closed-form water-filling,
 * and the per-pool water-filling that also initialises PS-DSF (2.1).
 */
#include "psdsf_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct wf_entry {
	double level; /* water level at which the tenant reaches max_tasks */
	size_t n;
};

static int cmp_level(const void *a, const void *b)
{
	const struct wf_entry *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

struct wf_state {
	const struct fs_problem *p;
	size_t k;
	const double *gamma;
	double *x, *tot;
	bool *active;
	double *fixed; /* [M] use of pool k by tenants not climbing */
	double *rate;  /* [M] d(use)/d(level) of the climbing tenants */
	size_t *count; /* [M] climbing tenants that demand r */
	size_t remaining;
	bool stale; /* a subtraction lost rate's digits: rebuild before use */
};

static void wf_freeze(struct wf_state *s, size_t n, double xk)
{
	const size_t M = s->p->n_resources, K = s->p->n_pools;
	const double *d = &s->p->demand[n * M];
	const double slope = fs_weight(s->p, n) * s->gamma[n];

	s->x[n * K + s->k] = xk;
	s->tot[n] += xk;
	s->active[n] = false;
	s->remaining--;
	for (size_t r = 0; r < M; r++)
		if (d[r] > 0) {
			const double before = s->rate[r];
			s->fixed[r] += xk * d[r];
			s->rate[r] -= slope * d[r];
			s->count[r]--;
			/* Weights 1e16 apart: 4 + 4e-20 - 4 is 0, and a climber
			 * with a zero rate would never saturate anything. */
			if (s->count[r] && !(s->rate[r] > 1e-6 * before))
				s->stale = true;
		}
}

/* The rate is rebuilt after each saturation so that cancellation never leaves
 * a phantom slope on a resource nobody climbing uses. */
static void wf_rebuild_rate(struct wf_state *s)
{
	const size_t N = s->p->n_tenants, M = s->p->n_resources;

	s->stale = false;
	for (size_t r = 0; r < M; r++)
		s->rate[r] = 0;
	for (size_t n = 0; n < N; n++) {
		if (!s->active[n])
			continue;
		const double slope = fs_weight(s->p, n) * s->gamma[n];
		for (size_t r = 0; r < M; r++)
			s->rate[r] += slope * s->p->demand[n * M + r];
	}
}

int fs_waterfill_pool(const struct fs_problem *p, size_t k, const double *gamma, double *x,
		      double *tot, double tol)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	const double *cap = &p->capacity[k * M];
	struct wf_state s = {.p = p, .k = k, .gamma = gamma, .x = x, .tot = tot};
	struct wf_entry *order = malloc(N * sizeof(*order));
	size_t n_order = 0, next = 0;
	double level = 0;
	int ret = -ENOMEM;

	s.active = calloc(N, sizeof(*s.active));
	s.fixed = calloc(M, sizeof(double));
	s.rate = calloc(M, sizeof(double));
	s.count = calloc(M, sizeof(size_t));
	if (!order || !s.active || !s.fixed || !s.rate || !s.count)
		goto out;

	for (size_t n = 0; n < N; n++) {
		const double *d = &p->demand[n * M];
		const double mt = fs_max_tasks(p, n);
		if (gamma[n] > 0 && !fs_at_cap(tot[n], mt, tol)) {
			s.active[n] = true;
			s.remaining++;
			/* Uncapped tenants never stop on their own: keep them out of the sort. */
			if (isfinite(mt))
				order[n_order++] = (struct wf_entry){
				    .level = (mt - tot[n]) / (fs_weight(p, n) * gamma[n]), .n = n};
			for (size_t r = 0; r < M; r++)
				s.count[r] += d[r] > 0;
		} else {
			for (size_t r = 0; r < M; r++)
				s.fixed[r] += x[n * K + k] * d[r];
		}
	}
	qsort(order, n_order, sizeof(*order), cmp_level);
	wf_rebuild_rate(&s);

	while (s.remaining > 0) {
		double t_res = INFINITY;
		size_t r_sat = M;

		while (next < n_order && !s.active[order[next].n])
			next++;
		for (size_t r = 0; r < M; r++) {
			if (!s.count[r] || !(s.rate[r] > 0))
				continue;
			double t = (cap[r] - s.fixed[r]) / s.rate[r];
			if (t < t_res) {
				t_res = t;
				r_sat = r;
			}
		}
		double t_cap = next < n_order ? order[next].level : INFINITY;
		if (t_cap <= t_res && next < n_order) {
			size_t n = order[next++].n;
			level = fmax(level, t_cap);
			wf_freeze(&s, n, fmax(0, fs_max_tasks(p, n) - tot[n]));
			if (s.stale)
				wf_rebuild_rate(&s);
			continue;
		}
		if (r_sat == M)
			break; /* unreachable: every climber demands a resource it counts on */
		level = fmax(level, t_res);
		for (size_t n = 0; n < N; n++)
			if (s.active[n] && p->demand[n * M + r_sat] > 0)
				wf_freeze(&s, n, level * fs_weight(p, n) * gamma[n]);
		wf_rebuild_rate(&s);
	}
	ret = 0;
out:
	free(order);
	free(s.active);
	free(s.fixed);
	free(s.rate);
	free(s.count);
	return ret;
}

int fs_per_server_drf(const struct fs_problem *p, double *gamma, double *x, double *tot, double tol)
{
	const size_t N = p->n_tenants, K = p->n_pools;
	double *col = malloc(N * sizeof(double));
	int ret = 0;

	if (!col)
		return -ENOMEM;
	fs_gamma_all(p, gamma);
	for (size_t k = 0; k < K && !ret; k++) {
		for (size_t n = 0; n < N; n++)
			col[n] = gamma[n * K + k];
		ret = fs_waterfill_pool(p, k, col, x, tot, tol);
	}
	free(col);
	return ret;
}

int fs_solve_drf(const struct fs_problem *p, const struct fs_options *opt, struct fs_solution *out,
		 struct fs_error *err)
{
	const size_t N = p->n_tenants;
	const double tol = opt && opt->tol > 0 ? opt->tol : FS_DEFAULT_TOL;
	double *gamma = NULL, *tot = NULL;
	int ret;

	if (p->n_pools != 1) {
		if (err)
			snprintf(err->msg, sizeof(err->msg),
				 "drf allocates a single pool but the problem has %zu pools; "
				 "use cdrfh or psdsf for several pools",
				 p->n_pools);
		return -EINVAL;
	}
	gamma = calloc(N, sizeof(double));
	tot = calloc(N, sizeof(double));
	ret = -ENOMEM;
	if (!gamma || !tot)
		goto out;
	ret = fs_per_server_drf(p, gamma, out->x, tot, tol);
	if (ret < 0)
		goto out;
	fs_solution_finish(out, p, tol);
	for (size_t n = 0; n < N; n++) {
		/* x_n max_r d/c / phi = x_n / (phi gamma) on the only pool. */
		out->tenant[n].share = gamma[n] > 0 ? out->x[n] / (fs_weight(p, n) * gamma[n]) : 0;
		out->tenant[n].certificate = out->bottleneck[n];
	}
	out->rule = FS_RULE_DRF;
	out->iterations = 1;
out:
	if (ret == -ENOMEM && err)
		snprintf(err->msg, sizeof(err->msg), "drf: out of memory for %zu tenants", N);
	free(gamma);
	free(tot);
	return ret;
}
