/* SPDX-License-Identifier: MIT */
/*
 * PS-DSF with per-pool caps: the fleet allocation (docs/fleet.md).
 *
 * A fleet is PS-DSF ([P4], ALGORITHMS.md 1.7) with hosts as pools, plus one
 * constraint [P4] does not have: tenant n may run at most cap[n][k] tasks on
 * pool k (its local demand there), so nothing is granted on a host where the
 * tenant has no work. cap[n][k] may be INFINITY (no cap) or 0 (no work there).
 *
 * Extended Theorem 1 (the certificate): x is a capped PS-DSF allocation when it
 * is feasible (capacity, eligibility, max_tasks, x <= cap) and every tenant n
 * on every pool k it can use (gamma_{n,k} > 0) is at its cap there
 * (x_{n,k} = cap_{n,k}, or its total at max_tasks_n), or has a bottleneck
 * resource r on k: r saturated on k, d_{n,r} > 0, and n's weighted VDS
 * x_n / (phi_n gamma_{n,k}) is at least that of every holder of r on k.
 *
 * Kept in its own file (not psdsf.c) so that the single-host solver can
 * change its internals without touching the fleet's.
 */
#ifndef FAIRSHARE_PSDSF_CAPS_H
#define FAIRSHARE_PSDSF_CAPS_H

#include "policy.h"

/*
 * Solves p with per-pool caps cap[N][K] (>= 0 or INFINITY; NULL: no caps, which
 * is plain PS-DSF) into out (initialised here; free it with fs_solution_free
 * even on error). out->rule is FS_RULE_PSDSF; tenant[n].share is the minimum
 * weighted VDS over the pools where n is eligible and its cap is > 0.
 * Method: Gauss-Seidel sweeps of exact per-pool best responses (a capped
 * water-filling of the VDS), from zero, until no x_{n,k} moves by more than
 * tol * gamma_{n,k}. Returns 0, -EINVAL (bad problem or caps), -ENOMEM, or
 * -ERANGE when the sweep cap (opt->max_iter, default 20000) is hit in a state
 * that fails fs_check_psdsf_caps; x is feasible and filled in either way.
 */
int fs_solve_psdsf_caps(const struct fs_problem *p, const double *cap, const struct fs_options *opt,
			struct fs_solution *out, struct fs_error *err);

/*
 * The same, warm: the sweeps start from x0[N][K] (the last period's answer,
 * entries for tenants or pools that are new at 0) instead of from zero. A
 * period's fleet differs from the last one by a few demands, so few sweeps
 * move anything. x0 entries that are negative or not finite count as 0; the
 * first sweep replaces every pool's column, so x0 need not be feasible.
 * NULL x0 is fs_solve_psdsf_caps.
 */
int fs_solve_psdsf_caps_from(const struct fs_problem *p, const double *cap,
			     const struct fs_options *opt, const double *x0,
			     struct fs_solution *out, struct fs_error *err);

/* The extended Theorem-1 certificate above, feasibility included. */
bool fs_check_psdsf_caps(const struct fs_problem *p, const double *cap, const double *x, double tol,
			 struct fs_error *why);

#endif /* FAIRSHARE_PSDSF_CAPS_H */
