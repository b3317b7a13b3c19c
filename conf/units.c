/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

/*
 * Scans "digits[.digits]" at the start of s. strtod alone would also accept
 * "inf", "nan", hex and signs, none of which belong in a config.
 */
static int scan_number(const char *s, double *out, const char **rest)
{
	const char *p = s;
	char buf[64];
	size_t n;

	if (!s)
		return -EINVAL;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == s)
		return -EINVAL;
	if (*p == '.') {
		const char *frac = ++p;

		while (*p >= '0' && *p <= '9')
			p++;
		if (p == frac)
			return -EINVAL;
	}
	n = (size_t)(p - s);
	if (n >= sizeof(buf))
		return -ERANGE;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	if (!isfinite(*out))
		return -ERANGE;
	/* One space between number and unit is allowed ("4 G"). */
	if (*p == ' ' && p[1] != '\0')
		p++;
	*rest = p;
	return 0;
}

struct prefix {
	const char *name;
	double mult;
};

static const struct prefix binary_prefixes[] = {
    {"Ki", 1024.0},
    {"Mi", 1024.0 * 1024},
    {"Gi", 1024.0 * 1024 * 1024},
    {"Ti", 1024.0 * 1024 * 1024 * 1024},
};

static const struct prefix decimal_prefixes[] = {
    {"K", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
};

/* Consumes an optional K/M/G/T or Ki/Mi/Gi/Ti prefix; multiplier 1 when none. */
static double eat_prefix(const char **p, bool allow_binary)
{
	size_t i;

	if (allow_binary) {
		for (i = 0; i < sizeof(binary_prefixes) / sizeof(binary_prefixes[0]); i++) {
			if (strncmp(*p, binary_prefixes[i].name, 2) == 0) {
				*p += 2;
				return binary_prefixes[i].mult;
			}
		}
	}
	for (i = 0; i < sizeof(decimal_prefixes) / sizeof(decimal_prefixes[0]); i++) {
		if (**p == decimal_prefixes[i].name[0]) {
			*p += 1;
			return decimal_prefixes[i].mult;
		}
	}
	return 1.0;
}

enum scaled_syntax {
	SCALED_BINARY = 1 << 0,	    /* Ki/Mi/Gi/Ti as well as K/M/G/T */
	SCALED_ALL_BINARY = 1 << 3, /* K/M/G/T are binary too (sizes, as systemd) */
	SCALED_BYTE = 1 << 1,	    /* an optional trailing "B" */
	SCALED_PER_SECOND = 1 << 2, /* an optional "/s" after that */
};

/* The binary multiplier of the same prefix (1e3 -> 1024, 1e6 -> 2^20 ...). */
static double binary_of(double mult)
{
	for (size_t i = 0; i < sizeof(decimal_prefixes) / sizeof(decimal_prefixes[0]); i++)
		if (mult == decimal_prefixes[i].mult)
			return binary_prefixes[i].mult;
	return mult;
}

/* "number[prefix][B][/s]" as allowed by syntax, scaled by the prefix. */
static int scan_scaled(const char *s, unsigned syntax, double *out)
{
	const char *p;
	double v, mult;
	int r;

	r = scan_number(s, &v, &p);
	if (r < 0)
		return r;
	mult = eat_prefix(&p, syntax & (SCALED_BINARY | SCALED_ALL_BINARY));
	if ((syntax & SCALED_ALL_BINARY) && mult > 1.0)
		mult = binary_of(mult);
	if ((syntax & SCALED_BYTE) && *p == 'B')
		p++;
	if ((syntax & SCALED_PER_SECOND) && strcmp(p, "/s") == 0)
		p += 2;
	if (*p != '\0')
		return -EINVAL;
	*out = v * mult;
	return 0;
}

int fs_parse_size(const char *s, uint64_t *out_bytes)
{
	double v;
	int r;

	r = scan_scaled(s, SCALED_ALL_BINARY | SCALED_BYTE, &v);
	if (r < 0)
		return r;
	/* 2^64 is the first double that does not fit. */
	if (v >= 18446744073709551616.0)
		return -ERANGE;
	*out_bytes = (uint64_t)v;
	return 0;
}

int fs_parse_io_rate(const char *s, double *out_bytes_per_s)
{
	double v;
	int r;

	r = scan_scaled(s, SCALED_BINARY | SCALED_BYTE | SCALED_PER_SECOND, &v);
	if (r < 0)
		return r;
	if (!isfinite(v))
		return -ERANGE;
	*out_bytes_per_s = v;
	return 0;
}

int fs_parse_iops(const char *s, double *out_ops_per_s)
{
	return scan_scaled(s, SCALED_PER_SECOND, out_ops_per_s);
}

int fs_parse_net_rate(const char *s, double *out_bytes_per_s)
{
	const char *p;
	double v, mult, per_unit;
	int r;

	r = scan_number(s, &v, &p);
	if (r < 0)
		return r;
	mult = eat_prefix(&p, true);
	if (strncmp(p, "bit", 3) == 0) {
		per_unit = 1.0 / 8;
		p += 3;
	} else if (*p == 'B' && strncmp(p, "Bps", 3) != 0) {
		per_unit = 1.0;
		p += 1;
	} else {
		/* Bare numbers, "b", "bps", "Bps": ambiguous, see units.h. */
		return -EINVAL;
	}
	if (strcmp(p, "/s") == 0)
		p += 2;
	if (*p != '\0')
		return -EINVAL;
	*out_bytes_per_s = v * mult * per_unit;
	return 0;
}

int fs_parse_duration(const char *s, uint64_t *out_usec)
{
	const char *p;
	double v, mult;
	int r;

	r = scan_number(s, &v, &p);
	if (r < 0)
		return r;
	if (*p == '\0' || strcmp(p, "s") == 0)
		mult = 1e6;
	else if (strcmp(p, "ms") == 0)
		mult = 1e3;
	else if (strcmp(p, "us") == 0)
		mult = 1;
	else if (strcmp(p, "m") == 0)
		mult = 60e6;
	else
		return -EINVAL;
	v *= mult;
	if (v >= 18446744073709551616.0)
		return -ERANGE;
	*out_usec = (uint64_t)llround(v);
	return 0;
}

/* A number followed by exactly suffix ("" for none). */
static int scan_suffixed(const char *s, const char *suffix, double *out)
{
	const char *p;
	double v;
	int r;

	r = scan_number(s, &v, &p);
	if (r < 0)
		return r;
	if (strcmp(p, suffix) != 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int fs_parse_percent(const char *s, double *out_fraction)
{
	double v;
	int r;

	r = scan_suffixed(s, "%", &v);
	if (r < 0)
		return r;
	*out_fraction = v / 100.0;
	return 0;
}

int fs_parse_number(const char *s, double *out)
{
	return scan_suffixed(s, "", out);
}

int fs_parse_cpu_list_count(const char *text, unsigned *count)
{
	const char *p = text;
	unsigned total = 0;

	if (!text)
		return -EINVAL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\n' || *p == '\0') {
		*count = 0;
		return 0;
	}
	for (;;) {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = strtoul(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			b = strtoul(p, &end, 10);
			p = end;
			if (b < a)
				return -EINVAL;
		}
		if (b - a + 1 > 1u << 20)
			return -ERANGE;
		total += (unsigned)(b - a + 1);
		if (*p == ',') {
			p++;
			continue;
		}
		break;
	}
	while (*p == '\n' || *p == ' ')
		p++;
	if (*p != '\0')
		return -EINVAL;
	*count = total;
	return 0;
}

void fs_format_size(uint64_t bytes, char *buf, unsigned len)
{
	static const char *const suffix[] = {"", "Ki", "Mi", "Gi", "Ti"};
	unsigned i = 0;

	while (i < 4 && bytes != 0 && bytes % 1024 == 0) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)bytes, suffix[i]);
}
