/* SPDX-License-Identifier: MIT */
/* Helpers shared by the fairshare BPF programs. */
#ifndef FAIRSHARE_FS_BPF_COMMON_BPF_H
#define FAIRSHARE_FS_BPF_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "fs_bpf_maps.h"

/*
 * Find key's value in a (per-CPU) hash map, creating a zeroed entry on first
 * use. NOEXIST: if another CPU created it meanwhile, the lookup finds theirs.
 */
static __always_inline void *fs_lookup_or_init(void *map, const void *key, const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

#endif
