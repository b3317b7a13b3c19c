/* SPDX-License-Identifier: MIT */
/* The systemd backend's D-Bus calls (see unit_bus.h). */
#include "unit_bus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "unitprop.h"

#define SD_DEST		"org.freedesktop.systemd1"
#define SD_PATH		"/org/freedesktop/systemd1"
#define SD_MANAGER	"org.freedesktop.systemd1.Manager"
#define SD_UNIT_IFACE	"org.freedesktop.systemd1.Unit"
#define SD_UNIT_PREFIX	"/org/freedesktop/systemd1/unit"
#define SD_NO_SUCH_UNIT "org.freedesktop.systemd1.NoSuchUnit"
#define SD_PRIVATE	"unix:path=/run/systemd/private"
#define CALL_TIMEOUT_US 10000000ull
#define SYSTEMD_ROOT	"/sys/fs/cgroup"
#define ANCESTOR_CACHE	64

struct ancestor {
	char name[FS_UNIT_NAME_MAX];
	bool delegate;
};

struct known {
	char *cgroup;
	struct fs_backend_choice c;
	bool retry; /* "no loaded unit": ask again next time */
};

struct fs_unit_bus {
	sd_bus *bus; /* NULL until needed, and after a failure */
	bool systemd_root;
	int booted;    /* sd_booted(): > 0 systemd is PID 1 */
	char *address; /* NULL: systemd's private socket (root) or the system bus */
	fs_log_fn log;
	void *log_ctx;
	char last_err[256]; /* the last bus error logged (one line per distinct one) */
	struct ancestor anc[ANCESTOR_CACHE];
	size_t n_anc;
	struct known *known; /* sorted by cgroup */
	size_t n_known;
	enum fs_backend_mode known_mode; /* the mode they were chosen for */
};

int fs_ubus_open_opts(struct fs_unit_bus **out, const struct fs_ubus_opts *o)
{
	struct fs_unit_bus *ub = calloc(1, sizeof(*ub));
	const char *sroot = o->systemd_root ? o->systemd_root : SYSTEMD_ROOT;
	size_t n = strlen(o->cgroup_root);

	*out = NULL;
	if (!ub)
		return -ENOMEM;
	while (n > 1 && o->cgroup_root[n - 1] == '/')
		n--;
	ub->systemd_root = n == strlen(sroot) && !strncmp(o->cgroup_root, sroot, n);
	ub->booted = o->booted >= 0 ? o->booted : sd_booted();
	ub->log = o->log;
	ub->log_ctx = o->log_ctx;
	if (o->address) {
		ub->address = strdup(o->address);
		if (!ub->address) {
			free(ub);
			return -ENOMEM;
		}
	}
	*out = ub;
	return 0;
}

int fs_ubus_open(struct fs_unit_bus **out, const char *cgroup_root, fs_log_fn log, void *log_ctx)
{
	struct fs_ubus_opts o = {cgroup_root, NULL, -1, NULL, log, log_ctx};

	return fs_ubus_open_opts(out, &o);
}

static void forget_known(struct fs_unit_bus *ub)
{
	for (size_t i = 0; i < ub->n_known; i++)
		free(ub->known[i].cgroup);
	free(ub->known);
	ub->known = NULL;
	ub->n_known = 0;
}

void fs_ubus_close(struct fs_unit_bus *ub)
{
	if (!ub)
		return;
	sd_bus_flush_close_unref(ub->bus);
	forget_known(ub);
	free(ub->address);
	free(ub);
}

/* The connection, made when first needed (or again after a failure). */
static int connect_bus(struct fs_unit_bus *ub)
{
	sd_bus *b = NULL;
	int r;

	if (ub->bus)
		return 0;
	if (ub->address || geteuid() == 0) {
		/* systemd's own socket: works without dbus-daemon, as systemctl */
		r = sd_bus_new(&b);
		if (r >= 0)
			r = sd_bus_set_address(b, ub->address ? ub->address : SD_PRIVATE);
		if (r >= 0)
			r = sd_bus_start(b);
		if (r < 0) {
			sd_bus_unref(b);
			b = NULL;
			if (ub->address)
				return r;
		}
	}
	if (!b) {
		r = sd_bus_open_system(&b);
		if (r < 0)
			return r;
	}
	(void)sd_bus_set_method_call_timeout(b, CALL_TIMEOUT_US);
	ub->bus = b;
	return 0;
}

/* A bus error into -errno; logs its text once per distinct message, and
 * drops a broken connection. */
static int bus_fail(struct fs_unit_bus *ub, const char *what, const char *unit, int r,
		    const sd_bus_error *e)
{
	char line[sizeof(ub->last_err)];

	if (e && sd_bus_error_has_name(e, SD_NO_SUCH_UNIT))
		return -ENOENT;
	if (e && sd_bus_error_is_set(e) && sd_bus_error_get_errno(e) > 0)
		r = -sd_bus_error_get_errno(e);
	snprintf(line, sizeof(line), "systemd: %s %s: %s", what, unit,
		 e && e->message ? e->message : strerror(r < 0 ? -r : EIO));
	if (strcmp(line, ub->last_err)) {
		snprintf(ub->last_err, sizeof(ub->last_err), "%s", line);
		fs_logf(ub->log, ub->log_ctx, LOG_WARNING, "%s", line);
	}
	if (r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE || r == -ETIMEDOUT ||
	    (ub->bus && !sd_bus_is_open(ub->bus))) {
		sd_bus_flush_close_unref(ub->bus);
		ub->bus = NULL;
	}
	return r < 0 ? r : -EIO;
}

static int unit_path(const char *unit, char **path)
{
	return sd_bus_path_encode(SD_UNIT_PREFIX, unit, path);
}

static int get_bool(struct fs_unit_bus *ub, const char *unit, const char *iface, const char *prop,
		    bool *out)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char *path = NULL;
	int v = 0, r;

	r = connect_bus(ub);
	if (r >= 0)
		r = unit_path(unit, &path);
	if (r >= 0) {
		r = sd_bus_get_property_trivial(ub->bus, SD_DEST, path, iface, prop, &e, 'b', &v);
		if (r < 0)
			r = bus_fail(ub, prop, unit, r, &e);
	}
	*out = v != 0;
	free(path);
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

static int get_string(struct fs_unit_bus *ub, const char *unit, const char *iface, const char *prop,
		      char **out)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char *path = NULL;
	int r;

	*out = NULL;
	r = connect_bus(ub);
	if (r >= 0)
		r = unit_path(unit, &path);
	if (r >= 0) {
		r = sd_bus_get_property_string(ub->bus, SD_DEST, path, iface, prop, &e, out);
		if (r < 0)
			r = bus_fail(ub, prop, unit, r, &e);
	}
	free(path);
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

/* Delegate= of an ancestor unit, cached by name (they are few: user.slice,
 * system.slice, user@UID.service...). */
static int ancestor_delegates(struct fs_unit_bus *ub, const char *unit, bool *out)
{
	enum fs_unit_type t = fs_unit_of_cgroup(unit, NULL, 0);
	int r;

	for (size_t i = 0; i < ub->n_anc; i++)
		if (!strcmp(ub->anc[i].name, unit)) {
			*out = ub->anc[i].delegate;
			return 0;
		}
	r = get_bool(ub, unit, fs_unit_interface(t), "Delegate", out);
	if (r < 0)
		return r;
	if (ub->n_anc < ANCESTOR_CACHE) {
		snprintf(ub->anc[ub->n_anc].name, sizeof(ub->anc[0].name), "%s", unit);
		ub->anc[ub->n_anc++].delegate = *out;
	}
	return 0;
}

void fs_ubus_facts(struct fs_unit_bus *ub, enum fs_backend_mode mode, const char *cgroup,
		   struct fs_backend_facts *f)
{
	char unit[FS_UNIT_NAME_MAX], *state = NULL, *cg = NULL;
	const char *iface;
	bool del = false;
	int r;

	memset(f, 0, sizeof(*f));
	f->systemd_booted = ub->booted > 0;
	f->systemd_root = ub->systemd_root;
	f->type = fs_unit_of_cgroup(cgroup, unit, sizeof(unit));
	if (!fs_backend_ask_systemd(mode, f))
		return;
	iface = fs_unit_interface(f->type);
	/* every unit above it, outermost first: a delegated ancestor owns it */
	for (const char *p = cgroup; (p = strchr(p, '/')) != NULL; p++) {
		char anc[FS_UNIT_NAME_MAX];
		const char *start = p;
		size_t n;

		while (start > cgroup && start[-1] != '/')
			start--;
		n = (size_t)(p - start);
		if (n == 0 || n >= sizeof(anc))
			continue;
		memcpy(anc, start, n);
		anc[n] = '\0';
		if (fs_unit_of_cgroup(anc, NULL, 0) == FS_UNIT_NONE)
			continue;
		r = ancestor_delegates(ub, anc, &del);
		if (r < 0) {
			f->bus_error = r;
			return;
		}
		if (del) {
			snprintf(f->delegated_by, sizeof(f->delegated_by), "%s", anc);
			return;
		}
	}
	r = get_bool(ub, unit, iface, "Delegate", &del);
	if (r >= 0 && del) {
		snprintf(f->delegated_by, sizeof(f->delegated_by), "%s", unit);
		return;
	}
	if (r >= 0)
		r = get_string(ub, unit, SD_UNIT_IFACE, "LoadState", &state);
	if (r >= 0)
		r = get_string(ub, unit, iface, "ControlGroup", &cg);
	if (r < 0) {
		f->bus_error = r;
	} else {
		/* loaded, and (when active) in this very cgroup; an inactive
		 * unit has none yet */
		f->loaded = !strcmp(state, "loaded") &&
			    (!cg[0] || (cg[0] == '/' && !strcmp(cg + 1, cgroup)));
	}
	free(state);
	free(cg);
}

void fs_ubus_choose(struct fs_unit_bus *ub, enum fs_backend_mode mode, const char *cgroup,
		    struct fs_backend_choice *out)
{
	struct fs_backend_facts f;
	size_t lo = 0, hi = ub->n_known;

	fs_ubus_facts(ub, mode, cgroup, &f);
	fs_backend_choose(mode, &f, out);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(ub->known[mid].cgroup, cgroup);

		if (c == 0) {
			ub->known[mid].c = *out;
			ub->known[mid].retry =
			    fs_backend_ask_systemd(mode, &f) && !f.loaded && !f.delegated_by[0];
			return;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
}

static const struct known *find_known(const struct fs_unit_bus *ub, const char *cgroup)
{
	size_t lo = 0, hi = ub->n_known;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(ub->known[mid].cgroup, cgroup);

		if (c == 0)
			return &ub->known[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int by_cgroup(const void *a, const void *b)
{
	return strcmp(((const struct known *)a)->cgroup, ((const struct known *)b)->cgroup);
}

int fs_ubus_choose_all(struct fs_unit_bus *ub, enum fs_backend_mode mode, size_t n,
		       const char *const *cgroups, struct fs_backend_choice *out)
{
	struct known *k = calloc(n ? n : 1, sizeof(*k));
	size_t nk = 0;

	if (!k)
		return -ENOMEM;
	if (mode != ub->known_mode) /* chosen for another mode: ask again */
		forget_known(ub);
	ub->known_mode = mode;
	for (size_t i = 0; i < n; i++) {
		const struct known *old = find_known(ub, cgroups[i]);
		struct fs_backend_facts f;

		if (old && !old->retry) {
			out[i] = old->c;
		} else {
			fs_ubus_facts(ub, mode, cgroups[i], &f);
			fs_backend_choose(mode, &f, &out[i]);
			k[nk].retry =
			    fs_backend_ask_systemd(mode, &f) && !f.loaded && !f.delegated_by[0];
		}
		k[nk].c = out[i];
		k[nk].cgroup = strdup(cgroups[i]);
		if (!k[nk].cgroup) {
			for (size_t j = 0; j < nk; j++)
				free(k[j].cgroup);
			free(k);
			return -ENOMEM;
		}
		nk++;
	}
	qsort(k, nk, sizeof(*k), by_cgroup);
	forget_known(ub);
	ub->known = k;
	ub->n_known = nk;
	return 0;
}

/* One property of the unit: a t, or (io.max) the entry of dev's path in an
 * a(st), UINT64_MAX when it has none (systemd lists only set limits). */
static int read_prop(struct fs_unit_bus *ub, const char *unit, const char *path, const char *iface,
		     const char *prop, bool per_disk, const char *dev_path, uint64_t *v)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	const char *p;
	uint64_t x;
	int r;

	if (!per_disk) {
		r = sd_bus_get_property_trivial(ub->bus, SD_DEST, path, iface, prop, &e, 't', v);
		if (r < 0)
			r = bus_fail(ub, prop, unit, r, &e);
		sd_bus_error_free(&e);
		return r < 0 ? r : 0;
	}
	*v = UINT64_MAX;
	r = sd_bus_get_property(ub->bus, SD_DEST, path, iface, prop, &e, &m, "a(st)");
	if (r < 0) {
		r = bus_fail(ub, prop, unit, r, &e);
		goto out;
	}
	r = sd_bus_message_enter_container(m, 'a', "(st)");
	while (r >= 0 && (r = sd_bus_message_read(m, "(st)", &p, &x)) > 0)
		if (!strcmp(p, dev_path))
			*v = x;
	if (r >= 0)
		r = sd_bus_message_exit_container(m);
out:
	sd_bus_message_unref(m);
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

int fs_ubus_read(void *ctx, const char *cgroup, enum fs_cgfile f, struct fs_devnum dev, char *out,
		 size_t len)
{
	struct fs_unit_bus *ub = ctx;
	char unit[FS_UNIT_NAME_MAX], dev_path[FS_UPROP_DEV_PATH_MAX], *path = NULL;
	enum fs_unit_type t = fs_unit_of_cgroup(cgroup, unit, sizeof(unit));
	uint64_t v[FS_UPROP_MAX] = {0};
	int r;

	if ((unsigned)f >= FS_CGF__COUNT || fs_uprops[f].n == 0)
		return -EOPNOTSUPP;
	if (t == FS_UNIT_NONE)
		return -EINVAL;
	r = fs_uprop_dev_path(dev, dev_path, sizeof(dev_path));
	if (r >= 0)
		r = connect_bus(ub);
	if (r >= 0)
		r = unit_path(unit, &path);
	for (size_t k = 0; r >= 0 && k < fs_uprops[f].n; k++)
		r = read_prop(ub, unit, path, fs_unit_interface(t), fs_uprops[f].name[k],
			      fs_uprops[f].per_disk, dev_path, &v[k]);
	free(path);
	if (r < 0)
		return r;
	return fs_uprop_print(f, v, out, len);
}

int fs_ubus_write(void *ctx, const char *cgroup, enum fs_cgfile f, struct fs_devnum dev,
		  const char *value)
{
	struct fs_unit_bus *ub = ctx;
	char unit[FS_UNIT_NAME_MAX], dev_path[FS_UPROP_DEV_PATH_MAX];
	sd_bus_message *m = NULL, *reply = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	uint64_t v[FS_UPROP_MAX];
	int r;

	if ((unsigned)f >= FS_CGF__COUNT || fs_uprops[f].n == 0)
		return -EOPNOTSUPP;
	if (fs_unit_of_cgroup(cgroup, unit, sizeof(unit)) == FS_UNIT_NONE ||
	    fs_uprop_parse(f, value, v) < 0)
		return -EINVAL;
	r = fs_uprop_dev_path(dev, dev_path, sizeof(dev_path));
	if (r >= 0)
		r = connect_bus(ub);
	if (r >= 0)
		r = sd_bus_message_new_method_call(ub->bus, &m, SD_DEST, SD_PATH, SD_MANAGER,
						   "SetUnitProperties");
	/* runtime: the drop-in goes to /run/systemd/system.control, gone at boot */
	if (r >= 0)
		r = sd_bus_message_append(m, "sb", unit, 1);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sv)");
	for (size_t k = 0; r >= 0 && k < fs_uprops[f].n; k++) {
		const char *name = fs_uprops[f].name[k];

		if (fs_uprops[f].per_disk)
			r = sd_bus_message_append(m, "(sv)", name, "a(st)", 1, dev_path, v[k]);
		else
			r = sd_bus_message_append(m, "(sv)", name, "t", v[k]);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0) {
		r = sd_bus_call(ub->bus, m, 0, &e, &reply);
		if (r < 0)
			r = bus_fail(ub, "SetUnitProperties", unit, r, &e);
	}
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

int fs_ubus_active(void *ctx, const char *cgroup)
{
	struct fs_unit_bus *ub = ctx;
	char unit[FS_UNIT_NAME_MAX], *state = NULL;
	int r;

	if (fs_unit_of_cgroup(cgroup, unit, sizeof(unit)) == FS_UNIT_NONE)
		return -EINVAL;
	r = get_string(ub, unit, SD_UNIT_IFACE, "ActiveState", &state);
	if (r == -ENOENT)
		return 0;
	if (r >= 0)
		r = strcmp(state, "inactive") && strcmp(state, "failed") ? 1 : 0;
	free(state);
	return r;
}

const struct fs_unit_ops fs_ubus_ops = {fs_ubus_read, fs_ubus_write, fs_ubus_active};
