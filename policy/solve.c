/* SPDX-License-Identifier: MIT */
/* Rule names and the validating entry point. */
#include "policy.h"
#include "solve_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const rule_names[FS_RULE__COUNT] = {
    [FS_RULE_PSDSF] = "psdsf", [FS_RULE_DRF] = "drf", [FS_RULE_TSF] = "tsf",
    [FS_RULE_CDRFH] = "cdrfh", [FS_RULE_APF] = "apf", [FS_RULE_NJC] = "njc",
};

typedef int (*rule_fn)(const struct fs_problem *, const struct fs_options *, struct fs_solution *,
		       struct fs_error *);

static const rule_fn rule_fns[FS_RULE__COUNT] = {
    [FS_RULE_PSDSF] = fs_solve_psdsf, [FS_RULE_DRF] = fs_solve_drf, [FS_RULE_TSF] = fs_solve_tsf,
    [FS_RULE_CDRFH] = fs_solve_cdrfh, [FS_RULE_APF] = fs_solve_apf, [FS_RULE_NJC] = fs_solve_njc,
};

const char *fs_rule_name(enum fs_rule rule)
{
	return (unsigned)rule < FS_RULE__COUNT ? rule_names[rule] : "unknown";
}

int fs_rule_from_name(const char *name, enum fs_rule *rule)
{
	if (!name)
		return -EINVAL;
	for (int i = 0; i < FS_RULE__COUNT; i++)
		if (!strcmp(name, rule_names[i])) {
			*rule = (enum fs_rule)i;
			return 0;
		}
	return -EINVAL;
}

int fs_solve_begin(const struct fs_problem *p, enum fs_rule rule, const struct fs_options *opt,
		   struct fs_options *o, struct fs_solution *out, struct fs_error *err)
{
	int r;

	*o = opt ? *opt : (struct fs_options){.alpha = INFINITY};
	memset(out, 0, sizeof(*out));
	if ((unsigned)rule >= FS_RULE__COUNT) {
		if (err)
			snprintf(err->msg, sizeof(err->msg), "unknown rule %d", (int)rule);
		return -EINVAL;
	}
	r = fs_problem_validate(p, err);
	if (r < 0)
		return r;
	if (o->tol <= 0)
		o->tol = FS_DEFAULT_TOL;
	r = fs_solution_init(out, p);
	if (r < 0) {
		if (err)
			snprintf(err->msg, sizeof(err->msg),
				 "out of memory for %zu x %zu allocation", p->n_tenants,
				 p->n_pools);
		return r;
	}
	out->rule = rule;
	return 0;
}

int fs_solve(const struct fs_problem *p, enum fs_rule rule, const struct fs_options *opt,
	     struct fs_solution *out, struct fs_error *err)
{
	struct fs_options o;
	int r = fs_solve_begin(p, rule, opt, &o, out, err);

	if (r < 0)
		return r;
	r = rule_fns[rule](p, &o, out, err);
	out->guard = fs_guard_capacity(p, out, o.tol);
	return r;
}
