/* SPDX-License-Identifier: MIT */
/* One small procfs or sysfs file read whole (see readfile.h). */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int fs_read_small(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	size_t used = 0;
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (used < len - 1) {
		ssize_t r = read(fd, buf + used, len - 1 - used);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (r == 0)
			break;
		used += (size_t)r;
	}
	close(fd);
	buf[used] = '\0';
	return 0;
}
