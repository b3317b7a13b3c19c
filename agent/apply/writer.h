/* SPDX-License-Identifier: MIT */
/*
 * The cgroup writer: the only code that changes cgroup files.
 *
 * - Writes only into the configured tenant cgroups: the list given to
 *   fs_writer_open / fs_writer_set_tenants. Callers name a tenant by its
 *   INDEX in that list; each path is checked once (fs_cgfs_check_path) and
 *   every write goes through cgroupfs.h (no "..", no symlinks).
 * - Before the first write of a file it saves the file's original value in
 *   <state_dir>/writer.state (temp + fsync + rename + fsync dir), and on open it
 *   loads that file, so originals from a crashed run are kept, never replaced
 *   by our own values. fs_writer_apply_all saves the state file at most once
 *   per call, however many tenants have new originals; nothing is written into
 *   a file whose original is not on disk.
 * - Writes only values that differ from what it last wrote (or read). A
 *   tenant whose values all equal the ones last written costs no syscall: its
 *   directory is not even opened (the steady state). It is opened anyway
 *   every recheck_us (to 1.5 recheck_us, spread by tenant index), and at
 *   the next apply after fs_writer_recheck, to notice a recreated cgroup
 *   (new inode): its own values are then saved as the originals and ours
 *   written again.
 * - Safe order (model/cgfile.h): cpu.max.burst before cpu.max when the burst
 *   goes down (the kernel refuses burst > quota), after it otherwise;
 *   memory.high before memory.max when memory.max goes down, memory.max
 *   first when it goes up. memory.max is never written below memory.current +
 *   mem_margin (clamped, logged): lowering it further is left to memory.high.
 * - Errors: ENOENT = the cgroup is gone, skip it; EINVAL repeated einval_limit
 *   times in a row marks the file unsupported for reprobe_us, then it is tried
 *   again; a file that does not exist (controller not enabled, cpu.max.burst
 *   before 5.14) is likewise retried after reprobe_us; every failure is logged
 *   with path and errno, rate-limited per file.
 * - Drift: a value someone else wrote (an operator, systemd's daemon-reload
 *   or set-property) is noticed and written again. Each file in force has an
 *   inotify IN_MODIFY watch (drift_watch.h); a file whose watch fired since
 *   the last apply is read again (and only those), and a value that differs
 *   from the one last written is counted (res.drifted), logged (once per
 *   log interval per tenant, naming the file and both values) and replaced
 *   by ours in the same apply: at most once per period. Every recheck_us
 *   every file is read again as well (the safety net for a write that came
 *   while our own events were dropped, see apply_range; not for a tenant
 *   written through systemd, whose reads are D-Bus calls: there only a
 *   fired watch, a lost event queue or a recreated cgroup reads again).
 *   A file without a watch (no inotify, max_watches or the kernel's
 *   fs.inotify.max_user_watches reached: logged once) is read again every
 *   FS_WRITER_UNWATCHED_US (to 1.5 times that, spread by tenant index).
 * - Restore (fs_writer_restore, fs_release) writes the originals back in the
 *   same safe order and removes what was restored from the state file.
 *   Originals of cgroups that are no longer tenants are kept until restored.
 *
 * - Backends (issue 15): a tenant set to FS_BACKEND_SYSTEMD
 *   (fs_writer_set_backend) is written through its unit's properties with
 *   struct fs_unit_ops (agent/apply/unit_bus.c: sd-bus SetUnitProperties,
 *   runtime) instead of its files: its values, the last value and the
 *   saved originals are then in model/unitprop.h's encoding ("MemoryHigh=N"),
 *   compared, saved ("unit" records) and restored the same way, all through
 *   systemd. The cgroup directory is still opened for memory.current (the
 *   memory.max floor) and for the change watch: systemd writes the file
 *   when a property changes, so a set-property by someone else fires the
 *   watch and the property is read again. A unit's cgroup recreated (a
 *   restarted service) keeps its saved originals: our runtime properties
 *   outlive it. A stopped unit (cgroup gone) still gets its originals back;
 *   systemd creates its cgroup when properties are set, so that empty
 *   cgroup is removed again while the unit stays stopped (ops->active).
 *   cpu.max.burst has no property and is not written there. A tenant set
 *   to FS_BACKEND_NONE is left alone.
 *
 * Cost: per period O(tenants + files written + files changed by others):
 * a tenant in the steady state is a few string compares of its formatted
 * values, and the change watch costs one read(2) per apply when nothing
 * changed; (tenant, file, disk)
 * lookups are O(1) (per-tenant slots, and a hash of (cgroup, file, disk) for
 * originals loaded from a previous run); one state-file save (2 fsyncs) per
 * period at most, only when a new original was recorded. Open, set_tenants
 * and restore are O(saved files) (restore: O(n log n), a sort by cgroup).
 */
#ifndef FAIRSHARE_WRITER_H
#define FAIRSHARE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_log.h"
#include "backend.h"
#include "cgfile.h"
#include "cgroupfs.h" /* struct fs_buf */

#define FS_WRITER_STATE_FILE "writer.state"
#define FS_WRITER_LOCK_FILE  "writer.lock" /* held (flock) while a writer is open */

/* struct fs_limits, struct fs_io_limit, enum fs_limit_bits and FS_VALUE_MAX
 * ("max") are in model/cgfile.h. */
/* The low-level write; returns 0 or -errno. Tests inject errors here. */
typedef int (*fs_write_fn)(void *ctx, int dirfd, const char *file, const char *value);

/*
 * The systemd backend's access to a unit's properties (unit_bus.h):
 * read: the value of f (disk dev for io.max) of the unit cgroup names, in
 * fs_uprop_print's encoding; write: sets it. 0 or -errno; -ENOENT: the
 * unit is gone.
 */
struct fs_unit_ops {
	int (*read)(void *ctx, const char *cgroup, enum fs_cgfile f, struct fs_devnum dev,
		    char *out, size_t len);
	int (*write)(void *ctx, const char *cgroup, enum fs_cgfile f, struct fs_devnum dev,
		     const char *value);
	/* optional: 1 when the unit of cgroup is active (or on its way up or
	 * down), 0 when it is stopped (inactive, failed, not loaded), or
	 * -errno. NULL: a stopped unit's cgroup is never removed (restore). */
	int (*active)(void *ctx, const char *cgroup);
};

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
	uint64_t recheck_us;	  /* open an unchanged tenant at least this often
				     (plus up to half of it by tenant index),
				     to notice a recreated cgroup; 0 = 60 s */
	/* optional: an open directory of tenant `tenant` (path `cgroup`) that
	 * the caller keeps, with its inode in *ino, or -1. Used instead of
	 * opening the cgroup by path, never closed. fairshared lends the
	 * sampler's, opened and checked by the sample of the same period. */
	int (*dir_fn)(void *ctx, size_t tenant, const char *cgroup, uint64_t *ino);
	void *dir_ctx;
	/* optional: the systemd backend (NULL: every tenant is cgroupfs, and
	 * saved unit properties cannot be restored) */
	const struct fs_unit_ops *unit_ops;
	void *unit_ctx;
	/* How many written files may stay open between applies (0: none).
	 * Only files in a directory lent by dir_fn (its owner notices a
	 * removed or recreated cgroup and the inode tells) and only with the
	 * default write_fn: a kept file costs one pwrite(2) per change instead
	 * of an openat, a write and a close (issue 19). */
	size_t max_open_files;
	/* optional, with dir_fn: an open fd of `file` (memory.current) in the
	 * lent directory of tenant `tenant` that the caller keeps for reading
	 * with pread, or -1. Never closed here. */
	int (*file_fn)(void *ctx, size_t tenant, const char *cgroup, const char *file);
	/* How many change watches the writer may hold (0: no cap but the
	 * kernel's). inotify watches count against one limit per user, and
	 * fairshared runs as root beside systemd, udev and the journal, which
	 * need theirs: fairshared gives the writer at most half of
	 * fs.inotify.max_user_watches (writer_watches in daemon.c). */
	size_t max_watches;
};

/* A file without a change watch is read again this often (plus up to half
 * of it by tenant index): every period cost 810 ms of a 1,004 ms period at
 * 10,000 tenants once the kernel's watch limit (61,866 on an 8 GiB 6.1
 * kernel) was reached (issue 19's benchmark in the test VM). */
#define FS_WRITER_UNWATCHED_US (10ull * 1000000ull)

struct fs_apply_result {
	unsigned written;     /* files written successfully */
	unsigned unchanged;   /* skipped: equal to the value last written/read */
	unsigned failed;      /* write errors; the next apply retries them */
	unsigned unsupported; /* skipped: file in EINVAL back-off, or missing in
				 this cgroup (controller not enabled there) */
	unsigned clamped;     /* memory.max raised to memory.current + margin */
	unsigned drifted;     /* files found changed by someone else (written again) */
	bool gone;	      /* the cgroup vanished (ENOENT): rest skipped */
	int error;	      /* 0, or -errno of what stopped this tenant: -EINVAL
				 (refused path), the error opening its cgroup
				 (logged), or of saving the state file (then
				 none of its files were written); write
				 failures are counted in `failed` instead */
};

struct fs_writer;

/* Opens (loading <state_dir>/writer.state if present). 0 or -errno. */
int fs_writer_open(struct fs_writer **out, const struct fs_writer_opts *o);

/*
 * The current value of file f (dev's line for io.max) in the cgroup
 * directory dirfd, in the form fs_cgfile_format() writes (what the writer
 * compares with, and what fairshared --check-config shows). b is the read
 * buffer, reused across calls. 0 or -errno (-ENODATA: empty file).
 */
int fs_cgfile_read_current(int dirfd, enum fs_cgfile f, struct fs_devnum dev, struct fs_buf *b,
			   char *out, size_t len);

/*
 * Replaces the tenant list (a reload, or a template's cgroups changed):
 * tenant j is cgroups[j] from now on (cgroups: normalised paths; a path
 * fs_cgfs_check_path refuses makes every apply of that tenant fail with
 * -EINVAL). Saved originals are matched to the new tenants by cgroup; those
 * of cgroups that are no longer tenants are kept until restored. from
 * (list_match.h) says which old tenant each new one was: one with the same
 * cgroup keeps its open files, change watches and drift counts, so that a
 * login among 10,000 tenants reopens one tenant's files, not all of them;
 * every other tenant (all of them when from is NULL) is opened and checked
 * at its next apply. 0 or -ENOMEM (then the old list stays).
 */
int fs_writer_set_tenants(struct fs_writer *w, size_t n, const char *const *cgroups,
			  const size_t *from);

/*
 * The backend of tenant (FS_BACKEND_CGROUPFS after fs_writer_set_tenants).
 * 0, -EPERM for an index out of range, -EOPNOTSUPP for FS_BACKEND_SYSTEMD
 * without unit_ops. Its next apply reads its values again.
 */
int fs_writer_set_backend(struct fs_writer *w, size_t tenant, enum fs_backend b);

/*
 * Enforces one period: lim[i] on tenant i, for i < n (n <= the number of
 * tenants, else -EINVAL). skip: NULL, or skip[i] = leave tenant i alone
 * (res[i] all zero). A tenant with lim[i].set == 0 is left alone too.
 * now_us: CLOCK_MONOTONIC microseconds (back-off, log rate limits, recheck).
 * res: NULL or [n], filled for every i.
 *
 * Three phases: (1) every tenant with something to do is opened once, and
 * the originals of the files about to be written for the first time (or in
 * a recreated cgroup) are read and recorded; tenants with nothing new are
 * written right away; (2) if anything new was recorded, the state file is
 * saved ONCE; (3) the tenants that waited for it are written. Steady tenants
 * cost no syscall.
 *
 * Returns 0 when every wanted file was written, unchanged, in back-off, or
 * its cgroup is gone (res[i].gone). Otherwise the first of: the -errno of a
 * failed state save (the tenants that needed it were not written:
 * res[i].error; retried next call), the first res[i].error, -EIO when some
 * write failed (res[i].failed, logged).
 */
int fs_writer_apply_all(struct fs_writer *w, size_t n, const struct fs_limits *lim,
			const bool *skip, uint64_t now_us, struct fs_apply_result *res);

/*
 * fs_writer_apply_all for tenant alone (same code). -EPERM when tenant is
 * not an index of the tenant list; otherwise res->error, or -EIO when some
 * write failed, or 0. res may be NULL.
 */
int fs_writer_apply(struct fs_writer *w, size_t tenant, const struct fs_limits *lim,
		    uint64_t now_us, struct fs_apply_result *res);

/*
 * The next apply of tenant opens its cgroup even if nothing changed: call it
 * when the cgroup may have been recreated (the sampler saw a new baseline).
 * An index out of range is ignored.
 */
void fs_writer_recheck(struct fs_writer *w, size_t tenant);

/* Writes back the originals of one cgroup (a tenant dropped on reload). */
int fs_writer_restore_cgroup(struct fs_writer *w, const char *cgroup);

/*
 * Writes back every saved original (safe order) and drops the restored
 * entries from the state file (which is removed when empty). Files of
 * vanished cgroups are dropped. 0, or the first -errno (failed entries stay
 * saved for a later release).
 */
int fs_writer_restore(struct fs_writer *w);

/* One file the writer controls in a tenant (fs_writer_files). */
struct fs_writer_file {
	char key[FS_CGF_KEY_MAX];	 /* "cpu.max", "io.max@8:0" */
	bool unit;			 /* values are the unit's properties (systemd) */
	char written[FS_CGF_VALUE_MAX];	 /* what the writer last wrote (or read) */
	char in_force[FS_CGF_VALUE_MAX]; /* what the file holds now; "" on error */
	int err;			 /* 0, or -errno of reading it */
};

/*
 * The files of tenant under the writer's control, read now (for explain):
 * at most max into out. The count, or -errno (-ENOENT: the cgroup is gone,
 * -EPERM: not a tenant index).
 */
int fs_writer_files(struct fs_writer *w, size_t tenant, struct fs_writer_file *out, size_t max);

/* Files of tenant found changed by someone else since the writer opened
 * (or the tenant list was set); 0 for an index out of range. */
uint64_t fs_writer_drift_count(const struct fs_writer *w, size_t tenant);

/* Number of files with a saved original. */
size_t fs_writer_saved_count(const struct fs_writer *w);

/* Frees w; does NOT restore (the on_exit = keep case, or after restore). */
void fs_writer_close(struct fs_writer *w);

/*
 * `fairshared --release` / ExecStopPost: restores everything recorded in
 * <state_dir>/writer.state under cgroup_root, with no tenant config (unit
 * properties through unit_ops; NULL: those stay saved, -EOPNOTSUPP). A
 * missing state file is success (nothing to do). 0 or the first -errno.
 */
int fs_release(const char *state_dir, const char *cgroup_root, fs_log_fn log, void *log_ctx,
	       const struct fs_unit_ops *unit_ops, void *unit_ctx);

#endif /* FAIRSHARE_WRITER_H */
