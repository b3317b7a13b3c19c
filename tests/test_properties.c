/* SPDX-License-Identifier: MIT */
/*
 * Predicates of ALGORITHMS.md section 4 and NJC (section 8): each accepts a
 * known-good allocation and rejects a hand-made bad one, naming the culprit.
 */
#include "testutil.h"

#include <math.h>
#include <string.h>

#define TOL 1e-6

/* [P4] Fig. 2, ALGORITHMS.md 3.2: the published PS-DSF allocation. */
static const double t2_c[] = {9, 12, 100, 12, 12, 0};
static const double t2_d[] = {1.5, 1, 10, 1, 2, 10, 0.5, 1, 0, 1, 0.5, 0};
static const struct fs_problem t2 = {
    .n_tenants = 4, .n_pools = 2, .n_resources = 3, .capacity = t2_c, .demand = t2_d};
static const double t2_x[] = {3.6, 0, 3.6, 0, 0, 8, 0, 8};

static void assert_rejects(bool ok, const struct fs_error *why, const char *a, const char *b)
{
	if (ok || !strstr(why->msg, a) || (b && !strstr(why->msg, b)))
		print_error("expected rejection naming '%s' '%s', got %d '%s'\n", a, b ? b : "", ok,
			    why->msg);
	assert_false(ok);
	assert_non_null(strstr(why->msg, a));
	if (b)
		assert_non_null(strstr(why->msg, b));
}

static void feasible(void **state)
{
	(void)state;
	struct fs_error why = {{0}};
	double x[8];
	const double mt[] = {3, INFINITY, INFINITY, INFINITY};
	struct fs_problem capped = t2;

	assert_true(fs_check_feasible(&t2, t2_x, TOL, &why));

	/* x_11 = 4: server 1 CPU 1.5*4 + 3.6 = 9.6 > 9 */
	memcpy(x, t2_x, sizeof(x));
	x[0] = 4;
	assert_rejects(fs_check_feasible(&t2, x, TOL, &why), &why, "pool 0", "resource 0");

	/* user 1 needs network, server 2 has none */
	memcpy(x, t2_x, sizeof(x));
	x[0] = 3;
	x[1] = 0.1;
	assert_rejects(fs_check_feasible(&t2, x, TOL, &why), &why, "tenant 0", "pool 1");

	memcpy(x, t2_x, sizeof(x));
	x[5] = -1;
	assert_rejects(fs_check_feasible(&t2, x, TOL, &why), &why, "tenant 2", "pool 1");

	/* max_tasks is part of feasibility (our extension) */
	capped.max_tasks = mt;
	assert_rejects(fs_check_feasible(&capped, t2_x, TOL, &why), &why, "tenant 0", "max_tasks");
}

/* ALGORITHMS.md 3.9 classic DRF example: SI level of B is 0.5 * gamma_B = 1.5. */
static void sharing_incentive(void **state)
{
	(void)state;
	const struct fs_problem p = tu_drf_classic;
	const double good[] = {3, 2}, bad[] = {4, 1};
	struct fs_error why = {{0}};

	assert_true(fs_check_sharing_incentive(&p, good, TOL, &why));
	assert_rejects(fs_check_sharing_incentive(&p, bad, TOL, &why), &why, "tenant 1", NULL);
	assert_true(fs_check_sharing_incentive(&t2, t2_x, TOL, &why));
}

static void envy_free(void **state)
{
	(void)state;
	/* ALGORITHMS.md 3.9 placement counterexample: the literal EF fails, the
	 * placement-aware form holds (A cannot use server 2). */
	const struct fs_problem p = tu_placement_ef;
	const double good[] = {10, 0, 0, 100};
	/* B moved onto server 1 at A's expense: A envies B's server-1 bundle */
	const double bad[] = {2, 0, 8, 92};
	struct fs_error why = {{0}};

	assert_true(fs_check_envy_free(&p, good, TOL, &why));
	assert_rejects(fs_check_envy_free(&p, bad, TOL, &why), &why, "tenant 0 envies tenant 1",
		       NULL);
	assert_true(fs_check_envy_free(&t2, t2_x, TOL, &why));
}

static void psdsf_bottleneck(void **state)
{
	(void)state;
	struct fs_error why = {{0}};
	double x[8];

	assert_true(fs_check_psdsf(&t2, t2_x, TOL, &why));

	/* Users 3, 4 at 7.9 on server 2: nothing is saturated there. */
	memcpy(x, t2_x, sizeof(x));
	x[5] = x[7] = 7.9;
	assert_rejects(fs_check_psdsf(&t2, x, TOL, &why), &why, "tenant 2", "pool 1");

	/* [P4] Fig. 1 under TSF (ALGORITHMS.md 3.1, PUBLISHED [[4,0],[2,6]]): user 1
	 * has no bottleneck on server 1 (RAM is held by the richer user 2). */
	const double c[] = {9, 12, 100, 12, 12, 0};
	const double d[] = {1, 2, 10, 1, 2, 0};
	const struct fs_problem t1 = {
	    .n_tenants = 2, .n_pools = 2, .n_resources = 3, .capacity = c, .demand = d};
	const double tsf[] = {4, 0, 2, 6}, ps[] = {6, 0, 0, 6};
	assert_true(fs_check_psdsf(&t1, ps, TOL, &why));
	assert_rejects(fs_check_psdsf(&t1, tsf, TOL, &why), &why, "tenant 0", "pool 0");

	/* A capped tenant needs no bottleneck (our extension): T1 with user 1
	 * capped at 4 makes TSF's allocation pass for it. */
	const double mt[] = {4, INFINITY};
	struct fs_problem t1c = t1;
	t1c.max_tasks = mt;
	assert_true(fs_check_psdsf(&t1c, tsf, TOL, &why));
}

/* [P3] §4 via ALGORITHMS.md 8: r1 = r2 = (1, 0.2), r3 = (0.4, 0.8), e = 1/3:
 * NJC x = (1/3, 1/3, 5/6) passes; DRF's (0.4, 0.4, 0.5) fails for user 3. */
static void njc_three_users(void **state)
{
	(void)state;
	const double c[] = {1, 1};
	const double d[] = {1, 0.2, 1, 0.2, 0.4, 0.8};
	const double mt[] = {1, 1, 1};
	const struct fs_problem p = {.n_tenants = 3,
				     .n_pools = 1,
				     .n_resources = 2,
				     .capacity = c,
				     .demand = d,
				     .max_tasks = mt};
	const double njc[] = {1.0 / 3, 1.0 / 3, 5.0 / 6}, drf[] = {0.4, 0.4, 0.5};
	int cert[3];
	struct fs_error why = {{0}};
	struct fs_solution s;

	assert_true(fs_check_njc(&p, njc, TOL, cert, &why));
	for (int n = 0; n < 3; n++)
		assert_int_equal(cert[n], 0);
	assert_rejects(fs_check_njc(&p, drf, TOL, cert, &why), &why, "tenant 2", NULL);
	assert_int_equal(cert[2], FS_NO_RESOURCE);

	/* and DRF itself produces exactly that allocation */
	assert_int_equal(tu_solve_rule(&p, fs_solve_drf, NULL, &s, &why), 0);
	for (int n = 0; n < 3; n++)
		assert_close(s.x[n], drf[n], 1e-9);
	assert_false(fs_check_njc(&p, s.x, TOL, NULL, &why));
	fs_solution_free(&s);
}

/* [P3] four-resource example (ALGORITHMS.md 8): r1 = (1/2, 0, 0, 1),
 * r2 = (1, 1, 1, 0), e = 1/2: NJC x = (1, 1/2) (user 1 satisfied), DRF's
 * (2/3, 2/3) fails for user 1. Uncapped tenants always need a certificate. */
static void njc_four_resources(void **state)
{
	(void)state;
	const double c[] = {1, 1, 1, 1};
	const double d[] = {0.5, 0, 0, 1, 1, 1, 1, 0};
	const double mt[] = {1, 1};
	struct fs_problem p = {.n_tenants = 2,
			       .n_pools = 1,
			       .n_resources = 4,
			       .capacity = c,
			       .demand = d,
			       .max_tasks = mt};
	const double njc[] = {1, 0.5}, drf[] = {2.0 / 3, 2.0 / 3};
	int cert[2];
	struct fs_error why = {{0}};

	assert_true(fs_check_njc(&p, njc, TOL, cert, &why));
	assert_int_equal(cert[0], FS_CERT_SATISFIED);
	assert_int_equal(cert[1], 0);
	assert_rejects(fs_check_njc(&p, drf, TOL, cert, &why), &why, "tenant 0", NULL);

	/* without caps user 1 at 1 task is no longer satisfied; resources 0 and 3
	 * are saturated and its share on 3 (1) is the larger certificate */
	p.max_tasks = NULL;
	assert_true(fs_check_njc(&p, njc, TOL, cert, &why));
	assert_int_equal(cert[0], 3);

	/* several pools are rejected */
	const double c2[] = {1, 1, 1, 1, 1, 1, 1, 1};
	const double x2[] = {0, 0, 0, 0};
	p.n_pools = 2;
	p.capacity = c2;
	assert_rejects(fs_check_njc(&p, x2, TOL, NULL, &why), &why, "one pool", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(feasible),	       cmocka_unit_test(sharing_incentive),
	    cmocka_unit_test(envy_free),       cmocka_unit_test(psdsf_bottleneck),
	    cmocka_unit_test(njc_three_users), cmocka_unit_test(njc_four_resources),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
