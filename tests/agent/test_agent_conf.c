/* SPDX-License-Identifier: MIT */
/*
 * fairshare.conf: a full valid file, defaults, auto capacities, device
 * resolution through a fake sysfs tree, and every refusal with its exact
 * "file:line: message".
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
#include <unistd.h>
#include <cmocka.h>

#include "agent_conf.h"
#include "cgroupfs.h"
#include "agent_testutil.h"

struct fx {
	char *dir;
	char path[512];	  /* the config file */
	char cgroot[512]; /* fake cgroup root */
	char sys[512];	  /* fake sysfs */
	char procfs[512];
	struct fs_conf_env env;
	char err[1024];
};

/*
 * sysfs: vda 254:0 with partition vda1 254:1; vdb 254:16; dm-0 253:0 on vda1;
 * dm-1 253:1 on dm-0 (stacked); dm-2 253:2 on vda and vdb (striped).
 */
static void fake_sysfs(struct fx *f)
{
	const char *s = f->sys;

	at_write(s, "devices/virtual/block/vda/dev", "254:0\n");
	at_write(s, "devices/virtual/block/vda/vda1/dev", "254:1\n");
	at_write(s, "devices/virtual/block/vda/vda1/partition", "1\n");
	at_write(s, "devices/virtual/block/vdb/dev", "254:16\n");
	at_write(s, "devices/virtual/block/dm-0/dev", "253:0\n");
	at_write(s, "devices/virtual/block/dm-0/dm/name", "vg-data\n");
	at_symlink(s, "devices/virtual/block/dm-0/slaves/vda1", "../../vda/vda1");
	at_write(s, "devices/virtual/block/dm-1/dev", "253:1\n");
	at_write(s, "devices/virtual/block/dm-1/dm/name", "crypt\n");
	at_symlink(s, "devices/virtual/block/dm-1/slaves/dm-0", "../../dm-0");
	at_write(s, "devices/virtual/block/dm-2/dev", "253:2\n");
	at_write(s, "devices/virtual/block/dm-2/dm/name", "striped\n");
	at_symlink(s, "devices/virtual/block/dm-2/slaves/vda", "../../vda");
	at_symlink(s, "devices/virtual/block/dm-2/slaves/vdb", "../../vdb");
	at_symlink(s, "dev/block/254:0", "../../devices/virtual/block/vda");
	at_symlink(s, "dev/block/254:1", "../../devices/virtual/block/vda/vda1");
	at_symlink(s, "dev/block/254:16", "../../devices/virtual/block/vdb");
	at_symlink(s, "dev/block/253:0", "../../devices/virtual/block/dm-0");
	at_symlink(s, "dev/block/253:1", "../../devices/virtual/block/dm-1");
	at_symlink(s, "dev/block/253:2", "../../devices/virtual/block/dm-2");
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->dir = at_mkdtemp();
	snprintf(f->path, sizeof(f->path), "%s/fairshare.conf", f->dir);
	snprintf(f->cgroot, sizeof(f->cgroot), "%s/cg", f->dir);
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->dir);
	snprintf(f->procfs, sizeof(f->procfs), "%s/proc", f->dir);
	at_write(f->dir, "cg/cpuset.cpus.effective", "0-3\n");
	at_write(f->dir, "proc/meminfo", "MemTotal:        8000000 kB\nMemFree:  100 kB\n");
	fake_sysfs(f);
	f->env.sysfs_root = f->sys;
	f->env.procfs_root = f->procfs;
	f->env.ncpus_fallback = 3;
	f->env.read_cgroup_root = fs_cgfs_read_root;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	at_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* Writes the config: "@ROOT@" is replaced by the fake cgroup root. */
static void write_conf(struct fx *f, const char *text)
{
	size_t cap = strlen(text) + 8 * (strlen(f->cgroot) + 1) + 1;
	char *buf = malloc(cap), *o = buf;
	const char *p = text, *m;

	assert_non_null(buf);
	while ((m = strstr(p, "@ROOT@"))) {
		assert_true(o + (m - p) + strlen(f->cgroot) < buf + cap);
		o += sprintf(o, "%.*s%s", (int)(m - p), p, f->cgroot);
		p = m + 6;
	}
	strcpy(o, p);
	at_write(f->dir, "fairshare.conf", buf);
	free(buf);
}

static struct fs_conf *load_ok(struct fx *f, const char *text)
{
	struct fs_conf *c = NULL;
	int r;

	write_conf(f, text);
	r = fs_conf_load(f->path, &f->env, &c, f->err, sizeof(f->err));
	if (r < 0)
		fail_msg("unexpected error: %s", f->err);
	assert_non_null(c);
	return c;
}

/* Loads text and expects exactly "PATH:LINE: msg" (or "PATH: msg" when line 0);
 * a msg ending in '*' is a prefix (for messages conf/ini_limits.c owns). */
static void expect_error(struct fx *f, const char *text, int line, const char *msg)
{
	char want[1024];
	struct fs_conf *c = (struct fs_conf *)1;

	write_conf(f, text);
	assert_true(fs_conf_load(f->path, &f->env, &c, f->err, sizeof(f->err)) < 0);
	assert_null(c);
	if (line > 0)
		snprintf(want, sizeof(want), "%s:%d: %s", f->path, line, msg);
	else
		snprintf(want, sizeof(want), "%s: %s", f->path, msg);
	if (want[strlen(want) - 1] == '*') {
		want[strlen(want) - 1] = '\0';
		if (strncmp(f->err, want, strlen(want)) != 0)
			fail_msg("\"%s\" does not start with \"%s\"", f->err, want);
		return;
	}
	assert_string_equal(f->err, want);
}

#define TENANT "[tenant.a]\ncgroup = a.slice\n"

static void test_full(void **state)
{
	struct fx *f = *state;
	struct fs_conf *c = load_ok(f, "[agent]\n"
				       "interval = 500ms\n"
				       "policy = njc\n"
				       "enforce = limits\n"
				       "cgroup_root = @ROOT@\n"
				       "on_exit = keep\n"
				       "socket = /run/x/ctl.sock\n"
				       "state_dir = /run/x\n"
				       "metrics_file = /run/x/metrics.prom\n"
				       "bpf_wait = approx\n"
				       "\n"
				       "[resources]\n"
				       "cpu = 6\n"
				       "memory = 16Gi\n"
				       "memory_reserve = 1Gi\n"
				       "io.root = 254:1 200M 100M 20K 10K\n"
				       "io.data = 254:16 1G 1G\n"
				       "net = 10Gbit\n"
				       "\n"
				       "[tenant.web]\n"
				       "cgroup = /web.slice/\n"
				       "weight = 2\n"
				       "demand = cpu 2, memory 4G, io.root 50M/20M, net 100Mbit\n"
				       "min = cpu 50%, io.data -/10M\n"
				       "max = memory 8Gi, io.root -/-/-/5K\n"
				       "\n"
				       "[tenant.batch]\n"
				       "cgroup = batch.slice/jobs\n");

	assert_int_equal(c->agent.interval_us, 500000);
	assert_int_equal(c->agent.policy, FS_CONF_POLICY_NJC);
	assert_int_equal(c->agent.enforce, FS_ENFORCE_LIMITS);
	assert_int_equal(c->agent.on_exit, FS_ON_EXIT_KEEP);
	assert_int_equal(c->agent.bpf_wait, FS_BPF_WAIT_APPROX);
	assert_string_equal(c->agent.cgroup_root, f->cgroot);
	assert_string_equal(c->agent.socket, "/run/x/ctl.sock");
	assert_string_equal(c->agent.state_dir, "/run/x");
	assert_string_equal(c->agent.metrics_file, "/run/x/metrics.prom");
	assert_true(c->cpu_cores == 6);
	assert_false(c->cpu_auto);
	assert_int_equal(c->memory_total, 16ull << 30);
	assert_int_equal(c->memory_reserve, 1ull << 30);
	assert_true(c->net_rate == 1.25e9);

	/* Partition 254:1 resolves to its disk 254:0. */
	assert_int_equal(c->n_disks, 2);
	assert_string_equal(c->disks[0].name, "root");
	assert_int_equal(c->disks[0].dev.major, 254);
	assert_int_equal(c->disks[0].dev.minor, 0);
	assert_true(c->disks[0].riops == 20000);
	assert_int_equal(c->disks[1].dev.minor, 16);
	assert_true(c->disks[1].riops == 0);
	assert_int_equal(c->disks[1].res[FS_IO_RIOPS], -1);

	/* cpu, memory, root x4, data x2, net */
	assert_int_equal(c->res.n, 9);
	assert_int_equal(c->res_cpu, 0);
	assert_int_equal(c->res_memory, 1);
	assert_int_equal(c->res_net, 8);
	assert_string_equal(c->res.name[2], "io.root.rbps");
	assert_string_equal(c->res.name[5], "io.root.wiops");
	assert_string_equal(c->res.name[7], "io.data.wbps");
	assert_int_equal(fs_resources_find_name(&c->res, "io.data.wbps"), 7);
	assert_true(c->res.capacity[1] == (double)(15ull << 30));
	assert_true(c->res.capacity[6] == 1e9);
	assert_false(fs_res_is_enforced(c->res.kind[8]));
	assert_true(fs_res_is_enforced(c->res.kind[0]));

	assert_int_equal(c->n_tenants, 2);
	{
		const struct fs_conf_tenant *t = &c->tenants[0];

		assert_string_equal(t->name, "web");
		assert_string_equal(t->cgroup, "web.slice");
		assert_true(t->weight == 2);
		assert_true(t->has_demand);
		assert_true(t->demand[0] == 2);
		assert_true(t->demand[1] == (double)(4ull << 30)); /* 4G: GiB, as systemd */
		assert_true(t->demand[2] == 50e6);
		assert_true(t->demand[3] == 20e6);
		assert_true(isnan(t->demand[4]));
		assert_true(t->demand[8] == 12.5e6);
		assert_true(t->min[0] == 3); /* 50% of 6 cores */
		assert_true(isnan(t->min[6]));
		assert_true(t->min[7] == 10e6);
		assert_true(t->max[1] == (double)(8ull << 30));
		assert_true(t->max[5] == 5000);
		assert_true(isnan(t->max[2]));
		assert_int_equal(t->line, 20);
	}
	assert_string_equal(c->tenants[1].cgroup, "batch.slice/jobs");
	assert_true(c->tenants[1].weight == 1);
	assert_false(c->tenants[1].has_demand);
	assert_true(isnan(c->tenants[1].demand[0]));
	assert_int_equal(fs_conf_find_tenant(c, "batch"), 1);
	fs_conf_free(c);
}

static void test_defaults_and_auto(void **state)
{
	struct fx *f = *state;
	struct fs_conf *c = load_ok(f, "[agent]\ncgroup_root = @ROOT@\n" TENANT);

	assert_int_equal(c->agent.interval_us, 1000000);
	assert_int_equal(c->agent.policy, FS_CONF_POLICY_PSDSF);
	assert_int_equal(c->agent.enforce, FS_ENFORCE_AUTO);
	assert_int_equal(c->agent.on_exit, FS_ON_EXIT_RESTORE);
	assert_int_equal(c->agent.bpf_wait, FS_BPF_WAIT_EXACT);
	assert_string_equal(c->agent.socket, "/run/fairshare/control.sock");
	assert_string_equal(c->agent.state_dir, "/run/fairshare");
	assert_string_equal(c->agent.metrics_file, "");
	/* cpu = auto: the root cpuset (0-3). memory = auto: MemTotal. */
	assert_true(c->cpu_auto && c->cpu_cores == 4);
	assert_true(c->memory_auto);
	assert_int_equal(c->memory_total, 8000000ull * 1024);
	assert_int_equal(c->res.n, 2);
	assert_int_equal(c->res_net, -1);
	fs_conf_free(c);

	/* No cpuset file: sysconf (here the env's fallback, 3). */
	at_rmtree(f->cgroot);
	c = load_ok(f, "[agent]\ncgroup_root = @ROOT@\n[resources]\ncpu = auto\n" TENANT);
	assert_true(c->cpu_cores == 3);
	fs_conf_free(c);
}

static void test_resolve_disk(void **state)
{
	struct fx *f = *state;
	struct fs_devnum d;
	char err[256];

	assert_int_equal(fs_conf_resolve_disk(f->sys, "254:0", &d, err, sizeof(err)), 0);
	assert_int_equal(d.major, 254);
	assert_int_equal(d.minor, 0);
	assert_int_equal(fs_conf_resolve_disk(f->sys, "254:1", &d, err, sizeof(err)), 0);
	assert_int_equal(d.minor, 0); /* partition -> disk */
	assert_int_equal(fs_conf_resolve_disk(f->sys, "253:0", &d, err, sizeof(err)), 0);
	assert_int_equal(d.major, 254); /* dm on a partition -> disk */
	assert_int_equal(d.minor, 0);
	assert_int_equal(fs_conf_resolve_disk(f->sys, "253:1", &d, err, sizeof(err)), 0);
	assert_int_equal(d.major, 254); /* dm on dm on a partition */
	assert_int_equal(d.minor, 0);
	assert_int_equal(fs_conf_resolve_disk(f->sys, "253:2", &d, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "device-mapper device 253:2 sits on 2 devices; io.max needs one "
				 "whole disk, name it instead");
	assert_int_equal(fs_conf_resolve_disk(f->sys, "8:0", &d, err, sizeof(err)), -ENODEV);
	assert_int_equal(strncmp(err, "no block device 8:0", 19), 0);
	assert_int_equal(fs_conf_resolve_disk(f->sys, "sda", &d, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'sda' is neither a device path nor MAJ:MIN");
	assert_int_equal(fs_conf_resolve_disk(f->sys, f->procfs, &d, err, sizeof(err)), -ENOTBLK);
}

static void test_cgroup_paths(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(fs_conf_normalize_cgroup("/a//b/", out, sizeof(out)), 0);
	assert_string_equal(out, "a/b");
	assert_int_equal(fs_conf_normalize_cgroup("/", out, sizeof(out)), -EINVAL);
	assert_int_equal(fs_conf_normalize_cgroup("a/../b", out, sizeof(out)), -EINVAL);
	assert_int_equal(fs_conf_normalize_cgroup("./a", out, sizeof(out)), -EINVAL);
	assert_true(fs_conf_cgroup_within("a/b", "a"));
	assert_true(fs_conf_cgroup_within("a", "a"));
	assert_false(fs_conf_cgroup_within("ab", "a"));
	assert_false(fs_conf_cgroup_within("a", "a/b"));
}

#define ROOT "[agent]\ncgroup_root = @ROOT@\n"

static void test_errors_agent(void **state)
{
	struct fx *f = *state;

	expect_error(f, ROOT "bogus = 1\n" TENANT, 3, "unknown key 'bogus' in [agent]");
	expect_error(f, ROOT "interval = 1s\ninterval = 2s\n" TENANT, 4,
		     "duplicate key 'interval' (first set on line 3)");
	expect_error(f, ROOT "interval = 1 sec\n" TENANT, 3,
		     "bad interval '1 sec' (e.g. 1s, 500ms)");
	expect_error(f, ROOT "interval = 10ms\n" TENANT, 3,
		     "interval '10ms' out of range (100ms to 10m)");
	expect_error(f, ROOT "policy = drf\n" TENANT, 3, "unknown policy 'drf' (psdsf or njc)");
	expect_error(f, ROOT "enforce = yes\n" TENANT, 3,
		     "unknown enforce 'yes' (auto, limits, weights or off)");
	expect_error(f, ROOT "on_exit = drop\n" TENANT, 3,
		     "unknown on_exit 'drop' (restore or keep)");
	expect_error(f, ROOT "bpf_wait = fast\n" TENANT, 3,
		     "unknown bpf_wait 'fast' (exact or approx)");
	expect_error(f, ROOT "state_dir = run/x\n" TENANT, 3, "state_dir must be an absolute path");
	expect_error(f, "[agent]\ncgroup_root = sys\n" TENANT, 2,
		     "cgroup_root must be an absolute path");
	expect_error(f, ROOT "[agent]\n" TENANT, 3, "duplicate section [agent]");
	expect_error(f, "cpu = 1\n" ROOT TENANT, 1, "key 'cpu' outside of any section");
	expect_error(f, ROOT "[global]\n" TENANT, 3,
		     "unknown section [global] (expected [agent], [resources], [tenant.NAME], "
		     "[template.NAME], [fleet])");
	expect_error(f, ROOT "policy =\n" TENANT, 3, "empty value for 'policy'");
	{
		struct fs_conf *c = load_ok(f, ROOT "metrics_file =\n" TENANT);

		assert_string_equal(c->agent.metrics_file, "");
		fs_conf_free(c);
	}
	expect_error(f, ROOT "this line has no equals sign\n" TENANT, 3, "syntax error*");
	expect_error(f, ROOT, 0, "no [tenant.NAME] or [template.NAME] section");
}

static void test_errors_resources(void **state)
{
	struct fx *f = *state;

	expect_error(f, ROOT "[resources]\ncpu = two\n" TENANT, 4,
		     "bad cpu 'two' (auto or a number of cores > 0)");
	expect_error(f, ROOT "[resources]\ncpu = 0\n" TENANT, 4,
		     "bad cpu '0' (auto or a number of cores > 0)");
	expect_error(f, ROOT "[resources]\nmemory = 16GiB\nmemory = 1G\n" TENANT, 5,
		     "duplicate key 'memory' (first set on line 4)");
	expect_error(f, ROOT "[resources]\nmemory = 16gb\n" TENANT, 4,
		     "bad memory '16gb' (auto or a size such as 16Gi)");
	expect_error(f, ROOT "[resources]\nmemory = 4G\nmemory_reserve = 4G\n" TENANT, 5,
		     "memory_reserve 4G is not below memory (4294967296 bytes)");
	expect_error(f, ROOT "[resources]\nnet = 10G\n" TENANT, 4,
		     "bad net '10G' (a rate with bit or B, e.g. 10Gbit, 1.25GB)");
	expect_error(f, ROOT "[resources]\nnet = 100Mbps\n" TENANT, 4,
		     "bad net '100Mbps' (a rate with bit or B, e.g. 10Gbit, 1.25GB)");
#define DISK_FORMS                                                                                 \
	"io.d: expected DEVICE BPS [IOPSiops] (one budget for reads and writes) or DEVICE RBPS "   \
	"WBPS [RIOPS WIOPS]"
	expect_error(f, ROOT "[resources]\nio.d = 254:0 100M 1M 5\n" TENANT, 4, DISK_FORMS);
	expect_error(f, ROOT "[resources]\nio.d = 254:0\n" TENANT, 4, DISK_FORMS);
	expect_error(f, ROOT "[resources]\nio.d = 254:0 100Q\n" TENANT, 4,
		     "io.d: bad total rate '100Q' (e.g. 200M, 1.5Gi)");
	expect_error(f, ROOT "[resources]\nio.d = 254:0 100M 0iops\n" TENANT, 4,
		     "io.d: bad IOPS '0iops' (e.g. 8000iops, 8Kiops)");
	/* a third field that is no IOPS budget ("iops" alone, a bad number) is
	 * read as the split form's write rate, and refused as one */
	expect_error(f, ROOT "[resources]\nio.d = 254:0 100M iops\n" TENANT, 4,
		     "io.d: bad write rate 'iops' (e.g. 200M, 1.5Gi)");
	expect_error(f, ROOT "[resources]\nio.d = 254:0 100M 1.5.0iops\n" TENANT, 4,
		     "io.d: bad write rate '1.5.0iops' (e.g. 200M, 1.5Gi)");
	expect_error(f, ROOT "[resources]\nio.d = 254:0 100Q 1M\n" TENANT, 4,
		     "io.d: bad read rate '100Q' (e.g. 200M, 1.5Gi)");
	expect_error(f, ROOT "[resources]\nio.d = 254:0 1M 1M 1Ki 5\n" TENANT, 4,
		     "io.d: bad read IOPS '1Ki' (e.g. 20K)");
	expect_error(f, ROOT "[resources]\nio.d = 253:2 1M 1M\n" TENANT, 4,
		     "io.d: device-mapper device 253:2 sits on 2 devices; io.max needs one "
		     "whole disk, name it instead");
	expect_error(f, ROOT "[resources]\nio.a = 254:0 1M 1M\nio.b = 254:1 1M 1M\n" TENANT, 5,
		     "io.b is the same disk (254:0) as io.a");
	expect_error(f, ROOT "[resources]\nio.a = 254:0 1M 1M\nio.a = 254:16 1M 1M\n" TENANT, 5,
		     "duplicate key 'io.a' (first set on line 4)");
	expect_error(f, ROOT "[resources]\nio.a/b = 254:0 1M 1M\n" TENANT, 4,
		     "bad disk name 'a/b' (letters, digits, '_', '-')");
	expect_error(f, ROOT "[resources]\ndisk = 1\n" TENANT, 4,
		     "unknown key 'disk' in [resources]");
}

#define RES ROOT "[resources]\ncpu = 4\nmemory = 8G\nio.d = 254:0 100M 50M\n"
/* RES is lines 1-6; the tenant header is line 7. */

static void test_errors_tenants(void **state)
{
	struct fx *f = *state;

	expect_error(f, RES "[tenant.a]\nweight = 1\n", 7, "[tenant.a] has no cgroup");
	expect_error(f, RES "[tenant.a]\ncgroup = a\n[tenant.a]\ncgroup = b\n", 9,
		     "duplicate section [tenant.a] (first on line 7)");
	expect_error(f, RES "[tenant.a b]\ncgroup = a\n", 7,
		     "bad tenant name 'a b' (letters, digits, '_', '-')");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ncolor = red\n", 9,
		     "unknown key 'color' in [tenant.a]");
	expect_error(f, RES "[tenant.a]\ncgroup = a/../b\n", 8,
		     "bad cgroup 'a/../b' (a path below cgroup_root, without '.' or '..')");
	expect_error(f, RES "[tenant.a]\ncgroup = /\n", 8,
		     "bad cgroup '/' (a path below cgroup_root, without '.' or '..')");
	expect_error(f, RES "[tenant.a]\ncgroup = x.slice\n[tenant.b]\ncgroup = x.slice/y\n", 10,
		     "cgroup 'x.slice/y' overlaps tenant a's (line 8); tenants must not nest");
	expect_error(f, RES "[tenant.a]\ncgroup = x.slice/y\n[tenant.b]\ncgroup = /x.slice\n", 10,
		     "cgroup 'x.slice' overlaps tenant a's (line 8); tenants must not nest");
	expect_error(f, RES "[tenant.a]\ncgroup = x\n[tenant.b]\ncgroup = x/\n", 10,
		     "cgroup 'x' is also tenant a's (line 8)");
	expect_error(f, RES "[tenant.a]\ncgroup = a\nweight = 0\n", 9,
		     "bad weight '0' (a number from 1e-06 to 1e+06)");
	expect_error(f, RES "[tenant.a]\ncgroup = a\nweight = -1\n", 9,
		     "bad weight '-1' (a number from 1e-06 to 1e+06)");
	/* Issue 16: 1e-20 next to 1 made PS-DSF hand out 5 of 4 cores. */
	expect_error(f, RES "[tenant.a]\ncgroup = a\nweight = 1e-20\n", 9,
		     "bad weight '1e-20' (a number from 1e-06 to 1e+06)");
	expect_error(f, RES "[tenant.a]\ncgroup = a\nweight = 2e6\n", 9,
		     "bad weight '2e6' (a number from 1e-06 to 1e+06)");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = cpu 2 memory 4G\n", 9,
		     "demand: bad amount '2 memory 4G' for cpu");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = gpu 1\n", 9,
		     "demand: unknown resource 'gpu'");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = cpu\n", 9,
		     "demand: expected 'RESOURCE AMOUNT' entries, got 'cpu'");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = cpu 1, cpu 2\n", 9,
		     "demand: 'cpu' given twice");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = memory 4Gb\n", 9,
		     "demand: bad amount '4Gb' for memory");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = io.e 1M/1M\n", 9,
		     "demand: unknown disk 'io.e' (not in [resources])");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = io.d 1M\n", 9,
		     "demand: io.d wants READ/WRITE[/RIOPS/WIOPS], got '1M'");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = io.d 1M/1M/5/5\n", 9,
		     "demand: io.d has no IOPS capacity in [resources]");
	expect_error(f, RES "[tenant.a]\ncgroup = a\ndemand = net 1Gbit\n", 9,
		     "demand: net is not configured in [resources]");
	expect_error(f, RES "[tenant.a]\ncgroup = a\nmax = cpu 0\n", 9, "max: cpu must be > 0");
	expect_error(f, RES "[tenant.a]\ncgroup = a\nmin = cpu 3\nmax = cpu 2\n", 9,
		     "min: cpu is above its max (line 10)");
	expect_error(f, RES "[tenant.a]\ncgroup = a\nmin = memory 9G\n", 9,
		     "min: memory is above the capacity (8.58993e+09)");
	expect_error(f,
		     RES "[tenant.a]\ncgroup = a\nmin = cpu 50%\n"
			 "[tenant.b]\ncgroup = b\nmin = cpu 60%\n",
		     12, "min: the tenants' minimums of cpu add up to more than its capacity (4)");
}

/* One budget for reads and writes: io.NAME = DEVICE BPS [IOPSiops] makes
 * the disk one resource (two with IOPS), and a vector gives it BPS[/IOPS]. */
static void test_shared_disk(void **state)
{
	struct fx *f = *state;
	struct fs_conf *c = load_ok(f, ROOT "[resources]\ncpu = 4\nmemory = 8G\n"
					    "io.d = 254:1 100M\n"
					    "io.e = 254:16 1G 20Kiops\n"
					    "[tenant.a]\ncgroup = a\n"
					    "demand = io.d 40M, io.e 50%/5K\n"
					    "max = io.e -/2K\n");
	const struct fs_conf_tenant *t = &c->tenants[0];

	assert_int_equal(c->n_disks, 2);
	assert_true(c->disks[0].shared && c->disks[1].shared);
	assert_true(c->disks[0].bps == 100e6 && c->disks[0].iops == 0);
	assert_true(c->disks[1].bps == 1e9 && c->disks[1].iops == 20000);
	assert_true(c->disks[0].rbps == 0 && c->disks[0].wbps == 0);
	/* cpu, memory, d.bps, e.bps, e.iops */
	assert_int_equal(c->res.n, 5);
	assert_string_equal(c->res.name[2], "io.d.bps");
	assert_int_equal(c->res.kind[2], FS_RES_IO_BPS);
	assert_int_equal(c->res.dev[2].minor, 0); /* the partition's disk */
	assert_string_equal(c->res.name[4], "io.e.iops");
	assert_int_equal(c->res.kind[4], FS_RES_IO_IOPS);
	assert_true(c->res.capacity[4] == 20000);
	assert_int_equal(c->res.disk[4], 1);
	assert_int_equal(c->disks[1].res[FS_RES_IO_IOPS - FS_RES_IO_RBPS], 4);
	assert_int_equal(c->disks[0].res[FS_RES_IO_IOPS - FS_RES_IO_RBPS], -1);
	assert_int_equal(c->disks[0].res[FS_IO_RBPS], -1);
	assert_true(t->demand[2] == 40e6);
	assert_true(t->demand[3] == 0.5e9);
	assert_true(t->demand[4] == 5000);
	assert_true(isnan(t->max[3]) && t->max[4] == 2000);
	fs_conf_free(c);

	expect_error(f,
		     ROOT "[resources]\nio.d = 254:0 100M\n[tenant.a]\ncgroup = a\n"
			  "demand = io.d 1M/2M/3\n",
		     7, "demand: io.d wants BPS[/IOPS], got '1M/2M/3'");
	expect_error(f,
		     ROOT "[resources]\nio.d = 254:0 100M\n[tenant.a]\ncgroup = a\n"
			  "demand = io.d 1M/3\n",
		     7, "demand: io.d has no IOPS capacity in [resources]");
	expect_error(f,
		     ROOT "[resources]\nio.d = 254:0 100M 5Kiops\n[tenant.a]\ncgroup = a\n"
			  "demand = io.d 1M/5x\n",
		     7, "demand: bad amount '5x' for io.d");
}

/* Thousands of tenants (one per user or job): duplicates and nesting are
 * found wherever they are, with the same message as in a short file. The
 * names are chosen to sort between a cgroup and its child ('.', '-' sort
 * below '/' in plain strcmp). */
static void test_many_tenants(void **state)
{
	struct fx *f = *state;
	size_t n = 3000, len = 0, cap = n * 64 + 512;
	char *text = malloc(cap);
	struct fs_conf *c;

	assert_non_null(text);
	len += (size_t)snprintf(text + len, cap - len, "%s", RES);
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"[tenant.t%zu]\ncgroup = u%zu%s.slice\n", i, i % 1000,
					i < 1000   ? ""
					: i < 2000 ? "-x"
						   : ".y");
	c = load_ok(f, text);
	assert_int_equal(c->n_tenants, n);
	fs_conf_free(c);
	/* the last tenant nests in tenant 5's cgroup: line 7 + 2 * 3000 */
	snprintf(text + len, cap - len, "[tenant.z]\ncgroup = u5.slice/z\n");
	expect_error(f, text, 8 + 2 * (int)n,
		     "cgroup 'u5.slice/z' overlaps tenant t5's (line 18); tenants must not nest");
	/* a duplicate name far from the first */
	snprintf(text + len, cap - len, "[tenant.t7]\ncgroup = other.slice\n");
	expect_error(f, text, 7 + 2 * (int)n, "duplicate section [tenant.t7] (first on line 21)");
	free(text);
}

static void test_errors_ini_limits(void **state)
{
	struct fx *f = *state;
	char text[1024];
	char longname[60];

	/* inih would truncate these silently; conf/ini_limits refuses them. */
	memset(longname, 'n', 50);
	longname[50] = '\0';
	snprintf(text, sizeof(text), ROOT "[tenant.%s]\ncgroup = a\n", longname);
	write_conf(f, text);
	{
		struct fs_conf *c;

		assert_true(fs_conf_load(f->path, &f->env, &c, f->err, sizeof(f->err)) < 0);
		assert_null(c);
		/* The exact text is ini_limits'; we check where it points. */
		snprintf(text, sizeof(text), "%s:3: ", f->path);
		assert_int_equal(strncmp(f->err, text, strlen(text)), 0);
	}
	{
		char line[300];
		struct fs_conf *c;

		memset(line, 'x', 250);
		line[250] = '\0';
		snprintf(text, sizeof(text), ROOT TENANT "demand = cpu 1, %s\n", line);
		write_conf(f, text);
		assert_true(fs_conf_load(f->path, &f->env, &c, f->err, sizeof(f->err)) < 0);
		snprintf(text, sizeof(text), "%s:5: ", f->path);
		assert_int_equal(strncmp(f->err, text, strlen(text)), 0);
	}
}

static void test_missing_file(void **state)
{
	struct fx *f = *state;
	struct fs_conf *c;
	char path[600];

	snprintf(path, sizeof(path), "%s/nope.conf", f->dir);
	assert_int_equal(fs_conf_load(path, &f->env, &c, f->err, sizeof(f->err)), -ENOENT);
	assert_null(c);
	assert_non_null(strstr(f->err, "nope.conf"));
}

/* [fleet] (conf/fleet_conf.h): defaults from the interval, every key, errors. */
static void test_fleet(void **state)
{
	struct fx *f = *state;
	struct fs_conf *c;
	char pass[600];

	c = load_ok(f, ROOT TENANT);
	assert_false(c->fleet.enabled);
	fs_conf_free(c);

	c = load_ok(f, ROOT "interval = 400ms\n" TENANT
			    "[fleet]\nendpoints = http://127.0.0.1:2379\nhost = h1\n");
	assert_true(c->fleet.enabled);
	assert_string_equal(c->fleet.endpoints, "http://127.0.0.1:2379");
	assert_string_equal(c->fleet.prefix, "/fairshare/");
	assert_string_equal(c->fleet.host, "h1");
	assert_int_equal(c->fleet.lease_ttl_s, 5);
	assert_int_equal(c->fleet.max_age_us, 800000); /* 2 periods */
	assert_int_equal(c->fleet.timeout_us, 200000); /* half a period */
	fs_conf_free(c);

	snprintf(pass, sizeof(pass), "%s/etcd.pass", f->dir);
	at_write(f->dir, "etcd.pass", "s3cret\n");
	{
		char text[2048];

		snprintf(text, sizeof(text),
			 ROOT TENANT "[fleet]\nendpoints = https://a:2379, https://b:2379\n"
				     "prefix = /farm\nhost = ci-07.example\nlease_ttl = 3s\n"
				     "max_age = 5s\ntimeout = 300ms\ncacert = /etc/ca.pem\n"
				     "cert = /etc/c.pem\nkey = /etc/k.pem\nuser = fs\n"
				     "password_file = %s\n",
			 pass);
		c = load_ok(f, text);
	}
	assert_string_equal(c->fleet.prefix, "/farm/");
	assert_string_equal(c->fleet.host, "ci-07.example");
	assert_int_equal(c->fleet.lease_ttl_s, 3);
	assert_int_equal(c->fleet.max_age_us, 5000000);
	assert_int_equal(c->fleet.timeout_us, 300000);
	assert_string_equal(c->fleet.cacert, "/etc/ca.pem");
	assert_string_equal(c->fleet.user, "fs");
	assert_string_equal(c->fleet.password, "s3cret");
	fs_conf_free(c);

	expect_error(f, ROOT TENANT "[fleet]\nhost = h1\n", 5,
		     "[fleet] needs endpoints = http://HOST:PORT, ...");
	expect_error(f, ROOT "policy = njc\n" TENANT "[fleet]\nendpoints = http://a:1\n", 6,
		     "[fleet] needs policy = psdsf: the fleet shares by PS-DSF across hosts, and "
		     "njc is defined for one host");
	expect_error(f, ROOT TENANT "[fleet]\nendpoints = http://a:1\nlease_ttl = 1s\n", 7,
		     "lease_ttl must be whole seconds, at least 2s (etcd leases count in seconds)");
	expect_error(f, ROOT TENANT "[fleet]\nendpoints = http://a:1\nhost = a b\n", 7,
		     "bad fleet host name 'a b' (letters, digits, '_', '.', '-')");
	expect_error(f, ROOT TENANT "[fleet]\nendpoints = http://a:1\nmax_age = soon\n", 7,
		     "bad max_age 'soon' (e.g. 5s, 500ms)");
	expect_error(f, ROOT TENANT "[fleet]\nendpoints = http://a:1\nwho = me\n", 7,
		     "unknown key 'who' in [fleet]");
	expect_error(f, ROOT TENANT "[fleet]\nendpoints = http://a:1\npassword_file = /x\n", 7,
		     "password_file needs user");
	expect_error(f, ROOT TENANT "[fleet]\nendpoints = http://a:1\ncacert = ca.pem\n", 7,
		     "cacert must be an absolute path");
	expect_error(f, ROOT TENANT "[fleet]\nendpoints = http://a:1\n[fleet]\n", 7,
		     "duplicate section [fleet]");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_full),
	    T(test_defaults_and_auto),
	    T(test_resolve_disk),
	    T(test_shared_disk),
	    cmocka_unit_test(test_cgroup_paths),
	    T(test_many_tenants),
	    T(test_errors_agent),
	    T(test_errors_resources),
	    T(test_errors_tenants),
	    T(test_errors_ini_limits),
	    T(test_missing_file),
	    T(test_fleet),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
