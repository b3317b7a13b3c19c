/* SPDX-License-Identifier: MIT */
/* fairshared: the fairshare node agent (command line; the daemon is daemon.c, its
 * event loop run.c). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "agent_conf.h"
#include "log.h"
#include "clock.h"
#include "check.h"
#include "daemon.h"
#include "heap.h"
#include "run.h"
#include "unit_bus.h"
#include "writer.h"

#ifndef FAIRSHARE_VERSION
#define FAIRSHARE_VERSION "unknown"
#endif

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: fairshared [--config FILE] [--dry-run] [--once] [--check-config]\n"
	    "                  [--release]\n"
	    "                  [--log-level LEVEL] [--help] [--version]\n"
	    "\n"
	    "Multi-resource fair sharing between cgroup v2 tenants: every interval it\n"
	    "samples usage, estimates demand, solves the fair allocation (psdsf or njc)\n"
	    "and writes cpu.max, cpu.weight, memory.high, memory.max, memory.low, io.max,\n"
	    "io.weight.\n"
	    "\n"
	    "  -c, --config FILE    configuration (default " FS_CONF_DEFAULT_PATH ")\n"
	    "  -n, --dry-run        compute and log, never write a cgroup file\n"
	    "  -1, --once           take a baseline, wait one interval, run one period,\n"
	    "                       print the plan (one line per tenant) and exit; the\n"
	    "                       values written stay (undo with --release)\n"
	    "  -C, --check-config   check the config and the host (cgroup v2, each tenant's\n"
	    "                       cgroup, the controllers in its parent's\n"
	    "                       cgroup.subtree_control, each disk), run one dry-run\n"
	    "                       period and print each file it would write,\n"
	    "                       current -> planned; writes nothing\n"
	    "  -r, --release        restore the original values saved in state_dir and exit\n"
	    "  -l, --log-level L    debug|info|notice|warning|err (default info; debug logs\n"
	    "                       one line per tenant per period). Also $FAIRSHARED_LOG_LEVEL\n"
	    "  -h, --help           this text\n"
	    "  -V, --version        the version\n"
	    "      --sysfs-root DIR, --procfs-root DIR\n"
	    "                       read sysfs/procfs there instead of " FS_DEFAULT_SYSFS_ROOT
	    " and\n"
	    "                       " FS_DEFAULT_PROCFS_ROOT " (for tests over a fake tree)\n"
	    "\n"
	    "Signals: SIGHUP reloads the configuration (a bad file is refused and the\n"
	    "running one kept); SIGTERM/SIGINT stop, restoring the original values when\n"
	    "on_exit = restore.\n"
	    "\n"
	    "Exit status:\n"
	    "  0   success\n"
	    "  1   runtime failure (cgroup root unreadable, state dir, restore failed)\n"
	    "  2   bad command line\n"
	    "  3   --check-config: the cgroup root is not cgroup v2\n"
	    "  4   --check-config: a controller is not available or not enabled\n"
	    "  5   --check-config: a tenant's cgroup does not exist\n"
	    "  6   --check-config: a disk does not exist\n"
	    "  7   --check-config: backend = systemd cannot write a tenant\n"
	    "  78  configuration refused (EX_CONFIG); the message is file:line: reason\n");
}

static int release(const struct fsd_options *o)
{
	struct fs_conf *c = NULL;
	struct fs_conf_env env;
	char err[1024];
	const char *state_dir = FS_DEFAULT_RUN_DIR, *root = FS_DEFAULT_CGROUP_ROOT;
	struct fs_unit_bus *ub = NULL;
	int r;

	/* A broken config must not block the cleanup after a crash. */
	fsd_conf_env(o, &env);
	r = fs_conf_load(o->config_path, &env, &c, err, sizeof(err));
	if (r < 0)
		fsd_warn("%s; releasing with the defaults (state %s, cgroups %s)", err, state_dir,
			 root);
	else {
		state_dir = c->agent.state_dir;
		root = c->agent.cgroup_root;
	}
	/* the systemd backend's originals go back through systemd; the bus is
	 * connected only if the state holds some */
	r = fs_ubus_open(&ub, root, fsd_log_cb, NULL);
	if (r >= 0)
		r = fs_release(state_dir, root, fsd_log_cb, NULL, &fs_ubus_ops, ub);
	fs_ubus_close(ub);
	if (r < 0)
		fsd_err("release from %s: %s", state_dir, strerror(-r));
	else
		fsd_info("released: original values from %s restored under %s", state_dir, root);
	fs_conf_free(c);
	return r < 0 ? FSD_EXIT_FAILURE : FSD_EXIT_OK;
}

static void check_print(void *ctx, const char *tenant, const char *cgroup, const char *msg)
{
	(void)tenant;
	(void)cgroup;
	fprintf(ctx, "problem: %s\n", msg);
}

/* One period one interval after the baseline taken at open, so its rates
 * cover a whole interval (--once, --check-config). */
static int one_period(struct fsd_daemon *d)
{
	uint64_t interval_us = fsd_daemon_conf(d)->agent.interval_us;
	struct timespec ts = {.tv_sec = (time_t)(interval_us / 1000000u),
			      .tv_nsec = (long)(interval_us % 1000000u) * 1000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return fsd_daemon_period(d, fs_monotonic_us()) < 0 ? FSD_EXIT_FAILURE : FSD_EXIT_OK;
}

/*
 * The sampler keeps each tenant's files open within a budget taken from the
 * soft RLIMIT_NOFILE (sample_cgroupfs.c): the hard limit is ours to use, so
 * the soft one is raised to it first (select(2) is not used). A failure only
 * leaves a smaller budget.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			fsd_log(LOG_DEBUG, NULL, NULL, NULL, "cannot raise RLIMIT_NOFILE: %s",
				strerror(errno));
	}
}

/* --check-config: the config, the host checks, then one dry-run period and
 * each file it would write, current -> planned. The exit code says which
 * problem came first (daemon.h). */
static int check_config(struct fsd_options *o)
{
	struct fs_conf *conf = NULL;
	struct fs_conf_env env;
	struct fsd_daemon *d = NULL;
	struct fs_paths paths;
	FILE *out = o->out ? o->out : stdout;
	unsigned problems;
	char err[1024];
	int r;

	fsd_conf_env(o, &env);
	r = fs_conf_load(o->config_path, &env, &conf, err, sizeof(err));
	if (r < 0) {
		fprintf(out, "problem: %s\n", err);
		/* The loader resolves each disk to its whole disk in sysfs, so a
		 * missing one stops it: say so with the disk's own code. */
		if ((r == -ENODEV || r == -ENOTBLK || r == -ENOENT) && strstr(err, ": io."))
			return FSD_EXIT_NO_DISK;
		return FSD_EXIT_CONFIG;
	}
	fprintf(out, "config %s: %zu tenants, %zu resources, policy %s\n", conf->path,
		conf->n_tenants, conf->res.n, fs_conf_policy_name(conf->agent.policy));
	fsd_paths(o, conf, &paths);
	problems = fsd_check_host(conf, &paths, NULL, check_print, out);
	if (problems & FSD_CHECK_NOT_CGROUP2) {
		fs_conf_free(conf);
		return fsd_check_exit_code(problems);
	}
	o->dry_run = true;
	r = fsd_daemon_open(&d, o, conf, fs_monotonic_us()); /* owns conf now */
	if (r == 0) {
		problems |= fsd_daemon_check_backends(d, check_print, out);
		r = one_period(d);
		if (r == FSD_EXIT_OK) {
			fprintf(out, "files (current -> planned, after one period):\n");
			fsd_daemon_print_files(d, out);
		}
	}
	fsd_daemon_free(d);
	fprintf(out, "%s\n", problems ? "check: problems found" : "check: ok");
	if (problems)
		return fsd_check_exit_code(problems);
	return r < 0 ? FSD_EXIT_FAILURE : r;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"dry-run", no_argument, NULL, 'n'},
	    {"once", no_argument, NULL, '1'},
	    {"check-config", no_argument, NULL, 'C'},
	    {"release", no_argument, NULL, 'r'},
	    {"log-level", required_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"sysfs-root", required_argument, NULL, 'S'},
	    {"procfs-root", required_argument, NULL, 'P'},
	    {0},
	};
	struct fsd_options o = {.config_path = FS_CONF_DEFAULT_PATH};
	const char *level = getenv("FAIRSHARED_LOG_LEVEL");
	bool do_release = false;
	struct fs_conf *conf = NULL;
	struct fs_conf_env env;
	struct fsd_daemon *d = NULL;
	char err[1024];
	int c, prio, r;

	while ((c = getopt_long(argc, argv, "c:n1Crl:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.config_path = optarg;
			break;
		case 'n':
			o.dry_run = true;
			break;
		case '1':
			o.once = true;
			break;
		case 'C':
			o.check_config = true;
			break;
		case 'r':
			do_release = true;
			break;
		case 'l':
			level = optarg;
			break;
		case 'h':
			usage(stdout);
			return FSD_EXIT_OK;
		case 'S':
			o.sysfs_root = optarg;
			break;
		case 'P':
			o.procfs_root = optarg;
			break;
		case 'V':
			printf("fairshared %s\n", FAIRSHARE_VERSION);
			return FSD_EXIT_OK;
		default:
			usage(stderr);
			return FSD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fairshared: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return FSD_EXIT_USAGE;
	}
	prio = level ? fsd_log_level_from_name(level) : LOG_INFO;
	if (prio < 0) {
		fprintf(stderr, "fairshared: unknown log level '%s'\n", level);
		return FSD_EXIT_USAGE;
	}
	fsd_log_setup(prio, fsd_log_stderr_is_journal());

	if (do_release)
		return release(&o);
	if (o.check_config)
		return check_config(&o);

	fsd_conf_env(&o, &env);
	r = fs_conf_load(o.config_path, &env, &conf, err, sizeof(err));
	if (r < 0) {
		fsd_err("%s", err);
		return FSD_EXIT_CONFIG;
	}
	raise_nofile();
	if (!fs_keep_freed_memory()) /* (heap.h) */
		fsd_log(LOG_DEBUG, NULL, NULL, NULL,
			"mallopt refused a heap setting: freed memory may go back to the kernel");
	r = fsd_daemon_open(&d, &o, conf, fs_monotonic_us()); /* owns conf now */
	if (r < 0)
		return r == -EINVAL ? FSD_EXIT_CONFIG : FSD_EXIT_FAILURE;
	if (o.once) {
		r = one_period(d);
		if (r == FSD_EXIT_OK)
			fsd_daemon_print(d, o.out ? o.out : stdout);
	} else {
		r = fsd_run(d);
		if (fsd_daemon_stop(d) < 0 && r == FSD_EXIT_OK)
			r = FSD_EXIT_FAILURE;
	}
	fsd_daemon_free(d);
	return r;
}
