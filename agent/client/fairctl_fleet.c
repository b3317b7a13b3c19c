/* SPDX-License-Identifier: MIT */
/*
 * `fairctl fleet set-weight|unset-weight|push|weights` and the fleet-wide
 * views `fairctl status --fleet` and `fairctl top --fleet` (docs/fleet.md).
 * They talk to etcd directly (the [fleet] section of the config gives the
 * endpoints, prefix, TLS and auth), not to a daemon: the fleet's state is in
 * etcd, and every host must show the same thing.
 *
 * Built as its own program, fairctl-fleet, which fairctl runs for these
 * commands (fairctl_fleet_exec.c): libcurl and its TLS stack would make every
 * fairctl start several times slower (`fairctl solve` in scripts, tests).
 *
 * The view reads everything under the prefix in one range (one revision):
 * the hosts' records (capacity, demands, publish time), each host's part of
 * the allocation, the leader key and the fleet weights. Per tenant it shows
 * the weight the leader used and where it came from, the entitlement
 * (weight over the sum of the weights of the tenants with demand), the fleet
 * share (its dominant share of the fleet's summed capacity: per resource the
 * granted part of its local demands summed over hosts) and each host's
 * grant; per host the age of its record and of its allocation.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "etcd_client.h"
#include "fairctl.h"
#include "fairctl_fleet.h"
#include "fleet_conf.h"
#include "fleet_model.h"

#define DEFAULT_CONF "/etc/fairshare/fairshare.conf"

struct cli {
	const char *config, *endpoints, *prefix;
	bool json, batch;
	long iterations;
	double delay;
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: fairctl fleet [OPTIONS] set-weight NAME WEIGHT\n"
		"       fairctl fleet [OPTIONS] unset-weight NAME\n"
		"       fairctl fleet [OPTIONS] push FILE.ini\n"
		"       fairctl fleet [OPTIONS] weights [--json]\n"
		"       fairctl status --fleet [OPTIONS] [--json]\n"
		"       fairctl top --fleet [OPTIONS] [--batch] [-n N] [--delay S]\n\n"
		"The fleet's weights (entitlements), stored in etcd under the fleet prefix and\n"
		"used by the leader for every host: NAME is a tenant, or template.NAME for\n"
		"every tenant a [template.NAME] makes (a tenant's own weight wins). Hosts\n"
		"use their configured weight for tenants without one. push replaces them\n"
		"all with the [tenant.X] and [template.NAME] weights of an INI file (default\n"
		"1, as in fairshare.conf; other sections are ignored). WEIGHT: %g to %g.\n\n"
		"  -c, --config FILE     read [fleet] from FILE (default " DEFAULT_CONF ")\n"
		"  -e, --endpoints URLS  etcd endpoints (instead of the config's)\n"
		"  -p, --prefix PREFIX   the fleet's key prefix (instead of the config's)\n"
		"  -j, --json            JSON output (weights, status --fleet)\n"
		"  -b, --batch           top: plain text frames, no screen clearing\n"
		"  -n, --iterations N    top: stop after N frames\n"
		"  -d, --delay S         top: seconds between frames (default 1)\n"
		"  -h, --help            this text\n",
		1e-6, 1e6);
}

static int parse_options(int argc, char **argv, struct cli *o)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'}, {"endpoints", required_argument, NULL, 'e'},
	    {"prefix", required_argument, NULL, 'p'}, {"json", no_argument, NULL, 'j'},
	    {"batch", no_argument, NULL, 'b'},	      {"iterations", required_argument, NULL, 'n'},
	    {"delay", required_argument, NULL, 'd'},  {"fleet", no_argument, NULL, 'F'},
	    {"help", no_argument, NULL, 'h'},	      {0},
	};
	int c;

	o->iterations = -1;
	o->delay = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:e:p:jbn:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'e':
			o->endpoints = optarg;
			break;
		case 'p':
			o->prefix = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'b':
			o->batch = true;
			break;
		case 'n':
			o->iterations = strtol(optarg, NULL, 10);
			break;
		case 'd':
			o->delay = strtod(optarg, NULL);
			if (!(o->delay >= 0.1 && o->delay <= 60)) {
				fprintf(stderr, "fairctl: --delay from 0.1 to 60 seconds\n");
				return FAIRCTL_EXIT_USAGE;
			}
			break;
		case 'F':
			break;
		case 'h':
			usage(stdout);
			return FAIRCTL_EXIT_OK;
		default:
			usage(stderr);
			return FAIRCTL_EXIT_USAGE;
		}
	}
	return -1;
}

/* The etcd client and prefix from the config's [fleet] and the options. */
static int connect_etcd(const struct cli *o, struct etcd_client *c, char *prefix, size_t len)
{
	struct fs_conf_fleet fc = {0};
	struct conf_error err = {{0}};
	struct etcd_options eo = {0};
	int r = 0;

	if (!o->endpoints || !o->prefix) {
		r = fs_fleet_conf_read(o->config ? o->config : DEFAULT_CONF, &fc, &err);
		if (r < 0 && !o->endpoints) {
			fprintf(stderr, "fairctl: %s\n", err.msg);
			return FAIRCTL_EXIT_USAGE;
		}
		if (r < 0)
			snprintf(fc.prefix, sizeof(fc.prefix), "/fairshare/");
	}
	snprintf(prefix, len, "%s", o->prefix ? o->prefix : fc.prefix);
	if (prefix[0] != '/' || prefix[strlen(prefix) - 1] != '/') {
		fprintf(stderr, "fairctl: prefix '%s' must start and end with '/'\n", prefix);
		return FAIRCTL_EXIT_USAGE;
	}
	eo.endpoints = o->endpoints ? o->endpoints : fc.endpoints;
	eo.cacert = fc.cacert[0] ? fc.cacert : NULL;
	eo.cert = fc.cert[0] ? fc.cert : NULL;
	eo.key = fc.key[0] ? fc.key : NULL;
	eo.user = fc.user[0] ? fc.user : NULL;
	eo.password = fc.user[0] ? fc.password : NULL;
	eo.timeout_ms = 3000;
	r = etcd_client_init(c, &eo);
	if (r < 0) {
		fprintf(stderr, "fairctl: etcd: %s\n", c->err[0] ? c->err : strerror(-r));
		return FAIRCTL_EXIT_USAGE;
	}
	return -1;
}

/* --- weights ----------------------------------------------------------------------- */

/* The weights as stored now and the key's mod revision (0: no key). */
static int read_weights(struct etcd_client *c, const char *key, struct fleet_weights *w,
			int64_t *mod)
{
	struct etcd_kvs kvs;
	char why[256];
	int r = etcd_range(c, key, false, 0, &kvs);

	memset(w, 0, sizeof(*w));
	*mod = 0;
	if (r < 0) {
		fprintf(stderr, "fairctl: etcd: %s\n", c->err);
		return r;
	}
	if (kvs.n == 1) {
		*mod = kvs.kv[0].mod_revision;
		r = fleet_weights_from_json(kvs.kv[0].value, w, why, sizeof(why));
		if (r < 0)
			fprintf(stderr, "fairctl: %s: %s (set or push replaces it)\n", key, why);
		if (r == -EPROTO)
			r = 0, memset(w, 0, sizeof(*w));
	}
	etcd_kvs_free(&kvs);
	return r;
}

static int remove_weight(struct fleet_weights *w, const char *name, bool is_template)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->w[i].is_template == is_template && !strcmp(w->w[i].name, name)) {
			memmove(&w->w[i], &w->w[i + 1], (w->n - i - 1) * sizeof(*w->w));
			w->n--;
			return 0;
		}
	return -ENOENT;
}

/* NAME or template.NAME */
static const char *split_name(const char *arg, bool *is_template)
{
	*is_template = !strncmp(arg, "template.", 9);
	return *is_template ? arg + 9 : arg;
}

/* Read, change one entry, write back if nobody wrote in between (retried). */
static int change_weight(struct etcd_client *c, const char *key, const char *arg, double weight,
			 bool unset)
{
	bool is_template;
	const char *name = split_name(arg, &is_template);

	for (int attempt = 0; attempt < 5; attempt++) {
		struct fleet_weights w;
		int64_t mod;
		bool won = false;
		char *json;
		int r = read_weights(c, key, &w, &mod);

		if (r < 0)
			return FAIRCTL_EXIT_FAIL;
		r = unset ? remove_weight(&w, name, is_template)
			  : fleet_weights_set(&w, name, is_template, weight);
		if (r < 0) {
			fleet_weights_free(&w);
			if (unset) {
				fprintf(stderr, "fairctl: %s has no fleet weight\n", arg);
				return FAIRCTL_EXIT_FAIL;
			}
			fprintf(stderr,
				"fairctl: bad name '%s' or weight %g (a number from %g to %g)\n",
				arg, weight, 1e-6, 1e6);
			return FAIRCTL_EXIT_USAGE;
		}
		json = fleet_weights_to_json(&w);
		fleet_weights_free(&w);
		if (!json)
			return FAIRCTL_EXIT_FAIL;
		r = etcd_txn_put(c, key, ETCD_CMP_MOD, mod, json, strlen(json), 0, &won, NULL,
				 NULL);
		free(json);
		if (r < 0) {
			fprintf(stderr, "fairctl: etcd: %s\n", c->err);
			return FAIRCTL_EXIT_FAIL;
		}
		if (won) {
			if (unset)
				printf("%s: fleet weight removed (hosts' own weights apply)\n",
				       arg);
			else
				printf("%s: fleet weight %g\n", arg, weight);
			return FAIRCTL_EXIT_OK;
		}
	}
	fprintf(stderr, "fairctl: %s kept changing under us; try again\n", key);
	return FAIRCTL_EXIT_FAIL;
}

static int push_one(void *ctx, const char *name, bool is_template, double weight)
{
	return fleet_weights_set(ctx, name, is_template, weight);
}

static int push(struct etcd_client *c, const char *key, const char *file)
{
	struct fleet_weights w = {0};
	struct conf_error err = {{0}};
	size_t templates = 0;
	char *json;
	int r = fs_fleet_weights_read(file, push_one, &w, &err);

	if (r < 0) {
		fprintf(stderr, "fairctl: %s\n", err.msg);
		fleet_weights_free(&w);
		return FAIRCTL_EXIT_USAGE;
	}
	json = fleet_weights_to_json(&w);
	for (size_t i = 0; i < w.n; i++)
		templates += w.w[i].is_template;
	r = json ? etcd_put(c, key, json, strlen(json), 0, NULL) : -ENOMEM;
	free(json);
	if (r < 0) {
		fprintf(stderr, "fairctl: etcd: %s\n", r == -ENOMEM ? "out of memory" : c->err);
		fleet_weights_free(&w);
		return FAIRCTL_EXIT_FAIL;
	}
	printf("%s: %zu tenant and %zu template weights (replacing the previous ones)\n", key,
	       w.n - templates, templates);
	fleet_weights_free(&w);
	return FAIRCTL_EXIT_OK;
}

static int show_weights(struct etcd_client *c, const char *key, bool json)
{
	struct fleet_weights w;
	int64_t mod;

	if (read_weights(c, key, &w, &mod) < 0)
		return FAIRCTL_EXIT_FAIL;
	if (json) {
		char *s = fleet_weights_to_json(&w);

		printf("%s\n", s ? s : "{}");
		free(s);
	} else {
		if (!w.n)
			printf("no fleet weights: every host uses its configured weights\n");
		for (size_t i = 0; i < w.n; i++)
			printf("%s%s %g\n", w.w[i].is_template ? "template." : "", w.w[i].name,
			       w.w[i].weight);
	}
	fleet_weights_free(&w);
	return FAIRCTL_EXIT_OK;
}

int fairctl_fleet_main(int argc, char **argv)
{
	struct cli o = {0};
	struct etcd_client c;
	char prefix[256], key[300];
	const char *cmd;
	int r = parse_options(argc, argv, &o);

	if (r >= 0)
		return r;
	if (optind >= argc) {
		usage(stderr);
		return FAIRCTL_EXIT_USAGE;
	}
	cmd = argv[optind];
	if (!((!strcmp(cmd, "set-weight") && argc - optind == 3) ||
	      (!strcmp(cmd, "unset-weight") && argc - optind == 2) ||
	      (!strcmp(cmd, "push") && argc - optind == 2) ||
	      (!strcmp(cmd, "weights") && argc - optind == 1))) {
		usage(stderr);
		return FAIRCTL_EXIT_USAGE;
	}
	if (!strcmp(cmd, "set-weight")) {
		char *end;

		(void)strtod(argv[optind + 2], &end);
		if (*end || end == argv[optind + 2]) {
			fprintf(stderr, "fairctl: bad weight '%s'\n", argv[optind + 2]);
			return FAIRCTL_EXIT_USAGE;
		}
	}
	r = connect_etcd(&o, &c, prefix, sizeof(prefix));
	if (r >= 0)
		return r;
	snprintf(key, sizeof(key), "%sweights", prefix);
	if (!strcmp(cmd, "set-weight"))
		r = change_weight(&c, key, argv[optind + 1], strtod(argv[optind + 2], NULL), false);
	else if (!strcmp(cmd, "unset-weight"))
		r = change_weight(&c, key, argv[optind + 1], 0, true);
	else if (!strcmp(cmd, "push"))
		r = push(&c, key, argv[optind + 1]);
	else
		r = show_weights(&c, key, o.json);
	etcd_client_free(&c);
	return r;
}

/* --- the fleet-wide view ------------------------------------------------------------ */

struct view_host {
	struct fleet_host_rec rec;
	struct fleet_alloc alloc; /* its part (n_hosts 0: none) */
};

struct view {
	int64_t revision;
	char leader[FLEET_NAME_MAX];
	size_t n_hosts;
	struct view_host *h;
	struct fleet_weights weights;
	/* resources by name over the fleet, and their summed capacity */
	size_t n_res;
	char res[FS_MAX_RES * 4][FS_RES_NAME_MAX];
	double capacity[FS_MAX_RES * 4];
};

static void view_free(struct view *v)
{
	for (size_t i = 0; i < v->n_hosts; i++) {
		fleet_host_free(&v->h[i].rec);
		fleet_alloc_free(&v->h[i].alloc);
	}
	free(v->h);
	fleet_weights_free(&v->weights);
	memset(v, 0, sizeof(*v));
}

static struct view_host *view_host(struct view *v, const char *name)
{
	for (size_t i = 0; i < v->n_hosts; i++)
		if (!strcmp(v->h[i].rec.host, name))
			return &v->h[i];
	return NULL;
}

static size_t res_index(struct view *v, const char *name)
{
	for (size_t r = 0; r < v->n_res; r++)
		if (!strcmp(v->res[r], name))
			return r;
	if (v->n_res == sizeof(v->res) / sizeof(v->res[0]))
		return SIZE_MAX;
	snprintf(v->res[v->n_res], sizeof(v->res[0]), "%s", name);
	return v->n_res++;
}

/* Everything under the prefix, at one revision. */
static int view_read(struct etcd_client *c, const char *prefix, struct view *v)
{
	struct etcd_kvs kvs;
	size_t plen = strlen(prefix);
	char why[256];
	int r = etcd_range(c, prefix, true, 0, &kvs);

	memset(v, 0, sizeof(*v));
	if (r < 0) {
		fprintf(stderr, "fairctl: etcd: %s\n", c->err);
		return r;
	}
	v->revision = kvs.revision;
	v->h = calloc(kvs.n + 1, sizeof(*v->h));
	if (!v->h) {
		etcd_kvs_free(&kvs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < kvs.n; i++) {
		const char *k = kvs.kv[i].key + plen, *val = kvs.kv[i].value;

		if (!strncmp(k, "hosts/", 6) &&
		    fleet_host_from_json(val, &v->h[v->n_hosts].rec, why, sizeof(why)) == 0)
			v->n_hosts++;
		else if (!strcmp(k, "leader"))
			snprintf(v->leader, sizeof(v->leader), "%s", val);
		else if (!strcmp(k, "weights"))
			fleet_weights_from_json(val, &v->weights, why, sizeof(why));
	}
	/* Allocations after the records: each goes to its host. */
	for (size_t i = 0; i < kvs.n; i++) {
		const char *k = kvs.kv[i].key + plen;
		struct view_host *h = !strncmp(k, "alloc/", 6) ? view_host(v, k + 6) : NULL;

		if (h && !h->alloc.n_hosts)
			fleet_alloc_from_json(kvs.kv[i].value, &h->alloc, why, sizeof(why));
	}
	for (size_t i = 0; i < v->n_hosts; i++)
		for (size_t r = 0; r < v->h[i].rec.n_res; r++) {
			size_t m = res_index(v, v->h[i].rec.res_name[r]);

			if (m != SIZE_MAX)
				v->capacity[m] += v->h[i].rec.capacity[r];
		}
	etcd_kvs_free(&kvs);
	return 0;
}

static const struct fleet_grant *grant_of(const struct view_host *h, const char *tenant)
{
	if (!h->alloc.n_hosts)
		return NULL;
	for (size_t i = 0; i < h->alloc.h[0].n; i++)
		if (!strcmp(h->alloc.h[0].g[i].tenant, tenant))
			return &h->alloc.h[0].g[i];
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Tenant names over the fleet, sorted, unique (pointers into the records). */
static const char **tenant_names(const struct view *v, size_t *n)
{
	size_t cap = 0, m = 0;
	const char **names;

	for (size_t i = 0; i < v->n_hosts; i++)
		cap += v->h[i].rec.n_tenants;
	names = calloc(cap + 1, sizeof(*names));
	if (!names)
		return NULL;
	for (size_t i = 0; i < v->n_hosts; i++)
		for (size_t j = 0; j < v->h[i].rec.n_tenants; j++)
			names[m++] = v->h[i].rec.t[j].name;
	qsort(names, m, sizeof(*names), cmp_str);
	*n = 0;
	for (size_t i = 0; i < m; i++)
		if (!*n || strcmp(names[*n - 1], names[i]))
			names[(*n)++] = names[i];
	return names;
}

struct tenant_view {
	double weight;
	const char *from;
	bool has_demand;
	double alloc[FS_MAX_RES * 4], demand[FS_MAX_RES * 4];
	double share, demand_share;
};

/* One tenant's fleet totals; the weight is the leader's (from any grant),
 * else what the leader would use. */
static void tenant_totals(struct view *v, const char *name, struct tenant_view *t)
{
	bool leaders = false;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < v->n_hosts; i++) {
		const struct fleet_host_rec *h = &v->h[i].rec;
		const struct fleet_grant *g = grant_of(&v->h[i], name);

		for (size_t j = 0; j < h->n_tenants; j++) {
			const struct fleet_tenant_rec *tr = &h->t[j];

			if (strcmp(tr->name, name))
				continue;
			if (g && g->weight > 0 && !leaders) {
				t->weight = g->weight;
				t->from = fleet_weight_from_name(g->from);
				leaders = true;
			}
			for (size_t r = 0; r < h->n_res; r++) {
				size_t m = res_index(v, h->res_name[r]);

				if (m == SIZE_MAX)
					continue;
				t->demand[m] += tr->demand[r];
				t->alloc[m] += (g ? g->grant : 0) * tr->demand[r];
				t->has_demand |= tr->demand[r] > 0;
			}
			if (!t->from) { /* no allocation: as the leader would */
				double w = fleet_weights_get(&v->weights, name, false);

				t->weight = w > 0 ? w : tr->weight;
				t->from = w > 0 ? "fleet" : "host";
			}
		}
	}
	for (size_t m = 0; m < v->n_res; m++)
		if (v->capacity[m] > 0) {
			t->share = fmax(t->share, t->alloc[m] / v->capacity[m]);
			t->demand_share = fmax(t->demand_share, t->demand[m] / v->capacity[m]);
		}
}

static uint64_t realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static double age_s(uint64_t now, uint64_t t)
{
	return t ? ((double)now - (double)t) / 1e6 : NAN;
}

static struct json_object *num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

static void print_json(struct view *v, const char *prefix, const char **names, size_t n)
{
	struct json_object *o = json_object_new_object(), *hs = json_object_new_array(),
			   *ts = json_object_new_array();
	uint64_t now = realtime_us();
	struct tenant_view *tv = calloc(n + 1, sizeof(*tv));
	double wsum = 0;

	json_object_object_add(o, "prefix", json_object_new_string(prefix));
	json_object_object_add(o, "revision", json_object_new_int64(v->revision));
	json_object_object_add(o, "leader", json_object_new_string(v->leader));
	json_object_object_add(o, "fleet_weights", json_object_new_int64((int64_t)v->weights.n));
	for (size_t i = 0; i < v->n_hosts; i++) {
		const struct view_host *h = &v->h[i];
		struct json_object *e = json_object_new_object();
		bool have = h->alloc.n_hosts > 0;

		json_object_object_add(e, "host", json_object_new_string(h->rec.host));
		json_object_object_add(e, "leader",
				       json_object_new_boolean(!strcmp(h->rec.host, v->leader)));
		json_object_object_add(e, "data_age_seconds", num(age_s(now, h->rec.time_us)));
		json_object_object_add(e, "version", json_object_new_int64(h->rec.version));
		json_object_object_add(e, "alloc_age_seconds",
				       have ? num(age_s(now, h->alloc.time_us)) : NULL);
		json_object_object_add(e, "alloc_revision",
				       json_object_new_int64(have ? h->alloc.revision : 0));
		json_object_object_add(e, "alloc_version",
				       json_object_new_int64(have ? h->alloc.h[0].version : 0));
		json_object_object_add(e, "tenants",
				       json_object_new_int64((int64_t)h->rec.n_tenants));
		json_object_array_add(hs, e);
	}
	json_object_object_add(o, "hosts", hs);
	for (size_t j = 0; tv && j < n; j++) {
		tenant_totals(v, names[j], &tv[j]);
		if (tv[j].has_demand)
			wsum += tv[j].weight;
	}
	for (size_t j = 0; tv && j < n; j++) {
		struct json_object *e = json_object_new_object(), *per = json_object_new_array();

		json_object_object_add(e, "name", json_object_new_string(names[j]));
		json_object_object_add(e, "weight", num(tv[j].weight));
		json_object_object_add(e, "weight_from", json_object_new_string(tv[j].from));
		json_object_object_add(e, "entitlement",
				       num(tv[j].has_demand && wsum > 0 ? tv[j].weight / wsum : 0));
		json_object_object_add(e, "fleet_share", num(tv[j].share));
		json_object_object_add(e, "demand_share", num(tv[j].demand_share));
		for (size_t i = 0; i < v->n_hosts; i++) {
			const struct fleet_grant *g = grant_of(&v->h[i], names[j]);
			bool here = false;
			struct json_object *p;

			for (size_t q = 0; q < v->h[i].rec.n_tenants && !here; q++)
				here = !strcmp(v->h[i].rec.t[q].name, names[j]);
			if (!here)
				continue;
			p = json_object_new_object();
			json_object_object_add(p, "host", json_object_new_string(v->h[i].rec.host));
			json_object_object_add(p, "granted", g ? num(g->grant) : NULL);
			json_object_object_add(p, "x", g ? num(g->x) : NULL);
			json_object_object_add(p, "cap", g ? num(g->cap) : NULL);
			json_object_array_add(per, p);
		}
		json_object_object_add(e, "hosts", per);
		json_object_array_add(ts, e);
	}
	json_object_object_add(o, "tenants", ts);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	free(tv);
}

static void print_text(FILE *f, struct view *v, const char *prefix, const char **names, size_t n)
{
	uint64_t now = realtime_us();
	struct tenant_view *tv = calloc(n + 1, sizeof(*tv));
	double wsum = 0;

	fprintf(f,
		"fleet %s at etcd revision %lld: %zu hosts, leader %s, %zu tenants, %zu "
		"fleet weights\n",
		prefix, (long long)v->revision, v->n_hosts, v->leader[0] ? v->leader : "none", n,
		v->weights.n);
	fprintf(f, "  %-20s %10s %11s %10s  %s\n", "HOST", "DATA AGE", "ALLOC AGE", "ALLOC REV",
		"RECORD");
	for (size_t i = 0; i < v->n_hosts; i++) {
		const struct view_host *h = &v->h[i];
		bool have = h->alloc.n_hosts > 0;
		char alloc_age[32] = "-", rec[64];

		if (have)
			snprintf(alloc_age, sizeof(alloc_age), "%.2f s",
				 age_s(now, h->alloc.time_us));
		snprintf(rec, sizeof(rec), "v%lld%s", (long long)h->rec.version,
			 !have					   ? ", no allocation"
			 : h->alloc.h[0].version == h->rec.version ? ", solved"
								   : ", newer than the allocation");
		fprintf(f, "  %-20s %8.2f s %11s %10lld  %s%s\n", h->rec.host,
			age_s(now, h->rec.time_us), alloc_age,
			(long long)(have ? h->alloc.revision : 0), rec,
			!strcmp(h->rec.host, v->leader) ? ", leader" : "");
	}
	if (!tv) {
		fprintf(f, "out of memory\n");
		return;
	}
	for (size_t j = 0; j < n; j++) {
		tenant_totals(v, names[j], &tv[j]);
		if (tv[j].has_demand)
			wsum += tv[j].weight;
	}
	fprintf(f, "\n  %-20s %8s %-9s %11s %11s %12s  %s\n", "TENANT", "WEIGHT", "FROM",
		"ENTITLEMENT", "FLEET SHARE", "DEMAND SHARE", "GRANTED OF DEMAND PER HOST");
	for (size_t j = 0; j < n; j++) {
		fprintf(f, "  %-20s %8g %-9s %10.1f%% %10.1f%% %11.1f%%  ", names[j], tv[j].weight,
			tv[j].from, tv[j].has_demand && wsum > 0 ? 100 * tv[j].weight / wsum : 0,
			100 * tv[j].share, 100 * tv[j].demand_share);
		for (size_t i = 0, k = 0; i < v->n_hosts; i++) {
			const struct fleet_grant *g = grant_of(&v->h[i], names[j]);
			bool here = false;

			for (size_t q = 0; q < v->h[i].rec.n_tenants && !here; q++)
				here = !strcmp(v->h[i].rec.t[q].name, names[j]);
			if (!here)
				continue;
			if (g)
				fprintf(f, "%s%s %.1f%%", k++ ? ", " : "", v->h[i].rec.host,
					100 * g->grant);
			else
				fprintf(f, "%s%s -", k++ ? ", " : "", v->h[i].rec.host);
		}
		fputc('\n', f);
	}
	free(tv);
}

static int fleet_view(int argc, char **argv, bool top)
{
	struct cli o = {0};
	struct etcd_client c;
	char prefix[256];
	int r = parse_options(argc, argv, &o);

	if (r >= 0)
		return r;
	if (optind < argc) {
		fprintf(stderr, "fairctl: unexpected argument '%s'\n", argv[optind]);
		return FAIRCTL_EXIT_USAGE;
	}
	r = connect_etcd(&o, &c, prefix, sizeof(prefix));
	if (r >= 0)
		return r;
	if (top && !o.batch && !isatty(STDOUT_FILENO))
		o.batch = true;
	r = FAIRCTL_EXIT_OK;
	for (long frame = 0; o.iterations < 0 || frame < o.iterations; frame++) {
		struct view v;
		const char **names;
		size_t n = 0;

		if (frame)
			usleep((useconds_t)(o.delay * 1e6));
		if (view_read(&c, prefix, &v) < 0) {
			r = FAIRCTL_EXIT_FAIL;
			if (!top)
				break;
			continue;
		}
		names = tenant_names(&v, &n);
		if (!names) {
			view_free(&v);
			r = FAIRCTL_EXIT_FAIL;
			break;
		}
		if (top && !o.batch)
			fputs("\033[H\033[2J", stdout);
		if (o.json)
			print_json(&v, prefix, names, n);
		else
			print_text(stdout, &v, prefix, names, n);
		if (top && o.batch)
			fputc('\n', stdout);
		fflush(stdout);
		free(names);
		view_free(&v);
		if (!top)
			break;
	}
	etcd_client_free(&c);
	return r;
}

int fairctl_fleet_status_main(int argc, char **argv)
{
	return fleet_view(argc, argv, false);
}

int fairctl_fleet_top_main(int argc, char **argv)
{
	return fleet_view(argc, argv, true);
}

/* argv: fairctl-fleet fleet|status|top ARGS... (as fairctl passes them). */
int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return FAIRCTL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return FAIRCTL_EXIT_OK;
	}
	if (!strcmp(argv[1], "status"))
		return fairctl_fleet_status_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "top"))
		return fairctl_fleet_top_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "fleet"))
		return fairctl_fleet_main(argc - 1, argv + 1);
	usage(stderr);
	return FAIRCTL_EXIT_USAGE;
}
