/* SPDX-License-Identifier: MIT */
/* `fairctl fleet ...`, `fairctl status --fleet`, `fairctl top --fleet`
 * (fairctl_fleet.c): the fleet's weights and state, read from etcd. */
#ifndef FAIRSHARE_FAIRCTL_FLEET_H
#define FAIRSHARE_FAIRCTL_FLEET_H

#include <stdbool.h>

int fairctl_fleet_main(int argc, char **argv);
int fairctl_fleet_status_main(int argc, char **argv);
int fairctl_fleet_top_main(int argc, char **argv);
/* --fleet is on the command line (status, top). */
bool fairctl_fleet_asked(int argc, char **argv);

#endif /* FAIRSHARE_FAIRCTL_FLEET_H */
