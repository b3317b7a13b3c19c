/* SPDX-License-Identifier: MIT */
/* Disk contention and delivered capacity (agent/estimate/contention.h), and
 * the disk counters it is fed from (agent/sample/sample_disk.h). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "contention.h"
#include "sample_disk.h"

#define MB 1e6

/* cpu, then disk 0 reads and writes at 100 MB/s each. */
static void resources(struct fs_resources *res)
{
	memset(res, 0, sizeof(*res));
	assert_int_equal(fs_resources_add(res, FS_RES_CPU, NULL, 2, -1, (struct fs_devnum){0, 0}),
			 0);
	assert_int_equal(fs_resources_add(res, FS_RES_IO_RBPS, "io.d.rbps", 100 * MB, 0,
					  (struct fs_devnum){254, 0}),
			 1);
	assert_int_equal(fs_resources_add(res, FS_RES_IO_WBPS, "io.d.wbps", 100 * MB, 0,
					  (struct fs_devnum){254, 0}),
			 2);
}

/* The resources above, default settings, no contention yet. */
static void fresh(struct fs_resources *res, struct ct_config *cfg, struct ct_state *s)
{
	resources(res);
	ct_config_default(cfg);
	ct_state_init(s);
}

static void step(const struct fs_resources *res, const struct ct_config *cfg, struct ct_state *s,
		 double queue, double total, unsigned users, bool binding)
{
	struct ct_input in;

	ct_input_init(&in);
	in.queue[0] = queue;
	in.total[1] = total;
	in.users[1] = users;
	in.binding[1] = binding;
	ct_update(res, cfg, &in, s, s);
}

/* A deep queue with two users is contention although the use is far below
 * the declared capacity (the busy-host case of issue 14). */
static void test_queue_means_contended(void **state)
{
	struct fs_resources res;
	struct ct_config cfg;
	struct ct_state s;

	(void)state;
	fresh(&res, &cfg, &s);
	step(&res, &cfg, &s, 6.3, 35 * MB, 2, false);
	assert_true(s.contended[1]);
	assert_false(s.contended[2]);			/* nobody writes */
	assert_false(s.contended[0]);			/* cpu is not a disk */
	assert_float_equal(s.capacity[1], 100 * MB, 1); /* entry: declared */
	assert_float_equal(s.capacity[2], 100 * MB, 1);
	assert_float_equal(s.capacity[0], 2, 0);
	/* unlimited and queueing: the capacity follows what is delivered */
	for (int i = 0; i < 40; i++)
		step(&res, &cfg, &s, 6.3, 35 * MB, 2, false);
	assert_float_equal(s.capacity[1], 35 * MB, 0.1 * MB);
}

/* One user: nobody to be fair to, whatever the queue. Unknown queue: the
 * busy share of the declared capacity decides, as before. */
static void test_one_user_or_unknown_queue(void **state)
{
	struct fs_resources res;
	struct ct_config cfg;
	struct ct_state s;

	(void)state;
	fresh(&res, &cfg, &s);
	step(&res, &cfg, &s, 30, 90 * MB, 1, false);
	assert_false(s.contended[1]);
	assert_float_equal(s.capacity[1], 100 * MB, 0);
	step(&res, &cfg, &s, NAN, 80 * MB, 2, false);
	assert_false(s.contended[1]);
	step(&res, &cfg, &s, NAN, 86 * MB, 2, false);
	assert_true(s.contended[1]);
	assert_true(s.loaded[1]);
}

/* Hysteresis: while a limit of ours binds, the disk stays contended with a
 * short queue and a use far below capacity (no limit/lift cycle); it ends
 * after `hold` calm periods. */
static void test_binding_holds_contention(void **state)
{
	struct fs_resources res;
	struct ct_config cfg;
	struct ct_state s;

	(void)state;
	fresh(&res, &cfg, &s);
	step(&res, &cfg, &s, 8, 40 * MB, 2, false);
	for (int i = 0; i < 50; i++) {
		step(&res, &cfg, &s, 1.2, 30 * MB, 2, true);
		assert_true(s.contended[1]);
		assert_false(s.loaded[1]);
	}
	for (unsigned i = 1; i < cfg.hold; i++) {
		step(&res, &cfg, &s, 0.5, 30 * MB, 2, false);
		assert_true(s.contended[1]);
		assert_int_equal(s.calm[1], i);
	}
	step(&res, &cfg, &s, 0.5, 30 * MB, 2, false);
	assert_false(s.contended[1]);
	assert_float_equal(s.capacity[1], 100 * MB, 0);
}

/* A period in which fewer than two tenants use a contended disk (a busy
 * host stalled the VM) is calm, not the end: the disk stays contended for
 * `hold` periods, its capacity unchanged, and ends then if nothing else
 * holds it. A disk that was not contended does not become so. */
static void test_stall_is_calm(void **state)
{
	struct fs_resources res;
	struct ct_config cfg;
	struct ct_state s;
	double cap;

	(void)state;
	fresh(&res, &cfg, &s);
	step(&res, &cfg, &s, 8, 40 * MB, 2, false);
	step(&res, &cfg, &s, 8, 40 * MB, 2, true);
	assert_true(s.contended[1]);
	cap = s.capacity[1];
	step(&res, &cfg, &s, 30, 0.5 * MB, 1, true); /* one user, deep queue, binding */
	assert_true(s.contended[1]);
	assert_false(s.loaded[1]);
	assert_int_equal(s.calm[1], 1);
	assert_float_equal(s.capacity[1], cap, 1);
	step(&res, &cfg, &s, 8, 40 * MB, 2, true); /* back: as before */
	assert_true(s.contended[1]);
	assert_int_equal(s.calm[1], 0);
	for (unsigned i = 1; i < cfg.hold; i++) {
		step(&res, &cfg, &s, 30, 90 * MB, 1, true);
		assert_true(s.contended[1]);
	}
	step(&res, &cfg, &s, 30, 90 * MB, 1, true);
	assert_false(s.contended[1]); /* the other has left */
	assert_float_equal(s.capacity[1], 100 * MB, 0);
	step(&res, &cfg, &s, 30, 90 * MB, 1, true);
	assert_false(s.contended[1]);
}

/* Stalled (contention.h): a contended disk whose users together use less
 * than stall_share of its capacity, for at most stall_max periods in a row;
 * a disk that was not contended before never stalls. */
static void test_stalled(void **state)
{
	struct fs_resources res;
	struct ct_config cfg;
	struct ct_state s;

	(void)state;
	fresh(&res, &cfg, &s);
	assert_float_equal(cfg.stall_share, 0.5, 0);
	assert_int_equal(cfg.stall_max, 2);
	step(&res, &cfg, &s, NAN, 10 * MB, 2, false); /* not contended */
	assert_false(ct_stalled(&cfg, &s, 1));
	step(&res, &cfg, &s, 8, 90 * MB, 2, false); /* contended from here */
	assert_false(ct_stalled(&cfg, &s, 1));
	step(&res, &cfg, &s, 8, 55 * MB, 2, false); /* 55 of 97.5: not below half */
	assert_false(ct_stalled(&cfg, &s, 1));
	step(&res, &cfg, &s, 8, 20 * MB, 2, false);
	assert_true(ct_stalled(&cfg, &s, 1));
	assert_false(ct_stalled(&cfg, &s, 2)); /* nobody writes: never contended */
	assert_false(ct_stalled(&cfg, &s, 0));
	step(&res, &cfg, &s, 8, 1 * MB, 0, false);
	assert_true(ct_stalled(&cfg, &s, 1));
	step(&res, &cfg, &s, 8, 1 * MB, 0, false); /* a third period: not a stall */
	assert_false(ct_stalled(&cfg, &s, 1));
	assert_int_equal(s.stalled[1], 3);
	step(&res, &cfg, &s, 8, 1 * MB, 0, false);
	assert_false(ct_stalled(&cfg, &s, 1));
	step(&res, &cfg, &s, 8, 80 * MB, 2, false); /* the run ends */
	assert_int_equal(s.stalled[1], 0);
	step(&res, &cfg, &s, 8, 5 * MB, 2, false); /* and a new one starts */
	assert_true(ct_stalled(&cfg, &s, 1));
}

/* While our limits bind, the capacity does not follow a total that falls
 * short of it (a latency-bound tenant would take everyone's limits down);
 * when all of it is used it grows, up to the declared capacity. */
static void test_capacity_under_binding_limits(void **state)
{
	struct fs_resources res;
	struct ct_config cfg;
	struct ct_state s;
	double c;

	(void)state;
	fresh(&res, &cfg, &s);
	step(&res, &cfg, &s, 8, 40 * MB, 2, false);
	for (int i = 0; i < 60; i++)
		step(&res, &cfg, &s, 8, 40 * MB, 2, false);
	c = s.capacity[1];
	assert_float_equal(c, 40 * MB, 0.1 * MB);
	for (int i = 0; i < 30; i++)
		step(&res, &cfg, &s, 3, 25 * MB, 2, true);
	assert_float_equal(s.capacity[1], c, 0); /* held, not 25 */
	step(&res, &cfg, &s, 3, 0.96 * c, 2, true);
	assert_float_equal(s.capacity[1], c * cfg.grow, 1);
	for (int i = 0; i < 200; i++)
		step(&res, &cfg, &s, 1, 0.99 * s.capacity[1], 2, true);
	assert_float_equal(s.capacity[1], 100 * MB, 0); /* never above declared */
	/* never below the floor */
	for (int i = 0; i < 200; i++)
		step(&res, &cfg, &s, 9, 0.1 * MB, 2, false);
	assert_true(s.contended[1]);
	assert_float_equal(s.capacity[1], cfg.floor_share * 100 * MB, 1);
}

/* A disk that is not the bottleneck (e2e-mix): our limits allow its users
 * less than the capacity estimate because another resource binds them, and
 * they use all of it. The estimate grows back towards the declared capacity
 * (it was taken down by one low period); users that do not use what they
 * are allowed (a latency-bound reader) do not grow it. */
static void test_capacity_grows_when_limits_allow_less(void **state)
{
	struct fs_resources res;
	struct ct_config cfg;
	struct ct_state s;
	struct ct_input in;
	double c;

	(void)state;
	fresh(&res, &cfg, &s);
	step(&res, &cfg, &s, 12, 18.8 * MB, 2, false); /* entry: declared */
	step(&res, &cfg, &s, 12, 18.8 * MB, 2, false); /* followed down */
	c = s.capacity[1];
	assert_true(c < 90 * MB);
	ct_input_init(&in);
	in.queue[0] = 3;
	in.total[1] = 0.97 * 0.6 * c;
	in.users[1] = 2;
	in.binding[1] = true;
	in.allowed[1] = 0.6 * c;
	ct_update(&res, &cfg, &in, &s, &s);
	assert_float_equal(s.capacity[1], c * cfg.grow, 1);
	in.total[1] = 0.5 * 0.6 * c; /* a user lags its limit: held */
	ct_update(&res, &cfg, &in, &s, &s);
	assert_float_equal(s.capacity[1], c * cfg.grow, 1);
	in.total[1] = 0.97 * 0.6 * c;
	for (int i = 0; i < 100; i++)
		ct_update(&res, &cfg, &in, &s, &s);
	assert_float_equal(s.capacity[1], 100 * MB, 0); /* never above declared */
	in.allowed[1] = INFINITY;			/* a user without a limit: as before */
	s.capacity[1] = c;
	ct_update(&res, &cfg, &in, &s, &s);
	assert_float_equal(s.capacity[1], c, 0);
}

/* Property sweep: whatever the inputs, the capacity stays within [floor,
 * declared] and an uncontended resource has its declared capacity. */
static void test_capacity_bounds_sweep(void **state)
{
	struct fs_resources res;
	struct ct_config cfg;
	struct ct_state s;
	unsigned seed = 7;

	(void)state;
	fresh(&res, &cfg, &s);
	for (int i = 0; i < 20000; i++) {
		double q = (rand_r(&seed) % 100) / 10.0, tot = (rand_r(&seed) % 1200) * 0.1 * MB;

		step(&res, &cfg, &s, rand_r(&seed) % 7 ? q : NAN, tot, rand_r(&seed) % 4,
		     rand_r(&seed) % 2);
		assert_true(s.capacity[1] >= cfg.floor_share * 100 * MB - 1);
		assert_true(s.capacity[1] <= 100 * MB + 1);
		if (!s.contended[1])
			assert_float_equal(s.capacity[1], 100 * MB, 0);
	}
}

/* The block stat file: 11, 15 and 17 fields; malformed text refused. */
static void test_parse_diskstat(void **state)
{
	struct fs_disk_counters c, c2;
	struct fs_disk_sample ds;

	(void)state;
	assert_int_equal(
	    fs_parse_diskstat("    1200       3    96000     4500      800        0    "
			      "51200     2000        2     6100    12900        0        "
			      "0        0        0       10       20\n",
			      &c),
	    0);
	assert_int_equal(c.rd_sectors, 96000);
	assert_int_equal(c.wr_sectors, 51200);
	assert_int_equal(c.in_flight, 2);
	assert_int_equal(c.io_ticks_ms, 6100);
	assert_int_equal(c.time_in_queue_ms, 12900);
	assert_int_equal(fs_parse_diskstat("1 2 3 4 5 6 7 8 9 10 11", &c2), 0);
	assert_int_equal(c2.time_in_queue_ms, 11);
	assert_int_equal(fs_parse_diskstat("1 2 3 4 5 6 7 8 9 10", &c2), -EINVAL);
	assert_int_equal(fs_parse_diskstat("", &c2), -EINVAL);
	assert_int_equal(fs_parse_diskstat("1 2 3 x 5 6 7 8 9 10 11", &c2), -EINVAL);

	/* 500 ms later: 3000 ms of requests in flight, 450 ms busy */
	c2 = c;
	c2.time_in_queue_ms += 3000;
	c2.io_ticks_ms += 450;
	fs_disk_sample_delta(&c, &c2, 500000, &ds);
	assert_float_equal(ds.queue, 6.0, 1e-9);
	assert_float_equal(ds.util, 0.9, 1e-9);
	fs_disk_sample_delta(&c2, &c, 500000, &ds); /* went back: unknown */
	assert_true(isnan(ds.queue));
	fs_disk_sample_delta(&c, &c2, 0, &ds);
	assert_true(isnan(ds.util));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_queue_means_contended),
	    cmocka_unit_test(test_one_user_or_unknown_queue),
	    cmocka_unit_test(test_binding_holds_contention),
	    cmocka_unit_test(test_stall_is_calm),
	    cmocka_unit_test(test_stalled),
	    cmocka_unit_test(test_capacity_under_binding_limits),
	    cmocka_unit_test(test_capacity_grows_when_limits_allow_less),
	    cmocka_unit_test(test_capacity_bounds_sweep),
	    cmocka_unit_test(test_parse_diskstat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
