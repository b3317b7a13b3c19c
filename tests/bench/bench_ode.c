/* SPDX-License-Identifier: MIT */
/* NJC trajectory ODE baseline (see bench_ode.h for the maths). */
#include "bench_ode.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 200000
#define C0	  1e-6 /* starting point: f(x0) ~ C0 */

struct ode {
	size_t n, m;	/* served tenants, resources with capacity */
	size_t *tenant; /* [n] */
	double *r;	/* [n][m] request as a fraction of capacity */
	double *e;	/* [n] entitlement, sums to 1 */
	double *mt;	/* [n] max_tasks (INFINITY: elastic, no dummy) */
	/* workspace */
	double *s, *b, *g, *dinv, *v, *y, *C, *z;
};

static void ode_free(struct ode *o)
{
	free(o->tenant);
	free(o->r);
	free(o->e);
	free(o->mt);
	free(o->s);
	free(o->b);
	free(o->g);
	free(o->dinv);
	free(o->v);
	free(o->y);
	free(o->C);
	free(o->z);
}

static int ode_build(struct ode *o, const struct fs_problem *p)
{
	const size_t N = p->n_tenants, M = p->n_resources;
	double wsum = 0;

	o->tenant = malloc(N * sizeof(*o->tenant));
	o->r = calloc(N * M, sizeof(double));
	o->e = calloc(N, sizeof(double));
	o->mt = calloc(N, sizeof(double));
	o->s = calloc(M, sizeof(double));
	o->b = calloc(N * M, sizeof(double));
	o->g = calloc(N, sizeof(double));
	o->dinv = calloc(N, sizeof(double));
	o->v = calloc(N, sizeof(double));
	o->y = calloc(N, sizeof(double));
	o->C = calloc(M * M, sizeof(double));
	o->z = calloc(M, sizeof(double));
	if (!o->tenant || !o->r || !o->e || !o->mt || !o->s || !o->b || !o->g || !o->dinv ||
	    !o->v || !o->y || !o->C || !o->z)
		return -ENOMEM;
	o->m = M; /* resources with capacity 0 serve nobody: their r column stays 0 */
	for (size_t t = 0; t < N; t++) {
		if (fs_gamma(p, t, 0) <= 0)
			continue;
		const size_t i = o->n++;
		const double mt = fs_max_tasks(p, t);
		o->tenant[i] = t;
		o->mt[i] = mt;
		o->e[i] = fs_weight(p, t);
		wsum += o->e[i];
		for (size_t j = 0; j < M; j++)
			if (p->capacity[j] > 0)
				o->r[i * M + j] =
				    (isfinite(mt) ? mt : 1) * p->demand[t * M + j] / p->capacity[j];
	}
	for (size_t i = 0; i < o->n; i++)
		o->e[i] /= wsum;
	return 0;
}

/* In-place Cholesky of the m x m SPD matrix C, then solves C z = z. */
static int chol_solve(double *C, double *z, size_t m)
{
	for (size_t j = 0; j < m; j++) {
		double d = C[j * m + j];
		for (size_t k = 0; k < j; k++)
			d -= C[j * m + k] * C[j * m + k];
		if (!(d > 0))
			return -1;
		d = sqrt(d);
		C[j * m + j] = d;
		for (size_t i = j + 1; i < m; i++) {
			double a = C[i * m + j];
			for (size_t k = 0; k < j; k++)
				a -= C[i * m + k] * C[j * m + k];
			C[i * m + j] = a / d;
		}
	}
	for (size_t i = 0; i < m; i++) {
		for (size_t k = 0; k < i; k++)
			z[i] -= C[i * m + k] * z[k];
		z[i] /= C[i * m + i];
	}
	for (size_t i = m; i-- > 0;) {
		for (size_t k = i + 1; k < m; k++)
			z[i] -= C[k * m + i] * z[k];
		z[i] /= C[i * m + i];
	}
	return 0;
}

/* dx/dt at x into dx; -1 when x is outside the open domain. */
static int rhs(struct ode *o, const double *x, double *dx)
{
	const size_t n = o->n, m = o->m;
	double dfdt = 0;

	for (size_t j = 0; j < m; j++)
		o->s[j] = 1;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0) || (isfinite(o->mt[i]) && !(x[i] < 1)))
			return -1;
		for (size_t j = 0; j < m; j++)
			o->s[j] -= x[i] * o->r[i * m + j];
	}
	for (size_t j = 0; j < m; j++)
		if (!(o->s[j] > 0))
			return -1;
	memset(o->C, 0, m * m * sizeof(double));
	memset(o->z, 0, m * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		double *b = &o->b[i * m], g = 0, d;
		for (size_t j = 0; j < m; j++) {
			b[j] = o->r[i * m + j] / o->s[j];
			g += b[j];
		}
		if (isfinite(o->mt[i])) {
			const double sd = 1 - x[i];
			g += 1 / sd;
			d = g / x[i] + 1 / (sd * sd);
		} else {
			d = g / x[i];
		}
		o->g[i] = g;
		o->dinv[i] = 1 / d;
		/* w = D^-1 (e / x); z = B^T w; C = I + B^T D^-1 B (lower half). */
		o->v[i] = o->dinv[i] * o->e[i] / x[i];
		for (size_t j = 0; j < m; j++) {
			if (b[j] == 0)
				continue;
			o->z[j] += b[j] * o->v[i];
			const double bd = b[j] * o->dinv[i];
			for (size_t k = 0; k <= j; k++)
				o->C[j * m + k] += bd * b[k];
		}
	}
	for (size_t j = 0; j < m; j++)
		o->C[j * m + j] += 1;
	if (chol_solve(o->C, o->z, m) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		double bz = 0;
		for (size_t j = 0; j < m; j++)
			bz += o->b[i * m + j] * o->z[j];
		dx[i] = o->v[i] - o->dinv[i] * bz;
		dfdt += o->g[i] * dx[i];
	}
	if (!(dfdt > 0))
		return -1;
	for (size_t i = 0; i < n; i++)
		dx[i] /= dfdt;
	return 0;
}

static double barrier(const struct ode *o, const double *x)
{
	double f = 0;

	for (size_t j = 0; j < o->m; j++) {
		double u = 0;
		for (size_t i = 0; i < o->n; i++)
			u += x[i] * o->r[i * o->m + j];
		f -= log1p(-u);
	}
	for (size_t i = 0; i < o->n; i++)
		if (isfinite(o->mt[i]))
			f -= log1p(-x[i]);
	return f;
}

/* The acceptance test of fs_solve_njc, on the ODE state. */
static bool njc_holds(struct ode *o, const double *x, double vt)
{
	const size_t n = o->n, m = o->m;

	for (size_t j = 0; j < m; j++) {
		double u = 0;
		for (size_t i = 0; i < n; i++)
			u += x[i] * o->r[i * m + j];
		if (u > 1 + vt)
			return false;
		o->s[j] = u; /* reused as "usage" here */
	}
	for (size_t i = 0; i < n; i++) {
		bool ok = isfinite(o->mt[i]) && x[i] >= 1 - vt;
		for (size_t j = 0; j < m && !ok; j++)
			ok = o->s[j] >= 1 - vt && x[i] * o->r[i * m + j] >= o->e[i] * (1 - vt);
		if (!ok)
			return false;
	}
	return true;
}

/* Dormand-Prince 5(4) tableau. */
static const double A[7][6] = {
    {0},
    {1.0 / 5},
    {3.0 / 40, 9.0 / 40},
    {44.0 / 45, -56.0 / 15, 32.0 / 9},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
};
/* 5th-order minus embedded 4th-order weights. */
static const double E[7] = {71.0 / 57600,      0,	   -71.0 / 16695, 71.0 / 1920,
			    -17253.0 / 339200, 22.0 / 525, -1.0 / 40};

static int integrate(struct ode *o, double rtol, double vt, double *x, struct bench_ode_stats *st)
{
	const size_t n = o->n;
	double *k = calloc(7 * n, sizeof(double)), *xs = calloc(n, sizeof(double));
	double h, t = 0;
	int ret = -ENOMEM;

	if (!k || !xs)
		goto out;
	for (size_t i = 0; i < n; i++) {
		double g0 = isfinite(o->mt[i]) ? 1 : 0;
		for (size_t j = 0; j < o->m; j++)
			g0 += o->r[i * o->m + j];
		x[i] = C0 * o->e[i] / g0;
	}
	t = barrier(o, x);
	h = 0.1 * t;
	ret = -EINVAL;
	if (rhs(o, x, k) < 0)
		goto out;
	st->evals++;
	ret = -ETIMEDOUT;
	while (st->steps + st->rejected < MAX_STEPS) {
		bool inside = true;
		for (int s = 1; s < 7 && inside; s++) {
			for (size_t i = 0; i < n; i++) {
				double a = 0;
				for (int q = 0; q < s; q++)
					a += A[s][q] * k[q * n + i];
				xs[i] = x[i] + h * a;
			}
			inside = rhs(o, xs, &k[s * n]) == 0;
			st->evals++;
		}
		double err = 0;
		if (inside)
			for (size_t i = 0; i < n; i++) {
				double ei = 0;
				for (int q = 0; q < 7; q++)
					ei += E[q] * k[q * n + i];
				ei = fabs(h * ei) / (1e-300 + rtol * fmax(fabs(x[i]), fabs(xs[i])));
				err = fmax(err, ei);
			}
		if (!inside || !(err <= 1)) {
			st->rejected++;
			h *= inside ? fmax(0.2, 0.9 * pow(err, -0.2)) : 0.25;
			continue;
		}
		/* Accept: the last stage is the new point (FSAL). */
		memcpy(x, xs, n * sizeof(double));
		memcpy(k, &k[6 * n], n * sizeof(double));
		t += h;
		st->steps++;
		h *= err > 0 ? fmin(5, 0.9 * pow(err, -0.2)) : 5;
		if (njc_holds(o, x, vt)) {
			ret = 0;
			break;
		}
	}
out:
	st->t = t;
	free(k);
	free(xs);
	return ret;
}

int bench_njc_ode(const struct fs_problem *p, double rtol, double vt, double *x,
		  struct bench_ode_stats *st)
{
	struct ode o = {0};
	double *xi = NULL;
	int ret;

	memset(st, 0, sizeof(*st));
	if (p->n_pools != 1)
		return -EINVAL;
	ret = ode_build(&o, p);
	if (ret < 0)
		goto out;
	for (size_t t = 0; t < p->n_tenants; t++)
		x[t] = 0;
	if (!o.n)
		goto out;
	xi = calloc(o.n, sizeof(double));
	ret = -ENOMEM;
	if (!xi)
		goto out;
	ret = integrate(&o, rtol, vt, xi, st);
	for (size_t i = 0; i < o.n; i++)
		x[o.tenant[i]] = isfinite(o.mt[i]) ? xi[i] * o.mt[i] : xi[i];
out:
	free(xi);
	ode_free(&o);
	return ret;
}
