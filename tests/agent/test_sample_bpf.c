/* SPDX-License-Identifier: MIT */
/*
 * The eBPF sampler's merging logic (agent/sample_bpf.c) over the real
 * cgroupfs sampler on a fake tree, with the fs_bpf calls injected: runqueue
 * wait and net rates from the BPF counters, cgroupfs fields untouched, a
 * counter reset, the io.stat cross-check and its rate limit, the fallback
 * when eBPF cannot load (sampler = auto / bpf), the net attach point; and
 * the estimator's use of the wait (agent/estimate.c): CPU demand rises for
 * a waiting tenant, not for an idle or a running-unhindered one.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "estimate.h"
#include "sample_bpf.h"

#define S_US 1000000ull

/* --- the injected fs_bpf ------------------------------------------------- */

#define MAX_FAKE 4
static struct {
	int open_rc;
	const char *open_err;
	unsigned open_calls, close_calls;
	unsigned programs;
	bool approx_wait;
	char attach[512];
	bool procfs_null;      /* fs_bpf_config.procfs_root was NULL */
	char procfs[512];      /* ... else its value */
	struct fs_bpf *handle; /* what open returned */
	size_t n;
	const char *path[MAX_FAKE];
	struct fs_bpf_counters c[MAX_FAKE];
	int read_rc[MAX_FAKE];
} fb;

static int fake_open(const struct fs_bpf_config *cfg, struct fs_bpf **out, char *err, size_t errlen)
{
	fb.open_calls++;
	fb.programs = cfg->programs;
	fb.approx_wait = cfg->approx_wait;
	snprintf(fb.attach, sizeof(fb.attach), "%s",
		 cfg->net_attach_path ? cfg->net_attach_path : "");
	fb.procfs_null = !cfg->procfs_root;
	snprintf(fb.procfs, sizeof(fb.procfs), "%s", cfg->procfs_root ? cfg->procfs_root : "");
	if (fb.open_rc) {
		snprintf(err, errlen, "%s", fb.open_err);
		return fb.open_rc;
	}
	fb.handle = (struct fs_bpf *)&fb; /* opaque: never dereferenced */
	*out = fb.handle;
	return 0;
}

static void fake_close(struct fs_bpf *b)
{
	assert_ptr_equal(b, fb.handle);
	fb.close_calls++;
}

static int fake_read(struct fs_bpf *b, int dirfd, const char *path, struct fs_bpf_counters *out,
		     char *err, size_t errlen)
{
	assert_ptr_equal(b, fb.handle);
	assert_true(dirfd >= 0);
	for (size_t i = 0; i < fb.n; i++) {
		if (strcmp(fb.path[i], path))
			continue;
		if (fb.read_rc[i]) {
			snprintf(err, errlen, "read %s: %s", path, strerror(-fb.read_rc[i]));
			return fb.read_rc[i];
		}
		*out = fb.c[i];
		return 0;
	}
	snprintf(err, errlen, "%s: no such cgroup", path);
	return -ENOENT;
}

static const struct fs_bpf_ops fake_ops = {fake_open, fake_close, fake_read};

/* --- the log ------------------------------------------------------------- */

static struct {
	unsigned n[8]; /* per priority */
	char last[8][1024];
} lg;

static void capture(void *ctx, int prio, const char *msg)
{
	(void)ctx;
	assert_true(prio >= 0 && prio < 8);
	lg.n[prio]++;
	snprintf(lg.last[prio], sizeof(lg.last[prio]), "%s", msg);
}

/* --- the fake tree ------------------------------------------------------- */

struct fake {
	char *root;
};

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->root = at_mkdtemp();
	memset(&fb, 0, sizeof(fb));
	memset(&lg, 0, sizeof(lg));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	at_rmtree(f->root);
	free(f->root);
	free(f);
	return 0;
}

/* cpu.stat usage and io.stat of disk 8:0 of one cgroup. */
static void write_cg(const char *root, const char *cg, unsigned long long usage_us,
		     unsigned long long rbytes, unsigned long long wbytes)
{
	char path[256], text[256];

	snprintf(path, sizeof(path), "%s/cpu.stat", cg);
	snprintf(text, sizeof(text), "usage_usec %llu\nnr_periods 0\nnr_throttled 0\n", usage_us);
	at_write(root, path, text);
	snprintf(path, sizeof(path), "%s/io.stat", cg);
	snprintf(text, sizeof(text), "8:0 rbytes=%llu wbytes=%llu rios=1 wios=1 dbytes=0 dios=0\n",
		 rbytes, wbytes);
	at_write(root, path, text);
	snprintf(path, sizeof(path), "%s/memory.current", cg);
	at_write(root, path, "4096\n");
}

static void set_bpf(size_t i, const char *path, uint64_t cpu_ns, uint64_t wait_ns, uint64_t rx,
		    uint64_t tx)
{
	fb.path[i] = path;
	fb.c[i].cpu_ns = cpu_ns;
	fb.c[i].wait_ns = wait_ns;
	fb.c[i].pwait_ns = wait_ns / 4; /* a quarter of it before preemptions */
	fb.c[i].rx_bytes = rx;
	fb.c[i].tx_bytes = tx;
	if (i >= fb.n)
		fb.n = i + 1;
}

static void set_bpf_dev(size_t i, uint64_t rbytes, uint64_t wbytes)
{
	fb.c[i].ndevs = 1;
	fb.c[i].devs[0] = (struct fs_bpf_dev_io){8, 0, rbytes, wbytes, 1, 1};
}

static const struct fs_devnum disk80[] = {{8, 0}};

static struct fs_sampler_config config(struct fake *f, size_t n, const char *const *cgs,
				       size_t n_disks)
{
	struct fs_sampler_config cfg = {
	    .cgroup_root = f->root,
	    .n_tenants = n,
	    .cgroups = cgs,
	    .n_disks = n_disks,
	    .disks = disk80,
	    .log = capture,
	};
	return cfg;
}

/* --- tests --------------------------------------------------------------- */

static void test_merge_wait_and_net(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t/a", "t/b"};
	struct fs_sampler_config cfg = config(f, 2, cgs, 0);
	struct fs_sampler_bpf_opts o = {.programs = FS_BPF_SCHED | FS_BPF_NET, .bpf = &fake_ops};
	struct fs_tenant_sample s[2];
	char want[600];
	void *st;

	write_cg(f->root, "t/a", 1000000, 0, 0);
	write_cg(f->root, "t/b", 0, 0, 0);
	set_bpf(0, "t/a", 1000000000, 2000000000, 100, 50);
	set_bpf(1, "t/b", 0, 0, 0, 0);
	assert_int_equal(fs_sampler_bpf_open(&st, &cfg, &o), 0);
	assert_int_equal(fb.programs, FS_BPF_SCHED | FS_BPF_NET);
	assert_false(fb.approx_wait);		       /* bpf_wait = exact, the default */
	snprintf(want, sizeof(want), "%s/t", f->root); /* the tenants' common ancestor */
	assert_string_equal(fb.attach, want);
	assert_true(fb.procfs_null);	     /* not configured: fs_bpf's default */
	assert_int_equal(lg.n[LOG_INFO], 1); /* "loaded" */

	assert_int_equal(fs_sampler_bpf.sample(st, 10 * S_US, s), 0);
	assert_true(s[0].present && s[0].reset);
	assert_true(isnan(s[0].cpu_runq_wait)); /* no baseline yet */
	assert_true(isnan(s[0].net_rx_bps));

	/* 2 s later: a ran 1 core and waited 0.5 core; b stayed idle. */
	write_cg(f->root, "t/a", 3000000, 0, 0);
	set_bpf(0, "t/a", 3000000000, 3000000000, 100 + 4000, 50 + 1000);
	assert_int_equal(fs_sampler_bpf.sample(st, 12 * S_US, s), 0);
	assert_false(s[0].reset);
	assert_true(s[0].cpu_cores == 1.0);	/* from cpu.stat (cgroupfs) */
	assert_true(s[0].mem_current == 4096);	/* cgroupfs */
	assert_true(s[0].cpu_runq_wait == 0.5); /* 1 s of wait in 2 s */
	assert_true(s[0].cpu_runq_wait_preempted == 0.125);
	assert_true(s[0].net_rx_bps == 2000);
	assert_true(s[0].net_tx_bps == 500);
	assert_true(s[1].cpu_runq_wait == 0);
	assert_true(s[1].net_rx_bps == 0);
	assert_int_equal(lg.n[LOG_WARNING], 0);

	fs_sampler_bpf.close(st);
	assert_int_equal(fb.close_calls, 1);
}

/* Only the programs asked for fill their fields. */
static void test_sched_only_leaves_net_unknown(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a"};
	struct fs_sampler_config cfg = config(f, 1, cgs, 0);
	/* programs 0 = sched; bpf_wait = approx */
	struct fs_sampler_bpf_opts o = {.bpf = &fake_ops, .approx_wait = true};
	struct fs_tenant_sample s;
	char procfs[600];
	void *st;

	/* The procfs root is passed down as given. */
	snprintf(procfs, sizeof(procfs), "%s/procfs", f->root);
	cfg.procfs_root = procfs;
	write_cg(f->root, "a", 0, 0, 0);
	set_bpf(0, "a", 0, 0, 10, 10);
	assert_int_equal(fs_sampler_bpf_open(&st, &cfg, &o), 0);
	assert_int_equal(fb.programs, FS_BPF_SCHED);
	assert_false(fb.procfs_null);
	assert_string_equal(fb.procfs, procfs);
	assert_true(fb.approx_wait);
	assert_string_equal(lg.last[LOG_INFO],
			    "sampler: eBPF counters loaded (sched), approximate runqueue wait");
	assert_string_equal(fb.attach, ""); /* no net: nothing attached to a cgroup */
	assert_int_equal(fs_sampler_bpf.sample(st, 1 * S_US, &s), 0);
	set_bpf(0, "a", 0, 250000000, 20, 20);
	assert_int_equal(fs_sampler_bpf.sample(st, 2 * S_US, &s), 0);
	assert_true(s.cpu_runq_wait == 0.25);
	assert_true(isnan(s.net_rx_bps));
	fs_sampler_bpf.close(st);
}

/* A BPF counter going backwards restarts the BPF baseline only. */
static void test_bpf_counter_reset(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a"};
	struct fs_sampler_config cfg = config(f, 1, cgs, 0);
	struct fs_sampler_bpf_opts o = {.bpf = &fake_ops};
	struct fs_tenant_sample s;
	void *st;

	write_cg(f->root, "a", 0, 0, 0);
	set_bpf(0, "a", 0, 5000000000, 0, 0);
	assert_int_equal(fs_sampler_bpf_open(&st, &cfg, &o), 0);
	assert_int_equal(fs_sampler_bpf.sample(st, 1 * S_US, &s), 0);
	write_cg(f->root, "a", 500000, 0, 0);
	set_bpf(0, "a", 0, 1000000000, 0, 0); /* evicted and recounted */
	assert_int_equal(fs_sampler_bpf.sample(st, 2 * S_US, &s), 0);
	assert_false(s.reset);
	assert_true(s.cpu_cores == 0.5); /* cgroupfs flows on */
	assert_true(isnan(s.cpu_runq_wait));
	set_bpf(0, "a", 0, 1100000000, 0, 0);
	assert_int_equal(fs_sampler_bpf.sample(st, 3 * S_US, &s), 0);
	assert_true(fabs(s.cpu_runq_wait - 0.1) < 1e-9);
	fs_sampler_bpf.close(st);
}

/* A read error is logged once per cause; a vanished cgroup is not an error. */
static void test_read_errors(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a", "gone"};
	struct fs_sampler_config cfg = config(f, 2, cgs, 0);
	struct fs_sampler_bpf_opts o = {.bpf = &fake_ops};
	struct fs_tenant_sample s[2];
	void *st;

	write_cg(f->root, "a", 0, 0, 0);
	set_bpf(0, "a", 0, 0, 0, 0);
	fb.read_rc[0] = -EIO;
	assert_int_equal(fs_sampler_bpf_open(&st, &cfg, &o), 0);
	for (uint64_t t = 1; t <= 3; t++) {
		assert_int_equal(fs_sampler_bpf.sample(st, t * S_US, s), 0);
		assert_true(s[0].present);
		assert_true(isnan(s[0].cpu_runq_wait));
		assert_false(s[1].present);
	}
	assert_int_equal(lg.n[LOG_WARNING], 1);
	assert_non_null(strstr(lg.last[LOG_WARNING], "a: Input/output error"));
	fb.read_rc[0] = 0;
	assert_int_equal(fs_sampler_bpf.sample(st, 4 * S_US, s), 0);
	assert_int_equal(fs_sampler_bpf.sample(st, 5 * S_US, s), 0);
	assert_true(s[0].cpu_runq_wait == 0);
	fs_sampler_bpf.close(st);
}

/*
 * io.stat cross-check: reads must agree both ways, BPF writes may be below
 * io.stat (writeback) but not above; at most one warning per interval.
 */
static void test_blk_cross_check(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a"};
	struct fs_sampler_config cfg = config(f, 1, cgs, 1);
	struct fs_sampler_bpf_opts o = {
	    .programs = FS_BPF_SCHED | FS_BPF_BLK, .bpf = &fake_ops, .warn_interval_us = 10 * S_US};
	const uint64_t M = 1 << 20;
	struct fs_tenant_sample s;
	void *st;

	write_cg(f->root, "a", 0, 0, 0);
	set_bpf(0, "a", 0, 0, 0, 0);
	set_bpf_dev(0, 0, 0);
	assert_int_equal(fs_sampler_bpf_open(&st, &cfg, &o), 0);
	assert_int_equal(fs_sampler_bpf.sample(st, 1 * S_US, &s), 0);

	/* t=2: agree (10 MiB read both), writes only in io.stat: no warning */
	write_cg(f->root, "a", 0, 10 * M, 50 * M);
	set_bpf_dev(0, 10 * M, 0);
	assert_int_equal(fs_sampler_bpf.sample(st, 2 * S_US, &s), 0);
	assert_true(s.io[0].rbps == 10.0 * M); /* io.stat stays what is reported */
	assert_int_equal(lg.n[LOG_WARNING], 0);

	/* t=3: BPF saw 2 MiB of reads, io.stat 10 MiB: warning */
	write_cg(f->root, "a", 0, 20 * M, 50 * M);
	set_bpf_dev(0, 12 * M, 0);
	assert_int_equal(fs_sampler_bpf.sample(st, 3 * S_US, &s), 0);
	assert_int_equal(lg.n[LOG_WARNING], 1);
	assert_non_null(strstr(lg.last[LOG_WARNING], "disk 8:0"));
	assert_non_null(strstr(lg.last[LOG_WARNING], "read 2097152 vs 10485760"));
	assert_true(s.io[0].rbps == 10.0 * M);

	/* t=4: BPF writes above io.stat: disagreement, but rate-limited */
	write_cg(f->root, "a", 0, 20 * M, 50 * M);
	set_bpf_dev(0, 12 * M, 8 * M);
	assert_int_equal(fs_sampler_bpf.sample(st, 4 * S_US, &s), 0);
	assert_int_equal(lg.n[LOG_WARNING], 1);

	/* t=14: still disagreeing, interval over: logged, counting the one skipped */
	write_cg(f->root, "a", 0, 20 * M, 50 * M);
	set_bpf_dev(0, 12 * M, 16 * M);
	assert_int_equal(fs_sampler_bpf.sample(st, 14 * S_US, &s), 0);
	assert_int_equal(lg.n[LOG_WARNING], 2);
	assert_non_null(strstr(lg.last[LOG_WARNING], "1 more since"));

	/* t=30: within tolerance (1 MiB absolute): no warning */
	write_cg(f->root, "a", 0, 20 * M + 512 * 1024, 50 * M);
	set_bpf_dev(0, 12 * M, 16 * M);
	assert_int_equal(fs_sampler_bpf.sample(st, 30 * S_US, &s), 0);
	assert_int_equal(lg.n[LOG_WARNING], 2);
	fs_sampler_bpf.close(st);
}

/* sampler = auto: eBPF cannot load -> one warning with the reason, cgroupfs
 * data flows, nothing of the failed load is kept. */
static void test_fallback_auto(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a"};
	struct fs_sampler_config cfg = config(f, 1, cgs, 0);
	struct fs_sampler_bpf_opts o = {.bpf = &fake_ops};
	const struct fs_sampler_ops *ops = NULL;
	struct fs_tenant_sample s;
	void *st;

	fb.open_rc = -EPERM;
	fb.open_err = "load sched: Operation not permitted (needs CAP_BPF)";
	write_cg(f->root, "a", 0, 0, 0);
	assert_int_equal(fs_sampler_open_pick(FS_SAMPLER_AUTO, &cfg, &o, &ops, &st), 0);
	assert_ptr_equal(ops, &fs_sampler_cgroupfs);
	assert_int_equal(fb.open_calls, 1);
	assert_int_equal(lg.n[LOG_WARNING], 1);
	assert_int_equal(lg.n[LOG_ERR], 0);
	assert_non_null(strstr(lg.last[LOG_WARNING], "needs CAP_BPF"));
	assert_non_null(strstr(lg.last[LOG_WARNING], "using cgroupfs"));
	for (uint64_t t = 1; t <= 3; t++) {
		write_cg(f->root, "a", t * 500000, 0, 0);
		assert_int_equal(ops->sample(st, t * S_US, &s), 0);
	}
	assert_true(s.cpu_cores == 0.5);
	assert_true(isnan(s.cpu_runq_wait));
	assert_int_equal(lg.n[LOG_WARNING], 1); /* once */
	ops->close(st);
	assert_int_equal(fb.close_calls, 0); /* never opened */
}

/* sampler = bpf: the failure is an error; sampler = cgroupfs: no eBPF at all. */
static void test_pick_bpf_and_cgroupfs(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a"};
	struct fs_sampler_config cfg = config(f, 1, cgs, 0);
	struct fs_sampler_bpf_opts o = {.bpf = &fake_ops};
	const struct fs_sampler_ops *ops = NULL;
	void *st = (void *)1;

	write_cg(f->root, "a", 0, 0, 0);
	fb.open_rc = -ENOENT;
	fb.open_err = "no kernel BTF";
	assert_int_equal(fs_sampler_open_pick(FS_SAMPLER_BPF, &cfg, &o, &ops, &st), -ENOENT);
	assert_null(st);
	assert_int_equal(lg.n[LOG_ERR], 1);
	assert_non_null(strstr(lg.last[LOG_ERR], "no kernel BTF"));

	assert_int_equal(fs_sampler_open_pick(FS_SAMPLER_CGROUPFS, &cfg, &o, &ops, &st), 0);
	assert_ptr_equal(ops, &fs_sampler_cgroupfs);
	assert_int_equal(fb.open_calls, 1); /* only the bpf attempt above */
	ops->close(st);

	fb.open_rc = 0;
	assert_int_equal(fs_sampler_open_pick(FS_SAMPLER_AUTO, &cfg, &o, &ops, &st), 0);
	assert_ptr_equal(ops, &fs_sampler_bpf);
	ops->close(st);
	assert_int_equal(fb.close_calls, 1);
}

/* The built-in library: absent in a build without eBPF, and then refused. */
static void test_default_ops(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a"};
	struct fs_sampler_config cfg = config(f, 1, cgs, 0);
	void *st;

#ifdef FS_HAVE_BPF
	assert_non_null(fs_bpf_ops_default);
	(void)cfg;
	(void)st;
#else
	assert_null(fs_bpf_ops_default);
	assert_int_equal(fs_sampler_bpf_open(&st, &cfg, NULL), -EOPNOTSUPP);
	assert_non_null(strstr(lg.last[LOG_ERR], "without eBPF"));
#endif
}

static void test_common_ancestor(void **state)
{
	struct fake *f = *state;
	char out[512], want[512];
	struct {
		const char *cgs[3];
		size_t n;
		const char *want; /* relative; "" = the root */
	} cases[] = {
	    {{"t/a", "t/b"}, 2, "t"},
	    {{"t/a/x", "t/a/y", "t/b"}, 3, "t"},
	    {{"t/ab", "t/a"}, 2, "t"}, /* components, not characters */
	    {{"t/a", "u/b"}, 2, ""},
	    {{"t/a/x"}, 1, "t/a/x"},
	    {{"t/a/x", "t/a/y"}, 2, "t/a"},
	    {{"v/w/x", "v/w/y"}, 2, "v"}, /* v/w does not exist: deepest existing */
	    {{"z/a", "z/b"}, 2, ""},	  /* nothing exists */
	};

	at_mkdir(f->root, "t/a/x");
	at_mkdir(f->root, "t/a/y");
	at_mkdir(f->root, "t/b");
	at_mkdir(f->root, "t/ab");
	at_mkdir(f->root, "u/b");
	at_mkdir(f->root, "v");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fs_sampler_config cfg = config(f, cases[i].n, cases[i].cgs, 0);

		assert_int_equal(fs_sampler_bpf_common_ancestor(&cfg, out, sizeof(out)), 0);
		snprintf(want, sizeof(want), "%s%s%s", f->root, cases[i].want[0] ? "/" : "",
			 cases[i].want);
		assert_string_equal(out, want);
	}
	struct fs_sampler_config cfg = config(f, 2, cases[0].cgs, 0);
	assert_int_equal(fs_sampler_bpf_common_ancestor(&cfg, out, 8), -ENAMETOOLONG);
}

/* --- the estimator's use of the wait ------------------------------------- */

static void cpu_only(struct fs_resources *res, double cores)
{
	memset(res, 0, sizeof(*res));
	assert_int_equal(
	    fs_resources_add(res, FS_RES_CPU, NULL, cores, -1, (struct fs_devnum){0, 0}), 0);
	assert_int_equal(
	    fs_resources_add(res, FS_RES_MEMORY, NULL, 1e9, -1, (struct fs_devnum){0, 0}), 1);
}

static void estimate(const struct fs_resources *res, double usage, double mem, double wait,
		     struct est_state *st)
{
	struct est_config cfg;
	struct est_sample s;

	est_config_default(&cfg);
	est_sample_init(&s);
	s.usage[0] = usage;
	s.usage[1] = mem;
	s.cpu_wait = wait;
	est_state_init(st);
	est_update(res, &cfg, NULL, st, &s, st);
}

/*
 * Two burners sharing one core: each runs 0.5 and waits 0.5, i.e. one
 * runnable thread on average: demand 1 core. An idle tenant with no wait
 * and a tenant running unhindered keep demand = usage; unknown wait (NaN,
 * cgroupfs) changes nothing; the capacity bounds it.
 */
static void test_estimate_wait(void **state)
{
	struct fs_resources res;
	struct est_state st;
	char why[96];

	(void)state;
	cpu_only(&res, 4);
	estimate(&res, 0.5, 1e6, 0.5, &st); /* waiting */
	assert_true(fabs(st.demand[0] - 1.0) < 1e-12);
	assert_true(st.demand[1] == 1e6);   /* memory not scaled by the wait */
	assert_true(est_probe(&st) == 1.0); /* contention is not a limit: no probe */
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "cpu-wait");

	estimate(&res, 0, 1e6, 0, &st);	       /* idle */
	assert_true(st.demand[0] == 4 * 1e-3); /* the floor */
	assert_string_equal(est_reason_str(st.reasons, why, sizeof(why)), "usage");

	estimate(&res, 1.0, 1e6, 0.0, &st); /* running, never waiting */
	assert_true(st.demand[0] == 1.0);

	estimate(&res, 1.0, 1e6, NAN, &st); /* cgroupfs: unknown */
	assert_true(st.demand[0] == 1.0);
	assert_false(st.reasons & EST_CPU_WAIT);

	estimate(&res, 1.0, 1e6, 0.04, &st); /* below wait_min: noise */
	assert_true(st.demand[0] == 1.0);

	estimate(&res, 2.0, 1e6, 6.0, &st); /* 8 runnable on a 4-core host */
	assert_true(st.demand[0] == 4.0);
}

/*
 * Contention also shows as PSI cpu "some": with the wait measured it no
 * longer probes every resource (the wait sets the CPU demand); without it
 * (cgroupfs) PSI cpu still probes.
 */
static void test_estimate_wait_replaces_psi_cpu(void **state)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_sample s;
	struct est_state st;

	(void)state;
	cpu_only(&res, 2);
	est_config_default(&cfg);
	est_sample_init(&s);
	est_state_init(&st);
	s.usage[0] = 1.0;
	s.usage[1] = 1e6;
	s.psi_cpu = 50;
	s.cpu_wait = 1.0;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(est_probe(&st) == 1.0);
	assert_true(st.demand[0] == 2.0);
	assert_true(st.demand[1] == 1e6);
	assert_int_equal(st.reasons, EST_CPU_WAIT);

	s.cpu_wait = NAN;
	est_state_init(&st);
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(est_probe(&st) == 1.5);
	assert_true(st.reasons & EST_PSI_CPU);
	assert_true(st.demand[0] == 1.5);
	assert_true(st.demand[1] == 1e6); /* only the held resource is probed */
}

/* Held back (throttled): the probe sets the CPU demand, not the wait (it
 * includes the time our cpu.max held the threads: estimate.h). Released,
 * the larger of the decaying probe * usage and usage + wait. */
static void test_estimate_wait_and_probe(void **state)
{
	struct fs_resources res;
	struct est_config cfg;
	struct est_sample s;
	struct est_state st;
	double declared[FS_MAX_RES];

	(void)state;
	cpu_only(&res, 8);
	est_config_default(&cfg);
	est_sample_init(&s);
	est_state_init(&st);
	s.usage[0] = 1.0;
	s.usage[1] = 1e6;
	s.cpu_throttled_delta = 3;
	s.cpu_wait = 0.2;
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.demand[0] == 1.5);
	assert_false(st.reasons & EST_CPU_WAIT);
	s.cpu_wait = 2.0; /* throttled: still the probe, 2.25 * 1.0 */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.demand[0] == 2.25);
	assert_false(st.reasons & EST_CPU_WAIT);
	assert_true(st.demand[1] == 1e6); /* the probe scales only the held cpu */
	s.cpu_throttled_delta = 0;	  /* released: 3.0 > probe 1.625 * 1.0 */
	est_update(&res, &cfg, NULL, &st, &s, &st);
	assert_true(st.demand[0] == 3.0);
	assert_true(st.reasons & EST_CPU_WAIT);

	/* a declared demand wins over the wait */
	for (size_t r = 0; r < FS_MAX_RES; r++)
		declared[r] = NAN;
	declared[0] = 0.5;
	est_update(&res, &cfg, declared, &st, &s, &st);
	assert_true(st.demand[0] == 0.5);
	assert_false(st.reasons & EST_CPU_WAIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_merge_wait_and_net, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sched_only_leaves_net_unknown, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bpf_counter_reset, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_blk_cross_check, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fallback_auto, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pick_bpf_and_cgroupfs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_default_ops, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_common_ancestor, setup, teardown),
	    cmocka_unit_test(test_estimate_wait),
	    cmocka_unit_test(test_estimate_wait_replaces_psi_cpu),
	    cmocka_unit_test(test_estimate_wait_and_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
