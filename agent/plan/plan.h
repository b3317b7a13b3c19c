/* SPDX-License-Identifier: MIT */
/*
 * The planner: (config, demand estimates, samples, previous plan) -> plan.
 * A pure function (no I/O, no globals): it builds the policy problem, calls
 * fs_solve and turns the allocation into the value of every cgroup file.
 *
 * Problem (DESIGN.md "The allocation model"): one pool = this host; the
 * resources of struct fs_resources (cpu, memory, per disk rbps/wbps[/iops],
 * net); per-unit demand = the tenant's estimated demand vector, max_tasks = 1,
 * so x_n in [0, 1] is the fraction of its demand tenant n is granted and
 * alloc[n][r] = x_n * demand[n][r]. Tenants whose cgroup is missing are left
 * out of the problem and their files are not touched.
 *
 * Bottlenecks: resource r is saturated when sum_n alloc[n][r] >= saturated *
 * capacity[r].
 *
 * Work conservation (limits for resource r):
 *  - r not a bottleneck (neither saturated by the allocation nor busy by
 *    measured use): nobody is short of r, so its limit is lifted ("max");
 *  - r saturated: limit = alloc + the leftover capacity - sum alloc shared
 *    in proportion to weight (the leftover is small by definition, but
 *    sharing it keeps sum of limits = capacity);
 *  - r busy but not saturated (the tenants use >= `busy` of it, or it is
 *    an io resource the daemon found contended: agent/estimate/
 *    contention.h, cfg->contended): a tenant that is held below its
 *    demand (x < 1) and uses or demands at least FS_RES_USER_SHARE of r is
 *    limited to its allocation there; one granted its whole demand is not.
 *    (Demands: a period in which a throttled writer's bios stay queued
 *    reads 0 use; its limit was lifted for that period and the bios it had
 *    queued went out at once, 0.38 of the disk for a plan of 0.31, e2e-mix.
 *    Its estimate falls by at most half a period, so one that really
 *    stopped is lifted a few periods later.) The
 *    allocation of such a tenant is set by its bottleneck elsewhere, and
 *    its use of r need not follow its use of the bottleneck (fio moved
 *    22 MB/s on 0.05 core as well as 33 on 0.09): held only at the
 *    bottleneck, a disk-bound tenant with a small CPU bottleneck kept
 *    twice its dominant share of a disk others were short of (e2e-mix, b:
 *    0.67 for a PS-DSF target of 0.32);
 *  - except on io resources of a tenant granted its whole demand (x = 1):
 *    lifted. The limits of the tenants held below their demand already
 *    keep the disk's share for it, and a limit at its own estimate is a
 *    trap: blk-throttle releases a small limit's bios in bursts, so the
 *    tenant's use reads 0 in most periods, its estimate decays and the
 *    limit follows it down (e2e test 2b: a qd 1 tenant held at the 1 MiB/s
 *    floor for the whole run, 2 % of the disk for a 50 % entitlement). If
 *    it grows past its share, the next period's estimate shows it and x
 *    drops below 1;
 *  then the tenant's configured max caps and min raises the limit.
 *
 * Granted (cpu): a tenant granted its whole demand (x = 1) on a saturated
 * cpu is not held to its estimate either: its limit is its allocation
 * times (1 + granted_headroom), or the plain limit above when that is
 * more, but never past its fair room: the allocation scaled until its
 * share reaches that of the tenants held on the cpu (psdsf: the share a
 * larger demand would get it), or its weight share of the cpu (sharing
 * incentive), whichever is more. And a quota in force stays while it
 * lies between the plain limit and the allocation times (1 + 2
 * granted_headroom) (fair room permitting): a tenant below its share
 * whose use jitters from period to period is neither throttled at each
 * high nor rewritten at each low. Held at its estimate, it was throttled
 * in every period it used more, the probe raised its estimate, and its
 * cpu.max moved by 20-100 % from period to period, each write refilling
 * a quota: on issue 19's busy-host benchmark (1,000 tenants, use +-20 %
 * per period) cpu.max was written 360-770 times per period, 190-280
 * times with the headroom: 70-90 granted tenants whose use left the
 * band, and tenants held on the cpu, whose x moves. The room above the
 * allocation is the held tenants' only while it is used; more use shows
 * in the next estimate, and then in x.
 *
 * Modes: enforce=auto and enforce=limits write hard limits, however many
 * resources are bottlenecks at once. Until issue 14, auto switched to an
 * RSVT-style minimal-gap priority mode (cpu.weight, cpu.max lifted) when two
 * or more devices were bottlenecks. Measured against hard limits on the
 * same mix (e2e-mix: a CPU-bound, b disk-bound, c both; weights 2:1:1),
 * that mode left b at a dominant share of 0.67 for a target of 0.32, no
 * better than plain cpu.weight (0.66): without cpu.max nothing keeps the
 * held-back signals up, the estimates decay, the allocation stops
 * saturating the disk and io.max is lifted; and its weights moved with the
 * usage every period (the demo's web tenant swung 300 <-> 800). With one
 * limit vector, the work conservation rules above keep every resource
 * enforced. n_bottlenecks still counts the devices (the read/write/IOPS
 * resources of one disk count as one) for status.
 * enforce=weights writes that priority mode: the minimal-gap rule
 * (fs_minimal_gap; entitlement = weight share, consumption = usage share,
 * over the bottlenecks) mapped onto cpu.weight and io.weight as
 *     weight = base * (1 + gap_gain * gap)   for promoted tenants (gap > 0),
 *     weight = base                          otherwise,
 * base = base_weight * tenant weight, clamped to [1, 10000]; cpu.max is lifted
 * to "max" except the tenant's configured max (safety ceilings), and so is
 * io.max on disks that honour io.weight (io_weight_works: bfq or io.cost,
 * agent/io_weight.h). Elsewhere io.weight is accepted and ignored by the
 * kernel, so io.max keeps the limits rules there: lifting it would leave the
 * disk to whoever queues deepest. In limits mode every weight is base (the
 * gaps are still computed, for status and explain).
 * Memory has no proportional knob for use (memory.low protects, it does not
 * share), so its files follow the memory rules below in both modes.
 * enforce=off computes everything but marks no file for writing.
 *
 * Memory (issue 14). Usage never exceeds physical memory, so the allocation
 * alone never shows a shortage: the host's own signals do (struct
 * plan_host: MemAvailable, /proc/pressure/memory), and the estimator
 * probes a tenant's memory demand up while it is held back (memory.events
 * high/max, refaults, PSI). With C the memory capacity:
 *  - share = entitlement x C (weight share; page aligned). memory.low =
 *    share (capped by the tenant's configured max): the kernel reclaims
 *    from the tenants above their protection first. It changes only with
 *    the config and the set of present tenants, and a move within
 *    `deadband` keeps the value in force (one tenant joining among many
 *    moves every share a little). (For it to take effect the
 *    tenants' ancestors need memory.low >= the sum below them, or the
 *    cgroup2 mount option memory_recursiveprot.)
 *  - headroom = min(C - sum of the tenants' working sets (usage minus
 *    reclaimable cache), MemAvailable - mem_margin): what can still be
 *    handed out.
 *  - busy: the working sets reach mem_busy of C, or headroom is below
 *    (1 - mem_busy) of C; left at 0.9 x those thresholds (hysteresis).
 *    A burst bigger than the rest of C within one period is the one race
 *    left, hence the low default (0.3): being busy costs a tenant nothing
 *    below its share. short: headroom <= mem_short x C, or host PSI memory
 *    full avg10 >= mem_psi_full; left after mem_short_hold periods in a row
 *    with headroom > 2 mem_short x C and PSI < half of it (a killed hog
 *    worker frees its memory at once, its restart takes it back).
 *  - memory.high, never below share (a tenant within its entitlement is
 *    never throttled by us):
 *      not busy: the allocation's limit (alloc + leftover when memory is
 *        saturated), else "max": nobody is short, nothing is held;
 *      busy: also at most usage + guard, guard = mem_grow x headroom x
 *        weight / (weights of the tenants above their share, and its
 *        own): a tenant may grow by its part of what is left per period,
 *        so no tenant can exhaust the host between two periods (the OOM
 *        race: a hog grows faster than a period), and memory.high is in
 *        place before the shortage, throttling (not killing) whoever
 *        grows into it;
 *      short, tenant above its share: steps down from the value in force
 *        by mem_high_step per period towards share (gradually: reclaim,
 *        not an OOM kill, and it throttles the growth meanwhile);
 *      short, tenant at or below its share: at most its share (the
 *        guard lends nothing while short: a hog whose worker was just
 *        killed would take the freed memory back at once);
 *    then the configured max caps and min raises it; page aligned; "max"
 *    at or above C; a change within `deadband` of the previous value keeps
 *    it (stable outputs), except a step down reaching the share; held at
 *    its share, it stays while the share moves within `deadband`, never
 *    below the share. t->limit of memory is memory.high.
 *  - memory.max, the last resort, while memory is busy and memory.high is
 *    set: memory.high + mem_margin, or usage + margin for a tenant above
 *    its memory.high; never below max(usage, memory.high) + margin (page
 *    up); a value in force between those two bounds stays (the margin
 *    follows MemAvailable, memory.max need not); lowered by at most
 *    mem_step_down per period; "max" otherwise. It bites only when a tenant outruns
 *    memory.high: the kernel lets an allocation burst in the kernel
 *    (MAP_POPULATE, measured on 6.1) run some 30 % past memory.high before
 *    its throttling holds, enough to run a host out of memory. margin =
 *    mem_margin, or half of what the host still has beyond mem_margin when
 *    that is less (at least mem_margin_min): a margin the host does not
 *    have would be taken from everyone else. While the host is critical
 *    (MemAvailable < 2 x mem_margin) it is not raised: a tenant that grew
 *    into its margin is OOM-killed in its own cgroup, not whoever the
 *    host's OOM killer picks (the largest process, maybe a tenant within
 *    its share).
 *  - t->mem_why and t->mem_max_why say why memory.high and memory.max are
 *    what they are (in the summary logged every period at debug level).
 *
 * File values:
 *  - cpu.max: quota = limit x period (period cpu_period_usec, or 2x, 5x or
 *    10x it, up to 1 s and up to the agent's interval, for a quota below
 *    20 ms: CFS overruns small quotas by a slice, and each write refills a
 *    quota; the previous period kept within a hysteresis; quota at least
 *    cpu_quota_min_usec); "max" when lifted or >= the host's capacity;
 *  - memory.high, memory.max, memory.low: see Memory above;
 *  - io.max: one line per disk, rbps/wbps/riops/wiops = the limit of that io
 *    resource (at least io_min_bps / io_min_iops) or "max". A shared budget
 *    (bps, iops: reads and writes together) sets two keys: its limit split
 *    by the tenant's read/write mix with io_split_floor of headroom for the
 *    minor direction (agent/plan/io_split.h), each part at least the floor. The bps floor is
 *    1 MiB/s by default: blk-throttle dispatches whole bios, so under a limit
 *    below the size of one bio per second (1 MiB with fio's default-ish
 *    bs=1M, a device's max_sectors_kb) a tenant's next IO waits many periods
 *    and its use reads 0: it would look idle and stay at the floor.
 *  - dead band: in limits mode a finite cpu.max quota or io.max value that
 *    moves by at most `deadband` (relative) from the previous plan's keeps
 *    the previous value (a cpu.max quota with a period longer than
 *    cpu_period_usec that falls: deadband x period / cpu_period_usec).
 *    Every write of io.max restarts blk-throttle's slice and every write
 *    of cpu.max refills the bandwidth timer's quota; values
 *    that jitter each period with the estimates would do both for nothing.
 */
#ifndef FAIRSHARE_AGENT_PLAN_H
#define FAIRSHARE_AGENT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgfile.h"
#include "enforce.h"
#include "estimate.h"
#include "policy.h"

#define PLAN_WEIGHT_MIN	 1
#define PLAN_WEIGHT_MAX	 10000
#define PLAN_PAGE	 4096
#define PLAN_IO_LINE_MAX 160
#define PLAN_REASON_MAX	 256

enum plan_mode {
	PLAN_MODE_LIMITS,
	PLAN_MODE_WEIGHTS,
	PLAN_MODE_OFF,
};

/* cpu.max: the least quota worth its precision, and the kernel's longest
 * period (see cpu_period_for in plan.c). */
#define PLAN_CPU_QUOTA_PRECISE_USEC 20000
#define PLAN_CPU_PERIOD_MAX_USEC    1000000

/* x at or above 1 - this: the tenant is granted its whole demand. */
#define PLAN_GRANTED_EPS 1e-6

const char *plan_mode_name(enum plan_mode m); /* "limits", "weights", "off" */

struct plan_config {
	struct fs_resources res;
	enum fs_rule rule; /* FS_RULE_PSDSF or FS_RULE_NJC */
	enum fs_enforce enforce;
	uint64_t cpu_period_usec;    /* cpu.max period */
	uint64_t cpu_quota_min_usec; /* cpu.max quota floor */
	uint64_t interval_usec;	     /* the agent's period, 0 = unknown: the longest
					cpu.max period (each write refills a quota) */
	uint64_t mem_margin;	     /* bytes of headroom of memory.max, and kept of
					MemAvailable */
	uint64_t mem_margin_min;     /* bytes: the least headroom of memory.max, when
					the host has less than mem_margin to give */
	double mem_step_down;	     /* (0, 1]: max fraction memory.max drops per period */
	double mem_busy;	     /* (0, 1): working sets / C that make memory busy */
	double mem_short;	     /* (0, 1): headroom / C at or below which it is short */
	double mem_psi_full;	     /* host memory PSI full avg10 (%) that is short */
	double mem_grow;	     /* (0, 1]: part of the headroom lent per period */
	double mem_high_step;	     /* (0, 1]: fraction memory.high steps down per period */
	unsigned mem_short_hold;     /* calm periods before leaving short */
	double saturated;	     /* (0, 1]: bottleneck threshold on sum alloc / capacity */
	unsigned base_weight;	     /* cpu.weight / io.weight of a weight-1 tenant */
	double gap_gain;	     /* >= 0: weight boost per unit of minimal gap */
	uint64_t io_min_bps;	     /* floor of io.max rbps/wbps */
	uint64_t io_min_iops;	     /* floor of io.max riops/wiops */
	double io_split_floor;	     /* [0, 1]: shared budgets: the least part of a
					tenant's limit each direction gets (io_split.h) */
	double busy;		 /* (0, 1]: measured use / capacity that counts as a bottleneck */
	double deadband;	 /* [0, 1): relative change of a limit that is not written */
	double granted_headroom; /* >= 0: cpu room above the allocation of a tenant
				    granted its whole demand (plan.h "Granted") */
	bool io_weight_works[FS_MAX_DISKS]; /* per disk index: io.weight is honoured */
	/* Per period (the daemon sets it from agent/estimate/contention.h): io
	 * resources that are contended, a bottleneck whatever their use. */
	bool contended[FS_MAX_RES];
	/* Per period, fleet mode (docs/fleet.md): the fraction of each tenant's
	 * demand granted, per in[] index, as the fleet's leader solved it; the
	 * local solve still runs for the diagnostics (share, bottleneck) but
	 * its x is replaced. NULL: the local solve decides. */
	const double *given_x;
};

/* Defaults: period 100 ms, quota floor 1 ms, margin 64 MiB (at least 4 MiB), step 25 %,
 * saturated 0.99, base weight 100, gain 9, io floors 1 MiB/s and 10 ops/s,
 * io split floor PLAN_IO_SPLIT_FLOOR,
 * busy FS_RES_BUSY_SHARE (0.85), deadband 0.03, granted headroom 0.25;
 * memory: busy 0.3, short 0.05,
 * PSI full 10 %, grow 0.5, high step 0.1, short hold 5. res is emptied, rule psdsf,
 * enforce auto. */
void plan_config_default(struct plan_config *cfg);

struct plan_tenant_in {
	const char *name;
	double weight;		    /* > 0 */
	bool present;		    /* the cgroup exists (sampled this period) */
	double demand[FS_MAX_RES];  /* estimate, > 0 somewhere */
	double usage[FS_MAX_RES];   /* this period's use */
	double min[FS_MAX_RES];	    /* configured floor of the limit, NaN = none */
	double max[FS_MAX_RES];	    /* configured cap of the limit, NaN = none */
	double mem_reclaimable;	    /* bytes of its memory usage the kernel drops
				       first (inactive file cache); 0 = unknown */
	double io_read[FS_MAX_RES]; /* shared io budgets: the part of usage[r] that
				       was read (the rest written); NaN = unknown */
};

/* The host's memory this period (agent/sample/host_mem.h); NaN = unknown. */
struct plan_host {
	double mem_available; /* MemAvailable, bytes */
	double mem_psi_full;  /* /proc/pressure/memory full avg10, percent */
};

/* Everything unknown. */
void plan_host_unknown(struct plan_host *h);

/* Zero usage, NaN min/max and io_read, weight 1, present. */
void plan_tenant_in_init(struct plan_tenant_in *t, const char *name);

struct plan_tenant {
	char name[64];
	bool write; /* false: leave this tenant's files alone */
	/* target values; FS_VALUE_MAX = "max" */
	uint64_t cpu_quota_usec, cpu_period_usec;
	uint64_t cpu_weight, io_weight;
	uint64_t mem_high, mem_max, mem_low;
	/* entitlement x memory, page aligned: memory.low before the dead band */
	uint64_t mem_share;
	uint64_t io[FS_MAX_RES];	  /* io resources: rbps/wbps/riops/wiops value; a
					     shared budget's limit (bps, iops) */
	uint64_t io_split[FS_MAX_RES][2]; /* shared budgets: io[r] as the read
					     and the write key's value */
	double io_read_share[FS_MAX_RES]; /* shared budgets: the read share the
					     split used (io_split.h) */
	/* diagnostics */
	bool in_problem;	  /* present and solved */
	double entitlement;	  /* weight / the weights of the tenants in the problem
				     (with its own when it is not in it) */
	double x;		  /* fraction of demand granted */
	double share;		  /* the rule's share (see fs_tenant_result) */
	int bottleneck;		  /* resource index or FS_NO_RESOURCE */
	double alloc[FS_MAX_RES]; /* x * demand */
	/* a granted tenant's cpu limits (plan.h "Granted"), cores, 0 = none:
	 * a quota in force between these two stays */
	double cpu_keep_min, cpu_keep_max;
	double limit[FS_MAX_RES]; /* as written: cpu.max quota / period, memory.high,
				     io.max; INFINITY = max (net: the rules' limit) */
	double gap;		  /* minimal gap (0 when no bottleneck) */
	int gap_resource;	  /* where it occurs, or FS_NO_RESOURCE */
	bool promoted;
	const char *mem_why;	 /* why memory.high is what it is (a literal) */
	const char *mem_max_why; /* why memory.max is what it is (a literal) */
};

struct plan {
	size_t n_tenants;
	struct plan_tenant *t;
	size_t cap; /* entries t holds: plan_recompute reuses them */
	enum plan_mode mode;
	bool mode_changed; /* differs from the previous plan (or first plan) */
	char mode_reason[PLAN_REASON_MAX];
	bool saturated[FS_MAX_RES]; /* by the allocation */
	bool busy[FS_MAX_RES];	    /* by measured use (cfg->busy) */
	size_t n_saturated;	    /* saturated resources */
	size_t n_bottlenecks;	    /* saturated or busy devices: cpu, memory, each disk, net */
	int iterations;		    /* solver iterations */
	/* fs_solve's guard: 1, or the factor (< 1) by which the rule's point had
	 * to be scaled into capacity (a rule bug: the kernel still gets no more
	 * than the capacity) */
	double guard;
	bool warm; /* solved from prev's solution (same tenants) */
	/* memory (plan.h "Memory"); bytes */
	double mem_headroom; /* what can still be handed out; INFINITY = no memory */
	bool mem_busy, mem_short;
	bool mem_critical;     /* MemAvailable < 2 x mem_margin */
	double mem_max_margin; /* memory.max's margin this period, bytes */
	unsigned mem_calm;     /* calm periods in a row while short */
};

/*
 * Builds the plan for in[0..n). prev (may be NULL) supplies the previous
 * memory values of each tenant (matched by name), the previous memory
 * state (busy, short) and the previous mode, and its solution is the warm
 * start of this one when the same tenants are in the problem (fs_solve_warm). out is
 * initialised here; free it with plan_free even on error. 0, or -EINVAL /
 * -ENOMEM / the solver's error with err filled.
 */
int plan_compute(const struct plan_config *cfg, size_t n, const struct plan_tenant_in *in,
		 const struct plan *prev, struct plan *out, struct fs_error *err);
/* The same with the host's memory state (NULL: unknown, as plan_compute):
 * what the daemon calls every period. */
int plan_compute_host(const struct plan_config *cfg, const struct plan_host *host, size_t n,
		      const struct plan_tenant_in *in, const struct plan *prev, struct plan *out,
		      struct fs_error *err);
/*
 * plan_compute_host into a plan that already exists (zeroed, or from an
 * earlier call; not prev): its tenant array is reused when large enough,
 * so a daemon that alternates two plans allocates none per period (at
 * 10,000 tenants the array is 10 MB). Free it with plan_free as before.
 */
int plan_recompute(const struct plan_config *cfg, const struct plan_host *host, size_t n,
		   const struct plan_tenant_in *in, const struct plan *prev, struct plan *out,
		   struct fs_error *err);
void plan_free(struct plan *p);

/*
 * The tenant called name in p (NULL: none, or p NULL). Searched outwards
 * from index i: the same index while the tenant list is unchanged (every
 * period but the first after a change), the next one over after a
 * template's cgroup came or went before it, so a period stays linear in
 * tenants (k tenants joining or leaving at once: O(k) per tenant).
 */
const struct plan_tenant *plan_find(const struct plan *p, size_t i, const char *name);

/* The policy problem of the present tenants (exposed for tests / fairctl). */
struct plan_problem {
	struct fs_problem p;
	double *capacity, *demand, *max_tasks, *weight;
	const char **tenant_names, **resource_names;
	size_t *index; /* problem tenant -> index into in[] */
};

int plan_problem_build(const struct plan_config *cfg, size_t n, const struct plan_tenant_in *in,
		       struct plan_problem *pp);
void plan_problem_free(struct plan_problem *pp);

/* File values as the kernel reads them (model/cgfile.h formats them). */
void plan_fmt_cpu_max(const struct plan_tenant *t, char *buf, size_t len);
/*
 * The io.max values of disk index `disk` (io->dev set, keys absent from the
 * config "max") and in *keys the io.max keys the config's io resources set
 * there (bits 1u << FS_IO_*). Returns false when the config has no io
 * resource on that disk.
 */
bool plan_io_max(const struct plan_config *cfg, const struct plan_tenant *t, int disk,
		 struct fs_io_limit *io, unsigned *keys);
/*
 * The io.max line of disk index `disk` ("254:0 rbps=1048576 wbps=max"), with
 * the keys of the io resources configured on that disk. Returns false when
 * the config has no io resource on that disk.
 */
bool plan_fmt_io_max(const struct plan_config *cfg, const struct plan_tenant *t, int disk,
		     char *buf, size_t len);

/* One line per tenant: "TENANT x=0.500 cpu=... memory=... mode=..." (for logs and --once). */
void plan_fmt_summary(const struct plan_config *cfg, const struct plan *p, size_t i, char *buf,
		      size_t len);

#endif /* FAIRSHARE_AGENT_PLAN_H */
