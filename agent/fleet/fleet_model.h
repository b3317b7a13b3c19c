/* SPDX-License-Identifier: MIT */
/*
 * The fleet's records in etcd and the leader's solve (docs/fleet.md), with
 * no I/O so that each is unit-tested alone:
 *
 *   PREFIX/hosts/HOST   a host's record: capacity and each present tenant's
 *                       demand vector and weight (lease-bound: it leaves the
 *                       fleet with its lease)
 *   PREFIX/leader       the leader's host name (lease-bound, taken by txn)
 *   PREFIX/alloc/HOST   host HOST's part of the allocation: the snapshot
 *                       revision it was solved at, the time, the record
 *                       version used and each tenant's grant and fleet
 *                       weight (lease-bound to the leader)
 *   PREFIX/weights      the fleet-wide weights (fairctl fleet set-weight,
 *                       push): per tenant name and per template name
 *
 * Mapping to the capped PS-DSF model (policy/psdsf_caps.h): resources are
 * matched by name across hosts (a host without one has capacity 0 for it);
 * tenant n's per-unit demand d_n is the mean of its demand vectors over the
 * hosts where it has demand; its cap on host i is the fewest units of d_n
 * that cover its demand there, D_{n,i} = max_r dem_{n,i,r} / d_{n,r} (so the
 * leader's accounting never under-counts a host whose demand shape differs
 * from the mean). The grant host i applies is x_{n,i} / D_{n,i}, the
 * fraction of its local demand (what the single-host planner calls x).
 * Weights: PREFIX/weights' entry for the tenant's name; else its
 * template's entry (the first host's template in key order); else the first
 * host's record (in key order, among those with demand) that names it: the
 * host's configured weight. Each grant says which one was used.
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
	double weight;		   /* the host's configured weight */
	double demand[FS_MAX_RES]; /* in the host's resource order */
	char tmpl[FLEET_NAME_MAX]; /* made by [template.T]: T; else "" */
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

/* Where a tenant's fleet weight came from. */
enum fleet_weight_from {
	FLEET_W_HOST,	  /* no fleet weight: a host's configured weight */
	FLEET_W_TENANT,	  /* PREFIX/weights, by tenant name */
	FLEET_W_TEMPLATE, /* PREFIX/weights, by its template's name */
};

const char *fleet_weight_from_name(enum fleet_weight_from f); /* "host", "fleet", "template" */

struct fleet_grant {
	char tenant[FLEET_NAME_MAX];
	double grant;  /* fraction of the local demand, [0, 1] */
	double x;      /* tasks (units of d_n) on this host */
	double cap;    /* D_{n,i} */
	double weight; /* the weight the leader used (0: none, no demand anywhere) */
	enum fleet_weight_from from;
};

/* The fleet-wide weights (PREFIX/weights): by tenant name and by template
 * name. JSON {"tenants": {NAME: W, ...}, "templates": {NAME: W, ...}}. */
struct fleet_weight {
	char name[FLEET_NAME_MAX];
	double weight;
	bool is_template;
};

struct fleet_weights {
	size_t n;
	struct fleet_weight *w; /* sorted by (is_template, name) */
};

void fleet_weights_free(struct fleet_weights *w);
/* 0, -EPROTO (err says what; a weight outside the config's bounds is one),
 * -ENOMEM. */
int fleet_weights_from_json(const char *json, struct fleet_weights *w, char *err, size_t errlen);
char *fleet_weights_to_json(const struct fleet_weights *w);
/* Sets (adds or replaces) one entry; 0, -EINVAL (bad name or weight), -ENOMEM. */
int fleet_weights_set(struct fleet_weights *w, const char *name, bool is_template, double weight);
/* The entry's weight, or 0 when there is none. */
double fleet_weights_get(const struct fleet_weights *w, const char *name, bool is_template);

/* The warm start the leader keeps between solves: the last answer by tenant
 * and host name (a tenant or host that is new starts from 0). */
struct fleet_warm {
	size_t N, K;
	char (*tenant)[FLEET_NAME_MAX]; /* [N], sorted */
	char (*host)[FLEET_NAME_MAX];	/* [K] */
	double *x;			/* [N][K] */
	bool used;			/* the last solve started from it */
};

void fleet_warm_free(struct fleet_warm *w);

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
/* The same with host k's part only (its PREFIX/alloc/HOST key). */
char *fleet_alloc_host_to_json(const struct fleet_alloc *a, size_t k);
int fleet_alloc_from_json(const char *json, struct fleet_alloc *a, char *err, size_t errlen);

/*
 * The leader's solve of one snapshot (hosts[0..n), in key order): capped
 * PS-DSF, then each host's grants. weights (may be NULL): the fleet-wide
 * weights. warm (may be NULL): started from it when it has answers, and
 * replaced by this answer. out->revision, time_us and leader are the
 * caller's to set. dump (may be NULL) receives the snapshot and the answer as
 * a scenario file with [caps.HOST] sections (conf/scenario.h) that
 * `fairctl solve --check` certifies. 0, -EINVAL (nothing to solve: err says
 * why), -ENOMEM, or the solver's error.
 */
int fleet_solve(const struct fleet_host_rec *hosts, size_t n, const struct fleet_weights *weights,
		struct fleet_warm *warm, struct fleet_alloc *out, FILE *dump, char *err,
		size_t errlen);

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
