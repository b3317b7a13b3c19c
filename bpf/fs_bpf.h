/* SPDX-License-Identifier: MIT */
/*
 * eBPF counters per cgroup v2: what cgroupfs cannot tell on its own
 * (runqueue wait = unmet CPU demand, network bytes, block I/O per submitter).
 *
 * Every counter is cumulative since fs_bpf_open() and per cgroup; a tenant is
 * a subtree, summed on read. Counters of a cgroup can go backwards when a
 * child cgroup is removed (it is no longer walked) or its map entry is
 * evicted (LRU maps, sized by max_cgroups): treat a decrease as a reset.
 *
 * cpu_ns includes the running part of runs in progress (read from
 * PID/schedstat under the procfs root, so that procfs must show the host's
 * pid namespace).
 *
 * Functions return 0 or a negative errno and write a message with context
 * into err (may be NULL). On failure the caller falls back to cgroupfs.
 * A handle is not thread-safe; use one per thread or lock around it.
 * FS_BPF_LIBBPF_LOG=1 in the environment prints libbpf's own log to stderr.
 */
#ifndef FAIRSHARE_FS_BPF_H
#define FAIRSHARE_FS_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FS_BPF_SCHED (1u << 0) /* cpu_ns, wait_ns (tp_btf sched_switch) */
#define FS_BPF_BLK   (1u << 1) /* devs[] (tp_btf block_bio_queue) */
#define FS_BPF_NET   (1u << 2) /* rx/tx (cgroup_skb at net_attach_path) */
#define FS_BPF_ALL   (FS_BPF_SCHED | FS_BPF_BLK | FS_BPF_NET)

#define FS_BPF_MAX_DEVS 16 /* whole disks reported per read */

struct fs_bpf_config {
	unsigned int programs; /* FS_BPF_* mask, nonzero */
	uint32_t max_cgroups;  /* cgroups tracked at once (LRU beyond); 0: 4096 */
	uint32_t max_devs;     /* disks per cgroup budgeted in the blk map; 0: 4 */
	/* cgroup v2 directory where cgroup_skb is attached (the tenants' common
	 * ancestor); required with FS_BPF_NET */
	const char *net_attach_path;
	/* cheaper wait_ns that misses wait credited while a queued task
	 * migrates: 1-17 % low under load (see sched.bpf.c); default exact */
	bool approx_wait;
	/* procfs mount for PID/schedstat (FS_BPF_SCHED; opened once by
	 * fs_bpf_open); NULL or "" = FS_DEFAULT_PROCFS_ROOT (model/paths.h) */
	const char *procfs_root;
};

struct fs_bpf_dev_io {
	uint32_t major, minor; /* whole disk, as in io.stat */
	uint64_t rbytes, wbytes;
	uint64_t rios, wios; /* bios submitted */
};

struct fs_bpf_counters {
	uint64_t cpu_ns;  /* on-CPU time */
	uint64_t wait_ns; /* runnable but waiting for a CPU */
	/* the part of wait_ns before runs that ended by preemption (or
	 * throttling, or a yield): wait of threads that wanted the CPU all along,
	 * as opposed to wakeup latency of threads that then slept again */
	uint64_t pwait_ns;
	uint64_t rx_bytes, rx_packets;
	uint64_t tx_bytes, tx_packets;
	unsigned int ndevs;  /* used entries of devs[], sorted by major:minor */
	bool devs_truncated; /* more than FS_BPF_MAX_DEVS disks were seen */
	struct fs_bpf_dev_io devs[FS_BPF_MAX_DEVS];
};

struct fs_bpf;

/* Load and attach the programs in cfg->programs. Needs root (CAP_BPF,
 * CAP_PERFMON, CAP_SYS_ADMIN for cgroup attach) and kernel BTF. */
int fs_bpf_open(const struct fs_bpf_config *cfg, struct fs_bpf **out, char *err, size_t errlen);

/* Detach and free everything; no program or map of this handle survives. NULL ok. */
void fs_bpf_close(struct fs_bpf *b);

/* The FS_BPF_* programs this handle has attached. */
unsigned int fs_bpf_programs(const struct fs_bpf *b);

/* The cgroup id of directory path (relative to dirfd; "" or NULL = dirfd itself). */
int fs_bpf_cgroup_id(int dirfd, const char *path, uint64_t *id, char *err, size_t errlen);

/* Counters of one cgroup, without its descendants. */
int fs_bpf_read_cgroup(struct fs_bpf *b, uint64_t cgid, struct fs_bpf_counters *out, char *err,
		       size_t errlen);

/* Counters summed over the cgroup at path (relative to dirfd, or absolute;
 * "" or NULL = dirfd itself) and all its descendants. */
int fs_bpf_read_subtree(struct fs_bpf *b, int dirfd, const char *path, struct fs_bpf_counters *out,
			char *err, size_t errlen);

/* Context switches whose switch-in the sched program did not see (first
 * switch per CPU after load, or a switch that bypassed the tracepoint); their
 * run is charged from CFS's own per-run counter instead. Diagnostics. */
uint64_t fs_bpf_sched_unseen(const struct fs_bpf *b);

/* Kernel run statistics of one program (with kernel.bpf_stats_enabled=1). */
struct fs_bpf_prog_stats {
	char name[16];
	uint32_t id;
	uint64_t run_cnt;
	uint64_t run_time_ns;
};

/* Fill up to max entries, one per attached program; *n = entries filled. */
int fs_bpf_prog_stats(struct fs_bpf *b, struct fs_bpf_prog_stats *st, size_t max, size_t *n,
		      char *err, size_t errlen);

#endif
