/* SPDX-License-Identifier: MIT */
/*
 * The host's root paths: the one place that names /sys/fs/cgroup, /sys and
 * /proc. Everything that reads or writes the system takes a struct fs_paths
 * (or one member of it) as a parameter, so tests point the whole daemon at a
 * fake tree and nothing depends on the host's disks.
 */
#ifndef FAIRSHARE_MODEL_PATHS_H
#define FAIRSHARE_MODEL_PATHS_H

#include <limits.h>

#define FS_DEFAULT_CGROUP_ROOT "/sys/fs/cgroup"
#define FS_DEFAULT_SYSFS_ROOT  "/sys"
#define FS_DEFAULT_PROCFS_ROOT "/proc"
#define FS_DEFAULT_RUN_DIR     "/run/fairshare" /* state_dir and the control socket */
#define FS_DEFAULT_SOCKET      FS_DEFAULT_RUN_DIR "/control.sock"

struct fs_paths {
	char cgroup_root[PATH_MAX]; /* the cgroup2 mount tenants are relative to */
	char sysfs_root[PATH_MAX];  /* block devices, schedulers */
	char procfs_root[PATH_MAX]; /* meminfo, per-task schedstat */
};

/* The real system's paths. */
void fs_paths_default(struct fs_paths *p);

#endif /* FAIRSHARE_MODEL_PATHS_H */
