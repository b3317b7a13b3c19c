/* SPDX-License-Identifier: MIT */
/*
 * Exact weighted max-min fairness for criteria linear in a tenant's total
 * (TSF, C-DRFH): LP water-filling of ALGORITHMS.md 2.3.
 *
 * Both criteria have the form U_n = u_n x_n (u_n = 1/(phi_n gamma_n^TSF) for
 * TSF, max_r d_{n,r}/(phi_n sum_k c_{k,r}) for C-DRFH), so one routine serves
 * both. Each round maximises the common level t of the unfrozen tenants; a
 * tenant whose level row has a positive optimal dual cannot rise above t in
 * any optimum (complementary slackness), so it is frozen there. The duals
 * of the level rows sum to 1, so every round freezes at least one tenant and
 * the loop ends after at most N LPs; usually far fewer.
 *
 * LP variables are z_{n,k} = x_{n,k} / unit_n plus t, with units chosen each
 * round so that every column is O(1): an unfrozen tenant's z is the
 * criterion it earns on pool k, scaled so that the lowest level an unfrozen
 * tenant could reach alone is 1 (level row sum_k z >= t), a frozen tenant's
 * z is the fraction of its now fixed total x_n on pool k (sum_k z >= 1).
 * Measuring x_{n,k} itself (or as a fraction of the pool) gave the LP values
 * 1e12 apart when weights are 1e6 and 1e-6 (a tenant's part of a level is
 * x ~ phi t): below the simplex's resolution for the light tenants, and it
 * stopped with "numerical trouble" (issue 16); a common scale alone moved
 * the trouble to the last rounds, where frozen heavy tenants and light ones
 * 1e12 higher share the capacity rows.
 */
#include "policy.h"
#include "lp.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tenant is frozen when its level row's dual exceeds this (duals of the
 * level rows sum to 1; smaller values are indistinguishable from noise). */
#define FREEZE_DUAL 1e-6
/* Frozen levels are imposed this much (relative) below the value found, so
 * round-off cannot make a later round infeasible. */
#define LEVEL_SLACK 1e-10

struct mm {
	const struct fs_problem *p;
	const double *u; /* [N] criterion per task; 0: tenant left out */
	size_t n_pairs;	 /* eligible (n, k) with gamma > 0 */
	size_t *pair_n, *pair_k;
	double *v;    /* [N] unit_n: tasks per unit of z (see above) */
	double *solo; /* [N] tasks n could run alone (sum of gamma, capped) */
	size_t n_rows, n_cap_rows, n_tcap_rows;
	size_t *tcap_of;  /* [N]: row of n's max_tasks cap, SIZE_MAX if none */
	size_t *level_of; /* [N]: row of n's level constraint, SIZE_MAX if none */
	double *a, *b, *c, *z, *dual;
};

static void mm_free(struct mm *m)
{
	free(m->pair_n);
	free(m->pair_k);
	free(m->v);
	free(m->solo);
	free(m->tcap_of);
	free(m->level_of);
	free(m->a);
	free(m->b);
	free(m->c);
	free(m->z);
	free(m->dual);
}

/* Counts the capacity rows worth writing: (k, r) with c > 0 and some
 * eligible tenant demanding r. */
static bool cap_row_used(const struct mm *m, size_t k, size_t r)
{
	const struct fs_problem *p = m->p;

	if (p->capacity[k * p->n_resources + r] <= 0)
		return false;
	for (size_t q = 0; q < m->n_pairs; q++)
		if (m->pair_k[q] == k && p->demand[m->pair_n[q] * p->n_resources + r] > 0)
			return true;
	return false;
}

static int mm_init(struct mm *m, const struct fs_problem *p, const double *u)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	size_t row = 0;

	memset(m, 0, sizeof(*m));
	m->p = p;
	m->u = u;
	m->pair_n = calloc(N * K, sizeof(size_t));
	m->pair_k = calloc(N * K, sizeof(size_t));
	m->v = calloc(N, sizeof(double));
	m->solo = calloc(N, sizeof(double));
	m->tcap_of = calloc(N, sizeof(size_t));
	m->level_of = calloc(N, sizeof(size_t));
	if (!m->pair_n || !m->pair_k || !m->v || !m->solo || !m->tcap_of || !m->level_of)
		return -ENOMEM;
	for (size_t n = 0; n < N; n++) {
		for (size_t k = 0; k < K && u[n] > 0; k++) {
			double g = fs_gamma(p, n, k);
			if (g > 0) {
				m->pair_n[m->n_pairs] = n;
				m->pair_k[m->n_pairs++] = k;
				m->solo[n] += g;
			}
		}
		m->solo[n] = fmin(m->solo[n], fs_max_tasks(p, n));
	}
	for (size_t k = 0; k < K; k++)
		for (size_t r = 0; r < M; r++)
			m->n_cap_rows += cap_row_used(m, k, r);
	row = m->n_cap_rows;
	for (size_t n = 0; n < N; n++) {
		m->tcap_of[n] = SIZE_MAX;
		if (u[n] > 0 && isfinite(fs_max_tasks(p, n))) {
			m->tcap_of[n] = row++;
			m->n_tcap_rows++;
		}
	}
	for (size_t n = 0; n < N; n++)
		m->level_of[n] = u[n] > 0 ? row++ : SIZE_MAX;
	m->n_rows = row;

	const size_t vars = m->n_pairs + 1;
	m->a = calloc(m->n_rows * vars + 1, sizeof(double));
	m->b = calloc(m->n_rows + 1, sizeof(double));
	m->c = calloc(vars, sizeof(double));
	m->z = calloc(vars, sizeof(double));
	m->dual = calloc(m->n_rows + 1, sizeof(double));
	if (!m->a || !m->b || !m->c || !m->z || !m->dual)
		return -ENOMEM;
	m->c[m->n_pairs] = 1.0; /* maximise t */
	return 0;
}

/* The rows that depend on the units: unfrozen tenants' 1 / (u_n scale),
 * frozen tenants' fixed totals level_n / u_n. */
static void mm_scale(struct mm *m, double scale, const bool *frozen, const double *level)
{
	const struct fs_problem *p = m->p;
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	const size_t vars = m->n_pairs + 1;
	size_t row = 0;

	for (size_t n = 0; n < N; n++)
		if (m->u[n] > 0)
			m->v[n] = frozen[n] ? level[n] / m->u[n] : 1 / (m->u[n] * scale);
	for (size_t k = 0; k < K; k++)
		for (size_t r = 0; r < M; r++) {
			if (!cap_row_used(m, k, r))
				continue;
			const double cap = p->capacity[k * M + r];
			for (size_t q = 0; q < m->n_pairs; q++)
				if (m->pair_k[q] == k)
					m->a[row * vars + q] = p->demand[m->pair_n[q] * M + r] *
							       m->v[m->pair_n[q]] / cap;
			m->b[row++] = 1.0;
		}
	for (size_t q = 0; q < m->n_pairs; q++) {
		const size_t n = m->pair_n[q];
		if (m->tcap_of[n] != SIZE_MAX)
			m->a[m->tcap_of[n] * vars + q] = m->v[n] / fs_max_tasks(p, n);
		m->a[m->level_of[n] * vars + q] = -1;
	}
	for (size_t n = 0; n < N; n++)
		if (m->tcap_of[n] != SIZE_MAX)
			m->b[m->tcap_of[n]] = 1.0;
}

/* One round: max t s.t. U_n >= t (unfrozen), U_n >= L_n (frozen); levels
 * in units of u, *scale receives the round's factor (t / scale is U). */
static int mm_round(struct mm *m, const bool *frozen, const double *level, int *pivots,
		    double *scale)
{
	const size_t vars = m->n_pairs + 1;
	struct fs_lp lp = {
	    .n_vars = vars,
	    .n_le = m->n_rows,
	    .c = m->c,
	    .a_le = m->a,
	    .b_le = m->b,
	};
	struct fs_lp_result res = {.x = m->z, .dual_le = m->dual};
	double lowest = INFINITY;

	for (size_t n = 0; n < m->p->n_tenants; n++)
		if (!frozen[n] && m->solo[n] > 0)
			lowest = fmin(lowest, m->u[n] * m->solo[n]);
	*scale = isfinite(lowest) && lowest > 0 ? 1 / lowest : 1;
	mm_scale(m, *scale, frozen, level);
	for (size_t n = 0; n < m->p->n_tenants; n++) {
		const size_t row = m->level_of[n];
		if (row == SIZE_MAX)
			continue;
		m->a[row * vars + m->n_pairs] = frozen[n] ? 0.0 : 1.0;
		m->b[row] = frozen[n] ? -(1 - LEVEL_SLACK) : 0.0;
	}
	int ret = fs_lp_maximize(&lp, &res);
	*pivots += res.pivots;
	return ret;
}

/* Ratio of the largest to the smallest level a served tenant could reach
 * alone: how far apart the LP's numbers are. */
static double level_span(const struct mm *m)
{
	double hi = 0, lo = INFINITY;

	for (size_t n = 0; n < m->p->n_tenants; n++)
		if (m->u[n] > 0 && m->solo[n] > 0) {
			hi = fmax(hi, m->u[n] * m->solo[n]);
			lo = fmin(lo, m->u[n] * m->solo[n]);
		}
	return hi > 0 ? hi / lo : 1;
}

static int maxmin_linear(const struct fs_problem *p, const double *u, const char *rule,
			 struct fs_solution *out, struct fs_error *err)
{
	const size_t N = p->n_tenants, K = p->n_pools;
	struct mm m;
	bool *frozen = calloc(N, sizeof(bool));
	double *level = calloc(N, sizeof(double));
	int ret, lps = 0, pivots = 0;
	size_t left = 0;

	ret = mm_init(&m, p, u);
	if (ret < 0 || !frozen || !level) {
		ret = -ENOMEM;
		snprintf(err->msg, sizeof(err->msg),
			 "%s: out of memory for %zu tenants x %zu pools", rule, N, K);
		goto out;
	}
	for (size_t n = 0; n < N; n++) {
		frozen[n] = m.level_of[n] == SIZE_MAX;
		left += !frozen[n];
	}
	while (left > 0) {
		double scale;
		ret = mm_round(&m, frozen, level, &pivots, &scale);
		lps++;
		if (ret < 0) {
			snprintf(err->msg, sizeof(err->msg),
				 "%s: LP %d failed (%s), %zu tenants unfrozen: their "
				 "solo levels span %.1e, beyond double precision; bring "
				 "weights or demands closer",
				 rule, lps,
				 ret == -EINVAL	  ? "infeasible"
				 : ret == -ERANGE ? "unbounded"
				 : ret == -ENOMEM ? "out of memory"
						  : "numerical trouble",
				 left, level_span(&m));
			goto out;
		}
		const double t = m.z[m.n_pairs] / scale;
		size_t best = SIZE_MAX, froze = 0;
		for (size_t n = 0; n < N; n++) {
			if (frozen[n])
				continue;
			const double y = m.dual[m.level_of[n]];
			if (best == SIZE_MAX || y > m.dual[m.level_of[best]])
				best = n;
			if (y > FREEZE_DUAL) {
				frozen[n] = true;
				level[n] = t;
				froze++;
			}
		}
		if (!froze) { /* duals all tiny: freeze the most constrained */
			frozen[best] = true;
			level[best] = t;
			froze = 1;
		}
		left -= froze;
	}
	/* The last LP's point meets every level: it is the allocation. */
	for (size_t q = 0; q < m.n_pairs; q++)
		out->x[m.pair_n[q] * K + m.pair_k[q]] = m.z[q] * m.v[m.pair_n[q]];
	out->iterations = lps;
	ret = 0;
out:
	mm_free(&m);
	free(frozen);
	free(level);
	return ret;
}

static void finish(const struct fs_problem *p, const double *u, const struct fs_options *opt,
		   struct fs_solution *out)
{
	const size_t K = p->n_pools;

	fs_solution_finish(out, p, opt ? opt->tol : 0);
	for (size_t n = 0; n < p->n_tenants; n++) {
		size_t main_k = 0;
		out->tenant[n].share = u[n] * out->tenant[n].total;
		for (size_t k = 1; k < K; k++)
			if (out->x[n * K + k] > out->x[n * K + main_k])
				main_k = k;
		out->tenant[n].certificate =
		    out->tenant[n].total > 0 ? out->bottleneck[n * K + main_k] : FS_NO_RESOURCE;
	}
}

/* gamma_n^TSF (1.6): sum over pools of min_r c/d ignoring placement, but a
 * pool lacking a demanded resource contributes 0 (errata 14). */
static double tsf_gamma(const struct fs_problem *p, size_t n)
{
	const size_t M = p->n_resources;
	double sum = 0;

	for (size_t k = 0; k < p->n_pools; k++) {
		double g = INFINITY;
		for (size_t r = 0; r < M; r++)
			if (p->demand[n * M + r] > 0 &&
			    p->capacity[k * M + r] / p->demand[n * M + r] < g)
				g = p->capacity[k * M + r] / p->demand[n * M + r];
		if (isfinite(g))
			sum += g;
	}
	return sum;
}

static bool served(const struct fs_problem *p, size_t n)
{
	for (size_t k = 0; k < p->n_pools; k++)
		if (fs_gamma(p, n, k) > 0)
			return true;
	return false;
}

static int solve_with(const struct fs_problem *p, const struct fs_options *opt,
		      struct fs_solution *out, struct fs_error *err, bool tsf)
{
	const size_t N = p->n_tenants, M = p->n_resources;
	double *u = calloc(N, sizeof(double));
	int ret;

	if (!u) {
		snprintf(err->msg, sizeof(err->msg), "%s: out of memory", tsf ? "tsf" : "cdrfh");
		return -ENOMEM;
	}
	for (size_t n = 0; n < N; n++) {
		if (!served(p, n))
			continue; /* gets 0; fs_solution_finish marks it unserved */
		if (tsf) {
			u[n] = 1.0 / (fs_weight(p, n) * tsf_gamma(p, n));
			continue;
		}
		/* C-DRFH: global dominant share per task; a served tenant has
		 * every demanded resource somewhere, so the sums are > 0. */
		double best = 0;
		for (size_t r = 0; r < M; r++) {
			double d = p->demand[n * M + r], tot = 0;
			for (size_t k = 0; k < p->n_pools && d > 0; k++)
				tot += p->capacity[k * M + r];
			if (d > 0 && d / tot > best)
				best = d / tot;
		}
		u[n] = best / fs_weight(p, n);
	}
	ret = maxmin_linear(p, u, tsf ? "tsf" : "cdrfh", out, err);
	if (ret == 0)
		finish(p, u, opt, out);
	free(u);
	return ret;
}

int fs_solve_tsf(const struct fs_problem *p, const struct fs_options *opt, struct fs_solution *out,
		 struct fs_error *err)
{
	out->rule = FS_RULE_TSF;
	return solve_with(p, opt, out, err, true);
}

int fs_solve_cdrfh(const struct fs_problem *p, const struct fs_options *opt,
		   struct fs_solution *out, struct fs_error *err)
{
	out->rule = FS_RULE_CDRFH;
	return solve_with(p, opt, out, err, false);
}
