/* SPDX-License-Identifier: MIT */
/* Sequential-LP max-min DRF with GLPK (see bench_glpk.h). */
#include "bench_glpk.h"

#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* A resource whose least use at level t* is within this of capacity is full. */
#define SAT_TOL 1e-9

struct drf_lp {
	const struct fs_problem *p;
	size_t ns;	/* served tenants (gamma > 0) */
	size_t *tenant; /* [ns] */
	double *gamma;	/* [ns] */
	double *a;	/* [ns][M] = gamma d / c: use of each resource at z = 1 */
	double *zmax;	/* [ns] max_tasks / gamma */
	double *z;	/* [ns] frozen value */
	bool *frozen;	/* [ns] */
	double *use;	/* [M] */
};

static void drf_lp_free(struct drf_lp *d)
{
	free(d->tenant);
	free(d->gamma);
	free(d->a);
	free(d->zmax);
	free(d->z);
	free(d->frozen);
	free(d->use);
}

static int drf_lp_build(struct drf_lp *d, const struct fs_problem *p)
{
	const size_t N = p->n_tenants, M = p->n_resources;

	d->p = p;
	d->tenant = malloc(N * sizeof(*d->tenant));
	d->gamma = calloc(N, sizeof(double));
	d->a = calloc(N * M, sizeof(double));
	d->zmax = calloc(N, sizeof(double));
	d->z = calloc(N, sizeof(double));
	d->frozen = calloc(N, sizeof(bool));
	d->use = calloc(M, sizeof(double));
	if (!d->tenant || !d->gamma || !d->a || !d->zmax || !d->z || !d->frozen || !d->use)
		return -ENOMEM;
	for (size_t n = 0; n < N; n++) {
		const double g = fs_gamma(p, n, 0);
		if (g <= 0)
			continue;
		const size_t i = d->ns++;
		d->tenant[i] = n;
		d->gamma[i] = g;
		d->zmax[i] = fs_max_tasks(p, n) / g;
		for (size_t r = 0; r < M; r++)
			if (p->capacity[r] > 0)
				d->a[i * M + r] = g * p->demand[n * M + r] / p->capacity[r];
	}
	return 0;
}

/* Loads rows 1..M (capacity), M+1..M+ns (levels); columns 1..ns (z), ns+1 (t). */
static int load(glp_prob *lp, const struct drf_lp *d)
{
	const size_t M = d->p->n_resources, ns = d->ns;
	size_t nnz = 0, cap = ns * M + 2 * ns + 1;
	int *ia = malloc(cap * sizeof(int)), *ja = malloc(cap * sizeof(int));
	double *ar = malloc(cap * sizeof(double));
	int ret = -ENOMEM;

	if (!ia || !ja || !ar)
		goto out;
	glp_set_obj_dir(lp, GLP_MAX);
	glp_add_rows(lp, (int)(M + ns));
	glp_add_cols(lp, (int)(ns + 1));
	for (size_t r = 0; r < M; r++)
		glp_set_row_bnds(lp, (int)r + 1, d->p->capacity[r] > 0 ? GLP_UP : GLP_FR, 0, 1);
	for (size_t i = 0; i < ns; i++) {
		const int col = (int)i + 1, row = (int)(M + i) + 1;
		glp_set_col_bnds(lp, col, isfinite(d->zmax[i]) ? GLP_DB : GLP_LO, 0,
				 isfinite(d->zmax[i]) ? d->zmax[i] : 0);
		glp_set_row_bnds(lp, row, GLP_LO, 0, 0);
		for (size_t r = 0; r < M; r++)
			if (d->a[i * M + r] > 0) {
				nnz++;
				ia[nnz] = (int)r + 1;
				ja[nnz] = col;
				ar[nnz] = d->a[i * M + r];
			}
		nnz++;
		ia[nnz] = row;
		ja[nnz] = col;
		ar[nnz] = 1;
		nnz++;
		ia[nnz] = row;
		ja[nnz] = (int)ns + 1;
		ar[nnz] = -fs_weight(d->p, d->tenant[i]);
	}
	glp_set_col_bnds(lp, (int)ns + 1, GLP_LO, 0, 0);
	glp_set_obj_coef(lp, (int)ns + 1, 1);
	glp_load_matrix(lp, (int)nnz, ia, ja, ar);
	ret = 0;
out:
	free(ia);
	free(ja);
	free(ar);
	return ret;
}

static void freeze(glp_prob *lp, struct drf_lp *d, size_t i, double z)
{
	d->frozen[i] = true;
	d->z[i] = z;
	glp_set_col_bnds(lp, (int)i + 1, GLP_FX, z, z);
	glp_set_row_bnds(lp, (int)(d->p->n_resources + i) + 1, GLP_FR, 0, 0);
}

/* Freezes after a round at level t; returns how many were frozen. */
static size_t freeze_round(glp_prob *lp, struct drf_lp *d, double t)
{
	const size_t M = d->p->n_resources;
	size_t frozen = 0, rmax = 0;

	for (size_t r = 0; r < M; r++)
		d->use[r] = 0;
	for (size_t i = 0; i < d->ns; i++) {
		const double z =
		    d->frozen[i] ? d->z[i] : fmin(d->zmax[i], fs_weight(d->p, d->tenant[i]) * t);
		for (size_t r = 0; r < M; r++)
			d->use[r] += z * d->a[i * M + r];
	}
	for (size_t r = 1; r < M; r++)
		if (d->use[r] > d->use[rmax])
			rmax = r;
	for (size_t i = 0; i < d->ns; i++) {
		if (d->frozen[i])
			continue;
		const double lvl = fs_weight(d->p, d->tenant[i]) * t;
		bool stop = lvl >= d->zmax[i] * (1 - SAT_TOL);
		for (size_t r = 0; r < M && !stop; r++)
			stop = d->a[i * M + r] > 0 && d->use[r] >= 1 - SAT_TOL;
		if (stop) {
			freeze(lp, d, i, fmin(lvl, d->zmax[i]));
			frozen++;
		}
	}
	/* Round-off left nothing "full": the fullest resource is the one. */
	if (!frozen)
		for (size_t i = 0; i < d->ns; i++)
			if (!d->frozen[i] && d->a[i * M + rmax] > 0) {
				freeze(lp, d, i,
				       fmin(fs_weight(d->p, d->tenant[i]) * t, d->zmax[i]));
				frozen++;
			}
	return frozen;
}

int bench_drf_glpk(const struct fs_problem *p, double *x, struct bench_glpk_stats *st)
{
	struct drf_lp d = {0};
	glp_prob *lp = NULL;
	glp_smcp parm;
	size_t left;
	int ret;

	st->rounds = st->simplex_it = 0;
	if (p->n_pools != 1)
		return -EINVAL;
	ret = drf_lp_build(&d, p);
	if (ret < 0)
		goto out;
	for (size_t n = 0; n < p->n_tenants; n++)
		x[n] = 0;
	glp_term_out(GLP_OFF); /* glp_scale_prob talks even with msg_lev off */
	lp = glp_create_prob();
	ret = load(lp, &d);
	if (ret < 0)
		goto out;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	glp_scale_prob(lp, GLP_SF_AUTO);
	left = d.ns;
	while (left > 0) {
		ret = -EIO;
		if (glp_simplex(lp, &parm) != 0 || glp_get_status(lp) != GLP_OPT)
			goto out;
		st->rounds++;
		const size_t f = freeze_round(lp, &d, glp_get_col_prim(lp, (int)d.ns + 1));
		if (!f)
			goto out; /* a round that freezes nobody would loop forever */
		left -= f;
	}
	st->simplex_it = glp_get_it_cnt(lp);
	for (size_t i = 0; i < d.ns; i++)
		x[d.tenant[i]] = d.z[i] * d.gamma[i];
	ret = 0;
out:
	if (lp)
		glp_delete_prob(lp);
	drf_lp_free(&d);
	return ret;
}
