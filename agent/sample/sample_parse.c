/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
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

/* The end of the line that starts at p: its '\n' or the string's end. */
static const char *line_end(const char *p)
{
	const char *eol = strchr(p, '\n');

	return eol ? eol : p + strlen(p);
}

/*
 * When [key, key + klen) names one of keys, stores the u64 that fills
 * [val, val_end) in its field of obj and sets its bit in *have. Unknown
 * keys are ignored; a known key with a malformed value is -EINVAL.
 */
static int store_key(const struct flat_key *keys, size_t n_keys, const char *key, size_t klen,
		     const char *val, const char *val_end, void *obj, unsigned *have)
{
	for (size_t i = 0; i < n_keys; i++) {
		const char *end;
		uint64_t v;

		if (strlen(keys[i].name) != klen || memcmp(keys[i].name, key, klen))
			continue;
		if (parse_u64(val, &end, &v) < 0 || end != val_end)
			return -EINVAL;
		memcpy((char *)obj + keys[i].offset, &v, sizeof(v));
		*have |= keys[i].bit;
		break;
	}
	return 0;
}

/*
 * The next blank-separated "key=value" token of [*p, eol): returns 1 with
 * *key at its start, *eq at its '=' and *p moved to its end; 0 when only
 * blanks are left; -EINVAL for a token without '='.
 */
static int next_pair(const char **p, const char *eol, const char **key, const char **eq)
{
	const char *tok_end;

	while (*p < eol && **p == ' ')
		(*p)++;
	if (*p >= eol)
		return 0;
	tok_end = memchr(*p, ' ', (size_t)(eol - *p));
	if (!tok_end)
		tok_end = eol;
	*eq = memchr(*p, '=', (size_t)(tok_end - *p));
	if (!*eq)
		return -EINVAL;
	*key = *p;
	*p = tok_end;
	return 1;
}

static int parse_flat(const char *text, const struct flat_key *keys, size_t n_keys, void *obj,
		      unsigned *have)
{
	const char *p = text;

	*have = 0;
	if (!text)
		return -EINVAL;
	while (*p) {
		const char *eol = line_end(p);
		const char *sp = memchr(p, ' ', (size_t)(eol - p));

		if (sp && store_key(keys, n_keys, p, (size_t)(sp - p), sp + 1, eol, obj, have) < 0)
			return -EINVAL;
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
	    KEY(struct fs_memory_stat, workingset_refault_anon, FS_MEM_REFAULT_ANON),
	    KEY(struct fs_memory_stat, workingset_refault_file, FS_MEM_REFAULT_FILE),
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

int fs_parse_meminfo(const char *text, struct fs_meminfo *out)
{
	static const struct {
		const char *key;
		unsigned bit;
		size_t offset;
	} keys[] = {
	    {"MemTotal:", FS_MI_TOTAL, offsetof(struct fs_meminfo, total)},
	    {"MemAvailable:", FS_MI_AVAILABLE, offsetof(struct fs_meminfo, available)},
	};
	const char *p = text;

	memset(out, 0, sizeof(*out));
	if (!text)
		return -EINVAL;
	for (; *p; p = *line_end(p) ? line_end(p) + 1 : line_end(p)) {
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t kl = strlen(keys[i].key);
			const char *v = p + kl, *end;
			uint64_t kb;

			if (strncmp(p, keys[i].key, kl))
				continue;
			while (*v == ' ' || *v == '\t')
				v++;
			if (parse_u64(v, &end, &kb) < 0 || strncmp(end, " kB", 3) ||
			    kb > UINT64_MAX / 1024)
				return -EINVAL;
			kb *= 1024;
			memcpy((char *)out + keys[i].offset, &kb, sizeof(kb));
			out->have |= keys[i].bit;
		}
	}
	return 0;
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
		const char *eol = line_end(p);
		unsigned long maj, min;
		char *e;
		int r;

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
		for (;;) {
			const char *key, *eq;

			r = next_pair(&p, eol, &key, &eq);
			if (r <= 0)
				return r;
			r = store_key(keys, sizeof(keys) / sizeof(keys[0]), key, (size_t)(eq - key),
				      eq + 1, p, out, &out->have);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" */
static int parse_psi_line(const char *p, const char *eol, struct fs_psi_line *l)
{
	const char *key, *eq;
	unsigned seen = 0;
	int r;

	while ((r = next_pair(&p, eol, &key, &eq)) > 0) {
		const size_t klen = (size_t)(eq - key);
		char *e;

		if (klen == 5 && strncmp(key, "total", 5) == 0) {
			const char *end;

			if (parse_u64(eq + 1, &end, &l->total) < 0 || end != p)
				return -EINVAL;
			seen |= 8;
		} else {
			double *dst = NULL;

			if (klen == 5 && strncmp(key, "avg10", 5) == 0)
				dst = &l->avg10, seen |= 1;
			else if (klen == 5 && strncmp(key, "avg60", 5) == 0)
				dst = &l->avg60, seen |= 2;
			else if (klen == 6 && strncmp(key, "avg300", 6) == 0)
				dst = &l->avg300, seen |= 4;
			if (dst) {
				if (eq[1] < '0' || eq[1] > '9')
					return -EINVAL;
				*dst = strtod(eq + 1, &e);
				if (e != p)
					return -EINVAL;
			}
		}
	}
	if (r < 0)
		return r;
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
		const char *eol = line_end(p);

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
