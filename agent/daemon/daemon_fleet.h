/* SPDX-License-Identifier: MIT */
/*
 * fairshared's fleet hook (docs/fleet.md): each period, after the estimate,
 * this host's record goes to etcd and the fleet allocation (when one applies)
 * comes back as the fraction of each tenant's demand to grant, which the
 * planner then uses instead of its own solve (plan_config.given_x). Built
 * only with libcurl (FSD_HAVE_FLEET); without it a [fleet] section is refused
 * at start.
 */
#ifndef FAIRSHARE_DAEMON_FLEET_H
#define FAIRSHARE_DAEMON_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_conf.h"
#include "plan.h"
#include "published.h"

enum fsd_fleet_outcome {
	FSD_FLEET_LOCAL, /* plan with the local policy */
	FSD_FLEET_APPLY, /* plan with given_x */
	FSD_FLEET_HOLD,	 /* write nothing new this period */
};

struct fsd_fleet;

/* NULL (and 0) when conf has no [fleet]; -ENOTSUP when built without it. */
int fsd_fleet_open(struct fsd_fleet **out, const struct fs_conf *conf);
void fsd_fleet_close(struct fsd_fleet *ff);

/* One period: pin[0..n) as the planner gets them, tpub[0..n) their
 * published state (the template that made each), res their resources (this
 * period's capacities). given_x[n] is filled for FSD_FLEET_APPLY. */
enum fsd_fleet_outcome fsd_fleet_step(struct fsd_fleet *ff, const struct fs_resources *res,
				      size_t n, const struct plan_tenant_in *pin,
				      const struct fsd_tenant_pub *tpub, uint64_t now_us,
				      double *given_x);

/* The fleet weight the leader used for tenant in the allocation last
 * applied, and where it came from ("fleet", "template", "host"): false when
 * none was applied to it. */
bool fsd_fleet_weight(const struct fsd_fleet *ff, const char *tenant, double *weight,
		      const char **from);

/* The state for status/metrics. */
void fsd_fleet_publish(const struct fsd_fleet *ff, struct fsd_fleet_pub *pub);

#endif /* FAIRSHARE_DAEMON_FLEET_H */
