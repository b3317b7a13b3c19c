/* SPDX-License-Identifier: MIT */
/*
 * The writer and the cgroupfs sampler against a real cgroup v2 hierarchy
 * (the test VM: tests/vm/suites/agentio.sh). Not a unit test: it needs root
 * and a cgroup2 mount with cpu, memory and io controllers, so it is built but
 * not registered with meson test. Prints "ok N - ..." lines and a final
 * "N passed, N failed" line (the VM suites' protocol); exit 1 on a failure.
 *
 * usage: agentio_kernel_check CGROUP_ROOT MAJ:MIN DEVICE_PATH
 * (the scratch disk: it is read, never written)
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "sample.h"
#include "writer.h"

static int n_ok, n_fail;

static void check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", n_ok + n_fail + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (cond)
		n_ok++;
	else
		n_fail++;
}

static void logcb(void *ctx, int prio, const char *msg)
{
	(void)ctx;
	printf("# log<%d> %s\n", prio, msg);
}

static char root[512];

static const char *rd(const char *cg, const char *file)
{
	static char buf[4096];
	char path[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", root, cg, file);
	f = fopen(path, "r");
	if (!f)
		return "";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static int wr(const char *cg, const char *file, const char *v)
{
	char path[1024];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/%s/%s", root, cg, file);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	r = fputs(v, f) < 0 ? -EIO : 0;
	if (fclose(f) != 0)
		r = -errno;
	return r;
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static pid_t burner(const char *cg)
{
	char pid[32];
	pid_t p = fork();

	if (p == 0) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (wr(cg, "cgroup.procs", pid) < 0)
			_exit(1);
		/* Memory is charged where it is first touched, after the move. */
		volatile char *m = malloc(8 << 20); /* volatile: not optimised away */

		for (size_t i = 0; m && i < 8 << 20; i += 4096)
			m[i] = 1;
		for (volatile unsigned long i = 0;; i++)
			;
	}
	return p;
}

/* Reads 4 MiB with O_DIRECT from dev inside cgroup cg; returns seconds taken. */
static double direct_read(const char *cg, const char *devpath)
{
	char pidbuf[32];
	uint64_t t0 = mono_us();
	int status = 1;
	pid_t p = fork();

	if (p == 0) {
		void *buf;
		int fd;

		snprintf(pidbuf, sizeof(pidbuf), "%d", getpid());
		if (wr(cg, "cgroup.procs", pidbuf) < 0 || posix_memalign(&buf, 4096, 1 << 20))
			_exit(1);
		fd = open(devpath, O_RDONLY | O_DIRECT);
		if (fd < 0)
			_exit(1);
		for (int i = 0; i < 4; i++)
			if (pread(fd, buf, 1 << 20, (off_t)i << 20) != 1 << 20)
				_exit(1);
		_exit(0);
	}
	waitpid(p, &status, 0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? (double)(mono_us() - t0) / 1e6 : -1;
}

int main(int argc, char **argv)
{
	const char *t1 = "fs-agentio/t1", *t2 = "fs-agentio/t2";
	const char *tenants[] = {t1, t2};
	enum { T1, T2 }; /* writer tenant indexes */
	struct fs_devnum dev;
	char state_dir[] = "/tmp/fs-agentio-state-XXXXXX";
	char path[1024], line[256];
	struct fs_writer *w = NULL;
	struct fs_apply_result res;
	struct fs_tenant_sample s[2], sd[2];
	void *smp = NULL, *smp_dir = NULL;
	pid_t pid;
	int r;

	if (argc != 4 || sscanf(argv[2], "%u:%u", &dev.major, &dev.minor) != 2) {
		fprintf(stderr, "usage: %s CGROUP_ROOT MAJ:MIN DEVICE\n", argv[0]);
		return 2;
	}
	snprintf(root, sizeof(root), "%s", argv[1]);
	if (!mkdtemp(state_dir))
		return 2;
	wr("", "cgroup.subtree_control", "+cpu +memory +io");
	snprintf(path, sizeof(path), "%s/fs-agentio", root);
	mkdir(path, 0755);
	check(wr("fs-agentio", "cgroup.subtree_control", "+cpu +memory +io") == 0,
	      "controllers enabled below fs-agentio");
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, tenants[i]);
		mkdir(path, 0755);
	}

	{
		struct fs_writer_opts o = {.cgroup_root = root,
					   .state_dir = state_dir,
					   .n_tenants = 2,
					   .cgroups = tenants,
					   .log = logcb,
					   .reprobe_us = 5000000};
		check(fs_writer_open(&w, &o) == 0, "writer opened");
	}
	struct fs_limits l = {
	    .set = FS_LIM_CPU_MAX | FS_LIM_CPU_BURST | FS_LIM_CPU_WEIGHT | FS_LIM_MEM_HIGH |
		   FS_LIM_MEM_MAX | FS_LIM_IO_MAX | FS_LIM_IO_WEIGHT,
	    .cpu_quota_us = 20000,
	    .cpu_period_us = 100000,
	    .cpu_burst_us = 10000,
	    .cpu_weight = 50,
	    .mem_high = 64 << 20,
	    .mem_max = 128 << 20,
	    .n_io = 1,
	    .io = {{.dev = dev,
		    .rbps = 4194304,
		    .wbps = FS_VALUE_MAX,
		    .riops = FS_VALUE_MAX,
		    .wiops = 1000}},
	    .io_weight = 50,
	};
	{
		/* One period for both tenants, t2 left alone. */
		struct fs_limits both[2] = {l, l};
		const bool skip[2] = {false, true};
		struct fs_apply_result rs[2];

		r = fs_writer_apply_all(w, 2, both, skip, mono_us(), rs);
		res = rs[T1];
		check(rs[T2].written == 0 && fs_writer_saved_count(w) == 7,
		      "skipped tenant untouched (saved %zu)", fs_writer_saved_count(w));
	}
	check(r == 0 && res.written == 7 && res.failed == 0,
	      "apply all 7 files (r=%d written=%u failed=%u)", r, res.written, res.failed);
	check(strcmp(rd(t1, "cpu.max"), "20000 100000") == 0, "cpu.max = '%s'", rd(t1, "cpu.max"));
	check(strcmp(rd(t1, "cpu.max.burst"), "10000") == 0, "cpu.max.burst = '%s'",
	      rd(t1, "cpu.max.burst"));
	check(strcmp(rd(t1, "memory.high"), "67108864") == 0, "memory.high = '%s'",
	      rd(t1, "memory.high"));
	check(strcmp(rd(t1, "memory.max"), "134217728") == 0, "memory.max = '%s'",
	      rd(t1, "memory.max"));
	snprintf(line, sizeof(line), "%u:%u rbps=4194304 wbps=max riops=max wiops=1000", dev.major,
		 dev.minor);
	check(strcmp(rd(t1, "io.max"), line) == 0, "io.max = '%s'", rd(t1, "io.max"));
	check(strcmp(rd(t1, "io.weight"), "default 50") == 0, "io.weight = '%s'",
	      rd(t1, "io.weight"));

	/* The kernel refuses burst > quota: lowering both needs burst first. */
	l.cpu_quota_us = 5000;
	l.cpu_burst_us = 2000;
	l.mem_high = 32 << 20;
	l.mem_max = 48 << 20;
	r = fs_writer_apply(w, T1, &l, mono_us(), &res);
	check(r == 0 && res.written == 4 && res.failed == 0 && res.unchanged == 3,
	      "lower quota below the old burst in a safe order (r=%d written=%u failed=%u)", r,
	      res.written, res.failed);
	check(strcmp(rd(t1, "cpu.max"), "5000 100000") == 0, "cpu.max = '%s'", rd(t1, "cpu.max"));

	/* Drift on the real cgroupfs. A write to a cgroup file raises IN_MODIFY
	 * (vfs_write -> fsnotify_modify on kernfs too), so the writer's change
	 * watch sees someone else's echo at its next apply, long before its
	 * 60 s recheck, and writes its own value again. */
	{
		char path[1024];
		char ev[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), wd;

		snprintf(path, sizeof(path), "%s/%s/cpu.max", root, t1);
		wd = fd >= 0 ? inotify_add_watch(fd, path, IN_MODIFY) : -1;
		check(wd >= 0, "inotify watch on %s", path);
		check(wr(t1, "cpu.max", "max 100000") == 0, "someone else writes cpu.max");
		check(fd >= 0 && read(fd, ev, sizeof(ev)) > 0 &&
			  (((struct inotify_event *)ev)->mask & IN_MODIFY),
		      "IN_MODIFY raised by a write to a cgroupfs file");
		if (fd >= 0)
			close(fd);
		r = fs_writer_apply(w, T1, &l, mono_us(), &res);
		check(r == 0 && res.drifted == 1 && res.written == 1,
		      "drift noticed at the next apply and corrected (drifted=%u written=%u)",
		      res.drifted, res.written);
		check(strcmp(rd(t1, "cpu.max"), "5000 100000") == 0, "cpu.max corrected: '%s'",
		      rd(t1, "cpu.max"));
		r = fs_writer_apply(w, T1, &l, mono_us(), &res);
		check(r == 0 && res.drifted == 0 && res.written == 0,
		      "the correction's own event is not drift (drifted=%u written=%u)",
		      res.drifted, res.written);
	}

	/* A real EINVAL: a period below 1 ms. Back-off after 3. */
	{
		struct fs_limits bad = {
		    .set = FS_LIM_CPU_MAX, .cpu_quota_us = 500, .cpu_period_us = 500};
		uint64_t t = mono_us();

		for (int i = 0; i < 3; i++)
			fs_writer_apply(w, T2, &bad, t + (uint64_t)i, &res);
		check(res.failed == 1, "period 500 us refused by the kernel");
		fs_writer_apply(w, T2, &bad, t + 10, &res);
		check(res.unsupported == 1 && res.failed == 0,
		      "cpu.max in back-off after 3 EINVALs");
	}

	/* The sampler: a burner under cpu.max 5000/100000 uses ~0.05 cores. */
	{
		static const char *cgs[] = {"fs-agentio/t1", "fs-agentio/t2"};
		struct fs_sampler_config cfg = {.cgroup_root = root,
						.n_tenants = 2,
						.cgroups = cgs,
						.n_disks = 1,
						.disks = &dev,
						.log = logcb};
		l.cpu_quota_us = 20000;
		l.cpu_burst_us = 0;
		fs_writer_apply(w, T1, &l, mono_us(), &res);
		pid = burner(t1);
		check(fs_sampler_cgroupfs.open(&smp, &cfg) == 0, "sampler opened");
		/* a budget of 2 fds: each tenant keeps its directory only and
		 * opens its files from it (the vanished check below) */
		cfg.max_open_files = 2;
		check(fs_sampler_cgroupfs.open(&smp_dir, &cfg) == 0,
		      "directory-only sampler opened");
		usleep(300000);
		fs_sampler_cgroupfs.sample(smp, mono_us(), s);
		sleep(2);
		fs_sampler_cgroupfs.sample(smp, mono_us(), s);
		printf("# t1 cpu_cores=%.3f throttled_us=%.0f nr_throttled=%.0f mem_current=%.0f "
		       "psi_cpu.some_avg10=%.2f psi_cpu.some_us=%.0f psi_cpu.full_us=%.0f\n",
		       s[0].cpu_cores, s[0].cpu_throttled_us, s[0].cpu_nr_throttled,
		       s[0].mem_current, s[0].psi_cpu.some_avg10, s[0].psi_cpu.some_us,
		       s[0].psi_cpu.full_us);
		check(s[0].present && !s[0].reset, "t1 sampled twice without reset");
		check(s[0].cpu_cores > 0.05 && s[0].cpu_cores < 0.3,
		      "cpu.max 20000/100000 burner: %.3f cores in (0.05, 0.3)", s[0].cpu_cores);
		check(s[0].cpu_nr_throttled >= 5, "throttled %.0f periods in 2 s",
		      s[0].cpu_nr_throttled);
		check(s[0].mem_current >= 8 << 20, "memory.current %.0f >= 8 MiB touched",
		      s[0].mem_current);
		check(s[0].mem_anon >= 8 << 20, "memory.stat anon %.0f >= 8 MiB", s[0].mem_anon);
		check(!isnan(s[0].psi_cpu.some_us) || isnan(s[0].psi_cpu.some_avg10),
		      "cpu.pressure total delta known when PSI is on");
		check(s[1].present && isnan(s[1].cpu_cores) == false && s[1].cpu_cores < 0.01,
		      "idle t2: %.4f cores", s[1].cpu_cores);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);

		/* io.max rbps=4 MiB/s: 4 MiB of O_DIRECT reads take about 1 s,
		 * and io.stat sees exactly those bytes. */
		uint64_t t0 = mono_us(), t1_us;
		double secs;

		fs_sampler_cgroupfs.sample(smp, t0, s);
		secs = direct_read(t1, argv[3]);
		t1_us = mono_us();
		fs_sampler_cgroupfs.sample(smp, t1_us, s);
		printf("# io read 4 MiB in %.2f s; sampled rbps=%.0f riops=%.1f\n", secs,
		       s[0].io[0].rbps, s[0].io[0].riops);
		check(secs >= 0.75, "io.max rbps=4MiB/s throttles a 4 MiB read: %.2f s", secs);
		check(fabs(s[0].io[0].rbps * (double)(t1_us - t0) / 1e6 - 4194304) < 4096,
		      "io.stat rbytes delta = 4 MiB (rbps %.0f over %.2f s)", s[0].io[0].rbps,
		      (double)(t1_us - t0) / 1e6);
	}

	/* Restore writes the originals back; the io.max line disappears. */
	r = fs_writer_restore(w);
	check(r == 0, "restore (r=%d)", r);
	check(strcmp(rd(t1, "cpu.max"), "max 100000") == 0, "cpu.max restored '%s'",
	      rd(t1, "cpu.max"));
	check(strcmp(rd(t1, "cpu.max.burst"), "0") == 0, "cpu.max.burst restored");
	check(strcmp(rd(t1, "memory.max"), "max") == 0, "memory.max restored");
	check(strcmp(rd(t1, "memory.high"), "max") == 0, "memory.high restored");
	check(strcmp(rd(t1, "cpu.weight"), "100") == 0, "cpu.weight restored");
	check(strcmp(rd(t1, "io.max"), "") == 0, "io.max restored (no line): '%s'",
	      rd(t1, "io.max"));
	check(fs_writer_saved_count(w) == 0, "nothing left saved");

	/* A vanished cgroup: gone for the writer, absent for the sampler,
	 * also for one that kept only its directory (no kept file to fail
	 * with ENODEV: its cpu.stat can no longer be opened there). */
	fs_sampler_cgroupfs.sample(smp_dir, mono_us(), sd);
	check(sd[0].present && sd[1].present && sd[0].mem_current > 0,
	      "directory-only sampler: both present, t1 memory.current %.0f", sd[0].mem_current);
	fs_writer_apply(w, T2, &l, mono_us(), &res);
	snprintf(path, sizeof(path), "%s/%s", root, t2);
	check(rmdir(path) == 0, "t2 removed");
	fs_writer_recheck(w, T2); /* unchanged values are not even opened otherwise */
	r = fs_writer_apply(w, T2, &l, mono_us() + 20000000, &res);
	check(r == 0 && res.gone, "apply on removed t2: gone");
	fs_sampler_cgroupfs.sample(smp, mono_us(), s);
	check(!s[1].present, "sampler: t2 absent");
	fs_sampler_cgroupfs.sample(smp_dir, mono_us(), sd);
	check(!sd[1].present && sd[0].present, "directory-only sampler: t2 absent, t1 present");
	check(fs_writer_restore(w) == 0 && fs_writer_saved_count(w) == 0,
	      "restore drops t2's entries");

	fs_sampler_cgroupfs.close(smp);
	fs_sampler_cgroupfs.close(smp_dir);
	fs_writer_close(w);
	snprintf(path, sizeof(path), "%s/%s", root, t1);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/fs-agentio", root);
	rmdir(path);
	snprintf(path, sizeof(path), "rm -rf %s", state_dir);
	if (system(path) != 0)
		return 2;
	printf("%d passed, %d failed\n", n_ok, n_fail);
	return n_fail ? 1 : 0;
}
