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
#include "loop.h"

int fsd_control_daemon_open(struct fsd_control **out, sd_event *e, struct fsd_daemon *d,
			    const char *path, char *err, size_t errlen);

#endif /* FAIRSHARE_AGENT_CONTROL_CMDS_H */
