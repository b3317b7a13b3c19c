/* SPDX-License-Identifier: MIT */
/*
 * The warm repair of PS-DSF (internal to psdsf.c; the tests call it
 * directly): from the previous period's allocation (or the sweeps' state),
 * an exact solution of the changed instance that keeps as much of that
 * structure as it can. See psdsf_repair.c.
 */
#ifndef FAIRSHARE_PSDSF_REPAIR_H
#define FAIRSHARE_PSDSF_REPAIR_H

#include "policy.h"

#include <stdbool.h>
#include <stddef.h>

/* What the repair reads of a solver's state; x and tot are rewritten. */
struct psdsf_state {
	const struct fs_problem *p;
	size_t N, K, M;
	double tol;		/* the solve's relative tolerance */
	const double *gamma;	/* [N][K] fs_gamma */
	const double *phi, *mt; /* [N] weight and max_tasks */
	double *x;		/* [N][K] */
	double *tot;		/* [N] row sums of x */
	bool previous;		/* x is the previous solution (fs_solve_warm),
				   not the sweeps' state: see SAT_PREVIOUS */
	const double *level;	/* [K][M]: that solution's fs_solution.level
				   (previous only; NULL: unknown) */
};

/*
 * Replaces x (and tot) by the exact solution of the PS-DSF equations of a
 * structure near x's, found in at most max_iter rounds (*iters says how
 * many ran). Returns 1 when it found one that none of its checks rejects,
 * 0 when it gave up (x and tot are then exactly as on entry), or -ENOMEM
 * (x and tot restored too). The caller's Theorem-1 predicate still judges
 * the result. Its rounds are its own: psdsf.c does not count them in
 * fs_options.max_iter (REPAIR_ROUNDS and REPAIR_ROUNDS_COLD there).
 */
int psdsf_repair(const struct psdsf_state *st, int max_iter, int *iters);

#endif
