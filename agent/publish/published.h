/* SPDX-License-Identifier: MIT */
/*
 * The published snapshot: what the last period decided, for everyone who
 * shows it (control socket status/explain, fairctl top, the metrics file).
 * The daemon fills it at the end of each period; readers take it as it is
 * and ask it, not the planner or the config, for each tenant's entitlement,
 * bottlenecks and mode, so they all say the same thing.
 */
#ifndef FAIRSHARE_AGENT_PUBLISHED_H
#define FAIRSHARE_AGENT_PUBLISHED_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "estimate.h"
#include "plan.h"
#include "resource.h"

#define FSD_LOGIN_MAX 64 /* = FS_LOGIN_MAX of agent_conf.h */

/* The latest per-tenant state, served by the control socket and metrics. */
struct fsd_tenant_pub {
	char name[FS_NAME_MAX];
	const char *cgroup; /* the config's (fs_conf_tenant.cgroup) */
	bool present;
	double weight; /* in force: the config's or set-weight's */
	double usage[FS_MAX_RES];
	struct est_state est; /* est.demand = the demand given to the solver */
	struct plan_tenant plan;
	uint64_t drift_total;		  /* its files found changed by someone else (and
					     written again) since the daemon started */
	char template_name[FS_NAME_MAX];  /* made by [template.T]: T; else "" */
	char login[FSD_LOGIN_MAX];	  /* a user slice's login name, else "" */
	struct fs_backend_choice backend; /* who writes its cgroup, and why */
	double fleet_weight;		  /* fleet mode: the weight the leader used; 0 none */
	const char *fleet_weight_from;	  /* "fleet", "template", "host" (static) */
};

/* One file the daemon controls in a tenant, read when asked (explain). */
struct fsd_file_state {
	char key[FS_CGF_KEY_MAX];	 /* "cpu.max", "io.max@8:0" */
	char written[FS_CGF_VALUE_MAX];	 /* what the daemon last wrote */
	char in_force[FS_CGF_VALUE_MAX]; /* what the file holds now; "" on error */
	int err;			 /* 0, or -errno of reading it */
};

/* Fleet mode (docs/fleet.md), for status; enabled false without [fleet]. */
struct fsd_fleet_pub {
	bool enabled;
	char mode[8]; /* "fleet", "hold", "local" */
	char reason[1100];
	char host[64], leader[64];
	bool is_leader, etcd_ok;
	int64_t version;	   /* of this host's last published record */
	int64_t alloc_revision;	   /* of the allocation last read */
	int64_t applied_revision;  /* of the allocation last applied */
	uint64_t applied_age_us;   /* its age when it was applied */
	uint64_t fallback_periods; /* at the last switch to local (fleet.h) */
	uint64_t alloc_time_us;	   /* its CLOCK_REALTIME stamp */
	uint64_t now_real_us;	   /* CLOCK_REALTIME of this period: the age is the difference */
	size_t solved_hosts;	   /* leader: hosts in its last solve */
	uint64_t solve_ns;
	int solve_iterations;	/* leader: sweeps of its last solve */
	bool solve_warm;	/* leader: it started from the previous answer */
	size_t fleet_weights;	/* leader: entries in PREFIX/weights */
	char weights_note[640]; /* leader: why PREFIX/weights was ignored, or "" */
	uint64_t periods[3];	/* local, fleet, hold */
	uint64_t etcd_requests, etcd_bytes, etcd_bytes_received;
};

struct fsd_published {
	uint64_t period;  /* completed periods */
	uint64_t time_us; /* CLOCK_MONOTONIC of the period */
	enum plan_mode mode;
	char mode_reason[PLAN_REASON_MAX];
	size_t n_saturated;
	bool saturated[FS_MAX_RES]; /* the allocation fills it (plan.h) */
	bool busy[FS_MAX_RES];	    /* used >= busy of it, or a contended disk */
	unsigned written, failed;   /* files, this period */
	unsigned drifted;	    /* files found changed by others, this period */
	size_t n_tenants;
	struct fsd_tenant_pub *t;
	/* for status, explain and metrics */
	struct plan_config pcfg; /* resources (names, kinds, capacities), rule */
	const char *policy;	 /* "psdsf", "njc" */
	uint64_t interval_us;
	bool dry_run;
	bool released; /* fairctl release: originals restored, not enforcing */
	uint64_t written_total, failed_total, failed_periods_total;
	struct fsd_fleet_pub fleet;
	uint64_t drift_total; /* files found changed by others and written again */
};

/*
 * One vocabulary for status, top, explain, metrics and the log (the
 * planner's, plan.h "Bottlenecks"): resource r is a bottleneck, and gets
 * limits, when it is
 *   "saturated": the allocation fills it;
 *   "contended": an io resource whose disk the daemon found contended
 *                (queue, or use near the declared rate);
 *   "busy":      the tenants use at least `busy` of its capacity.
 * fsd_resource_state() gives that word (the first that applies), NULL when r
 * is not a bottleneck.
 */
const char *fsd_resource_state(const struct fsd_published *p, size_t r);

/* A resource is one of a tenant's bottlenecks when it is a bottleneck and
 * the tenant holds at least this fraction of it (or the solver named it). */
#define FSD_BOTTLENECK_MIN_SHARE 0.01

/* Entitlement of tenant i: its weight's share among the tenants in the
 * problem (the planner's, plan_tenant.entitlement). */
double fsd_entitlement(const struct fsd_published *p, size_t i);

/* Resource r is one of tenant i's bottlenecks. */
bool fsd_is_bottleneck(const struct fsd_published *p, size_t i, size_t r);

/* Tenant i's mode: "absent", "released", "limits", "weights" or "off" (the
 * header's words). */
const char *fsd_tenant_mode(const struct fsd_published *p, size_t i);

#endif /* FAIRSHARE_AGENT_PUBLISHED_H */
