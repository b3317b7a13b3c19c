/* SPDX-License-Identifier: MIT */
/* Problem validation, gamma (ALGORITHMS.md 1.5), rule names and fs_solve's checks. */
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static const char *const tnames[] = {"web", "batch"};
static const char *const pnames[] = {"big", "small"};
static const char *const rnames[] = {"cpu", "mem"};

struct fixture {
	double c[4], d[4], mt[2], w[2];
	bool el[4];
	struct fs_problem p;
};

/* Two tenants, two pools, two resources, every field valid and named. */
static void fixture_init(struct fixture *f)
{
	*f = (struct fixture){
	    .c = {10, 20, 5, 5},
	    .d = {1, 2, 2, 1},
	    .mt = {INFINITY, 4},
	    .w = {1, 2},
	    .el = {1, 1, 1, 1},
	};
	f->p = (struct fs_problem){
	    .n_tenants = 2,
	    .n_pools = 2,
	    .n_resources = 2,
	    .capacity = f->c,
	    .demand = f->d,
	    .max_tasks = f->mt,
	    .weight = f->w,
	    .eligible = f->el,
	    .tenant_names = tnames,
	    .pool_names = pnames,
	    .resource_names = rnames,
	};
}

/* fs_problem_validate and fs_solve both reject it, naming a and b. */
static void expect_invalid(const struct fs_problem *p, const char *a, const char *b)
{
	struct fs_error err = {{0}};
	struct fs_solution s;

	assert_int_equal(fs_problem_validate(p, &err), -EINVAL);
	if (!strstr(err.msg, a) || (b && !strstr(err.msg, b)))
		print_error("message '%s' lacks '%s' / '%s'\n", err.msg, a, b ? b : "");
	assert_non_null(strstr(err.msg, a));
	if (b)
		assert_non_null(strstr(err.msg, b));
	memset(&err, 0, sizeof(err));
	assert_int_equal(fs_solve(p, FS_RULE_PSDSF, NULL, &s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, a));
	fs_solution_free(&s);
}

static void valid(void **state)
{
	(void)state;
	struct fixture f;
	struct fs_error err = {{0}};

	fixture_init(&f);
	assert_int_equal(fs_problem_validate(&f.p, &err), 0);
	/* NULL optional arrays select the defaults */
	f.p.max_tasks = NULL;
	f.p.weight = NULL;
	f.p.eligible = NULL;
	f.p.tenant_names = NULL;
	assert_int_equal(fs_problem_validate(&f.p, &err), 0);
	assert_true(isinf(fs_max_tasks(&f.p, 1)));
	assert_close(fs_weight(&f.p, 1), 1, 0);
	assert_true(fs_eligible(&f.p, 1, 1));
}

static void bad_capacity(void **state)
{
	(void)state;
	struct fixture f;

	fixture_init(&f);
	f.c[3] = -1;
	expect_invalid(&f.p, "pool small", "resource mem");
	f.c[3] = NAN;
	expect_invalid(&f.p, "pool small", "resource mem");
	f.c[3] = INFINITY;
	expect_invalid(&f.p, "pool small", "resource mem");
}

static void bad_demand(void **state)
{
	(void)state;
	struct fixture f;

	fixture_init(&f);
	f.d[2] = NAN;
	expect_invalid(&f.p, "tenant batch", "resource cpu");
	f.d[2] = -0.5;
	expect_invalid(&f.p, "tenant batch", "resource cpu");
	f.d[2] = f.d[3] = 0;
	expect_invalid(&f.p, "tenant batch", "all-zero");
	/* without names the index is used */
	f.p.tenant_names = NULL;
	expect_invalid(&f.p, "tenant 1", "all-zero");
}

static void bad_weight_and_cap(void **state)
{
	(void)state;
	struct fixture f;

	fixture_init(&f);
	f.w[0] = 0;
	expect_invalid(&f.p, "tenant web", "weight");
	f.w[0] = -1;
	expect_invalid(&f.p, "tenant web", "weight");
	f.w[0] = NAN;
	expect_invalid(&f.p, "tenant web", "weight");
	f.w[0] = 1;
	f.mt[1] = 0;
	expect_invalid(&f.p, "tenant batch", "max_tasks");
	f.mt[1] = NAN;
	expect_invalid(&f.p, "tenant batch", "max_tasks");
}

static void empty_sizes(void **state)
{
	(void)state;
	struct fixture f;

	fixture_init(&f);
	f.p.n_tenants = 0;
	expect_invalid(&f.p, "0 tenants", NULL);
	fixture_init(&f);
	f.p.n_pools = 0;
	expect_invalid(&f.p, "0 pools", NULL);
	fixture_init(&f);
	f.p.n_resources = 0;
	expect_invalid(&f.p, "0 resources", NULL);
	fixture_init(&f);
	f.p.demand = NULL;
	expect_invalid(&f.p, "demand", NULL);
}

static void rule_names(void **state)
{
	(void)state;
	enum fs_rule rule;
	struct fixture f;
	struct fs_solution s;
	struct fs_error err = {{0}};

	for (int i = 0; i < FS_RULE__COUNT; i++) {
		assert_int_equal(fs_rule_from_name(fs_rule_name((enum fs_rule)i), &rule), 0);
		assert_int_equal(rule, i);
	}
	assert_int_equal(fs_rule_from_name("drfh", &rule), -EINVAL);
	assert_int_equal(fs_rule_from_name("", &rule), -EINVAL);
	assert_string_equal(fs_rule_name(FS_RULE__COUNT), "unknown");

	fixture_init(&f);
	assert_int_equal(fs_solve(&f.p, FS_RULE__COUNT, NULL, &s, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "unknown rule"));
	fs_solution_free(&s);
}

/* gamma (1.5): 0 when ineligible or when the pool lacks a demanded resource;
 * such a tenant everywhere is unserved and gets 0, the others are unaffected. */
static void unserved_tenant(void **state)
{
	(void)state;
	const double c[] = {10, 0, 10, 10};
	const double d[] = {1, 1, 1, 0, 0, 1};
	const bool el[] = {1, 0, 1, 1, 1, 0};
	const struct fs_problem p = {.n_tenants = 3,
				     .n_pools = 2,
				     .n_resources = 2,
				     .capacity = c,
				     .demand = d,
				     .eligible = el};
	struct fs_solution s;
	struct fs_error err = {{0}};

	assert_close(fs_gamma(&p, 0, 0), 0, 0); /* pool 0 has no resource 1 */
	assert_close(fs_gamma(&p, 0, 1), 0, 0); /* not eligible */
	assert_close(fs_gamma(&p, 1, 0), 10, 1e-12);
	assert_close(fs_gamma(&p, 2, 0), 0, 0);
	assert_int_equal(fs_solve(&p, FS_RULE_PSDSF, NULL, &s, &err), 0);
	assert_true(s.tenant[0].unserved);
	assert_true(s.tenant[2].unserved);
	assert_false(s.tenant[1].unserved);
	assert_close(s.tenant[0].total, 0, 0);
	assert_close(s.tenant[2].total, 0, 0);
	assert_close(s.tenant[1].total, 20, 1e-9); /* pools 0 and 1, all CPU */
	assert_int_equal(s.tenant[0].certificate, FS_NO_RESOURCE);
	fs_solution_free(&s);
}

static void labels(void **state)
{
	(void)state;
	struct fixture f;
	char buf[64];

	fixture_init(&f);
	assert_string_equal(fs_tenant_label(&f.p, 1, buf, sizeof(buf)), "tenant batch");
	assert_string_equal(fs_pool_label(&f.p, 0, buf, sizeof(buf)), "pool big");
	assert_string_equal(fs_resource_label(&f.p, 1, buf, sizeof(buf)), "resource mem");
	f.p.pool_names = NULL;
	assert_string_equal(fs_pool_label(&f.p, 1, buf, sizeof(buf)), "pool 1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(valid),	       cmocka_unit_test(bad_capacity),
	    cmocka_unit_test(bad_demand),      cmocka_unit_test(bad_weight_and_cap),
	    cmocka_unit_test(empty_sizes),     cmocka_unit_test(rule_names),
	    cmocka_unit_test(unserved_tenant), cmocka_unit_test(labels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
