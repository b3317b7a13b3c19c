/* SPDX-License-Identifier: MIT */
/*
 * The cgroup writer on a fake cgroupfs tree: saved originals (also across a
 * writer restart and for --release without a config), restore, changed-only
 * writes, write order, vanished cgroups, EINVAL back-off (through an
 * injected low-level write, since a regular file never returns EINVAL),
 * memory.max clamping, path confinement.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "cgroupfs.h"
#include "writer.h"

#define MAX_CALLS 64

struct fake {
	char *dir;	/* mkdtemp */
	char root[512]; /* dir/cg: the fake cgroup root */
	char state[512];
	/* injected write */
	char calls[MAX_CALLS][160]; /* "file=value" in call order */
	int n_calls;
	const char *fail_file; /* this file fails with fail_errno */
	int fail_errno;
	/* captured log */
	int n_log, n_log_warn;
	char last_log[1024];
};

static int inject_write(void *ctx, int dirfd, const char *file, const char *value)
{
	struct fake *f = ctx;

	if (f->n_calls < MAX_CALLS)
		snprintf(f->calls[f->n_calls++], sizeof(f->calls[0]), "%s=%s", file, value);
	if (f->fail_file && strcmp(file, f->fail_file) == 0)
		return -f->fail_errno;
	return fs_cgfs_write_at(dirfd, file, value);
}

static void capture_log(void *ctx, int prio, const char *msg)
{
	struct fake *f = ctx;

	f->n_log++;
	if (prio <= LOG_WARNING)
		f->n_log_warn++;
	snprintf(f->last_log, sizeof(f->last_log), "%s", msg);
}

static void make_cgroup(struct fake *f, const char *cg)
{
	char p[256];
	static const char *const files[][2] = {
	    {"cpu.max", "max 100000\n"},
	    {"cpu.max.burst", "0\n"},
	    {"cpu.weight", "100\n"},
	    {"memory.high", "max\n"},
	    {"memory.max", "max\n"},
	    {"memory.current", "1048576\n"},
	    {"io.max", ""},
	    {"io.weight", "default 100\n"},
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", cg, files[i][0]);
		at_write(f->root, p, files[i][1]);
	}
}

static const char *cg_read(struct fake *f, const char *cg, const char *file)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", cg, file);
	return at_read(f->root, p);
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->dir = at_mkdtemp();
	snprintf(f->root, sizeof(f->root), "%s/cg", f->dir);
	snprintf(f->state, sizeof(f->state), "%s/run", f->dir);
	at_mkdir(f->dir, "cg");
	make_cgroup(f, "a.slice");
	make_cgroup(f, "b.slice/inner");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	at_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static const char *const tenants[] = {"a.slice", "b.slice/inner"};

static struct fs_writer_opts writer_opts(struct fake *f)
{
	return (struct fs_writer_opts){
	    .cgroup_root = f->root,
	    .state_dir = f->state,
	    .n_tenants = 2,
	    .cgroups = tenants,
	    .log = capture_log,
	    .log_ctx = f,
	    .write_fn = inject_write,
	    .write_ctx = f,
	    .mem_margin = 1 << 20,
	    .einval_limit = 3,
	    .reprobe_us = 10000000,
	    .log_interval_us = 5000000,
	};
}

static struct fs_writer *open_writer(struct fake *f)
{
	struct fs_writer_opts o = writer_opts(f);
	struct fs_writer *w;

	assert_int_equal(fs_writer_open(&w, &o), 0);
	return w;
}

static struct fs_limits some_limits(void)
{
	struct fs_limits l = {
	    .set = FS_LIM_CPU_MAX | FS_LIM_MEM_HIGH | FS_LIM_MEM_MAX | FS_LIM_IO_MAX |
		   FS_LIM_CPU_WEIGHT | FS_LIM_IO_WEIGHT,
	    .cpu_quota_us = 50000,
	    .cpu_period_us = 100000,
	    .cpu_weight = 200,
	    .mem_high = 64 << 20,
	    .mem_max = 128 << 20,
	    .n_io = 1,
	    .io = {{.dev = {254, 0},
		    .rbps = 4194304,
		    .wbps = 2097152,
		    .riops = FS_LIMIT_MAX,
		    .wiops = FS_LIMIT_MAX}},
	    .io_weight = 50,
	};
	return l;
}

static void test_apply_and_restore(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_apply_result res;
	struct fs_writer *w = open_writer(f);

	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, &res), 0);
	assert_int_equal(res.written, 6);
	assert_int_equal(res.failed, 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	assert_string_equal(cg_read(f, "a.slice", "memory.high"), "67108864");
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "134217728");
	assert_string_equal(cg_read(f, "a.slice", "io.max"),
			    "254:0 rbps=4194304 wbps=2097152 riops=max wiops=max");
	assert_string_equal(cg_read(f, "a.slice", "io.weight"), "default 50");
	assert_int_equal(fs_writer_saved_count(w), 6);
	/* The originals are on disk before anything was written. */
	assert_non_null(at_read(f->state, FS_WRITER_STATE_FILE));
	assert_non_null(
	    strstr(at_read(f->state, FS_WRITER_STATE_FILE), "orig a.slice cpu.max max%20100000"));

	/* Same limits again: nothing is written. */
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 2, &res), 0);
	assert_int_equal(res.written, 0);
	assert_int_equal(res.unchanged, 6);
	assert_int_equal(f->n_calls, 0);
	/* One change: one write. */
	l.cpu_quota_us = 70000;
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 3, &res), 0);
	assert_int_equal(res.written, 1);
	assert_int_equal(f->n_calls, 1);
	assert_string_equal(f->calls[0], "cpu.max=70000 100000");

	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "a.slice", "memory.high"), "max");
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "max");
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "100");
	assert_string_equal(cg_read(f, "a.slice", "io.weight"), "default 100");
	/* No io.max line before: restored as unlimited. */
	assert_string_equal(cg_read(f, "a.slice", "io.max"),
			    "254:0 rbps=max wbps=max riops=max wiops=max");
	assert_int_equal(fs_writer_saved_count(w), 0);
	assert_null(at_read(f->state, FS_WRITER_STATE_FILE));
	fs_writer_close(w);
}

static void test_originals_survive_restart(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_writer *w = open_writer(f);

	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, NULL), 0);
	fs_writer_close(w); /* a crash: no restore */

	/* The next run finds our own values in the files; it must keep the
	 * originals of the first run. */
	w = open_writer(f);
	assert_int_equal(fs_writer_saved_count(w), 6);
	l.cpu_quota_us = 20000;
	l.mem_max = 96 << 20;
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, NULL), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "20000 100000");
	assert_int_equal(fs_writer_saved_count(w), 6);
	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "max");
	fs_writer_close(w);
}

/* One writer per state directory: a second open fails with -EBUSY and
 * changes nothing; after the first closes (or its process dies) it opens. */
static void test_one_writer_per_state_dir(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_writer *w = open_writer(f), *w2 = NULL;
	struct fs_writer_opts o = writer_opts(f);

	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, NULL), 0);
	assert_int_equal(fs_writer_open(&w2, &o), -EBUSY);
	assert_null(w2);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	fs_writer_close(w);
	w2 = open_writer(f);
	assert_int_equal(fs_writer_saved_count(w2), 6);
	fs_writer_close(w2);
}

static void test_release_without_config(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_writer *w = open_writer(f);

	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, NULL), 0);
	assert_int_equal(fs_writer_apply(w, "b.slice/inner", &l, 1, NULL), 0);
	fs_writer_close(w);

	assert_int_equal(fs_release(f->state, f->root, capture_log, f), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "b.slice/inner", "memory.high"), "max");
	assert_null(at_read(f->state, FS_WRITER_STATE_FILE));
	assert_non_null(strstr(f->last_log, "restored 12 of 12"));
	/* Nothing to do is success too. */
	assert_int_equal(fs_release(f->state, f->root, NULL, NULL), 0);
}

static void test_release_ignores_foreign_records(void **state)
{
	struct fake *f = *state;

	/* A state file naming a file the writer never manages (cgroup.procs)
	 * or escaping the root must not lead to a write. */
	at_write(f->dir, "cg/a.slice/cgroup.procs", "1\n");
	at_write(f->state, FS_WRITER_STATE_FILE,
		 "fairshare-writer-state 1\n"
		 "orig a.slice cgroup.procs 4242\n"
		 "orig ../etc cpu.max max%20100000\n"
		 "orig a.slice memory.high 12345\n");
	assert_int_equal(fs_release(f->state, f->root, capture_log, f), 0);
	assert_string_equal(cg_read(f, "a.slice", "cgroup.procs"), "1\n");
	assert_string_equal(cg_read(f, "a.slice", "memory.high"), "12345");
}

static int index_of(struct fake *f, const char *prefix)
{
	for (int i = 0; i < f->n_calls; i++)
		if (strncmp(f->calls[i], prefix, strlen(prefix)) == 0)
			return i;
	return -1;
}

static void test_write_order(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = {.set = FS_LIM_MEM_HIGH | FS_LIM_MEM_MAX | FS_LIM_CPU_MAX |
				     FS_LIM_CPU_BURST,
			      .cpu_quota_us = 50000,
			      .cpu_burst_us = 40000,
			      .mem_high = 200 << 20,
			      .mem_max = 300 << 20};
	struct fs_writer *w = open_writer(f);

	/* From max to limits: memory.max goes down, so high first; burst goes
	 * up (0 -> 40000), so after cpu.max. */
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, NULL), 0);
	assert_true(index_of(f, "memory.high=") < index_of(f, "memory.max="));
	assert_true(index_of(f, "cpu.max=") < index_of(f, "cpu.max.burst="));

	/* Raising memory.max: max first. Lowering the burst: burst first. */
	l.mem_high = 400 << 20;
	l.mem_max = 500 << 20;
	l.cpu_burst_us = 10000;
	l.cpu_quota_us = 20000;
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 2, NULL), 0);
	assert_int_equal(f->n_calls, 4);
	assert_true(index_of(f, "memory.max=") < index_of(f, "memory.high="));
	assert_true(index_of(f, "cpu.max.burst=") < index_of(f, "cpu.max="));

	/* Restore: memory.max goes back up to "max", so it is written first;
	 * the burst goes 10000 -> 0, so burst first. */
	f->n_calls = 0;
	assert_int_equal(fs_writer_restore(w), 0);
	assert_true(index_of(f, "memory.max=max") < index_of(f, "memory.high=max"));
	assert_true(index_of(f, "cpu.max.burst=0") < index_of(f, "cpu.max=max"));
	fs_writer_close(w);
}

static void test_vanished_cgroup(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_apply_result res;
	struct fs_writer *w = open_writer(f);
	char path[600];

	assert_int_equal(fs_writer_apply(w, "b.slice/inner", &l, 1, &res), 0);
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, &res), 0);
	snprintf(path, sizeof(path), "%s/b.slice", f->root);
	at_rmtree(path);
	l.cpu_quota_us = 1000;
	assert_int_equal(fs_writer_apply(w, "b.slice/inner", &l, 2, &res), 0);
	assert_true(res.gone);
	assert_int_equal(res.written, 0);
	/* Restore drops the vanished cgroup's entries and restores the rest. */
	assert_int_equal(fs_writer_restore(w), 0);
	assert_int_equal(fs_writer_saved_count(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	fs_writer_close(w);
}

static void test_einval_backoff(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = {
	    .set = FS_LIM_CPU_MAX | FS_LIM_CPU_WEIGHT, .cpu_quota_us = 50000, .cpu_weight = 300};
	struct fs_apply_result res;
	struct fs_writer *w = open_writer(f);
	uint64_t t = 1000000;

	f->fail_file = "cpu.max";
	f->fail_errno = EINVAL;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fs_writer_apply(w, "a.slice", &l, t, &res), -EIO);
		assert_int_equal(res.failed, 1);
		t += 1000000;
	}
	/* One line for the first failure, one when it is marked unsupported. */
	assert_int_equal(f->n_log_warn, 2);
	assert_non_null(strstr(f->last_log, "cpu.max"));
	assert_non_null(strstr(f->last_log, "EINVAL"));
	/* In back-off: not even tried. */
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, t, &res), 0);
	assert_int_equal(res.unsupported, 1);
	assert_int_equal(f->n_calls, 0);
	/* After reprobe_us (10 s) it is probed again, and now it works. */
	f->fail_file = NULL;
	t += 10000000;
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, t, &res), 0);
	assert_int_equal(res.written, 1);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "300");
	fs_writer_close(w);
}

static void test_error_log_rate_limited(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = {.set = FS_LIM_CPU_WEIGHT, .cpu_weight = 300};
	struct fs_writer *w = open_writer(f);

	f->fail_file = "cpu.weight";
	f->fail_errno = EBUSY;
	for (uint64_t t = 0; t < 10; t++)
		assert_int_equal(fs_writer_apply(w, "a.slice", &l, t * 1000000, NULL), -EIO);
	/* Tried every period, logged at 0 s and 5 s (log_interval 5 s). */
	assert_int_equal(f->n_calls, 10);
	assert_int_equal(f->n_log_warn, 2);
	assert_non_null(strstr(f->last_log, "a.slice/cpu.weight"));
	assert_non_null(strstr(f->last_log, "errno 16"));
	fs_writer_close(w);
}

static void test_memory_max_clamped(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = {.set = FS_LIM_MEM_MAX, .mem_max = 1 << 20};
	struct fs_apply_result res;
	struct fs_writer *w = open_writer(f);

	at_write(f->root, "a.slice/memory.current", "10485760\n");
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, &res), 0);
	assert_int_equal(res.clamped, 1);
	/* usage 10 MiB + margin 1 MiB */
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "11534336");
	assert_int_equal(f->n_log, 1);
	/* Usage shrinks: the limit steps down with it; the line is not repeated. */
	at_write(f->root, "a.slice/memory.current", "8388608\n");
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 2, &res), 0);
	assert_int_equal(res.clamped, 1);
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "9437184");
	assert_int_equal(f->n_log, 1);
	/* Usage above the current limit (racing): the clamp never raises it. */
	at_write(f->root, "a.slice/memory.current", "12582912\n");
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 3, &res), 0);
	assert_int_equal(res.unchanged, 1);
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "9437184");
	/* A request above usage + margin is written as asked. */
	l.mem_max = 64 << 20;
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 4, &res), 0);
	assert_int_equal(res.clamped, 0);
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "67108864");
	fs_writer_close(w);
}

static void test_missing_file(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = {
	    .set = FS_LIM_CPU_BURST | FS_LIM_CPU_WEIGHT, .cpu_burst_us = 1000, .cpu_weight = 300};
	struct fs_apply_result res;
	struct fs_writer *w = open_writer(f);
	char path[600];

	/* cpu.max.burst does not exist before Linux 5.14. */
	snprintf(path, sizeof(path), "%s/a.slice/cpu.max.burst", f->root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 1, &res), 0);
	assert_int_equal(res.unsupported, 1);
	assert_int_equal(res.written, 1);
	assert_false(res.gone);
	assert_null(at_read(f->root, "a.slice/cpu.max.burst")); /* never created */
	assert_int_equal(fs_writer_saved_count(w), 1);
	assert_int_equal(f->n_log_warn, 1);
	assert_int_equal(fs_writer_apply(w, "a.slice", &l, 2, &res), 0);
	assert_int_equal(f->n_log_warn, 1); /* rate-limited */
	fs_writer_close(w);
}

static void test_confinement(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_writer *w = open_writer(f);
	char target[600];

	assert_int_equal(fs_writer_apply(w, "b.slice", &l, 1, NULL), -EPERM);
	assert_int_equal(fs_writer_apply(w, "a.slice/../b.slice", &l, 1, NULL), -EINVAL);
	assert_int_equal(fs_writer_apply(w, "/a.slice", &l, 1, NULL), -EINVAL);
	fs_writer_close(w);

	/* An allowed name that is a symlink to a directory outside the root. */
	make_cgroup(f, "../outside");
	snprintf(target, sizeof(target), "%s/outside", f->dir);
	at_rmtree(f->root);
	at_mkdir(f->dir, "cg");
	at_symlink(f->root, "a.slice", target);
	w = open_writer(f);
	assert_true(fs_writer_apply(w, "a.slice", &l, 1, NULL) < 0);
	assert_string_equal(at_read(target, "cpu.max"), "max 100000\n");
	fs_writer_close(w);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_apply_and_restore),
	    T(test_originals_survive_restart),
	    T(test_one_writer_per_state_dir),
	    T(test_release_without_config),
	    T(test_release_ignores_foreign_records),
	    T(test_write_order),
	    T(test_vanished_cgroup),
	    T(test_einval_backoff),
	    T(test_error_log_rate_limited),
	    T(test_memory_max_clamped),
	    T(test_missing_file),
	    T(test_confinement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
