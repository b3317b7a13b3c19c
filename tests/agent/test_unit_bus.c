/* SPDX-License-Identifier: MIT */
/*
 * agent/apply/unit_bus.c over a real sd-bus connection to a stand-in for
 * systemd's manager (a server in a thread of this test, on a Unix socket):
 * the D-Bus side of the systemd backend: the facts of a cgroup (Delegate=
 * of the unit and of each ancestor unit, LoadState, ControlGroup) and the
 * backend they give, property reads (t and a(st) per disk) in
 * model/unitprop.h's encoding, SetUnitProperties(unit, runtime=true, a(sv))
 * with the values and types systemd expects, and NoSuchUnit as -ENOENT.
 * systemd itself is exercised in the VM (tests/vm/suites/e2e-systemd.sh).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "unit_bus.h"
#include "unitprop.h"

#define N_UNITS 8

struct fake_unit {
	char name[64];
	const char *load_state;	  /* "loaded" */
	const char *active_state; /* "active" */
	const char *control_group;
	int delegate;
	uint64_t quota, period, cpu_weight, mem_high, mem_max, mem_low, io_weight;
	char io_path[64];
	uint64_t io_rbps; /* one a(st) entry for io_path when != UINT64_MAX */
	bool runtime_seen;
};

struct server {
	char *dir;
	char address[200];
	int listen_fd;
	pthread_t thread;
	volatile int stop;
	struct fake_unit units[N_UNITS];
	size_t n_units;
	int n_set_calls;
	char last_set[256]; /* "UNIT PROP=V PROP=V" */
	struct fake_unit not_found;
};

static struct fake_unit *unit_by_name(struct server *s, const char *name)
{
	for (size_t i = 0; i < s->n_units; i++)
		if (!strcmp(s->units[i].name, name))
			return &s->units[i];
	return NULL;
}

/* Every unit path answers, as systemd loads units on demand: an unknown
 * name is "not-found" with the defaults. */
static int find_unit(sd_bus *bus, const char *path, const char *iface, void *userdata, void **found,
		     sd_bus_error *e)
{
	struct server *s = userdata;
	char *name = NULL;
	struct fake_unit *u;

	(void)bus;
	(void)iface;
	(void)e;
	if (sd_bus_path_decode(path, "/org/freedesktop/systemd1/unit", &name) <= 0)
		return 0;
	u = unit_by_name(s, name);
	free(name);
	*found = u ? u : &s->not_found;
	return 1;
}

static int get_io(sd_bus *bus, const char *path, const char *iface, const char *prop,
		  sd_bus_message *reply, void *userdata, sd_bus_error *e)
{
	struct fake_unit *u = userdata;
	int r;

	(void)bus;
	(void)path;
	(void)iface;
	(void)e;
	r = sd_bus_message_open_container(reply, 'a', "(st)");
	/* an unrelated disk first: only dev's entry counts */
	if (r >= 0)
		r = sd_bus_message_append(reply, "(st)", "/dev/block/253:0", (uint64_t)777);
	if (r >= 0 && !strcmp(prop, "IOReadBandwidthMax") && u->io_rbps != UINT64_MAX)
		r = sd_bus_message_append(reply, "(st)", u->io_path, u->io_rbps);
	return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int get_str(sd_bus *bus, const char *path, const char *iface, const char *prop,
		   sd_bus_message *reply, void *userdata, sd_bus_error *e)
{
	struct fake_unit *u = userdata;

	(void)bus;
	(void)path;
	(void)iface;
	(void)e;
	if (!strcmp(prop, "LoadState"))
		return sd_bus_message_append(reply, "s", u->load_state);
	if (!strcmp(prop, "ActiveState"))
		return sd_bus_message_append(reply, "s", u->active_state);
	return sd_bus_message_append(reply, "s", u->control_group);
}

#define T_PROP(name, field) SD_BUS_PROPERTY(name, "t", NULL, offsetof(struct fake_unit, field), 0)

static const sd_bus_vtable unit_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Delegate", "b", NULL, offsetof(struct fake_unit, delegate), 0),
    SD_BUS_PROPERTY("ControlGroup", "s", get_str, 0, 0),
    T_PROP("CPUQuotaPerSecUSec", quota),
    T_PROP("CPUQuotaPeriodUSec", period),
    T_PROP("CPUWeight", cpu_weight),
    T_PROP("MemoryHigh", mem_high),
    T_PROP("MemoryMax", mem_max),
    T_PROP("MemoryLow", mem_low),
    T_PROP("IOWeight", io_weight),
    SD_BUS_PROPERTY("IOReadBandwidthMax", "a(st)", get_io, 0, 0),
    SD_BUS_PROPERTY("IOWriteBandwidthMax", "a(st)", get_io, 0, 0),
    SD_BUS_PROPERTY("IOReadIOPSMax", "a(st)", get_io, 0, 0),
    SD_BUS_PROPERTY("IOWriteIOPSMax", "a(st)", get_io, 0, 0),
    SD_BUS_VTABLE_END,
};

static const sd_bus_vtable unit_iface_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("LoadState", "s", get_str, 0, 0),
    SD_BUS_PROPERTY("ActiveState", "s", get_str, 0, 0),
    SD_BUS_VTABLE_END,
};

static uint64_t *field(struct fake_unit *u, const char *prop)
{
	static const struct {
		const char *name;
		size_t off;
	} map[] = {
	    {"CPUQuotaPerSecUSec", offsetof(struct fake_unit, quota)},
	    {"CPUQuotaPeriodUSec", offsetof(struct fake_unit, period)},
	    {"CPUWeight", offsetof(struct fake_unit, cpu_weight)},
	    {"MemoryHigh", offsetof(struct fake_unit, mem_high)},
	    {"MemoryMax", offsetof(struct fake_unit, mem_max)},
	    {"MemoryLow", offsetof(struct fake_unit, mem_low)},
	    {"IOWeight", offsetof(struct fake_unit, io_weight)},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].name, prop))
			return (uint64_t *)((char *)u + map[i].off);
	return NULL;
}

/* Manager.SetUnitProperties(s name, b runtime, a(sv) properties), with the
 * types systemd's bus_cgroup_set_property reads. */
static int set_unit_properties(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct server *s = userdata;
	const char *name, *prop;
	struct fake_unit *u;
	size_t used;
	int runtime, r;

	r = sd_bus_message_read(m, "sb", &name, &runtime);
	if (r < 0)
		return r;
	u = unit_by_name(s, name);
	if (!u)
		return sd_bus_error_setf(e, "org.freedesktop.systemd1.NoSuchUnit",
					 "Unit %s not found.", name);
	u->runtime_seen = runtime;
	s->n_set_calls++;
	used = (size_t)snprintf(s->last_set, sizeof(s->last_set), "%s", name);
	r = sd_bus_message_enter_container(m, 'a', "(sv)");
	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
		uint64_t v, *p;
		const char *dev;

		r = sd_bus_message_read(m, "s", &prop);
		if (r < 0)
			return r;
		if (!strncmp(prop, "IO", 2) && strcmp(prop, "IOWeight")) {
			r = sd_bus_message_enter_container(m, 'v', "a(st)");
			if (r < 0)
				return sd_bus_error_setf(e, SD_BUS_ERROR_INVALID_ARGS, "%s: a(st)",
							 prop);
			r = sd_bus_message_read(m, "a(st)", 1, &dev, &v);
			if (r < 0)
				return r;
			if (!strcmp(prop, "IOReadBandwidthMax")) {
				snprintf(u->io_path, sizeof(u->io_path), "%s", dev);
				u->io_rbps = v;
			}
			used += (size_t)snprintf(s->last_set + used, sizeof(s->last_set) - used,
						 " %s=%s:%llu", prop, dev, (unsigned long long)v);
		} else {
			r = sd_bus_message_enter_container(m, 'v', "t");
			if (r < 0)
				return sd_bus_error_setf(e, SD_BUS_ERROR_INVALID_ARGS, "%s: t",
							 prop);
			r = sd_bus_message_read(m, "t", &v);
			if (r < 0)
				return r;
			p = field(u, prop);
			if (!p)
				return sd_bus_error_setf(e, SD_BUS_ERROR_INVALID_ARGS, "%s", prop);
			*p = v;
			used += (size_t)snprintf(s->last_set + used, sizeof(s->last_set) - used,
						 " %s=%llu", prop, (unsigned long long)v);
		}
		if (used >= sizeof(s->last_set))
			used = sizeof(s->last_set) - 1;
		r = sd_bus_message_exit_container(m); /* v */
		if (r >= 0)
			r = sd_bus_message_exit_container(m); /* r */
	}
	if (r < 0)
		return r;
	r = sd_bus_message_exit_container(m);
	return r < 0 ? r : sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("SetUnitProperties", "sba(sv)", "", set_unit_properties, 0),
    SD_BUS_VTABLE_END,
};

/* One client at a time: accept, serve until it hangs up, accept again. */
static void *serve(void *arg)
{
	struct server *s = arg;

	while (!s->stop) {
		sd_bus *b = NULL;
		sd_id128_t id;
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			break;
		if (sd_bus_new(&b) < 0 || sd_bus_set_fd(b, fd, fd) < 0 ||
		    sd_id128_randomize(&id) < 0 || sd_bus_set_server(b, 1, id) < 0)
			abort();
		if (sd_bus_add_fallback_vtable(b, NULL, "/org/freedesktop/systemd1/unit",
					       "org.freedesktop.systemd1.Slice", unit_vtable,
					       find_unit, s) < 0 ||
		    sd_bus_add_fallback_vtable(b, NULL, "/org/freedesktop/systemd1/unit",
					       "org.freedesktop.systemd1.Service", unit_vtable,
					       find_unit, s) < 0 ||
		    sd_bus_add_fallback_vtable(b, NULL, "/org/freedesktop/systemd1/unit",
					       "org.freedesktop.systemd1.Scope", unit_vtable,
					       find_unit, s) < 0 ||
		    sd_bus_add_fallback_vtable(b, NULL, "/org/freedesktop/systemd1/unit",
					       "org.freedesktop.systemd1.Unit", unit_iface_vtable,
					       find_unit, s) < 0 ||
		    sd_bus_add_object_vtable(b, NULL, "/org/freedesktop/systemd1",
					     "org.freedesktop.systemd1.Manager", manager_vtable,
					     s) < 0 ||
		    sd_bus_start(b) < 0)
			abort();
		for (;;) {
			int r = sd_bus_process(b, NULL);

			if (r < 0)
				break;
			if (r > 0)
				continue;
			if (sd_bus_wait(b, 200000) < 0 || s->stop)
				break;
		}
		sd_bus_flush_close_unref(b);
	}
	return NULL;
}

static struct fake_unit *add_unit(struct server *s, const char *name, const char *cg)
{
	struct fake_unit *u = &s->units[s->n_units++];

	*u = (struct fake_unit){
	    .load_state = "loaded", .active_state = "active", .control_group = cg};
	snprintf(u->name, sizeof(u->name), "%s", name);
	u->quota = u->period = u->cpu_weight = u->mem_high = u->mem_max = u->io_weight =
	    u->io_rbps = UINT64_MAX;
	return u;
}

static int setup(void **state)
{
	struct server *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	s->dir = at_mkdtemp();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/private", s->dir);
	snprintf(s->address, sizeof(s->address), "unix:path=%s", sa.sun_path);
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->listen_fd >= 0);
	assert_int_equal(bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(s->listen_fd, 4), 0);
	s->not_found = (struct fake_unit){
	    .load_state = "not-found", .active_state = "inactive", .control_group = ""};
	add_unit(s, "user.slice", "/user.slice");
	add_unit(s, "user-1001.slice", "/user.slice/user-1001.slice");
	add_unit(s, "user@1001.service", "/user.slice/user-1001.slice/user@1001.service")
	    ->delegate = 1;
	add_unit(s, "app.slice",
		 "/user.slice/user-1001.slice/user@1001.service/app.slice"); /* the user's */
	add_unit(s, "runner.service", "/system.slice/runner.service")->delegate = 1;
	add_unit(s, "idle.service", ""); /* loaded, not running: no cgroup */
	add_unit(s, "other.slice", "/somewhere/else/other.slice");
	assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	struct server *s = *state;

	s->stop = 1;
	shutdown(s->listen_fd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->listen_fd);
	at_rmtree(s->dir);
	free(s->dir);
	free(s);
	return 0;
}

static struct fs_unit_bus *open_bus(struct server *s, int booted, const char *root)
{
	struct fs_ubus_opts o = {
	    .cgroup_root = root,
	    .address = s->address,
	    .booted = booted,
	    .systemd_root = "/sys/fs/cgroup",
	};
	struct fs_unit_bus *ub;

	assert_int_equal(fs_ubus_open_opts(&ub, &o), 0);
	return ub;
}

static enum fs_backend choose(struct fs_unit_bus *ub, enum fs_backend_mode m, const char *cg,
			      const char *reason_part)
{
	struct fs_backend_choice c;

	fs_ubus_choose_all(ub, m, 1, &cg, &c);
	if (reason_part && !strstr(c.reason, reason_part))
		fail_msg("%s: reason \"%s\" lacks \"%s\"", cg, c.reason, reason_part);
	return c.backend;
}

static void test_facts_and_choice(void **state)
{
	struct server *s = *state;
	struct fs_unit_bus *ub = open_bus(s, 1, "/sys/fs/cgroup/");

	assert_int_equal(choose(ub, FS_BACKEND_MODE_AUTO, "user.slice/user-1001.slice", "manages"),
			 FS_BACKEND_SYSTEMD);
	/* below the user's manager (Delegate=yes on user@1001.service) */
	assert_int_equal(choose(ub, FS_BACKEND_MODE_AUTO,
				"user.slice/user-1001.slice/user@1001.service/app.slice",
				"delegated by user@1001.service"),
			 FS_BACKEND_CGROUPFS);
	/* the delegated unit itself */
	assert_int_equal(choose(ub, FS_BACKEND_MODE_AUTO, "system.slice/runner.service",
				"delegated by runner.service"),
			 FS_BACKEND_CGROUPFS);
	assert_int_equal(choose(ub, FS_BACKEND_MODE_SYSTEMD, "system.slice/runner.service", NULL),
			 FS_BACKEND_NONE);
	/* loaded but inactive: systemd, it keeps the properties for its start */
	assert_int_equal(choose(ub, FS_BACKEND_MODE_AUTO, "system.slice/idle.service", NULL),
			 FS_BACKEND_SYSTEMD);
	/* unknown to systemd, or its cgroup is elsewhere */
	assert_int_equal(choose(ub, FS_BACKEND_MODE_AUTO, "docker/ab.scope", "no loaded unit"),
			 FS_BACKEND_CGROUPFS);
	assert_int_equal(choose(ub, FS_BACKEND_MODE_AUTO, "user.slice/other.slice", NULL),
			 FS_BACKEND_CGROUPFS);
	assert_int_equal(choose(ub, FS_BACKEND_MODE_AUTO, "tenants/a", "not a systemd unit"),
			 FS_BACKEND_CGROUPFS);
	fs_ubus_close(ub);
	/* not booted with systemd, or another hierarchy: never asked */
	ub = open_bus(s, 0, "/sys/fs/cgroup");
	assert_int_equal(choose(ub, FS_BACKEND_MODE_AUTO, "user.slice/user-1001.slice",
				"does not run this host"),
			 FS_BACKEND_CGROUPFS);
	fs_ubus_close(ub);
	ub = open_bus(s, 1, "/tmp/fake-cgroup");
	assert_int_equal(
	    choose(ub, FS_BACKEND_MODE_AUTO, "user.slice/user-1001.slice", "cgroup_root"),
	    FS_BACKEND_CGROUPFS);
	fs_ubus_close(ub);
}

/* Choices are remembered: a second call for the same cgroups keeps them
 * (a unit that became delegated meanwhile is not asked again), except
 * "no loaded unit", which is asked again when the cgroup appears. */
static void test_choices_remembered(void **state)
{
	struct server *s = *state;
	struct fs_unit_bus *ub = open_bus(s, 1, "/sys/fs/cgroup");
	const char *cgs[] = {"user.slice/user-1001.slice", "docker/ab.scope"};
	struct fs_backend_choice c[2];

	assert_int_equal(fs_ubus_choose_all(ub, FS_BACKEND_MODE_AUTO, 2, cgs, c), 0);
	assert_int_equal(c[0].backend, FS_BACKEND_SYSTEMD);
	assert_int_equal(c[1].backend, FS_BACKEND_CGROUPFS);
	/* the scope appears: asked again, now systemd's */
	add_unit(s, "ab.scope", "/docker/ab.scope");
	fs_ubus_choose(ub, FS_BACKEND_MODE_AUTO, cgs[1], &c[1]);
	assert_int_equal(c[1].backend, FS_BACKEND_SYSTEMD);
	/* user-1001.slice becomes delegated: the remembered choice stands */
	unit_by_name(s, "user-1001.slice")->delegate = 1;
	assert_int_equal(fs_ubus_choose_all(ub, FS_BACKEND_MODE_AUTO, 2, cgs, c), 0);
	assert_int_equal(c[0].backend, FS_BACKEND_SYSTEMD);
	fs_ubus_close(ub);
}

static void test_read_write(void **state)
{
	struct server *s = *state;
	struct fs_unit_bus *ub = open_bus(s, 1, "/sys/fs/cgroup");
	struct fake_unit *u = unit_by_name(s, "user-1001.slice");
	const char *cg = "user.slice/user-1001.slice";
	const struct fs_devnum none = {0, 0}, sda = {8, 0};
	char v[FS_CGF_VALUE_MAX];

	assert_int_equal(fs_ubus_read(ub, cg, FS_CGF_CPU_MAX, none, v, sizeof(v)), 0);
	assert_string_equal(v, "CPUQuotaPerSecUSec=infinity CPUQuotaPeriodUSec=infinity");
	assert_int_equal(fs_ubus_read(ub, cg, FS_CGF_CPU_WEIGHT, none, v, sizeof(v)), 0);
	assert_string_equal(v, "CPUWeight=unset");
	assert_int_equal(fs_ubus_read(ub, cg, FS_CGF_IO_MAX, sda, v, sizeof(v)), 0);
	assert_string_equal(v, "IOReadBandwidthMax=infinity IOWriteBandwidthMax=infinity "
			       "IOReadIOPSMax=infinity IOWriteIOPSMax=infinity");
	assert_int_equal(fs_ubus_read(ub, cg, FS_CGF_CPU_BURST, none, v, sizeof(v)), -EOPNOTSUPP);

	assert_int_equal(fs_ubus_write(ub, cg, FS_CGF_CPU_MAX, none,
				       "CPUQuotaPerSecUSec=330000 CPUQuotaPeriodUSec=100000"),
			 0);
	assert_true(u->runtime_seen);
	assert_int_equal(u->quota, 330000);
	assert_int_equal(u->period, 100000);
	assert_string_equal(s->last_set, "user-1001.slice CPUQuotaPerSecUSec=330000 "
					 "CPUQuotaPeriodUSec=100000");
	assert_int_equal(fs_ubus_write(ub, cg, FS_CGF_MEM_HIGH, none, "MemoryHigh=536870912"), 0);
	assert_int_equal(fs_ubus_read(ub, cg, FS_CGF_MEM_HIGH, none, v, sizeof(v)), 0);
	assert_string_equal(v, "MemoryHigh=536870912");
	/* weights back to systemd's "not set" */
	assert_int_equal(fs_ubus_write(ub, cg, FS_CGF_CPU_WEIGHT, none, "CPUWeight=300"), 0);
	assert_int_equal(fs_ubus_write(ub, cg, FS_CGF_CPU_WEIGHT, none, "CPUWeight=unset"), 0);
	assert_true(u->cpu_weight == UINT64_MAX);
	/* io.max: one a(st) entry per property, the disk's /dev/block path */
	assert_int_equal(fs_ubus_write(ub, cg, FS_CGF_IO_MAX, sda,
				       "IOReadBandwidthMax=4194304 IOWriteBandwidthMax=infinity "
				       "IOReadIOPSMax=infinity IOWriteIOPSMax=infinity"),
			 0);
	assert_string_equal(u->io_path, "/dev/block/8:0");
	assert_non_null(strstr(s->last_set, "IOWriteIOPSMax=/dev/block/8:0:18446744073709551615"));
	assert_int_equal(fs_ubus_read(ub, cg, FS_CGF_IO_MAX, sda, v, sizeof(v)), 0);
	assert_string_equal(v, "IOReadBandwidthMax=4194304 IOWriteBandwidthMax=infinity "
			       "IOReadIOPSMax=infinity IOWriteIOPSMax=infinity");
	/* another disk has no entry of its own */
	assert_int_equal(
	    fs_ubus_read(ub, cg, FS_CGF_IO_MAX, (struct fs_devnum){8, 16}, v, sizeof(v)), 0);
	assert_non_null(strstr(v, "IOReadBandwidthMax=infinity"));
	/* refused before the bus: not the encoding */
	assert_int_equal(fs_ubus_write(ub, cg, FS_CGF_MEM_HIGH, none, "max"), -EINVAL);
	assert_int_equal(fs_ubus_write(ub, "tenants/a", FS_CGF_MEM_HIGH, none, "MemoryHigh=1"),
			 -EINVAL);
	/* a unit that is gone */
	assert_int_equal(
	    fs_ubus_write(ub, "user.slice/user-1002.slice", FS_CGF_MEM_HIGH, none, "MemoryHigh=1"),
	    -ENOENT);
	assert_int_equal(s->n_set_calls, 5);
	/* ActiveState: stopped (inactive, failed, unknown) or not */
	assert_int_equal(fs_ubus_active(ub, cg), 1);
	u->active_state = "deactivating";
	assert_int_equal(fs_ubus_active(ub, cg), 1);
	u->active_state = "failed";
	assert_int_equal(fs_ubus_active(ub, cg), 0);
	u->active_state = "inactive";
	assert_int_equal(fs_ubus_active(ub, cg), 0);
	assert_int_equal(fs_ubus_active(ub, "user.slice/user-1002.slice"), 0);
	assert_int_equal(fs_ubus_active(ub, "tenants/a"), -EINVAL);
	fs_ubus_close(ub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_facts_and_choice, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_choices_remembered, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_write, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
