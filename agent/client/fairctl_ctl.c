/* SPDX-License-Identifier: MIT */
/*
 * `fairctl reload`, `fairctl release`, `fairctl set-weight TENANT W`: the
 * commands that change the running daemon (root only, checked by the daemon
 * with SO_PEERCRED).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fairctl.h"
#include "fairctl_client.h"

struct ctl_cmd {
	const char *name, *args, *help, *done;
	int n_args; /* positional arguments */
};

static const struct ctl_cmd reload = {
    "reload", "",
    "Reload the daemon's configuration file (like SIGHUP). A file with errors is refused\n"
    "and the running configuration kept (the daemon logs file:line: reason). A reload\n"
    "also ends a release.",
    "reloaded", 0};
static const struct ctl_cmd release = {
    "release", "",
    "Restore every cgroup value fairshared changed to its original and stop enforcing\n"
    "until the next reload (the daemon keeps computing and publishing).",
    "released: original values restored, not enforcing until `fairctl reload`", 0};
static const struct ctl_cmd set_weight = {
    "set-weight", "TENANT WEIGHT",
    "Set TENANT's weight (> 0) until the next reload; the next period uses it.", NULL, 2};

static void usage(FILE *out, const struct ctl_cmd *c)
{
	fprintf(out,
		"Usage: fairctl %s [--socket PATH] %s\n\n%s\nNeeds root.\n\n"
		"  -s, --socket PATH  control socket (default $" FAIRCTL_SOCKET_ENV
		" or " FAIRCTL_DEFAULT_SOCKET ")\n"
		"  -h, --help         this text\n",
		c->name, c->args, c->help);
}

static int run(const struct ctl_cmd *c, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct json_object *resp = NULL, *extra = NULL;
	const char *sock = NULL;
	char err[512], *end;
	int o, r;

	optind = 1;
	while ((o = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			sock = optarg;
			break;
		case 'h':
			usage(stdout, c);
			return FAIRCTL_EXIT_OK;
		default:
			usage(stderr, c);
			return FAIRCTL_EXIT_USAGE;
		}
	}
	if (argc - optind != c->n_args) {
		fprintf(stderr, "fairctl %s: expected %s\n", c->name,
			c->n_args ? c->args : "no arguments");
		usage(stderr, c);
		return FAIRCTL_EXIT_USAGE;
	}
	if (c->n_args) {
		double w;

		errno = 0;
		w = strtod(argv[optind + 1], &end);
		if (errno || end == argv[optind + 1] || *end || !(w > 0) || !isfinite(w)) {
			fprintf(stderr, "fairctl %s: weight '%s' is not a number > 0\n", c->name,
				argv[optind + 1]);
			return FAIRCTL_EXIT_USAGE;
		}
		extra = json_object_new_object();
		if (!extra)
			return FAIRCTL_EXIT_FAIL;
		json_object_object_add(extra, "tenant", json_object_new_string(argv[optind]));
		json_object_object_add(extra, "weight", json_object_new_double(w));
	}
	r = fctl_request(fctl_socket_path(sock), c->name, extra, &resp, err, sizeof(err));
	json_object_put(extra);
	json_object_put(resp);
	if (r < 0) {
		fprintf(stderr, "fairctl %s: %s%s\n", c->name, err,
			r == -EPERM || r == -EACCES ? " (try sudo)" : "");
		return FAIRCTL_EXIT_FAIL;
	}
	if (c->done)
		printf("%s\n", c->done);
	else
		printf("%s: weight %s until the next reload\n", argv[optind], argv[optind + 1]);
	return FAIRCTL_EXIT_OK;
}

int fairctl_reload_main(int argc, char **argv)
{
	return run(&reload, argc, argv);
}

int fairctl_release_main(int argc, char **argv)
{
	return run(&release, argc, argv);
}

int fairctl_set_weight_main(int argc, char **argv)
{
	return run(&set_weight, argc, argv);
}
