/* SPDX-License-Identifier: MIT */
/*
 * No justified complaints (policy/njc.c, via policy/dual.c): [P3] Dolev et al.
 * sections 3-5 and ALGORITHMS.md section 8.
 */
#include "testutil.h"
#include "dual.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void solve_ok(const struct fs_problem *p, struct fs_solution *s)
{
	struct fs_error err = {{0}};
	int r = fs_solve(p, FS_RULE_NJC, NULL, s, &err);

	if (r != 0)
		print_error("njc: %s\n", err.msg);
	assert_int_equal(r, 0);
}

/*
 * [P3] section 4, Fig. 2 (ALGORITHMS.md 8, PUBLISHED): r_1 = r_2 = (1, 0.2),
 * r_3 = (0.4, 0.8), e = 1/3 each. Resource 1 is the only bottleneck and the NJC
 * allocation is x = (1/3, 1/3, 5/6), i.e. a_3 = (1/3, 2/3): every user holds
 * exactly its entitlement of resource 1 (its certificate).
 */
static void test_p3_two_resources(void **state)
{
	(void)state;
	static const double cap[] = {1, 1};
	static const double dem[] = {1, 0.2, 1, 0.2, 0.4, 0.8};
	static const double mt[] = {1, 1, 1};
	const struct fs_problem p = {.n_tenants = 3,
				     .n_pools = 1,
				     .n_resources = 2,
				     .capacity = cap,
				     .demand = dem,
				     .max_tasks = mt};
	static const double want[] = {1.0 / 3, 1.0 / 3, 5.0 / 6};
	struct fs_solution s;

	solve_ok(&p, &s);
	for (size_t n = 0; n < 3; n++) {
		assert_close(s.x[n], want[n], 1e-9);
		assert_close(s.tenant[n].share, want[n], 1e-9);
		assert_int_equal(s.tenant[n].certificate, 0);
		assert_false(s.tenant[n].capped);
	}
	/* a_3 = (1/3, 2/3); resource 2 is not saturated (0.8). */
	assert_close(s.x[2] * dem[4], 1.0 / 3, 1e-9);
	assert_close(s.x[2] * dem[5], 2.0 / 3, 1e-9);
	fs_solution_free(&s);
}

/*
 * [P3] section 4, the utilisation counter-example (ALGORITHMS.md 8,
 * PUBLISHED): r_1 = (1/2, 0, 0, 1), r_2 = (1, 1, 1, 0), e = 1/2: NJC x = (1, 1/2).
 * User 1 gets all it asked for; user 2 holds exactly 1/2 of the saturated
 * resource 1.
 */
static void test_p3_four_resources(void **state)
{
	(void)state;
	static const double cap[] = {1, 1, 1, 1};
	static const double dem[] = {0.5, 0, 0, 1, 1, 1, 1, 0};
	static const double mt[] = {1, 1};
	const struct fs_problem p = {.n_tenants = 2,
				     .n_pools = 1,
				     .n_resources = 4,
				     .capacity = cap,
				     .demand = dem,
				     .max_tasks = mt};
	struct fs_solution s;

	solve_ok(&p, &s);
	assert_close(s.x[0], 1, 1e-9);
	assert_close(s.x[1], 0.5, 1e-9);
	assert_int_equal(s.tenant[0].certificate, FS_CERT_SATISFIED);
	assert_true(s.tenant[0].capped);
	assert_int_equal(s.tenant[1].certificate, 0);
	assert_close(s.tenant[1].share, 0.5, 1e-9);
	fs_solution_free(&s);
}

/*
 * [P3] section 5.5 ring of four (ALGORITHMS.md 8): each user requests all of
 * its own resource and its two neighbours', e = 1/4. NJC is not unique there;
 * the PF point the paper's trajectory selects is x_i = 1/3 with all four
 * resources saturated.
 */
static void test_p3_ring(void **state)
{
	(void)state;
	static const double cap[] = {1, 1, 1, 1};
	static const double dem[] = {1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1};
	static const double mt[] = {1, 1, 1, 1};
	const struct fs_problem p = {.n_tenants = 4,
				     .n_pools = 1,
				     .n_resources = 4,
				     .capacity = cap,
				     .demand = dem,
				     .max_tasks = mt};
	struct fs_solution s;

	solve_ok(&p, &s);
	for (size_t n = 0; n < 4; n++) {
		const int c = s.tenant[n].certificate;
		assert_close(s.x[n], 1.0 / 3, 1e-9);
		assert_true(c >= 0 && c < 4);
		assert_true(dem[n * 4 + (size_t)c] > 0);
	}
	fs_solution_free(&s);
}

/* One resource, weights 1 and 3, no caps: e = (1/4, 3/4) of 10 units. */
static void test_weights_uncapped(void **state)
{
	(void)state;
	static const double cap[] = {10};
	static const double dem[] = {1, 2};
	static const double w[] = {1, 3};
	const struct fs_problem p = {.n_tenants = 2,
				     .n_pools = 1,
				     .n_resources = 1,
				     .capacity = cap,
				     .demand = dem,
				     .weight = w};
	struct fs_solution s;

	solve_ok(&p, &s);
	assert_close(s.x[0], 2.5, 1e-9);
	assert_close(s.x[1], 7.5 / 2, 1e-9);
	/* Uncapped: share is the task count. */
	assert_close(s.tenant[1].share, 3.75, 1e-9);
	assert_int_equal(s.tenant[0].certificate, 0);
	assert_int_equal(s.tenant[1].certificate, 0);
	fs_solution_free(&s);
}

/* A cap below the entitlement frees capacity for the others. */
static void test_caps(void **state)
{
	(void)state;
	static const double cap[] = {10, 100};
	static const double dem[] = {1, 1, 1, 1, 1, 1};
	static const double mt[] = {1, 20, INFINITY};
	const struct fs_problem p = {.n_tenants = 3,
				     .n_pools = 1,
				     .n_resources = 2,
				     .capacity = cap,
				     .demand = dem,
				     .max_tasks = mt};
	struct fs_solution s;

	solve_ok(&p, &s);
	assert_close(s.x[0], 1, 1e-9);
	assert_close(s.x[1], 4.5, 1e-9);
	assert_close(s.x[2], 4.5, 1e-9);
	assert_int_equal(s.tenant[0].certificate, FS_CERT_SATISFIED);
	assert_close(s.tenant[0].share, 1, 1e-9);
	assert_close(s.tenant[1].share, 4.5 / 20, 1e-9);
	assert_close(s.tenant[2].share, 4.5, 1e-9);
	assert_int_equal(s.tenant[1].certificate, 0);
	assert_int_equal(s.tenant[2].certificate, 0);
	fs_solution_free(&s);
}

/* Nothing is contended: everyone gets its whole request. */
static void test_all_satisfied(void **state)
{
	(void)state;
	static const double cap[] = {10, 10};
	static const double dem[] = {1, 2, 3, 1};
	static const double mt[] = {2, 1};
	const struct fs_problem p = {.n_tenants = 2,
				     .n_pools = 1,
				     .n_resources = 2,
				     .capacity = cap,
				     .demand = dem,
				     .max_tasks = mt};
	struct fs_solution s;

	solve_ok(&p, &s);
	assert_close(s.x[0], 2, 1e-9);
	assert_close(s.x[1], 1, 1e-9);
	assert_int_equal(s.tenant[0].certificate, FS_CERT_SATISFIED);
	assert_int_equal(s.tenant[1].certificate, FS_CERT_SATISFIED);
	fs_solution_free(&s);
}

/*
 * A tenant that demands a resource of capacity 0 is unserved: it gets 0 and is
 * left out of the entitlements, so the other two split as if alone.
 */
static void test_unserved(void **state)
{
	(void)state;
	static const double cap[] = {12, 0};
	static const double dem[] = {1, 0, 1, 1, 2, 0};
	static const double w[] = {1, 5, 1};
	const struct fs_problem p = {.n_tenants = 3,
				     .n_pools = 1,
				     .n_resources = 2,
				     .capacity = cap,
				     .demand = dem,
				     .weight = w};
	struct fs_solution s;

	solve_ok(&p, &s);
	assert_true(s.tenant[1].unserved);
	assert_close(s.x[1], 0, 0);
	assert_close(s.tenant[1].share, 0, 0);
	assert_int_equal(s.tenant[1].certificate, FS_NO_RESOURCE);
	assert_close(s.x[0], 6, 1e-9);
	assert_close(s.x[2], 3, 1e-9);
	fs_solution_free(&s);
}

/* A tenant not eligible on the pool is unserved too (all capacities positive). */
static void test_ineligible_unserved(void **state)
{
	(void)state;
	static const double cap[] = {12, 5};
	static const double dem[] = {1, 0, 1, 1, 2, 0};
	static const double w[] = {1, 5, 1};
	static const bool elig[] = {true, false, true};
	const struct fs_problem p = {.n_tenants = 3,
				     .n_pools = 1,
				     .n_resources = 2,
				     .capacity = cap,
				     .demand = dem,
				     .weight = w,
				     .eligible = elig};
	struct fs_solution s;

	solve_ok(&p, &s);
	assert_true(s.tenant[1].unserved);
	assert_close(s.x[1], 0, 0);
	assert_int_equal(s.tenant[1].certificate, FS_NO_RESOURCE);
	assert_close(s.x[0], 6, 1e-9);
	assert_close(s.x[2], 3, 1e-9);
	fs_solution_free(&s);
}

static void test_all_unserved(void **state)
{
	(void)state;
	static const double cap[] = {0};
	static const double dem[] = {1, 2};
	const struct fs_problem p = {
	    .n_tenants = 2, .n_pools = 1, .n_resources = 1, .capacity = cap, .demand = dem};
	struct fs_solution s;

	solve_ok(&p, &s);
	for (size_t n = 0; n < 2; n++) {
		assert_true(s.tenant[n].unserved);
		assert_close(s.x[n], 0, 0);
		assert_int_equal(s.tenant[n].certificate, FS_NO_RESOURCE);
	}
	fs_solution_free(&s);
}

static void test_rejects_several_pools(void **state)
{
	(void)state;
	static const double cap[] = {1, 1};
	static const double dem[] = {1, 1};
	const struct fs_problem p = {
	    .n_tenants = 2, .n_pools = 2, .n_resources = 1, .capacity = cap, .demand = dem};
	struct fs_solution s;
	struct fs_error err = {{0}};

	assert_int_equal(fs_solve(&p, FS_RULE_NJC, NULL, &s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "one pool"));
	fs_solution_free(&s);
}

/*
 * Independent optimality check for small instances. The PF point x maximises
 * sum e_n log x_n over the polytope P, so for every y in P the first-order
 * condition sum e_n y_n / x_n <= sum e_n = 1 holds; the left side is linear,
 * so checking every vertex of P (found by brute force over sets of active
 * constraints) is exact. Unserved tenants are fixed at 0.
 */
static double max_over_vertices(const struct fs_problem *p, const double *x, const double *e)
{
	const size_t N = p->n_tenants, M = p->n_resources;
	/* Constraint rows: y_n >= 0 (N), y_n <= cap_n (N), resources (M). */
	const size_t R = 2 * N + M;
	double best = -INFINITY;

	assert_true(N <= 4 && R <= 16);
	for (unsigned mask = 0; mask < (1u << R); mask++) {
		double A[4][5];
		size_t rows = 0;
		bool ok = true;
		if ((size_t)__builtin_popcount(mask) != N)
			continue;
		for (size_t c = 0; c < R; c++) {
			if (!(mask & (1u << c)))
				continue;
			for (size_t j = 0; j < N; j++)
				A[rows][j] = 0;
			if (c < N) {
				A[rows][c] = 1;
				A[rows][N] = 0;
			} else if (c < 2 * N) {
				if (!isfinite(fs_max_tasks(p, c - N))) {
					ok = false;
					break;
				}
				A[rows][c - N] = 1;
				A[rows][N] = fs_max_tasks(p, c - N);
			} else {
				const size_t r = c - 2 * N;
				for (size_t j = 0; j < N; j++)
					A[rows][j] = p->demand[j * M + r];
				A[rows][N] = p->capacity[r];
			}
			rows++;
		}
		/* Gaussian elimination with partial pivoting. */
		for (size_t col = 0; ok && col < N; col++) {
			size_t piv = col;
			for (size_t r = col + 1; r < N; r++)
				if (fabs(A[r][col]) > fabs(A[piv][col]))
					piv = r;
			if (fabs(A[piv][col]) < 1e-12) {
				ok = false;
				break;
			}
			for (size_t j = 0; j <= N; j++) {
				double t = A[col][j];
				A[col][j] = A[piv][j];
				A[piv][j] = t;
			}
			for (size_t r = 0; r < N; r++) {
				if (r == col)
					continue;
				double f = A[r][col] / A[col][col];
				for (size_t j = col; j <= N; j++)
					A[r][j] -= f * A[col][j];
			}
		}
		if (!ok)
			continue;
		double y[4], obj = 0;
		for (size_t j = 0; j < N; j++) {
			y[j] = A[j][N] / A[j][j];
			if (y[j] < -1e-9 || y[j] > fs_max_tasks(p, j) * (1 + 1e-9) + 1e-9 ||
			    (fs_gamma(p, j, 0) <= 0 && y[j] > 1e-9))
				ok = false;
		}
		for (size_t r = 0; ok && r < M; r++) {
			double use = 0;
			for (size_t j = 0; j < N; j++)
				use += y[j] * p->demand[j * M + r];
			if (use > p->capacity[r] * (1 + 1e-9) + 1e-12)
				ok = false;
		}
		if (!ok)
			continue;
		for (size_t j = 0; j < N; j++)
			if (e[j] > 0)
				obj += e[j] * y[j] / x[j];
		if (obj > best)
			best = obj;
	}
	return best;
}

static void test_small_instances_are_pf(void **state)
{
	(void)state;
	struct tu_rng g;

	tu_rng_seed(&g, 7);
	for (int i = 0; i < 150; i++) {
		struct tu_instance in;
		const size_t n = 1 + (size_t)(tu_uniform(&g) * 4);
		const size_t m = 1 + (size_t)(tu_uniform(&g) * 4);
		struct fs_solution s;
		double e[4] = {0}, wsum = 0;

		tu_random_instance(&in, &g, n, m, 1,
				   TU_WEIGHTS | TU_CAPS | (i % 2 ? TU_ZERO_DEMAND : 0) |
				       (i % 3 ? 0 : TU_ZERO_CAPACITY));
		solve_ok(&in.p, &s);
		for (size_t j = 0; j < n; j++)
			if (fs_gamma(&in.p, j, 0) > 0)
				wsum += fs_weight(&in.p, j);
		for (size_t j = 0; j < n; j++)
			if (fs_gamma(&in.p, j, 0) > 0)
				e[j] = fs_weight(&in.p, j) / wsum;
		if (wsum > 0) {
			const double v = max_over_vertices(&in.p, s.x, e);
			if (v > 1 + 1e-7)
				print_error("instance %d: sum e y / x = %.12g > 1\n", i, v);
			assert_true(v <= 1 + 1e-7);
			/* x itself is a feasible point where the sum is exactly 1. */
			assert_true(v >= 1 - 1e-7);
		}
		fs_solution_free(&s);
		tu_instance_free(&in);
	}
}

/*
 * Seeded sweep of one-pool instances: feasible, NJC condition (2) by the
 * independent predicate fs_check_njc with the same certificates' validity,
 * and Pareto optimal (fs_check_pareto; [P3] section 3: NJC implies PO).
 */
static void test_random_sweep(void **state)
{
	(void)state;
	static const unsigned flags[] = {
	    0,
	    TU_WEIGHTS,
	    TU_CAPS,
	    TU_ZERO_DEMAND | TU_WEIGHTS,
	    TU_ZERO_CAPACITY | TU_CAPS | TU_WEIGHTS | TU_ZERO_DEMAND,
	};
	struct tu_rng g;
	int iters = 0;

	tu_rng_seed(&g, 2026);
	for (int i = 0; i < 320; i++) {
		struct tu_instance in;
		const size_t n = 1 + (size_t)(tu_uniform(&g) * 12);
		const size_t m = 1 + (size_t)(tu_uniform(&g) * 6);
		struct fs_solution s;
		struct fs_error why = {{0}};
		int cert[12];
		bool holds = false;

		tu_random_instance(&in, &g, n, m, 1, flags[i % 5]);
		solve_ok(&in.p, &s);
		iters += s.iterations;
		assert_true(fs_check_feasible(&in.p, s.x, 1e-9, &why));
		if (!fs_check_njc(&in.p, s.x, 1e-6, cert, &why))
			print_error("instance %d: %s\n", i, why.msg);
		assert_true(fs_check_njc(&in.p, s.x, 1e-6, cert, &why));
		for (size_t j = 0; j < n; j++) {
			const int c = s.tenant[j].certificate;
			if (s.tenant[j].unserved) {
				assert_int_equal(c, FS_NO_RESOURCE);
				continue;
			}
			/* Both sides agree on whether the tenant is satisfied. */
			assert_int_equal(c == FS_CERT_SATISFIED, cert[j] == FS_CERT_SATISFIED);
			assert_true(c == FS_CERT_SATISFIED || (c >= 0 && (size_t)c < m));
		}
		assert_int_equal(fs_check_pareto(&in.p, s.x, 1e-6, &holds, &why), 0);
		if (!holds)
			print_error("instance %d: %s\n", i, why.msg);
		assert_true(holds);
		fs_solution_free(&s);
		tu_instance_free(&in);
	}
	/* Newton on a dual with <= 6 variables: a handful of steps each. */
	assert_true(iters < 320 * 40);
}

/* A larger instance exercises the dual at scale (no timing here: see the
 * benchmarks). */
static void test_large_instance(void **state)
{
	(void)state;
	struct tu_rng g;
	struct tu_instance in;
	struct fs_solution s;
	struct fs_error why = {{0}};

	tu_rng_seed(&g, 99);
	tu_random_instance(&in, &g, 2000, 8, 1, TU_WEIGHTS | TU_CAPS | TU_ZERO_DEMAND);
	solve_ok(&in.p, &s);
	assert_true(fs_check_feasible(&in.p, s.x, 1e-9, &why));
	if (!fs_check_njc(&in.p, s.x, 1e-6, NULL, &why))
		print_error("%s\n", why.msg);
	assert_true(fs_check_njc(&in.p, s.x, 1e-6, NULL, &why));
	assert_true(s.iterations < 60);
	fs_solution_free(&s);
	tu_instance_free(&in);
}

/* The dual's answer checked from scratch: feasible, every priced resource
 * saturated, and x_n the response to its own price (scaled as reported). */
static void assert_dual_kkt(const struct fs_dual_problem *dp, const double *lambda, const double *x,
			    double scaled)
{
	const size_t n = dp->n, m = dp->m;

	for (size_t j = 0; j < m; j++) {
		double use = 0;
		for (size_t i = 0; i < n; i++)
			use += dp->a[i * m + j] * x[i];
		assert_true(lambda[j] >= 0);
		assert_true(use <= dp->cap[j] * (1 + 1e-12));
		if (lambda[j] > 0)
			assert_true(use >= dp->cap[j] * (1 - 1e-8));
	}
	for (size_t i = 0; i < n; i++) {
		const double hi = dp->hi ? dp->hi[i] : INFINITY, B = dp->B ? dp->B[i] : 0;
		double p = dp->offset ? dp->offset[i] : 0, want;
		for (size_t j = 0; j < m; j++)
			p += dp->a[i * m + j] * lambda[j];
		want = p <= 0 ? hi : fmin(hi, fmax(0, dp->A[i] * pow(p, -1 / dp->alpha) - B));
		assert_close(x[i], want * scaled, 1e-8);
	}
}

/* One random instance of the dual's response family (test_dual_*). */
struct dual_case {
	size_t n, m;
	double alpha;
	double *a, *x, *A, *B, *hi, *off; /* [n][m], then [n] each */
	double cap[8], lambda[8];
	struct fs_dual_stats st;
};

static void dual_case_alloc(struct dual_case *d, size_t n, size_t m, double alpha)
{
	assert_true(m <= 8);
	*d = (struct dual_case){.n = n, .m = m, .alpha = alpha};
	d->a = calloc(n * m, sizeof(double));
	d->x = calloc(n, sizeof(double));
	d->A = calloc(n, sizeof(double));
	d->B = calloc(n, sizeof(double));
	d->hi = calloc(n, sizeof(double));
	d->off = calloc(n, sizeof(double));
	assert_true(d->a && d->x && d->A && d->B && d->hi && d->off);
}

static struct fs_dual_problem dual_case_problem(const struct dual_case *d)
{
	return (struct fs_dual_problem){.n = d->n,
					.m = d->m,
					.a = d->a,
					.cap = d->cap,
					.alpha = d->alpha,
					.A = d->A,
					.B = d->B,
					.hi = d->hi,
					.offset = d->off};
}

/* Solves case c cold to 1e-12 and checks the answer's KKT conditions. */
static void dual_case_solve(struct dual_case *d, int c)
{
	const struct fs_dual_problem dp = dual_case_problem(d);
	const struct fs_dual_options o = {.tol = 1e-12};
	int r;

	memset(d->lambda, 0, sizeof(d->lambda));
	r = fs_dual_solve(&dp, &o, d->lambda, d->x, &d->st);
	if (r != 0)
		print_error("case %d: %d after %d Newton steps, %d sweeps\n", c, r, d->st.newton,
			    d->st.fallback);
	assert_int_equal(r, 0);
	assert_dual_kkt(&dp, d->lambda, d->x, d->st.scaled);
}

static void dual_case_free(struct dual_case *d)
{
	free(d->a);
	free(d->x);
	free(d->A);
	free(d->B);
	free(d->hi);
	free(d->off);
}

/*
 * The dual solver on its own (policy/dual.c), over its whole response family
 * x_n(p) = clip(A p^(-1/alpha) - B, 0, hi) with price offsets, zero columns,
 * duplicated (collinear) resources and fewer items than resources (singular
 * Hessians): it must converge, and its answer must satisfy the KKT conditions
 * checked here from scratch: feasible, every priced resource saturated, and
 * x_n the response to its own price. A warm restart from the answer must stop
 * at once.
 */
static void test_dual_kkt(void **state)
{
	(void)state;
	static const double alphas[] = {1, 1, 1.5, 2, 3, 10};
	struct tu_rng g;

	tu_rng_seed(&g, 31337);
	for (int c = 0; c < 600; c++) {
		const size_t n = 1 + (size_t)(tu_uniform(&g) * (c % 10 ? 8 : 200));
		const size_t m = 1 + (size_t)(tu_uniform(&g) * 6);
		const int style = c % 3;
		struct dual_case d;

		dual_case_alloc(&d, n, m, alphas[c % 6]);
		for (size_t j = 0; j < m; j++)
			d.cap[j] = 0.5 + tu_uniform(&g);
		for (size_t i = 0; i < n; i++) {
			bool any = false;
			for (size_t j = 0; j < m; j++) {
				double v = tu_uniform(&g) < 0.3 ? 0 : tu_uniform(&g);
				if (style == 2 && j > 0) /* collinear columns */
					v = d.a[i * m] * (double)(1 + j % 2);
				d.a[i * m + j] = v;
				any |= v > 0;
			}
			if (!any)
				d.a[i * m] = 0.5;
			d.A[i] = pow(10, -2 + 4 * tu_uniform(&g));
			d.B[i] = style == 1 || tu_uniform(&g) < 0.5
				     ? 0
				     : pow(10, -2 + 3 * tu_uniform(&g));
			d.hi[i] =
			    tu_uniform(&g) < 0.4 ? pow(10, -2 + 3 * tu_uniform(&g)) : INFINITY;
			d.off[i] = tu_uniform(&g) < 0.2 ? tu_uniform(&g) : 0;
		}
		dual_case_solve(&d, c);
		const struct fs_dual_problem dp = dual_case_problem(&d);
		const struct fs_dual_options warm = {.tol = 1e-12, .warm = true};
		assert_int_equal(fs_dual_solve(&dp, &warm, d.lambda, d.x, &d.st), 0);
		assert_true(d.st.newton + d.st.fallback <= 2);
		dual_case_free(&d);
	}
}

/*
 * Large cold solves start from the prices of a sample of the items
 * (dual.c, sample_start): the answer must still meet the KKT conditions,
 * over the response family and up to 8 resources, also where the sample's
 * prices leave items unbounded (a resource only unsampled items use, which
 * the start then prices itself: dual.c, price_unbounded).
 */
static void test_dual_sampled_start(void **state)
{
	(void)state;
	static const double alphas[] = {1, 1, 2, 10};
	struct tu_rng g;

	tu_rng_seed(&g, 4242);
	for (int c = 0; c < 16; c++) {
		const size_t n = 2048 + (size_t)(tu_uniform(&g) * 4000);
		const size_t m = 1 + (size_t)c % 8;
		const bool lone = c % 4 == 3 && m > 1; /* resource m-1: see below */
		struct dual_case d;

		dual_case_alloc(&d, n, m, alphas[c % 4]);
		for (size_t j = 0; j < m; j++)
			d.cap[j] = (double)n * (0.05 + 0.2 * tu_uniform(&g));
		for (size_t i = 0; i < n; i++) {
			for (size_t j = 0; j < m; j++)
				d.a[i * m + j] = tu_uniform(&g) < 0.3 ? 0 : tu_uniform(&g);
			d.a[i * m] += 0.01; /* every item demands something */
			d.A[i] = pow(10, -1 + 2 * tu_uniform(&g));
			d.B[i] = c % 2 ? 0 : 0.1 * tu_uniform(&g);
			d.hi[i] = tu_uniform(&g) < 0.85 ? 1 + floor(4 * tu_uniform(&g)) : INFINITY;
			d.off[i] = tu_uniform(&g) < 0.2 ? 0.1 * tu_uniform(&g) : 0;
			if (lone)
				d.a[i * m + m - 1] = 0;
		}
		/* Items 1 and 2 of every 16 alone demand resource m-1, 0.5 each,
		 * 8 times the mean (none joins the sample for its size), and the
		 * sample takes items 0, 16, 32, ...: it prices m-1 at 0, where
		 * the uncapped ones among them are unbounded. */
		for (size_t i = 0; lone && i < n; i++)
			if (i % 16 == 1 || i % 16 == 2) {
				memset(&d.a[i * m], 0, m * sizeof(double));
				d.a[i * m + m - 1] = 0.5;
				d.hi[i] = i % 16 == 1 ? INFINITY : d.hi[i];
			}
		dual_case_solve(&d, c);
		assert_true(d.st.sample_newton > 0);
		dual_case_free(&d);
	}
}

/* Input the dual must refuse rather than loop on. */
static void test_dual_rejects(void **state)
{
	(void)state;
	double a[] = {0, 0}, cap[] = {1, 1}, A[] = {1}, x[1], lambda[2];
	struct fs_dual_problem dp = {.n = 1, .m = 2, .a = a, .cap = cap, .alpha = 1, .A = A};

	/* An item that uses nothing and has no cap is unbounded. */
	assert_int_equal(fs_dual_solve(&dp, NULL, lambda, x, NULL), -EINVAL);
	a[1] = 1;
	dp.alpha = 0;
	assert_int_equal(fs_dual_solve(&dp, NULL, lambda, x, NULL), -EINVAL);
	dp.alpha = 1;
	cap[0] = 0;
	assert_int_equal(fs_dual_solve(&dp, NULL, lambda, x, NULL), -EINVAL);
	cap[0] = 1;
	assert_int_equal(fs_dual_solve(&dp, NULL, lambda, x, NULL), 0);
	assert_close(x[0], 1, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_p3_two_resources),
	    cmocka_unit_test(test_p3_four_resources),
	    cmocka_unit_test(test_p3_ring),
	    cmocka_unit_test(test_weights_uncapped),
	    cmocka_unit_test(test_caps),
	    cmocka_unit_test(test_all_satisfied),
	    cmocka_unit_test(test_unserved),
	    cmocka_unit_test(test_ineligible_unserved),
	    cmocka_unit_test(test_all_unserved),
	    cmocka_unit_test(test_rejects_several_pools),
	    cmocka_unit_test(test_small_instances_are_pf),
	    cmocka_unit_test(test_random_sweep),
	    cmocka_unit_test(test_large_instance),
	    cmocka_unit_test(test_dual_kkt),
	    cmocka_unit_test(test_dual_sampled_start),
	    cmocka_unit_test(test_dual_rejects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
