/* SPDX-License-Identifier: MIT */
/* alpha-PF-VDS (policy/apf.c): ALGORITHMS.md 1.9, 2.5, 2.7 and test vectors 3.6, 3.8, 3.9. */
#include "testutil.h"
#include "apf_ipm.h"
#include "lp.h"
#include "psdsf_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int solve(const struct fs_problem *p, double alpha, struct fs_solution *s,
		 struct fs_error *err)
{
	const struct fs_options o = {.alpha = alpha, .tol = 1e-10};

	return fs_solve(p, FS_RULE_APF, &o, s, err);
}

static void solve_ok(const struct fs_problem *p, double alpha, struct fs_solution *s)
{
	struct fs_error err = {{0}};
	int r = solve(p, alpha, s, &err);

	if (r != 0)
		print_error("alpha %g: %s\n", alpha, err.msg);
	assert_int_equal(r, 0);
}

/*
 * [P0] Fig. 1 modified (d_4 = [1, 0.5, 0]); ALGORITHMS.md 3.6 (PUBLISHED inputs,
 * d_1, d_2 RECONSTRUCTED; alpha values DERIVED). Server 1 is PS-DSF for every
 * alpha (x_1 = 2, x_2 = 6; users 3, 4 get nothing there); on server 2, for
 * alpha >= alpha_0 = 1.70951: x_4 = 16 / (2 + 2^(1/alpha)), x_3 = 2^(1+1/alpha) x_4,
 * and for alpha <= alpha_0 the vertex x_3 = 96/7, x_4 = 32/7.
 */
static const double t5_cap[] = {12, 4, 75, 8, 16, 0};
static const double t5_dem[] = {1, 1, 5, 0.5, 1.0 / 3, 5, 0.25, 1, 0, 1, 0.5, 0};

static void test_t5_alpha_table(void **state)
{
	(void)state;
	const struct fs_problem p = {
	    .n_tenants = 4, .n_pools = 2, .n_resources = 3, .capacity = t5_cap, .demand = t5_dem};
	/* The table of 3.6 (4 decimals): alpha, x_3, x_4, server-2 RAM use. */
	static const double table[][4] = {
	    {1, 13.7143, 4.5714, 1.0},	   {2, 13.2548, 4.6863, 0.9749},
	    {3, 12.3676, 4.9081, 0.9264},  {5, 11.6741, 5.0815, 0.8884},
	    {10, 11.1651, 5.2087, 0.8606}, {30, 10.8316, 5.2921, 0.8424},
	};
	double last_ram = 2;

	for (size_t t = 0; t < sizeof(table) / sizeof(table[0]); t++) {
		const double alpha = table[t][0];
		struct fs_solution s;
		double x4, x3, ram;

		solve_ok(&p, alpha, &s);
		if (alpha <= log(2) / log(1.5)) {
			x3 = 96.0 / 7;
			x4 = 32.0 / 7;
		} else {
			x4 = 16 / (2 + pow(2, 1 / alpha));
			x3 = pow(2, 1 + 1 / alpha) * x4;
		}
		assert_close(s.x[0 * 2 + 0], 2, 1e-7);
		assert_close(s.x[1 * 2 + 0], 6, 1e-7);
		assert_close(s.x[2 * 2 + 0], 0, 1e-7);
		assert_close(s.x[3 * 2 + 0], 0, 1e-7);
		assert_close(s.tenant[2].total, x3, 1e-7);
		assert_close(s.tenant[3].total, x4, 1e-7);
		assert_close(s.tenant[2].total, table[t][1], 1e-4);
		assert_close(s.tenant[3].total, table[t][2], 1e-4);
		ram = (s.x[2 * 2 + 1] * 1 + s.x[3 * 2 + 1] * 0.5) / 16;
		assert_close(ram, table[t][3], 1e-4);
		/* "alpha trades efficiency for fairness": RAM use falls with alpha. */
		assert_true(ram <= last_ram + 1e-9);
		last_ram = ram;
		fs_solution_free(&s);
	}
}

/*
 * [P2] section VI instance, fluid (ALGORITHMS.md 3.8, DERIVED): for alpha <=
 * alpha* = 1 + ln 5 / ln(10/3) = 2.33677 all four capacities are full with
 * x = [[235/12, 25/12], [25/12, 235/12]] (65/3 each); above it the answer jumps
 * to the PS-DSF point [[20, 0], [0, 20]].
 */
static void test_t7_alpha_jump(void **state)
{
	(void)state;
	static const double cap[] = {100, 30, 30, 100};
	static const double dem[] = {5, 1, 1, 5};
	const struct fs_problem p = {
	    .n_tenants = 2, .n_pools = 2, .n_resources = 2, .capacity = cap, .demand = dem};
	static const double low[] = {235.0 / 12, 25.0 / 12, 25.0 / 12, 235.0 / 12};
	static const double high[] = {20, 0, 0, 20};
	static const double alphas[] = {1, 2, 2.3, 2.4, 3, 5};

	for (size_t t = 0; t < sizeof(alphas) / sizeof(alphas[0]); t++) {
		const double *want = alphas[t] < 2.33677 ? low : high;
		struct fs_solution s;

		solve_ok(&p, alphas[t], &s);
		for (size_t i = 0; i < 4; i++)
			assert_close(s.x[i], want[i], 1e-6);
		assert_close(s.tenant[0].total, alphas[t] < 2.33677 ? 65.0 / 3 : 20, 1e-6);
		fs_solution_free(&s);
	}
}

/*
 * Single server, the classic DRF example (ALGORITHMS.md 3.9, external /
 * DERIVED): c = [9, 18], d_A = [1, 4], d_B = [3, 1]. alpha-PF-VDS is alpha-fair
 * on dominant shares (2.7): alpha 1 -> (45/11, 18/11) with both resources full;
 * alpha 2, 3, 10 -> the 4-decimal values of 3.9; alpha -> inf gives DRF (3, 2).
 */
static void test_t8_single_server(void **state)
{
	(void)state;
	const struct fs_problem p = tu_drf_classic;
	static const double table[][3] = {
	    {1, 45.0 / 11, 18.0 / 11}, {2, 3.7279, 1.7574}, {3, 3.4784, 1.8405},
	    {10, 3.1402, 1.9533},      {INFINITY, 3, 2},
	};

	for (size_t t = 0; t < sizeof(table) / sizeof(table[0]); t++) {
		struct fs_solution s;

		solve_ok(&p, table[t][0], &s);
		assert_close(s.x[0], table[t][1], 1e-4);
		assert_close(s.x[1], table[t][2], 1e-4);
		fs_solution_free(&s);
	}
}

/* 2.7: with one server the alpha = 1 point is exact; check it to 1e-9. */
static void test_alpha1_exact_single_server(void **state)
{
	(void)state;
	const struct fs_problem p = tu_drf_classic;
	struct fs_solution s;

	solve_ok(&p, 1, &s);
	assert_close(s.x[0], 45.0 / 11, 1e-9);
	assert_close(s.x[1], 18.0 / 11, 1e-9);
	assert_true(s.iterations >= 1);
	fs_solution_free(&s);
}

/* Caps: a capped tenant stops at max_tasks and the rest goes to the other. */
static void test_caps_and_weights(void **state)
{
	(void)state;
	static const double cap[] = {10};
	static const double dem[] = {1, 1, 1};
	static const double mt[] = {1, INFINITY, INFINITY};
	static const double w[] = {1, 1, 3};
	const struct fs_problem p = {.n_tenants = 3,
				     .n_pools = 1,
				     .n_resources = 1,
				     .capacity = cap,
				     .demand = dem,
				     .max_tasks = mt,
				     .weight = w};
	struct fs_solution s;

	/* One resource, alpha 1: weighted PF = x_n proportional to phi_n. */
	solve_ok(&p, 1, &s);
	assert_close(s.x[0], 1, 1e-9);
	assert_true(s.tenant[0].capped);
	assert_close(s.x[1], 9.0 / 4, 1e-9);
	assert_close(s.x[2], 27.0 / 4, 1e-9);
	fs_solution_free(&s);
}

/*
 * max_tasks couples the pools. Tenant A (weight 10, max_tasks 12) may use both
 * pools, B (weight 1) only pool 0; one resource, capacities 10 and 100. From
 * per-server DRF, per-pool caps alone stall at A = 5 + 7, B = 5 (pool 0 keeps
 * preferring A, pool 1 cannot give A more than its cap): an equilibrium of the
 * per-pool games but not Pareto optimal. alpha = 1 is the global PF program
 * (ALGORITHMS.md 1.9, 2.7), whose optimum moves A entirely to the idle pool 1:
 * x = [[0, 12], [10, 0]].
 */
static void test_cap_shared_across_pools(void **state)
{
	(void)state;
	static const double cap[] = {10, 100};
	static const double dem[] = {1, 1};
	static const double mt[] = {12, INFINITY};
	static const double w[] = {10, 1};
	static const bool elig[] = {true, true, true, false};
	const struct fs_problem p = {.n_tenants = 2,
				     .n_pools = 2,
				     .n_resources = 1,
				     .capacity = cap,
				     .demand = dem,
				     .max_tasks = mt,
				     .weight = w,
				     .eligible = elig};
	struct fs_solution s;
	struct fs_error err = {{0}};
	bool holds = false;

	solve_ok(&p, 1, &s);
	assert_close(s.x[0], 0, 1e-7);
	assert_close(s.x[1], 12, 1e-7);
	assert_close(s.x[2], 10, 1e-7);
	assert_close(s.x[3], 0, 0);
	assert_true(s.tenant[0].capped);
	assert_int_equal(fs_check_pareto(&p, s.x, 1e-6, &holds, &err), 0);
	assert_true(holds);
	fs_solution_free(&s);
}

static void test_bad_alpha(void **state)
{
	(void)state;
	const struct fs_problem p = tu_drf_classic;
	static const double bad[] = {0, -1, NAN, -INFINITY};

	for (size_t t = 0; t < sizeof(bad) / sizeof(bad[0]); t++) {
		struct fs_solution s;
		struct fs_error err = {{0}};
		assert_int_equal(solve(&p, bad[t], &s, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "alpha"));
		fs_solution_free(&s);
	}
}

/* alpha = INFINITY (and no options at all) is PS-DSF. */
static void test_infinite_alpha_is_psdsf(void **state)
{
	(void)state;
	const struct fs_problem p = {
	    .n_tenants = 4, .n_pools = 2, .n_resources = 3, .capacity = t5_cap, .demand = t5_dem};
	struct fs_solution a, b, c;
	struct fs_error err = {{0}};

	solve_ok(&p, INFINITY, &a);
	assert_int_equal(fs_solve(&p, FS_RULE_PSDSF, NULL, &b, &err), 0);
	assert_int_equal(fs_solve(&p, FS_RULE_APF, NULL, &c, &err), 0);
	/* PS-DSF totals of 3.6 (PUBLISHED): (2, 6, 32/3, 16/3). */
	static const double want[] = {2, 6, 32.0 / 3, 16.0 / 3};
	for (size_t n = 0; n < 4; n++) {
		assert_close(a.tenant[n].total, want[n], 1e-6);
		assert_close(b.tenant[n].total, want[n], 1e-6);
		assert_close(c.tenant[n].total, want[n], 1e-6);
	}
	fs_solution_free(&a);
	fs_solution_free(&b);
	fs_solution_free(&c);
}

/*
 * Random instances: the result is feasible and a Nash equilibrium of the
 * per-pool games (fs_check_apf, the LP form of [P0] Def. 6); for alpha = 1 it
 * is also Pareto optimal ([P0] Thm 2/3; ALGORITHMS.md 4.1).
 */
static void test_random_equilibrium(void **state)
{
	(void)state;
	static const unsigned flags[] = {0, TU_WEIGHTS, TU_CAPS | TU_WEIGHTS,
					 TU_PLACEMENT | TU_ZERO_DEMAND,
					 TU_ZERO_CAPACITY | TU_PLACEMENT | TU_CAPS | TU_WEIGHTS};
	static const double alphas[] = {1, 2, 3};
	struct tu_rng g;
	int checked = 0;

	tu_rng_seed(&g, 20261123);
	for (int i = 0; i < 90; i++) {
		struct tu_instance in;
		const size_t n = 2 + (size_t)(tu_uniform(&g) * 5);
		const size_t m = 1 + (size_t)(tu_uniform(&g) * 3);
		const size_t k = 1 + (size_t)(tu_uniform(&g) * 3);
		const double alpha = alphas[i % 3];
		struct fs_solution s;
		struct fs_error err = {{0}};
		bool holds = false;
		int r;

		tu_random_instance(&in, &g, n, m, k, flags[(i / 3) % 5]);
		r = solve(&in.p, alpha, &s, &err);
		if (r != 0)
			print_error("instance %d alpha %g: %s\n", i, alpha, err.msg);
		assert_int_equal(r, 0);
		if (!fs_check_feasible(&in.p, s.x, 1e-7, &err))
			print_error("instance %d: %s\n", i, err.msg);
		assert_true(fs_check_feasible(&in.p, s.x, 1e-7, &err));
		r = fs_check_apf(&in.p, s.x, alpha, 1e-6, &holds, &err);
		assert_int_equal(r, 0);
		if (!holds)
			print_error("instance %d alpha %g: %s\n", i, alpha, err.msg);
		assert_true(holds);
		if (alpha == 1) {
			assert_int_equal(fs_check_pareto(&in.p, s.x, 1e-6, &holds, &err), 0);
			if (!holds)
				print_error("instance %d: %s\n", i, err.msg);
			assert_true(holds);
		}
		checked++;
		fs_solution_free(&s);
		tu_instance_free(&in);
	}
	assert_int_equal(checked, 90);
}

/*
 * Exact reference for alpha = 1 (ALGORITHMS.md 1.8, [P2] Prop. 2): x is the
 * weighted PF point iff sum_n phi_n y_n / x_n <= sum_n phi_n for every
 * feasible y. One LP over y (per eligible pair, capacities and caps) decides
 * it; returns max over y of sum_n phi_n y_n / x_n divided by sum_n phi_n.
 */
static double pf_certificate(const struct fs_problem *p, const struct fs_solution *s)
{
	const size_t N = p->n_tenants, K = p->n_pools, M = p->n_resources;
	size_t nv = N * K, rows = K * M + N;
	double *c = calloc(nv, sizeof(double)), *a = calloc(rows * nv, sizeof(double));
	double *b = calloc(rows, sizeof(double)), *up = calloc(nv, sizeof(double));
	double *y = calloc(nv, sizeof(double)), budget = 0;
	struct fs_lp_result res = {.x = y};

	assert_non_null(c);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(up);
	assert_non_null(y);
	for (size_t n = 0; n < N; n++) {
		const double x = s->tenant[n].total;
		bool served = false;
		for (size_t k = 0; k < K; k++) {
			const size_t v = n * K + k;
			up[v] = fs_gamma(p, n, k) > 0 ? INFINITY : 0;
			served |= up[v] > 0;
			for (size_t r = 0; r < M; r++)
				a[(k * M + r) * nv + v] = p->demand[n * M + r];
			/* max_tasks row; 0 <= 0 when uncapped (a huge bound would
			 * wreck the LP's scaling) */
			a[(K * M + n) * nv + v] = isfinite(fs_max_tasks(p, n)) ? 1 : 0;
		}
		if (!served)
			continue;
		assert_true(x > 0); /* a servable tenant at 0 is infinitely far off */
		budget += fs_weight(p, n);
		for (size_t k = 0; k < K; k++)
			c[n * K + k] = fs_weight(p, n) / x;
	}
	for (size_t k = 0; k < K; k++)
		for (size_t r = 0; r < M; r++)
			b[k * M + r] = p->capacity[k * M + r];
	for (size_t n = 0; n < N; n++)
		b[K * M + n] = isfinite(fs_max_tasks(p, n)) ? fs_max_tasks(p, n) : 0;
	const struct fs_lp lp = {
	    .n_vars = nv, .n_le = rows, .c = c, .a_le = a, .b_le = b, .upper = up};
	assert_int_equal(fs_lp_maximize(&lp, &res), 0);
	free(c);
	free(a);
	free(b);
	free(up);
	free(y);
	return res.obj / budget;
}

/*
 * Realistic sizes (issue 16): N >= 100 tenants, K >= 10 pools, with caps,
 * weights and placement, where best responses used to crawl. Every alpha must
 * converge to a per-pool equilibrium (fs_check_apf) with sharing incentive
 * (alpha >= 1); alpha = 1 must be the exact PF point (the LP certificate
 * above) and so Pareto optimal.
 */
static void test_large_random_equilibrium(void **state)
{
	(void)state;
	static const unsigned flags[] = {
	    TU_CAPS | TU_WEIGHTS, TU_PLACEMENT | TU_ZERO_DEMAND | TU_WEIGHTS,
	    TU_ZERO_CAPACITY | TU_PLACEMENT | TU_CAPS | TU_WEIGHTS | TU_ZERO_DEMAND};
	static const double alphas[] = {1, 2, 1, 2, 1, 2, 0.5, 4, 8, 1};
	struct tu_rng g;

	tu_rng_seed(&g, 20261125);
	for (size_t i = 0; i < sizeof(alphas) / sizeof(alphas[0]); i++) {
		struct tu_instance in;
		const size_t n = tu_range(&g, 100, 120), k = tu_range(&g, 10, 12);
		const double alpha = alphas[i];
		struct fs_solution s;
		struct fs_error err = {{0}};
		bool holds = false;
		int r;

		tu_random_instance(&in, &g, n, 4, k, flags[i % 3]);
		r = solve(&in.p, alpha, &s, &err);
		if (r != 0)
			print_error("instance %zu alpha %g: %s\n", i, alpha, err.msg);
		assert_int_equal(r, 0);
		assert_true(fs_check_feasible(&in.p, s.x, 1e-9, &err));
		assert_int_equal(fs_check_apf(&in.p, s.x, alpha, 1e-6, &holds, &err), 0);
		if (!holds)
			print_error("instance %zu alpha %g: %s\n", i, alpha, err.msg);
		assert_true(holds);
		if (alpha >= 1) {
			holds = fs_check_sharing_incentive(&in.p, s.x, 1e-6, &err);
			if (!holds)
				print_error("instance %zu alpha %g: %s\n", i, alpha, err.msg);
			assert_true(holds);
		}
		if (alpha <= 2) {
			/* The interior point alone, without the sweeps' fallback. */
			double *x = calloc(n * k, sizeof(double)), *gm = calloc(n * k, 8);
			double *tot = calloc(n, sizeof(double));
			struct fs_apf_ipm_stats st;
			assert_non_null(x);
			assert_non_null(gm);
			assert_non_null(tot);
			assert_int_equal(fs_per_server_drf(&in.p, gm, x, tot, 1e-9), 0);
			assert_int_equal(fs_apf_ipm(&in.p, alpha, 1e-9, 0, x, &st), 0);
			assert_true(st.kkt <= 1e-9);
			free(x);
			free(gm);
			free(tot);
		}
		if (alpha == 1) {
			assert_true(pf_certificate(&in.p, &s) <= 1 + 1e-7);
			assert_int_equal(fs_check_pareto(&in.p, s.x, 1e-6, &holds, &err), 0);
			assert_true(holds);
		}
		fs_solution_free(&s);
		tu_instance_free(&in);
	}
}

/*
 * Few tenants on many pools (the interior point's low-rank path: pool rows
 * outnumber twice the tenants): converged by itself, an equilibrium, and for
 * alpha = 1 the PF point.
 */
static void test_many_pools(void **state)
{
	(void)state;
	struct tu_rng g;

	tu_rng_seed(&g, 100);
	for (int i = 0; i < 4; i++) {
		struct tu_instance in;
		const double alpha = 1 + i % 2;
		const size_t n = tu_range(&g, 3, 8), k = tu_range(&g, 40, 60);
		double *x = calloc(n * k, sizeof(double)), *gm = calloc(n * k, sizeof(double));
		double *tot = calloc(n, sizeof(double));
		struct fs_apf_ipm_stats st;
		struct fs_solution s;
		struct fs_error err = {{0}};
		bool holds = false;

		assert_non_null(x);
		assert_non_null(gm);
		assert_non_null(tot);
		tu_random_instance(&in, &g, n, 4, k, TU_CAPS | TU_WEIGHTS | TU_PLACEMENT);
		assert_int_equal(fs_per_server_drf(&in.p, gm, x, tot, 1e-9), 0);
		assert_int_equal(fs_apf_ipm(&in.p, alpha, 1e-9, 0, x, &st), 0);
		solve_ok(&in.p, alpha, &s);
		assert_int_equal(fs_check_apf(&in.p, s.x, alpha, 1e-6, &holds, &err), 0);
		if (!holds)
			print_error("instance %d alpha %g: %s\n", i, alpha, err.msg);
		assert_true(holds);
		if (alpha == 1)
			assert_true(pf_certificate(&in.p, &s) <= 1 + 1e-7);
		fs_solution_free(&s);
		tu_instance_free(&in);
		free(x);
		free(gm);
		free(tot);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_t5_alpha_table),
	    cmocka_unit_test(test_t7_alpha_jump),
	    cmocka_unit_test(test_t8_single_server),
	    cmocka_unit_test(test_alpha1_exact_single_server),
	    cmocka_unit_test(test_caps_and_weights),
	    cmocka_unit_test(test_cap_shared_across_pools),
	    cmocka_unit_test(test_bad_alpha),
	    cmocka_unit_test(test_infinite_alpha_is_psdsf),
	    cmocka_unit_test(test_random_equilibrium),
	    cmocka_unit_test(test_large_random_equilibrium),
	    cmocka_unit_test(test_many_pools),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
