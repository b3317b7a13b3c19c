/* SPDX-License-Identifier: MIT */
/*
 * `fairctl explain TENANT`: why the tenant got its allocation: its demand,
 * its bottleneck resource(s) and who it competes with there, the certificate
 * of its share (PS-DSF Theorem 1 bottleneck or NJC justification, checked by
 * the policy library in the daemon) and its minimal gap.
 */
#include <getopt.h> /* optind */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "control_json.h"
#include "fairctl.h"
#include "fairctl_client.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: fairctl explain [--json] [--socket PATH] TENANT\n\n"
		"Explain the running fairshared's allocation to TENANT: demand, bottlenecks and\n"
		"competitors there, the certificate of its share, its minimal gap.\n\n"
		"  -j, --json         the daemon's answer as JSON\n"
		"  -s, --socket PATH  control socket (default $" FAIRCTL_SOCKET_ENV
		" or " FAIRCTL_DEFAULT_SOCKET ")\n"
		"  -h, --help         this text\n");
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *gets(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static double getd(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && (json_object_is_type(v, json_type_double) ||
		     json_object_is_type(v, json_type_int))
		   ? json_object_get_double(v)
		   : NAN;
}

/* The kind of a resource, for its unit. */
static const char *kind_of(const struct fcj_status *s, const char *name)
{
	for (size_t r = 0; r < s->n_res; r++)
		if (!strcmp(s->res[r].name, name))
			return s->res[r].kind;
	return "";
}

/* Each controlled file: the value in force now beside the one written. */
static void print_files(const struct fcj_tenant *t, struct json_object *o)
{
	struct json_object *fs = get(o, "files");

	if (gets(o, "files_error"))
		printf("  in force:    cannot read: %s\n", gets(o, "files_error"));
	if (!fs || !json_object_is_type(fs, json_type_array))
		return;
	if (t->backend[0])
		printf("  backend:     %s (%s)%s\n", t->backend, t->backend_reason,
		       !strcmp(t->backend, "systemd") ? "; values are the unit's properties" : "");
	printf("  in force:    %zu file(s) controlled, %llu change(s) by others corrected\n",
	       json_object_array_length(fs), (unsigned long long)t->drift_corrected);
	for (size_t k = 0; k < json_object_array_length(fs); k++) {
		struct json_object *f = json_object_array_get_idx(fs, k);
		const char *name = gets(f, "file"), *wr = gets(f, "written");
		const char *now = gets(f, "in_force"), *e = gets(f, "error");

		if (e)
			printf("    %-14s written \"%s\", in force: cannot read (%s)\n",
			       name ? name : "?", wr ? wr : "", e);
		else
			printf("    %-14s written \"%s\", in force \"%s\"%s\n", name ? name : "?",
			       wr ? wr : "", now ? now : "",
			       wr && now && strcmp(wr, now) ? "  (CHANGED by someone else: "
							      "written again next period)"
							    : "");
	}
}

static void print(const struct fcj_status *s, struct json_object *o)
{
	struct json_object *bn = get(o, "bottlenecks"), *cert = get(o, "certificate");
	struct json_object *chk = get(o, "policy_check"), *gaps = get(o, "gaps");
	const struct fcj_tenant *t = NULL;
	const char *tname = gets(get(o, "tenant"), "name");
	char a[48], b[48];

	for (size_t i = 0; tname && i < s->n_tenants; i++)
		if (!strcmp(s->t[i].name, tname))
			t = &s->t[i];
	if (!t)
		return;
	printf("%s (cgroup %s), policy %s: weight %g = entitlement %.1f%%, granted %.1f%% of its "
	       "demand (share %.4f)\n",
	       t->name, t->cgroup, s->policy, t->weight, 100 * t->entitlement, 100 * t->granted,
	       t->share);
	printf("  demand:      ");
	for (size_t r = 0; r < s->n_res; r++) {
		fcj_fmt_amount(s->res[r].kind, t->demand[r], a, sizeof(a));
		fcj_fmt_amount(s->res[r].kind, t->alloc[r], b, sizeof(b));
		printf("%s%s %s (gets %s)", r ? ", " : "", s->res[r].name, a, b);
	}
	printf("\n");
	if (!bn || !json_object_array_length(bn))
		printf("  bottleneck:  none (no bottleneck resource it holds a share of)\n");
	for (size_t k = 0; bn && k < json_object_array_length(bn); k++) {
		struct json_object *e = json_object_array_get_idx(bn, k),
				   *cs = get(e, "competitors");
		const char *rn = gets(e, "resource"), *kind = kind_of(s, rn ? rn : "");

		fcj_fmt_amount(kind, getd(e, "allocated"), a, sizeof(a));
		fcj_fmt_amount(kind, getd(e, "capacity"), b, sizeof(b));
		printf("  bottleneck:  %s, %s (%s of %s allocated)\n", rn ? rn : "?",
		       gets(e, "state") ?: "saturated", a, b);
		if (!cs || !json_object_array_length(cs))
			printf("    competes with nobody\n");
		for (size_t j = 0; cs && j < json_object_array_length(cs); j++) {
			struct json_object *c = json_object_array_get_idx(cs, j);

			fcj_fmt_amount(kind, getd(c, "allocation"), a, sizeof(a));
			printf("    competes with %s: weight %g, share %.4f, granted %.1f%%, holds "
			       "%s\n",
			       gets(c, "name") ? gets(c, "name") : "?", getd(c, "weight"),
			       getd(c, "share"), 100 * getd(c, "granted"), a);
		}
	}
	printf("  certificate: %s: %s [%s]\n", gets(cert, "kind") ? gets(cert, "kind") : "?",
	       gets(cert, "text") ? gets(cert, "text") : "",
	       get(cert, "holds") && json_object_get_boolean(get(cert, "holds")) ? "holds"
										 : "DOES NOT HOLD");
	if (get(chk, "holds"))
		printf("  policy check (all tenants): %s%s%s\n",
		       json_object_get_boolean(get(chk, "holds")) ? "holds" : "FAILS",
		       gets(chk, "why") && gets(chk, "why")[0] ? ": " : "",
		       gets(chk, "why") ? gets(chk, "why") : "");
	if (t->gap_resource[0])
		printf("  minimal gap: %.4f on %s (%s)\n", t->gap, t->gap_resource,
		       t->promoted ? "promoted: its weight rises in priority mode"
				   : "not promoted: at or above its entitlement");
	else
		printf("  minimal gap: none (no bottleneck resource)\n");
	for (size_t k = 0; gaps && k < json_object_array_length(gaps); k++) {
		struct json_object *g = json_object_array_get_idx(gaps, k);

		printf("    on %s: entitled %.4f - consumed %.4f = gap %.4f\n",
		       gets(g, "resource") ? gets(g, "resource") : "?", getd(g, "entitled"),
		       getd(g, "consumed"), getd(g, "gap"));
	}
	printf("  limits:      %s cpu.max \"%s\", memory.high %s, memory.max %s, cpu.weight %lld\n",
	       t->written ? "written" : "planned", t->cpu_max, t->mem_high, t->mem_max,
	       t->cpu_weight);
	print_files(t, o);
}

int fairctl_explain_main(int argc, char **argv)
{
	struct json_object *resp = NULL, *extra = NULL;
	const char *sock = NULL;
	struct fcj_status st = {0};
	bool json = false;
	char err[512];
	int r, ret = FAIRCTL_EXIT_FAIL;

	r = fctl_view_options(argc, argv, usage, &json, &sock);
	if (r >= 0)
		return r;
	if (optind + 1 != argc) {
		fprintf(stderr, "fairctl explain: expected one TENANT\n");
		usage(stderr);
		return FAIRCTL_EXIT_USAGE;
	}
	extra = json_object_new_object();
	if (!extra)
		return FAIRCTL_EXIT_FAIL;
	json_object_object_add(extra, "tenant", json_object_new_string(argv[optind]));
	r = fctl_request(fctl_socket_path(sock), "explain", extra, &resp, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "fairctl explain: %s\n", err);
		goto out;
	}
	if (json) {
		fctl_print_answer(resp);
		ret = FAIRCTL_EXIT_OK;
		goto out;
	}
	/* the answer carries the status members too (one consistent period) */
	r = fcj_status_parse(resp, &st, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "fairctl explain: %s\n", err);
		goto out;
	}
	print(&st, resp);
	ret = FAIRCTL_EXIT_OK;
out:
	fcj_status_free(&st);
	json_object_put(resp);
	json_object_put(extra);
	return ret;
}
