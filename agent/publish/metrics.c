/* SPDX-License-Identifier: MIT */
/* Prometheus textfile output of the published state (see metrics.h). */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control_status.h"

/* Prometheus numbers: NaN, +Inf and -Inf are valid sample values. */
static void num(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.10g", v);
}

/* Label values escape backslash, double quote and newline. */
static void label(FILE *f, const char *key, const char *v, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", key);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample(FILE *f, const char *name, const char *tenant, const char *resource, double v)
{
	fputs(name, f);
	if (tenant || resource) {
		fputc('{', f);
		if (tenant)
			label(f, "tenant", tenant, true);
		if (resource)
			label(f, "resource", resource, !tenant);
		fputc('}', f);
	}
	fputc(' ', f);
	num(f, v);
	fputc('\n', f);
}

static double u64(uint64_t v)
{
	return v == FS_VALUE_MAX ? INFINITY : (double)v;
}

static void daemon_metrics(FILE *f, const struct fsd_published *p)
{
	head(f, "fairshare_info", "gauge", "Policy and enforcement mode in force (always 1).");
	fprintf(f, "fairshare_info{");
	label(f, "policy", p->policy ? p->policy : "unknown", true);
	label(f, "mode", plan_mode_name(p->mode), false);
	fprintf(f, "} 1\n");
	head(f, "fairshare_dry_run", "gauge", "1 when the daemon runs with --dry-run.");
	sample(f, "fairshare_dry_run", NULL, NULL, p->dry_run);
	head(f, "fairshare_released", "gauge",
	     "1 after fairctl release: originals restored, not enforcing.");
	sample(f, "fairshare_released", NULL, NULL, p->released);
	head(f, "fairshare_interval_seconds", "gauge", "Control period.");
	sample(f, "fairshare_interval_seconds", NULL, NULL, (double)p->interval_us / 1e6);
	head(f, "fairshare_periods_total", "counter", "Control periods completed.");
	sample(f, "fairshare_periods_total", NULL, NULL, (double)p->period);
	head(f, "fairshare_failed_periods_total", "counter",
	     "Control periods that failed (sampling or solving).");
	sample(f, "fairshare_failed_periods_total", NULL, NULL, (double)p->failed_periods_total);
	head(f, "fairshare_cgroup_writes_total", "counter", "cgroup files written.");
	sample(f, "fairshare_cgroup_writes_total", NULL, NULL, (double)p->written_total);
	head(f, "fairshare_cgroup_write_failures_total", "counter",
	     "cgroup file writes that failed.");
	sample(f, "fairshare_cgroup_write_failures_total", NULL, NULL, (double)p->failed_total);
	head(f, "fairshare_cgroup_drift_corrections_total", "counter",
	     "cgroup files found changed by someone else and written again.");
	sample(f, "fairshare_cgroup_drift_corrections_total", NULL, NULL, (double)p->drift_total);
}

/* Capacity in the resource's base unit, one metric per unit family. */
static const char *capacity_metric(enum fs_res_kind k)
{
	if (k == FS_RES_CPU)
		return "fairshare_resource_capacity_cores";
	if (k == FS_RES_MEMORY)
		return "fairshare_resource_capacity_bytes";
	return fs_res_counts_ops(k) ? "fairshare_resource_capacity_operations_per_second"
				    : "fairshare_resource_capacity_bytes_per_second";
}

static void resource_metrics(FILE *f, const struct fsd_published *p)
{
	const struct fs_resources *res = &p->pcfg.res;
	static const enum fs_res_kind fam[] = {FS_RES_CPU, FS_RES_MEMORY, FS_RES_IO_RBPS,
					       FS_RES_IO_RIOPS};

	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		const char *name = capacity_metric(fam[k]);
		bool any = false;

		for (size_t r = 0; r < res->n; r++) {
			if (strcmp(capacity_metric(res->kind[r]), name))
				continue;
			if (!any)
				head(f, name, "gauge", "Capacity shared between the tenants.");
			any = true;
			sample(f, name, NULL, res->name[r], res->capacity[r]);
		}
	}
	head(f, "fairshare_resource_saturated", "gauge",
	     "1 when the allocation fills the resource (one kind of bottleneck).");
	for (size_t r = 0; r < res->n; r++)
		sample(f, "fairshare_resource_saturated", NULL, res->name[r], p->saturated[r]);
	head(f, "fairshare_resource_bottleneck", "gauge",
	     "1 when the resource is a bottleneck (saturated, contended or busy): limits are "
	     "written on it.");
	for (size_t r = 0; r < res->n; r++)
		sample(f, "fairshare_resource_bottleneck", NULL, res->name[r],
		       fsd_resource_state(p, r) != NULL);
	head(f, "fairshare_resource_allocated_ratio", "gauge",
	     "Sum of the tenants' allocations over capacity.");
	for (size_t r = 0; r < res->n; r++) {
		double a = 0;

		for (size_t i = 0; i < p->n_tenants; i++)
			if (p->t[i].plan.in_problem)
				a += p->t[i].plan.alloc[r];
		sample(f, "fairshare_resource_allocated_ratio", NULL, res->name[r],
		       a / res->capacity[r]);
	}
	head(f, "fairshare_resource_utilization_ratio", "gauge",
	     "Measured use of the tenants over capacity.");
	for (size_t r = 0; r < res->n; r++) {
		double u = 0;

		for (size_t i = 0; i < p->n_tenants; i++)
			if (p->t[i].present)
				u += p->t[i].usage[r];
		sample(f, "fairshare_resource_utilization_ratio", NULL, res->name[r],
		       u / res->capacity[r]);
	}
}

enum tenant_value {
	TV_PRESENT,
	TV_WEIGHT,
	TV_ENTITLEMENT,
	TV_GRANTED,
	TV_SHARE,
	TV_GAP,
	TV_PROMOTED,
	TV_CPU_QUOTA,
	TV_CPU_PERIOD,
	TV_CPU_WEIGHT,
	TV_IO_WEIGHT,
	TV_MEM_HIGH,
	TV_MEM_MAX,
};

static const struct {
	enum tenant_value v;
	const char *name, *help;
} tenant_metrics[] = {
    {TV_PRESENT, "fairshare_tenant_present", "1 when the tenant's cgroup exists."},
    {TV_WEIGHT, "fairshare_tenant_weight", "Weight in force."},
    {TV_ENTITLEMENT, "fairshare_tenant_entitlement_ratio", "Weight over the sum of weights."},
    {TV_GRANTED, "fairshare_tenant_granted_ratio", "Fraction of its demand granted."},
    {TV_SHARE, "fairshare_tenant_share", "The policy's share (dominant share or NJC grant)."},
    {TV_GAP, "fairshare_tenant_gap_ratio",
     "Minimal gap: entitled minus consumed share on its bottlenecks."},
    {TV_PROMOTED, "fairshare_tenant_promoted", "1 when the minimal-gap rule promotes it."},
    {TV_CPU_QUOTA, "fairshare_tenant_cpu_quota_seconds", "cpu.max quota (+Inf = max)."},
    {TV_CPU_PERIOD, "fairshare_tenant_cpu_period_seconds", "cpu.max period."},
    {TV_CPU_WEIGHT, "fairshare_tenant_cpu_weight", "cpu.weight planned."},
    {TV_IO_WEIGHT, "fairshare_tenant_io_weight", "io.weight planned."},
    {TV_MEM_HIGH, "fairshare_tenant_memory_high_bytes", "memory.high planned (+Inf = max)."},
    {TV_MEM_MAX, "fairshare_tenant_memory_max_bytes", "memory.max planned (+Inf = max)."},
};

static double tenant_value(const struct fsd_published *p, size_t i, enum tenant_value v)
{
	const struct plan_tenant *t = &p->t[i].plan;

	switch (v) {
	case TV_PRESENT:
		return p->t[i].present;
	case TV_WEIGHT:
		return p->t[i].weight;
	case TV_ENTITLEMENT:
		return fsd_entitlement(p, i);
	case TV_GRANTED:
		return t->x;
	case TV_SHARE:
		return t->share;
	case TV_GAP:
		return t->gap;
	case TV_PROMOTED:
		return t->promoted;
	case TV_CPU_QUOTA:
		return u64(t->cpu_quota_usec) / 1e6;
	case TV_CPU_PERIOD:
		return (double)t->cpu_period_usec / 1e6;
	case TV_CPU_WEIGHT:
		return (double)t->cpu_weight;
	case TV_IO_WEIGHT:
		return (double)t->io_weight;
	case TV_MEM_HIGH:
		return u64(t->mem_high);
	case TV_MEM_MAX:
		return u64(t->mem_max);
	}
	return NAN;
}

static void tenant_vector(FILE *f, const struct fsd_published *p, const char *name,
			  const char *help, size_t offset)
{
	const struct fs_resources *res = &p->pcfg.res;

	head(f, name, "gauge", help);
	for (size_t i = 0; i < p->n_tenants; i++)
		for (size_t r = 0; r < res->n; r++) {
			const double *v = (const double *)((const char *)&p->t[i] + offset);

			sample(f, name, p->t[i].name, res->name[r], v[r] / res->capacity[r]);
		}
}

static void tenant_all(FILE *f, const struct fsd_published *p)
{
	const struct fs_resources *res = &p->pcfg.res;

	for (size_t m = 0; m < sizeof(tenant_metrics) / sizeof(tenant_metrics[0]); m++) {
		head(f, tenant_metrics[m].name, "gauge", tenant_metrics[m].help);
		for (size_t i = 0; i < p->n_tenants; i++)
			sample(f, tenant_metrics[m].name, p->t[i].name, NULL,
			       tenant_value(p, i, tenant_metrics[m].v));
	}
	tenant_vector(f, p, "fairshare_tenant_demand_ratio",
		      "Estimated demand over the resource's capacity.",
		      offsetof(struct fsd_tenant_pub, est.demand));
	tenant_vector(f, p, "fairshare_tenant_allocation_ratio",
		      "Fair allocation over the resource's capacity.",
		      offsetof(struct fsd_tenant_pub, plan.alloc));
	tenant_vector(f, p, "fairshare_tenant_usage_ratio",
		      "Measured use over the resource's capacity.",
		      offsetof(struct fsd_tenant_pub, usage));
	tenant_vector(f, p, "fairshare_tenant_limit_ratio",
		      "Limit after work conservation over capacity (+Inf = none).",
		      offsetof(struct fsd_tenant_pub, plan.limit));
	head(f, "fairshare_tenant_bottleneck", "gauge",
	     "1 when the resource is one of the tenant's bottlenecks.");
	for (size_t i = 0; i < p->n_tenants; i++)
		for (size_t r = 0; r < res->n; r++)
			sample(f, "fairshare_tenant_bottleneck", p->t[i].name, res->name[r],
			       fsd_is_bottleneck(p, i, r));
}

int fsd_metrics_print(FILE *f, const struct fsd_published *p)
{
	daemon_metrics(f, p);
	resource_metrics(f, p);
	tenant_all(f, p);
	return ferror(f) ? -EIO : 0;
}

int fsd_metrics_write(const char *path, const struct fsd_published *p, char *err, size_t errlen)
{
	size_t len = strlen(path);
	char *tmp = malloc(len + 16);
	const char *what = "";
	FILE *f = NULL;
	int fd = -1, r;

	if (!tmp) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	/* same directory: rename must not cross file systems */
	snprintf(tmp, len + 16, "%s.tmp.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		what = "creating a temporary file";
		goto fail;
	}
	/* textfile collectors run unprivileged: world-readable, like node_exporter's */
	if (fchmod(fd, 0644) < 0) {
		r = -errno;
		what = "chmod";
		goto fail;
	}
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		what = "fdopen";
		goto fail;
	}
	fd = -1;
	r = fsd_metrics_print(f, p);
	if (r == 0 && fflush(f) != 0)
		r = -errno;
	if (r == 0 && fsync(fileno(f)) < 0)
		r = -errno;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	f = NULL;
	if (r < 0) {
		what = "writing";
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		r = -errno;
		what = "renaming into place";
		goto fail;
	}
	free(tmp);
	return 0;
fail:
	snprintf(err, errlen, "%s: %s: %s", path, what, strerror(-r));
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return r;
}
