/* SPDX-License-Identifier: MIT */
/*
 * fairctl: the operator's command line. A table maps subcommand names to
 * their main(); later subcommands (top, status, explain, release, reload)
 * add a row here and a fairctl_NAME.c file.
 */
#include <stdio.h>
#include <string.h>

#include "fairctl.h"
#include "fairctl_solve.h"
#ifdef FAIRCTL_HAVE_LIVE
#include "fairctl_client.h"
#endif
#ifdef FAIRCTL_HAVE_FLEET
#include "fairctl_fleet.h"
#endif

struct fairctl_cmd {
	const char *name;
	fairctl_main_fn run;
	const char *args;
	const char *summary;
};

static const struct fairctl_cmd commands[] = {
    {"solve", fairctl_solve_main, FAIRCTL_SOLVE_ARGS,
     "compute a fair allocation for a scenario file, offline"},
    {"calibrate", fairctl_calibrate_main,
     "[--name NAME] [--scratch DIR] [--size SIZE] [--seconds S] [--no-fio] DISK",
     "measure what a disk delivers and print its io.NAME line for fairshare.conf"},
#ifdef FAIRCTL_HAVE_LIVE
    /* these talk to the running fairshared over its control socket */
    {"status", fairctl_status_main, "[--json] [--socket PATH]",
     "who gets what and why: allocation, bottlenecks, gaps, limits"},
    {"top", fairctl_top_main, "[--batch] [-n N] [--delay S] [--order KEY] [--socket PATH]",
     "live view of the tenants' shares, refreshed every period"},
    {"explain", fairctl_explain_main, "[--json] [--socket PATH] TENANT",
     "why TENANT gets its allocation: bottlenecks, competitors, certificate"},
    {"reload", fairctl_reload_main, "[--socket PATH]", "reload the daemon's configuration (root)"},
    {"release", fairctl_release_main, "[--socket PATH]",
     "restore the original cgroup values and stop enforcing until reload (root)"},
    {"set-weight", fairctl_set_weight_main, "[--socket PATH] TENANT WEIGHT",
     "change TENANT's weight until the next reload (root)"},
#endif
#ifdef FAIRCTL_HAVE_FLEET
    /* these talk to etcd (fleet mode, docs/fleet.md) */
    {"fleet", fairctl_fleet_cmd_main,
     "[--config FILE] set-weight NAME W | unset-weight NAME | push FILE.ini | weights",
     "the fleet-wide weights in etcd; status --fleet and top --fleet show the fleet"},
#endif
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "Usage: fairctl [--help] [--version] COMMAND [ARGS...]\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %s %s\n      %s\n", commands[i].name, commands[i].args,
			commands[i].summary);
	fprintf(out, "\n`fairctl COMMAND --help` describes a command's options.\n\n"
		     "Exit status:\n"
		     "  0  success (solve --check: the checks ran; read their output)\n"
		     "  1  the operation failed (e.g. the solver reported an error, the daemon\n"
		     "     is not running, or the command needs root)\n"
		     "  2  bad command line or bad input file (file:line: message on stderr), or\n"
		     "     a policy that does not apply to the scenario\n");
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name) {
		usage(stderr);
		return FAIRCTL_EXIT_USAGE;
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return FAIRCTL_EXIT_OK;
	}
	if (!strcmp(name, "--version")) {
		printf("fairctl %s\n", FAIRSHARE_VERSION);
		return FAIRCTL_EXIT_OK;
	}
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "fairctl: unknown command '%s'\n\n", name);
	usage(stderr);
	return FAIRCTL_EXIT_USAGE;
}
