/* SPDX-License-Identifier: MIT */
/* Shared helpers for the policy tests: tolerant comparisons and seeded
 * random instances for the property sweeps. */
#ifndef FAIRSHARE_TESTUTIL_H
#define FAIRSHARE_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy.h"

/* |a - b| <= tol * max(1, |b|), with a message that shows both numbers. */
#define assert_close(a, b, tol) tu_assert_close((a), (b), (tol), #a, __FILE__, __LINE__)
void tu_assert_close(double a, double b, double tol, const char *expr, const char *file, int line);

/* Deterministic xorshift64* generator. */
struct tu_rng {
	uint64_t s;
};
void tu_rng_seed(struct tu_rng *g, uint64_t seed);
double tu_uniform(struct tu_rng *g); /* [0, 1) */

/* A problem that owns its arrays (for random instances). */
struct tu_instance {
	struct fs_problem p;
	double *capacity, *demand, *max_tasks, *weight;
	bool *eligible;
};

enum tu_flags {
	TU_ZERO_CAPACITY = 1 << 0, /* some pools lack some resources */
	TU_CAPS = 1 << 1,	   /* some tenants have finite max_tasks */
	TU_PLACEMENT = 1 << 2,	   /* some tenants are restricted to some pools */
	TU_WEIGHTS = 1 << 3,	   /* weights other than 1 */
	TU_ZERO_DEMAND = 1 << 4,   /* some demand entries are 0 */
};

/* Random instance of the given size; every tenant keeps at least one
 * positive demand; with TU_PLACEMENT every tenant keeps one eligible pool. */
void tu_random_instance(struct tu_instance *in, struct tu_rng *g, size_t n, size_t m, size_t k,
			unsigned flags);
void tu_instance_free(struct tu_instance *in);

/*
 * Paper instances that several tests start from; copy one to vary weights,
 * caps or placement. Both come from ALGORITHMS.md 3.9:
 * - tu_drf_classic, the DRF paper's example: one pool c = [9 CPU, 18 GB],
 *   d_A = [1, 4], d_B = [3, 1], unit weights, no caps;
 * - tu_placement_ef, placement vs envy (T9): pools c_1 = [10, 10] and
 *   c_2 = [100, 100], d_A = d_B = [1, 1], A eligible on pool 1 only.
 */
extern const struct fs_problem tu_drf_classic, tu_placement_ef;

/* A rule entry point such as fs_solve_psdsf. */
typedef int (*tu_rule_fn)(const struct fs_problem *, const struct fs_options *,
			  struct fs_solution *, struct fs_error *);

/*
 * What fs_solve does, for one rule only (so a test links without the other
 * rules): validate, initialise out, call fn. Free out with fs_solution_free.
 */
int tu_solve_rule(const struct fs_problem *p, tu_rule_fn fn, const struct fs_options *opt,
		  struct fs_solution *out, struct fs_error *err);

/* Random size in [lo, hi]. */
size_t tu_range(struct tu_rng *g, size_t lo, size_t hi);

/* Multiplies each demand of count tenants (distinct, count >= 1) by a factor
 * in [0.8, 1.2]: the periodic change of the warm re-solve tests. */
void tu_perturb(struct tu_instance *in, struct tu_rng *g, size_t count);

#endif
