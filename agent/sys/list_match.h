/* SPDX-License-Identifier: MIT */
/*
 * Where each entry of a new list of strings was in the old one. When the
 * tenants change (a template's cgroup came or went, a reload), the daemon,
 * the sampler and the writer carry each kept tenant's state over (open
 * files, counters' baselines, estimates) by its cgroup or its name; with
 * 10,000 tenants a search per tenant would be 10^8 string compares per
 * login, so the old list is hashed once: O(old + new).
 */
#ifndef FAIRSHARE_LIST_MATCH_H
#define FAIRSHARE_LIST_MATCH_H

#include <stddef.h>
#include <stdint.h>

#define FS_LIST_NEW SIZE_MAX /* from[j]: not in the old list */

/*
 * from[j] (n_new entries) = the index i with strcmp(old[i], new[j]) == 0,
 * else FS_LIST_NEW. An old index is given to one new entry at most (the
 * first that names it): a list with a string twice keeps one state for it.
 * 0 or -ENOMEM (from untouched).
 */
int fs_list_match(const char *const *old, size_t n_old, const char *const *new, size_t n_new,
		  size_t *from);

/*
 * The inverse of a match: to[i] (n_old entries) = the j with from[j] == i,
 * else FS_LIST_NEW (old entry i was dropped).
 */
void fs_list_inverse(const size_t *from, size_t n_new, size_t *to, size_t n_old);

#endif /* FAIRSHARE_LIST_MATCH_H */
