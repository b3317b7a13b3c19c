/* SPDX-License-Identifier: MIT */
/*
 * agent/metrics.c on a hand-built published state (two tenants, cpu and
 * memory): the exposition lines and their values, label escaping, +Inf for
 * "max", and fsd_metrics_write's atomic replace (new inode, mode 0644, no
 * temporary left) and its error (missing directory, named in the message).
 * The daemon end to end and a reader racing the writer are in
 * test_fairctl_metrics.sh.
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
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "metrics.h"

struct fixture {
	struct fsd_published p;
	struct fsd_tenant_pub t[2];
	char *dir;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct fsd_published *p;

	assert_non_null(f);
	p = &f->p;
	plan_config_default(&p->pcfg);
	assert_int_equal(
	    fs_resources_add(&p->pcfg.res, FS_RES_CPU, NULL, 4, -1, (struct fs_devnum){0, 0}), 0);
	assert_int_equal(
	    fs_resources_add(&p->pcfg.res, FS_RES_MEMORY, NULL, 8e9, -1, (struct fs_devnum){0, 0}),
	    1);
	p->policy = "psdsf";
	p->mode = PLAN_MODE_LIMITS;
	p->interval_us = 1000000;
	p->period = 7;
	p->written_total = 12;
	p->saturated[0] = true;
	p->n_saturated = 1;
	p->n_tenants = 2;
	p->t = f->t;
	snprintf(f->t[0].name, sizeof(f->t[0].name), "a");
	snprintf(f->t[1].name, sizeof(f->t[1].name), "we\"ird\\one");
	for (size_t i = 0; i < 2; i++) {
		struct plan_tenant *t = &f->t[i].plan;

		f->t[i].present = true;
		f->t[i].weight = (double)(i + 1);
		f->t[i].est.demand[0] = 3;
		f->t[i].est.demand[1] = 1e9;
		f->t[i].usage[0] = 1;
		t->in_problem = true;
		t->entitlement = (double)(i + 1) / 3; /* the planner's: weight / 3 */
		t->x = i ? 0.5 : 1.0 / 3.0;
		t->alloc[0] = i ? 1.5 : 1;
		t->alloc[1] = 5e8;
		t->bottleneck = 0;
		t->cpu_quota_usec = 150000;
		t->cpu_period_usec = 100000;
		t->mem_high = FS_VALUE_MAX;
		t->mem_max = FS_VALUE_MAX;
		t->limit[0] = 1.5;
		t->limit[1] = INFINITY;
	}
	f->dir = at_mkdtemp();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	at_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static char *print(const struct fsd_published *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(fsd_metrics_print(m, p), 0);
	fclose(m);
	return buf;
}

static void has(const char *text, const char *line)
{
	char want[512];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("missing line: %s", line);
}

static void test_lines(void **state)
{
	struct fixture *f = *state;
	char *text = print(&f->p);

	has(text, "fairshare_info{policy=\"psdsf\",mode=\"limits\"} 1");
	has(text, "# TYPE fairshare_periods_total counter");
	has(text, "fairshare_periods_total 7");
	has(text, "fairshare_cgroup_writes_total 12");
	has(text, "fairshare_interval_seconds 1");
	has(text, "fairshare_resource_capacity_cores{resource=\"cpu\"} 4");
	has(text, "fairshare_resource_capacity_bytes{resource=\"memory\"} 8000000000");
	has(text, "fairshare_resource_saturated{resource=\"cpu\"} 1");
	has(text, "fairshare_resource_saturated{resource=\"memory\"} 0");
	has(text, "fairshare_resource_bottleneck{resource=\"cpu\"} 1");
	has(text, "fairshare_resource_bottleneck{resource=\"memory\"} 0");
	has(text, "fairshare_resource_allocated_ratio{resource=\"cpu\"} 0.625");
	has(text, "fairshare_resource_utilization_ratio{resource=\"cpu\"} 0.5");
	has(text, "fairshare_tenant_allocation_ratio{tenant=\"a\",resource=\"cpu\"} 0.25");
	has(text, "fairshare_tenant_demand_ratio{tenant=\"a\",resource=\"memory\"} 0.125");
	has(text, "fairshare_tenant_entitlement_ratio{tenant=\"a\"} 0.3333333333");
	has(text, "fairshare_tenant_cpu_quota_seconds{tenant=\"a\"} 0.15");
	has(text, "fairshare_tenant_memory_high_bytes{tenant=\"a\"} +Inf");
	has(text, "fairshare_tenant_limit_ratio{tenant=\"a\",resource=\"memory\"} +Inf");
	has(text, "fairshare_tenant_bottleneck{tenant=\"a\",resource=\"cpu\"} 1");
	has(text, "fairshare_tenant_bottleneck{tenant=\"a\",resource=\"memory\"} 0");
	/* label values escape " and \ */
	has(text, "fairshare_tenant_weight{tenant=\"we\\\"ird\\\\one\"} 2");
	assert_int_equal(text[strlen(text) - 1], '\n');
	free(text);
}

/* A disk declared as one budget for reads and writes: its byte and op
 * budgets are capacities in their own units, and a contended one is a
 * bottleneck like any resource. */
static void test_shared_disk(void **state)
{
	struct fixture *f = *state;
	struct fsd_published *p = &f->p;
	char *text;

	assert_int_equal(fs_resources_add(&p->pcfg.res, FS_RES_IO_BPS, "io.d.bps", 1e8, 0,
					  (struct fs_devnum){254, 0}),
			 2);
	assert_int_equal(fs_resources_add(&p->pcfg.res, FS_RES_IO_IOPS, "io.d.iops", 8000, 0,
					  (struct fs_devnum){254, 0}),
			 3);
	p->busy[2] = p->pcfg.contended[2] = true; /* as the planner marks it */
	assert_string_equal(fsd_resource_state(p, 2), "contended");
	text = print(p);
	has(text, "fairshare_resource_capacity_bytes_per_second{resource=\"io.d.bps\"} 100000000");
	has(text, "fairshare_resource_capacity_operations_per_second{resource=\"io.d.iops\"} 8000");
	has(text, "fairshare_resource_bottleneck{resource=\"io.d.bps\"} 1");
	has(text, "fairshare_resource_bottleneck{resource=\"io.d.iops\"} 0");
	free(text);
}

/* One vocabulary (published.h): the word each kind of bottleneck gets, and
 * the bottleneck gauge that follows it. */
static void test_bottleneck_states(void **state)
{
	struct fixture *f = *state;
	struct fsd_published *p = &f->p;
	char *text;

	assert_string_equal(fsd_resource_state(p, 0), "saturated");
	assert_null(fsd_resource_state(p, 1));
	p->busy[1] = true;
	assert_string_equal(fsd_resource_state(p, 1), "busy");
	p->pcfg.contended[1] = true;
	assert_string_equal(fsd_resource_state(p, 1), "contended");
	p->busy[0] = true; /* saturated says more: the allocation fills it */
	assert_string_equal(fsd_resource_state(p, 0), "saturated");
	assert_null(fsd_resource_state(p, 2)); /* no such resource */
	text = print(p);
	has(text, "fairshare_resource_bottleneck{resource=\"memory\"} 1");
	has(text, "fairshare_resource_saturated{resource=\"memory\"} 0");
	free(text);
}

static void test_write_atomic(void **state)
{
	struct fixture *f = *state;
	char path[512], err[1024];
	struct stat st1, st2;
	char *text = print(&f->p);
	const char *got;

	snprintf(path, sizeof(path), "%s/fairshare.prom", f->dir);
	assert_int_equal(fsd_metrics_write(path, &f->p, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st1), 0);
	assert_int_equal(st1.st_mode & 0777, 0644);
	got = at_read(f->dir, "fairshare.prom");
	assert_non_null(got);
	assert_string_equal(got, text);
	/* a reader holding the old file keeps it whole: the new one is a new inode */
	f->p.period = 8;
	assert_int_equal(fsd_metrics_write(path, &f->p, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st2), 0);
	assert_true(st1.st_ino != st2.st_ino);
	assert_non_null(strstr(at_read(f->dir, "fairshare.prom"), "\nfairshare_periods_total 8\n"));
	/* nothing but the file itself in the directory */
	{
		char cmd[640];

		snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1", f->dir);
		assert_int_equal(system(cmd), 0);
	}
	free(text);
}

static void test_write_error_names_path(void **state)
{
	struct fixture *f = *state;
	char path[512], err[1024];

	snprintf(path, sizeof(path), "%s/no/such/dir/fairshare.prom", f->dir);
	assert_int_equal(fsd_metrics_write(path, &f->p, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lines, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bottleneck_states, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_shared_disk, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_atomic, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_error_names_path, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
