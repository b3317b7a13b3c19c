/* SPDX-License-Identifier: MIT */
/* The disk's own counters (see sample_disk.h). */
#include "sample_disk.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "readfile.h"

int fs_parse_diskstat(const char *text, struct fs_disk_counters *out)
{
	uint64_t f[11];
	int used = 0;

	/* read ios, merges, sectors, ticks; write ios, merges, sectors, ticks;
	 * in_flight, io_ticks, time_in_queue; then discard and flush fields,
	 * which newer kernels append and nothing here needs. */
	if (sscanf(text,
		   "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 "%n",
		   &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10],
		   &used) != 11 ||
	    used <= 0)
		return -EINVAL;
	*out = (struct fs_disk_counters){
	    .rd_sectors = f[2],
	    .wr_sectors = f[6],
	    .in_flight = f[8],
	    .io_ticks_ms = f[9],
	    .time_in_queue_ms = f[10],
	};
	return 0;
}

int fs_disk_counters_read(const char *sysfs_root, struct fs_devnum dev,
			  struct fs_disk_counters *out)
{
	char dir[4096], buf[512];
	int r;

	r = snprintf(dir, sizeof(dir), "%s/dev/block/%u:%u", sysfs_root, dev.major, dev.minor);
	if (r < 0 || (size_t)r >= sizeof(dir))
		return -ENAMETOOLONG;
	r = fs_read_small(dir, "stat", buf, sizeof(buf));
	return r < 0 ? r : fs_parse_diskstat(buf, out);
}

void fs_disk_sample_delta(const struct fs_disk_counters *prev, const struct fs_disk_counters *cur,
			  uint64_t dt_us, struct fs_disk_sample *out)
{
	double dt_ms = (double)dt_us / 1000.0;

	out->queue = out->util = NAN;
	if (!dt_us || cur->time_in_queue_ms < prev->time_in_queue_ms ||
	    cur->io_ticks_ms < prev->io_ticks_ms)
		return;
	out->queue = (double)(cur->time_in_queue_ms - prev->time_in_queue_ms) / dt_ms;
	out->util = fmin(1.0, (double)(cur->io_ticks_ms - prev->io_ticks_ms) / dt_ms);
}
