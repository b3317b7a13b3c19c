/* SPDX-License-Identifier: MIT */
/* Demand estimator (agent/estimate.c): issue 3 "Estimate demand". */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "estimate.h"

#define GiB (1024.0 * 1024 * 1024)
#define MiB (1024.0 * 1024)

enum { CPU, MEM, RD, WR, NRES };

static void host(struct fs_resources *res)
{
	memset(res, 0, sizeof(*res));
	assert_int_equal(fs_resources_add(res, FS_RES_CPU, NULL, 8, -1, (struct fs_devnum){0, 0}),
			 CPU);
	assert_int_equal(
	    fs_resources_add(res, FS_RES_MEMORY, NULL, 32 * GiB, -1, (struct fs_devnum){0, 0}),
	    MEM);
	assert_int_equal(
	    fs_resources_add(res, FS_RES_IO_RBPS, NULL, 200 * MiB, 0, (struct fs_devnum){254, 0}),
	    RD);
	assert_int_equal(
	    fs_resources_add(res, FS_RES_IO_WBPS, NULL, 100 * MiB, 0, (struct fs_devnum){254, 0}),
	    WR);
}

static void busy_sample(struct est_sample *s)
{
	est_sample_init(s);
	s->usage[CPU] = 1.5;
	s->usage[MEM] = 2 * GiB;
	s->usage[RD] = 10 * MiB;
	s->usage[WR] = 5 * MiB;
}

/* The host, default config, an empty state and the busy sample. */
static void fresh(struct fs_resources *res, struct est_config *cfg, struct est_state *st,
		  struct est_sample *s)
{
	host(res);
	est_config_default(cfg);
	est_state_init(st);
	busy_sample(s);
}

static void assert_near(double a, double b)
{
	if (fabs(a - b) > 1e-9 * fmax(1, fabs(b)))
		fail_msg("%.12g != %.12g", a, b);
}

static void test_resources_names(void **unused)
{
	struct fs_resources res;

	(void)unused;
	host(&res);
	assert_string_equal(res.name[CPU], "cpu");
	assert_string_equal(res.name[MEM], "memory");
	assert_string_equal(res.name[RD], "io.254:0.rbps");
	assert_int_equal(res.disk[RD], 0);
	assert_int_equal(res.disk[CPU], -1);
	assert_int_equal(fs_resources_find(&res, FS_RES_IO_WBPS), WR);
	assert_int_equal(fs_resources_find(&res, FS_RES_NET), -1);
	assert_true(fs_resources_add(&res, FS_RES_NET, NULL, 0, -1, (struct fs_devnum){0, 0}) < 0);
	assert_true(fs_resources_add(&res, FS_RES_NET, NULL, NAN, -1, (struct fs_devnum){0, 0}) <
		    0);
}

/* Not held back: the estimate is exactly the usage. */
static void test_unheld_is_usage(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;
	char why[64];

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.psi_cpu = 3; /* below the 10 % threshold */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	for (int r = 0; r < NRES; r++) {
		assert_near(st.demand[r], s.usage[r]);
		assert_false(st.held[r]);
	}
	assert_near(est_probe(&st), 1);
	assert_int_equal(st.reasons, 0);
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "usage");
}

/* Throttled: probe x1.5 per period up to x4 on the held resource (cpu) only,
 * capped at capacity; memory and io stay at their use (estimate.h: scaling
 * them wasted what the planner handed out). */
static void test_throttled_probes_up_bounded(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;
	const double expect[] = {1.5, 2.25, 3.375, 4, 4, 4};
	char why[64];

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.cpu_throttled_delta = 7;
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		est_update(&res, &cfg, NULL, &st, &s, &st);
		assert_near(est_probe(&st), expect[i]);
		assert_true(st.held[CPU]);
		assert_false(st.held[MEM]);
		assert_int_equal(st.held_periods, i + 1);
		assert_near(st.demand[CPU], fmin(8, 1.5 * expect[i]));
		assert_near(st.probe_r[CPU], expect[i]);
		assert_near(st.probe_r[MEM] * st.probe_r[RD] * st.probe_r[WR], 1);
		assert_near(st.demand[MEM], 2 * GiB);
		assert_near(st.demand[RD], 10 * MiB);
		assert_near(st.demand[WR], 5 * MiB);
	}
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "cpu-throttled");

	/* A bigger tenant hits the capacity bound. */
	s.usage[CPU] = 6;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_near(st.demand[CPU], 8);
}

/* Released: the probe decays back to 1 and the demand back to usage. */
static void test_released_decays(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.mem_high_events_delta = 3;
	for (int i = 0; i < 5; i++)
		est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_near(est_probe(&st), 4);
	assert_true(st.held[MEM]);

	s.mem_high_events_delta = 0;
	double want = 4;
	for (int i = 0; i < 20 && want > 1; i++) {
		est_update(&res, &cfg, NULL, &st, &s, &st);
		want = 1 + (want - 1) * 0.5;
		if (want < 1 + EST_PROBE_EPS)
			want = 1;
		assert_near(est_probe(&st), want);
		/* memory was the held resource: its estimate decays with the probe */
		assert_near(st.demand[MEM], 2 * GiB * want);
		assert_near(st.demand[CPU], 1.5);
		assert_int_equal(st.held_periods, 0);
		assert_false(st.held[MEM]);
		assert_int_equal(!!(st.reasons & EST_DECAYING), want > 1);
	}
	assert_near(est_probe(&st), 1);
	for (int r = 0; r < NRES; r++)
		assert_near(st.demand[r], s.usage[r]);
	assert_int_equal(st.reasons, 0);
}

/* Held back again after a partial decay: probing restarts from where it is. */
static void test_reprobe_from_current(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.cpu_throttled_delta = 1;
	est_update(&res, &cfg, NULL, &st, &s, &st); /* 1.5 */
	est_update(&res, &cfg, NULL, &st, &s, &st); /* 2.25 */
	s.cpu_throttled_delta = 0;
	est_update(&res, &cfg, NULL, &st, &s, &st); /* 1.625 */
	assert_near(est_probe(&st), 1.625);
	s.cpu_throttled_delta = 1;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_near(est_probe(&st), 1.625 * 1.5);
	assert_int_equal(st.held_periods, 1);
}

/* Each resource has its own probe factor: cpu held once then released
 * decays while writes, held next, climb; both end at 1. */
static void test_probe_per_resource(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.cpu_throttled_delta = 1;
	est_update(&res, &cfg, NULL, &st, &s, &st); /* cpu 1.5 */
	s.cpu_throttled_delta = 0;
	s.limit[WR] = 5 * MiB;			    /* writes at their io.max */
	est_update(&res, &cfg, NULL, &st, &s, &st); /* cpu 1.25, wbps 1.5 */
	assert_true(st.held[WR] && !st.held[CPU]);
	assert_near(st.probe_r[CPU], 1.25);
	assert_near(st.probe_r[WR], 1.5);
	assert_near(st.probe_r[RD], 1);
	assert_near(est_probe(&st), 1.5);
	assert_near(st.demand[CPU], 1.5 * 1.25);
	assert_near(st.demand[WR], 5 * MiB * 1.5);
	assert_near(st.demand[RD], 10 * MiB);
	s.limit[WR] = INFINITY;
	for (int i = 0; i < 20 && est_probe(&st) > 1; i++)
		est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_near(est_probe(&st), 1);
	assert_near(st.probe_r[CPU], 1);
	assert_near(st.probe_r[WR], 1);
	assert_near(st.demand[CPU], 1.5);
	assert_near(st.demand[WR], 5 * MiB);
}

/*
 * A tenant the plan holds back demands each CPU and IO use at least at
 * usage / x of the previous plan, held or not: a disk-bound writer held to
 * 0.25 of its demand runs 0.25 of the CPU it needs (e2e-mix). The probe
 * may go further on a held one. Not with x unknown or 1, not when nothing
 * of ours holds it, never for memory.
 */
static void test_plan_anchors_demand(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st, first;
	struct est_sample s;

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.usage[CPU] = 0.1;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	first = st;
	s.limit[WR] = 5 * MiB; /* writes at their io.max */
	s.x = 0.25;
	est_update(&res, &cfg, NULL, &first, &s, &st);
	assert_true(st.held[WR] && !st.held[CPU]);
	assert_near(st.demand[CPU], 0.1 / 0.25);
	assert_near(st.demand[RD], 10 * MiB / 0.25);
	assert_near(st.demand[WR], 5 * MiB / 0.25); /* above probe_step */
	assert_near(st.demand[MEM], 2 * GiB);
	/* a probe past 1 / x goes further */
	s.x = 0.9;
	est_update(&res, &cfg, NULL, &first, &s, &st);
	assert_near(st.demand[WR], 5 * MiB * cfg.probe_step);
	assert_near(st.demand[CPU], 0.1 / 0.9);
	/* the CPU throttled by cpu.max, or the disk contended, hold it too */
	s.x = 0.25;
	s.limit[WR] = INFINITY;
	s.cpu_throttled_delta = 1;
	est_update(&res, &cfg, NULL, &first, &s, &st);
	assert_true(st.held[CPU]);
	assert_near(st.demand[CPU], 0.1 / 0.25);
	assert_near(st.demand[WR], 5 * MiB / 0.25);
	s.cpu_throttled_delta = 0;
	s.contended[WR] = true;
	est_update(&res, &cfg, NULL, &first, &s, &st);
	assert_true(st.held[WR]);
	assert_near(st.demand[CPU], 0.1 / 0.25);
	/* not anchored: x unknown or 1, or nothing holds it */
	for (int k = 0; k < 2; k++) {
		s.x = k ? 1 : NAN;
		est_update(&res, &cfg, NULL, &first, &s, &st);
		assert_near(st.demand[CPU], 0.1);
	}
	s.x = 0.25;
	s.contended[WR] = false;
	est_update(&res, &cfg, NULL, &first, &s, &st);
	assert_int_equal(st.reasons & EST_HELD_MASK, 0);
	assert_near(st.demand[CPU], 0.1);
}

/*
 * An estimate falls by at most the factor decay per period: a throttled
 * writer whose use reads 0 between blk-throttle bursts keeps most of its
 * estimate, and an idle tenant's estimate halves each period to the floor.
 */
static void test_estimate_falls_gradually(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.limit[WR] = 4 * MiB; /* a 1 MiB bio let through in a 0.25 s period */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	double w = st.demand[WR];
	assert_near(w, 5 * MiB * 1.5);
	memset(s.usage, 0, sizeof(s.usage)); /* no bio completes this period */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_near(st.demand[WR], w * 0.5);
	double c = st.demand[CPU];
	for (int i = 0; i < 40; i++) {
		est_update(&res, &cfg, NULL, &st, &s, &st);
		if (c * 0.5 > 8 * 1e-3) {
			c *= 0.5;
			assert_near(st.demand[CPU], c);
		}
	}
	assert_near(st.demand[CPU], 8 * 1e-3); /* floor_share * capacity */
}

/*
 * IO on a contended disk (estimate.h): a tenant that uses a busy disk is
 * held back there (the device serves the deepest queue), below an io.max of
 * ours too; a trivial user, or one on an idle disk, is not.
 */
static void test_io_contended(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;
	char why[64];

	(void)unused;
	host(&res);
	est_config_default(&cfg);
	est_state_init(&st);
	busy_sample(&s); /* writes 5 MiB/s of 100: >= 1 % */
	s.contended[WR] = true;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	assert_false(st.held[RD]); /* reads: not contended */
	assert_near(st.demand[WR], 5 * MiB * 1.5);
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "io-contended");

	est_state_init(&st);
	s.usage[WR] = 0.5 * MiB; /* 0.5 %: a logger, not a contender */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.held[WR]);

	est_state_init(&st);
	s.usage[WR] = 5 * MiB;
	s.limit[WR] = 20 * MiB; /* far below our limit: the deep queue still wins */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	assert_int_equal(st.reasons, EST_IO_CONTENDED);

	/* Allotted 20 MiB/s last period and using 5: its own pattern bounds it
	 * (a qd 1 reader's latency), not its share: no probe. At 0.8 of it,
	 * it is held again. */
	est_state_init(&st);
	s.alloc[WR] = 20 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.held[WR]);
	assert_near(st.demand[WR], 5 * MiB);
	s.usage[WR] = 16 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	s.usage[WR] = 5 * MiB;
	s.alloc[WR] = NAN;

	est_state_init(&st);
	s.contended[WR] = false; /* the same tenant on a disk with room to spare */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.held[WR]);
	assert_int_equal(st.reasons, 0);
}

/*
 * The follow grace (estimate.h): a tenant held on a contended disk stays held
 * for follow_grace periods while its use lags its allocation (the room made
 * for it arrives late), its probe growing; after the grace it is released,
 * and it is held again once it follows. A tenant that was not held gets no
 * grace.
 */
static void test_io_follow_grace(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;

	(void)unused;
	host(&res);
	est_config_default(&cfg);
	assert_int_equal(cfg.follow_grace, 2);
	est_state_init(&st);
	busy_sample(&s);
	s.contended[WR] = true;
	s.usage[WR] = 2 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st); /* no allocation yet: held */
	assert_true(st.held[WR]);
	assert_near(st.probe_r[WR], 1.5);

	/* Allotted 3 MiB/s (its 1.5x probe), still at 2: lags, within the grace. */
	s.alloc[WR] = 3 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	assert_int_equal(st.lag[WR], 1);
	assert_near(st.probe_r[WR], 2.25);
	s.alloc[WR] = 4.5 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	assert_int_equal(st.lag[WR], 2);
	assert_near(st.demand[WR], 2 * MiB * 3.375);

	/* A third lagging period: released, the probe decays. */
	s.alloc[WR] = 6.75 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.held[WR]);
	assert_int_equal(st.lag[WR], 0);
	assert_true(st.probe_r[WR] < 3.375);
	/* Still lagging and not held before: no grace. */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.held[WR]);

	/* It follows (the room reached it): held again, the lag starts over. */
	s.usage[WR] = 6 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	assert_int_equal(st.lag[WR], 0);

	/* Without a grace the first lagging period releases it. */
	cfg.follow_grace = 0;
	s.usage[WR] = 2 * MiB;
	s.alloc[WR] = 9 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.held[WR]);
}

/*
 * A stalled disk (estimate.h, contention.h): the estimate of that resource,
 * its probe, held flag and follow lag stay as they were, whatever the
 * period's use; the next period is judged as usual.
 */
static void test_io_stalled_keeps_estimate(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st, before;
	struct est_sample s;
	char why[64];

	(void)unused;
	host(&res);
	est_config_default(&cfg);
	est_state_init(&st);
	busy_sample(&s);
	s.contended[WR] = true;
	s.usage[WR] = 40 * MiB;
	s.limit[WR] = 40 * MiB; /* at our limit: held, probed */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	before = st;

	s.usage[WR] = 1 * MiB; /* the VM stopped: nearly nothing moved */
	s.stalled[WR] = true;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[WR]);
	assert_near(st.demand[WR], before.demand[WR]);
	assert_near(st.probe_r[WR], before.probe_r[WR]);
	assert_int_equal(st.lag[WR], before.lag[WR]);
	assert_true(st.reasons & EST_IO_STALLED);
	assert_non_null(strstr(est_reason_str(st.reasons, why, sizeof(why)), "io-stalled"));

	/* Not stalled (and the disk no longer contended): the same use lets
	 * the estimate fall, at most by half. */
	s.stalled[WR] = false;
	s.contended[WR] = false;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.held[WR]);
	assert_near(st.demand[WR], before.demand[WR] * cfg.decay);
}

/*
 * A gap in a held tenant's IO (estimate.h, EST_IO_GAP): the read rates a
 * qd 32 reader held to 10.4 MB/s by its io.max showed in e2e-disk b on a
 * busy host, in 0.5 s periods: 22, 22, 0, 26, 0, 0 MB/s (blk-throttle
 * dispatching its queue in bursts). Its estimate, probe, held flag and lag
 * stay through up to io_gap_max periods below the limit, its CPU stays
 * anchored at x; a fourth period below the limit is judged as usual.
 */
static void test_io_gap_keeps_estimate(void **unused)
{
	const double pattern[] = {22, 22, 0, 26, 0, 0, 22, 0, 0, 0, 21};
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st, held;
	struct est_sample s;
	char why[64];

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.contended[RD] = true;
	s.limit[RD] = 10.4 * MiB;
	s.x = 1.0 / 3;
	s.usage[CPU] = 0.1;
	s.usage[RD] = 22 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.held[RD]);
	assert_true(st.reasons & EST_IO_LIMIT);
	held = st;
	for (size_t i = 0; i < sizeof(pattern) / sizeof(pattern[0]); i++) {
		s.usage[RD] = pattern[i] * MiB;
		est_update(&res, &cfg, NULL, &st, &s, &st);
		assert_true(st.held[RD]);
		/* never below the first estimate: 22 MiB/s at x = 1/3, probed */
		assert_true(st.demand[RD] >= held.demand[RD]);
		/* the CPU use of a tenant its io.max holds is x of its need */
		assert_true(st.demand[CPU] >= 0.1 * 3 - 1e-9);
		if (pattern[i] > 0)
			continue;
		assert_true(st.reasons & EST_IO_GAP);
		assert_false(st.reasons & EST_IO_LIMIT);
		assert_non_null(strstr(est_reason_str(st.reasons, why, sizeof(why)), "io-gap"));
	}

	/* Below it for a fourth period in a row: judged as usual (0 use is
	 * not held; the estimate falls by half at most). */
	held = st;
	for (unsigned k = 1; k <= cfg.io_gap_max; k++) {
		s.usage[RD] = 0;
		est_update(&res, &cfg, NULL, &st, &s, &st);
		assert_int_equal(st.since_limit[RD], k);
		assert_near(st.demand[RD], held.demand[RD]);
	}
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.reasons & EST_IO_GAP);
	assert_false(st.held[RD]);
	assert_near(st.demand[RD], held.demand[RD] * cfg.decay);
}

/* A gap needs a contended disk, an io.max of ours in force, the tenant at
 * it lately, and io_gap_max > 0. */
static void test_io_gap_needs_all(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st, at;
	struct est_sample s, under;

	(void)unused;
	fresh(&res, &cfg, &st, &s);
	s.contended[RD] = true;
	s.limit[RD] = 10 * MiB;
	s.usage[RD] = 10 * MiB;
	est_update(&res, &cfg, NULL, &st, &s, &at);
	assert_int_equal(at.since_limit[RD], 0);
	under = s;
	under.usage[RD] = 1 * MiB;

	est_update(&res, &cfg, NULL, &at, &under, &st);
	assert_true(st.reasons & EST_IO_GAP);

	under.contended[RD] = false;
	est_update(&res, &cfg, NULL, &at, &under, &st);
	assert_false(st.reasons & EST_IO_GAP);
	assert_near(st.demand[RD], at.demand[RD] * cfg.decay);

	under.contended[RD] = true;
	under.limit[RD] = INFINITY; /* its limit lifted */
	est_update(&res, &cfg, NULL, &at, &under, &st);
	assert_false(st.reasons & EST_IO_GAP);

	under.limit[RD] = 10 * MiB;
	cfg.io_gap_max = 0;
	est_update(&res, &cfg, NULL, &at, &under, &st);
	assert_false(st.reasons & EST_IO_GAP);
	cfg.io_gap_max = 3;

	/* never at its limit: no gap (a tenant below its io.max is judged as
	 * usual) */
	est_state_init(&st);
	est_update(&res, &cfg, NULL, &st, &under, &st);
	est_update(&res, &cfg, NULL, &st, &under, &st);
	assert_false(st.reasons & EST_IO_GAP);
	assert_int_equal(st.since_limit[RD], UCHAR_MAX);
}

/* Each held-back signal flags its own resource. */
static void test_signals(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st, prev;
	struct est_sample s;
	char why[128];

	(void)unused;
	host(&res);
	est_config_default(&cfg);
	est_state_init(&prev);

	/* io at its io.max read limit (>= 95 %); write not at its limit. */
	busy_sample(&s);
	s.limit[RD] = 10.2 * MiB;
	s.limit[WR] = 50 * MiB;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_true(st.held[RD]);
	assert_false(st.held[WR]);
	assert_false(st.held[CPU]);
	assert_int_equal(st.reasons, EST_IO_LIMIT);

	/* below 95 % of the limit: not held */
	s.limit[RD] = 11 * MiB;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_int_equal(st.reasons, 0);

	/* PSI above the threshold, per resource; io PSI blames the io in use */
	busy_sample(&s);
	s.usage[WR] = 0;
	s.psi_cpu = 10.5;
	s.psi_mem = 10.0; /* not above */
	s.psi_io = 40;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_true(st.held[CPU]);
	assert_false(st.held[MEM]);
	assert_true(st.held[RD]);
	assert_false(st.held[WR]);
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "psi-cpu,psi-io");

	/* unknown PSI (NaN) and a disabled threshold never hold */
	busy_sample(&s);
	s.psi_mem = 99;
	cfg.psi_threshold = 0;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_int_equal(st.reasons, 0);
}

/* One core, the starved-host case (issue 14, e2e-disk at load 9+): two fio
 * readers used 0.33 and 0.32 core and showed 0.66 and 0.77 core of
 * runqueue wait. The tenants leave a third of the CPU unused, so the wait
 * is the host's or the kernel's, not contention among them: demand stays
 * usage, and the CPU is no bottleneck (sum of demands 0.65 < 1). The same
 * wait on a CPU they keep busy is contention and raises the demand; an
 * unknown total (NaN) keeps the rule as it was. PSI cpu is gated alike. */
static void test_cpu_wait_needs_busy_cpu(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state deep, shallow;
	struct est_sample s;
	const double use[2] = {0.332, 0.319}, wait[2] = {0.655, 0.766};
	struct est_state *st[2] = {&deep, &shallow};
	char why[64];

	(void)unused;
	memset(&res, 0, sizeof(res));
	assert_int_equal(fs_resources_add(&res, FS_RES_CPU, NULL, 1, -1, (struct fs_devnum){0, 0}),
			 0);
	est_config_default(&cfg);
	assert_near(cfg.cpu_busy, FS_RES_BUSY_SHARE);
	for (int i = 0; i < 2; i++) {
		est_state_init(st[i]);
		est_sample_init(&s);
		s.usage[0] = use[i];
		s.cpu_wait = wait[i];
		s.cpu_total = use[0] + use[1];
		est_update(&res, &cfg, NULL, st[i], &s, st[i]);
		assert_near(st[i]->demand[0], use[i]);
		assert_false(st[i]->held[0]);
		assert_string_equal(est_reason_str(st[i]->reasons, why, sizeof(why)), "usage");
	}
	assert_true(deep.demand[0] + shallow.demand[0] < cfg.cpu_busy);

	/* the tenants keep the core busy (at cpu_busy exactly, and above) */
	for (int k = 0; k < 3; k++) {
		const double total[3] = {0.85, 1.0, NAN};

		est_state_init(&deep);
		est_sample_init(&s);
		s.usage[0] = use[0];
		s.cpu_wait = wait[0];
		s.cpu_total = total[k];
		est_update(&res, &cfg, NULL, &deep, &s, &deep);
		assert_near(deep.demand[0], 0.987);
		assert_int_equal(deep.reasons, EST_CPU_WAIT);
	}

	/* PSI cpu (no wait measured) holds only on a busy CPU */
	est_state_init(&deep);
	est_sample_init(&s);
	s.usage[0] = use[0];
	s.psi_cpu = 60;
	s.cpu_total = 0.65;
	est_update(&res, &cfg, NULL, &deep, &s, &deep);
	assert_false(deep.held[0]);
	assert_int_equal(deep.reasons, 0);
	s.cpu_total = 0.95;
	est_update(&res, &cfg, NULL, &deep, &s, &deep);
	assert_true(deep.held[0]);
	assert_int_equal(deep.reasons, EST_PSI_CPU);
}

/* e2e-mix's disk-bound tenant, held to 0.035 core by a cpu.max with a 1 s
 * period and rewritten every half second: 0.137 core used, 1.21 cores of
 * wait, nr_throttled 0 (the period timer never found it throttled: each
 * write unthrottles), throttled_usec 400 ms. Throttled: held, the probe
 * raises the CPU demand (1.5 x usage), the wait (the time our limit held
 * it) does not (it made the demand 1.0 and took 0.14 core from the CPU-bound
 * tenant for a period). The same wait unthrottled on a busy CPU counts. */
static void test_cpu_wait_throttled_is_probed(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;
	char why[64];

	(void)unused;
	memset(&res, 0, sizeof(res));
	assert_int_equal(fs_resources_add(&res, FS_RES_CPU, NULL, 1, -1, (struct fs_devnum){0, 0}),
			 0);
	est_config_default(&cfg);
	for (int k = 0; k < 2; k++) {
		est_state_init(&st);
		est_sample_init(&s);
		s.usage[0] = 0.137;
		s.cpu_wait = 1.21;
		s.cpu_total = 0.99;
		if (k == 0)
			s.cpu_throttled_us = 400000;
		else
			s.cpu_throttled_delta = 1;
		est_update(&res, &cfg, NULL, &st, &s, &st);
		assert_true(st.held[0]);
		assert_near(st.demand[0], 1.5 * 0.137);
		assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "cpu-throttled");
	}
	/* throttled_usec unknown (NaN) or not grown: not throttled */
	est_state_init(&st);
	est_sample_init(&s);
	s.usage[0] = 0.137;
	s.cpu_wait = 1.21;
	s.cpu_total = 0.99;
	s.cpu_throttled_us = 0;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_false(st.held[0]);
	assert_near(st.demand[0], 1.0); /* 1.347 runnable, the capacity bounds it */
	assert_int_equal(st.reasons, EST_CPU_WAIT);
}

/*
 * The CPU trim (estimate.h), one rule per test. Its case: a writer at its
 * io.max (5 MiB/s) on a busy CPU (7 of 8 cores), held at x = TRIM_X,
 * throttled by cpu.max, its threads hardly waiting for the CPU.
 */
#define TRIM_X 0.3

/* The trim's tests: the estimator's inputs and state. */
struct trim_fx {
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;
};

/* The trim's case after one update (nothing to step from yet); the next
 * update is its first step. */
static void trim_enter(struct trim_fx *f)
{
	fresh(&f->res, &f->cfg, &f->st, &f->s);
	f->s.usage[CPU] = 0.1;
	f->s.limit[WR] = 5 * MiB;
	f->s.x = TRIM_X;
	f->s.cpu_throttled_delta = 1;
	f->s.cpu_wait = 0.01;
	f->s.cpu_total = 7;
	est_update(&f->res, &f->cfg, NULL, &f->st, &f->s, &f->st);
	assert_false(f->st.held[CPU]);
	assert_near(f->st.demand[CPU], 0.1 / TRIM_X);
}

/* One update at the cap of the estimate (use = x * demand), times k. */
static void trim_period(struct trim_fx *f, double k)
{
	f->s.usage[CPU] = TRIM_X * f->st.demand[CPU] * k;
	est_update(&f->res, &f->cfg, NULL, &f->st, &f->s, &f->st);
}

/* trim_enter and the first step: in the trim; its estimate. */
static double trim_first_step(struct trim_fx *f)
{
	trim_enter(f);
	trim_period(f, 1);
	assert_true(f->st.reasons & EST_CPU_TRIM);
	return f->st.demand[CPU];
}

/* Not held back by its CPU: its CPU demand steps down by trim_step every
 * trim_pace + 1 periods and stays there between steps, whatever its use (a
 * cpu.max write refills a whole quota: twice the cap after a step, half of
 * it when a refill lands late). */
static void test_cpu_trim_steps(void **unused)
{
	struct trim_fx f;
	char why[64];
	double d;

	(void)unused;
	trim_enter(&f);
	d = f.st.demand[CPU];
	for (unsigned p = 0; p < 3 * (f.cfg.trim_pace + 1); p++) {
		const unsigned k = p % (f.cfg.trim_pace + 1);

		trim_period(&f, k == 1 ? 2 : k == 3 ? 0.5 : 1);
		if (k == 0)
			d *= f.cfg.trim_step;
		assert_false(f.st.held[CPU]);
		assert_near(f.st.probe_r[CPU], 1);
		assert_near(f.st.demand[CPU], d);
		assert_string_equal(est_reason_str(f.st.reasons, why, sizeof(why)),
				    "io-limit,cpu-trim");
	}
}

/* A step whose cap bites (throttled, its threads now waiting): held on the
 * CPU, one step back up (not to its use over the cap), then trim_hold
 * periods without a step; a wait long after the step is noise, kept, and
 * a use below the cap does not take the estimate down. */
static void test_cpu_trim_bite_by_wait(void **unused)
{
	struct trim_fx f;
	double d;

	(void)unused;
	d = trim_first_step(&f);
	f.s.cpu_wait = 0.2;
	trim_period(&f, 2);
	d /= f.cfg.trim_step;
	assert_true(f.st.held[CPU]);
	assert_near(f.st.demand[CPU], d);
	assert_int_equal(f.st.trim_hold, f.cfg.trim_hold);
	for (unsigned p = 0; p < f.cfg.trim_hold; p++) {
		f.s.cpu_wait = p == 5 ? 0.3 : 0.01;
		trim_period(&f, p % 3 ? 2 : 0.3);
		assert_near(f.st.demand[CPU], d);
		assert_true(f.st.reasons & EST_CPU_TRIM);
	}
	f.s.cpu_wait = 0.01;
	trim_period(&f, 1);
	assert_near(f.st.demand[CPU], d * f.cfg.trim_step);
}

/* Its IO falling short of its io.max right after a step, its threads not
 * waiting, is a bite too (e2e-njc): one step back up. Still short, the
 * trim ends and the probe raises it; back at its limit, the hold outlasts
 * the trim: no step before it runs out. */
static void test_cpu_trim_bite_by_io(void **unused)
{
	struct trim_fx f;
	double d;

	(void)unused;
	d = trim_first_step(&f);
	f.s.usage[WR] = 4 * MiB;
	trim_period(&f, 1);
	assert_near(f.st.demand[CPU], d / f.cfg.trim_step);
	assert_int_equal(f.st.trim_hold, f.cfg.trim_hold);
	assert_true(f.st.reasons & EST_CPU_TRIM);
	trim_period(&f, 1);
	assert_int_equal(f.st.reasons & EST_CPU_TRIM, 0);
	assert_true(f.st.held[CPU]);
	f.s.usage[WR] = 5 * MiB;
	for (unsigned p = 0; p + 1 < f.cfg.trim_hold; p++) {
		d = f.st.demand[CPU];
		trim_period(&f, 1);
		assert_int_equal(f.st.reasons & EST_CPU_TRIM, 0);
		assert_near(f.st.demand[CPU], d);
	}
	trim_period(&f, 1);
	assert_true(f.st.reasons & EST_CPU_TRIM);
	assert_near(f.st.demand[CPU], d * f.cfg.trim_step);
}

/* In a hold (no step to blame), its IO short of the limit is no bite: the
 * trim ends and it is probed as before; nor is it trimmed on an idle CPU. */
static void test_cpu_trim_ends(void **unused)
{
	struct trim_fx f;
	struct est_state before;

	(void)unused;
	trim_first_step(&f);
	f.s.cpu_wait = 0.2;
	trim_period(&f, 1); /* a bite: the hold */
	assert_int_equal(f.st.trim_hold, f.cfg.trim_hold);
	f.s.cpu_wait = 0.01;
	trim_period(&f, 1);
	assert_true(f.st.reasons & EST_CPU_TRIM);
	before = f.st;
	for (int k = 0; k < 2; k++) {
		f.s.usage[WR] = k ? 5 * MiB : 2 * MiB;
		f.s.cpu_total = k ? 2 : 7;
		f.s.usage[CPU] = TRIM_X * before.demand[CPU] * 2;
		est_update(&f.res, &f.cfg, NULL, &before, &f.s, &f.st);
		assert_int_equal(f.st.reasons & EST_CPU_TRIM, 0);
		assert_true(f.st.demand[CPU] > before.demand[CPU]);
	}
}

/* The trim takes the estimate down to trim_floor of where it was before
 * it (trim_from), no lower; that base is kept through an end and a new
 * start below it, and forgotten once the estimate is back there.
 * Without the floor e2e-mix's writer was trimmed to a sixth of its
 * estimate and starved (estimate.h). */
static void test_cpu_trim_floor(void **unused)
{
	const double base = 0.1 / TRIM_X;
	struct trim_fx f;

	(void)unused;
	trim_first_step(&f);
	assert_near(f.st.trim_from, base);
	for (int p = 0; p < 40; p++)
		trim_period(&f, 1);
	assert_true(f.st.reasons & EST_CPU_TRIM);
	assert_near(f.st.demand[CPU], base * f.cfg.trim_floor);
	/* its IO below its io.max, not throttled: the trim ends, the
	 * estimate falls (by half at most), the base stays */
	f.s.usage[WR] = 2 * MiB;
	f.s.cpu_throttled_delta = 0;
	trim_period(&f, 1);
	assert_int_equal(f.st.reasons & EST_CPU_TRIM, 0);
	assert_near(f.st.demand[CPU], base * f.cfg.trim_floor * f.cfg.decay);
	assert_near(f.st.trim_from, base);
	/* at its io.max again: a new trim, from the same base */
	f.s.usage[WR] = 5 * MiB;
	f.s.cpu_throttled_delta = 1;
	for (int p = 0; p < 12; p++) {
		trim_period(&f, 1);
		assert_true(f.st.demand[CPU] >= base * f.cfg.trim_floor * (1 - 1e-9));
	}
	assert_true(f.st.reasons & EST_CPU_TRIM);
	assert_near(f.st.trim_from, base);
	/* its IO free, throttled: probed back up past the base, which goes */
	f.s.usage[WR] = 2 * MiB;
	for (int p = 0; p < 6 && f.st.demand[CPU] < base; p++)
		trim_period(&f, 1);
	assert_true(f.st.demand[CPU] >= base);
	assert_int_equal(f.st.reasons & EST_CPU_TRIM, 0);
	assert_near(f.st.trim_from, 0);
}

/* Unknown wait (cgroupfs), a thread that waits, or trim_step 1 (off):
 * never trimmed, probed as before. */
static void test_cpu_trim_never(void **unused)
{
	struct trim_fx f;

	(void)unused;
	for (int k = 0; k < 3; k++) {
		trim_enter(&f);
		est_state_init(&f.st);
		f.s.cpu_wait = k == 0 ? NAN : k == 1 ? 0.8 : 0.01;
		if (k == 2)
			f.cfg.trim_step = 1;
		est_update(&f.res, &f.cfg, NULL, &f.st, &f.s, &f.st);
		est_update(&f.res, &f.cfg, NULL, &f.st, &f.s, &f.st);
		assert_true(f.st.held[CPU]);
		assert_int_equal(f.st.reasons & EST_CPU_TRIM, 0);
		assert_near(f.st.demand[CPU], 0.1 / TRIM_X);
	}
}

/* Not throttled, its use is its own: a step goes down to its use when
 * lower (use / x), by half at most; between steps it is kept all the same. */
static void test_cpu_trim_step_to_use(void **unused)
{
	struct trim_fx f;
	double d;

	(void)unused;
	trim_first_step(&f);
	f.cfg.trim_floor = 0.1; /* below the steps here (test_cpu_trim_floor) */
	f.s.cpu_throttled_delta = 0;
	for (int k = 0; k < 2; k++) {
		d = f.st.demand[CPU];
		for (unsigned p = 0; p < f.cfg.trim_pace; p++) {
			f.s.usage[CPU] = 0.01;
			est_update(&f.res, &f.cfg, NULL, &f.st, &f.s, &f.st);
			assert_near(f.st.demand[CPU], d);
		}
		/* 0.7 of the estimate, then 0.1 (half at most) */
		trim_period(&f, k ? 0.1 : 0.7);
		assert_near(f.st.demand[CPU], d * (k ? f.cfg.decay : 0.7));
	}
}

/* A stalled disk keeps the trim and its estimate, throttled and waiting or
 * not, the CPU busy or not (all wait for the disk); the bite is looked for
 * after it. */
static void test_cpu_trim_stall(void **unused)
{
	struct trim_fx f;
	double d;

	(void)unused;
	d = trim_first_step(&f);
	f.s.stalled[WR] = true;
	f.s.cpu_total = 2;
	f.s.cpu_wait = 0.5;
	f.s.usage[WR] = 0;
	f.s.usage[CPU] = 0.001;
	est_update(&f.res, &f.cfg, NULL, &f.st, &f.s, &f.st);
	assert_true(f.st.reasons & EST_CPU_TRIM);
	assert_near(f.st.demand[CPU], d);
	f.s.stalled[WR] = false;
	f.s.cpu_total = 7;
	f.s.usage[WR] = 5 * MiB;
	trim_period(&f, 1);
	assert_near(f.st.demand[CPU], d / f.cfg.trim_step);
}

/* Memory is held back by pressure, never by usage: memory.events high or
 * max, refaults of at least refault_share of its usage in the period, PSI.
 * Held, its memory demand is probed above its usage (usage cannot exceed
 * what it was given, so usage alone would never show the shortage). */
static void test_memory_pressure(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st, prev;
	struct est_sample s;
	char why[128];

	(void)unused;
	fresh(&res, &cfg, &prev, &s);

	/* plain usage, even near capacity, holds nothing back */
	s.usage[MEM] = 31 * GiB;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_int_equal(st.reasons, 0);
	assert_near(st.demand[MEM], 31 * GiB);

	/* memory.max events */
	busy_sample(&s);
	s.mem_max_events_delta = 2;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_true(st.held[MEM]);
	assert_false(st.held[CPU]);
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "memory-max");
	assert_near(st.demand[MEM], 2 * GiB * cfg.probe_step);

	/* refaults: 1 % of 2 GiB in the period holds, just below does not */
	busy_sample(&s);
	s.mem_refault_bytes = 0.01 * 2 * GiB;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_true(st.held[MEM]);
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "memory-refault");
	s.mem_refault_bytes = 0.0099 * 2 * GiB;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_false(st.held[MEM]);
	assert_int_equal(st.reasons, 0);
	/* unknown refaults (NaN, an old kernel) and a disabled share never hold */
	s.mem_refault_bytes = NAN;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_int_equal(st.reasons, 0);
	s.mem_refault_bytes = 1 * GiB;
	cfg.refault_share = 0;
	est_update(&res, &cfg, NULL, &prev, &s, &st);
	assert_int_equal(st.reasons, 0);
	est_config_default(&cfg);

	/* all signals at once, probed up over periods, bounded by capacity */
	busy_sample(&s);
	s.usage[MEM] = 20 * GiB;
	s.mem_high_events_delta = 5;
	s.mem_max_events_delta = 1;
	s.mem_refault_bytes = 1 * GiB;
	s.psi_mem = 50;
	st = prev;
	for (int i = 0; i < 6; i++)
		est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)),
			    "memory-high,psi-memory,memory-max,memory-refault");
	assert_near(st.demand[MEM], 32 * GiB);
	assert_near(st.demand[CPU], 1.5); /* the other resources stay at usage */
}

/* A declared demand overrides that resource's estimate (even while
 * probing); undeclared resources are still estimated. */
static void test_declared_overrides(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;
	double declared[FS_MAX_RES];
	char why[64];

	(void)unused;
	host(&res);
	est_config_default(&cfg);
	est_state_init(&st);
	for (int r = 0; r < FS_MAX_RES; r++)
		declared[r] = NAN;
	declared[MEM] = 4 * GiB;
	declared[WR] = 0; /* declared "no writes": floored, not estimated */
	busy_sample(&s);
	s.cpu_throttled_delta = 1;
	est_update(&res, &cfg, declared, &st, &s, &st);
	assert_near(st.demand[MEM], 4 * GiB);
	assert_near(st.demand[CPU], 1.5 * 1.5);
	assert_near(st.demand[RD], 10 * MiB); /* not held: its use */
	assert_near(st.demand[WR], cfg.floor_share * 100 * MiB);
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "cpu-throttled,declared");

	/* declared beyond capacity is capped to the host */
	declared[CPU] = 64;
	est_update(&res, &cfg, declared, &st, &s, &st);
	assert_near(st.demand[CPU], 8);
}

/* An idle tenant keeps a small positive demand on every resource. */
static void test_idle_floor(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state st;
	struct est_sample s;

	(void)unused;
	host(&res);
	est_config_default(&cfg);
	est_state_init(&st);
	est_sample_init(&s);
	s.usage[CPU] = NAN; /* a broken sample must not poison the estimate */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	for (int r = 0; r < NRES; r++)
		assert_near(st.demand[r], 1e-3 * res.capacity[r]);
}

/* Pure: the same inputs give the same output, prev is not modified. */
static void test_pure(void **unused)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_state prev, a, b, copy;
	struct est_sample s;

	(void)unused;
	host(&res);
	est_config_default(&cfg);
	est_state_init(&prev);
	busy_sample(&s);
	s.cpu_throttled_delta = 1;
	est_update(&res, &cfg, NULL, &prev, &s, &prev);
	copy = prev;
	est_update(&res, &cfg, NULL, &prev, &s, &a);
	est_update(&res, &cfg, NULL, &prev, &s, &b);
	assert_memory_equal(&prev, &copy, sizeof(prev));
	assert_memory_equal(&a, &b, sizeof(a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resources_names),
	    cmocka_unit_test(test_unheld_is_usage),
	    cmocka_unit_test(test_throttled_probes_up_bounded),
	    cmocka_unit_test(test_released_decays),
	    cmocka_unit_test(test_reprobe_from_current),
	    cmocka_unit_test(test_probe_per_resource),
	    cmocka_unit_test(test_plan_anchors_demand),
	    cmocka_unit_test(test_estimate_falls_gradually),
	    cmocka_unit_test(test_io_contended),
	    cmocka_unit_test(test_io_follow_grace),
	    cmocka_unit_test(test_io_stalled_keeps_estimate),
	    cmocka_unit_test(test_io_gap_keeps_estimate),
	    cmocka_unit_test(test_io_gap_needs_all),
	    cmocka_unit_test(test_signals),
	    cmocka_unit_test(test_cpu_wait_needs_busy_cpu),
	    cmocka_unit_test(test_cpu_wait_throttled_is_probed),
	    cmocka_unit_test(test_cpu_trim_steps),
	    cmocka_unit_test(test_cpu_trim_bite_by_wait),
	    cmocka_unit_test(test_cpu_trim_bite_by_io),
	    cmocka_unit_test(test_cpu_trim_ends),
	    cmocka_unit_test(test_cpu_trim_never),
	    cmocka_unit_test(test_cpu_trim_step_to_use),
	    cmocka_unit_test(test_cpu_trim_floor),
	    cmocka_unit_test(test_cpu_trim_stall),
	    cmocka_unit_test(test_memory_pressure),
	    cmocka_unit_test(test_declared_overrides),
	    cmocka_unit_test(test_idle_floor),
	    cmocka_unit_test(test_pure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
