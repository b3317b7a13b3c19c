/* SPDX-License-Identifier: MIT */
/*
 * The host checks of a configuration (issue 20): what makes a config that
 * parses still do nothing on this host. fairshared --check-config prints
 * them and exits with the code of the first problem found; the daemon logs
 * them as warnings when it starts and on reload (it keeps running: a
 * missing tenant cgroup is normal before its service starts).
 *
 *   - the cgroup root is a cgroup v2 hierarchy (it has cgroup.controllers;
 *     a v1 or hybrid /sys/fs/cgroup is a tmpfs of v1 mounts without it);
 *   - the controllers the resources need (cpu, memory, io for disks) are
 *     available at the root, and enabled in the parent's
 *     cgroup.subtree_control of each tenant cgroup that exists (without it
 *     the tenant has no cpu.max, memory.high or io.max to write);
 *   - each tenant's cgroup exists;
 *   - each disk exists (SYSFS/dev/block/MAJ:MIN).
 * Reads only, through the roots in struct fs_paths.
 */
#ifndef FAIRSHARE_AGENT_CHECK_H
#define FAIRSHARE_AGENT_CHECK_H

#include <stdbool.h>

#include "agent_conf.h"
#include "paths.h"

enum fsd_check_problem {
	FSD_CHECK_NOT_CGROUP2 = 1u << 0,
	FSD_CHECK_NO_CONTROLLER = 1u << 1,
	FSD_CHECK_NO_CGROUP = 1u << 2,
	FSD_CHECK_NO_DISK = 1u << 3,
	FSD_CHECK_NO_BACKEND = 1u << 4, /* backend = systemd, a tenant systemd cannot write
					   (found by the daemon: fsd_daemon_check_backends) */
};

/* One problem, in words; tenant NULL for the host-wide ones. */
typedef void (*fsd_check_report_fn)(void *ctx, const char *tenant, const char *cgroup,
				    const char *msg);

/* Runs every check of c on the host at p; reports each problem. Returns
 * the enum fsd_check_problem bits found (0: none). only (NULL: every
 * tenant) limits the tenants' checks to those with only[i] set: after a
 * template's cgroup came, the new tenant, not 10,000 others again (and a
 * missing cgroup is not warned about again at every login). */
unsigned fsd_check_host(const struct fs_conf *c, const struct fs_paths *p, const bool *only,
			fsd_check_report_fn report, void *ctx);

/* The exit code of --check-config for problems (daemon.h FSD_EXIT_*): the
 * first of them in the order of enum fsd_check_problem, FSD_EXIT_OK for 0. */
int fsd_check_exit_code(unsigned problems);

#endif /* FAIRSHARE_AGENT_CHECK_H */
