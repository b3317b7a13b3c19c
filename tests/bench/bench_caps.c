/* SPDX-License-Identifier: MIT */
/* Fleet instances for the capped PS-DSF solver (see bench_caps.h). */
#include "bench_caps.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int bench_caps_make(struct bench_caps *c, struct bench_instance *in, size_t hosts, double load,
		    uint64_t seed)
{
	const size_t N = in->p.n_tenants, K = in->p.n_pools;
	const size_t pairs = N * (hosts < K ? hosts : K); /* tenants on pools */
	struct bench_rng g;

	memset(c, 0, sizeof(*c));
	if (!hosts || !(load > 0))
		return -EINVAL;
	c->cap = calloc(N * K, sizeof(double));
	c->eligible = calloc(N * K, sizeof(bool));
	if (!c->cap || !c->eligible) {
		bench_caps_free(c);
		return -ENOMEM;
	}
	bench_rng_seed(&g, seed * 0x94d049bb133111ebull + 5);
	for (size_t n = 0; n < N; n++)
		for (size_t h = 0; h < hosts && h < K;) {
			const size_t k = (size_t)(bench_uniform(&g) * (double)K) % K;
			if (c->eligible[n * K + k])
				continue; /* distinct pools */
			c->eligible[n * K + k] = true;
			h++;
		}
	in->p.eligible = c->eligible;
	in->p.max_tasks = NULL;
	/* A fair share of pool k for one of its pairs / K tenants (expected):
	 * gamma_{n,k} (n alone on k) over that count. */
	for (size_t j = 0; j < N * K; j++)
		if (c->eligible[j])
			c->cap[j] = load * fs_gamma(&in->p, j / K, j % K) * (double)K /
				    (double)pairs * (0.2 + 1.6 * bench_uniform(&g));
	return 0;
}

void bench_caps_change(struct bench_caps *c, const struct bench_instance *in, double change,
		       uint64_t seed)
{
	const size_t N = in->p.n_tenants, K = in->p.n_pools;
	const size_t changed = N / 100 ? N / 100 : 1;
	struct bench_rng g;

	bench_rng_seed(&g, seed * 0x2545f4914f6cdd1dull + 29);
	for (size_t i = 0; i < changed; i++) {
		const size_t n = bench_stride_pick(&g, N, changed, i);
		for (size_t k = 0; k < K; k++)
			c->cap[n * K + k] *= 1 + change * (2 * bench_uniform(&g) - 1);
	}
}

void bench_caps_free(struct bench_caps *c)
{
	free(c->cap);
	free(c->eligible);
	memset(c, 0, sizeof(*c));
}
