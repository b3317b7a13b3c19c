/* SPDX-License-Identifier: MIT */
/*
 * Disk contention and the capacity a disk delivers now: (previous state,
 * this period's measurements, config) -> state. Pure: no I/O, no globals.
 *
 * Why (issue 14): a disk's declared capacity is what it delivers at best.
 * Small random IO, or a VM on a busy host, gets far less, and then the sum
 * of the tenants' use never reaches the declared number although the disk
 * serves whoever queues deepest (a qd 32 reader took 80 % next to a qd 1
 * one at 35 MB/s on a disk declared at 100 MB/s, and nothing was limited).
 * And once our limits hold the deep reader back, the use falls below the
 * busy share again, the disk looked free, the limits were lifted and the
 * deep reader took the disk back: a 3-5 s cycle.
 *
 * Rules, per io resource r (rbps, wbps, riops or wiops of one disk):
 *  - Users: tenants whose use of r is at least user_share of its declared
 *    capacity. With fewer than two there is nobody to be fair to: a disk
 *    that is not contended stays so, capacity = declared. A contended one
 *    counts the period as calm (below): a busy host stalls the VM, and with
 *    it every tenant's IO, for a period now and then (e2e-disk c: the
 *    reader and the writer moved 512 KiB together in one period), and
 *    ending contention there lifted the limits for the deep reader to take
 *    the disk a period later, and re-imposed them: a lift cycle. A tenant
 *    that has really left is granted its whole demand by the planner, and
 *    its io.max lifted, meanwhile.
 *  - Loaded: the disk's mean queue (requests in flight, from its own
 *    counters; NaN = unknown) is at least queue_min: requests wait at the
 *    device, which is then serving as fast as it can; or the users together
 *    use at least `busy` of the declared capacity (the only signal when the
 *    queue is unknown).
 *  - Contended from the first loaded period with two users. It stays
 *    contended while loaded or while a limit of ours binds (some tenant's
 *    use is at its io.max: our limits hold the use below capacity, which is
 *    the point, not a sign that the contention ended), and ends after `hold`
 *    periods in a row with neither.
 *  - The capacity the allocation shares out while contended (the declared
 *    one otherwise): on entry the declared one (one period's total is
 *    too noisy to start from: 6.7 MB/s was seen at entry on a disk that
 *    delivered 35, and the limits stayed that low). Then:
 *      - a total above it raises it by `follow` of the difference (an
 *        average: per-period totals are bursty under blk-throttle);
 *      - a limit binds and the users used at least used_share of it, or of
 *        what our limits allowed them together where that is less: all
 *        that was allowed was used, so it grows by `grow` (work
 *        conservation: the limits rise until the device delivers no more).
 *        The second case is a disk that is not the bottleneck: the plan
 *        shares out less than the capacity because another resource binds
 *        its users (e2e-mix: CPU held the disk users to 17.5 of a capacity
 *        estimate of 27.2 MB/s, taken down from 33.5 by a start-up period
 *        that measured 18.8). The estimate could then never come back up,
 *        and it is the denominator of each user's share of the disk: the
 *        disk-bound tenant got 0.26 of the disk for a target of 0.32;
 *      - a deep queue and no limit of ours binding: the device delivers less
 *        now (smaller IO, a busier host), so it follows the total down;
 *      - otherwise it holds. In particular it does not follow the total
 *        down while our limits bind: a tenant that cannot reach its share
 *        (a qd 1 reader bound by latency) then takes the others' limits
 *        down with it, period after period. Measured: a disk delivering
 *        40 MB/s was shared out at 9 MB/s after 30 periods.
 *    Never above the declared capacity, never below floor_share of it.
 *  - Stalled: a disk contended since an earlier period whose users together
 *    used less than stall_share of the capacity it shares out, for at most
 *    stall_max periods in a row. On a busy host the VM stops now and then
 *    and every tenant's IO with it; one such period halved both demand
 *    estimates of the demo's disk part (each falls by at most half per
 *    period), both fit the disk, both limits were lifted, and the deep
 *    reader took the disk for 7 periods (issue 20: 68/32 for a plan of
 *    50/50). A stalled period says nothing about anyone's demand there:
 *    the estimator keeps its estimates of that resource (estimate.h).
 *    Bounded, so that a tenant that really left does not freeze the others'
 *    estimates for long.
 */
#ifndef FAIRSHARE_AGENT_CONTENTION_H
#define FAIRSHARE_AGENT_CONTENTION_H

#include <stdbool.h>
#include <stddef.h>

#include "resource.h"

struct ct_config {
	double queue_min;   /* mean requests in flight that mean "requests wait" */
	double busy;	    /* (0, 1]: use / declared capacity that means loaded */
	double user_share;  /* (0, 1): use / declared capacity that makes a user */
	unsigned hold;	    /* calm periods before contention ends */
	double follow;	    /* (0, 1]: step towards the delivered total per period */
	double grow;	    /* > 1: capacity growth per period while all it allowed is used */
	double used_share;  /* (0, 1]: total / capacity that counts as "all used" */
	double floor_share; /* (0, 1]: the least capacity, share of the declared one */
	double stall_share; /* [0, 1): total / capacity below which a contended disk stalled */
	unsigned stall_max; /* stalled periods in a row at most */
};

/* Defaults: queue 2, busy FS_RES_BUSY_SHARE (0.85), user FS_RES_USER_SHARE
 * (1 %), hold 5, follow 0.25, grow 1.05, used 0.95, floor 5 %, stall 0.5 for
 * at most 2 periods. */
void ct_config_default(struct ct_config *cfg);

/* One period's measurements. */
struct ct_input {
	double queue[FS_MAX_DISKS]; /* per disk index: mean requests in flight, NaN = unknown */
	double total[FS_MAX_RES];   /* per resource: the tenants' use together */
	unsigned users[FS_MAX_RES]; /* tenants at or above user_share */
	bool binding[FS_MAX_RES];   /* a tenant's use is at its io.max of ours */
	double allowed[FS_MAX_RES]; /* the users' io.max of ours summed; INFINITY
				       if one has none (0 = no users counted) */
};

/* Zero totals, users and allowed, unknown queues, nothing binding. */
void ct_input_init(struct ct_input *in);

struct ct_state {
	bool contended[FS_MAX_RES];
	bool loaded[FS_MAX_RES];      /* this period (for the log) */
	unsigned calm[FS_MAX_RES];    /* contended periods in a row neither loaded nor bound */
	unsigned stalled[FS_MAX_RES]; /* contended periods in a row below stall_share */
	double capacity[FS_MAX_RES]; /* what the allocation shares out; 0 before the first update */
};

/* Not contended, capacity 0 (the first update sets the declared capacity). */
void ct_state_init(struct ct_state *s);

/* next = f(prev, in, cfg) for the io resources of res; the other resources
 * keep their declared capacity and are never contended. prev and next may
 * be the same object. */
void ct_update(const struct fs_resources *res, const struct ct_config *cfg,
	       const struct ct_input *in, const struct ct_state *prev, struct ct_state *next);

/* Resource r stalled in the period of s: below stall_share, at most
 * stall_max periods in a row. */
bool ct_stalled(const struct ct_config *cfg, const struct ct_state *s, size_t r);

#endif /* FAIRSHARE_AGENT_CONTENTION_H */
