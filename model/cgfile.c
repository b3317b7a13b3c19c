/* SPDX-License-Identifier: MIT */
/* The cgroup files fairshare writes (see cgfile.h). Pure: no I/O. */
#include "cgfile.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static int fit(int n, size_t len)
{
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

void fs_fmt_value(uint64_t v, char *buf, size_t len)
{
	if (v == FS_VALUE_MAX)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRIu64, v);
}

uint64_t fs_parse_value(const char *s)
{
	uint64_t v = 0;

	if (!s || *s < '0' || *s > '9')
		return FS_VALUE_MAX;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return FS_VALUE_MAX;
		v = v * 10 + d;
	}
	return v;
}

int fs_fmt_io_max(const struct fs_io_limit *io, unsigned keys, char *buf, size_t len)
{
	const uint64_t v[FS_IO__COUNT] = {io->rbps, io->wbps, io->riops, io->wiops};
	size_t used;
	int n;

	n = snprintf(buf, len, "%u:%u", io->dev.major, io->dev.minor);
	if (n < 0)
		return n;
	used = (size_t)n;
	for (int k = 0; k < FS_IO__COUNT; k++) {
		char val[24];

		if (!(keys & (1u << k)))
			continue;
		fs_fmt_value(v[k], val, sizeof(val));
		n = snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, " %s=%s",
			     fs_res_io_key((enum fs_res_kind)(FS_RES_IO_RBPS + k)), val);
		if (n < 0)
			return n;
		used += (size_t)n;
	}
	return used > INT_MAX ? INT_MAX : (int)used;
}

/* Formatters, one per file. */

static int fmt_cpu_max(const struct fs_limits *lim, size_t disk, char *buf, size_t len)
{
	char q[24];

	(void)disk;
	fs_fmt_value(lim->cpu_quota_us, q, sizeof(q));
	return fit(
	    snprintf(buf, len, "%s %" PRIu64, q, lim->cpu_period_us ? lim->cpu_period_us : 100000),
	    len);
}

static int fmt_cpu_burst(const struct fs_limits *lim, size_t disk, char *buf, size_t len)
{
	(void)disk;
	return fit(snprintf(buf, len, "%" PRIu64, lim->cpu_burst_us), len);
}

static int fmt_cpu_weight(const struct fs_limits *lim, size_t disk, char *buf, size_t len)
{
	(void)disk;
	return fit(snprintf(buf, len, "%u", lim->cpu_weight), len);
}

static int fmt_value(uint64_t v, char *buf, size_t len)
{
	char s[24];

	fs_fmt_value(v, s, sizeof(s));
	return fit(snprintf(buf, len, "%s", s), len);
}

static int fmt_mem_high(const struct fs_limits *lim, size_t disk, char *buf, size_t len)
{
	(void)disk;
	return fmt_value(lim->mem_high, buf, len);
}

static int fmt_mem_max(const struct fs_limits *lim, size_t disk, char *buf, size_t len)
{
	(void)disk;
	return fmt_value(lim->mem_max, buf, len);
}

static int fmt_mem_low(const struct fs_limits *lim, size_t disk, char *buf, size_t len)
{
	(void)disk;
	return fmt_value(lim->mem_low, buf, len);
}

static int fmt_io_weight(const struct fs_limits *lim, size_t disk, char *buf, size_t len)
{
	(void)disk;
	return fit(snprintf(buf, len, "default %u", lim->io_weight), len);
}

static int fmt_io_max(const struct fs_limits *lim, size_t disk, char *buf, size_t len)
{
	if (disk >= lim->n_io || disk >= FS_MAX_DISKS)
		return -ENOENT;
	return fit(fs_fmt_io_max(&lim->io[disk], FS_IO_KEYS_ALL, buf, len), len);
}

/* Current-value extractors. */

static int copy_line(const char *p, size_t n, char *buf, size_t len)
{
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	if (n >= len)
		return -ENOSPC;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return n ? 0 : -ENODATA;
}

static int cur_first_line(struct fs_devnum dev, const char *content, char *buf, size_t len)
{
	(void)dev;
	return copy_line(content, strcspn(content, "\n"), buf, len);
}

static int cur_io_max(struct fs_devnum dev, const char *content, char *buf, size_t len)
{
	char prefix[32];
	size_t pl = (size_t)snprintf(prefix, sizeof(prefix), "%u:%u ", dev.major, dev.minor);
	const char *p = content;

	while (p && *p) {
		if (strncmp(p, prefix, pl) == 0)
			return copy_line(p, strcspn(p, "\n"), buf, len);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	{
		struct fs_io_limit all = {dev, FS_VALUE_MAX, FS_VALUE_MAX, FS_VALUE_MAX,
					  FS_VALUE_MAX};

		return fit(fs_fmt_io_max(&all, FS_IO_KEYS_ALL, buf, len), len);
	}
}

const struct fs_cgfile_desc fs_cgfiles[FS_CGF__COUNT] = {
    [FS_CGF_CPU_MAX] = {"cpu.max", FS_LIM_CPU_MAX, false, fmt_cpu_max, cur_first_line},
    [FS_CGF_CPU_BURST] = {"cpu.max.burst", FS_LIM_CPU_BURST, false, fmt_cpu_burst, cur_first_line},
    [FS_CGF_CPU_WEIGHT] = {"cpu.weight", FS_LIM_CPU_WEIGHT, false, fmt_cpu_weight, cur_first_line},
    [FS_CGF_MEM_HIGH] = {"memory.high", FS_LIM_MEM_HIGH, false, fmt_mem_high, cur_first_line},
    [FS_CGF_MEM_MAX] = {"memory.max", FS_LIM_MEM_MAX, false, fmt_mem_max, cur_first_line},
    [FS_CGF_MEM_LOW] = {"memory.low", FS_LIM_MEM_LOW, false, fmt_mem_low, cur_first_line},
    [FS_CGF_IO_WEIGHT] = {"io.weight", FS_LIM_IO_WEIGHT, false, fmt_io_weight, cur_first_line},
    [FS_CGF_IO_MAX] = {"io.max", FS_LIM_IO_MAX, true, fmt_io_max, cur_io_max},
};

_Static_assert(FS_CGF_IO_MAX == FS_CGF__COUNT - 1, "the per-disk file is last (slots)");

static bool valid_file(enum fs_cgfile f)
{
	return (unsigned)f < FS_CGF__COUNT;
}

int fs_cgfile_by_name(const char *name)
{
	for (int f = 0; f < FS_CGF__COUNT; f++)
		if (strcmp(name, fs_cgfiles[f].name) == 0)
			return f;
	return -1;
}

bool fs_limits_equal(const struct fs_limits *a, const struct fs_limits *b)
{
	if (a->set != b->set || a->cpu_quota_us != b->cpu_quota_us ||
	    a->cpu_period_us != b->cpu_period_us || a->cpu_burst_us != b->cpu_burst_us ||
	    a->cpu_weight != b->cpu_weight || a->mem_high != b->mem_high ||
	    a->mem_max != b->mem_max || a->mem_low != b->mem_low || a->n_io != b->n_io ||
	    a->io_weight != b->io_weight)
		return false;
	for (size_t d = 0; d < a->n_io && d < FS_MAX_DISKS; d++) {
		const struct fs_io_limit *x = &a->io[d], *y = &b->io[d];

		if (x->dev.major != y->dev.major || x->dev.minor != y->dev.minor ||
		    x->rbps != y->rbps || x->wbps != y->wbps || x->riops != y->riops ||
		    x->wiops != y->wiops)
			return false;
	}
	return true;
}

int fs_cgfile_format(enum fs_cgfile f, const struct fs_limits *lim, size_t disk, char *buf,
		     size_t len)
{
	if (!valid_file(f) || !(lim->set & fs_cgfiles[f].bit))
		return -ENOENT;
	return fs_cgfiles[f].format(lim, disk, buf, len);
}

int fs_cgfile_current(enum fs_cgfile f, struct fs_devnum dev, const char *content, char *buf,
		      size_t len)
{
	if (!valid_file(f))
		return -EINVAL;
	return fs_cgfiles[f].current(dev, content ? content : "", buf, len);
}

void fs_cgfile_order_note(struct fs_cgfile_order *o, enum fs_cgfile f, const char *old,
			  const char *neu)
{
	bool down = fs_parse_value(neu) < fs_parse_value(old);

	if (f == FS_CGF_CPU_BURST && down)
		o->burst_down = true;
	if (f == FS_CGF_MEM_MAX && down)
		o->max_down = true;
}

int fs_cgfile_rank(const struct fs_cgfile_order *o, enum fs_cgfile f)
{
	switch (f) {
	case FS_CGF_CPU_BURST:
		return o->burst_down ? 0 : 2;
	case FS_CGF_CPU_MAX:
		return 1;
	case FS_CGF_MEM_HIGH:
		return o->max_down ? 3 : 5;
	case FS_CGF_MEM_MAX:
		return 4;
	default:
		return 6;
	}
}

int fs_cgfile_key(enum fs_cgfile f, struct fs_devnum dev, char *buf, size_t len)
{
	if (!valid_file(f))
		return -EINVAL;
	if (fs_cgfiles[f].per_disk)
		return fit(snprintf(buf, len, "%s@%u:%u", fs_cgfiles[f].name, dev.major, dev.minor),
			   len);
	return fit(snprintf(buf, len, "%s", fs_cgfiles[f].name), len);
}

/* Decimal digits only, no sign, no leading zeros but "0", <= UINT_MAX. */
static const char *parse_uint(const char *s, unsigned *out)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT_MAX)
			return NULL;
	}
	if (p == s || (s[0] == '0' && p - s > 1))
		return NULL;
	*out = (unsigned)v;
	return p;
}

int fs_cgfile_parse_key(const char *key, enum fs_cgfile *f, struct fs_devnum *dev)
{
	size_t n = strcspn(key, "@");
	struct fs_devnum d = {0, 0};
	const char *p;

	for (int i = 0; i < FS_CGF__COUNT; i++) {
		if (strlen(fs_cgfiles[i].name) != n || strncmp(key, fs_cgfiles[i].name, n) != 0)
			continue;
		if (!fs_cgfiles[i].per_disk) {
			if (key[n] != '\0')
				return -EINVAL;
		} else {
			if (key[n] != '@')
				return -EINVAL;
			p = parse_uint(key + n + 1, &d.major);
			if (!p || *p != ':')
				return -EINVAL;
			p = parse_uint(p + 1, &d.minor);
			if (!p || *p != '\0')
				return -EINVAL;
		}
		*f = (enum fs_cgfile)i;
		*dev = d;
		return 0;
	}
	return -EINVAL;
}
