/* SPDX-License-Identifier: MIT */
/* The adapters between the stages of a period (see adapt.h). Pure. */
#include "adapt.h"

#include <math.h>
#include <string.h>

void fsd_est_config(const struct fs_conf *c, struct est_config *ec)
{
	(void)c;
	est_config_default(ec);
}

void fsd_plan_config(const struct fs_conf *c, const bool *io_weight_works, struct plan_config *pc)
{
	plan_config_default(pc);
	pc->rule = c->agent.policy == FS_CONF_POLICY_NJC ? FS_RULE_NJC : FS_RULE_PSDSF;
	pc->enforce = c->agent.enforce;
	pc->res = c->res;
	pc->interval_usec = c->agent.interval_us;
	for (size_t k = 0; io_weight_works && k < c->n_disks && k < FS_MAX_DISKS; k++)
		pc->io_weight_works[k] = io_weight_works[k];
}

static double nan0(double v)
{
	return isnan(v) ? 0 : v;
}

/* The disk sample of io resource r, NULL when r is no io resource. */
static const struct fs_io_sample *io_of(const struct fs_resources *res,
					const struct fs_tenant_sample *s, size_t r)
{
	int k = res->disk[r];

	return fs_res_is_io(res->kind[r]) && k >= 0 && k < FS_MAX_DISKS ? &s->io[k] : NULL;
}

double fsd_usage(const struct fs_resources *res, const struct fs_tenant_sample *s, size_t r)
{
	const struct fs_io_sample *io = io_of(res, s, r);

	switch (res->kind[r]) {
	case FS_RES_CPU:
		return nan0(s->cpu_cores);
	case FS_RES_MEMORY:
		return nan0(s->mem_current);
	case FS_RES_IO_RBPS:
		return io ? nan0(io->rbps) : 0;
	case FS_RES_IO_WBPS:
		return io ? nan0(io->wbps) : 0;
	case FS_RES_IO_RIOPS:
		return io ? nan0(io->riops) : 0;
	case FS_RES_IO_WIOPS:
		return io ? nan0(io->wiops) : 0;
	case FS_RES_IO_BPS:
		return io ? nan0(io->rbps) + nan0(io->wbps) : 0;
	case FS_RES_IO_IOPS:
		return io ? nan0(io->riops) + nan0(io->wiops) : 0;
	case FS_RES_NET:
		return nan0(s->net_rx_bps) + nan0(s->net_tx_bps);
	}
	return 0;
}

double fsd_io_read(const struct fs_resources *res, const struct fs_tenant_sample *s, size_t r)
{
	const struct fs_io_sample *io = io_of(res, s, r);

	if (!io || !fs_res_io_shared(res->kind[r]))
		return NAN;
	return res->kind[r] == FS_RES_IO_BPS ? io->rbps : io->riops;
}

void fsd_io_load(const struct fs_resources *res, const struct ct_config *ccfg,
		 const struct est_config *ecfg, size_t n, const struct fs_conf_tenant *tenants,
		 const struct fs_tenant_sample *samples, const struct plan *prev,
		 bool limits_written, struct ct_input *in)
{
	for (size_t i = 0; i < n; i++) {
		const struct plan_tenant *pt;

		if (!samples[i].present || samples[i].reset)
			continue;
		pt = limits_written ? plan_find(prev, i, tenants[i].name) : NULL;
		for (size_t r = 0; r < res->n; r++) {
			double u;

			if (!fs_res_is_io(res->kind[r]))
				continue;
			u = fsd_usage(res, &samples[i], r);
			in->total[r] += u;
			in->users[r] += u >= ccfg->user_share * res->capacity[r] && u > 0;
			if (pt && pt->write && pt->io[r] != FS_VALUE_MAX &&
			    est_at_io_limit(ecfg, u, (double)pt->io[r]))
				in->binding[r] = true;
		}
	}
}

void fsd_est_sample(const struct fs_resources *res, const struct fs_tenant_sample *s,
		    const bool *contended, const struct plan_tenant *prev, bool limits_written,
		    struct est_sample *es)
{
	est_sample_init(es);
	for (size_t r = 0; r < res->n; r++) {
		es->usage[r] = fsd_usage(res, s, r);
		es->contended[r] = contended[r];
		/* io.max in force = what we wrote last period */
		if (fs_res_is_io(res->kind[r]) && prev && prev->write && limits_written &&
		    prev->io[r] != FS_VALUE_MAX)
			es->limit[r] = (double)prev->io[r];
		if (fs_res_is_io(res->kind[r]) && prev && prev->in_problem)
			es->alloc[r] = prev->alloc[r];
	}
	es->cpu_throttled_delta = s->cpu_nr_throttled;
	es->cpu_throttled_us = s->cpu_throttled_us;
	es->mem_high_events_delta = s->mem_ev_high;
	es->mem_max_events_delta = s->mem_ev_max;
	es->mem_refault_bytes = s->mem_refault_bytes;
	es->psi_cpu = s->psi_cpu.some_avg10;
	es->psi_mem = s->psi_mem.some_avg10;
	es->psi_io = s->psi_io.some_avg10;
	es->cpu_wait = s->cpu_runq_wait_preempted;
}

double fsd_cpu_total(const struct fs_resources *res, size_t n,
		     const struct fs_tenant_sample *samples)
{
	int r = fs_resources_find(res, FS_RES_CPU);
	double total = 0;

	if (r < 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		if (samples[i].present && !samples[i].reset)
			total += fsd_usage(res, &samples[i], (size_t)r);
	return total;
}

void fsd_limits(const struct plan_config *pc, const struct plan_tenant *t, struct fs_limits *l)
{
	const struct fs_resources *res = &pc->res;
	size_t n_disks = fs_resources_disks(res);

	memset(l, 0, sizeof(*l));
	l->set = FS_LIM_CPU_MAX | FS_LIM_CPU_WEIGHT | FS_LIM_MEM_HIGH | FS_LIM_MEM_MAX |
		 FS_LIM_IO_WEIGHT;
	l->cpu_quota_us = t->cpu_quota_usec;
	l->cpu_period_us = t->cpu_period_usec;
	l->cpu_weight = (unsigned)t->cpu_weight;
	l->io_weight = (unsigned)t->io_weight;
	l->mem_high = t->mem_high;
	l->mem_max = t->mem_max;
	/* memory.low only with a memory resource: without one there is no
	 * share to protect, and an operator's own protection stays */
	if (fs_resources_find(res, FS_RES_MEMORY) >= 0) {
		l->set |= FS_LIM_MEM_LOW;
		l->mem_low = t->mem_low;
	}
	if (!n_disks)
		return;
	l->set |= FS_LIM_IO_MAX;
	l->n_io = n_disks;
	for (size_t k = 0; k < n_disks && k < FS_MAX_DISKS; k++) {
		unsigned keys;

		plan_io_max(pc, t, (int)k, &l->io[k], &keys);
	}
}
