/* SPDX-License-Identifier: MIT */
/* The planner (rules in plan.h). Pure: no I/O, no globals. */
#include "plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_split.h"

const char *plan_mode_name(enum plan_mode m)
{
	switch (m) {
	case PLAN_MODE_LIMITS:
		return "limits";
	case PLAN_MODE_WEIGHTS:
		return "weights";
	case PLAN_MODE_OFF:
		return "off";
	}
	return "unknown";
}

void plan_config_default(struct plan_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->rule = FS_RULE_PSDSF;
	cfg->enforce = FS_ENFORCE_AUTO;
	cfg->cpu_period_usec = 100000;
	cfg->cpu_quota_min_usec = 1000;
	cfg->mem_margin = 64ull << 20;
	cfg->mem_margin_min = 4ull << 20;
	cfg->mem_step_down = 0.25;
	cfg->saturated = 0.99;
	cfg->base_weight = 100;
	cfg->gap_gain = 9;
	cfg->io_min_bps = 1 << 20;
	cfg->io_min_iops = 10;
	cfg->io_split_floor = PLAN_IO_SPLIT_FLOOR;
	cfg->busy = FS_RES_BUSY_SHARE;
	cfg->deadband = 0.03;
	cfg->granted_headroom = 0.25;
	cfg->mem_busy = 0.3;
	cfg->mem_short_hold = 5;
	cfg->mem_short = 0.05;
	cfg->mem_psi_full = 10.0;
	cfg->mem_grow = 0.5;
	cfg->mem_high_step = 0.1;
}

void plan_host_unknown(struct plan_host *h)
{
	h->mem_available = h->mem_psi_full = NAN;
}

void plan_tenant_in_init(struct plan_tenant_in *t, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->weight = 1;
	t->present = true;
	for (size_t r = 0; r < FS_MAX_RES; r++)
		t->min[r] = t->max[r] = t->io_read[r] = NAN;
}

void plan_problem_free(struct plan_problem *pp)
{
	free(pp->capacity);
	free(pp->demand);
	free(pp->max_tasks);
	free(pp->weight);
	free(pp->tenant_names);
	free(pp->resource_names);
	free(pp->index);
	memset(pp, 0, sizeof(*pp));
}

int plan_problem_build(const struct plan_config *cfg, size_t n, const struct plan_tenant_in *in,
		       struct plan_problem *pp)
{
	size_t m = cfg->res.n, np = 0;

	memset(pp, 0, sizeof(*pp));
	pp->capacity = calloc(m ? m : 1, sizeof(double));
	pp->demand = calloc(n * m > 0 ? n * m : 1, sizeof(double));
	pp->max_tasks = calloc(n ? n : 1, sizeof(double));
	pp->weight = calloc(n ? n : 1, sizeof(double));
	pp->tenant_names = calloc(n ? n : 1, sizeof(char *));
	pp->resource_names = calloc(m ? m : 1, sizeof(char *));
	pp->index = calloc(n ? n : 1, sizeof(size_t));
	if (!pp->capacity || !pp->demand || !pp->max_tasks || !pp->weight || !pp->tenant_names ||
	    !pp->resource_names || !pp->index) {
		plan_problem_free(pp);
		return -ENOMEM;
	}
	for (size_t r = 0; r < m; r++) {
		pp->capacity[r] = cfg->res.capacity[r];
		pp->resource_names[r] = cfg->res.name[r];
	}
	for (size_t i = 0; i < n; i++) {
		if (!in[i].present)
			continue;
		for (size_t r = 0; r < m; r++)
			pp->demand[np * m + r] = in[i].demand[r];
		pp->max_tasks[np] = 1;
		pp->weight[np] = in[i].weight;
		pp->tenant_names[np] = in[i].name;
		pp->index[np] = i;
		np++;
	}
	pp->p = (struct fs_problem){
	    .n_tenants = np,
	    .n_pools = 1,
	    .n_resources = m,
	    .capacity = pp->capacity,
	    .demand = pp->demand,
	    .max_tasks = pp->max_tasks,
	    .weight = pp->weight,
	    .tenant_names = pp->tenant_names,
	    .resource_names = pp->resource_names,
	};
	return 0;
}

void plan_free(struct plan *p)
{
	free(p->t);
	memset(p, 0, sizeof(*p));
}

static uint64_t clamp_weight(double w)
{
	if (!(w >= PLAN_WEIGHT_MIN))
		return PLAN_WEIGHT_MIN;
	if (w >= PLAN_WEIGHT_MAX)
		return PLAN_WEIGHT_MAX;
	return (uint64_t)llround(w);
}

static uint64_t to_u64(double v)
{
	if (!isfinite(v) || v >= 1.8e19)
		return FS_VALUE_MAX;
	return v <= 0 ? 0 : (uint64_t)llround(v);
}

static uint64_t page_down(uint64_t v)
{
	return v == FS_VALUE_MAX ? v : v / PLAN_PAGE * PLAN_PAGE;
}

static uint64_t page_up(uint64_t v)
{
	if (v == FS_VALUE_MAX || v > FS_VALUE_MAX - PLAN_PAGE)
		return FS_VALUE_MAX;
	return (v + PLAN_PAGE - 1) / PLAN_PAGE * PLAN_PAGE;
}

const struct plan_tenant *plan_find(const struct plan *prev, size_t i, const char *name)
{
	size_t n;

	if (!prev || !name || !prev->n_tenants)
		return NULL;
	n = prev->n_tenants;
	if (i >= n)
		i = n - 1;
	/* outwards from i: i, i - 1, i + 1, i - 2, ... (a login shifts the
	 * tenants after it by one: found at the first or second step) */
	for (size_t d = 0; d < n; d++) {
		if (i >= d && !strcmp(prev->t[i - d].name, name))
			return &prev->t[i - d];
		if (d && i + d < n && !strcmp(prev->t[i + d].name, name))
			return &prev->t[i + d];
	}
	return NULL;
}

/* The configured cap and floor of resource r on limit lim. */
static double configured(const struct plan_tenant_in *in, size_t r, double lim)
{
	if (in->max[r] >= 0 && !(in->max[r] >= lim))
		lim = in->max[r];
	if (in->min[r] >= 0 && in->min[r] > lim)
		lim = in->min[r];
	return lim;
}

/*
 * The cpu limit of a tenant granted its whole demand on a saturated cpu
 * (plan.h "Granted") from its plain limit: the allocation with headroom,
 * within its fair room, and the band of quotas that stay (t->cpu_keep_*).
 * level: the share of the tenants held on the cpu (0 = none, or not
 * comparable: njc, or a fleet's x).
 */
static double granted_cpu(const struct plan_config *cfg, size_t r, double plain, double level,
			  struct plan_tenant *t)
{
	const double alloc = t->alloc[r], h = cfg->granted_headroom;
	double room = 1;

	if (!(alloc > 0) || !(h > 0))
		return plain;
	if (level > 0 && t->share > 0)
		room = fmax(room, level / t->share);
	room = fmax(room, t->entitlement * cfg->res.capacity[r] / alloc);
	t->cpu_keep_min = plain;
	t->cpu_keep_max = fmax(plain, alloc * fmin(1 + 2 * h, room));
	return fmax(plain, alloc * fmin(1 + h, room));
}

/* Limits per resource: alloc + weighted leftover on bottlenecks, lifted
 * elsewhere and on the io resources of a tenant granted its whole demand,
 * with headroom on a granted tenant's cpu (plan.h); then the configured
 * floor and cap. cpu_level: granted_cpu's level. */
static void set_limits(const struct plan_config *cfg, const struct plan_tenant_in *in,
		       const struct plan *pl, const double *leftover, double weight_sum,
		       double cpu_level, struct plan_tenant *t)
{
	const bool granted = t->x >= 1.0 - PLAN_GRANTED_EPS;

	t->cpu_keep_min = t->cpu_keep_max = 0;
	for (size_t r = 0; r < cfg->res.n; r++) {
		const bool lifted = !t->in_problem || (granted && fs_res_is_io(cfg->res.kind[r]));
		double lim = INFINITY;

		if (!lifted && pl->saturated[r]) {
			lim = t->alloc[r] + leftover[r] * in->weight / weight_sum;
			if (granted && cfg->res.kind[r] == FS_RES_CPU)
				lim = granted_cpu(cfg, r, lim, cpu_level, t);
		} else if (!lifted && pl->busy[r] && !granted &&
			   fmax(in->usage[r], in->demand[r]) >=
			       FS_RES_USER_SHARE * cfg->res.capacity[r]) {
			lim = t->alloc[r];
		}
		t->limit[r] = configured(in, r, lim);
		if (cfg->res.kind[r] == FS_RES_CPU && t->cpu_keep_max > 0) {
			t->cpu_keep_min = configured(in, r, t->cpu_keep_min);
			t->cpu_keep_max = configured(in, r, t->cpu_keep_max);
		}
	}
}

/* The share of the tenants the solve held on the cpu: the largest share of
 * a tenant not granted its whole demand whose bottleneck is the cpu; 0
 * when none is, or when shares do not compare (njc's share is the
 * fraction granted; a fleet's x is not the local solve's). */
static double cpu_level(const struct plan_config *cfg, const struct plan *pl)
{
	double level = 0;

	if (cfg->rule != FS_RULE_PSDSF || cfg->given_x)
		return 0;
	for (size_t i = 0; i < pl->n_tenants; i++) {
		const struct plan_tenant *t = &pl->t[i];

		if (t->in_problem && t->x < 1.0 - PLAN_GRANTED_EPS && t->bottleneck >= 0 &&
		    (size_t)t->bottleneck < cfg->res.n &&
		    cfg->res.kind[t->bottleneck] == FS_RES_CPU)
			level = fmax(level, t->share);
	}
	return level;
}

/* A finite value within the dead band of the previous finite one keeps it. */
static uint64_t sticky(const struct plan_config *cfg, uint64_t neu, uint64_t old)
{
	if (neu == FS_VALUE_MAX || old == FS_VALUE_MAX || old == 0)
		return neu;
	return fabs((double)neu - (double)old) <= cfg->deadband * (double)old ? old : neu;
}

/* The longest cpu.max period: 1 s (the kernel's bound), and at most the
 * agent's interval when that is known and not below the configured period.
 * Every write of cpu.max refills the group's runtime with a whole quota
 * (tg_set_cfs_bandwidth), so a period longer than the time between two
 * writes grants its quota again at each write: e2e-mix's disk-bound tenant,
 * held to 0.035 core with a 1 s period and rewritten every 0.5 s, used
 * 0.07-0.14 core, taken from the CPU-bound tenant's share. */
static uint64_t cpu_period_max(const struct plan_config *cfg)
{
	uint64_t max = PLAN_CPU_PERIOD_MAX_USEC;

	if (cfg->interval_usec >= cfg->cpu_period_usec && cfg->interval_usec < max)
		max = cfg->interval_usec;
	return max;
}

/* The cpu.max period for a limit of lim cores: the configured one, or the
 * shortest of 2x, 5x and 10x it (at most cpu_period_max) that gives a quota
 * of PLAN_CPU_QUOTA_PRECISE_USEC. CFS hands runtime out in slices of 5 ms
 * (sched_cfs_bandwidth_slice_us) and notices the end of a quota at a tick,
 * so a quota of a few ms per 100 ms period is overrun 2-3x: e2e-mix's
 * disk-bound tenant, allowed 3.3 ms per 100 ms, used 5-9, taken from the
 * CPU-bound tenant's share. A longer period with the same ratio keeps the
 * overrun a small part of the quota; the few steps keep the period from
 * changing with every estimate (each change rewrites cpu.max). With
 * hysteresis: the previous period (prev, 0 = none) stays while its quota
 * is at least half the precise one and, where it is longer than needed,
 * while the needed one's quota is below 1.5 times the precise one (a limit
 * near a step otherwise switched the period, and rewrote cpu.max whatever
 * the dead band, every other period: e2e-mix's disk-bound tenant went
 * 100, 200, 500 ms and 1 s within 8 periods). */
static uint64_t cpu_period_for(const struct plan_config *cfg, double lim, uint64_t prev)
{
	static const unsigned steps[] = {1, 2, 5, 10};
	const uint64_t max = cpu_period_max(cfg);
	uint64_t period = cfg->cpu_period_usec;
	bool prev_ok = false;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint64_t p = cfg->cpu_period_usec * steps[i];

		if (p > max)
			break;
		period = p;
		if (lim * (double)p >= PLAN_CPU_QUOTA_PRECISE_USEC)
			break;
	}
	if (!prev || prev == period || prev > max)
		return period;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		prev_ok |= cfg->cpu_period_usec * steps[i] == prev;
	if (!prev_ok)
		return period; /* not one of ours (another configured period) */
	if (prev < period)
		return lim * (double)prev >= PLAN_CPU_QUOTA_PRECISE_USEC / 2 ? prev : period;
	return lim * (double)period < 1.5 * PLAN_CPU_QUOTA_PRECISE_USEC ? prev : period;
}

/* A cpu.max quota (period usec) within the dead band of the previous one
 * keeps it. Lowered, the band grows with the period, deadband x period /
 * cpu_period_usec (3 % at 100 ms, 15 % at 500 ms): each write grants up to
 * a quota on top of the limit (cpu_period_max), so lowering a small limit
 * by a little costs more than it saves; a tenant whose need really fell
 * moves by more than that. Raised, the plain band: the tenant needs it. */
static uint64_t cpu_quota_sticky(const struct plan_config *cfg, uint64_t neu, uint64_t old,
				 uint64_t period)
{
	double band = cfg->deadband;

	if (neu == FS_VALUE_MAX || old == FS_VALUE_MAX || old == 0)
		return neu;
	if (neu < old && cfg->cpu_period_usec && period > cfg->cpu_period_usec)
		band *= (double)period / (double)cfg->cpu_period_usec;
	return fabs((double)neu - (double)old) <= band * (double)old ? old : neu;
}

/* A granted tenant's quota in force (old, of t's period) that lies within
 * its band (plan.h "Granted") stays. */
static bool granted_keeps(const struct plan_tenant *t, uint64_t old)
{
	const double q = (double)old / (double)t->cpu_period_usec;

	return t->cpu_keep_max > 0 && old != FS_VALUE_MAX && q >= t->cpu_keep_min &&
	       q <= t->cpu_keep_max;
}

/* An io.max value for limit lim: at least floor, the previous value (old,
 * NULL = none) within the dead band. */
static uint64_t io_value(const struct plan_config *cfg, double lim, uint64_t floor,
			 const uint64_t *old)
{
	uint64_t v = to_u64(lim);

	if (v < floor)
		v = floor;
	return old ? sticky(cfg, v, *old) : v;
}

/* A shared budget's limit t->io[r] as its read and write keys (io_split.h). */
static void split_io(const struct plan_config *cfg, const struct plan_tenant_in *in, size_t r,
		     uint64_t floor, const struct plan_tenant *prev, struct plan_tenant *t)
{
	double lim = t->io[r] == FS_VALUE_MAX ? INFINITY : (double)t->io[r], part[2];

	t->io_read_share[r] =
	    plan_io_read_share(in->io_read[r], in->usage[r], prev ? prev->io_read_share[r] : NAN);
	plan_io_split(lim, t->io_read_share[r], cfg->io_split_floor, part);
	for (int k = 0; k < 2; k++)
		t->io_split[r][k] =
		    io_value(cfg, part[k], floor, prev ? &prev->io_split[r][k] : NULL);
}

/* cpu.max and io.max from the limits; weights mode keeps only the caps where
 * the weight knob works (plan.h). prev: this tenant in the previous plan when
 * that was in the same mode. */
static void set_cpu_io(const struct plan_config *cfg, const struct plan_tenant_in *in,
		       enum plan_mode mode, const struct plan_tenant *prev, struct plan_tenant *t)
{
	t->cpu_period_usec = cfg->cpu_period_usec;
	t->cpu_quota_usec = FS_VALUE_MAX;
	for (size_t r = 0; r < cfg->res.n; r++) {
		enum fs_res_kind k = cfg->res.kind[r];
		double lim = t->limit[r];

		if (mode == PLAN_MODE_WEIGHTS &&
		    (k == FS_RES_CPU ||
		     (fs_res_is_io(k) && cfg->res.disk[r] >= 0 && cfg->res.disk[r] < FS_MAX_DISKS &&
		      cfg->io_weight_works[cfg->res.disk[r]])))
			lim = in->max[r] >= 0 ? in->max[r] : INFINITY;
		if (lim >= cfg->res.capacity[r])
			lim = INFINITY;
		if (k == FS_RES_CPU && isfinite(lim)) {
			const bool had = prev && prev->cpu_quota_usec != FS_VALUE_MAX;

			t->cpu_period_usec =
			    cpu_period_for(cfg, lim, had ? prev->cpu_period_usec : 0);
			t->cpu_quota_usec = to_u64(lim * (double)t->cpu_period_usec);
			if (t->cpu_quota_usec < cfg->cpu_quota_min_usec)
				t->cpu_quota_usec = cfg->cpu_quota_min_usec;
			if (had && prev->cpu_period_usec == t->cpu_period_usec)
				t->cpu_quota_usec = granted_keeps(t, prev->cpu_quota_usec)
							? prev->cpu_quota_usec
							: cpu_quota_sticky(cfg, t->cpu_quota_usec,
									   prev->cpu_quota_usec,
									   t->cpu_period_usec);
		} else if (fs_res_is_io(k)) {
			uint64_t floor = fs_res_counts_ops(k) ? cfg->io_min_iops : cfg->io_min_bps;

			t->io[r] = io_value(cfg, lim, floor, prev ? &prev->io[r] : NULL);
			if (fs_res_io_shared(k))
				split_io(cfg, in, r, floor, prev, t);
		}
	}
}

/* The host's memory state of this period (plan.h "Memory"): headroom, busy
 * and short, with hysteresis against the previous plan. */
static void memory_state(const struct plan_config *cfg, const struct plan_host *host, size_t n,
			 const struct plan_tenant_in *in, const struct plan *prev, struct plan *pl)
{
	int r = fs_resources_find(&cfg->res, FS_RES_MEMORY);
	double cap, ws = 0, head, exit_busy, exit_short;
	bool was_busy = prev && prev->mem_busy, was_short = prev && prev->mem_short;
	bool psi_short, psi_calm;

	pl->mem_headroom = INFINITY;
	pl->mem_max_margin = (double)cfg->mem_margin;
	if (r < 0)
		return;
	cap = cfg->res.capacity[r];
	for (size_t i = 0; i < n; i++)
		if (in[i].present)
			ws += fmax(0.0, in[i].usage[r] - fmax(0.0, in[i].mem_reclaimable));
	head = cap - ws;
	/* NaN (unknown) fails the comparison: the tenants' sum alone. */
	if (host && host->mem_available - (double)cfg->mem_margin < head)
		head = host->mem_available - (double)cfg->mem_margin;
	pl->mem_headroom = head;
	/* The kernel itself is about to run out: MemAvailable < 2 x margin */
	pl->mem_critical = host && host->mem_available < 2.0 * (double)cfg->mem_margin;
	/* memory.max's margin: at most what the host can still give, halved */
	if (host && (host->mem_available - (double)cfg->mem_margin) / 2 < pl->mem_max_margin)
		pl->mem_max_margin = fmax((double)cfg->mem_margin_min,
					  (host->mem_available - (double)cfg->mem_margin) / 2);
	psi_short = host && host->mem_psi_full >= cfg->mem_psi_full;
	psi_calm = !host || !(host->mem_psi_full >= cfg->mem_psi_full / 2);
	exit_short = 2 * cfg->mem_short * cap;
	/* Leaving short takes mem_short_hold calm periods in a row: a killed
	 * worker frees its memory at once and its restart takes it back. */
	pl->mem_short = head <= cfg->mem_short * cap || psi_short;
	if (!pl->mem_short && was_short) {
		pl->mem_calm = head > exit_short && psi_calm ? prev->mem_calm + 1 : 0;
		pl->mem_short = pl->mem_calm < cfg->mem_short_hold;
		if (!pl->mem_short)
			pl->mem_calm = 0;
	}
	/* busy: used >= mem_busy C, i.e. head <= (1 - mem_busy) C; leaving it
	 * takes use below 0.9 of that */
	exit_busy = cap - 0.9 * cfg->mem_busy * cap;
	pl->mem_busy = pl->mem_short || ws >= cfg->mem_busy * cap ||
		       head <= (1 - cfg->mem_busy) * cap || (was_busy && head <= exit_busy);
}

/* The sum of the weights of the present tenants at or above their share. */
static double weight_above_share(const struct plan_config *cfg, size_t n,
				 const struct plan_tenant_in *in, const struct plan *pl)
{
	int r = fs_resources_find(&cfg->res, FS_RES_MEMORY);
	double w = 0;

	for (size_t i = 0; r >= 0 && i < n; i++)
		if (in[i].present && in[i].usage[r] >= pl->t[i].entitlement * cfg->res.capacity[r])
			w += in[i].weight;
	return w;
}

/* A memory value within the dead band of the previous one keeps it. */
static uint64_t mem_sticky(const struct plan_config *cfg, uint64_t neu, uint64_t old)
{
	if (neu == FS_VALUE_MAX || old == FS_VALUE_MAX || old == 0)
		return neu;
	return fabs((double)neu - (double)old) <= cfg->deadband * (double)old ? old : neu;
}

/* memory.low, memory.high and memory.max with the rules of plan.h
 * ("Memory"). prev: this tenant in the previous plan (NULL: none). */
static void set_memory(const struct plan_config *cfg, const struct plan *pl, double w_above,
		       const struct plan_tenant_in *in, const struct plan_tenant *prev,
		       struct plan_tenant *t)
{
	int r = fs_resources_find(&cfg->res, FS_RES_MEMORY);
	uint64_t margin = to_u64(pl->mem_max_margin), share, high, mx, floor, ceil;
	double cap, usage, lim, guard, w;
	const uint64_t prev_high = prev ? prev->mem_high : FS_VALUE_MAX;
	const uint64_t prev_max = prev ? prev->mem_max : FS_VALUE_MAX;

	t->mem_high = t->mem_max = t->mem_low = t->mem_share = FS_VALUE_MAX;
	t->mem_why = t->mem_max_why = "no memory resource";
	if (r < 0)
		return;
	cap = cfg->res.capacity[r];
	usage = in->usage[r] > 0 ? in->usage[r] : 0;
	share = page_down(to_u64(t->entitlement * cap));
	if (in->max[r] >= 0 && (double)share > in->max[r])
		share = page_down(to_u64(in->max[r]));
	/* Every tenant's share moves when one joins or leaves: within the
	 * dead band the protection in force stays (a login among 10,000
	 * users rewrote every tenant's memory.low). */
	t->mem_share = share;
	t->mem_low = mem_sticky(cfg, share, prev ? prev->mem_low : FS_VALUE_MAX);
	if (in->max[r] >= 0 && (double)t->mem_low > in->max[r])
		t->mem_low = share;

	/* memory.high */
	lim = t->limit[r]; /* the allocation's limit with the configured caps */
	t->mem_why = !isfinite(lim)			    ? "not busy"
		     : in->max[r] >= 0 && lim >= in->max[r] ? "configured max"
							    : "fair allocation";
	if (pl->mem_busy) {
		w = in->weight > 0 ? in->weight : 0;
		if (usage < (double)share)
			w_above += w; /* it would grow into its share first */
		guard = usage + cfg->mem_grow * fmax(0.0, pl->mem_headroom) *
				    (w_above > 0 ? w / w_above : 1.0);
		if (guard < lim) {
			lim = guard;
			t->mem_why = "busy: growth guard";
		}
	}
	if (pl->mem_short && usage > (double)share) {
		/* Step down from the value in force (its usage when none),
		 * towards share. */
		double from = prev_high != FS_VALUE_MAX ? (double)prev_high : usage;

		from = fmin(from, lim);
		lim = fmax((double)share, from * (1 - cfg->mem_high_step));
		t->mem_why = lim <= (double)share ? "short: held at share" : "short: stepping down";
	} else if (pl->mem_short && lim > (double)share) {
		/* Short, at or below its share: it may grow to its share, not
		 * past it. The guard would lend it part of the headroom, and a
		 * hog whose worker was just killed (usage a moment below share,
		 * the freed memory counted as headroom) took it back at once
		 * and was stepped down again: a cycle of 5-10 % above share. */
		lim = (double)share;
		t->mem_why = "short: its share";
	}
	if (!(lim >= (double)share)) {
		lim = (double)share;
		if (pl->mem_busy)
			t->mem_why = "busy: its share";
	}
	if (in->max[r] >= 0 && in->max[r] < lim) {
		lim = in->max[r];
		t->mem_why = "configured max";
	}
	if (in->min[r] >= 0 && in->min[r] > lim) {
		lim = in->min[r];
		t->mem_why = "configured min";
	}
	high = lim >= cap ? FS_VALUE_MAX : page_down(to_u64(lim));
	if (high != FS_VALUE_MAX && high < PLAN_PAGE)
		high = PLAN_PAGE;
	/* jitter stays put; reaching the share (the target of a step down) does
	 * not; held at its share, it stays while the share moves within the
	 * band (a login moves every share), never below the share */
	if (high != share || (prev && prev_high == prev->mem_share && prev_high >= share))
		high = mem_sticky(cfg, high, prev_high);
	t->mem_high = high; /* limit[r] follows in limits_as_written() */

	/* memory.max: the backstop above memory.high while memory is busy;
	 * never below usage + margin */
	if (!pl->mem_busy || high == FS_VALUE_MAX) {
		t->mem_max_why = pl->mem_busy ? "memory.high is max" : "not busy";
		return;
	}
	/* Between max(floor = usage + margin, memory.high + margin), never
	 * below, and ceil = memory.high + mem_margin (the backstop), the value
	 * in force stays: the margin follows MemAvailable, memory.max need not. */
	floor = page_up(to_u64(usage) + margin);
	ceil = page_up(high + cfg->mem_margin);
	mx = prev_max != FS_VALUE_MAX ? prev_max : ceil;
	t->mem_max_why = "busy: backstop at memory.high + margin";
	if (mx > ceil && mx > floor) {
		/* lowering memory.max quickly risks an OOM kill: at most a step */
		uint64_t step = page_up(to_u64((double)mx * (1.0 - cfg->mem_step_down)));

		mx = ceil > floor ? ceil : floor;
		if (step > mx) {
			mx = step;
			t->mem_max_why = "stepping down";
		}
	}
	if (mx < floor || mx < page_up(high + margin)) {
		if (prev_max != FS_VALUE_MAX && pl->mem_critical && prev_max >= high) {
			/* It grew into its margin and the host has nothing left:
			 * no more (an OOM kill in its own cgroup rather than the
			 * host's OOM killer picking whoever is largest, maybe a
			 * tenant within its share). The writer keeps a value
			 * already in force. */
			t->mem_max = prev_max;
			t->mem_max_why = "host critical: not raised";
			return;
		}
		mx = ceil > floor ? ceil : floor;
		if (floor > ceil)
			t->mem_max_why = "above memory.high: usage + margin";
	}
	/* jitter stays put, never below usage + margin */
	t->mem_max = mem_sticky(cfg, mx, prev_max);
	if (t->mem_max < floor)
		t->mem_max = mx;
}

/* limit[] as the files say it, after the dead band, the floors, the
 * lifts of weights mode and "max" at capacity: status, explain and the
 * log show what the kernel enforces, not an intermediate (issue 20: "limit
 * cpu 2.00 cores" next to cpu.max "max 100000"). */
static void limits_as_written(const struct plan_config *cfg, struct plan_tenant *t)
{
	for (size_t r = 0; r < cfg->res.n; r++) {
		enum fs_res_kind k = cfg->res.kind[r];

		if (k == FS_RES_CPU)
			t->limit[r] = t->cpu_quota_usec == FS_VALUE_MAX
					  ? INFINITY
					  : (double)t->cpu_quota_usec / (double)t->cpu_period_usec;
		else if (k == FS_RES_MEMORY)
			t->limit[r] = t->mem_high == FS_VALUE_MAX ? INFINITY : (double)t->mem_high;
		else if (fs_res_is_io(k))
			t->limit[r] = t->io[r] == FS_VALUE_MAX ? INFINITY : (double)t->io[r];
	}
}

/* A bottleneck for the mode and the minimal-gap rule (plan.h "Modes"). */
static bool is_bottleneck(const struct plan *pl, size_t r)
{
	return pl->saturated[r] || pl->busy[r];
}

static size_t list_saturated(const struct plan_config *cfg, const struct plan *pl, char *buf,
			     size_t len)
{
	size_t used = 0, count = 0;

	buf[0] = '\0';
	for (size_t r = 0; r < cfg->res.n; r++) {
		if (!is_bottleneck(pl, r))
			continue;
		int w =
		    snprintf(buf + used, len - used, "%s%s", count ? ", " : "", cfg->res.name[r]);
		count++;
		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
	}
	return count;
}

/* Bottlenecks for the mode decision: the directions (and IOPS) of one disk
 * are one device that io.max limits independently, so they count once. */
static size_t count_bottlenecks(const struct plan_config *cfg, const struct plan *pl)
{
	size_t n = 0;

	for (size_t r = 0; r < cfg->res.n; r++) {
		bool seen = false;

		if (!is_bottleneck(pl, r))
			continue;
		for (size_t q = 0; q < r && fs_res_is_io(cfg->res.kind[r]); q++)
			seen |= is_bottleneck(pl, q) && fs_res_is_io(cfg->res.kind[q]) &&
				cfg->res.disk[q] == cfg->res.disk[r];
		n += !seen;
	}
	return n;
}

static void choose_mode(const struct plan_config *cfg, const struct plan *prev, struct plan *pl)
{
	char names[PLAN_REASON_MAX / 2];
	size_t n;
	const char *why;

	list_saturated(cfg, pl, names, sizeof(names));
	n = pl->n_bottlenecks = count_bottlenecks(cfg, pl);
	switch (cfg->enforce) {
	case FS_ENFORCE_OFF:
		pl->mode = PLAN_MODE_OFF;
		why = "enforce=off";
		break;
	case FS_ENFORCE_LIMITS:
		pl->mode = PLAN_MODE_LIMITS;
		why = "enforce=limits";
		break;
	case FS_ENFORCE_WEIGHTS:
		pl->mode = PLAN_MODE_WEIGHTS;
		why = "enforce=weights";
		break;
	default:
		/* Hard limits on every bottleneck, however many (plan.h "Modes"). */
		pl->mode = PLAN_MODE_LIMITS;
		why = "enforce=auto: hard limits";
		break;
	}
	snprintf(pl->mode_reason, sizeof(pl->mode_reason), "%s; %zu bottleneck%s%s%s%s", why, n,
		 n == 1 ? "" : "s", n ? " (" : "", names, n ? ")" : "");
	pl->mode_changed = !prev || prev->mode != pl->mode;
}

/* Minimal-gap priorities over the bottlenecks -> weights. */
static int set_weights(const struct plan_config *cfg, size_t n, const struct plan_tenant_in *in,
		       const struct plan_problem *pp, struct plan *pl, struct fs_error *err)
{
	size_t np = pp->p.n_tenants, m = cfg->res.n;
	double *entitled = NULL, *consumed = NULL, *prio = NULL;
	int *gap_res = NULL, ret = 0;
	bool *promoted = NULL, bottleneck[FS_MAX_RES];

	for (size_t i = 0; i < n; i++) {
		double base = (double)cfg->base_weight * in[i].weight;

		pl->t[i].cpu_weight = pl->t[i].io_weight = clamp_weight(base);
		pl->t[i].gap_resource = FS_NO_RESOURCE;
	}
	if (!np || !pl->n_bottlenecks)
		return 0;
	entitled = calloc(np * m, sizeof(double));
	consumed = calloc(np * m, sizeof(double));
	prio = calloc(np, sizeof(double));
	gap_res = calloc(np, sizeof(int));
	promoted = calloc(np, sizeof(bool));
	if (!entitled || !consumed || !prio || !gap_res || !promoted) {
		snprintf(err->msg, sizeof(err->msg), "out of memory for the minimal-gap rule");
		ret = -ENOMEM;
		goto out;
	}
	for (size_t r = 0; r < m; r++)
		bottleneck[r] = is_bottleneck(pl, r);
	for (size_t j = 0; j < np; j++) {
		const struct plan_tenant_in *ti = &in[pp->index[j]];

		for (size_t r = 0; r < m; r++) {
			double c = ti->usage[r] / cfg->res.capacity[r];

			entitled[j * m + r] = pl->t[pp->index[j]].entitlement;
			consumed[j * m + r] = c > 0 ? fmin(c, 1.0) : 0.0;
		}
	}
	ret = fs_minimal_gap(np, m, entitled, consumed, bottleneck, prio, gap_res, promoted, err);
	if (ret < 0)
		goto out;
	for (size_t j = 0; j < np; j++) {
		struct plan_tenant *t = &pl->t[pp->index[j]];
		double base = (double)cfg->base_weight * in[pp->index[j]].weight;

		t->gap = prio[j];
		t->gap_resource = gap_res[j];
		t->promoted = promoted[j];
		if (pl->mode == PLAN_MODE_WEIGHTS && promoted[j] && prio[j] > 0)
			t->cpu_weight = t->io_weight =
			    clamp_weight(base * (1.0 + cfg->gap_gain * prio[j]));
	}
out:
	free(entitled);
	free(consumed);
	free(prio);
	free(gap_res);
	free(promoted);
	return ret;
}

int plan_compute(const struct plan_config *cfg, size_t n, const struct plan_tenant_in *in,
		 const struct plan *prev, struct plan *out, struct fs_error *err)
{
	return plan_compute_host(cfg, NULL, n, in, prev, out, err);
}

int plan_compute_host(const struct plan_config *cfg, const struct plan_host *host, size_t n,
		      const struct plan_tenant_in *in, const struct plan *prev, struct plan *out,
		      struct fs_error *err)
{
	memset(out, 0, sizeof(*out));
	return plan_recompute(cfg, host, n, in, prev, out, err);
}

/* out->t for n tenants, all zero: the array out held before when it is large
 * enough (no allocation and no fresh pages to fault in every period). */
static int tenants_for(struct plan *out, size_t n, struct plan_tenant *t, size_t cap)
{
	if (!t || cap < n) {
		free(t);
		cap = n ? n : 1;
		t = calloc(cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
	} else {
		memset(t, 0, n * sizeof(*t));
	}
	out->t = t;
	out->cap = cap;
	return 0;
}

/*
 * The previous plan's solution as a warm start (policy/warm.c): its
 * problem's tenants in order, with their names, which fs_solve_warm
 * compares with this period's (any change: a cold solve). A start is only
 * a start -- whatever rule or resources produced it, the result is this
 * period's solution -- so the rule is taken as this period's. x and names
 * are allocated here ([np]); free both, also on error.
 */
static int plan_warm_start(const struct plan_config *cfg, const struct plan *prev,
			   struct fs_warm_start *ws, double **x, const char ***names)
{
	size_t np = 0;

	*x = NULL;
	*names = NULL;
	*ws = (struct fs_warm_start){0};
	if (!prev || !prev->n_tenants)
		return 0;
	*x = calloc(prev->n_tenants, sizeof(double));
	*names = calloc(prev->n_tenants, sizeof(char *));
	if (!*x || !*names)
		return -ENOMEM;
	for (size_t i = 0; i < prev->n_tenants; i++)
		if (prev->t[i].in_problem) {
			(*x)[np] = prev->t[i].x;
			(*names)[np++] = prev->t[i].name;
		}
	*ws = (struct fs_warm_start){.n_tenants = np,
				     .n_pools = 1,
				     .n_resources = cfg->res.n,
				     .rule = cfg->rule,
				     .x = *x,
				     .tenant_names = *names};
	return 0;
}

int plan_recompute(const struct plan_config *cfg, const struct plan_host *host, size_t n,
		   const struct plan_tenant_in *in, const struct plan *prev, struct plan *out,
		   struct fs_error *err)
{
	struct plan_tenant *old_t = out->t;
	size_t old_cap = out->cap;
	struct plan_problem pp = {0};
	struct fs_solution sol = {0};
	struct fs_options opt = {.alpha = INFINITY};
	double used[FS_MAX_RES] = {0}, leftover[FS_MAX_RES] = {0}, use[FS_MAX_RES] = {0};
	double wsum = 0, w_above, level;
	size_t m = cfg->res.n;
	int ret;

	memset(out, 0, sizeof(*out));
	out->guard = 1;
	if (m == 0 || m > FS_MAX_RES) {
		snprintf(err->msg, sizeof(err->msg), "%zu resources (1..%d supported)", m,
			 FS_MAX_RES);
		out->t = old_t; /* still the caller's to reuse or free */
		out->cap = old_cap;
		return -EINVAL;
	}
	if (tenants_for(out, n, old_t, old_cap) < 0) {
		snprintf(err->msg, sizeof(err->msg), "out of memory for %zu tenants", n);
		return -ENOMEM;
	}
	out->n_tenants = n;
	ret = plan_problem_build(cfg, n, in, &pp);
	if (ret < 0) {
		snprintf(err->msg, sizeof(err->msg), "out of memory for the policy problem");
		goto out;
	}
	if (pp.p.n_tenants) {
		struct fs_warm_start ws;
		double *warm_x;
		const char **warm_names;

		ret = plan_warm_start(cfg, prev, &ws, &warm_x, &warm_names);
		if (ret == 0)
			ret = fs_solve_warm(&pp.p, cfg->rule, &opt, &ws, &sol, err);
		else
			snprintf(err->msg, sizeof(err->msg), "out of memory for the warm start");
		free(warm_x);
		free(warm_names);
		if (ret < 0)
			goto out;
		out->iterations = sol.iterations;
		out->guard = sol.guard;
		out->warm = sol.warm;
	}

	for (size_t i = 0; i < n; i++) {
		struct plan_tenant *t = &out->t[i];

		snprintf(t->name, sizeof(t->name), "%s", in[i].name ? in[i].name : "");
		t->bottleneck = FS_NO_RESOURCE;
		t->gap_resource = FS_NO_RESOURCE;
		for (size_t r = 0; r < FS_MAX_RES; r++) {
			t->io[r] = t->io_split[r][0] = t->io_split[r][1] = FS_VALUE_MAX;
			t->io_read_share[r] = NAN;
		}
	}
	for (size_t j = 0; j < pp.p.n_tenants; j++) {
		struct plan_tenant *t = &out->t[pp.index[j]];

		t->in_problem = true;
		t->x = cfg->given_x ? fmin(1, fmax(0, cfg->given_x[pp.index[j]])) : sol.x[j];
		t->share = sol.tenant[j].share;
		t->bottleneck = sol.bottleneck[j];
		wsum += pp.weight[j];
		for (size_t r = 0; r < m; r++) {
			t->alloc[r] = t->x * pp.demand[j * m + r];
			used[r] += t->alloc[r];
		}
	}
	for (size_t i = 0; i < n; i++) {
		double w = out->t[i].in_problem ? wsum : wsum + in[i].weight;

		out->t[i].entitlement = w > 0 ? in[i].weight / w : 0;
		for (size_t r = 0; r < m && in[i].present; r++)
			use[r] += fmax(0.0, in[i].usage[r]);
	}
	for (size_t r = 0; r < m; r++) {
		/* Not memory: full of page cache on any long-running host, and its
		 * limits are the same in both modes. */
		out->busy[r] = (cfg->res.kind[r] != FS_RES_MEMORY &&
				use[r] >= cfg->busy * cfg->res.capacity[r]) ||
			       (fs_res_is_io(cfg->res.kind[r]) && cfg->contended[r]);
		out->saturated[r] = used[r] >= cfg->saturated * cfg->res.capacity[r];
		out->n_saturated += out->saturated[r];
		leftover[r] = fmax(0.0, cfg->res.capacity[r] - used[r]);
	}
	choose_mode(cfg, prev, out);
	memory_state(cfg, host, n, in, prev, out);
	w_above = weight_above_share(cfg, n, in, out);
	level = cpu_level(cfg, out);

	for (size_t i = 0; i < n; i++) {
		struct plan_tenant *t = &out->t[i];

		set_limits(cfg, &in[i], out, leftover, wsum > 0 ? wsum : 1, level, t);
		const struct plan_tenant *pt = plan_find(prev, i, t->name);

		set_cpu_io(cfg, &in[i], out->mode, prev && prev->mode == out->mode ? pt : NULL, t);
		set_memory(cfg, out, w_above, &in[i], pt, t);
		limits_as_written(cfg, t);
		t->write = in[i].present && out->mode != PLAN_MODE_OFF;
	}
	ret = set_weights(cfg, n, in, &pp, out, err);
out:
	fs_solution_free(&sol);
	plan_problem_free(&pp);
	return ret;
}

void plan_fmt_cpu_max(const struct plan_tenant *t, char *buf, size_t len)
{
	struct fs_limits l = {.set = FS_LIM_CPU_MAX,
			      .cpu_quota_us = t->cpu_quota_usec,
			      .cpu_period_us = t->cpu_period_usec};

	if (fs_cgfile_format(FS_CGF_CPU_MAX, &l, 0, buf, len) < 0 && len)
		buf[0] = '\0';
}

bool plan_io_max(const struct plan_config *cfg, const struct plan_tenant *t, int disk,
		 struct fs_io_limit *io, unsigned *keys)
{
	uint64_t *v[FS_IO__COUNT] = {&io->rbps, &io->wbps, &io->riops, &io->wiops};

	*io = (struct fs_io_limit){{0, 0}, FS_VALUE_MAX, FS_VALUE_MAX, FS_VALUE_MAX, FS_VALUE_MAX};
	*keys = 0;
	for (size_t r = 0; r < cfg->res.n; r++) {
		enum fs_res_kind kind = cfg->res.kind[r];
		unsigned set = fs_res_io_keys(kind);
		int part = 0;

		if (!set || cfg->res.disk[r] != disk)
			continue;
		io->dev = cfg->res.dev[r];
		*keys |= set;
		/* a direction sets its key; a shared budget its two parts, in
		 * key order (read, write) */
		for (int k = 0; k < FS_IO__COUNT; k++)
			if (set & 1u << k)
				*v[k] = fs_res_io_shared(kind) ? t->io_split[r][part++] : t->io[r];
	}
	return *keys != 0;
}

bool plan_fmt_io_max(const struct plan_config *cfg, const struct plan_tenant *t, int disk,
		     char *buf, size_t len)
{
	struct fs_io_limit io;
	unsigned keys;

	if (len)
		buf[0] = '\0';
	if (!plan_io_max(cfg, t, disk, &io, &keys))
		return false;
	fs_fmt_io_max(&io, keys, buf, len);
	return true;
}

void plan_fmt_summary(const struct plan_config *cfg, const struct plan *p, size_t i, char *buf,
		      size_t len)
{
	const struct plan_tenant *t = &p->t[i];
	char cpu[32], mh[24], mm[24], ml[24];
	size_t used;
	int w;

	plan_fmt_cpu_max(t, cpu, sizeof(cpu));
	fs_fmt_value(t->mem_high, mh, sizeof(mh));
	fs_fmt_value(t->mem_max, mm, sizeof(mm));
	fs_fmt_value(t->mem_low, ml, sizeof(ml));
	w = snprintf(buf, len,
		     "tenant=%s mode=%s x=%.4f share=%.4f bottleneck=%s gap=%.4f write=%d "
		     "cpu.max=\"%s\" cpu.weight=%llu io.weight=%llu memory.high=%s memory.max=%s",
		     t->name, plan_mode_name(p->mode), t->x, t->share,
		     t->bottleneck >= 0 ? cfg->res.name[t->bottleneck] : "-", t->gap, t->write, cpu,
		     (unsigned long long)t->cpu_weight, (unsigned long long)t->io_weight, mh, mm);
	/* memory.low and why the memory values are what they are (issue 14),
	 * only with a memory resource */
	if (fs_resources_find(&cfg->res, FS_RES_MEMORY) >= 0 && w > 0 && (size_t)w < len)
		w += snprintf(buf + w, len - (size_t)w,
			      " memory.low=%s mem.why=\"%s\" mem.max.why=\"%s\"", ml,
			      t->mem_why ? t->mem_why : "-", t->mem_max_why ? t->mem_max_why : "-");
	used = w > 0 && (size_t)w < len ? (size_t)w : len - 1;
	for (int d = 0; used < len - 1; d++) {
		char line[PLAN_IO_LINE_MAX];
		bool has_disk = false;

		for (size_t r = 0; r < cfg->res.n; r++)
			has_disk |= cfg->res.disk[r] == d;
		if (!has_disk)
			break;
		if (!plan_fmt_io_max(cfg, t, d, line, sizeof(line)))
			continue;
		w = snprintf(buf + used, len - used, " io.max=\"%s\"", line);
		used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
	}
	for (size_t r = 0; r < cfg->res.n && used < len - 1; r++) {
		char a[24], l[24];

		fs_res_fmt_amount(cfg->res.kind[r], t->alloc[r], a, sizeof(a));
		fs_res_fmt_amount(cfg->res.kind[r], t->limit[r], l, sizeof(l));
		w = snprintf(buf + used, len - used, " %s=%s/%s", cfg->res.name[r], a, l);
		used = w > 0 && (size_t)w < len - used ? used + (size_t)w : len - 1;
	}
}
