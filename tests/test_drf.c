/* SPDX-License-Identifier: MIT */
/* Weighted DRF on one pool (ALGORITHMS.md 1.3) by water-filling. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define TOL 1e-9

static void solve_ok(const struct fs_problem *p, struct fs_solution *s)
{
	struct fs_error err = {{0}};
	int r = tu_solve_rule(p, fs_solve_drf, NULL, s, &err);

	if (r)
		print_error("fs_solve_drf: %d %s\n", r, err.msg);
	assert_int_equal(r, 0);
	assert_true(fs_check_feasible(p, s->x, 1e-9, NULL));
}

/* ALGORITHMS.md 3.9 (classic DRF-paper example, external to the seeds):
 * c = [9 CPU, 18 GB], d_A = [1, 4], d_B = [3, 1]: x = (3, 2), dominant
 * shares 2/3 each; A's dominant resource is RAM, B's CPU; both saturate. */
static void classic(void **state)
{
	(void)state;
	const struct fs_problem p = tu_drf_classic;
	struct fs_solution s;

	solve_ok(&p, &s);
	assert_close(s.x[0], 3, TOL);
	assert_close(s.x[1], 2, TOL);
	assert_close(s.tenant[0].share, 2.0 / 3, TOL);
	assert_close(s.tenant[1].share, 2.0 / 3, TOL);
	assert_int_equal(s.rule, FS_RULE_DRF);
	assert_true(fs_check_psdsf(&p, s.x, 1e-6, NULL));
	fs_solution_free(&s);
}

/* ALGORITHMS.md 3.9: phi = (2, 1) gives (54/13, 18/13); RAM binds, so A's
 * weighted dominant share 4*(54/13)/18/2 equals B's 3*(18/13)/9 = 6/13. */
static void weighted(void **state)
{
	(void)state;
	const double w[] = {2, 1};
	struct fs_problem p = tu_drf_classic;
	struct fs_solution s;

	p.weight = w;
	solve_ok(&p, &s);
	assert_close(s.x[0], 54.0 / 13, TOL);
	assert_close(s.x[1], 18.0 / 13, TOL);
	assert_close(s.tenant[0].share, 6.0 / 13, TOL);
	assert_close(s.tenant[1].share, 6.0 / 13, TOL);
	assert_int_equal(s.tenant[0].certificate, 1); /* RAM */
	fs_solution_free(&s);
}

/* Caps: A capped at 1 leaves B the CPU that remains, 8/3; a cap above the DRF
 * level changes nothing; a tenant demanding a resource the pool lacks gets 0. */
static void caps(void **state)
{
	(void)state;
	const double c[] = {9, 18, 0};
	const double d[] = {1, 4, 0, 3, 1, 0, 1, 1, 1};
	double mt[] = {1, INFINITY, 5};
	const struct fs_problem p = {.n_tenants = 3,
				     .n_pools = 1,
				     .n_resources = 3,
				     .capacity = c,
				     .demand = d,
				     .max_tasks = mt};
	struct fs_solution s;

	solve_ok(&p, &s);
	assert_close(s.x[0], 1, TOL);
	assert_close(s.x[1], 8.0 / 3, TOL);
	assert_true(s.tenant[0].capped);
	assert_false(s.tenant[1].capped);
	assert_true(s.tenant[2].unserved);
	assert_close(s.x[2], 0, 0);
	fs_solution_free(&s);

	mt[0] = 3.5;
	solve_ok(&p, &s);
	assert_close(s.x[0], 3, TOL);
	assert_close(s.x[1], 2, TOL);
	assert_false(s.tenant[0].capped);
	fs_solution_free(&s);
}

/* Several tenants capped at different levels freeze in level order. */
static void staggered_caps(void **state)
{
	(void)state;
	const double c[] = {10};
	const double d[] = {1, 1, 1, 1};
	const double mt[] = {1, 2, INFINITY, 3};
	const struct fs_problem p = {.n_tenants = 4,
				     .n_pools = 1,
				     .n_resources = 1,
				     .capacity = c,
				     .demand = d,
				     .max_tasks = mt};
	struct fs_solution s;

	/* At level 3 the use is 1 + 2 + 3 + 3 = 9 < 10: tenant 2 takes the rest, 4. */
	solve_ok(&p, &s);
	assert_close(s.x[0], 1, TOL);
	assert_close(s.x[1], 2, TOL);
	assert_close(s.x[2], 4, TOL);
	assert_close(s.x[3], 3, TOL);
	fs_solution_free(&s);
}

static void several_pools_rejected(void **state)
{
	(void)state;
	const double c[] = {9, 18, 9, 18};
	const double d[] = {1, 4};
	const struct fs_problem p = {
	    .n_tenants = 1, .n_pools = 2, .n_resources = 2, .capacity = c, .demand = d};
	struct fs_solution s;
	struct fs_error err = {{0}};

	assert_int_equal(tu_solve_rule(&p, fs_solve_drf, NULL, &s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "2 pools"));
	assert_non_null(strstr(err.msg, "psdsf"));
	assert_non_null(strstr(err.msg, "cdrfh"));
	fs_solution_free(&s);
}

/* Random single-pool instances: the water level is a max-min fair point, so
 * the Theorem-1 predicate (= DRF on one pool) and SI/EF hold. */
static void random_single_pool(void **state)
{
	(void)state;
	const unsigned flags = TU_ZERO_CAPACITY | TU_CAPS | TU_WEIGHTS | TU_ZERO_DEMAND;

	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct tu_rng g;
		struct tu_instance in;
		struct fs_solution s;
		struct fs_error why = {{0}};
		tu_rng_seed(&g, seed);
		tu_random_instance(&in, &g, tu_range(&g, 1, 30), tu_range(&g, 1, 6), 1, flags);
		solve_ok(&in.p, &s);
		bool ok = fs_check_psdsf(&in.p, s.x, 1e-6, &why) &&
			  fs_check_envy_free(&in.p, s.x, 1e-6, &why) &&
			  fs_check_sharing_incentive(&in.p, s.x, 1e-6, &why);
		if (!ok)
			print_error("seed %llu: %s\n", (unsigned long long)seed, why.msg);
		assert_true(ok);
		fs_solution_free(&s);
		tu_instance_free(&in);
	}
}

/*
 * Issue 16: weights 1e16 and more apart once over-allocated (weight 1e-20:
 * cpu 4, a capped at 3, b at 2 -> 3 + 2 = 5 cores). When b reached its cap,
 * removing its slope from the climbing rate cancelled a's 4e-20 to 0, so a
 * climbed to its own cap. The capacity must bind at any weight ratio.
 */
static void extreme_weights(void **state)
{
	(void)state;
	static const double cap[] = {4};
	static const double dem[] = {1, 1};
	static const double mt[] = {3, 2};
	static const double wa[] = {1e-20, 1e-300, 1e20, 1e300};

	for (size_t t = 0; t < sizeof(wa) / sizeof(wa[0]); t++) {
		const double w[] = {wa[t], 1};
		const struct fs_problem p = {.n_tenants = 2,
					     .n_pools = 1,
					     .n_resources = 1,
					     .capacity = cap,
					     .demand = dem,
					     .max_tasks = mt,
					     .weight = w};
		struct fs_solution s;

		solve_ok(&p, &s);
		/* Tiny a: b is capped at 2 and a takes the other 2; huge a: a is
		 * capped at 3 and b gets the last core. */
		assert_close(s.x[0], wa[t] < 1 ? 2 : 3, TOL);
		assert_close(s.x[1], wa[t] < 1 ? 2 : 1, TOL);
		fs_solution_free(&s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(classic),
	    cmocka_unit_test(weighted),
	    cmocka_unit_test(caps),
	    cmocka_unit_test(staggered_caps),
	    cmocka_unit_test(several_pools_rejected),
	    cmocka_unit_test(random_single_pool),
	    cmocka_unit_test(extreme_weights),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
