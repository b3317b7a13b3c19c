/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the cgroup v2 stat files. Pure functions on text, so they are
 * tested on the kernel's exact formats without any cgroup.
 *
 * Each struct has a "have" bitmask: bit set = the key was present. Unknown
 * keys are ignored (newer kernels add keys); a present key with a malformed
 * value makes the parser return -EINVAL. Counters are the kernel's raw
 * cumulative values, in the kernel's units (named in each field).
 */
#ifndef FAIRSHARE_SAMPLE_PARSE_H
#define FAIRSHARE_SAMPLE_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent_conf.h" /* struct fs_devnum */

/* cpu.stat */
enum {
	FS_CPU_USAGE = 1 << 0,
	FS_CPU_USER = 1 << 1,
	FS_CPU_SYSTEM = 1 << 2,
	FS_CPU_NR_PERIODS = 1 << 3,
	FS_CPU_NR_THROTTLED = 1 << 4,
	FS_CPU_THROTTLED = 1 << 5,
};
struct fs_cpu_stat {
	unsigned have;
	uint64_t usage_usec;	 /* CPU time, microseconds */
	uint64_t user_usec;	 /* microseconds */
	uint64_t system_usec;	 /* microseconds */
	uint64_t nr_periods;	 /* bandwidth periods elapsed (count) */
	uint64_t nr_throttled;	 /* periods in which the group was throttled (count) */
	uint64_t throttled_usec; /* time throttled, microseconds */
};
int fs_parse_cpu_stat(const char *text, struct fs_cpu_stat *out);

/* memory.stat (the keys the estimator uses), all in bytes */
enum {
	FS_MEM_ANON = 1 << 0,
	FS_MEM_FILE = 1 << 1,
	FS_MEM_ACTIVE_ANON = 1 << 2,
	FS_MEM_INACTIVE_ANON = 1 << 3,
	FS_MEM_ACTIVE_FILE = 1 << 4,
	FS_MEM_INACTIVE_FILE = 1 << 5,
	FS_MEM_REFAULT_ANON = 1 << 6,
	FS_MEM_REFAULT_FILE = 1 << 7,
};
struct fs_memory_stat {
	unsigned have;
	uint64_t anon, file, active_anon, inactive_anon, active_file, inactive_file; /* bytes */
	/* workingset_refault_anon/_file: cumulative counts of pages evicted and
	 * faulted back in (5.9+; older kernels have one workingset_refault) */
	uint64_t workingset_refault_anon, workingset_refault_file;
};
int fs_parse_memory_stat(const char *text, struct fs_memory_stat *out);

/* memory.events, cumulative event counts */
enum {
	FS_MEV_LOW = 1 << 0,
	FS_MEV_HIGH = 1 << 1,
	FS_MEV_MAX = 1 << 2,
	FS_MEV_OOM = 1 << 3,
	FS_MEV_OOM_KILL = 1 << 4,
};
struct fs_memory_events {
	unsigned have;
	uint64_t low, high, max, oom, oom_kill; /* counts */
};
int fs_parse_memory_events(const char *text, struct fs_memory_events *out);

/* /proc/meminfo: the host's memory (the lines the planner uses), bytes. */
enum {
	FS_MI_TOTAL = 1 << 0,
	FS_MI_AVAILABLE = 1 << 1,
};
struct fs_meminfo {
	unsigned have;
	uint64_t total;	    /* MemTotal */
	uint64_t available; /* MemAvailable: free + reclaimable, the kernel's estimate */
};
/* "MemTotal:  1004532 kB" lines; the kB values converted to bytes. */
int fs_parse_meminfo(const char *text, struct fs_meminfo *out);

/* One device's line of io.stat, cumulative. */
enum {
	FS_IOS_RBYTES = 1 << 0,
	FS_IOS_WBYTES = 1 << 1,
	FS_IOS_RIOS = 1 << 2,
	FS_IOS_WIOS = 1 << 3,
};
struct fs_io_stat {
	bool found; /* the device has a line (the kernel omits devices without IO) */
	unsigned have;
	uint64_t rbytes, wbytes; /* bytes */
	uint64_t rios, wios;	 /* completed operations (count) */
};
/* Finds dev's line in io.stat; no line = found false, all zero, return 0. */
int fs_parse_io_stat(const char *text, struct fs_devnum dev, struct fs_io_stat *out);

/* cpu.pressure / memory.pressure / io.pressure */
struct fs_psi_line {
	bool present;	/* the "some"/"full" line exists */
	double avg10;	/* percent of wall time stalled, 10 s average (0..100) */
	double avg60;	/* percent, 60 s average */
	double avg300;	/* percent, 300 s average */
	uint64_t total; /* cumulative stall time, microseconds */
};
struct fs_pressure {
	struct fs_psi_line some, full; /* full.present is false on kernels without
					  a "full" line for cpu (< 5.13) */
};
/* "some" must be present; "full" is optional. */
int fs_parse_pressure(const char *text, struct fs_pressure *out);

#endif /* FAIRSHARE_SAMPLE_PARSE_H */
