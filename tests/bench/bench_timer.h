/* SPDX-License-Identifier: MIT */
/* Wall-clock sampling for fairshare-bench: medians of repeated runs. */
#ifndef FAIRSHARE_BENCH_TIMER_H
#define FAIRSHARE_BENCH_TIMER_H

#include <stddef.h>

/* CLOCK_MONOTONIC in milliseconds. */
double bench_now_ms(void);

/* How long to keep repeating one measurement. */
struct bench_budget {
	double ms;    /* stop once this much time was spent ... */
	int min_reps; /* ... and at least this many runs were made (1 if one run
			 alone exceeds ms) ... */
	int max_reps; /* ... or after this many runs */
};

/* Collects samples; the median is taken over at most max_reps of them. */
struct bench_timing {
	double *v;
	int n, cap;
	double spent;
};

int bench_timing_init(struct bench_timing *t, const struct bench_budget *b);
void bench_timing_add(struct bench_timing *t, double ms);
/* True while more runs are wanted. */
int bench_timing_more(const struct bench_timing *t, const struct bench_budget *b);
double bench_timing_median(struct bench_timing *t);
void bench_timing_free(struct bench_timing *t);

#endif /* FAIRSHARE_BENCH_TIMER_H */
