/* SPDX-License-Identifier: MIT */
/*
 * The adapters between the stages of a period: pure functions from one
 * stage's plain structs to the next one's (no I/O, no globals), so each
 * mapping is tested alone (tests/agent/test_adapt.c):
 *
 *   config  -> estimator and planner settings   fsd_est_config, fsd_plan_config
 *   samples -> contention and estimator input    fsd_io_load, fsd_est_sample,
 *                                                fsd_cpu_total
 *   plan    -> the writer's file values          fsd_limits
 *
 * Time: the estimator and the planner count in periods (they are pure
 * functions of one period): the probe grows by probe_step per held period,
 * estimates decay by `decay` per period, memory.max falls by at most
 * mem_step_down per period and a disk stays contended for `hold` calm
 * periods (contention.h). So
 * their speed in seconds scales with `interval` (at 1 s, the default, the
 * numbers read as per second). Scaling them to seconds was tried and
 * measured: the real-kernel suites, tuned at 200 ms, then missed their
 * convergence windows (e2e-dynamic: 13 > 10 periods; e2e-njc off its NJC
 * point), so that change waits for those suites to be re-tuned in seconds.
 */
#ifndef FAIRSHARE_AGENT_ADAPT_H
#define FAIRSHARE_AGENT_ADAPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_conf.h"
#include "contention.h"
#include "estimate.h"
#include "plan.h"
#include "sample.h"
#include "writer.h"

/* The estimator's settings for c (its defaults: nothing in the config sets them yet). */
void fsd_est_config(const struct fs_conf *c, struct est_config *ec);

/*
 * The planner's settings for c: resources, rule, enforce mode; defaults for
 * the rest. io_weight_works[k]: disk k honours io.weight
 * (a host probe, agent/sys/io_weight.h); NULL = no disk does.
 */
void fsd_plan_config(const struct fs_conf *c, const bool *io_weight_works, struct plan_config *pc);

/* What sample s says was used of resource r, in its unit (0 when unknown);
 * of a shared io budget, reads and writes together. */
double fsd_usage(const struct fs_resources *res, const struct fs_tenant_sample *s, size_t r);

/* The read part of fsd_usage for a shared io budget (plan_tenant_in
 * io_read: the mix its limit is split by); NaN for other resources or when
 * unknown. */
double fsd_io_read(const struct fs_resources *res, const struct fs_tenant_sample *s, size_t r);

/*
 * The disk contention estimate's input from this period's samples (in must
 * be initialised with ct_input_init; the disk queues are filled by the
 * caller): per io resource the tenants' use together, the users (use >=
 * ccfg->user_share of the declared capacity) and whether some tenant's use
 * is at the io.max of ours in force (est_at_io_limit) (prev's value, when
 * limits_written: not dry-run, not released). Tenants absent or on a new
 * baseline do not count. tenants[i].name finds tenant i in prev.
 */
void fsd_io_load(const struct fs_resources *res, const struct ct_config *ccfg,
		 const struct est_config *ecfg, size_t n, const struct fs_conf_tenant *tenants,
		 const struct fs_tenant_sample *samples, const struct plan *prev,
		 bool limits_written, struct ct_input *in);

/*
 * The estimator's input for one tenant. prev: the tenant's previous plan
 * (NULL: none); limits_written: that plan's io.max values are in force (not
 * dry-run, not released), so the estimator can tell "at its limit".
 */
void fsd_est_sample(const struct fs_resources *res, const struct fs_tenant_sample *s,
		    const bool *contended, const struct plan_tenant *prev, bool limits_written,
		    struct est_sample *es);

/* The present tenants' CPU use together, cores (tenants on a new baseline
 * do not count); NaN without a CPU resource. The estimator's cpu_total. */
double fsd_cpu_total(const struct fs_resources *res, size_t n,
		     const struct fs_tenant_sample *samples);

/* The writer's values for one planned tenant: every file the planner sets,
 * one io.max line per disk of pc->res (plan_io_max), memory.low when it has
 * memory. */
void fsd_limits(const struct plan_config *pc, const struct plan_tenant *t, struct fs_limits *l);

#endif /* FAIRSHARE_AGENT_ADAPT_H */
