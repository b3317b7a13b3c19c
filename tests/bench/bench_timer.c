/* SPDX-License-Identifier: MIT */
#include "bench_timer.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

double bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int bench_timing_init(struct bench_timing *t, const struct bench_budget *b)
{
	t->n = 0;
	t->spent = 0;
	t->cap = b->max_reps > 0 ? b->max_reps : 1;
	t->v = malloc((size_t)t->cap * sizeof(double));
	return t->v ? 0 : -ENOMEM;
}

void bench_timing_add(struct bench_timing *t, double ms)
{
	if (t->n < t->cap)
		t->v[t->n++] = ms;
	t->spent += ms;
}

int bench_timing_more(const struct bench_timing *t, const struct bench_budget *b)
{
	if (t->n >= t->cap)
		return 0;
	if (t->n == 0)
		return 1;
	if (t->n == 1 && t->v[0] >= b->ms)
		return 0;
	return t->n < b->min_reps || t->spent < b->ms;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_timing_median(struct bench_timing *t)
{
	if (!t->n)
		return 0;
	qsort(t->v, (size_t)t->n, sizeof(double), cmp_double);
	return t->n % 2 ? t->v[t->n / 2] : 0.5 * (t->v[t->n / 2 - 1] + t->v[t->n / 2]);
}

void bench_timing_free(struct bench_timing *t)
{
	free(t->v);
	t->v = NULL;
}
