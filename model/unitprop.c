/* SPDX-License-Identifier: MIT */
/* The systemd backend's property encoding (see unitprop.h). Pure: no I/O. */
#include "unitprop.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const struct fs_uprop_desc fs_uprops[FS_CGF__COUNT] = {
    [FS_CGF_CPU_MAX] = {2, {"CPUQuotaPerSecUSec", "CPUQuotaPeriodUSec"}, FS_UPROP_LIMIT, false},
    [FS_CGF_CPU_BURST] = {0, {NULL}, FS_UPROP_LIMIT, false},
    [FS_CGF_CPU_WEIGHT] = {1, {"CPUWeight"}, FS_UPROP_WEIGHT, false},
    [FS_CGF_MEM_HIGH] = {1, {"MemoryHigh"}, FS_UPROP_LIMIT, false},
    [FS_CGF_MEM_MAX] = {1, {"MemoryMax"}, FS_UPROP_LIMIT, false},
    [FS_CGF_MEM_LOW] = {1, {"MemoryLow"}, FS_UPROP_LIMIT, false},
    [FS_CGF_IO_WEIGHT] = {1, {"IOWeight"}, FS_UPROP_WEIGHT, false},
    [FS_CGF_IO_MAX] = {4,
		       {"IOReadBandwidthMax", "IOWriteBandwidthMax", "IOReadIOPSMax",
			"IOWriteIOPSMax"},
		       FS_UPROP_LIMIT,
		       true},
};

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && memcmp(s + n - k, suffix, k) == 0;
}

enum fs_unit_type fs_unit_of_cgroup(const char *cgroup, char *unit, size_t len)
{
	const char *base = strrchr(cgroup, '/');
	enum fs_unit_type t = FS_UNIT_NONE;
	size_t n;

	base = base ? base + 1 : cgroup;
	n = strlen(base);
	if (ends_with(base, n, ".slice"))
		t = FS_UNIT_SLICE;
	else if (ends_with(base, n, ".scope"))
		t = FS_UNIT_SCOPE;
	else if (ends_with(base, n, ".service"))
		t = FS_UNIT_SERVICE;
	if (t == FS_UNIT_NONE || n >= FS_UNIT_NAME_MAX)
		return FS_UNIT_NONE;
	if (unit) {
		if (n >= len)
			return FS_UNIT_NONE;
		memcpy(unit, base, n + 1);
	}
	return t;
}

const char *fs_unit_interface(enum fs_unit_type t)
{
	switch (t) {
	case FS_UNIT_SLICE:
		return "org.freedesktop.systemd1.Slice";
	case FS_UNIT_SCOPE:
		return "org.freedesktop.systemd1.Scope";
	case FS_UNIT_SERVICE:
		return "org.freedesktop.systemd1.Service";
	case FS_UNIT_NONE:
		break;
	}
	return NULL;
}

uint64_t fs_uprop_cpu_quota(uint64_t quota_us, uint64_t period_us)
{
	const uint64_t step = FS_UPROP_QUOTA_STEP;
	double per_sec, steps;

	if (quota_us == FS_VALUE_MAX)
		return FS_VALUE_MAX;
	if (!period_us)
		period_us = 100000;
	per_sec = (double)quota_us * 1e6 / (double)period_us;
	steps = per_sec / (double)step + 0.5;
	if (steps < 1)
		return step;
	if (steps >= (double)(UINT64_MAX / step))
		return FS_VALUE_MAX;
	return (uint64_t)steps * step;
}

int fs_uprop_values(enum fs_cgfile f, const struct fs_limits *lim, size_t disk,
		    uint64_t v[FS_UPROP_MAX])
{
	if ((unsigned)f >= FS_CGF__COUNT)
		return -EINVAL;
	if (fs_uprops[f].n == 0)
		return -EOPNOTSUPP;
	if (!(lim->set & fs_cgfiles[f].bit))
		return -ENOENT;
	memset(v, 0, FS_UPROP_MAX * sizeof(*v));
	switch (f) {
	case FS_CGF_CPU_MAX:
		v[0] = fs_uprop_cpu_quota(lim->cpu_quota_us, lim->cpu_period_us);
		v[1] = lim->cpu_period_us ? lim->cpu_period_us : 100000;
		break;
	case FS_CGF_CPU_WEIGHT:
		v[0] = lim->cpu_weight;
		break;
	case FS_CGF_MEM_HIGH: /* systemd refuses 0 for these two */
		v[0] = lim->mem_high ? lim->mem_high : 1;
		break;
	case FS_CGF_MEM_MAX:
		v[0] = lim->mem_max ? lim->mem_max : 1;
		break;
	case FS_CGF_MEM_LOW:
		v[0] = lim->mem_low;
		break;
	case FS_CGF_IO_WEIGHT:
		v[0] = lim->io_weight;
		break;
	case FS_CGF_IO_MAX:
		if (disk >= lim->n_io || disk >= FS_MAX_DISKS)
			return -ENOENT;
		v[0] = lim->io[disk].rbps;
		v[1] = lim->io[disk].wbps;
		v[2] = lim->io[disk].riops;
		v[3] = lim->io[disk].wiops;
		break;
	default:
		return -EOPNOTSUPP;
	}
	return 0;
}

int fs_uprop_print(enum fs_cgfile f, const uint64_t v[FS_UPROP_MAX], char *buf, size_t len)
{
	const struct fs_uprop_desc *d;
	size_t used = 0;

	if ((unsigned)f >= FS_CGF__COUNT)
		return -EINVAL;
	d = &fs_uprops[f];
	if (d->n == 0)
		return -EOPNOTSUPP;
	if (len)
		buf[0] = '\0';
	for (size_t k = 0; k < d->n; k++) {
		char val[24];
		int n;

		if (v[k] == UINT64_MAX)
			snprintf(val, sizeof(val), "%s",
				 d->kind == FS_UPROP_WEIGHT ? "unset" : "infinity");
		else
			snprintf(val, sizeof(val), "%" PRIu64, v[k]);
		n = snprintf(buf + used, len - used, "%s%s=%s", k ? " " : "", d->name[k], val);
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
		used += (size_t)n;
	}
	return 0;
}

int fs_uprop_format(enum fs_cgfile f, const struct fs_limits *lim, size_t disk, char *buf,
		    size_t len)
{
	uint64_t v[FS_UPROP_MAX];
	int r = fs_uprop_values(f, lim, disk, v);

	return r < 0 ? r : fs_uprop_print(f, v, buf, len);
}

/* A decimal number without sign, spaces or leading zeros (the one form
 * fs_uprop_print writes: the writer compares strings); false on overflow
 * or junk. */
static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || (n > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned dg;

		if (s[i] < '0' || s[i] > '9')
			return false;
		dg = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - dg) / 10)
			return false;
		v = v * 10 + dg;
	}
	*out = v;
	return true;
}

int fs_uprop_parse(enum fs_cgfile f, const char *s, uint64_t v[FS_UPROP_MAX])
{
	const struct fs_uprop_desc *d;

	if ((unsigned)f >= FS_CGF__COUNT || !s)
		return -EINVAL;
	d = &fs_uprops[f];
	if (d->n == 0)
		return -EINVAL;
	for (size_t k = 0; k < d->n; k++) {
		const char *inf = d->kind == FS_UPROP_WEIGHT ? "unset" : "infinity";
		size_t nl = strlen(d->name[k]), vl;

		if (k > 0 && *s++ != ' ')
			return -EINVAL;
		if (strncmp(s, d->name[k], nl) != 0 || s[nl] != '=')
			return -EINVAL;
		s += nl + 1;
		vl = strcspn(s, " ");
		if (vl == strlen(inf) && strncmp(s, inf, vl) == 0)
			v[k] = UINT64_MAX;
		else if (!parse_u64(s, vl, &v[k]) || v[k] == UINT64_MAX)
			return -EINVAL;
		s += vl;
	}
	return *s ? -EINVAL : 0;
}

int fs_uprop_dev_path(struct fs_devnum dev, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/dev/block/%u:%u", dev.major, dev.minor);

	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

uint64_t fs_uprop_first_value(const char *s)
{
	const char *eq = s ? strchr(s, '=') : NULL;

	return eq ? fs_parse_value(eq + 1) : FS_VALUE_MAX;
}

int fs_uprop_set_first(enum fs_cgfile f, uint64_t v, char *buf, size_t len)
{
	uint64_t vals[FS_UPROP_MAX];

	if ((unsigned)f >= FS_CGF__COUNT || fs_uprops[f].n != 1 ||
	    fs_uprop_parse(f, buf, vals) < 0)
		return -EINVAL;
	vals[0] = v;
	return fs_uprop_print(f, vals, buf, len);
}
