/* SPDX-License-Identifier: MIT */
/*
 * Device -> whole disk, through sysfs: io.max and io.stat only know whole
 * disks, while operators naturally name the partition or LVM volume that
 * holds their data.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agent_conf.h"

static int fail(char *err, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

static int read_devnum(const char *dir, const char *rel, struct fs_devnum *out)
{
	char path[PATH_MAX * 2];
	unsigned maj, min;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fscanf(f, "%u:%u", &maj, &min);
	fclose(f);
	if (n != 2)
		return -EINVAL;
	out->major = maj;
	out->minor = min;
	return 0;
}

static bool exists(const char *dir, const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return access(path, F_OK) == 0;
}

/* The single entry of <dir>/slaves, or an error naming the count. */
static int single_slave(const char *dir, char *name, size_t len, int *count)
{
	char path[PATH_MAX * 2];
	struct dirent *de;
	DIR *d;

	*count = 0;
	snprintf(path, sizeof(path), "%s/slaves", dir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (++*count == 1)
			snprintf(name, len, "%s", de->d_name);
	}
	closedir(d);
	return *count == 1 ? 0 : -EINVAL;
}

int fs_conf_resolve_disk(const char *sysfs_root, const char *device, struct fs_devnum *out,
			 char *err, size_t errlen)
{
	const char *sys = sysfs_root ? sysfs_root : FS_DEFAULT_SYSFS_ROOT;
	struct fs_devnum dev;
	unsigned maj, min;
	int n = 0;

	if (sscanf(device, "%u:%u%n", &maj, &min, &n) == 2 && device[n] == '\0') {
		dev.major = maj;
		dev.minor = min;
	} else if (device[0] == '/') {
		struct stat st;

		if (stat(device, &st) < 0)
			return fail(err, errlen, -errno, "%s: %s", device, strerror(errno));
		if (!S_ISBLK(st.st_mode))
			return fail(err, errlen, -ENOTBLK, "%s is not a block device", device);
		dev.major = major(st.st_rdev);
		dev.minor = minor(st.st_rdev);
	} else {
		return fail(err, errlen, -EINVAL, "'%s' is neither a device path nor MAJ:MIN",
			    device);
	}

	/* dm on dm on a partition is three hops; more means a loop. */
	for (int depth = 0; depth < 8; depth++) {
		char link[PATH_MAX], real[PATH_MAX], slave[256];
		int count, r;

		snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sys, dev.major, dev.minor);
		if (!realpath(link, real))
			return fail(err, errlen, -ENODEV, "no block device %u:%u (%s: %s)",
				    dev.major, dev.minor, link, strerror(errno));
		if (exists(real, "partition")) {
			char *slash = strrchr(real, '/');

			if (!slash || slash == real)
				return fail(err, errlen, -ENODEV, "%s: no parent disk", real);
			*slash = '\0';
			r = read_devnum(real, "dev", out);
			if (r < 0)
				return fail(err, errlen, r, "%s/dev: cannot read the parent disk",
					    real);
			return 0;
		}
		if (!exists(real, "dm")) {
			*out = dev;
			return 0;
		}
		r = single_slave(real, slave, sizeof(slave), &count);
		if (r < 0)
			return fail(err, errlen, -EINVAL,
				    "device-mapper device %u:%u sits on %d devices; io.max needs "
				    "one whole disk, name it instead",
				    dev.major, dev.minor, count);
		snprintf(link, sizeof(link), "slaves/%s/dev", slave);
		r = read_devnum(real, link, &dev);
		if (r < 0)
			return fail(err, errlen, r, "%s/%s: cannot read", real, link);
	}
	return fail(err, errlen, -ELOOP, "%s: device-mapper chain too deep", device);
}
