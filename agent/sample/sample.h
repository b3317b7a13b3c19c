/* SPDX-License-Identifier: MIT */
/*
 * Sampling: per tenant per period, what each tenant used.
 *
 * A backend is an ops struct (open/sample/close) so that an eBPF backend can
 * plug in next to the cgroupfs one and fill what cgroupfs cannot see
 * (runqueue wait, network bytes). Any number a backend cannot provide is NAN
 * ("unknown"); check with isnan(). A rate over the period is NAN on the first
 * sample of a cgroup and on the period after a counter went backwards (the
 * cgroup was recreated): the baseline is reset then, and `reset` is set.
 *
 * Units: cores = CPU-seconds per wall second; bytes; bytes/s; ops/s; counts
 * per period; microseconds per period; PSI averages in percent (0..100).
 */
#ifndef FAIRSHARE_SAMPLE_H
#define FAIRSHARE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resource.h"
#include "agent_log.h"

/* One pressure file over the period. */
struct fs_psi_sample {
	double some_avg10; /* percent, kernel's 10 s average when last read
			      (decayed since for a quiet tenant) */
	double full_avg10; /* percent; NAN when the kernel has no "full" line */
	/* stall time per period, microseconds: the delta since the file was
	 * last read, scaled to this period; NAN in a period that did not read
	 * it (fs_sampler_config.slow_every_us) */
	double some_us;
	double full_us; /* microseconds, as some_us; NAN without "full" */
};

struct fs_io_sample {
	double rbps, wbps;   /* bytes/s over the period */
	double riops, wiops; /* completed ops/s over the period */
};

struct fs_tenant_sample {
	bool present; /* the cgroup exists; false: every other field is NAN/0 */
	bool reset;   /* baseline (re)started this period: rates and deltas NAN */

	/* cpu.stat */
	double cpu_cores;		/* usage_usec delta / period: cores */
	double cpu_throttled_us;	/* throttled_usec delta, microseconds in the period */
	double cpu_nr_throttled;	/* nr_throttled delta, count in the period */
	double cpu_nr_periods;		/* nr_periods delta, count in the period */
	double cpu_runq_wait;		/* runqueue wait, cores-equivalent (wait-seconds per
					   second); NAN for cgroupfs (eBPF only) */
	double cpu_runq_wait_preempted; /* the part of it before runs that ended by
					   preemption: unmet CPU demand (eBPF only) */

	/* memory.current: the gauge at sample time; memory.stat's: at its last
	 * read (fs_sampler_config.slow_every_us); bytes */
	double mem_current;
	double mem_anon, mem_file;
	double mem_active_anon, mem_inactive_anon;
	double mem_active_file, mem_inactive_file;

	/* memory.stat workingset_refault_anon + _file: bytes evicted earlier
	 * and faulted back in (pages x page size) per period, at the rate
	 * between the last two reads of memory.stat; the working set did not
	 * fit where it was */
	double mem_refault_bytes;

	/* memory.events: deltas in the period, counts */
	double mem_ev_high, mem_ev_max, mem_ev_oom, mem_ev_oom_kill;

	/* *.pressure; all NAN when the kernel has no PSI (CONFIG_PSI=n or psi=0) */
	struct fs_psi_sample psi_cpu, psi_mem, psi_io;

	/* io.stat, one per configured disk, same order as fs_sampler_config.disks */
	struct fs_io_sample io[FS_MAX_DISKS];

	/* network bytes/s over the period; NAN for cgroupfs (eBPF only) */
	double net_rx_bps, net_tx_bps;
};

struct fs_sampler_config {
	const char *cgroup_root; /* directory the cgroup paths are relative to */
	size_t n_tenants;
	const char *const *cgroups;    /* [n_tenants] normalised relative paths */
	size_t n_disks;		       /* <= FS_MAX_DISKS */
	const struct fs_devnum *disks; /* [n_disks] whole disks, as in io.stat */
	fs_log_fn log;		       /* may be NULL */
	void *log_ctx;
	/* procfs mount, for per-task files (the bpf sampler reads
	 * PID/schedstat under it); NULL or "" = FS_DEFAULT_PROCFS_ROOT
	 * (model/paths.h). The cgroupfs sampler does not use it. */
	const char *procfs_root;
	/* fds the cgroupfs sampler may keep open between periods (1 + 7 per
	 * tenant, 1 + 4 when not all fit; a tenant beyond it opens its files
	 * every period); 0 = the
	 * default, derived from RLIMIT_NOFILE at open, which also caps it
	 * (see sample_cgroupfs.c) */
	size_t max_open_files;
	/* the cgroupfs sampler reads a tenant's slow files, memory.stat and
	 * *.pressure, at most about this often (0 = every sample); between
	 * reads it reports the last avg10 values and memory.stat gauges, the
	 * last refault rate, and NAN for some_us/full_us (see
	 * sample_cgroupfs.c) */
	uint64_t slow_every_us;
	/* a quiet tenant, one whose cpu.stat shows no CPU used since the
	 * previous sample, has its other files read only about this often
	 * (0 = every sample); between reads the cgroupfs sampler reports the
	 * last gauges, zero IO rates and pressure averages decayed as the
	 * kernel's (see quiet and psi_decay in sample_cgroupfs.c) */
	uint64_t quiet_every_us;
};

struct fs_sampler_ops {
	const char *name; /* "cgroupfs", "bpf" */
	/* Copies what it needs from cfg. *state is the backend's. 0 or -errno. */
	int (*open)(void **state, const struct fs_sampler_config *cfg);
	/*
	 * Fills out[0..n_tenants-1]. now_us is a CLOCK_MONOTONIC time in
	 * microseconds (the caller passes it so tests control the period).
	 * A vanished cgroup is not an error (present = false). Returns 0, or
	 * -errno only when nothing could be sampled (e.g. root unreadable).
	 */
	int (*sample)(void *state, uint64_t now_us, struct fs_tenant_sample *out);
	void (*close)(void *state);
	/*
	 * Optional (NULL: none). The directory of tenant t that the backend
	 * keeps open, as found by the last sample, and its inode in *ino; -1
	 * when it keeps none or its cgroup path is not `cgroup`. The fd stays
	 * the backend's (never closed by the caller) and valid until the
	 * next sample or close. The writer uses it instead of opening the
	 * cgroup again by path (fs_writer_opts.dir_fn).
	 */
	int (*dirfd)(void *state, size_t t, const char *cgroup, uint64_t *ino);
	/*
	 * Optional (NULL: none). An fd of `file` in that same directory that
	 * the backend keeps open for reading (pread from offset 0), or -1.
	 * Same ownership and lifetime as dirfd's. The writer reads
	 * memory.current through it (fs_writer_opts.file_fn).
	 */
	int (*file_fd)(void *state, size_t t, const char *cgroup, const char *file);
	/*
	 * Optional (NULL: the caller opens a new sampler instead). Only the
	 * tenants changed (a template's cgroup came or went): new tenant j of
	 * n, cgroups[j], is old tenant from[j] (list_match.h; FS_LIST_NEW: a
	 * new one). A kept tenant keeps its open files and its counters'
	 * baseline, so its next rates span the whole period; a new one starts
	 * as on the first sample; a dropped one is closed. With 10,000 tenants
	 * this is what keeps a login from costing more than a period. 0, or
	 * -ENOMEM with the sampler as it was.
	 */
	int (*retarget)(void *state, size_t n, const char *const *cgroups, const size_t *from);
};

extern const struct fs_sampler_ops fs_sampler_cgroupfs;

/*
 * The open files the writer may keep (fs_writer_opts.max_open_files): what
 * the cgroupfs sampler's budget (the soft RLIMIT_NOFILE less a reserve)
 * leaves when every one of n_tenants keeps its directory and all its files
 * open (9; 8 when memory.events is watched, as it is with inotify). The
 * sampler's come first: each of its fds saves an open and a close every
 * period, a written file's only when its value changes.
 */
size_t fs_cgroupfs_writer_fds(size_t n_tenants);

/* Sets every double of s to NAN and the bools to false. */
void fs_tenant_sample_unknown(struct fs_tenant_sample *s);

#endif /* FAIRSHARE_SAMPLE_H */
