/* SPDX-License-Identifier: MIT */
/*
 * The systemd backend's encoding: which unit properties carry each cgroup
 * file fairshare controls, and how a value is written as those properties,
 * the way systemd 252 stores them and reads them back.
 *
 *   cpu.max       CPUQuotaPerSecUSec, CPUQuotaPeriodUSec   (t, usec)
 *   cpu.weight    CPUWeight                                (t, 1..10000)
 *   memory.high   MemoryHigh                               (t, bytes)
 *   memory.max    MemoryMax                                (t, bytes)
 *   memory.low    MemoryLow                                (t, bytes)
 *   io.weight     IOWeight                                 (t, 1..10000)
 *   io.max        IOReadBandwidthMax, IOWriteBandwidthMax,
 *                 IOReadIOPSMax, IOWriteIOPSMax            (a(st): one entry
 *                 per disk, path "/dev/block/MAJ:MIN")
 *   cpu.max.burst none: systemd 252 has no property for it (not written
 *                 through systemd)
 *
 * A value is a string "Name=V Name=V ..." with the file's properties in
 * table order, V a decimal number, "infinity" (UINT64_MAX: no limit) or, for
 * the weights, "unset" (UINT64_MAX there: systemd's default). The writer
 * keeps, compares and saves these strings exactly as it keeps cgroupfs
 * values (model/cgfile.h), so what fairshare sets, what it reads back and
 * the originals it restores are all in this one encoding.
 *
 * Rounding (systemd 252, src/core/dbus-cgroup.c): SetUnitProperties with
 * runtime=true stores CPUQuotaPerSecUSec as given, but the drop-in it writes
 * for daemon-reload says "CPUQuota=N%" with N = value / 10000 (truncated),
 * so after a daemon-reload the property reads N * 10000. fairshare therefore
 * sets multiples of 10000 usec per second (1 % of a CPU; at least 10000:
 * systemd refuses 0), and a value survives daemon-reload unchanged. The
 * memory properties and CPUQuotaPeriodUSec are stored and written back in
 * usec/bytes exactly; MemoryHigh and MemoryMax must be >= 1.
 *
 * Pure C: no I/O, no globals but the const table.
 */
#ifndef FAIRSHARE_MODEL_UNITPROP_H
#define FAIRSHARE_MODEL_UNITPROP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgfile.h"

#define FS_UPROP_MAX	       4     /* properties of one file */
#define FS_UNIT_NAME_MAX       256   /* a unit name, incl. NUL (systemd's UNIT_NAME_MAX) */
#define FS_UPROP_QUOTA_STEP    10000 /* usec per second: what a drop-in keeps (1 %) */
#define FS_UPROP_DEV_PATH_MAX  40    /* "/dev/block/4294967295:4294967295" */
#define FS_UPROP_UNSET	       UINT64_MAX

enum fs_unit_type {
	FS_UNIT_NONE, /* not a unit name */
	FS_UNIT_SLICE,
	FS_UNIT_SCOPE,
	FS_UNIT_SERVICE,
};

/* How a property's UINT64_MAX is written. */
enum fs_uprop_kind {
	FS_UPROP_LIMIT,	 /* "infinity" */
	FS_UPROP_WEIGHT, /* "unset" */
};

struct fs_uprop_desc {
	size_t n; /* 0: the file has no systemd property */
	const char *name[FS_UPROP_MAX];
	enum fs_uprop_kind kind;
	bool per_disk; /* a(st) arrays, one entry per disk (io.max) */
};

/* Indexed by enum fs_cgfile. */
extern const struct fs_uprop_desc fs_uprops[FS_CGF__COUNT];

/*
 * The unit a cgroup path (relative, normalised) names: its last component
 * when that ends in ".slice", ".scope" or ".service" (copied into unit, if
 * not NULL). FS_UNIT_NONE for anything else, or a name that does not fit.
 */
enum fs_unit_type fs_unit_of_cgroup(const char *cgroup, char *unit, size_t len);

/* The unit's D-Bus interface with the cgroup properties
 * ("org.freedesktop.systemd1.Slice"), NULL for FS_UNIT_NONE. */
const char *fs_unit_interface(enum fs_unit_type t);

/* CPUQuotaPerSecUSec for a quota of quota_us per period_us (0: 100000):
 * rounded to the nearest FS_UPROP_QUOTA_STEP, at least one step;
 * FS_VALUE_MAX stays FS_VALUE_MAX (infinity). */
uint64_t fs_uprop_cpu_quota(uint64_t quota_us, uint64_t period_us);

/*
 * The property values of file f (disk: index into lim->io for io.max) for
 * lim, rounded as systemd keeps them. 0, -ENOENT when lim does not set it,
 * -EOPNOTSUPP when f has no property (cpu.max.burst).
 */
int fs_uprop_values(enum fs_cgfile f, const struct fs_limits *lim, size_t disk,
		    uint64_t v[FS_UPROP_MAX]);

/* The encoded string of values v of f. 0, -ENOSPC, -EOPNOTSUPP. */
int fs_uprop_print(enum fs_cgfile f, const uint64_t v[FS_UPROP_MAX], char *buf, size_t len);

/* fs_uprop_values + fs_uprop_print: what the writer compares and sets. */
int fs_uprop_format(enum fs_cgfile f, const struct fs_limits *lim, size_t disk, char *buf,
		    size_t len);

/*
 * The values back out of a string fs_uprop_print made (the names of f in
 * its order, each once). 0, or -EINVAL for anything else.
 */
int fs_uprop_parse(enum fs_cgfile f, const char *s, uint64_t v[FS_UPROP_MAX]);

/* The path systemd is given for disk dev: "/dev/block/MAJ:MIN" (udev's
 * link; systemd resolves it to the device number). 0 or -ENOSPC. */
int fs_uprop_dev_path(struct fs_devnum dev, char *buf, size_t len);

/*
 * The first number of an encoded value ("MemoryMax=123" -> 123), for the
 * writer's memory.max floor and write order; "infinity", "unset" or no
 * number -> FS_VALUE_MAX.
 */
uint64_t fs_uprop_first_value(const char *s);

/* Replaces the single value of a one-property string of f by v. 0 or
 * -EINVAL/-ENOSPC. */
int fs_uprop_set_first(enum fs_cgfile f, uint64_t v, char *buf, size_t len);

#endif /* FAIRSHARE_MODEL_UNITPROP_H */
