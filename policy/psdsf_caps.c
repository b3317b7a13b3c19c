/* SPDX-License-Identifier: MIT */
/*
 * PS-DSF with per-pool caps (psdsf_caps.h, docs/fleet.md).
 *
 * Best response of pool k: with every tenant's tasks on the other pools fixed
 * (off_n), tenant n's weighted VDS on k is (off_n + x_{n,k}) / s_n with
 * s_n = phi_n gamma_{n,k}. Raise a level L; each climbing tenant holds
 * x_{n,k} = clamp(L s_n - off_n, 0, room_n), room_n = min(cap_{n,k},
 * max_tasks_n - off_n). Use of each resource is piecewise linear in L with
 * breakpoints where a tenant starts (L = off_n / s_n) or reaches its room;
 * walking the sorted breakpoints finds the first L where a resource
 * saturates. Every climbing tenant that demands it stops there: the resource
 * is its bottleneck (its VDS is L or, if it had not started, above L, and no
 * holder's VDS exceeds L). The others climb on. At most M such stops per pool.
 *
 * Sweeps of these best responses over the pools, from zero, until one moves
 * no x_{n,k} by more than tol gamma_{n,k}: then every pool is at its best
 * response, which is the extended Theorem-1 condition. The sweeps are
 * accelerated as the single-host solver's are (sweep_accel.c), in the first
 * half of the sweep cap, on the entries that can hold tasks only. Fleets
 * whose hosts fit their tenants' local demand end in a few plain sweeps (a
 * tenant reaches its cap); on oversubscribed ones the plain sweeps drift as
 * the single-host solver's did: at 100 hosts and 1,000 tenants, 1,000-9,000
 * sweeps where hosts are asked for 3-10 times what they have, seconds a
 * period (docs/policy-notes.md, issue 17).
 */
#include "psdsf_caps.h"
#include "error.h"
#include "psdsf_internal.h"
#include "sweep_accel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAPS_DEFAULT_SWEEPS 20000
/*
 * The first sweep that the acceleration follows (a warm start near the
 * answer's sooner: WARM_NEAR, below). Fleets whose hosts fit
 * their tenants' local demand settle in a few plain sweeps, where the
 * extrapolations' failed tries cost more than they save. Measured on
 * fleets of tests/bench/bench_caps.h (N = 1000, K = 100, each tenant on 5
 * hosts; N = 200, K = 8 on 3), same run, sweeps summed over the seeds,
 * cold / warm:
 *
 *   local demand      from sweep 2     from sweep 4     from sweep 8
 *   1 share, K 100    66 / 37          58 / 42          69 / 62
 *   3 shares, K 100   6405 / 1128      7528 / 1183      5698 / 884
 *   3 shares, K 8     1472 / 262       1455 / 270       1400 / 343
 *
 * (8 seeds, 6, and 20; the K = 100 rows' times follow their sweeps). The
 * oversubscribed K = 100 fleets, where the time is, gain most from the
 * eighth. (Before the acceleration ran on the entries alone, its history
 * also cost a page fault per 4 KB of 16 MB, which made the second sweep
 * slower still.)
 */
#define ACCEL_FROM 8
/*
 * A warm start (the fleet leader's, from the last period's answer) whose
 * sweep moves no entry by more than this (in units of its gamma, as the
 * stopping test) is near the answer, and its sweeps are then a geometric
 * tail that the acceleration's jumps shorten: it follows from the next
 * sweep instead of from ACCEL_FROM. Far from the answer, the moves of the
 * first sweeps are larger and it waits as before. Measured (warm sweeps
 * after bench_caps_change, N = 1000, K = 100, each tenant on 5 hosts, seeds
 * 1-20 / 21-40, sums): fitting fleets (1 share) M = 4 120 / 97 -> 83 / 72,
 * worst 19 / 13 -> 13 / 9, M = 8 40 / 51 -> 40 / 48; 3x oversubscribed
 * M = 4 3086 / 5331 -> 3100 / 5331, M = 8 2909 / 2164 -> 2909 / 2159; N =
 * 200, K = 8 on 3 hosts, seeds 1-40: fitting 81 -> 81, 3x 592 -> 483. The
 * acceleration from sweep 2 on every warm start instead: fitting 120 -> 75
 * but 3x 3086 -> 3748 and 2909 -> 4074 (worst 1393 -> 2489); 1e-3 here:
 * fitting 80 / 68, 3x within -3 / +1 %; 1e-4: fitting 94.
 */
#define WARM_NEAR 3e-4
/* a carried rate that keeps less than this of itself is recomputed (cross_to):
 * its relative rounding is then at most about 1e-13 */
#define CARRY_KEEP 1e-3
#define LBL	   48
/* shifts per entry that sort_bps allows itself before it calls qsort */
#define SORT_SHIFTS 8

struct bp {
	double level;
	size_t n;
	bool is_end; /* room reached, else start */
};

struct caps_solver {
	const struct fs_problem *p;
	const double *cap;
	size_t N, K, M;
	double tol;
	double *x, *gamma, *tot; /* [N][K], [N][K], [N] */
	/* The acceleration's point: the entries that can hold x (gamma > 0),
	 * tenant by tenant (a fleet's tenants each run on a few of its hosts:
	 * 5,000 of the 100,000 entries of N = 1000, K = 100 on the bench),
	 * in the order of x, so its sums are x's, bit for bit. Tenant n's
	 * are ent[ent_off[n] .. ent_off[n + 1]). */
	size_t n_ent, *ent, *ent_off; /* [n_ent] (n K + k), [N + 1] */
	double *xe, *xe_old;	      /* [n_ent]: x after and before the sweep */
	double *gamma_e, *cap_e;      /* [n_ent]; cap_e NULL without caps */
	double *off, *slope, *room;   /* [N] */
	bool *climbing;		      /* [N] */
	struct bp *bps;		      /* [2N]: one pool's, sorted */
	/* Pool k's breakpoints as 2 n + is_end, from order[2 act_off[k]], in
	 * the order of its last walk, climbing tenants' first: the levels move
	 * little from one sweep to the next, so sorting from that order
	 * (sort_bps) costs about one pass. parked [2N] is scratch. */
	size_t *order, *parked;
	double *use, *rate; /* [M] */
	size_t *linear;	    /* [M]: climbing demanders between their breakpoints */
	/* Pool k's tenants that can run there (gamma > 0): act[act_off[k] ..
	 * act_off[k + 1]). Only they ever hold x on k, so each pool's walk
	 * costs its own tenants, not all N (a fleet's hosts each run a few). */
	size_t *act, *act_off;
};

static int cmp_bp(const void *a, const void *b)
{
	const struct bp *x = a, *y = b;
	/* NaN (0 / 0: a weight so small that weight x gamma underflows to 0)
	 * after every number, so that this is a total order: sort_bps's
	 * insertions and qsort then agree, and the walk never meets it (an
	 * insertion that left it first stopped the walk there, every tenant
	 * at its room: x NaN). */
	const bool x_nan = isnan(x->level), y_nan = isnan(y->level);

	if (x_nan != y_nan)
		return x_nan ? 1 : -1;
	if (!x_nan && x->level != y->level)
		return x->level < y->level ? -1 : 1;
	/* Starts before ends at the same level, then by tenant: deterministic. */
	if (x->is_end != y->is_end)
		return x->is_end ? 1 : -1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/*
 * Sorts b by cmp_bp from the order it comes in: by insertion, which costs
 * a pass over an order that is almost sorted already, and by qsort once
 * the insertions have moved entries more than SORT_SHIFTS times each on
 * average (a pool's first walk, or a sweep that moved much). cmp_bp is a
 * total order on a pool's breakpoints, so either gives the same order.
 */
static void sort_bps(struct bp *b, size_t n)
{
	size_t budget = SORT_SHIFTS * n;

	for (size_t i = 1; i < n; i++) {
		const struct bp v = b[i];
		size_t j = i;

		for (; j > 0 && cmp_bp(&v, &b[j - 1]) < 0; j--)
			b[j] = b[j - 1];
		b[j] = v;
		if (i - j > budget) {
			qsort(b, n, sizeof(*b), cmp_bp);
			return;
		}
		budget -= i - j;
	}
}

static double cap_of(const struct caps_solver *s, size_t n, size_t k)
{
	return s->cap ? s->cap[n * s->K + k] : INFINITY;
}

/* x_{n,k} of a climbing tenant at level L. */
static double at_level(const struct caps_solver *s, size_t n, double L)
{
	return fmin(fmax(L * s->slope[n] - s->off[n], 0), s->room[n]);
}

/* Use of each resource on k at level L: fixed holders plus climbing tenants. */
static void use_at(struct caps_solver *s, size_t k, double L)
{
	const size_t M = s->M, K = s->K;

	memset(s->use, 0, M * sizeof(double));
	memset(s->rate, 0, M * sizeof(double));
	memset(s->linear, 0, M * sizeof(size_t));
	for (size_t a = s->act_off[k]; a < s->act_off[k + 1]; a++) {
		size_t n = s->act[a];
		const double *d = &s->p->demand[n * M];
		double xn = s->climbing[n] ? at_level(s, n, L) : s->x[n * K + k];
		/* The same expressions as the breakpoints, so that a
		 * tenant's slope counts exactly between its two. */
		bool linear = s->climbing[n] && L >= s->off[n] / s->slope[n] &&
			      L < (s->off[n] + s->room[n]) / s->slope[n];

		for (size_t r = 0; r < M; r++) {
			s->use[r] += xn * d[r];
			if (linear && d[r] > 0) {
				s->rate[r] += s->slope[n] * d[r];
				s->linear[r]++;
			}
		}
	}
}

/*
 * Moves use and rate from level L to next (> L), crossing the breakpoints at
 * or below next from *bi: a start adds its tenant's slope to the rate of what
 * it demands, an end takes it off. Returns false when an end took off all
 * but CARRY_KEEP of a resource's rate: what is left then carries the
 * rounding of the larger terms (weights 1e9 apart left a pool 4e-6 short of
 * full, 1e14 apart 15 %), and the caller recomputes exactly. A resource
 * with no linear demander left gets a rate of exactly 0.
 */
static bool cross_to(struct caps_solver *s, double L, double next, size_t nbp, size_t *bi)
{
	const size_t M = s->M;
	bool kept = true;

	for (size_t r = 0; r < M; r++)
		s->use[r] += s->rate[r] * (next - L);
	for (; *bi < nbp && s->bps[*bi].level <= next; (*bi)++) {
		const struct bp *b = &s->bps[*bi];
		const double *d = &s->p->demand[b->n * M];

		if (!s->climbing[b->n])
			continue; /* stopped: its x is fixed, counted in use */
		for (size_t r = 0; r < M; r++) {
			if (!(d[r] > 0))
				continue;
			if (b->is_end) {
				const double before = s->rate[r];
				s->rate[r] -= s->slope[b->n] * d[r];
				if (--s->linear[r] == 0)
					s->rate[r] = 0;
				else if (!(s->rate[r] > CARRY_KEEP * before))
					kept = false;
			} else {
				s->rate[r] += s->slope[b->n] * d[r];
				s->linear[r]++;
			}
		}
	}
	return kept;
}

/*
 * First level above L0 at which a resource demanded by a climbing tenant
 * saturates, walking breakpoints from index *bi; INFINITY when every climbing
 * tenant reaches its room first. *sat receives that resource. Use and rate
 * are exact at L0 (use_at) and carried from breakpoint to breakpoint
 * (cross_to): recomputing them over the pool's tenants at each one made the
 * walk O(tenants^2) a pool, half of a sweep at 100 hosts x 1000 tenants.
 * They are recomputed where cross_to says the carried rate lost its
 * precision, and at the breakpoint the saturation follows before it is
 * returned, so that the level returned is the one the walk recomputing at
 * every breakpoint returned.
 */
static double next_saturation(struct caps_solver *s, size_t k, double L0, size_t nbp, size_t *bi,
			      size_t *sat)
{
	const size_t M = s->M;
	const double *c = &s->p->capacity[k * M];
	double L = L0;
	bool exact = true; /* use and rate are use_at's at L */

	use_at(s, k, L);
	/* (use_at counted the breakpoints at or below L0) */
	while (*bi < nbp && s->bps[*bi].level <= L)
		(*bi)++;
	for (;;) {
		double next = *bi < nbp ? s->bps[*bi].level : INFINITY;
		double best = INFINITY;

		for (size_t r = 0; r < M; r++) {
			if (s->rate[r] <= 0)
				continue;
			double hit = L + (c[r] - s->use[r]) / s->rate[r];
			if (hit < best) {
				best = hit;
				*sat = r;
			}
		}
		if (best <= next && !exact) {
			use_at(s, k, L); /* carried: confirm with the exact ones */
			exact = true;
			continue;
		}
		if (best <= next)
			return fmax(best, L);
		if (!isfinite(next))
			return INFINITY;
		exact = !cross_to(s, L, next, nbp, bi);
		L = next;
		if (exact)
			use_at(s, k, L);
	}
}

/* Pool k's best response; returns the largest |change| / gamma. */
static double best_response(struct caps_solver *s, size_t k)
{
	const size_t K = s->K, M = s->M, a0 = s->act_off[k], a1 = s->act_off[k + 1];
	const double *c = &s->p->capacity[k * M];
	double moved = 0, L = 0;
	size_t nbp = 0, bi = 0, nparked = 0, *order = &s->order[2 * a0];

	for (size_t a = a0; a < a1; a++) {
		size_t n = s->act[a];
		double g = s->gamma[n * K + k];
		double xo = s->x[n * K + k];

		s->off[n] = s->tot[n] - xo;
		s->slope[n] = fs_weight(s->p, n) * g;
		s->room[n] = fmax(0, fmin(cap_of(s, n, k), fs_max_tasks(s->p, n) - s->off[n]));
		s->x[n * K + k] = 0;
		s->climbing[n] = s->room[n] > 0;
	}
	for (size_t e = 0; e < 2 * (a1 - a0); e++) {
		const size_t n = order[e] / 2;
		const bool is_end = order[e] % 2;

		if (!s->climbing[n])
			s->parked[nparked++] = order[e];
		else
			s->bps[nbp++] = (struct bp){is_end ? (s->off[n] + s->room[n]) / s->slope[n]
							   : s->off[n] / s->slope[n],
						    n, is_end};
	}
	sort_bps(s->bps, nbp);
	for (size_t e = 0; e < nbp; e++)
		order[e] = 2 * s->bps[e].n + s->bps[e].is_end;
	memcpy(&order[nbp], s->parked, nparked * sizeof(size_t));
	for (size_t stops = 0; stops <= M; stops++) {
		size_t sat = 0;
		double Ls = next_saturation(s, k, L, nbp, &bi, &sat);
		bool any = false;

		if (!isfinite(Ls)) {
			for (size_t a = a0; a < a1; a++)
				if (s->climbing[s->act[a]])
					s->x[s->act[a] * K + k] = s->room[s->act[a]];
			break;
		}
		L = Ls;
		use_at(s, k, L);
		/* Stop the demanders of every resource full at L (ties included). */
		for (size_t r = 0; r < M; r++) {
			if (r != sat && s->use[r] < c[r] * (1 - s->tol))
				continue;
			for (size_t a = a0; a < a1; a++) {
				size_t n = s->act[a];

				if (!s->climbing[n] || s->p->demand[n * M + r] <= 0)
					continue;
				s->x[n * K + k] = at_level(s, n, L);
				s->climbing[n] = false;
				any = true;
			}
		}
		if (!any) /* cannot happen: sat has a climbing demander */
			break;
	}
	/* The level walk is exact up to rounding; keep k within capacity. */
	for (size_t r = 0; r < M; r++) {
		double u = 0;
		for (size_t a = a0; a < a1; a++)
			u += s->x[s->act[a] * K + k] * s->p->demand[s->act[a] * M + r];
		if (u > c[r] && u > 0)
			for (size_t a = a0; a < a1; a++)
				if (s->p->demand[s->act[a] * M + r] > 0)
					s->x[s->act[a] * K + k] *= c[r] / u;
	}
	for (size_t a = a0; a < a1; a++) {
		size_t n = s->act[a];
		double g = s->gamma[n * K + k];
		double xn = s->x[n * K + k];
		double was = s->tot[n] - s->off[n];

		if (g > 0)
			moved = fmax(moved, fabs(xn - was) / g);
		s->tot[n] = s->off[n] + xn;
	}
	return moved;
}

static int validate_caps(const struct fs_problem *p, const double *cap, struct fs_error *err)
{
	char a[LBL], b[LBL];

	if (!cap)
		return 0;
	for (size_t n = 0; n < p->n_tenants; n++)
		for (size_t k = 0; k < p->n_pools; k++) {
			double v = cap[n * p->n_pools + k];
			if (isnan(v) || v < 0) {
				snprintf(err->msg, sizeof(err->msg),
					 "%s has a bad cap %g on %s (>= 0 or inf)",
					 fs_tenant_label(p, n, a, LBL), v,
					 fs_pool_label(p, k, b, LBL));
				return -EINVAL;
			}
		}
	return 0;
}

static void set_shares(const struct fs_problem *p, const double *cap, const double *gamma,
		       struct fs_solution *out)
{
	const size_t K = p->n_pools;

	for (size_t n = 0; n < p->n_tenants; n++) {
		double share = INFINITY;

		for (size_t k = 0; k < K; k++) {
			double g = gamma[n * K + k];
			if (g > 0 && (!cap || cap[n * K + k] > 0))
				share = fmin(share, out->tenant[n].total / (fs_weight(p, n) * g));
		}
		out->tenant[n].share = isfinite(share) ? share : 0;
		out->tenant[n].certificate = FS_NO_RESOURCE;
	}
}

static void gather(const struct caps_solver *s, double *xe)
{
	for (size_t e = 0; e < s->n_ent; e++)
		xe[e] = s->x[s->ent[e]];
}

/* After an extrapolation (sweep_accel) of xe: 0 <= x_{n,k} <= cap_{n,k},
 * x_n <= max_tasks_n, into x, and tot (x is 0 off the entries). */
static void project(void *ctx)
{
	struct caps_solver *s = ctx;

	for (size_t n = 0; n < s->N; n++) {
		const size_t e0 = s->ent_off[n], e1 = s->ent_off[n + 1];

		s->tot[n] = sweep_accel_clamp_row(&s->xe[e0], &s->gamma_e[e0],
						  s->cap_e ? &s->cap_e[e0] : NULL,
						  fs_max_tasks(s->p, n), e1 - e0);
		for (size_t e = e0; e < e1; e++)
			s->x[s->ent[e]] = s->xe[e];
	}
}

/* The entries of x that can hold tasks, and their arrays (struct
 * caps_solver): the pools' lists (act) hold the same entries, so their
 * count is act_off[K]. 0 or -ENOMEM. */
static int entries_alloc(struct caps_solver *s)
{
	const size_t N = s->N, K = s->K;

	s->n_ent = s->act_off[K];
	s->ent_off = malloc((N + 1) * sizeof(size_t));
	s->ent = malloc((s->n_ent + 1) * sizeof(size_t));
	s->xe = malloc((s->n_ent + 1) * sizeof(double));
	s->xe_old = malloc((s->n_ent + 1) * sizeof(double));
	s->gamma_e = malloc((s->n_ent + 1) * sizeof(double));
	s->cap_e = s->cap ? malloc((s->n_ent + 1) * sizeof(double)) : NULL;
	if (!s->ent_off || !s->ent || !s->xe || !s->xe_old || !s->gamma_e || (s->cap && !s->cap_e))
		return -ENOMEM;
	for (size_t n = 0, e = 0; n < N; n++) {
		s->ent_off[n] = e;
		for (size_t j = n * K; j < (n + 1) * K; j++)
			if (s->gamma[j] > 0) {
				s->ent[e] = j;
				s->gamma_e[e] = s->gamma[j];
				if (s->cap_e)
					s->cap_e[e] = s->cap[j];
				e++;
			}
	}
	s->ent_off[N] = s->n_ent;
	return 0;
}

static void entries_free(struct caps_solver *s)
{
	free(s->ent_off);
	free(s->ent);
	free(s->xe);
	free(s->xe_old);
	free(s->gamma_e);
	free(s->cap_e);
}

int fs_solve_psdsf_caps(const struct fs_problem *p, const double *cap, const struct fs_options *opt,
			struct fs_solution *out, struct fs_error *err)
{
	return fs_solve_psdsf_caps_from(p, cap, opt, NULL, out, err);
}

int fs_solve_psdsf_caps_from(const struct fs_problem *p, const double *cap,
			     const struct fs_options *opt, const double *x0,
			     struct fs_solution *out, struct fs_error *err)
{
	struct caps_solver s = {.p = p, .cap = cap};
	struct sweep_accel a = {0};
	struct sweep_accel_target t;
	int max_sweeps = opt && opt->max_iter > 0 ? opt->max_iter : CAPS_DEFAULT_SWEEPS;
	bool have_accel = false, no_accel = false; /* allocated; its allocation failed */
	int r;

	memset(out, 0, sizeof(*out));
	r = fs_problem_validate(p, err);
	if (r == 0)
		r = validate_caps(p, cap, err);
	if (r < 0)
		return r;
	r = fs_solution_init(out, p);
	if (r < 0) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return r;
	}
	out->rule = FS_RULE_PSDSF;
	s.N = p->n_tenants;
	s.K = p->n_pools;
	s.M = p->n_resources;
	s.tol = opt && opt->tol > 0 ? opt->tol : FS_DEFAULT_TOL;
	s.x = out->x;
	s.gamma = malloc(s.N * s.K * sizeof(double));
	s.tot = calloc(s.N, sizeof(double));
	s.off = malloc(s.N * sizeof(double));
	s.slope = malloc(s.N * sizeof(double));
	s.room = malloc(s.N * sizeof(double));
	s.climbing = malloc(s.N * sizeof(bool));
	s.bps = malloc(2 * s.N * sizeof(*s.bps));
	s.parked = malloc(2 * s.N * sizeof(size_t));
	s.use = malloc(s.M * sizeof(double));
	s.rate = malloc(s.M * sizeof(double));
	s.linear = malloc(s.M * sizeof(size_t));
	s.act = malloc((s.N * s.K + 1) * sizeof(size_t));
	s.act_off = calloc(s.K + 1, sizeof(size_t));
	s.order = malloc((2 * s.N * s.K + 1) * sizeof(size_t));
	if (!s.act || !s.act_off || !s.order || !s.gamma || !s.tot || !s.off || !s.slope ||
	    !s.room || !s.climbing || !s.bps || !s.parked || !s.use || !s.rate || !s.linear) {
		snprintf(err->msg, sizeof(err->msg), "out of memory for %zu tenants", s.N);
		r = -ENOMEM;
		goto out;
	}
	/* act is counted here, then filled, along x's rows (tenants in order
	 * on each pool): a pass down each column missed the cache at every
	 * entry once N K outgrew it (900,000 entries at N = 3000, K = 300).
	 * The fill leaves act_off[k] at pool k's end, the next one's start. */
	for (size_t n = 0; n < s.N; n++) {
		double *x = &s.x[n * s.K], *g = &s.gamma[n * s.K], tot = 0;

		for (size_t k = 0; k < s.K; k++) {
			double v = x0 ? x0[n * s.K + k] : 0;

			g[k] = fs_gamma(p, n, k);
			/* Where n cannot run, best_response() would zero it
			 * without counting it off tot: start it at 0. */
			if (!(v > 0) || !isfinite(v) || g[k] <= 0)
				v = 0;
			x[k] = v;
			tot += v;
			s.act_off[k + 1] += g[k] > 0;
		}
		s.tot[n] = tot;
	}
	for (size_t k = 0; k < s.K; k++)
		s.act_off[k + 1] += s.act_off[k];
	for (size_t n = 0; n < s.N; n++)
		for (size_t k = 0; k < s.K; k++)
			if (s.gamma[n * s.K + k] > 0)
				s.act[s.act_off[k]++] = n;
	for (size_t k = s.K; k > 0; k--)
		s.act_off[k] = s.act_off[k - 1];
	s.act_off[0] = 0;
	for (size_t e = 0; e < s.act_off[s.K]; e++) {
		s.order[2 * e] = 2 * s.act[e];
		s.order[2 * e + 1] = 2 * s.act[e] + 1;
	}

	r = -ERANGE;
	bool near = false; /* a warm start's sweep moved under WARM_NEAR */
	for (out->iterations = 1; out->iterations <= max_sweeps; out->iterations++) {
		/* From sweep ACCEL_FROM on, or the sweep after a warm start's
		 * move fell under WARM_NEAR (see both), in the first half: the
		 * second is plain sweeps, so that a run of extrapolations that
		 * pass their checks but cycle still ends (as in psdsf.c). */
		bool accel = !no_accel && (out->iterations >= ACCEL_FROM || near) &&
			     out->iterations <= max_sweeps / 2;
		double moved = 0;

		if (accel && !have_accel) {
			/* optional: without its memory, plain sweeps go on */
			if (entries_alloc(&s) < 0 || sweep_accel_alloc(&a, s.n_ent, s.gamma_e) < 0)
				accel = false;
			no_accel = !accel;
			have_accel = accel;
			t = (struct sweep_accel_target){.x = s.xe,
							.gamma = s.gamma_e,
							.tol = s.tol,
							.project = project,
							.ctx = &s};
		}
		if (accel)
			gather(&s, s.xe_old);
		for (size_t k = 0; k < s.K; k++)
			moved = fmax(moved, best_response(&s, k));
		if (moved <= s.tol) {
			r = 0;
			break;
		}
		near = near || (x0 && moved <= WARM_NEAR);
		if (!accel)
			continue;
		gather(&s, s.xe);
		sweep_accel_step(&a, &t, s.xe_old, moved, out->iterations);
	}
	if (out->iterations > max_sweeps)
		out->iterations = max_sweeps;
	fs_solution_finish_gamma(out, p, s.gamma, s.tol);
	set_shares(p, cap, s.gamma, out);
	out->guard = 1;
	/* Weights and a warm start that are finite can still overflow the
	 * levels (a weight of 1e300 times gamma, an x0 entry of 1e300), and a
	 * NaN move does not stop the sweeps (fmax drops it): say so rather
	 * than hand out what came of them. */
	bool finite = true;
	for (size_t j = 0; j < s.N * s.K && finite; j++)
		finite = isfinite(s.x[j]);
	if (!finite) {
		r = -ERANGE;
		snprintf(err->msg, sizeof(err->msg),
			 "capped PS-DSF: an allocation came out not finite (weights or the "
			 "warm start out of range)");
	} else if (r < 0 && fs_check_psdsf_caps(p, cap, out->x, fmax(1e-6, 1e3 * s.tol), NULL)) {
		r = 0;
	} else if (r < 0) {
		snprintf(err->msg, sizeof(err->msg), "capped PS-DSF did not settle in %d sweeps",
			 max_sweeps);
	}
out:
	sweep_accel_free(&a);
	free(s.gamma);
	entries_free(&s);
	free(s.tot);
	free(s.off);
	free(s.slope);
	free(s.room);
	free(s.climbing);
	free(s.bps);
	free(s.parked);
	free(s.order);
	free(s.use);
	free(s.rate);
	free(s.linear);
	free(s.act);
	free(s.act_off);
	return r;
}

/* The cap bound of feasibility, and whether n is at a cap on k. */
static bool at_pool_cap(const struct fs_problem *p, const double *cap, const double *x,
			const double *tot, size_t n, size_t k, double tol)
{
	const size_t K = p->n_pools;
	double g = fs_gamma(p, n, k);
	double mt = fs_max_tasks(p, n);

	if (isfinite(mt) && tot[n] >= mt * (1 - tol))
		return true;
	return cap && x[n * K + k] >= cap[n * K + k] - tol * fmax(g, cap[n * K + k]);
}

bool fs_check_psdsf_caps(const struct fs_problem *p, const double *cap, const double *x, double tol,
			 struct fs_error *why)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	double *tot = NULL, *use = NULL, *richest = NULL;
	char a[LBL], b[LBL];
	bool ok;

	if (!fs_check_feasible(p, x, tol, why))
		return false;
	tot = calloc(N, sizeof(double));
	use = malloc(M * sizeof(double));
	richest = malloc(M * sizeof(double));
	if (!tot || !use || !richest) {
		ok = fs_reject(why, "out of memory checking %zu tenants", N);
		goto out;
	}
	ok = true;
	for (size_t n = 0; n < N; n++)
		for (size_t k = 0; k < K; k++) {
			tot[n] += x[n * K + k];
			if (cap && x[n * K + k] > cap[n * K + k] * (1 + tol) + tol)
				ok = ok && fs_reject(why, "%s has %g tasks on %s, above its cap %g",
						     fs_tenant_label(p, n, a, LBL), x[n * K + k],
						     fs_pool_label(p, k, b, LBL), cap[n * K + k]);
		}
	for (size_t k = 0; k < K && ok; k++) {
		const double *cp = &p->capacity[k * M];

		for (size_t r = 0; r < M; r++) {
			use[r] = 0;
			richest[r] = -INFINITY;
		}
		for (size_t m = 0; m < N; m++) {
			double g = fs_gamma(p, m, k);
			for (size_t r = 0; r < M; r++) {
				double u = x[m * K + k] * p->demand[m * M + r];
				use[r] += u;
				if (g > 0 && u > tol * cp[r])
					richest[r] =
					    fmax(richest[r], tot[m] / (fs_weight(p, m) * g));
			}
		}
		for (size_t n = 0; n < N && ok; n++) {
			double g = fs_gamma(p, n, k);
			if (g <= 0 || at_pool_cap(p, cap, x, tot, n, k, tol))
				continue;
			double v = tot[n] / (fs_weight(p, n) * g);
			bool found = false;
			for (size_t r = 0; r < M && !found; r++)
				found = p->demand[n * M + r] > 0 && use[r] >= cp[r] * (1 - tol) &&
					v >= richest[r] * (1 - tol);
			if (!found)
				ok = fs_reject(
				    why,
				    "%s is below its cap on %s and has no bottleneck there "
				    "(weighted VDS %g)",
				    fs_tenant_label(p, n, a, LBL), fs_pool_label(p, k, b, LBL), v);
		}
	}
out:
	free(tot);
	free(use);
	free(richest);
	return ok;
}
