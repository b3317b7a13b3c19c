/* SPDX-License-Identifier: MIT */
/* fairctl's side of the fleet commands: run fairctl-fleet (fairctl_fleet.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fairctl.h"
#include "fairctl_fleet.h"

bool fairctl_fleet_asked(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--fleet"))
			return true;
	return false;
}

int fairctl_fleet_exec(const char *cmd, int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char **args = calloc((size_t)argc + 2, sizeof(char *));
	char *slash;

	if (n <= 0 || !args) {
		fprintf(stderr, "fairctl: cannot find fairctl-fleet: %s\n",
			n <= 0 ? strerror(errno) : "out of memory");
		free(args);
		return FAIRCTL_EXIT_FAIL;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/fairctl-fleet", self);
	args[0] = "fairctl-fleet";
	args[1] = (char *)cmd;
	for (int i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	execv(path, args);
	fprintf(stderr, "fairctl: fleet commands need %s (built with libcurl): %s\n", path,
		strerror(errno));
	free(args);
	return FAIRCTL_EXIT_FAIL;
}

int fairctl_fleet_cmd_main(int argc, char **argv)
{
	return fairctl_fleet_exec("fleet", argc, argv);
}
