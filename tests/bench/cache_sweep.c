/* SPDX-License-Identifier: MIT */
/* Streams a file through the CPU caches between periods (cache_sweep.h). */
#include "cache_sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHUNK (64u * 1024u) /* small enough to stay in L2: the file is what streams */

int cache_sweep_open(struct cache_sweep *cs, const char *dir, size_t mib)
{
	static char zero[CHUNK];
	int r = 0;

	cs->fd = -1;
	cs->bytes = mib << 20;
	if (mib == 0)
		return 0;
	cs->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (cs->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		/* no O_TMPFILE on this filesystem: a named file, unlinked at once */
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/cache-sweep-XXXXXX", dir) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		cs->fd = mkostemp(path, O_CLOEXEC);
		if (cs->fd >= 0)
			unlink(path);
	}
	if (cs->fd < 0)
		return -errno;
	/* written, not ftruncate'd: a hole reads as zeroes without touching memory */
	for (size_t off = 0; off < cs->bytes && r == 0; off += CHUNK) {
		const ssize_t w = pwrite(cs->fd, zero, CHUNK, (off_t)off);

		r = w < 0 ? -errno : w != (ssize_t)CHUNK ? -EIO : 0;
	}
	if (r < 0)
		cache_sweep_close(cs);
	return r;
}

int cache_sweep_run(const struct cache_sweep *cs)
{
	static char buf[CHUNK];

	for (size_t off = 0; cs->fd >= 0 && off < cs->bytes; off += CHUNK) {
		const ssize_t n = pread(cs->fd, buf, CHUNK, (off_t)off);

		if (n != (ssize_t)CHUNK)
			return n < 0 ? -errno : -EIO;
	}
	return 0;
}

void cache_sweep_close(struct cache_sweep *cs)
{
	if (cs->fd >= 0)
		close(cs->fd);
	cs->fd = -1;
}
