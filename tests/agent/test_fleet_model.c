/* SPDX-License-Identifier: MIT */
/*
 * The fleet's records and the leader's solve (agent/fleet/fleet_model.h):
 * vector F1 of docs/fleet.md as three host records, the grants each host
 * applies, JSON round trips, the dump certified through conf/scenario.h and
 * fs_check_psdsf_caps, and every verdict of fleet_check.
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

#include "fleet_model.h"
#include "psdsf_caps.h"
#include "scenario.h"

static struct fleet_tenant_rec h1_t[] = {{"a", 1, {8, 8e9}, ""}, {"b", 1, {8, 8e9}, ""}};
static struct fleet_tenant_rec h2_t[] = {{"b", 1, {8, 8e9}, ""}, {"c", 1, {2, 2e9}, ""}};

static void f1_hosts(struct fleet_host_rec *h)
{
	memset(h, 0, 2 * sizeof(*h));
	for (int k = 0; k < 2; k++) {
		snprintf(h[k].host, sizeof(h[k].host), "h%d", k + 1);
		h[k].version = 3;
		h[k].n_res = 2;
		snprintf(h[k].res_name[0], sizeof(h[k].res_name[0]), "cpu");
		snprintf(h[k].res_name[1], sizeof(h[k].res_name[1]), "memory");
		h[k].capacity[0] = 8;
		h[k].capacity[1] = 16e9;
		h[k].n_tenants = 2;
	}
	h[0].t = h1_t;
	h[1].t = h2_t;
}

static void solve_f1(void **state)
{
	(void)state;
	struct fleet_host_rec h[2];
	struct fleet_alloc a;
	char err[256];

	f1_hosts(h);
	assert_int_equal(fleet_solve(h, 2, NULL, NULL, &a, NULL, err, sizeof(err)), 0);
	assert_int_equal(a.n_hosts, 2);
	assert_string_equal(a.h[0].host, "h1");
	assert_int_equal(a.h[0].version, 3);
	assert_string_equal(a.h[0].g[0].tenant, "a");
	assert_float_equal(a.h[0].g[0].grant, 7.0 / 8, 1e-6); /* 7 of its 8 CPUs */
	assert_float_equal(a.h[0].g[1].grant, 1.0 / 8, 1e-6); /* b: 1 CPU on h1 */
	assert_float_equal(a.h[1].g[0].grant, 6.0 / 8, 1e-6); /* b: 6 CPUs on h2 */
	assert_float_equal(a.h[1].g[1].grant, 1, 1e-6);	      /* c: all it asks */
	fleet_alloc_free(&a);
}

/* Demand shapes differ between hosts: the cap covers the local demand. */
static void shapes_differ(void **state)
{
	(void)state;
	struct fleet_tenant_rec t1[] = {{"a", 2, {4, 1e9}, ""}};
	struct fleet_tenant_rec t2[] = {{"a", 1, {1, 3e9}, ""}, {"z", 1, {0, 0}, ""}};
	struct fleet_host_rec h[2];
	struct fleet_alloc a;
	char err[256];

	f1_hosts(h);
	h[0].t = t1;
	h[0].n_tenants = 1;
	h[1].t = t2;
	assert_int_equal(fleet_solve(h, 2, NULL, NULL, &a, NULL, err, sizeof(err)), 0);
	/* Alone on each host, a gets all it asks everywhere. */
	assert_float_equal(a.h[0].g[0].grant, 1, 1e-6);
	assert_float_equal(a.h[1].g[0].grant, 1, 1e-6);
	/* d_a = (2.5, 2e9): 4 CPUs need 1.6 units, 3 GB 1.5 units. */
	assert_float_equal(a.h[0].g[0].cap, 1.6, 1e-9);
	assert_float_equal(a.h[1].g[0].cap, 1.5, 1e-9);
	/* z has no demand anywhere: not in the problem, nothing to share. */
	assert_string_equal(a.h[1].g[1].tenant, "z");
	assert_float_equal(a.h[1].g[1].grant, 1, 0);
	assert_float_equal(a.h[1].g[1].cap, 0, 0);
	fleet_alloc_free(&a);

	h[1].t = &t2[1];
	h[1].n_tenants = 1;
	h[0].n_tenants = 0;
	assert_int_equal(fleet_solve(h, 2, NULL, NULL, &a, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no tenant has demand"));
}

static void json_roundtrip(void **state)
{
	(void)state;
	struct fleet_host_rec h[2], back;
	struct fleet_alloc a, a2;
	char err[256], *s;

	f1_hosts(h);
	h[0].time_us = 1234567;
	s = fleet_host_to_json(&h[0]);
	assert_non_null(s);
	assert_int_equal(fleet_host_from_json(s, &back, err, sizeof(err)), 0);
	assert_true(fleet_host_same(&h[0], &back));
	assert_int_equal(back.version, 3);
	assert_int_equal(back.time_us, 1234567);
	back.t[1].demand[0] = 7;
	assert_false(fleet_host_same(&h[0], &back));
	fleet_host_free(&back);
	free(s);

	assert_int_equal(fleet_solve(h, 2, NULL, NULL, &a, NULL, err, sizeof(err)), 0);
	a.revision = 42;
	a.time_us = 99;
	snprintf(a.leader, sizeof(a.leader), "h2");
	s = fleet_alloc_to_json(&a);
	assert_int_equal(fleet_alloc_from_json(s, &a2, err, sizeof(err)), 0);
	assert_int_equal(a2.revision, 42);
	assert_int_equal(a2.time_us, 99);
	assert_string_equal(a2.leader, "h2");
	assert_int_equal(a2.n_hosts, 2);
	assert_int_equal(a2.h[1].n, 2);
	assert_float_equal(a2.h[1].g[0].grant, a.h[1].g[0].grant, 1e-8);
	free(s);
	fleet_alloc_free(&a);
	fleet_alloc_free(&a2);

	const char *bad[] = {
	    "[]",
	    "{\"host\":\"\"}",
	    "{\"host\":\"h\",\"resources\":[[\"cpu\",-1]],\"tenants\":[]}",
	    "{\"host\":\"h\",\"resources\":[[\"cpu\",1]],\"tenants\":[[\"a\",0,[1]]]}",
	    "{\"host\":\"h\",\"resources\":[[\"cpu\",1]],\"tenants\":[[\"a\",1,[1,2]]]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(fleet_host_from_json(bad[i], &back, err, sizeof(err)), -EPROTO);
	assert_int_equal(fleet_alloc_from_json("{\"revision\":1,\"hosts\":[[\"h\",1,[[\"a\",2,0,"
					       "0]]]]}",
					       &a2, err, sizeof(err)),
			 -EPROTO); /* grant above 1 */
}

/* The dump is a scenario that the extended Theorem 1 certifies. */
static void dump_certified(void **state)
{
	(void)state;
	struct fleet_host_rec h[2];
	struct fleet_alloc a;
	struct scenario sc;
	struct conf_error cerr = {{0}};
	struct fs_problem p;
	struct fs_error why = {{0}};
	char path[] = "/tmp/test_fleet_dump.XXXXXX", err[256];
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	assert_non_null(f);
	f1_hosts(h);
	assert_int_equal(fleet_solve(h, 2, NULL, NULL, &a, f, err, sizeof(err)), 0);
	fclose(f);
	if (scenario_load(path, &sc, &cerr) < 0)
		fail_msg("%s", cerr.msg);
	assert_true(sc.has_alloc);
	assert_int_equal(sc.n_pools, 2);
	assert_int_equal(sc.n_tenants, 3);
	scenario_problem(&sc, &p);
	if (!fs_check_psdsf_caps(&p, sc.cap, sc.alloc, 1e-6, &why))
		fail_msg("dump not certified: %s", why.msg);
	/* And a tampered one is not: give a one more task on h1 than it got. */
	sc.alloc[0] -= 0.5;
	assert_false(fs_check_psdsf_caps(&p, sc.cap, sc.alloc, 1e-6, &why));
	scenario_free(&sc);
	fleet_alloc_free(&a);
	unlink(path);
}

static void verdicts(void **state)
{
	(void)state;
	struct fleet_host_rec h[2];
	struct fleet_alloc a;
	const struct fleet_host_alloc *mine;
	char err[256];
	const uint64_t now = 1000000000, age = 2000000;

	f1_hosts(h);
	assert_int_equal(fleet_solve(h, 2, NULL, NULL, &a, NULL, err, sizeof(err)), 0);
	a.time_us = now - 1000000;
	assert_int_equal(fleet_check(&a, &h[1], now, age, &mine), FLEET_APPLY);
	assert_ptr_equal(mine, &a.h[1]);
	assert_int_equal(fleet_check(&a, &h[1], now + 1500000, age, &mine), FLEET_TOO_OLD);
	assert_null(mine);
	h[1].version = 4; /* our demands changed since the snapshot */
	assert_int_equal(fleet_check(&a, &h[1], now, age, &mine), FLEET_OLD_DEMANDS);
	h[1].version = 3;
	snprintf(h[1].host, sizeof(h[1].host), "h9");
	assert_int_equal(fleet_check(&a, &h[1], now, age, &mine), FLEET_NOT_LISTED);
	snprintf(h[1].host, sizeof(h[1].host), "h2");
	h[1].n_tenants = 1; /* a tenant's cgroup went away */
	assert_int_equal(fleet_check(&a, &h[1], now, age, &mine), FLEET_OTHER_TENANTS);
	h[1].n_tenants = 2;
	h[1].t = h1_t; /* same count, other names */
	assert_int_equal(fleet_check(&a, &h[1], now, age, &mine), FLEET_OTHER_TENANTS);
	assert_string_equal(fleet_verdict_text(FLEET_OLD_DEMANDS),
			    "allocation solved without this host's latest demands");
	fleet_alloc_free(&a);
}

/* PREFIX/weights: JSON both ways, the config's bounds, set replaces. */
static void weights_json(void **state)
{
	(void)state;
	struct fleet_weights w = {0}, back;
	char err[256], *s;

	assert_int_equal(fleet_weights_set(&w, "b", false, 2), 0);
	assert_int_equal(fleet_weights_set(&w, "users", true, 3), 0);
	assert_int_equal(fleet_weights_set(&w, "a", false, 0.5), 0);
	assert_int_equal(fleet_weights_set(&w, "a", false, 4), 0); /* replaces */
	assert_int_equal(w.n, 3);
	assert_int_equal(fleet_weights_set(&w, "a", false, 0), -EINVAL);   /* below 1e-6 */
	assert_int_equal(fleet_weights_set(&w, "a", false, 2e6), -EINVAL); /* above 1e6 */
	assert_int_equal(fleet_weights_set(&w, "a b", false, 1), -EINVAL);
	assert_int_equal(fleet_weights_set(&w, "", false, 1), -EINVAL);
	s = fleet_weights_to_json(&w);
	assert_non_null(s);
	assert_int_equal(fleet_weights_from_json(s, &back, err, sizeof(err)), 0);
	assert_int_equal(back.n, 3);
	assert_float_equal(fleet_weights_get(&back, "a", false), 4, 0);
	assert_float_equal(fleet_weights_get(&back, "b", false), 2, 0);
	assert_float_equal(fleet_weights_get(&back, "users", true), 3, 0);
	assert_float_equal(fleet_weights_get(&back, "users", false), 0, 0);
	assert_float_equal(fleet_weights_get(&back, "c", false), 0, 0);
	free(s);
	fleet_weights_free(&back);
	fleet_weights_free(&w);
	assert_int_equal(
	    fleet_weights_from_json("{\"tenants\": {\"a\": 1e9}}", &back, err, sizeof(err)),
	    -EPROTO);
	assert_non_null(strstr(err, "'a'"));
	assert_int_equal(fleet_weights_from_json("[1]", &back, err, sizeof(err)), -EPROTO);
}

/* Weights: the fleet's by name, then by template, then a host's; every
 * grant says which, on every host alike. */
static void fleet_weights_used(void **state)
{
	(void)state;
	struct fleet_tenant_rec t1[] = {{"a", 1, {8, 8e9}, ""}, {"b", 5, {8, 8e9}, "ci"}};
	struct fleet_tenant_rec t2[] = {{"b", 1, {8, 8e9}, "ci"}, {"c", 3, {2, 2e9}, ""}};
	struct fleet_host_rec h[2];
	struct fleet_weights w = {0};
	struct fleet_alloc a;
	char err[256];

	f1_hosts(h);
	h[0].t = t1;
	h[1].t = t2;
	assert_int_equal(fleet_weights_set(&w, "a", false, 2), 0);
	assert_int_equal(fleet_weights_set(&w, "ci", true, 1), 0);
	assert_int_equal(fleet_solve(h, 2, &w, NULL, &a, NULL, err, sizeof(err)), 0);
	/* a: 2 from the fleet; b: 1 from its template (not h1's 5); c: h2's 3 */
	assert_float_equal(a.h[0].g[0].weight, 2, 0);
	assert_int_equal(a.h[0].g[0].from, FLEET_W_TENANT);
	assert_float_equal(a.h[0].g[1].weight, 1, 0);
	assert_int_equal(a.h[0].g[1].from, FLEET_W_TEMPLATE);
	assert_float_equal(a.h[1].g[0].weight, 1, 0);
	assert_int_equal(a.h[1].g[0].from, FLEET_W_TEMPLATE);
	assert_float_equal(a.h[1].g[1].weight, 3, 0);
	assert_int_equal(a.h[1].g[1].from, FLEET_W_HOST);
	/* F2 of docs/fleet.md: phi_a = 2 gives a all of h1 */
	assert_float_equal(a.h[0].g[0].grant, 1, 1e-6);
	assert_float_equal(a.h[0].g[1].grant, 0, 1e-6);
	fleet_alloc_free(&a);
	fleet_weights_free(&w);
}

/* One host's key holds its part only, and round-trips with the weights. */
static void host_part_json(void **state)
{
	(void)state;
	struct fleet_host_rec h[2];
	struct fleet_alloc a, back;
	char err[256], *s;

	f1_hosts(h);
	assert_int_equal(fleet_solve(h, 2, NULL, NULL, &a, NULL, err, sizeof(err)), 0);
	a.revision = 7;
	s = fleet_alloc_host_to_json(&a, 1);
	assert_int_equal(fleet_alloc_from_json(s, &back, err, sizeof(err)), 0);
	assert_int_equal(back.revision, 7);
	assert_int_equal(back.n_hosts, 1);
	assert_string_equal(back.h[0].host, "h2");
	assert_float_equal(back.h[0].g[0].grant, a.h[1].g[0].grant, 1e-8);
	assert_float_equal(back.h[0].g[0].weight, 1, 0);
	assert_int_equal(back.h[0].g[0].from, FLEET_W_HOST);
	free(s);
	fleet_alloc_free(&back);
	fleet_alloc_free(&a);
}

/* The leader's warm start: the second solve starts from the first answer
 * (mapped by name, a new tenant from 0) and gives the same grants. */
static void warm_solve(void **state)
{
	(void)state;
	struct fleet_host_rec h[2];
	struct fleet_warm warm = {0};
	struct fleet_alloc a, b;
	char err[256];

	f1_hosts(h);
	assert_int_equal(fleet_solve(h, 2, NULL, &warm, &a, NULL, err, sizeof(err)), 0);
	assert_false(warm.used);
	assert_int_equal(warm.N, 3);
	assert_int_equal(fleet_solve(h, 2, NULL, &warm, &b, NULL, err, sizeof(err)), 0);
	assert_true(warm.used);
	assert_int_equal(b.iterations, 1);
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < 2; i++)
			assert_float_equal(a.h[k].g[i].grant, b.h[k].g[i].grant, 1e-6);
	fleet_alloc_free(&b);
	/* hosts in the other order, one tenant renamed: still mapped by name */
	{
		struct fleet_tenant_rec t2[] = {{"b", 1, {8, 8e9}, ""}, {"d", 1, {2, 2e9}, ""}};
		struct fleet_host_rec r[2] = {h[1], h[0]};

		r[0].t = t2;
		assert_int_equal(fleet_solve(r, 2, NULL, &warm, &b, NULL, err, sizeof(err)), 0);
		assert_true(warm.used);
		assert_float_equal(b.h[1].g[0].grant, 7.0 / 8, 1e-6);
		assert_float_equal(b.h[0].g[1].grant, 1, 1e-6);
		fleet_alloc_free(&b);
	}
	fleet_alloc_free(&a);
	fleet_warm_free(&warm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(solve_f1),		  cmocka_unit_test(shapes_differ),
	    cmocka_unit_test(json_roundtrip),	  cmocka_unit_test(dump_certified),
	    cmocka_unit_test(verdicts),		  cmocka_unit_test(weights_json),
	    cmocka_unit_test(fleet_weights_used), cmocka_unit_test(host_part_json),
	    cmocka_unit_test(warm_solve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
