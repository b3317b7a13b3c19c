/* SPDX-License-Identifier: MIT */
/*
 * Stat-file parsers (formats copied from a 6.1 kernel's cgroup2, see
 * shared/notes/vm-and-bpf-measurements.md section 2) and the cgroupfs sampler
 * against a fake tree: rates, counter reset, missing cgroup, missing PSI,
 * and its kept-open files: fresh reads every period, a recreated cgroup, a
 * missing file probed only now and then, the fd budget, no fd leaks;
 * memory.events read only when inotify says it changed; an error that
 * holds every period logged once, then once a minute.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "list_match.h"
#include "sample.h"
#include "host_mem.h"
#include "sample_parse.h"

static const char cpu_stat_61[] = "usage_usec 856696\n"
				  "user_usec 850000\n"
				  "system_usec 6696\n"
				  "core_sched.force_idle_usec 0\n"
				  "nr_periods 42\n"
				  "nr_throttled 41\n"
				  "throttled_usec 3212345\n"
				  "nr_bursts 0\n"
				  "burst_usec 0\n";

static void test_cpu_stat(void **state)
{
	struct fs_cpu_stat s;

	(void)state;
	assert_int_equal(fs_parse_cpu_stat(cpu_stat_61, &s), 0);
	assert_int_equal(s.usage_usec, 856696);
	assert_int_equal(s.user_usec, 850000);
	assert_int_equal(s.system_usec, 6696);
	assert_int_equal(s.nr_periods, 42);
	assert_int_equal(s.nr_throttled, 41);
	assert_int_equal(s.throttled_usec, 3212345);
	assert_int_equal(s.have, FS_CPU_USAGE | FS_CPU_USER | FS_CPU_SYSTEM | FS_CPU_NR_PERIODS |
				     FS_CPU_NR_THROTTLED | FS_CPU_THROTTLED);
	/* Without the cpu controller only the first three keys exist. */
	assert_int_equal(fs_parse_cpu_stat("usage_usec 5\nuser_usec 3\nsystem_usec 2\n", &s), 0);
	assert_int_equal(s.have, FS_CPU_USAGE | FS_CPU_USER | FS_CPU_SYSTEM);
	assert_int_equal(s.nr_throttled, 0);
	/* No trailing newline is fine; a bad number is not. */
	assert_int_equal(fs_parse_cpu_stat("usage_usec 5", &s), 0);
	assert_int_equal(s.usage_usec, 5);
	assert_int_equal(fs_parse_cpu_stat("usage_usec x5\n", &s), -EINVAL);
	assert_int_equal(fs_parse_cpu_stat("usage_usec 5x\n", &s), -EINVAL);
	assert_int_equal(fs_parse_cpu_stat("usage_usec -5\n", &s), -EINVAL);
}

static void test_memory_stat(void **state)
{
	struct fs_memory_stat s;
	const char text[] = "anon 16777216\nfile 4096\nkernel 8192\nkernel_stack 16384\n"
			    "pagetables 0\nshmem 0\nfile_mapped 0\n"
			    "inactive_anon 16769024\nactive_anon 8192\n"
			    "inactive_file 4096\nactive_file 0\nunevictable 0\n"
			    "workingset_refault_anon 0\n";

	(void)state;
	assert_int_equal(fs_parse_memory_stat(text, &s), 0);
	assert_int_equal(s.anon, 16777216);
	assert_int_equal(s.file, 4096);
	assert_int_equal(s.inactive_anon, 16769024);
	assert_int_equal(s.active_anon, 8192);
	assert_int_equal(s.inactive_file, 4096);
	assert_int_equal(s.active_file, 0);
	assert_int_equal(s.have, FS_MEM_ANON | FS_MEM_FILE | FS_MEM_ACTIVE_ANON |
				     FS_MEM_INACTIVE_ANON | FS_MEM_ACTIVE_FILE |
				     FS_MEM_INACTIVE_FILE | FS_MEM_REFAULT_ANON);
	assert_int_equal(s.workingset_refault_anon, 0);
	assert_int_equal(fs_parse_memory_stat("workingset_refault_anon 3\n"
					      "workingset_refault_file 40\n"
					      "workingset_refault 9\n",
					      &s),
			 0);
	assert_int_equal(s.have, FS_MEM_REFAULT_ANON | FS_MEM_REFAULT_FILE);
	assert_int_equal(s.workingset_refault_anon, 3);
	assert_int_equal(s.workingset_refault_file, 40);
	/* "file" must not match "file_mapped" and vice versa. */
	assert_int_equal(fs_parse_memory_stat("file_mapped 9\n", &s), 0);
	assert_int_equal(s.have, 0);
	assert_int_equal(s.file, 0);
}

/* /proc/meminfo as 6.1 prints it: kB values to bytes, other lines ignored. */
static void test_meminfo(void **state)
{
	struct fs_meminfo m;
	const char text[] = "MemTotal:        1004532 kB\n"
			    "MemFree:          712340 kB\n"
			    "MemAvailable:     851200 kB\n"
			    "Buffers:               0 kB\n"
			    "HugePages_Total:       0\n";

	(void)state;
	assert_int_equal(fs_parse_meminfo(text, &m), 0);
	assert_int_equal(m.have, FS_MI_TOTAL | FS_MI_AVAILABLE);
	assert_true(m.total == 1004532ull * 1024);
	assert_true(m.available == 851200ull * 1024);
	/* A kernel before 3.14 has no MemAvailable: not there, not an error. */
	assert_int_equal(fs_parse_meminfo("MemTotal: 10 kB\nMemFree: 5 kB\n", &m), 0);
	assert_int_equal(m.have, FS_MI_TOTAL);
	assert_int_equal(fs_parse_meminfo("MemAvailable: x kB\n", &m), -EINVAL);
	assert_int_equal(fs_parse_meminfo("MemAvailable: 5 MB\n", &m), -EINVAL);
	assert_int_equal(fs_parse_meminfo(NULL, &m), -EINVAL);
}

/* The host's memory from a fake procfs: meminfo and pressure/memory. */
static void test_host_mem(void **state)
{
	char *root = at_mkdtemp();
	struct fs_host_mem h;

	(void)state;
	assert_int_equal(fs_host_mem_read(root, &h), -ENOENT);
	assert_true(isnan(h.available) && isnan(h.psi_some_avg10));
	at_write(root, "meminfo", "MemTotal: 2048 kB\nMemAvailable: 1024 kB\n");
	assert_int_equal(fs_host_mem_read(root, &h), 0);
	assert_true(h.total == 2048 * 1024.0);
	assert_true(h.available == 1024 * 1024.0);
	assert_true(isnan(h.psi_some_avg10)); /* no PSI */
	at_write(root, "pressure/memory",
		 "some avg10=12.50 avg60=1.00 avg300=0.00 total=99\n"
		 "full avg10=3.25 avg60=0.00 avg300=0.00 total=9\n");
	assert_int_equal(fs_host_mem_read(root, &h), 0);
	assert_true(h.psi_some_avg10 == 12.5);
	assert_true(h.psi_full_avg10 == 3.25);
	at_write(root, "meminfo", "MemTotal: 2048 kB\n");
	assert_int_equal(fs_host_mem_read(root, &h), -EINVAL);
	at_rmtree(root);
	free(root);
}

static void test_memory_events(void **state)
{
	struct fs_memory_events e;

	(void)state;
	assert_int_equal(fs_parse_memory_events("low 0\nhigh 17\nmax 3\noom 1\noom_kill 1\n"
						"oom_group_kill 0\n",
						&e),
			 0);
	assert_int_equal(e.high, 17);
	assert_int_equal(e.max, 3);
	assert_int_equal(e.oom, 1);
	assert_int_equal(e.oom_kill, 1);
	assert_true(e.have & FS_MEV_OOM_KILL);
}

static void test_io_stat(void **state)
{
	const char text[] = "253:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0\n"
			    "254:0 rbytes=8388608 wbytes=8388608 rios=8 wios=8 dbytes=0 dios=0\n"
			    "254:16 rbytes=5 wios=6\n";
	struct fs_io_stat s;

	(void)state;
	assert_int_equal(fs_parse_io_stat(text, (struct fs_devnum){254, 0}, &s), 0);
	assert_true(s.found);
	assert_int_equal(s.rbytes, 8388608);
	assert_int_equal(s.wbytes, 8388608);
	assert_int_equal(s.rios, 8);
	assert_int_equal(s.wios, 8);
	assert_int_equal(s.have, FS_IOS_RBYTES | FS_IOS_WBYTES | FS_IOS_RIOS | FS_IOS_WIOS);
	/* 254:0 must not match 254:16, nor 253:0. */
	assert_int_equal(fs_parse_io_stat(text, (struct fs_devnum){253, 0}, &s), 0);
	assert_int_equal(s.rbytes, 1);
	/* Missing fields. */
	assert_int_equal(fs_parse_io_stat(text, (struct fs_devnum){254, 16}, &s), 0);
	assert_true(s.found);
	assert_int_equal(s.have, FS_IOS_RBYTES | FS_IOS_WIOS);
	assert_int_equal(s.rbytes, 5);
	assert_int_equal(s.wbytes, 0);
	/* No line: the kernel omits idle devices. */
	assert_int_equal(fs_parse_io_stat(text, (struct fs_devnum){8, 0}, &s), 0);
	assert_false(s.found);
	assert_int_equal(s.rbytes, 0);
	assert_int_equal(fs_parse_io_stat("", (struct fs_devnum){8, 0}, &s), 0);
	assert_false(s.found);
	/* Garbage. */
	assert_int_equal(fs_parse_io_stat("8:0 rbytes\n", (struct fs_devnum){8, 0}, &s), -EINVAL);
	assert_int_equal(fs_parse_io_stat("8:0 rbytes=1x\n", (struct fs_devnum){8, 0}, &s),
			 -EINVAL);
	assert_int_equal(fs_parse_io_stat("sda rbytes=1\n", (struct fs_devnum){8, 0}, &s), -EINVAL);
}

static void test_pressure(void **state)
{
	struct fs_pressure p;

	(void)state;
	assert_int_equal(fs_parse_pressure("some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\n"
					   "full avg10=0.75 avg60=0.00 avg300=0.00 total=654\n",
					   &p),
			 0);
	assert_true(p.some.present);
	assert_true(p.some.avg10 == 1.5);
	assert_true(p.some.avg60 == 0.25);
	assert_int_equal(p.some.total, 123456);
	assert_true(p.full.present);
	assert_true(p.full.avg10 == 0.75);
	assert_int_equal(p.full.total, 654);
	/* cpu.pressure before 5.13 has no full line. */
	assert_int_equal(fs_parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=9\n", &p),
			 0);
	assert_true(p.some.present);
	assert_false(p.full.present);
	assert_int_equal(p.some.total, 9);
	/* Missing some, missing a field, bad number. */
	assert_int_equal(fs_parse_pressure("full avg10=0.00 avg60=0.00 avg300=0.00 total=9\n", &p),
			 -EINVAL);
	assert_int_equal(fs_parse_pressure("some avg10=0.00 avg60=0.00 total=9\n", &p), -EINVAL);
	assert_int_equal(fs_parse_pressure("some avg10=x avg60=0.00 avg300=0.00 total=9\n", &p),
			 -EINVAL);
}

/* ---- the sampler on a fake tree ---------------------------------------- */

struct fake {
	char *root;
};

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));

	f->root = at_mkdtemp();
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

static void write_cpu_stat(const char *root, const char *cg, unsigned long long usage,
			   unsigned long long thr_us)
{
	char path[256], text[512];

	snprintf(path, sizeof(path), "%s/cpu.stat", cg);
	snprintf(text, sizeof(text),
		 "usage_usec %llu\nuser_usec 0\nsystem_usec 0\nnr_periods 10\n"
		 "nr_throttled 2\nthrottled_usec %llu\n",
		 usage, thr_us);
	at_write(root, path, text);
}

static void write_counters(const char *root, const char *cg, unsigned long long usage,
			   unsigned long long thr_us, unsigned long long rbytes,
			   unsigned long long oom_kill, unsigned long long psi_total, bool full)
{
	char path[256], text[512];

	write_cpu_stat(root, cg, usage, thr_us);
	snprintf(path, sizeof(path), "%s/io.stat", cg);
	snprintf(text, sizeof(text),
		 "8:0 rbytes=%llu wbytes=0 rios=%llu wios=0 dbytes=0 dios=0\n"
		 "254:0 rbytes=7 wbytes=7 rios=7 wios=7 dbytes=0 dios=0\n",
		 rbytes, rbytes / 4096);
	at_write(root, path, text);
	snprintf(path, sizeof(path), "%s/memory.events", cg);
	snprintf(text, sizeof(text), "low 0\nhigh 0\nmax 0\noom %llu\noom_kill %llu\n", oom_kill,
		 oom_kill);
	at_write(root, path, text);
	snprintf(path, sizeof(path), "%s/memory.pressure", cg);
	snprintf(text, sizeof(text), "some avg10=2.00 avg60=0.00 avg300=0.00 total=%llu\n%s",
		 psi_total, full ? "full avg10=1.00 avg60=0.00 avg300=0.00 total=10\n" : "");
	at_write(root, path, text);
	snprintf(path, sizeof(path), "%s/memory.current", cg);
	at_write(root, path, "1048576\n");
	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	at_write(root, path, "anon 1000\nfile 48576\nactive_anon 600\ninactive_anon 400\n");
}

static void open_sampler(struct fake *f, void **st, size_t n, const char *const *cgs)
{
	static const struct fs_devnum disks[] = {{8, 0}, {9, 0}};
	struct fs_sampler_config cfg = {
	    .cgroup_root = f->root,
	    .n_tenants = n,
	    .cgroups = cgs,
	    .n_disks = 2,
	    .disks = disks,
	};

	assert_int_equal(fs_sampler_cgroupfs.open(st, &cfg), 0);
}

static void test_sampler_rates(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a.slice/t1"};
	struct fs_tenant_sample s;
	void *st;

	write_counters(f->root, cgs[0], 1000000, 0, 0, 0, 100, true);
	open_sampler(f, &st, 1, cgs);

	assert_int_equal(fs_sampler_cgroupfs.sample(st, 10000000, &s), 0);
	assert_true(s.present);
	assert_true(s.reset); /* first sample: no baseline */
	assert_true(isnan(s.cpu_cores));
	assert_true(s.mem_current == 1048576);
	assert_true(s.mem_anon == 1000);
	assert_true(isnan(s.mem_active_file)); /* key absent */
	assert_true(s.psi_mem.some_avg10 == 2.0);
	assert_true(isnan(s.psi_mem.some_us));
	assert_true(isnan(s.psi_cpu.some_avg10)); /* no cpu.pressure file */
	assert_true(isnan(s.net_rx_bps));	  /* cgroupfs never knows */
	assert_true(isnan(s.cpu_runq_wait));

	/* 2 s later: 3 CPU-seconds, 8 MiB read, one OOM kill. */
	write_counters(f->root, cgs[0], 4000000, 500000, 8388608, 1, 400, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 12000000, &s), 0);
	assert_false(s.reset);
	assert_true(s.cpu_cores == 1.5);
	assert_true(s.cpu_throttled_us == 500000);
	assert_true(s.cpu_nr_throttled == 0);
	assert_true(s.io[0].rbps == 4194304);
	assert_true(s.io[0].riops == 1024);
	assert_true(s.io[0].wbps == 0);
	assert_true(s.io[1].rbps == 0); /* 9:0 has no line: idle */
	assert_true(s.mem_ev_oom_kill == 1);
	assert_true(s.mem_ev_high == 0);
	assert_true(s.psi_mem.some_us == 300);
	assert_true(s.psi_mem.full_us == 0);
	assert_true(isnan(s.mem_refault_bytes)); /* no refault keys */
	fs_sampler_cgroupfs.close(st);
}

/* Refaults: the period's increase of workingset_refault_anon + _file, in
 * bytes; unknown on the first sample. */
static void test_sampler_refaults(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_tenant_sample s;
	double page = (double)sysconf(_SC_PAGESIZE);
	void *st;

	write_counters(f->root, cgs[0], 1000000, 0, 0, 0, 100, true);
	at_write(f->root, "t1/memory.stat",
		 "anon 8192\nworkingset_refault_anon 10\nworkingset_refault_file 100\n");
	open_sampler(f, &st, 1, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	assert_true(isnan(s.mem_refault_bytes));
	at_write(f->root, "t1/memory.stat",
		 "anon 8192\nworkingset_refault_anon 12\nworkingset_refault_file 150\n");
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, &s), 0);
	assert_false(s.reset);
	assert_true(s.mem_refault_bytes == 52 * page);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 3000000, &s), 0);
	assert_true(s.mem_refault_bytes == 0);
	fs_sampler_cgroupfs.close(st);
}

static void test_sampler_counter_reset(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_tenant_sample s;
	void *st;

	write_counters(f->root, cgs[0], 5000000, 0, 4096, 0, 100, false);
	open_sampler(f, &st, 1, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	write_counters(f->root, cgs[0], 6000000, 0, 8192, 0, 200, false);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, &s), 0);
	assert_false(s.reset);
	assert_true(s.cpu_cores == 1.0);
	assert_true(isnan(s.psi_mem.full_avg10)); /* no full line */
	assert_true(isnan(s.psi_mem.full_us));

	/* Recreated: usage went backwards. No huge bogus delta, just a reset. */
	write_counters(f->root, cgs[0], 100, 0, 0, 0, 5, false);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 3000000, &s), 0);
	assert_true(s.present);
	assert_true(s.reset);
	assert_true(isnan(s.cpu_cores));
	assert_true(isnan(s.io[0].rbps));
	/* The next period measures against the new baseline. */
	write_counters(f->root, cgs[0], 500100, 0, 0, 0, 5, false);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 4000000, &s), 0);
	assert_false(s.reset);
	assert_true(s.cpu_cores == 0.5);
	fs_sampler_cgroupfs.close(st);
}

static void test_sampler_missing_cgroup(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"here", "gone"};
	struct fs_tenant_sample s[2];
	char path[512];
	void *st;

	write_counters(f->root, "here", 1, 0, 0, 0, 0, true);
	write_counters(f->root, "gone", 1, 0, 0, 0, 0, true);
	open_sampler(f, &st, 2, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, s), 0);
	assert_true(s[1].present);

	snprintf(path, sizeof(path), "%s/gone", f->root);
	at_rmtree(path);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, s), 0);
	assert_true(s[0].present);
	assert_false(s[1].present);
	assert_true(isnan(s[1].cpu_cores));
	assert_true(isnan(s[1].mem_current));
	assert_true(isnan(s[1].mem_ev_oom_kill));
	assert_true(isnan(s[1].psi_io.some_avg10));
	assert_true(isnan(s[1].io[1].wiops));
	assert_true(isnan(s[1].net_tx_bps));
	assert_false(s[1].reset);

	/* Back with higher counters: still a new cgroup, so a reset. */
	write_counters(f->root, "gone", 99999999, 0, 0, 0, 0, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 3000000, s), 0);
	assert_true(s[1].present);
	assert_true(s[1].reset);
	assert_true(isnan(s[1].cpu_cores));
	fs_sampler_cgroupfs.close(st);
}

static void test_sampler_symlink_refused(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"link/t"};
	struct fs_tenant_sample s;
	char target[512];
	void *st;

	/* A symlink inside the tree that points outside must not be followed. */
	snprintf(target, sizeof(target), "%s/outside", f->root);
	write_counters(f->root, "outside/t", 1, 0, 0, 0, 0, true);
	at_symlink(f->root, "link", target);
	open_sampler(f, &st, 1, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	assert_false(s.present);
	fs_sampler_cgroupfs.close(st);
}

/* ---- kept-open files ----------------------------------------------------- */

/* Open fds of this process (fcntl probe: no procfs needed). */
static int count_fds(void)
{
	int n = 0, max = (int)sysconf(_SC_OPEN_MAX);

	if (max <= 0 || max > 1 << 20)
		max = 1 << 20;
	for (int fd = 0; fd < max; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			n++;
	return n;
}

static void open_sampler_budget(struct fake *f, void **st, size_t n, const char *const *cgs,
				size_t max_open_files)
{
	static const struct fs_devnum disks[] = {{8, 0}};
	struct fs_sampler_config cfg = {
	    .cgroup_root = f->root,
	    .n_tenants = n,
	    .cgroups = cgs,
	    .n_disks = 1,
	    .disks = disks,
	    .max_open_files = max_open_files,
	};

	assert_int_equal(fs_sampler_cgroupfs.open(st, &cfg), 0);
}

static void test_sampler_fresh_reads(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_tenant_sample s;
	char big[12000];
	size_t len = 0;
	void *st;

	/* memory.stat larger than the first read buffer, then much shorter. */
	len += (size_t)snprintf(big + len, sizeof(big) - len, "anon 5000\nfile 6000\n");
	while (len < sizeof(big) - 64)
		len += (size_t)snprintf(big + len, sizeof(big) - len, "padding_key_%zu 0\n", len);
	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	at_write(f->root, "t1/memory.stat", big);
	at_write(f->root, "t1/memory.current", "123456789012\n");
	open_sampler(f, &st, 1, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	assert_true(s.mem_current == 123456789012.0);
	assert_true(s.mem_anon == 5000);
	assert_true(s.mem_file == 6000);

	/* Every file rewritten in place (as the kernel regenerates them), each
	 * shorter than before: read from offset 0, no stale tail. */
	write_counters(f->root, "t1", 3000000, 0, 0, 0, 200, false);
	at_write(f->root, "t1/memory.current", "7\n");
	at_write(f->root, "t1/memory.stat", "anon 1\n");
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, &s), 0);
	assert_false(s.reset);
	assert_true(s.cpu_cores == 2.0);
	assert_true(s.mem_current == 7);
	assert_true(s.mem_anon == 1);
	assert_true(isnan(s.mem_file));
	assert_true(s.psi_mem.some_us == 100);
	assert_true(isnan(s.psi_mem.full_avg10)); /* the full line is gone */

	/* And longer again. */
	write_counters(f->root, "t1", 3500000, 0, 0, 0, 200, true);
	at_write(f->root, "t1/memory.stat", big);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 3000000, &s), 0);
	assert_true(s.cpu_cores == 0.5);
	assert_true(s.mem_current == 1048576);
	assert_true(s.mem_file == 6000);
	assert_true(s.psi_mem.full_avg10 == 1.0);
	fs_sampler_cgroupfs.close(st);
}

static void test_sampler_recreated(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a/t1"};
	struct fs_tenant_sample s;
	char from[512], to[512];
	struct stat st1, st2;
	void *st;

	write_counters(f->root, "a/t1", 1000000, 0, 0, 0, 100, true);
	open_sampler(f, &st, 1, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	write_counters(f->root, "a/t1", 2000000, 0, 0, 0, 100, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, &s), 0);
	assert_false(s.reset);
	assert_true(s.cpu_cores == 1.0);

	/* Replaced between two samples by a new directory (the old one is
	 * kept, renamed, so the inode cannot be reused) with higher counters
	 * and no cpu.pressure file: a reset, not a delta against the old one. */
	snprintf(from, sizeof(from), "%s/a/t1", f->root);
	snprintf(to, sizeof(to), "%s/a/old", f->root);
	assert_int_equal(stat(from, &st1), 0);
	assert_int_equal(rename(from, to), 0);
	write_counters(f->root, "a/t1", 9000000, 0, 0, 0, 100, true);
	assert_int_equal(stat(from, &st2), 0);
	assert_true(st1.st_ino != st2.st_ino);
	at_write(f->root, "a/old/cpu.stat", "usage_usec 9999999999\n"); /* must not be read */
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 3000000, &s), 0);
	assert_true(s.present);
	assert_true(s.reset);
	assert_true(isnan(s.cpu_cores));
	write_counters(f->root, "a/t1", 9500000, 0, 0, 0, 100, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 4000000, &s), 0);
	assert_false(s.reset);
	assert_true(s.cpu_cores == 0.5);

	/* Removed: not present, and its files closed; back: a reset. */
	at_rmtree(from);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 5000000, &s), 0);
	assert_false(s.present);
	write_counters(f->root, "a/t1", 9600000, 0, 0, 0, 100, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 6000000, &s), 0);
	assert_true(s.present);
	assert_true(s.reset);
	fs_sampler_cgroupfs.close(st);
}

/*
 * Fake tree: a kept directory is looked up by its path only when a watch says
 * it may have moved (its own rename, an unlink of memory.events in it), not
 * every period. Its parent renamed away moves it without either, so a new
 * directory at the path is found only by the safety net, REPROBE_US (10 s)
 * after the last look: until then the old one is still read.
 */
static void test_sampler_fake_dir_looked_up_on_events(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a/t1"};
	struct fs_tenant_sample s;
	char from[512], to[512];
	void *st;

	write_counters(f->root, "a/t1", 1000000, 0, 0, 0, 100, true);
	open_sampler(f, &st, 1, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	snprintf(from, sizeof(from), "%s/a", f->root);
	snprintf(to, sizeof(to), "%s/a_old", f->root);
	assert_int_equal(rename(from, to), 0);
	write_counters(f->root, "a/t1", 5000000, 0, 0, 0, 100, true);
	/* cpu.stat only: a write to memory.events would be a reason to look */
	write_cpu_stat(f->root, "a_old/t1", 2000000, 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, &s), 0);
	assert_false(s.reset); /* the open directory, now at a_old/t1 */
	assert_true(s.cpu_cores == 1.0);
	write_cpu_stat(f->root, "a_old/t1", 3000000, 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 10999999, &s), 0);
	assert_false(s.reset);
	/* 10 s after the last look: the path leads elsewhere, a new baseline */
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 11000000, &s), 0);
	assert_true(s.present);
	assert_true(s.reset);
	write_counters(f->root, "a/t1", 6000000, 0, 0, 0, 100, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 12000000, &s), 0);
	assert_false(s.reset);
	assert_true(s.cpu_cores == 1.0);
	fs_sampler_cgroupfs.close(st);
}

static void test_sampler_missing_file_probed_rarely(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_tenant_sample s;
	char from[512], to[512];
	int fds;
	void *st;

	/* No cpu.pressure (write_counters writes only memory.pressure). */
	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	open_sampler(f, &st, 1, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	assert_true(isnan(s.psi_cpu.some_avg10));
	fds = count_fds();

	/* It appears (PSI enabled, controller enabled): not opened again in
	 * the next periods ... */
	at_write(f->root, "t1/cpu.pressure", "some avg10=3.00 avg60=0.00 avg300=0.00 total=5\n");
	for (uint64_t now = 2000000; now < 11000000; now += 1000000) {
		assert_int_equal(fs_sampler_cgroupfs.sample(st, now, &s), 0);
		assert_true(isnan(s.psi_cpu.some_avg10));
		assert_int_equal(count_fds(), fds);
	}
	/* ... but at the re-probe, 10 s after it was found missing (tenant 0). */
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 11000000, &s), 0);
	assert_true(s.psi_cpu.some_avg10 == 3.0);
	assert_int_equal(count_fds(), fds + 1); /* and kept open from now on */

	/* A new cgroup at the path is probed for every file at once. */
	snprintf(from, sizeof(from), "%s/t1", f->root);
	snprintf(to, sizeof(to), "%s/old", f->root);
	assert_int_equal(rename(from, to), 0);
	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 12000000, &s), 0);
	assert_true(isnan(s.psi_cpu.some_avg10));
	at_write(f->root, "t1/cpu.pressure", "some avg10=4.00 avg60=0.00 avg300=0.00 total=5\n");
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 13000000, &s), 0);
	assert_true(isnan(s.psi_cpu.some_avg10)); /* missing again: not before 22 s */
	snprintf(from, sizeof(from), "%s/t1", f->root);
	snprintf(to, sizeof(to), "%s/old2", f->root);
	assert_int_equal(rename(from, to), 0);
	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	at_write(f->root, "t1/cpu.pressure", "some avg10=5.00 avg60=0.00 avg300=0.00 total=5\n");
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 14000000, &s), 0);
	assert_true(s.psi_cpu.some_avg10 == 5.0);
	fs_sampler_cgroupfs.close(st);
}

static void write_mem_psi(const char *root, const char *cg, int avg10, unsigned total)
{
	char path[256], text[128];

	snprintf(path, sizeof(path), "%s/memory.pressure", cg);
	snprintf(text, sizeof(text), "some avg10=%d.00 avg60=0.00 avg300=0.00 total=%u\n", avg10,
		 total);
	at_write(root, path, text);
}

/*
 * slow_every_us = 2 s, samples 1 s apart: each tenant reads its pressure
 * files every other sample (t1 at 1, 3, 5 s; t2, odd, half a step early:
 * at 1, 2, 4 s); between reads avg10 is held and some_us is NAN; a read
 * after a skip scales the stall since the previous read to one period.
 */
static void test_sampler_psi_every(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1", "t2"};
	struct fs_sampler_config cfg = {
	    .cgroup_root = f->root, .n_tenants = 2, .cgroups = cgs, .slow_every_us = 2000000};
	struct fs_tenant_sample s[2];
	void *st;

	for (int i = 0; i < 2; i++) {
		write_counters(f->root, cgs[i], 1000000, 0, 0, 0, 0, false);
		write_mem_psi(f->root, cgs[i], 1, 1000);
	}
	assert_int_equal(fs_sampler_cgroupfs.open(&st, &cfg), 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, s), 0);
	for (int i = 0; i < 2; i++) {
		assert_true(s[i].psi_mem.some_avg10 == 1.0);
		assert_true(isnan(s[i].psi_mem.some_us));
	}
	for (int k = 2; k <= 5; k++) {
		for (int i = 0; i < 2; i++)
			write_mem_psi(f->root, cgs[i], 2 * k - 1, 1000u * (2u * (unsigned)k - 1));
		assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000ull * (unsigned)k, s), 0);
		for (int i = 0; i < 2; i++) {
			/* t1 reads at odd k, t2 at k = 2 and 4 */
			bool read = i == 0 ? k % 2 == 1 : k % 2 == 0;
			/* the last read: this one, or the sample before */
			int avg10 = read ? 2 * k - 1 : 2 * k - 3;

			assert_false(s[i].reset);
			assert_true(s[i].cpu_cores == 0);
			assert_true(s[i].psi_mem.some_avg10 == avg10);
			/* read: 2000 us stalled per second since the last read */
			if (read)
				assert_true(s[i].psi_mem.some_us == 2000);
			else
				assert_true(isnan(s[i].psi_mem.some_us));
		}
	}
	fs_sampler_cgroupfs.close(st);
}

static void write_mem_stat(const char *root, unsigned anon, unsigned refault_file, unsigned current)
{
	char text[160];

	snprintf(text, sizeof(text),
		 "anon %u\nworkingset_refault_anon 10\nworkingset_refault_file %u\n", anon,
		 refault_file);
	at_write(root, "t1/memory.stat", text);
	snprintf(text, sizeof(text), "%u\n", current);
	at_write(root, "t1/memory.current", text);
}

/*
 * memory.stat is a slow file too: with slow_every_us = 2 s and samples 1 s
 * apart, t1 reads it at 1, 3 and 5 s, and memory.current every second.
 * Between reads its gauges and the refault rate are the last read's; a read
 * after a skip turns the refaults since the previous read into a rate, so
 * a period reports its share of them (issue 19: a pread and a parse less
 * per tenant every other period).
 */
static void test_sampler_memory_stat_slow(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_sampler_config cfg = {
	    .cgroup_root = f->root, .n_tenants = 1, .cgroups = cgs, .slow_every_us = 2000000};
	const double page = (double)sysconf(_SC_PAGESIZE);
	/* at 1..5 s: refault_file, and the sample's anon and refault pages */
	static const struct {
		unsigned refault_file;
		double anon, refault_pages; /* -1: unknown (NAN) */
	} want[] = {
	    {100, 1000, -1},  /* 1 s: read, no rate yet */
	    {300, 1000, -1},  /* 2 s: held: no rate to hold */
	    {500, 3000, 200}, /* 3 s: read, 400 pages in 2 s */
	    {600, 3000, 200}, /* 4 s: held */
	    {700, 5000, 100}, /* 5 s: read, 200 pages in 2 s */
	};
	struct fs_tenant_sample s;
	void *st;

	write_counters(f->root, cgs[0], 1000000, 0, 0, 0, 100, false);
	for (unsigned k = 1; k <= 5; k++) {
		write_mem_stat(f->root, 1000 * k, want[k - 1].refault_file, 4096 * k);
		if (k == 1)
			assert_int_equal(fs_sampler_cgroupfs.open(&st, &cfg), 0);
		assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000ull * k, &s), 0);
		assert_true(s.mem_current == 4096 * k); /* every period */
		assert_true(s.mem_anon == want[k - 1].anon);
		if (want[k - 1].refault_pages < 0)
			assert_true(isnan(s.mem_refault_bytes));
		else
			assert_true(s.mem_refault_bytes == want[k - 1].refault_pages * page);
	}
	fs_sampler_cgroupfs.close(st);
}

/* One tenant (cgs[0]) on disk 8:0, quiet tenants re-read every 4 s. */
static struct fs_sampler_config quiet_config(const char *root, const char **cgs)
{
	static const struct fs_devnum disk = {8, 0};

	return (struct fs_sampler_config){.cgroup_root = root,
					  .n_tenants = 1,
					  .cgroups = cgs,
					  .n_disks = 1,
					  .disks = &disk,
					  .quiet_every_us = 4000000};
}

/*
 * A quiet tenant (no CPU used since the previous sample) with
 * quiet_every_us = 4 s: t1, the first tenant (phase 0), reads memory.current
 * and io.stat again at the first multiple of 4 s from 2 s after its last
 * full read on (at 4 s after a read at 1 s); in between its memory is the
 * last read's and its IO rates are zero, then the IO since that read comes
 * as a rate over the whole span (the kernel's writeback for it). CPU used
 * reads everything in that very sample, and the IO and the refaults since
 * the last read are the tenant's own in this period (it ran only now).
 */
static void test_sampler_quiet(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_sampler_config cfg = quiet_config(f->root, cgs);
	/* at 1..7 s: cpu usage, and what the sample says */
	static const struct {
		unsigned long long usage;
		double mem, rbps, refault; /* -1: unknown (first sample) */
	} want[] = {
	    {1000000, 4096, -1, -1},	    /* 1 s: the first read */
	    {1000000, 4096, 0, 0},	    /* 2 s: quiet: held */
	    {1000000, 4096, 0, 0},	    /* 3 s */
	    {1000000, 4 * 4096, 16384, 0},  /* 4 s: due: 3 x 16 KiB in 3 s */
	    {1000000, 4 * 4096, 0, 0},	    /* 5 s: quiet again (till 8 s) */
	    {1000000, 4 * 4096, 0, 0},	    /* 6 s */
	    {1500000, 7 * 4096, 49152, 60}, /* 7 s: CPU used: 3 x 16 KiB and
					     * 60 refaulted pages, its own */
	};
	const double page = (double)sysconf(_SC_PAGESIZE);
	struct fs_tenant_sample s;
	void *st;

	for (unsigned k = 1; k <= 7; k++) {
		write_counters(f->root, cgs[0], want[k - 1].usage, 0, 16384ull * (k - 1), 0, 100,
			       false);
		write_mem_stat(f->root, 1000, k == 7 ? 160 : 100, 4096 * k);
		if (k == 1)
			assert_int_equal(fs_sampler_cgroupfs.open(&st, &cfg), 0);
		assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000ull * k, &s), 0);
		assert_true(s.mem_current == want[k - 1].mem);
		if (want[k - 1].rbps < 0) {
			assert_true(isnan(s.io[0].rbps));
			assert_true(isnan(s.mem_refault_bytes));
			continue;
		}
		assert_false(s.reset);
		assert_true(s.io[0].rbps == want[k - 1].rbps);
		assert_true(s.cpu_cores == (k == 7 ? 0.5 : 0));
		assert_true(s.mem_refault_bytes == want[k - 1].refault * page);
	}
	fs_sampler_cgroupfs.close(st);
}

/*
 * A quiet tenant's re-read (every 4 s here, at 4 and 8 s) reads
 * memory.current and io.stat, memory.stat only when memory.current moved
 * (8 s), and no *.pressure file: their averages decay as the kernel's do
 * for a tenant that did not run (exp(-t / 10 s) for avg10). Once it uses
 * CPU (9 s), or hits memory.high (10 s), everything is read again (issue
 * 19: two preads every few seconds for an idle tenant, not six).
 */
static void test_sampler_quiet_rest(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_sampler_config cfg = quiet_config(f->root, cgs);
	struct fs_tenant_sample s;
	void *st;

	cfg.slow_every_us = 2000000;
	write_counters(f->root, cgs[0], 1000000, 0, 0, 0, 100, false);
	at_write(f->root, "t1/memory.pressure", "some avg10=20.00 avg60=0 avg300=0 total=100\n");
	write_mem_stat(f->root, 1000, 0, 1048576);
	assert_int_equal(fs_sampler_cgroupfs.open(&st, &cfg), 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	assert_true(s.psi_mem.some_avg10 == 20 && s.mem_anon == 1000);
	/* from now on a read of either file would show */
	at_write(f->root, "t1/memory.pressure", "some avg10=50.00 avg60=0 avg300=0 total=100\n");
	write_mem_stat(f->root, 2000, 0, 1048576);
	for (unsigned k = 2; k <= 9; k++) {
		char text[64];
		const double decayed = 20 * exp(-(double)(k - 1) / 10);

		snprintf(text, sizeof(text), "8:0 rbytes=%u wbytes=0 rios=0 wios=0\n",
			 k >= 4 ? 12288u : 0u);
		at_write(f->root, "t1/io.stat", text);
		if (k == 8)
			at_write(f->root, "t1/memory.current", "2097152\n");
		if (k == 9)
			write_cpu_stat(f->root, cgs[0], 1500000, 0);
		assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000ull * k, &s), 0);
		assert_false(s.reset);
		if (k == 9) {
			assert_true(s.cpu_cores == 0.5);
			assert_true(s.psi_mem.some_avg10 == 50 && s.mem_anon == 2000);
			break;
		}
		assert_true(s.cpu_cores == 0);
		assert_true(fabs(s.psi_mem.some_avg10 - decayed) < 1e-9);
		/* io.stat: re-read at 4 s (12 KiB over 3 s), held otherwise */
		assert_true(s.io[0].rbps == (k == 4 ? 4096 : 0));
		assert_true(s.mem_current == (k >= 8 ? 2097152 : 1048576));
		assert_true(s.mem_anon == (k >= 8 ? 2000 : 1000));
	}
	/* 10 s: no CPU, but memory.high was hit: the kernel's throttling
	 * sleeps use none, so it is read in full and its pressure held, not
	 * decayed (slow files not due: read at 9 s) */
	at_write(f->root, "t1/memory.events", "low 0\nhigh 1\nmax 0\noom 0\noom_kill 0\n");
	at_write(f->root, "t1/memory.current", "3145728\n");
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 10000000, &s), 0);
	assert_true(s.cpu_cores == 0 && s.mem_ev_high == 1);
	assert_true(s.mem_current == 3145728 && s.psi_mem.some_avg10 == 50);
	fs_sampler_cgroupfs.close(st);
}

/*
 * 16 tenants quiet since start, quiet_every_us = 4 s: each period re-reads
 * about a quarter of them (their phases spread over the 4 s), not half of
 * them in one period and none in the next; and none waits longer than
 * 1.5 x 4 s between two reads.
 */
static void test_sampler_quiet_spread(void **state)
{
	struct fake *f = *state;
	enum { N = 16 };
	char names[N][8], text[32], path[64];
	const char *cgs[N];
	struct fs_sampler_config cfg = {
	    .cgroup_root = f->root, .n_tenants = N, .cgroups = cgs, .quiet_every_us = 4000000};
	struct fs_tenant_sample s[N];
	unsigned last[N];
	void *st;

	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "q%02d", i);
		cgs[i] = names[i];
		write_counters(f->root, cgs[i], 1000000, 0, 0, 0, 100, false);
		last[i] = 1;
	}
	assert_int_equal(fs_sampler_cgroupfs.open(&st, &cfg), 0);
	for (unsigned k = 1; k <= 20; k++) {
		unsigned read = 0;

		/* memory.current says when it was written: read now or held */
		for (int i = 0; i < N; i++) {
			snprintf(path, sizeof(path), "%s/memory.current", cgs[i]);
			snprintf(text, sizeof(text), "%u\n", 4096 * k);
			at_write(f->root, path, text);
		}
		assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000ull * k, s), 0);
		for (int i = 0; i < N; i++) {
			if (s[i].mem_current != 4096.0 * k)
				continue;
			read++;
			assert_true(k == 1 || k - last[i] >= 2);
			last[i] = k;
		}
		for (int i = 0; i < N; i++)
			assert_true(k - last[i] < 6);
		if (k >= 4)
			assert_true(read >= 3 && read <= 5);
	}
	fs_sampler_cgroupfs.close(st);
}

static void test_sampler_fds_released(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1", "t2", "t3", "t4"};
	struct fs_tenant_sample s[4];
	char path[512];
	int before;
	void *st;

	/* 6 files each (no cpu.pressure, io.pressure), 5 kept open: memory.events
	 * is watched (inotify), not kept; 1 + 7 budgeted each. */
	for (int i = 0; i < 4; i++)
		write_counters(f->root, cgs[i], 1000000, 0, 0, 0, 100, true);
	before = count_fds();
	/* Room for 16: 4 x 8 do not fit, so the pressure files are not kept
	 * and 1 + 4 are budgeted each: t1..t3 keep 1 + 4 fds (the directory,
	 * cpu.stat, memory.current, memory.stat, io.stat), which leaves 1 for
	 * t4: its directory. */
	open_sampler_budget(f, &st, 4, cgs, 2 * 8);
	assert_int_equal(count_fds(), before + 3); /* the root, the two inotify instances */
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, s), 0);
	assert_int_equal(count_fds(), before + 3 + 3 * 5 + 1);
	for (int i = 0; i < 4; i++)
		write_counters(f->root, cgs[i], 1000000 + 500000 * (unsigned)(i + 1), 0, 8192, 0,
			       100, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, s), 0);
	for (int i = 0; i < 4; i++) {
		assert_true(s[i].present);
		assert_false(s[i].reset);
		assert_true(s[i].cpu_cores == 0.5 * (i + 1));
		assert_true(s[i].io[0].rbps == 8192);
		assert_true(s[i].mem_current == 1048576);
		assert_true(s[i].psi_mem.some_avg10 == 2.0); /* read, not kept */
	}
	assert_int_equal(count_fds(), before + 3 + 3 * 5 + 1);

	/* t1 goes: its fds are closed and its share goes to t4 (4 more). */
	snprintf(path, sizeof(path), "%s/t1", f->root);
	at_rmtree(path);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 3000000, s), 0);
	assert_false(s[0].present);
	assert_true(s[3].present && !s[3].reset);
	assert_int_equal(count_fds(), before + 3 + 3 * 5);
	fs_sampler_cgroupfs.close(st);
	assert_int_equal(count_fds(), before);

	/* Room for 3: not even a directory each. t1..t3 keep their
	 * directories, t4 walks its path every period; all read the same. */
	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	open_sampler_budget(f, &st, 4, cgs, 3);
	for (unsigned k = 1; k <= 3; k++) {
		for (int i = 0; i < 4; i++)
			write_counters(f->root, cgs[i], 1000000 * k + 500000 * (unsigned)(i + 1), 0,
				       8192 * k, 0, 100, true);
		assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000 * k, s), 0);
		assert_int_equal(count_fds(), before + 3 + 3);
		for (int i = 0; k > 1 && i < 4; i++) {
			assert_true(s[i].present && !s[i].reset);
			assert_true(s[i].cpu_cores == 1.0);
			assert_true(s[i].io[0].rbps == 8192);
		}
	}
	fs_sampler_cgroupfs.close(st);
	assert_int_equal(count_fds(), before);

	/* Default budget (RLIMIT_NOFILE): everything kept, everything closed. */
	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	open_sampler_budget(f, &st, 4, cgs, 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, s), 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, s), 0);
	assert_int_equal(count_fds(), before + 3 + 4 * 6);
	fs_sampler_cgroupfs.close(st);
	assert_int_equal(count_fds(), before);
}

static void write_events(const char *root, const char *cg, unsigned high, unsigned max,
			 unsigned oom_kill)
{
	char path[256], text[128];

	snprintf(path, sizeof(path), "%s/memory.events", cg);
	snprintf(text, sizeof(text), "low 0\nhigh %u\nmax %u\noom %u\noom_kill %u\n", high, max,
		 oom_kill, oom_kill);
	at_write(root, path, text);
}

/* A sample at now, a delta of the previous one, with these event deltas. */
static void sample_events(void *st, uint64_t now, double high, double max, double oom_kill)
{
	struct fs_tenant_sample s;

	assert_int_equal(fs_sampler_cgroupfs.sample(st, now, &s), 0);
	assert_false(s.reset);
	assert_true(s.mem_ev_high == high);
	assert_true(s.mem_ev_max == max);
	assert_true(s.mem_ev_oom_kill == oom_kill);
}

/*
 * memory.events is watched (inotify), not read every period: a change in
 * place, a file replaced under the name and a recreated cgroup are all seen;
 * an unchanged file keeps its values.
 */
static void test_sampler_memory_events_watched(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_tenant_sample s;
	char path[512], old[512];
	void *st;

	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	open_sampler(f, &st, 1, cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, &s), 0);
	sample_events(st, 2000000, 0, 0, 0);

	write_events(f->root, "t1", 3, 0, 1); /* rewritten in place */
	sample_events(st, 3000000, 3, 0, 1);
	for (uint64_t now = 4000000; now <= 6000000; now += 1000000)
		sample_events(st, now, 0, 0, 0); /* unchanged, no event */

	/* Another file under the name (the old one unlinked): read, and
	 * watched in its turn. */
	snprintf(path, sizeof(path), "%s/t1/memory.events", f->root);
	assert_int_equal(unlink(path), 0);
	write_events(f->root, "t1", 5, 0, 1);
	sample_events(st, 7000000, 2, 0, 0);
	write_events(f->root, "t1", 9, 2, 1);
	sample_events(st, 8000000, 4, 2, 0);

	/* A new cgroup at the path: its own file, its own watch. */
	snprintf(path, sizeof(path), "%s/t1", f->root);
	snprintf(old, sizeof(old), "%s/old", f->root);
	assert_int_equal(rename(path, old), 0);
	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 9000000, &s), 0);
	assert_true(s.reset);
	write_events(f->root, "old", 99, 0, 0);
	write_events(f->root, "t1", 1, 0, 0);
	sample_events(st, 10000000, 1, 0, 0);
	fs_sampler_cgroupfs.close(st);
}

/*
 * The tenants change (a template's cgroup came or went): t1 leaves, t3
 * joins, t2 moves from index 1 to 0. t2 keeps its open files, its baseline
 * (its next rate spans the period since its last sample) and its
 * memory.events watch, now under index 0; t3 starts with a first sample;
 * t1's files are closed. A change of t2's memory.events is still seen.
 */
static void test_sampler_retarget(void **state)
{
	struct fake *f = *state;
	const char *before_cgs[] = {"t1", "t2"}, *after_cgs[] = {"t2", "t3"};
	const size_t from[] = {1, FS_LIST_NEW};
	struct fs_tenant_sample s[2];
	int fds;
	void *st;

	for (int i = 0; i < 3; i++)
		write_counters(f->root,
			       i == 0	? "t1"
			       : i == 1 ? "t2"
					: "t3",
			       1000000, 0, 0, 0, 100, true);
	fds = count_fds();
	open_sampler(f, &st, 2, before_cgs);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, s), 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 2000000, s), 0);
	assert_false(s[1].reset);
	const int open_two = count_fds();

	assert_non_null(fs_sampler_cgroupfs.retarget);
	assert_int_equal(fs_sampler_cgroupfs.retarget(st, 2, after_cgs, from), 0);
	/* t1's directory and files closed; nothing opened for t3 yet */
	/* the root and the two inotify instances (memory.events; a fake
	 * tree's kept directories), and one tenant's files of two */
	assert_int_equal(count_fds(), fds + 3 + (open_two - fds - 3) / 2);
	write_counters(f->root, "t2", 2500000, 0, 4096, 0, 100, true);
	write_events(f->root, "t2", 2, 0, 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 3000000, s), 0);
	assert_true(s[0].present);
	assert_false(s[0].reset); /* the baseline of 2 s came along */
	assert_true(s[0].cpu_cores == 1.5);
	assert_true(s[0].io[0].rbps == 4096);
	assert_true(s[0].mem_ev_high == 2); /* its watch reports under index 0 */
	assert_true(s[1].present);
	assert_true(s[1].reset); /* t3: a first sample */
	assert_int_equal(count_fds(), open_two);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 4000000, s), 0);
	assert_true(s[0].mem_ev_high == 0 && !s[1].reset);
	fs_sampler_cgroupfs.close(st);
	assert_int_equal(count_fds(), fds);
}

static int warnings;

static void count_warnings(void *ctx, int prio, const char *msg)
{
	(void)ctx;
	(void)msg;
	if (prio <= LOG_WARNING)
		warnings++;
}

/* The sampler's log lines, one string. */
static char logged[8192];

static void keep_log(void *ctx, int prio, const char *msg)
{
	size_t n = strlen(logged);

	(void)ctx;
	snprintf(logged + n, sizeof(logged) - n, "%d %s\n", prio, msg);
}

static unsigned count_lines(const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(logged, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* A cgroup path that fails every period (a file, not a directory) is
 * logged when it starts, summarised once a minute, and when it clears;
 * not once a period. */
static void test_sampler_error_logged_once(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"a", "b.slice"};
	struct fs_sampler_config cfg = {
	    .cgroup_root = f->root, .n_tenants = 2, .cgroups = cgs, .log = keep_log};
	struct fs_tenant_sample s[2];
	char path[512];
	uint64_t now = 0;
	void *st;

	write_counters(f->root, "a", 1, 0, 0, 0, 0, true);
	at_write(f->root, "b.slice", "not a cgroup\n");
	logged[0] = '\0';
	assert_int_equal(fs_sampler_cgroupfs.open(&st, &cfg), 0);
	for (int i = 0; i < 200; i++) { /* 200 periods of 1 s */
		now += 1000000;
		assert_int_equal(fs_sampler_cgroupfs.sample(st, now, s), 0);
		assert_true(s[0].present && !s[1].present);
	}
	assert_int_equal(count_lines("4 sampler: b.slice: Not a directory\n"), 1);
	/* at 61 s, 121 s and 181 s: seen 60 more times since the last line */
	assert_int_equal(count_lines("4 sampler: b.slice: still Not a directory (60 more times in "
				     "60 s)\n"),
			 3);
	assert_int_equal(count_lines("\n"), 4);

	/* fixed: one line; broken again: one line at once */
	snprintf(path, sizeof(path), "%s/b.slice", f->root);
	assert_int_equal(unlink(path), 0);
	write_counters(f->root, "b.slice", 1, 0, 0, 0, 0, true);
	for (int i = 0; i < 3; i++) {
		now += 1000000;
		assert_int_equal(fs_sampler_cgroupfs.sample(st, now, s), 0);
		assert_true(s[1].present);
	}
	assert_int_equal(count_lines("6 sampler: b.slice: Not a directory: cleared\n"), 1);
	at_rmtree(path);
	at_write(f->root, "b.slice", "not a cgroup\n");
	now += 1000000;
	assert_int_equal(fs_sampler_cgroupfs.sample(st, now, s), 0);
	assert_int_equal(count_lines("4 sampler: b.slice: Not a directory\n"), 2);
	assert_int_equal(count_lines("\n"), 6);
	fs_sampler_cgroupfs.close(st);
}

/* RLIMIT_NOFILE lower than the budget assumed: no tenant lost for good. */
static void test_sampler_out_of_fds(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1", "t2", "t3"};
	static const struct fs_devnum disks[] = {{8, 0}};
	struct fs_sampler_config cfg = {
	    .cgroup_root = f->root,
	    .n_tenants = 3,
	    .cgroups = cgs,
	    .n_disks = 1,
	    .disks = disks,
	    .log = count_warnings,
	};
	struct fs_tenant_sample s[3];
	struct rlimit saved, rl;
	int before, limit = 0;
	void *st;

	for (int i = 0; i < 3; i++)
		write_counters(f->root, cgs[i], 1000000, 0, 0, 0, 100, true);
	before = count_fds();
	warnings = 0;
	assert_int_equal(fs_sampler_cgroupfs.open(&st, &cfg), 0);
	/* Room for 11 fds: t1's 6 (its directory and 5 files; memory.events is
	 * watched, not kept) and 5 of t2's 6. New fds take the lowest free
	 * numbers, and those must stay below the limit. */
	for (int fd = 0, free_fds = 0; free_fds <= 7 + 4; fd++)
		if (fcntl(fd, F_GETFD) < 0 && ++free_fds == 7 + 4 + 1)
			limit = fd;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	rl = saved;
	rl.rlim_cur = (rlim_t)limit;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, s), 0);
	assert_int_equal(warnings, 1);
	for (int i = 0; i < 3; i++)
		assert_true(s[i].present);
	assert_true(s[0].mem_current == 1048576);
	for (int i = 0; i < 3; i++)
		write_counters(f->root, cgs[i], 2000000, 0, 0, 0, 100, true);
	for (uint64_t now = 2000000; now <= 3000000; now += 1000000) {
		assert_int_equal(fs_sampler_cgroupfs.sample(st, now, s), 0);
		for (int i = 0; i < 3; i++) {
			assert_true(s[i].present);
			assert_true(s[i].mem_current == 1048576);
			assert_true(s[i].psi_mem.some_avg10 == 2.0);
		}
	}
	assert_true(s[0].cpu_cores == 0 && s[2].cpu_cores == 0);
	assert_int_equal(warnings, 1); /* once */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	fs_sampler_cgroupfs.close(st);
	assert_int_equal(count_fds(), before);
}

/*
 * The writer's share of the fds (fs_cgroupfs_writer_fds): what the budget
 * (soft RLIMIT_NOFILE less max(256, a quarter)) leaves once every tenant
 * keeps its directory and all 8 files (memory.events too: no inotify); and file_fd lends a kept
 * file of a kept tenant, only that.
 */
static void test_sampler_writer_share(void **state)
{
	struct fake *f = *state;
	const char *cgs[] = {"t1"};
	struct fs_sampler_config cfg = {.cgroup_root = f->root, .n_tenants = 1, .cgroups = cgs};
	struct fs_tenant_sample s[1];
	struct rlimit saved, rl;
	uint64_t ino;
	int fd;
	void *st;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	rl = saved;
	rl.rlim_cur = 2000; /* budget 1500 */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(fs_cgroupfs_writer_fds(0), 1500);
	assert_int_equal(fs_cgroupfs_writer_fds(100), 1500 - 900);
	assert_int_equal(fs_cgroupfs_writer_fds(166), 6);
	assert_int_equal(fs_cgroupfs_writer_fds(167), 0);
	assert_int_equal(fs_cgroupfs_writer_fds(10000), 0);
	rl.rlim_cur = 1000; /* the reserve is at least 256 */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(fs_cgroupfs_writer_fds(10), 1000 - 256 - 90);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);

	write_counters(f->root, "t1", 1000000, 0, 0, 0, 100, true);
	assert_int_equal(fs_sampler_cgroupfs.open(&st, &cfg), 0);
	assert_int_equal(fs_sampler_cgroupfs.file_fd(st, 0, "t1", "memory.current"), -1);
	assert_int_equal(fs_sampler_cgroupfs.sample(st, 1000000, s), 0);
	fd = fs_sampler_cgroupfs.file_fd(st, 0, "t1", "memory.current");
	assert_true(fd >= 0);
	assert_int_equal(fs_sampler_cgroupfs.dirfd(st, 0, "t1", &ino) >= 0, true);
	{
		char buf[64] = "";

		assert_int_equal(pread(fd, buf, sizeof(buf) - 1, 0), 8);
		assert_string_equal(buf, "1048576\n");
	}
	assert_int_equal(fs_sampler_cgroupfs.file_fd(st, 0, "t2", "memory.current"), -1);
	assert_int_equal(fs_sampler_cgroupfs.file_fd(st, 1, "t1", "memory.current"), -1);
	assert_int_equal(fs_sampler_cgroupfs.file_fd(st, 0, "t1", "cpu.max"), -1);
	fs_sampler_cgroupfs.close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpu_stat),
	    cmocka_unit_test(test_memory_stat),
	    cmocka_unit_test(test_meminfo),
	    cmocka_unit_test(test_host_mem),
	    cmocka_unit_test(test_memory_events),
	    cmocka_unit_test(test_io_stat),
	    cmocka_unit_test(test_pressure),
	    cmocka_unit_test_setup_teardown(test_sampler_rates, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_refaults, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_counter_reset, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_missing_cgroup, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_symlink_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_fresh_reads, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_recreated, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_fake_dir_looked_up_on_events, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_missing_file_probed_rarely, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_fds_released, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_psi_every, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_memory_stat_slow, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_quiet, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_quiet_spread, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_quiet_rest, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_memory_events_watched, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_out_of_fds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_error_logged_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_writer_share, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sampler_retarget, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
