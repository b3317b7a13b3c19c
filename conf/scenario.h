/* SPDX-License-Identifier: MIT */
/*
 * Scenario files for `fairctl solve` and the tests: an allocation problem in
 * INI form (shared/DESIGN.md, "Interfaces people touch").
 *
 *   [scenario]
 *   resources = cpu, mem, net   ; required, names in column order
 *   policy = psdsf              ; optional default rule for fairctl solve
 *   alpha = 2                   ; optional default alpha for apf (>= 1 or inf)
 *
 *   [pool.NAME]                 ; one or more, in file order
 *   capacity = 9, 12, 100       ; required, one number >= 0 per resource
 *
 *   [tenant.NAME]               ; one or more, in file order
 *   demand = 1.5, 1, 10         ; required, per-unit demand, >= 0, not all 0
 *   weight = 1                  ; optional, > 0, default 1
 *   max_tasks = inf             ; optional, > 0 or inf, default inf
 *   pools = s1                  ; optional eligibility list, default all
 *
 *   [caps.NAME]                 ; optional, per pool: a fleet host's local
 *   TENANT = 4                  ;   demands (cap on x[TENANT][NAME], >= 0 or
 *   TENANT = 4, 3.5             ;   inf), optionally with the allocation
 *                               ;   (a fleet dump, docs/fleet.md). Tenants
 *                               ;   not listed are capped at 0 on NAME.
 *
 * Names (resources, pools, tenants) are 1-32 characters of [A-Za-z0-9_.:@-].
 * Sections may come in any order; every error is "file:line: message".
 * The policy name is kept as text (checked by the caller against
 * fs_rule_from_name(), with policy_line for the message) so that this parser
 * does not depend on the solvers.
 */
#ifndef FAIRSHARE_SCENARIO_H
#define FAIRSHARE_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>

#include "ini_limits.h"
#include "policy.h"

#define SCENARIO_NAME_MAX 32

struct scenario {
	char *path;
	size_t n_resources, n_pools, n_tenants;
	char **resource_names; /* [M] */
	char **pool_names;     /* [K] */
	char **tenant_names;   /* [N] */
	double *capacity;      /* [K][M] */
	double *demand;	       /* [N][M] */
	double *max_tasks;     /* [N], INFINITY when not given */
	double *weight;	       /* [N], 1 when not given */
	bool *eligible;	       /* [N][K], all true when not given */
	double *cap;	       /* [N][K] per-pool caps; NULL without [caps.*] */
	double *alloc;	       /* [N][K] given allocation (with cap), valid when has_alloc */
	bool has_alloc;
	char *policy; /* [scenario] policy, NULL when not given */
	int policy_line;
	double alpha; /* [scenario] alpha, NAN when not given */
	int alpha_line;
};

/*
 * Parses path into sc (which this call initialises; free it with
 * scenario_free() even on error). Returns 0, -EINVAL for a bad file, -E2BIG
 * for a line or name inih would truncate, -ENOMEM, or -errno for I/O; err
 * holds "file:line: message".
 */
int scenario_load(const char *path, struct scenario *sc, struct conf_error *err);

void scenario_free(struct scenario *sc);

/* Points p at sc's arrays and names; valid while sc lives. */
void scenario_problem(const struct scenario *sc, struct fs_problem *p);

/* Index of a name, or -1. */
int scenario_pool_index(const struct scenario *sc, const char *name);
int scenario_tenant_index(const struct scenario *sc, const char *name);

#endif /* FAIRSHARE_SCENARIO_H */
