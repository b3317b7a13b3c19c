/* SPDX-License-Identifier: MIT */
/*
 * Warm re-solves: a period's problem is the last one with a few demands
 * changed, and its equilibrium is next to the last one, so PS-DSF's
 * best-response sweeps start there instead of at per-server DRF.
 */
#include "policy.h"
#include "solve_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct fs_warm_start fs_warm_start_of(const struct fs_problem *p, const struct fs_solution *s)
{
	return (struct fs_warm_start){
	    .n_tenants = p->n_tenants,
	    .n_pools = p->n_pools,
	    .n_resources = p->n_resources,
	    .rule = s->rule,
	    .x = s->x,
	    .level = s->level,
	    .tenant_names = p->tenant_names,
	    .pool_names = p->pool_names,
	};
}

/* Both NULL: trusted; one NULL: unknown order; else every name equal. */
static bool same_names(const char *const *a, const char *const *b, size_t n)
{
	if (!a || !b)
		return !a && !b;
	for (size_t i = 0; i < n; i++)
		if (!a[i] || !b[i] ? a[i] != b[i] : strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

bool fs_warm_start_matches(const struct fs_problem *p, enum fs_rule rule,
			   const struct fs_warm_start *prev)
{
	return prev && prev->x && prev->rule == rule && prev->n_tenants == p->n_tenants &&
	       prev->n_pools == p->n_pools && prev->n_resources == p->n_resources &&
	       same_names(prev->tenant_names, p->tenant_names, p->n_tenants) &&
	       same_names(prev->pool_names, p->pool_names, p->n_pools);
}

int fs_solve_warm(const struct fs_problem *p, enum fs_rule rule, const struct fs_options *opt,
		  const struct fs_warm_start *prev, struct fs_solution *out, struct fs_error *err)
{
	struct fs_options o;
	int r;

	if (rule != FS_RULE_PSDSF || !fs_warm_start_matches(p, rule, prev))
		return fs_solve(p, rule, opt, out, err);
	r = fs_solve_begin(p, rule, opt, &o, out, err);
	if (r < 0)
		return r;
	out->warm = true;
	r = fs_solve_psdsf_from(p, &o, prev->x, prev->level, out, err);
	out->guard = fs_guard_capacity(p, out, o.tol);
	return r;
}
