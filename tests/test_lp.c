/* SPDX-License-Identifier: MIT */
/* Tests for the dense simplex solver (policy/lp.c). */
#include "testutil.h"

#include "lp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LP_TOL 1e-9

static int solve(const struct fs_lp *lp, double *x, double *obj, double *dual_le, double *dual_eq)
{
	struct fs_lp_result res = {.x = x, .dual_le = dual_le, .dual_eq = dual_eq};
	int ret = fs_lp_maximize(lp, &res);
	*obj = res.obj;
	return ret;
}

/* Classic (Hillier & Lieberman "Wyndor"): max 3x + 5y, x <= 4, 2y <= 12,
 * 3x + 2y <= 18; optimum (2, 6) = 36, shadow prices (0, 3/2, 1). */
static void test_textbook_max(void **state)
{
	(void)state;
	const double a[] = {1, 0, 0, 2, 3, 2}, b[] = {4, 12, 18}, c[] = {3, 5};
	struct fs_lp lp = {.n_vars = 2, .n_le = 3, .c = c, .a_le = a, .b_le = b};
	double x[2], y[3], obj;

	assert_int_equal(solve(&lp, x, &obj, y, NULL), 0);
	assert_close(obj, 36, LP_TOL);
	assert_close(x[0], 2, LP_TOL);
	assert_close(x[1], 6, LP_TOL);
	assert_close(y[0], 0, LP_TOL);
	assert_close(y[1], 1.5, LP_TOL);
	assert_close(y[2], 1, LP_TOL);
}

/* Minimisation with >= rows (negative right-hand sides, phase 1 needed):
 * min 2x + 3y, x + y >= 4, x + 3y >= 6, x <= 3 (upper bound): (3, 1), 9. */
static void test_ge_rows_and_upper_bound(void **state)
{
	(void)state;
	const double a[] = {-1, -1, -1, -3}, b[] = {-4, -6}, c[] = {-2, -3}, up[] = {3, INFINITY};
	struct fs_lp lp = {.n_vars = 2, .n_le = 2, .c = c, .a_le = a, .b_le = b, .upper = up};
	double x[2], y[2], obj;

	assert_int_equal(solve(&lp, x, &obj, y, NULL), 0);
	assert_close(obj, -9, LP_TOL);
	assert_close(x[0], 3, LP_TOL);
	assert_close(x[1], 1, LP_TOL);
	/* (3, 1) is a degenerate vertex (three active rows): duals are not
	 * unique, only their sign is. */
	assert_true(y[0] >= 0 && y[1] >= 0);
}

/* Equality row: max x1 + 2x2 + 3x3, x1 + x2 + x3 = 10, x3 <= 4,
 * x2 - x1 <= 2: x = (2, 4, 4), 22; d obj / d b_eq = 1.5. */
static void test_equality(void **state)
{
	(void)state;
	const double ae[] = {1, 1, 1}, be[] = {10}, al[] = {-1, 1, 0}, bl[] = {2};
	const double c[] = {1, 2, 3}, up[] = {INFINITY, INFINITY, 4};
	struct fs_lp lp = {.n_vars = 3,
			   .n_le = 1,
			   .n_eq = 1,
			   .c = c,
			   .a_le = al,
			   .b_le = bl,
			   .a_eq = ae,
			   .b_eq = be,
			   .upper = up};
	double x[3], yl[1], ye[1], obj;

	assert_int_equal(solve(&lp, x, &obj, yl, ye), 0);
	assert_close(obj, 22, LP_TOL);
	assert_close(x[0], 2, LP_TOL);
	assert_close(x[1], 4, LP_TOL);
	assert_close(x[2], 4, LP_TOL);
	assert_close(ye[0], 1.5, LP_TOL);
	assert_close(yl[0], 0.5, LP_TOL);

	/* Same row with a negated right-hand side (-x1 - x2 - x3 = -10). */
	const double ae2[] = {-1, -1, -1}, be2[] = {-10};
	lp.a_eq = ae2;
	lp.b_eq = be2;
	assert_int_equal(solve(&lp, x, &obj, yl, ye), 0);
	assert_close(obj, 22, LP_TOL);
	assert_close(ye[0], -1.5, LP_TOL);
}

static void test_infeasible(void **state)
{
	(void)state;
	/* x + y <= 1 and x + y >= 3. */
	const double a[] = {1, 1, -1, -1}, b[] = {1, -3}, c[] = {1, 1};
	struct fs_lp lp = {.n_vars = 2, .n_le = 2, .c = c, .a_le = a, .b_le = b};
	double x[2], obj;

	assert_int_equal(solve(&lp, x, &obj, NULL, NULL), -EINVAL);

	/* x = 1 with x <= 0.5. */
	const double ae[] = {1}, be[] = {1}, up[] = {0.5}, c1[] = {1};
	struct fs_lp lp2 = {.n_vars = 1, .n_eq = 1, .c = c1, .a_eq = ae, .b_eq = be, .upper = up};
	assert_int_equal(solve(&lp2, x, &obj, NULL, NULL), -EINVAL);

	/* A negative upper bound contradicts x >= 0. */
	const double upn[] = {-1};
	struct fs_lp lp3 = {.n_vars = 1, .c = c1, .upper = upn};
	assert_int_equal(solve(&lp3, x, &obj, NULL, NULL), -EINVAL);

	/* NaN input. */
	const double cn[] = {NAN};
	struct fs_lp lp4 = {.n_vars = 1, .c = cn};
	assert_int_equal(solve(&lp4, x, &obj, NULL, NULL), -EINVAL);
}

static void test_unbounded(void **state)
{
	(void)state;
	/* max x + y, x - y <= 1. */
	const double a[] = {1, -1}, b[] = {1}, c[] = {1, 1};
	struct fs_lp lp = {.n_vars = 2, .n_le = 1, .c = c, .a_le = a, .b_le = b};
	double x[2], obj;

	assert_int_equal(solve(&lp, x, &obj, NULL, NULL), -ERANGE);

	/* No constraints at all. */
	struct fs_lp lp2 = {.n_vars = 2, .c = c};
	assert_int_equal(solve(&lp2, x, &obj, NULL, NULL), -ERANGE);

	/* Unbounded only after phase 1: x - y = 1, max y. */
	const double ae[] = {1, -1}, be[] = {1}, c2[] = {0, 1};
	struct fs_lp lp3 = {.n_vars = 2, .n_eq = 1, .c = c2, .a_eq = ae, .b_eq = be};
	assert_int_equal(solve(&lp3, x, &obj, NULL, NULL), -ERANGE);
}

/* Beale (1955): cycles forever under Dantzig's rule with lowest-index
 * tie-breaking. Optimum 5/4 at x = (1, 0, 1, 0). */
static void test_beale_cycling(void **state)
{
	(void)state;
	const double a[] = {0.25, -8, -1, 9, 0.5, -12, -0.5, 3, 0, 0, 1, 0};
	const double b[] = {0, 0, 1}, c[] = {0.75, -20, 0.5, -6};
	struct fs_lp lp = {.n_vars = 4, .n_le = 3, .c = c, .a_le = a, .b_le = b};
	double x[4], obj;

	assert_int_equal(solve(&lp, x, &obj, NULL, NULL), 0);
	assert_close(obj, 1.25, LP_TOL);
	assert_close(x[0], 1, LP_TOL);
	assert_close(x[2], 1, LP_TOL);
}

/* Kuhn's cycling example (Chvatal, Linear Programming, ch. 3):
 * max 10x1 - 57x2 - 9x3 - 24x4 s.t.
 * 0.5x1 - 5.5x2 - 2.5x3 + 9x4 <= 0, 0.5x1 - 1.5x2 - 0.5x3 + x4 <= 0, x1 <= 1.
 * Optimum 1 at x = (1, 0, 1, 0). */
static void test_chvatal_cycling(void **state)
{
	(void)state;
	const double a[] = {0.5, -5.5, -2.5, 9, 0.5, -1.5, -0.5, 1, 1, 0, 0, 0};
	const double b[] = {0, 0, 1}, c[] = {10, -57, -9, -24};
	struct fs_lp lp = {.n_vars = 4, .n_le = 3, .c = c, .a_le = a, .b_le = b};
	double x[4], obj;

	assert_int_equal(solve(&lp, x, &obj, NULL, NULL), 0);
	assert_close(obj, 1, LP_TOL);
	assert_close(x[0], 1, LP_TOL);
	assert_close(x[2], 1, LP_TOL);
}

/* Highly degenerate: many rows through the optimum and redundant
 * equalities (a duplicated row, and an all-zero row). */
static void test_degenerate_redundant(void **state)
{
	(void)state;
	enum { R = 30 };
	double a[R * 2], b[R], c[] = {1, 1}, x[2], obj;
	const double ae[] = {1, -1, 2, -2, 0, 0}, be[] = {0, 0, 0};

	for (int i = 0; i < R; i++) {
		/* All lines pass through (1, 1). */
		double s = (double)(i + 1) / R;
		a[2 * i] = s;
		a[2 * i + 1] = 1 - s + 0.01;
		b[i] = a[2 * i] + a[2 * i + 1];
	}
	struct fs_lp lp = {.n_vars = 2,
			   .n_le = R,
			   .n_eq = 3,
			   .c = c,
			   .a_le = a,
			   .b_le = b,
			   .a_eq = ae,
			   .b_eq = be};
	assert_int_equal(solve(&lp, x, &obj, NULL, NULL), 0);
	assert_close(obj, 2, LP_TOL);
	assert_close(x[0], 1, LP_TOL);
	assert_close(x[1], 1, LP_TOL);
}

/* Transportation-like LP with 2000 variables: max sum x_ij, row sums <= s_i,
 * column sums <= t_j; optimum min(sum s, sum t). */
static void test_large_transport(void **state)
{
	(void)state;
	enum { I = 40, J = 50, V = I * J };
	double *a = calloc((I + J) * V, sizeof(double));
	double b[I + J], *c = malloc(V * sizeof(double)), *x = malloc(V * sizeof(double));
	double y[I + J], obj, ss = 0, st = 0;
	struct tu_rng g;

	assert_non_null(a);
	assert_non_null(c);
	assert_non_null(x);
	tu_rng_seed(&g, 7);
	for (int i = 0; i < I; i++) {
		b[i] = 1 + 9 * tu_uniform(&g);
		ss += b[i];
		for (int j = 0; j < J; j++)
			a[i * V + i * J + j] = 1;
	}
	for (int j = 0; j < J; j++) {
		b[I + j] = 1 + 6 * tu_uniform(&g);
		st += b[I + j];
		for (int i = 0; i < I; i++)
			a[(I + j) * V + i * J + j] = 1;
	}
	for (int v = 0; v < V; v++)
		c[v] = 1;
	struct fs_lp lp = {.n_vars = V, .n_le = I + J, .c = c, .a_le = a, .b_le = b};
	assert_int_equal(solve(&lp, x, &obj, y, NULL), 0);
	assert_close(obj, ss < st ? ss : st, 1e-9);
	/* Strong duality. */
	double dual = 0;
	for (int r = 0; r < I + J; r++)
		dual += b[r] * y[r];
	assert_close(dual, obj, 1e-9);
	free(a);
	free(c);
	free(x);
}

/* --- brute-force vertex enumeration ------------------------------------ */

/* Solves the n x n system m z = r in place (partial pivoting); false when
 * singular. */
static bool gauss(double *m, double *r, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		size_t p = k;
		for (size_t i = k + 1; i < n; i++)
			if (fabs(m[i * n + k]) > fabs(m[p * n + k]))
				p = i;
		if (fabs(m[p * n + k]) < 1e-10)
			return false;
		for (size_t j = 0; j < n; j++) {
			double t = m[k * n + j];
			m[k * n + j] = m[p * n + j];
			m[p * n + j] = t;
		}
		double t = r[k];
		r[k] = r[p];
		r[p] = t;
		for (size_t i = 0; i < n; i++) {
			if (i == k)
				continue;
			double f = m[i * n + k] / m[k * n + k];
			for (size_t j = k; j < n; j++)
				m[i * n + j] -= f * m[k * n + j];
			r[i] -= f * r[k];
		}
	}
	for (size_t k = 0; k < n; k++)
		r[k] /= m[k * n + k];
	return true;
}

/* Constraint rows for enumeration: le rows, x_j >= 0, x_j <= u_j, eq rows.
 * Returns the best objective over feasible vertices, -INFINITY if none. */
static double enumerate(const struct fs_lp *lp)
{
	const size_t n = lp->n_vars, nr = lp->n_le + 2 * n + lp->n_eq;
	double *rows = calloc(nr * n, sizeof(double)), *rhs = calloc(nr, sizeof(double));
	double best = -INFINITY, m[16], z[4];
	size_t idx[4];

	assert_true(n <= 4);
	for (size_t i = 0; i < lp->n_le; i++) {
		memcpy(rows + i * n, lp->a_le + i * n, n * sizeof(double));
		rhs[i] = lp->b_le[i];
	}
	for (size_t j = 0; j < n; j++) {
		rows[(lp->n_le + j) * n + j] = -1;
		rows[(lp->n_le + n + j) * n + j] = 1;
		rhs[lp->n_le + n + j] = lp->upper[j];
	}
	for (size_t i = 0; i < lp->n_eq; i++) {
		memcpy(rows + (lp->n_le + 2 * n + i) * n, lp->a_eq + i * n, n * sizeof(double));
		rhs[lp->n_le + 2 * n + i] = lp->b_eq[i];
	}
	/* Every n-subset of rows (odometer over increasing index tuples). */
	for (size_t k = 0; k < n; k++)
		idx[k] = k;
	for (;;) {
		for (size_t a = 0; a < n; a++) {
			memcpy(m + a * n, rows + idx[a] * n, n * sizeof(double));
			z[a] = rhs[idx[a]];
		}
		if (gauss(m, z, n)) {
			bool ok = true;
			for (size_t i = 0; i < nr && ok; i++) {
				double lhs = 0;
				for (size_t j = 0; j < n; j++)
					lhs += rows[i * n + j] * z[j];
				bool eq = i >= lp->n_le + 2 * n;
				ok = lhs <= rhs[i] + 1e-9 && (!eq || lhs >= rhs[i] - 1e-9);
			}
			if (ok) {
				double v = 0;
				for (size_t j = 0; j < n; j++)
					v += lp->c[j] * z[j];
				if (v > best)
					best = v;
			}
		}
		size_t k = n;
		while (k > 0 && idx[k - 1] == nr - n + k - 1)
			k--;
		if (k == 0)
			break;
		idx[k - 1]++;
		for (size_t j = k; j < n; j++)
			idx[j] = idx[j - 1] + 1;
	}
	free(rows);
	free(rhs);
	return best;
}

static void test_random_vs_enumeration(void **state)
{
	(void)state;
	struct tu_rng g;
	int n_feasible = 0, n_infeasible = 0;

	tu_rng_seed(&g, 2024);
	for (int trial = 0; trial < 400; trial++) {
		const size_t n = 2 + (size_t)(tu_uniform(&g) * 3);
		const size_t nle = 1 + (size_t)(tu_uniform(&g) * 5);
		const size_t neq = tu_uniform(&g) < 0.3 ? 1 : 0;
		double a[6 * 4], b[6], ae[4], be[1], c[4], up[4], x[4], y[10], ye[1], obj;

		for (size_t i = 0; i < nle * n; i++) {
			a[i] = 2 * tu_uniform(&g) - 1;
			/* Some exact zeros and repeated values make degenerate
			 * vertices likely. */
			if (tu_uniform(&g) < 0.2)
				a[i] = 0;
			else if (tu_uniform(&g) < 0.2)
				a[i] = 0.5;
		}
		for (size_t i = 0; i < nle; i++)
			b[i] = tu_uniform(&g) < 0.2 ? 0 : 3 * tu_uniform(&g) - 1;
		for (size_t j = 0; j < n; j++) {
			ae[j] = tu_uniform(&g);
			c[j] = 2 * tu_uniform(&g) - 1;
			up[j] = 1 + 4 * tu_uniform(&g);
		}
		be[0] = 2 * tu_uniform(&g);
		struct fs_lp lp = {.n_vars = n,
				   .n_le = nle,
				   .n_eq = neq,
				   .c = c,
				   .a_le = a,
				   .b_le = b,
				   .a_eq = ae,
				   .b_eq = be,
				   .upper = up};
		double best = enumerate(&lp);
		int ret = solve(&lp, x, &obj, y, ye);
		if (best == -INFINITY) {
			assert_int_equal(ret, -EINVAL);
			n_infeasible++;
			continue;
		}
		assert_int_equal(ret, 0);
		assert_close(obj, best, 1e-8);
		n_feasible++;

		/* Same LP with the upper bounds as explicit rows: then the duals
		 * must certify optimality (dual feasible, equal objective). */
		double a2[10 * 4], b2[10];
		memcpy(a2, a, nle * n * sizeof(double));
		memcpy(b2, b, nle * sizeof(double));
		memset(a2 + nle * n, 0, n * n * sizeof(double));
		for (size_t j = 0; j < n; j++) {
			a2[(nle + j) * n + j] = 1;
			b2[nle + j] = up[j];
		}
		lp.a_le = a2;
		lp.b_le = b2;
		lp.n_le = nle + n;
		lp.upper = NULL;
		assert_int_equal(solve(&lp, x, &obj, y, ye), 0);
		assert_close(obj, best, 1e-8);
		double dual = neq ? be[0] * ye[0] : 0;
		for (size_t i = 0; i < nle + n; i++) {
			assert_true(y[i] >= 0);
			dual += b2[i] * y[i];
		}
		assert_close(dual, best, 1e-8);
		for (size_t j = 0; j < n; j++) {
			double col = neq ? ae[j] * ye[0] : 0;
			for (size_t i = 0; i < nle + n; i++)
				col += a2[i * n + j] * y[i];
			assert_true(col >= c[j] - 1e-8);
		}
	}
	/* The generator must exercise both outcomes. */
	assert_true(n_feasible > 100);
	assert_true(n_infeasible > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_textbook_max),    cmocka_unit_test(test_ge_rows_and_upper_bound),
	    cmocka_unit_test(test_equality),	    cmocka_unit_test(test_infeasible),
	    cmocka_unit_test(test_unbounded),	    cmocka_unit_test(test_beale_cycling),
	    cmocka_unit_test(test_chvatal_cycling), cmocka_unit_test(test_degenerate_redundant),
	    cmocka_unit_test(test_large_transport), cmocka_unit_test(test_random_vs_enumeration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
