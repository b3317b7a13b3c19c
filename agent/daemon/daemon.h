/* SPDX-License-Identifier: MIT */
/*
 * The fairshared daemon: its state and one control period, sample ->
 * estimate -> solve/plan -> apply -> publish (the adapters between the
 * stages are adapt.h), plus reload, release and stop, with sd_notify
 * (READY, STATUS, RELOADING, STOPPING). What drives it (the sd-event timer,
 * signals, the control socket) is run.h; fairctl-free and event-loop-free,
 * so tests and the period benchmark call it directly.
 */
#ifndef FAIRSHARE_AGENT_DAEMON_H
#define FAIRSHARE_AGENT_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent_conf.h"
#include "check.h"
#include "paths.h"
#include "estimate.h"
#include "plan.h"
#include "published.h"

/* Exit codes (documented in fairshared --help). */
enum {
	FSD_EXIT_OK = 0,
	FSD_EXIT_FAILURE = 1, /* runtime failure (cgroup root, state dir, event loop) */
	FSD_EXIT_USAGE = 2,   /* bad command line */
	/* --check-config: the first problem found (agent/daemon/check.h) */
	FSD_EXIT_NOT_CGROUP2 = 3,   /* the cgroup root is not cgroup v2 */
	FSD_EXIT_NO_CONTROLLER = 4, /* a controller is not available or not enabled */
	FSD_EXIT_NO_CGROUP = 5,	    /* a tenant's cgroup does not exist */
	FSD_EXIT_NO_DISK = 6,	    /* a disk does not exist */
	FSD_EXIT_NO_BACKEND = 7,    /* backend = systemd cannot write a tenant */
	FSD_EXIT_CONFIG = 78,	    /* EX_CONFIG: the configuration was refused */
};

struct fsd_options {
	const char *config_path;
	bool dry_run;	   /* compute and log, never write a cgroup file */
	bool once;	   /* baseline, one period, print the plan, exit */
	bool check_config; /* --check-config: the caller prints the host checks */
	FILE *out;	   /* where --once prints; NULL = stdout */
	/* The host's sysfs and procfs; NULL = the real ones. Tests point them
	 * at fake trees (--sysfs-root, --procfs-root). */
	const char *sysfs_root, *procfs_root;
};

/* The host paths of a daemon: the config's cgroup root, o's sysfs and procfs. */
void fsd_paths(const struct fsd_options *o, const struct fs_conf *c, struct fs_paths *p);

/* The config environment of o: where cpu/memory = auto and disk names resolve. */
void fsd_conf_env(const struct fsd_options *o, struct fs_conf_env *env);

struct fsd_daemon;

/*
 * Maps the config onto the estimator's and planner's structs (resources in
 * the config's order; planner and estimator defaults for what the config
 * does not set).
 */
void fsd_plan_config_from_conf(const struct fs_conf *c, struct plan_config *pc);

/* Takes ownership of conf (also on error). Opens the sampler and (unless
 * dry-run) the writer and takes the baseline sample. 0 or -errno, logged. */
int fsd_daemon_open(struct fsd_daemon **out, const struct fsd_options *o, struct fs_conf *conf,
		    uint64_t now_us);
void fsd_daemon_free(struct fsd_daemon *d);

/* One control period at now_us (CLOCK_MONOTONIC). 0 or -errno (logged; the
 * limits in force stay). */
int fsd_daemon_period(struct fsd_daemon *d, uint64_t now_us);

/* Loads the config file again; swaps it in only when it is valid. 0 or -errno. */
int fsd_daemon_reload(struct fsd_daemon *d, uint64_t now_us);

/* Restores the saved originals when on_exit = restore (not in dry-run). */
int fsd_daemon_stop(struct fsd_daemon *d);

/* Prints the plan, one line per tenant (--once). */
void fsd_daemon_print(const struct fsd_daemon *d, FILE *f);

/* Prints, per tenant, each file the last plan would write: its value now
 * and the planned one (--check-config). */
void fsd_daemon_print_files(const struct fsd_daemon *d, FILE *f);

const struct fsd_published *fsd_daemon_published(const struct fsd_daemon *d);

/*
 * fairctl release: restores every original value and stops writing until
 * the next successful reload. 0 or -errno (logged).
 */
int fsd_daemon_release(struct fsd_daemon *d);

/* fairctl set-weight: the tenant's weight until the next reload. 0, -ENOENT
 * (no such tenant) or -EINVAL (not a finite weight > 0). */
int fsd_daemon_set_weight(struct fsd_daemon *d, const char *tenant, double weight);

/* Tenant i's files as the writer controls them, read now (explain): the
 * count (<= max) or -errno (-ENODEV: dry-run or released, nothing written;
 * -ENOENT: its cgroup is gone). */
int fsd_daemon_files(struct fsd_daemon *d, size_t i, struct fsd_file_state *out, size_t max);

/* The stages of a period, in the order they run (solve runs inside plan). */
enum fsd_stage {
	FSD_STAGE_SAMPLE,
	FSD_STAGE_ESTIMATE,
	FSD_STAGE_PLAN, /* build the problem, solve, plan the file values */
	FSD_STAGE_APPLY,
	FSD_STAGE_PUBLISH, /* snapshot, metrics file, status, sd_notify */
	FSD_STAGE__COUNT,
};

/* CPU time (CLOCK_THREAD_CPUTIME_ID) each stage of the last period took. */
struct fsd_period_cost {
	uint64_t ns[FSD_STAGE__COUNT];
};

const struct fsd_period_cost *fsd_daemon_cost(const struct fsd_daemon *d);

/* The configuration in force (until the next successful reload). */
const struct fs_conf *fsd_daemon_conf(const struct fsd_daemon *d);

/* Logs the one "started: ..." line. */
void fsd_daemon_log_started(const struct fsd_daemon *d);

/*
 * --check-config: reports each tenant that backend = systemd leaves
 * unwritten (model/backend.h) through report (check.h); returns
 * FSD_CHECK_NO_BACKEND when there is one, else 0.
 */
unsigned fsd_daemon_check_backends(const struct fsd_daemon *d, fsd_check_report_fn report,
				   void *ctx);

#endif /* FAIRSHARE_AGENT_DAEMON_H */
