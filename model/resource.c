/* SPDX-License-Identifier: MIT */
/* The resource model (see resource.h). Pure: no I/O. */
#include "resource.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *fs_res_io_key(enum fs_res_kind k)
{
	static const char *const key[FS_DISK_KINDS] = {"rbps",	"wbps", "riops",
						       "wiops", "bps",	"iops"};

	return fs_res_is_io(k) ? key[k - FS_RES_IO_RBPS] : NULL;
}

unsigned fs_res_io_keys(enum fs_res_kind k)
{
	if (k == FS_RES_IO_BPS)
		return 1u << FS_IO_RBPS | 1u << FS_IO_WBPS;
	if (k == FS_RES_IO_IOPS)
		return 1u << FS_IO_RIOPS | 1u << FS_IO_WIOPS;
	return fs_res_io_index(k) < 0 ? 0 : 1u << fs_res_io_index(k);
}

int fs_resources_add(struct fs_resources *res, enum fs_res_kind kind, const char *name,
		     double capacity, int disk, struct fs_devnum dev)
{
	size_t i = res->n;
	size_t sz = sizeof(res->name[0]);

	if (i >= FS_MAX_RES)
		return -ENOSPC;
	if (!(capacity > 0) || !isfinite(capacity) || kind > FS_RES_NET)
		return -EINVAL;
	res->kind[i] = kind;
	res->capacity[i] = capacity;
	res->disk[i] = fs_res_is_io(kind) ? disk : -1;
	res->dev[i] = fs_res_is_io(kind) ? dev : (struct fs_devnum){0, 0};
	if (name)
		snprintf(res->name[i], sz, "%s", name);
	else if (kind == FS_RES_CPU)
		snprintf(res->name[i], sz, "cpu");
	else if (kind == FS_RES_MEMORY)
		snprintf(res->name[i], sz, "memory");
	else if (kind == FS_RES_NET)
		snprintf(res->name[i], sz, "net");
	else
		snprintf(res->name[i], sz, "io.%u:%u.%s", dev.major, dev.minor,
			 fs_res_io_key(kind));
	res->n++;
	return (int)i;
}

int fs_resources_find(const struct fs_resources *res, enum fs_res_kind kind)
{
	for (size_t i = 0; i < res->n; i++)
		if (res->kind[i] == kind)
			return (int)i;
	return -1;
}

int fs_resources_find_name(const struct fs_resources *res, const char *name)
{
	for (size_t i = 0; i < res->n; i++)
		if (strcmp(res->name[i], name) == 0)
			return (int)i;
	return -1;
}

size_t fs_resources_disks(const struct fs_resources *res)
{
	size_t n = 0;

	for (size_t i = 0; i < res->n; i++)
		if (res->disk[i] >= 0 && (size_t)res->disk[i] + 1 > n)
			n = (size_t)res->disk[i] + 1;
	return n;
}

const char *fs_res_kind_name(enum fs_res_kind k)
{
	static const char *const name[] = {
	    [FS_RES_CPU] = "cpu",	    [FS_RES_MEMORY] = "memory",
	    [FS_RES_IO_RBPS] = "io-rbps",   [FS_RES_IO_WBPS] = "io-wbps",
	    [FS_RES_IO_RIOPS] = "io-riops", [FS_RES_IO_WIOPS] = "io-wiops",
	    [FS_RES_IO_BPS] = "io-bps",	    [FS_RES_IO_IOPS] = "io-iops",
	    [FS_RES_NET] = "net",
	};

	return (unsigned)k <= FS_RES_NET ? name[k] : "net";
}

const char *fs_res_unit(enum fs_res_kind k)
{
	if (k == FS_RES_CPU)
		return "cores";
	if (k == FS_RES_MEMORY)
		return "bytes";
	return fs_res_counts_ops(k) ? "ops/s" : "bytes/s";
}

void fs_res_fmt_amount(enum fs_res_kind k, double v, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "max");
	else if (k == FS_RES_CPU)
		snprintf(buf, len, "%.3g", v);
	else if (fs_res_counts_ops(k))
		snprintf(buf, len, "%.0f", v);
	else if (v >= 1 << 30)
		snprintf(buf, len, "%.2fG", v / (1 << 30));
	else if (v >= 1 << 20)
		snprintf(buf, len, "%.1fM", v / (1 << 20));
	else
		snprintf(buf, len, "%.0fK", v / 1024);
}
