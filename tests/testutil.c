/* SPDX-License-Identifier: MIT */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double drf_classic_c[] = {9, 18};
static const double drf_classic_d[] = {1, 4, 3, 1};
const struct fs_problem tu_drf_classic = {.n_tenants = 2,
					  .n_pools = 1,
					  .n_resources = 2,
					  .capacity = drf_classic_c,
					  .demand = drf_classic_d};

static const double placement_ef_c[] = {10, 10, 100, 100};
static const double placement_ef_d[] = {1, 1, 1, 1};
static const bool placement_ef_el[] = {1, 0, 1, 1};
const struct fs_problem tu_placement_ef = {.n_tenants = 2,
					   .n_pools = 2,
					   .n_resources = 2,
					   .capacity = placement_ef_c,
					   .demand = placement_ef_d,
					   .eligible = placement_ef_el};

void tu_assert_close(double a, double b, double tol, const char *expr, const char *file, int line)
{
	double scale = fabs(b) > 1.0 ? fabs(b) : 1.0;

	if (isfinite(a) && fabs(a - b) <= tol * scale)
		return;
	if (isinf(a) && isinf(b) && (a > 0) == (b > 0))
		return;
	print_error("%s = %.12g, expected %.12g (tol %g)\n", expr, a, b, tol);
	_fail(file, line);
}

void tu_rng_seed(struct tu_rng *g, uint64_t seed)
{
	g->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	if (!g->s)
		g->s = 1;
}

double tu_uniform(struct tu_rng *g)
{
	g->s ^= g->s >> 12;
	g->s ^= g->s << 25;
	g->s ^= g->s >> 27;
	return (double)((g->s * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

void tu_random_instance(struct tu_instance *in, struct tu_rng *g, size_t n, size_t m, size_t k,
			unsigned flags)
{
	in->capacity = calloc(k * m, sizeof(double));
	in->demand = calloc(n * m, sizeof(double));
	in->max_tasks = calloc(n, sizeof(double));
	in->weight = calloc(n, sizeof(double));
	in->eligible = calloc(n * k, sizeof(bool));
	assert_non_null(in->capacity);
	assert_non_null(in->demand);
	assert_non_null(in->max_tasks);
	assert_non_null(in->weight);
	assert_non_null(in->eligible);

	for (size_t i = 0; i < k; i++)
		for (size_t r = 0; r < m; r++) {
			double c = 1.0 + 99.0 * tu_uniform(g);
			if ((flags & TU_ZERO_CAPACITY) && tu_uniform(g) < 0.15)
				c = 0.0;
			in->capacity[i * m + r] = c;
		}
	for (size_t j = 0; j < n; j++) {
		bool any = false;
		for (size_t r = 0; r < m; r++) {
			double d = 0.1 + 9.9 * tu_uniform(g);
			if ((flags & TU_ZERO_DEMAND) && tu_uniform(g) < 0.2)
				d = 0.0;
			in->demand[j * m + r] = d;
			any |= d > 0;
		}
		if (!any)
			in->demand[j * m + (size_t)(tu_uniform(g) * (double)m)] = 1.0;
		in->weight[j] = (flags & TU_WEIGHTS) ? 0.5 + 3.5 * tu_uniform(g) : 1.0;
		in->max_tasks[j] = ((flags & TU_CAPS) && tu_uniform(g) < 0.3)
				       ? 0.5 + 10 * tu_uniform(g)
				       : INFINITY;
		size_t keep = (size_t)(tu_uniform(g) * (double)k);
		for (size_t i = 0; i < k; i++)
			in->eligible[j * k + i] =
			    !(flags & TU_PLACEMENT) || i == keep || tu_uniform(g) < 0.6;
	}
	in->p = (struct fs_problem){
	    .n_tenants = n,
	    .n_pools = k,
	    .n_resources = m,
	    .capacity = in->capacity,
	    .demand = in->demand,
	    .max_tasks = in->max_tasks,
	    .weight = in->weight,
	    .eligible = in->eligible,
	};
}

void tu_instance_free(struct tu_instance *in)
{
	free(in->capacity);
	free(in->demand);
	free(in->max_tasks);
	free(in->weight);
	free(in->eligible);
}

int tu_solve_rule(const struct fs_problem *p, tu_rule_fn fn, const struct fs_options *opt,
		  struct fs_solution *out, struct fs_error *err)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = fs_problem_validate(p, err);
	if (r < 0)
		return r;
	r = fs_solution_init(out, p);
	if (r < 0)
		return r;
	return fn(p, opt, out, err);
}

size_t tu_range(struct tu_rng *g, size_t lo, size_t hi)
{
	return lo + (size_t)(tu_uniform(g) * (double)(hi - lo + 1));
}

void tu_perturb(struct tu_instance *in, struct tu_rng *g, size_t count)
{
	const size_t N = in->p.n_tenants, M = in->p.n_resources, stride = N / count;

	for (size_t c = 0; c < count; c++) {
		const size_t n = c * stride + tu_range(g, 0, stride - 1);
		for (size_t r = 0; r < M; r++)
			in->demand[n * M + r] *= 1 + 0.2 * (2 * tu_uniform(g) - 1);
	}
}
