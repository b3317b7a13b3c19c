/* SPDX-License-Identifier: MIT */
/*
 * The warm repair of PS-DSF (policy/psdsf_repair.c), called directly:
 * - from a solution of the same instance it stays put;
 * - on random instances of realistic size (N 100-200, K 2-8 and K 10-16)
 *   where 1 % of the tenants change demand by up to +-20 %, every point it
 *   claims passes the feasibility and Theorem-1 predicates at 1e-9, it
 *   claims most of them (the measured rate, with a margin), and when it
 *   gives up the state is exactly as it was;
 * - cut short (one round), it gives up cleanly; one that cycles gives up
 *   long before a large round cap;
 * - where it settles, fs_solve_warm (which runs it first on two or more
 *   pools) ends there, with no sweep, the certificate passing the point;
 * - cold solves hand their sweeps' state to it, and end there where it
 *   settles.
 */
#include "testutil.h"

#include "psdsf_repair.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_TOL 1e-9
#define ROUNDS	  32 /* psdsf.c REPAIR_ROUNDS */

/* A solver's state for psdsf_repair, as fs_solve_psdsf_from builds it. */
struct state {
	struct psdsf_state st;
	double *gamma, *phi, *mt, *x, *tot;
};

static void state_init(struct state *s, const struct fs_problem *p, const double *x,
		       const double *level)
{
	const size_t N = p->n_tenants, K = p->n_pools;

	s->gamma = calloc(N * K, sizeof(double));
	s->phi = calloc(N, sizeof(double));
	s->mt = calloc(N, sizeof(double));
	s->x = calloc(N * K, sizeof(double));
	s->tot = calloc(N, sizeof(double));
	assert_non_null(s->gamma);
	assert_non_null(s->phi);
	assert_non_null(s->mt);
	assert_non_null(s->x);
	assert_non_null(s->tot);
	for (size_t n = 0; n < N; n++) {
		double t = 0;
		s->phi[n] = fs_weight(p, n);
		s->mt[n] = fs_max_tasks(p, n);
		for (size_t k = 0; k < K; k++) {
			const size_t j = n * K + k;
			s->gamma[j] = fs_gamma(p, n, k);
			s->x[j] = s->gamma[j] > 0 && x[j] > 0 ? x[j] : 0;
			t += s->x[j];
		}
		if (t > s->mt[n]) {
			for (size_t k = 0; k < K; k++)
				s->x[n * K + k] *= s->mt[n] / t;
			t = s->mt[n];
		}
		s->tot[n] = t;
	}
	s->st = (struct psdsf_state){
	    .p = p,
	    .N = N,
	    .K = K,
	    .M = p->n_resources,
	    .tol = FS_DEFAULT_TOL,
	    .gamma = s->gamma,
	    .phi = s->phi,
	    .mt = s->mt,
	    .x = s->x,
	    .tot = s->tot,
	    .previous = true,
	    .level = level,
	};
}

static void state_free(struct state *s)
{
	free(s->gamma);
	free(s->phi);
	free(s->mt);
	free(s->x);
	free(s->tot);
}

/* One test case: a random instance, its solution, and the repair's state
 * from that solution after count tenants' demands changed (0: none;
 * ONE_PERCENT: 1 % of them, at least one). */
#define ONE_PERCENT SIZE_MAX

struct repair_case {
	struct tu_instance in;
	struct fs_solution first;
	struct state s;
	double *x_in, *tot_in; /* the state as the repair gets it */
};

static void case_open(struct repair_case *c, uint64_t seed, size_t k_lo, size_t k_hi, size_t count)
{
	struct tu_rng g;
	struct fs_error err = {{0}};

	tu_rng_seed(&g, seed * 104729);
	const size_t n = tu_range(&g, 100, 200), m = tu_range(&g, 2, 4),
		     k = tu_range(&g, k_lo, k_hi);
	tu_random_instance(&c->in, &g, n, m, k,
			   TU_CAPS | TU_WEIGHTS | TU_PLACEMENT | TU_ZERO_DEMAND);
	const int r = fs_solve(&c->in.p, FS_RULE_PSDSF, NULL, &c->first, &err);
	if (r)
		print_error("fs_solve: %d %s\n", r, err.msg);
	assert_int_equal(r, 0);
	if (count == ONE_PERCENT)
		count = n / 100 ? n / 100 : 1;
	if (count)
		tu_perturb(&c->in, &g, count);
	state_init(&c->s, &c->in.p, c->first.x, c->first.level);
	c->x_in = malloc(n * k * sizeof(double));
	c->tot_in = malloc(n * sizeof(double));
	assert_non_null(c->x_in);
	assert_non_null(c->tot_in);
	memcpy(c->x_in, c->s.x, n * k * sizeof(double));
	memcpy(c->tot_in, c->s.tot, n * sizeof(double));
}

static void case_close(struct repair_case *c)
{
	free(c->x_in);
	free(c->tot_in);
	state_free(&c->s);
	fs_solution_free(&c->first);
	tu_instance_free(&c->in);
}

/* A repair that gave up leaves the state exactly as it was. */
static void assert_untouched(const struct repair_case *c)
{
	assert_memory_equal(c->s.x, c->x_in, c->in.p.n_tenants * c->in.p.n_pools * sizeof(double));
	assert_memory_equal(c->s.tot, c->tot_in, c->in.p.n_tenants * sizeof(double));
}

/* From its own instance's solution: it stays within 1e-6 gamma. */
static void keeps_a_solution(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		struct repair_case c;
		int rounds;

		case_open(&c, seed, 2, 16, 0);
		const int ret = psdsf_repair(&c.s.st, ROUNDS, &rounds);
		print_message("seed %llu: %d after %d rounds\n", (unsigned long long)seed, ret,
			      rounds);
		assert_int_equal(ret, 1);
		for (size_t j = 0; j < c.in.p.n_tenants * c.in.p.n_pools; j++)
			if (c.s.gamma[j] > 0 && fabs(c.s.x[j] - c.first.x[j]) > 1e-6 * c.s.gamma[j])
				fail_msg("seed %llu entry %zu: %.12g -> %.12g",
					 (unsigned long long)seed, j, c.first.x[j], c.s.x[j]);
		case_close(&c);
	}
}

/*
 * After 1 % of the demands change: returns 1 (and the point is exact, and
 * fs_solve_warm ends there) or 0 (and the state is untouched). Returns 1
 * when it repaired. levels: the repair and the warm start carry the first
 * solution's levels, as fs_warm_start_of's does, else neither does (a warm
 * start built by hand).
 */
static int repair_one(uint64_t seed, size_t k_lo, size_t k_hi, bool levels)
{
	struct repair_case c;
	struct fs_error why = {{0}};
	int rounds;

	case_open(&c, seed, k_lo, k_hi, ONE_PERCENT);
	if (!levels)
		c.s.st.level = NULL;
	const int ret = psdsf_repair(&c.s.st, ROUNDS, &rounds);
	assert_true(ret == 0 || ret == 1);
	if (ret == 1) {
		if (!fs_check_feasible(&c.in.p, c.s.x, EXACT_TOL, &why) ||
		    !fs_check_psdsf(&c.in.p, c.s.x, EXACT_TOL, &why))
			fail_msg("seed %llu (K %zu): repaired after %d rounds, but %s",
				 (unsigned long long)seed, c.in.p.n_pools, rounds, why.msg);
		/* fs_solve_warm runs it first and ends there, at the same point */
		struct fs_solution warm;
		struct fs_warm_start ws = fs_warm_start_of(&c.in.p, &c.first);
		struct fs_error err = {{0}};
		if (!levels)
			ws.level = NULL;
		assert_int_equal(fs_solve_warm(&c.in.p, FS_RULE_PSDSF, NULL, &ws, &warm, &err), 0);
		assert_true(warm.warm);
		assert_true(warm.repaired);
		assert_int_equal(warm.iterations, 0);
		/* (up to rounding: 2e-15 relative measured) */
		for (size_t j = 0; j < c.in.p.n_tenants * c.in.p.n_pools; j++)
			assert_true(fabs(warm.x[j] - c.s.x[j]) <= 1e-12 * (1 + fabs(c.s.x[j])));
		fs_solution_free(&warm);
	} else {
		assert_untouched(&c);
	}
	case_close(&c);
	return ret;
}

static void sweep(size_t k_lo, size_t k_hi, int count, int at_least, bool levels)
{
	int repaired = 0;

	for (uint64_t seed = 1; seed <= (uint64_t)count; seed++)
		repaired += repair_one(seed, k_lo, k_hi, levels);
	print_message("repair K %zu-%zu%s: %d of %d instances repaired\n", k_lo, k_hi,
		      levels ? "" : " without levels", repaired, count);
	assert_true(repaired >= at_least);
}

/*
 * Measured: 20 of 20 (K 2-8) and 9 of 10 (K 10-16) repaired; over 300
 * and 100 seeds, 290 and 90 (236 and 60 without the previous solution's
 * levels, 231 and 57 with 16 rounds and no moves, 197 and 51 before an
 * idle level's row could go from a singular system, 206 and 53 before
 * SAT_PREVIOUS). The bounds leave a margin of three and of two
 * instances, so that a repair that stopped repairing, or stopped reading
 * the levels, fails here (the seeds are fixed, but another compiler or
 * libm can move the first solve's point and with it a count by one or
 * two). These instances have tenants that demand nothing of some
 * resources, which the repair gave up on more often than on
 * fairshare-bench's (200 of 200 at N = 200, K = 2..8).
 */
static void sweep_small_k(void **state)
{
	(void)state;
	sweep(2, 8, 20, 17, true);
}

static void sweep_k10(void **state)
{
	(void)state;
	sweep(10, 16, 10, 7, true);
}

/* A warm start with no levels (built by hand): the repair from x alone,
 * 15 of 20 measured, the bound with the same margin of three. */
static void sweep_no_levels(void **state)
{
	(void)state;
	sweep(2, 8, 20, 12, false);
}

/*
 * Seed 278 of the K 2-8 sweep (K = 2): the last round's system was
 * numerically singular and the factor did not say so; its "solution"
 * broke two capacity rows by 1-5 %, and the repair called it settled
 * (which fs_solve_warm, which no longer sweeps after a settled point,
 * would have returned). repair_one fails on such a point. Since an idle
 * level's row can go from a singular system, the repair gives up on this
 * instance earlier, in a round whose system is singular on another column;
 * the check of a settled point (feasible_point) is not what this test
 * reaches any more. It rejects 11 settles inside the cold solves of five
 * of the test instances (the two sweeps over 300 and 100 seeds), which
 * the certificate rejected as well: no test fails without it. All of this
 * is the repair from x alone; with the first solution's levels it settles
 * here (exactly, which repair_one checks too).
 */
static void singular_system(void **state)
{
	(void)state;
	repair_one(278, 2, 8, false);
	repair_one(278, 2, 8, true);
}

/*
 * A repair that cycles stops at REVISITS_MAX revisits (psdsf_repair.c), not
 * at its round cap. Measured with 1000 rounds allowed: these three
 * instances (K 5, 4, 6) gave up after 1000 rounds without the limit, and
 * after 14, 107 and 58 with it; none settles either way.
 */
static void gives_up_on_a_cycle(void **state)
{
	static const uint64_t seeds[] = {210, 212, 223};

	(void)state;
	for (size_t a = 0; a < sizeof(seeds) / sizeof(seeds[0]); a++) {
		struct repair_case c;
		int rounds;

		case_open(&c, seeds[a], 2, 8, ONE_PERCENT);
		assert_int_equal(psdsf_repair(&c.s.st, 1000, &rounds), 0);
		print_message("seed %llu: gave up after %d rounds\n", (unsigned long long)seeds[a],
			      rounds);
		assert_true(rounds < 200);
		assert_untouched(&c);
		case_close(&c);
	}
}

/* One round where a perturbed instance needs more: gives up, state as it was. */
static void gives_up_cleanly(void **state)
{
	int gave_up = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		struct repair_case c;
		int rounds;

		case_open(&c, seed, 4, 8, 2);
		const int ret = psdsf_repair(&c.s.st, 1, &rounds);
		assert_int_equal(rounds, 1);
		if (ret == 0) {
			gave_up++;
			assert_untouched(&c);
		} else {
			struct fs_error why = {{0}};
			assert_int_equal(ret, 1);
			if (!fs_check_psdsf(&c.in.p, c.s.x, EXACT_TOL, &why))
				fail_msg("seed %llu: settled in one round, but %s",
					 (unsigned long long)seed, why.msg);
		}
		case_close(&c);
	}
	print_message("one round: gave up on %d of 10\n", gave_up);
	assert_true(gave_up > 0);
}

/*
 * Cold solves of seeds 1..seeds (K in [k_lo, k_hi]); counts those that
 * ended at the repair's exact point, and those that did at sweep 16, the
 * first hand-over. Each settled point must be feasible and pass Theorem 1
 * exactly.
 */
static void cold_settles(size_t k_lo, size_t k_hi, uint64_t seeds, int *settled, int *at_first)
{
	*settled = *at_first = 0;
	for (uint64_t seed = 1; seed <= seeds; seed++) {
		struct tu_instance in;
		struct fs_solution sol;
		struct fs_error err = {{0}};
		struct tu_rng g;

		tu_rng_seed(&g, seed * 7919);
		const size_t n = tu_range(&g, 100, 200), m = tu_range(&g, 2, 4),
			     k = tu_range(&g, k_lo, k_hi);
		tu_random_instance(&in, &g, n, m, k, TU_CAPS | TU_WEIGHTS | TU_PLACEMENT);
		assert_int_equal(fs_solve(&in.p, FS_RULE_PSDSF, NULL, &sol, &err), 0);
		const int it = sol.iterations;
		if (sol.repaired) {
			(*settled)++;
			*at_first += it == 16;
			/* the repair runs at 16, 32, 64, ... sweeps only */
			assert_true(it >= 16 && !(it & (it - 1)));
			if (!fs_check_feasible(&in.p, sol.x, EXACT_TOL, &err) ||
			    !fs_check_psdsf(&in.p, sol.x, EXACT_TOL, &err))
				fail_msg("seed %llu: settled at sweep %d, but %s",
					 (unsigned long long)seed, it, err.msg);
		}
		fs_solution_free(&sol);
		tu_instance_free(&in);
	}
}

/*
 * The solver hands its sweeps' state to the repair at sweeps 16, 32, 64,
 * ... (psdsf.c, REPAIR_FIRST_SWEEP): a cold solve it settles ends there,
 * at an exact point, with repaired set. Measured: 20 of 20 cold solves end
 * so (17 before an idle level's row could go from a singular system; the
 * others ended by the sweeps). The bound leaves a margin of two.
 */
static void cold_solves_settle(void **state)
{
	int settled, at_first;

	(void)state;
	cold_settles(4, 8, 20, &settled, &at_first);
	print_message("cold K 4-8: %d of 20 settled by the repair, %d at sweep 16\n", settled,
		      at_first);
	assert_true(settled >= 18);
}

/*
 * A cold solve's repairs get REPAIR_ROUNDS_COLD rounds (psdsf.c): from
 * sweep 16 the structure is further from the answer's than a warm start's,
 * and a repair that settles there takes more rounds. Measured on these 40
 * instances (K 8-16): 34 of 40 settled at sweep 16, where 32 rounds
 * settled 23 (35 with 128 rounds and no limit on revisits, psdsf_repair.c
 * REVISITS_MAX). The bound leaves a margin of three.
 */
static void cold_first_hand_over(void **state)
{
	int settled, at_first;

	(void)state;
	cold_settles(8, 16, 40, &settled, &at_first);
	print_message("cold K 8-16: %d of 40 settled by the repair, %d at sweep 16\n", settled,
		      at_first);
	assert_true(at_first >= 31);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(keeps_a_solution),	  cmocka_unit_test(sweep_small_k),
	    cmocka_unit_test(sweep_k10),	  cmocka_unit_test(sweep_no_levels),
	    cmocka_unit_test(gives_up_cleanly),	  cmocka_unit_test(gives_up_on_a_cycle),
	    cmocka_unit_test(cold_solves_settle), cmocka_unit_test(cold_first_hand_over),
	    cmocka_unit_test(singular_system),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
