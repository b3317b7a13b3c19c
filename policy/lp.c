/* SPDX-License-Identifier: MIT */
/*
 * Two-phase primal simplex, revised form; see lp.h for the contract.
 *
 * The constraint matrix (with slack and artificial columns) is kept sparse
 * by column and the basis inverse dense (m x m, column-major), updated by
 * one elimination step per pivot. Reduced costs are updated from the pivot
 * row, so a pivot costs O(m^2 + nnz(A)) instead of the O(m n) of a full
 * tableau, which matters for the water-filling LPs (thousands of columns,
 * hundreds of rows). Numerically this is the same elimination a tableau
 * would do; the final point is re-checked against the original rows.
 */
#include "lp.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Rows are equilibrated to a largest coefficient of 1, so absolute
 * tolerances are meaningful. */
#define EPS_RC	  1e-9	/* a reduced cost above this improves the objective */
#define EPS_PIV	  1e-9	/* smallest acceptable pivot element */
#define EPS_DROP  1e-14 /* updated entries below this are round-off noise */
#define EPS_TIE	  1e-12 /* ratio-test ties (relative) */
#define EPS_DEGEN 1e-12 /* a step this small counts as degenerate */
#define DEG_LIMIT 50	/* degenerate pivots in a row before Bland's rule */
#define EPS_CHECK 1e-7	/* final feasibility re-check (relative to row size) */

struct simplex {
	size_t m, w;	  /* rows, columns */
	size_t first_art; /* columns >= first_art are artificial */
	size_t *cp, *ri;  /* CSC of the scaled constraint matrix */
	double *cv;
	double *binv;	       /* [m][m] column-major basis inverse */
	double *xb;	       /* [m] values of the basic variables */
	double *rc;	       /* [w]: reduced costs c_j - c_B B^-1 a_j */
	double obj;	       /* current objective value */
	size_t *basis;	       /* [m] */
	unsigned char *banned; /* [w]: may not enter the basis */
	double *alpha;	       /* [m] scratch: B^-1 a_q */
	double *prow;	       /* [w] scratch: row p of B^-1 A */
	double *bp;	       /* [m] scratch: row p of B^-1 */
	long budget;	       /* pivots left before giving up */
	int pivots;
};

/* alpha = B^-1 a_q. */
static void ftran(struct simplex *s, size_t q)
{
	const size_t m = s->m;

	memset(s->alpha, 0, m * sizeof(double));
	for (size_t k = s->cp[q]; k < s->cp[q + 1]; k++) {
		const double v = s->cv[k], *col = s->binv + s->ri[k] * m;
		for (size_t i = 0; i < m; i++)
			s->alpha[i] += col[i] * v;
	}
}

/* prow = e_p^T B^-1 A over all columns. */
static void pivot_row(struct simplex *s, size_t p)
{
	const size_t m = s->m;

	for (size_t c = 0; c < m; c++)
		s->bp[c] = s->binv[c * m + p];
	for (size_t j = 0; j < s->w; j++) {
		double v = 0;
		for (size_t k = s->cp[j]; k < s->cp[j + 1]; k++)
			v += s->bp[s->ri[k]] * s->cv[k];
		s->prow[j] = v;
	}
}

/* Basis change: column q (alpha already computed) replaces row p's
 * variable. update_rc: also carry the reduced costs along. */
static void pivot(struct simplex *s, size_t p, size_t q, bool update_rc)
{
	const size_t m = s->m;
	const double ap = s->alpha[p];
	const double theta = s->xb[p] / ap;

	if (update_rc) {
		const double rq = s->rc[q];
		pivot_row(s, p);
		if (rq != 0.0) {
			const double f = rq / ap;
			for (size_t j = 0; j < s->w; j++)
				if (s->prow[j] != 0.0)
					s->rc[j] -= f * s->prow[j];
			s->obj += rq * theta;
		}
		s->rc[q] = 0.0;
	}
	for (size_t i = 0; i < m; i++) {
		if (i == p || s->alpha[i] == 0.0)
			continue;
		s->xb[i] -= s->alpha[i] * theta;
		if (s->xb[i] < 0 && s->xb[i] > -EPS_DROP)
			s->xb[i] = 0.0;
	}
	s->xb[p] = theta;
	for (size_t c = 0; c < m; c++) {
		double *col = s->binv + c * m;
		const double f = col[p] / ap;
		if (f == 0.0)
			continue;
		for (size_t i = 0; i < m; i++)
			if (s->alpha[i] != 0.0) {
				double v = col[i] - s->alpha[i] * f;
				col[i] = fabs(v) < EPS_DROP ? 0.0 : v;
			}
		col[p] = f;
	}
	s->basis[p] = q;
	s->pivots++;
}

static size_t choose_entering(const struct simplex *s, bool bland)
{
	size_t q = SIZE_MAX;
	double best = EPS_RC;

	for (size_t j = 0; j < s->w; j++) {
		if (s->banned[j] || !(s->rc[j] > EPS_RC))
			continue;
		if (bland)
			return j;
		if (s->rc[j] > best) {
			best = s->rc[j];
			q = j;
		}
	}
	return q;
}

/* Minimum-ratio row for the entering column in s->alpha; ties go to the
 * larger pivot (stability) or, under Bland's rule, to the smallest basic
 * index. */
static size_t choose_leaving(const struct simplex *s, bool bland, double *theta)
{
	size_t p = SIZE_MAX;
	double best = INFINITY, best_piv = 0;

	for (size_t i = 0; i < s->m; i++) {
		const double a = s->alpha[i];
		if (!(a > EPS_PIV))
			continue;
		const double r = (s->xb[i] > 0 ? s->xb[i] : 0.0) / a;
		const double tie = EPS_TIE * (1.0 + (isfinite(best) ? best : 0.0));
		bool take;
		if (p == SIZE_MAX || r < best - tie)
			take = true;
		else if (r <= best + tie)
			take = bland ? s->basis[i] < s->basis[p] : a > best_piv;
		else
			take = false;
		if (take) {
			if (r < best)
				best = r;
			best_piv = a;
			p = i;
		}
	}
	*theta = best;
	return p;
}

/* Runs simplex iterations on the current reduced costs until optimal. */
static int iterate(struct simplex *s)
{
	int degenerate = 0;

	for (;;) {
		const bool bland = degenerate > DEG_LIMIT;
		double theta;
		size_t q = choose_entering(s, bland);
		if (q == SIZE_MAX)
			return 0;
		ftran(s, q);
		size_t p = choose_leaving(s, bland, &theta);
		if (p == SIZE_MAX)
			return -ERANGE;
		if (s->budget-- <= 0)
			return -EDOM;
		degenerate = theta <= EPS_DEGEN ? degenerate + 1 : 0;
		pivot(s, p, q, true);
	}
}

/* Reduced costs and objective of cost[] for the current basis; y (may be
 * NULL) receives the row prices c_B^T B^-1. */
static void reprice(struct simplex *s, const double *cost, double *y)
{
	const size_t m = s->m;
	double *yy = s->bp;

	s->obj = 0;
	for (size_t c = 0; c < m; c++) {
		double v = 0;
		for (size_t i = 0; i < m; i++)
			v += cost[s->basis[i]] * s->binv[c * m + i];
		yy[c] = v;
	}
	for (size_t i = 0; i < m; i++)
		s->obj += cost[s->basis[i]] * s->xb[i];
	for (size_t j = 0; j < s->w; j++) {
		double v = cost[j];
		for (size_t k = s->cp[j]; k < s->cp[j + 1]; k++)
			v -= yy[s->ri[k]] * s->cv[k];
		s->rc[j] = v;
	}
	for (size_t i = 0; i < m; i++)
		s->rc[s->basis[i]] = 0.0;
	if (y)
		memcpy(y, yy, m * sizeof(double));
}

static bool all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

/* Largest |coefficient| of a row (1 when the row is empty). */
static double row_scale(const double *a, size_t n)
{
	double s = 0;

	for (size_t j = 0; j < n; j++)
		if (fabs(a[j]) > s)
			s = fabs(a[j]);
	return s > 0 ? s : 1.0;
}

static bool point_is_feasible(const struct fs_lp *lp, const double *x)
{
	const size_t n = lp->n_vars;

	for (size_t r = 0; r < lp->n_le + lp->n_eq; r++) {
		const bool eq = r >= lp->n_le;
		const double *a = eq ? lp->a_eq + (r - lp->n_le) * n : lp->a_le + r * n;
		const double b = eq ? lp->b_eq[r - lp->n_le] : lp->b_le[r];
		double lhs = 0, size = fabs(b) + 1.0;
		for (size_t j = 0; j < n; j++) {
			lhs += a[j] * x[j];
			size += fabs(a[j] * x[j]);
		}
		if (lhs > b + EPS_CHECK * size || (eq && lhs < b - EPS_CHECK * size))
			return false;
	}
	for (size_t j = 0; lp->upper && j < n; j++)
		if (x[j] > lp->upper[j] + EPS_CHECK * (1.0 + fabs(lp->upper[j])))
			return false;
	return true;
}

static bool lp_input_ok(const struct fs_lp *lp)
{
	const size_t n = lp->n_vars;

	if (!lp->c || !all_finite(lp->c, n))
		return false;
	if (lp->n_le && (!lp->a_le || !lp->b_le || !all_finite(lp->a_le, lp->n_le * n) ||
			 !all_finite(lp->b_le, lp->n_le)))
		return false;
	if (lp->n_eq && (!lp->a_eq || !lp->b_eq || !all_finite(lp->a_eq, lp->n_eq * n) ||
			 !all_finite(lp->b_eq, lp->n_eq)))
		return false;
	for (size_t j = 0; lp->upper && j < n; j++)
		if (isnan(lp->upper[j]))
			return false;
	return true;
}

/* Coefficient of structural column j in stored (scaled, sign-flipped) row i. */
static double coef(const struct fs_lp *lp, size_t n_slack, const size_t *ub_col, const double *f,
		   size_t i, size_t j)
{
	const size_t n = lp->n_vars;

	if (i < lp->n_le)
		return f[i] * lp->a_le[i * n + j];
	if (i < n_slack)
		return ub_col[i - lp->n_le] == j ? f[i] : 0.0;
	return f[i] * lp->a_eq[(i - n_slack) * n + j];
}

int fs_lp_maximize(const struct fs_lp *lp, struct fs_lp_result *res)
{
	const size_t n = lp->n_vars;
	struct simplex s = {0};
	double *f = NULL, *cost = NULL, *y = NULL;
	bool *flipped = NULL;
	size_t *art_col = NULL; /* [m]: artificial column of a row or SIZE_MAX */
	size_t *ub_col = NULL;	/* [n_ub]: variable of each upper-bound row */
	size_t n_ub = 0, n_slack, n_art = 0, nnz = 0;
	int ret;

	res->obj = 0;
	res->pivots = 0;
	if (!lp_input_ok(lp))
		return -EINVAL;
	for (size_t j = 0; lp->upper && j < n; j++)
		n_ub += isfinite(lp->upper[j]);
	n_slack = lp->n_le + n_ub;
	s.m = n_slack + lp->n_eq;
	const size_t m = s.m;

	/* Row i: le rows, then upper-bound rows, then eq rows. Each is divided
	 * by its largest coefficient and negated when its rhs is negative. */
	f = calloc(m + 1, sizeof(*f));
	flipped = calloc(m + 1, sizeof(*flipped));
	art_col = calloc(m + 1, sizeof(*art_col));
	ub_col = calloc(n_ub + 1, sizeof(*ub_col));
	s.xb = calloc(m + 1, sizeof(double));
	if (!f || !flipped || !art_col || !ub_col || !s.xb) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t j = 0, u = 0; lp->upper && j < n; j++)
		if (isfinite(lp->upper[j]))
			ub_col[u++] = j;
	for (size_t i = 0; i < m; i++) {
		double scale, b;
		if (i < lp->n_le) {
			scale = row_scale(lp->a_le + i * n, n);
			b = lp->b_le[i];
		} else if (i < n_slack) {
			scale = 1.0;
			b = lp->upper[ub_col[i - lp->n_le]];
		} else {
			scale = row_scale(lp->a_eq + (i - n_slack) * n, n);
			b = lp->b_eq[i - n_slack];
		}
		flipped[i] = b < 0;
		f[i] = (flipped[i] ? -1.0 : 1.0) / scale;
		s.xb[i] = f[i] * b;
		art_col[i] = SIZE_MAX;
	}
	for (size_t i = 0; i < m; i++)
		if (flipped[i] || i >= n_slack)
			art_col[i] = n + n_slack + n_art++;

	s.w = n + n_slack + n_art;
	s.first_art = n + n_slack;
	const size_t w = s.w;
	if (m && (m > SIZE_MAX / sizeof(double) / m || w > SIZE_MAX / sizeof(double) / m)) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < m; i++)
			nnz += coef(lp, n_slack, ub_col, f, i, j) != 0.0;
	nnz += n_slack + n_art;
	s.cp = calloc(w + 1, sizeof(size_t));
	s.ri = calloc(nnz + 1, sizeof(size_t));
	s.cv = calloc(nnz + 1, sizeof(double));
	s.binv = calloc(m * m + 1, sizeof(double));
	s.rc = calloc(w + 1, sizeof(double));
	s.basis = calloc(m + 1, sizeof(size_t));
	s.banned = calloc(w + 1, 1);
	s.alpha = calloc(m + 1, sizeof(double));
	s.prow = calloc(w + 1, sizeof(double));
	s.bp = calloc(m + 1, sizeof(double));
	cost = calloc(w + 1, sizeof(double));
	y = calloc(m + 1, sizeof(double));
	if (!s.cp || !s.ri || !s.cv || !s.binv || !s.rc || !s.basis || !s.banned || !s.alpha ||
	    !s.prow || !s.bp || !cost || !y) {
		ret = -ENOMEM;
		goto out;
	}
	nnz = 0;
	for (size_t j = 0; j < n; j++) {
		s.cp[j] = nnz;
		for (size_t i = 0; i < m; i++) {
			const double v = coef(lp, n_slack, ub_col, f, i, j);
			if (v != 0.0) {
				s.ri[nnz] = i;
				s.cv[nnz++] = v;
			}
		}
	}
	for (size_t i = 0; i < n_slack; i++) {
		s.cp[n + i] = nnz;
		s.ri[nnz] = i;
		s.cv[nnz++] = flipped[i] ? -1.0 : 1.0;
	}
	for (size_t i = 0; i < m; i++)
		if (art_col[i] != SIZE_MAX) {
			s.cp[art_col[i]] = nnz;
			s.ri[nnz] = i;
			s.cv[nnz++] = 1.0;
		}
	s.cp[w] = nnz;
	/* Starting basis: the +1 slack of each unflipped inequality, else the
	 * artificial; B = I. */
	for (size_t i = 0; i < m; i++) {
		s.basis[i] = art_col[i] != SIZE_MAX ? art_col[i] : n + i;
		s.binv[i * m + i] = 1.0;
	}
	s.budget = 50L * (long)(m + w) + 10000L;

	/* Phase 1: maximise -(sum of artificials). */
	if (n_art) {
		double bmax = 1.0;
		for (size_t j = s.first_art; j < w; j++)
			cost[j] = -1.0;
		for (size_t i = 0; i < m; i++)
			if (art_col[i] != SIZE_MAX && s.xb[i] > bmax)
				bmax = s.xb[i];
		reprice(&s, cost, NULL);
		ret = iterate(&s);
		if (ret == -ERANGE) /* cannot happen: phase 1 is bounded by 0 */
			ret = -EDOM;
		if (ret < 0)
			goto out;
		if (s.obj < -1e-8 * bmax) {
			ret = -EINVAL;
			goto out;
		}
		/* Drive zero-level artificials out of the basis where the row
		 * allows it; rows that do not allow it are redundant. */
		for (size_t p = 0; p < m; p++) {
			size_t best_j = SIZE_MAX;
			double best_a = 1e-7;
			if (s.basis[p] < s.first_art)
				continue;
			pivot_row(&s, p);
			for (size_t j = 0; j < s.first_art; j++)
				if (fabs(s.prow[j]) > best_a) {
					best_a = fabs(s.prow[j]);
					best_j = j;
				}
			if (best_j == SIZE_MAX)
				continue;
			ftran(&s, best_j);
			pivot(&s, p, best_j, false);
			for (size_t i = 0; i < m; i++)
				if (s.xb[i] < 0)
					s.xb[i] = 0;
		}
		for (size_t j = s.first_art; j < w; j++)
			s.banned[j] = 1;
	}

	/* Phase 2. */
	for (size_t j = 0; j < w; j++)
		cost[j] = j < n ? lp->c[j] : 0.0;
	reprice(&s, cost, NULL);
	ret = iterate(&s);
	if (ret < 0)
		goto out;

	memset(res->x, 0, n * sizeof(*res->x));
	for (size_t i = 0; i < m; i++)
		if (s.basis[i] < n)
			res->x[s.basis[i]] = s.xb[i] > 0 ? s.xb[i] : 0.0;
	if (!point_is_feasible(lp, res->x)) {
		ret = -EDOM;
		goto out;
	}
	res->obj = 0;
	for (size_t j = 0; j < n; j++)
		res->obj += lp->c[j] * res->x[j];
	/* Row prices of the stored rows; undo the scaling and sign flip. */
	reprice(&s, cost, y);
	for (size_t i = 0; res->dual_le && i < lp->n_le; i++)
		res->dual_le[i] = y[i] * f[i] > 0 ? y[i] * f[i] : 0.0;
	for (size_t i = 0; res->dual_eq && i < lp->n_eq; i++)
		res->dual_eq[i] = y[n_slack + i] * f[n_slack + i];
	ret = 0;
out:
	res->pivots = s.pivots;
	free(s.cp);
	free(s.ri);
	free(s.cv);
	free(s.binv);
	free(s.xb);
	free(s.rc);
	free(s.basis);
	free(s.banned);
	free(s.alpha);
	free(s.prow);
	free(s.bp);
	free(f);
	free(cost);
	free(y);
	free(flipped);
	free(art_col);
	free(ub_col);
	return ret;
}
