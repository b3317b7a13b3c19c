/* SPDX-License-Identifier: MIT */
/* The fleet's records and the leader's solve (fleet_model.h). */
#include "fleet_model.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent_conf.h" /* fs_conf_weight_ok: the config's weight bounds */
#include "policy.h"
#include "psdsf_caps.h"

void fleet_host_free(struct fleet_host_rec *h)
{
	free(h->t);
	memset(h, 0, sizeof(*h));
}

void fleet_alloc_free(struct fleet_alloc *a)
{
	for (size_t i = 0; i < a->n_hosts; i++)
		free(a->h[i].g);
	free(a->h);
	memset(a, 0, sizeof(*a));
}

bool fleet_host_same(const struct fleet_host_rec *a, const struct fleet_host_rec *b)
{
	if (strcmp(a->host, b->host) || a->n_res != b->n_res || a->n_tenants != b->n_tenants)
		return false;
	for (size_t r = 0; r < a->n_res; r++)
		if (strcmp(a->res_name[r], b->res_name[r]) || a->capacity[r] != b->capacity[r])
			return false;
	for (size_t i = 0; i < a->n_tenants; i++) {
		if (strcmp(a->t[i].name, b->t[i].name) || strcmp(a->t[i].tmpl, b->t[i].tmpl) ||
		    a->t[i].weight != b->t[i].weight)
			return false;
		for (size_t r = 0; r < a->n_res; r++)
			if (a->t[i].demand[r] != b->t[i].demand[r])
				return false;
	}
	return true;
}

/* --- JSON ---------------------------------------------------------------------- */

/* Nine significant digits: what the grants need, a third of %.17g's bytes. */
static struct json_object *num(double v)
{
	char buf[32];

	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof(buf), "%.9g", v);
	return json_object_new_double_s(v, buf);
}

static struct json_object *i64(int64_t v)
{
	return json_object_new_int64(v);
}

static char *to_text(struct json_object *o)
{
	char *s = o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE))
		    : NULL;

	json_object_put(o);
	return s;
}

char *fleet_host_to_json(const struct fleet_host_rec *h)
{
	struct json_object *o = json_object_new_object(), *res = json_object_new_array(),
			   *ts = json_object_new_array();

	json_object_object_add(o, "host", json_object_new_string(h->host));
	json_object_object_add(o, "version", i64(h->version));
	json_object_object_add(o, "time_us", i64((int64_t)h->time_us));
	for (size_t r = 0; r < h->n_res; r++) {
		struct json_object *e = json_object_new_array();

		json_object_array_add(e, json_object_new_string(h->res_name[r]));
		json_object_array_add(e, num(h->capacity[r]));
		json_object_array_add(res, e);
	}
	json_object_object_add(o, "resources", res);
	for (size_t i = 0; i < h->n_tenants; i++) {
		struct json_object *e = json_object_new_array(), *d = json_object_new_array();

		json_object_array_add(e, json_object_new_string(h->t[i].name));
		json_object_array_add(e, num(h->t[i].weight));
		for (size_t r = 0; r < h->n_res; r++)
			json_object_array_add(d, num(h->t[i].demand[r]));
		json_object_array_add(e, d);
		if (h->t[i].tmpl[0])
			json_object_array_add(e, json_object_new_string(h->t[i].tmpl));
		json_object_array_add(ts, e);
	}
	json_object_object_add(o, "tenants", ts);
	return to_text(o);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

static bool get_name(struct json_object *v, char *out)
{
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;

	if (!s || !*s || strlen(s) >= FLEET_NAME_MAX)
		return false;
	snprintf(out, FLEET_NAME_MAX, "%s", s);
	return true;
}

static bool get_num(struct json_object *v, double *out)
{
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_double(v);
	return isfinite(*out) && *out >= 0;
}

const char *fleet_weight_from_name(enum fleet_weight_from f)
{
	return f == FLEET_W_TENANT ? "fleet" : f == FLEET_W_TEMPLATE ? "template" : "host";
}

static bool weight_from(struct json_object *v, enum fleet_weight_from *out)
{
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";

	for (enum fleet_weight_from f = FLEET_W_HOST; f <= FLEET_W_TEMPLATE; f++)
		if (!strcmp(s, fleet_weight_from_name(f))) {
			*out = f;
			return true;
		}
	return false;
}

static struct json_object *field(struct json_object *o, const char *name, enum json_type type)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, name, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

int fleet_host_from_json(const char *json, struct fleet_host_rec *h, char *err, size_t errlen)
{
	struct json_object *o = json_tokener_parse(json), *v, *res, *ts;
	int r = 0;

	memset(h, 0, sizeof(*h));
	if (!o || !json_object_is_type(o, json_type_object)) {
		r = fail(err, errlen, "host record is not a JSON object");
		goto out;
	}
	if (!(v = field(o, "host", json_type_string)) || !get_name(v, h->host)) {
		r = fail(err, errlen, "host record without a host name");
		goto out;
	}
	if ((v = field(o, "version", json_type_int)))
		h->version = json_object_get_int64(v);
	if ((v = field(o, "time_us", json_type_int)))
		h->time_us = (uint64_t)json_object_get_int64(v);
	res = field(o, "resources", json_type_array);
	ts = field(o, "tenants", json_type_array);
	if (!res || !ts || json_object_array_length(res) > FS_MAX_RES) {
		r = fail(err, errlen, "host %s: bad resources or tenants", h->host);
		goto out;
	}
	h->n_res = json_object_array_length(res);
	for (size_t i = 0; i < h->n_res; i++) {
		struct json_object *e = json_object_array_get_idx(res, i);
		char name[FLEET_NAME_MAX];

		if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2 ||
		    !get_name(json_object_array_get_idx(e, 0), name) ||
		    !get_num(json_object_array_get_idx(e, 1), &h->capacity[i])) {
			r = fail(err, errlen, "host %s: bad resource %zu", h->host, i);
			goto out;
		}
		snprintf(h->res_name[i], sizeof(h->res_name[i]), "%s", name);
	}
	h->n_tenants = json_object_array_length(ts);
	h->t = calloc(h->n_tenants ? h->n_tenants : 1, sizeof(*h->t));
	if (!h->t) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < h->n_tenants; i++) {
		struct json_object *e = json_object_array_get_idx(ts, i), *d;
		struct fleet_tenant_rec *t = &h->t[i];
		size_t len =
		    json_object_is_type(e, json_type_array) ? json_object_array_length(e) : 0;
		bool ok = (len == 3 ||
			   (len == 4 && get_name(json_object_array_get_idx(e, 3), t->tmpl))) &&
			  get_name(json_object_array_get_idx(e, 0), t->name) &&
			  get_num(json_object_array_get_idx(e, 1), &t->weight) && t->weight > 0;

		d = ok ? json_object_array_get_idx(e, 2) : NULL;
		ok = ok && json_object_is_type(d, json_type_array) &&
		     json_object_array_length(d) == h->n_res;
		for (size_t k = 0; ok && k < h->n_res; k++)
			ok = get_num(json_object_array_get_idx(d, k), &t->demand[k]);
		if (!ok) {
			r = fail(err, errlen, "host %s: bad tenant %zu", h->host, i);
			goto out;
		}
	}
out:
	json_object_put(o);
	if (r < 0)
		fleet_host_free(h);
	return r;
}

char *fleet_alloc_host_to_json(const struct fleet_alloc *a, size_t k)
{
	struct fleet_alloc one = *a;

	one.n_hosts = 1;
	one.h = &a->h[k];
	return fleet_alloc_to_json(&one);
}

char *fleet_alloc_to_json(const struct fleet_alloc *a)
{
	struct json_object *o = json_object_new_object(), *hs = json_object_new_array();

	json_object_object_add(o, "revision", i64(a->revision));
	json_object_object_add(o, "time_us", i64((int64_t)a->time_us));
	json_object_object_add(o, "leader", json_object_new_string(a->leader));
	json_object_object_add(o, "iterations", json_object_new_int(a->iterations));
	for (size_t i = 0; i < a->n_hosts; i++) {
		const struct fleet_host_alloc *h = &a->h[i];
		struct json_object *e = json_object_new_array(), *gs = json_object_new_array();

		json_object_array_add(e, json_object_new_string(h->host));
		json_object_array_add(e, i64(h->version));
		for (size_t j = 0; j < h->n; j++) {
			struct json_object *g = json_object_new_array();

			json_object_array_add(g, json_object_new_string(h->g[j].tenant));
			json_object_array_add(g, num(h->g[j].grant));
			json_object_array_add(g, num(h->g[j].x));
			json_object_array_add(g, num(h->g[j].cap));
			json_object_array_add(g, num(h->g[j].weight));
			json_object_array_add(
			    g, json_object_new_string(fleet_weight_from_name(h->g[j].from)));
			json_object_array_add(gs, g);
		}
		json_object_array_add(e, gs);
		json_object_array_add(hs, e);
	}
	json_object_object_add(o, "hosts", hs);
	return to_text(o);
}

int fleet_alloc_from_json(const char *json, struct fleet_alloc *a, char *err, size_t errlen)
{
	struct json_object *o = json_tokener_parse(json), *v, *hs;
	int r = 0;

	memset(a, 0, sizeof(*a));
	if (!o || !json_object_is_type(o, json_type_object) ||
	    !(hs = field(o, "hosts", json_type_array)) ||
	    !(v = field(o, "revision", json_type_int))) {
		r = fail(err, errlen, "allocation is not a JSON object with revision and hosts");
		goto out;
	}
	a->revision = json_object_get_int64(v);
	if ((v = field(o, "time_us", json_type_int)))
		a->time_us = (uint64_t)json_object_get_int64(v);
	if ((v = field(o, "leader", json_type_string)))
		get_name(v, a->leader);
	if ((v = field(o, "iterations", json_type_int)))
		a->iterations = json_object_get_int(v);
	a->h = calloc(json_object_array_length(hs) + 1, sizeof(*a->h));
	if (!a->h) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(hs); i++) {
		struct json_object *e = json_object_array_get_idx(hs, i), *gs;
		struct fleet_host_alloc *h = &a->h[i];
		bool ok = json_object_is_type(e, json_type_array) &&
			  json_object_array_length(e) == 3 &&
			  get_name(json_object_array_get_idx(e, 0), h->host) &&
			  json_object_is_type(json_object_array_get_idx(e, 1), json_type_int);

		a->n_hosts++;
		gs = ok ? json_object_array_get_idx(e, 2) : NULL;
		ok = ok && json_object_is_type(gs, json_type_array);
		if (ok) {
			h->version = json_object_get_int64(json_object_array_get_idx(e, 1));
			h->g = calloc(json_object_array_length(gs) + 1, sizeof(*h->g));
			if (!h->g) {
				r = -ENOMEM;
				goto out;
			}
		}
		for (size_t j = 0; ok && j < json_object_array_length(gs); j++) {
			struct json_object *g = json_object_array_get_idx(gs, j);
			struct fleet_grant *fg = &h->g[j];
			size_t len = json_object_is_type(g, json_type_array)
					 ? json_object_array_length(g)
					 : 0;

			ok = (len == 4 ||
			      (len == 6 && get_num(json_object_array_get_idx(g, 4), &fg->weight) &&
			       weight_from(json_object_array_get_idx(g, 5), &fg->from))) &&
			     get_name(json_object_array_get_idx(g, 0), fg->tenant) &&
			     get_num(json_object_array_get_idx(g, 1), &fg->grant) &&
			     get_num(json_object_array_get_idx(g, 2), &fg->x) &&
			     get_num(json_object_array_get_idx(g, 3), &fg->cap) && fg->grant <= 1;
			h->n += ok;
		}
		if (!ok) {
			r = fail(err, errlen, "allocation: bad host entry %zu", i);
			goto out;
		}
	}
out:
	json_object_put(o);
	if (r < 0)
		fleet_alloc_free(a);
	return r;
}

/* --- fleet-wide weights ------------------------------------------------------------ */

void fleet_weights_free(struct fleet_weights *w)
{
	free(w->w);
	memset(w, 0, sizeof(*w));
}

static int cmp_weight(const void *a, const void *b)
{
	const struct fleet_weight *x = a, *y = b;

	if (x->is_template != y->is_template)
		return x->is_template ? 1 : -1;
	return strcmp(x->name, y->name);
}

static bool weight_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < FLEET_NAME_MAX &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:@-") ==
		   n;
}

static struct fleet_weight *weight_find(const struct fleet_weights *w, const char *name,
					bool is_template)
{
	struct fleet_weight key = {.is_template = is_template};

	if (!w || !w->n || strlen(name) >= FLEET_NAME_MAX)
		return NULL;
	snprintf(key.name, sizeof(key.name), "%s", name);
	return bsearch(&key, w->w, w->n, sizeof(*w->w), cmp_weight);
}

double fleet_weights_get(const struct fleet_weights *w, const char *name, bool is_template)
{
	const struct fleet_weight *e = weight_find(w, name, is_template);

	return e ? e->weight : 0;
}

int fleet_weights_set(struct fleet_weights *w, const char *name, bool is_template, double weight)
{
	struct fleet_weight *e = weight_find(w, name, is_template);

	if (!weight_name_ok(name) || !fs_conf_weight_ok(weight))
		return -EINVAL;
	if (!e) {
		e = realloc(w->w, (w->n + 1) * sizeof(*w->w));
		if (!e)
			return -ENOMEM;
		w->w = e;
		e = &w->w[w->n++];
		memset(e, 0, sizeof(*e));
		snprintf(e->name, sizeof(e->name), "%s", name);
		e->is_template = is_template;
	}
	e->weight = weight;
	qsort(w->w, w->n, sizeof(*w->w), cmp_weight);
	return 0;
}

char *fleet_weights_to_json(const struct fleet_weights *w)
{
	struct json_object *o = json_object_new_object(), *t = json_object_new_object(),
			   *tp = json_object_new_object();

	for (size_t i = 0; i < w->n; i++)
		json_object_object_add(w->w[i].is_template ? tp : t, w->w[i].name,
				       num(w->w[i].weight));
	json_object_object_add(o, "tenants", t);
	json_object_object_add(o, "templates", tp);
	return to_text(o);
}

int fleet_weights_from_json(const char *json, struct fleet_weights *w, char *err, size_t errlen)
{
	struct json_object *o = json_tokener_parse(json);
	const char *part[2] = {"tenants", "templates"};
	int r = 0;

	memset(w, 0, sizeof(*w));
	if (!o || !json_object_is_type(o, json_type_object)) {
		r = fail(err, errlen, "weights are not a JSON object");
		goto out;
	}
	for (int is_t = 0; is_t < 2 && r == 0; is_t++) {
		struct json_object *m = field(o, part[is_t], json_type_object);

		if (!m)
			continue;
		json_object_object_foreach(m, name, v)
		{
			double x;

			if (r < 0)
				break;
			if (!get_num(v, &x) || !weight_name_ok(name) || !fs_conf_weight_ok(x)) {
				r = fail(err, errlen, "weights: bad entry '%.64s' in %s", name,
					 part[is_t]);
				break;
			}
			r = fleet_weights_set(w, name, is_t, x);
		}
	}
out:
	json_object_put(o);
	if (r < 0)
		fleet_weights_free(w);
	return r;
}

void fleet_warm_free(struct fleet_warm *w)
{
	free(w->tenant);
	free(w->host);
	free(w->x);
	memset(w, 0, sizeof(*w));
}

/* --- the leader's solve ----------------------------------------------------------- */

struct entry {
	const char *name;
	size_t host, idx; /* hosts[host].t[idx] */
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->host < y->host ? -1 : x->host > y->host;
}

struct fleet_problem {
	size_t N, K, M;
	const char **res_names, **tenant_names, **host_names;
	double *capacity, *demand, *weight, *cap;
	bool *eligible;
	size_t *tenant_of; /* [E] entry -> problem tenant (SIZE_MAX: not in it) */
	struct entry *e;   /* [E] sorted by name */
	size_t E;
	size_t **res_map;	       /* [K][host n_res] -> union index */
	size_t *entry_of;	       /* [host offsets] (host, idx) -> entry */
	size_t *host_off;	       /* [K + 1] */
	double *ew;		       /* [E] the weight the tenant of entry e gets */
	enum fleet_weight_from *efrom; /* [E] where it came from */
};

static void problem_free(struct fleet_problem *fp)
{
	free(fp->res_names);
	free(fp->tenant_names);
	free(fp->host_names);
	free(fp->capacity);
	free(fp->demand);
	free(fp->weight);
	free(fp->cap);
	free(fp->eligible);
	free(fp->tenant_of);
	free(fp->e);
	if (fp->res_map)
		for (size_t k = 0; k < fp->K; k++)
			free(fp->res_map[k]);
	free(fp->res_map);
	free(fp->entry_of);
	free(fp->host_off);
	free(fp->ew);
	free(fp->efrom);
}

static int union_resources(const struct fleet_host_rec *hosts, struct fleet_problem *fp)
{
	size_t cap = 0;

	for (size_t k = 0; k < fp->K; k++)
		cap += hosts[k].n_res;
	fp->res_names = calloc(cap + 1, sizeof(char *));
	fp->res_map = calloc(fp->K, sizeof(size_t *));
	if (!fp->res_names || !fp->res_map)
		return -ENOMEM;
	for (size_t k = 0; k < fp->K; k++) {
		fp->res_map[k] = calloc(hosts[k].n_res + 1, sizeof(size_t));
		if (!fp->res_map[k])
			return -ENOMEM;
		for (size_t r = 0; r < hosts[k].n_res; r++) {
			size_t m = 0;

			while (m < fp->M && strcmp(fp->res_names[m], hosts[k].res_name[r]))
				m++;
			if (m == fp->M)
				fp->res_names[fp->M++] = hosts[k].res_name[r];
			fp->res_map[k][r] = m;
		}
	}
	return 0;
}

/* The weight of the tenant of entries [j, end) (one name, in host key
 * order): the fleet's by name, by template, or host_w (a host's). */
static double resolve_weight(const struct fleet_host_rec *hosts, const struct fleet_problem *fp,
			     const struct fleet_weights *weights, size_t j, size_t end,
			     double host_w, enum fleet_weight_from *from)
{
	double w = fleet_weights_get(weights, fp->e[j].name, false);

	*from = FLEET_W_TENANT;
	if (w > 0)
		return w;
	*from = FLEET_W_TEMPLATE;
	for (size_t q = j; q < end; q++) {
		const char *tmpl = hosts[fp->e[q].host].t[fp->e[q].idx].tmpl;

		if (tmpl[0] && (w = fleet_weights_get(weights, tmpl, true)) > 0)
			return w;
	}
	*from = FLEET_W_HOST;
	return host_w;
}

static int build(const struct fleet_host_rec *hosts, size_t K, const struct fleet_weights *weights,
		 struct fleet_problem *fp, char *err, size_t errlen)
{
	size_t E = 0, N = 0, M;
	double *sum, *count;

	fp->K = K;
	if (union_resources(hosts, fp) < 0)
		return -ENOMEM;
	M = fp->M;
	fp->host_off = calloc(K + 1, sizeof(size_t));
	if (!fp->host_off)
		return -ENOMEM;
	for (size_t k = 0; k < K; k++) {
		fp->host_off[k] = E;
		E += hosts[k].n_tenants;
	}
	fp->host_off[K] = E;
	fp->E = E;
	fp->e = calloc(E + 1, sizeof(*fp->e));
	fp->entry_of = calloc(E + 1, sizeof(size_t));
	fp->tenant_of = calloc(E + 1, sizeof(size_t));
	fp->ew = calloc(E + 1, sizeof(double));
	fp->efrom = calloc(E + 1, sizeof(*fp->efrom));
	if (!fp->e || !fp->entry_of || !fp->tenant_of || !fp->ew || !fp->efrom)
		return -ENOMEM;
	for (size_t k = 0, j = 0; k < K; k++)
		for (size_t i = 0; i < hosts[k].n_tenants; i++, j++)
			fp->e[j] = (struct entry){hosts[k].t[i].name, k, i};
	qsort(fp->e, E, sizeof(*fp->e), cmp_entry);

	/* Tenants with some demand somewhere, in name order. */
	fp->tenant_names = calloc(E + 1, sizeof(char *));
	fp->weight = calloc(E + 1, sizeof(double));
	sum = calloc((E + 1) * (M + 1), sizeof(double));
	count = calloc(E + 1, sizeof(double));
	if (!fp->tenant_names || !fp->weight || !sum || !count) {
		free(sum);
		free(count);
		return -ENOMEM;
	}
	for (size_t j = 0; j < E;) {
		size_t end = j;
		bool any = false;

		while (end < E && !strcmp(fp->e[end].name, fp->e[j].name))
			end++;
		for (size_t q = j; q < end; q++) {
			const struct fleet_host_rec *h = &hosts[fp->e[q].host];
			const struct fleet_tenant_rec *t = &h->t[fp->e[q].idx];
			bool has = false;

			for (size_t r = 0; r < h->n_res; r++)
				has |= t->demand[r] > 0;
			if (!has)
				continue;
			if (!any)
				fp->weight[N] = t->weight; /* the first host's, in key order */
			any = true;
			for (size_t r = 0; r < h->n_res; r++)
				sum[N * M + fp->res_map[fp->e[q].host][r]] += t->demand[r];
			count[N]++;
		}
		{
			const struct fleet_host_rec *h0 = &hosts[fp->e[j].host];
			enum fleet_weight_from from;
			double w =
			    resolve_weight(hosts, fp, weights, j, end,
					   any ? fp->weight[N] : h0->t[fp->e[j].idx].weight, &from);

			if (any)
				fp->weight[N] = w;
			for (size_t q = j; q < end; q++) {
				fp->tenant_of[q] = any ? N : SIZE_MAX;
				fp->entry_of[fp->host_off[fp->e[q].host] + fp->e[q].idx] = q;
				fp->ew[q] = w;
				fp->efrom[q] = from;
			}
		}
		if (any)
			fp->tenant_names[N++] = fp->e[j].name;
		j = end;
	}
	fp->N = N;
	if (N == 0) {
		free(sum);
		free(count);
		snprintf(err, errlen, "no tenant has demand on any of %zu hosts", K);
		return -EINVAL;
	}
	fp->demand = calloc(N * M, sizeof(double));
	fp->capacity = calloc(K * M, sizeof(double));
	fp->cap = calloc(N * K, sizeof(double));
	fp->eligible = calloc(N * K, sizeof(bool));
	fp->host_names = calloc(K, sizeof(char *));
	if (!fp->demand || !fp->capacity || !fp->cap || !fp->eligible || !fp->host_names) {
		free(sum);
		free(count);
		return -ENOMEM;
	}
	for (size_t n = 0; n < N; n++)
		for (size_t m = 0; m < M; m++)
			fp->demand[n * M + m] = sum[n * M + m] / count[n];
	free(sum);
	free(count);
	for (size_t k = 0; k < K; k++) {
		fp->host_names[k] = hosts[k].host;
		for (size_t r = 0; r < hosts[k].n_res; r++)
			fp->capacity[k * M + fp->res_map[k][r]] = hosts[k].capacity[r];
	}
	/* D_{n,i}: the fewest units of d_n that cover the local demand. */
	for (size_t q = 0; q < E; q++) {
		size_t n = fp->tenant_of[q], k = fp->e[q].host;
		const struct fleet_host_rec *h = &hosts[k];
		const struct fleet_tenant_rec *t = &h->t[fp->e[q].idx];
		double D = 0;

		if (n == SIZE_MAX)
			continue;
		for (size_t r = 0; r < h->n_res; r++) {
			double d = fp->demand[n * M + fp->res_map[k][r]];

			if (d > 0)
				D = fmax(D, t->demand[r] / d);
		}
		fp->cap[n * K + k] = D;
		fp->eligible[n * K + k] = true;
	}
	return 0;
}

static void dump_scenario(const struct fleet_problem *fp, const double *x, FILE *f)
{
	const size_t N = fp->N, K = fp->K, M = fp->M;

	fprintf(f, "# fleet dump: the snapshot the leader solved and its answer (docs/fleet.md)\n"
		   "[scenario]\nresources = ");
	for (size_t m = 0; m < M; m++)
		fprintf(f, "%s%s", m ? ", " : "", fp->res_names[m]);
	fprintf(f, "\n");
	for (size_t k = 0; k < K; k++) {
		fprintf(f, "\n[pool.%s]\ncapacity = ", fp->host_names[k]);
		for (size_t m = 0; m < M; m++)
			fprintf(f, "%s%.17g", m ? ", " : "", fp->capacity[k * M + m]);
		fprintf(f, "\n");
	}
	for (size_t n = 0; n < N; n++) {
		fprintf(f, "\n[tenant.%s]\nweight = %.17g\ndemand = ", fp->tenant_names[n],
			fp->weight[n]);
		for (size_t m = 0; m < M; m++)
			fprintf(f, "%s%.17g", m ? ", " : "", fp->demand[n * M + m]);
		fprintf(f, "\n");
	}
	for (size_t k = 0; k < K; k++) {
		fprintf(f, "\n[caps.%s]\n", fp->host_names[k]);
		for (size_t n = 0; n < N; n++)
			if (fp->eligible[n * K + k])
				fprintf(f, "%s = %.17g, %.17g\n", fp->tenant_names[n],
					fp->cap[n * K + k], x[n * K + k]);
	}
}

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, elem);
}

/* The warm start mapped onto fp's tenants and hosts by name; NULL when it
 * has no answers. */
static double *warm_x(const struct fleet_warm *w, const struct fleet_problem *fp)
{
	size_t *host_map;
	double *x;

	if (!w || !w->N || !w->K)
		return NULL;
	x = calloc(fp->N * fp->K, sizeof(double));
	host_map = malloc(fp->K * sizeof(size_t));
	if (!x || !host_map) {
		free(x);
		free(host_map);
		return NULL;
	}
	for (size_t k = 0; k < fp->K; k++) {
		host_map[k] = SIZE_MAX;
		for (size_t o = 0; o < w->K && host_map[k] == SIZE_MAX; o++)
			if (!strcmp(w->host[(k + o) % w->K], fp->host_names[k]))
				host_map[k] = (k + o) % w->K;
	}
	for (size_t n = 0; n < fp->N; n++) {
		const char(*old)[FLEET_NAME_MAX] =
		    bsearch(fp->tenant_names[n], w->tenant, w->N, sizeof(*w->tenant), cmp_name);

		if (!old)
			continue;
		for (size_t k = 0; k < fp->K; k++)
			if (host_map[k] != SIZE_MAX)
				x[n * fp->K + k] =
				    w->x[(size_t)(old - w->tenant) * w->K + host_map[k]];
	}
	free(host_map);
	return x;
}

/* Keeps this answer for the next solve. */
static void warm_keep(struct fleet_warm *w, const struct fleet_problem *fp, const double *x)
{
	struct fleet_warm n = {.N = fp->N, .K = fp->K, .used = w->used};

	n.tenant = calloc(fp->N, sizeof(*n.tenant));
	n.host = calloc(fp->K, sizeof(*n.host));
	n.x = malloc(fp->N * fp->K * sizeof(double));
	if (!n.tenant || !n.host || !n.x) {
		fleet_warm_free(&n);
		fleet_warm_free(w); /* cold next time */
		return;
	}
	for (size_t i = 0; i < fp->N; i++)
		snprintf(n.tenant[i], sizeof(n.tenant[i]), "%s", fp->tenant_names[i]);
	for (size_t k = 0; k < fp->K; k++)
		snprintf(n.host[k], sizeof(n.host[k]), "%s", fp->host_names[k]);
	memcpy(n.x, x, fp->N * fp->K * sizeof(double));
	fleet_warm_free(w);
	*w = n;
}

int fleet_solve(const struct fleet_host_rec *hosts, size_t K, const struct fleet_weights *weights,
		struct fleet_warm *warm, struct fleet_alloc *out, FILE *dump, char *err,
		size_t errlen)
{
	double *x0 = NULL;
	struct fleet_problem fp = {0};
	struct fs_solution sol = {0};
	struct fs_error ferr = {{0}};
	struct fs_problem p;
	int r;

	memset(out, 0, sizeof(*out));
	if (K == 0) {
		snprintf(err, errlen, "no hosts in the snapshot");
		return -EINVAL;
	}
	r = build(hosts, K, weights, &fp, err, errlen);
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory building the fleet problem");
	if (r < 0)
		goto out;
	p = (struct fs_problem){
	    .n_tenants = fp.N,
	    .n_pools = K,
	    .n_resources = fp.M,
	    .capacity = fp.capacity,
	    .demand = fp.demand,
	    .weight = fp.weight,
	    .eligible = fp.eligible,
	    .tenant_names = fp.tenant_names,
	    .pool_names = fp.host_names,
	    .resource_names = fp.res_names,
	};
	x0 = warm_x(warm, &fp);
	r = fs_solve_psdsf_caps_from(&p, fp.cap, NULL, x0, &sol, &ferr);
	if (warm)
		warm->used = x0 != NULL;
	if (r < 0) {
		snprintf(err, errlen, "capped PS-DSF: %s", ferr.msg);
		goto out;
	}
	out->iterations = sol.iterations;
	out->h = calloc(K, sizeof(*out->h));
	if (!out->h) {
		r = -ENOMEM;
		goto out;
	}
	out->n_hosts = K;
	for (size_t k = 0; k < K; k++) {
		struct fleet_host_alloc *h = &out->h[k];

		snprintf(h->host, sizeof(h->host), "%s", hosts[k].host);
		h->version = hosts[k].version;
		h->g = calloc(hosts[k].n_tenants + 1, sizeof(*h->g));
		if (!h->g) {
			r = -ENOMEM;
			goto out;
		}
		h->n = hosts[k].n_tenants;
		for (size_t i = 0; i < h->n; i++) {
			size_t q = fp.entry_of[fp.host_off[k] + i], n = fp.tenant_of[q];
			struct fleet_grant *g = &h->g[i];

			snprintf(g->tenant, sizeof(g->tenant), "%s", hosts[k].t[i].name);
			g->weight = fp.ew[q];
			g->from = fp.efrom[q];
			g->grant = 1; /* no demand anywhere, or none here: nothing to share */
			if (n == SIZE_MAX)
				continue;
			g->x = sol.x[n * K + k];
			g->cap = fp.cap[n * K + k];
			if (g->cap > 0)
				g->grant = fmin(1, fmax(0, g->x / g->cap));
		}
	}
	if (dump)
		dump_scenario(&fp, sol.x, dump);
	if (warm)
		warm_keep(warm, &fp, sol.x);
out:
	free(x0);
	if (r < 0)
		fleet_alloc_free(out);
	fs_solution_free(&sol);
	problem_free(&fp);
	return r;
}

const char *fleet_verdict_text(enum fleet_verdict v)
{
	switch (v) {
	case FLEET_APPLY:
		return "applied";
	case FLEET_TOO_OLD:
		return "allocation older than max_age";
	case FLEET_NOT_LISTED:
		return "this host is not in the allocation";
	case FLEET_OLD_DEMANDS:
		return "allocation solved without this host's latest demands";
	case FLEET_OTHER_TENANTS:
		return "allocation solved for a different tenant set";
	}
	return "?";
}

enum fleet_verdict fleet_check(const struct fleet_alloc *a, const struct fleet_host_rec *me,
			       uint64_t now_real_us, uint64_t max_age_us,
			       const struct fleet_host_alloc **mine)
{
	const struct fleet_host_alloc *h = NULL;

	*mine = NULL;
	/* A clock step backwards makes it look young; a future stamp counts as
	 * now (hosts' clocks are assumed synchronised to well under max_age). */
	if (now_real_us > a->time_us && now_real_us - a->time_us > max_age_us)
		return FLEET_TOO_OLD;
	for (size_t i = 0; i < a->n_hosts && !h; i++)
		if (!strcmp(a->h[i].host, me->host))
			h = &a->h[i];
	if (!h)
		return FLEET_NOT_LISTED;
	if (h->version != me->version)
		return FLEET_OLD_DEMANDS;
	if (h->n != me->n_tenants)
		return FLEET_OTHER_TENANTS;
	for (size_t i = 0; i < h->n; i++)
		if (strcmp(h->g[i].tenant, me->t[i].name))
			return FLEET_OTHER_TENANTS;
	*mine = h;
	return FLEET_APPLY;
}
