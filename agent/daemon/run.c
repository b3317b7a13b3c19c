/* SPDX-License-Identifier: MIT */
/* fairshared's event loop (see run.h). */
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "clock.h"
#include "control_cmds.h"
#include "log.h"

/* The event loop's state; the daemon's is struct fsd_daemon. */
struct runner {
	struct fsd_daemon *d;
	sd_event *event;
	sd_event_source *timer;
	struct fsd_control *control;	       /* NULL when the socket could not be opened */
	struct fsd_control_daemon control_ops; /* what its commands call (ctx: the runner) */
	uint64_t next_us;		       /* CLOCK_MONOTONIC of the next period */
};

/* CLOCK_MONOTONIC now, as the event loop sees it. */
static uint64_t now_us(const struct runner *rn)
{
	uint64_t now = 0;

	if (rn->event && sd_event_now(rn->event, CLOCK_MONOTONIC, &now) >= 0)
		return now;
	return fs_monotonic_us();
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct runner *rn = userdata;
	uint64_t interval = fsd_daemon_conf(rn->d)->agent.interval_us, after;

	/* The period is stamped with the time it runs, not the time it was due
	 * (usec): every rate is a counter delta over the time between two
	 * stamps, and a wake-up late by L (a loaded or stalled host) would
	 * count L more of use in the same interval. Seen in the test VM on a
	 * loaded host: two readers pinned to one CPU at 0.89 + 0.78 cores, and
	 * a 32 MB/s disk read at 50 MB/s, which made CPU look saturated. */
	fsd_daemon_period(rn->d, now_us(rn)); /* a failure is logged and counted there */
	after = fs_monotonic_us();
	rn->next_us = usec + interval;
	if (rn->next_us <= after) /* we fell behind: skip, do not burst */
		rn->next_us = after + interval;
	sd_event_source_set_time(s, rn->next_us);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_stop_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)userdata;
	fsd_info("signal %u: stopping", si->ssi_signo);
	return sd_event_exit(sd_event_source_get_event(s), FSD_EXIT_OK);
}

static int on_hup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct runner *rn = userdata;

	(void)s;
	(void)si;
	fsd_daemon_reload(rn->d, now_us(rn));
	return 0;
}

static const struct fsd_published *ctl_published(void *ctx)
{
	return fsd_daemon_published(((struct runner *)ctx)->d);
}

static int ctl_reload(void *ctx)
{
	struct runner *rn = ctx;

	return fsd_daemon_reload(rn->d, now_us(rn));
}

static int ctl_release(void *ctx)
{
	return fsd_daemon_release(((struct runner *)ctx)->d);
}

static int ctl_set_weight(void *ctx, const char *tenant, double weight)
{
	return fsd_daemon_set_weight(((struct runner *)ctx)->d, tenant, weight);
}

static int ctl_files(void *ctx, size_t i, struct fsd_file_state *out, size_t max)
{
	return fsd_daemon_files(((struct runner *)ctx)->d, i, out, max);
}

/* Without its socket the daemon still enforces: fair sharing matters more
 * than the view of it. Only a second daemon on the same socket is fatal
 * (two writers on the same cgroups). */
static int open_control(struct runner *rn)
{
	const char *path = fsd_daemon_conf(rn->d)->agent.socket;
	char err[PATH_MAX + 128];
	int r;

	if (!path[0])
		return 0;
	rn->control_ops = (struct fsd_control_daemon){
	    .ctx = rn,
	    .published = ctl_published,
	    .reload = ctl_reload,
	    .release = ctl_release,
	    .set_weight = ctl_set_weight,
	    .files = ctl_files,
	};
	r = fsd_control_daemon_open(&rn->control, rn->event, &rn->control_ops, path, err,
				    sizeof(err));
	if (r < 0)
		fsd_err("%s; fairctl status/top will not work", err);
	return r;
}

static void runner_free(struct runner *rn)
{
	fsd_control_free(rn->control);
	sd_event_source_unref(rn->timer);
	sd_event_unref(rn->event);
}

int fsd_run(struct fsd_daemon *d)
{
	struct runner rn = {.d = d};
	uint64_t interval = fsd_daemon_conf(d)->agent.interval_us;
	sigset_t ss;
	uint64_t now = 0;
	int r;

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		return FSD_EXIT_FAILURE;
	r = sd_event_default(&rn.event);
	if (r >= 0)
		r = sd_event_add_signal(rn.event, NULL, SIGTERM, on_stop_signal, &rn);
	if (r >= 0)
		r = sd_event_add_signal(rn.event, NULL, SIGINT, on_stop_signal, &rn);
	if (r >= 0)
		r = sd_event_add_signal(rn.event, NULL, SIGHUP, on_hup, &rn);
	if (r >= 0)
		r = sd_event_set_watchdog(rn.event, true);
	if (r >= 0)
		r = sd_event_now(rn.event, CLOCK_MONOTONIC, &now);
	if (r >= 0) {
		rn.next_us = now + interval;
		/* 1 ms accuracy: periods stay evenly spaced and deterministic */
		r = sd_event_add_time(rn.event, &rn.timer, CLOCK_MONOTONIC, rn.next_us, 1000,
				      on_timer, &rn);
	}
	if (r < 0) {
		fsd_err("setting up the event loop: %s", strerror(-r));
		r = FSD_EXIT_FAILURE;
		goto out;
	}
	/* The writer's lock already stops a second daemon on the same state
	 * directory; one with its own state but our socket is refused too. */
	if (open_control(&rn) == -EADDRINUSE) {
		r = FSD_EXIT_FAILURE;
		goto out;
	}
	fsd_daemon_log_started(d);
	r = sd_event_loop(rn.event);
	if (r < 0) {
		fsd_err("event loop: %s", strerror(-r));
		r = FSD_EXIT_FAILURE;
	}
out:
	runner_free(&rn);
	return r;
}
