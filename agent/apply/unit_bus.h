/* SPDX-License-Identifier: MIT */
/*
 * The systemd backend's I/O (issue 15): everything that talks to systemd
 * over D-Bus with sd-bus, and nothing that decides. What a value means and
 * how it is encoded is model/unitprop.h; which backend a tenant gets is
 * model/backend.h. This module only
 *   - gathers the facts of a tenant's cgroup (sd_booted(), the units'
 *     Delegate=, LoadState and ControlGroup properties),
 *   - reads a file's properties from the unit (org.freedesktop.systemd1.
 *     Slice/Scope/Service) and encodes them with fs_uprop_print,
 *   - sets them with Manager.SetUnitProperties(unit, runtime=true, ...).
 * The writer calls fs_ubus_read / fs_ubus_write through struct
 * fs_unit_ops (writer.h), so it never links sd-bus and its tests can use
 * another store.
 *
 * The connection is made on first use: as root systemd's private socket
 * (/run/systemd/private, what systemctl uses: no dbus-daemon needed), else
 * the system bus; it is made again after a failure. Each call waits at
 * most 10 s.
 *
 * Cost: facts: 3 calls for the tenant's unit plus one per ancestor unit not
 * seen before (cached by name); fs_ubus_choose_all reuses the choice of a
 * cgroup it decided before. Read: one call per property (two for cpu.max,
 * four for io.max); write: one call per file.
 */
#ifndef FAIRSHARE_UNIT_BUS_H
#define FAIRSHARE_UNIT_BUS_H

#include <stdbool.h>
#include <stddef.h>

#include "agent_log.h"
#include "backend.h"
#include "cgfile.h"
#include "writer.h"

struct fs_unit_bus;

/* cgroup_root: the config's (a systemd backend needs /sys/fs/cgroup). */
int fs_ubus_open(struct fs_unit_bus **out, const char *cgroup_root, fs_log_fn log, void *log_ctx);

/*
 * fs_ubus_open with the host's facts as parameters (tests): address: the
 * D-Bus address of systemd ("unix:path=..."; NULL: as fs_ubus_open);
 * booted: whether systemd runs the host (-1: sd_booted()); systemd_root:
 * the hierarchy systemd manages ("/sys/fs/cgroup").
 */
struct fs_ubus_opts {
	const char *cgroup_root;
	const char *address;
	int booted;
	const char *systemd_root;
	fs_log_fn log;
	void *log_ctx;
};
int fs_ubus_open_opts(struct fs_unit_bus **out, const struct fs_ubus_opts *o);
void fs_ubus_close(struct fs_unit_bus *ub);

/* The facts of cgroup (relative, normalised) for fs_backend_choose. */
void fs_ubus_facts(struct fs_unit_bus *ub, enum fs_backend_mode mode, const char *cgroup,
		   struct fs_backend_facts *f);

/*
 * The choice for each of cgroups[0..n-1] into out[]: a cgroup chosen by the
 * previous call keeps its choice unless it was "no loaded unit" (asked
 * again: the unit may have appeared), the others are asked. Replaces the
 * remembered choices by these. 0 or -ENOMEM.
 */
int fs_ubus_choose_all(struct fs_unit_bus *ub, enum fs_backend_mode mode, size_t n,
		       const char *const *cgroups, struct fs_backend_choice *out);

/* Asks again for one cgroup (it was (re)created) and remembers it. */
void fs_ubus_choose(struct fs_unit_bus *ub, enum fs_backend_mode mode, const char *cgroup,
		    struct fs_backend_choice *out);

/*
 * struct fs_unit_ops of writer.h (ctx: the fs_unit_bus): the value of f
 * (disk dev for io.max) of the unit cgroup names, in fs_uprop_print's
 * encoding; and setting one. -ENOENT: no such unit (gone); -EOPNOTSUPP: f
 * has no property; -EINVAL: a value that does not parse; other -errno from
 * the bus (logged once per distinct error).
 */
int fs_ubus_read(void *ctx, const char *cgroup, enum fs_cgfile f, struct fs_devnum dev, char *out,
		 size_t len);
int fs_ubus_write(void *ctx, const char *cgroup, enum fs_cgfile f, struct fs_devnum dev,
		  const char *value);
/* The unit's ActiveState: 0 inactive or failed (or no such unit), 1 any
 * other (active, activating, deactivating, reloading...), -errno. */
int fs_ubus_active(void *ctx, const char *cgroup);

/* { fs_ubus_read, fs_ubus_write, fs_ubus_active } for struct fs_writer_opts (ctx: the
 * fs_unit_bus). */
extern const struct fs_unit_ops fs_ubus_ops;

#endif /* FAIRSHARE_UNIT_BUS_H */
