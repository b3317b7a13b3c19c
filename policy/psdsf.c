/* SPDX-License-Identifier: MIT */
/*
 * PS-DSF by [P4] Algorithm I, read as ALGORITHMS.md 2.2 with its clarifications:
 * per-server DRF start (2.1); the Corollary-1 test over every eligible holder
 * with "<="; a tenant chosen as n_r for several resources released once; the
 * largest admissible beta; relative tolerance; stop after a round in which no
 * x moved by more than tol * gamma_{n,i}.
 *
 * max_tasks extension (not in [P4]): a tenant at its cap leaves every N_i and
 * never grows while it is there (its cap acts as a private saturated resource,
 * so it needs no bottleneck). Update-Allocation may still take tasks from it
 * when it is some resource's n_r, exactly as from any richer holder; it is
 * then below its cap and climbs again like everyone else. Without that, a
 * capped tenant with a large VDS could block the bottleneck of a poorer one
 * forever. z* is also limited so that no N* tenant overshoots its cap.
 *
 * Termination: each server procedure is cut after 16 (N + M) + 64 steps and
 * the outer loop after opt->max_iter rounds (default PSDSF_DEFAULT_ROUNDS).
 * Every step keeps x feasible, so when the round cap is hit x is still a
 * feasible allocation: the call returns 0 if it passes the Theorem-1
 * predicate (at max(1e-6, 1e3 tol)) and -ERANGE otherwise, with x, totals and
 * iterations filled either way. Rounds can be many: Update-Allocation moves
 * tasks between pools (one pool takes from a tenant, another gives back) by a
 * bounded amount per round, so a large migration takes rounds in proportion;
 * on random instances with N <= 40, K <= 8 we saw up to ~12,000 rounds
 * (0.26 s, N = 27, K = 4); the paper examples take 2-4.
 */
#include "psdsf_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PSDSF_DEFAULT_ROUNDS 20000

struct psdsf {
	const struct fs_problem *p;
	size_t N, K, M;
	double tol;
	double *x;     /* [N][K], the solution's array */
	double *gamma; /* [N][K] */
	double *tot;   /* [N] */
	double *x_old; /* [N][K], x at the start of the round */
	/* per-server scratch */
	bool *in_set, *in_min, *released; /* [N] */
	double *used, *free_, *dmin;	  /* [M] */
	bool *in_rstar;			  /* [M] */
	size_t *n_r;			  /* [M] */
};

static double vds(const struct psdsf *s, size_t n, size_t i)
{
	return s->tot[n] / (fs_weight(s->p, n) * s->gamma[n * s->K + i]);
}

static bool at_cap(const struct psdsf *s, size_t n)
{
	return fs_at_cap(s->tot[n], fs_max_tasks(s->p, n), s->tol);
}

/* A holder of r on i: tenants whose use of r there is above noise level. */
static bool holds(const struct psdsf *s, size_t m, size_t i, size_t r)
{
	const size_t M = s->M;

	return s->x[m * s->K + i] * s->p->demand[m * M + r] >
	       1e-3 * s->tol * s->p->capacity[i * M + r];
}

static void compute_used(struct psdsf *s, size_t i)
{
	const size_t M = s->M;

	memset(s->used, 0, M * sizeof(double));
	for (size_t n = 0; n < s->N; n++) {
		const double xi = s->x[n * s->K + i];
		if (xi > 0)
			for (size_t r = 0; r < M; r++)
				s->used[r] += xi * s->p->demand[n * M + r];
	}
}

/* The richest holder of r on i (eligible tenants only), or N when none. */
static size_t richest_holder(const struct psdsf *s, size_t i, size_t r, double *best)
{
	size_t arg = s->N;

	*best = -INFINITY;
	for (size_t m = 0; m < s->N; m++) {
		if (s->gamma[m * s->K + i] <= 0 || !holds(s, m, i, r))
			continue;
		double v = vds(s, m, i);
		if (v > *best) {
			*best = v;
			arg = m;
		}
	}
	return arg;
}

/* Update-Allocation(x, i) of 2.2; R*_i is in_rstar with each r's n_r already chosen. */
static void update_allocation(struct psdsf *s, size_t i, double s_min)
{
	const size_t N = s->N, K = s->K, M = s->M;
	const double *cap = &s->p->capacity[i * M];
	double z = INFINITY, beta = 1;

	memset(s->released, 0, N * sizeof(bool));
	memset(s->dmin, 0, M * sizeof(double));
	for (size_t r = 0; r < M; r++)
		s->free_[r] = fmax(0, cap[r] - s->used[r]);
	for (size_t r = 0; r < M; r++) {
		size_t m = s->n_r[r];
		if (!s->in_rstar[r] || s->released[m])
			continue;
		s->released[m] = true; /* clarification 3: count n_r once */
		for (size_t q = 0; q < M; q++)
			s->free_[q] += s->x[m * K + i] * s->p->demand[m * M + q];
	}
	for (size_t n = 0; n < N; n++) {
		if (!s->in_min[n])
			continue;
		const double slope = fs_weight(s->p, n) * s->gamma[n * K + i];
		for (size_t r = 0; r < M; r++)
			s->dmin[r] += slope * s->p->demand[n * M + r];
		/* max_tasks extension: do not push a minimum tenant past its cap. */
		z = fmin(z, (fs_max_tasks(s->p, n) - s->tot[n]) / slope);
	}
	for (size_t r = 0; r < M; r++)
		if (s->dmin[r] > 0)
			z = fmin(z, s->free_[r] / s->dmin[r]);
	z = fmax(z, 0);
	for (size_t r = 0; r < M; r++) {
		if (!s->in_rstar[r])
			continue;
		size_t m = s->n_r[r];
		double own = s->x[m * K + i] / (fs_weight(s->p, m) * s->gamma[m * K + i]);
		beta = fmin(beta, (vds(s, m, i) - s_min) / (z + own)); /* clarification 4 */
	}
	beta = fmax(beta, 0);
	for (size_t n = 0; n < N; n++) {
		double g = s->gamma[n * K + i], dx = 0;
		if (s->in_min[n])
			dx = beta * fs_weight(s->p, n) * g * z;
		else if (s->released[n])
			dx = -beta * s->x[n * K + i];
		else
			continue;
		s->x[n * K + i] = fmax(0, s->x[n * K + i] + dx);
		s->tot[n] += dx;
	}
}

/*
 * The "server procedure" of Algorithm I for server i. Returns false when the
 * step cap cut it short (the round then does not count as quiet).
 */
static bool server_procedure(struct psdsf *s, size_t i)
{
	const size_t N = s->N, K = s->K, M = s->M;
	const double tol = s->tol;
	const double *cap = &s->p->capacity[i * M];
	const size_t max_steps = 16 * (N + M) + 64;

	for (size_t n = 0; n < N; n++)
		s->in_set[n] = s->gamma[n * K + i] > 0 && !at_cap(s, n);

	for (size_t step = 0; step < max_steps; step++) {
		double s_min = INFINITY;
		bool any_rstar = false, removed = false;

		for (size_t n = 0; n < N; n++) {
			if (s->in_set[n] && at_cap(s, n))
				s->in_set[n] = false;
			if (s->in_set[n])
				s_min = fmin(s_min, vds(s, n, i));
		}
		if (s_min == INFINITY)
			return true;
		for (size_t n = 0; n < N; n++)
			s->in_min[n] = s->in_set[n] && vds(s, n, i) <= s_min * (1 + tol);

		compute_used(s, i);
		for (size_t r = 0; r < M; r++) {
			s->in_rstar[r] = false;
			if (!(cap[r] > 0) || s->used[r] < cap[r] * (1 - tol))
				continue;
			for (size_t n = 0; n < N && !s->in_rstar[r]; n++)
				s->in_rstar[r] = s->in_min[n] && s->p->demand[n * M + r] > 0;
			any_rstar |= s->in_rstar[r];
		}

		/* Corollary-1 test, full-set "<=" reading (clarification 1). */
		for (size_t r = 0; r < M && any_rstar; r++) {
			double best;
			if (!s->in_rstar[r])
				continue;
			s->n_r[r] = richest_holder(s, i, r, &best);
			if (best <= s_min * (1 + tol)) {
				for (size_t n = 0; n < N; n++)
					if (s->p->demand[n * M + r] > 0)
						s->in_set[n] = false;
				removed = true;
				break;
			}
		}
		if (removed)
			continue;

		update_allocation(s, i, s_min);
		/* A capped n_r that lost tasks is an ordinary member of N_i again. */
		for (size_t r = 0; r < M; r++)
			if (s->in_rstar[r] && !at_cap(s, s->n_r[r]))
				s->in_set[s->n_r[r]] = true;
	}
	return false;
}

/*
 * Clarification 6: a round is quiet when it leaves every x within tol *
 * gamma_{n,i} of where it started. Judging the round's net effect, not each
 * step, matters: Update-Allocation can shuttle a tenant's tasks out of and
 * back into a pool within one round and end where it began, forever.
 */
static bool round_is_quiet(const struct psdsf *s)
{
	for (size_t j = 0; j < s->N * s->K; j++)
		if (fabs(s->x[j] - s->x_old[j]) > s->tol * s->gamma[j])
			return false;
	return true;
}

static void psdsf_free(struct psdsf *s)
{
	free(s->gamma);
	free(s->tot);
	free(s->x_old);
	free(s->in_set);
	free(s->in_min);
	free(s->released);
	free(s->used);
	free(s->free_);
	free(s->dmin);
	free(s->in_rstar);
	free(s->n_r);
}

static int psdsf_alloc(struct psdsf *s)
{
	const size_t N = s->N, K = s->K, M = s->M;

	s->gamma = malloc(N * K * sizeof(double));
	s->tot = calloc(N, sizeof(double));
	s->x_old = calloc(N * K, sizeof(double));
	s->in_set = calloc(N, sizeof(bool));
	s->in_min = calloc(N, sizeof(bool));
	s->released = calloc(N, sizeof(bool));
	s->used = calloc(M, sizeof(double));
	s->free_ = calloc(M, sizeof(double));
	s->dmin = calloc(M, sizeof(double));
	s->in_rstar = calloc(M, sizeof(bool));
	s->n_r = calloc(M, sizeof(size_t));
	if (!s->gamma || !s->tot || !s->x_old || !s->in_set || !s->in_min || !s->released ||
	    !s->used || !s->free_ || !s->dmin || !s->in_rstar || !s->n_r)
		return -ENOMEM;
	return 0;
}

static void fill_results(const struct psdsf *s, struct fs_solution *out)
{
	const size_t N = s->N, K = s->K;

	for (size_t n = 0; n < N; n++) {
		double gmax = 0;
		size_t main_pool = K;
		for (size_t i = 0; i < K; i++) {
			double g = s->gamma[n * K + i];
			if (g <= 0)
				continue;
			gmax = fmax(gmax, g);
			if (main_pool == K || s->x[n * K + i] > s->x[n * K + main_pool])
				main_pool = i;
		}
		/* min_i x_n/(phi gamma_{n,i}) is taken at the largest gamma. */
		out->tenant[n].share =
		    gmax > 0 ? out->tenant[n].total / (fs_weight(s->p, n) * gmax) : 0;
		out->tenant[n].certificate =
		    main_pool < K ? out->bottleneck[n * K + main_pool] : FS_NO_RESOURCE;
	}
}

int fs_solve_psdsf(const struct fs_problem *p, const struct fs_options *opt,
		   struct fs_solution *out, struct fs_error *err)
{
	struct psdsf s = {
	    .p = p,
	    .N = p->n_tenants,
	    .K = p->n_pools,
	    .M = p->n_resources,
	    .tol = opt && opt->tol > 0 ? opt->tol : FS_DEFAULT_TOL,
	    .x = out->x,
	};
	const int max_rounds = opt && opt->max_iter > 0 ? opt->max_iter : PSDSF_DEFAULT_ROUNDS;
	bool quiet = false;
	int rounds = 0, ret;

	ret = psdsf_alloc(&s);
	if (!ret)
		ret = fs_per_server_drf(p, s.gamma, s.x, s.tot, s.tol);
	if (ret < 0) {
		if (err)
			snprintf(err->msg, sizeof(err->msg), "psdsf: out of memory for %zu x %zu",
				 s.N, s.K);
		goto out;
	}
	while (!quiet && rounds < max_rounds) {
		rounds++;
		memcpy(s.x_old, s.x, s.N * s.K * sizeof(double));
		quiet = true;
		for (size_t i = 0; i < s.K; i++)
			quiet &= server_procedure(&s, i);
		quiet &= round_is_quiet(&s);
	}
	fs_solution_finish(out, p, s.tol);
	fill_results(&s, out);
	out->rule = FS_RULE_PSDSF;
	out->iterations = rounds;
	if (!quiet) {
		/* The state is feasible after every step; accept it if Theorem 1 holds. */
		struct fs_error why = {{0}};
		if (!fs_check_psdsf(p, out->x, fmax(1e-6, 1e3 * s.tol), &why)) {
			if (err)
				snprintf(err->msg, sizeof(err->msg),
					 "psdsf: no convergence after %d rounds (feasible, but %s)",
					 rounds, why.msg);
			ret = -ERANGE;
		}
	}
out:
	psdsf_free(&s);
	return ret;
}
