/* SPDX-License-Identifier: MIT */
/* A shared disk budget as io.max values (agent/plan/io_split.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "io_split.h"

#define MB 1e6

static void test_read_share(void **state)
{
	(void)state;
	assert_true(plan_io_read_share(30 * MB, 40 * MB, 0.5) == 0.75);
	assert_true(plan_io_read_share(0, 40 * MB, 0.5) == 0);
	/* rounding in the sampler: never above 1 */
	assert_true(plan_io_read_share(40 * MB + 1, 40 * MB, 0.5) == 1);
	/* no use this period: the previous split stands, else an even one */
	assert_true(plan_io_read_share(0, 0, 0.9) == 0.9);
	assert_true(plan_io_read_share(NAN, 40 * MB, 0.9) == 0.9);
	assert_true(plan_io_read_share(0, 0, NAN) == 0.5);
	assert_true(plan_io_read_share(NAN, NAN, 7) == 0.5);
}

static void test_split(void **state)
{
	double out[2];

	(void)state;
	/* a pure reader keeps its whole limit for reads; the floor is extra */
	plan_io_split(50 * MB, 1.0, 0.1, out);
	assert_true(out[0] == 50 * MB);
	assert_true(fabs(out[1] - 5 * MB) < 1);
	/* a 60/40 mix, both above the floor: the limit exactly */
	plan_io_split(50 * MB, 0.6, 0.1, out);
	assert_true(fabs(out[0] - 30 * MB) < 1 && fabs(out[1] - 20 * MB) < 1);
	plan_io_split(INFINITY, 0.6, 0.1, out);
	assert_true(isinf(out[0]) && isinf(out[1]));
	/* no floor: a pure writer gets no reads */
	plan_io_split(50 * MB, 0.0, 0.0, out);
	assert_true(out[0] == 0 && out[1] == 50 * MB);
}

static double rnd(void)
{
	return (double)rand() / RAND_MAX;
}

/* Random limits, mixes and floors: the measured mix always fits (a tenant
 * using its limit in the same mix is not held by the split), each
 * direction gets at least the floor, and the sum exceeds the limit by at
 * most the floor. */
static void test_split_properties(void **state)
{
	(void)state;
	srand(14);
	for (int i = 0; i < 100000; i++) {
		double lim = 1e5 + rnd() * 1e9, s = rnd(), floor = rnd() * 0.5, out[2];

		if (i % 10 == 0)
			s = i % 20 ? 0.0 : 1.0;
		plan_io_split(lim, s, floor, out);
		assert_true(out[0] >= s * lim * (1 - 1e-12));
		assert_true(out[1] >= (1 - s) * lim * (1 - 1e-12));
		assert_true(out[0] >= floor * lim * (1 - 1e-12));
		assert_true(out[1] >= floor * lim * (1 - 1e-12));
		assert_true(out[0] + out[1] <= (1 + floor) * lim * (1 + 1e-12));
		if (s >= floor && 1 - s >= floor)
			assert_true(fabs(out[0] + out[1] - lim) <= 1e-9 * lim);
	}
}

/* A tenant that has only read starts writing: wants r and w with r + w
 * within its limit L. Each period it uses what the split allows, and the
 * next split follows that mix. Both directions come to run at what they
 * want (the floor lets the writes in; without it they would stay at 0):
 * at once when w is within the floor, else the gap to w shrinks by a
 * factor r / L per period or faster (slowest when r + w = L): 30 periods. */
static void test_split_follows_a_new_writer(void **state)
{
	(void)state;
	srand(5);
	for (int i = 0; i < 20000; i++) {
		double lim = 1e6 + rnd() * 1e9, want_w = rnd() * lim,
		       want_r = rnd() * (lim - want_w);
		double share = 1.0, use_r = 0, use_w = 0, out[2];

		for (int p = 0; p < 30; p++) {
			plan_io_split(lim, share, PLAN_IO_SPLIT_FLOOR, out);
			use_r = fmin(want_r, out[0]);
			use_w = fmin(want_w, out[1]);
			share = plan_io_read_share(use_r, use_r + use_w, share);
		}
		assert_true(use_r >= 0.99 * want_r);
		assert_true(use_w >= 0.99 * want_w);
	}
	{
		double out[2];

		plan_io_split(100 * MB, 1.0, 0.0, out);
		assert_true(fmin(50 * MB, out[1]) == 0); /* no floor: starved */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_share),
	    cmocka_unit_test(test_split),
	    cmocka_unit_test(test_split_properties),
	    cmocka_unit_test(test_split_follows_a_new_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
