/* SPDX-License-Identifier: MIT */
/*
 * Scenario parser (conf/scenario.c): every error path with its exact
 * "file:line: message", and the paper vectors in tests/vectors parse into
 * the problems of shared/spec/ALGORITHMS.md section 3 and 8.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "scenario.h"

static char tmpdir[] = "/tmp/test_scenario.XXXXXX";

/* Lines 1-6 of a valid file; cases append to or replace it. */
#define HEAD   "[scenario]\nresources = cpu, mem\n"
#define POOL   "[pool.a]\ncapacity = 1, 2\n"
#define TENANT "[tenant.t]\ndemand = 1, 1\n"
#define GOOD   HEAD POOL TENANT

struct bad_case {
	const char *name;
	const char *text;
	int code;
	int line; /* 0: "file: message" */
	const char *msg;
};

static const struct bad_case bad_cases[] = {
    {"unknown_section", HEAD "[poool.a]\ncapacity = 1, 2\n" TENANT, -EINVAL, 3,
     "unknown section [poool.a] (expected [scenario], [pool.NAME], [tenant.NAME] or [caps.NAME])"},
    {"caps_unknown_tenant", GOOD "[caps.a]\nu = 1\n", -EINVAL, 8, "unknown tenant 'u' in [caps.a]"},
    {"caps_twice", GOOD "[caps.a]\nt = 1\nt = 2\n", -EINVAL, 9,
     "tenant 't' listed twice in [caps.a]"},
    {"caps_negative", GOOD "[caps.a]\nt = -1\n", -EINVAL, 8,
     "bad cap '-1' for t (a number >= 0, or inf)"},
    {"caps_three_values", GOOD "[caps.a]\nt = 1, 2, 3\n", -EINVAL, 8,
     "t: expected CAP or CAP, ALLOC, got 3 values"},
    {"caps_inf_alloc", GOOD "[caps.a]\nt = 1, inf\n", -EINVAL, 8,
     "bad allocation 'inf' for t (a number >= 0)"},
    {"unknown_key_pool", HEAD "[pool.a]\ncapacty = 1, 2\n" TENANT, -EINVAL, 4,
     "unknown key 'capacty' in [pool.a]"},
    {"unknown_key_scenario", HEAD "name = x\n" POOL TENANT, -EINVAL, 3,
     "unknown key 'name' in [scenario]"},
    {"duplicate_scenario", GOOD "[scenario]\n", -EINVAL, 7,
     "duplicate section [scenario] (first at line 1)"},
    {"key_of_other_section", HEAD POOL "[tenant.t]\ndemand = 1, 1\ncapacity = 1, 1\n", -EINVAL, 7,
     "unknown key 'capacity' in [tenant.t]"},
    {"key_outside_section", "resources = cpu\n" GOOD, -EINVAL, 1,
     "key 'resources' outside any section"},
    {"duplicate_section", GOOD "\n[pool.a]\ncapacity = 3, 4\n", -EINVAL, 8,
     "duplicate section [pool.a] (first at line 3)"},
    {"duplicate_empty_section", HEAD POOL "[pool.a]\n" TENANT, -EINVAL, 5,
     "duplicate section [pool.a] (first at line 3)"},
    {"duplicate_key", GOOD "demand = 2, 2\n", -EINVAL, 7,
     "duplicate key 'demand' in [tenant.t] (first at line 6)"},
    {"too_few_values", HEAD "[pool.a]\ncapacity = 1\n" TENANT, -EINVAL, 4,
     "capacity has 1 value, expected 2 (one per resource)"},
    {"too_many_values", HEAD POOL "[tenant.t]\ndemand = 1, 1, 1\n", -EINVAL, 6,
     "demand has 3 values, expected 2 (one per resource)"},
    {"empty_value", HEAD POOL "[tenant.t]\ndemand =\n", -EINVAL, 6, "'demand' has no value"},
    {"empty_item", HEAD POOL "[tenant.t]\ndemand = 1,,1\n", -EINVAL, 6,
     "'demand' has an empty item in its list"},
    {"nan", HEAD POOL "[tenant.t]\ndemand = nan, 1\n", -EINVAL, 6, "bad number 'nan' in demand"},
    {"trailing_junk", HEAD POOL "[tenant.t]\ndemand = 1.5x, 1\n", -EINVAL, 6,
     "bad number '1.5x' in demand"},
    {"hex", HEAD "[pool.a]\ncapacity = 0x10, 1\n" TENANT, -EINVAL, 4,
     "bad number '0x10' in capacity"},
    {"inf_capacity", HEAD "[pool.a]\ncapacity = inf, 1\n" TENANT, -EINVAL, 4,
     "bad number 'inf' in capacity"},
    {"overflow", HEAD POOL "[tenant.t]\ndemand = 1e999, 1\n", -EINVAL, 6,
     "bad number '1e999' in demand"},
    {"two_dots", HEAD POOL "[tenant.t]\ndemand = 1.2.3, 1\n", -EINVAL, 6,
     "bad number '1.2.3' in demand"},
    {"negative_capacity", HEAD "[pool.a]\ncapacity = 1, -2\n" TENANT, -EINVAL, 4,
     "capacity of resource mem is negative (-2)"},
    {"negative_demand", HEAD POOL "[tenant.t]\ndemand = -1, 1\n", -EINVAL, 6,
     "demand of resource cpu is negative (-1)"},
    {"zero_demand", HEAD POOL "[tenant.t]\ndemand = 0, 0\n", -EINVAL, 6,
     "demand of [tenant.t] is all zero"},
    {"zero_weight", GOOD "weight = 0\n", -EINVAL, 7, "weight must be > 0, got 0"},
    {"negative_weight", GOOD "weight = -1\n", -EINVAL, 7, "weight must be > 0, got -1"},
    {"weight_list", GOOD "weight = 1, 2\n", -EINVAL, 7, "weight takes one value, got '1, 2'"},
    {"weight_inf", GOOD "weight = inf\n", -EINVAL, 7, "bad number 'inf' in weight"},
    {"zero_max_tasks", GOOD "max_tasks = 0\n", -EINVAL, 7, "max_tasks must be > 0, got 0"},
    {"bad_max_tasks", GOOD "max_tasks = lots\n", -EINVAL, 7,
     "bad number 'lots' in max_tasks (a number or inf)"},
    {"unknown_pool", GOOD "pools = a, b\n", -EINVAL, 7, "unknown pool 'b' in pools"},
    {"pool_twice", GOOD "pools = a, a\n", -EINVAL, 7, "pool 'a' listed twice in pools"},
    /* Repeated "pools =" lines add up; errors name the line at fault. */
    {"pool_twice_across_lines", GOOD "pools = a\npools = a\n", -EINVAL, 8,
     "pool 'a' listed twice in pools"},
    {"unknown_pool_second_line", GOOD "pools = a\nweight = 2\npools = b\n", -EINVAL, 9,
     "unknown pool 'b' in pools"},
    {"low_alpha", HEAD "alpha = 0.5\n" POOL TENANT, -EINVAL, 3,
     "alpha must be >= 1 or inf, got 0.5"},
    {"missing_resources", "[scenario]\npolicy = drf\n" POOL TENANT, -EINVAL, 1,
     "[scenario] needs 'resources = NAME, ...'"},
    {"resource_twice", "[scenario]\nresources = cpu, cpu\n" POOL TENANT, -EINVAL, 2,
     "resource 'cpu' listed twice"},
    {"bad_resource_name", "[scenario]\nresources = cpu, main mem\n" POOL TENANT, -EINVAL, 2,
     "bad resource name 'main mem': use 1-32 characters of A-Z a-z 0-9 _ . : @ -"},
    {"missing_capacity", GOOD "[pool.b]\n", -EINVAL, 7,
     "[pool.b] needs 'capacity = ...' (one number per resource)"},
    {"missing_demand", GOOD "[tenant.u]\nweight = 2\n", -EINVAL, 7,
     "[tenant.u] needs 'demand = ...' (one number per resource)"},
    {"no_scenario", POOL TENANT, -EINVAL, 0, "no [scenario] section (it names the resources)"},
    {"no_pool", HEAD TENANT, -EINVAL, 0, "no [pool.NAME] section"},
    {"no_tenant", HEAD POOL, -EINVAL, 0, "no [tenant.NAME] section"},
    {"empty_file", "", -EINVAL, 0, "no [scenario] section (it names the resources)"},
    {"bad_tenant_name", HEAD POOL "[tenant.a b]\ndemand = 1, 1\n", -EINVAL, 5,
     "bad tenant name 'a b': use 1-32 characters of A-Z a-z 0-9 _ . : @ -"},
    {"empty_pool_name", HEAD "[pool.]\ncapacity = 1, 2\n" TENANT, -EINVAL, 3,
     "bad pool name '': use 1-32 characters of A-Z a-z 0-9 _ . : @ -"},
    {"long_tenant_name", HEAD POOL "[tenant.abcdefghijklmnopqrstuvwxyz0123456]\n", -EINVAL, 5,
     "bad tenant name 'abcdefghijklmnopqrstuvwxyz0123456': use 1-32 characters of A-Z a-z "
     "0-9 _ . : @ -"},
    {"syntax_error", GOOD "weight 2\n", -EINVAL, 7,
     "syntax error: expected 'key = value' or '[section]'"},
    {"unterminated_section", GOOD "[pool.b\n", -EINVAL, 7,
     "syntax error: section header without ']'"},
    {"continuation", GOOD "\n  weight = 2\n", -EINVAL, 8,
     "indented line would continue the value of 'demand' (line 6); multi-line values are "
     "not supported, remove the indentation"},
    /* Names inih would truncate (49 characters) and a line it would cut. */
    {"long_section_name",
     HEAD POOL "[tenant.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG]\ndemand = 1, 1\n", -E2BIG, 5,
     "section name is 50 characters long, the limit is 49"},
    {"long_key_name", GOOD "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN = 1\n", -E2BIG, 7,
     "key name is 50 characters long, the limit is 49"},
    {"long_line",
     GOOD "; "
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "\n",
     -E2BIG, 7, "line is 198 characters long, the limit is 197"},
};

static char *write_case(const char *name, const char *text, size_t len)
{
	char *path = NULL;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s.ini", tmpdir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void expect_error(const char *path, int code, int line, const char *msg)
{
	struct conf_error err = {{0}};
	struct scenario sc;
	char want[CONF_ERR_MAX];
	int r;

	r = scenario_load(path, &sc, &err);
	if (line > 0)
		snprintf(want, sizeof(want), "%s:%d: %s", path, line, msg);
	else
		snprintf(want, sizeof(want), "%s: %s", path, msg);
	assert_string_equal(err.msg, want);
	assert_int_equal(r, code);
	scenario_free(&sc);
}

static void test_bad_case(void **state)
{
	const struct bad_case *c = *state;
	char *path = write_case(c->name, c->text, strlen(c->text));

	expect_error(path, c->code, c->line, c->msg);
	unlink(path);
	free(path);
}

static void test_line_limit_boundary(void **state)
{
	/* 197 characters is the longest accepted line, with or without "\r". */
	char text[512], *path;
	int n;

	(void)state;
	n = snprintf(text, sizeof(text), GOOD "; %0195d\r\n", 0);
	assert_true(n > 0);
	path = write_case("line197", text, (size_t)n);
	{
		struct conf_error err = {{0}};
		struct scenario sc;

		assert_int_equal(scenario_load(path, &sc, &err), 0);
		scenario_free(&sc);
	}
	unlink(path);
	free(path);
}

static void test_nul_byte(void **state)
{
	static const char text[] = GOOD "weight = 1\0\n";
	char *path = write_case("nul", text, sizeof(text) - 1);

	(void)state;
	expect_error(path, -EINVAL, 7, "NUL byte in a text file");
	unlink(path);
	free(path);
}

static void test_missing_file(void **state)
{
	char path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/does-not-exist.ini", tmpdir);
	expect_error(path, -ENOENT, 0, "cannot open: No such file or directory");
}

static void test_defaults_and_order(void **state)
{
	/* Tenants before pools and [scenario] last: sections may come in any order. */
	static const char text[] = "[tenant.b]\ndemand = 0, 2\npools = y\nmax_tasks = 3\n"
				   "[tenant.a]\ndemand = 1, 0 ; inline comment\nweight = 2.5\n"
				   "max_tasks = INF\n"
				   "[pool.x]\ncapacity = 4, 5\n[pool.y]\ncapacity = 6, 0\n"
				   "# comment\n[scenario]\nresources = cpu , mem\npolicy = apf\n"
				   "alpha = inf\n";
	char *path = write_case("order", text, sizeof(text) - 1);
	struct conf_error err = {{0}};
	struct fs_problem p;
	struct fs_error ferr;
	struct scenario sc;

	(void)state;
	assert_int_equal(scenario_load(path, &sc, &err), 0);
	assert_int_equal(sc.n_resources, 2);
	assert_int_equal(sc.n_pools, 2);
	assert_int_equal(sc.n_tenants, 2);
	assert_string_equal(sc.resource_names[1], "mem");
	assert_string_equal(sc.tenant_names[0], "b");
	assert_string_equal(sc.tenant_names[1], "a");
	assert_string_equal(sc.pool_names[1], "y");
	assert_true(sc.capacity[2] == 6 && sc.capacity[3] == 0);
	assert_true(sc.demand[0] == 0 && sc.demand[1] == 2 && sc.demand[2] == 1);
	assert_true(sc.weight[0] == 1 && sc.weight[1] == 2.5);
	assert_true(sc.max_tasks[0] == 3 && isinf(sc.max_tasks[1]));
	assert_false(sc.eligible[0]);
	assert_true(sc.eligible[1] && sc.eligible[2] && sc.eligible[3]);
	assert_string_equal(sc.policy, "apf");
	assert_int_equal(sc.policy_line, 16);
	assert_true(isinf(sc.alpha));
	assert_int_equal(sc.alpha_line, 17);
	assert_int_equal(scenario_pool_index(&sc, "y"), 1);
	assert_int_equal(scenario_tenant_index(&sc, "a"), 1);
	assert_int_equal(scenario_tenant_index(&sc, "z"), -1);

	scenario_problem(&sc, &p);
	assert_int_equal(fs_problem_validate(&p, &ferr), 0);
	assert_string_equal(p.tenant_names[1], "a");
	assert_ptr_equal(p.capacity, sc.capacity);
	scenario_free(&sc);
	unlink(path);
	free(path);
}

static void load_vector(const char *file, struct scenario *sc, struct fs_problem *p)
{
	struct conf_error err = {{0}};
	struct fs_error ferr = {{0}};
	char path[512];
	int r;

	snprintf(path, sizeof(path), "%s/%s", VECTORS_DIR, file);
	r = scenario_load(path, sc, &err);
	if (r)
		fail_msg("%s", err.msg);
	scenario_problem(sc, p);
	r = fs_problem_validate(p, &ferr);
	if (r)
		fail_msg("%s: %s", path, ferr.msg);
}

static void assert_row(const double *got, const double *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_true(got[i] == want[i]);
}

/* "pools =" given on several lines: the eligibility is their union. */
static void test_pools_lines_add_up(void **state)
{
	static const char text[] = HEAD "[pool.x]\ncapacity = 1, 1\n[pool.y]\ncapacity = 1, 1\n"
					"[pool.z]\ncapacity = 1, 1\n[tenant.t]\ndemand = 1, 1\n"
					"pools = x\nweight = 2\npools = z\n";
	char *path = write_case("pools_lines", text, sizeof(text) - 1);
	struct conf_error err = {{0}};
	struct scenario sc;

	(void)state;
	assert_int_equal(scenario_load(path, &sc, &err), 0);
	assert_int_equal(sc.n_pools, 3);
	assert_true(sc.eligible[0] && !sc.eligible[1] && sc.eligible[2]);
	assert_true(sc.weight[0] == 2);
	scenario_free(&sc);
	unlink(path);
	free(path);
}

/* T2, ALGORITHMS.md 3.2: inputs and the derived gamma table. */
static void test_vector_fig2(void **state)
{
	static const double cap[] = {9, 12, 100, 12, 12, 0};
	static const double dem[] = {1.5, 1, 10, 1, 2, 10, 0.5, 1, 0, 1, 0.5, 0};
	static const double gamma[4][2] = {{6, 0}, {6, 0}, {12, 12}, {9, 12}};
	struct scenario sc;
	struct fs_problem p;

	(void)state;
	load_vector("ps-dsf-fig2.ini", &sc, &p);
	assert_int_equal(p.n_tenants, 4);
	assert_int_equal(p.n_pools, 2);
	assert_int_equal(p.n_resources, 3);
	assert_row(p.capacity, cap, 6);
	assert_row(p.demand, dem, 12);
	assert_string_equal(p.resource_names[2], "net");
	assert_string_equal(p.pool_names[0], "s1");
	assert_string_equal(p.tenant_names[3], "u4");
	for (size_t n = 0; n < 4; n++) {
		assert_true(p.weight[n] == 1);
		assert_true(isinf(p.max_tasks[n]));
		for (size_t k = 0; k < 2; k++) {
			assert_true(p.eligible[n * 2 + k]);
			assert_true(fs_gamma(&p, n, k) == gamma[n][k]);
		}
	}
	assert_null(sc.policy);
	assert_true(isnan(sc.alpha));
	scenario_free(&sc);
}

/* T3, ALGORITHMS.md 3.4: weights, eligibility and Table III's gammas. */
static void test_vector_table3(void **state)
{
	static const double gamma[4][4] = {
	    {80, 340, 82.5, 55}, {40, 170, 41.25, 41.25}, {0, 0, 82.5, 27.5}, {0, 0, 27.5, 27.5}};
	static const double weight[] = {2, 2, 1, 1};
	struct scenario sc;
	struct fs_problem p;

	(void)state;
	load_vector("ps-dsf-table3.ini", &sc, &p);
	assert_int_equal(p.n_tenants, 4);
	assert_int_equal(p.n_pools, 4);
	assert_int_equal(p.n_resources, 2);
	assert_row(p.weight, weight, 4);
	assert_string_equal(p.pool_names[3], "D");
	for (size_t n = 0; n < 4; n++)
		for (size_t k = 0; k < 4; k++) {
			assert_int_equal(p.eligible[n * 4 + k], n < 2 || k >= 2);
			/* 1e-9: class capacities like 16.5/0.2 are not exact in binary. */
			assert_true(fabs(fs_gamma(&p, n, k) - gamma[n][k]) <= 1e-9 * gamma[n][k]);
		}
	scenario_free(&sc);
}

/* T9, ALGORITHMS.md 3.9: A restricted to s1 by "pools =". */
static void test_vector_ef_placement(void **state)
{
	struct scenario sc;
	struct fs_problem p;

	(void)state;
	load_vector("ef-placement.ini", &sc, &p);
	assert_true(p.eligible[0] && !p.eligible[1] && p.eligible[2] && p.eligible[3]);
	assert_true(fs_gamma(&p, 0, 0) == 10 && fs_gamma(&p, 0, 1) == 0);
	assert_true(fs_gamma(&p, 1, 1) == 100);
	scenario_free(&sc);
}

/* ALGORITHMS.md 8: requests once (max_tasks = 1), equal entitlements. */
static void test_vector_njc(void **state)
{
	static const double dem4[] = {0.5, 0, 0, 1, 1, 1, 1, 0};
	struct scenario sc;
	struct fs_problem p;

	(void)state;
	load_vector("njc-two-resource.ini", &sc, &p);
	assert_int_equal(p.n_tenants, 3);
	assert_int_equal(p.n_pools, 1);
	for (size_t n = 0; n < 3; n++)
		assert_true(p.max_tasks[n] == 1 && p.weight[n] == 1);
	assert_true(p.demand[4] == 0.4 && p.demand[5] == 0.8);
	scenario_free(&sc);

	load_vector("njc-four-resource.ini", &sc, &p);
	assert_int_equal(p.n_resources, 4);
	assert_row(p.demand, dem4, 8);
	scenario_free(&sc);
}

/* Every other vector and the shipped example at least parse and validate. */
static void test_all_files_parse(void **state)
{
	static const char *const files[] = {
	    "ps-dsf-fig1.ini",	 "alpha-pf-fig1.ini", "alpha-pf-fig1-modified.ini",
	    "kesidis-fluid.ini", "drf-single.ini",    "../../conf/examples/build-farm.ini",
	};
	struct scenario sc;
	struct fs_problem p;

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		load_vector(files[i], &sc, &p);
		scenario_free(&sc);
	}
	load_vector("alpha-pf-fig1.ini", &sc, &p);
	/* u2's mem is written as 1/3 to double precision: gamma(u2, s1) = 12. */
	assert_true(p.demand[4] == 1.0 / 3);
	assert_true(fs_gamma(&p, 1, 0) == 12);
	scenario_free(&sc);
	load_vector("../../conf/examples/build-farm.ini", &sc, &p);
	assert_string_equal(sc.policy, "njc");
	assert_string_equal(p.tenant_names[0], "ci.slice");
	assert_true(p.weight[0] == 4 && p.max_tasks[3] == 1);
	scenario_free(&sc);
}

int main(void)
{
	const size_t n_bad = sizeof(bad_cases) / sizeof(bad_cases[0]);
	static const struct CMUnitTest fixed[] = {
	    cmocka_unit_test(test_line_limit_boundary), cmocka_unit_test(test_nul_byte),
	    cmocka_unit_test(test_missing_file),	cmocka_unit_test(test_defaults_and_order),
	    cmocka_unit_test(test_pools_lines_add_up),	cmocka_unit_test(test_vector_fig2),
	    cmocka_unit_test(test_vector_table3),	cmocka_unit_test(test_vector_ef_placement),
	    cmocka_unit_test(test_vector_njc),		cmocka_unit_test(test_all_files_parse),
	};
	const size_t n_fixed = sizeof(fixed) / sizeof(fixed[0]);
	struct CMUnitTest *tests = calloc(n_bad + n_fixed, sizeof(*tests));
	int r;

	if (!tests || !mkdtemp(tmpdir))
		return 1;
	for (size_t i = 0; i < n_bad; i++) {
		tests[i].name = bad_cases[i].name;
		tests[i].test_func = test_bad_case;
		tests[i].initial_state = (void *)&bad_cases[i];
	}
	memcpy(&tests[n_bad], fixed, sizeof(fixed));
	r = _cmocka_run_group_tests("test_scenario", tests, n_bad + n_fixed, NULL, NULL);
	free(tests);
	rmdir(tmpdir);
	return r;
}
