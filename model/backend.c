/* SPDX-License-Identifier: MIT */
/* The backend choice of a tenant (see backend.h). Pure: no I/O. */
#include "backend.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *fs_backend_name(enum fs_backend b)
{
	switch (b) {
	case FS_BACKEND_CGROUPFS:
		return "cgroupfs";
	case FS_BACKEND_SYSTEMD:
		return "systemd";
	case FS_BACKEND_NONE:
		return "none";
	}
	return "?";
}

const char *fs_backend_mode_name(enum fs_backend_mode m)
{
	switch (m) {
	case FS_BACKEND_MODE_AUTO:
		return "auto";
	case FS_BACKEND_MODE_SYSTEMD:
		return "systemd";
	case FS_BACKEND_MODE_CGROUPFS:
		return "cgroupfs";
	}
	return "?";
}

bool fs_backend_ask_systemd(enum fs_backend_mode m, const struct fs_backend_facts *f)
{
	return m != FS_BACKEND_MODE_CGROUPFS && f->type != FS_UNIT_NONE && f->systemd_booted &&
	       f->systemd_root;
}

/* systemd cannot: cgroupfs under auto, nothing under backend = systemd. */
static void cannot(enum fs_backend_mode mode, struct fs_backend_choice *out, const char *why)
{
	if (mode == FS_BACKEND_MODE_SYSTEMD) {
		out->backend = FS_BACKEND_NONE;
		snprintf(out->reason, sizeof(out->reason),
			 "backend = systemd but %.250s: not written", why);
	} else {
		out->backend = FS_BACKEND_CGROUPFS;
		snprintf(out->reason, sizeof(out->reason), "%.300s", why);
	}
}

void fs_backend_choose(enum fs_backend_mode mode, const struct fs_backend_facts *f,
		       struct fs_backend_choice *out)
{
	char why[FS_BACKEND_REASON_MAX];

	memset(out, 0, sizeof(*out));
	if (mode == FS_BACKEND_MODE_CGROUPFS) {
		out->backend = FS_BACKEND_CGROUPFS;
		snprintf(out->reason, sizeof(out->reason), "backend = cgroupfs");
		return;
	}
	if (f->type == FS_UNIT_NONE) {
		cannot(mode, out, "the cgroup is not a systemd unit (.slice, .scope, .service)");
		return;
	}
	if (!f->systemd_booted) {
		cannot(mode, out, "systemd does not run this host");
		return;
	}
	if (!f->systemd_root) {
		cannot(mode, out, "cgroup_root is not the hierarchy systemd manages");
		return;
	}
	if (f->bus_error < 0) {
		snprintf(why, sizeof(why), "systemd did not answer on the system bus (%s)",
			 strerror(-f->bus_error));
		cannot(mode, out, why);
		return;
	}
	if (f->delegated_by[0]) {
		/* Someone else manages the subtree: systemd does not write it. */
		snprintf(why, sizeof(why), "inside a subtree delegated by %.255s (Delegate=yes)",
			 f->delegated_by);
		cannot(mode, out, why);
		return;
	}
	if (!f->loaded) {
		cannot(mode, out, "systemd has no loaded unit for this cgroup");
		return;
	}
	out->backend = FS_BACKEND_SYSTEMD;
	snprintf(out->reason, sizeof(out->reason), "a unit systemd manages (%s)",
		 fs_backend_mode_name(mode));
}
