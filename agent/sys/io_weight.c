/* SPDX-License-Identifier: MIT */
/* Whether io.weight is honoured on a disk (see io_weight.h). */
#include "io_weight.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static bool scheduler_is_bfq(const char *sysfs_root, struct fs_devnum dev)
{
	char path[PATH_MAX], line[256];
	bool bfq = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/queue/scheduler", sysfs_root, dev.major,
		 dev.minor);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		bfq = strstr(line, "[bfq]") != NULL;
	fclose(f);
	return bfq;
}

static bool iocost_enabled(const char *cgroup_root, struct fs_devnum dev)
{
	char path[PATH_MAX], line[512], want[32];
	bool on = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/io.cost.qos", cgroup_root);
	snprintf(want, sizeof(want), "%u:%u ", dev.major, dev.minor);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!on && fgets(line, sizeof(line), f))
		on = strncmp(line, want, strlen(want)) == 0 && strstr(line, " enable=1");
	fclose(f);
	return on;
}

bool fsd_io_weight_effective(const char *sysfs_root, const char *cgroup_root, struct fs_devnum dev)
{
	return scheduler_is_bfq(sysfs_root ? sysfs_root : "/sys", dev) ||
	       iocost_enabled(cgroup_root ? cgroup_root : "/sys/fs/cgroup", dev);
}
