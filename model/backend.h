/* SPDX-License-Identifier: MIT */
/*
 * Which owner a tenant's cgroup is written through (issue 15): systemd's
 * D-Bus API for a unit systemd manages, cgroupfs elsewhere. The decision
 * is pure: the facts are gathered by agent/apply/unit_bus.c (sd_booted(),
 * the units' Delegate= and ControlGroup properties) or made up by tests.
 *
 *   backend = cgroupfs  every tenant is written through cgroupfs (as before)
 *   backend = auto      a tenant goes through systemd when its cgroup is a
 *                       unit (.slice/.scope/.service) of the systemd that
 *                       runs the host, under the cgroup root systemd
 *                       manages, loaded, and neither the unit nor one of
 *                       its ancestors has Delegate=yes; else cgroupfs
 *   backend = systemd   the same test, but a tenant that fails it is not
 *                       written at all (FS_BACKEND_NONE, a --check-config
 *                       problem): only systemd changes the host's cgroups
 *
 * Pure C: no I/O, no globals.
 */
#ifndef FAIRSHARE_MODEL_BACKEND_H
#define FAIRSHARE_MODEL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "unitprop.h"

enum fs_backend_mode {
	FS_BACKEND_MODE_AUTO,
	FS_BACKEND_MODE_SYSTEMD,
	FS_BACKEND_MODE_CGROUPFS,
};

enum fs_backend {
	FS_BACKEND_CGROUPFS,
	FS_BACKEND_SYSTEMD,
	FS_BACKEND_NONE, /* backend = systemd, and systemd cannot: not written */
};

/* What is known about one tenant's cgroup. */
struct fs_backend_facts {
	bool systemd_booted; /* systemd is PID 1 (sd_booted(): /run/systemd/system) */
	bool systemd_root;   /* the cgroup root is the hierarchy systemd manages */
	int bus_error;	     /* 0, or -errno of asking systemd (the facts below unknown) */
	enum fs_unit_type type;
	bool loaded;	       /* systemd has the unit loaded with this very cgroup */
	char delegated_by[FS_UNIT_NAME_MAX]; /* the unit (itself or an ancestor) with
						Delegate=yes; "" when none */
};

#define FS_BACKEND_REASON_MAX 320

struct fs_backend_choice {
	enum fs_backend backend;
	char reason[FS_BACKEND_REASON_MAX]; /* why, in words, for status and --check-config */
};

void fs_backend_choose(enum fs_backend_mode mode, const struct fs_backend_facts *f,
		       struct fs_backend_choice *out);

/* "cgroupfs", "systemd", "none" */
const char *fs_backend_name(enum fs_backend b);
/* "auto", "systemd", "cgroupfs" (the config's words) */
const char *fs_backend_mode_name(enum fs_backend_mode m);

/* Whether asking systemd about this cgroup is worth it in mode m (a unit
 * name, systemd booted, systemd's root, not backend = cgroupfs). */
bool fs_backend_ask_systemd(enum fs_backend_mode m, const struct fs_backend_facts *f);

#endif /* FAIRSHARE_MODEL_BACKEND_H */
