/* SPDX-License-Identifier: MIT */
/* fairctl subcommands: each is a main() of its own, found by name. */
#ifndef FAIRSHARE_FAIRCTL_H
#define FAIRSHARE_FAIRCTL_H

/* Exit codes shared by every subcommand (documented in `fairctl --help`). */
enum {
	FAIRCTL_EXIT_OK = 0,	/* done (for solve --check: the checks ran) */
	FAIRCTL_EXIT_FAIL = 1,	/* the operation failed (solver, daemon, I/O) */
	FAIRCTL_EXIT_USAGE = 2, /* bad command line or bad input file */
};

/*
 * argv[0] is the subcommand name; options follow. Returns an exit code.
 * Messages go to stderr prefixed with "fairctl SUBCOMMAND: ".
 */
typedef int (*fairctl_main_fn)(int argc, char **argv);

/* `fairctl calibrate` (fairctl_calibrate.c). */
int fairctl_calibrate_main(int argc, char **argv);

#endif /* FAIRSHARE_FAIRCTL_H */
