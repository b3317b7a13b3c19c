/* SPDX-License-Identifier: MIT */
/*
 * The daemon's malloc settings: keep the memory a period frees for the next.
 *
 * Every period allocates and frees the same working set (the solve's scratch
 * alone is about 1.8 MB at 10,000 tenants on one pool, in blocks of 10-240
 * kB). glibc's defaults may give a freed block back to the kernel (the top of
 * the heap past M_TRIM_THRESHOLD, or a block past M_MMAP_THRESHOLD, both
 * 128 kB to start and raised only as mapped blocks are freed), and then the
 * next period faults every page of it in again: about 400 faults, 4 of a 6
 * ms solve on the test VM, where a fault costs about 6 us. Kept, the period
 * reuses them; the RSS stays at the period's peak instead of falling back
 * between periods. The mmap threshold goes to the largest value glibc
 * accepts on 64-bit (32 MB, the ceiling its own adjustment stops at), so
 * larger blocks (a fleet leader's solves of hundreds of hosts) are kept
 * too; only blocks past that are mapped and unmapped on their own. Setting
 * either value turns glibc's adjustment off. fairshared applies it at start;
 * fairshare-bench times its one-pool N = 10,000 rows under it too, so both
 * name the same two values here.
 */
#ifndef FAIRSHARE_AGENT_HEAP_H
#define FAIRSHARE_AGENT_HEAP_H

#include <malloc.h>
#include <stdbool.h>

/* Whether glibc took both (each is tried; mallopt returns 1 on success, and
 * 0, or -1 under a sanitizer's allocator, when it refuses). */
static inline bool fs_keep_freed_memory(void)
{
	const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;
	const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 64 << 20) == 1;

	return mmap_ok && trim_ok;
}

#endif /* FAIRSHARE_AGENT_HEAP_H */
