/* SPDX-License-Identifier: MIT */
/*
 * Tenant templates ([template.NAME] in fairshare.conf): every cgroup that
 * matches a glob is a tenant while it exists. This module finds the
 * matches under a cgroup root and names them; agent_conf.c turns them into
 * tenants (explicit [tenant.X] sections win).
 *
 * Naming: the last path component without its systemd suffix (.slice,
 * .scope, .service): "docker-1234ab.scope" -> "docker-1234ab". A user
 * slice "user-UID.slice" is named by the user's login name (getpwuid_r),
 * or by the UID when it has none. Characters a tenant name cannot hold
 * (letters, digits, '_' and '-' only) become '_'; long names are cut to
 * FS_NAME_MAX - 1.
 */
#ifndef FAIRSHARE_CONF_TEMPLATE_H
#define FAIRSHARE_CONF_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The login name of uid into buf: 0, or -ENOENT (no such user) / -errno. */
typedef int (*fs_login_fn)(uid_t uid, char *buf, size_t len);

/* fs_login_fn through getpwuid_r(3). */
int fs_template_login(uid_t uid, char *buf, size_t len);

/*
 * The tenant name of cgroup (a normalised relative path) into name
 * (FS_NAME_MAX); for a user slice also the login name into login (else
 * login[0] = '\0'); login_fn NULL = fs_template_login. 0 or -EINVAL (an
 * empty name).
 */
int fs_template_name(const char *cgroup, fs_login_fn login_fn, char *name, size_t len, char *login,
		     size_t login_len);

/*
 * Calls fn(ctx, rel) for every directory under root that matches the glob
 * match (relative to root, fnmatch syntax per path component), in sorted
 * order; rel is relative to root. Stops at the first fn error and returns
 * it; 0 otherwise (no match is 0). -ENOMEM when the glob fails for memory.
 */
int fs_template_scan(const char *root, const char *match, int (*fn)(void *ctx, const char *rel),
		     void *ctx);

/* A signature of the list of matches (order matters: the scan's sorted
 * order): equal lists, equal signatures. Start from FS_TEMPLATE_SIG_INIT. */
#define FS_TEMPLATE_SIG_INIT 14695981039346656037ull
uint64_t fs_template_sig(uint64_t sig, const char *rel);

/* match is a usable template glob: relative, no "." or ".." components,
 * no empty component. */
bool fs_template_match_ok(const char *match);

#endif /* FAIRSHARE_CONF_TEMPLATE_H */
