/* SPDX-License-Identifier: MIT */
/* The published state as JSON: status and tenants (see control_status.h). */
#include "control_status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

struct json_object *fsd_json_num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL; /* NULL is JSON null */
}

static void add(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

static struct json_object *per_resource(const struct fsd_published *p, const double *v)
{
	struct json_object *o = json_object_new_object();

	for (size_t r = 0; o && r < p->pcfg.res.n; r++)
		add(o, p->pcfg.res.name[r], fsd_json_num(v[r]));
	return o;
}

static struct json_object *limits(const struct fsd_published *p, size_t i)
{
	const struct plan_tenant *t = &p->t[i].plan;
	struct json_object *o = json_object_new_object(), *io = json_object_new_array();
	char buf[PLAN_IO_LINE_MAX];
	int last_disk = -1;

	if (!o || !io) {
		json_object_put(o);
		json_object_put(io);
		return NULL;
	}
	add(o, "written", json_object_new_boolean(t->write && !p->dry_run && !p->released));
	plan_fmt_cpu_max(t, buf, sizeof(buf));
	add(o, "cpu.max", json_object_new_string(buf));
	add(o, "cpu.weight", json_object_new_int64((int64_t)t->cpu_weight));
	add(o, "io.weight", json_object_new_int64((int64_t)t->io_weight));
	fs_fmt_value(t->mem_high, buf, sizeof(buf));
	add(o, "memory.high", json_object_new_string(buf));
	fs_fmt_value(t->mem_max, buf, sizeof(buf));
	add(o, "memory.max", json_object_new_string(buf));
	fs_fmt_value(t->mem_low, buf, sizeof(buf));
	add(o, "memory.low", json_object_new_string(buf));
	for (size_t r = 0; r < p->pcfg.res.n; r++) {
		int disk = p->pcfg.res.disk[r];

		if (disk < 0 || disk == last_disk)
			continue;
		last_disk = disk;
		if (plan_fmt_io_max(&p->pcfg, t, disk, buf, sizeof(buf)))
			json_object_array_add(io, json_object_new_string(buf));
	}
	add(o, "io.max", io);
	return o;
}

struct json_object *fsd_json_tenant(const struct fsd_published *p, size_t i)
{
	const struct fsd_tenant_pub *tp = &p->t[i];
	const struct plan_tenant *t = &tp->plan;
	const struct fs_resources *res = &p->pcfg.res;
	struct json_object *o = json_object_new_object(), *bn = json_object_new_array();
	char why[96];

	if (!o || !bn) {
		json_object_put(o);
		json_object_put(bn);
		return NULL;
	}
	add(o, "name", json_object_new_string(tp->name));
	add(o, "cgroup", json_object_new_string(tp->cgroup));
	add(o, "template", tp->template_name[0] ? json_object_new_string(tp->template_name) : NULL);
	add(o, "login", tp->login[0] ? json_object_new_string(tp->login) : NULL);
	add(o, "present", json_object_new_boolean(tp->present));
	add(o, "in_problem", json_object_new_boolean(t->in_problem));
	add(o, "weight", fsd_json_num(tp->weight));
	if (tp->fleet_weight > 0) {
		add(o, "fleet_weight", fsd_json_num(tp->fleet_weight));
		add(o, "fleet_weight_from", json_object_new_string(tp->fleet_weight_from));
	}
	add(o, "entitlement", fsd_json_num(fsd_entitlement(p, i)));
	add(o, "granted", fsd_json_num(t->x));
	add(o, "share", fsd_json_num(t->share));
	add(o, "mode", json_object_new_string(fsd_tenant_mode(p, i)));
	add(o, "bottleneck",
	    t->in_problem && t->bottleneck >= 0 && (size_t)t->bottleneck < res->n
		? json_object_new_string(res->name[t->bottleneck])
		: NULL);
	for (size_t r = 0; r < res->n; r++)
		if (fsd_is_bottleneck(p, i, r))
			json_object_array_add(bn, json_object_new_string(res->name[r]));
	add(o, "bottlenecks", bn);
	add(o, "gap", fsd_json_num(t->gap));
	add(o, "gap_resource",
	    t->gap_resource >= 0 && (size_t)t->gap_resource < res->n
		? json_object_new_string(res->name[t->gap_resource])
		: NULL);
	add(o, "promoted", json_object_new_boolean(t->promoted));
	add(o, "drift_corrected", json_object_new_uint64(tp->drift_total));
	add(o, "backend", json_object_new_string(fs_backend_name(tp->backend.backend)));
	add(o, "backend_reason", json_object_new_string(tp->backend.reason));
	add(o, "estimate",
	    json_object_new_string(est_reason_str(tp->est.reasons, why, sizeof(why))));
	add(o, "probe", fsd_json_num(est_probe(&tp->est)));
	add(o, "demand", per_resource(p, tp->est.demand));
	add(o, "allocation", per_resource(p, t->alloc));
	add(o, "usage", per_resource(p, tp->usage));
	add(o, "limit", per_resource(p, t->limit));
	add(o, "limits", limits(p, i));
	return o;
}

static struct json_object *resource(const struct fsd_published *p, size_t r)
{
	const struct fs_resources *res = &p->pcfg.res;
	struct json_object *o = json_object_new_object();
	double alloc = 0, used = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < p->n_tenants; i++) {
		if (p->t[i].plan.in_problem)
			alloc += p->t[i].plan.alloc[r];
		if (p->t[i].present)
			used += p->t[i].usage[r];
	}
	add(o, "name", json_object_new_string(res->name[r]));
	add(o, "kind", json_object_new_string(fs_res_kind_name(res->kind[r])));
	add(o, "unit", json_object_new_string(fs_res_unit(res->kind[r])));
	add(o, "capacity", fsd_json_num(res->capacity[r]));
	add(o, "saturated", json_object_new_boolean(p->saturated[r]));
	add(o, "state", json_object_new_string(fsd_resource_state(p, r) ?: "none"));
	add(o, "allocated", fsd_json_num(alloc));
	add(o, "used", fsd_json_num(used));
	add(o, "allocated_ratio", fsd_json_num(alloc / res->capacity[r]));
	add(o, "utilization", fsd_json_num(used / res->capacity[r]));
	return o;
}

/* Fleet mode's state (docs/fleet.md): the age is of the allocation last read. */
static struct json_object *fleet(const struct fsd_fleet_pub *f)
{
	struct json_object *o = json_object_new_object();
	double age =
	    f->alloc_time_us ? ((double)f->now_real_us - (double)f->alloc_time_us) / 1e6 : NAN;

	add(o, "mode", json_object_new_string(f->mode));
	add(o, "reason", json_object_new_string(f->reason));
	add(o, "host", json_object_new_string(f->host));
	add(o, "leader", json_object_new_string(f->leader));
	add(o, "is_leader", json_object_new_boolean(f->is_leader));
	add(o, "etcd_ok", json_object_new_boolean(f->etcd_ok));
	add(o, "version", json_object_new_int64(f->version));
	add(o, "alloc_revision", json_object_new_int64(f->alloc_revision));
	add(o, "applied_revision", json_object_new_int64(f->applied_revision));
	add(o, "alloc_age_seconds", fsd_json_num(age));
	add(o, "fallback_after_periods", json_object_new_uint64(f->fallback_periods));
	add(o, "applied_age_seconds", fsd_json_num((double)f->applied_age_us / 1e6));
	add(o, "solved_hosts", json_object_new_uint64(f->solved_hosts));
	add(o, "solve_ms", fsd_json_num((double)f->solve_ns / 1e6));
	add(o, "solve_iterations", json_object_new_int(f->solve_iterations));
	add(o, "solve_warm", json_object_new_boolean(f->solve_warm));
	add(o, "fleet_weights", json_object_new_uint64(f->fleet_weights));
	add(o, "weights_note", json_object_new_string(f->weights_note));
	add(o, "periods_local", json_object_new_uint64(f->periods[0]));
	add(o, "periods_fleet", json_object_new_uint64(f->periods[1]));
	add(o, "periods_hold", json_object_new_uint64(f->periods[2]));
	add(o, "etcd_requests", json_object_new_uint64(f->etcd_requests));
	add(o, "etcd_bytes_sent", json_object_new_uint64(f->etcd_bytes));
	add(o, "etcd_bytes_received", json_object_new_uint64(f->etcd_bytes_received));
	return o;
}

int fsd_json_status(const struct fsd_published *p, struct json_object *o)
{
	struct json_object *rs = json_object_new_array(), *ts = json_object_new_array();

	if (!rs || !ts) {
		json_object_put(rs);
		json_object_put(ts);
		return -ENOMEM;
	}
	add(o, "period", json_object_new_uint64(p->period));
	add(o, "time_us", json_object_new_uint64(p->time_us));
	add(o, "policy", json_object_new_string(p->policy ? p->policy : "?"));
	add(o, "interval_seconds", fsd_json_num((double)p->interval_us / 1e6));
	add(o, "mode", json_object_new_string(plan_mode_name(p->mode)));
	add(o, "mode_reason", json_object_new_string(p->mode_reason));
	add(o, "dry_run", json_object_new_boolean(p->dry_run));
	add(o, "released", json_object_new_boolean(p->released));
	if (p->fleet.enabled)
		add(o, "fleet", fleet(&p->fleet));
	add(o, "files_written", json_object_new_uint64(p->written));
	add(o, "files_failed", json_object_new_uint64(p->failed));
	add(o, "files_drifted", json_object_new_uint64(p->drifted));
	add(o, "drift_corrected_total", json_object_new_uint64(p->drift_total));
	for (size_t r = 0; r < p->pcfg.res.n; r++)
		json_object_array_add(rs, resource(p, r));
	add(o, "resources", rs);
	for (size_t i = 0; i < p->n_tenants; i++)
		json_object_array_add(ts, fsd_json_tenant(p, i));
	add(o, "tenants", ts);
	return 0;
}
