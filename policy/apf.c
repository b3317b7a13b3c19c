/* SPDX-License-Identifier: MIT */
/*
 * alpha-PF-VDS ([P0] section 3; ALGORITHMS.md 1.9, 2.5, 2.7): the Nash
 * equilibrium of the per-pool games.
 *
 * With one pool its best response below is the answer. Otherwise first as
 * one global system: the interior-point method of apf_ipm.c on the
 * KKT conditions of all pools at once, with each tenant's max_tasks priced
 * once for all pools. For alpha = 1 that is the Eisenberg-Gale convex program
 * (maximise sum phi_n log x_n), solved to its global optimum; it converges
 * by itself on all 34 benchmark dumps and regression vectors for alpha 0.5
 * to 2 (28-32 of them at 3-4), where the best responses below crawl (a
 * near-continuum of per-pool splits: 18 of the 34 at alpha 1 and 3 at alpha
 * 2 did not settle in 5000 sweeps).
 *
 * When it does not converge (for large alpha the marginal utilities of
 * tenants span many orders of magnitude, x^-alpha), Gauss-Seidel best
 * responses (2.5, "simpler reference solver") take over from the starts
 * listed in fs_solve_apf; they settle there, as alpha -> inf they approach
 * PS-DSF. Each
 * pool's concave subproblem is solved exactly through its dual (dual.c): with
 * the tenant's tasks elsewhere B_n fixed, the best response to the pool's
 * price p_n is x_{n,k} = phi_n gamma (gamma p_n)^(-1/alpha) - B_n, clipped to
 * [0, max_tasks_n - B_n].
 */
#include "policy.h"
#include "apf_ipm.h"
#include "dual.h"
#include "psdsf_internal.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SWEEPS 5000
#define MAX_JUMP       10
#define IPM_CLOSE      1e-2 /* relative KKT error from which sweeps take over */

struct apf_work {
	double *gamma;	/* [N][K] */
	double *tot;	/* [N] */
	double *lambda; /* [K][M] dual prices, warm-started across sweeps */
	size_t *item;	/* [N] tenants of the current pool */
	size_t *res;	/* [M] resources of the current pool */
	double *a, *cap, *A, *B, *hi, *xk;
	double *lam;	/* [M] the current pool's prices in dual order */
	double *nu;	/* [N] shared price of each tenant's max_tasks constraint */
	double *off;	/* [N] nu of the current pool's tenants */
	double *before; /* [N][K] x before the current sweep */
	double *last;	/* [N][K] the previous sweep's move */
};

static void work_free(struct apf_work *w)
{
	free(w->gamma);
	free(w->tot);
	free(w->lambda);
	free(w->item);
	free(w->res);
	free(w->a);
	free(w->cap);
	free(w->A);
	free(w->B);
	free(w->hi);
	free(w->xk);
	free(w->lam);
	free(w->nu);
	free(w->off);
	free(w->before);
	free(w->last);
}

static int work_alloc(struct apf_work *w, size_t N, size_t K, size_t M)
{
	w->gamma = calloc(N * K, sizeof(double));
	w->tot = calloc(N, sizeof(double));
	w->lambda = calloc(K * M, sizeof(double));
	w->item = calloc(N, sizeof(size_t));
	w->res = calloc(M, sizeof(size_t));
	w->a = calloc(N * M, sizeof(double));
	w->cap = calloc(M, sizeof(double));
	w->A = calloc(N, sizeof(double));
	w->B = calloc(N, sizeof(double));
	w->hi = calloc(N, sizeof(double));
	w->xk = calloc(N, sizeof(double));
	w->lam = calloc(M, sizeof(double));
	w->nu = calloc(N, sizeof(double));
	w->off = calloc(N, sizeof(double));
	w->before = calloc(N * K, sizeof(double));
	w->last = calloc(N * K, sizeof(double));
	if (!w->gamma || !w->tot || !w->lambda || !w->item || !w->res || !w->a || !w->cap ||
	    !w->A || !w->B || !w->hi || !w->xk || !w->lam || !w->nu || !w->off || !w->before ||
	    !w->last)
		return -ENOMEM;
	return 0;
}

/*
 * Best response of pool k with the other pools fixed. Returns the largest
 * change of any x_{n,k} (or a negative errno) and updates x, tot.
 */
static double best_response(const struct fs_problem *p, struct apf_work *w, size_t k, double alpha,
			    double tol, bool warm, double *x, int *ret)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	size_t ni = 0, mr = 0;
	double move = 0;

	*ret = 0;
	for (size_t r = 0; r < M; r++)
		w->res[r] = SIZE_MAX;
	for (size_t n = 0; n < N; n++) {
		const double g = w->gamma[n * K + k];
		double other;
		if (g <= 0)
			continue;
		other = fmax(0, w->tot[n] - x[n * K + k]);
		w->item[ni] = n;
		w->A[ni] = fs_weight(p, n) * pow(g, 1 - 1 / alpha);
		w->B[ni] = other;
		w->hi[ni] = fmax(0, fs_max_tasks(p, n) - other);
		w->off[ni] = w->nu[n];
		for (size_t r = 0; r < M; r++)
			if (p->demand[n * M + r] > 0 && w->res[r] == SIZE_MAX)
				w->res[r] = mr++;
		ni++;
	}
	if (!ni)
		return 0;
	for (size_t r = 0; r < M; r++)
		if (w->res[r] != SIZE_MAX)
			w->cap[w->res[r]] = 1;
	for (size_t i = 0; i < ni; i++) {
		const size_t n = w->item[i];
		for (size_t r = 0; r < M; r++)
			if (w->res[r] != SIZE_MAX)
				w->a[i * mr + w->res[r]] =
				    p->demand[n * M + r] / p->capacity[k * M + r];
	}

	/* Warm prices are stored by resource index, so unpack/pack around the call. */
	double *lam = w->lam;
	for (size_t r = 0; r < M; r++)
		if (w->res[r] != SIZE_MAX)
			lam[w->res[r]] = w->lambda[k * M + r];
	const struct fs_dual_problem dp = {
	    .n = ni,
	    .m = mr,
	    .a = w->a,
	    .cap = w->cap,
	    .alpha = alpha,
	    .A = w->A,
	    .B = w->B,
	    .hi = w->hi,
	    .offset = w->off,
	};
	const struct fs_dual_options o = {.tol = 1e-3 * tol, .warm = warm};
	*ret = fs_dual_solve(&dp, &o, lam, w->xk, NULL);
	if (*ret == -ETIMEDOUT)
		*ret = 0; /* feasible point; the outer loop judges convergence */
	if (*ret < 0)
		return 0;
	for (size_t r = 0; r < M; r++)
		if (w->res[r] != SIZE_MAX)
			w->lambda[k * M + r] = lam[w->res[r]];
	for (size_t i = 0; i < ni; i++) {
		const size_t n = w->item[i];
		const double old = x[n * K + k];
		move = fmax(move, fabs(w->xk[i] - old));
		x[n * K + k] = w->xk[i];
		w->tot[n] = w->B[i] + w->xk[i];
	}
	return move;
}

/*
 * Near-degenerate equilibria (a near-continuum of per-pool splits) make best
 * responses crawl: successive sweeps move x by almost the same vector,
 * shrinking by a ratio r close to 1. Then jump ahead by the rest of that
 * geometric series, r/(1-r) times the last move, but at most MAX_JUMP sweeps'
 * worth (the drift is not exactly geometric; longer jumps were measured to
 * overshoot). Harmless for correctness: a pool's best response depends only on
 * the other pools' allocations, and every answer is the output of a full
 * sweep after the jump.
 */
static void extrapolate(const struct fs_problem *p, struct apf_work *w, double *x)
{
	const size_t N = p->n_tenants, K = p->n_pools, NK = N * K;
	double dot = 0, nn = 0, np = 0, r, f;

	for (size_t i = 0; i < NK; i++) {
		const double d = x[i] - w->before[i];
		dot += d * w->last[i];
		nn += d * d;
		np += w->last[i] * w->last[i];
		w->last[i] = d;
	}
	if (!(nn > 0 && np > 0) || dot < 0.999 * sqrt(nn * np))
		return;
	r = sqrt(nn / np);
	if (r < 0.5 || r >= 1)
		return;
	f = fmin(r / (1 - r), MAX_JUMP);
	for (size_t n = 0; n < N; n++) {
		w->tot[n] = 0;
		for (size_t k = 0; k < K; k++) {
			double *v = &x[n * K + k];
			if (w->gamma[n * K + k] > 0)
				*v = fmax(0, *v + f * w->last[n * K + k]);
			w->tot[n] += *v;
		}
	}
	for (size_t i = 0; i < NK; i++)
		w->last[i] = 0; /* the next jump needs two fresh sweeps */
}

/*
 * max_tasks couples the pools: with per-pool caps alone, best responses can
 * stall where one pool holds a capped tenant that another pool could serve
 * more cheaply -- an equilibrium of the per-pool games, but for alpha = 1 not
 * the global PF optimum (not even Pareto). So for alpha = 1 the cap gets one
 * shared price nu_n, the global KKT multiplier: the marginal utility at the
 * cap (phi_n / max_tasks_n, the same on every pool) minus the tenant's lowest
 * price on an eligible pool, 0 when the cap does not bind. (For alpha > 1
 * pools value tasks differently and this fixed point can cycle, so it is not
 * used there.) Returns the largest change relative to the marginal utility.
 */
static double update_cap_prices(const struct fs_problem *p, struct apf_work *w, double alpha)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	double change = 0;

	for (size_t n = 0; n < N; n++) {
		const double cap = fs_max_tasks(p, n), phi = fs_weight(p, n);
		double nu = 0, unit = 0;
		if (!isfinite(cap))
			continue;
		for (size_t k = 0; k < K; k++) {
			const double g = w->gamma[n * K + k];
			double price = 0, marginal;
			if (g <= 0)
				continue;
			for (size_t r = 0; r < M; r++)
				if (p->demand[n * M + r] > 0)
					price += w->lambda[k * M + r] * p->demand[n * M + r] /
						 p->capacity[k * M + r];
			marginal = pow(cap / (phi * g), -alpha) / g;
			unit = fmax(unit, marginal);
			nu = fmax(nu, marginal - price);
		}
		if (unit > 0)
			change = fmax(change, fabs(nu - w->nu[n]) / unit);
		w->nu[n] = nu;
	}
	return change;
}

/* Per-tenant result fields: the weighted VDS criterion and the bottleneck on
 * the pool that hosts most of the tenant's tasks. */
static void finish(const struct fs_problem *p, struct fs_solution *out, const struct apf_work *w,
		   double tol)
{
	const size_t N = p->n_tenants, K = p->n_pools;

	fs_solution_finish(out, p, tol);
	for (size_t n = 0; n < N; n++) {
		double share = INFINITY, most = 0;
		size_t main = SIZE_MAX;
		for (size_t k = 0; k < K; k++) {
			const double g = w->gamma[n * K + k];
			if (g <= 0)
				continue;
			share = fmin(share, out->tenant[n].total / (fs_weight(p, n) * g));
			if (out->x[n * K + k] > most) {
				most = out->x[n * K + k];
				main = k;
			}
		}
		out->tenant[n].share = isfinite(share) ? share : 0;
		out->tenant[n].certificate =
		    main == SIZE_MAX ? FS_NO_RESOURCE : out->bottleneck[n * K + main];
	}
}

/*
 * Gauss-Seidel best responses from x until no x_{n,k} moves by more than tol
 * (relative). Returns 0 (converged), -ETIMEDOUT after max sweeps, or a
 * best-response error; *iterations counts the sweeps.
 */
static int run_sweeps(const struct fs_problem *p, struct apf_work *w, double alpha, double tol,
		      int max, double *x, int *iterations, struct fs_error *err)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	bool converged = false;
	int ret = 0;

	/* No warm state from an earlier start. */
	memset(w->lambda, 0, K * M * sizeof(double));
	memset(w->nu, 0, N * sizeof(double));
	memset(w->last, 0, N * K * sizeof(double));
	for (size_t n = 0; n < N; n++) {
		w->tot[n] = 0;
		for (size_t k = 0; k < K; k++)
			w->tot[n] += x[n * K + k];
	}
	for (*iterations = 0; *iterations < max && !converged;) {
		double move = 0, scale = 1;
		++*iterations;
		memcpy(w->before, x, N * K * sizeof(double));
		for (size_t k = 0; k < K; k++) {
			move = fmax(move,
				    best_response(p, w, k, alpha, tol, *iterations > 1, x, &ret));
			if (ret < 0) {
				snprintf(err->msg, sizeof(err->msg),
					 "apf: pool %zu best response failed (%d)", k, ret);
				return ret;
			}
		}
		for (size_t n = 0; n < N; n++)
			scale = fmax(scale, w->tot[n]);
		/* Shared cap prices only for alpha = 1, where every pool values a
		 * task of n alike (phi_n / x_n) so one price is well defined; for
		 * alpha > 1 the per-pool hard caps are the game's constraints. */
		converged =
		    (alpha != 1 || update_cap_prices(p, w, alpha) <= tol) && move <= tol * scale;
		if (!converged && *iterations + 1 < max)
			extrapolate(p, w, x);
	}
	return converged ? 0 : -ETIMEDOUT;
}

int fs_solve_apf(const struct fs_problem *p, const struct fs_options *opt, struct fs_solution *out,
		 struct fs_error *err)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	const double alpha = opt ? opt->alpha : INFINITY;
	const double tol = opt && opt->tol > 0 ? opt->tol : FS_DEFAULT_TOL;
	const int sweeps = opt && opt->max_iter > 0 ? opt->max_iter : DEFAULT_SWEEPS;
	struct apf_work w = {0};
	struct fs_apf_ipm_stats st;
	double *drf = NULL, *lower = NULL;
	int ret;

	if (!(alpha > 0)) {
		snprintf(err->msg, sizeof(err->msg),
			 "apf: alpha %g must be > 0 (INFINITY selects psdsf)", alpha);
		return -EINVAL;
	}
	if (isinf(alpha))
		return fs_solve_psdsf(p, opt, out, err);

	ret = work_alloc(&w, N, K, M);
	drf = calloc(N * K + 1, sizeof(double));
	lower = calloc(N * K + 1, sizeof(double));
	if (ret < 0 || !drf || !lower)
		goto nomem;
	/* Per-server DRF is a start where every served tenant has x_n > 0, which
	 * alpha > 1 needs (its utility is singular at 0). */
	ret = fs_per_server_drf(p, w.gamma, out->x, w.tot, tol);
	if (ret < 0)
		goto nomem;
	memcpy(drf, out->x, N * K * sizeof(double));
	/* One pool: its best response is the answer (one exact dual solve),
	 * which the sweeps confirm in two rounds: 10-50x faster than the
	 * interior point at N = 1000-10,000. */
	if (K == 1) {
		ret = run_sweeps(p, &w, alpha, tol, sweeps, out->x, &out->iterations, err);
		if (ret != -ETIMEDOUT)
			goto done;
		memcpy(out->x, drf, N * K * sizeof(double));
	}
	ret = fs_apf_ipm(p, alpha, tol, 0, out->x, &st);
	if (ret == 0) {
		out->iterations = st.iterations;
		goto done;
	}
	if (ret == -ENOMEM)
		goto nomem;
	/*
	 * Best responses take over, from the first start they settle from:
	 * the interior point's best iterate when it got close (it can stall
	 * near 1e-4 for alpha 8, from where the sweeps settle in a few dozen
	 * rounds); the equilibrium at alpha / 2, alpha / 4, ... (the first the
	 * interior point reaches); per-server DRF. Measured on the 34 dumps and
	 * vectors: from DRF alone the sweeps did not settle on 2 at alpha 8,
	 * from the alpha / 2 equilibrium on 1 at alpha 6 where DRF did.
	 */
	ret = -ETIMEDOUT;
	if (st.kkt <= IPM_CLOSE)
		ret = run_sweeps(p, &w, alpha, tol, sweeps, out->x, &out->iterations, err);
	if (ret == -ETIMEDOUT) {
		int found = -ETIMEDOUT;
		for (double a = alpha / 2; a >= 1 && found == -ETIMEDOUT; a /= 2) {
			memcpy(lower, drf, N * K * sizeof(double));
			found = fs_apf_ipm(p, a, tol, 0, lower, NULL);
		}
		if (found == -ENOMEM)
			goto nomem;
		if (found == 0) {
			memcpy(out->x, lower, N * K * sizeof(double));
			ret = run_sweeps(p, &w, alpha, tol, sweeps, out->x, &out->iterations, err);
		}
	}
	if (ret == -ETIMEDOUT) {
		memcpy(out->x, drf, N * K * sizeof(double));
		ret = run_sweeps(p, &w, alpha, tol, sweeps, out->x, &out->iterations, err);
	}
	if (ret == -ETIMEDOUT)
		snprintf(err->msg, sizeof(err->msg),
			 "apf: best responses did not settle within %d sweeps (alpha %g)", sweeps,
			 alpha);
done:
	finish(p, out, &w, tol);
	goto out;
nomem:
	ret = -ENOMEM;
	snprintf(err->msg, sizeof(err->msg), "apf: out of memory for %zu x %zu allocation", N, K);
out:
	free(drf);
	free(lower);
	work_free(&w);
	return ret;
}
