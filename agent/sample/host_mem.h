/* SPDX-License-Identifier: MIT */
/*
 * The host's memory, sampled once a period next to the tenants: how much
 * the kernel could still hand out (/proc/meminfo MemAvailable) and how much
 * the host stalls on memory (/proc/pressure/memory). The tenants' own files
 * cannot say whether the host is short: their usage never exceeds physical
 * memory, so only these show a shortage coming (the planner's memory
 * rules, plan.h).
 *
 * The procfs root is a parameter (model/paths.h), so tests use a fake tree.
 */
#ifndef FAIRSHARE_HOST_MEM_H
#define FAIRSHARE_HOST_MEM_H

struct fs_host_mem {
	double total;	       /* MemTotal, bytes; NAN = unknown */
	double available;      /* MemAvailable, bytes; NAN = unknown */
	double psi_some_avg10; /* /proc/pressure/memory, percent; NAN = no PSI */
	double psi_full_avg10; /* percent; NAN = no PSI */
};

/* Every field unknown (NAN). */
void fs_host_mem_unknown(struct fs_host_mem *h);

/*
 * Reads <procfs_root>/meminfo and <procfs_root>/pressure/memory into out;
 * what cannot be read stays NAN (a kernel without PSI, psi=0). 0, or the
 * -errno of meminfo when that could not be read or parsed (then out says
 * nothing of the host's memory: the planner falls back to the tenants'
 * usage against the configured capacity).
 */
int fs_host_mem_read(const char *procfs_root, struct fs_host_mem *out);

#endif /* FAIRSHARE_HOST_MEM_H */
