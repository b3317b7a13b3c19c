/* SPDX-License-Identifier: MIT */
/*
 * One host's side of the fleet protocol (docs/fleet.md), run once per
 * control period by fairshared:
 *
 *  1. keep the registration lease alive (grant a new one when it lapsed);
 *  2. read PREFIX/alloc/HOST and judge it against the record published last
 *     period (fleet_check): applied only when fresh, solved with that
 *     record's version and for the same tenant set as now;
 *  3. publish this period's record (PREFIX/hosts/HOST, lease-bound; the
 *     version is bumped when the demands or capacities changed);
 *  4. campaign: a txn creates PREFIX/leader bound to our lease unless it
 *     exists; it exists with our lease when we lead;
 *  5. the leader reads PREFIX/hosts/ and PREFIX/weights at one revision,
 *     solves (warm, from its last answer), and writes each host's part,
 *     PREFIX/alloc/HOST, in txns guarded by its leader key (a deposed
 *     leader's write does not land), plus the dump STATE_DIR/fleet-dump.ini.
 *
 * The outcome: FLEET (apply the grants), HOLD (an allocation is not
 * applicable this period but the last one applied is younger than max_age:
 * write nothing new), or LOCAL (etcd unreachable, or nothing applicable for
 * max_age: the host's own policy). Stale data never reaches the kernel.
 */
#ifndef FAIRSHARE_FLEET_H
#define FAIRSHARE_FLEET_H

#include <stdint.h>

#include "etcd_client.h"
#include "fleet_conf.h"
#include "fleet_model.h"

enum fleet_mode { FLEET_MODE_LOCAL, FLEET_MODE_FLEET, FLEET_MODE_HOLD };

const char *fleet_mode_name(enum fleet_mode m); /* "local", "fleet", "hold" */

struct fleet_status {
	enum fleet_mode mode;
	char reason[ETCD_ERR_MAX + 64];
	bool etcd_ok;
	bool is_leader;
	char leader[FLEET_NAME_MAX]; /* "" unknown */
	int64_t version;	     /* of our last published record */
	int64_t alloc_revision;	     /* of the allocation last read (0: none) */
	uint64_t alloc_time_us;	     /* its CLOCK_REALTIME stamp */
	int64_t applied_revision;    /* of the allocation last applied */
	uint64_t applied_age_us;     /* its age when it was applied (<= max_age) */
	uint64_t fallback_periods;   /* at the last switch to local: periods since
					the last one that applied an allocation */
	size_t solved_hosts;	     /* leader: hosts in its last solve */
	uint64_t solve_ns;	     /* leader: CPU of its last solve */
	int solve_iterations;	     /* leader: its sweeps */
	bool solve_warm;	     /* leader: it started from the previous answer */
	size_t fleet_weights;	     /* leader: entries in PREFIX/weights */
	char weights_note[640];	     /* leader: why PREFIX/weights was ignored, or "" */
	uint64_t periods[3];	     /* by mode */
	uint64_t etcd_requests, etcd_bytes, etcd_bytes_received;
	uint64_t etcd_keys_written; /* puts and deletes sent, txns' ops counted */
};

struct fleet;

/* 0, or -EINVAL/-ENOMEM with the reason logged by the caller from err. */
int fleet_open(struct fleet **out, const struct fs_conf_fleet *cfg, const char *state_dir,
	       char *err, size_t errlen);
/* Revokes the lease: the host leaves the fleet now, not a TTL later. */
void fleet_close(struct fleet *f);

/*
 * One period. me: this period's record (host, resources, tenants; version
 * and time are set here). grant[me->n_tenants] receives the fractions to
 * apply when the result is FLEET_MODE_FLEET.
 */
enum fleet_mode fleet_period(struct fleet *f, struct fleet_host_rec *me, uint64_t now_mono_us,
			     uint64_t now_real_us, double *grant);

const struct fleet_status *fleet_status(const struct fleet *f);

/* The grant (and fleet weight) last applied to tenant, or NULL. */
const struct fleet_grant *fleet_applied_grant(const struct fleet *f, const char *tenant);

#endif /* FAIRSHARE_FLEET_H */
