/* SPDX-License-Identifier: MIT */
/*
 * fairctl's side of the control socket (agent/control.h): one request per
 * connection, a JSON line out, a JSON line back, with a timeout. Errors are
 * turned into sentences an operator can act on (daemon not running, stale
 * socket, permission).
 *
 * Also declares the subcommands that talk to the daemon.
 */
#ifndef FAIRSHARE_FAIRCTL_CLIENT_H
#define FAIRSHARE_FAIRCTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

#include "paths.h"

#define FAIRCTL_DEFAULT_SOCKET FS_DEFAULT_SOCKET
#define FAIRCTL_SOCKET_ENV     "FAIRCTL_SOCKET"
#define FAIRCTL_TIMEOUT_MS     10000

/* --socket, else $FAIRCTL_SOCKET, else the default. */
const char *fctl_socket_path(const char *opt);

/*
 * Sends {"command": command, ...extra's members} (extra may be NULL; it is
 * not consumed) and returns the answer in *resp (json_object_put it) when
 * "ok" is true. Otherwise a negative errno with err filled: -ENOENT /
 * -ECONNREFUSED (no daemon), -EACCES (socket permission), -EPERM (the daemon
 * refused: needs root), -EPROTO (bad answer), -ETIMEDOUT, or -EREMOTEIO
 * (the daemon's error message).
 */
int fctl_request(const char *socket_path, const char *command, struct json_object *extra,
		 struct json_object **resp, char *err, size_t errlen);

/*
 * Reads the options of the subcommands that show the daemon's view:
 * -j/--json, -s/--socket PATH and -h/--help, with usage() for the help text.
 * Returns -1 to go on, else the exit code to return now (FAIRCTL_EXIT_OK
 * after --help, FAIRCTL_EXIT_USAGE for an unknown option).
 */
int fctl_view_options(int argc, char **argv, void (*usage)(FILE *out), bool *json,
		      const char **sock);

/* Prints the daemon's answer as pretty JSON, without its "ok" member. */
void fctl_print_answer(struct json_object *resp);

/* Subcommands (fairctl.h's fairctl_main_fn). */
int fairctl_status_main(int argc, char **argv);
int fairctl_top_main(int argc, char **argv);
int fairctl_explain_main(int argc, char **argv);
int fairctl_reload_main(int argc, char **argv);
int fairctl_release_main(int argc, char **argv);
int fairctl_set_weight_main(int argc, char **argv);

#endif /* FAIRSHARE_FAIRCTL_CLIENT_H */
