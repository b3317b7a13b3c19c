/* SPDX-License-Identifier: MIT */
/*
 * The host's other work between two of the daemon's periods, as far as the
 * CPU caches are concerned: fairshared runs once a second on a shared host,
 * and in between the tenants run on the same cores, so each period starts
 * with little of its data in L2 or L3. A benchmark that runs periods back to
 * back keeps a small tree's whole working set cached (100 tenants: about
 * 1.5 MiB) and a large one's not, so it times small trees on a hot cache and
 * large ones on a cold one. cache_sweep_run() streams a file of the given
 * size through the caches (read into a small buffer), between periods and
 * outside the measured region: every size then starts on a cold cache, as
 * on the host. The file is unlinked at once (O_TMPFILE) and, being read and
 * never mapped, is not part of the process's RSS.
 */
#ifndef FAIRSHARE_BENCH_CACHE_SWEEP_H
#define FAIRSHARE_BENCH_CACHE_SWEEP_H

#include <stddef.h>

struct cache_sweep {
	int fd;	      /* -1: off */
	size_t bytes; /* the file's size */
};

/* A sweep of mib MiB through a file in dir (0 MiB: off, a no-op). 0 or -errno. */
int cache_sweep_open(struct cache_sweep *cs, const char *dir, size_t mib);

/* Reads the whole file once. 0 or -errno. */
int cache_sweep_run(const struct cache_sweep *cs);

void cache_sweep_close(struct cache_sweep *cs);

#endif /* FAIRSHARE_BENCH_CACHE_SWEEP_H */
