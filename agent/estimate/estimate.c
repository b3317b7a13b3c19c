/* SPDX-License-Identifier: MIT */
/* Demand estimation (see estimate.h for the rules). Pure: no I/O. */
#include "estimate.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void est_config_default(struct est_config *cfg)
{
	cfg->probe_step = 1.5;
	cfg->probe_max = 4.0;
	cfg->decay = 0.5;
	cfg->psi_threshold = 10.0;
	cfg->io_limit_ratio = 0.95;
	cfg->floor_share = 1e-3;
	cfg->floors_total = 0.01;
	cfg->n_tenants = 0;
	cfg->wait_min = 0.05;
	cfg->follow_share = 0.8;
	cfg->follow_grace = 2;
	cfg->refault_share = 0.01;
	cfg->cpu_busy = FS_RES_BUSY_SHARE;
	cfg->trim_step = 0.8;
	cfg->trim_pace = 4;
	cfg->trim_hold = 20;
	cfg->trim_floor = 0.5;
	cfg->io_gap_max = 3;
}

double est_floor_share(const struct est_config *cfg)
{
	const double spread = cfg->n_tenants ? cfg->floors_total / (double)cfg->n_tenants : 1;

	return cfg->floor_share < spread ? cfg->floor_share : spread;
}

void est_sample_init(struct est_sample *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t r = 0; r < FS_MAX_RES; r++) {
		s->limit[r] = INFINITY;
		s->alloc[r] = NAN;
	}
	s->psi_cpu = s->psi_mem = s->psi_io = s->cpu_wait = NAN;
	s->mem_refault_bytes = s->cpu_throttled_us = s->cpu_total = s->x = NAN;
}

void est_state_init(struct est_state *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t r = 0; r < FS_MAX_RES; r++) {
		s->probe_r[r] = 1.0;
		s->since_limit[r] = UCHAR_MAX;
	}
	s->since_trim = UCHAR_MAX;
}

double est_probe(const struct est_state *s)
{
	double p = 1.0;

	for (size_t r = 0; r < FS_MAX_RES; r++)
		p = fmax(p, s->probe_r[r]);
	return p;
}

static bool psi_high(const struct est_config *cfg, double avg10)
{
	/* NaN compares false: unknown PSI never holds a tenant back. */
	return cfg->psi_threshold > 0 && avg10 > cfg->psi_threshold;
}

/* cpu.max throttled the tenant in the period (estimate.h). NaN compares false. */
static bool cpu_throttled(const struct est_sample *s)
{
	return s->cpu_throttled_delta > 0 || s->cpu_throttled_us > 0;
}

/* The tenants together use at least cpu_busy of the CPU, or nobody knows:
 * only then is runqueue wait (or PSI cpu) contention among them. */
static bool cpu_contended(const struct est_config *cfg, const struct est_sample *s, double cap)
{
	return !(s->cpu_total < cfg->cpu_busy * cap);
}

bool est_at_io_limit(const struct est_config *cfg, double rate, double limit)
{
	return isfinite(limit) && limit > 0 && rate >= cfg->io_limit_ratio * limit;
}

/* Some io resource has flag set: held (held_back's verdicts: at its
 * io.max, or on a contended disk; a stalled disk keeps last period's), or
 * stalled this period (contention.h). */
static bool any_io(const struct fs_resources *res, const bool *flag)
{
	for (size_t r = 0; r < res->n; r++)
		if (fs_res_is_io(res->kind[r]) && flag[r])
			return true;
	return false;
}

/* Some io resource it was held on last period runs below that now: under
 * its io.max (est_at_io_limit), or, without a limit of ours, no longer
 * held on the contended disk. A CPU trim step that shows as this bit. */
static bool io_fell_short(const struct fs_resources *res, const struct est_config *cfg,
			  const struct est_sample *s, const struct est_state *prev,
			  const bool *held)
{
	for (size_t r = 0; r < res->n; r++) {
		if (!fs_res_is_io(res->kind[r]) || s->stalled[r] || !prev->held[r])
			continue;
		if (isfinite(s->limit[r]) ? !est_at_io_limit(cfg, s->usage[r], s->limit[r])
					  : !held[r])
			return true;
	}
	return false;
}

/* Where the CPU trim (estimate.h) can hold: it is on, the tenants keep
 * the CPU busy, its IO is held back and its runqueue wait is known. On an
 * idle CPU a trimmed estimate changes no cap and only has to climb back
 * later. */
static bool trim_context(const struct fs_resources *res, const struct est_config *cfg,
			 const struct est_sample *s, const bool *held)
{
	int c = fs_resources_find(res, FS_RES_CPU);

	return cfg->trim_step < 1 && c >= 0 && !isnan(s->cpu_wait) &&
	       cpu_contended(cfg, s, res->capacity[c]) && any_io(res, held);
}

/* The CPU trim's condition: its threads hardly wait for the CPU there,
 * throttled or not. */
static bool cpu_trimmable(const struct fs_resources *res, const struct est_config *cfg,
			  const struct est_sample *s, const bool *held)
{
	return trim_context(res, cfg, s, held) && s->cpu_wait < cfg->wait_min;
}

/* A gap in a held tenant's IO on r (estimate.h, EST_IO_GAP): on a
 * contended disk, below the io.max of ours in force, at it within the last
 * io_gap_max periods. */
static bool io_gap(const struct est_config *cfg, const struct est_sample *s,
		   const struct est_state *prev, size_t r)
{
	return prev && s->contended[r] && isfinite(s->limit[r]) &&
	       !est_at_io_limit(cfg, s->usage[r], s->limit[r]) &&
	       prev->since_limit[r] < cfg->io_gap_max;
}

/* Which resources hold the tenant back, and why. */
static unsigned held_back(const struct fs_resources *res, const struct est_config *cfg,
			  const struct est_sample *s, const struct est_state *prev,
			  struct est_state *out)
{
	bool *held = out->held, at_limit;
	unsigned reasons = 0;

	for (size_t r = 0; r < res->n; r++) {
		held[r] = false;
		switch (res->kind[r]) {
		case FS_RES_CPU:
			/* throttled: after the loop (the CPU trim needs the io
			 * resources' verdicts) */
			/* PSI cpu is a proxy for runqueue wait: once the wait itself
			 * is measured it sets the CPU demand (est_update) instead of
			 * probing every resource. Like the wait, it is contention
			 * only on a CPU the tenants keep busy. */
			if (isnan(s->cpu_wait) && psi_high(cfg, s->psi_cpu) &&
			    cpu_contended(cfg, s, res->capacity[r])) {
				held[r] = true;
				reasons |= EST_PSI_CPU;
			}
			break;
		case FS_RES_MEMORY:
			if (s->mem_high_events_delta > 0) {
				held[r] = true;
				reasons |= EST_MEM_HIGH;
			}
			if (s->mem_max_events_delta > 0) {
				held[r] = true;
				reasons |= EST_MEM_MAX;
			}
			/* Usage alone never shows unmet memory demand (it cannot
			 * exceed what the tenant got); refaults do: pages it
			 * still needed were evicted. NaN (unknown) compares false. */
			if (cfg->refault_share > 0 && s->usage[r] > 0 &&
			    s->mem_refault_bytes >= cfg->refault_share * s->usage[r]) {
				held[r] = true;
				reasons |= EST_MEM_REFAULT;
			}
			if (psi_high(cfg, s->psi_mem)) {
				held[r] = true;
				reasons |= EST_PSI_MEM;
			}
			break;
		case FS_RES_IO_RBPS:
		case FS_RES_IO_WBPS:
		case FS_RES_IO_RIOPS:
		case FS_RES_IO_WIOPS:
		case FS_RES_IO_BPS:
		case FS_RES_IO_IOPS:
			at_limit = est_at_io_limit(cfg, s->usage[r], s->limit[r]);
			if (at_limit)
				out->since_limit[r] = 0;
			else if (prev && prev->since_limit[r] < UCHAR_MAX)
				out->since_limit[r] = prev->since_limit[r] + 1u;
			if (prev && (s->stalled[r] || io_gap(cfg, s, prev, r))) {
				/* kept as it was (est_update); "why" stays known */
				held[r] = prev->held[r];
				out->lag[r] = prev->lag[r];
				out->kept[r] = true;
				reasons |= s->stalled[r] ? EST_IO_STALLED : EST_IO_GAP;
				break;
			}
			if (at_limit) {
				held[r] = true;
				reasons |= EST_IO_LIMIT;
			} else if (s->contended[r] &&
				   s->usage[r] >= FS_RES_USER_SHARE * res->capacity[r]) {
				/* NaN alloc (none yet) compares false: following. */
				bool lags = s->usage[r] < cfg->follow_share * s->alloc[r];
				unsigned lag = lags && prev ? prev->lag[r] + 1u : 0u;

				if (!lags || (prev && prev->held[r] && lag <= cfg->follow_grace)) {
					held[r] = true;
					reasons |= EST_IO_CONTENDED;
					out->lag[r] = (unsigned char)lag;
				}
			}
			/* io PSI is per cgroup, not per disk: blame the io resources in use. */
			if (psi_high(cfg, s->psi_io) && s->usage[r] > 0) {
				held[r] = true;
				reasons |= EST_PSI_IO;
			}
			break;
		case FS_RES_NET:
			break; /* no kernel signal for "held back" on net yet */
		}
	}
	/* throttled while its IO takes all we allow and its threads hardly
	 * wait: not the CPU (the CPU trim) */
	const int c = fs_resources_find(res, FS_RES_CPU);

	if (c >= 0 && cpu_throttled(s) && !cpu_trimmable(res, cfg, s, held)) {
		held[c] = true;
		reasons |= EST_CPU_THROTTLED;
	}
	return reasons;
}

/* The CPU trim this period (estimate.h). The tenant is in it while
 * prev->reasons has EST_CPU_TRIM, and stays in it while the tenants keep
 * the CPU busy, its IO is held and its wait is known. *step: its CPU
 * demand steps down by trim_step from the previous estimate, then
 * trim_pace periods pass before the next; *keep: between steps, the
 * previous estimate, whatever its use (a cpu.max write refills a whole
 * quota, so a period's use can exceed the cap, or fall short); *bite: throttled
 * within TRIM_BITE_PERIODS of a step with its threads now waiting, or
 * with its IO fallen short of where it was held: the step bit into what it
 * needs, one step back up, then trim_hold periods without a step. The
 * hold outlasts the trim: a bite that ends it (its IO no longer held)
 * must not meet a fresh step when the IO is back. A wait later than the
 * window is kept as noise (one period's wait at a cap it lived with for
 * a while). */
#define TRIM_BITE_PERIODS 6 /* a step reaches cpu.max and shows a few periods late */

static void update_trim(const struct fs_resources *res, const struct est_config *cfg,
			const struct est_sample *s, const struct est_state *prev,
			struct est_state *out, bool *step, bool *keep, bool *bite)
{
	const bool in = prev && (prev->reasons & EST_CPU_TRIM);
	const bool ctx = prev && trim_context(res, cfg, s, out->held);
	unsigned hold = prev ? prev->trim_hold : 0;
	unsigned since = in && prev->since_trim < UCHAR_MAX ? prev->since_trim + 1u : UCHAR_MAX;
	const bool waits = s->cpu_wait >= cfg->wait_min; /* NaN: false */
	const bool stall = any_io(res, s->stalled);

	*step = *keep = *bite = false;
	if (in && !stall && since <= TRIM_BITE_PERIODS && cpu_throttled(s) &&
	    (waits || io_fell_short(res, cfg, s, prev, out->held))) {
		*bite = true;
		hold = cfg->trim_hold;
		since = UCHAR_MAX; /* the next bite needs a step first */
	} else {
		/* a stalled disk says nothing of its need: kept as it was (a
		 * trim that ended there had its CPU probed from 0.08 to 0.66
		 * core, e2e-mix) */
		if (in && stall) {
			*keep = true;
		} else if (ctx && !stall && !waits && hold == 0 && since > cfg->trim_pace) {
			*step = true;
			since = 0;
		} else {
			*keep = ctx && in;
		}
		hold -= hold > 0;
	}
	if (*step || *keep || *bite)
		out->reasons |= EST_CPU_TRIM;
	out->trim_hold = (unsigned char)(hold > UCHAR_MAX ? UCHAR_MAX : hold);
	out->since_trim = (unsigned char)(since > UCHAR_MAX ? UCHAR_MAX : since);
}

static double clamp(double v, double lo, double hi)
{
	if (!(v >= lo)) /* also catches NaN */
		return lo;
	return v > hi ? hi : v;
}

void est_update(const struct fs_resources *res, const struct est_config *cfg,
		const double *declared, const struct est_state *prev,
		const struct est_sample *sample, struct est_state *next)
{
	struct est_state out;
	const bool have_prev = prev && prev->initialized;
	unsigned held_periods = have_prev ? prev->held_periods : 0;
	const double floor = est_floor_share(cfg);
	bool step, keep, bite;

	est_state_init(&out);
	out.initialized = true;
	out.reasons = held_back(res, cfg, sample, have_prev ? prev : NULL, &out);
	update_trim(res, cfg, sample, have_prev ? prev : NULL, &out, &step, &keep, &bite);
	out.trim_from = have_prev ? prev->trim_from : 0;
	out.held_periods = out.reasons ? held_periods + 1 : 0;
	for (size_t r = 0; r < res->n; r++) {
		double p = have_prev ? prev->probe_r[r] : 1.0;

		if (out.kept[r]) {
			/* a stalled disk or a gap: the probe stays (held_back) */
		} else if (out.held[r]) {
			p = fmin(cfg->probe_max, fmax(p, 1.0) * cfg->probe_step);
		} else {
			p = 1.0 + (p - 1.0) * cfg->decay;
			if (p < 1.0 + EST_PROBE_EPS)
				p = 1.0;
			else
				out.reasons |= EST_DECAYING;
		}
		out.probe_r[r] = fmax(p, 1.0);
	}
	if (out.reasons & EST_HELD_MASK)
		out.reasons &= ~(unsigned)EST_DECAYING;
	/* the plan holds it: its uses run at x of their need (estimate.h);
	 * NaN x fails the comparison. A gap is its io.max holding it. */
	const bool anchored =
	    (out.reasons & (EST_IO_LIMIT | EST_IO_CONTENDED | EST_CPU_THROTTLED | EST_IO_GAP)) &&
	    sample->x > 0 && sample->x < 1;

	for (size_t r = 0; r < res->n; r++) {
		double cap = res->capacity[r];
		double f = out.probe_r[r], d;

		if (anchored && (res->kind[r] == FS_RES_CPU || fs_res_is_io(res->kind[r])))
			f = fmax(f, 1.0 / sample->x);
		d = clamp(sample->usage[r], 0, INFINITY) * f;
		/* In the CPU trim the estimate is the previous one, stepped or
		 * not: the use follows the cap and the cap the estimate, so any
		 * period's use below the cap (a quota refill landing late,
		 * writeback doing its IO) ratcheted it down between steps and
		 * through a hold, to 0.01 core at 2/3 of the disk (e2e-njc). A
		 * step in a period in which cpu.max did not throttle the tenant
		 * goes down to its use / x when that is lower, by half at most
		 * (decay, below): that use is its own, and 0.8 every 5th
		 * period took too long to bring a writer's 0.3 core estimate to
		 * the 0.1 it used beside a busy host (e2e-mix: its cap, not
		 * used, was denied to the CPU-bound tenant). */
		if (res->kind[r] == FS_RES_CPU && (step || keep || bite)) {
			double trimmed = prev->demand[r] * (step   ? cfg->trim_step
							    : bite ? 1.0 / cfg->trim_step
								   : 1.0);

			/* trim_floor's base (estimate.h): taken when a trim
			 * starts without one, kept until the estimate is back */
			if (!(out.trim_from > 0))
				out.trim_from = prev->demand[r];
			d = step && !cpu_throttled(sample) ? fmin(d, trimmed) : trimmed;
			d = fmax(d, out.trim_from * cfg->trim_floor);
		}

		if (have_prev)
			d = fmax(d, prev->demand[r] * cfg->decay);
		if (out.kept[r])
			d = prev->demand[r];

		if (declared && declared[r] >= 0) {
			d = declared[r];
			out.reasons |= EST_DECLARED;
		} else if (res->kind[r] == FS_RES_CPU && sample->cpu_wait >= cfg->wait_min &&
			   sample->cpu_wait > 0 && !cpu_throttled(sample) &&
			   cpu_contended(cfg, sample, cap)) {
			/* NaN wait (unknown) fails the comparisons: no change.
			 * Throttled: the probe answers (estimate.h). */
			double runnable = clamp(sample->usage[r], 0, INFINITY) + sample->cpu_wait;

			if (runnable > d) {
				d = runnable;
				out.reasons |= EST_CPU_WAIT;
			}
		}
		out.demand[r] = clamp(d, floor * cap, cap);
		if (res->kind[r] == FS_RES_CPU && !(step || keep || bite) &&
		    out.demand[r] >= out.trim_from)
			out.trim_from = 0;
	}
	*next = out;
}

const char *est_reason_str(unsigned reasons, char *buf, size_t len)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
	    {EST_CPU_THROTTLED, "cpu-throttled"},
	    {EST_MEM_HIGH, "memory-high"},
	    {EST_IO_LIMIT, "io-limit"},
	    {EST_PSI_CPU, "psi-cpu"},
	    {EST_PSI_MEM, "psi-memory"},
	    {EST_PSI_IO, "psi-io"},
	    {EST_DECLARED, "declared"},
	    {EST_DECAYING, "decaying"},
	    {EST_CPU_WAIT, "cpu-wait"},
	    {EST_IO_CONTENDED, "io-contended"},
	    {EST_MEM_MAX, "memory-max"},
	    {EST_MEM_REFAULT, "memory-refault"},
	    {EST_IO_STALLED, "io-stalled"},
	    {EST_CPU_TRIM, "cpu-trim"},
	    {EST_IO_GAP, "io-gap"},
	};
	size_t used = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(reasons & names[i].bit))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i].name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "usage");
	return buf;
}
