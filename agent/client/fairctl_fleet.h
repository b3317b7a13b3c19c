/* SPDX-License-Identifier: MIT */
/*
 * `fairctl fleet ...`, `fairctl status --fleet`, `fairctl top --fleet`: run
 * by the fairctl-fleet program beside fairctl (fairctl_fleet.c, which links
 * libcurl); fairctl itself only finds it and runs it (fairctl_fleet_exec.c).
 */
#ifndef FAIRSHARE_FAIRCTL_FLEET_H
#define FAIRSHARE_FAIRCTL_FLEET_H

#include <stdbool.h>

int fairctl_fleet_main(int argc, char **argv);
int fairctl_fleet_status_main(int argc, char **argv);
int fairctl_fleet_top_main(int argc, char **argv);

/* --fleet is on the command line (status, top). */
bool fairctl_fleet_asked(int argc, char **argv);
/* Runs fairctl-fleet (beside this program) with cmd and argv[1..]; returns
 * only on failure, with an exit status. */
int fairctl_fleet_exec(const char *cmd, int argc, char **argv);
/* fairctl_fleet_exec for `fairctl fleet ...` (the command table's entry). */
int fairctl_fleet_cmd_main(int argc, char **argv);

#endif /* FAIRSHARE_FAIRCTL_FLEET_H */
