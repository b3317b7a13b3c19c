/* SPDX-License-Identifier: MIT */
/*
 * Minimal-gap priority (policy/mingap.c): [P3] section 6 and ALGORITHMS.md 8.
 * "prioritize each process based on the minimal gap on any of the bottleneck
 * devices ... Once the user achieves his target allocation on any of the
 * bottleneck devices, he should not be promoted further."
 */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* One bottleneck: the gap on it alone decides. */
static void test_one_bottleneck(void **state)
{
	(void)state;
	/* Two tenants, resources (cpu, io); only cpu is saturated. */
	static const double ent[] = {0.5, 0.5, 0.5, 0.5};
	static const double con[] = {0.2, 0.9, 0.4, 0.1};
	static const bool sat[] = {true, false};
	double prio[2];
	int where[2];
	bool promo[2];

	assert_int_equal(fs_minimal_gap(2, 2, ent, con, sat, prio, where, promo, NULL), 0);
	assert_close(prio[0], 0.3, 1e-12);
	assert_close(prio[1], 0.1, 1e-12);
	assert_int_equal(where[0], 0);
	assert_int_equal(where[1], 0);
	assert_true(promo[0]);
	assert_true(promo[1]);
	/* Tenant 0 is further behind on the bottleneck: it goes first. */
	assert_true(prio[0] > prio[1]);
}

/*
 * Two bottlenecks: tenant 0 has gaps (0.4, 0.05), tenant 1 has (0.2, 0.2). By
 * the largest gap tenant 0 would go first (0.4 > 0.2); by the minimal gap, as
 * [P3] prescribes, tenant 1 does (0.2 > 0.05).
 */
static void test_smallest_gap_decides(void **state)
{
	(void)state;
	static const double ent[] = {0.5, 0.5, 0.5, 0.5};
	static const double con[] = {0.1, 0.45, 0.3, 0.3};
	static const bool sat[] = {true, true};
	double prio[2];
	int where[2];
	bool promo[2];

	assert_int_equal(fs_minimal_gap(2, 2, ent, con, sat, prio, where, promo, NULL), 0);
	assert_close(prio[0], 0.05, 1e-12);
	assert_int_equal(where[0], 1);
	assert_close(prio[1], 0.2, 1e-12);
	assert_int_equal(where[1], 0); /* tie: the lowest index */
	assert_true(prio[1] > prio[0]);
	assert_true(promo[0] && promo[1]);
}

/*
 * A tenant at (or above) its entitlement on one bottleneck is not promoted,
 * however far behind it is on another bottleneck.
 */
static void test_at_entitlement_not_promoted(void **state)
{
	(void)state;
	static const double ent[] = {0.25, 0.25, 0.25, 0.25, 0.25, 0.25};
	static const double con[] = {0.25, 0.0, 0.1, 0.3, 0.1, 0.9};
	static const bool sat[] = {true, true, false};
	double prio[2];
	int where[2];
	bool promo[2];

	assert_int_equal(fs_minimal_gap(2, 3, ent, con, sat, prio, where, promo, NULL), 0);
	assert_close(prio[0], 0, 1e-12);
	assert_int_equal(where[0], 0);
	assert_false(promo[0]);
	assert_close(prio[1], -0.05, 1e-12);
	assert_int_equal(where[1], 0);
	assert_false(promo[1]);
}

/* No saturated resource: nobody is promoted and there is no gap resource. */
static void test_no_bottleneck(void **state)
{
	(void)state;
	static const double ent[] = {0.5, 0.5};
	static const double con[] = {0.1, 0.2};
	static const bool sat[] = {false, false};
	double prio[1] = {42};
	int where[1] = {7};
	bool promo[1] = {true};

	assert_int_equal(fs_minimal_gap(1, 2, ent, con, sat, prio, where, promo, NULL), 0);
	assert_close(prio[0], 0, 0);
	assert_int_equal(where[0], FS_NO_RESOURCE);
	assert_false(promo[0]);
}

/* gap_resource and promoted are optional. */
static void test_optional_outputs(void **state)
{
	(void)state;
	static const double ent[] = {0.5, 0.5};
	static const double con[] = {0.1, 0.2};
	static const bool sat[] = {true, true};
	double prio[1];

	assert_int_equal(fs_minimal_gap(1, 2, ent, con, sat, prio, NULL, NULL, NULL), 0);
	assert_close(prio[0], 0.3, 1e-12);
}

static void test_bad_input(void **state)
{
	(void)state;
	double ent[] = {0.5, 0.5, 0.5, 0.5};
	double con[] = {0.1, 0.2, 0.3, 0.4};
	static const bool sat[] = {true, true};
	double prio[2];
	struct fs_error err = {{0}};

	assert_int_equal(fs_minimal_gap(0, 2, ent, con, sat, prio, NULL, NULL, &err), -EINVAL);
	assert_int_equal(fs_minimal_gap(2, 0, ent, con, sat, prio, NULL, NULL, &err), -EINVAL);
	assert_int_equal(fs_minimal_gap(2, 2, NULL, con, sat, prio, NULL, NULL, &err), -EINVAL);
	assert_int_equal(fs_minimal_gap(2, 2, ent, con, sat, NULL, NULL, NULL, &err), -EINVAL);

	con[3] = NAN;
	memset(&err, 0, sizeof(err));
	assert_int_equal(fs_minimal_gap(2, 2, ent, con, sat, prio, NULL, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "tenant 1"));
	assert_non_null(strstr(err.msg, "resource 1"));
	assert_non_null(strstr(err.msg, "consumed"));

	con[3] = 0.4;
	ent[2] = -0.1;
	assert_int_equal(fs_minimal_gap(2, 2, ent, con, sat, prio, NULL, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "tenant 1"));
	assert_non_null(strstr(err.msg, "resource 0"));
	assert_non_null(strstr(err.msg, "entitled"));

	ent[2] = INFINITY;
	assert_int_equal(fs_minimal_gap(2, 2, ent, con, sat, prio, NULL, NULL, &err), -EINVAL);
	/* A NULL error buffer is allowed. */
	assert_int_equal(fs_minimal_gap(2, 2, ent, con, sat, prio, NULL, NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_bottleneck),
	    cmocka_unit_test(test_smallest_gap_decides),
	    cmocka_unit_test(test_at_entitlement_not_promoted),
	    cmocka_unit_test(test_no_bottleneck),
	    cmocka_unit_test(test_optional_outputs),
	    cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
