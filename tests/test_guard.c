/* SPDX-License-Identifier: MIT */
/* The capacity guard (policy/guard.c) and fs_solve's use of it (issue 16). */
#include "testutil.h"

#include <float.h>
#include <math.h>

/* Pool 0: cpu 4, mem 8; pool 1: cpu 2, mem 2. Tenant 1 may use pool 0 only. */
static const double cap[] = {4, 8, 2, 2};
static const double dem[] = {1, 1, 1, 2};
static const double mt[] = {INFINITY, 3};
static const bool elig[] = {true, true, true, false};
static const struct fs_problem prob = {.n_tenants = 2,
				       .n_pools = 2,
				       .n_resources = 2,
				       .capacity = cap,
				       .demand = dem,
				       .max_tasks = mt,
				       .eligible = elig};

static void guarded(const double *x, struct fs_solution *s)
{
	assert_int_equal(fs_solution_init(s, &prob), 0);
	for (size_t i = 0; i < 4; i++)
		s->x[i] = x[i];
}

/* A feasible allocation passes untouched. */
static void feasible_untouched(void **state)
{
	(void)state;
	static const double x[] = {2, 1, 1, 0};
	struct fs_solution s;

	guarded(x, &s);
	assert_true(fs_guard_capacity(&prob, &s, 0) == 1);
	for (size_t i = 0; i < 4; i++)
		assert_true(s.x[i] == x[i]);
	fs_solution_free(&s);
}

/* Over capacity on pool 0 (cpu 3 + 3 = 6 > 4, mem 3 + 6 = 9 > 8): the pool's
 * column is scaled by its worst ratio 4/6 and the factor is reported. */
static void over_capacity_scaled(void **state)
{
	(void)state;
	static const double x[] = {3, 1, 3, 0};
	struct fs_solution s;

	guarded(x, &s);
	const double f = fs_guard_capacity(&prob, &s, 0);
	assert_close(f, 4.0 / 6, 1e-12);
	assert_close(s.x[0], 2, 1e-12);
	assert_close(s.x[2], 2, 1e-12);
	assert_true(s.x[1] == 1);
	assert_true(fs_check_feasible(&prob, s.x, 0, NULL));
	assert_close(s.tenant[0].total, 3, 1e-12);
	fs_solution_free(&s);
}

/* max_tasks, an ineligible pool and NaN: each fixed, each reported. */
static void caps_eligibility_nan(void **state)
{
	(void)state;
	static const double over_cap[] = {0, 0, 3.5, 0};
	static const double ineligible[] = {0, 0, 1, 0.5};
	static const double nan_entry[] = {NAN, 0, 1, 0};
	struct fs_solution s;

	guarded(over_cap, &s);
	assert_close(fs_guard_capacity(&prob, &s, 0), 3 / 3.5, 1e-12);
	assert_true(s.x[2] <= 3);
	fs_solution_free(&s);

	guarded(ineligible, &s);
	assert_true(fs_guard_capacity(&prob, &s, 0) == 0);
	assert_true(s.x[3] == 0);
	assert_true(s.x[2] == 1);
	fs_solution_free(&s);

	guarded(nan_entry, &s);
	assert_true(fs_guard_capacity(&prob, &s, 0) == 0);
	assert_true(s.x[0] == 0);
	assert_true(fs_check_feasible(&prob, s.x, 0, NULL));
	fs_solution_free(&s);
}

/*
 * A trim within rounding, of a row (tenant 1 a few ulps over its cap of 3)
 * or of a pool (pool 0's cpu one ulp over 4), recomputes the totals and
 * capped flags only; the rest of the finish (bottlenecks, levels) is left
 * as the rule wrote it. One beyond rounding recomputes all of it. The
 * sentinels tell which ran.
 */
static void guarded_with_sentinels(const double *x, struct fs_solution *s)
{
	guarded(x, s);
	s->level[0] = 42;
	s->bottleneck[0] = 1;
}

static void rounding_trim_retotals(void **state)
{
	(void)state;
	const double x[] = {1, 1, nextafter(nextafter(3, 4), 4), 0};
	const double pool_over[] = {1 + 4 * DBL_EPSILON, 1, 3, 0}; /* cpu 4 + 1 ulp */
	static const double over_cap[] = {0, 0, 3.5, 0};
	struct fs_solution s;

	guarded_with_sentinels(pool_over, &s);
	assert_true(fs_guard_capacity(&prob, &s, 0) == 1);
	assert_true(s.x[0] < pool_over[0] && s.x[2] < 3); /* the column, scaled */
	assert_true(s.tenant[0].total == s.x[0] + s.x[1]);
	assert_true(s.tenant[1].total == s.x[2] + s.x[3]);
	assert_true(fs_check_feasible(&prob, s.x, 0, NULL));
	assert_true(s.level[0] == 42 && s.bottleneck[0] == 1);
	fs_solution_free(&s);

	guarded_with_sentinels(x, &s);
	assert_true(fs_guard_capacity(&prob, &s, 0) == 1);
	assert_true(s.x[2] <= 3 && s.x[2] > 3 * (1 - 1e-12));
	assert_true(s.tenant[1].total == s.x[2] + s.x[3]);
	assert_true(s.tenant[0].total == s.x[0] + s.x[1]);
	assert_true(s.tenant[1].capped);
	assert_true(fs_check_feasible(&prob, s.x, 0, NULL));
	assert_true(s.level[0] == 42 && s.bottleneck[0] == 1);
	fs_solution_free(&s);

	guarded_with_sentinels(over_cap, &s);
	assert_true(fs_guard_capacity(&prob, &s, 0) < 1);
	assert_true(s.level[0] != 42 && s.bottleneck[0] != 1);
	fs_solution_free(&s);
}

/*
 * The flags the guard recomputes follow the tolerance the rule solved at:
 * tenant 1 is 5e-5 under its cap of 3, capped at tol 1e-6 and not at the
 * default 1e-9 (the finish's capped test takes 1e3 tol). Pool 0's cpu is
 * two ulps over 4 (a rounding trim: the totals are recomputed), or tenant
 * 0 has a NaN entry (zeroed: the whole finish runs again).
 */
static void trim_keeps_the_rule_tolerance(void **state)
{
	(void)state;
	const double x2 = 3 * (1 - 5e-5);
	const double x[] = {4 - x2 + 8 * DBL_EPSILON, 1, x2, 0};
	const double nan_row[] = {NAN, 1, x2, 0};
	struct fs_solution s;

	guarded(nan_row, &s);
	assert_true(fs_guard_capacity(&prob, &s, 1e-6) == 0);
	assert_true(s.tenant[1].capped);
	fs_solution_free(&s);
	guarded(nan_row, &s);
	assert_true(fs_guard_capacity(&prob, &s, 0) == 0);
	assert_false(s.tenant[1].capped);
	fs_solution_free(&s);

	guarded(x, &s);
	assert_true(fs_guard_capacity(&prob, &s, 1e-6) == 1);
	assert_true(s.x[0] < x[0]); /* the column, scaled */
	assert_true(s.tenant[1].capped);
	fs_solution_free(&s);

	guarded(x, &s);
	assert_true(fs_guard_capacity(&prob, &s, 0) == 1);
	assert_true(s.x[0] < x[0]);
	assert_false(s.tenant[1].capped);
	fs_solution_free(&s);
}

/* Every rule's fs_solve result on random instances leaves the guard idle
 * (guard == 1) and is feasible with no tolerance at all. */
static void solve_results_within_capacity(void **state)
{
	(void)state;
	static const enum fs_rule rules[] = {FS_RULE_PSDSF, FS_RULE_TSF, FS_RULE_CDRFH,
					     FS_RULE_APF};
	struct tu_rng g;

	tu_rng_seed(&g, 16);
	for (int i = 0; i < 24; i++) {
		struct tu_instance in;
		const enum fs_rule rule = rules[i % 4];
		const struct fs_options o = {.alpha = rule == FS_RULE_APF ? 1 + i % 3 : INFINITY};
		struct fs_solution s;
		struct fs_error err = {{0}};

		tu_random_instance(&in, &g, tu_range(&g, 2, 12), tu_range(&g, 1, 4),
				   tu_range(&g, 1, 4), TU_CAPS | TU_WEIGHTS | TU_PLACEMENT);
		if (fs_solve(&in.p, rule, &o, &s, &err) != 0)
			print_error("instance %d %s: %s\n", i, fs_rule_name(rule), err.msg);
		assert_true(s.guard == 1);
		assert_true(fs_check_feasible(&in.p, s.x, 0, NULL));
		fs_solution_free(&s);
		tu_instance_free(&in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(feasible_untouched),
	    cmocka_unit_test(over_capacity_scaled),
	    cmocka_unit_test(caps_eligibility_nan),
	    cmocka_unit_test(rounding_trim_retotals),
	    cmocka_unit_test(trim_keeps_the_rule_tolerance),
	    cmocka_unit_test(solve_results_within_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
