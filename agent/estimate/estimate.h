/* SPDX-License-Identifier: MIT */
/*
 * Demand estimation: what would each tenant use if nothing held it back?
 *
 * A pure function of (previous state, this period's sample, config) -> new
 * state; no I/O, no globals. The caller (agent/daemon/adapt.c) fills the plain
 * structs below from the sampler.
 *
 * Rules (issue 3, DESIGN.md "The loop"):
 *  - A tenant that is not held back is demanding what it uses: demand =
 *    usage (once the probe factor has decayed back to 1 and an earlier,
 *    higher estimate has fallen off; see below).
 *  - A tenant is held back on a resource when the kernel says so: cpu
 *    throttled (below), memory at memory.high or
 *    memory.max (memory.events "high" or "max" grew) or refaulting (pages
 *    evicted earlier faulted back in, memory.stat workingset_refault_*,
 *    at least refault_share of its usage in the period: its working set
 *    does not fit where it is; as senpai and oomd read it), IO at its
 *    io.max limit (the rate of that io resource >= io_limit_ratio of its
 *    limit), IO on a contended disk (agent/estimate/contention.h: the
 *    disk's queue is deep, or the tenants together use >= `busy` of it, or
 *    our limits hold it; this tenant uses at least follow_share of what
 *    the previous plan allotted it, and at least
 *    FS_RES_USER_SHARE of it: the device then serves whoever queues
 *    deepest, and nothing else shows the shallow queue's unmet demand:
 *    libaio and io_uring waits are not iowait, so PSI io stays 0; an
 *    io.max of ours on the tenant does not change that, as long as the
 *    deep queue's own limit keeps the disk busy: e2e test 2b, qd 1 next to
 *    qd 32, stayed at 2 % of the disk when only tenants without a limit
 *    counted), or PSI "some avg10" of the resource above psi_threshold
 *    percent.
 *  - The follow test gets a grace: a tenant held on a contended disk stays
 *    held for follow_grace periods in a row while its use lags its
 *    allocation. The room a plan makes for it reaches it late: the deep
 *    queue it shares the disk with holds up to a quarter second of IO (32
 *    reads of 256 KiB at 32 MiB/s) that drains before the new limit on
 *    that queue bites, so the shallow reader's rise shows a period later.
 *    Judged after one period it failed the test every other period (its
 *    allocation is 1.5 times its last use), its probe fell back, and on a
 *    busy host the demo's db needed 31 periods to reach its share (issue
 *    20). A tenant that still does not follow after the grace is released,
 *    and held again only once it follows.
 *  - While held back on a resource the tenant's demand there is probed
 *    upward: its probe factor *= probe_step each held period, bounded by
 *    probe_max, and demand = probe * usage on that resource; usage
 *    elsewhere. Scaling the whole vector instead (the papers'
 *    proportional-usage assumption) was
 *    measured to waste what the planner hands out: an IO-bound tenant's
 *    small CPU use became 4x its need, and under hard limits that CPU was
 *    taken from CPU-bound tenants and left idle (e2e test 8). A tenant
 *    whose other uses do grow with its bottleneck (compress-then-write)
 *    reaches its new limit there too, and is then probed there as well.
 *  - A tenant the plan holds back (IO at its io.max or on a contended disk
 *    at its allocation, or CPU throttled by cpu.max) runs each of its CPU
 *    and IO uses at about x of its need, x being the share of its demand
 *    vector the previous plan granted it (sample x, NaN = no plan of ours
 *    in force): its demand there is at least usage / x, held or not; the
 *    probe may take a held one further. Demanding only its use there (the
 *    probe starts at 1) made the next plan grant it x of its use: a
 *    disk-bound fio held to 0.3 of the disk also runs 0.3 of the CPU it
 *    needs, its cpu.max fell below its use, it was throttled, its CPU
 *    probe rose and fell, and cpu.max moved by more than 10 % in 28 of 35
 *    periods; each write refilled its quota, the CPU it used above its
 *    cpu.max came from its CPU-bound neighbour, and its IO lost the CPU it
 *    needed (e2e-mix, issue 14). With usage / x the next plan grants what
 *    it uses now, scaled by how its share moves. The probe factor alone
 *    for the other uses measured four times the need (above). Memory
 *    keeps its own rules.
 *  - When released there, the factor decays: probe = 1 + (probe - 1) *
 *    decay, snapping to 1 below 1 + EST_PROBE_EPS. (One factor for the
 *    whole tenant kept a resource held once inflated for as long as any
 *    other stayed held: an IO tenant's CPU estimate then crowded out
 *    CPU-bound tenants.)
 *  - An estimate falls by at most the factor `decay` per period: demand >=
 *    decay * previous demand. Use per period is bursty (blk-throttle lets a
 *    throttled tenant's 1 MiB bios through one at a time, so its write rate
 *    reads 0 in most periods and several times its limit in one); without
 *    this the estimate would drop to the floor between bursts.
 *  - A stalled disk (contention.h: the whole disk's use fell below half of
 *    what it delivers, for a period or two) tells nothing about a tenant's
 *    demand on it: the demand, probe, held flag and follow lag of those
 *    resources stay as they were (EST_IO_STALLED).
 *  - So does a gap in a held tenant's IO (EST_IO_GAP): on a contended disk,
 *    with an io.max of ours in force, it was at that limit within the last
 *    io_gap_max periods and is below it now. blk-throttle holds the bios of
 *    a limited tenant in its own queue and dispatches them from a timer;
 *    on a busy host (the VM's timers late) that comes in bursts, and the
 *    tenant's io.stat then reads 0 for one or two 0.5 s periods and twice
 *    its limit in the next, its threads meanwhile waiting for completions
 *    (e2e-disk b, busy host: a qd 32 reader held to 10.4 MB/s read 22, 22,
 *    0, 26, 0, 0 MB/s). Two such periods halved its estimate twice, to
 *    below its share; the plan then lifted its limit and it took 50 MB/s
 *    of a 32 MB/s disk, 6 lifts in 16 s, 0.58 of the disk for a target of
 *    0.33. The demand, probe, held flag and follow lag stay as they were,
 *    and its CPU estimate stays anchored at x (below), for at most
 *    io_gap_max periods: a tenant whose IO really fell is judged as usual
 *    after that, and released a period or two later.
 *  - Each demand is clamped to [floor * capacity, capacity] so every
 *    tenant stays in the problem (fs_solve refuses all-zero demand) and no
 *    estimate exceeds the host. floor = floor_share, or floors_total /
 *    n_tenants when that is less (est_floor_share): the floors of all
 *    tenants together are at most floors_total of a resource. An idle
 *    tenant's floor is granted in the allocation and its limit on a
 *    saturated resource keeps it; at 1e-3 each, 1,000 idle tenants' floors
 *    alone saturated every resource, and the active tenants were held to
 *    what the floors left of it (issue 19's login-node benchmark).
 *  - A declared demand (config `demand`) overrides the estimate of that
 *    resource (NaN = not declared).
 *  - CPU held back means throttled by cpu.max: cpu.stat nr_throttled or
 *    throttled_usec grew. Both: nr_throttled grows only when the period
 *    timer finds the group throttled, and a write of cpu.max unthrottles
 *    it first, so a tenant whose limit has a 1 s period and is rewritten
 *    every 0.5 s can be throttled for most of every period and never
 *    counted there (e2e-mix: 1.2 cores of wait, nr_throttled 0);
 *    throttled_usec grows at every unthrottle.
 *  - Runqueue wait (eBPF sampler, issue 4): over a period, a tenant whose
 *    threads ran U cores and waited W cores (wait-seconds per second) before
 *    runs they left still runnable (preempted or throttled: they wanted the
 *    CPU all along) had U + W threads wanting a CPU on average: with CPUs
 *    for all of them it would have used up to U + W cores. Wait after a
 *    wakeup of a thread that then sleeps again is scheduling latency, not
 *    demand, and is not in W: counted, it made an IO-bound fio look as if it
 *    wanted 0.3-0.5 core under TCG (e2e test 8). So its CPU demand is at least U + W,
 *    whatever the probe says: demand_cpu = max(probe * U, U + W). The mean
 *    runnable count is bounded by the tenant's thread count by definition,
 *    and the capacity clamp below bounds it by the host. Wait is
 *    contention, not a limit of ours, so it raises only the CPU demand and
 *    does not start the probe; and since PSI cpu "some" is a proxy for the
 *    same wait, a known W replaces it (PSI cpu then holds nothing back). W
 *    below wait_min (scheduler noise: kernel threads, the agent itself) is
 *    ignored; unknown W (NaN, cgroupfs) changes nothing.
 *  - W is the tenants' contention for the CPU only when they together use
 *    at least cpu_busy of it (sample cpu_total; NaN = unknown, counts):
 *    runqueue wait on a CPU they leave partly unused is the host's or the
 *    kernel's (a TCG guest starved by its host sees its own slowness as
 *    wait: 0.65 core used by two fio readers, 1.4 cores of wait, CPU
 *    demand 1.0 each, a CPU "bottleneck" capped both at 0.5 core and the
 *    shallow reader became cpu-throttled), and no split of the CPU among
 *    the tenants relieves it. The same holds for PSI cpu.
 *  - W of a throttled tenant does not count: it includes the time its
 *    threads sat throttled by our cpu.max, which says how long the limit
 *    held them, not how much CPU they would use (an IO-bound fio with two
 *    jobs held to 0.035 core showed 1.2 cores of wait, i.e. a CPU demand
 *    of 1.0 for a tenant that needs 0.1, and its weight-2 CPU-bound
 *    neighbour lost 0.14 core for a period: e2e-mix). Throttling holds the
 *    tenant back, so the probe raises its CPU demand instead, by
 *    probe_step per period.
 *  - The CPU trim (issue 14, e2e-mix): a tenant held back on its IO (at
 *    its io.max, or on a contended disk) whose threads barely wait for the
 *    CPU (runqueue wait below wait_min, throttled time included) is not
 *    held back by its CPU, throttled by cpu.max or not: its IO already
 *    gets all we let it have. While the tenants keep the CPU busy
 *    (cpu_busy; elsewhere no cap is at stake), its CPU demand steps down
 *    from the previous estimate by trim_step, then stays there for
 *    trim_pace periods, whatever its use, before the next step: a write
 *    of cpu.max refills a whole quota, so a period's use can exceed the
 *    cap or fall short of it, and an estimate anchored at use (use / x)
 *    follows whatever cap the tenant is given. A step in a period
 *    cpu.max did not throttle it goes down to its use / x where that is
 *    lower (by half at most): that use is its own. A stalled disk keeps
 *    the trim as it was. Measured: a fio writer
 *    held to 0.31 of the disk used 0.089 core when its CPU was not capped
 *    and delivered the same 0.31 with 0.045 core by hand; the 0.044 core
 *    it burns beyond need came from the CPU-bound tenant, 0.03-0.06 off
 *    its target. A step that bites into what it needs shows within a few
 *    periods, throttled, as its threads now waiting or as its IO falling
 *    short of where it was held (below its io.max: the wait alone shows
 *    late). The estimate then steps back up once and holds there, with
 *    no step down for trim_hold periods, even if the trim ends meanwhile.
 *    (e2e-njc, the same writer at 2/3 of the disk: with an estimate that
 *    followed its use down between steps and through a hold, and bites
 *    seen only by the wait, the trim took it to 0.01-0.03 core and its
 *    disk share from 0.67 to 0.46-0.58.) A wait later than that is noise
 *    at a cap it lived with, and is held. The
 *    trim ends (the rules above apply again) when its IO is no longer
 *    held or the CPU no longer busy. Unknown wait (cgroupfs sampler)
 *    never trims, nor does a tenant whose threads wait for the CPU from
 *    the start (a CPU-bound thread beside its IO: e2e-mix's c).
 *    The trim takes no tenant below trim_floor (half) of its CPU
 *    estimate before the trim began (est_state.trim_from, kept until the
 *    estimate is back there, so that a trim that ends and starts again
 *    does not start from its own floor): the by-hand measurement above
 *    is half, and a bite can be missed. e2e-mix, idle, 1 run of 3: b's
 *    estimate went from 0.034 to 0.006 core in 8 steps (cpu.max 0.002
 *    core at x = 0.33) while its IO stayed at its io.max; then its writes
 *    came in bursts, the disk read as stalled, a stall keeps the trim
 *    (no bite), and b got 0.24 of the disk for a target of 0.32.
 */
#ifndef FAIRSHARE_AGENT_ESTIMATE_H
#define FAIRSHARE_AGENT_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "resource.h"

#define EST_PROBE_EPS 1e-3

struct est_config {
	double probe_step;     /* > 1: growth of the probe factor per held period */
	double probe_max;      /* >= 1: bound on the probe factor */
	double decay;	       /* [0, 1): share of the probe excess kept per free period,
				  and the least share of an estimate kept per period */
	double psi_threshold;  /* percent of PSI some avg10; <= 0 disables PSI */
	double io_limit_ratio; /* (0, 1]: rate >= ratio * io.max limit is "at the limit" */
	double floor_share;    /* (0, 1): minimum demand as a fraction of capacity */
	double floors_total;   /* (0, 1]: bound on the floors of all tenants together */
	size_t n_tenants;      /* the tenants estimated together; 0: unknown (one) */
	double wait_min;       /* cores: runqueue wait below this is ignored */
	double follow_share;   /* (0, 1]: use / previous allocation that still counts
				  as held on a contended disk */
	unsigned follow_grace; /* periods a tenant held on a contended disk stays held
				  while its use lags follow_share of its allocation */
	double refault_share;  /* (0, 1]: refaulted bytes / usage in a period that
				  count as memory held back; <= 0 disables */
	double cpu_busy;       /* (0, 1]: the tenants' CPU use together / capacity at
				  which runqueue wait and PSI cpu are contention */
	double trim_step;      /* (0, 1]: one step of the CPU trim; 1 = off */
	unsigned trim_pace;    /* periods between two steps (the cap settles) */
	unsigned trim_hold;    /* periods without a trim after a bite */
	double trim_floor;     /* (0, 1]: the part of its CPU estimate before the
				  trim below which the trim takes no tenant */
	unsigned io_gap_max;   /* periods below its io.max after being at it that
				  keep a held tenant's estimate (EST_IO_GAP); 0 = off */
};

/* Defaults: step 1.5, max 4, decay 0.5, PSI 10 %, io ratio 0.95, floor 1e-3
 * (floors together 0.01, n_tenants 0),
 * wait_min 0.05 cores, follow 0.8, follow grace 2, refault_share 0.01,
 * cpu_busy FS_RES_BUSY_SHARE (0.85), trim step 0.8 every 5th period (one
 * write of cpu.max, then it settles), trim hold 20, trim floor 0.5, io gap
 * 3 periods. */
void est_config_default(struct est_config *cfg);

/* The floor of each demand as a fraction of capacity: floor_share, at most
 * floors_total / n_tenants. */
double est_floor_share(const struct est_config *cfg);

enum est_reason {
	EST_CPU_THROTTLED = 1u << 0, /* cpu.stat nr_throttled or throttled_usec grew */
	EST_MEM_HIGH = 1u << 1,	     /* memory.events high grew */
	EST_IO_LIMIT = 1u << 2,	     /* a device at its io.max rbps/wbps */
	EST_PSI_CPU = 1u << 3,
	EST_PSI_MEM = 1u << 4,
	EST_PSI_IO = 1u << 5,
	EST_DECLARED = 1u << 6,	    /* some resource's demand comes from the config */
	EST_DECAYING = 1u << 7,	    /* released, probe still above 1 */
	EST_CPU_WAIT = 1u << 8,	    /* runqueue wait raised the CPU demand (not "held") */
	EST_IO_CONTENDED = 1u << 9, /* IO on a busy disk without an io.max of ours */
	EST_MEM_MAX = 1u << 10,	    /* memory.events max grew */
	EST_MEM_REFAULT = 1u << 11, /* refaults >= refault_share of its usage */
	EST_IO_STALLED = 1u << 12,  /* a stalled disk: its estimates kept */
	EST_CPU_TRIM = 1u << 13,    /* its CPU demand is trimmed (the CPU trim) */
	EST_IO_GAP = 1u << 14,	    /* below its io.max just after being at it: kept */
};
#define EST_HELD_MASK                                                                              \
	(EST_CPU_THROTTLED | EST_MEM_HIGH | EST_IO_LIMIT | EST_PSI_CPU | EST_PSI_MEM |             \
	 EST_PSI_IO | EST_IO_CONTENDED | EST_MEM_MAX | EST_MEM_REFAULT)

/* One tenant's measurements over the last period. NaN PSI = unknown. */
struct est_sample {
	double usage[FS_MAX_RES]; /* units of the resource kind */
	/* io resources only: the io.max value in force (INFINITY when "max"). */
	double limit[FS_MAX_RES];
	/* io resources only: the disk is contended (agent/estimate/contention.h) */
	bool contended[FS_MAX_RES];
	/* io resources only: the disk stalled this period (contention.h): the
	 * estimates of r are kept as they were */
	bool stalled[FS_MAX_RES];
	/* io resources only: the previous plan's allocation, NaN = none. On a
	 * contended disk a tenant whose use stays below follow_share of what
	 * it was allotted is not short of share: its own pattern (a qd 1
	 * reader's latency) bounds it, and probing it up only takes the
	 * others' limits down (issue 14: 9 MB/s shared out of 40). */
	double alloc[FS_MAX_RES];
	double cpu_throttled_delta;	 /* nr_throttled increase in the period */
	double cpu_throttled_us;	 /* throttled_usec increase; NaN = unknown */
	double cpu_total;		 /* all tenants' CPU use together, cores; NaN = unknown */
	double mem_high_events_delta;	 /* memory.events high increase */
	double mem_max_events_delta;	 /* memory.events max increase */
	double mem_refault_bytes;	 /* refaulted in the period; NaN = unknown */
	double psi_cpu, psi_mem, psi_io; /* some avg10, percent */
	double cpu_wait;		 /* runqueue wait, cores; NaN = unknown */
	double x;			 /* the previous plan's share of the demand vector, when its
					    limits are in force; NaN = none */
};

/* A rate at io_limit_ratio of a finite io.max limit or above: held there by
 * the limit (the estimator's EST_IO_LIMIT, and the contention estimate's
 * "a limit of ours binds"). */
bool est_at_io_limit(const struct est_config *cfg, double rate, double limit);

/* Marks every limit as "max", PSI, wait, refaults, throttled_usec, the
 * CPU total and x as unknown; usage zero. */
void est_sample_init(struct est_sample *s);

struct est_state {
	bool initialized;
	double demand[FS_MAX_RES];  /* the current estimate */
	bool held[FS_MAX_RES];	    /* held back on this resource this period */
	double probe_r[FS_MAX_RES]; /* >= 1, per resource; 1 beyond res->n */
	unsigned reasons;	    /* enum est_reason bits */
	unsigned held_periods;	    /* consecutive held periods */
	/* io resources: consecutive periods held on a contended disk with use
	 * below follow_share of the allocation (the follow grace, estimate.h) */
	unsigned char lag[FS_MAX_RES];
	/* io resources: periods since it was last at its io.max there
	 * (est_at_io_limit), UCHAR_MAX: not lately (EST_IO_GAP) */
	unsigned char since_limit[FS_MAX_RES];
	/* io resources: this period said nothing of its demand there (a
	 * stalled disk, or a gap): demand, probe, held flag and lag kept */
	bool kept[FS_MAX_RES];
	unsigned char trim_hold;  /* periods left without a CPU trim (estimate.h) */
	unsigned char since_trim; /* periods since its last CPU trim, UCHAR_MAX: none */
	double trim_from;	  /* its CPU estimate before the CPU trim began; 0: none */
};

void est_state_init(struct est_state *s);

/* The tenant's probe factor for display: the largest probe_r. */
double est_probe(const struct est_state *s);

/*
 * next = f(prev, sample, config). declared[FS_MAX_RES] may be NULL (nothing
 * declared); NaN or negative entries are "not declared". prev and next may be
 * the same object.
 */
void est_update(const struct fs_resources *res, const struct est_config *cfg,
		const double *declared, const struct est_state *prev,
		const struct est_sample *sample, struct est_state *next);

/* "cpu-throttled,psi-io" / "declared" / "decaying" / "usage". */
const char *est_reason_str(unsigned reasons, char *buf, size_t len);

#endif /* FAIRSHARE_AGENT_ESTIMATE_H */
