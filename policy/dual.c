/* SPDX-License-Identifier: MIT */
/* Dual (price) solver for separable concave maximisation; see dual.h. */
#include "dual.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ARMIJO		   1e-4
#define MAX_HALVINGS	   60
#define DEFAULT_MAX_ITER   200
#define WARMUP_ROUNDS	   3
#define STALL_WINDOW	   4
#define NOISE_ULPS	   64
#define MU_MIN		   1e-13
#define MAX_EXTRAPOLATIONS 40
/* Sampled start (sample_start), from SAMPLE_MIN_N items on. */
#define SAMPLE_STRIDE 16
#define SAMPLE_MIN_N  2048
#define SAMPLE_TOL    1e-3
#define SAMPLE_HEAVY  16 /* times the mean demand: in the sample for itself */
#define SAMPLE_ROUNDS 3
/* Gradients are judged net of their rounding level (point.noise). */
#define TOL_FLOOR (4 * DBL_EPSILON)

struct point {
	double *lambda; /* [m] */
	double *p;	/* [n] price */
	double *x;	/* [n] response */
	double *w;	/* [n] -dx/dp (0 where clipped) */
	double *g;	/* [m] dD/dlambda = cap - usage */
	double *noise;	/* [m] rounding level of g: eps * sum_i a_ir (x_i + B_i) */
};

struct solver {
	const struct fs_dual_problem *dp;
	size_t n, m;
	double beta; /* 1 / alpha */
	struct point cur, trial;
	double *H;    /* [m][m] Hessian of D at cur */
	double *L;    /* [m][m] Cholesky factor of the free block */
	double *d;    /* [m] search direction */
	double *rhs;  /* [m] */
	double *y;    /* [m] Newton step on the free block */
	size_t *cand; /* [m] candidate free coordinates (resource indices) */
	size_t ncand;
	size_t *freei;	/* [m] free coordinates (indices into cand) */
	bool *pin;	/* [m] coordinates sent to the bound this step */
	size_t *priced; /* [m] scratch: resources with a positive price */
	double *use;	/* [m] scratch: resource usage */
	struct fs_dual_stats st;
	double mu; /* relative damping of the Newton system */
};

static double item_b(const struct solver *s, size_t i)
{
	return s->dp->B ? s->dp->B[i] : 0.0;
}

static double item_hi(const struct solver *s, size_t i)
{
	return s->dp->hi ? s->dp->hi[i] : INFINITY;
}

/* A p^-beta without pow() in the common beta = 1 case. */
static double power_term(const struct solver *s, double A, double p)
{
	return s->beta == 1.0 ? A / p : A * exp(-s->beta * log(p));
}

static double response(const struct solver *s, size_t i, double p, double *w)
{
	const double B = item_b(s, i), hi = item_hi(s, i);
	double u;

	*w = 0;
	if (p <= 0)
		return hi;
	u = power_term(s, s->dp->A[i], p) - B;
	if (u >= hi)
		return hi;
	if (u <= 0)
		return 0;
	*w = s->beta * (u + B) / p;
	return u;
}

/* Computes p, x, w and g at pt->lambda; false when some x is unbounded. */
static bool evaluate(struct solver *s, struct point *pt)
{
	const size_t n = s->n, m = s->m;
	const double *a = s->dp->a;
	double *use = s->use;
	size_t *priced = s->priced, np = 0;

	/* Most prices are 0 near the optimum; p only needs the others. */
	for (size_t r = 0; r < m; r++) {
		use[r] = 0;
		pt->noise[r] = 0;
		if (pt->lambda[r] != 0)
			priced[np++] = r;
	}
	for (size_t i = 0; i < n; i++) {
		const double *ai = a + i * m;
		double p = s->dp->offset ? s->dp->offset[i] : 0, x;

		for (size_t j = 0; j < np; j++)
			p += ai[priced[j]] * pt->lambda[priced[j]];
		pt->p[i] = p;
		x = response(s, i, p, &pt->w[i]);
		if (!isfinite(x))
			return false;
		pt->x[i] = x;
		if (x > 0)
			for (size_t r = 0; r < m; r++)
				use[r] += ai[r] * x;
		/* x = A p^-beta - B cancels when B >> x: its absolute error is
		 * eps (x + B), which bounds how small the gradient can get. */
		if (s->dp->B && s->dp->B[i] > 0 && x > 0)
			for (size_t r = 0; r < m; r++)
				pt->noise[r] += ai[r] * s->dp->B[i];
	}
	for (size_t r = 0; r < m; r++) {
		pt->g[r] = s->dp->cap[r] - use[r];
		pt->noise[r] = NOISE_ULPS * DBL_EPSILON * (pt->noise[r] + use[r] + s->dp->cap[r]);
	}
	return true;
}

/* int_a^(a+w) q^-beta dq for a > 0, w >= 0, written to avoid cancellation. */
static double power_integral(const struct solver *s, double a, double w)
{
	double rel = log1p(w / a);

	if (s->beta == 1.0)
		return rel;
	return exp((1 - s->beta) * log(a)) * expm1((1 - s->beta) * rel) / (1 - s->beta);
}

/*
 * int_lo^(lo+w) x_i(q) dq for lo >= 0, w >= 0: the item's h_i(lo) - h_i(lo+w).
 * The width is passed separately because near the optimum it is far below the
 * rounding error of lo + w - lo.
 */
static double response_integral(const struct solver *s, size_t i, double lo, double w)
{
	const double A = s->dp->A[i], B = item_b(s, i), cap = item_hi(s, i);
	const double alpha = 1.0 / s->beta, hi = lo + w;
	double q_cap = 0, q_zero = INFINITY, v = 0, a, b;

	/* x = cap for q <= q_cap, x = 0 for q >= q_zero, the power law between. */
	if (isfinite(cap))
		q_cap = s->beta == 1.0 ? A / (cap + B) : pow(A / (cap + B), alpha);
	if (B > 0)
		q_zero = s->beta == 1.0 ? A / B : pow(A / B, alpha);
	/* Whole interval in one regime: use the exact width. */
	if (hi <= q_cap)
		return cap * w;
	if (lo >= q_zero)
		return 0;
	if (lo >= q_cap && hi <= q_zero) {
		if (lo <= 0)
			return INFINITY;
		return A * power_integral(s, lo, w) - B * w;
	}
	if (lo < q_cap)
		v += cap * (fmin(hi, q_cap) - lo);
	a = fmax(lo, q_cap);
	b = fmin(hi, q_zero);
	if (b > a) {
		if (a <= 0)
			return INFINITY;
		v += A * power_integral(s, a, b - a) - B * (b - a);
	}
	return v;
}

/*
 * D(to) - D(from), summed from per-item integrals over the exact price
 * changes sum_r a_ir dlambda_r, so that the tiny differences near the optimum
 * are neither lost to huge F values nor to rounding in p. *scale: sum of
 * magnitudes (for the rounding allowance).
 */
static double delta_dual(const struct solver *s, const struct point *from, const struct point *to,
			 double *scale)
{
	const size_t m = s->m;
	double dd = 0, mag = 0, *dl = s->rhs;

	for (size_t r = 0; r < m; r++) {
		double t;
		dl[r] = to->lambda[r] - from->lambda[r];
		t = s->dp->cap[r] * dl[r];
		dd += t;
		mag += fabs(t);
	}
	for (size_t i = 0; i < s->n; i++) {
		const double *ai = s->dp->a + i * m;
		double dp = 0, v;

		for (size_t r = 0; r < m; r++)
			dp += ai[r] * dl[r];
		if (dp == 0)
			continue;
		if (dp > 0)
			v = response_integral(s, i, from->p[i], dp);
		else
			v = -response_integral(s, i, fmax(0, from->p[i] + dp), -dp);
		dd -= v;
		mag += fabs(v);
	}
	*scale = mag;
	return dd;
}

static void hessian(struct solver *s)
{
	const size_t n = s->n, m = s->m;
	const double *a = s->dp->a;
	double *H = s->H, *v = s->y;
	size_t k = 0;

	for (size_t r = 0; r < m; r++)
		if (!(s->cur.lambda[r] <= 0 && s->cur.g[r] > 0))
			s->cand[k++] = r;
	s->ncand = k;
	memset(H, 0, k * k * sizeof(*H));
	for (size_t i = 0; i < n; i++) {
		const double w = s->cur.w[i];
		const double *ai = a + i * m;

		if (w <= 0)
			continue;
		for (size_t j = 0; j < k; j++)
			v[j] = ai[s->cand[j]];
		for (size_t j = 0; j < k; j++) {
			const double wj = w * v[j];
			for (size_t l = j; l < k; l++)
				H[j * k + l] += wj * v[l];
		}
	}
	for (size_t j = 0; j < k; j++)
		for (size_t l = 0; l < j; l++)
			H[j * k + l] = H[l * k + j];
}

static double projected_gradient(const struct solver *s)
{
	double worst = 0;

	for (size_t r = 0; r < s->m; r++) {
		double g = s->cur.g[r];
		if (s->cur.lambda[r] <= 0 && g > 0)
			g = 0;
		worst = fmax(worst, fmax(0, fabs(g) - s->cur.noise[r]) / s->dp->cap[r]);
	}
	return worst;
}

/* Solves (H_FF + mu I) y = rhs over the nf free candidates; false if not PD. */
static bool cholesky_solve(struct solver *s, size_t nf, double *y)
{
	const size_t k = s->ncand;
	const double *H = s->H;
	double *L = s->L;

	/* Relative (Jacobi-scaled) regularisation: prices of different
	 * resources may differ by many orders of magnitude. */
	for (size_t a = 0; a < nf; a++)
		if (!(H[s->freei[a] * k + s->freei[a]] > 0))
			return false;
	for (double mu = s->mu; mu < 1e12; mu *= 100) {
		bool ok = true;
		for (size_t a = 0; a < nf && ok; a++)
			for (size_t b = 0; b <= a && ok; b++) {
				const double haa = H[s->freei[a] * k + s->freei[a]];
				double v =
				    H[s->freei[a] * k + s->freei[b]] + (a == b ? mu * haa : 0);
				for (size_t c = 0; c < b; c++)
					v -= L[a * nf + c] * L[b * nf + c];
				if (a == b) {
					if (!(v > 1e-15 * haa))
						ok = false;
					else
						L[a * nf + a] = sqrt(v);
				} else {
					L[a * nf + b] = v / L[b * nf + b];
				}
			}
		if (!ok)
			continue;
		for (size_t a = 0; a < nf; a++) {
			double v = s->rhs[a];
			for (size_t c = 0; c < a; c++)
				v -= L[a * nf + c] * y[c];
			y[a] = v / L[a * nf + a];
		}
		for (size_t a = nf; a-- > 0;) {
			double v = y[a];
			for (size_t c = a + 1; c < nf; c++)
				v -= L[c * nf + a] * y[c];
			y[a] = v / L[a * nf + a];
		}
		return true;
	}
	return false;
}

/*
 * Projected Newton direction (Bertsekas 1982): coordinates at (or within one
 * diagonal Newton step of) the bound with a gradient pushing outwards are
 * sent to 0; the rest take the Newton step of the free block. False when the
 * free block has no curvature (then coordinate minimisation is the tool).
 */
static bool newton_direction(struct solver *s)
{
	const size_t k = s->ncand;
	double *y = s->y;
	size_t nf = 0;

	for (size_t r = 0; r < s->m; r++) {
		s->d[r] = -s->cur.lambda[r];
		s->pin[r] = true;
	}
	for (size_t j = 0; j < k; j++) {
		const size_t r = s->cand[j];
		const double g = s->cur.g[r], l = s->cur.lambda[r], h = s->H[j * k + j];
		if (g > 0 && (h <= 0 || l <= g / h))
			continue;
		s->pin[r] = false;
		if (h <= 0)
			return false;
		s->rhs[nf] = -g;
		s->freei[nf++] = j;
	}
	if (nf && !cholesky_solve(s, nf, y))
		return false;
	for (size_t a = 0; a < nf; a++)
		s->d[s->cand[s->freei[a]]] = y[a];
	return true;
}

static void swap_points(struct solver *s)
{
	struct point t = s->cur;
	s->cur = s->trial;
	s->trial = t;
}

/* Directional derivative of D at the trial point along trial - cur. */
static double trial_slope(const struct solver *s)
{
	double v = 0;

	for (size_t r = 0; r < s->m; r++)
		v += s->trial.g[r] * (s->trial.lambda[r] - s->cur.lambda[r]);
	return v;
}

/* Trial point lambda(t); false when it is not a descent move at all. */
static bool trial_point(struct solver *s, double t, bool pinned, double *lin)
{
	bool moved = false;

	*lin = 0;
	for (size_t r = 0; r < s->m; r++) {
		double v;
		if (!s->pin[r])
			v = fmax(0, s->cur.lambda[r] + t * s->d[r]);
		else if (pinned)
			v = 0;
		else /* stay positive: a zero price can leave demand unbounded */
			v = s->cur.lambda[r] * (1 - 0.9 * t);
		moved |= v != s->cur.lambda[r];
		s->trial.lambda[r] = v;
		*lin += s->cur.g[r] * (v - s->cur.lambda[r]);
	}
	if (!moved)
		*lin = 0;
	return moved && *lin < 0;
}

/* Armijo test at the trial point; moves there when it passes. */
static bool accept_trial(struct solver *s, double lin)
{
	double dd, scale;

	s->st.evals++;
	if (!evaluate(s, &s->trial))
		return false;
	/* D is convex along the segment, so D(trial) - D(cur) <= the slope at
	 * the trial point: Armijo holds without computing D. */
	if (trial_slope(s) > ARMIJO * lin) {
		/* Otherwise compute the decrease, which must also beat its own
		 * rounding error (big for big moves in flat regions). */
		dd = delta_dual(s, &s->cur, &s->trial, &scale);
		if (dd > ARMIJO * lin - 1e-14 * scale)
			return false;
	}
	swap_points(s);
	return true;
}

/*
 * After a full step along d, keep stepping (doubling) while D still falls
 * steeply along d: far from the optimum the quadratic model badly
 * underestimates the step when responses are very flat in the price (large
 * alpha), or along the valley of a singular Hessian.
 */
static void extrapolate(struct solver *s, double slope0)
{
	double lin, step = 1;

	for (int k = 0; k < MAX_EXTRAPOLATIONS; k++, step *= 2) {
		double slope = 0;
		for (size_t r = 0; r < s->m; r++)
			slope += s->cur.g[r] * s->d[r];
		if (!(slope < 0.5 * slope0) || !trial_point(s, step, false, &lin) ||
		    !accept_trial(s, lin))
			return;
	}
}

/*
 * Armijo backtracking along the projection arc; returns the step taken (0:
 * none). First try sending the pinned coordinates straight to the bound while the
 * Newton part takes its full step (damping is only ever needed for the
 * latter); if that fails, the classic arc lambda(t) = max(0, lambda + t d).
 */
static double line_search(struct solver *s)
{
	double lin, lin0 = 0, t = 1;

	for (size_t r = 0; r < s->m; r++)
		lin0 += s->cur.g[r] * s->d[r];
	if (trial_point(s, 1, true, &lin) && accept_trial(s, lin))
		return 1;
	for (int h = 0; h < MAX_HALVINGS; h++, t *= 0.5) {
		if (!trial_point(s, t, false, &lin)) {
			if (lin == 0)
				return 0; /* the step no longer moves anything */
			continue;
		}
		if (accept_trial(s, lin)) {
			if (t == 1)
				extrapolate(s, lin0);
			return t;
		}
	}
	return 0;
}

/* dD/dlambda_r at lambda_r = v; base[i] is item i's price without r. */
static double coordinate_gradient(const struct solver *s, size_t r, const double *base, double v)
{
	const size_t m = s->m;
	double use = 0, w;

	for (size_t i = 0; i < s->n; i++) {
		const double air = s->dp->a[i * m + r];
		double x;
		if (air == 0)
			continue;
		x = response(s, i, base[i] + v * air, &w);
		if (!isfinite(x))
			return -INFINITY;
		use += air * x;
	}
	return s->dp->cap[r] - use;
}

/*
 * Exact minimisation of D along lambda_r (the gradient is monotone in it),
 * by bracketing and bisection. Prices are rebuilt from scratch rather than
 * updated by differences: they can span many orders of magnitude.
 */
static void minimise_coordinate(struct solver *s, size_t r)
{
	const size_t m = s->m;
	const double l0 = s->cur.lambda[r];
	double *base = s->trial.p, lo = 0, hi, v;

	for (size_t i = 0; i < s->n; i++) {
		const double *ai = s->dp->a + i * m;
		double p = s->dp->offset ? s->dp->offset[i] : 0;
		for (size_t c = 0; c < m; c++)
			if (c != r)
				p += ai[c] * s->cur.lambda[c];
		base[i] = p;
	}
	if (coordinate_gradient(s, r, base, 0) >= 0) {
		s->cur.lambda[r] = 0;
		return;
	}
	/* Bracket geometrically (prices can be astronomically small or large),
	 * then bisect to a relative precision. */
	hi = l0 > 0 ? l0 : 1;
	if (coordinate_gradient(s, r, base, hi) < 0) {
		for (int k = 0; k < 2100 && coordinate_gradient(s, r, base, hi) < 0; k++) {
			lo = hi;
			hi *= 2;
		}
		if (!isfinite(hi))
			return;
	} else {
		lo = hi / 2;
		for (int k = 0; k < 2100 && lo > 0 && coordinate_gradient(s, r, base, lo) >= 0;
		     k++) {
			hi = lo;
			lo /= 2;
		}
	}
	for (int k = 0; k < 200 && hi - lo > 1e-13 * hi; k++) {
		double mid = 0.5 * (lo + hi);
		if (coordinate_gradient(s, r, base, mid) < 0)
			lo = mid;
		else
			hi = mid;
	}
	v = hi;
	s->cur.lambda[r] = v;
}

static bool coordinate_sweep(struct solver *s)
{
	s->st.fallback++;
	for (size_t r = 0; r < s->m; r++)
		minimise_coordinate(s, r);
	return evaluate(s, &s->cur);
}

/*
 * Uniform price L (per unit of capacity) with every resource within capacity
 * even if nobody were clipped: usage_r / cap_r <= L^-beta sum_i (a_ir / cap_r)
 * A_i s_i^-beta, s_i = sum_r a_ir / cap_r.
 */
static void cold_start(struct solver *s)
{
	const size_t n = s->n, m = s->m;
	const double *cap = s->dp->cap;
	double *num = s->cur.g, L = 0;

	/* In capacity units: a_ir / cap_r, prices lambda_r = L / cap_r. */
	for (size_t r = 0; r < m; r++)
		num[r] = 0;
	for (size_t i = 0; i < n; i++) {
		const double *ai = s->dp->a + i * m;
		double si = 0, t;
		for (size_t r = 0; r < m; r++)
			si += ai[r] / cap[r];
		if (si <= 0)
			continue;
		t = power_term(s, s->dp->A[i], si);
		for (size_t r = 0; r < m; r++)
			num[r] += ai[r] / cap[r] * t;
	}
	for (size_t r = 0; r < m; r++)
		L = fmax(L, pow(num[r], 1.0 / s->beta));
	if (!(L > 0) || !isfinite(L))
		L = 1;
	for (size_t r = 0; r < m; r++)
		s->cur.lambda[r] = L / cap[r];
	/* A few multiplicative price adjustments (tatonnement) bring the prices
	 * of lightly used resources down while keeping every price positive, so
	 * that Newton starts near the right active set. */
	for (int round = 0; round < WARMUP_ROUNDS && evaluate(s, &s->cur); round++)
		for (size_t r = 0; r < m; r++) {
			const double use = s->dp->cap[r] - s->cur.g[r];
			const double f = pow(fmax(use, 0) / s->dp->cap[r], 1.0 / s->beta);
			s->cur.lambda[r] *= fmin(8, fmax(f, 0.125));
		}
}

static int check_input(const struct fs_dual_problem *dp)
{
	const size_t n = dp->n, m = dp->m;

	if (!m || !dp->a || !dp->cap || (n && !dp->A) || !(dp->alpha > 0) || isinf(dp->alpha))
		return -EINVAL;
	for (size_t r = 0; r < m; r++)
		if (!(dp->cap[r] > 0) || isinf(dp->cap[r]))
			return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		bool any = false;
		if (!(dp->A[i] > 0) || isinf(dp->A[i]))
			return -EINVAL;
		if (dp->B && (!(dp->B[i] >= 0) || isinf(dp->B[i])))
			return -EINVAL;
		if (dp->offset && (!(dp->offset[i] >= 0) || isinf(dp->offset[i])))
			return -EINVAL;
		if (dp->hi && !(dp->hi[i] >= 0))
			return -EINVAL;
		for (size_t r = 0; r < m; r++) {
			double v = dp->a[i * m + r];
			if (!(v >= 0) || isinf(v))
				return -EINVAL;
			any |= v > 0;
		}
		if (!any && !(dp->hi && isfinite(dp->hi[i])))
			return -EINVAL;
	}
	return 0;
}

static void free_point(struct point *pt)
{
	free(pt->lambda);
	free(pt->p);
	free(pt->x);
	free(pt->w);
	free(pt->g);
	free(pt->noise);
}

static bool alloc_point(struct point *pt, size_t n, size_t m)
{
	pt->lambda = calloc(m, sizeof(double));
	pt->g = calloc(m, sizeof(double));
	pt->noise = calloc(m, sizeof(double));
	/* Fully written by every evaluate() before use: no need to zero. */
	pt->p = malloc((n ? n : 1) * sizeof(double));
	pt->x = malloc((n ? n : 1) * sizeof(double));
	pt->w = malloc((n ? n : 1) * sizeof(double));
	return pt->lambda && pt->g && pt->noise && pt->p && pt->x && pt->w;
}

/* Scales x down uniformly so that every capacity holds exactly. */
static double make_feasible(const struct solver *s, double *x)
{
	const size_t n = s->n, m = s->m;
	double scale = 1;

	for (size_t r = 0; r < m; r++) {
		double use = 0;
		for (size_t i = 0; i < n; i++)
			use += s->dp->a[i * m + r] * x[i];
		if (use > s->dp->cap[r])
			scale = fmin(scale, s->dp->cap[r] / use);
	}
	if (scale < 1)
		for (size_t i = 0; i < n; i++)
			x[i] *= scale;
	return scale;
}

/* The solver proper, on checked input; fs_dual_solve below checks it and
 * may choose its start first. */
static int solve(const struct fs_dual_problem *dp, const struct fs_dual_options *o, double *lambda,
		 double *x, struct fs_dual_stats *stats)
{
	struct solver s = {.dp = dp, .n = dp->n, .m = dp->m};
	const int max_iter = o && o->max_iter > 0 ? o->max_iter : DEFAULT_MAX_ITER;
	const double tol = fmax(o && o->tol > 0 ? o->tol : 1e-12, TOL_FLOOR);
	double hist[STALL_WINDOW] = {0};
	int since = 0, damped = 0;
	bool converged = false;
	int ret;

	s.beta = 1.0 / dp->alpha;
	s.mu = MU_MIN;
	s.st.scaled = 1;
	if (!alloc_point(&s.cur, s.n, s.m) || !alloc_point(&s.trial, s.n, s.m)) {
		ret = -ENOMEM;
		goto out;
	}
	s.H = calloc(s.m * s.m, sizeof(double));
	s.L = calloc(s.m * s.m, sizeof(double));
	s.d = calloc(s.m, sizeof(double));
	s.rhs = calloc(s.m, sizeof(double));
	s.y = calloc(s.m, sizeof(double));
	s.freei = calloc(s.m, sizeof(size_t));
	s.cand = calloc(s.m, sizeof(size_t));
	s.pin = calloc(s.m, sizeof(bool));
	s.priced = calloc(s.m, sizeof(size_t));
	s.use = calloc(s.m, sizeof(double));
	if (!s.H || !s.L || !s.d || !s.rhs || !s.y || !s.freei || !s.cand || !s.pin || !s.priced ||
	    !s.use) {
		ret = -ENOMEM;
		goto out;
	}

	bool ok = false;
	if (o && o->warm) {
		for (size_t r = 0; r < s.m; r++)
			s.cur.lambda[r] = lambda[r] >= 0 && isfinite(lambda[r]) ? lambda[r] : 0;
		ok = evaluate(&s, &s.cur);
	}
	if (!ok) {
		cold_start(&s);
		ok = evaluate(&s, &s.cur);
	}
	if (!ok) {
		ret = -EINVAL;
		goto out;
	}
	hessian(&s);
	for (int it = 0; it < max_iter; it++) {
		double pg = projected_gradient(&s);
		if (pg <= tol) {
			converged = true;
			break;
		}
		/* Newton unless it has stalled: kinks (clipped responses) and
		 * flat regions (large alpha) can make it crawl, and exact
		 * coordinate minimisation does not mind either. */
		const bool stalled = damped >= STALL_WINDOW || (it >= since + 5 * STALL_WINDOW &&
								pg > 0.5 * hist[it % STALL_WINDOW]);
		hist[it % STALL_WINDOW] = pg;
		if (stalled) { /* one sweep, then Newton gets a fresh start */
			since = it + 1;
			damped = 0;
		}
		double t = 0;
		/* Levenberg-Marquardt style: a failed step raises the (relative)
		 * damping, which turns the step towards scaled steepest descent
		 * (needed where the Hessian is singular, e.g. fewer items than
		 * priced resources); full steps lower it again. */
		for (int tries = 0; !stalled && t == 0 && tries < 4; tries++) {
			if (newton_direction(&s))
				t = line_search(&s);
			if (t == 0)
				s.mu = fmin(s.mu * 1e3, 1e6);
		}
		if (t == 1)
			s.mu = fmax(s.mu * 0.1, MU_MIN);
		damped = t > 0 && t < 1 ? damped + 1 : 0;
		if (t > 0) {
			s.st.newton++;
		} else if (!coordinate_sweep(&s)) {
			ret = -EINVAL;
			goto out;
		} else if (projected_gradient(&s) >= pg && pg <= 1e3 * tol) {
			/* Neither method makes progress: rounding floor. */
			converged = true;
			break;
		}
		hessian(&s);
	}
	s.st.pg = projected_gradient(&s);
	memcpy(lambda, s.cur.lambda, s.m * sizeof(double));
	memcpy(x, s.cur.x, s.n * sizeof(double));
	s.st.scaled = make_feasible(&s, x);
	ret = converged ? 0 : -ETIMEDOUT;
out:
	if (stats)
		*stats = s.st;
	free_point(&s.cur);
	free_point(&s.trial);
	free(s.H);
	free(s.L);
	free(s.d);
	free(s.rhs);
	free(s.y);
	free(s.freei);
	free(s.cand);
	free(s.pin);
	free(s.priced);
	free(s.use);
	return ret;
}

/* Item i's price at lam is 0 and its response unbounded. */
static bool unbounded_at(const struct fs_dual_problem *dp, size_t i, const double *lam)
{
	const double *ai = dp->a + i * dp->m;
	double p = dp->offset ? dp->offset[i] : 0;

	if (dp->hi && isfinite(dp->hi[i]))
		return false;
	for (size_t r = 0; r < dp->m && p <= 0; r++)
		p += ai[r] * lam[r];
	return p <= 0;
}

/* Solves the sample: the items with weight[i] > 0, each standing for
 * weight[i] items (A, B and hi scaled by it). */
static int solve_sample(const struct fs_dual_problem *dp, const unsigned char *weight, size_t k,
			const struct fs_dual_options *so, double *lam, struct fs_dual_stats *sst)
{
	const size_t n = dp->n, m = dp->m;
	double *a = malloc(k * m * sizeof(double)), *A = malloc(k * sizeof(double));
	double *B = dp->B ? malloc(k * sizeof(double)) : NULL;
	double *hi = dp->hi ? malloc(k * sizeof(double)) : NULL;
	double *off = dp->offset ? malloc(k * sizeof(double)) : NULL;
	double *xs = malloc(k * sizeof(double));
	struct fs_dual_problem sp = *dp;
	int ret = -ENOMEM;

	if (!a || !A || (dp->B && !B) || (dp->hi && !hi) || (dp->offset && !off) || !xs)
		goto out;
	for (size_t i = 0, j = 0; i < n; i++) {
		const double w = weight[i];
		if (!w)
			continue;
		memcpy(a + j * m, dp->a + i * m, m * sizeof(double));
		A[j] = dp->A[i] * w;
		if (B)
			B[j] = dp->B[i] * w;
		if (hi)
			hi[j] = dp->hi[i] * w;
		if (off)
			off[j] = dp->offset[i];
		j++;
	}
	sp.n = k;
	sp.a = a;
	sp.A = A;
	sp.B = B;
	sp.hi = hi;
	sp.offset = off;
	ret = fs_dual_solve(&sp, so, lam, xs, sst);
out:
	free(a);
	free(A);
	free(B);
	free(hi);
	free(off);
	free(xs);
	return ret;
}

/*
 * Prices to start a cold solve of a large problem from: those of a sample
 * of its items, solved to SAMPLE_TOL. From the cold start most of the
 * Newton steps go to finding which resources carry a price; a sample finds
 * them at a fraction of the cost per step. The sample is every
 * SAMPLE_STRIDE-th item, standing for SAMPLE_STRIDE items each (A, B and hi
 * scaled, so that its usage estimates the whole one's at any price), plus,
 * each for itself, the items far above the mean demand of some resource
 * (SAMPLE_HEAVY: the traces' demands are heavy-tailed) and the items the
 * sample's prices leave unbounded (uncapped, demanding only resources the
 * sample left unpriced: one such tenant can saturate a resource alone);
 * with those the sample is solved again from its prices, up to
 * SAMPLE_ROUNDS times. Measured: see fs_dual_solve. Returns true with
 * lambda filled, false (lambda untouched) when it does not apply.
 */
static bool sample_start(const struct fs_dual_problem *dp, const struct fs_dual_options *o,
			 double *lambda, struct fs_dual_stats *stats)
{
	const size_t n = dp->n, m = dp->m;
	double *mean = calloc(m, sizeof(double)), *lam = calloc(m, sizeof(double));
	unsigned char *weight = malloc(n);
	struct fs_dual_options so = {.tol = SAMPLE_TOL, .max_iter = o ? o->max_iter : 0};
	struct fs_dual_stats sst = {0};
	size_t k = 0, light = 0;
	bool ok = false;

	if (!mean || !lam || !weight)
		goto out;
	for (size_t i = 0; i < n; i++)
		for (size_t r = 0; r < m; r++)
			mean[r] += dp->a[i * m + r] / (double)n;
	for (size_t i = 0; i < n; i++) {
		bool heavy = false;
		for (size_t r = 0; r < m; r++)
			heavy |= dp->a[i * m + r] > SAMPLE_HEAVY * mean[r];
		weight[i] = heavy ? 1 : light++ % SAMPLE_STRIDE ? 0 : SAMPLE_STRIDE;
		k += weight[i] > 0;
	}
	for (int round = 0; round < SAMPLE_ROUNDS; round++) {
		size_t added = 0;
		/* A timed-out sample still gives prices worth starting from. */
		if (solve_sample(dp, weight, k, &so, lam, &sst) == -ENOMEM)
			goto out;
		stats->sample_newton += sst.newton + sst.sample_newton;
		so.warm = true;
		for (size_t i = 0; i < n; i++)
			if (!weight[i] && unbounded_at(dp, i, lam)) {
				weight[i] = 1;
				added++;
			}
		if (!added) {
			memcpy(lambda, lam, m * sizeof(double));
			ok = true;
			break;
		}
		k += added;
	}
out:
	free(mean);
	free(lam);
	free(weight);
	return ok;
}

/*
 * A cold solve of SAMPLE_MIN_N items or more starts from a sample's prices
 * (sample_start). Measured on fairshare-bench's one-pool instances (N =
 * 10,000, 85 % of the tenants capped, Bitbrains demands; NJC, release
 * build, 20 seeds, idle host), full Newton steps median / worst and the
 * dual's CPU time median / worst: M = 4 5 / 12 -> 4 / 5 steps, 1.7 / 2.9
 * -> 1.2 / 1.9 ms; M = 8 5 / 12 (28 evaluations in the worst) -> 4 / 5
 * steps, 2.1 / 7.1 -> 1.6 / 2.5 ms. From a stride alone seeds 8 (M = 4)
 * and 14 (M = 8) started cold (one uncapped tenant the sample left
 * unbounded: 12 steps); with the unbounded items but not the heavy ones
 * M = 4 still took 9 steps in the worst.
 */
int fs_dual_solve(const struct fs_dual_problem *dp, const struct fs_dual_options *o, double *lambda,
		  double *x, struct fs_dual_stats *stats)
{
	struct fs_dual_options so = o ? *o : (struct fs_dual_options){0};
	struct fs_dual_stats st = {0};
	int ret = check_input(dp);

	if (ret < 0)
		return ret;
	if (!so.warm && dp->n >= SAMPLE_MIN_N && sample_start(dp, &so, lambda, &st))
		so.warm = true;
	ret = solve(dp, &so, lambda, x, stats);
	if (stats)
		stats->sample_newton = st.sample_newton;
	return ret;
}
