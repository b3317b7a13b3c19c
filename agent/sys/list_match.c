/* SPDX-License-Identifier: MIT */
#include "list_match.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "str_hash.h"

int fs_list_match(const char *const *old, size_t n_old, const char *const *new, size_t n_new,
		  size_t *from)
{
	size_t cap = 1, *slot;
	bool *taken;

	while (cap < 2 * n_old + 2)
		cap *= 2;
	/* open addressing: slot holds old index + 1, 0 = empty */
	slot = calloc(cap, sizeof(*slot));
	taken = calloc(n_old ? n_old : 1, sizeof(*taken));
	if (!slot || !taken) {
		free(slot);
		free(taken);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_old; i++) {
		size_t k = (size_t)fs_str_hash(old[i]) & (cap - 1);

		while (slot[k] && strcmp(old[slot[k] - 1], old[i]) != 0)
			k = (k + 1) & (cap - 1);
		if (!slot[k]) /* a repeated string keeps its first index */
			slot[k] = i + 1;
	}
	for (size_t j = 0; j < n_new; j++) {
		size_t k = (size_t)fs_str_hash(new[j]) & (cap - 1);

		from[j] = FS_LIST_NEW;
		while (slot[k] && strcmp(old[slot[k] - 1], new[j]) != 0)
			k = (k + 1) & (cap - 1);
		if (slot[k] && !taken[slot[k] - 1]) {
			from[j] = slot[k] - 1;
			taken[slot[k] - 1] = true;
		}
	}
	free(slot);
	free(taken);
	return 0;
}

void fs_list_inverse(const size_t *from, size_t n_new, size_t *to, size_t n_old)
{
	for (size_t i = 0; i < n_old; i++)
		to[i] = FS_LIST_NEW;
	for (size_t j = 0; j < n_new; j++)
		if (from[j] != FS_LIST_NEW && from[j] < n_old)
			to[from[j]] = j;
}
