/* SPDX-License-Identifier: MIT */
#include "paths.h"

#include <stdio.h>

void fs_paths_default(struct fs_paths *p)
{
	snprintf(p->cgroup_root, sizeof(p->cgroup_root), "%s", FS_DEFAULT_CGROUP_ROOT);
	snprintf(p->sysfs_root, sizeof(p->sysfs_root), "%s", FS_DEFAULT_SYSFS_ROOT);
	snprintf(p->procfs_root, sizeof(p->procfs_root), "%s", FS_DEFAULT_PROCFS_ROOT);
}
