/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sample_parse.h"

/* A "key value\n" file: finds each line's key in keys[] and stores its u64. */
struct flat_key {
	const char *name;
	unsigned bit;
	size_t offset; /* of the uint64_t within the struct */
};

static int parse_u64(const char *s, const char **end, uint64_t *out)
{
	char *e;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno)
		return -EINVAL;
	*out = v;
	*end = e;
	return 0;
}

static int parse_flat(const char *text, const struct flat_key *keys, size_t n_keys, void *obj,
		      unsigned *have)
{
	const char *p = text;

	*have = 0;
	if (!text)
		return -EINVAL;
	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *sp = memchr(p, ' ', eol ? (size_t)(eol - p) : strlen(p));
		size_t klen;

		if (!eol)
			eol = p + strlen(p);
		if (sp) {
			klen = (size_t)(sp - p);
			for (size_t i = 0; i < n_keys; i++) {
				const char *end;
				uint64_t v;

				if (strlen(keys[i].name) != klen || memcmp(keys[i].name, p, klen))
					continue;
				if (parse_u64(sp + 1, &end, &v) < 0 || end != eol)
					return -EINVAL;
				memcpy((char *)obj + keys[i].offset, &v, sizeof(v));
				*have |= keys[i].bit;
				break;
			}
		}
		p = *eol ? eol + 1 : eol;
	}
	return 0;
}

#define KEY(s, f, b)                                                                               \
	{                                                                                          \
#f, b, offsetof(s, f)                                                              \
	}

int fs_parse_cpu_stat(const char *text, struct fs_cpu_stat *out)
{
	static const struct flat_key keys[] = {
	    KEY(struct fs_cpu_stat, usage_usec, FS_CPU_USAGE),
	    KEY(struct fs_cpu_stat, user_usec, FS_CPU_USER),
	    KEY(struct fs_cpu_stat, system_usec, FS_CPU_SYSTEM),
	    KEY(struct fs_cpu_stat, nr_periods, FS_CPU_NR_PERIODS),
	    KEY(struct fs_cpu_stat, nr_throttled, FS_CPU_NR_THROTTLED),
	    KEY(struct fs_cpu_stat, throttled_usec, FS_CPU_THROTTLED),
	};

	memset(out, 0, sizeof(*out));
	return parse_flat(text, keys, sizeof(keys) / sizeof(keys[0]), out, &out->have);
}

int fs_parse_memory_stat(const char *text, struct fs_memory_stat *out)
{
	static const struct flat_key keys[] = {
	    KEY(struct fs_memory_stat, anon, FS_MEM_ANON),
	    KEY(struct fs_memory_stat, file, FS_MEM_FILE),
	    KEY(struct fs_memory_stat, active_anon, FS_MEM_ACTIVE_ANON),
	    KEY(struct fs_memory_stat, inactive_anon, FS_MEM_INACTIVE_ANON),
	    KEY(struct fs_memory_stat, active_file, FS_MEM_ACTIVE_FILE),
	    KEY(struct fs_memory_stat, inactive_file, FS_MEM_INACTIVE_FILE),
	};

	memset(out, 0, sizeof(*out));
	return parse_flat(text, keys, sizeof(keys) / sizeof(keys[0]), out, &out->have);
}

int fs_parse_memory_events(const char *text, struct fs_memory_events *out)
{
	static const struct flat_key keys[] = {
	    KEY(struct fs_memory_events, low, FS_MEV_LOW),
	    KEY(struct fs_memory_events, high, FS_MEV_HIGH),
	    KEY(struct fs_memory_events, max, FS_MEV_MAX),
	    KEY(struct fs_memory_events, oom, FS_MEV_OOM),
	    KEY(struct fs_memory_events, oom_kill, FS_MEV_OOM_KILL),
	};

	memset(out, 0, sizeof(*out));
	return parse_flat(text, keys, sizeof(keys) / sizeof(keys[0]), out, &out->have);
}

/* "254:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0\n" */
int fs_parse_io_stat(const char *text, struct fs_devnum dev, struct fs_io_stat *out)
{
	static const struct flat_key keys[] = {
	    KEY(struct fs_io_stat, rbytes, FS_IOS_RBYTES),
	    KEY(struct fs_io_stat, wbytes, FS_IOS_WBYTES),
	    KEY(struct fs_io_stat, rios, FS_IOS_RIOS),
	    KEY(struct fs_io_stat, wios, FS_IOS_WIOS),
	};
	const char *p = text;

	memset(out, 0, sizeof(*out));
	if (!text)
		return -EINVAL;
	while (*p) {
		const char *eol = strchr(p, '\n');
		unsigned long maj, min;
		char *e;

		if (!eol)
			eol = p + strlen(p);
		maj = strtoul(p, &e, 10);
		if (e == p || *e != ':')
			return -EINVAL;
		min = strtoul(e + 1, &e, 10);
		if (maj != dev.major || min != dev.minor) {
			p = *eol ? eol + 1 : eol;
			continue;
		}
		out->found = true;
		p = e;
		while (p < eol) {
			const char *eq, *tok_end, *end;
			uint64_t v;

			while (p < eol && *p == ' ')
				p++;
			if (p >= eol)
				break;
			tok_end = memchr(p, ' ', (size_t)(eol - p));
			if (!tok_end)
				tok_end = eol;
			eq = memchr(p, '=', (size_t)(tok_end - p));
			if (!eq)
				return -EINVAL;
			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
				if (strlen(keys[i].name) != (size_t)(eq - p) ||
				    memcmp(keys[i].name, p, (size_t)(eq - p)))
					continue;
				if (parse_u64(eq + 1, &end, &v) < 0 || end != tok_end)
					return -EINVAL;
				memcpy((char *)out + keys[i].offset, &v, sizeof(v));
				out->have |= keys[i].bit;
			}
			p = tok_end;
		}
		return 0;
	}
	return 0;
}

/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" */
static int parse_psi_line(const char *p, const char *eol, struct fs_psi_line *l)
{
	unsigned seen = 0;

	while (p < eol) {
		const char *tok_end, *eq;
		char *e;

		while (p < eol && *p == ' ')
			p++;
		if (p >= eol)
			break;
		tok_end = memchr(p, ' ', (size_t)(eol - p));
		if (!tok_end)
			tok_end = eol;
		eq = memchr(p, '=', (size_t)(tok_end - p));
		if (!eq)
			return -EINVAL;
		if (eq - p == 5 && strncmp(p, "total", 5) == 0) {
			const char *end;

			if (parse_u64(eq + 1, &end, &l->total) < 0 || end != tok_end)
				return -EINVAL;
			seen |= 8;
		} else {
			double *dst = NULL;

			if (eq - p == 5 && strncmp(p, "avg10", 5) == 0)
				dst = &l->avg10, seen |= 1;
			else if (eq - p == 5 && strncmp(p, "avg60", 5) == 0)
				dst = &l->avg60, seen |= 2;
			else if (eq - p == 6 && strncmp(p, "avg300", 6) == 0)
				dst = &l->avg300, seen |= 4;
			if (dst) {
				if (eq[1] < '0' || eq[1] > '9')
					return -EINVAL;
				*dst = strtod(eq + 1, &e);
				if (e != tok_end)
					return -EINVAL;
			}
		}
		p = tok_end;
	}
	if (seen != 15)
		return -EINVAL;
	l->present = true;
	return 0;
}

int fs_parse_pressure(const char *text, struct fs_pressure *out)
{
	const char *p = text;
	int r;

	memset(out, 0, sizeof(*out));
	if (!text)
		return -EINVAL;
	while (*p) {
		const char *eol = strchr(p, '\n');

		if (!eol)
			eol = p + strlen(p);
		if (strncmp(p, "some ", 5) == 0) {
			r = parse_psi_line(p + 5, eol, &out->some);
			if (r < 0)
				return r;
		} else if (strncmp(p, "full ", 5) == 0) {
			r = parse_psi_line(p + 5, eol, &out->full);
			if (r < 0)
				return r;
		}
		p = *eol ? eol + 1 : eol;
	}
	return out->some.present ? 0 : -EINVAL;
}
