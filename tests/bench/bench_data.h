/* SPDX-License-Identifier: MIT */
/*
 * Benchmark instances: per-tenant demand vectors drawn from the Bitbrains
 * "Rnd" per-VM traces (shared/traces/bitbrains-rnd), or from a seeded
 * synthetic generator when the traces are absent.
 */
#ifndef FAIRSHARE_BENCH_DATA_H
#define FAIRSHARE_BENCH_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"

/* Raw per-sample columns kept from a trace row. */
enum {
	BD_CPU,	   /* CPU usage [MHz] */
	BD_MEM,	   /* memory usage [KB] */
	BD_DISK_R, /* disk read [KB/s] */
	BD_DISK_W, /* disk write [KB/s] */
	BD_NET_RX, /* network received [KB/s] */
	BD_NET_TX, /* network transmitted [KB/s] */
	BD_COLS
};

struct bench_samples {
	double (*row)[BD_COLS];
	size_t n;
	size_t files; /* trace files read (0: synthetic) */
	bool synthetic;
};

struct bench_rng {
	uint64_t s;
};

void bench_rng_seed(struct bench_rng *g, uint64_t seed);
double bench_uniform(struct bench_rng *g); /* [0, 1) */
double bench_normal(struct bench_rng *g);
/* The i-th of count distinct indices below n: one from each stride of n /
 * count (count <= n), for changing a few tenants of an instance. */
size_t bench_stride_pick(struct bench_rng *g, size_t n, size_t count, size_t i);

/*
 * Reads every vm*.csv under dir; rows with no CPU or memory use are skipped
 * (a tenant must demand something). When dir has no usable rows, fills
 * n_synth seeded synthetic samples instead and sets synthetic. 0 or -errno.
 */
int bench_samples_load(struct bench_samples *s, const char *dir, size_t n_synth, uint64_t seed);
void bench_samples_free(struct bench_samples *s);

/* A problem that owns its arrays. */
struct bench_instance {
	struct fs_problem p;
	double *capacity, *demand, *max_tasks, *weight;
	bool *eligible;
};

/*
 * Instance with n tenants, m resources (4 or 8) and k pools, drawn from s with
 * the given seed. m = 4: (cpu, mem, disk r+w, net rx+tx); m = 8: (cpu, mem,
 * disk r, disk w, net rx, net tx, synthetic sparse "gpu", synthetic "slots").
 * Weights in {1, 2, 4}; 85% of tenants ask for 1-4 tasks (one task = one
 * sampled usage vector), 15% are elastic (max_tasks = INFINITY). Total
 * capacity of each resource is 30-90% of what the capped tenants ask for;
 * with k > 1 it is split unevenly over the pools (some pools lack "gpu")
 * and each tenant may use about half of the pools. 0 or -ENOMEM.
 */
int bench_instance_make(struct bench_instance *in, const struct bench_samples *s, size_t n,
			size_t m, size_t k, uint64_t seed);
void bench_instance_free(struct bench_instance *in);

/* Writes in as a scenario INI (the tests/vectors format: [scenario]
 * resources, [pool.kJ] capacity, [tenant.tI] demand, max_tasks, weight,
 * pools, the latter 16 names per line), numbers exact (the shortest %g that
 * reads back), every line within the parser's limit. 0 or -EIO. */
int bench_instance_write_ini(FILE *f, const struct bench_instance *in, const char *comment);

#endif /* FAIRSHARE_BENCH_DATA_H */
