/* SPDX-License-Identifier: MIT */
/*
 * The daemon's configuration: /etc/fairshare/fairshare.conf (INI).
 *
 * fs_conf_load() parses, resolves (auto capacities, devices) and validates in
 * one go and returns a fully built, immutable struct fs_conf, or an error
 * "file:line: message". SIGHUP reload: load the new file into a new struct;
 * only on success swap it in and free the old one.
 *
 * Vector syntax, used by a tenant's demand, min and max keys:
 *     demand = cpu 2, memory 4G, io.disk0 50M/20M, net 100Mbit
 *     max    = cpu 50%, io.disk0 -/10M/-/200
 * A comma-separated list of "RESOURCE AMOUNT":
 *   cpu AMOUNT        cores, or N% of the cpu capacity
 *   memory AMOUNT     size (units.h), or N% of the memory capacity
 *   net AMOUNT        net rate with its mandatory bit/B unit, or N%
 *   io.NAME R/W[/RIOPS/WIOPS]   NAME as in [resources] io.NAME; R and W are
 *                     bytes/s (units.h io rates), RIOPS/WIOPS ops/s; each part
 *                     may be "-" (not given) or N% of that disk's capacity.
 *                     IOPS parts are only allowed when the disk has IOPS
 *                     capacities.
 * A resource may appear once per vector. Amounts not given are NAN in the
 * resolved arrays (demand: infer it; min: no floor; max: no cap).
 *
 * Units of every resolved number are per resource kind (model/resource.h).
 */
#ifndef FAIRSHARE_AGENT_CONF_H
#define FAIRSHARE_AGENT_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "enforce.h"
#include "fleet_conf.h"
#include "paths.h"
#include "resource.h"
#include "units.h"

#define FS_CONF_DEFAULT_PATH "/etc/fairshare/fairshare.conf"

/*
 * Tenant weights, in the config and from `fairctl set-weight`: 1e-6 .. 1e6
 * (the default is 1). Ratios beyond 1e12 only reach the solvers' rounding:
 * at 1e16 to 1 PS-DSF with demand caps handed out 5 of 4 cores (issue 16).
 */
#define FS_CONF_WEIGHT_MIN 1e-6
#define FS_CONF_WEIGHT_MAX 1e6
bool fs_conf_weight_ok(double w);
enum fs_conf_policy {
	FS_CONF_POLICY_PSDSF,
	FS_CONF_POLICY_NJC,
};

/* Where usage comes from (issue 4). */
enum fs_conf_sampler {
	FS_SAMPLER_AUTO,     /* eBPF when it loads, else cgroupfs (logged once) */
	FS_SAMPLER_BPF,	     /* eBPF on top of cgroupfs; a load failure is fatal */
	FS_SAMPLER_CGROUPFS, /* cgroupfs only: runqueue wait and net bytes unknown */
};

/* How the eBPF sched program charges runqueue wait (bpf/sched.bpf.c). */
enum fs_conf_bpf_wait {
	FS_BPF_WAIT_EXACT,  /* per-task baseline: every ns once */
	FS_BPF_WAIT_APPROX, /* the wait just before each run: cheaper, a few % low */
};

enum fs_conf_on_exit {
	FS_ON_EXIT_RESTORE, /* write back every original value */
	FS_ON_EXIT_KEEP,    /* leave our last values in place */
};

struct fs_conf_agent {
	uint64_t interval_us; /* control period, microseconds; default 1 s */
	enum fs_conf_policy policy;
	enum fs_enforce enforce;
	enum fs_conf_on_exit on_exit;
	enum fs_conf_sampler sampler;	/* default auto */
	enum fs_conf_bpf_wait bpf_wait; /* default exact */
	enum fs_backend_mode backend;	/* who writes a tenant's cgroup (model/backend.h);
					   default auto */
	char cgroup_root[PATH_MAX];	/* absolute; default /sys/fs/cgroup */
	char socket[PATH_MAX];		/* control socket; default /run/fairshare/control.sock */
	char state_dir[PATH_MAX];	/* writer state; default /run/fairshare */
	char metrics_file[PATH_MAX];	/* "" = none */
};

struct fs_disk {
	char name[FS_NAME_MAX]; /* NAME of io.NAME */
	char device[PATH_MAX];	/* as written in the file */
	struct fs_devnum dev;	/* resolved whole disk (what io.max/io.stat use) */
	/* Shared (DEVICE BPS [IOPSiops]): one budget for reads and writes,
	 * resources bps [, iops]; else split (DEVICE RBPS WBPS [RIOPS WIOPS]):
	 * resources rbps, wbps [, riops, wiops] (model/resource.h). */
	bool shared;
	double rbps, wbps;	/* split: capacity, bytes/s, > 0; shared: 0 */
	double riops, wiops;	/* split: capacity, ops/s; 0 = not configured */
	double bps, iops;	/* shared: capacity, bytes/s > 0, ops/s (0 = none) */
	int res[FS_DISK_KINDS]; /* resource index per kind - FS_RES_IO_RBPS, -1 if absent */
	int line;		/* source line of its io.NAME key */
};

#define FS_LOGIN_MAX 64 /* a login name, incl. NUL */

/* A [template.NAME] section, and what it matched when the config was loaded. */
struct fs_conf_template {
	char name[FS_NAME_MAX];
	char match[PATH_MAX]; /* the glob, relative to cgroup_root */
	uint64_t sig;	      /* fs_template_sig of every match (template.h) */
	size_t n_matches;
};

struct fs_conf_tenant {
	char name[FS_NAME_MAX]; /* NAME of [tenant.NAME] */
	/* The cgroup need not exist at load time (services start later); a
	 * missing `cgroup` key, nesting or sharing with another tenant is an
	 * error. */
	char *cgroup;	 /* normalised, relative to cgroup_root, no leading/
			    trailing '/', no '.'/'..'; owned (fs_conf_free) */
	double weight;	 /* > 0, default 1 (the policy's phi) */
	bool has_demand; /* a demand key was given */
	/* Per resource index, in the resource's unit (percentages already
	 * resolved against capacity); NAN = not given. */
	double demand[FS_MAX_RES];
	double min[FS_MAX_RES];
	double max[FS_MAX_RES];
	int line; /* source line of the [tenant.NAME] header */
	/* A tenant made by [template.T] for a matching cgroup: T, and for a
	 * user slice the user's login name (conf/template.h); "" otherwise. */
	char template_name[FS_NAME_MAX];
	char login[FS_LOGIN_MAX];
};

struct fs_conf {
	char path[PATH_MAX]; /* file it was read from */
	struct fs_conf_agent agent;

	/* [resources] as written, before building the vector. */
	double cpu_cores;	 /* resolved capacity, cores (auto or given) */
	bool cpu_auto;		 /* cpu = auto */
	uint64_t memory_total;	 /* bytes (auto = MemTotal, or given) */
	bool memory_auto;	 /* memory = auto */
	uint64_t memory_reserve; /* bytes kept for the host; default 0 */
	double net_rate;	 /* bytes/s; 0 = net not configured */

	size_t n_disks;
	struct fs_disk disks[FS_MAX_DISKS];

	/* The resource vector: cpu, memory, then each disk's rbps, wbps
	 * [, riops, wiops] or bps [, iops], then net if configured. memory capacity is
	 * memory_total - memory_reserve. */
	struct fs_resources res;
	int res_cpu;	/* index of cpu (always 0) */
	int res_memory; /* index of memory (always 1) */
	int res_net;	/* index of net, -1 if not configured */

	size_t n_tenants; /* >= 1, or >= 0 when there are templates */
	struct fs_conf_tenant *tenants;

	struct fs_conf_fleet fleet; /* [fleet]; fleet.enabled false without it */
	/* [template.NAME]: the globs whose matches are tenants (in file order);
	 * the daemon scans them again to notice cgroups come and go. */
	size_t n_templates;
	struct fs_conf_template *templates; /* [n_templates] */
};

/* Where auto-detection looks; NULL members select the real system. */
struct fs_conf_env {
	const char *sysfs_root;	 /* NULL: FS_DEFAULT_SYSFS_ROOT (device resolution) */
	const char *procfs_root; /* NULL: FS_DEFAULT_PROCFS_ROOT (meminfo for memory = auto) */
	long ncpus_fallback;	 /* <= 0: sysconf(_SC_NPROCESSORS_ONLN), used when
				    <cgroup_root>/cpuset.cpus.effective is unreadable */
	/* Reads file of the cgroup root (cpuset.cpus.effective for cpu = auto)
	 * into buf, NUL-terminated: 0 or -errno. The daemon passes one that goes
	 * through agent/sys/cgroupfs.h, where all cgroup access lives; NULL: the
	 * root's files are not read (cpu = auto uses the fallback). */
	int (*read_cgroup_root)(const char *cgroup_root, const char *file, char *buf, size_t len);
};

/*
 * Parses, resolves and validates path. On success *out is a new config
 * (free with fs_conf_free) and 0 is returned. On error *out is NULL, err holds
 * "path:line: message" (line omitted for whole-file problems) and a negative
 * errno is returned (-EINVAL for content, -ENOENT etc. for an unreadable file).
 * env may be NULL.
 */
int fs_conf_load(const char *path, const struct fs_conf_env *env, struct fs_conf **out, char *err,
		 size_t errlen);
void fs_conf_free(struct fs_conf *c);

/*
 * Resolves a device ("/dev/vda1", "/dev/mapper/x", "254:1") to the whole disk
 * that io.max accepts: partitions go to their parent, a device-mapper device
 * with exactly one underlying device goes (recursively) to it. Uses
 * <sysfs_root>/dev/block/MAJ:MIN. sysfs_root NULL = "/sys". 0 or -errno with
 * err filled (no file:line prefix).
 */
int fs_conf_resolve_disk(const char *sysfs_root, const char *device, struct fs_devnum *out,
			 char *err, size_t errlen);

/* Normalises a tenant cgroup path into out (see fs_conf_tenant.cgroup):
 * leading, trailing and repeated '/' are dropped ("/a//b/" -> "a/b", always
 * relative to cgroup_root). 0, -EINVAL ('.' or '..' components, control
 * characters, the root itself) or -ENAMETOOLONG. */
int fs_conf_normalize_cgroup(const char *in, char *out, size_t len);

/* "a/b" is "a" or lies inside it. Both normalised. */
bool fs_conf_cgroup_within(const char *inner, const char *outer);

/* Index of the tenant called name, or -1. */
int fs_conf_find_tenant(const struct fs_conf *c, const char *name);

const char *fs_conf_policy_name(enum fs_conf_policy p);	  /* "psdsf", "njc" */
const char *fs_conf_sampler_name(enum fs_conf_sampler s); /* "auto", "bpf", "cgroupfs" */

#endif /* FAIRSHARE_AGENT_CONF_H */
