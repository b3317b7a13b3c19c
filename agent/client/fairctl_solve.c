/* SPDX-License-Identifier: MIT */
/*
 * `fairctl solve SCENARIO`: load a scenario file (conf/scenario.h), solve it
 * with one rule of the policy library, print a table or JSON, and with
 * --check evaluate the property predicates of ALGORITHMS.md section 4.
 */
#include "fairctl_solve.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef FAIRCTL_HAVE_JSONC
#include <json-c/json.h>
#endif

#include "policy.h"
#include "psdsf_caps.h"
#include "scenario.h"

#define CHECK_TOL 1e-6 /* ALGORITHMS.md 4: 1e-6 worked for the reference runs */

struct solve_args {
	const char *path;
	const char *policy; /* NULL: the scenario's, else psdsf */
	double alpha;	    /* NAN: the scenario's */
	bool json, check;
};

/* One property's outcome for --check. */
enum check_state { CHECK_HOLDS, CHECK_FAILS, CHECK_NA, CHECK_ERROR };

struct check_result {
	const char *key;   /* JSON key */
	const char *label; /* table label */
	enum check_state state;
	struct fs_error why;
};

enum {
	CHK_FEASIBLE,
	CHK_SI,
	CHK_EF,
	CHK_PSDSF,
	CHK_NJC,
	CHK_PARETO,
	CHK__COUNT,
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: fairctl solve " FAIRCTL_SOLVE_ARGS "\n\n"
		"Solve the allocation problem in a scenario file (INI: [scenario] resources,\n"
		"[pool.NAME] capacity, [tenant.NAME] demand/weight/max_tasks/pools) and print\n"
		"each tenant's tasks per pool, total, share and bottleneck resources.\n\n"
		"Options:\n"
		"  -p, --policy P  psdsf (default), drf, tsf, cdrfh, apf or njc; default: the\n"
		"                  file's [scenario] policy, else psdsf\n"
		"  -a, --alpha A   alpha for apf: a number > 0, or inf (= psdsf); default:\n"
		"                  the file's [scenario] alpha; required for apf otherwise\n"
		"  -j, --json      print JSON instead of a table\n"
		"  -c, --check     also report which properties hold (feasible, sharing\n"
		"                  incentive, envy-free, psdsf Theorem 1, njc, pareto) and\n"
		"                  why one fails; failing properties do not change the exit\n"
		"                  status\n"
		"  -h, --help      this text\n\n"
		"A file with [caps.POOL] sections (per-pool caps: a fleet's local demands,\n"
		"docs/fleet.md) is solved with capped PS-DSF; when those sections also give\n"
		"each tenant's allocation (TENANT = CAP, ALLOC: a fleet dump), that\n"
		"allocation is shown and --check certifies it instead of solving.\n\n"
		"Exit status: 0 solved, 1 the solver or a check failed to run, 2 bad command\n"
		"line or file, or a policy that does not apply (drf, njc: one pool only).\n");
}

static int parse_alpha(const char *s, double *out)
{
	char *end;

	if (!strcasecmp(s, "inf")) {
		*out = INFINITY;
		return 0;
	}
	errno = 0;
	*out = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(*out) || !(*out > 0))
		return -EINVAL;
	return 0;
}

static int parse_args(int argc, char **argv, struct solve_args *a)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'}, {"alpha", required_argument, NULL, 'a'},
	    {"json", no_argument, NULL, 'j'},	      {"check", no_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},	      {NULL, 0, NULL, 0},
	};
	int c;

	*a = (struct solve_args){.alpha = NAN};
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:a:jch", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			a->policy = optarg;
			break;
		case 'a':
			if (parse_alpha(optarg, &a->alpha) < 0) {
				fprintf(stderr,
					"fairctl solve: bad --alpha '%s': a number > 0, or inf\n",
					optarg);
				return FAIRCTL_EXIT_USAGE;
			}
			break;
		case 'j':
			a->json = true;
			break;
		case 'c':
			a->check = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return FAIRCTL_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "fairctl solve: expected one SCENARIO file, got %d\n",
			argc - optind);
		usage(stderr);
		return FAIRCTL_EXIT_USAGE;
	}
	a->path = argv[optind];
	return FAIRCTL_EXIT_OK;
}

static void list_rules(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < FS_RULE__COUNT && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 fs_rule_name((enum fs_rule)i));
}

/* The rule and options: command line first, then the file, then psdsf. */
static int pick_rule(const struct solve_args *a, const struct scenario *sc, enum fs_rule *rule,
		     struct fs_options *opt)
{
	const char *name = a->policy ? a->policy : sc->policy ? sc->policy : "psdsf";
	char names[128];

	if (fs_rule_from_name(name, rule) < 0) {
		list_rules(names, sizeof(names));
		if (a->policy)
			fprintf(stderr, "fairctl solve: unknown policy '%s' (one of %s)\n", name,
				names);
		else
			fprintf(stderr, "%s:%d: unknown policy '%s' (one of %s)\n", sc->path,
				sc->policy_line, name, names);
		return FAIRCTL_EXIT_USAGE;
	}
	*opt = (struct fs_options){.alpha = !isnan(a->alpha) ? a->alpha : sc->alpha};
	if (*rule != FS_RULE_APF) {
		if (!isnan(a->alpha)) {
			fprintf(stderr, "fairctl solve: --alpha applies to --policy apf only\n");
			return FAIRCTL_EXIT_USAGE;
		}
		opt->alpha = INFINITY;
	} else if (isnan(opt->alpha)) {
		fprintf(stderr, "fairctl solve: policy apf needs --alpha A (> 0, or inf) or "
				"'alpha =' in [scenario]\n");
		return FAIRCTL_EXIT_USAGE;
	}
	return FAIRCTL_EXIT_OK;
}

/* %.4f without trailing zeros: 3.6, 8, 5.4545. */
static const char *num(double v, char *buf, size_t len)
{
	char *p;

	if (isinf(v))
		return v > 0 ? "inf" : "-inf";
	if (fabs(v) < 5e-5)
		v = 0; /* no "-0" */
	snprintf(buf, len, "%.4f", v);
	p = buf + strlen(buf);
	while (p > buf && p[-1] == '0')
		*--p = '\0';
	if (p > buf && p[-1] == '.')
		*--p = '\0';
	return buf;
}

static const char *resource_name(const struct scenario *sc, int r)
{
	if (r == FS_CERT_SATISFIED)
		return "satisfied";
	if (r < 0 || (size_t)r >= sc->n_resources)
		return "-";
	return sc->resource_names[r];
}

/* "cpu" for one pool, "s1:cpu s2:-" for several (pools that can run n only). */
static void bottleneck_text(const struct scenario *sc, const struct fs_problem *p,
			    const struct fs_solution *s, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	if (s->rule == FS_RULE_NJC) {
		snprintf(buf, len, "%s", resource_name(sc, s->tenant[n].certificate));
		return;
	}
	for (size_t k = 0; k < sc->n_pools && used < len; k++) {
		const char *r = resource_name(sc, s->bottleneck[n * sc->n_pools + k]);

		if (fs_gamma(p, n, k) <= 0 || (sc->cap && sc->cap[n * sc->n_pools + k] <= 0))
			continue;
		if (sc->n_pools == 1)
			used += (size_t)snprintf(buf + used, len - used, "%s", r);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%s:%s", used ? " " : "",
						 sc->pool_names[k], r);
	}
}

static double pool_use(const struct scenario *sc, const struct fs_solution *s, size_t k, size_t r)
{
	double u = 0;

	for (size_t n = 0; n < sc->n_tenants; n++)
		u += s->x[n * sc->n_pools + k] * sc->demand[n * sc->n_resources + r];
	return u;
}

static void print_table(const struct scenario *sc, const struct fs_problem *p,
			const struct fs_solution *s, const struct fs_options *opt)
{
	size_t K = sc->n_pools, tw = 6, cw = 8;
	char b1[64], b2[64], bott[512];

	for (size_t n = 0; n < sc->n_tenants; n++)
		if (strlen(sc->tenant_names[n]) > tw)
			tw = strlen(sc->tenant_names[n]);
	for (size_t k = 0; k < K; k++)
		if (strlen(sc->pool_names[k]) + 1 > cw)
			cw = strlen(sc->pool_names[k]) + 1;

	printf("%s: policy %s", sc->path, fs_rule_name(s->rule));
	if (s->rule == FS_RULE_APF)
		printf(" (alpha %s)", num(opt->alpha, b1, sizeof(b1)));
	if (sc->cap)
		printf(" with per-pool caps%s",
		       sc->has_alloc ? ", given allocation (fleet dump)" : "");
	/* a repaired psdsf solve ends at the repair's exact point after its
	 * sweeps (0 of them, warm): say so, or 0 iterations reads as none */
	printf(", %zu tenants, %zu pool%s, %d iteration%s%s\n\n", sc->n_tenants, K,
	       K == 1 ? "" : "s", s->iterations, s->iterations == 1 ? "" : "s",
	       s->repaired ? " and a repair" : "");

	printf("%-*s", (int)tw, "tenant");
	for (size_t k = 0; k < K; k++)
		printf(" %*s", (int)cw, sc->pool_names[k]);
	printf(" %8s %8s  %s\n", "total", "share",
	       s->rule == FS_RULE_NJC ? "certificate" : "bottleneck");
	for (size_t n = 0; n < sc->n_tenants; n++) {
		const struct fs_tenant_result *t = &s->tenant[n];

		printf("%-*s", (int)tw, sc->tenant_names[n]);
		for (size_t k = 0; k < K; k++)
			printf(" %*s", (int)cw, num(s->x[n * K + k], b1, sizeof(b1)));
		bottleneck_text(sc, p, s, n, bott, sizeof(bott));
		printf(" %8s %8s  %s%s%s\n", num(t->total, b1, sizeof(b1)),
		       num(t->share, b2, sizeof(b2)), bott, t->capped ? " (capped)" : "",
		       t->unserved ? " (unserved: no pool can run it)" : "");
	}
	printf("\n");
	for (size_t k = 0; k < K; k++) {
		printf("pool %s use:", sc->pool_names[k]);
		for (size_t r = 0; r < sc->n_resources; r++) {
			double c = sc->capacity[k * sc->n_resources + r];
			double u = pool_use(sc, s, k, r);

			printf("%s %s %s/%s", r ? "," : "", sc->resource_names[r],
			       num(u, b1, sizeof(b1)), num(c, b2, sizeof(b2)));
			if (c > 0)
				printf(" (%.0f%%)", 100 * u / c);
		}
		printf("\n");
	}
}

/* x <= cap on every pool: the cap part of feasibility in a fleet. */
static bool within_caps(const struct scenario *sc, const double *x, struct fs_error *why)
{
	size_t K = sc->n_pools;

	for (size_t n = 0; n < sc->n_tenants; n++)
		for (size_t k = 0; k < K; k++)
			if (x[n * K + k] > sc->cap[n * K + k] * (1 + CHECK_TOL) + CHECK_TOL) {
				snprintf(why->msg, sizeof(why->msg),
					 "tenant %s has %g tasks on pool %s, above its cap %g",
					 sc->tenant_names[n], x[n * K + k], sc->pool_names[k],
					 sc->cap[n * K + k]);
				return false;
			}
	return true;
}

/*
 * With per-pool caps only feasibility and the extended Theorem 1 apply: the
 * other predicates of section 4 know nothing of caps and would judge a
 * different problem.
 */
static void run_caps_checks(const struct scenario *sc, const struct fs_problem *p,
			    const struct fs_solution *s, struct check_result *res)
{
	bool ok = fs_check_feasible(p, s->x, CHECK_TOL, &res[CHK_FEASIBLE].why) &&
		  within_caps(sc, s->x, &res[CHK_FEASIBLE].why);

	res[CHK_FEASIBLE].state = ok ? CHECK_HOLDS : CHECK_FAILS;
	res[CHK_PSDSF].label = "capped psdsf (Theorem 1 ext)";
	res[CHK_PSDSF].state = fs_check_psdsf_caps(p, sc->cap, s->x, CHECK_TOL, &res[CHK_PSDSF].why)
				   ? CHECK_HOLDS
				   : CHECK_FAILS;
	for (int i = 0; i < CHK__COUNT; i++) {
		if (i == CHK_FEASIBLE || i == CHK_PSDSF)
			continue;
		res[i].state = CHECK_NA;
		snprintf(res[i].why.msg, sizeof(res[i].why.msg), "does not model per-pool caps");
	}
}

static void run_checks(const struct scenario *sc, const struct fs_problem *p,
		       const struct fs_solution *s, struct check_result *res)
{
	static const char *const keys[CHK__COUNT][2] = {
	    [CHK_FEASIBLE] = {"feasible", "feasible"},
	    [CHK_SI] = {"sharing_incentive", "sharing incentive"},
	    [CHK_EF] = {"envy_free", "envy-free (placement-aware)"},
	    [CHK_PSDSF] = {"psdsf", "psdsf bottleneck (Theorem 1)"},
	    [CHK_NJC] = {"njc", "no justified complaints"},
	    [CHK_PARETO] = {"pareto", "pareto optimal"},
	};
	bool holds = false;
	int r;

	for (int i = 0; i < CHK__COUNT; i++) {
		res[i] = (struct check_result){.key = keys[i][0], .label = keys[i][1]};
		res[i].why.msg[0] = '\0';
	}
	if (sc->cap) {
		run_caps_checks(sc, p, s, res);
		return;
	}
#define SET(i, ok) res[i].state = (ok) ? CHECK_HOLDS : CHECK_FAILS
	SET(CHK_FEASIBLE, fs_check_feasible(p, s->x, CHECK_TOL, &res[CHK_FEASIBLE].why));
	SET(CHK_SI, fs_check_sharing_incentive(p, s->x, CHECK_TOL, &res[CHK_SI].why));
	SET(CHK_EF, fs_check_envy_free(p, s->x, CHECK_TOL, &res[CHK_EF].why));
	SET(CHK_PSDSF, fs_check_psdsf(p, s->x, CHECK_TOL, &res[CHK_PSDSF].why));
	if (sc->n_pools == 1) {
		SET(CHK_NJC, fs_check_njc(p, s->x, CHECK_TOL, NULL, &res[CHK_NJC].why));
	} else {
		res[CHK_NJC].state = CHECK_NA;
		snprintf(res[CHK_NJC].why.msg, sizeof(res[CHK_NJC].why.msg),
			 "defined for one pool only");
	}
#undef SET
	r = fs_check_pareto(p, s->x, CHECK_TOL, &holds, &res[CHK_PARETO].why);
	res[CHK_PARETO].state = r < 0 ? CHECK_ERROR : holds ? CHECK_HOLDS : CHECK_FAILS;
}

static int print_checks(const struct check_result *res)
{
	static const char *const state_text[] = {
	    [CHECK_HOLDS] = "yes",
	    [CHECK_FAILS] = "no",
	    [CHECK_NA] = "n/a",
	    [CHECK_ERROR] = "error",
	};
	int rc = FAIRCTL_EXIT_OK;

	printf("\nchecks (tolerance %g):\n", CHECK_TOL);
	for (int i = 0; i < CHK__COUNT; i++) {
		printf("  %-29s %s", res[i].label, state_text[res[i].state]);
		if (res[i].state != CHECK_HOLDS && res[i].why.msg[0])
			printf(": %s", res[i].why.msg);
		printf("\n");
		if (res[i].state == CHECK_ERROR)
			rc = FAIRCTL_EXIT_FAIL;
	}
	return rc;
}

#ifdef FAIRCTL_HAVE_JSONC
/* Ten significant digits: enough for every test vector, no float noise. */
static struct json_object *jnum(double v)
{
	char buf[32];

	if (!isfinite(v))
		return NULL; /* JSON null */
	if (v == 0)
		v = 0; /* no "-0" */
	snprintf(buf, sizeof(buf), "%.10g", v);
	return json_object_new_double_s(v, buf);
}

static struct json_object *jres(const struct scenario *sc, int r)
{
	if (r == FS_NO_RESOURCE)
		return NULL;
	return json_object_new_string(resource_name(sc, r));
}

static int print_json(const struct scenario *sc, const struct fs_problem *p,
		      const struct fs_solution *s, const struct fs_options *opt,
		      const struct check_result *checks)
{
	static const char *const state_json[] = {
	    [CHECK_HOLDS] = "yes",
	    [CHECK_FAILS] = "no",
	    [CHECK_NA] = "n/a",
	    [CHECK_ERROR] = "error",
	};
	size_t K = sc->n_pools, M = sc->n_resources;
	struct json_object *root = json_object_new_object(), *arr, *pools;
	int rc = FAIRCTL_EXIT_OK;

	json_object_object_add(root, "scenario", json_object_new_string(sc->path));
	json_object_object_add(root, "policy", json_object_new_string(fs_rule_name(s->rule)));
	if (s->rule == FS_RULE_APF)
		json_object_object_add(root, "alpha", jnum(opt->alpha));
	json_object_object_add(root, "iterations", json_object_new_int(s->iterations));
	json_object_object_add(root, "repaired", json_object_new_boolean(s->repaired));
	json_object_object_add(root, "per_pool_caps", json_object_new_boolean(sc->cap != NULL));
	json_object_object_add(root, "given_allocation", json_object_new_boolean(sc->has_alloc));
	arr = json_object_new_array();
	for (size_t r = 0; r < M; r++)
		json_object_array_add(arr, json_object_new_string(sc->resource_names[r]));
	json_object_object_add(root, "resources", arr);

	pools = json_object_new_array();
	for (size_t k = 0; k < K; k++) {
		struct json_object *pool = json_object_new_object();
		struct json_object *cap = json_object_new_object(),
				   *used = json_object_new_object();

		json_object_object_add(pool, "name", json_object_new_string(sc->pool_names[k]));
		for (size_t r = 0; r < M; r++) {
			json_object_object_add(cap, sc->resource_names[r],
					       jnum(sc->capacity[k * M + r]));
			json_object_object_add(used, sc->resource_names[r],
					       jnum(pool_use(sc, s, k, r)));
		}
		json_object_object_add(pool, "capacity", cap);
		json_object_object_add(pool, "used", used);
		json_object_array_add(pools, pool);
	}
	json_object_object_add(root, "pools", pools);

	arr = json_object_new_array();
	for (size_t n = 0; n < sc->n_tenants; n++) {
		const struct fs_tenant_result *t = &s->tenant[n];
		struct json_object *ten = json_object_new_object();
		struct json_object *per = json_object_new_object();

		json_object_object_add(ten, "name", json_object_new_string(sc->tenant_names[n]));
		json_object_object_add(ten, "weight", jnum(sc->weight[n]));
		json_object_object_add(ten, "max_tasks", jnum(sc->max_tasks[n]));
		json_object_object_add(ten, "tasks", jnum(t->total));
		for (size_t k = 0; k < K; k++)
			json_object_object_add(per, sc->pool_names[k], jnum(s->x[n * K + k]));
		json_object_object_add(ten, "per_pool", per);
		json_object_object_add(ten, "share", jnum(t->share));
		json_object_object_add(ten, "capped", json_object_new_boolean(t->capped));
		json_object_object_add(ten, "unserved", json_object_new_boolean(t->unserved));
		if (s->rule == FS_RULE_NJC) {
			json_object_object_add(ten, "certificate", jres(sc, t->certificate));
		} else {
			struct json_object *bn = json_object_new_object();

			for (size_t k = 0; k < K; k++)
				if (fs_gamma(p, n, k) > 0 && (!sc->cap || sc->cap[n * K + k] > 0))
					json_object_object_add(bn, sc->pool_names[k],
							       jres(sc, s->bottleneck[n * K + k]));
			json_object_object_add(ten, "bottleneck", bn);
		}
		json_object_array_add(arr, ten);
	}
	json_object_object_add(root, "tenants", arr);

	if (checks) {
		struct json_object *cs = json_object_new_object();

		for (int i = 0; i < CHK__COUNT; i++) {
			struct json_object *c = json_object_new_object();

			json_object_object_add(
			    c, "holds",
			    checks[i].state == CHECK_HOLDS   ? json_object_new_boolean(1)
			    : checks[i].state == CHECK_FAILS ? json_object_new_boolean(0)
							     : NULL);
			json_object_object_add(c, "state",
					       json_object_new_string(state_json[checks[i].state]));
			if (checks[i].state != CHECK_HOLDS && checks[i].why.msg[0])
				json_object_object_add(c, "why",
						       json_object_new_string(checks[i].why.msg));
			json_object_object_add(cs, checks[i].key, c);
			if (checks[i].state == CHECK_ERROR)
				rc = FAIRCTL_EXIT_FAIL;
		}
		json_object_object_add(root, "checks", cs);
	}
	printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return rc;
}
#endif

/*
 * fs_solve, or with [caps.*] capped PS-DSF (the fleet rule), or a fleet
 * dump's own allocation taken as it is so that --check certifies it.
 */
static int solve(const struct scenario *sc, const struct fs_problem *p, enum fs_rule rule,
		 const struct fs_options *opt, struct fs_solution *sol, struct fs_error *err)
{
	if (!sc->cap)
		return fs_solve(p, rule, opt, sol, err);
	if (rule != FS_RULE_PSDSF) {
		memset(sol, 0, sizeof(*sol));
		snprintf(err->msg, sizeof(err->msg),
			 "per-pool caps ([caps.*], a fleet) apply to psdsf only%s",
			 rule == FS_RULE_NJC ? " (njc is defined for one pool)" : "");
		return -EINVAL;
	}
	if (!sc->has_alloc)
		return fs_solve_psdsf_caps(p, sc->cap, opt, sol, err);
	if (fs_solution_init(sol, p) < 0) {
		snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -ENOMEM;
	}
	sol->rule = FS_RULE_PSDSF;
	sol->guard = 1;
	memcpy(sol->x, sc->alloc, sc->n_tenants * sc->n_pools * sizeof(double));
	fs_solution_finish(sol, p, CHECK_TOL);
	for (size_t n = 0; n < sc->n_tenants; n++) {
		double share = INFINITY;

		for (size_t k = 0; k < sc->n_pools; k++) {
			double g = fs_gamma(p, n, k);
			if (g > 0 && sc->cap[n * sc->n_pools + k] > 0)
				share = fmin(share, sol->tenant[n].total / (fs_weight(p, n) * g));
		}
		sol->tenant[n].share = isfinite(share) ? share : 0;
		sol->tenant[n].certificate = FS_NO_RESOURCE;
	}
	return 0;
}

int fairctl_solve_main(int argc, char **argv)
{
	struct check_result checks[CHK__COUNT];
	struct solve_args a;
	struct scenario sc;
	struct conf_error cerr = {{0}};
	struct fs_error ferr = {{0}};
	struct fs_solution sol = {0};
	struct fs_problem p;
	struct fs_options opt;
	enum fs_rule rule;
	int rc, r;

	rc = parse_args(argc, argv, &a);
	if (rc != FAIRCTL_EXIT_OK)
		return rc < 0 ? FAIRCTL_EXIT_OK : rc;
#ifndef FAIRCTL_HAVE_JSONC
	if (a.json) {
		fprintf(stderr, "fairctl solve: --json: fairctl was built without json-c\n");
		return FAIRCTL_EXIT_USAGE;
	}
#endif
	r = scenario_load(a.path, &sc, &cerr);
	if (r < 0) {
		fprintf(stderr, "%s\n", cerr.msg);
		rc = FAIRCTL_EXIT_USAGE;
		goto out;
	}
	rc = pick_rule(&a, &sc, &rule, &opt);
	if (rc != FAIRCTL_EXIT_OK)
		goto out;
	scenario_problem(&sc, &p);
	/* Input the parser lets through but the model rejects is still bad input. */
	if (fs_problem_validate(&p, &ferr) < 0) {
		fprintf(stderr, "%s: %s\n", sc.path, ferr.msg);
		rc = FAIRCTL_EXIT_USAGE;
		goto out;
	}
	r = solve(&sc, &p, rule, &opt, &sol, &ferr);
	if (r < 0) {
		fprintf(stderr, "fairctl solve: %s: %s: %s\n", sc.path, fs_rule_name(rule),
			ferr.msg);
		/* The input was valid, so -EINVAL means this rule does not apply to
		 * it (drf or njc on several pools): a usage error, not a failure. */
		rc = r == -EINVAL ? FAIRCTL_EXIT_USAGE : FAIRCTL_EXIT_FAIL;
		goto out;
	}
	if (a.check)
		run_checks(&sc, &p, &sol, checks);
#ifdef FAIRCTL_HAVE_JSONC
	if (a.json) {
		rc = print_json(&sc, &p, &sol, &opt, a.check ? checks : NULL);
		goto out;
	}
#endif
	print_table(&sc, &p, &sol, &opt);
	if (a.check)
		rc = print_checks(checks);
out:
	fs_solution_free(&sol);
	scenario_free(&sc);
	return rc;
}
