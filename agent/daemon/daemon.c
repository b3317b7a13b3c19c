/* SPDX-License-Identifier: MIT */
/* The fairshared daemon: its state and one control period (see daemon.h). */
#include "daemon.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "adapt.h"
#include "check.h"
#include "daemon_fleet.h"
#include "cgroupfs.h"
#include "host_mem.h"
#include "io_weight.h"
#include "list_match.h"
#include "log.h"
#include "metrics.h"
#include "readfile.h"
#include "sample.h"
#include "sample_bpf.h"
#include "sample_disk.h"
#include "template_watch.h"
#include "unit_bus.h"
#include "unitprop.h"
#include "writer.h"

/* How often each tenant's slow files (memory.stat, *.pressure) are read: the
 * kernel's PSI averaging interval (PSI_FREQ, 2 s); see slow_due in
 * sample_cgroupfs.c. */
#define FSD_SLOW_EVERY_US 2000000ull
/* How often an idle tenant's memory.current and io.stat are read (2-6 s
 * apart, every 4 s on average): two of those intervals, so that what the
 * kernel alone moves there (reclaim, writeback) is seen within a few
 * periods; see quiet in sample_cgroupfs.c. */
#define FSD_QUIET_EVERY_US 4000000ull

/* The per-tenant arrays of a daemon, allocated and freed together. */
struct tenant_arrays {
	struct fs_tenant_sample *samples;
	struct est_state *est;
	struct plan_tenant_in *pin;
	struct fsd_tenant_pub *pub;
	struct fs_limits *wlim; /* the writer's input */
	bool *wskip;
	struct fs_apply_result *wres;
	double *given_x; /* the fleet's grants this period */
};

struct fsd_daemon {
	struct fsd_options opt;
	struct fs_paths paths; /* cgroup root from the config, sysfs and procfs from opt */
	struct fs_conf *conf;
	struct plan_config pcfg;
	struct est_config ecfg;
	struct ct_config ccfg;

	const struct fs_sampler_ops *ops;
	void *sampler;
	struct fs_writer *writer;  /* NULL in dry-run */
	struct fs_unit_bus *ubus;  /* the systemd backend's D-Bus side (connects when used) */
	struct fsd_tmpl_watch *tw; /* NULL without [template.NAME] */

	size_t n;		 /* tenants, as conf->tenants */
	struct tenant_arrays ta; /* [n] each; ta.pub is pub.t */
	struct plan plan;
	struct plan spare; /* the plan before: the next one is computed into it */
	bool have_plan;
	struct fs_host_mem host_mem; /* this period's */
	int host_mem_errno;	     /* last failure to read it, logged once */
	struct fsd_published pub;

	/* Disks: their own counters (sample_disk.h) and the contention estimate
	 * (contention.h). pcfg_now is this period's pcfg: the capacity each disk
	 * delivers now (what the estimator and the planner share out) and the
	 * contended io resources. */
	struct fs_disk_counters disk_prev[FS_MAX_DISKS];
	bool disk_have[FS_MAX_DISKS];
	int disk_errno[FS_MAX_DISKS]; /* last read error, logged once */
	uint64_t disk_prev_us;
	double disk_queue[FS_MAX_DISKS];
	struct ct_state ct;
	struct plan_config pcfg_now;

	struct fsd_fleet *fleet; /* [fleet]: NULL without it */
	bool released;		 /* fairctl release until the next reload */
	int metrics_errno;	 /* last metrics write error, logged once */
	bool ready;
	unsigned failed_periods;
	struct fsd_period_cost cost; /* of the last period */
};

void fsd_paths(const struct fsd_options *o, const struct fs_conf *c, struct fs_paths *p)
{
	fs_paths_default(p);
	snprintf(p->cgroup_root, sizeof(p->cgroup_root), "%s", c->agent.cgroup_root);
	if (o->sysfs_root)
		snprintf(p->sysfs_root, sizeof(p->sysfs_root), "%s", o->sysfs_root);
	if (o->procfs_root)
		snprintf(p->procfs_root, sizeof(p->procfs_root), "%s", o->procfs_root);
}

void fsd_conf_env(const struct fsd_options *o, struct fs_conf_env *env)
{
	*env = (struct fs_conf_env){
	    .sysfs_root = o->sysfs_root,
	    .procfs_root = o->procfs_root,
	    .read_cgroup_root = fs_cgfs_read_root,
	};
}

/* The planner's settings for c, with the host probe of which disks honour
 * io.weight (the one part that reads sysfs). */
static void plan_config_for(const struct fsd_daemon *d, const struct fs_conf *c,
			    struct plan_config *pc)
{
	bool works[FS_MAX_DISKS] = {false};

	for (size_t k = 0; k < c->n_disks && k < FS_MAX_DISKS; k++)
		works[k] = fsd_io_weight_effective(d->paths.sysfs_root, c->agent.cgroup_root,
						   c->disks[k].dev);
	fsd_plan_config(c, works, pc);
}

static void tenant_arrays_free(struct tenant_arrays *a)
{
	free(a->samples);
	free(a->est);
	free(a->pin);
	free(a->pub);
	free(a->wlim);
	free(a->wskip);
	free(a->wres);
	free(a->given_x);
	memset(a, 0, sizeof(*a));
}

static int tenant_arrays_alloc(struct tenant_arrays *a, size_t n)
{
	size_t m = n ? n : 1;

	a->samples = calloc(m, sizeof(*a->samples));
	a->est = calloc(m, sizeof(*a->est));
	a->pin = calloc(m, sizeof(*a->pin));
	a->pub = calloc(m, sizeof(*a->pub));
	a->wlim = calloc(m, sizeof(*a->wlim));
	a->wskip = calloc(m, sizeof(*a->wskip));
	a->wres = calloc(m, sizeof(*a->wres));
	a->given_x = calloc(m, sizeof(*a->given_x));
	if (a->samples && a->est && a->pin && a->pub && a->wlim && a->wskip && a->wres &&
	    a->given_x)
		return 0;
	tenant_arrays_free(a);
	return -ENOMEM;
}

/* Per-tenant arrays for c into *a; the estimator state of tenant i is the
 * old tenant by_name[i]'s (list_match.h; NULL or FS_LIST_NEW: a new one). */
static int tenants_prepare(const struct fsd_daemon *d, const struct fs_conf *c,
			   const size_t *by_name, struct tenant_arrays *a)
{
	size_t n = c->n_tenants;

	if (tenant_arrays_alloc(a, n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct fs_conf_tenant *t = &c->tenants[i];

		if (by_name && by_name[i] != FS_LIST_NEW && by_name[i] < d->n)
			a->est[i] = d->ta.est[by_name[i]];
		else
			est_state_init(&a->est[i]);
		plan_tenant_in_init(&a->pin[i], t->name);
		a->pin[i].weight = t->weight;
		a->pub[i].weight = t->weight;
		a->pin[i].present = false;
		for (size_t r = 0; r < c->res.n; r++) {
			a->pin[i].min[r] = t->min[r];
			a->pin[i].max[r] = t->max[r];
		}
		snprintf(a->pub[i].name, sizeof(a->pub[i].name), "%s", t->name);
		a->pub[i].cgroup = t->cgroup; /* c outlives these arrays */
		snprintf(a->pub[i].template_name, sizeof(a->pub[i].template_name), "%s",
			 t->template_name);
		snprintf(a->pub[i].login, sizeof(a->pub[i].login), "%s", t->login);
	}
	return 0;
}

/* Makes a (n tenants, from tenants_prepare) the daemon's tenants. */
static void tenants_commit(struct fsd_daemon *d, struct tenant_arrays *a, size_t n)
{
	tenant_arrays_free(&d->ta);
	d->ta = *a;
	memset(a, 0, sizeof(*a));
	d->pub.t = d->ta.pub;
	d->pub.n_tenants = n;
	d->n = n;
}

static const char **cgroup_list(const struct fs_conf *c)
{
	const char **v = calloc(c->n_tenants ? c->n_tenants : 1, sizeof(char *));

	for (size_t i = 0; v && i < c->n_tenants; i++)
		v[i] = c->tenants[i].cgroup;
	return v;
}

/*
 * mode: the config's sampler at start. A reload keeps the backend picked then
 * (FS_SAMPLER_BPF when it was eBPF: a load failure refuses the reload). *ops
 * is the backend that owns *out.
 */
static int sampler_open(const struct fsd_daemon *d, const struct fs_conf *c,
			enum fs_conf_sampler mode, const struct fs_sampler_ops **ops, void **out)
{
	struct fs_devnum disks[FS_MAX_DISKS];
	const char **cgroups = cgroup_list(c);
	int r;

	if (!cgroups)
		return -ENOMEM;
	for (size_t k = 0; k < c->n_disks; k++)
		disks[k] = c->disks[k].dev;
	struct fs_sampler_config sc = {
	    .cgroup_root = c->agent.cgroup_root,
	    .procfs_root = d->paths.procfs_root,
	    .n_tenants = c->n_tenants,
	    .cgroups = cgroups,
	    .n_disks = c->n_disks,
	    .disks = disks,
	    .log = fsd_log_cb,
	    /* the kernel updates avg10 every 2 s: reading it every 1 s period
	     * re-reads the same numbers (sample_cgroupfs.c, slow_due) */
	    .slow_every_us = FSD_SLOW_EVERY_US,
	    /* a tenant that used no CPU: only cpu.stat every period */
	    .quiet_every_us = FSD_QUIET_EVERY_US,
	};
	/* net cgroup_skb and the io.stat cross-check only when they are used */
	struct fs_sampler_bpf_opts bo = {
	    .programs =
		FS_BPF_SCHED | (c->n_disks ? FS_BPF_BLK : 0) | (c->res_net >= 0 ? FS_BPF_NET : 0),
	    .approx_wait = c->agent.bpf_wait == FS_BPF_WAIT_APPROX,
	};
	r = fs_sampler_open_pick(mode, &sc, &bo, ops, out);
	free(cgroups);
	return r;
}

/* The writer's fs_writer_opts.dir_fn: the sampler's open directory. */
static int sampler_dir(void *ctx, size_t tenant, const char *cgroup, uint64_t *ino)
{
	const struct fsd_daemon *d = ctx;

	if (!d->sampler || !d->ops->dirfd)
		return -1;
	return d->ops->dirfd(d->sampler, tenant, cgroup, ino);
}

/*
 * Each tenant's backend (model/backend.h) into pub.t[i].backend, and into
 * the writer. Decisions of cgroups seen before are reused (unit_bus.c), so
 * a reload for one new template tenant asks systemd about that one only.
 */
static int choose_backends(struct fsd_daemon *d, const struct fs_conf *c)
{
	const char **cgroups = cgroup_list(c);
	struct fs_backend_choice *ch = calloc(c->n_tenants ? c->n_tenants : 1, sizeof(*ch));
	size_t count[3] = {0, 0, 0};
	int r = -ENOMEM;

	if (cgroups && ch)
		r = fs_ubus_choose_all(d->ubus, c->agent.backend, c->n_tenants, cgroups, ch);
	for (size_t i = 0; r >= 0 && i < c->n_tenants; i++) {
		d->ta.pub[i].backend = ch[i];
		count[ch[i].backend]++;
		if (d->writer)
			fs_writer_set_backend(d->writer, i, ch[i].backend);
		if (ch[i].backend == FS_BACKEND_NONE)
			fsd_log(LOG_WARNING, c->tenants[i].name, NULL, c->tenants[i].cgroup,
				"tenant %s: %s", c->tenants[i].name, ch[i].reason);
	}
	if (r >= 0)
		fsd_info("backend %s: %zu tenant(s) through systemd, %zu through cgroupfs%s%.0zu%s",
			 fs_backend_mode_name(c->agent.backend), count[FS_BACKEND_SYSTEMD],
			 count[FS_BACKEND_CGROUPFS], count[FS_BACKEND_NONE] ? ", " : "",
			 count[FS_BACKEND_NONE], count[FS_BACKEND_NONE] ? " not written" : "");
	free(ch);
	free(cgroups);
	return r;
}

/* Tenant i's cgroup appeared or was recreated: a unit systemd did not have
 * loaded before may be there now. */
static void rechoose_backend(struct fsd_daemon *d, size_t i)
{
	struct fs_backend_choice *b = &d->ta.pub[i].backend;
	const char *cg = d->conf->tenants[i].cgroup;

	if (b->backend == FS_BACKEND_SYSTEMD ||
	    d->conf->agent.backend == FS_BACKEND_MODE_CGROUPFS ||
	    fs_unit_of_cgroup(cg, NULL, 0) == FS_UNIT_NONE)
		return;
	fs_ubus_choose(d->ubus, d->conf->agent.backend, cg, b);
	if (b->backend == FS_BACKEND_SYSTEMD)
		fsd_log(LOG_INFO, d->conf->tenants[i].name, NULL, cg,
			"tenant %s: written through systemd from now on (%s)",
			d->conf->tenants[i].name, b->reason);
	if (d->writer)
		fs_writer_set_backend(d->writer, i, b->backend);
}

/* The writer's fs_writer_opts.file_fn: the sampler's open memory.current. */
static int sampler_file(void *ctx, size_t tenant, const char *cgroup, const char *file)
{
	const struct fsd_daemon *d = ctx;

	if (!d->sampler || !d->ops->file_fd)
		return -1;
	return d->ops->file_fd(d->sampler, tenant, cgroup, file);
}

/*
 * The writer's change watches (fs_writer_opts.max_watches): half of the
 * kernel's per-user fs.inotify.max_user_watches, less one per tenant for
 * the sampler's memory.events. The other half is left to the rest of
 * root: systemd (path units, its own cgroup watches), udev, the journal;
 * 10,000 tenants' 70,000 files would otherwise take all 61,866 of an 8 GiB
 * host. 0 (no cap) when the limit cannot be read.
 */
static size_t writer_watches(const char *procfs_root, size_t n_tenants)
{
	char buf[64];
	unsigned long long max;

	if (fs_read_small(procfs_root, "sys/fs/inotify/max_user_watches", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu", &max) != 1 || max == 0)
		return 0;
	/* (1, not 0, which is no cap: a tenant count past half the limit) */
	return max / 2 > n_tenants ? (size_t)(max / 2 - n_tenants) : 1;
}

static int writer_open(struct fsd_daemon *d, const struct fs_conf *c, const struct plan_config *pc,
		       struct fs_writer **out)
{
	const char **cgroups = cgroup_list(c);
	int r;

	if (!cgroups)
		return -ENOMEM;
	struct fs_writer_opts wo = {
	    .cgroup_root = c->agent.cgroup_root,
	    .state_dir = c->agent.state_dir,
	    .n_tenants = c->n_tenants,
	    .cgroups = cgroups,
	    .log = fsd_log_cb,
	    /* the planner's least margin: it keeps more while the host has it */
	    .mem_margin = pc->mem_margin_min,
	    /* the period samples just before it applies: no second path walk */
	    .dir_fn = sampler_dir,
	    .dir_ctx = d,
	    .unit_ops = &fs_ubus_ops,
	    .unit_ctx = d->ubus,
	    .file_fn = sampler_file,
	    /* what the sampler's budget leaves over (fs_cgroupfs_fd_budget) */
	    .max_open_files = fs_cgroupfs_writer_fds(c->n_tenants),
	    .max_watches = writer_watches(d->paths.procfs_root, c->n_tenants),
	};
	r = fs_writer_open(out, &wo);
	free(cgroups);
	return r;
}

/* The values of the last plan are in the cgroups (not dry-run, not released):
 * what "at its limit" is measured against. */
static bool limits_in_force(const struct fsd_daemon *d)
{
	return !d->opt.dry_run && !d->released;
}

/* The disks' counters read again; each disk's mean queue since the last
 * read (NaN when unknown: first read, a failed read, a counter reset). */
static void sample_disks(struct fsd_daemon *d, uint64_t now_us)
{
	uint64_t dt = now_us > d->disk_prev_us ? now_us - d->disk_prev_us : 0;

	for (size_t k = 0; k < d->conf->n_disks && k < FS_MAX_DISKS; k++) {
		struct fs_disk_counters cur;
		struct fs_disk_sample ds = {NAN, NAN};
		int r = fs_disk_counters_read(d->paths.sysfs_root, d->conf->disks[k].dev, &cur);

		if (r < 0 && r != d->disk_errno[k])
			fsd_warn("disk %u:%u: cannot read its counters under %s/dev/block: %s; its "
				 "contention is judged from the tenants' use alone",
				 d->conf->disks[k].dev.major, d->conf->disks[k].dev.minor,
				 d->paths.sysfs_root, strerror(-r));
		d->disk_errno[k] = r;
		if (r == 0 && d->disk_have[k])
			fs_disk_sample_delta(&d->disk_prev[k], &cur, dt, &ds);
		d->disk_queue[k] = ds.queue;
		d->disk_have[k] = r == 0;
		if (r == 0)
			d->disk_prev[k] = cur;
	}
	d->disk_prev_us = now_us;
}

/* A new baseline for the disks (open, reload): no contention known yet. */
static void disks_reset(struct fsd_daemon *d, uint64_t now_us)
{
	ct_config_default(&d->ccfg);
	d->ccfg.busy = d->pcfg.busy;
	ct_state_init(&d->ct);
	memset(d->disk_have, 0, sizeof(d->disk_have));
	memset(d->disk_errno, 0, sizeof(d->disk_errno));
	d->pcfg_now = d->pcfg;
	sample_disks(d, now_us);
}

/* Contention per io resource, and the capacity the allocation shares out
 * now (contention.h), into pcfg_now; a change of contention is logged once. */
static void estimate_disks(struct fsd_daemon *d)
{
	struct ct_input in;
	bool was[FS_MAX_RES];
	const struct fs_resources *res = &d->pcfg.res;

	ct_input_init(&in);
	memcpy(in.queue, d->disk_queue, sizeof(in.queue));
	fsd_io_load(res, &d->ccfg, &d->ecfg, d->n, d->conf->tenants, d->ta.samples,
		    d->have_plan ? &d->plan : NULL, limits_in_force(d), &in);
	memcpy(was, d->ct.contended, sizeof(was));
	ct_update(res, &d->ccfg, &in, &d->ct, &d->ct);
	d->pcfg_now = d->pcfg;
	memcpy(d->pcfg_now.contended, d->ct.contended, sizeof(d->pcfg_now.contended));
	for (size_t r = 0; r < res->n; r++) {
		int k = res->disk[r];
		char tot[24], dec[24];

		d->pcfg_now.res.capacity[r] = d->ct.capacity[r];
		if (was[r] == d->ct.contended[r])
			continue;
		fs_res_fmt_amount(res->kind[r], in.total[r], tot, sizeof(tot));
		fs_res_fmt_amount(res->kind[r], res->capacity[r], dec, sizeof(dec));
		if (d->ct.contended[r])
			fsd_info(
			    "%s contended: %u tenants use it, %s of %s declared, mean queue %.1f",
			    res->name[r], in.users[r], tot, dec,
			    k >= 0 && k < FS_MAX_DISKS ? d->disk_queue[k] : NAN);
		else
			fsd_info("%s no longer contended: %u tenants use it, %s of %s declared",
				 res->name[r], in.users[r], tot, dec);
	}
}

/* The host checks as warnings, once at start and once per reload: the
 * daemon runs anyway (a tenant's service may start later). */
static void check_warn(void *ctx, const char *tenant, const char *cgroup, const char *msg)
{
	(void)ctx;
	fsd_log(LOG_WARNING, tenant, NULL, cgroup, "%s", msg);
}

/* Templates: watched so that their tenants follow the cgroups. Without the
 * watch they are found at the next reload only (logged). */
static void tmpl_watch_open(struct fsd_daemon *d)
{
	int r;

	fsd_tmpl_watch_close(d->tw);
	d->tw = NULL;
	r = fsd_tmpl_watch_open(&d->tw, d->conf);
	if (r < 0)
		fsd_warn("cannot watch the cgroups of the templates: %s; new matches join at "
			 "the next reload",
			 strerror(-r));
}

int fsd_daemon_open(struct fsd_daemon **out, const struct fsd_options *o, struct fs_conf *conf,
		    uint64_t now_us)
{
	struct fsd_daemon *d = calloc(1, sizeof(*d));
	struct tenant_arrays ta;
	int r;

	*out = NULL;
	if (!d) {
		fs_conf_free(conf);
		return -ENOMEM;
	}
	d->opt = *o;
	fs_host_mem_unknown(&d->host_mem);
	fsd_paths(o, conf, &d->paths);
	d->ops = &fs_sampler_cgroupfs;
	d->pub.dry_run = o->dry_run;
	plan_config_for(d, conf, &d->pcfg);
	fsd_est_config(conf, &d->ecfg);
	r = tenants_prepare(d, conf, NULL, &ta);
	d->conf = conf;
	if (r < 0)
		goto fail;
	tenants_commit(d, &ta, conf->n_tenants);
	if (!o->once && !o->check_config) {
		r = fsd_fleet_open(&d->fleet, conf);
		if (r < 0)
			goto fail;
	}
	if (!o->check_config)
		fsd_check_host(conf, &d->paths, NULL, check_warn, NULL);
	disks_reset(d, now_us);
	d->pub.pcfg = d->pcfg;
	d->pub.policy = fs_conf_policy_name(conf->agent.policy);
	d->pub.interval_us = conf->agent.interval_us;
	r = sampler_open(d, conf, conf->agent.sampler, &d->ops, &d->sampler);
	if (r < 0) {
		fsd_err("cannot sample cgroups under %s (sampler %s): %s", conf->agent.cgroup_root,
			fs_conf_sampler_name(conf->agent.sampler), strerror(-r));
		/* e.g. the verifier's EINVAL: a runtime failure, not a refused config */
		if (r == -EINVAL)
			r = -EIO;
		goto fail;
	}
	r = fs_ubus_open(&d->ubus, conf->agent.cgroup_root, fsd_log_cb, NULL);
	if (r < 0)
		goto fail;
	if (!o->dry_run) {
		r = writer_open(d, conf, &d->pcfg, &d->writer);
		if (r < 0) {
			fsd_err("cannot open the writer (state in %s): %s", conf->agent.state_dir,
				strerror(-r));
			goto fail;
		}
	}
	r = choose_backends(d, conf);
	if (r < 0)
		goto fail;
	tmpl_watch_open(d);
	/* The baseline: rates need two samples. */
	r = d->ops->sample(d->sampler, now_us, d->ta.samples);
	if (r < 0) {
		fsd_err("baseline sample under %s failed: %s", conf->agent.cgroup_root,
			strerror(-r));
		goto fail;
	}
	*out = d;
	return 0;
fail:
	fsd_daemon_free(d);
	return r;
}

void fsd_daemon_free(struct fsd_daemon *d)
{
	if (!d)
		return;
	if (d->sampler)
		d->ops->close(d->sampler);
	if (d->writer)
		fs_writer_close(d->writer);
	fs_ubus_close(d->ubus);
	fsd_tmpl_watch_close(d->tw);
	plan_free(&d->plan);
	plan_free(&d->spare);
	fsd_fleet_close(d->fleet);
	tenant_arrays_free(&d->ta);
	fs_conf_free(d->conf);
	free(d);
}

static void estimate_all(struct fsd_daemon *d)
{
	struct est_sample es;
	double cpu_total;

	estimate_disks(d);
	/* the floors (est_floor_share): every configured tenant, present or
	 * not (a little less than needed); templates move it */
	d->ecfg.n_tenants = d->n;
	cpu_total = fsd_cpu_total(&d->pcfg_now.res, d->n, d->ta.samples);
	for (size_t i = 0; i < d->n; i++) {
		const struct fs_tenant_sample *s = &d->ta.samples[i];
		const struct fs_conf_tenant *ct = &d->conf->tenants[i];
		struct plan_tenant_in *p = &d->ta.pin[i];

		p->present = s->present;
		if (!s->present)
			continue;
		if (s->reset) {
			/* New baseline (cgroup recreated or first seen): keep the last
			 * estimate; without one the tenant waits a period. */
			p->present = d->ta.est[i].initialized;
		} else {
			fsd_est_sample(&d->pcfg_now.res, s, d->ct.contended,
				       plan_find(d->have_plan ? &d->plan : NULL, i, ct->name),
				       limits_in_force(d), &es);
			/* x is the operating point only where the plan's limits
			 * hold the tenants, not the kernel's weights */
			if (d->plan.mode != PLAN_MODE_LIMITS)
				es.x = NAN;
			for (size_t r = 0; r < d->pcfg_now.res.n; r++)
				es.stalled[r] = ct_stalled(&d->ccfg, &d->ct, r);
			es.cpu_total = cpu_total;
			est_update(&d->pcfg_now.res, &d->ecfg, ct->has_demand ? ct->demand : NULL,
				   &d->ta.est[i], &es, &d->ta.est[i]);
			memcpy(p->usage, es.usage, sizeof(p->usage));
			for (size_t r = 0; r < d->pcfg_now.res.n; r++)
				p->io_read[r] = fsd_io_read(&d->pcfg_now.res, s, r);
			p->mem_reclaimable = isnan(s->mem_inactive_file) ? 0 : s->mem_inactive_file;
		}
		memcpy(p->demand, d->ta.est[i].demand, sizeof(p->demand));
	}
}

/* The whole period in one writer call: one state save for every new original. */
static void apply(struct fsd_daemon *d, const struct plan *pl, uint64_t now_us)
{
	d->pub.written = d->pub.failed = d->pub.drifted = 0;
	if (!d->writer || d->released)
		return;
	for (size_t i = 0; i < pl->n_tenants; i++) {
		d->ta.wskip[i] = !pl->t[i].write;
		/* a new baseline or a vanished cgroup: maybe a new one under the name */
		if (d->ta.samples[i].reset || !d->ta.samples[i].present)
			fs_writer_recheck(d->writer, i);
		if (d->ta.samples[i].reset)
			rechoose_backend(d, i);
		if (!d->ta.wskip[i])
			fsd_limits(&d->pcfg, &pl->t[i], &d->ta.wlim[i]);
	}
	fs_writer_apply_all(d->writer, pl->n_tenants, d->ta.wlim, d->ta.wskip, now_us, d->ta.wres);
	for (size_t i = 0; i < pl->n_tenants; i++) {
		const struct fs_apply_result *res = &d->ta.wres[i];
		const char *cg = d->conf->tenants[i].cgroup, *name = pl->t[i].name;

		d->pub.written += res->written;
		d->pub.failed += res->failed;
		d->pub.drifted += res->drifted;
		d->pub.t[i].drift_total = fs_writer_drift_count(d->writer, i);
		if (res->gone)
			fsd_log(LOG_INFO, name, NULL, cg, "tenant %s: cgroup %s vanished, skipped",
				name, cg);
		else if (res->error < 0 && res->error != -EIO) /* -EIO: logged per file */
			fsd_log(LOG_ERR, name, NULL, cg, "tenant %s: applying limits to %s: %s",
				name, cg, strerror(-res->error));
	}
}

static void publish(struct fsd_daemon *d, uint64_t now_us)
{
	struct fsd_published *p = &d->pub;

	p->period++;
	p->time_us = now_us;
	p->mode = d->plan.mode;
	snprintf(p->mode_reason, sizeof(p->mode_reason), "%s", d->plan.mode_reason);
	p->n_saturated = d->plan.n_saturated;
	memcpy(p->saturated, d->plan.saturated, sizeof(p->saturated));
	memcpy(p->busy, d->plan.busy, sizeof(p->busy));
	p->pcfg = d->pcfg;
	p->policy = fs_conf_policy_name(d->conf->agent.policy);
	p->interval_us = d->conf->agent.interval_us;
	p->dry_run = d->opt.dry_run;
	p->released = d->released;
	p->written_total += p->written;
	p->failed_total += p->failed;
	p->drift_total += p->drifted;
	p->failed_periods_total = d->failed_periods;
	for (size_t i = 0; i < d->n; i++) {
		p->t[i].present = d->ta.pin[i].present;
		p->t[i].weight = d->ta.pin[i].weight;
		p->t[i].fleet_weight = 0;
		p->t[i].fleet_weight_from = NULL;
		if (d->fleet)
			fsd_fleet_weight(d->fleet, p->t[i].name, &p->t[i].fleet_weight,
					 &p->t[i].fleet_weight_from);
		memcpy(p->t[i].usage, d->ta.pin[i].usage, sizeof(p->t[i].usage));
		p->t[i].est = d->ta.est[i];
		p->t[i].plan = d->plan.t[i];
	}
}

static void status_line(const struct fsd_daemon *d, char *buf, size_t len)
{
	const struct fsd_published *p = &d->pub;
	char names[320] = "";
	size_t used = 0, present = 0;

	for (size_t r = 0; r < d->pcfg.res.n; r++) {
		const char *state = fsd_resource_state(p, r);

		if (!state)
			continue;
		int w = snprintf(names + used, sizeof(names) - used, "%s%s (%s)", used ? "," : "",
				 d->pcfg.res.name[r], state);
		if (w > 0 && (size_t)w < sizeof(names) - used)
			used += (size_t)w;
	}
	for (size_t i = 0; i < d->n; i++)
		present += p->t[i].present;
	snprintf(
	    buf, len,
	    "period %llu: %s%s, %s, bottlenecks: %s, tenants %zu/%zu, files written %u failed %u "
	    "drifted %u",
	    (unsigned long long)p->period, plan_mode_name(p->mode),
	    d->opt.dry_run ? " (dry-run)" : "", fs_conf_policy_name(d->conf->agent.policy),
	    used ? names : "none", present, d->n, p->written, p->failed, p->drifted);
}

/* " io.use=NAME:AMOUNT,..." of tenant i: what it moved on each io resource
 * this period, beside the NAME=alloc/limit of the summary (a writer's use
 * below its io.max is how a CPU trim step that bites shows, estimate.h). */
static void fmt_io_use(const struct fsd_daemon *d, size_t i, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t r = 0; r < d->pcfg.res.n && used < len; r++) {
		char a[32];
		int w;

		if (!fs_res_is_io(d->pcfg.res.kind[r]))
			continue;
		if (isnan(d->ta.pin[i].usage[r]))
			snprintf(a, sizeof(a), "-");
		else
			fs_res_fmt_amount(d->pcfg.res.kind[r], d->ta.pin[i].usage[r], a, sizeof(a));
		w = snprintf(buf + used, len - used, "%s%s:%s",
			     used ? "," : " io.use=", d->pcfg.res.name[r], a);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}

static void log_period(const struct fsd_daemon *d, const char *status)
{
	char line[2048], why[96], wait[128], io_use[256];
	int cpu = fs_resources_find(&d->pcfg.res, FS_RES_CPU);

	if (!fsd_log_enabled(LOG_DEBUG))
		return;
	fsd_debug("%s", status);
	if (fs_resources_find(&d->pcfg.res, FS_RES_MEMORY) >= 0)
		fsd_debug("memory: headroom=%.1fM busy=%d short=%d host.available=%.1fM "
			  "host.psi.some=%.2f host.psi.full=%.2f",
			  d->plan.mem_headroom / 1048576.0, d->plan.mem_busy, d->plan.mem_short,
			  d->host_mem.available / 1048576.0, d->host_mem.psi_some_avg10,
			  d->host_mem.psi_full_avg10);
	for (size_t i = 0; i < d->plan.n_tenants; i++) {
		double w = d->ta.samples[i].cpu_runq_wait_preempted;
		double wall = d->ta.samples[i].cpu_runq_wait;

		plan_fmt_summary(&d->pcfg, &d->plan, i, line, sizeof(line));
		/* runqueue wait (eBPF) next to the CPU demand it raises */
		wait[0] = '\0';
		if (cpu >= 0 && isnan(w))
			snprintf(wait, sizeof(wait), " cpu.usage=%.3f cpu.wait=- cpu.demand=%.3f",
				 d->ta.pin[i].usage[cpu], d->ta.est[i].demand[cpu]);
		else if (cpu >= 0)
			snprintf(wait, sizeof(wait),
				 " cpu.usage=%.3f cpu.wait=%.3f cpu.wait.all=%.3f cpu.demand=%.3f",
				 d->ta.pin[i].usage[cpu], w, wall, d->ta.est[i].demand[cpu]);
		fmt_io_use(d, i, io_use, sizeof(io_use));
		fsd_log(LOG_DEBUG, d->plan.t[i].name, NULL, d->conf->tenants[i].cgroup,
			"%s probe=%.3f est=%s%s%s", line, est_probe(&d->ta.est[i]),
			est_reason_str(d->ta.est[i].reasons, why, sizeof(why)), wait, io_use);
	}
}

/* Metrics are for dashboards: a failure is logged (once per cause), never fatal. */
static void write_metrics(struct fsd_daemon *d)
{
	const char *path = d->conf->agent.metrics_file;
	char err[PATH_MAX + 128];
	int r;

	if (!path[0])
		return;
	r = fsd_metrics_write(path, &d->pub, err, sizeof(err));
	if (r < 0 && r != -d->metrics_errno)
		fsd_warn("metrics not written: %s", err);
	else if (r == 0 && d->metrics_errno)
		fsd_info("metrics written to %s again", path);
	d->metrics_errno = r < 0 ? -r : 0;
}

/* CPU time of this thread, ns: the period's cost by stage (fsd_daemon_cost). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Charges the time since *mark to stage s and moves the mark. */
static void charge(struct fsd_daemon *d, enum fsd_stage s, uint64_t *mark)
{
	uint64_t now = cpu_ns();

	d->cost.ns[s] = now - *mark;
	*mark = now;
}

/* The host's memory (planner's "short"/"busy"); a failure is logged once per
 * cause and leaves it unknown: the tenants' usage against the capacity. */
static void sample_host_mem(struct fsd_daemon *d)
{
	int r = fs_host_mem_read(d->paths.procfs_root, &d->host_mem);

	if (r < 0 && -r != d->host_mem_errno)
		fsd_warn("cannot read the host's memory under %s: %s; memory shortage judged "
			 "from the tenants' usage only",
			 d->paths.procfs_root, strerror(-r));
	else if (r == 0 && d->host_mem_errno)
		fsd_info("reading the host's memory under %s again", d->paths.procfs_root);
	d->host_mem_errno = r < 0 ? -r : 0;
}

/*
 * The policy's capacity guard scaled the rule's point down (policy.h
 * fs_guard_capacity): the plan is safe, but the rule misbehaved on this
 * input. Said when it starts and when it ends, not every period.
 */
static void log_guard(const struct fsd_daemon *d, const struct plan *next)
{
	bool was = d->have_plan && d->plan.guard < 1, is = next->guard < 1;

	if (is && !was)
		fsd_warn("%s handed out more than the capacity; its allocation was scaled by "
			 "%.6g to fit (a solver fault worth reporting)",
			 fs_conf_policy_name(d->conf->agent.policy), next->guard);
	else if (was && !is)
		fsd_info("%s's allocations fit the capacity again",
			 fs_conf_policy_name(d->conf->agent.policy));
}

static int period(struct fsd_daemon *d, uint64_t now_us)
{
	struct plan_host host;
	struct plan next = d->spare;
	struct fs_error err = {{0}};
	char status[400];
	uint64_t mark = cpu_ns();
	int r;

	memset(&d->cost, 0, sizeof(d->cost));
	r = d->ops->sample(d->sampler, now_us, d->ta.samples);
	if (r < 0) {
		fsd_err("sampling under %s failed: %s", d->conf->agent.cgroup_root, strerror(-r));
		return r;
	}
	sample_disks(d, now_us);
	sample_host_mem(d);
	charge(d, FSD_STAGE_SAMPLE, &mark);
	estimate_all(d);
	charge(d, FSD_STAGE_ESTIMATE, &mark);
	host.mem_available = d->host_mem.available;
	host.mem_psi_full = d->host_mem.psi_full_avg10;
	if (d->fleet) {
		enum fsd_fleet_outcome fo = fsd_fleet_step(
		    d->fleet, &d->pcfg_now.res, d->n, d->ta.pin, d->ta.pub, now_us, d->ta.given_x);

		fsd_fleet_publish(d->fleet, &d->pub.fleet);
		if (fo == FSD_FLEET_HOLD && d->have_plan) {
			/* Nothing applicable yet, the last fleet plan is recent:
			 * keep it, write nothing new (docs/fleet.md). */
			charge(d, FSD_STAGE_PLAN, &mark);
			publish(d, now_us);
			write_metrics(d);
			return 0;
		}
		d->pcfg_now.given_x = fo == FSD_FLEET_APPLY ? d->ta.given_x : NULL;
	}
	r = plan_recompute(&d->pcfg_now, &host, d->n, d->ta.pin, d->have_plan ? &d->plan : NULL,
			   &next, &err);
	d->spare = next; /* its array, whatever the outcome */
	if (r < 0) {
		fsd_err("solving with %s failed, limits unchanged: %s",
			fs_conf_policy_name(d->conf->agent.policy), err.msg);
		return r;
	}
	charge(d, FSD_STAGE_PLAN, &mark);
	log_guard(d, &next);
	if (next.mode_changed)
		fsd_info("mode %s -> %s: %s", d->have_plan ? plan_mode_name(d->plan.mode) : "none",
			 plan_mode_name(next.mode), next.mode_reason);
	apply(d, &next, now_us);
	d->spare = d->plan;
	d->plan = next;
	d->have_plan = true;
	charge(d, FSD_STAGE_APPLY, &mark);
	publish(d, now_us);
	write_metrics(d);
	status_line(d, status, sizeof(status));
	log_period(d, status);
	sd_notifyf(0, "%sSTATUS=%s", d->ready || d->opt.once ? "" : "READY=1\n", status);
	d->ready = true;
	charge(d, FSD_STAGE_PUBLISH, &mark);
	return 0;
}

int fsd_daemon_period(struct fsd_daemon *d, uint64_t now_us)
{
	int r;

	/* A template matches other cgroups now: its tenants follow at once
	 * (the config is loaded again, as on SIGHUP). */
	if (fsd_tmpl_watch_changed(d->tw, d->conf)) {
		fsd_info("the cgroups the templates match changed: loading %s again",
			 d->conf->path);
		if (fsd_daemon_reload(d, now_us) < 0)
			fsd_tmpl_watch_failed(d->tw);
	}
	r = period(d, now_us);

	if (r < 0)
		d->failed_periods++;
	return r;
}

const struct fsd_period_cost *fsd_daemon_cost(const struct fsd_daemon *d)
{
	return &d->cost;
}

void fsd_daemon_print(const struct fsd_daemon *d, FILE *f)
{
	char line[2048];

	for (size_t i = 0; d->have_plan && i < d->plan.n_tenants; i++) {
		plan_fmt_summary(&d->pcfg, &d->plan, i, line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	fflush(f);
}

/* One cgroup file of tenant i: "  FILE: CURRENT -> PLANNED". */
static void print_file(const struct fs_limits *lim, enum fs_cgfile f, size_t disk,
		       struct fs_devnum dev, int dirfd, struct fs_buf *b, FILE *out)
{
	char cur[FS_CGF_VALUE_MAX] = "?", neu[FS_CGF_VALUE_MAX];
	int r;

	if (fs_cgfile_format(f, lim, disk, neu, sizeof(neu)) < 0)
		return;
	r = dirfd >= 0 ? fs_cgfile_read_current(dirfd, f, dev, b, cur, sizeof(cur)) : -ENOENT;
	if (r == -ENODATA)
		snprintf(cur, sizeof(cur), "(empty)");
	else if (r < 0)
		snprintf(cur, sizeof(cur), "(%s)", strerror(-r));
	fprintf(out, "  %-14s %s -> %s%s\n", fs_cgfiles[f].name, cur, neu,
		strcmp(cur, neu) ? "" : " (unchanged)");
}

/* The same through systemd: "  FILE: CURRENT -> PLANNED" in the unit's
 * properties (model/unitprop.h). */
static void print_unit_file(const struct fsd_daemon *d, const char *cgroup,
			    const struct fs_limits *lim, enum fs_cgfile f, size_t disk,
			    struct fs_devnum dev, FILE *out)
{
	char cur[FS_CGF_VALUE_MAX] = "?", neu[FS_CGF_VALUE_MAX];
	int r = fs_uprop_format(f, lim, disk, neu, sizeof(neu));

	if (r == -EOPNOTSUPP) {
		fprintf(out, "  %-14s (no systemd property: not written)\n", fs_cgfiles[f].name);
		return;
	}
	if (r < 0)
		return;
	r = fs_ubus_read(d->ubus, cgroup, f, dev, cur, sizeof(cur));
	if (r < 0)
		snprintf(cur, sizeof(cur), "(%s)", strerror(-r));
	fprintf(out, "  %-14s %s -> %s%s\n", fs_cgfiles[f].name, cur, neu,
		strcmp(cur, neu) ? "" : " (unchanged)");
}

void fsd_daemon_print_files(const struct fsd_daemon *d, FILE *out)
{
	struct fs_cgroupfs cg = {-1};
	struct fs_buf b = {0};
	struct fs_limits lim;

	if (fs_cgfs_open(&cg, d->paths.cgroup_root) < 0)
		cg.root_fd = -1;
	for (size_t i = 0; d->have_plan && i < d->plan.n_tenants; i++) {
		const struct plan_tenant *t = &d->plan.t[i];
		const char *rel = d->conf->tenants[i].cgroup;
		int fd;

		if (!t->write) {
			fprintf(out, "%s (%s): %s\n", t->name, rel,
				d->ta.samples[i].present ? "nothing to write (enforce = off)"
							 : "cgroup missing, nothing to write");
			continue;
		}
		const struct fs_backend_choice *bc = &d->ta.pub[i].backend;
		bool unit = bc->backend == FS_BACKEND_SYSTEMD;

		fd = cg.root_fd >= 0 ? fs_cgfs_open_cgroup(&cg, rel) : -ENOENT;
		fprintf(out, "%s (%s):\n  backend %s: %s\n", t->name, rel,
			fs_backend_name(bc->backend), bc->reason);
		if (bc->backend == FS_BACKEND_NONE) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		fsd_limits(&d->pcfg, t, &lim);
		for (int f = 0; f < FS_CGF__COUNT; f++) {
			struct fs_devnum none = {0, 0};

			if (!(lim.set & fs_cgfiles[f].bit))
				continue;
			if (!fs_cgfiles[f].per_disk && unit)
				print_unit_file(d, rel, &lim, f, 0, none, out);
			else if (!fs_cgfiles[f].per_disk)
				print_file(&lim, f, 0, none, fd, &b, out);
			for (size_t k = 0; fs_cgfiles[f].per_disk && k < lim.n_io; k++)
				if (unit)
					print_unit_file(d, rel, &lim, f, k, lim.io[k].dev, out);
				else
					print_file(&lim, f, k, lim.io[k].dev, fd, &b, out);
		}
		if (fd >= 0)
			close(fd);
	}
	fs_buf_free(&b);
	fs_cgfs_close(&cg);
	fflush(out);
}

_Static_assert(sizeof(((struct fsd_file_state *)0)->in_force) ==
		       sizeof(((struct fs_writer_file *)0)->in_force) &&
		   sizeof(((struct fsd_file_state *)0)->key) ==
		       sizeof(((struct fs_writer_file *)0)->key),
	       "fsd_file_state mirrors fs_writer_file");

int fsd_daemon_files(struct fsd_daemon *d, size_t i, struct fsd_file_state *out, size_t max)
{
	struct fs_writer_file wf[FS_CGF_SLOTS];
	int n;

	if (!d->writer || d->released)
		return -ENODEV;
	n = fs_writer_files(d->writer, i, wf, max < FS_CGF_SLOTS ? max : FS_CGF_SLOTS);
	for (int k = 0; k < n; k++) {
		/* the same fields, sizes and meaning (both NUL-terminated) */
		memcpy(out[k].key, wf[k].key, sizeof(out[k].key));
		memcpy(out[k].written, wf[k].written, sizeof(out[k].written));
		memcpy(out[k].in_force, wf[k].in_force, sizeof(out[k].in_force));
		out[k].err = wf[k].err;
	}
	return n;
}

const struct fsd_published *fsd_daemon_published(const struct fsd_daemon *d)
{
	return &d->pub;
}

int fsd_daemon_release(struct fsd_daemon *d)
{
	int r = 0;

	d->released = true;
	d->pub.released = true;
	if (d->writer) {
		r = fs_writer_restore(d->writer);
		if (r < 0) {
			fsd_err("release: restoring the original values: %s", strerror(-r));
			return r;
		}
	}
	fsd_info("released: original values restored%s; not enforcing until reload",
		 d->writer ? "" : " (dry-run: nothing was written)");
	return 0;
}

int fsd_daemon_set_weight(struct fsd_daemon *d, const char *tenant, double weight)
{
	if (!fs_conf_weight_ok(weight))
		return -EINVAL;
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->conf->tenants[i].name, tenant)) {
			fsd_info("tenant %s: weight %g -> %g until the next reload", tenant,
				 d->ta.pin[i].weight, weight);
			d->ta.pin[i].weight = weight;
			d->pub.t[i].weight = weight;
			return 0;
		}
	return -ENOENT;
}

/* Settings that need a restart: refuse to swap them in on reload. */
static const char *restart_only(const struct fs_conf *a, const struct fs_conf *b)
{
	if (strcmp(a->agent.cgroup_root, b->agent.cgroup_root))
		return "cgroup_root";
	if (strcmp(a->agent.state_dir, b->agent.state_dir))
		return "state_dir";
	if (strcmp(a->agent.socket, b->agent.socket))
		return "socket";
	if (a->fleet.enabled != b->fleet.enabled ||
	    strcmp(a->fleet.endpoints, b->fleet.endpoints) ||
	    strcmp(a->fleet.prefix, b->fleet.prefix) || strcmp(a->fleet.host, b->fleet.host) ||
	    a->fleet.lease_ttl_s != b->fleet.lease_ttl_s ||
	    a->fleet.max_age_us != b->fleet.max_age_us)
		return "[fleet]";
	if (a->agent.sampler != b->agent.sampler)
		return "sampler";
	if (a->agent.bpf_wait != b->agent.bpf_wait)
		return "bpf_wait";
	if (a->agent.backend != b->agent.backend)
		return "backend";
	return NULL;
}

static const char **name_list(const struct fs_conf *c)
{
	const char **v = calloc(c->n_tenants ? c->n_tenants : 1, sizeof(char *));

	for (size_t i = 0; v && i < c->n_tenants; i++)
		v[i] = c->tenants[i].name;
	return v;
}

/*
 * Only the tenants differ between a and b as far as sampling and the disks'
 * contention go (a template's cgroups changed, or an edit of weights and
 * tenants): the same resources with the same capacities, the same disks.
 * Then the sampler keeps its open files and baselines (retarget) and the
 * disks keep their contention state, so a login costs the new tenant's
 * files and nothing of the others' (a reset would also drop a contended
 * disk's hysteresis at every login).
 */
static bool same_resources(const struct fs_conf *a, const struct fs_conf *b)
{
	if (a->res.n != b->res.n || a->n_disks != b->n_disks)
		return false;
	for (size_t r = 0; r < a->res.n; r++)
		if (a->res.kind[r] != b->res.kind[r] || a->res.capacity[r] != b->res.capacity[r] ||
		    strcmp(a->res.name[r], b->res.name[r]) != 0)
			return false;
	for (size_t k = 0; k < a->n_disks; k++)
		if (a->disks[k].dev.major != b->disks[k].dev.major ||
		    a->disks[k].dev.minor != b->disks[k].dev.minor)
			return false;
	return true;
}

/* The sampler kind running now: a reload keeps the one picked at start. */
static enum fs_conf_sampler running_sampler(const struct fsd_daemon *d)
{
	return d->ops == &fs_sampler_bpf ? FS_SAMPLER_BPF : FS_SAMPLER_CGROUPFS;
}

/* Where each of nc's tenants (ncg: their cgroups) was in old: by cgroup
 * (the sampler's and the writer's state) and by name (the estimates). 0 or
 * -ENOMEM. */
static int match_tenants(const struct fs_conf *old, const struct fs_conf *nc,
			 const char *const *ncg, size_t *by_cg, size_t *by_name)
{
	const char **oc = cgroup_list(old);
	const char **on = name_list(old), **nn = name_list(nc);
	int r = -ENOMEM;

	if (oc && on && nn && fs_list_match(oc, old->n_tenants, ncg, nc->n_tenants, by_cg) == 0 &&
	    fs_list_match(on, old->n_tenants, nn, nc->n_tenants, by_name) == 0)
		r = 0;
	free(oc);
	free(on);
	free(nn);
	return r;
}

/* A refused reload after the sampler was retargeted: back to old's tenants,
 * each where it was (to: list_match.h's inverse), else a new sampler. */
static void sampler_put_back(struct fsd_daemon *d, const struct fs_conf *old, const size_t *to)
{
	const char **oc = cgroup_list(old);
	const struct fs_sampler_ops *ops = d->ops;
	void *sampler = NULL;

	if (oc && d->ops->retarget(d->sampler, old->n_tenants, oc, to) == 0) {
		free(oc);
		return;
	}
	free(oc);
	if (sampler_open(d, old, running_sampler(d), &ops, &sampler) < 0) {
		fsd_err("cannot sample the tenants again after a refused reload");
		return;
	}
	d->ops->close(d->sampler);
	d->ops = ops;
	d->sampler = sampler;
}

int fsd_daemon_reload(struct fsd_daemon *d, uint64_t now_us)
{
	struct fs_conf *nc = NULL, *old = d->conf;
	struct plan_config pc;
	struct est_config ec;
	struct fs_conf_env env;
	struct tenant_arrays ta = {0};
	void *sampler = NULL;
	const struct fs_sampler_ops *ops = d->ops;
	const char **cgroups = NULL;
	size_t *by_cg = NULL, *by_name = NULL, *to = NULL;
	bool retarget, *fresh = NULL;
	const char *what;
	char err[1024];
	int r;

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading %s",
		   (unsigned long long)now_us, d->opt.config_path);
	fsd_conf_env(&d->opt, &env);
	r = fs_conf_load(d->opt.config_path, &env, &nc, err, sizeof(err));
	if (r < 0) {
		fsd_err("reload refused, keeping the running config: %s", err);
		goto out;
	}
	plan_config_for(d, nc, &pc);
	fsd_est_config(nc, &ec);
	what = restart_only(old, nc);
	if (what) {
		fsd_err("reload refused, keeping the running config: %s: changing %s needs a "
			"restart",
			nc->path, what);
		r = -EINVAL;
		goto out;
	}
	r = -ENOMEM;
	cgroups = cgroup_list(nc);
	by_cg = calloc(nc->n_tenants + 1, sizeof(*by_cg));
	by_name = calloc(nc->n_tenants + 1, sizeof(*by_name));
	to = calloc(old->n_tenants + 1, sizeof(*to));
	fresh = calloc(nc->n_tenants + 1, sizeof(*fresh));
	if (!cgroups || !by_cg || !by_name || !to || !fresh ||
	    match_tenants(old, nc, cgroups, by_cg, by_name) < 0 ||
	    tenants_prepare(d, nc, by_name, &ta) < 0) {
		fsd_err("reload refused: out of memory");
		goto out;
	}
	fs_list_inverse(by_cg, nc->n_tenants, to, old->n_tenants);
	retarget = d->ops->retarget && same_resources(old, nc);
	if (!retarget) {
		r = sampler_open(d, nc, running_sampler(d), &ops, &sampler);
		if (r < 0) {
			fsd_err("reload refused: cannot sample the new tenants: %s", strerror(-r));
			goto out;
		}
	}
	/* The sampler first: should the writer fail, a sampler put back wrong
	 * misreads a period, a writer put back wrong would write the wrong
	 * cgroups. */
	if (retarget && d->ops->retarget(d->sampler, nc->n_tenants, cgroups, by_cg) < 0) {
		fsd_err("reload refused: out of memory");
		r = -ENOMEM;
		goto out;
	}
	if (d->writer && fs_writer_set_tenants(d->writer, nc->n_tenants, cgroups, by_cg) < 0) {
		fsd_err("reload refused: out of memory");
		if (retarget)
			sampler_put_back(d, old, to);
		r = -ENOMEM;
		goto out;
	}
	d->conf = nc; /* the arrays' cgroup names point into nc */
	tenants_commit(d, &ta, nc->n_tenants);
	/* the writer's backends: tenants_commit made the new pub.t */
	if (choose_backends(d, nc) < 0)
		fsd_warn("reload: out of memory choosing backends; new tenants use cgroupfs");
	/* Tenants dropped by the reload get their original values back. */
	for (size_t j = 0; d->writer && j < old->n_tenants; j++)
		if (to[j] == FS_LIST_NEW &&
		    fs_writer_restore_cgroup(d->writer, old->tenants[j].cgroup) < 0)
			fsd_log(LOG_WARNING, old->tenants[j].name, NULL, old->tenants[j].cgroup,
				"could not restore %s of dropped tenant %s", old->tenants[j].cgroup,
				old->tenants[j].name);
	if (d->writer && nc->agent.enforce == FS_ENFORCE_OFF &&
	    old->agent.enforce != FS_ENFORCE_OFF && fs_writer_restore(d->writer) < 0)
		fsd_warn("enforce=off: some original values could not be restored yet");
	if (!retarget) {
		d->ops->close(d->sampler);
		d->ops = ops;
		d->sampler = sampler;
		sampler = NULL;
		d->ops->sample(d->sampler, now_us, d->ta.samples); /* new baseline */
	}
	d->pcfg = pc;
	d->ecfg = ec;
	d->pub.pcfg = pc;
	nc = old;
	tmpl_watch_open(d);
	if (retarget) {
		d->ccfg.busy = d->pcfg.busy; /* the disks' contention state stays */
		for (size_t j = 0; j < d->n; j++)
			fresh[j] = by_cg[j] == FS_LIST_NEW;
	} else {
		disks_reset(d, now_us);
	}
	fsd_check_host(d->conf, &d->paths, retarget ? fresh : NULL, check_warn, NULL);
	if (d->released)
		fsd_info("reload: enforcing again after fairctl release");
	d->released = false;
	fsd_info("reloaded %s: %zu tenants, policy %s, enforce %s", d->conf->path, d->n,
		 fs_conf_policy_name(d->conf->agent.policy),
		 fs_enforce_name(d->conf->agent.enforce));
	r = 0;
out:
	if (sampler)
		ops->close(sampler);
	tenant_arrays_free(&ta);
	free(cgroups);
	free(by_cg);
	free(by_name);
	free(to);
	free(fresh);
	fs_conf_free(nc);
	sd_notifyf(0, "READY=1\nSTATUS=%s",
		   r < 0 ? "reload failed, running config kept" : "reloaded");
	return r;
}

int fsd_daemon_stop(struct fsd_daemon *d)
{
	int r;

	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
	if (!d->writer || d->conf->agent.on_exit != FS_ON_EXIT_RESTORE)
		return 0;
	r = fs_writer_restore(d->writer);
	if (r < 0)
		fsd_err(
		    "restoring original cgroup values: %s (left in %s for fairshared --release)",
		    strerror(-r), d->conf->agent.state_dir);
	else
		fsd_info("restored the original cgroup values");
	return r;
}

const struct fs_conf *fsd_daemon_conf(const struct fsd_daemon *d)
{
	return d->conf;
}

void fsd_daemon_log_started(const struct fsd_daemon *d)
{
	fsd_info("started: %zu tenants, policy %s, enforce %s, interval %llu ms%s", d->n,
		 fs_conf_policy_name(d->conf->agent.policy),
		 fs_enforce_name(d->conf->agent.enforce),
		 (unsigned long long)(d->conf->agent.interval_us / 1000),
		 d->opt.dry_run ? ", dry-run: nothing is written" : "");
}

unsigned fsd_daemon_check_backends(const struct fsd_daemon *d, fsd_check_report_fn report,
				   void *ctx)
{
	unsigned problems = 0;

	for (size_t i = 0; i < d->n; i++) {
		const struct fs_backend_choice *b = &d->ta.pub[i].backend;
		char msg[FS_BACKEND_REASON_MAX + FS_NAME_MAX + 16];

		if (b->backend != FS_BACKEND_NONE)
			continue;
		snprintf(msg, sizeof(msg), "tenant %s: %s", d->conf->tenants[i].name, b->reason);
		report(ctx, d->conf->tenants[i].name, d->conf->tenants[i].cgroup, msg);
		problems |= FSD_CHECK_NO_BACKEND;
	}
	return problems;
}
