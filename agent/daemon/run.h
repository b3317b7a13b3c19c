/* SPDX-License-Identifier: MIT */
/*
 * fairshared's event loop: an sd-event timer runs a period every `interval`
 * (evenly spaced; a late period is skipped, never bursted), SIGHUP reloads,
 * SIGTERM/SIGINT stop, the watchdog is pinged, and the control socket's
 * commands reach the daemon through struct fsd_control_daemon.
 */
#ifndef FAIRSHARE_AGENT_RUN_H
#define FAIRSHARE_AGENT_RUN_H

#include "daemon.h"

/* Runs d until SIGTERM/SIGINT; returns an exit code (FSD_EXIT_*). */
int fsd_run(struct fsd_daemon *d);

#endif /* FAIRSHARE_AGENT_RUN_H */
