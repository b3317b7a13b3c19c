/* SPDX-License-Identifier: MIT */
/*
 * fairshare policy library: multi-resource fair allocation (pure C).
 *
 * No I/O, no globals, deterministic. Only math, allocation and snprintf into
 * caller-provided error buffers. The maths follows shared/spec/ALGORITHMS.md;
 * section numbers in comments refer to that file.
 *
 * Model (ALGORITHMS.md 1.1): K pools, M resources, N tenants.
 * capacity[K][M], per-unit demand d[N][M], max_tasks[N] (may be INFINITY),
 * weight[N] > 0, eligible[N][K]. An allocation is x[N][K] units per pool.
 * All 2-D arrays are row-major: a[i * cols + j].
 */
#ifndef FAIRSHARE_POLICY_H
#define FAIRSHARE_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#define FS_ERRMSG_MAX 256

/* Filled on error: a message that names the tenant/pool/resource at fault. */
struct fs_error {
	char msg[FS_ERRMSG_MAX];
};

struct fs_problem {
	size_t n_tenants;	 /* N */
	size_t n_pools;		 /* K */
	size_t n_resources;	 /* M */
	const double *capacity;	 /* [K][M], >= 0 */
	const double *demand;	 /* [N][M], >= 0, not all zero per tenant */
	const double *max_tasks; /* [N], > 0, may be INFINITY; NULL: all infinite */
	const double *weight;	 /* [N], > 0; NULL: all 1 */
	const bool *eligible;	 /* [N][K]; NULL: every tenant may use every pool */
	/* Optional names, used only in error messages; NULL: "tenant 3" etc. */
	const char *const *tenant_names;   /* [N] */
	const char *const *pool_names;	   /* [K] */
	const char *const *resource_names; /* [M] */
};

enum fs_rule {
	FS_RULE_PSDSF, /* per-server dominant share fairness, Algorithm I (2.2) */
	FS_RULE_DRF,   /* weighted DRF, one pool (1.3) */
	FS_RULE_TSF,   /* task share fairness, exact max-min (1.6, 2.3) */
	FS_RULE_CDRFH, /* constrained DRFH, exact max-min (1.4, 2.3) */
	FS_RULE_APF,   /* alpha-PF-VDS (1.9, 2.5, 2.7) */
	FS_RULE_NJC,   /* no justified complaints: weighted PF point (8) */
	FS_RULE__COUNT
};

struct fs_options {
	double alpha; /* apf: alpha > 0, INFINITY means psdsf; ignored otherwise */
	double tol;   /* relative tolerance; <= 0 selects FS_DEFAULT_TOL */
	int max_iter; /* iteration cap for iterative rules; <= 0 selects a default */
};

#define FS_DEFAULT_TOL 1e-9

#define FS_NO_RESOURCE	  (-1) /* no bottleneck / certificate resource */
#define FS_CERT_SATISFIED (-2) /* njc: the tenant got all it asked for */

struct fs_tenant_result {
	double total; /* x_n = sum over pools of x[n][k] */
	/*
	 * The rule's fairness criterion for this tenant:
	 *  psdsf/apf: min over eligible pools of the weighted VDS x_n/(phi_n gamma_{n,k})
	 *  drf:       weighted dominant share x_n max_r(d_{n,r}/c_r) / phi_n
	 *  tsf:       x_n / (phi_n gamma_n^TSF)
	 *  cdrfh:     weighted global dominant share x_n max_r(d_{n,r}/sum_k c_{k,r}) / phi_n
	 *  njc:       fraction of the request granted (x_n/max_tasks_n; x_n when uncapped)
	 */
	double share;
	bool capped;	 /* stopped by max_tasks */
	bool unserved;	 /* no pool can serve it (gamma = 0 everywhere): gets 0 */
	int certificate; /* njc: saturated resource index that justifies the share,
			    FS_CERT_SATISFIED, or FS_NO_RESOURCE; other rules: the
			    tenant's bottleneck resource on its main pool or FS_NO_RESOURCE */
};

struct fs_solution {
	size_t n_tenants, n_pools, n_resources;
	enum fs_rule rule;
	double *x;			 /* [N][K] */
	struct fs_tenant_result *tenant; /* [N] */
	int *bottleneck;		 /* [N][K]: saturated resource with d > 0 that is a
					    Theorem-1 bottleneck when one exists, else the
					    saturated demanded resource; FS_NO_RESOURCE */
	double *level;			 /* [K][M]: a saturated resource's largest
					    weighted VDS among its holders (of a PS-DSF
					    point, its water level, which a warm start
					    carries); 0 when not saturated or unheld */
	double guard;			 /* fs_guard_capacity's result: 1, or < 1 when the
					    rule over-allocated and x was scaled down */
	int iterations;			 /* solver iterations (rule-specific unit; apf:
					    interior-point steps, or best-response sweeps
					    when those took over) */
	bool warm;			 /* fs_solve_warm started from the previous
					    solution (false: it solved cold) */
	bool repaired;			 /* psdsf: the answer is the repair's exact
					    point (psdsf_repair.c), certified with no
					    sweep after it */
};

/* --- problem.c ----------------------------------------------------------- */

/* Checks sizes, NaN/negative numbers, weights, all-zero demand. 0 or -EINVAL. */
int fs_problem_validate(const struct fs_problem *p, struct fs_error *err);

/* Accessors that apply the NULL defaults. */
double fs_weight(const struct fs_problem *p, size_t n);
double fs_max_tasks(const struct fs_problem *p, size_t n);
bool fs_eligible(const struct fs_problem *p, size_t n, size_t k);

/*
 * gamma_{n,k} (1.5): tasks n could run if it monopolised pool k; 0 when n is not
 * eligible on k or k lacks a resource n demands.
 */
double fs_gamma(const struct fs_problem *p, size_t n, size_t k);

/* Allocates a zeroed solution sized for p. 0 or -ENOMEM. */
int fs_solution_init(struct fs_solution *s, const struct fs_problem *p);
void fs_solution_free(struct fs_solution *s);

/*
 * Recomputes tenant[].total, .capped, .unserved and bottleneck[][] from x
 * (share and certificate are left to the rule).
 */
void fs_solution_finish(struct fs_solution *s, const struct fs_problem *p, double tol);
/*
 * Recomputes tenant[].total and .capped only: after a change of x within
 * rounding, which moves a saturation or bottleneck of fs_solution_finish
 * only where it sat within about that much of its threshold
 * (fs_guard_capacity's rounding trims).
 */
void fs_solution_retotal(struct fs_solution *s, const struct fs_problem *p, double tol);

/* Writes "tenant NAME" / "pool NAME" / "resource NAME" (or an index) into buf. */
const char *fs_tenant_label(const struct fs_problem *p, size_t n, char *buf, size_t len);
const char *fs_pool_label(const struct fs_problem *p, size_t k, char *buf, size_t len);
const char *fs_resource_label(const struct fs_problem *p, size_t r, char *buf, size_t len);

/* --- guard.c ------------------------------------------------------------- */

/*
 * Makes s->x feasible on capacity, max_tasks and eligibility by scaling the
 * offending pools' columns and tenants' rows down (and zeroing NaN, negative
 * or ineligible entries); fs_solve calls it on every result. Returns 1 when
 * nothing beyond rounding had to change, else the smallest factor applied
 * (0 for an entry that could not be scaled) -- a rule bug worth reporting.
 * After a change beyond rounding it runs fs_solution_finish again; after a
 * trim within rounding, fs_solution_retotal (bottleneck and level stay as
 * the rule wrote them); both at tol, the tolerance the rule solved at
 * (<= 0: FS_DEFAULT_TOL), so that the flags they recompute agree with the
 * ones the rule wrote.
 */
double fs_guard_capacity(const struct fs_problem *p, struct fs_solution *s, double tol);

/* --- solve.c ------------------------------------------------------------- */

const char *fs_rule_name(enum fs_rule rule);
/* 0, or -EINVAL for an unknown name. */
int fs_rule_from_name(const char *name, enum fs_rule *rule);

/*
 * Validates p, then solves with the given rule into out (which this call
 * initialises; free it with fs_solution_free even on error). opt may be NULL.
 * Whatever the rule returns, out->x is then passed through
 * fs_guard_capacity (out->guard < 1 says it had to scale).
 * Returns 0 or a negative errno with err filled.
 */
int fs_solve(const struct fs_problem *p, enum fs_rule rule, const struct fs_options *opt,
	     struct fs_solution *out, struct fs_error *err);

/* --- warm.c: re-solving from the previous period's solution ---------------- */

/*
 * What a solve leaves for the next one: the allocation and the identity of
 * the problem it solved. The pointers are the caller's and must stay valid
 * until the next fs_solve_warm.
 */
struct fs_warm_start {
	size_t n_tenants, n_pools, n_resources;
	enum fs_rule rule;
	const double *x;		 /* [N][K] */
	const double *level;		 /* [K][M] fs_solution.level of x; NULL: unknown */
	const char *const *tenant_names; /* [N] of the solved problem; NULL: unnamed */
	const char *const *pool_names;	 /* [K]; NULL: unnamed */
};

/* The warm start that solution s of problem p leaves (borrows s->x, s->level
 * and p's names). */
struct fs_warm_start fs_warm_start_of(const struct fs_problem *p, const struct fs_solution *s);

/*
 * True when prev may start a solve of p with rule: same sizes and rule, and
 * the same tenants and pools in the same order -- compared by name when both
 * sides are named, refused when only one is (nothing tells the order then),
 * taken on trust when neither is.
 */
bool fs_warm_start_matches(const struct fs_problem *p, enum fs_rule rule,
			   const struct fs_warm_start *prev);

/*
 * fs_solve, started from prev when fs_warm_start_matches (prev may be NULL)
 * and the rule can use it, else cold; out->warm says which. PS-DSF is the
 * rule that can: its best-response sweeps start from prev->x instead of
 * per-server DRF, and the result must pass the Theorem-1 predicate
 * (fs_check_psdsf) as a cold solve's does. The other rules solve cold.
 */
int fs_solve_warm(const struct fs_problem *p, enum fs_rule rule, const struct fs_options *opt,
		  const struct fs_warm_start *prev, struct fs_solution *out, struct fs_error *err);

/* The individual rules: p is already validated and out initialised.
 * fs_solve_psdsf returns -ERANGE when it hits its round cap in a state that
 * fails the Theorem-1 predicate; x is still feasible and filled in then. */
int fs_solve_psdsf(const struct fs_problem *p, const struct fs_options *opt,
		   struct fs_solution *out, struct fs_error *err);
/* fs_solve_psdsf from start[N][K] (any x >= 0; made feasible on eligibility
 * and max_tasks first) instead of per-server DRF; level[K][M] is start's
 * fs_solution.level (NULL: unknown), which the repair of start reads. */
int fs_solve_psdsf_from(const struct fs_problem *p, const struct fs_options *opt,
			const double *start, const double *level, struct fs_solution *out,
			struct fs_error *err);
int fs_solve_drf(const struct fs_problem *p, const struct fs_options *opt, struct fs_solution *out,
		 struct fs_error *err);
int fs_solve_tsf(const struct fs_problem *p, const struct fs_options *opt, struct fs_solution *out,
		 struct fs_error *err);
int fs_solve_cdrfh(const struct fs_problem *p, const struct fs_options *opt,
		   struct fs_solution *out, struct fs_error *err);
int fs_solve_apf(const struct fs_problem *p, const struct fs_options *opt, struct fs_solution *out,
		 struct fs_error *err);
int fs_solve_njc(const struct fs_problem *p, const struct fs_options *opt, struct fs_solution *out,
		 struct fs_error *err);

/* --- properties.c: predicates of ALGORITHMS.md section 4 --------------------
 * Each returns true when the property holds for allocation x[N][K] on p within
 * relative tolerance tol; when it fails and why is not NULL, why->msg says which
 * tenant/pool/resource breaks it. */

/* Capacities per pool and resource, x >= 0, x = 0 off eligible pools, and
 * x_n <= max_tasks_n. */
bool fs_check_feasible(const struct fs_problem *p, const double *x, double tol,
		       struct fs_error *why);
bool fs_check_sharing_incentive(const struct fs_problem *p, const double *x, double tol,
				struct fs_error *why);
/* Placement-aware envy-freeness (section 4). */
bool fs_check_envy_free(const struct fs_problem *p, const double *x, double tol,
			struct fs_error *why);
/* Theorem 1 of [P4]: every tenant has a bottleneck on every eligible pool.
 * A tenant at its max_tasks cap needs none (it asks for nothing more). */
bool fs_check_psdsf(const struct fs_problem *p, const double *x, double tol, struct fs_error *why);
/* NJC condition (2) (section 8); one pool. certificate[N] (may be NULL)
 * receives each tenant's justifying resource or FS_CERT_SATISFIED. */
bool fs_check_njc(const struct fs_problem *p, const double *x, double tol, int *certificate,
		  struct fs_error *why);
/* LP-based predicates: return 0 and set *holds, or a negative errno when the
 * LP could not be solved. */
int fs_check_pareto(const struct fs_problem *p, const double *x, double tol, bool *holds,
		    struct fs_error *why);
/* alpha-PF-VDS per-server optimality (Nash equilibrium) predicate. */
int fs_check_apf(const struct fs_problem *p, const double *x, double alpha, double tol, bool *holds,
		 struct fs_error *why);

/* --- mingap.c: minimal-gap priority ([P3] section 6, ALGORITHMS.md 8) ------ */

/*
 * For each tenant n: gap_{n,r} = entitled[n][r] - consumed[n][r] (shares in
 * [0,1]) over the saturated resources r; priority[n] = the smallest such gap,
 * gap_resource[n] = the resource where it occurs; promoted[n] = false when the
 * tenant is at or above its entitlement on any saturated resource (priority
 * <= 0) or when no resource is saturated (then priority = 0 and gap_resource =
 * FS_NO_RESOURCE). gap_resource and promoted may be NULL.
 * Returns 0 or -EINVAL (sizes, NaN, negative shares) with err filled.
 */
int fs_minimal_gap(size_t n_tenants, size_t n_resources, const double *entitled,
		   const double *consumed, const bool *saturated, double *priority,
		   int *gap_resource, bool *promoted, struct fs_error *err);

#endif /* FAIRSHARE_POLICY_H */
