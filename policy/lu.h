/* SPDX-License-Identifier: MIT */
/*
 * Dense LU factorisation with partial pivoting (internal to the policy
 * library): the Newton systems of apf_ipm.c are small (one row per pool and
 * resource) and, for alpha != 1, not symmetric, so Cholesky does not apply.
 */
#ifndef FAIRSHARE_LU_H
#define FAIRSHARE_LU_H

#include <stddef.h>

/*
 * Factorises the n x n row-major matrix a in place (P a = L U, unit L below
 * the diagonal); piv[n] records the row swaps. Returns 0, or -EDOM when a
 * pivot is zero or smaller than eps * the largest entry of its column (the
 * matrix is singular to working precision).
 */
int fs_lu_factor(double *a, size_t n, size_t *piv);

/* fs_lu_factor that, on -EDOM, also says which column had no pivot (*col). */
int fs_lu_factor_col(double *a, size_t n, size_t *piv, size_t *col);

/* Solves a x = b with the factors of fs_lu_factor; b is overwritten by x. */
void fs_lu_solve(const double *a, size_t n, const size_t *piv, double *b);

#endif
