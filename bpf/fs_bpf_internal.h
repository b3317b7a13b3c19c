/* SPDX-License-Identifier: MIT */
/* Shared by fs_bpf.c (loading) and fs_bpf_read.c (reading); not installed. */
#ifndef FAIRSHARE_FS_BPF_INTERNAL_H
#define FAIRSHARE_FS_BPF_INTERNAL_H

#include <stddef.h>

#include "fs_bpf.h"
#include "fs_bpf_maps.h"
#include "blk.skel.h"
#include "net.skel.h"
#include "sched.skel.h"

struct fs_bpf {
	unsigned int programs;
	int ncpus;
	struct fs_sched *sched;
	struct fs_blk *blk;
	struct fs_net *net;
	void *pcpu_buf; /* ncpus values of the largest per-CPU value type */
	int proc_fd;	/* procfs root (O_PATH), -1 without FS_BPF_SCHED */
};

/* Format "FILE:LINE: what: strerror(-rc) (libbpf's reason)" into err; returns rc. */
__attribute__((format(printf, 6, 7))) int
fs_bpf_fail_at(const char *file, int line, char *err, size_t errlen, int rc, const char *fmt, ...);

/* Needs FS_BPF_SRC and err/errlen in scope. */
#define FAIL(rc, ...) fs_bpf_fail_at(FS_BPF_SRC, __LINE__, err, errlen, (rc), __VA_ARGS__)

/* The kernel lays per-CPU values out 8-byte aligned. */
static inline size_t pcpu_stride(size_t value_size)
{
	return (value_size + 7) / 8 * 8;
}

#endif
