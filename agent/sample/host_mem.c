/* SPDX-License-Identifier: MIT */
/* The host's memory state (see host_mem.h). */
#include "host_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "sample_parse.h"

void fs_host_mem_unknown(struct fs_host_mem *h)
{
	h->total = h->available = h->psi_some_avg10 = h->psi_full_avg10 = NAN;
}

/* <root>/<name> into buf (NUL-terminated, at most len - 1 bytes: both files
 * are far smaller). 0 or -errno. */
static int read_small(const char *root, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	size_t used = 0;
	int fd, n;

	n = snprintf(path, sizeof(path), "%s/%s", root, name);
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

int fs_host_mem_read(const char *procfs_root, struct fs_host_mem *out)
{
	char buf[8192];
	struct fs_meminfo mi;
	struct fs_pressure psi;
	int r;

	fs_host_mem_unknown(out);
	if (read_small(procfs_root, "pressure/memory", buf, sizeof(buf)) == 0 &&
	    fs_parse_pressure(buf, &psi) == 0) {
		out->psi_some_avg10 = psi.some.avg10;
		if (psi.full.present)
			out->psi_full_avg10 = psi.full.avg10;
	}
	r = read_small(procfs_root, "meminfo", buf, sizeof(buf));
	if (r < 0)
		return r;
	if (fs_parse_meminfo(buf, &mi) < 0 || !(mi.have & FS_MI_AVAILABLE))
		return -EINVAL;
	out->available = (double)mi.available;
	if (mi.have & FS_MI_TOTAL)
		out->total = (double)mi.total;
	return 0;
}
