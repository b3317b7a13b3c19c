/* SPDX-License-Identifier: MIT */
/*
 * A generated fake host for the period benchmark (bench_period.c): in one
 * mkdtemp directory, N tenant cgroups with every file the cgroupfs sampler
 * reads and the writer writes, a minimal fake sysfs for the one disk, a
 * fake procfs with the host's memory (meminfo, pressure/memory), a state
 * directory and a fairshared config that names them all. Nothing of the
 * host is read: cpu, memory and the disk's capacities are given explicitly,
 * the disk resolves through the fake sysfs, and the fake meminfo's total is
 * the configured memory (the real host's, 24 GiB here, made every tree of
 * more than 24 tenants look short of memory, so the plan held every tenant
 * with memory.high and rewrote it as usage drifted).
 *
 * Between periods fake_tree_advance() moves the counters the way a busy
 * host would (deterministic in the seed): CPU-bound tenants burn cores (up
 * to the cpu.max the daemon wrote, and count throttling beyond it), IO-bound
 * tenants read and write (up to their io.max), mixed tenants do some of
 * both, idle ones do nothing; memory drifts; a few tenants change kind now
 * and then.
 */
#ifndef FAIRSHARE_BENCH_FAKE_TREE_H
#define FAIRSHARE_BENCH_FAKE_TREE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fake_kind {
	FAKE_CPU,   /* wants 1-3 cores, little IO */
	FAKE_IO,    /* wants disk bandwidth, little CPU */
	FAKE_MIXED, /* some of both */
	FAKE_IDLE,  /* counters do not move */
};

struct fake_tenant {
	enum fake_kind kind;
	double want_cores;	     /* wanted, before cpu.max */
	double want_rbps, want_wbps; /* bytes/s, before io.max */
	uint64_t usage_usec, user_usec, system_usec;
	uint64_t nr_periods, nr_throttled, throttled_usec;
	uint64_t rbytes, wbytes, rios, wios;
	uint64_t mem_current;
	uint64_t psi_cpu_total, psi_mem_total, psi_io_total; /* "some" totals, us */
	double psi_cpu_avg, psi_io_avg;			     /* avg10, percent */
	double weight;					     /* in the config */
	bool gone; /* its cgroup is removed (fake_tree_toggle) */
};

/* How the config names the tenants. */
enum fake_conf {
	FAKE_CONF_TENANTS,  /* one [tenant.tNNNN] section per cgroup */
	FAKE_CONF_TEMPLATE, /* one [template.bench] whose match is every cgroup */
};

struct fake_tree {
	char *dir;		     /* the mkdtemp directory (malloc'd) */
	char cg_root[PATH_MAX];	     /* <dir>/cg: the cgroup_root */
	char sysfs_root[PATH_MAX];   /* <dir>/sys: fs_conf_env.sysfs_root */
	char procfs_root[PATH_MAX];  /* <dir>/proc: fsd_options.procfs_root */
	char state_dir[PATH_MAX];    /* <dir>/state */
	char conf_path[PATH_MAX];    /* <dir>/fairshare.conf */
	unsigned disk_maj, disk_min; /* the fake whole disk */
	double cpu_cores;	     /* capacities written to the config */
	uint64_t mem_total, disk_rbps, disk_wbps;
	size_t n;
	struct fake_tenant *t;
	uint64_t rng;
	double idle; /* share of the tenants drawn idle (0..1) */
};

/* The directory of tenant i relative to cg_root ("fs-bench.slice/t0042.scope"). */
void fake_tree_cgroup(size_t i, char *buf, size_t len);

/*
 * Where trees go when the caller names no directory: $TMPDIR if set, else
 * /dev/shm when writable (tmpfs: in memory like cgroupfs and like the
 * state_dir's default /run/fairshare; on a disk file system every fsync of
 * the state file would also commit the tree's own writes), else /tmp.
 */
const char *fake_tree_default_base(void);

/* Builds the tree for n tenants in a new directory under base (NULL:
 * fake_tree_default_base()), its config as conf says, about a share idle
 * (0..1) of the tenants idle (FAKE_IDLE_DEFAULT: a busy host). 0 or -errno
 * (the partial tree is removed). */
#define FAKE_IDLE_DEFAULT 0.1
int fake_tree_create(struct fake_tree *ft, size_t n, uint64_t seed, const char *base,
		     enum fake_conf conf, double idle);

/* Moves every counter of the tenants present by dt_us of activity, and the
 * host's MemAvailable to the total less what they use. 0 or -errno. */
int fake_tree_advance(struct fake_tree *ft, uint64_t dt_us);

/*
 * Tenant i's cgroup goes away (its directory removed, as rmdir on cgroupfs
 * after the unit stopped) or, when gone, comes back with fresh files (a
 * user logging in again): what a template's matches see on a login node.
 * 0 or -errno.
 */
int fake_tree_toggle(struct fake_tree *ft, size_t i);

/* Reads <cg_root>/<tenant i>/<file> into buf (first line, no newline). 0 or -errno. */
int fake_tree_read(const struct fake_tree *ft, size_t i, const char *file, char *buf, size_t len);

/* rm -rf of the whole directory (never follows symlinks); frees ft. */
void fake_tree_destroy(struct fake_tree *ft);

#endif /* FAIRSHARE_BENCH_FAKE_TREE_H */
