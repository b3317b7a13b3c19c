/* SPDX-License-Identifier: MIT */
/* Shared by fs_solve (solve.c) and fs_solve_warm (warm.c). */
#ifndef FAIRSHARE_POLICY_SOLVE_INTERNAL_H
#define FAIRSHARE_POLICY_SOLVE_INTERNAL_H

#include "policy.h"

/*
 * The common start of a solve: o = *opt (or the defaults) with the default
 * tolerance filled in, p validated, out initialised for p with out->rule.
 * 0 or a negative errno with err filled.
 */
int fs_solve_begin(const struct fs_problem *p, enum fs_rule rule, const struct fs_options *opt,
		   struct fs_options *o, struct fs_solution *out, struct fs_error *err);

#endif /* FAIRSHARE_POLICY_SOLVE_INTERNAL_H */
