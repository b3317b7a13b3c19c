/* SPDX-License-Identifier: MIT */
/*
 * The fleet's records in etcd and the leader's solve (docs/fleet.md), with
 * no I/O so that each is unit-tested alone:
 *
 *   PREFIX/hosts/HOST   a host's record: capacity and each present tenant's
 *                       demand vector and weight (lease-bound: it leaves the
 *                       fleet with its lease)
 *   PREFIX/leader       the leader's host name (lease-bound, taken by txn)
 *   PREFIX/alloc        the allocation: the snapshot revision it was solved
 *                       at, the time, and per host the record version used
 *                       and each tenant's grant
 *
 * Mapping to the capped PS-DSF model (policy/psdsf_caps.h): resources are
 * matched by name across hosts (a host without one has capacity 0 for it);
 * tenant n's per-unit demand d_n is the mean of its demand vectors over the
 * hosts where it has demand; its cap on host i is the fewest units of d_n
 * that cover its demand there, D_{n,i} = max_r dem_{n,i,r} / d_{n,r} (so the
 * leader's accounting never under-counts a host whose demand shape differs
 * from the mean). The grant host i applies is x_{n,i} / D_{n,i}, the
 * fraction of its local demand (what the single-host planner calls x).
 * Weights: the first host's record (in key order) that names the tenant.
 */
#ifndef FAIRSHARE_FLEET_MODEL_H
#define FAIRSHARE_FLEET_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "resource.h"

#define FLEET_NAME_MAX 64

struct fleet_tenant_rec {
	char name[FLEET_NAME_MAX];
	double weight;
	double demand[FS_MAX_RES]; /* in the host's resource order */
};

struct fleet_host_rec {
	char host[FLEET_NAME_MAX];
	int64_t version;  /* bumped by the host when the content changes */
	uint64_t time_us; /* CLOCK_REALTIME of the publish */
	size_t n_res;
	char res_name[FS_MAX_RES][FS_RES_NAME_MAX];
	double capacity[FS_MAX_RES];
	size_t n_tenants;
	struct fleet_tenant_rec *t;
};

struct fleet_grant {
	char tenant[FLEET_NAME_MAX];
	double grant; /* fraction of the local demand, [0, 1] */
	double x;     /* tasks (units of d_n) on this host */
	double cap;   /* D_{n,i} */
};

struct fleet_host_alloc {
	char host[FLEET_NAME_MAX];
	int64_t version; /* the host record's version the solve used */
	size_t n;
	struct fleet_grant *g;
};

struct fleet_alloc {
	int64_t revision; /* etcd revision of the snapshot solved */
	uint64_t time_us; /* CLOCK_REALTIME when it was solved */
	char leader[FLEET_NAME_MAX];
	int iterations;
	size_t n_hosts;
	struct fleet_host_alloc *h;
};

void fleet_host_free(struct fleet_host_rec *h);
void fleet_alloc_free(struct fleet_alloc *a);

/* Same resources, capacities and tenants (names, weights, demands), ignoring
 * version and time: whether a new version is due. */
bool fleet_host_same(const struct fleet_host_rec *a, const struct fleet_host_rec *b);

/* JSON text (malloc'd) and back. Parsing returns 0, -EPROTO (err says what),
 * -ENOMEM. */
char *fleet_host_to_json(const struct fleet_host_rec *h);
int fleet_host_from_json(const char *json, struct fleet_host_rec *h, char *err, size_t errlen);
char *fleet_alloc_to_json(const struct fleet_alloc *a);
int fleet_alloc_from_json(const char *json, struct fleet_alloc *a, char *err, size_t errlen);

/*
 * The leader's solve of one snapshot (hosts[0..n), in key order): capped
 * PS-DSF, then each host's grants. out->revision, time_us and leader are the
 * caller's to set. dump (may be NULL) receives the snapshot and the answer as
 * a scenario file with [caps.HOST] sections (conf/scenario.h) that
 * `fairctl solve --check` certifies. 0, -EINVAL (nothing to solve: err says
 * why), -ENOMEM, or the solver's error.
 */
int fleet_solve(const struct fleet_host_rec *hosts, size_t n, struct fleet_alloc *out, FILE *dump,
		char *err, size_t errlen);

/* What a host may do with an allocation it read. */
enum fleet_verdict {
	FLEET_APPLY,	     /* fresh, solved with our latest record, same tenants */
	FLEET_TOO_OLD,	     /* older than max_age */
	FLEET_NOT_LISTED,    /* we are not in it (joined after the snapshot) */
	FLEET_OLD_DEMANDS,   /* solved with an older version of our record */
	FLEET_OTHER_TENANTS, /* solved for a different tenant set than ours */
};

const char *fleet_verdict_text(enum fleet_verdict v);

/* *mine: our part when the verdict is FLEET_APPLY (else NULL). */
enum fleet_verdict fleet_check(const struct fleet_alloc *a, const struct fleet_host_rec *me,
			       uint64_t now_real_us, uint64_t max_age_us,
			       const struct fleet_host_alloc **mine);

#endif /* FAIRSHARE_FLEET_MODEL_H */
