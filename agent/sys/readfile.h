/* SPDX-License-Identifier: MIT */
/*
 * One small procfs or sysfs file read whole, for the host probes that are
 * not cgroup files (cgroupfs.h confines those): /proc/meminfo,
 * /proc/pressure/memory, /sys/dev/block/MAJ:MIN/stat. No buffer to manage:
 * these files are a few hundred bytes to a few KiB.
 */
#ifndef FAIRSHARE_READFILE_H
#define FAIRSHARE_READFILE_H

#include <stddef.h>

/* <dir>/<name> into buf, NUL-terminated, at most len - 1 bytes (len > 0).
 * 0 or -errno (-ENAMETOOLONG for a path too long). */
int fs_read_small(const char *dir, const char *name, char *buf, size_t len);

#endif /* FAIRSHARE_READFILE_H */
