/* SPDX-License-Identifier: MIT */
/*
 * The eBPF sampling backend (issue 4): wraps an inner sampler (cgroupfs:
 * memory, PSI, throttling, io.stat stay its job) and adds what only eBPF
 * sees, per tenant subtree (bpf/fs_bpf.h):
 *  - cpu_runq_wait: runqueue wait in cores (wait-seconds per second), and
 *    cpu_runq_wait_preempted, its part before runs that ended with the thread
 *    still runnable (preempted, throttled): with cpu_cores, the mean number
 *    of threads that wanted a CPU, which the estimator uses as its CPU
 *    demand (estimate.h). Wait after a wakeup of a thread that then sleeps
 *    again (fio, a server) is latency, not demand, and stays out of it;
 *  - net_rx_bps, net_tx_bps: bytes/s through the tenants' common ancestor
 *    (cgroup_skb attached there once);
 *  - block bytes per configured disk, used only to cross-check io.stat
 *    (io.stat stays authoritative): a disagreement beyond the tolerance is a
 *    rate-limited warning.
 *
 * A BPF counter that goes backwards (cgroup removed from the walk, LRU
 * eviction) restarts that tenant's BPF baseline: its BPF fields are NAN for
 * one period while the cgroupfs fields flow on.
 *
 * Everything loaded is detached and freed by close (and by the kernel when
 * the process dies: bpf_link fds).
 */
#ifndef FAIRSHARE_AGENT_SAMPLE_BPF_H
#define FAIRSHARE_AGENT_SAMPLE_BPF_H

#include <stdbool.h>
#include <stddef.h>

#include "agent_conf.h"
#include "bpf/fs_bpf.h"
#include "sample.h"

/* The fs_bpf calls the sampler makes, injectable so tests run without root. */
struct fs_bpf_ops {
	int (*open)(const struct fs_bpf_config *cfg, struct fs_bpf **out, char *err, size_t errlen);
	void (*close)(struct fs_bpf *b);
	int (*read_subtree)(struct fs_bpf *b, int dirfd, const char *path,
			    struct fs_bpf_counters *out, char *err, size_t errlen);
};

/* The real library, or NULL when fairshare was built without eBPF. */
extern const struct fs_bpf_ops *const fs_bpf_ops_default;

struct fs_sampler_bpf_opts {
	unsigned programs;		    /* FS_BPF_* mask; 0 = FS_BPF_SCHED */
	bool approx_wait;		    /* fs_bpf_config.approx_wait */
	const struct fs_bpf_ops *bpf;	    /* NULL = fs_bpf_ops_default */
	const struct fs_sampler_ops *inner; /* NULL = fs_sampler_cgroupfs */
	/* io.stat cross-check: warn when BPF and io.stat bytes of a period
	 * differ by more than max(blk_rel_tol * larger, blk_abs_tol bytes);
	 * 0 = defaults 0.25 and 1 MiB. At most one warning per warn_interval_us
	 * (0 = 60 s). */
	double blk_rel_tol, blk_abs_tol;
	uint64_t warn_interval_us;
};

/* The BPF sampler with default options (all of them zero). */
extern const struct fs_sampler_ops fs_sampler_bpf;

/* Opens the BPF sampler; a failure is logged through cfg->log at LOG_ERR
 * with the reason. o may be NULL (defaults). 0 or -errno. */
int fs_sampler_bpf_open(void **state, const struct fs_sampler_config *cfg,
			const struct fs_sampler_bpf_opts *o);

/*
 * Picks the backend for `[agent] sampler`: cgroupfs opens the inner sampler;
 * bpf opens the BPF sampler and fails when it cannot load; auto tries BPF
 * and, when it cannot load, logs once (warning, with the reason) and opens
 * the inner sampler. *ops is the backend that owns *state. 0 or -errno.
 */
int fs_sampler_open_pick(enum fs_conf_sampler mode, const struct fs_sampler_config *cfg,
			 const struct fs_sampler_bpf_opts *o, const struct fs_sampler_ops **ops,
			 void **state);

/* The deepest existing directory that contains every tenant cgroup, as an
 * absolute path under cfg->cgroup_root (the root itself when none deeper):
 * where cgroup_skb is attached. 0 or -ENAMETOOLONG. */
int fs_sampler_bpf_common_ancestor(const struct fs_sampler_config *cfg, char *out, size_t len);

#endif /* FAIRSHARE_AGENT_SAMPLE_BPF_H */
