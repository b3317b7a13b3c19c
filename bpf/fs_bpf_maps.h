/* SPDX-License-Identifier: MIT */
/*
 * Map layouts shared by the BPF programs (bpf/NAME.bpf.c) and their loader
 * (fs_bpf.c). Only fixed-width kernel types, so the same header compiles
 * against vmlinux.h and against <linux/types.h>.
 */
#ifndef FAIRSHARE_FS_BPF_MAPS_H
#define FAIRSHARE_FS_BPF_MAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* sched_stats: key = cgroup v2 id (__u64), per-CPU value. */
struct fs_sched_val {
	__u64 cpu_ns;  /* time on CPU (se.sum_exec_runtime deltas) */
	__u64 wait_ns; /* runnable, not running (sched_info.run_delay deltas) */
	/* the part of wait_ns before runs that ended with the task still
	 * runnable (preempted, throttled, yielded): it wanted the CPU all along */
	__u64 pwait_ns;
};

#define FS_BPF_MAX_CPUS 1024 /* fs_sched_cpus[] entries (64 KiB) */

/*
 * fs_sched_cpus[cpu] (.bss, mmapped by the reader): per CPU, the task it runs
 * now with its counters at switch-in, and time already charged but not yet
 * flushed to sched_stats. Consecutive runs of one cgroup on a CPU (the common
 * case, idle in between included) add up here without a hash lookup; the sum
 * moves to sched_stats when another cgroup's run is charged on that CPU.
 * The reader adds both parts (the running part from /proc/PID/schedstat: a
 * task alone on a CPU may not switch for seconds). seq is odd while the
 * program updates the entry (a seqcount): the reader retries instead of
 * counting a run twice. 128 bytes (two lines, the hot fields in the first),
 * so CPUs do not share a cache line.
 */
struct fs_sched_cpu {
	__u64 seq;
	__u64 cgid;	/* running cgroup; 0: idle or unknown */
	__u64 pid;	/* running kernel tid */
	__u64 run0;	/* its se.sum_exec_runtime at switch-in */
	__u64 delay0;	/* its sched_info.run_delay at switch-in (before the wait just ended) */
	__u64 acc_cgid; /* cgroup of the unflushed sums; 0: none */
	__u64 acc_cpu_ns;
	__u64 acc_wait_ns;
	__u64 acc_pwait_ns;
	__u64 pad[7];
};

/* blk_stats: key = (submitter's cgroup v2 id, whole disk), per-CPU value. */
struct fs_blk_key {
	__u64 cgid;
	__u32 major;
	__u32 minor;
};

struct fs_blk_val {
	__u64 rbytes, wbytes;
	__u64 rios, wios; /* bios, as io.stat counts them */
};

/* net_stats: key = socket's cgroup v2 id, per-CPU value. */
struct fs_net_val {
	__u64 rx_bytes, rx_packets;
	__u64 tx_bytes, tx_packets;
};

#endif
