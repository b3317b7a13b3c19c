/* SPDX-License-Identifier: MIT */
/* Whether io.weight is honoured on a disk (see io_weight.h). */
#include "io_weight.h"

#include "cgroupfs.h"
#include "paths.h"

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

/* io.cost.qos is a cgroup file of the root: read through cgroupfs.h. */
static bool iocost_enabled(const char *cgroup_root, struct fs_devnum dev)
{
	struct fs_cgroupfs cg = {.root_fd = -1};
	struct fs_buf buf = {0};
	char want[32];
	const char *line;
	bool on = false;

	snprintf(want, sizeof(want), "%u:%u ", dev.major, dev.minor);
	if (fs_cgfs_open(&cg, cgroup_root) == 0 && fs_cgfs_read(&cg, "", "io.cost.qos", &buf) == 0)
		for (line = buf.data; line && *line && !on;
		     line = strchr(line, '\n'), line += !!line) {
			size_t n = strcspn(line, "\n");

			on = strncmp(line, want, strlen(want)) == 0 &&
			     memmem(line, n, " enable=1", 9) != NULL;
		}
	fs_buf_free(&buf);
	fs_cgfs_close(&cg);
	return on;
}

bool fsd_io_weight_effective(const char *sysfs_root, const char *cgroup_root, struct fs_devnum dev)
{
	return scheduler_is_bfq(sysfs_root ? sysfs_root : FS_DEFAULT_SYSFS_ROOT, dev) ||
	       iocost_enabled(cgroup_root ? cgroup_root : FS_DEFAULT_CGROUP_ROOT, dev);
}
