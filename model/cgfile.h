/* SPDX-License-Identifier: MIT */
/*
 * The cgroup files fairshare writes: the one table that says, for each of
 * cpu.max, cpu.max.burst, cpu.weight, memory.high, memory.max, memory.low,
 * io.weight and io.max (one line per disk),
 *   - its file name and its bit in struct fs_limits.set,
 *   - whether it is per disk (io.max),
 *   - how a value is formatted from a struct fs_limits,
 *   - how the current value is extracted from the file's content,
 *   - where it goes in the write order,
 *   - its key in the writer's state file ("cpu.max", "io.max@8:0").
 * The writer (agent/apply) writes what this formats; the planner formats its
 * display with fs_fmt_value() and fs_fmt_io_max().
 *
 * Pure C: no I/O, no globals but the const table; depends on resource.h only.
 */
#ifndef FAIRSHARE_MODEL_CGFILE_H
#define FAIRSHARE_MODEL_CGFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resource.h"

#define FS_VALUE_MAX UINT64_MAX /* the value "max": no limit */

enum fs_limit_bits {
	FS_LIM_CPU_MAX = 1 << 0,    /* cpu_quota_us + cpu_period_us -> cpu.max */
	FS_LIM_CPU_BURST = 1 << 1,  /* cpu_burst_us -> cpu.max.burst */
	FS_LIM_CPU_WEIGHT = 1 << 2, /* cpu_weight -> cpu.weight */
	FS_LIM_MEM_HIGH = 1 << 3,   /* mem_high -> memory.high */
	FS_LIM_MEM_MAX = 1 << 4,    /* mem_max -> memory.max */
	FS_LIM_IO_MAX = 1 << 5,	    /* io[0..n_io-1] -> io.max, one line per disk */
	FS_LIM_IO_WEIGHT = 1 << 6,  /* io_weight -> io.weight ("default N") */
	FS_LIM_MEM_LOW = 1 << 7,    /* mem_low -> memory.low */
};

struct fs_io_limit {
	struct fs_devnum dev;  /* whole disk */
	uint64_t rbps, wbps;   /* bytes/s; FS_VALUE_MAX = unlimited */
	uint64_t riops, wiops; /* ops/s; FS_VALUE_MAX = unlimited */
};

/* What to enforce on one cgroup. Only members whose bit is in `set` are
 * written; the others are left alone (and never saved). */
struct fs_limits {
	unsigned set;		/* enum fs_limit_bits */
	uint64_t cpu_quota_us;	/* microseconds per period; FS_VALUE_MAX = "max" */
	uint64_t cpu_period_us; /* microseconds, 1000..1000000; 0 = 100000 */
	uint64_t cpu_burst_us;	/* microseconds */
	unsigned cpu_weight;	/* 1..10000 */
	uint64_t mem_high;	/* bytes; FS_VALUE_MAX = "max" */
	uint64_t mem_max;	/* bytes; FS_VALUE_MAX = "max" */
	uint64_t mem_low;	/* bytes; FS_VALUE_MAX = "max" */
	size_t n_io;		/* <= FS_MAX_DISKS */
	struct fs_io_limit io[FS_MAX_DISKS];
	unsigned io_weight; /* 1..10000 */
};

/* The files, in table order. The per-disk file (io.max) is last. */
enum fs_cgfile {
	FS_CGF_CPU_MAX,
	FS_CGF_CPU_BURST,
	FS_CGF_CPU_WEIGHT,
	FS_CGF_MEM_HIGH,
	FS_CGF_MEM_MAX,
	FS_CGF_MEM_LOW,
	FS_CGF_IO_WEIGHT,
	FS_CGF_IO_MAX,
	FS_CGF__COUNT
};

#define FS_CGF_VALUE_MAX 192 /* a formatted value or extracted line, incl. NUL */
#define FS_CGF_KEY_MAX	 48  /* a state-file key, incl. NUL */
#define FS_CGF_SLOTS	 (FS_CGF_IO_MAX + FS_MAX_DISKS) /* (file, disk) pairs per cgroup */
#define FS_IO_KEYS_ALL	 ((1u << FS_IO__COUNT) - 1)	/* every io.max key (bit 1u << FS_IO_*) */

struct fs_cgfile_desc {
	const char *name; /* "cpu.max" ... */
	unsigned bit;	  /* enum fs_limit_bits */
	bool per_disk;	  /* one line per disk (io.max) */
	/* see fs_cgfile_format() and fs_cgfile_current() */
	int (*format)(const struct fs_limits *lim, size_t disk, char *buf, size_t len);
	int (*current)(struct fs_devnum dev, const char *content, char *buf, size_t len);
};

/* The table, indexed by enum fs_cgfile. */
extern const struct fs_cgfile_desc fs_cgfiles[FS_CGF__COUNT];

/* The file called name ("io.max"), or -1. */
int fs_cgfile_by_name(const char *name);

/*
 * Index of (file, disk) in a per-cgroup array of FS_CGF_SLOTS: the file for
 * the files that are not per disk, FS_CGF_IO_MAX + disk for io.max.
 */
static inline size_t fs_cgfile_slot(enum fs_cgfile f, size_t disk)
{
	return f == FS_CGF_IO_MAX ? (size_t)FS_CGF_IO_MAX + disk : (size_t)f;
}

/* "max" for FS_VALUE_MAX, else the decimal number. */
void fs_fmt_value(uint64_t v, char *buf, size_t len);

/* The leading number of a value ("50000 100000" -> 50000); "max", NULL or
 * no number -> FS_VALUE_MAX. */
uint64_t fs_parse_value(const char *s);

/*
 * An io.max line with the keys in `keys` (bits 1u << FS_IO_RBPS ..
 * 1u << FS_IO_WIOPS, in that order): "8:0 rbps=V wbps=max". The writer
 * writes FS_IO_KEYS_ALL; the planner displays the configured keys. Returns
 * the length snprintf would produce (>= len: truncated).
 */
int fs_fmt_io_max(const struct fs_io_limit *io, unsigned keys, char *buf, size_t len);

/* Whether a and b ask for the same files and values: every member compared
 * (the struct has padding, so not memcmp), the disks in order. */
bool fs_limits_equal(const struct fs_limits *a, const struct fs_limits *b);

/*
 * The value to write into f for lim (disk: index into lim->io for io.max,
 * ignored otherwise). 0, -ENOENT when lim does not set it (bit not in
 * lim->set, or disk >= lim->n_io), -ENOSPC when buf is too small.
 */
int fs_cgfile_format(enum fs_cgfile f, const struct fs_limits *lim, size_t disk, char *buf,
		     size_t len);

/*
 * The current value of f (disk dev for io.max) out of the file's content, in
 * the form fs_cgfile_format() writes: that disk's line for io.max (all keys
 * "max" when the disk has no line), the first line otherwise ("default N" for
 * io.weight); trailing spaces dropped. 0, -ENODATA when empty, -ENOSPC when
 * buf is too small.
 */
int fs_cgfile_current(enum fs_cgfile f, struct fs_devnum dev, const char *content, char *buf,
		      size_t len);

/*
 * Write order of one cgroup's files. cpu.max.burst must not exceed the quota,
 * so a falling burst goes before cpu.max, else after it; memory.high goes
 * before memory.max when memory.max falls (reclaim starts gently at high) and
 * after it when memory.max rises. Restore uses the same rule. Note each file
 * written (old value, new value), then sort by fs_cgfile_rank() (stable).
 */
struct fs_cgfile_order {
	bool burst_down; /* cpu.max.burst falls */
	bool max_down;	 /* memory.max falls */
};

/* old: the value in the file now (NULL: unknown, taken as "max"). */
void fs_cgfile_order_note(struct fs_cgfile_order *o, enum fs_cgfile f, const char *old,
			  const char *neu);
/* Smaller ranks are written first. */
int fs_cgfile_rank(const struct fs_cgfile_order *o, enum fs_cgfile f);

/*
 * The state-file key of (f, dev): the file name, or "io.max@MAJ:MIN" for
 * io.max. 0, -ENOSPC when buf is too small, -EINVAL for a bad f.
 */
int fs_cgfile_key(enum fs_cgfile f, struct fs_devnum dev, char *buf, size_t len);

/*
 * Parses a key made by fs_cgfile_key() (dev is 0:0 for the files that are
 * not per disk). 0, or -EINVAL for anything else (unknown file, io.max
 * without "@MAJ:MIN", a disk on another file, signs, spaces, overflow).
 */
int fs_cgfile_parse_key(const char *key, enum fs_cgfile *f, struct fs_devnum *dev);

#endif /* FAIRSHARE_MODEL_CGFILE_H */
