/* SPDX-License-Identifier: MIT */
/* The period benchmark's generated fake host (see fake_tree.h). */
#include "fake_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLICE	   "fs-bench.slice"
#define CPU_PERIOD 100000 /* the cpu.max period the files start with, us */
#define IO_CHUNK   65536  /* bytes per fake IO operation */

/* ---- deterministic randomness -------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	/* splitmix64: every seed (0 too) gives a good stream */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [a, b). */
static double rng_uniform(uint64_t *s, double a, double b)
{
	return a + (b - a) * (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

/* ---- files ---------------------------------------------------------------- */

static int write_at(int dirfd, const char *file, const char *text)
{
	size_t len = strlen(text);
	int fd = openat(dirfd, file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0 || (size_t)n != len) {
		int r = n < 0 ? -errno : -EIO;

		close(fd);
		return r;
	}
	return close(fd) < 0 ? -errno : 0;
}

static int write_file(const char *path, const char *text)
{
	return write_at(AT_FDCWD, path, text);
}

static int read_at(int dirfd, const char *file, char *buf, size_t len)
{
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

/* ---- tenants -------------------------------------------------------------- */

void fake_tree_cgroup(size_t i, char *buf, size_t len)
{
	snprintf(buf, len, SLICE "/t%04zu.scope", i);
}

/* Draws a kind and what the tenant wants of each resource. The wants are
 * scaled with N so that every N sees the same host: CPU ~2.8x oversubscribed
 * (the one bottleneck: the planner stays in limits mode and writes cpu.max),
 * the disk busy at ~60% of its capacity, under the planner's `busy` share
 * (0.85), which would make it a second bottleneck and switch to weights. */
static void draw_kind(struct fake_tree *ft, struct fake_tenant *t)
{
	const double r_unit = (double)ft->disk_rbps / (double)ft->n;
	const double w_unit = (double)ft->disk_wbps / (double)ft->n;
	const double u = rng_uniform(&ft->rng, 0, 1);
	/* the active kinds in the proportions 4:3:2, the rest idle; exactly
	 * 1 for FAKE_IDLE_DEFAULT, so the busy host's draws are as they were */
	const double a = (1 - ft->idle) / (1 - FAKE_IDLE_DEFAULT);

	if (u < 0.4 * a) {
		t->kind = FAKE_CPU;
		t->want_cores = rng_uniform(&ft->rng, 1, 3);
		t->want_rbps = r_unit * rng_uniform(&ft->rng, 0, 0.2);
		t->want_wbps = w_unit * rng_uniform(&ft->rng, 0, 0.2);
	} else if (u < 0.7 * a) {
		t->kind = FAKE_IO;
		t->want_cores = rng_uniform(&ft->rng, 0.05, 0.15);
		t->want_rbps = r_unit * rng_uniform(&ft->rng, 0.8, 2.2);
		t->want_wbps = w_unit * rng_uniform(&ft->rng, 0.8, 2.2);
	} else if (u < 0.9 * a) {
		t->kind = FAKE_MIXED;
		t->want_cores = rng_uniform(&ft->rng, 0.2, 0.8);
		t->want_rbps = r_unit * rng_uniform(&ft->rng, 0.25, 1);
		t->want_wbps = w_unit * rng_uniform(&ft->rng, 0.25, 1);
	} else {
		t->kind = FAKE_IDLE;
		t->want_cores = t->want_rbps = t->want_wbps = 0;
	}
}

static void fmt_psi(char *buf, size_t len, double avg, uint64_t total)
{
	snprintf(buf, len,
		 "some avg10=%.2f avg60=%.2f avg300=%.2f total=%" PRIu64 "\n"
		 "full avg10=%.2f avg60=%.2f avg300=%.2f total=%" PRIu64 "\n",
		 avg, avg, avg, total, avg / 2, avg / 2, avg / 2, total / 2);
}

/* Writes the files of the counters and gauges that move. */
static int write_counters(const struct fake_tree *ft, int dirfd, const struct fake_tenant *t)
{
	char buf[512];
	int r;

	snprintf(buf, sizeof(buf),
		 "usage_usec %" PRIu64 "\nuser_usec %" PRIu64 "\nsystem_usec %" PRIu64
		 "\nnr_periods %" PRIu64 "\nnr_throttled %" PRIu64 "\nthrottled_usec %" PRIu64
		 "\nnr_bursts 0\nburst_usec 0\n",
		 t->usage_usec, t->user_usec, t->system_usec, t->nr_periods, t->nr_throttled,
		 t->throttled_usec);
	r = write_at(dirfd, "cpu.stat", buf);
	if (r == 0) {
		snprintf(buf, sizeof(buf),
			 "%u:%u rbytes=%" PRIu64 " wbytes=%" PRIu64 " rios=%" PRIu64
			 " wios=%" PRIu64 " dbytes=0 dios=0\n",
			 ft->disk_maj, ft->disk_min, t->rbytes, t->wbytes, t->rios, t->wios);
		r = write_at(dirfd, "io.stat", buf);
	}
	if (r == 0) {
		snprintf(buf, sizeof(buf), "%" PRIu64 "\n", t->mem_current);
		r = write_at(dirfd, "memory.current", buf);
	}
	if (r == 0) {
		const uint64_t anon = t->mem_current / 10 * 6, file = t->mem_current - anon;

		snprintf(buf, sizeof(buf),
			 "anon %" PRIu64 "\nfile %" PRIu64 "\nkernel 0\nshmem 0\n"
			 "active_anon %" PRIu64 "\ninactive_anon %" PRIu64 "\nactive_file %" PRIu64
			 "\ninactive_file %" PRIu64 "\n",
			 anon, file, anon / 2, anon - anon / 2, file / 2, file - file / 2);
		r = write_at(dirfd, "memory.stat", buf);
	}
	if (r == 0) {
		fmt_psi(buf, sizeof(buf), t->psi_cpu_avg, t->psi_cpu_total);
		r = write_at(dirfd, "cpu.pressure", buf);
	}
	if (r == 0) {
		fmt_psi(buf, sizeof(buf), t->psi_io_avg, t->psi_io_total);
		r = write_at(dirfd, "io.pressure", buf);
	}
	return r;
}

static int open_tenant(const struct fake_tree *ft, size_t i)
{
	char rel[64], path[PATH_MAX];
	int fd;

	fake_tree_cgroup(i, rel, sizeof(rel));
	if (pathf(path, sizeof(path), "%s/%s", ft->cg_root, rel) < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int make_tenant(struct fake_tree *ft, size_t i)
{
	static const struct {
		const char *file, *text;
	} fixed[] = {
	    /* what the writer writes, at the kernel's defaults */
	    {"cpu.max", "max 100000\n"},
	    {"cpu.weight", "100\n"},
	    {"memory.high", "max\n"},
	    {"memory.max", "max\n"},
	    {"memory.low", "0\n"},
	    {"io.weight", "default 100\n"},
	    {"io.max", ""},
	    /* read, never moving here */
	    {"memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"},
	    {"memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
				"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"},
	    {"cgroup.procs", ""},
	};
	struct fake_tenant *t = &ft->t[i];
	char rel[64], path[PATH_MAX];
	int dirfd, r = 0;

	fake_tree_cgroup(i, rel, sizeof(rel));
	if (pathf(path, sizeof(path), "%s/%s", ft->cg_root, rel) < 0)
		return -ENAMETOOLONG;
	if (mkdir(path, 0755) < 0)
		return -errno;
	draw_kind(ft, t);
	/* counters start where a host that has been up a while has them */
	t->usage_usec = (uint64_t)rng_uniform(&ft->rng, 1e6, 1e10);
	t->user_usec = t->usage_usec / 10 * 7;
	t->system_usec = t->usage_usec - t->user_usec;
	t->rbytes = (uint64_t)rng_uniform(&ft->rng, 0, 1e11);
	t->wbytes = (uint64_t)rng_uniform(&ft->rng, 0, 1e11);
	t->rios = t->rbytes / IO_CHUNK;
	t->wios = t->wbytes / IO_CHUNK;
	t->mem_current = (uint64_t)rng_uniform(&ft->rng, 64, 1024) << 20;
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	for (size_t k = 0; r == 0 && k < sizeof(fixed) / sizeof(fixed[0]); k++)
		r = write_at(dirfd, fixed[k].file, fixed[k].text);
	if (r == 0)
		r = write_counters(ft, dirfd, t);
	close(dirfd);
	return r;
}

/* <procfs_root>/meminfo: the configured memory as MemTotal, and available
 * what the present tenants do not use (no page cache, no kernel). */
static int write_meminfo(const struct fake_tree *ft)
{
	char path[PATH_MAX], text[128];
	uint64_t used = 0;

	for (size_t i = 0; i < ft->n; i++)
		if (!ft->t[i].gone)
			used += ft->t[i].mem_current;
	if (used > ft->mem_total)
		used = ft->mem_total;
	if (pathf(path, sizeof(path), "%s/meminfo", ft->procfs_root) < 0)
		return -ENAMETOOLONG;
	snprintf(text, sizeof(text),
		 "MemTotal: %" PRIu64 " kB\nMemFree: %" PRIu64 " kB\nMemAvailable: %" PRIu64
		 " kB\n",
		 ft->mem_total >> 10, (ft->mem_total - used) >> 10, (ft->mem_total - used) >> 10);
	return write_file(path, text);
}

/* <root>/<dir>/<name> with its directories. */
static int write_in(const char *root, const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	int r;

	if (pathf(path, sizeof(path), "%s/%s", root, dir) < 0)
		return -ENAMETOOLONG;
	r = mkdir_p(path);
	if (r == 0 && pathf(path, sizeof(path), "%s/%s/%s", root, dir, name) < 0)
		r = -ENAMETOOLONG;
	return r < 0 ? r : write_file(path, text);
}

/* A host with PSI and no memory stall; meminfo as write_meminfo says; the
 * host's own inotify watch limit (the writer's watches are real ones, and
 * fairshared takes half of it: writer_watches in daemon.c). */
static int make_procfs(const struct fake_tree *ft)
{
	char text[32];
	int r = 0;

	if (read_at(AT_FDCWD, "/proc/sys/fs/inotify/max_user_watches", text, sizeof(text)) == 0)
		r = write_in(ft->procfs_root, "sys/fs/inotify", "max_user_watches", text);
	if (r == 0)
		r = write_in(ft->procfs_root, "pressure", "memory",
			     "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
			     "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	return r < 0 ? r : write_meminfo(ft);
}

/* <sys>/dev/block/MAJ:MIN -> a whole disk (no "partition", no "dm"), as
 * fs_conf_resolve_disk() walks it. */
static int make_sysfs(const struct fake_tree *ft)
{
	char dev[PATH_MAX], path[PATH_MAX], text[32];
	int r;

	if (pathf(dev, sizeof(dev), "%s/devices/virtual/block/fsbench0", ft->sysfs_root) < 0)
		return -ENAMETOOLONG;
	if (pathf(path, sizeof(path), "%s/queue", dev) < 0)
		return -ENAMETOOLONG;
	r = mkdir_p(path);
	if (r < 0)
		return r;
	snprintf(text, sizeof(text), "%u:%u\n", ft->disk_maj, ft->disk_min);
	if (pathf(path, sizeof(path), "%s/dev", dev) < 0)
		return -ENAMETOOLONG;
	r = write_file(path, text);
	if (r < 0)
		return r;
	/* not BFQ: io.weight is not honoured, io.max carries the disk's limits */
	if (pathf(path, sizeof(path), "%s/queue/scheduler", dev) < 0)
		return -ENAMETOOLONG;
	r = write_file(path, "none [mq-deadline] kyber\n");
	if (r < 0)
		return r;
	/* the disk's own counters (agent/sample/sample_disk.h): an idle disk */
	if (pathf(path, sizeof(path), "%s/stat", dev) < 0)
		return -ENAMETOOLONG;
	r = write_file(path, "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
	if (r < 0)
		return r;
	if (pathf(path, sizeof(path), "%s/dev/block", ft->sysfs_root) < 0)
		return -ENAMETOOLONG;
	r = mkdir_p(path);
	if (r < 0)
		return r;
	if (pathf(path, sizeof(path), "%s/dev/block/%u:%u", ft->sysfs_root, ft->disk_maj,
		  ft->disk_min) < 0)
		return -ENAMETOOLONG;
	if (symlink("../../devices/virtual/block/fsbench0", path) < 0)
		return -errno;
	return 0;
}

/* The config for the first n_tenants tenants, one section each or one
 * template for all (its weight 1: overrides are bounded per template). */
static int write_conf(const struct fake_tree *ft, const char *path, size_t n_tenants,
		      enum fake_conf conf)
{
	char *text = NULL, rel[64];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	if (!f)
		return -errno;
	fprintf(f,
		"# generated by fairshare-bench-period: %zu tenants\n"
		"[agent]\n"
		"interval = 1s\n"
		"policy = psdsf\n"
		"cgroup_root = %s\n"
		"state_dir = %s\n"
		/* never opened: the benchmark drives periods without the event loop */
		"socket = %s/control.sock\n"
		"on_exit = restore\n"
		"sampler = cgroupfs\n"
		"\n[resources]\n"
		"cpu = %g\n"
		"memory = %" PRIu64 "\n"
		"io.disk0 = %u:%u %" PRIu64 " %" PRIu64 "\n",
		n_tenants, ft->cg_root, ft->state_dir, ft->dir, ft->cpu_cores, ft->mem_total,
		ft->disk_maj, ft->disk_min, ft->disk_rbps, ft->disk_wbps);
	if (conf == FAKE_CONF_TEMPLATE)
		fprintf(f, "\n[template.bench]\nmatch = " SLICE "/t*.scope\nweight = 1\n");
	for (size_t i = 0; conf == FAKE_CONF_TENANTS && i < n_tenants; i++) {
		fake_tree_cgroup(i, rel, sizeof(rel));
		fprintf(f, "\n[tenant.t%04zu]\ncgroup = %s\nweight = %g\n", i, rel,
			ft->t[i].weight);
	}
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	r = write_file(path, text);
	free(text);
	return r;
}

static int make_conf(struct fake_tree *ft, enum fake_conf conf)
{
	static const double weights[] = {0.5, 1, 1, 1, 2, 2, 3, 4};

	for (size_t i = 0; i < ft->n; i++)
		ft->t[i].weight =
		    weights[rng_next(&ft->rng) % (sizeof(weights) / sizeof(weights[0]))];
	return write_conf(ft, ft->conf_path, ft->n, conf);
}

const char *fake_tree_default_base(void)
{
	const char *tmp = getenv("TMPDIR");
	struct stat st;

	if (tmp && *tmp)
		return tmp;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	return "/tmp";
}

/* A cgroup v2 root with cpu, io and memory on for the slice and its
 * children, so the daemon's host checks (agent/daemon/check.h) pass. */
static int make_v2_root(const struct fake_tree *ft)
{
	char path[PATH_MAX];
	int r;

	if (pathf(path, sizeof(path), "%s/cgroup.controllers", ft->cg_root) < 0)
		return -ENAMETOOLONG;
	r = write_file(path, "cpuset cpu io memory pids\n");
	if (r == 0 && pathf(path, sizeof(path), "%s/cgroup.subtree_control", ft->cg_root) < 0)
		return -ENAMETOOLONG;
	if (r == 0)
		r = write_file(path, "cpu io memory\n");
	if (r == 0 &&
	    pathf(path, sizeof(path), "%s/" SLICE "/cgroup.subtree_control", ft->cg_root) < 0)
		return -ENAMETOOLONG;
	if (r == 0)
		r = write_file(path, "cpu io memory\n");
	return r;
}

int fake_tree_create(struct fake_tree *ft, size_t n, uint64_t seed, const char *base,
		     enum fake_conf conf, double idle)
{
	char tmpl[PATH_MAX], path[PATH_MAX];
	int r;

	memset(ft, 0, sizeof(*ft));
	if (pathf(tmpl, sizeof(tmpl), "%s/fs-bench-period.XXXXXX",
		  base ? base : fake_tree_default_base()) < 0)
		return -ENAMETOOLONG;
	if (!mkdtemp(tmpl))
		return -errno;
	ft->dir = strdup(tmpl);
	ft->t = calloc(n ? n : 1, sizeof(*ft->t));
	if (!ft->dir || !ft->t) {
		r = -ENOMEM;
		goto fail;
	}
	ft->n = n;
	ft->idle = idle;
	ft->rng = seed * 0x2545f4914f6cdd1dull + n;
	/* A major no host hands out dynamically (60-63: "local/experimental
	 * use"), so a daemon that looks at the host's /sys finds nothing. */
	ft->disk_maj = 60;
	ft->disk_min = 0;
	ft->cpu_cores = n / 3 > 2 ? (double)(n / 3) : 2;
	ft->mem_total = (uint64_t)n << 30;
	ft->disk_rbps = (uint64_t)n * 4000000;
	ft->disk_wbps = (uint64_t)n * 2000000;
	if (pathf(ft->cg_root, sizeof(ft->cg_root), "%s/cg", ft->dir) < 0 ||
	    pathf(ft->sysfs_root, sizeof(ft->sysfs_root), "%s/sys", ft->dir) < 0 ||
	    pathf(ft->procfs_root, sizeof(ft->procfs_root), "%s/proc", ft->dir) < 0 ||
	    pathf(ft->state_dir, sizeof(ft->state_dir), "%s/state", ft->dir) < 0 ||
	    pathf(ft->conf_path, sizeof(ft->conf_path), "%s/fairshare.conf", ft->dir) < 0 ||
	    pathf(path, sizeof(path), "%s/" SLICE, ft->cg_root) < 0) {
		r = -ENAMETOOLONG;
		goto fail;
	}
	r = mkdir_p(path);
	if (r < 0)
		goto fail;
	r = make_v2_root(ft);
	if (r == 0)
		r = make_sysfs(ft);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = make_tenant(ft, i);
	if (r == 0)
		r = make_conf(ft, conf);
	if (r == 0)
		r = make_procfs(ft);
	if (r < 0)
		goto fail;
	return 0;
fail:
	fake_tree_destroy(ft);
	return r;
}

/* A limit in a "KEY=VALUE" list ("max" or missing = unlimited). */
static double io_limit(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	if (!p)
		return INFINITY;
	p += strlen(key);
	if (!strncmp(p, "max", 3))
		return INFINITY;
	return strtod(p, NULL);
}

static void advance_one(struct fake_tree *ft, struct fake_tenant *t, int dirfd, double dt)
{
	char buf[256];
	double limit = INFINITY, cores, rbps, wbps, rlim = INFINITY, wlim = INFINITY;
	uint64_t period = CPU_PERIOD;

	/* a few tenants change what they do now and then */
	if (rng_uniform(&ft->rng, 0, 1) < 0.02)
		draw_kind(ft, t);
	/* what the daemon enforces now, as the kernel would apply it */
	if (read_at(dirfd, "cpu.max", buf, sizeof(buf)) == 0) {
		unsigned long long q, p;

		if (sscanf(buf, "%llu %llu", &q, &p) == 2 && p > 0) {
			limit = (double)q / (double)p;
			period = p;
		} else if (sscanf(buf, "max %llu", &p) == 1 && p > 0) {
			period = p;
		}
	}
	if (read_at(dirfd, "io.max", buf, sizeof(buf)) == 0 && buf[0]) {
		rlim = io_limit(buf, "rbps=");
		wlim = io_limit(buf, "wbps=");
	}
	cores = t->want_cores * rng_uniform(&ft->rng, 0.8, 1.2);
	rbps = t->want_rbps * rng_uniform(&ft->rng, 0.8, 1.2);
	wbps = t->want_wbps * rng_uniform(&ft->rng, 0.8, 1.2);
	if (cores > 0) {
		const double used = fmin(cores, limit);
		const uint64_t us = (uint64_t)(used * dt * 1e6);
		const uint64_t periods = (uint64_t)(dt * 1e6 / (double)period);

		t->usage_usec += us;
		t->user_usec += us / 10 * 7;
		t->system_usec += us - us / 10 * 7;
		if (isfinite(limit))
			t->nr_periods += periods;
		if (cores > limit) {
			t->nr_throttled += periods;
			t->throttled_usec += (uint64_t)((cores - limit) * dt * 1e6);
		}
		t->psi_cpu_avg = cores > limit ? fmin(99, 100 * (cores - limit) / cores) : 0;
		t->psi_cpu_total += (uint64_t)(t->psi_cpu_avg / 100 * dt * 1e6);
	} else {
		t->psi_cpu_avg = 0;
	}
	rbps = fmin(rbps, rlim);
	wbps = fmin(wbps, wlim);
	t->rbytes += (uint64_t)(rbps * dt);
	t->wbytes += (uint64_t)(wbps * dt);
	t->rios = t->rbytes / IO_CHUNK;
	t->wios = t->wbytes / IO_CHUNK;
	t->psi_io_avg =
	    t->want_rbps > rlim || t->want_wbps > wlim ? rng_uniform(&ft->rng, 5, 40) : 0;
	t->psi_io_total += (uint64_t)(t->psi_io_avg / 100 * dt * 1e6);
	/* memory drifts by up to 5% either way, within 32 MiB .. 2 GiB */
	if (t->kind != FAKE_IDLE) {
		double m = (double)t->mem_current * rng_uniform(&ft->rng, 0.95, 1.05);

		t->mem_current = (uint64_t)fmin(fmax(m, 32.0 * (1 << 20)), 2048.0 * (1 << 20));
		t->mem_current &= ~(uint64_t)4095;
	}
}

int fake_tree_advance(struct fake_tree *ft, uint64_t dt_us)
{
	const double dt = (double)dt_us / 1e6;

	for (size_t i = 0; i < ft->n; i++) {
		struct fake_tenant *t = &ft->t[i];
		int dirfd, r;

		if (t->gone)
			continue;
		dirfd = open_tenant(ft, i);
		if (dirfd < 0)
			return dirfd;
		advance_one(ft, t, dirfd, dt);
		/* idle tenants' files stay as they are, as on a host */
		r = t->kind == FAKE_IDLE ? 0 : write_counters(ft, dirfd, t);
		close(dirfd);
		if (r < 0)
			return r;
	}
	return write_meminfo(ft);
}

int fake_tree_read(const struct fake_tree *ft, size_t i, const char *file, char *buf, size_t len)
{
	int dirfd = open_tenant(ft, i), r;

	if (dirfd < 0)
		return dirfd;
	r = read_at(dirfd, file, buf, len);
	close(dirfd);
	if (r == 0)
		buf[strcspn(buf, "\n")] = '\0';
	return r;
}

int fake_tree_toggle(struct fake_tree *ft, size_t i)
{
	char rel[64], path[PATH_MAX];
	int r;

	if (i >= ft->n)
		return -EINVAL;
	if (ft->t[i].gone) {
		r = make_tenant(ft, i);
		if (r == 0)
			ft->t[i].gone = false;
		return r;
	}
	fake_tree_cgroup(i, rel, sizeof(rel));
	if (pathf(path, sizeof(path), "%s/%s", ft->cg_root, rel) < 0)
		return -ENAMETOOLONG;
	if (nftw(path, rm_one, 8, FTW_DEPTH | FTW_PHYS) != 0)
		return errno ? -errno : -EIO;
	ft->t[i].gone = true;
	return 0;
}

void fake_tree_destroy(struct fake_tree *ft)
{
	if (ft->dir)
		nftw(ft->dir, rm_one, 64, FTW_DEPTH | FTW_PHYS);
	free(ft->dir);
	free(ft->t);
	memset(ft, 0, sizeof(*ft));
}
