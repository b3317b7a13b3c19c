/* SPDX-License-Identifier: MIT */
/*
 * The disk's own counters: /sys/dev/block/MAJ:MIN/stat (Documentation/block/
 * stat.rst), read once per configured disk per period. They say whether
 * requests queue at the device, which the tenants' io.stat cannot: a disk
 * whose queue stays deep serves whoever queues deepest, at whatever rate it
 * can deliver now, which on a busy host or for small random IO is far below
 * its declared capacity (issue 14: an unfair 80/20 split at 35 MB/s on a
 * disk declared at 100 MB/s went unnoticed).
 */
#ifndef FAIRSHARE_SAMPLE_DISK_H
#define FAIRSHARE_SAMPLE_DISK_H

#include <stdint.h>

#include "resource.h"

/* The counters the contention estimate uses (cumulative, the kernel's units). */
struct fs_disk_counters {
	uint64_t rd_sectors, wr_sectors; /* 512-byte sectors */
	uint64_t in_flight;		 /* requests in flight now (a gauge) */
	uint64_t io_ticks_ms;		 /* time with at least one request in flight */
	uint64_t time_in_queue_ms;	 /* sum over requests of their time in flight */
};

/* The 11, 15 or 17 fields of a block stat file. 0 or -EINVAL. Pure. */
int fs_parse_diskstat(const char *text, struct fs_disk_counters *out);

/* Reads SYSFS_ROOT/dev/block/MAJ:MIN/stat. 0 or -errno. */
int fs_disk_counters_read(const char *sysfs_root, struct fs_devnum dev,
			  struct fs_disk_counters *out);

/* Over one period of dt_us microseconds. */
struct fs_disk_sample {
	double queue; /* mean requests in flight (time_in_queue delta / dt) */
	double util;  /* share of the time with a request in flight, 0..1 */
};

/* prev -> cur over dt_us: NAN fields when dt_us is 0 or a counter went back. */
void fs_disk_sample_delta(const struct fs_disk_counters *prev, const struct fs_disk_counters *cur,
			  uint64_t dt_us, struct fs_disk_sample *out);

#endif /* FAIRSHARE_SAMPLE_DISK_H */
