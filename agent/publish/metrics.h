/* SPDX-License-Identifier: MIT */
/*
 * Prometheus textfile-collector output (node_exporter --collector.textfile):
 * written once per period, atomically (a temporary file in the same
 * directory, fsync'd, then renamed over the target), so a scraper never
 * reads half a file.
 *
 * Names: fairshare_ prefix, base units (_bytes, _seconds, _ratio in [0, 1]),
 * _total for counters. Labels: tenant (configured names) and resource
 * (configured resources) only, so the series are bounded by the config.
 * Amounts of mixed units (cores, bytes, bytes/s) are exported as ratios of
 * the resource's capacity; the capacity itself per unit family.
 */
#ifndef FAIRSHARE_AGENT_METRICS_H
#define FAIRSHARE_AGENT_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "published.h"

/* Writes the exposition text of p to f. 0 or -errno. */
int fsd_metrics_print(FILE *f, const struct fsd_published *p);

/* fsd_metrics_print into path, atomically. 0 or -errno with err filled. */
int fsd_metrics_write(const char *path, const struct fsd_published *p, char *err, size_t errlen);

#endif /* FAIRSHARE_AGENT_METRICS_H */
