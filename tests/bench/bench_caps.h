/* SPDX-License-Identifier: MIT */
/*
 * Fleet instances for the capped PS-DSF solver (policy/psdsf_caps.h), the
 * rule the fleet leader solves every period (agent/fleet/fleet_model.c):
 * hosts are pools, tenant n may run at most cap[n][k] tasks on host k (its
 * local demand there), it is eligible only where it has work, and it has
 * no max_tasks of its own. Demands and capacities are bench_instance_make's.
 */
#ifndef FAIRSHARE_BENCH_CAPS_H
#define FAIRSHARE_BENCH_CAPS_H

#include "bench_data.h"

struct bench_caps {
	double *cap;	/* [N][K] */
	bool *eligible; /* [N][K] */
};

/*
 * Puts each tenant of in on `hosts` distinct pools (all of them when there
 * are fewer) with a local demand of load x a fair share of the pool times a
 * factor in [0.2, 1.8]: a pool's tenants then ask for about load times its
 * capacity of their dominant resources (load 1: it about fits; 3: three
 * times oversubscribed). Points in->p's eligibility at c's and drops its
 * max_tasks. 0, -EINVAL or -ENOMEM (in untouched then).
 */
int bench_caps_make(struct bench_caps *c, struct bench_instance *in, size_t hosts, double load,
		    uint64_t seed);

/* A period's change: 1 % of the tenants (at least one) change their local
 * demand on each of their pools by up to +-change. */
void bench_caps_change(struct bench_caps *c, const struct bench_instance *in, double change,
		       uint64_t seed);

void bench_caps_free(struct bench_caps *c);

#endif /* FAIRSHARE_BENCH_CAPS_H */
