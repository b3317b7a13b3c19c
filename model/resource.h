/* SPDX-License-Identifier: MIT */
/*
 * The resource model: the one place that says which resources fairshare
 * shares, what they are called, in which unit they are counted and how many
 * there can be. conf/ builds a struct fs_resources from [resources]; the
 * estimator, planner, writer, samplers, control socket and fairctl read it.
 *
 * Units by kind (every resolved number everywhere):
 *   cpu     cores (CPU-seconds per second)
 *   memory  bytes
 *   io.*    bytes/s (rbps, wbps) or ops/s (riops, wiops), one disk each
 *   net     bytes/s, rx + tx; measured and shared, never written
 *
 * Block IO is one resource per disk and direction: read and write bytes/s
 * (and ops/s when configured), each with its own capacity. A tenant's
 * read/write mix is then part of its demand profile.
 *
 * Pure C: no I/O, no globals (like policy/).
 */
#ifndef FAIRSHARE_MODEL_RESOURCE_H
#define FAIRSHARE_MODEL_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FS_NAME_MAX	64 /* tenant and disk names, incl. NUL */
#define FS_MAX_DISKS	8
#define FS_MAX_RES	(3 + 4 * FS_MAX_DISKS) /* cpu + memory + net + 4 per disk */
#define FS_RES_NAME_MAX (FS_NAME_MAX + 8)      /* "io." NAME ".riops" */
/* A tenant using at least this share of a resource's capacity is a user of
 * it: counted for contention (agent/estimate/contention.h), probed up on a
 * contended disk (estimate.h), limited on a busy resource (plan.h). Below
 * it (a logger, a health check) it takes nothing from anyone. */
#define FS_RES_USER_SHARE 0.01
/* Use of at least this share of a resource's capacity makes it busy: a
 * bottleneck for the planner (plan.h) and, on a disk, a sign of contention
 * (contention.h). One number, so that status's "busy" means one thing. */
#define FS_RES_BUSY_SHARE 0.85

/* A block device number; a whole disk once resolved (what io.max/io.stat use). */
struct fs_devnum {
	unsigned major, minor;
};

enum fs_res_kind {
	FS_RES_CPU,	 /* cores */
	FS_RES_MEMORY,	 /* bytes */
	FS_RES_IO_RBPS,	 /* bytes/s read, one disk */
	FS_RES_IO_WBPS,	 /* bytes/s written, one disk */
	FS_RES_IO_RIOPS, /* read ops/s, one disk */
	FS_RES_IO_WIOPS, /* write ops/s, one disk */
	FS_RES_NET,	 /* bytes/s, rx + tx; measured only (not enforced) */
};

/* The io kinds in io.max key order: index = kind - FS_RES_IO_RBPS. */
enum { FS_IO_RBPS, FS_IO_WBPS, FS_IO_RIOPS, FS_IO_WIOPS, FS_IO__COUNT };

static inline bool fs_res_is_io(enum fs_res_kind k)
{
	return k >= FS_RES_IO_RBPS && k <= FS_RES_IO_WIOPS;
}

/* FS_IO_* of an io kind, -1 for the others. */
static inline int fs_res_io_index(enum fs_res_kind k)
{
	return fs_res_is_io(k) ? (int)(k - FS_RES_IO_RBPS) : -1;
}

/* Net is measured and shared but has no cgroup knob. */
static inline bool fs_res_is_enforced(enum fs_res_kind k)
{
	return k != FS_RES_NET;
}

/* "rbps", "wbps", "riops", "wiops" for io kinds (io.max keys), else NULL. */
const char *fs_res_io_key(enum fs_res_kind k);

/*
 * The host's resources, in the order of the policy problem: cpu, memory,
 * then each disk's rbps, wbps [, riops, wiops], then net if configured.
 */
struct fs_resources {
	size_t n;
	enum fs_res_kind kind[FS_MAX_RES];
	double capacity[FS_MAX_RES];		/* > 0, unit by kind */
	char name[FS_MAX_RES][FS_RES_NAME_MAX]; /* "cpu", "memory", "io.disk0.rbps", "net" */
	int disk[FS_MAX_RES];			/* io: disk index (one io.max line), else -1 */
	struct fs_devnum dev[FS_MAX_RES];	/* io: the disk; else 0:0 */
};

/*
 * Adds a resource; returns its index, -ENOSPC (full) or -EINVAL (capacity
 * not finite and > 0, unknown kind). name NULL: "cpu", "memory", "net" or
 * "io.MAJ:MIN.rbps" ...
 */
int fs_resources_add(struct fs_resources *res, enum fs_res_kind kind, const char *name,
		     double capacity, int disk, struct fs_devnum dev);
/* Index of the first resource of this kind, or -1. */
int fs_resources_find(const struct fs_resources *res, enum fs_res_kind kind);
/* Index of the resource called name, or -1. */
int fs_resources_find_name(const struct fs_resources *res, const char *name);
/* Number of disks: 1 + the largest disk index of an io resource. */
size_t fs_resources_disks(const struct fs_resources *res);

/* "cpu", "memory", "io-rbps", "io-wbps", "io-riops", "io-wiops", "net": the
 * kind's name in the control protocol and metrics. */
const char *fs_res_kind_name(enum fs_res_kind k);
/* "cores", "bytes", "bytes/s", "ops/s". */
const char *fs_res_unit(enum fs_res_kind k);

/* A compact human amount in the kind's unit ("1.5", "512.0M", "200"); "max"
 * when not finite. */
void fs_res_fmt_amount(enum fs_res_kind k, double v, char *buf, size_t len);

#endif /* FAIRSHARE_MODEL_RESOURCE_H */
