/* SPDX-License-Identifier: MIT */
/*
 * `fairctl status [--json]`: who gets what and why, from the running
 * daemon: a header (policy, period, mode, bottleneck resources) and one block
 * per tenant (weight, entitlement, demand, allocation, use, bottlenecks,
 * share, minimal gap, mode, the limits written).
 */
#include <getopt.h> /* optind */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "control_json.h"
#include "fairctl.h"
#include "fairctl_client.h"
#ifdef FAIRCTL_HAVE_FLEET
#include "fairctl_fleet.h"
#endif

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: fairctl status [--json] [--socket PATH]\n"
	    "       fairctl status --fleet [--config FILE] [--json]   (fairctl fleet --help)\n\n"
	    "Show the running fairshared's allocation: policy, period, bottleneck resources,\n"
	    "and per tenant its weight and entitlement, demand, allocation, measured use,\n"
	    "bottleneck resources, share, minimal gap, mode and the cgroup limits; in\n"
	    "fleet mode also the fleet state (mode, leader, the allocation's age).\n\n"
	    "  -j, --json         the daemon's answer as JSON (schema: agent/control_status.h)\n"
	    "  -s, --socket PATH  control socket (default $" FAIRCTL_SOCKET_ENV
	    " or " FAIRCTL_DEFAULT_SOCKET ")\n"
	    "  -h, --help         this text\n");
}

static void vector_line(FILE *f, const struct fcj_status *s, const char *label, const double *v)
{
	char buf[48];

	fprintf(f, "    %-11s", label);
	for (size_t r = 0; r < s->n_res; r++) {
		fcj_fmt_amount(s->res[r].kind, v[r], buf, sizeof(buf));
		fprintf(f, "%s%s %s", r ? ", " : "", s->res[r].name, buf);
	}
	fputc('\n', f);
}

static void print_header(FILE *f, const struct fcj_status *s)
{
	char cap[48], names[512] = "";
	size_t used = 0;

	fprintf(f, "policy %s, period %.3g s (#%llu), mode %s%s%s\n", s->policy, s->interval,
		(unsigned long long)s->period, s->mode,
		s->dry_run ? ", dry-run (nothing written)" : "",
		s->released ? ", RELEASED (originals restored, not enforcing until reload)" : "");
	fprintf(f, "  why: %s\n", s->mode_reason[0] ? s->mode_reason : "(no period yet)");
	if (s->drift_corrected)
		fprintf(f, "  drift: %llu file value(s) changed by someone else, written again\n",
			(unsigned long long)s->drift_corrected);
	for (size_t r = 0; r < s->n_res; r++) {
		int w;

		if (!s->res[r].state[0])
			continue;
		w = snprintf(names + used, sizeof(names) - used, "%s%s (%s)", used ? ", " : "",
			     s->res[r].name, s->res[r].state);
		if (w > 0 && (size_t)w < sizeof(names) - used)
			used += (size_t)w;
	}
	fprintf(f, "  bottlenecks: %s\n", used ? names : "none");
	fprintf(f, "  %-16s %16s %10s %10s\n", "RESOURCE", "CAPACITY", "ALLOCATED", "USED");
	for (size_t r = 0; r < s->n_res; r++) {
		const struct fcj_resource *res = &s->res[r];

		fcj_fmt_amount(res->kind, res->capacity, cap, sizeof(cap));
		fprintf(f, "  %-16s %16s %9.1f%% %9.1f%%%s%s\n", res->name, cap,
			100 * res->allocated / res->capacity, 100 * res->used / res->capacity,
			res->state[0] ? "  " : "", res->state);
	}
}

static void print_tenant(FILE *f, const struct fcj_status *s, const struct fcj_tenant *t)
{
	fprintf(f, "\n%s (%s): weight %g, entitlement %.1f%%, mode %s%s\n", t->name, t->cgroup,
		t->weight, 100 * t->entitlement, t->mode, t->present ? "" : " (cgroup missing)");
	if (isfinite(t->fleet_weight))
		fprintf(f, "    fleet      weight %g (%s), the leader's for every host\n",
			t->fleet_weight,
			!strcmp(t->fleet_weight_from, "host")
			    ? "no fleet weight: a host's configured"
			: !strcmp(t->fleet_weight_from, "template") ? "its template's, from etcd"
								    : "from etcd");
	if (t->template_name[0])
		fprintf(f, "    template   %s%s%s\n", t->template_name,
			t->login[0] ? ", user " : "", t->login);
	if (t->backend[0])
		fprintf(f, "    backend    %s (%s)\n", t->backend, t->backend_reason);
	fprintf(f, "    granted    %.1f%% of its demand, share %.4f, bottlenecks %s\n",
		100 * t->granted, t->share, t->bottlenecks[0] ? t->bottlenecks : "none");
	if (t->gap_resource[0])
		fprintf(f, "    min gap    %.4f on %s%s\n", t->gap, t->gap_resource,
			t->promoted ? " (promoted)" : "");
	else
		fprintf(f, "    min gap    - (no bottleneck resource)\n");
	vector_line(f, s, "demand", t->demand);
	vector_line(f, s, "allocation", t->alloc);
	vector_line(f, s, "used", t->usage);
	vector_line(f, s, "limit", t->limit);
	fprintf(f,
		"    %-11scpu.max \"%s\", cpu.weight %lld, memory.high %s, memory.max %s, "
		"io.weight %lld%s%s%s\n",
		t->written ? "written" : "planned", t->cpu_max, t->cpu_weight, t->mem_high,
		t->mem_max, t->io_weight, t->io_max[0] ? ", io.max \"" : "", t->io_max,
		t->io_max[0] ? "\"" : "");
	fprintf(f, "    estimate   %s\n", t->estimate);
	if (t->drift_corrected)
		fprintf(
		    f, "    drift      %llu file value(s) changed by someone else, written again\n",
		    (unsigned long long)t->drift_corrected);
}

/* Fleet mode's line (docs/fleet.md), from the answer's "fleet" object. */
static void fleet_text(struct json_object *resp, char *buf, size_t len)
{
	struct json_object *f, *v;
	const char *k[] = {"mode", "reason", "host", "leader"};
	const char *val[4] = {"?", "", "?", ""};
	double age = NAN;
	long long applied = 0;

	buf[0] = '\0';
	if (!json_object_object_get_ex(resp, "fleet", &f))
		return;
	for (int i = 0; i < 4; i++)
		if (json_object_object_get_ex(f, k[i], &v) && json_object_get_string(v))
			val[i] = json_object_get_string(v);
	if (json_object_object_get_ex(f, "alloc_age_seconds", &v) && v)
		age = json_object_get_double(v);
	if (json_object_object_get_ex(f, "applied_revision", &v))
		applied = (long long)json_object_get_int64(v);
	snprintf(buf, len,
		 "  fleet: %s as host %s (%s); leader %s; last applied revision %lld, "
		 "allocation age %.2f s\n",
		 val[0], val[2], val[1], val[3][0] ? val[3] : "unknown", applied, age);
}

int fairctl_status_main(int argc, char **argv)
{
	char fleet[1600];
	const char *sock = NULL;
	struct json_object *resp = NULL;
	struct fcj_status st;
	bool json = false;
	char err[512];
	int r;

#ifdef FAIRCTL_HAVE_FLEET
	if (fairctl_fleet_asked(argc, argv))
		return fairctl_fleet_exec("status", argc, argv);
#endif
	r = fctl_view_options(argc, argv, usage, &json, &sock);
	if (r >= 0)
		return r;
	if (optind < argc) {
		fprintf(stderr, "fairctl status: unexpected argument '%s'\n", argv[optind]);
		return FAIRCTL_EXIT_USAGE;
	}
	r = fctl_request(fctl_socket_path(sock), "status", NULL, &resp, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "fairctl status: %s\n", err);
		return FAIRCTL_EXIT_FAIL;
	}
	if (json) {
		fctl_print_answer(resp);
		json_object_put(resp);
		return FAIRCTL_EXIT_OK;
	}
	fleet_text(resp, fleet, sizeof(fleet));
	r = fcj_status_parse(resp, &st, err, sizeof(err));
	json_object_put(resp);
	if (r < 0) {
		fprintf(stderr, "fairctl status: %s\n", err);
		fcj_status_free(&st);
		return FAIRCTL_EXIT_FAIL;
	}
	print_header(stdout, &st);
	fputs(fleet, stdout);
	for (size_t i = 0; i < st.n_tenants; i++)
		print_tenant(stdout, &st, &st.t[i]);
	fcj_status_free(&st);
	return fflush(stdout) == 0 ? FAIRCTL_EXIT_OK : FAIRCTL_EXIT_FAIL;
}
