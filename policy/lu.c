/* SPDX-License-Identifier: MIT */
/* Dense LU with partial pivoting (see lu.h). */
#include "lu.h"

#include <errno.h>
#include <float.h>
#include <math.h>

int fs_lu_factor(double *a, size_t n, size_t *piv)
{
	size_t col;

	return fs_lu_factor_col(a, n, piv, &col);
}

int fs_lu_factor_col(double *a, size_t n, size_t *piv, size_t *col)
{
	for (size_t j = 0; j < n; j++) {
		size_t p = j;
		double big = fabs(a[j * n + j]), colmax = 0;

		for (size_t i = 0; i < n; i++)
			colmax = fmax(colmax, fabs(a[i * n + j]));
		for (size_t i = j + 1; i < n; i++)
			if (fabs(a[i * n + j]) > big) {
				big = fabs(a[i * n + j]);
				p = i;
			}
		piv[j] = p;
		/* Relative to the column: Newton matrices mix rows whose scales
		 * differ by many orders (w/lambda of slack rows grows without
		 * bound), so an absolute threshold would be meaningless. */
		if (!(big > DBL_EPSILON * colmax) || !(big > 0)) {
			*col = j;
			return -EDOM;
		}
		if (p != j)
			for (size_t k = 0; k < n; k++) {
				const double t = a[j * n + k];
				a[j * n + k] = a[p * n + k];
				a[p * n + k] = t;
			}
		const double inv = 1 / a[j * n + j];
		for (size_t i = j + 1; i < n; i++) {
			const double f = a[i * n + j] * inv;
			if (f == 0)
				continue;
			a[i * n + j] = f;
			for (size_t k = j + 1; k < n; k++)
				a[i * n + k] -= f * a[j * n + k];
		}
	}
	return 0;
}

void fs_lu_solve(const double *a, size_t n, const size_t *piv, double *b)
{
	/* The factor swapped whole rows, L included, so all swaps come first. */
	for (size_t j = 0; j < n; j++)
		if (piv[j] != j) {
			const double t = b[j];
			b[j] = b[piv[j]];
			b[piv[j]] = t;
		}
	for (size_t j = 0; j < n; j++)
		for (size_t i = j + 1; i < n; i++)
			b[i] -= a[i * n + j] * b[j];
	for (size_t j = n; j-- > 0;) {
		for (size_t k = j + 1; k < n; k++)
			b[j] -= a[j * n + k] * b[k];
		b[j] /= a[j * n + j];
	}
}
