/* SPDX-License-Identifier: MIT */
/* Tests for the LP-based predicates (policy/properties_lp.c): Pareto
 * optimality and alpha-PF-VDS per-server optimality, ALGORITHMS.md 3.6,
 * 3.8 and section 4. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define TOL 1e-6

static bool pareto(const struct fs_problem *p, const double *x)
{
	struct fs_error why = {{0}};
	bool holds = true;

	assert_int_equal(fs_check_pareto(p, x, TOL, &holds, &why), 0);
	if (!holds)
		assert_true(why.msg[0] != '\0');
	return holds;
}

static bool apf(const struct fs_problem *p, const double *x, double alpha)
{
	struct fs_error why = {{0}};
	bool holds = true;

	assert_int_equal(fs_check_apf(p, x, alpha, TOL, &holds, &why), 0);
	if (!holds)
		assert_true(why.msg[0] != '\0');
	return holds;
}

/* --- 3.8 (DERIVED): fluid [P2] instance ---------------------------------- */

static const double c38[] = {100, 30, 30, 100};
static const double d38[] = {5, 1, 1, 5};
/* PS-DSF point: dominated by (65/3, 65/3). */
static const double x38_psdsf[] = {20, 0, 0, 20};
/* alpha-PF-VDS for alpha <= alpha* = 2.33677: all four capacities full. */
static const double x38_apf[] = {235.0 / 12, 25.0 / 12, 25.0 / 12, 235.0 / 12};

static void test_pareto_p2_fluid(void **state)
{
	(void)state;
	struct fs_problem p = {
	    .n_tenants = 2, .n_pools = 2, .n_resources = 2, .capacity = c38, .demand = d38};

	assert_false(pareto(&p, x38_psdsf));
	assert_true(pareto(&p, x38_apf));
	/* Anything strictly inside the polytope is dominated. */
	const double inside[] = {19, 2, 2, 19};
	assert_false(pareto(&p, inside));
}

/* max_tasks caps bound the y of the Pareto LP. One pool, two resources,
 * each tenant using only its own: with user 1 capped at 4, (4, 10) is Pareto
 * optimal; without the cap user 1 could take the whole first resource. */
static void test_pareto_caps(void **state)
{
	(void)state;
	const double c[] = {10, 10}, d[] = {1, 0, 0, 1}, cap[] = {4, INFINITY};
	struct fs_problem p = {.n_tenants = 2,
			       .n_pools = 1,
			       .n_resources = 2,
			       .capacity = c,
			       .demand = d,
			       .max_tasks = cap};
	const double x_po[] = {4, 10}, x_not[] = {4, 9};

	assert_true(pareto(&p, x_po));
	assert_false(pareto(&p, x_not));
	p.max_tasks = NULL;
	assert_false(pareto(&p, x_po));
}

static void test_pareto_infeasible_input(void **state)
{
	(void)state;
	struct fs_problem p = {
	    .n_tenants = 2, .n_pools = 2, .n_resources = 2, .capacity = c38, .demand = d38};
	const double over[] = {21, 0, 0, 20};

	assert_false(pareto(&p, over));
}

typedef int (*rule_fn)(const struct fs_problem *, const struct fs_options *, struct fs_solution *,
		       struct fs_error *);

/* Leximin (water-filled max-min) allocations of a criterion increasing in
 * x_n are Pareto optimal: TSF and C-DRFH on random instances. */
static void test_pareto_maxmin_random(void **state)
{
	(void)state;
	const unsigned flags[] = {0, TU_WEIGHTS | TU_CAPS, TU_PLACEMENT | TU_ZERO_DEMAND,
				  TU_PLACEMENT | TU_CAPS | TU_WEIGHTS | TU_ZERO_CAPACITY};
	const rule_fn rules[] = {fs_solve_tsf, fs_solve_cdrfh};
	struct tu_rng g;

	tu_rng_seed(&g, 3);
	for (int trial = 0; trial < 48; trial++) {
		struct tu_instance in;
		struct fs_solution s;
		struct fs_error err = {{0}};
		size_t n = 2 + (size_t)(tu_uniform(&g) * 8), m = 1 + (size_t)(tu_uniform(&g) * 3);
		size_t k = 1 + (size_t)(tu_uniform(&g) * 4);

		tu_random_instance(&in, &g, n, m, k, flags[trial % 4]);
		assert_int_equal(fs_problem_validate(&in.p, &err), 0);
		assert_int_equal(fs_solution_init(&s, &in.p), 0);
		assert_int_equal(rules[(trial / 4) % 2](&in.p, NULL, &s, &err), 0);
		if (!pareto(&in.p, s.x))
			fail_msg("trial %d: max-min result not Pareto", trial);
		fs_solution_free(&s);
		tu_instance_free(&in);
	}
}

/* --- alpha-PF-VDS ---------------------------------------------------------- */

/* 3.6 ([P0] Fig. 1 modified, d_4 = [1, 0.5, 0]; DERIVED table): x_1 = 2 and
 * x_2 = 6 on server 1, users 3, 4 on server 2 only. */
static const double c36[] = {12, 4, 75, 8, 16, 0};
static const double d36[] = {1, 1, 5, 0.5, 1.0 / 3, 5, 0.25, 1, 0, 1, 0.5, 0};

static void x36(double alpha, double *x)
{
	const double alpha0 = log(2) / log(1.5);
	double x3, x4;

	if (alpha <= alpha0) { /* CPU and RAM of server 2 both full */
		x3 = 96.0 / 7;
		x4 = 32.0 / 7;
	} else { /* s~3/s~4 = 2^(1/alpha) on the CPU facet */
		x4 = 16 / (2 + pow(2, 1 / alpha));
		x3 = pow(2, 1 + 1 / alpha) * x4;
	}
	const double v[] = {2, 0, 6, 0, 0, x3, 0, x4};
	for (int i = 0; i < 8; i++)
		x[i] = v[i];
}

static void test_apf_p0_table(void **state)
{
	(void)state;
	struct fs_problem p = {
	    .n_tenants = 4, .n_pools = 2, .n_resources = 3, .capacity = c36, .demand = d36};
	/* The 3.6 table rows (x_3, x_4), 4 decimals. */
	const double alphas[] = {1, 2, 3, 5, 10, 30};
	const double table[][2] = {{13.7143, 4.5714}, {13.2548, 4.6863}, {12.3676, 4.9081},
				   {11.6741, 5.0815}, {11.1651, 5.2087}, {10.8316, 5.2921}};
	double x[8];

	for (int i = 0; i < 6; i++) {
		const double a = alphas[i];
		x36(a, x);
		/* The closed form reproduces the table ... */
		assert_close(x[5], table[i][0], 1e-4);
		assert_close(x[7], table[i][1], 1e-4);
		/* ... the row is an equilibrium at its alpha ... */
		if (!apf(&p, x, a))
			fail_msg("row alpha=%g rejected", a);
		/* ... and not at a clearly different one. */
		assert_false(apf(&p, x, 2 * a));
		if (a > 1)
			assert_false(apf(&p, x, a / 2));
		/* The printed 4-decimal values pass with a matching tolerance. */
		x[5] = table[i][0];
		x[7] = table[i][1];
		struct fs_error why;
		bool holds;
		assert_int_equal(fs_check_apf(&p, x, a, 1e-4, &holds, &why), 0);
		assert_true(holds);
	}
}

/* alpha = INFINITY delegates to the PS-DSF predicate: the 3.6 PS-DSF point
 * (x_3, x_4) = (32/3, 16/3) passes, the alpha = 1 point does not. */
static void test_apf_infinity(void **state)
{
	(void)state;
	struct fs_problem p = {
	    .n_tenants = 4, .n_pools = 2, .n_resources = 3, .capacity = c36, .demand = d36};
	double x[8];

	x36(1e300, x);
	x[5] = 32.0 / 3;
	x[7] = 16.0 / 3;
	assert_true(apf(&p, x, INFINITY));
	x36(1, x);
	assert_false(apf(&p, x, INFINITY));
}

/* 3.8: the jump at alpha* = 1 + ln 5 / ln(10/3) = 2.33677. */
static void test_apf_p2_jump(void **state)
{
	(void)state;
	struct fs_problem p = {
	    .n_tenants = 2, .n_pools = 2, .n_resources = 2, .capacity = c38, .demand = d38};

	assert_true(apf(&p, x38_apf, 1));
	assert_true(apf(&p, x38_apf, 2));
	assert_true(apf(&p, x38_psdsf, 3));
	assert_true(apf(&p, x38_psdsf, 5));
	assert_false(apf(&p, x38_psdsf, 1));
	assert_false(apf(&p, x38_psdsf, 2));
	/* The switch sits at alpha* itself. */
	assert_true(apf(&p, x38_apf, 2.33));
	assert_false(apf(&p, x38_apf, 2.34));
	assert_false(apf(&p, x38_psdsf, 2.33));
	assert_true(apf(&p, x38_psdsf, 2.34));
}

/* Caps are constraints of the per-server game: one pool, one resource,
 * c = 10, unit demands, alpha = 1. Uncapped the equilibrium is (5, 5); with
 * user 1 capped at 2 it is (2, 8). */
static void test_apf_caps(void **state)
{
	(void)state;
	const double c[] = {10}, d[] = {1, 1}, cap[] = {2, INFINITY};
	struct fs_problem p = {
	    .n_tenants = 2, .n_pools = 1, .n_resources = 1, .capacity = c, .demand = d};
	const double even[] = {5, 5}, capped[] = {2, 8}, idle[] = {0, 10};

	assert_true(apf(&p, even, 1));
	assert_false(apf(&p, capped, 1));
	assert_false(apf(&p, idle, 1)); /* a starved eligible tenant */
	p.max_tasks = cap;
	assert_true(apf(&p, capped, 1));
	assert_true(apf(&p, capped, 7));
	assert_false(apf(&p, even, 1)); /* infeasible: above the cap */
}

static void test_apf_bad_alpha(void **state)
{
	(void)state;
	struct fs_problem p = {
	    .n_tenants = 2, .n_pools = 2, .n_resources = 2, .capacity = c38, .demand = d38};
	struct fs_error why;
	bool holds = true;

	assert_int_equal(fs_check_apf(&p, x38_apf, 0, TOL, &holds, &why), -EINVAL);
	assert_false(holds);
	assert_int_equal(fs_check_apf(&p, x38_apf, NAN, TOL, &holds, &why), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pareto_p2_fluid),
	    cmocka_unit_test(test_pareto_caps),
	    cmocka_unit_test(test_pareto_infeasible_input),
	    cmocka_unit_test(test_pareto_maxmin_random),
	    cmocka_unit_test(test_apf_p0_table),
	    cmocka_unit_test(test_apf_infinity),
	    cmocka_unit_test(test_apf_p2_jump),
	    cmocka_unit_test(test_apf_caps),
	    cmocka_unit_test(test_apf_bad_alpha),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
