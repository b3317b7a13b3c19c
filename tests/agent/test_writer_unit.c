/* SPDX-License-Identifier: MIT */
/*
 * The writer's systemd backend on a fake cgroupfs tree and an in-memory
 * store of unit properties behind struct fs_unit_ops (what unit_bus.c does
 * with sd-bus; the real thing runs in the VM suite e2e-systemd): values go
 * to the unit's properties in model/unitprop.h's encoding and never into
 * the files, the originals are the properties ("unit" records in the state
 * file), a property changed by someone else is noticed (the cgroup file's
 * watch fires, as when systemd writes it) and set again, restore and
 * --release set the originals back through the ops, a recreated cgroup
 * keeps its originals, a vanished unit is dropped, FS_BACKEND_NONE is left
 * alone, memory.max keeps its floor in the unit encoding.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "cgroupfs.h"
#include "unitprop.h"
#include "writer.h"

#define N_PROPS 16

/* One stored property string, keyed by (cgroup, file, disk). */
struct prop {
	char cgroup[64];
	enum fs_cgfile file;
	struct fs_devnum dev;
	char value[FS_CGF_VALUE_MAX];
};

struct fake {
	char *dir;
	char root[512], state[512];
	struct prop props[N_PROPS];
	size_t n_props;
	int n_unit_writes, n_unit_reads, n_file_writes;
	char last_unit_write[FS_CGF_VALUE_MAX];
	bool unit_gone;	  /* every unit: NoSuchUnit */
	bool unit_active; /* ActiveState of every unit: active, else inactive */
	int n_active_calls;
	char last_log[1024];
};

/* systemd's defaults of a unit with nothing set */
static void default_value(enum fs_cgfile f, char *out, size_t len)
{
	uint64_t v[FS_UPROP_MAX] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};

	if (f == FS_CGF_MEM_LOW)
		v[0] = 0;
	assert_int_equal(fs_uprop_print(f, v, out, len), 0);
}

static struct prop *find(struct fake *fk, const char *cg, enum fs_cgfile f, struct fs_devnum d)
{
	for (size_t i = 0; i < fk->n_props; i++)
		if (!strcmp(fk->props[i].cgroup, cg) && fk->props[i].file == f &&
		    fk->props[i].dev.major == d.major && fk->props[i].dev.minor == d.minor)
			return &fk->props[i];
	assert_true(fk->n_props < N_PROPS);
	struct prop *p = &fk->props[fk->n_props++];
	snprintf(p->cgroup, sizeof(p->cgroup), "%s", cg);
	p->file = f;
	p->dev = d;
	default_value(f, p->value, sizeof(p->value));
	return p;
}

static int unit_read(void *ctx, const char *cg, enum fs_cgfile f, struct fs_devnum d, char *out,
		     size_t len)
{
	struct fake *fk = ctx;

	fk->n_unit_reads++;
	if (fk->unit_gone)
		return -ENOENT;
	if (fs_uprops[f].n == 0)
		return -EOPNOTSUPP;
	snprintf(out, len, "%s", find(fk, cg, f, d)->value);
	return 0;
}

/* As systemd: refuses what does not parse, then realizes the unit's
 * cgroup (creates it when missing, also for a stopped unit: a bare
 * directory here, which rmdir takes as a real empty cgroup) or writes the
 * cgroup file itself (which fires the writer's change watch). */
static void systemd_writes_file(struct fake *fk, const char *cg, enum fs_cgfile f)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s/memory.current", fk->root, cg);
	if (access(p, F_OK) < 0) { /* a bare directory stands for its files */
		at_mkdir(fk->root, cg);
		return;
	}
	snprintf(p, sizeof(p), "%s/%s", cg, fs_cgfiles[f].name);
	at_write(fk->root, p, "systemd\n");
}

static int unit_write(void *ctx, const char *cg, enum fs_cgfile f, struct fs_devnum d,
		      const char *value)
{
	struct fake *fk = ctx;
	uint64_t v[FS_UPROP_MAX];

	fk->n_unit_writes++;
	snprintf(fk->last_unit_write, sizeof(fk->last_unit_write), "%s", value);
	if (fk->unit_gone)
		return -ENOENT;
	if (fs_uprop_parse(f, value, v) < 0)
		return -EINVAL;
	snprintf(find(fk, cg, f, d)->value, FS_CGF_VALUE_MAX, "%s", value);
	systemd_writes_file(fk, cg, f);
	return 0;
}

static int unit_active(void *ctx, const char *cg)
{
	struct fake *fk = ctx;

	(void)cg;
	fk->n_active_calls++;
	return fk->unit_active ? 1 : 0;
}

static const struct fs_unit_ops ops = {unit_read, unit_write, unit_active};

static int count_file_write(void *ctx, int dirfd, const char *file, const char *value)
{
	struct fake *fk = ctx;

	fk->n_file_writes++;
	return fs_cgfs_write_at(dirfd, file, value);
}

static void capture_log(void *ctx, int prio, const char *msg)
{
	struct fake *fk = ctx;

	(void)prio;
	snprintf(fk->last_log, sizeof(fk->last_log), "%s", msg);
}

static void make_cgroup(struct fake *fk, const char *cg)
{
	static const char *const files[][2] = {
	    {"cpu.max", "max 100000\n"},     {"cpu.max.burst", "0\n"},
	    {"cpu.weight", "100\n"},	     {"memory.high", "max\n"},
	    {"memory.max", "max\n"},	     {"memory.low", "0\n"},
	    {"memory.current", "1048576\n"}, {"io.max", ""},
	    {"io.weight", "default 100\n"},
	};
	char p[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", cg, files[i][0]);
		at_write(fk->root, p, files[i][1]);
	}
}

static const char *const tenants[] = {"user.slice/user-1001.slice", "work.slice"};
enum { U, W };

static int setup(void **state)
{
	struct fake *fk = calloc(1, sizeof(*fk));

	fk->dir = at_mkdtemp();
	snprintf(fk->root, sizeof(fk->root), "%s/cg", fk->dir);
	snprintf(fk->state, sizeof(fk->state), "%s/run", fk->dir);
	at_mkdir(fk->dir, "cg");
	make_cgroup(fk, tenants[U]);
	make_cgroup(fk, tenants[W]);
	*state = fk;
	return 0;
}

static int teardown(void **state)
{
	struct fake *fk = *state;

	at_rmtree(fk->dir);
	free(fk->dir);
	free(fk);
	return 0;
}

static struct fs_writer *open_writer(struct fake *fk, const struct fs_unit_ops *o)
{
	struct fs_writer_opts wo = {
	    .cgroup_root = fk->root,
	    .state_dir = fk->state,
	    .n_tenants = 2,
	    .cgroups = tenants,
	    .log = capture_log,
	    .log_ctx = fk,
	    .write_fn = count_file_write,
	    .write_ctx = fk,
	    .unit_ops = o,
	    .unit_ctx = fk,
	};
	struct fs_writer *w;

	assert_int_equal(fs_writer_open(&w, &wo), 0);
	if (o)
		assert_int_equal(fs_writer_set_backend(w, U, FS_BACKEND_SYSTEMD), 0);
	return w;
}

static struct fs_limits limits(void)
{
	struct fs_limits l = {
	    .set = FS_LIM_CPU_MAX | FS_LIM_CPU_BURST | FS_LIM_CPU_WEIGHT | FS_LIM_MEM_HIGH |
		   FS_LIM_MEM_MAX | FS_LIM_IO_MAX,
	    .cpu_quota_us = 33333,
	    .cpu_period_us = 100000,
	    .cpu_burst_us = 2000,
	    .cpu_weight = 300,
	    .mem_high = 512ull << 20,
	    .mem_max = 1ull << 30,
	    .n_io = 1,
	    .io = {{{8, 0}, 4194304, FS_VALUE_MAX, FS_VALUE_MAX, FS_VALUE_MAX}},
	};
	return l;
}

static const char *prop(struct fake *fk, enum fs_cgfile f, struct fs_devnum d)
{
	return find(fk, tenants[U], f, d)->value;
}

static const struct fs_devnum nodev = {0, 0}, sda = {8, 0};

static void test_apply_through_systemd(void **state)
{
	struct fake *fk = *state;
	struct fs_writer *w = open_writer(fk, &ops);
	struct fs_limits l = limits();
	struct fs_apply_result res;
	const char *st;

	assert_int_equal(fs_writer_apply(w, U, &l, 1000, &res), 0);
	/* cpu.max, cpu.weight, memory.high, memory.max, io.max; no burst property */
	assert_int_equal(res.written, 5);
	assert_int_equal(fk->n_unit_writes, 5);
	assert_int_equal(fk->n_file_writes, 0); /* never the files of a systemd tenant */
	assert_string_equal(prop(fk, FS_CGF_CPU_MAX, nodev),
			    "CPUQuotaPerSecUSec=330000 CPUQuotaPeriodUSec=100000");
	assert_string_equal(prop(fk, FS_CGF_CPU_WEIGHT, nodev), "CPUWeight=300");
	assert_string_equal(prop(fk, FS_CGF_MEM_HIGH, nodev), "MemoryHigh=536870912");
	assert_string_equal(prop(fk, FS_CGF_IO_MAX, sda),
			    "IOReadBandwidthMax=4194304 IOWriteBandwidthMax=infinity "
			    "IOReadIOPSMax=infinity IOWriteIOPSMax=infinity");
	assert_string_equal(at_read(fk->root, "user.slice/user-1001.slice/cpu.max.burst"), "0\n");
	/* the originals are the unit's properties, saved before the first set */
	st = at_read(fk->state, "writer.state");
	assert_non_null(strstr(st, "unit user.slice/user-1001.slice cpu.max "
				   "CPUQuotaPerSecUSec=infinity%20CPUQuotaPeriodUSec=infinity\n"));
	assert_non_null(strstr(st, "unit user.slice/user-1001.slice cpu.weight CPUWeight=unset\n"));
	assert_null(strstr(st, "orig "));
	/* steady: nothing read, nothing set (the events of systemd's own
	 * writes are read once, then compare equal) */
	assert_int_equal(fs_writer_apply(w, U, &l, 2000, &res), 0);
	fk->n_unit_writes = fk->n_unit_reads = 0;
	assert_int_equal(fs_writer_apply(w, U, &l, 3000, &res), 0);
	assert_int_equal(res.unchanged, 5);
	assert_int_equal(res.drifted, 0);
	assert_int_equal(fk->n_unit_writes + fk->n_unit_reads, 0);
	/* a cgroupfs tenant beside it is written as before */
	assert_int_equal(fs_writer_apply(w, W, &l, 3000, &res), 0);
	assert_int_equal(fk->n_file_writes, 6);
	assert_string_equal(at_read(fk->root, "work.slice/cpu.max"), "33333 100000");
	fs_writer_close(w);
}

/* `systemctl set-property` by hand: the property changes and systemd
 * writes the file; the watch fires, the property is read, ours set again. */
static void test_drift(void **state)
{
	struct fake *fk = *state;
	struct fs_writer *w = open_writer(fk, &ops);
	struct fs_limits l = limits();
	struct fs_apply_result res;

	assert_int_equal(fs_writer_apply(w, U, &l, 1000, &res), 0);
	assert_int_equal(fs_writer_apply(w, U, &l, 2000, &res), 0);
	snprintf(find(fk, tenants[U], FS_CGF_MEM_HIGH, nodev)->value, FS_CGF_VALUE_MAX,
		 "MemoryHigh=infinity");
	systemd_writes_file(fk, tenants[U], FS_CGF_MEM_HIGH);
	fk->n_unit_writes = 0;
	assert_int_equal(fs_writer_apply(w, U, &l, 3000, &res), 0);
	assert_int_equal(res.drifted, 1);
	assert_int_equal(fk->n_unit_writes, 1);
	assert_string_equal(prop(fk, FS_CGF_MEM_HIGH, nodev), "MemoryHigh=536870912");
	assert_non_null(strstr(fk->last_log, "MemoryHigh=infinity"));
	assert_int_equal(fs_writer_drift_count(w, U), 1);
	/* a daemon-reload rewrites the file with the same properties: no drift */
	systemd_writes_file(fk, tenants[U], FS_CGF_CPU_MAX);
	assert_int_equal(fs_writer_apply(w, U, &l, 4000, &res), 0);
	assert_int_equal(res.drifted, 0);
	assert_int_equal(fs_writer_drift_count(w, U), 1);
	/* the periodic recheck (60 s) reads no property: only fired watches
	 * cost D-Bus calls */
	fk->n_unit_reads = 0;
	assert_int_equal(fs_writer_apply(w, U, &l, 4000 + 61000000ull, &res), 0);
	assert_int_equal(fk->n_unit_reads, 0);
	assert_int_equal(res.unchanged, 5);
	fs_writer_close(w);
}

static void test_restore_and_release(void **state)
{
	struct fake *fk = *state;
	struct fs_writer *w = open_writer(fk, &ops);
	struct fs_limits l = limits();
	struct fs_writer_file files[FS_CGF_SLOTS];
	char def[FS_CGF_VALUE_MAX];
	int n;

	assert_int_equal(fs_writer_apply(w, U, &l, 1000, NULL), 0);
	/* explain: the unit's properties, written and in force */
	n = fs_writer_files(w, U, files, FS_CGF_SLOTS);
	assert_int_equal(n, 5);
	assert_true(files[0].unit);
	assert_string_equal(files[0].written, files[0].in_force);
	assert_int_equal(fs_writer_restore(w), 0);
	default_value(FS_CGF_CPU_MAX, def, sizeof(def));
	assert_string_equal(prop(fk, FS_CGF_CPU_MAX, nodev), def);
	assert_string_equal(prop(fk, FS_CGF_CPU_WEIGHT, nodev), "CPUWeight=unset");
	assert_string_equal(prop(fk, FS_CGF_MEM_MAX, nodev), "MemoryMax=infinity");
	assert_null(at_read(fk->state, "writer.state")); /* nothing left to restore */
	assert_int_equal(fs_writer_saved_count(w), 0);
	fs_writer_close(w);

	/* a crash (no restore), then ExecStopPost's --release */
	w = open_writer(fk, &ops);
	assert_int_equal(fs_writer_apply(w, U, &l, 1000, NULL), 0);
	fs_writer_close(w);
	assert_string_equal(prop(fk, FS_CGF_CPU_WEIGHT, nodev), "CPUWeight=300");
	/* without the bus the unit's originals cannot go back: kept */
	assert_true(fs_release(fk->state, fk->root, capture_log, fk, NULL, NULL) < 0);
	assert_non_null(strstr(at_read(fk->state, "writer.state"), "unit "));
	assert_int_equal(fs_release(fk->state, fk->root, capture_log, fk, &ops, fk), 0);
	assert_string_equal(prop(fk, FS_CGF_CPU_WEIGHT, nodev), "CPUWeight=unset");
	assert_string_equal(prop(fk, FS_CGF_IO_MAX, sda),
			    "IOReadBandwidthMax=infinity IOWriteBandwidthMax=infinity "
			    "IOReadIOPSMax=infinity IOWriteIOPSMax=infinity");
	assert_null(at_read(fk->state, "writer.state"));
}

/* A new directory (another inode: made before the old one goes) under the
 * same name. */
static void recreate(struct fake *fk, const char *path)
{
	char tmp[600];

	make_cgroup(fk, "user.slice/new");
	snprintf(tmp, sizeof(tmp), "%s/cg/user.slice/new", fk->dir);
	at_rmtree(path);
	assert_int_equal(rename(tmp, path), 0);
}

/* A restarted unit gets a new cgroup, but our runtime properties stay with
 * the unit: the saved originals must not be replaced by our own values. A
 * stopped unit (cgroup gone) is still restored, and the cgroup systemd
 * makes when its properties are set is removed again while the unit is
 * stopped (kept when it runs); a unit that is gone is dropped. */
static void test_recreated_and_gone(void **state)
{
	struct fake *fk = *state;
	struct fs_writer *w = open_writer(fk, &ops);
	struct fs_limits l = limits();
	char p[512];

	assert_int_equal(fs_writer_apply(w, U, &l, 1000, NULL), 0);
	snprintf(p, sizeof(p), "%s/%s", fk->dir, "cg/user.slice/user-1001.slice");
	recreate(fk, p);
	fs_writer_recheck(w, U);
	assert_int_equal(fs_writer_apply(w, U, &l, 2000, NULL), 0);
	assert_non_null(strstr(at_read(fk->state, "writer.state"), "CPUWeight=unset"));
	/* stopped: no cgroup, the unit is still there */
	at_rmtree(p);
	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(prop(fk, FS_CGF_CPU_WEIGHT, nodev), "CPUWeight=unset");
	assert_int_equal(fs_writer_saved_count(w), 0);
	assert_int_equal(fk->n_active_calls, 1);
	assert_int_equal(access(p, F_OK), -1); /* the realized cgroup removed */
	assert_int_equal(errno, ENOENT);
	/* the same while the unit runs again (a login meanwhile): kept */
	make_cgroup(fk, tenants[U]);
	fs_writer_recheck(w, U);
	assert_int_equal(fs_writer_apply(w, U, &l, 2500, NULL), 0);
	at_rmtree(p);
	fk->unit_active = true;
	assert_int_equal(fs_writer_restore(w), 0);
	assert_int_equal(fs_writer_saved_count(w), 0);
	assert_int_equal(access(p, F_OK), 0);
	fk->unit_active = false;
	/* an active unit's own cgroup (not gone) is not asked about */
	make_cgroup(fk, tenants[U]);
	fs_writer_recheck(w, U);
	assert_int_equal(fs_writer_apply(w, U, &l, 2700, NULL), 0);
	fk->n_active_calls = 0;
	assert_int_equal(fs_writer_restore(w), 0);
	assert_int_equal(fk->n_active_calls, 0);
	assert_int_equal(access(p, F_OK), 0);
	/* gone altogether */
	make_cgroup(fk, tenants[U]);
	fs_writer_recheck(w, U);
	assert_int_equal(fs_writer_apply(w, U, &l, 3000, NULL), 0);
	assert_true(fs_writer_saved_count(w) > 0);
	fk->unit_gone = true;
	assert_int_equal(fs_writer_restore(w), 0);
	assert_int_equal(fs_writer_saved_count(w), 0);
	assert_non_null(strstr(fk->last_log, "vanished"));
	fs_writer_close(w);
}

static void test_backend_switches(void **state)
{
	struct fake *fk = *state;
	struct fs_writer *w = open_writer(fk, NULL);
	struct fs_limits l = limits();
	struct fs_apply_result res;

	/* no ops: systemd cannot be chosen */
	assert_int_equal(fs_writer_set_backend(w, U, FS_BACKEND_SYSTEMD), -EOPNOTSUPP);
	assert_int_equal(fs_writer_set_backend(w, 7, FS_BACKEND_CGROUPFS), -EPERM);
	/* none: left alone */
	assert_int_equal(fs_writer_set_backend(w, U, FS_BACKEND_NONE), 0);
	assert_int_equal(fs_writer_apply(w, U, &l, 1000, &res), 0);
	assert_int_equal(res.written + res.unchanged, 0);
	assert_int_equal(fk->n_file_writes, 0);
	assert_int_equal(fs_writer_saved_count(w), 0);
	fs_writer_close(w);
}

/* memory.max never below usage + margin, in the unit's encoding too. */
static void test_memory_floor(void **state)
{
	struct fake *fk = *state;
	struct fs_writer *w = open_writer(fk, &ops);
	struct fs_limits l = limits();
	struct fs_apply_result res;

	l.set = FS_LIM_MEM_MAX;
	l.mem_max = 4096; /* memory.current is 1 MiB, margin 16 MiB */
	assert_int_equal(fs_writer_apply(w, U, &l, 1000, &res), 0);
	assert_int_equal(res.clamped, 1);
	assert_string_equal(prop(fk, FS_CGF_MEM_MAX, nodev), "MemoryMax=17825792");
	fs_writer_close(w);
}

/* A state file with "unit" records loads, and a malformed one is skipped. */
static void test_state_records(void **state)
{
	struct fake *fk = *state;
	struct fs_writer *w;
	char text[1024];

	at_mkdir(fk->dir, "run");
	snprintf(text, sizeof(text),
		 "fairshare-writer-state 1\n"
		 "unit user.slice/user-1001.slice memory.high MemoryHigh=infinity\n"
		 "unit user.slice/user-1001.slice memory.max 123\n" /* not properties */
		 "unit tenants/a memory.max MemoryMax=1\n"	    /* not a unit */
		 "orig work.slice cpu.weight 100\n");
	at_write(fk->state, "writer.state", text);
	w = open_writer(fk, &ops);
	assert_int_equal(fs_writer_saved_count(w), 2);
	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(prop(fk, FS_CGF_MEM_HIGH, nodev), "MemoryHigh=infinity");
	assert_int_equal(fk->n_unit_writes, 1);
	fs_writer_close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_apply_through_systemd, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_drift, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_restore_and_release, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_recreated_and_gone, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_backend_switches, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_memory_floor, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_state_records, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
