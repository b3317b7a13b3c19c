/* SPDX-License-Identifier: MIT */
/* `fairctl solve SCENARIO`: solve a scenario file offline and print it. */
#ifndef FAIRSHARE_FAIRCTL_SOLVE_H
#define FAIRSHARE_FAIRCTL_SOLVE_H

#include "fairctl.h"

#define FAIRCTL_SOLVE_ARGS "SCENARIO [--policy P] [--alpha A] [--json] [--check]"

int fairctl_solve_main(int argc, char **argv);

#endif /* FAIRSHARE_FAIRCTL_SOLVE_H */
