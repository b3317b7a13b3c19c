/* SPDX-License-Identifier: MIT */
/*
 * Acceleration of best-response sweeps (sweep_accel.c): Anderson mixing and
 * one-mode jumps of the sweep map, each checked by the sweep after it. Used
 * by the PS-DSF solvers, single-host (psdsf.c) and capped (psdsf_caps.c),
 * whose sweeps each rewrite every pool's column from the others.
 */
#ifndef FAIRSHARE_SWEEP_ACCEL_H
#define FAIRSHARE_SWEEP_ACCEL_H

#include <stdbool.h>
#include <stddef.h>

#define SWEEP_ACCEL_MEM 8 /* sweeps Anderson mixing combines, past the last */

/* The sweeps' point, which an extrapolation moves in place. */
struct sweep_accel_target {
	double *x;	     /* [dim] */
	const double *gamma; /* [dim]: the stopping test's units (x / gamma); 0 off
				the variables */
	double tol;	     /* the stopping test's tolerance */
	/* puts x back into the solver's feasible box after an extrapolation
	 * and recomputes what the solver keeps of x (its totals) */
	void (*project)(void *ctx);
	void *ctx;
};

struct sweep_accel {
	size_t dim, used, head;
	bool have_prev;	    /* f and g hold the previous sweep's */
	bool checking;	    /* x is an extrapolation the next sweep checks */
	bool by_anderson;   /* ... made by Anderson mixing, not a jump */
	bool on_path;	    /* ... a jump along the plain sweeps' own path */
	int anderson_pause; /* no mixing before this sweep */
	int best_sweep;	    /* the sweep that last halved best_move */
	double best_move;   /* the smallest sweep move so far (0: none yet) */
	double jump_cos;    /* 1 - the cosine a jump needs */
	double move_before; /* the move of the sweep the extrapolation followed */
	double *w;	    /* [dim] inner-product weights */
	double *f, *g;	    /* [dim] last residual and sweep output */
	double *saved;	    /* [dim] the sweep output an extrapolation started from */
	double *df, *dg;    /* [SWEEP_ACCEL_MEM][dim] differences, circular */
	double gram[SWEEP_ACCEL_MEM][SWEEP_ACCEL_MEM];
};

/*
 * One tenant's row of an extrapolated point back into the sweeps' box:
 * x_k >= 0 where gamma_k > 0 (else 0), x_k <= cap_k (cap NULL: none), and
 * the row scaled down to mt when its total is above it. Returns the total.
 * The projections of both solvers (their project callbacks) call it.
 */
double sweep_accel_clamp_row(double *x, const double *gamma, const double *cap, double mt,
			     size_t K);

/* Fills a for dim entries weighted by 1 / gamma^2. 0 or -ENOMEM (free a
 * either way). */
int sweep_accel_alloc(struct sweep_accel *a, size_t dim, const double *gamma);
void sweep_accel_free(struct sweep_accel *a);

/* Drops the mixing history and the previous sweep: after x was moved by
 * anything but a plain sweep, neither describes the map around it. */
void sweep_accel_forget(struct sweep_accel *a);

/*
 * After the sweep number `sweep`, x_in -> t->x, which moved x by move (the
 * stopping test's largest |change| / gamma): checks the last extrapolation
 * (restoring the sweep output it started from when this sweep moved more
 * than twice the one before it, unless it was a jump along the plain
 * sweeps' own path), then tries a jump, then Anderson mixing, which leave
 * an extrapolated point in t->x. x_in is scratch after it.
 */
void sweep_accel_step(struct sweep_accel *a, const struct sweep_accel_target *t, double *x_in,
		      double move, int sweep);

#endif /* FAIRSHARE_SWEEP_ACCEL_H */
