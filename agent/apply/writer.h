/* SPDX-License-Identifier: MIT */
/*
 * The cgroup writer: the only code that changes cgroup files.
 *
 * - Writes only into the configured tenant cgroups (exact match of the
 *   normalised path), through cgroupfs.h (no "..", no symlinks).
 * - Before the first write of a file it saves the file's original value in
 *   <state_dir>/writer.state (temp + fsync + rename + fsync dir), and on open it
 *   loads that file, so originals from a crashed run are kept, never replaced
 *   by our own values.
 * - Writes only values that differ from what it last wrote (or read).
 * - Safe order: cpu.max.burst before cpu.max when the burst goes down (the
 *   kernel refuses burst > quota), after it otherwise; memory.high before
 *   memory.max when memory.max goes down, memory.max first when it goes up.
 *   memory.max is never written below memory.current + mem_margin (clamped,
 *   logged): lowering it further is left to memory.high.
 * - Errors: ENOENT = the cgroup is gone, skip it; EINVAL repeated einval_limit
 *   times in a row marks the file unsupported for reprobe_us, then it is tried
 *   again; every failure is logged with path and errno, rate-limited per file.
 * - Restore (fs_writer_restore, fs_release) writes the originals back in the
 *   same safe order and removes what was restored from the state file.
 */
#ifndef FAIRSHARE_WRITER_H
#define FAIRSHARE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resource.h"
#include "agent_log.h"

#define FS_WRITER_STATE_FILE "writer.state"
#define FS_WRITER_LOCK_FILE  "writer.lock" /* held (flock) while a writer is open */
#define FS_LIMIT_MAX	     UINT64_MAX	   /* written as "max": no limit */

enum fs_limit_bits {
	FS_LIM_CPU_MAX = 1 << 0,    /* cpu_quota_us + cpu_period_us -> cpu.max */
	FS_LIM_CPU_BURST = 1 << 1,  /* cpu_burst_us -> cpu.max.burst */
	FS_LIM_CPU_WEIGHT = 1 << 2, /* cpu_weight -> cpu.weight */
	FS_LIM_MEM_HIGH = 1 << 3,   /* mem_high -> memory.high */
	FS_LIM_MEM_MAX = 1 << 4,    /* mem_max -> memory.max */
	FS_LIM_IO_MAX = 1 << 5,	    /* io[0..n_io-1] -> io.max, one line per disk */
	FS_LIM_IO_WEIGHT = 1 << 6,  /* io_weight -> io.weight ("default N") */
};

struct fs_io_limit {
	struct fs_devnum dev;  /* whole disk */
	uint64_t rbps, wbps;   /* bytes/s; FS_LIMIT_MAX = unlimited */
	uint64_t riops, wiops; /* ops/s; FS_LIMIT_MAX = unlimited */
};

/* What to enforce on one cgroup. Only members whose bit is in `set` are
 * written; the others are left alone (and never saved). */
struct fs_limits {
	unsigned set;		/* enum fs_limit_bits */
	uint64_t cpu_quota_us;	/* microseconds per period; FS_LIMIT_MAX = "max" */
	uint64_t cpu_period_us; /* microseconds, 1000..1000000; 0 = 100000 */
	uint64_t cpu_burst_us;	/* microseconds */
	unsigned cpu_weight;	/* 1..10000 */
	uint64_t mem_high;	/* bytes; FS_LIMIT_MAX = "max" */
	uint64_t mem_max;	/* bytes; FS_LIMIT_MAX = "max" */
	size_t n_io;		/* <= FS_MAX_DISKS */
	struct fs_io_limit io[FS_MAX_DISKS];
	unsigned io_weight; /* 1..10000 */
};

/* The low-level write; returns 0 or -errno. Tests inject errors here. */
typedef int (*fs_write_fn)(void *ctx, int dirfd, const char *file, const char *value);

struct fs_writer_opts {
	const char *cgroup_root; /* required */
	const char *state_dir;	 /* required; created (0700) if missing */
	size_t n_tenants;
	const char *const *cgroups; /* [n_tenants] allowed cgroups, normalised */
	fs_log_fn log;		    /* may be NULL */
	void *log_ctx;
	fs_write_fn write_fn; /* NULL: fs_cgfs_write_at */
	void *write_ctx;
	uint64_t mem_margin;	  /* bytes; 0 = 16 MiB */
	unsigned einval_limit;	  /* consecutive EINVALs -> unsupported; 0 = 3 */
	uint64_t reprobe_us;	  /* back-off of an unsupported file; 0 = 60 s */
	uint64_t log_interval_us; /* one log line per file per interval; 0 = 60 s */
};

struct fs_apply_result {
	unsigned written;     /* files written successfully */
	unsigned unchanged;   /* skipped: equal to the value last written/read */
	unsigned failed;      /* write errors; the next apply retries them */
	unsigned unsupported; /* skipped: file in EINVAL back-off, or missing in
				 this cgroup (controller not enabled there) */
	unsigned clamped;     /* memory.max raised to memory.current + margin */
	bool gone;	      /* the cgroup vanished (ENOENT): rest skipped */
};

struct fs_writer;

/* Opens (loading <state_dir>/writer.state if present). 0 or -errno. */
int fs_writer_open(struct fs_writer **out, const struct fs_writer_opts *o);

/* Replaces the allowed cgroups (SIGHUP reload). Saved originals of cgroups
 * that are no longer allowed are kept until restored. 0 or -ENOMEM. */
int fs_writer_set_tenants(struct fs_writer *w, size_t n, const char *const *cgroups);

/*
 * Enforces lim on cgroup (which must be one of the allowed cgroups, else
 * -EPERM). now_us: CLOCK_MONOTONIC microseconds, for back-off and log rate
 * limits. Returns 0 when every wanted file was written, unchanged, in
 * back-off, or the cgroup is gone (res->gone); -EIO when some write failed
 * (res->failed, logged); -EPERM/-EINVAL for a refused path; other -errno
 * when the state file could not be saved (then nothing was written). res may
 * be NULL.
 */
int fs_writer_apply(struct fs_writer *w, const char *cgroup, const struct fs_limits *lim,
		    uint64_t now_us, struct fs_apply_result *res);

/* Writes back the originals of one cgroup (a tenant dropped on reload). */
int fs_writer_restore_cgroup(struct fs_writer *w, const char *cgroup);

/*
 * Writes back every saved original (safe order) and drops the restored
 * entries from the state file (which is removed when empty). Files of
 * vanished cgroups are dropped. 0, or the first -errno (failed entries stay
 * saved for a later release).
 */
int fs_writer_restore(struct fs_writer *w);

/* Number of files with a saved original. */
size_t fs_writer_saved_count(const struct fs_writer *w);

/* Frees w; does NOT restore (the on_exit = keep case, or after restore). */
void fs_writer_close(struct fs_writer *w);

/*
 * `fairshared --release` / ExecStopPost: restores everything recorded in
 * <state_dir>/writer.state under cgroup_root, with no tenant config. A missing
 * state file is success (nothing to do). 0 or the first -errno.
 */
int fs_release(const char *state_dir, const char *cgroup_root, fs_log_fn log, void *log_ctx);

#endif /* FAIRSHARE_WRITER_H */
