/* SPDX-License-Identifier: MIT */
/*
 * Minimal-gap priority ([P3] section 6; ALGORITHMS.md 8): with several
 * bottlenecks a tenant is prioritised by its smallest entitlement gap over the
 * saturated resources, "because this is where it is easiest to close the
 * gap", and is not promoted once it has reached its entitlement on any of
 * them -- not by its largest gap.
 */
#include "policy.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int bad_share(struct fs_error *err, const char *what, size_t n, size_t r, double v)
{
	if (err)
		snprintf(err->msg, sizeof(err->msg),
			 "minimal gap: %s share of tenant %zu on resource %zu is %g (must be a "
			 "finite number >= 0)",
			 what, n, r, v);
	return -EINVAL;
}

int fs_minimal_gap(size_t n_tenants, size_t n_resources, const double *entitled,
		   const double *consumed, const bool *saturated, double *priority,
		   int *gap_resource, bool *promoted, struct fs_error *err)
{
	const size_t N = n_tenants, M = n_resources;

	if (!N || !M || !entitled || !consumed || !saturated || !priority ||
	    M > (size_t)INT32_MAX || N > ((size_t)1 << 28) / M) {
		if (err)
			snprintf(err->msg, sizeof(err->msg),
				 "minimal gap: bad sizes (%zu tenants, %zu resources) or missing "
				 "array",
				 N, M);
		return -EINVAL;
	}
	for (size_t n = 0; n < N; n++)
		for (size_t r = 0; r < M; r++) {
			const double e = entitled[n * M + r], c = consumed[n * M + r];
			if (!(e >= 0) || isinf(e))
				return bad_share(err, "entitled", n, r, e);
			if (!(c >= 0) || isinf(c))
				return bad_share(err, "consumed", n, r, c);
		}

	for (size_t n = 0; n < N; n++) {
		double gap = INFINITY;
		int where = FS_NO_RESOURCE;
		for (size_t r = 0; r < M; r++) {
			const double g = entitled[n * M + r] - consumed[n * M + r];
			if (saturated[r] && g < gap) {
				gap = g;
				where = (int)r;
			}
		}
		priority[n] = where == FS_NO_RESOURCE ? 0 : gap;
		if (gap_resource)
			gap_resource[n] = where;
		if (promoted)
			promoted[n] = where != FS_NO_RESOURCE && gap > 0;
	}
	return 0;
}
