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
 *   io.*    bytes/s (rbps, wbps, bps) or ops/s (riops, wiops, iops), one disk each
 *   net     bytes/s, rx + tx; measured and shared, never written
 *
 * Block IO is declared per disk in one of two ways:
 *  - split: one resource per direction, read and write bytes/s (and ops/s
 *    when configured), each with its own capacity; each is one io.max key.
 *    Right for a device whose reads and writes do not take from each other.
 *  - shared (issue 14): one budget for reads and writes together, bytes/s
 *    (and ops/s when configured). Most disks are like that: a disk that
 *    moves 100 MB/s moves it as reads, writes or any mix, and with split
 *    budgets of 100M/100M it looked free while reads and writes each ran at
 *    half of it (and contention was never found: each direction had one
 *    user). A tenant's demand on it is its read + write rate; io.max has no
 *    such key, so the planner splits the tenant's limit into rbps and wbps
 *    (agent/plan/io_split.h).
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
#define FS_MAX_RES	(3 + 4 * FS_MAX_DISKS) /* cpu + memory + net + at most 4 per disk */
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
	FS_RES_IO_BPS,	 /* bytes/s read + written, one disk (a shared budget) */
	FS_RES_IO_IOPS,	 /* ops/s read + written, one disk (a shared budget) */
	FS_RES_NET,	 /* bytes/s, rx + tx; measured only (not enforced) */
};

/* The io.max keys in their order: index = kind - FS_RES_IO_RBPS for the
 * directional kinds. */
enum { FS_IO_RBPS, FS_IO_WBPS, FS_IO_RIOPS, FS_IO_WIOPS, FS_IO__COUNT };
/* Every io kind, in enum order: index = kind - FS_RES_IO_RBPS. */
#define FS_DISK_KINDS 6

static inline bool fs_res_is_io(enum fs_res_kind k)
{
	return k >= FS_RES_IO_RBPS && k <= FS_RES_IO_IOPS;
}

/* A read + write budget of one disk: io.max sets it as two keys. */
static inline bool fs_res_io_shared(enum fs_res_kind k)
{
	return k == FS_RES_IO_BPS || k == FS_RES_IO_IOPS;
}

/* Counted in operations per second (riops, wiops, iops). */
static inline bool fs_res_counts_ops(enum fs_res_kind k)
{
	return k == FS_RES_IO_RIOPS || k == FS_RES_IO_WIOPS || k == FS_RES_IO_IOPS;
}

/* FS_IO_* (the one io.max key) of a directional io kind, -1 for the
 * others, shared budgets included. */
static inline int fs_res_io_index(enum fs_res_kind k)
{
	return k >= FS_RES_IO_RBPS && k <= FS_RES_IO_WIOPS ? (int)(k - FS_RES_IO_RBPS) : -1;
}

/* The io.max keys (bits 1u << FS_IO_*) an io kind sets: one for a
 * direction, the read and the write key for a shared budget; 0 otherwise. */
unsigned fs_res_io_keys(enum fs_res_kind k);

/* Net is measured and shared but has no cgroup knob. */
static inline bool fs_res_is_enforced(enum fs_res_kind k)
{
	return k != FS_RES_NET;
}

/* "rbps", "wbps", "riops", "wiops" (the io.max keys), "bps", "iops" (shared
 * budgets) for io kinds: the last part of their resource names; else NULL. */
const char *fs_res_io_key(enum fs_res_kind k);

/*
 * The host's resources, in the order of the policy problem: cpu, memory,
 * then each disk's rbps, wbps [, riops, wiops] or bps [, iops], then net if
 * configured.
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

/* "cpu", "memory", "io-rbps", "io-wbps", "io-riops", "io-wiops", "io-bps",
 * "io-iops", "net": the
 * kind's name in the control protocol and metrics. */
const char *fs_res_kind_name(enum fs_res_kind k);
/* "cores", "bytes", "bytes/s", "ops/s". */
const char *fs_res_unit(enum fs_res_kind k);

/* A compact human amount in the kind's unit ("1.5", "512.0M", "200"); "max"
 * when not finite. */
void fs_res_fmt_amount(enum fs_res_kind k, double v, char *buf, size_t len);

#endif /* FAIRSHARE_MODEL_RESOURCE_H */
