/* SPDX-License-Identifier: MIT */
/*
 * `explain TENANT`: why the tenant got what it got. The published demands,
 * weights and grants are turned back into the policy problem the planner
 * solved, and the policy library's own predicates certify the answer:
 *  - psdsf: Theorem 1 of [P4] (ALGORITHMS.md 2.2): the tenant's bottleneck
 *    resource is saturated and no tenant holding some of it has a larger
 *    share (Corollary 1 (15)); fs_check_psdsf checks every tenant at once;
 *  - njc: condition (2) of [P3] (ALGORITHMS.md 8): the tenant got all it
 *    asked for, or holds at least its entitlement of a saturated resource;
 *    fs_check_njc names that resource (the certificate).
 */
#include "control_status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPLAIN_TOL 1e-6

static void add(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

/* The planner's input, rebuilt from what it published. */
static struct plan_tenant_in *rebuild_input(const struct fsd_published *p)
{
	struct plan_tenant_in *in = calloc(p->n_tenants ? p->n_tenants : 1, sizeof(*in));

	for (size_t i = 0; in && i < p->n_tenants; i++) {
		plan_tenant_in_init(&in[i], p->t[i].name);
		in[i].present = p->t[i].plan.in_problem;
		in[i].weight = p->t[i].weight;
		memcpy(in[i].demand, p->t[i].est.demand, sizeof(in[i].demand));
		memcpy(in[i].usage, p->t[i].usage, sizeof(in[i].usage));
	}
	return in;
}

static struct json_object *competitors(const struct fsd_published *p, size_t i, size_t r)
{
	struct json_object *a = json_object_new_array();

	for (size_t j = 0; a && j < p->n_tenants; j++) {
		const struct plan_tenant *t = &p->t[j].plan;
		struct json_object *c;

		if (j == i || !t->in_problem || !(t->alloc[r] > 0))
			continue;
		c = json_object_new_object();
		if (!c)
			break;
		add(c, "name", json_object_new_string(p->t[j].name));
		add(c, "weight", fsd_json_num(p->t[j].weight));
		add(c, "share", fsd_json_num(t->share));
		add(c, "granted", fsd_json_num(t->x));
		add(c, "allocation", fsd_json_num(t->alloc[r]));
		json_object_array_add(a, c);
	}
	return a;
}

static struct json_object *bottlenecks(const struct fsd_published *p, size_t i)
{
	const struct fs_resources *res = &p->pcfg.res;
	struct json_object *a = json_object_new_array();

	for (size_t r = 0; a && r < res->n; r++) {
		struct json_object *b;
		double alloc = 0;

		if (!fsd_is_bottleneck(p, i, r))
			continue;
		for (size_t j = 0; j < p->n_tenants; j++)
			if (p->t[j].plan.in_problem)
				alloc += p->t[j].plan.alloc[r];
		b = json_object_new_object();
		if (!b)
			break;
		add(b, "resource", json_object_new_string(res->name[r]));
		add(b, "saturated", json_object_new_boolean(p->saturated[r]));
		add(b, "state", json_object_new_string(fsd_resource_state(p, r)));
		add(b, "capacity", fsd_json_num(res->capacity[r]));
		add(b, "allocated", fsd_json_num(alloc));
		add(b, "competitors", competitors(p, i, r));
		json_object_array_add(a, b);
	}
	return a;
}

/* Corollary 1 (15) of [P4] on resource r: every tenant holding some of r has
 * a share no larger than tenant i's. Returns the first offender or -1. */
static int larger_share_on(const struct fsd_published *p, size_t i, size_t r)
{
	double s = p->t[i].plan.share;

	for (size_t j = 0; j < p->n_tenants; j++) {
		const struct plan_tenant *t = &p->t[j].plan;

		if (j != i && t->in_problem && t->alloc[r] > 0 &&
		    t->share > s * (1 + EXPLAIN_TOL) + EXPLAIN_TOL)
			return (int)j;
	}
	return -1;
}

static void certificate_psdsf(const struct fsd_published *p, size_t i, struct json_object *c)
{
	const struct plan_tenant *t = &p->t[i].plan;
	const struct fs_resources *res = &p->pcfg.res;
	char text[512];
	const char *kind = "none";
	int r = t->bottleneck, off;
	bool holds = false;

	if (t->x >= 1 - EXPLAIN_TOL) {
		kind = "satisfied";
		holds = true;
		snprintf(text, sizeof(text), "%s got all of its demand (granted %.4f)", t->name,
			 t->x);
	} else if (r >= 0 && (size_t)r < res->n && p->saturated[r]) {
		off = larger_share_on(p, i, (size_t)r);
		kind = "theorem1-bottleneck";
		holds = off < 0;
		if (holds)
			snprintf(text, sizeof(text),
				 "%s is saturated and no tenant holding %s has a share above "
				 "%s's %.4f: more %s for %s must come from tenants whose "
				 "share is not larger (PS-DSF Theorem 1 bottleneck)",
				 res->name[r], res->name[r], t->name, t->share, res->name[r],
				 t->name);
		else
			snprintf(text, sizeof(text),
				 "%s is saturated but %s holds some of it with share %.4f > "
				 "%.4f: not a Theorem 1 bottleneck",
				 res->name[r], p->t[off].name, p->t[off].plan.share, t->share);
	} else {
		snprintf(text, sizeof(text), "%s has no saturated bottleneck resource", t->name);
	}
	add(c, "kind", json_object_new_string(kind));
	add(c, "resource",
	    r >= 0 && (size_t)r < res->n && strcmp(kind, "satisfied")
		? json_object_new_string(res->name[r])
		: NULL);
	add(c, "holds", json_object_new_boolean(holds));
	add(c, "text", json_object_new_string(text));
}

static void certificate_njc(const struct fsd_published *p, size_t i, int cert,
			    struct json_object *c)
{
	const struct plan_tenant *t = &p->t[i].plan;
	const struct fs_resources *res = &p->pcfg.res;
	double e = fsd_entitlement(p, i);
	char text[512];

	if (cert == FS_CERT_SATISFIED) {
		add(c, "kind", json_object_new_string("satisfied"));
		add(c, "resource", NULL);
		snprintf(text, sizeof(text), "%s got all of its demand (granted %.4f)", t->name,
			 t->x);
	} else if (cert >= 0 && (size_t)cert < res->n) {
		add(c, "kind", json_object_new_string("njc-saturated-resource"));
		add(c, "resource", json_object_new_string(res->name[cert]));
		snprintf(text, sizeof(text),
			 "%s is saturated and %s holds %.4f of it, at least its entitlement "
			 "%.4f: no justified complaint (NJC condition (2))",
			 res->name[cert], t->name, t->alloc[cert] / res->capacity[cert], e);
	} else {
		add(c, "kind", json_object_new_string("none"));
		add(c, "resource", NULL);
		snprintf(text, sizeof(text),
			 "no saturated resource where %s holds its entitlement %.4f", t->name, e);
	}
	add(c, "holds", json_object_new_boolean(cert == FS_CERT_SATISFIED || cert >= 0));
	add(c, "text", json_object_new_string(text));
}

static struct json_object *gaps(const struct fsd_published *p, size_t i)
{
	const struct fs_resources *res = &p->pcfg.res;
	struct json_object *a = json_object_new_array();
	double e = fsd_entitlement(p, i);

	for (size_t r = 0; a && r < res->n; r++) {
		struct json_object *g;
		double used = p->t[i].usage[r] / res->capacity[r];

		if (!p->saturated[r])
			continue;
		used = used > 0 ? fmin(used, 1.0) : 0.0;
		g = json_object_new_object();
		if (!g)
			break;
		add(g, "resource", json_object_new_string(res->name[r]));
		add(g, "entitled", fsd_json_num(e));
		add(g, "consumed", fsd_json_num(used));
		add(g, "gap", fsd_json_num(e - used));
		json_object_array_add(a, g);
	}
	return a;
}

int fsd_json_explain(const struct fsd_published *p, size_t i, struct json_object *o, char *err,
		     size_t errlen)
{
	const struct plan_tenant *t = &p->t[i].plan;
	struct plan_tenant_in *in = rebuild_input(p);
	struct plan_problem pp = {0};
	struct fs_error why = {{0}};
	struct json_object *cert = json_object_new_object(), *chk = json_object_new_object();
	double *x = NULL;
	int *certs = NULL, r = -ENOMEM;
	bool holds = false;

	if (!in || !cert || !chk || plan_problem_build(&p->pcfg, p->n_tenants, in, &pp) < 0)
		goto fail;
	x = calloc(pp.p.n_tenants ? pp.p.n_tenants : 1, sizeof(double));
	certs = calloc(pp.p.n_tenants ? pp.p.n_tenants : 1, sizeof(int));
	if (!x || !certs)
		goto fail;
	for (size_t j = 0; j < pp.p.n_tenants; j++)
		x[j] = p->t[pp.index[j]].plan.x;

	add(o, "tenant", fsd_json_tenant(p, i));
	add(o, "policy", json_object_new_string(p->policy ? p->policy : "?"));
	add(o, "bottlenecks", bottlenecks(p, i));
	if (!t->in_problem) {
		add(cert, "kind", json_object_new_string("none"));
		add(cert, "resource", NULL);
		add(cert, "holds", json_object_new_boolean(0));
		add(cert, "text",
		    json_object_new_string(
			p->t[i].present ? "not in the last solved problem (no demand estimate yet)"
					: "its cgroup is missing: left out of the problem"));
	} else if (p->pcfg.rule == FS_RULE_NJC) {
		int mine = FS_NO_RESOURCE;

		holds = fs_check_njc(&pp.p, x, EXPLAIN_TOL, certs, &why);
		for (size_t j = 0; j < pp.p.n_tenants; j++)
			if (pp.index[j] == i)
				mine = certs[j];
		certificate_njc(p, i, mine, cert);
	} else {
		holds = fs_check_psdsf(&pp.p, x, EXPLAIN_TOL, &why);
		certificate_psdsf(p, i, cert);
	}
	if (pp.p.n_tenants && t->in_problem) {
		add(chk, "holds", json_object_new_boolean(holds));
		add(chk, "why", json_object_new_string(holds ? "" : why.msg));
	}
	add(o, "certificate", cert);
	add(o, "policy_check", chk);
	cert = chk = NULL;
	add(o, "gaps", gaps(p, i));
	add(o, "gap", fsd_json_num(t->gap));
	add(o, "gap_resource",
	    t->gap_resource >= 0 && (size_t)t->gap_resource < p->pcfg.res.n
		? json_object_new_string(p->pcfg.res.name[t->gap_resource])
		: NULL);
	add(o, "promoted", json_object_new_boolean(t->promoted));
	r = 0;
fail:
	if (r < 0)
		snprintf(err, errlen, "explain %s: out of memory", p->t[i].name);
	json_object_put(cert);
	json_object_put(chk);
	free(x);
	free(certs);
	free(in);
	plan_problem_free(&pp);
	return r;
}
