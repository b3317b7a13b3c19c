/* SPDX-License-Identifier: MIT */
/*
 * fairshared's control commands on the control socket (control.h):
 *   status                                  read-only: the whole published state
 *   tenants                                 read-only: names, cgroups, weights
 *   explain {"tenant": NAME}                read-only: certificate of NAME's share
 *   reload                                  root: like SIGHUP
 *   release                                 root: restore originals, stop enforcing
 *   set-weight {"tenant": NAME, "weight": W} root: weight until the next reload
 */
#ifndef FAIRSHARE_AGENT_CONTROL_CMDS_H
#define FAIRSHARE_AGENT_CONTROL_CMDS_H

#include <stddef.h>
#include <systemd/sd-event.h>

#include "control.h"
#include "published.h"

/* What the commands ask of the daemon (agent/daemon/run.c provides them),
 * so the socket's code does not depend on the loop's. Each returns 0 or
 * -errno (logged by the daemon). */
struct fsd_control_daemon {
	void *ctx;
	const struct fsd_published *(*published)(void *ctx);
	int (*reload)(void *ctx);
	int (*release)(void *ctx);
	/* -ENOENT (no such tenant), -EINVAL (not a finite weight > 0) */
	int (*set_weight)(void *ctx, const char *tenant, double weight);
	/* tenant i's controlled files, read now: the count (<= max), or -errno
	 * (-ENOENT: its cgroup is gone; -ENODEV: nothing is written, dry-run
	 * or released). May be NULL. */
	int (*files)(void *ctx, size_t i, struct fsd_file_state *out, size_t max);
};

/* dmn must outlive the control. 0 or -errno with err filled. */
int fsd_control_daemon_open(struct fsd_control **out, sd_event *e,
			    const struct fsd_control_daemon *dmn, const char *path, char *err,
			    size_t errlen);

#endif /* FAIRSHARE_AGENT_CONTROL_CMDS_H */
