/* SPDX-License-Identifier: MIT */
/* fairshared's fleet hook (daemon_fleet.h). */
#include "daemon_fleet.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

#ifdef FSD_HAVE_FLEET
#include "fleet.h"

struct fsd_fleet {
	struct fleet *f;
	struct fleet_host_rec me;
	double *grant;
	size_t cap;
	enum fleet_mode logged; /* the mode last logged: changes are logged once */
	char host[FLEET_NAME_MAX];
};

int fsd_fleet_open(struct fsd_fleet **out, const struct fs_conf *conf)
{
	struct fsd_fleet *ff;
	char err[ETCD_ERR_MAX];
	int r;

	*out = NULL;
	if (!conf->fleet.enabled)
		return 0;
	ff = calloc(1, sizeof(*ff));
	if (!ff)
		return -ENOMEM;
	r = fleet_open(&ff->f, &conf->fleet, conf->agent.state_dir, err, sizeof(err));
	if (r < 0) {
		fsd_err("fleet: %s", err);
		free(ff);
		return r;
	}
	ff->logged = FLEET_MODE_LOCAL;
	snprintf(ff->host, sizeof(ff->host), "%s", conf->fleet.host);
	fsd_info("fleet: host %s, etcd %s, prefix %s, lease %llus, max age %llu ms",
		 conf->fleet.host, conf->fleet.endpoints, conf->fleet.prefix,
		 (unsigned long long)conf->fleet.lease_ttl_s,
		 (unsigned long long)(conf->fleet.max_age_us / 1000));
	*out = ff;
	return 0;
}

void fsd_fleet_close(struct fsd_fleet *ff)
{
	if (!ff)
		return;
	fleet_close(ff->f);
	free(ff->me.t);
	free(ff->grant);
	free(ff);
}

static uint64_t realtime_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

bool fsd_fleet_weight(const struct fsd_fleet *ff, const char *tenant, double *weight,
		      const char **from)
{
	const struct fleet_grant *g = ff ? fleet_applied_grant(ff->f, tenant) : NULL;

	if (!g || !(g->weight > 0))
		return false;
	*weight = g->weight;
	*from = fleet_weight_from_name(g->from);
	return true;
}

enum fsd_fleet_outcome fsd_fleet_step(struct fsd_fleet *ff, const struct fs_resources *res,
				      size_t n, const struct plan_tenant_in *pin,
				      const struct fsd_tenant_pub *tpub, uint64_t now_us,
				      double *given_x)
{
	struct fleet_host_rec *me = &ff->me;
	size_t *index = NULL, m = 0;
	enum fleet_mode mode;

	if (n > ff->cap) {
		struct fleet_tenant_rec *t = realloc(me->t, n * sizeof(*t));
		double *g = t ? realloc(ff->grant, n * sizeof(*g)) : NULL;

		if (t)
			me->t = t;
		if (g)
			ff->grant = g;
		if (!t || !g) {
			fsd_err("fleet: out of memory for %zu tenants: local policy", n);
			return FSD_FLEET_LOCAL;
		}
		ff->cap = n;
	}
	index = calloc(n + 1, sizeof(*index));
	if (!index)
		return FSD_FLEET_LOCAL;
	me->n_res = res->n;
	for (size_t r = 0; r < res->n; r++) {
		snprintf(me->res_name[r], sizeof(me->res_name[r]), "%s", res->name[r]);
		me->capacity[r] = res->capacity[r];
	}
	/* The tenants whose cgroup exists: the fleet's eligibility. */
	for (size_t i = 0; i < n; i++) {
		if (!pin[i].present)
			continue;
		snprintf(me->t[m].name, sizeof(me->t[m].name), "%s", pin[i].name);
		me->t[m].weight = pin[i].weight;
		snprintf(me->t[m].tmpl, sizeof(me->t[m].tmpl), "%s", tpub[i].template_name);
		for (size_t r = 0; r < res->n; r++)
			me->t[m].demand[r] = pin[i].demand[r] > 0 ? pin[i].demand[r] : 0;
		index[m++] = i;
	}
	me->n_tenants = m;
	mode = fleet_period(ff->f, me, now_us, realtime_us(), ff->grant);
	if (mode != ff->logged) {
		const struct fleet_status *st = fleet_status(ff->f);

		if (mode == FLEET_MODE_LOCAL)
			fsd_warn("fleet: local policy: %s", st->reason);
		else
			fsd_info("fleet: %s: %s", fleet_mode_name(mode), st->reason);
		ff->logged = mode;
	}
	if (mode == FLEET_MODE_FLEET) {
		for (size_t i = 0; i < n; i++)
			given_x[i] = 1; /* absent tenants: nothing is written for them */
		for (size_t j = 0; j < m; j++)
			given_x[index[j]] = ff->grant[j];
	}
	free(index);
	return mode == FLEET_MODE_FLEET	 ? FSD_FLEET_APPLY
	       : mode == FLEET_MODE_HOLD ? FSD_FLEET_HOLD
					 : FSD_FLEET_LOCAL;
}

void fsd_fleet_publish(const struct fsd_fleet *ff, struct fsd_fleet_pub *pub)
{
	const struct fleet_status *st;

	memset(pub, 0, sizeof(*pub));
	if (!ff)
		return;
	st = fleet_status(ff->f);
	pub->enabled = true;
	snprintf(pub->mode, sizeof(pub->mode), "%s", fleet_mode_name(st->mode));
	snprintf(pub->reason, sizeof(pub->reason), "%s", st->reason);
	snprintf(pub->host, sizeof(pub->host), "%s", ff->host);
	snprintf(pub->leader, sizeof(pub->leader), "%s", st->leader);
	pub->is_leader = st->is_leader;
	pub->etcd_ok = st->etcd_ok;
	pub->version = st->version;
	pub->alloc_revision = st->alloc_revision;
	pub->applied_revision = st->applied_revision;
	pub->applied_age_us = st->applied_age_us;
	pub->fallback_periods = st->fallback_periods;
	pub->alloc_time_us = st->alloc_time_us;
	pub->now_real_us = realtime_us();
	pub->solved_hosts = st->solved_hosts;
	pub->solve_ns = st->solve_ns;
	pub->solve_iterations = st->solve_iterations;
	pub->solve_warm = st->solve_warm;
	pub->fleet_weights = st->fleet_weights;
	snprintf(pub->weights_note, sizeof(pub->weights_note), "%s", st->weights_note);
	memcpy(pub->periods, st->periods, sizeof(pub->periods));
	pub->etcd_requests = st->etcd_requests;
	pub->etcd_bytes = st->etcd_bytes;
	pub->etcd_bytes_received = st->etcd_bytes_received;
}

#else /* !FSD_HAVE_FLEET */

int fsd_fleet_open(struct fsd_fleet **out, const struct fs_conf *conf)
{
	*out = NULL;
	if (!conf->fleet.enabled)
		return 0;
	fsd_err("%s:%d: [fleet]: this fairshared was built without fleet mode (libcurl)",
		conf->path, conf->fleet.line);
	return -ENOTSUP;
}

void fsd_fleet_close(struct fsd_fleet *ff)
{
	(void)ff;
}

enum fsd_fleet_outcome fsd_fleet_step(struct fsd_fleet *ff, const struct fs_resources *res,
				      size_t n, const struct plan_tenant_in *pin,
				      const struct fsd_tenant_pub *tpub, uint64_t now_us,
				      double *given_x)
{
	(void)ff, (void)res, (void)n, (void)pin, (void)tpub, (void)now_us, (void)given_x;
	return FSD_FLEET_LOCAL;
}

bool fsd_fleet_weight(const struct fsd_fleet *ff, const char *tenant, double *weight,
		      const char **from)
{
	(void)ff, (void)tenant, (void)weight, (void)from;
	return false;
}

void fsd_fleet_publish(const struct fsd_fleet *ff, struct fsd_fleet_pub *pub)
{
	(void)ff;
	memset(pub, 0, sizeof(*pub));
}

#endif
