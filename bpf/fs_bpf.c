/* SPDX-License-Identifier: MIT */
/* Loading, attaching and closing the fairshare eBPF counters (see fs_bpf.h). */
#include "fs_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fs_bpf_internal.h"
#include "paths.h"

#define FS_BPF_SRC "fs_bpf.c"

#define DEFAULT_MAX_CGROUPS 4096u
#define DEFAULT_MAX_DEVS    4u

/*
 * libbpf's first warning of a failed call (the specific one: later ones only
 * say that the object or skeleton failed) and, from a verifier log, the line
 * that says why. Appended to our message.
 */
static _Thread_local char libbpf_msg[320];

static void first_line(char *dst, size_t len, const char *src)
{
	size_t n = strcspn(src, "\n");

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The verifier's verdict: the line before its closing statistics, if any. */
static const char *verifier_reason(const char *log)
{
	const char *end, *p;

	if (!strstr(log, "-- BEGIN PROG LOAD LOG --"))
		return NULL;
	end = strstr(log, "\nverification time");
	if (!end)
		end = strstr(log, "\nprocessed ");
	if (!end)
		return NULL;
	for (p = end; p > log && p[-1] != '\n'; p--)
		;
	return p;
}

static int capture_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[8192];
	const char *why;
	size_t len;

	if (!fmt)
		return 0;
	/* FS_BPF_LIBBPF_LOG=1: everything libbpf says, verifier logs included. */
	if (getenv("FS_BPF_LIBBPF_LOG")) {
		va_list copy;

		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	why = verifier_reason(buf);
	if (why) {
		len = strlen(libbpf_msg);
		if (len + 4 < sizeof(libbpf_msg)) {
			strcat(libbpf_msg, "; ");
			first_line(libbpf_msg + len + 2, sizeof(libbpf_msg) - len - 2, why);
		}
	} else if (!libbpf_msg[0]) {
		first_line(libbpf_msg, sizeof(libbpf_msg), buf);
	}
	return 0;
}

int fs_bpf_fail_at(const char *file, int line, char *err, size_t errlen, int rc, const char *fmt,
		   ...)
{
	va_list ap;
	int off;

	if (!err || errlen == 0)
		return rc;
	off = snprintf(err, errlen, "%s:%d: ", file, line);
	if (off < 0 || (size_t)off >= errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err + off, errlen - off, fmt, ap);
	va_end(ap);
	off = strlen(err);
	snprintf(err + off, errlen - off, ": %s%s%s", strerror(-rc), libbpf_msg[0] ? " (" : "",
		 libbpf_msg[0] ? libbpf_msg : "");
	if (libbpf_msg[0])
		strncat(err, ")", errlen - strlen(err) - 1);
	return rc;
}

static int open_sched(struct fs_bpf *b, uint32_t max_cgroups, bool exact_wait, char *err,
		      size_t errlen)
{
	struct timespec now;
	int rc;

	if (b->ncpus > FS_BPF_MAX_CPUS)
		return FAIL(-E2BIG, "%d CPUs, sched program built for %d", b->ncpus,
			    FS_BPF_MAX_CPUS);
	b->sched = fs_sched__open();
	if (!b->sched)
		return FAIL(-errno, "open sched skeleton");
	rc = bpf_map__set_max_entries(b->sched->maps.sched_stats, max_cgroups);
	if (rc)
		return FAIL(rc, "size sched_stats to %u", max_cgroups);
	b->sched->rodata->exact_wait = exact_wait;
	clock_gettime(CLOCK_MONOTONIC, &now);
	b->sched->rodata->load_mono_ns = (uint64_t)now.tv_sec * 1000000000u + now.tv_nsec;
	rc = fs_sched__load(b->sched);
	if (rc)
		return FAIL(rc, "load sched program");
	rc = fs_sched__attach(b->sched);
	if (rc)
		return FAIL(rc, "attach sched_switch");
	return 0;
}

static int open_blk(struct fs_bpf *b, uint32_t max_cgroups, uint32_t max_devs, char *err,
		    size_t errlen)
{
	uint64_t entries = (uint64_t)max_cgroups * max_devs;
	int rc;

	if (entries > UINT32_MAX)
		return FAIL(-EINVAL, "blk map of %u cgroups x %u disks", max_cgroups, max_devs);
	b->blk = fs_blk__open();
	if (!b->blk)
		return FAIL(-errno, "open blk skeleton");
	rc = bpf_map__set_max_entries(b->blk->maps.blk_stats, (uint32_t)entries);
	if (rc)
		return FAIL(rc, "size blk_stats to %llu", (unsigned long long)entries);
	rc = fs_blk__load(b->blk);
	if (rc)
		return FAIL(rc, "load blk program");
	rc = fs_blk__attach(b->blk);
	if (rc)
		return FAIL(rc, "attach block_bio_queue");
	return 0;
}

/* bpf_link attachments are always multi-attach (BPF_F_ALLOW_MULTI semantics)
 * and go away with the fd, so a crashed agent leaves nothing attached. */
static int open_net(struct fs_bpf *b, uint32_t max_cgroups, const char *path, char *err,
		    size_t errlen)
{
	struct bpf_link *link;
	int cgfd, rc;

	b->net = fs_net__open();
	if (!b->net)
		return FAIL(-errno, "open net skeleton");
	rc = bpf_map__set_max_entries(b->net->maps.net_stats, max_cgroups);
	if (rc)
		return FAIL(rc, "size net_stats to %u", max_cgroups);
	rc = fs_net__load(b->net);
	if (rc)
		return FAIL(rc, "load net programs");
	cgfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0)
		return FAIL(-errno, "open net attach cgroup %s", path);
	link = bpf_program__attach_cgroup(b->net->progs.fs_net_ingress, cgfd);
	if (!link) {
		rc = FAIL(-errno, "attach cgroup_skb/ingress at %s", path);
		goto out;
	}
	b->net->links.fs_net_ingress = link;
	link = bpf_program__attach_cgroup(b->net->progs.fs_net_egress, cgfd);
	if (!link) {
		rc = FAIL(-errno, "attach cgroup_skb/egress at %s", path);
		goto out;
	}
	b->net->links.fs_net_egress = link;
	rc = 0;
out:
	close(cgfd);
	return rc;
}

int fs_bpf_open(const struct fs_bpf_config *cfg, struct fs_bpf **out, char *err, size_t errlen)
{
	uint32_t max_cgroups, max_devs;
	libbpf_print_fn_t old_print;
	struct fs_bpf *b = NULL;
	size_t vsize;
	int rc;

	*out = NULL;
	libbpf_msg[0] = '\0';
	if (!cfg || !cfg->programs || (cfg->programs & ~FS_BPF_ALL))
		return FAIL(-EINVAL, "programs mask 0x%x", cfg ? cfg->programs : 0);
	if ((cfg->programs & FS_BPF_NET) && (!cfg->net_attach_path || !*cfg->net_attach_path))
		return FAIL(-EINVAL, "net program needs net_attach_path");
	max_cgroups = cfg->max_cgroups ? cfg->max_cgroups : DEFAULT_MAX_CGROUPS;
	max_devs = cfg->max_devs ? cfg->max_devs : DEFAULT_MAX_DEVS;

	old_print = libbpf_set_print(capture_libbpf);
	b = calloc(1, sizeof(*b));
	if (!b) {
		rc = FAIL(-ENOMEM, "allocate handle");
		goto out;
	}
	b->proc_fd = -1;
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0) {
		rc = FAIL(b->ncpus ? b->ncpus : -EINVAL, "count possible CPUs");
		goto out;
	}
	vsize = sizeof(struct fs_sched_val);
	if (sizeof(struct fs_blk_val) > vsize)
		vsize = sizeof(struct fs_blk_val);
	if (sizeof(struct fs_net_val) > vsize)
		vsize = sizeof(struct fs_net_val);
	b->pcpu_buf = calloc(b->ncpus, pcpu_stride(vsize));
	if (!b->pcpu_buf) {
		rc = FAIL(-ENOMEM, "allocate per-CPU buffer for %d CPUs", b->ncpus);
		goto out;
	}
	if (cfg->programs & FS_BPF_SCHED) {
		const char *proc = cfg->procfs_root && *cfg->procfs_root ? cfg->procfs_root
									 : FS_DEFAULT_PROCFS_ROOT;

		b->proc_fd = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (b->proc_fd < 0) {
			rc = FAIL(-errno, "open procfs root %s", proc);
			goto out;
		}
		rc = open_sched(b, max_cgroups, !cfg->approx_wait, err, errlen);
		if (rc)
			goto out;
	}
	if (cfg->programs & FS_BPF_BLK) {
		rc = open_blk(b, max_cgroups, max_devs, err, errlen);
		if (rc)
			goto out;
	}
	if (cfg->programs & FS_BPF_NET) {
		rc = open_net(b, max_cgroups, cfg->net_attach_path, err, errlen);
		if (rc)
			goto out;
	}
	b->programs = cfg->programs;
	*out = b;
	b = NULL;
	rc = 0;
out:
	libbpf_set_print(old_print);
	fs_bpf_close(b);
	return rc;
}

void fs_bpf_close(struct fs_bpf *b)
{
	if (!b)
		return;
	fs_net__destroy(b->net);
	fs_blk__destroy(b->blk);
	fs_sched__destroy(b->sched);
	if (b->proc_fd >= 0)
		close(b->proc_fd);
	free(b->pcpu_buf);
	free(b);
}

unsigned int fs_bpf_programs(const struct fs_bpf *b)
{
	return b ? b->programs : 0;
}

uint64_t fs_bpf_sched_unseen(const struct fs_bpf *b)
{
	uint64_t n = 0;
	int cpu;

	if (!b || !b->sched)
		return 0;
	for (cpu = 0; cpu < b->ncpus; cpu++)
		n += __atomic_load_n(&b->sched->bss->fs_sched_unseen[cpu], __ATOMIC_RELAXED);
	return n;
}

static int stats_of(struct bpf_object *obj, struct fs_bpf_prog_stats *st, size_t max, size_t *n,
		    char *err, size_t errlen)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		struct bpf_prog_info info = {0};
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue;
		if (*n == max)
			return FAIL(-ENOSPC, "more than %zu programs", max);
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return FAIL(-errno, "info of program %s", bpf_program__name(prog));
		snprintf(st[*n].name, sizeof(st[*n].name), "%s", info.name);
		st[*n].id = info.id;
		st[*n].run_cnt = info.run_cnt;
		st[*n].run_time_ns = info.run_time_ns;
		(*n)++;
	}
	return 0;
}

int fs_bpf_prog_stats(struct fs_bpf *b, struct fs_bpf_prog_stats *st, size_t max, size_t *n,
		      char *err, size_t errlen)
{
	int rc = 0;

	*n = 0;
	if (b->sched)
		rc = stats_of(b->sched->obj, st, max, n, err, errlen);
	if (!rc && b->blk)
		rc = stats_of(b->blk->obj, st, max, n, err, errlen);
	if (!rc && b->net)
		rc = stats_of(b->net->obj, st, max, n, err, errlen);
	return rc;
}
