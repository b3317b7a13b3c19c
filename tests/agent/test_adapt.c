/* SPDX-License-Identifier: MIT */
/* The adapters between the stages of a period (agent/daemon/adapt.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "adapt.h"

#define MiB (1024.0 * 1024.0)

/* cpu, memory, disk 0 (8:0) rbps + wbps, disk 1 (8:16) rbps, net */
static struct fs_conf *conf(uint64_t interval_us)
{
	struct fs_conf *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->agent.interval_us = interval_us;
	c->agent.policy = FS_CONF_POLICY_NJC;
	c->agent.enforce = FS_ENFORCE_WEIGHTS;
	assert_int_equal(
	    fs_resources_add(&c->res, FS_RES_CPU, NULL, 4, -1, (struct fs_devnum){0, 0}), 0);
	assert_int_equal(
	    fs_resources_add(&c->res, FS_RES_MEMORY, NULL, 8e9, -1, (struct fs_devnum){0, 0}), 1);
	assert_int_equal(fs_resources_add(&c->res, FS_RES_IO_RBPS, "io.a.rbps", 100 * MiB, 0,
					  (struct fs_devnum){8, 0}),
			 2);
	assert_int_equal(fs_resources_add(&c->res, FS_RES_IO_WBPS, "io.a.wbps", 50 * MiB, 0,
					  (struct fs_devnum){8, 0}),
			 3);
	assert_int_equal(fs_resources_add(&c->res, FS_RES_IO_RBPS, "io.b.rbps", 10 * MiB, 1,
					  (struct fs_devnum){8, 16}),
			 4);
	assert_int_equal(
	    fs_resources_add(&c->res, FS_RES_NET, NULL, 1e9, -1, (struct fs_devnum){0, 0}), 5);
	c->n_disks = 2;
	return c;
}

static void test_plan_config_maps_the_config(void **state)
{
	struct fs_conf *c = conf(1000000);
	struct plan_config pc;
	bool works[FS_MAX_DISKS] = {false, true};

	(void)state;
	fsd_plan_config(c, works, &pc);
	assert_int_equal(pc.rule, FS_RULE_NJC);
	assert_int_equal(pc.enforce, FS_ENFORCE_WEIGHTS);
	assert_int_equal(pc.res.n, 6);
	assert_string_equal(pc.res.name[4], "io.b.rbps");
	assert_false(pc.io_weight_works[0]);
	assert_true(pc.io_weight_works[1]);
	fsd_plan_config(c, NULL, &pc);
	assert_false(pc.io_weight_works[1]);
	free(c);
}

/* The estimator and planner count in periods (adapt.h): every interval gets
 * their defaults. */
static void test_settings_are_per_period(void **state)
{
	static const uint64_t intervals[] = {100000, 1000000, 2000000};
	struct plan_config def;
	struct est_config edef;

	(void)state;
	plan_config_default(&def);
	est_config_default(&edef);
	for (size_t i = 0; i < sizeof(intervals) / sizeof(intervals[0]); i++) {
		struct fs_conf *c = conf(intervals[i]);
		struct plan_config pc;
		struct est_config ec;

		fsd_plan_config(c, NULL, &pc);
		fsd_est_config(c, &ec);
		assert_float_equal(ec.probe_step, edef.probe_step, 0);
		assert_float_equal(ec.decay, edef.decay, 0);
		assert_float_equal(pc.mem_step_down, def.mem_step_down, 0);
		assert_float_equal(pc.busy, def.busy, 0);
		/* the longest cpu.max period follows it (plan.h) */
		assert_int_equal(pc.interval_usec, intervals[i]);
		free(c);
	}
}

static void sample(struct fs_tenant_sample *s)
{
	fs_tenant_sample_unknown(s);
	s->present = true;
	s->cpu_cores = 1.5;
	s->mem_current = 1e9;
	s->io[0].rbps = 60 * MiB;
	s->io[0].wbps = NAN; /* unknown counts as 0 */
	s->io[1].rbps = 9 * MiB;
	s->net_rx_bps = 100;
	s->net_tx_bps = 20;
	s->cpu_nr_throttled = 3;
	s->cpu_throttled_us = 1500;
	s->mem_ev_high = 2;
	s->mem_ev_max = 1;
	s->mem_refault_bytes = 4096;
	s->psi_io.some_avg10 = 12;
	s->cpu_runq_wait_preempted = 0.25;
}

static void test_usage_by_kind(void **state)
{
	struct fs_conf *c = conf(1000000);
	struct fs_tenant_sample s;

	(void)state;
	sample(&s);
	assert_float_equal(fsd_usage(&c->res, &s, 0), 1.5, 0);
	assert_float_equal(fsd_usage(&c->res, &s, 1), 1e9, 0);
	assert_float_equal(fsd_usage(&c->res, &s, 2), 60 * MiB, 0);
	assert_float_equal(fsd_usage(&c->res, &s, 3), 0, 0);
	assert_float_equal(fsd_usage(&c->res, &s, 4), 9 * MiB, 0);
	assert_float_equal(fsd_usage(&c->res, &s, 5), 120, 0);
	free(c);
}

/* The contention input: per io resource the use together, the users and
 * whether a limit of ours binds; tenants absent or on a new baseline do not
 * count, and neither does a limit that is not in force. */
static void test_io_load(void **state)
{
	struct fs_conf *c = conf(1000000);
	struct fs_conf_tenant tenants[3] = {{.name = "t0"}, {.name = "t1"}, {.name = "t2"}};
	struct fs_tenant_sample s[3];
	struct plan_tenant pt[3];
	struct plan prev = {.n_tenants = 3, .t = pt};
	struct ct_config cc;
	struct est_config ec;
	struct ct_input in;

	(void)state;
	ct_config_default(&cc);
	est_config_default(&ec); /* io_limit_ratio 0.95 */
	memset(pt, 0, sizeof(pt));
	for (size_t i = 0; i < 3; i++) {
		sample(&s[i]);
		snprintf(pt[i].name, sizeof(pt[i].name), "t%zu", i);
		pt[i].write = true;
		for (size_t r = 0; r < FS_MAX_RES; r++)
			pt[i].io[r] = FS_VALUE_MAX;
	}
	s[2].reset = true;	      /* would be a third user */
	s[1].io[1].rbps = 0.05 * MiB; /* below 1 % of 10 MiB/s: not a user */
	pt[0].io[2] = 62 * MiB;	      /* 60 of 62: at the limit (>= 0.95) */
	pt[1].io[4] = 1 * MiB;	      /* 0.05 of 1: far below */
	ct_input_init(&in);
	fsd_io_load(&c->res, &cc, &ec, 3, tenants, s, &prev, true, &in);
	assert_float_equal(in.total[2], 120 * MiB, 1);
	assert_int_equal(in.users[2], 2);
	assert_true(in.binding[2]);
	assert_float_equal(in.total[3], 0, 0); /* unknown counts as 0 */
	assert_int_equal(in.users[3], 0);
	assert_float_equal(in.total[4], 9.05 * MiB, 1);
	assert_int_equal(in.users[4], 1);
	assert_false(in.binding[4]);
	assert_int_equal(in.users[0], 0); /* cpu is not io */
	assert_float_equal(in.total[0], 0, 0);
	assert_true(isnan(in.queue[0])); /* the caller's */

	/* dry-run or released: nothing of ours is in force */
	ct_input_init(&in);
	fsd_io_load(&c->res, &cc, &ec, 3, tenants, s, &prev, false, &in);
	assert_false(in.binding[2]);
	/* absent tenants */
	s[0].present = s[1].present = false;
	ct_input_init(&in);
	fsd_io_load(&c->res, &cc, &ec, 3, tenants, s, &prev, true, &in);
	assert_int_equal(in.users[2], 0);
	assert_float_equal(in.total[2], 0, 0);
	free(c);
}

/* A disk declared with one budget for reads and writes (io.d = DEV 100M
 * 5Kiops): a reader and a writer are two users of the one resource, so a
 * deep queue makes it contended (as rbps and wbps they were one user each,
 * and never contended); a tenant's use is its reads and writes together;
 * io.max gets the split of its limit. */
static void test_shared_disk(void **state)
{
	struct fs_conf *c = calloc(1, sizeof(*c));
	struct fs_conf_tenant tenants[2] = {{.name = "reader"}, {.name = "writer"}};
	struct fs_tenant_sample s[2];
	struct plan_tenant pt[2];
	struct plan prev = {.n_tenants = 2, .t = pt};
	struct plan_config pc;
	struct ct_config cc;
	struct ct_state cs;
	struct est_config ec;
	struct ct_input in;
	struct fs_limits l;
	enum { BPS = 1, IOPS = 2 };

	(void)state;
	assert_non_null(c);
	fs_resources_add(&c->res, FS_RES_CPU, NULL, 4, -1, (struct fs_devnum){0, 0});
	assert_int_equal(fs_resources_add(&c->res, FS_RES_IO_BPS, "io.d.bps", 100 * MiB, 0,
					  (struct fs_devnum){8, 0}),
			 BPS);
	assert_int_equal(fs_resources_add(&c->res, FS_RES_IO_IOPS, "io.d.iops", 5000, 0,
					  (struct fs_devnum){8, 0}),
			 IOPS);
	c->n_disks = 1;
	ct_config_default(&cc);
	ct_state_init(&cs);
	est_config_default(&ec);
	memset(pt, 0, sizeof(pt));
	for (size_t i = 0; i < 2; i++) {
		fs_tenant_sample_unknown(&s[i]);
		s[i].present = true;
		s[i].io[0].rbps = i ? 0 : 30 * MiB;
		s[i].io[0].wbps = i ? 12 * MiB : 1 * MiB;
		s[i].io[0].riops = i ? 0 : 300;
		s[i].io[0].wiops = i ? 100 : 10;
		snprintf(pt[i].name, sizeof(pt[i].name), "%s", tenants[i].name);
		pt[i].write = true;
		for (size_t r = 0; r < FS_MAX_RES; r++)
			pt[i].io[r] = FS_VALUE_MAX;
	}
	assert_float_equal(fsd_usage(&c->res, &s[0], BPS), 31 * MiB, 0);
	assert_float_equal(fsd_io_read(&c->res, &s[0], BPS), 30 * MiB, 0);
	assert_float_equal(fsd_usage(&c->res, &s[0], IOPS), 310, 0);
	assert_float_equal(fsd_io_read(&c->res, &s[0], IOPS), 300, 0);
	assert_true(isnan(fsd_io_read(&c->res, &s[0], 0)));

	pt[1].io[BPS] = 12 * MiB; /* the writer is at its limit of ours */
	ct_input_init(&in);
	in.queue[0] = 8;
	fsd_io_load(&c->res, &cc, &ec, 2, tenants, s, &prev, true, &in);
	assert_float_equal(in.total[BPS], 43 * MiB, 1);
	assert_int_equal(in.users[BPS], 2);
	assert_true(in.binding[BPS]);
	ct_update(&c->res, &cc, &in, &cs, &cs);
	assert_true(cs.contended[BPS]);
	assert_true(cs.contended[IOPS]);
	/* our limits hold the use down, the queue is gone: still contended */
	in.queue[0] = 0.5;
	for (unsigned p = 0; p < 2 * cc.hold; p++)
		ct_update(&c->res, &cc, &in, &cs, &cs);
	assert_true(cs.contended[BPS]);
	assert_false(cs.contended[IOPS]); /* no limit of ours there */

	/* random tenants: the shared budget's load is the reads and writes of
	 * every tenant, its users those whose reads and writes together reach
	 * user_share of it (a reader and a writer both count) */
	srand(14);
	for (int k = 0; k < 2000; k++) {
		double total = 0;
		unsigned users = 0;

		for (size_t i = 0; i < 2; i++) {
			s[i].io[0].rbps = rand() % 3 ? (double)(rand() % 4000) * 1e4 : 0;
			s[i].io[0].wbps = rand() % 3 ? (double)(rand() % 4000) * 1e4 : 0;
			total += s[i].io[0].rbps + s[i].io[0].wbps;
			users += s[i].io[0].rbps + s[i].io[0].wbps >= cc.user_share * 100 * MiB;
		}
		ct_input_init(&in);
		fsd_io_load(&c->res, &cc, &ec, 2, tenants, s, &prev, false, &in);
		assert_float_equal(in.total[BPS], total, 1e-6 * total + 1);
		assert_int_equal(in.users[BPS], users);
		assert_false(in.binding[BPS]); /* nothing of ours in force */
	}

	fsd_plan_config(c, NULL, &pc);
	pt[0].io_split[BPS][0] = 40 * MiB;
	pt[0].io_split[BPS][1] = 4 * MiB;
	pt[0].io_split[IOPS][0] = FS_VALUE_MAX;
	pt[0].io_split[IOPS][1] = 100;
	fsd_limits(&pc, &pt[0], &l);
	assert_int_equal(l.n_io, 1);
	assert_int_equal(l.io[0].dev.major, 8);
	assert_int_equal(l.io[0].rbps, 40 * MiB);
	assert_int_equal(l.io[0].wbps, 4 * MiB);
	assert_true(l.io[0].riops == FS_VALUE_MAX);
	assert_int_equal(l.io[0].wiops, 100);
	free(c);
}

static void test_est_sample(void **state)
{
	struct fs_conf *c = conf(1000000);
	struct fs_tenant_sample s;
	struct plan_tenant prev;
	struct est_sample es;
	bool contended[FS_MAX_RES] = {false, false, true};

	(void)state;
	sample(&s);
	memset(&prev, 0, sizeof(prev));
	for (size_t r = 0; r < FS_MAX_RES; r++)
		prev.io[r] = FS_VALUE_MAX;
	prev.write = true;
	prev.io[2] = 50 << 20;
	prev.io[0] = 7; /* not io: never a limit */
	fsd_est_sample(&c->res, &s, contended, &prev, true, &es);
	assert_float_equal(es.limit[2], 50.0 * MiB, 0);
	assert_true(isinf(es.limit[3])); /* "max" */
	assert_true(isinf(es.limit[0]));
	assert_true(es.contended[2]);
	assert_false(es.contended[3]);
	assert_float_equal(es.usage[5], 120, 0);
	assert_float_equal(es.cpu_throttled_delta, 3, 0);
	assert_float_equal(es.cpu_throttled_us, 1500, 0);
	assert_true(isnan(es.cpu_total)); /* the caller's (fsd_cpu_total) */
	assert_float_equal(es.mem_high_events_delta, 2, 0);
	assert_float_equal(es.mem_max_events_delta, 1, 0);
	assert_float_equal(es.mem_refault_bytes, 4096, 0);
	assert_float_equal(es.psi_io, 12, 0);
	assert_true(isnan(es.psi_cpu));
	assert_float_equal(es.cpu_wait, 0.25, 0);
	/* dry-run or released: nothing we planned is in force */
	fsd_est_sample(&c->res, &s, contended, &prev, false, &es);
	assert_true(isinf(es.limit[2]));
	prev.write = false;
	fsd_est_sample(&c->res, &s, contended, &prev, true, &es);
	assert_true(isinf(es.limit[2]));
	fsd_est_sample(&c->res, &s, contended, NULL, true, &es);
	assert_true(isinf(es.limit[2]));
	free(c);
}

/* The tenants' CPU use together: present tenants only, not those on a new
 * baseline (their usage is no period's); NaN without a CPU resource. */
static void test_cpu_total(void **state)
{
	struct fs_conf *c = conf(1000000);
	struct fs_tenant_sample s[4];
	struct fs_resources none;

	(void)state;
	for (size_t i = 0; i < 4; i++)
		sample(&s[i]);
	s[1].cpu_cores = 0.25;
	s[2].present = false;
	s[3].reset = true;
	assert_float_equal(fsd_cpu_total(&c->res, 4, s), 1.75, 1e-12);
	s[1].cpu_cores = NAN; /* unknown counts as 0 */
	assert_float_equal(fsd_cpu_total(&c->res, 2, s), 1.5, 1e-12);
	assert_float_equal(fsd_cpu_total(&c->res, 0, s), 0, 0);
	memset(&none, 0, sizeof(none));
	assert_true(isnan(fsd_cpu_total(&none, 4, s)));
	free(c);
}

static void test_limits_one_io_line_per_disk(void **state)
{
	struct fs_conf *c = conf(1000000);
	struct plan_config pc;
	struct plan_tenant t;
	struct fs_limits l;

	(void)state;
	memset(&t, 0, sizeof(t));
	for (size_t r = 0; r < FS_MAX_RES; r++)
		t.io[r] = FS_VALUE_MAX;
	t.cpu_quota_usec = 50000;
	t.cpu_period_usec = 100000;
	t.cpu_weight = 300;
	t.io_weight = 200;
	t.mem_high = 1 << 30;
	t.mem_max = FS_VALUE_MAX;
	t.mem_low = 1 << 29;
	t.io[3] = 5 << 20; /* disk 0 writes */
	t.io[4] = 1 << 20; /* disk 1 reads */
	fsd_plan_config(c, NULL, &pc);
	fsd_limits(&pc, &t, &l);
	assert_int_equal(l.set, FS_LIM_CPU_MAX | FS_LIM_CPU_WEIGHT | FS_LIM_MEM_HIGH |
				    FS_LIM_MEM_MAX | FS_LIM_MEM_LOW | FS_LIM_IO_WEIGHT |
				    FS_LIM_IO_MAX);
	assert_int_equal(l.mem_low, 1 << 29);
	{
		/* no memory resource: memory.low is left alone */
		struct plan_config cpu_only;
		struct fs_limits l2;

		plan_config_default(&cpu_only);
		fs_resources_add(&cpu_only.res, FS_RES_CPU, NULL, 4, -1, (struct fs_devnum){0, 0});
		fsd_limits(&cpu_only, &t, &l2);
		assert_int_equal(l2.set & FS_LIM_MEM_LOW, 0);
	}
	assert_int_equal(l.cpu_quota_us, 50000);
	assert_int_equal(l.cpu_weight, 300);
	assert_int_equal(l.io_weight, 200);
	assert_int_equal(l.mem_high, 1 << 30);
	assert_true(l.mem_max == FS_VALUE_MAX);
	assert_int_equal(l.n_io, 2);
	assert_int_equal(l.io[0].dev.major, 8);
	assert_int_equal(l.io[0].dev.minor, 0);
	assert_true(l.io[0].rbps == FS_VALUE_MAX);
	assert_int_equal(l.io[0].wbps, 5 << 20);
	assert_true(l.io[0].riops == FS_VALUE_MAX && l.io[0].wiops == FS_VALUE_MAX);
	assert_int_equal(l.io[1].dev.minor, 16);
	assert_int_equal(l.io[1].rbps, 1 << 20);
	assert_true(l.io[1].wbps == FS_VALUE_MAX);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plan_config_maps_the_config),
	    cmocka_unit_test(test_settings_are_per_period),
	    cmocka_unit_test(test_usage_by_kind),
	    cmocka_unit_test(test_io_load),
	    cmocka_unit_test(test_shared_disk),
	    cmocka_unit_test(test_est_sample),
	    cmocka_unit_test(test_cpu_total),
	    cmocka_unit_test(test_limits_one_io_line_per_disk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
