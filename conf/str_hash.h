/* SPDX-License-Identifier: MIT */
/*
 * FNV-1a over a string: the one hash of the tables keyed by a tenant's name
 * or cgroup path (the config's name index, the daemon's list matching).
 * Cgroup paths share long prefixes, so every byte counts.
 */
#ifndef FAIRSHARE_CONF_STR_HASH_H
#define FAIRSHARE_CONF_STR_HASH_H

#include <stdint.h>

static inline uint64_t fs_str_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

#endif /* FAIRSHARE_CONF_STR_HASH_H */
