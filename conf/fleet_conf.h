/* SPDX-License-Identifier: MIT */
/*
 * The [fleet] section of fairshare.conf (fleet mode, docs/fleet.md):
 *
 *   [fleet]
 *   endpoints = http://10.0.0.1:2379, http://10.0.0.2:2379   ; required: enables it
 *   prefix = /fairshare/          ; key prefix in etcd (one fleet per prefix)
 *   host = NAME                   ; this host's name in the fleet; default: hostname
 *   lease_ttl = 5s                ; registration lease, whole seconds >= 2
 *   max_age = 2 periods           ; an allocation older than this is not applied
 *                                 ; (a duration, default 2 x interval)
 *   timeout = 250ms               ; per etcd request (default interval / 2, <= 1 s)
 *   cacert = /etc/fairshare/etcd-ca.pem   ; TLS, passed to libcurl
 *   cert = ... ; key = ...
 *   user = fairshare ; password_file = /etc/fairshare/etcd.pass   ; etcd auth
 *
 * Kept apart from agent_conf.c, which only routes the section's keys here.
 */
#ifndef FAIRSHARE_FLEET_CONF_H
#define FAIRSHARE_FLEET_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "ini_limits.h"

#define FS_FLEET_HOST_MAX 64
#define FS_FLEET_TEXT_MAX 512

struct fs_conf_fleet {
	bool enabled; /* a [fleet] section with endpoints */
	char endpoints[FS_FLEET_TEXT_MAX];
	char prefix[128];	      /* ends in '/' */
	char host[FS_FLEET_HOST_MAX]; /* [A-Za-z0-9_.-] */
	uint64_t lease_ttl_s;
	uint64_t max_age_us;
	uint64_t timeout_us;
	uint64_t interval_us; /* the agent's period (the hold's margin: fleet.c) */
	char cacert[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
	char user[64];
	char password[128]; /* read from password_file at load time */
	int line;	    /* of [fleet] */
};

enum fs_fleet_key {
	FLEET_KEY_ENDPOINTS,
	FLEET_KEY_PREFIX,
	FLEET_KEY_HOST,
	FLEET_KEY_LEASE_TTL,
	FLEET_KEY_MAX_AGE,
	FLEET_KEY_TIMEOUT,
	FLEET_KEY_CACERT,
	FLEET_KEY_CERT,
	FLEET_KEY_KEY,
	FLEET_KEY_USER,
	FLEET_KEY_PASSWORD_FILE,
	FLEET_KEY__COUNT
};

struct fs_fleet_raw {
	bool seen;
	int line;
	char *value[FLEET_KEY__COUNT];
	int value_line[FLEET_KEY__COUNT];
};

/* One key of [fleet]: 0 or -EINVAL (unknown, duplicate, empty) / -ENOMEM. */
int fs_fleet_raw_key(struct fs_fleet_raw *raw, const char *path, const char *name,
		     const char *value, int line, struct conf_error *err);
void fs_fleet_raw_free(struct fs_fleet_raw *raw);

/*
 * Resolves raw into out against the agent's interval and policy (njc is one
 * host's rule: fleet mode needs psdsf). Without a [fleet] section out is
 * disabled and 0 is returned.
 */
int fs_fleet_resolve(const struct fs_fleet_raw *raw, const char *path, uint64_t interval_us,
		     bool policy_is_psdsf, struct fs_conf_fleet *out, struct conf_error *err);

/*
 * The [fleet] section of the config at path alone, for fairctl's fleet
 * commands (other sections are not read; the interval is taken as 1 s, which
 * only sets defaults fairctl does not use). -ENOENT (with err) when the file
 * has no [fleet] section.
 */
int fs_fleet_conf_read(const char *path, struct fs_conf_fleet *out, struct conf_error *err);

/*
 * The weights of an INI file for `fairctl fleet push`: fn(ctx, NAME, false,
 * W) for each [tenant.NAME] and fn(ctx, NAME, true, W) for each
 * [template.NAME], W its weight key or 1 (the config's default), checked
 * with the config's bounds (fs_conf_weight_ok). Other sections and keys are
 * not read, so fairshare.conf itself can be pushed. 0, or the first error
 * (fn's, or -EINVAL "file:line: bad weight") with err set.
 */
int fs_fleet_weights_read(const char *path,
			  int (*fn)(void *ctx, const char *name, bool is_template, double weight),
			  void *ctx, struct conf_error *err);

#endif /* FAIRSHARE_FLEET_CONF_H */
