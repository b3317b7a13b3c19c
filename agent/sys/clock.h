/* SPDX-License-Identifier: MIT */
/*
 * CLOCK_MONOTONIC in microseconds: the one time base of periods, back-offs
 * and rate limits (sd-event's "now" is the same clock).
 */
#ifndef FAIRSHARE_AGENT_CLOCK_H
#define FAIRSHARE_AGENT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t fs_monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

#endif /* FAIRSHARE_AGENT_CLOCK_H */
