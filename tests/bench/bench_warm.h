/* SPDX-License-Identifier: MIT */
/* fairshare-bench --warm: cold solves against warm re-solves (bench_warm.c). */
#ifndef FAIRSHARE_BENCH_WARM_H
#define FAIRSHARE_BENCH_WARM_H

#include "bench_data.h"

/*
 * Prints the warm table over seeds seed0 .. seed0 + seeds - 1 (quick: its own
 * small sizes; else those with N <= max_n and K <= max_k). Returns the number of failures: a solver
 * error, a result that fails the Theorem-1 predicate, or a warm solve that did not start warm.
 */
int bench_warm(const struct bench_samples *s, unsigned long long seed0, int seeds, bool quick,
	       size_t max_n, size_t max_k);

#endif /* FAIRSHARE_BENCH_WARM_H */
