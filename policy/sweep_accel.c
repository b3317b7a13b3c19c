/* SPDX-License-Identifier: MIT */
/*
 * Acceleration of best-response sweeps (see sweep_accel.h).
 *
 * Two extrapolations of the sweep map G speed the sweeps up. Both keep the
 * sweep output they start from, and the sweep after them checks them: if it
 * moves more than ACCEL_KEEP times the sweep before, the extrapolation went
 * wrong (past a change of G's structure, or along a mode that was not
 * alone) and the saved output comes back.
 *
 * - Anderson mixing (type II, Walker & Ni 2011), in the first
 *   ANDERSON_SWEEPS sweeps: the next point is the combination of the last
 *   AA_MEM + 1 sweep outputs whose residuals G(x) - x combine to the
 *   smallest weighted norm (entries scaled by 1/gamma_{n,i}, the units of
 *   the stopping test). Near a solution G is affine on a fixed active set,
 *   where this behaves like GMRES; it also catches the slowly rotating
 *   modes that the jumps below cannot. A failed mix pauses it for
 *   ANDERSON_PAUSE sweeps. It stops for good once ANDERSON_STALL sweeps
 *   in a row have not cut the smallest sweep move so far by ANDERSON_GAIN:
 *   on the instances where the sweeps were slowest, the mixed points kept
 *   passing their checks without the sweeps settling, and the solve ended
 *   only a few hundred sweeps after the mixing did (worst over 20 bench
 *   seeds, N = 200, K = 2..8, M = 4: 164-943 sweeps with mixing in the first
 *   500 and nothing else, 73-422 with this rule at 40 and 55-403 at 20,
 *   medians equal; with mixing in the first 2000, 164-2444).
 * - One-mode jumps (jump below), in every sweep: when two sweeps in a row
 *   moved x in the same direction, by the same amount (a drift along a
 *   cycle of splits) or by a constant factor (a geometric tail). A failed
 *   jump makes the direction test 10x stricter until a jump succeeds. A
 *   jump whose two moves agree to 1 - JUMP_ON_PATH in cosine is not
 *   checked: the sweep map is then affine along that line, so the plain
 *   sweeps would walk the same path to the same point, where an x_{n,i}
 *   reaches 0 and the next sweep may well move more (seen: a 25,000-sweep
 *   drift whose end the check refused, so the solve hit its round cap).
 *
 * Measured on the bench instances (seed 1, N = 1000, K = 100): the sweeps
 * end in a drift that moves about 1e-6 gamma per sweep, interrupted each
 * time an x_{n,i} reaches 0 (several hundred times). Anderson mixing alone
 * (limited to 500 sweeps, and unchecked) left thousands of plain sweeps
 * walking those drifts, and on some instances the sweeps had not converged
 * when they reached the round cap.
 */
#include "sweep_accel.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AA_MEM		SWEEP_ACCEL_MEM
#define ANDERSON_SWEEPS 500
#define ANDERSON_PAUSE	20
#define ANDERSON_STALL	40
#define ANDERSON_GAIN	0.5
#define ACCEL_KEEP	2.0
#define JUMP_COS	1e-3
#define JUMP_LAM_MIN	0.5
#define JUMP_LAM_MAX	(1 + 1e-3)
#define JUMP_ON_PATH	1e-9

void sweep_accel_free(struct sweep_accel *a)
{
	free(a->w);
	free(a->f);
	free(a->g);
	free(a->saved);
	free(a->df);
	free(a->dg);
}

double sweep_accel_clamp_row(double *x, const double *gamma, const double *cap, double mt, size_t K)
{
	double t = 0;

	for (size_t k = 0; k < K; k++) {
		x[k] = gamma[k] > 0 ? fmax(0, x[k]) : 0;
		if (cap)
			x[k] = fmin(x[k], cap[k]);
		t += x[k];
	}
	if (t > mt) {
		for (size_t k = 0; k < K; k++)
			x[k] *= mt / t;
		t = mt;
	}
	return t;
}

int sweep_accel_alloc(struct sweep_accel *a, size_t dim, const double *gamma)
{
	memset(a, 0, sizeof(*a));

	a->dim = dim;
	a->jump_cos = JUMP_COS;
	a->w = calloc(dim, sizeof(double));
	a->f = calloc(dim, sizeof(double));
	a->g = calloc(dim, sizeof(double));
	a->saved = calloc(dim, sizeof(double));
	a->df = calloc(AA_MEM * dim, sizeof(double));
	a->dg = calloc(AA_MEM * dim, sizeof(double));
	if (!a->w || !a->f || !a->g || !a->saved || !a->df || !a->dg)
		return -ENOMEM;
	for (size_t j = 0; j < dim; j++)
		a->w[j] = gamma[j] > 0 ? 1 / (gamma[j] * gamma[j]) : 0;
	return 0;
}

/* Solves the m x m SPD system A y = b in place (Cholesky with a small ridge).
 * Returns false when it is numerically singular. */
static bool small_spd_solve(double A[AA_MEM][AA_MEM], double *b, size_t m)
{
	double tr = 0;

	for (size_t j = 0; j < m; j++)
		tr += A[j][j];
	for (size_t j = 0; j < m; j++)
		A[j][j] += 1e-12 * tr + 1e-300;
	for (size_t j = 0; j < m; j++) {
		for (size_t k = 0; k < j; k++)
			A[j][j] -= A[j][k] * A[j][k];
		if (!(A[j][j] > 0))
			return false;
		A[j][j] = sqrt(A[j][j]);
		for (size_t i = j + 1; i < m; i++) {
			for (size_t k = 0; k < j; k++)
				A[i][j] -= A[i][k] * A[j][k];
			A[i][j] /= A[j][j];
		}
	}
	for (size_t i = 0; i < m; i++) {
		for (size_t k = 0; k < i; k++)
			b[i] -= A[i][k] * b[k];
		b[i] /= A[i][i];
	}
	for (size_t i = m; i-- > 0;) {
		for (size_t k = i + 1; k < m; k++)
			b[i] -= A[k][i] * b[k];
		b[i] /= A[i][i];
	}
	return true;
}

/*
 * One mode dominates when this sweep's move f = x - x_in points the way the
 * last one did (weighted cosine >= 1 - jump_cos) and is lam times as long,
 * lam in [JUMP_LAM_MIN, JUMP_LAM_MAX]. lam ~ 1 is a drift along a cycle of
 * splits, on which the sweep map is a translation until an x_{n,i} reaches
 * 0; lam < 1 is a geometric tail, whose limit is lam / (1 - lam) more such
 * moves away (Aitken). Jump to the nearer of the two. Entries under 1e-3 tol
 * gamma are left out of the cut: they are zeros to the stopping test, and
 * would stop every jump at once. Returns true when it jumped.
 */
static bool jump(struct sweep_accel *a, const struct sweep_accel_target *t, const double *x_in)
{
	const size_t dim = a->dim;
	double *x = t->x, dot = 0, nn = 0, np = 0, len = INFINITY;

	for (size_t j = 0; j < dim; j++) {
		const double f = x[j] - x_in[j];
		dot += a->w[j] * f * a->f[j];
		nn += a->w[j] * f * f;
		np += a->w[j] * a->f[j] * a->f[j];
	}
	if (!(nn > 0) || dot < (1 - a->jump_cos) * sqrt(nn * np))
		return false;
	const double lam = sqrt(nn / np);
	if (lam < JUMP_LAM_MIN || lam > JUMP_LAM_MAX)
		return false;
	if (lam < 1)
		len = lam / (1 - lam);
	for (size_t j = 0; j < dim; j++) {
		const double f = x[j] - x_in[j];
		if (x[j] > 1e-3 * t->tol * t->gamma[j] && f < 0)
			len = fmin(len, x[j] / -f);
	}
	if (!isfinite(len) || len <= 1)
		return false;
	a->on_path = dot >= (1 - JUMP_ON_PATH) * sqrt(nn * np);
	memcpy(a->saved, x, dim * sizeof(double));
	for (size_t j = 0; j < dim; j++)
		x[j] = fmax(0, x[j] + len * (x[j] - x_in[j]));
	t->project(t->ctx);
	return true;
}

void sweep_accel_forget(struct sweep_accel *a)
{
	a->used = a->head = 0;
	a->have_prev = false;
}

/* Keeps the sweep x_in -> x as the previous one. */
static void record(struct sweep_accel *a, const double *x, const double *x_in)
{
	a->have_prev = true;
	for (size_t j = 0; j < a->dim; j++) {
		a->f[j] = x[j] - x_in[j];
		a->g[j] = x[j];
	}
}

/*
 * Records the sweep x_in -> x (= G(x_in)) and overwrites x with the mixed
 * next point, projected back into the solver's box (t->project), after
 * saving x. Returns false when it left x alone (too little history). Uses
 * x_in as scratch.
 */
static bool aa_step(struct sweep_accel *a, const struct sweep_accel_target *t, double *x_in)
{
	const size_t dim = a->dim;
	double *x = t->x, rhs[AA_MEM], A[AA_MEM][AA_MEM];
	const size_t h = a->head;
	size_t m;

	if (a->have_prev) {
		double *df = &a->df[h * dim], *dg = &a->dg[h * dim];
		for (size_t j = 0; j < dim; j++) {
			df[j] = x[j] - x_in[j] - a->f[j];
			dg[j] = x[j] - a->g[j];
		}
		a->head = (h + 1) % AA_MEM;
		if (a->used < AA_MEM)
			a->used++;
		for (size_t k = 0; k < a->used; k++) {
			const double *dk = &a->df[k * dim];
			double dot = 0;
			for (size_t j = 0; j < dim; j++)
				dot += a->w[j] * df[j] * dk[j];
			a->gram[h][k] = a->gram[k][h] = dot;
		}
	}
	record(a, x, x_in);
	m = a->used;
	if (!m)
		return false;
	for (size_t k = 0; k < m; k++) {
		const double *dk = &a->df[k * dim];
		double dot = 0;
		for (size_t j = 0; j < dim; j++)
			dot += a->w[j] * a->f[j] * dk[j];
		rhs[k] = dot;
		for (size_t l = 0; l < m; l++)
			A[k][l] = a->gram[k][l];
	}
	if (!small_spd_solve(A, rhs, m)) {
		a->used = 0;
		a->head = 0;
		return false;
	}
	memcpy(a->saved, x, dim * sizeof(double));
	/* Step p = -dG rhs from x = G(x_in), cut where an entry hits 0: beyond
	 * that the map is another affine piece (and a drift along a cycle of
	 * splits, where G has no fixed point on this piece, ends there). */
	double *step = x_in, len = 1;
	memset(step, 0, dim * sizeof(double));
	for (size_t k = 0; k < m; k++) {
		const double *dk = &a->dg[k * dim];
		for (size_t j = 0; j < dim; j++)
			step[j] -= rhs[k] * dk[j];
	}
	for (size_t j = 0; j < dim; j++)
		if (x[j] > 1e-3 * t->tol * t->gamma[j] && step[j] < 0 && x[j] < -len * step[j])
			len = x[j] / -step[j];
	for (size_t j = 0; j < dim; j++)
		x[j] = fmax(0, x[j] + len * step[j]);
	if (len < 1)
		sweep_accel_forget(a);
	t->project(t->ctx);
	return true;
}

/*
 * After the sweep number `sweep`, x_in -> x, which moved x by move: checks
 * the last extrapolation, then tries a jump, then Anderson mixing.
 */
void sweep_accel_step(struct sweep_accel *a, const struct sweep_accel_target *t, double *x_in,
		      double move, int sweep)
{
	if (a->checking) {
		a->checking = false;
		if (move > ACCEL_KEEP * a->move_before && !a->on_path) {
			memcpy(t->x, a->saved, a->dim * sizeof(double));
			t->project(t->ctx);
			sweep_accel_forget(a);
			if (a->by_anderson)
				a->anderson_pause = sweep + ANDERSON_PAUSE;
			else
				a->jump_cos *= 0.1;
			return;
		}
		if (!a->by_anderson)
			a->jump_cos = fmin(2 * a->jump_cos, JUMP_COS);
	}
	a->move_before = move;
	a->on_path = false;
	if (!(a->best_move > 0) || move < ANDERSON_GAIN * a->best_move) {
		a->best_move = move;
		a->best_sweep = sweep;
	}
	if (a->have_prev && jump(a, t, x_in)) {
		sweep_accel_forget(a);
		a->checking = true;
		a->by_anderson = false;
	} else if (sweep < ANDERSON_SWEEPS && sweep >= a->anderson_pause &&
		   sweep - a->best_sweep < ANDERSON_STALL) {
		a->checking = a->by_anderson = aa_step(a, t, x_in);
	} else {
		record(a, t->x, x_in);
	}
}
