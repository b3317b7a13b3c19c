/* SPDX-License-Identifier: MIT */
/* Reading the control socket's status answer (see control_json.h). */
#include "control_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct json_object *member(struct json_object *o, const char *key, json_type type)
{
	struct json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	if (type == json_type_double && json_object_is_type(v, json_type_int))
		return v;
	return json_object_is_type(v, type) ? v : NULL;
}

static void str(struct json_object *o, const char *key, char *buf, size_t len)
{
	struct json_object *v = member(o, key, json_type_string);

	snprintf(buf, len, "%s", v ? json_object_get_string(v) : "");
}

/* null (not finite) reads as INFINITY, a missing member as NAN */
static double num(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NAN;
	if (!v)
		return INFINITY;
	if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
		return json_object_get_double(v);
	return NAN;
}

/* A whole number; 0 when missing, null or out of range (a NAN or huge
 * double converted to long long is undefined). */
static long long whole(struct json_object *o, const char *key)
{
	double v = num(o, key);

	return v > (double)LLONG_MIN && v < (double)LLONG_MAX ? (long long)v : 0;
}

static bool flag(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key, json_type_boolean);

	return v && json_object_get_boolean(v);
}

/* A counter; 0 when missing (an older daemon). */
static uint64_t count(struct json_object *o, const char *key)
{
	struct json_object *v = member(o, key, json_type_int);

	return v ? (uint64_t)json_object_get_uint64(v) : 0;
}

static void vector(const struct fcj_status *s, struct json_object *o, const char *key, double *out)
{
	struct json_object *v = member(o, key, json_type_object);

	for (size_t r = 0; r < s->n_res; r++)
		out[r] = num(v, s->res[r].name);
}

static void join(struct json_object *arr, char *buf, size_t len, const char *sep)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		int w;

		if (!json_object_is_type(e, json_type_string))
			continue;
		w = snprintf(buf + used, len - used, "%s%s", used ? sep : "",
			     json_object_get_string(e));
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}

static void tenant(const struct fcj_status *s, struct json_object *o, struct fcj_tenant *t)
{
	struct json_object *lim = member(o, "limits", json_type_object);

	str(o, "name", t->name, sizeof(t->name));
	str(o, "cgroup", t->cgroup, sizeof(t->cgroup));
	str(o, "mode", t->mode, sizeof(t->mode));
	str(o, "gap_resource", t->gap_resource, sizeof(t->gap_resource));
	str(o, "estimate", t->estimate, sizeof(t->estimate));
	join(member(o, "bottlenecks", json_type_array), t->bottlenecks, sizeof(t->bottlenecks),
	     ",");
	t->present = flag(o, "present");
	t->promoted = flag(o, "promoted");
	t->weight = num(o, "weight");
	t->fleet_weight = num(o, "fleet_weight");
	str(o, "fleet_weight_from", t->fleet_weight_from, sizeof(t->fleet_weight_from));
	t->entitlement = num(o, "entitlement");
	t->granted = num(o, "granted");
	t->share = num(o, "share");
	t->gap = num(o, "gap");
	vector(s, o, "demand", t->demand);
	vector(s, o, "allocation", t->alloc);
	vector(s, o, "usage", t->usage);
	vector(s, o, "limit", t->limit);
	t->written = flag(lim, "written");
	str(lim, "cpu.max", t->cpu_max, sizeof(t->cpu_max));
	str(lim, "memory.high", t->mem_high, sizeof(t->mem_high));
	str(lim, "memory.max", t->mem_max, sizeof(t->mem_max));
	t->cpu_weight = whole(lim, "cpu.weight");
	t->io_weight = whole(lim, "io.weight");
	join(member(lim, "io.max", json_type_array), t->io_max, sizeof(t->io_max), "; ");
	t->drift_corrected = count(o, "drift_corrected");
	str(o, "template", t->template_name, sizeof(t->template_name));
	str(o, "login", t->login, sizeof(t->login));
	str(o, "backend", t->backend, sizeof(t->backend));
	str(o, "backend_reason", t->backend_reason, sizeof(t->backend_reason));
}

int fcj_status_parse(struct json_object *o, struct fcj_status *s, char *err, size_t errlen)
{
	struct json_object *rs = member(o, "resources", json_type_array);
	struct json_object *ts = member(o, "tenants", json_type_array);

	memset(s, 0, sizeof(*s));
	if (!rs || !ts || !member(o, "period", json_type_int)) {
		snprintf(err, errlen, "status answer without period, resources or tenants");
		return -EPROTO;
	}
	s->period = (uint64_t)json_object_get_uint64(member(o, "period", json_type_int));
	s->interval = num(o, "interval_seconds");
	str(o, "policy", s->policy, sizeof(s->policy));
	str(o, "mode", s->mode, sizeof(s->mode));
	str(o, "mode_reason", s->mode_reason, sizeof(s->mode_reason));
	s->dry_run = flag(o, "dry_run");
	s->released = flag(o, "released");
	s->drift_corrected = count(o, "drift_corrected_total");
	s->n_res = json_object_array_length(rs);
	if (s->n_res > FS_MAX_RES) {
		snprintf(err, errlen, "%zu resources (at most %d)", s->n_res, FS_MAX_RES);
		s->n_res = 0;
		return -EPROTO;
	}
	for (size_t r = 0; r < s->n_res; r++) {
		struct json_object *e = json_object_array_get_idx(rs, r);
		struct fcj_resource *res = &s->res[r];

		str(e, "name", res->name, sizeof(res->name));
		str(e, "kind", res->kind, sizeof(res->kind));
		res->capacity = num(e, "capacity");
		res->allocated = num(e, "allocated");
		res->used = num(e, "used");
		res->saturated = flag(e, "saturated");
		str(e, "state", res->state, sizeof(res->state));
		if (!strcmp(res->state, "none"))
			res->state[0] = '\0';
		if (!res->name[0]) {
			snprintf(err, errlen, "resource %zu has no name", r);
			return -EPROTO;
		}
	}
	s->n_tenants = json_object_array_length(ts);
	s->t = calloc(s->n_tenants ? s->n_tenants : 1, sizeof(*s->t));
	if (!s->t) {
		s->n_tenants = 0;
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n_tenants; i++)
		tenant(s, json_object_array_get_idx(ts, i), &s->t[i]);
	return 0;
}

void fcj_status_free(struct fcj_status *s)
{
	free(s->t);
	s->t = NULL;
	s->n_tenants = 0;
}

int fcj_find_kind(const struct fcj_status *s, const char *kind)
{
	for (size_t r = 0; r < s->n_res; r++)
		if (!strcmp(s->res[r].kind, kind))
			return (int)r;
	return -1;
}

/* Binary prefixes for memory (what free(1) and cgroup files mean), decimal
 * for rates (what disks and links are sold in). */
static void scaled(double v, double base, const char *const *units, size_t n, const char *suffix,
		   char *buf, size_t len)
{
	size_t u = 0;

	while (fabs(v) >= base && u + 1 < n) {
		v /= base;
		u++;
	}
	snprintf(buf, len, fabs(v) < 10 && u ? "%.2f%s%s" : "%.1f%s%s", v, units[u], suffix);
}

/* How fcj_fmt_amount and fcj_fmt_short write each kind of amount. */
struct amount_style {
	const char *cores, *ops;	     /* printf formats for cpu and iops */
	const char *const *bin, *const *dec; /* 5 units each: memory, rates */
	const char *per_second;		     /* after a byte rate */
};

static void fmt_amount(const struct amount_style *st, const char *kind, double v, char *buf,
		       size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, "max");
	else if (!strcmp(kind, "cpu"))
		snprintf(buf, len, st->cores, v);
	else if (!strcmp(kind, "memory"))
		scaled(v, 1024, st->bin, 5, "", buf, len);
	else if (!strcmp(kind, "io-riops") || !strcmp(kind, "io-wiops") || !strcmp(kind, "io-iops"))
		snprintf(buf, len, st->ops, v);
	else
		scaled(v, 1000, st->dec, 5, st->per_second, buf, len);
}

void fcj_fmt_amount(const char *kind, double v, char *buf, size_t len)
{
	static const char *const bin[] = {" B", " KiB", " MiB", " GiB", " TiB"};
	static const char *const dec[] = {" B", " kB", " MB", " GB", " TB"};
	static const struct amount_style st = {"%.2f cores", "%.0f op/s", bin, dec, "/s"};

	fmt_amount(&st, kind, v, buf, len);
}

void fcj_fmt_short(const char *kind, double v, char *buf, size_t len)
{
	static const char *const bin[] = {"", "K", "M", "G", "T"};
	static const char *const dec[] = {"", "k", "M", "G", "T"};
	static const struct amount_style st = {"%.2f", "%.0f", bin, dec, ""};

	fmt_amount(&st, kind, v, buf, len);
}
