/* SPDX-License-Identifier: MIT */
/* A shared disk budget as io.max values (see io_split.h). Pure. */
#include "io_split.h"

#include <math.h>

double plan_io_read_share(double read, double total, double prev)
{
	/* NaN read or total fails the comparisons: no measurement. */
	if (total > 0 && read >= 0)
		return fmin(1.0, read / total);
	return prev >= 0 && prev <= 1 ? prev : 0.5;
}

void plan_io_split(double limit, double read_share, double floor, double out[2])
{
	double share[2] = {read_share, 1.0 - read_share};

	for (int k = 0; k < 2; k++)
		out[k] = isfinite(limit) ? limit * fmax(share[k], floor) : INFINITY;
}
