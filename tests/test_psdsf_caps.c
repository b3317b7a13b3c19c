/* SPDX-License-Identifier: MIT */
/*
 * PS-DSF with per-pool caps (policy/psdsf_caps.h): the worked vectors of
 * docs/fleet.md, agreement with plain PS-DSF when nothing is capped, the
 * extended Theorem-1 certificate on seeded random fleets (small ones, and
 * oversubscribed ones of realistic size within a sweep budget), and the
 * checker rejecting allocations that break it.
 */
#include "testutil.h"
#include "psdsf_caps.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL	  1e-7
#define CHECK_TOL 1e-6

static void solve_ok(const struct fs_problem *p, const double *cap, struct fs_solution *s)
{
	struct fs_error err = {{0}};
	int r = fs_solve_psdsf_caps(p, cap, NULL, s, &err);

	if (r)
		print_error("fs_solve_psdsf_caps: %d %s\n", r, err.msg);
	assert_int_equal(r, 0);
}

static void assert_certified(const struct fs_problem *p, const double *cap, const double *x)
{
	struct fs_error why = {{0}};
	bool ok = fs_check_psdsf_caps(p, cap, x, CHECK_TOL, &why);

	if (!ok)
		print_error("%s\n", why.msg);
	assert_true(ok);
}

/* docs/fleet.md, vector F1: two hosts of 8 CPUs and 16 GB, tenants a, b, c
 * with d = [1, 1]; a works on h1 only, c on h2 only (2 tasks), b on both. */
static const double f1_cap_res[] = {8, 16, 8, 16};
static const double f1_demand[] = {1, 1, 1, 1, 1, 1};
static const double f1_caps[] = {8, 0, 8, 8, 0, 2}; /* [tenant][host] */
static const char *const f1_tenants[] = {"a", "b", "c"};
static const char *const f1_hosts[] = {"h1", "h2"};

static struct fs_problem f1_problem(const double *weight)
{
	return (struct fs_problem){.n_tenants = 3,
				   .n_pools = 2,
				   .n_resources = 2,
				   .capacity = f1_cap_res,
				   .demand = f1_demand,
				   .weight = weight,
				   .tenant_names = f1_tenants,
				   .pool_names = f1_hosts};
}

/* F1: the fleet answer a = 7 (h1), b = 1 (h1) + 6 (h2), c = 2 (h2), where
 * each host alone would give a 4, b 4 + 6, c 2. */
static void f1_fleet(void **state)
{
	(void)state;
	const struct fs_problem p = f1_problem(NULL);
	const double want[] = {7, 0, 1, 6, 0, 2};
	struct fs_solution s;

	solve_ok(&p, f1_caps, &s);
	for (size_t i = 0; i < 6; i++)
		assert_close(s.x[i], want[i], TOL);
	assert_close(s.tenant[0].total, 7, TOL);
	assert_close(s.tenant[1].total, 7, TOL);
	assert_close(s.tenant[2].total, 2, TOL);
	assert_close(s.tenant[0].share, 7.0 / 8, TOL);
	assert_certified(&p, f1_caps, s.x);
	fs_solution_free(&s);
}

/* The per-host answer of F1 is feasible but not a fleet allocation: on h1,
 * a (4 tasks in all) holds the saturated CPU with b (10 in all) richer. */
static void f1_per_host_rejected(void **state)
{
	(void)state;
	const struct fs_problem p = f1_problem(NULL);
	const double per_host[] = {4, 0, 4, 6, 0, 2};
	struct fs_error why = {{0}};

	assert_true(fs_check_feasible(&p, per_host, CHECK_TOL, NULL));
	assert_false(fs_check_psdsf_caps(&p, f1_caps, per_host, CHECK_TOL, &why));
	assert_non_null(strstr(why.msg, "tenant a"));
	assert_non_null(strstr(why.msg, "h1"));
}

/* F2: F1 with weight 2 for a: a reaches its cap (8 on h1), b keeps 6 on h2
 * and has nothing on h1, where its weighted VDS 6/8 is above a's 8/16. */
static void f2_weighted_cap(void **state)
{
	(void)state;
	const double w[] = {2, 1, 1};
	const struct fs_problem p = f1_problem(w);
	const double want[] = {8, 0, 0, 6, 0, 2};
	struct fs_solution s;

	solve_ok(&p, f1_caps, &s);
	for (size_t i = 0; i < 6; i++)
		assert_close(s.x[i], want[i], TOL);
	assert_certified(&p, f1_caps, s.x);
	fs_solution_free(&s);
}

/* A tenant above its cap fails the certificate even where all else holds. */
static void above_cap_rejected(void **state)
{
	(void)state;
	const struct fs_problem p = f1_problem(NULL);
	const double over[] = {7, 0, 0, 5, 0, 3}; /* c has 3 on h2, cap 2 */
	struct fs_error why = {{0}};

	assert_false(fs_check_psdsf_caps(&p, f1_caps, over, CHECK_TOL, &why));
	assert_non_null(strstr(why.msg, "above its cap"));
}

/* F3: [P4] Fig. 2 (ALGORITHMS.md 3.2) with caps that bind: u3 may run 2
 * tasks on s2 and u4 3; u1 and u2 share s1 and the rest of s2 stays idle. */
static void f3_paper_capped(void **state)
{
	(void)state;
	const double c[] = {9, 12, 100, 12, 12, 0};
	const double d[] = {1.5, 1, 10, 1, 2, 10, 0.5, 1, 0, 1, 0.5, 0};
	const double caps[] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, 2, INFINITY, 3};
	const struct fs_problem p = {
	    .n_tenants = 4, .n_pools = 2, .n_resources = 3, .capacity = c, .demand = d};
	struct fs_solution s;

	solve_ok(&p, caps, &s);
	assert_certified(&p, caps, s.x);
	assert_close(s.x[2 * 2 + 1], 2, TOL);
	assert_close(s.x[3 * 2 + 1], 3, TOL);
	assert_close(s.tenant[0].total, 2.6, 1e-6);
	assert_close(s.tenant[1].total, 2.6, 1e-6);
	assert_close(s.tenant[2].total, 5.2, 1e-6);
	assert_close(s.tenant[3].total, 3.9, 1e-6);
	/* u3, u4 take s1 only where u1, u2 leave it: the s1 CPU is full. */
	double cpu = 0;
	for (size_t n = 0; n < 4; n++)
		cpu += s.x[n * 2] * d[n * 3];
	assert_close(cpu, 9, TOL);
	fs_solution_free(&s);
}

/* No caps: the same totals as plain PS-DSF on the paper's Fig. 2. */
static void uncapped_is_psdsf(void **state)
{
	(void)state;
	const double c[] = {9, 12, 100, 12, 12, 0};
	const double d[] = {1.5, 1, 10, 1, 2, 10, 0.5, 1, 0, 1, 0.5, 0};
	const struct fs_problem p = {
	    .n_tenants = 4, .n_pools = 2, .n_resources = 3, .capacity = c, .demand = d};
	const double want[] = {3.6, 3.6, 8, 8};
	struct fs_solution s;

	solve_ok(&p, NULL, &s);
	for (size_t n = 0; n < 4; n++)
		assert_close(s.tenant[n].total, want[n], 1e-6);
	assert_true(fs_check_psdsf(&p, s.x, CHECK_TOL, NULL));
	fs_solution_free(&s);
}

/* Seeded random fleets: caps drawn per tenant and host, a quarter of them 0. */
static void random_fleets(void **state)
{
	(void)state;
	struct tu_rng g;
	int solved = 0;

	tu_rng_seed(&g, 18);
	for (int it = 0; it < 200; it++) {
		struct tu_instance in;
		size_t n = tu_range(&g, 2, 12), m = tu_range(&g, 1, 4), k = tu_range(&g, 1, 5);
		struct fs_solution s;
		double *cap;

		tu_random_instance(&in, &g, n, m, k, TU_WEIGHTS | TU_ZERO_DEMAND);
		cap = malloc(n * k * sizeof(double));
		assert_non_null(cap);
		for (size_t i = 0; i < n * k; i++) {
			double u = tu_uniform(&g);
			cap[i] = u < 0.25 ? 0 : u < 0.5 ? INFINITY : 10 * tu_uniform(&g);
		}
		solve_ok(&in.p, cap, &s);
		assert_certified(&in.p, cap, s.x);
		for (size_t i = 0; i < n * k; i++)
			assert_true(s.x[i] <= cap[i] * (1 + 1e-9) + 1e-12);
		solved++;
		fs_solution_free(&s);
		free(cap);
		tu_instance_free(&in);
	}
	assert_int_equal(solved, 200);
}

/*
 * Warm starts (the fleet leader's): from the last answer, a perturbed one,
 * or garbage (negative, NaN, above caps), the result is certified; from the
 * answer itself it settles in one sweep, and after one demand change in
 * fewer sweeps than cold.
 */
static void warm_starts(void **state)
{
	(void)state;
	struct tu_rng g;
	int fewer = 0, runs = 0;

	tu_rng_seed(&g, 17);
	for (int it = 0; it < 60; it++) {
		struct tu_instance in;
		size_t n = tu_range(&g, 2, 12), m = tu_range(&g, 1, 4), k = tu_range(&g, 1, 5);
		struct fs_solution s, w, c;
		struct fs_error err = {{0}};
		double *cap, *x0;

		tu_random_instance(&in, &g, n, m, k, TU_WEIGHTS | TU_ZERO_DEMAND);
		cap = malloc(n * k * sizeof(double));
		x0 = malloc(n * k * sizeof(double));
		assert_non_null(cap);
		assert_non_null(x0);
		for (size_t i = 0; i < n * k; i++) {
			double u = tu_uniform(&g);
			cap[i] = u < 0.25 ? 0 : u < 0.5 ? INFINITY : 10 * tu_uniform(&g);
		}
		solve_ok(&in.p, cap, &s);
		/* from its own answer: one sweep, same answer */
		assert_int_equal(fs_solve_psdsf_caps_from(&in.p, cap, NULL, s.x, &w, &err), 0);
		assert_int_equal(w.iterations, 1);
		assert_certified(&in.p, cap, w.x);
		fs_solution_free(&w);
		/* garbage start */
		for (size_t i = 0; i < n * k; i++)
			x0[i] = i % 3 == 0 ? -1 : i % 3 == 1 ? NAN : 1e6;
		assert_int_equal(fs_solve_psdsf_caps_from(&in.p, cap, NULL, x0, &w, &err), 0);
		assert_certified(&in.p, cap, w.x);
		fs_solution_free(&w);
		/* one tenant's cap changed (a demand change on one host) */
		for (size_t i = 0; i < n * k; i++)
			if (isfinite(cap[i]) && cap[i] > 0) {
				cap[i] *= 1.5;
				break;
			}
		assert_int_equal(fs_solve_psdsf_caps_from(&in.p, cap, NULL, s.x, &w, &err), 0);
		assert_certified(&in.p, cap, w.x);
		solve_ok(&in.p, cap, &c);
		fewer += w.iterations < c.iterations;
		runs += c.iterations > 1;
		fs_solution_free(&w);
		fs_solution_free(&c);
		fs_solution_free(&s);
		free(cap);
		free(x0);
		tu_instance_free(&in);
	}
	/* Not every instance needs more than a sweep cold; most that do gain. */
	assert_true(fewer * 2 >= runs);
}

/*
 * Oversubscribed fleets of realistic size (N 100-200, K 10-16, M 2-4):
 * each tenant works on 3 pools, with local demands (caps) of about 3 fair
 * shares there, so that every pool is asked for about 3 times what it has.
 * The plain sweeps drifted here for hundreds to thousands of sweeps (as
 * the single-host solver's did before its acceleration); the accelerated
 * ones must settle within SWEEP_BUDGET, cold and after a period's change
 * (1 % of the tenants' caps by up to +-20 %), every answer certified and
 * within its caps. Measured on these 20 instances: the plain sweeps took
 * up to 1,866 sweeps cold and 184 warm, the accelerated ones 147 and 60.
 */
#define SWEEP_BUDGET 400
#define FLEET_SEEDS  20

/* Each tenant on 3 pools with local demands of about `load` fair shares. */
static void fleet_caps(struct tu_instance *in, struct tu_rng *g, double load, double *cap)
{
	const size_t N = in->p.n_tenants, K = in->p.n_pools, hosts = 3;

	for (size_t i = 0; i < N * K; i++)
		cap[i] = 0;
	for (size_t n = 0; n < N; n++)
		for (size_t h = 0; h < hosts;) {
			const size_t k = tu_range(g, 0, K - 1);
			if (cap[n * K + k] > 0 || !(fs_gamma(&in->p, n, k) > 0))
				continue;
			cap[n * K + k] = load * fs_gamma(&in->p, n, k) * (double)K /
					 (double)(N * hosts) * (0.2 + 1.6 * tu_uniform(g));
			h++;
		}
}

static int solve_within(const struct fs_problem *p, const double *cap, const double *x0,
			struct fs_solution *s)
{
	const struct fs_options o = {.tol = FS_DEFAULT_TOL, .max_iter = SWEEP_BUDGET};
	struct fs_error err = {{0}};
	int r = fs_solve_psdsf_caps_from(p, cap, &o, x0, s, &err);

	if (r)
		print_error("fs_solve_psdsf_caps_from: %d %s\n", r, err.msg);
	assert_int_equal(r, 0);
	/* (at the cap the solver returns 0 for a point its check at 1e-6
	 * passes: below it, the sweeps settled) */
	assert_true(s->iterations < SWEEP_BUDGET);
	assert_certified(p, cap, s->x);
	for (size_t i = 0; i < p->n_tenants * p->n_pools; i++)
		assert_true(s->x[i] <= cap[i] * (1 + 1e-9) + 1e-12);
	return s->iterations;
}

/* FLEET_SEEDS fleets of local demand `load`, solved cold and warm after a
 * period's change within SWEEP_BUDGET; the warm sweeps summed. */
static int fleets(double load, uint64_t seed)
{
	struct tu_rng g;
	int worst_cold = 0, worst_warm = 0, sum_warm = 0;

	tu_rng_seed(&g, seed);
	for (int it = 0; it < FLEET_SEEDS; it++) {
		struct tu_instance in;
		const size_t n = tu_range(&g, 100, 200), m = tu_range(&g, 2, 4),
			     k = tu_range(&g, 10, 16);
		struct fs_solution s, w;
		double *cap = malloc(n * k * sizeof(double));

		assert_non_null(cap);
		tu_random_instance(&in, &g, n, m, k, TU_WEIGHTS | TU_ZERO_DEMAND);
		fleet_caps(&in, &g, load, cap);
		const int cold = solve_within(&in.p, cap, NULL, &s);
		for (size_t c = 0; c < n / 100; c++) {
			const size_t t = tu_range(&g, 0, n - 1);
			for (size_t i = 0; i < k; i++)
				cap[t * k + i] *= 1 + 0.2 * (2 * tu_uniform(&g) - 1);
		}
		const int warm = solve_within(&in.p, cap, s.x, &w);
		worst_cold = cold > worst_cold ? cold : worst_cold;
		worst_warm = warm > worst_warm ? warm : worst_warm;
		sum_warm += warm;
		fs_solution_free(&w);
		fs_solution_free(&s);
		free(cap);
		tu_instance_free(&in);
	}
	print_message("fleets of load %g: at most %d sweeps cold, %d warm (budget %d), %d warm in "
		      "all\n",
		      load, worst_cold, worst_warm, SWEEP_BUDGET, sum_warm);
	return sum_warm;
}

static void oversubscribed_fleets(void **state)
{
	(void)state;
	fleets(3, 19);
}

/*
 * Fleets whose hosts are asked for about 1.5 times what they have (nearly
 * fitting; at 1 share these random fleets settle in 2 sweeps warm either
 * way): a warm re-solve is then mostly a geometric tail from a start near
 * the answer, which the acceleration shortens when it starts as soon as a
 * sweep's move says the start is near (psdsf_caps.c, WARM_NEAR) rather
 * than at sweep ACCEL_FROM. Warm sweeps in all on these 20 fleets, measured:
 * 111 when it waited for ACCEL_FROM, 84 now (at load 2: 204 -> 170; the
 * oversubscribed ones above: 248 -> 224); the bound is between.
 */
#define NEAR_FITTING_WARM_SWEEPS 97

static void near_fitting_fleets(void **state)
{
	(void)state;
	assert_true(fleets(1.5, 20) <= NEAR_FITTING_WARM_SWEEPS);
}

/*
 * Weights 1e4 to 1e14 apart on one pool (issue 16's concern, for the capped
 * level walk): five capped tenants of weight W and one uncapped of weight 1.
 * When the heavy ones reach their caps, the rate they leave to the light one
 * is a few ulps of theirs; carried from breakpoint to breakpoint (cross_to)
 * without the exact recompute, it left the pool up to 4e-6 short of full at
 * W = 1e9 and 15 % at 1e14, and the answer failed the certificate at 1e-9 in
 * most of these cases.
 */
static void weights_far_apart(void **state)
{
	(void)state;
	const double capacity[1] = {1};
	const double demand[6] = {1, 1, 1, 1, 1, 1};
	struct tu_rng g;

	tu_rng_seed(&g, 16);
	for (int e = 4; e <= 14; e++)
		for (int it = 0; it < 30; it++) {
			const double W = pow(10, e) * (1 + 9 * tu_uniform(&g));
			double weight[6], cap[6];
			for (size_t n = 0; n < 5; n++) {
				weight[n] = W * (0.1 + tu_uniform(&g));
				cap[n] = 0.05 + 0.1 * tu_uniform(&g);
			}
			weight[5] = 1;
			cap[5] = INFINITY;
			const struct fs_problem p = {.n_tenants = 6,
						     .n_pools = 1,
						     .n_resources = 1,
						     .capacity = capacity,
						     .demand = demand,
						     .weight = weight};
			struct fs_solution s;
			double used = 0;

			solve_ok(&p, cap, &s);
			for (size_t n = 0; n < 6; n++)
				used += s.x[n];
			assert_true(used >= 1 - 1e-12);
			struct fs_error why = {{0}};
			if (!fs_check_psdsf_caps(&p, cap, s.x, 1e-9, &why))
				fail_msg("W = %g: %s", W, why.msg);
			fs_solution_free(&s);
		}
}

/*
 * Weights at the ends of the range: one so small that weight x gamma
 * underflows to 0 (the tenant's start level is then 0 / 0), and one so large
 * that it overflows. A NaN level sorted first stopped the walk there and
 * gave every tenant its room, x NaN with rc 0 (a helper's review of the
 * breakpoint sort, which compared NaN as greater both ways); an overflow
 * gave x NaN with rc 0 before and after it. The answer must be a certified
 * allocation or -ERANGE, never numbers that are not.
 */
static void weights_at_the_ends(void **state)
{
	(void)state;
	const double capacity[2] = {1, 1e10}, demand[3] = {4, 4, 4};
	const double tiny[3] = {5e-324, 1, 1}, huge[3] = {1e300, 1, 1};
	const double *weights[] = {tiny, huge};

	for (size_t w = 0; w < 2; w++)
		for (size_t c = 0; c < 2; c++) {
			const struct fs_problem p = {.n_tenants = 3,
						     .n_pools = 1,
						     .n_resources = 1,
						     .capacity = &capacity[c],
						     .demand = demand,
						     .weight = weights[w]};
			struct fs_solution s;
			struct fs_error err = {{0}};
			const int r = fs_solve_psdsf_caps(&p, NULL, NULL, &s, &err);

			if (r == -ERANGE) {
				assert_non_null(strstr(err.msg, "not finite"));
			} else {
				assert_int_equal(r, 0);
				for (size_t n = 0; n < 3; n++)
					assert_true(isfinite(s.x[n]) && s.x[n] >= 0);
			}
			print_message("weight %g, capacity %g: %d, x %g %g %g\n", weights[w][0],
				      capacity[c], r, s.x[0], s.x[1], s.x[2]);
			/* The tiny weight's tenant gets 5e-324 times the others'
			 * tasks, 0 or a subnormal (no certificate can hold: its
			 * weighted VDS is 0 / 0 or x / 0); the others split the
			 * pool. */
			if (w == 0) {
				assert_int_equal(r, 0);
				assert_true(s.x[0] < 1e-300);
				assert_float_equal(s.x[1], capacity[c] / 8, 1e-12 * capacity[c]);
				assert_float_equal(s.x[2], capacity[c] / 8, 1e-12 * capacity[c]);
			} else if (r == 0) {
				assert_certified(&p, NULL, s.x);
			}
			fs_solution_free(&s);
		}
}

static void bad_caps(void **state)
{
	(void)state;
	const struct fs_problem p = f1_problem(NULL);
	const double caps[] = {8, 0, -1, 8, 0, 2};
	struct fs_error err = {{0}};
	struct fs_solution s;

	assert_int_equal(fs_solve_psdsf_caps(&p, caps, NULL, &s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "tenant b"));
	fs_solution_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(f1_fleet),
	    cmocka_unit_test(f1_per_host_rejected),
	    cmocka_unit_test(f2_weighted_cap),
	    cmocka_unit_test(above_cap_rejected),
	    cmocka_unit_test(f3_paper_capped),
	    cmocka_unit_test(uncapped_is_psdsf),
	    cmocka_unit_test(random_fleets),
	    cmocka_unit_test(bad_caps),
	    cmocka_unit_test(warm_starts),
	    cmocka_unit_test(oversubscribed_fleets),
	    cmocka_unit_test(near_fitting_fleets),
	    cmocka_unit_test(weights_far_apart),
	    cmocka_unit_test(weights_at_the_ends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
