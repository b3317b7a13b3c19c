/* SPDX-License-Identifier: MIT */
/*
 * Numbers with units, as written in fairshare.conf.
 *
 * Suffixes (case-sensitive, no space needed between number and suffix;
 * one space is allowed; a decimal fraction is allowed: "1.5G"):
 *   sizes   K M G T        binary, as systemd reads MemoryMax= (8G = 8 GiB):
 *           Ki Mi Gi Ti    2^10 2^20 2^30 2^40 bytes either way;
 *           an optional trailing "B" ("4GB", "512MiB"); no suffix = bytes.
 *           Operators copy these from unit files, where K means 1024; a
 *           decimal size is written out in bytes ("8000000000").
 *   io      K M G T decimal (10^3 .. 10^12), Ki Mi Gi Ti binary, as systemd
 *           reads IOReadBandwidthMax=; an optional "B" and "/s" ("50M/s");
 *           result in bytes/s
 *   iops    same decimal prefixes, no "B" ("10K" = 10000 ops/s)
 *   net     a unit is REQUIRED, because operators mean bits as often as bytes:
 *           "bit" or "bit/s" = bits per second  ("10Gbit" = 1.25e9 bytes/s)
 *           "B" or "B/s"     = bytes per second ("125MB" = 1.25e8 bytes/s)
 *           "bps"/"Bps"/"b" are refused as ambiguous (tc reads bps as bytes).
 *           Binary prefixes work too ("1Gibit").
 *   time    "us", "ms", "s", "m" (minutes); no suffix = seconds
 *   percent "N%" = N/100 of something else (the caller decides what)
 *   cpu     a plain number of cores ("2", "0.5"), or "N%" of the capacity
 * Negative numbers, NaN, inf, empty strings and trailing garbage are refused.
 * Every function returns 0 or -EINVAL (bad syntax) / -ERANGE (overflow) and
 * never touches *out on error.
 */
#ifndef FAIRSHARE_UNITS_H
#define FAIRSHARE_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes (memory, memory_reserve). Result rounded down to a whole byte. */
int fs_parse_size(const char *s, uint64_t *out_bytes);

/* Block IO throughput: bytes per second. */
int fs_parse_io_rate(const char *s, double *out_bytes_per_s);

/* Block IO operations per second (decimal prefixes only). */
int fs_parse_iops(const char *s, double *out_ops_per_s);

/* Network rate; the result is always bytes per second (see "net" above). */
int fs_parse_net_rate(const char *s, double *out_bytes_per_s);

/* Durations; the result is microseconds. */
int fs_parse_duration(const char *s, uint64_t *out_usec);

/* "N%" -> N/100. Anything without a trailing '%' is -EINVAL. */
int fs_parse_percent(const char *s, double *out_fraction);

/* A plain non-negative decimal number without suffix (weights, cores). */
int fs_parse_number(const char *s, double *out);

/*
 * A quantity that is either absolute (in the unit of the resource) or a
 * fraction of the resource's capacity ("50%"). Used for demand/min/max.
 */
struct fs_quantity {
	double value;	  /* absolute value, or the fraction (0.5 for "50%") */
	bool is_fraction; /* true when written with '%' */
};

/* A cpu list "0-3,5,7-8\n" -> 7 (cpuset.cpus.effective). 0 or -EINVAL. */
int fs_parse_cpu_list_count(const char *text, unsigned *count);

/* Formats bytes as the largest exact binary suffix ("4Gi", "1536Ki", "7"). */
void fs_format_size(uint64_t bytes, char *buf, unsigned len);

#endif /* FAIRSHARE_UNITS_H */
