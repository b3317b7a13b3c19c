/* SPDX-License-Identifier: MIT */
/*
 * The cgroup writer on a fake cgroupfs tree: saved originals (also across a
 * writer restart and for --release without a config), restore, changed-only
 * writes, write order, vanished cgroups, EINVAL back-off (through an
 * injected low-level write, since a regular file never returns EINVAL),
 * memory.max clamping, path confinement; the batch apply at 2,000 tenants
 * (one state save per round, nothing at all in the steady state, seen through
 * inotify), a state file of a crashed run, recreated cgroups.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "cgroupfs.h"
#include "list_match.h"
#include "writer.h"

#define MAX_CALLS 64

struct fake {
	char *dir;	/* mkdtemp */
	char root[512]; /* dir/cg: the fake cgroup root */
	char state[512];
	/* injected write */
	char calls[MAX_CALLS][160]; /* "file=value" in call order */
	int n_calls;
	long n_writes;	       /* every call, beyond MAX_CALLS too */
	bool count_only;       /* count the writes, do not write (a slow disk) */
	char last[160];	       /* the last call, "file=value" */
	const char *fail_file; /* this file fails with fail_errno */
	/* someone else writes this right after our write of it (same file) */
	const char *race_file, *race_value;
	int fail_errno;
	/* captured log */
	int n_log, n_log_warn;
	char last_log[1024];
};

static int inject_write(void *ctx, int dirfd, const char *file, const char *value)
{
	struct fake *f = ctx;

	f->n_writes++;
	snprintf(f->last, sizeof(f->last), "%s=%s", file, value);
	if (f->count_only)
		return 0;
	if (f->n_calls < MAX_CALLS)
		snprintf(f->calls[f->n_calls++], sizeof(f->calls[0]), "%s=%s", file, value);
	if (f->fail_file && strcmp(file, f->fail_file) == 0)
		return -f->fail_errno;
	if (f->race_file && strcmp(file, f->race_file) == 0) {
		int r = fs_cgfs_write_at(dirfd, file, value);

		return r < 0 ? r : fs_cgfs_write_at(dirfd, file, f->race_value);
	}
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
	    {"cpu.max", "max 100000\n"},     {"cpu.max.burst", "0\n"},
	    {"cpu.weight", "100\n"},	     {"memory.high", "max\n"},
	    {"memory.max", "max\n"},	     {"memory.low", "0\n"},
	    {"memory.current", "1048576\n"}, {"io.max", ""},
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

/* setup() in /dev/shm when it is writable: a fixture of thousands of
 * cgroups took 30 s of ext4 inode allocation in /tmp, 1 s on tmpfs (which
 * is what cgroupfs is like). */
static int setup_shm(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char *saved = tmp ? strdup(tmp) : NULL;
	int r;

	if (access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 1);
	r = setup(state);
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	return r;
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
enum { A, B }; /* their indexes */

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
	    .set = FS_LIM_CPU_MAX | FS_LIM_MEM_HIGH | FS_LIM_MEM_MAX | FS_LIM_MEM_LOW |
		   FS_LIM_IO_MAX | FS_LIM_CPU_WEIGHT | FS_LIM_IO_WEIGHT,
	    .cpu_quota_us = 50000,
	    .cpu_period_us = 100000,
	    .cpu_weight = 200,
	    .mem_high = 64 << 20,
	    .mem_max = 128 << 20,
	    .mem_low = 32 << 20,
	    .n_io = 1,
	    .io = {{.dev = {254, 0},
		    .rbps = 4194304,
		    .wbps = 2097152,
		    .riops = FS_VALUE_MAX,
		    .wiops = FS_VALUE_MAX}},
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

	assert_int_equal(fs_writer_apply(w, A, &l, 1, &res), 0);
	assert_int_equal(res.written, 7);
	assert_int_equal(res.failed, 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	assert_string_equal(cg_read(f, "a.slice", "memory.high"), "67108864");
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "134217728");
	assert_string_equal(cg_read(f, "a.slice", "memory.low"), "33554432");
	assert_string_equal(cg_read(f, "a.slice", "io.max"),
			    "254:0 rbps=4194304 wbps=2097152 riops=max wiops=max");
	assert_string_equal(cg_read(f, "a.slice", "io.weight"), "default 50");
	assert_int_equal(fs_writer_saved_count(w), 7);
	/* The originals are on disk before anything was written. */
	assert_non_null(at_read(f->state, FS_WRITER_STATE_FILE));
	assert_non_null(
	    strstr(at_read(f->state, FS_WRITER_STATE_FILE), "orig a.slice cpu.max max%20100000"));

	/* Same limits again: nothing is written. */
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply(w, A, &l, 2, &res), 0);
	assert_int_equal(res.written, 0);
	assert_int_equal(res.unchanged, 7);
	assert_int_equal(f->n_calls, 0);
	/* One change: one write. */
	l.cpu_quota_us = 70000;
	assert_int_equal(fs_writer_apply(w, A, &l, 3, &res), 0);
	assert_int_equal(res.written, 1);
	assert_int_equal(f->n_calls, 1);
	assert_string_equal(f->calls[0], "cpu.max=70000 100000");

	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "a.slice", "memory.high"), "max");
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "max");
	assert_string_equal(cg_read(f, "a.slice", "memory.low"), "0");
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

	assert_int_equal(fs_writer_apply(w, A, &l, 1, NULL), 0);
	fs_writer_close(w); /* a crash: no restore */

	/* The next run finds our own values in the files; it must keep the
	 * originals of the first run. */
	w = open_writer(f);
	assert_int_equal(fs_writer_saved_count(w), 7);
	l.cpu_quota_us = 20000;
	l.mem_max = 96 << 20;
	l.mem_low = 48 << 20;
	assert_int_equal(fs_writer_apply(w, A, &l, 1, NULL), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "20000 100000");
	assert_string_equal(cg_read(f, "a.slice", "memory.low"), "50331648");
	assert_int_equal(fs_writer_saved_count(w), 7);
	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "max");
	assert_string_equal(cg_read(f, "a.slice", "memory.low"), "0");
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

	assert_int_equal(fs_writer_apply(w, A, &l, 1, NULL), 0);
	assert_int_equal(fs_writer_open(&w2, &o), -EBUSY);
	assert_null(w2);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	fs_writer_close(w);
	w2 = open_writer(f);
	assert_int_equal(fs_writer_saved_count(w2), 7);
	fs_writer_close(w2);
}

static void test_release_without_config(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_writer *w = open_writer(f);

	assert_int_equal(fs_writer_apply(w, A, &l, 1, NULL), 0);
	assert_int_equal(fs_writer_apply(w, B, &l, 1, NULL), 0);
	fs_writer_close(w);

	assert_int_equal(fs_release(f->state, f->root, capture_log, f, NULL, NULL), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "b.slice/inner", "memory.high"), "max");
	assert_null(at_read(f->state, FS_WRITER_STATE_FILE));
	assert_non_null(strstr(f->last_log, "restored 14 of 14"));
	/* Nothing to do is success too. */
	assert_int_equal(fs_release(f->state, f->root, NULL, NULL, NULL, NULL), 0);
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
	assert_int_equal(fs_release(f->state, f->root, capture_log, f, NULL, NULL), 0);
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
	assert_int_equal(fs_writer_apply(w, A, &l, 1, NULL), 0);
	assert_true(index_of(f, "memory.high=") < index_of(f, "memory.max="));
	assert_true(index_of(f, "cpu.max=") < index_of(f, "cpu.max.burst="));

	/* Raising memory.max: max first. Lowering the burst: burst first. */
	l.mem_high = 400 << 20;
	l.mem_max = 500 << 20;
	l.cpu_burst_us = 10000;
	l.cpu_quota_us = 20000;
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply(w, A, &l, 2, NULL), 0);
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

	assert_int_equal(fs_writer_apply(w, B, &l, 1, &res), 0);
	assert_int_equal(fs_writer_apply(w, A, &l, 1, &res), 0);
	snprintf(path, sizeof(path), "%s/b.slice", f->root);
	at_rmtree(path);
	l.cpu_quota_us = 1000;
	assert_int_equal(fs_writer_apply(w, B, &l, 2, &res), 0);
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
		assert_int_equal(fs_writer_apply(w, A, &l, t, &res), -EIO);
		assert_int_equal(res.failed, 1);
		t += 1000000;
	}
	/* One line for the first failure, one when it is marked unsupported. */
	assert_int_equal(f->n_log_warn, 2);
	assert_non_null(strstr(f->last_log, "cpu.max"));
	assert_non_null(strstr(f->last_log, "EINVAL"));
	/* In back-off: not even tried. */
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply(w, A, &l, t, &res), 0);
	assert_int_equal(res.unsupported, 1);
	assert_int_equal(f->n_calls, 0);
	/* After reprobe_us (10 s) it is probed again, and now it works. */
	f->fail_file = NULL;
	t += 10000000;
	assert_int_equal(fs_writer_apply(w, A, &l, t, &res), 0);
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
		assert_int_equal(fs_writer_apply(w, A, &l, t * 1000000, NULL), -EIO);
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
	assert_int_equal(fs_writer_apply(w, A, &l, 1, &res), 0);
	assert_int_equal(res.clamped, 1);
	/* usage 10 MiB + margin 1 MiB */
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "11534336");
	assert_int_equal(f->n_log, 1);
	/* Usage shrinks: the limit steps down with it; the line is not repeated. */
	at_write(f->root, "a.slice/memory.current", "8388608\n");
	assert_int_equal(fs_writer_apply(w, A, &l, 2, &res), 0);
	assert_int_equal(res.clamped, 1);
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "9437184");
	assert_int_equal(f->n_log, 1);
	/* Usage above the current limit (racing): the clamp never raises it. */
	at_write(f->root, "a.slice/memory.current", "12582912\n");
	assert_int_equal(fs_writer_apply(w, A, &l, 3, &res), 0);
	assert_int_equal(res.unchanged, 1);
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "9437184");
	/* A request above usage + margin is written as asked. */
	l.mem_max = 64 << 20;
	assert_int_equal(fs_writer_apply(w, A, &l, 4, &res), 0);
	assert_int_equal(res.clamped, 0);
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "67108864");
	/* memory.max unchanged while cpu.max changes, usage now above it: the
	 * clamp could only keep it (never raises), so it is skipped, and with
	 * it the read of memory.current. */
	at_write(f->root, "a.slice/memory.current", "104857600\n");
	l.set |= FS_LIM_CPU_MAX;
	l.cpu_quota_us = 50000;
	assert_int_equal(fs_writer_apply(w, A, &l, 5, &res), 0);
	assert_int_equal(res.clamped, 0);
	assert_int_equal(res.written, 1);
	assert_int_equal(res.unchanged, 1);
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "67108864");
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	fs_writer_close(w);
}

/* dir_fn for test_lent_dir: lends ctx's fd for tenant A (path "a.slice") only. */
static int lend_dir(void *ctx, size_t tenant, const char *cgroup, uint64_t *ino)
{
	const int *fd = ctx;
	struct stat st;

	if (tenant != A || strcmp(cgroup, "a.slice") != 0 || fstat(*fd, &st) < 0)
		return -1;
	*ino = (uint64_t)st.st_ino;
	return *fd;
}

/*
 * A directory lent by dir_fn (fairshared: the sampler's) is written through
 * and left open; without one the cgroup is opened by path. The lent fd
 * here is b.slice/inner's, so where the value lands shows which was used.
 */
static void test_lent_dir(void **state)
{
	struct fake *f = *state;
	struct fs_writer_opts o = writer_opts(f);
	struct fs_limits l = {.set = FS_LIM_CPU_MAX, .cpu_quota_us = 30000};
	struct fs_apply_result res;
	struct fs_writer *w;
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/b.slice/inner", f->root);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	o.dir_fn = lend_dir;
	o.dir_ctx = &fd;
	assert_int_equal(fs_writer_open(&w, &o), 0);
	assert_int_equal(fs_writer_apply(w, A, &l, 1, &res), 0);
	assert_int_equal(res.written, 1);
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.max"), "30000 100000");
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000\n"); /* untouched */
	assert_true(fcntl(fd, F_GETFD) >= 0); /* still open: not the writer's */
	/* B: none lent, opened by path */
	l.cpu_quota_us = 40000;
	assert_int_equal(fs_writer_apply(w, B, &l, 1, &res), 0);
	assert_int_equal(res.written, 1);
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.max"), "40000 100000");
	fs_writer_close(w);
	assert_true(fcntl(fd, F_GETFD) >= 0);
	close(fd);
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
	assert_int_equal(fs_writer_apply(w, A, &l, 1, &res), 0);
	assert_int_equal(res.unsupported, 1);
	assert_int_equal(res.written, 1);
	assert_false(res.gone);
	assert_null(at_read(f->root, "a.slice/cpu.max.burst")); /* never created */
	assert_int_equal(fs_writer_saved_count(w), 1);
	assert_int_equal(f->n_log_warn, 1);
	assert_int_equal(fs_writer_apply(w, A, &l, 2, &res), 0);
	assert_int_equal(f->n_log_warn, 1); /* rate-limited */
	fs_writer_close(w);
}

static void test_confinement(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_writer *w = open_writer(f);
	char target[600];

	/* Not in the tenant list. */
	assert_int_equal(fs_writer_apply(w, 2, &l, 1, NULL), -EPERM);
	assert_int_equal(fs_writer_apply_all(w, 3, &l, NULL, 1, NULL), -EINVAL);
	fs_writer_close(w);

	/* Paths that are not confined: refused at every apply, nothing written. */
	{
		static const char *const bad[] = {"a.slice/../b.slice", "/a.slice"};
		struct fs_writer_opts o = writer_opts(f);
		struct fs_limits two[2] = {l, l};
		struct fs_apply_result res[2];

		o.cgroups = bad;
		assert_int_equal(fs_writer_open(&w, &o), 0);
		assert_int_equal(fs_writer_apply(w, 0, &l, 1, NULL), -EINVAL);
		assert_int_equal(fs_writer_apply(w, 1, &l, 1, NULL), -EINVAL);
		assert_int_equal(fs_writer_apply_all(w, 2, two, NULL, 2, res), -EINVAL);
		assert_int_equal(res[0].error, -EINVAL);
		assert_int_equal(res[1].error, -EINVAL);
		assert_int_equal(f->n_calls, 0);
		assert_int_equal(fs_writer_saved_count(w), 0);
		fs_writer_close(w);
	}

	/* An allowed name that is a symlink to a directory outside the root. */
	make_cgroup(f, "../outside");
	snprintf(target, sizeof(target), "%s/outside", f->dir);
	at_rmtree(f->root);
	at_mkdir(f->dir, "cg");
	at_symlink(f->root, "a.slice", target);
	w = open_writer(f);
	assert_true(fs_writer_apply(w, A, &l, 1, NULL) < 0);
	assert_string_equal(at_read(target, "cpu.max"), "max 100000\n");
	fs_writer_close(w);
}

/* inotify: how many events (with name `name`, or any when NULL) are queued. */
static int count_events(int fd, const char *name)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	int n = 0;
	ssize_t len;

	while ((len = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (!name || (ev->len && strcmp(ev->name, name) == 0))
				n++;
			p += sizeof(*ev) + ev->len;
		}
	}
	return n;
}

/* Events of the controlled files (cgfile.h) other than name. */
static int count_other_files(int fd, const char *name)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	int n = 0;
	ssize_t len;

	while ((len = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->len && strcmp(ev->name, name) != 0 &&
			    fs_cgfile_by_name(ev->name) >= 0)
				n++;
			p += sizeof(*ev) + ev->len;
		}
	}
	return n;
}

/* Renames of the state file into place (each save: one, after its fsyncs). */
static int watch_saves(struct fake *f)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	assert_true(fd >= 0);
	assert_true(inotify_add_watch(fd, f->state, IN_MOVED_TO) >= 0);
	return fd;
}

/* Lines of the state file (at_read holds 64 KiB only); *found: a line
 * starts with `prefix`. */
static long state_lines(struct fake *f, const char *prefix, bool *found)
{
	char path[600], *line = NULL;
	size_t cap = 0;
	long n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->state, FS_WRITER_STATE_FILE);
	fp = fopen(path, "re");
	assert_non_null(fp);
	*found = false;
	while (getline(&line, &cap, fp) > 0) {
		n++;
		*found |= strncmp(line, prefix, strlen(prefix)) == 0;
	}
	free(line);
	fclose(fp);
	return n;
}

#define MANY	   2000
#define MANY_FILES 3 /* cpu.max, memory.high, io.max: the fixture stays fast */

static void make_small_cgroup(struct fake *f, const char *cg)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/cpu.max", cg);
	at_write(f->root, p, "max 100000\n");
	snprintf(p, sizeof(p), "%s/memory.high", cg);
	at_write(f->root, p, "max\n");
	snprintf(p, sizeof(p), "%s/io.max", cg);
	at_write(f->root, p, "");
}

/* n small cgroups t0000.slice ... (make_small_cgroup), their names and
 * limits for the three files; free with free_many. */
static void make_many(struct fake *f, size_t n, char ***names, struct fs_limits **lim)
{
	*names = calloc(n, sizeof(**names));
	*lim = calloc(n, sizeof(**lim));
	assert_true(*names && *lim);
	for (size_t i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "t%04zu.slice", i);
		(*names)[i] = strdup(name);
		make_small_cgroup(f, name);
		(*lim)[i] = some_limits();
		(*lim)[i].set = FS_LIM_CPU_MAX | FS_LIM_MEM_HIGH | FS_LIM_IO_MAX;
	}
}

static void free_many(size_t n, char **names, struct fs_limits *lim)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(lim);
}

static void test_apply_all_many(void **state)
{
	struct fake *f = *state;
	char **names;
	struct fs_limits *lim;
	struct fs_apply_result *res = calloc(MANY, sizeof(*res));
	bool *skip = calloc(MANY, sizeof(*skip));
	struct fs_writer_opts o = writer_opts(f);
	struct fs_writer *w;
	int ino_fd;
	long writes;
	bool found;

	make_many(f, MANY, &names, &lim);
	for (int i = 0; i < MANY; i++)
		lim[i].cpu_quota_us = 10000 + (uint64_t)i;
	o.n_tenants = MANY;
	o.cgroups = (const char *const *)names;
	f->count_only = true; /* the files are not read back: keeps the test fast */
	assert_int_equal(fs_writer_open(&w, &o), 0);
	ino_fd = watch_saves(f);
	skip[7] = true;

	/* Round 1: 1,999 tenants x 3 new originals, one save. */
	assert_int_equal(fs_writer_apply_all(w, MANY, lim, skip, 1, res), 0);
	assert_int_equal(count_events(ino_fd, FS_WRITER_STATE_FILE), 1);
	assert_int_equal(fs_writer_saved_count(w), (MANY - 1) * MANY_FILES);
	assert_int_equal(f->n_writes, (MANY - 1) * MANY_FILES);
	assert_int_equal(res[0].written, MANY_FILES);
	assert_int_equal(res[MANY - 1].written, MANY_FILES);
	assert_int_equal(res[7].written + res[7].unchanged, 0);
	assert_string_equal(f->last, "io.max=254:0 rbps=4194304 wbps=2097152 riops=max wiops=max");
	assert_int_equal(state_lines(f, "orig t1999.slice io.max@254:0 254:0%20rbps=max", &found),
			 1 + (MANY - 1) * MANY_FILES);
	assert_true(found);

	/* Round 2: every tenant changes one file: no new original, no save. */
	for (int i = 0; i < MANY; i++)
		lim[i].cpu_quota_us += 1000;
	writes = f->n_writes;
	assert_int_equal(fs_writer_apply_all(w, MANY, lim, skip, 2, res), 0);
	assert_int_equal(count_events(ino_fd, FS_WRITER_STATE_FILE), 0);
	assert_int_equal(f->n_writes - writes, MANY - 1);
	assert_int_equal(res[42].written, 1);
	assert_int_equal(res[42].unchanged, MANY_FILES - 1);
	assert_string_equal(f->last, "cpu.max=12999 100000"); /* tenant 1999 */

	/* Round 3: the steady state: nothing written, nothing saved. */
	writes = f->n_writes;
	assert_int_equal(fs_writer_apply_all(w, MANY, lim, skip, 3, res), 0);
	assert_int_equal(count_events(ino_fd, FS_WRITER_STATE_FILE), 0);
	assert_int_equal(f->n_writes, writes);
	assert_int_equal(res[42].unchanged, MANY_FILES);

	/* Round 4: the skipped tenant joins: its originals, one more save. */
	skip[7] = false;
	assert_int_equal(fs_writer_apply_all(w, MANY, lim, skip, 4, res), 0);
	assert_int_equal(count_events(ino_fd, FS_WRITER_STATE_FILE), 1);
	assert_int_equal(res[7].written, MANY_FILES);
	assert_int_equal(fs_writer_saved_count(w), MANY * MANY_FILES);
	assert_int_equal(state_lines(f, "orig t0007.slice cpu.max max%20100000", &found),
			 1 + MANY * MANY_FILES);
	assert_true(found);

	writes = f->n_writes;
	assert_int_equal(fs_writer_restore(w), 0);
	assert_int_equal(fs_writer_saved_count(w), 0);
	assert_int_equal(f->n_writes - writes, MANY * MANY_FILES);
	fs_writer_close(w);
	close(ino_fd);
	free_many(MANY, names, lim);
	free(res);
	free(skip);
}

/* The kernel's limit on queued inotify events (16,384 by default). */
static long max_queued_events(void)
{
	FILE *fp = fopen("/proc/sys/fs/inotify/max_queued_events", "re");
	long q = 16384;

	if (fp) {
		if (fscanf(fp, "%ld", &q) != 1)
			q = 16384;
		fclose(fp);
	}
	return q;
}

/*
 * More of our own writes in one apply than the change watch's queue holds
 * (at start-up with thousands of tenants): the writer drains it as it goes,
 * so the queue never overflows and the next apply reads nothing back. An
 * overflow (before: 42,340 events at 10,000 tenants) made every tenant
 * "unchecked", logged here, and the next apply read every file again.
 */
static void test_own_writes_do_not_overflow(void **state)
{
	struct fake *f = *state;
	const long q = max_queued_events();
	/* past the queue by a quarter, as long as the fixture stays small */
	const size_t n = (size_t)(q > 24000 ? 24000 : q) * 5 / 4 / MANY_FILES;
	char **names;
	struct fs_limits *lim;
	struct fs_apply_result *res = calloc(n, sizeof(*res));
	struct fs_writer_opts o = writer_opts(f);
	struct fs_writer *w;

	if (q > 24000)
		print_message("max_queued_events %ld: %zu tenants do not fill it\n", q, n);
	make_many(f, n, &names, &lim);
	o.n_tenants = n;
	o.cgroups = (const char *const *)names;
	assert_int_equal(fs_writer_open(&w, &o), 0);
	f->n_log = 0;
	assert_int_equal(fs_writer_apply_all(w, n, lim, NULL, 1, res), 0);
	assert_int_equal(f->n_writes, (long)(n * MANY_FILES)); /* real writes: real events */
	assert_int_equal(res[n - 1].written, MANY_FILES);
	assert_int_equal(fs_writer_apply_all(w, n, lim, NULL, 2, res), 0);
	if (f->n_log)
		print_message("log: %s\n", f->last_log);
	assert_int_equal(f->n_log, 0); /* no "overflowed" */
	assert_int_equal(f->n_writes, (long)(n * MANY_FILES));
	assert_int_equal(res[n - 1].unchanged, MANY_FILES);

	/* Someone else's write after all that is still seen (one event). */
	at_write(f->root, "t0042.slice/cpu.max", "max 100000\n");
	assert_int_equal(fs_writer_apply_all(w, n, lim, NULL, 3, res), 0);
	assert_int_equal(res[42].drifted, 1);
	assert_int_equal(f->n_writes, (long)(n * MANY_FILES) + 1);
	fs_writer_close(w);
	free_many(n, names, lim);
	free(res);
}

/* Opens and reads of the cgroup tree (IN_OPEN of a directory or a file). */
static int watch_tree(struct fake *f)
{
	static const char *const dirs[] = {"", "/a.slice", "/b.slice", "/b.slice/inner"};
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	char p[700];

	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", f->root, dirs[i]);
		assert_true(inotify_add_watch(fd, p, IN_OPEN | IN_ACCESS | IN_MODIFY) >= 0);
	}
	return fd;
}

static void test_steady_state_touches_nothing(void **state)
{
	struct fake *f = *state;
	struct fs_limits l[2] = {some_limits(), some_limits()};
	struct fs_apply_result res[2];
	struct fs_writer *w = open_writer(f);
	int fd = watch_tree(f);

	l[B].cpu_weight = 400;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 1, res), 0);
	assert_int_equal(res[A].written, 7);
	assert_int_equal(res[B].written, 7);
	assert_true(count_events(fd, NULL) > 0); /* the watch sees the writer */

	f->n_calls = 0;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 2, res), 0);
	assert_int_equal(res[A].unchanged, 7);
	assert_int_equal(res[B].unchanged, 7);
	assert_int_equal(f->n_calls, 0);
	assert_int_equal(count_events(fd, NULL), 0); /* no open, no read */

	/* A recheck (or recheck_us later) opens the cgroup, and still writes
	 * nothing that is unchanged. */
	fs_writer_recheck(w, A);
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 3, res), 0);
	assert_true(count_events(fd, NULL) > 0);
	assert_int_equal(f->n_calls, 0);
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 4, res), 0);
	assert_int_equal(count_events(fd, NULL), 0);
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 61000000, res), 0);
	assert_true(count_events(fd, NULL) > 0);
	assert_int_equal(f->n_calls, 0);
	close(fd);
	fs_writer_close(w);
}

/*
 * Past max_watches (here 4 of the 14 files) the writer watches no more
 * files, says so once, and reads a file without a watch every
 * FS_WRITER_UNWATCHED_US (plus the spread by tenant index), not every
 * period: at 10,000 tenants past the kernel's watch limit that was 810 ms
 * of a 1,004 ms period (issue 19). A change by someone else to such a file
 * is corrected at that read.
 */
static void test_unwatched_files_cadence(void **state)
{
	struct fake *f = *state;
	struct fs_writer_opts o = writer_opts(f);
	struct fs_limits l[2] = {some_limits(), some_limits()};
	struct fs_apply_result res[2];
	const uint64_t t1 = 1000000, every = FS_WRITER_UNWATCHED_US;
	/* B is tenant 1: its files are read every + 1/128 of it after t1 */
	const uint64_t due_b = t1 + every + every / 2 / 64;
	struct fs_writer *w;
	int fd;

	o.max_watches = 4;
	assert_int_equal(fs_writer_open(&w, &o), 0);
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, t1, res), 0);
	assert_int_equal(res[A].written + res[B].written, 14);
	assert_int_equal(f->n_log_warn, 1);
	assert_non_null(strstr(f->last_log, "no more change watches at 4"));
	fd = watch_tree(f);

	/* All of B's files are without a watch: an operator's write to one is
	 * not read back in the next periods, and nothing is opened. */
	at_write(f->root, "b.slice/inner/cpu.max", "max 100000\n");
	count_events(fd, NULL);
	for (uint64_t t = t1 + 1000000; t < due_b; t += every / 4) {
		assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, t, res), 0);
		assert_int_equal(res[B].drifted, 0);
		assert_int_equal(res[B].unchanged, 7);
	}
	assert_int_equal(count_events(fd, NULL), 0);
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.max"), "max 100000\n");

	/* Its time: read, found changed, ours written again. */
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, due_b, res), 0);
	assert_int_equal(res[B].drifted, 1);
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.max"), "50000 100000");
	assert_true(count_events(fd, NULL) > 0);
	/* and not again in the next period */
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, due_b + 1000000, res), 0);
	assert_int_equal(count_events(fd, NULL), 0);
	assert_int_equal(f->n_log_warn, 2); /* the drift's warning; the watches' not again */
	close(fd);
	fs_writer_close(w);
}

/* The steady state is remembered per tenant (memo_holds), and forgotten
 * whenever the entries it stood for change: after a restore the same
 * limits are written again, and a changed value is written at once. */
static void test_steady_memo(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_apply_result res;
	struct fs_writer *w = open_writer(f);

	for (uint64_t t = 1; t <= 3; t++) /* written, then steady, then the memo */
		assert_int_equal(fs_writer_apply(w, A, &l, t, &res), 0);
	assert_int_equal(res.unchanged, 7);
	assert_int_equal(res.written, 0);
	/* io.max of the one disk moves: written */
	l.io[0].wbps = 1048576;
	assert_int_equal(fs_writer_apply(w, A, &l, 4, &res), 0);
	assert_int_equal(res.written, 1);
	assert_int_equal(fs_writer_apply(w, A, &l, 5, &res), 0);
	assert_int_equal(fs_writer_apply(w, A, &l, 6, &res), 0);
	assert_int_equal(res.unchanged, 7);
	/* restored: the same limits are ours to write again */
	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	assert_int_equal(fs_writer_apply(w, A, &l, 7, &res), 0);
	assert_int_equal(res.written, 7);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	assert_int_equal(fs_writer_apply(w, A, &l, 8, &res), 0);
	assert_int_equal(fs_writer_apply(w, A, &l, 9, &res), 0);
	assert_int_equal(res.unchanged, 7);
	/* one cgroup restored (a tenant that left, then came back) */
	assert_int_equal(fs_writer_restore_cgroup(w, "a.slice"), 0);
	assert_int_equal(fs_writer_apply(w, A, &l, 10, &res), 0);
	assert_int_equal(res.written, 7);
	fs_writer_close(w);
}

/* A state file written by a previous (crashed) run, in the format of every
 * version: originals matched to the tenants by cgroup, never replaced by the
 * values that run left in the files; a cgroup that is no longer a tenant
 * keeps its record until restored. */
static void test_crashed_run_state(void **state)
{
	struct fake *f = *state;
	struct fs_limits l[2] = {some_limits(), some_limits()};
	struct fs_writer *w;
	const char *st;
	int fd;

	make_cgroup(f, "old.slice");
	at_write(f->root, "old.slice/cpu.weight", "300\n");
	at_write(f->root, "a.slice/memory.high", "67108864\n");
	at_write(f->root, "b.slice/inner/cpu.max", "50000 100000\n");
	at_write(f->root, "b.slice/inner/io.max",
		 "254:0 rbps=4194304 wbps=2097152 riops=max "
		 "wiops=max\n");
	at_mkdir(f->dir, "run");
	at_write(f->state, FS_WRITER_STATE_FILE,
		 "fairshare-writer-state 1\n"
		 "orig a.slice memory.high 12345\n"
		 "orig b.slice/inner cpu.max max%20100000\n"
		 "orig b.slice/inner io.max@254:0 "
		 "254:0%20rbps=max%20wbps=max%20riops=max%20wiops=max\n"
		 "orig old.slice cpu.weight 100\n");
	w = open_writer(f);
	assert_int_equal(fs_writer_saved_count(w), 4);
	fd = watch_saves(f);
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 1, NULL), 0);
	assert_int_equal(count_events(fd, FS_WRITER_STATE_FILE), 1);
	assert_int_equal(fs_writer_saved_count(w), 4 + 6 + 5);
	st = at_read(f->state, FS_WRITER_STATE_FILE);
	assert_non_null(strstr(st, "orig a.slice memory.high 12345\n"));
	assert_null(strstr(st, "orig a.slice memory.high 67108864"));
	assert_non_null(strstr(st, "orig b.slice/inner cpu.max max%20100000\n"));
	assert_non_null(strstr(st, "orig old.slice cpu.weight 100\n"));
	assert_string_equal(cg_read(f, "old.slice", "cpu.weight"), "300\n"); /* not a tenant */

	/* A reload that reorders the tenants: matched again by cgroup, nothing new. */
	{
		static const char *const swapped[] = {"b.slice/inner", "a.slice"};
		struct fs_limits s[2] = {l[B], l[A]};

		s[0].cpu_weight = 444;
		assert_int_equal(fs_writer_set_tenants(w, 2, swapped, NULL), 0);
		assert_int_equal(fs_writer_apply_all(w, 2, s, NULL, 2, NULL), 0);
		assert_int_equal(count_events(fd, FS_WRITER_STATE_FILE), 0);
		assert_string_equal(cg_read(f, "b.slice/inner", "cpu.weight"), "444");
		assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "200");
	}

	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "memory.high"), "12345");
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "b.slice/inner", "io.max"),
			    "254:0 rbps=max wbps=max riops=max wiops=max");
	assert_string_equal(cg_read(f, "old.slice", "cpu.weight"), "100");
	assert_int_equal(fs_writer_saved_count(w), 0);
	close(fd);
	fs_writer_close(w);
}

/* Open fds of this process (/proc/self/fd, less the one reading it). */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/* file_fn for test_kept_files: ctx's fd as tenant A's memory.current. */
static int lend_mem_current(void *ctx, size_t tenant, const char *cgroup, const char *file)
{
	const int *fd = ctx;

	if (tenant != A || strcmp(cgroup, "a.slice") != 0 || strcmp(file, "memory.current") != 0)
		return -1;
	return fd[1];
}

/*
 * Written files in a lent directory stay open within max_open_files and
 * take later values with one pwrite (a regular file cut to the value, as
 * O_TRUNC did); the clamp reads memory.current through file_fn's fd; a
 * directory recreated under the path (a new inode lent) has its own files
 * written and the old ones closed; closing the writer closes them all.
 */
static void test_kept_files(void **state)
{
	struct fake *f = *state;
	struct fs_writer_opts o = writer_opts(f);
	struct fs_limits l = some_limits();
	struct fs_apply_result res;
	struct fs_writer *w;
	char path[700], old[700];
	int fd[2], before, base;

	snprintf(path, sizeof(path), "%s/a.slice", f->root);
	snprintf(old, sizeof(old), "%s/a.old", f->root);
	fd[0] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd[0] >= 0);
	/* not a.slice/memory.current: where the clamp's usage comes from shows */
	at_write(f->dir, "usage", "10485760\n");
	snprintf(path, sizeof(path), "%s/usage", f->dir);
	fd[1] = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd[1] >= 0);
	o.write_fn = NULL;
	o.dir_fn = lend_dir;
	o.dir_ctx = fd;
	o.file_fn = lend_mem_current;
	o.max_open_files = 3;
	before = count_fds();
	assert_int_equal(fs_writer_open(&w, &o), 0);
	base = count_fds(); /* and the writer's own: lock, root, inotify */
	assert_int_equal(fs_writer_apply(w, A, &l, 1, &res), 0);
	assert_int_equal(res.written, 7);
	assert_int_equal(res.clamped, 0);
	assert_int_equal(count_fds(), base + 3); /* 3 kept */
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	/* shorter values through the kept files: nothing of the old one left */
	l.cpu_quota_us = 5000;
	l.cpu_weight = 7;
	l.mem_high = 1 << 20;
	l.mem_max = 1 << 20; /* below usage + margin: clamped to 11 MiB */
	l.io[0].rbps = 1;
	assert_int_equal(fs_writer_apply(w, A, &l, 2, &res), 0);
	assert_int_equal(res.written, 5);
	assert_int_equal(res.clamped, 1);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "5000 100000");
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "7");
	assert_string_equal(cg_read(f, "a.slice", "memory.high"), "1048576");
	assert_string_equal(cg_read(f, "a.slice", "memory.max"), "11534336");
	assert_string_equal(cg_read(f, "a.slice", "io.max"),
			    "254:0 rbps=1 wbps=2097152 riops=max wiops=max");
	assert_int_equal(count_fds(), base + 3);
	/* Someone else's longer value in a kept file: ours, as long as the one
	 * we wrote last, replaces all of it (a pwrite alone would leave its
	 * tail: the length of what is there is not ours to know any more). */
	at_write(f->root, "a.slice/cpu.max", "max 100000 and then some\n");
	assert_int_equal(fs_writer_apply(w, A, &l, 3, &res), 0);
	assert_int_equal(res.drifted, 1);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "5000 100000");
	/* A new directory at the path, lent from now on: its files are
	 * written, the old directory's kept files closed and left alone. */
	snprintf(path, sizeof(path), "%s/a.slice", f->root);
	assert_int_equal(rename(path, old), 0);
	make_cgroup(f, "a.slice");
	close(fd[0]);
	fd[0] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd[0] >= 0);
	fs_writer_recheck(w, A);
	l.cpu_quota_us = 6000;
	assert_int_equal(fs_writer_apply(w, A, &l, 4, &res), 0);
	assert_int_equal(res.written, 7);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "6000 100000");
	assert_string_equal(cg_read(f, "a.old", "cpu.max"), "5000 100000");
	assert_int_equal(count_fds(), base + 3);
	fs_writer_close(w);
	assert_int_equal(count_fds(), before);
	at_rmtree(old);
	close(fd[0]);
	close(fd[1]);
}

/* A cgroup recreated under the same name (a restarted service): its own
 * values become the originals, and ours are written again. */
static void test_recreated_cgroup(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_apply_result res;
	struct fs_writer *w = open_writer(f);
	char from[700], to[700];

	assert_int_equal(fs_writer_apply(w, A, &l, 1, &res), 0);
	/* New directory first, so it cannot get the old one's inode. */
	snprintf(from, sizeof(from), "%s/a.slice", f->root);
	snprintf(to, sizeof(to), "%s/a.old", f->root);
	assert_int_equal(rename(from, to), 0);
	make_cgroup(f, "a.slice");
	at_write(f->root, "a.slice/cpu.weight", "77\n");
	at_rmtree(to);

	fs_writer_recheck(w, A); /* the sampler saw a new baseline */
	assert_int_equal(fs_writer_apply(w, A, &l, 2, &res), 0);
	assert_int_equal(res.written, 7);
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "200");
	assert_non_null(
	    strstr(at_read(f->state, FS_WRITER_STATE_FILE), "orig a.slice cpu.weight 77\n"));

	/* Without a recheck: the change watch saw the old files go, so the
	 * next apply opens the cgroup (recheck_us is the safety net). */
	assert_int_equal(rename(from, to), 0);
	make_cgroup(f, "a.slice");
	at_write(f->root, "a.slice/cpu.weight", "88\n");
	at_rmtree(to);
	assert_int_equal(fs_writer_apply(w, A, &l, 3, &res), 0);
	assert_int_equal(res.written, 7);
	assert_int_equal(res.drifted, 0);
	assert_non_null(
	    strstr(at_read(f->state, FS_WRITER_STATE_FILE), "orig a.slice cpu.weight 88\n"));
	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "88");
	fs_writer_close(w);
}

/*
 * Drift: a value someone else writes into a file in force is noticed at
 * the next apply (the change watch fired), counted, logged with both values
 * and replaced by ours, once; our own writes are not drift; only the file
 * that changed is read again; explain's view reads the value in force.
 */
static void test_drift_corrected(void **state)
{
	struct fake *f = *state;
	struct fs_limits l[2] = {some_limits(), some_limits()};
	struct fs_apply_result res[2];
	struct fs_writer_file files[FS_CGF_SLOTS];
	struct fs_writer *w = open_writer(f);
	int fd = watch_tree(f), n;

	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 1, res), 0);
	assert_int_equal(res[A].written, 7);
	count_events(fd, NULL);
	/* Our own writes raise events too: not drift, nothing read back. */
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 2, res), 0);
	assert_int_equal(res[A].unchanged + res[B].unchanged, 14);
	assert_int_equal(res[A].drifted + res[B].drifted, 0);
	assert_int_equal(f->n_calls, 0);
	assert_int_equal(count_events(fd, NULL), 0);

	/* Someone else: an operator's echo into a.slice/cpu.max. */
	at_write(f->root, "a.slice/cpu.max", "max 100000\n");
	count_events(fd, NULL);
	n = fs_writer_files(w, A, files, FS_CGF_SLOTS);
	assert_int_equal(n, 7);
	assert_string_equal(files[0].key, "cpu.max");
	assert_string_equal(files[0].written, "50000 100000");
	assert_string_equal(files[0].in_force, "max 100000");
	count_events(fd, NULL);

	f->n_calls = 0;
	f->n_log_warn = 0;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 3, res), 0);
	assert_int_equal(res[A].drifted, 1);
	assert_int_equal(res[A].written, 1);
	assert_int_equal(res[B].drifted, 0);
	assert_int_equal(f->n_calls, 1);
	assert_string_equal(f->calls[0], "cpu.max=50000 100000");
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	assert_int_equal(f->n_log_warn, 1);
	assert_non_null(strstr(f->last_log, "a.slice/cpu.max is \"max 100000\""));
	assert_non_null(strstr(f->last_log, "we wrote \"50000 100000\""));
	assert_int_equal(fs_writer_drift_count(w, A), 1);
	assert_int_equal(fs_writer_drift_count(w, B), 0);
	/* Only cpu.max was read (and written) again: no other file touched. */
	assert_int_equal(count_other_files(fd, "cpu.max"), 0);
	n = fs_writer_files(w, A, files, FS_CGF_SLOTS);
	assert_string_equal(files[0].in_force, "50000 100000");
	count_events(fd, NULL);

	/* Settled: the correction's own event is not drift. */
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 4, res), 0);
	assert_int_equal(res[A].drifted, 0);
	assert_int_equal(f->n_calls, 0);
	assert_int_equal(count_events(fd, NULL), 0);

	/* A second change within the log interval: corrected, counted, not logged. */
	at_write(f->root, "b.slice/inner/memory.high", "max\n");
	at_write(f->root, "a.slice/cpu.weight", "100\n");
	f->n_log_warn = 0;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 5, res), 0);
	assert_int_equal(res[A].drifted, 1);
	assert_int_equal(res[B].drifted, 1);
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "200");
	assert_string_equal(cg_read(f, "b.slice/inner", "memory.high"), "67108864");
	assert_int_equal(f->n_log_warn, 1); /* b's first; a's is rate-limited */
	assert_int_equal(fs_writer_drift_count(w, A), 2);

	/* The outside value equals our new plan: counted, nothing to write. */
	at_write(f->root, "a.slice/cpu.weight", "300\n");
	l[A].cpu_weight = 300;
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 6, res), 0);
	assert_int_equal(res[A].drifted, 1);
	assert_int_equal(f->n_calls, 0);

	/* Restore brings the originals back, not the outsider's values. */
	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "100");
	close(fd);
	fs_writer_close(w);
}

/* A change made to a file right after our own write of it, within the same
 * apply, goes with our own events (documented window); the periodic full
 * check (recheck_us) finds it. */
static void test_drift_recheck_safety_net(void **state)
{
	struct fake *f = *state;
	struct fs_limits l = some_limits();
	struct fs_apply_result res;
	struct fs_writer *w = open_writer(f);

	assert_int_equal(fs_writer_apply(w, A, &l, 1, &res), 0);
	l.cpu_weight = 250;
	f->race_file = "cpu.weight";
	f->race_value = "999";
	assert_int_equal(fs_writer_apply(w, A, &l, 2, &res), 0);
	assert_int_equal(res.written, 1);
	f->race_file = NULL;
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "999");
	assert_int_equal(fs_writer_apply(w, A, &l, 3, &res), 0);
	assert_int_equal(res.drifted, 0);
	assert_int_equal(fs_writer_apply(w, A, &l, 61000000, &res), 0);
	assert_int_equal(res.drifted, 1);
	assert_string_equal(cg_read(f, "a.slice", "cpu.weight"), "250");
	fs_writer_close(w);
}

/*
 * A template's cgroups changed: a.slice went, c.slice came, b.slice/inner
 * moved from index B to 0 and keeps its state (from, list_match.h): its
 * change watches now report under its new index, so an operator's write to
 * it is found and corrected in the next apply, and its saved originals
 * still restore it; nothing of a.slice is left to its successor.
 */
static void test_set_tenants_carries_over(void **state)
{
	struct fake *f = *state;
	static const char *const next[] = {"b.slice/inner", "c.slice"};
	const size_t from[] = {B, FS_LIST_NEW};
	struct fs_limits l[2] = {some_limits(), some_limits()};
	struct fs_apply_result res[2];
	struct fs_writer *w = open_writer(f);

	make_cgroup(f, "c.slice");
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 1, res), 0);
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 2, res), 0);
	assert_int_equal(fs_writer_set_tenants(w, 2, next, from), 0);
	/* b's files are in force already: nothing to write for it; c is new */
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 3, res), 0);
	assert_int_equal(res[0].written, 0);
	assert_int_equal(res[0].unchanged, 7);
	assert_int_equal(res[1].written, 7);
	assert_string_equal(cg_read(f, "c.slice", "cpu.max"), "50000 100000");
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 4, res), 0);

	/* someone else's write to the moved tenant: its watch's key followed */
	at_write(f->root, "b.slice/inner/cpu.weight", "100\n");
	f->n_calls = 0;
	assert_int_equal(fs_writer_apply_all(w, 2, l, NULL, 5, res), 0);
	assert_int_equal(res[0].drifted, 1);
	assert_int_equal(res[1].drifted, 0);
	assert_int_equal(f->n_calls, 1);
	assert_string_equal(f->calls[0], "cpu.weight=200");
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.weight"), "200");
	assert_int_equal(fs_writer_drift_count(w, 0), 1);
	assert_int_equal(fs_writer_drift_count(w, 1), 0);

	/* a.slice, no longer a tenant, is left as written until restored */
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "50000 100000");
	assert_int_equal(fs_writer_restore(w), 0);
	assert_string_equal(cg_read(f, "b.slice/inner", "cpu.weight"), "100");
	assert_string_equal(cg_read(f, "c.slice", "cpu.max"), "max 100000");
	assert_string_equal(cg_read(f, "a.slice", "cpu.max"), "max 100000");
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
	    T(test_lent_dir),
	    T(test_kept_files),
	    T(test_missing_file),
	    T(test_confinement),
	    T(test_apply_all_many),
	    cmocka_unit_test_setup_teardown(test_own_writes_do_not_overflow, setup_shm, teardown),
	    T(test_unwatched_files_cadence),
	    T(test_steady_state_touches_nothing),
	    T(test_steady_memo),
	    T(test_crashed_run_state),
	    T(test_recreated_cgroup),
	    T(test_drift_corrected),
	    T(test_drift_recheck_safety_net),
	    T(test_set_tenants_carries_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
