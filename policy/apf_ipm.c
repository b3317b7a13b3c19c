/* SPDX-License-Identifier: MIT */
/*
 * Interior-point solver of the alpha-PF-VDS KKT system (see apf_ipm.h).
 *
 * Variables are scaled so that every number is O(1): y_e = x_{n,i} /
 * gamma_{n,i} for each eligible pair e = (n, i) (the fraction of pool i that
 * n would use alone), one row per pool and demanded resource with
 * coefficients a_{e,r} = gamma_{n,i} d_{n,r} / c_{i,r} in [0, 1] and right-hand
 * side 1, and the cap row of tenant n is sum_i (gamma_{n,i} / T_n) y_e <= 1.
 * Pair e's marginal utility is U_e = kappa (phi_n gamma_{n,i} / x_n)^alpha,
 * with kappa chosen so that the largest U_e of the start is 1. The system is
 *
 *   s_e = sum_r lambda_{i,r} a_{e,r} + nu_n gamma_{n,i} / T_n - U_e(x_n)
 *   w_row = 1 - (A y)_row,   v_n = 1 - x_n / T_n
 *   y s = lambda w = nu v = 0,   all of them >= 0
 *
 * and each Newton step reduces to one dense system in the row prices: the
 * block of tenant n is diag(s/y) plus a rank-one term (its pairs share x_n),
 * inverted by Sherman-Morrison, and the cap price is eliminated inside it.
 */
#include "apf_ipm.h"
#include "lu.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ITER 200
#define STEP_FRAC    0.99 /* fraction of the way to the boundary per step */
#define Y_FLOOR	     1e-3 /* start: at least this share of a pool per tenant */
#define NO_ROW	     SIZE_MAX

struct ipm {
	size_t N, K, M, ne, nrow, ncap;
	double alpha;
	size_t *first; /* [N + 1] pairs of tenant n: first[n] .. first[n + 1] - 1 */
	size_t *pool;  /* [ne] */
	size_t *row;   /* [K][M] row of (pool, resource), NO_ROW if none */
	double *g;     /* [ne] gamma */
	double *a;     /* [ne][M] scaled coefficients (0: not demanded) */
	double *lnc;   /* [ne] log of U_e's constant: alpha log(phi gamma) - log kappa */
	double *capT;  /* [N] T_n, INFINITY: no cap row */
	/* iterate */
	double *y, *s, *lam, *w, *nu, *v;
	/* step */
	double *dy, *ds, *dlam, *dw, *dnu, *dv;
	/* per-iterate quantities */
	double *xn, *U, *u, *rs, *rw, *rv, *bc, *q, *den;
	/* complementarity targets and scratch */
	double *cy, *cl, *cn, *rho, *z, *S, *rhs;
	size_t *piv;
	/* best point so far */
	double *best_y, best_kkt;
	/* low-rank form of S (see factor_lowrank), used when rows outnumber
	 * tenants: pool k's rows are rstart[k] .. rstart[k + 1] - 1 */
	bool lowrank;
	size_t *rstart, *boff, *bpiv, *cpiv;
	double *blk, *Lm, *Rm, *Zm, *C, *tN;
};

static void ipm_free(struct ipm *m)
{
	double **d[] = {&m->g,	 &m->a,	 &m->lnc, &m->capT, &m->y,     &m->s,	 &m->lam,
			&m->w,	 &m->nu, &m->v,	  &m->dy,   &m->ds,    &m->dlam, &m->dw,
			&m->dnu, &m->dv, &m->xn,  &m->U,    &m->u,     &m->rs,	 &m->rw,
			&m->rv,	 &m->bc, &m->q,	  &m->den,  &m->cy,    &m->cl,	 &m->cn,
			&m->rho, &m->z,	 &m->S,	  &m->rhs,  &m->best_y};
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		free(*d[i]);
	free(m->first);
	free(m->pool);
	free(m->row);
	free(m->piv);
	free(m->rstart);
	free(m->boff);
	free(m->bpiv);
	free(m->cpiv);
	free(m->blk);
	free(m->Lm);
	free(m->Rm);
	free(m->Zm);
	free(m->C);
	free(m->tN);
}

/* Pairs, rows and constants of p; the iterate arrays sized to them. */
static int ipm_build(struct ipm *m, const struct fs_problem *p, double alpha)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	size_t ne = 0, nrow = 0;

	m->N = N;
	m->K = K;
	m->M = M;
	m->alpha = alpha;
	m->first = calloc(N + 1, sizeof(size_t));
	m->row = calloc(K * M, sizeof(size_t));
	m->capT = calloc(N, sizeof(double));
	if (!m->first || !m->row || !m->capT)
		return -ENOMEM;
	for (size_t i = 0; i < K * M; i++)
		m->row[i] = NO_ROW;
	for (size_t n = 0; n < N; n++)
		for (size_t k = 0; k < K; k++)
			if (fs_gamma(p, n, k) > 0) {
				ne++;
				for (size_t r = 0; r < M; r++)
					if (p->demand[n * M + r] > 0)
						m->row[k * M + r] = 0;
			}
	/* Rows numbered pool by pool, so that a pool's block is contiguous. */
	m->rstart = calloc(K + 1, sizeof(size_t));
	m->boff = calloc(K + 1, sizeof(size_t));
	if (!m->rstart || !m->boff)
		return -ENOMEM;
	for (size_t k = 0; k < K; k++) {
		m->rstart[k] = nrow;
		for (size_t r = 0; r < M; r++)
			if (m->row[k * M + r] != NO_ROW)
				m->row[k * M + r] = nrow++;
		m->boff[k + 1] = m->boff[k] + (nrow - m->rstart[k]) * (nrow - m->rstart[k]);
	}
	m->rstart[K] = nrow;
	m->ne = ne;
	m->nrow = nrow;
	m->pool = calloc(ne + 1, sizeof(size_t));
	m->piv = calloc(nrow + 1, sizeof(size_t));
	double **pe[] = {&m->g, &m->lnc, &m->y,	 &m->s,	 &m->dy,  &m->ds, &m->U,
			 &m->u, &m->rs,	 &m->bc, &m->cy, &m->rho, &m->z,  &m->best_y};
	double **pr[] = {&m->lam, &m->w, &m->dlam, &m->dw, &m->rw, &m->cl, &m->rhs};
	double **pn[] = {&m->nu, &m->v, &m->dnu, &m->dv, &m->xn, &m->rv, &m->q, &m->den, &m->cn};
	for (size_t i = 0; i < sizeof(pe) / sizeof(pe[0]); i++)
		if (!(*pe[i] = calloc(ne + 1, sizeof(double))))
			return -ENOMEM;
	for (size_t i = 0; i < sizeof(pr) / sizeof(pr[0]); i++)
		if (!(*pr[i] = calloc(nrow + 1, sizeof(double))))
			return -ENOMEM;
	for (size_t i = 0; i < sizeof(pn) / sizeof(pn[0]); i++)
		if (!(*pn[i] = calloc(N + 1, sizeof(double))))
			return -ENOMEM;
	m->a = calloc(ne * M + 1, sizeof(double));
	if (!m->pool || !m->piv || !m->a)
		return -ENOMEM;
	/* Dense S costs nrow^3 per step (40 s at N = 10, K = 100, M = 8); its
	 * low-rank form N^3 + N^2 nrow plus the pools' blocks. */
	m->lowrank = nrow > 2 * N;
	if (m->lowrank) {
		m->bpiv = calloc(nrow + 1, sizeof(size_t));
		m->cpiv = calloc(N + 1, sizeof(size_t));
		m->blk = calloc(m->boff[K] + 1, sizeof(double));
		m->Lm = calloc(N * nrow + 1, sizeof(double));
		m->Rm = calloc(N * nrow + 1, sizeof(double));
		m->Zm = calloc(N * nrow + 1, sizeof(double));
		m->C = calloc(N * N + 1, sizeof(double));
		m->tN = calloc(N + 1, sizeof(double));
		if (!m->bpiv || !m->cpiv || !m->blk || !m->Lm || !m->Rm || !m->Zm || !m->C ||
		    !m->tN)
			return -ENOMEM;
	} else {
		m->S = calloc(nrow * nrow + 1, sizeof(double));
		if (!m->S)
			return -ENOMEM;
	}

	size_t e = 0;
	for (size_t n = 0; n < N; n++) {
		const double phi = fs_weight(p, n);
		m->first[n] = e;
		m->capT[n] = fs_max_tasks(p, n);
		for (size_t k = 0; k < K; k++) {
			const double g = fs_gamma(p, n, k);
			if (!(g > 0))
				continue;
			m->pool[e] = k;
			m->g[e] = g;
			m->lnc[e] = alpha * (log(phi) + log(g));
			for (size_t r = 0; r < M; r++)
				if (p->demand[n * M + r] > 0)
					m->a[e * M + r] =
					    g * p->demand[n * M + r] / p->capacity[k * M + r];
			e++;
		}
	}
	m->first[N] = e;
	/* A tenant no pool can serve has no pairs: its cap row would be empty. */
	for (size_t n = 0; n < N; n++) {
		if (m->first[n] == m->first[n + 1])
			m->capT[n] = INFINITY;
		m->ncap += isfinite(m->capT[n]);
	}
	return 0;
}

static bool capped(const struct ipm *m, size_t n)
{
	return isfinite(m->capT[n]);
}

/* x_n, U_e, u_e = dU_e/dx_n magnitude (alpha U_e / x_n). */
static void marginals(struct ipm *m)
{
	for (size_t n = 0; n < m->N; n++) {
		double x = 0;
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++)
			x += m->g[e] * m->y[e];
		m->xn[n] = x;
		const double lx = log(x);
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
			m->U[e] = exp(m->lnc[e] - m->alpha * lx);
			m->u[e] = m->alpha * m->U[e] / x;
		}
	}
}

static size_t pair_tenant(const struct ipm *m, size_t e)
{
	size_t lo = 0, hi = m->N; /* first[lo] <= e < first[hi] */

	while (hi - lo > 1) {
		const size_t mid = lo + (hi - lo) / 2;
		if (m->first[mid] <= e)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Start: half the per-server DRF point x0 (floored so every pair is
 * interior), perfectly centred at the utility scale mu0. */
static void start(struct ipm *m, const double *x0)
{
	const size_t M = m->M;
	double lk = -INFINITY, mu0 = 0;

	for (size_t n = 0; n < m->N; n++)
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
			const size_t k = m->pool[e];
			m->y[e] = fmax(0.5 * x0[n * m->K + k] / m->g[e], Y_FLOOR);
		}
	for (size_t n = 0; n < m->N; n++)
		if (capped(m, n)) {
			double x = 0;
			for (size_t e = m->first[n]; e < m->first[n + 1]; e++)
				x += m->g[e] * m->y[e];
			if (x > 0.5 * m->capT[n]) /* the floor overshot a small cap */
				for (size_t e = m->first[n]; e < m->first[n + 1]; e++)
					m->y[e] *= 0.5 * m->capT[n] / x;
		}
	/* kappa: the start's largest marginal utility becomes 1, unless that
	 * would take the smallest below e^-600 (they can span 1e100 and more
	 * for alpha 8, and the smallest underflowed to 0); centring them in
	 * logs instead made the iteration fail far more often for alpha 6-8. */
	marginals(m);
	double lo = INFINITY;
	for (size_t e = 0; e < m->ne; e++) {
		const double l = m->lnc[e] - m->alpha * log(m->xn[pair_tenant(m, e)]);
		lk = fmax(lk, l);
		lo = fmin(lo, l);
	}
	for (size_t e = 0; e < m->ne; e++)
		m->lnc[e] -= fmax(lk, lo + 600);
	marginals(m);
	for (size_t e = 0; e < m->ne; e++)
		mu0 += m->y[e] * m->U[e];
	mu0 /= (double)m->ne;
	for (size_t j = 0; j < m->nrow; j++)
		m->w[j] = 0;
	for (size_t e = 0; e < m->ne; e++)
		for (size_t r = 0; r < M; r++)
			if (m->a[e * M + r] > 0)
				m->w[m->row[m->pool[e] * M + r]] += m->a[e * M + r] * m->y[e];
	for (size_t j = 0; j < m->nrow; j++) {
		m->w[j] = fmax(1 - m->w[j], 0.1);
		m->lam[j] = mu0 / m->w[j];
	}
	for (size_t n = 0; n < m->N; n++) {
		m->v[n] = capped(m, n) ? fmax(1 - m->xn[n] / m->capT[n], 0.1) : 1;
		m->nu[n] = capped(m, n) ? mu0 / m->v[n] : 0;
	}
	for (size_t e = 0; e < m->ne; e++)
		m->s[e] = mu0 / m->y[e];
}

/* Price of pair e: sum_r lambda a + the cap's share. */
/* (A^T v)_e: pair e's coefficients against a vector over rows. */
static double row_dot(const struct ipm *m, size_t e, const double *v)
{
	const size_t M = m->M, k = m->pool[e];
	double d = 0;

	for (size_t r = 0; r < M; r++)
		if (m->a[e * M + r] > 0)
			d += m->a[e * M + r] * v[m->row[k * M + r]];
	return d;
}

static double price(const struct ipm *m, size_t n, size_t e)
{
	double pr = row_dot(m, e, m->lam);

	if (capped(m, n))
		pr += m->nu[n] * m->g[e] / m->capT[n];
	return pr;
}

/*
 * Residuals at the iterate and the relative KKT error (see stats). The gap is
 * measured per tenant, relative to its own utility flux sum_e y_e U_e, and
 * per row as lambda w over the row's mean marginal utility per unit,
 * sum_e a y U / sum_e a y (its slack w in fractions of capacity, weighted by
 * how much its price matters to its users): one global ratio would let a
 * tenant whose weight is 1e-20 of another's stop anywhere.
 */
static double residuals(struct ipm *m, struct fs_apf_ipm_stats *st)
{
	const size_t M = m->M;
	double primal = 0, dual = 0, gap = 0;
	double *flux = m->rhs; /* scratch [nrow]: utility flux through a row */
	double *load = m->cl;  /* scratch [nrow]: use of a row (A y) */

	marginals(m);
	for (size_t j = 0; j < m->nrow; j++) {
		m->rw[j] = m->w[j] - 1;
		flux[j] = load[j] = 0;
	}
	for (size_t n = 0; n < m->N; n++) {
		double comp = 0, util = 0;
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
			const double pr = price(m, n, e);
			m->rs[e] = m->s[e] - pr + m->U[e];
			dual = fmax(dual, fabs(m->rs[e]) / (m->s[e] + pr + m->U[e]));
			comp += m->y[e] * m->s[e];
			util += m->y[e] * m->U[e];
			for (size_t r = 0; r < M; r++)
				if (m->a[e * M + r] > 0) {
					const size_t j = m->row[m->pool[e] * M + r];
					m->rw[j] += m->a[e * M + r] * m->y[e];
					flux[j] += m->a[e * M + r] * m->y[e] * m->U[e];
					load[j] += m->a[e * M + r] * m->y[e];
				}
		}
		if (capped(m, n)) {
			m->rv[n] = m->v[n] + m->xn[n] / m->capT[n] - 1;
			primal = fmax(primal, fabs(m->rv[n]));
			comp += m->nu[n] * m->v[n];
		}
		if (util > 0) /* else no pairs: nothing to measure */
			gap = fmax(gap, comp / util);
	}
	for (size_t j = 0; j < m->nrow; j++) {
		primal = fmax(primal, fabs(m->rw[j]));
		if (flux[j] > 0)
			gap = fmax(gap, m->lam[j] * m->w[j] * load[j] / flux[j]);
	}
	st->primal = primal;
	st->dual = dual;
	st->gap = gap;
	return fmax(primal, fmax(dual, gap));
}

/*
 * Tenant n's block. With D = diag(s / y), the pairs' equations are
 *   D dy + u (g^T dy) + A^T dlambda + c dnu = rho,   c^T dy - eps dnu = rc
 * (B = D + u g^T: its pairs share x_n; c = g / T_n, eps = v_n / nu_n; no cap
 * row when T_n is infinite). B^-1 is D^-1 - D^-1 u g^T D^-1 / q with
 * q = 1 + g^T D^-1 u, and the cap price is eliminated as
 *   dnu = (c^T B^-1 z - rc) / (c^T B^-1 c + eps),   z = rho - A^T dlambda,
 * which stays accurate when the cap binds (eps -> 0); dividing by v instead
 * loses all digits there. bc = B^-1 c; c^T B^-1 = (D^-1 g)^T / (q T).
 */
static void block_setup(struct ipm *m, size_t n)
{
	double q = 1, gdg = 0;

	for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
		const double Di = m->y[e] / m->s[e];
		q += m->g[e] * Di * m->u[e];
		gdg += m->g[e] * Di * m->g[e];
	}
	m->q[n] = q;
	if (!capped(m, n))
		return;
	const double T = m->capT[n];
	for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
		const double Di = m->y[e] / m->s[e];
		m->bc[e] = Di * m->g[e] / T - Di * m->u[e] * (gdg / T) / q;
	}
	m->den[n] = gdg / (T * T * q) + m->v[n] / m->nu[n];
}

/* out = the block's dy for right-hand side z (and cap residual rc); returns dnu. */
static double block_solve(const struct ipm *m, size_t n, const double *z, double rc, double *out)
{
	double t = 0, dnu = 0;

	for (size_t e = m->first[n]; e < m->first[n + 1]; e++)
		t += m->g[e] * m->y[e] / m->s[e] * z[e];
	if (capped(m, n))
		dnu = (t / (m->capT[n] * m->q[n]) - rc) / m->den[n];
	for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
		const double Di = m->y[e] / m->s[e];
		out[e] = Di * z[e] - Di * m->u[e] * t / m->q[n];
		if (capped(m, n))
			out[e] -= m->bc[e] * dnu;
	}
	return dnu;
}

/*
 * The reduced matrix S = sum_n A_n P_n A_n^T + diag(w / lambda), P_n the
 * block's map z -> dy at rc = 0:
 *   P = D^-1 - [D^-1 u / q + bc / (T q den)] (D^-1 g)^T,
 * so each tenant adds one rank-one term to the pools' diagonal blocks.
 */
static int factor_lowrank(struct ipm *m);

static int factor(struct ipm *m)
{
	const size_t M = m->M, R = m->nrow;
	double *S = m->S;

	if (m->lowrank)
		return factor_lowrank(m);
	memset(S, 0, R * R * sizeof(double));
	for (size_t j = 0; j < R; j++)
		S[j * R + j] = m->w[j] / m->lam[j];
	for (size_t n = 0; n < m->N; n++) {
		block_setup(m, n);
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
			const double Di = m->y[e] / m->s[e];
			const size_t k = m->pool[e];
			for (size_t r = 0; r < M; r++) {
				const double ar = m->a[e * M + r];
				if (ar <= 0)
					continue;
				const size_t jr = m->row[k * M + r];
				for (size_t c = 0; c < M; c++)
					if (m->a[e * M + c] > 0)
						S[jr * R + m->row[k * M + c]] +=
						    ar * m->a[e * M + c] * Di;
			}
		}
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
			double fe = m->y[e] / m->s[e] * m->u[e] / m->q[n];
			const size_t k = m->pool[e];
			if (capped(m, n))
				fe += m->bc[e] / (m->capT[n] * m->q[n] * m->den[n]);
			for (size_t f = m->first[n]; f < m->first[n + 1]; f++) {
				const double ff = fe * m->g[f] * m->y[f] / m->s[f];
				const size_t l = m->pool[f];
				for (size_t r = 0; r < M; r++) {
					const double ar = m->a[e * M + r];
					if (ar <= 0)
						continue;
					double *Srow = &S[m->row[k * M + r] * R];
					for (size_t c = 0; c < M; c++)
						if (m->a[f * M + c] > 0)
							Srow[m->row[l * M + c]] -=
							    ar * m->a[f * M + c] * ff;
				}
			}
		}
	}
	return fs_lu_factor(S, R, m->piv);
}

/* v := D^-1 v with D the pools' diagonal blocks (factorised). */
static void blocks_solve(const struct ipm *m, double *v)
{
	for (size_t k = 0; k < m->K; k++) {
		const size_t r0 = m->rstart[k], mk = m->rstart[k + 1] - r0;
		if (mk)
			fs_lu_solve(m->blk + m->boff[k], mk, m->bpiv + r0, v + r0);
	}
}

/*
 * S in low-rank form: S = D - sum_n l_n r_n^T, D block-diagonal (each
 * pool's rows: diag(w / lambda) + sum_e a_e a_e^T / D_e), l_n = A_n [D^-1 u /
 * q + bc / (T q den)], r_n = A_n D^-1 g (the terms of factor()). By
 * Woodbury, S^-1 = D^-1 + Z C^-1 R^T D^-1 with Z = D^-1 L and the N x N
 * matrix C = I - R^T Z.
 */
static int factor_lowrank(struct ipm *m)
{
	const size_t M = m->M, R = m->nrow, N = m->N;
	int ret;

	memset(m->blk, 0, m->boff[m->K] * sizeof(double));
	memset(m->Lm, 0, N * R * sizeof(double));
	memset(m->Rm, 0, N * R * sizeof(double));
	for (size_t k = 0; k < m->K; k++) {
		const size_t r0 = m->rstart[k], mk = m->rstart[k + 1] - r0;
		for (size_t j = r0; j < r0 + mk; j++)
			m->blk[m->boff[k] + (j - r0) * mk + (j - r0)] = m->w[j] / m->lam[j];
	}
	for (size_t n = 0; n < N; n++) {
		block_setup(m, n);
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
			const double Di = m->y[e] / m->s[e];
			const size_t k = m->pool[e], r0 = m->rstart[k], mk = m->rstart[k + 1] - r0;
			double fe = Di * m->u[e] / m->q[n];
			if (capped(m, n))
				fe += m->bc[e] / (m->capT[n] * m->q[n] * m->den[n]);
			for (size_t r = 0; r < M; r++) {
				const double ar = m->a[e * M + r];
				if (ar <= 0)
					continue;
				const size_t jr = m->row[k * M + r];
				m->Lm[n * R + jr] += ar * fe;
				m->Rm[n * R + jr] += ar * m->g[e] * Di;
				for (size_t c = 0; c < M; c++)
					if (m->a[e * M + c] > 0)
						m->blk[m->boff[k] + (jr - r0) * mk +
						       (m->row[k * M + c] - r0)] +=
						    ar * m->a[e * M + c] * Di;
			}
		}
	}
	for (size_t k = 0; k < m->K; k++) {
		const size_t r0 = m->rstart[k], mk = m->rstart[k + 1] - r0;
		if (mk && (ret = fs_lu_factor(m->blk + m->boff[k], mk, m->bpiv + r0)) < 0)
			return ret;
	}
	memcpy(m->Zm, m->Lm, N * R * sizeof(double));
	for (size_t n = 0; n < N; n++)
		blocks_solve(m, m->Zm + n * R);
	for (size_t i = 0; i < N; i++)
		for (size_t n = 0; n < N; n++) {
			double v = i == n;
			for (size_t j = 0; j < R; j++)
				v -= m->Rm[i * R + j] * m->Zm[n * R + j];
			m->C[i * N + n] = v;
		}
	return fs_lu_factor(m->C, N, m->cpiv);
}

/* v := S^-1 v with the factors of factor(). */
static void solve_S(const struct ipm *m, double *v)
{
	const size_t R = m->nrow, N = m->N;
	double *t = m->tN;

	if (!m->lowrank) {
		fs_lu_solve(m->S, R, m->piv, v);
		return;
	}
	blocks_solve(m, v);
	for (size_t i = 0; i < N; i++) {
		double d = 0;
		for (size_t j = 0; j < R; j++)
			d += m->Rm[i * R + j] * v[j];
		t[i] = d;
	}
	fs_lu_solve(m->C, N, m->cpiv, t);
	for (size_t n = 0; n < N; n++)
		for (size_t j = 0; j < R; j++)
			v[j] += m->Zm[n * R + j] * t[n];
}

/* Cap row's right-hand side: c^T dy - eps dnu = -r_v - cn / nu. */
static double cap_rc(const struct ipm *m, size_t n)
{
	return capped(m, n) ? -m->rv[n] - m->cn[n] / m->nu[n] : 0;
}

/* The step for complementarity targets cy (pairs), cl (rows), cn (caps). */
static void direction(struct ipm *m)
{
	const size_t M = m->M;

	for (size_t j = 0; j < m->nrow; j++)
		m->rhs[j] = m->cl[j] / m->lam[j] + m->rw[j];
	for (size_t n = 0; n < m->N; n++) {
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++)
			m->rho[e] = m->rs[e] + m->cy[e] / m->y[e];
		block_solve(m, n, m->rho, cap_rc(m, n), m->z);
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++)
			for (size_t r = 0; r < M; r++)
				if (m->a[e * M + r] > 0)
					m->rhs[m->row[m->pool[e] * M + r]] +=
					    m->a[e * M + r] * m->z[e];
	}
	memcpy(m->dlam, m->rhs, m->nrow * sizeof(double));
	solve_S(m, m->dlam);
	for (size_t j = 0; j < m->nrow; j++)
		m->dw[j] = -m->rw[j];
	for (size_t n = 0; n < m->N; n++) {
		double dx = 0;
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++)
			m->z[e] = m->rho[e] - row_dot(m, e, m->dlam);
		m->dnu[n] = block_solve(m, n, m->z, cap_rc(m, n), m->dy);
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
			const size_t k = m->pool[e];
			dx += m->g[e] * m->dy[e];
			m->ds[e] = (m->cy[e] - m->s[e] * m->dy[e]) / m->y[e];
			for (size_t r = 0; r < M; r++)
				if (m->a[e * M + r] > 0)
					m->dw[m->row[k * M + r]] -= m->a[e * M + r] * m->dy[e];
		}
		m->dv[n] = capped(m, n) ? -m->rv[n] - dx / m->capT[n] : 0;
	}
}

static double ratio(double a, double da, double t)
{
	return da < 0 ? fmin(t, -a / da) : t;
}

/* Largest step in (0, 1] that keeps every variable >= 0. */
static double max_step(const struct ipm *m)
{
	double t = 1;

	for (size_t e = 0; e < m->ne; e++) {
		t = ratio(m->y[e], m->dy[e], t);
		t = ratio(m->s[e], m->ds[e], t);
	}
	for (size_t j = 0; j < m->nrow; j++) {
		t = ratio(m->lam[j], m->dlam[j], t);
		t = ratio(m->w[j], m->dw[j], t);
	}
	for (size_t n = 0; n < m->N; n++)
		if (capped(m, n)) {
			t = ratio(m->nu[n], m->dnu[n], t);
			t = ratio(m->v[n], m->dv[n], t);
		}
	return t;
}

/* Mean complementarity after a step t (t = 0: now). */
static double mean_comp(const struct ipm *m, double t)
{
	double c = 0;

	for (size_t e = 0; e < m->ne; e++)
		c += (m->y[e] + t * m->dy[e]) * (m->s[e] + t * m->ds[e]);
	for (size_t j = 0; j < m->nrow; j++)
		c += (m->lam[j] + t * m->dlam[j]) * (m->w[j] + t * m->dw[j]);
	for (size_t n = 0; n < m->N; n++)
		if (capped(m, n))
			c += (m->nu[n] + t * m->dnu[n]) * (m->v[n] + t * m->dv[n]);
	return c / (double)(m->ne + m->nrow + m->ncap);
}

static void take_step(struct ipm *m, double t)
{
	for (size_t e = 0; e < m->ne; e++) {
		m->y[e] += t * m->dy[e];
		m->s[e] += t * m->ds[e];
	}
	for (size_t j = 0; j < m->nrow; j++) {
		m->lam[j] += t * m->dlam[j];
		m->w[j] += t * m->dw[j];
	}
	for (size_t n = 0; n < m->N; n++)
		if (capped(m, n)) {
			m->nu[n] += t * m->dnu[n];
			m->v[n] += t * m->dv[n];
		}
}

/* One predictor-corrector step. Returns 0, -EDOM or -ETIMEDOUT (no progress). */
static int newton_step(struct ipm *m)
{
	int ret = factor(m);
	const double mu = mean_comp(m, 0);

	if (ret < 0)
		return ret;
	/* Predictor: aim at complementarity 0. */
	for (size_t e = 0; e < m->ne; e++)
		m->cy[e] = -m->y[e] * m->s[e];
	for (size_t j = 0; j < m->nrow; j++)
		m->cl[j] = -m->lam[j] * m->w[j];
	for (size_t n = 0; n < m->N; n++)
		m->cn[n] = -m->nu[n] * m->v[n];
	direction(m);
	const double ta = max_step(m);
	const double ratio_mu = mean_comp(m, ta) / mu;
	const double sigma = fmin(1, ratio_mu * ratio_mu * ratio_mu);
	/* Corrector: centre at sigma mu and cancel the predictor's second-order term. */
	for (size_t e = 0; e < m->ne; e++)
		m->cy[e] = sigma * mu - m->y[e] * m->s[e] - m->dy[e] * m->ds[e];
	for (size_t j = 0; j < m->nrow; j++)
		m->cl[j] = sigma * mu - m->lam[j] * m->w[j] - m->dlam[j] * m->dw[j];
	for (size_t n = 0; n < m->N; n++)
		m->cn[n] =
		    capped(m, n) ? sigma * mu - m->nu[n] * m->v[n] - m->dnu[n] * m->dv[n] : 0;
	direction(m);
	const double t = STEP_FRAC * max_step(m);
	if (!(t > 1e-12))
		return -ETIMEDOUT;
	take_step(m, t);
	return 0;
}

/* x from y, scaled down per pool and per tenant cap onto the feasible set:
 * the interior iterate may overshoot a capacity by its primal residual. */
static void extract(const struct ipm *m, const double *y, double *x)
{
	const size_t M = m->M, K = m->K;
	double *use = m->rhs; /* scratch [nrow] */

	memset(use, 0, m->nrow * sizeof(double));
	for (size_t e = 0; e < m->ne; e++)
		for (size_t r = 0; r < M; r++)
			if (m->a[e * M + r] > 0)
				use[m->row[m->pool[e] * M + r]] += m->a[e * M + r] * y[e];
	memset(x, 0, m->N * K * sizeof(double));
	for (size_t n = 0; n < m->N; n++) {
		double tot = 0;
		for (size_t e = m->first[n]; e < m->first[n + 1]; e++) {
			const size_t k = m->pool[e];
			double over = 1;
			for (size_t r = 0; r < M; r++)
				if (m->a[e * M + r] > 0)
					over = fmax(over, use[m->row[k * M + r]]);
			x[n * K + k] = m->g[e] * y[e] / over;
			tot += x[n * K + k];
		}
		if (tot > m->capT[n])
			for (size_t e = m->first[n]; e < m->first[n + 1]; e++)
				x[n * K + m->pool[e]] *= m->capT[n] / tot;
	}
}

int fs_apf_ipm(const struct fs_problem *p, double alpha, double tol, int max_iter, double *x,
	       struct fs_apf_ipm_stats *stats)
{
	struct ipm m = {0};
	struct fs_apf_ipm_stats st = {0}, cur = {0};
	int ret;

	if (max_iter <= 0)
		max_iter = DEFAULT_ITER;
	ret = ipm_build(&m, p, alpha);
	if (ret < 0)
		goto out;
	if (!m.ne) {
		memset(x, 0, p->n_tenants * p->n_pools * sizeof(double));
		goto out;
	}
	/* The start needs an allocation that is positive where possible: x
	 * holds per-server DRF on entry. */
	start(&m, x);
	m.best_kkt = INFINITY;
	ret = -ETIMEDOUT;
	for (int it = 0;; it++) {
		const double kkt = residuals(&m, &cur);
		if (it == 0 || kkt < m.best_kkt) {
			m.best_kkt = kkt;
			memcpy(m.best_y, m.y, m.ne * sizeof(double));
			st = cur;
			st.kkt = kkt;
		}
		st.iterations = it;
		if (kkt <= tol) {
			ret = 0;
			break;
		}
		if (it == max_iter)
			break;
		ret = newton_step(&m);
		if (ret < 0)
			break;
		ret = -ETIMEDOUT;
	}
	extract(&m, m.best_y, x);
out:
	if (stats)
		*stats = st;
	ipm_free(&m);
	return ret;
}
