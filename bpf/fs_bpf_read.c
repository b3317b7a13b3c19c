/* SPDX-License-Identifier: MIT */
/* Reading the counters: cgroup ids, subtree walks, per-CPU sums (see fs_bpf.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fs_bpf_internal.h"

#define FS_BPF_SRC "fs_bpf_read.c"

#define MAX_WALK_DEPTH	 64
#define SCHED_READ_TRIES 100 /* with retry_pause: up to ~0.1 s */

static const struct timespec retry_pause = {.tv_nsec = 1000000};

struct id_set {
	uint64_t *v;
	size_t n, cap;
};

static int fd_cgroup_id(int fd, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t cgid;
	} h = {.fh.handle_bytes = sizeof(uint64_t)};
	struct stat st;
	int mount_id;

	if (name_to_handle_at(fd, "", &h.fh, &mount_id, AT_EMPTY_PATH) == 0 &&
	    h.fh.handle_bytes == sizeof(uint64_t)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	/* kernfs inode number == cgroup id on 64-bit ino_t */
	if (fstat(fd, &st) < 0)
		return -errno;
	*id = st.st_ino;
	return 0;
}

static int open_dir(int dirfd, const char *path)
{
	if (!path || !*path)
		path = ".";
	return openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int fs_bpf_cgroup_id(int dirfd, const char *path, uint64_t *id, char *err, size_t errlen)
{
	int fd, rc;

	fd = open_dir(dirfd, path);
	if (fd < 0)
		return FAIL(-errno, "open cgroup %s", path ? path : ".");
	rc = fd_cgroup_id(fd, id);
	close(fd);
	if (rc)
		return FAIL(rc, "cgroup id of %s", path ? path : ".");
	return 0;
}

static int ids_add(struct id_set *s, uint64_t id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = id;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool ids_has(const struct id_set *s, uint64_t id)
{
	return id && bsearch(&id, s->v, s->n, sizeof(*s->v), cmp_u64);
}

/* Collect the ids of the cgroup open at fd and of all its descendants; takes fd. */
static int walk(int fd, const char *path, int depth, struct id_set *s, char *err, size_t errlen)
{
	struct dirent *de;
	DIR *dir = NULL;
	uint64_t id;
	int rc;

	if (depth > MAX_WALK_DEPTH) {
		rc = FAIL(-ELOOP, "cgroup tree below %s deeper than %d", path, MAX_WALK_DEPTH);
		goto out;
	}
	rc = fd_cgroup_id(fd, &id);
	if (rc) {
		FAIL(rc, "cgroup id of %s", path);
		goto out;
	}
	rc = ids_add(s, id);
	if (rc) {
		FAIL(rc, "remember cgroup id");
		goto out;
	}
	dir = fdopendir(fd);
	if (!dir) {
		rc = FAIL(-errno, "list cgroup %s", path);
		goto out;
	}
	fd = -1;
	while ((errno = 0, de = readdir(dir))) {
		int child;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (child < 0) {
			if (errno == ENOENT) /* removed while we walk */
				continue;
			rc = FAIL(-errno, "open cgroup %s/%s", path, de->d_name);
			goto out;
		}
		rc = walk(child, de->d_name, depth + 1, s, err, errlen);
		if (rc)
			goto out;
	}
	if (errno) {
		rc = FAIL(-errno, "read cgroup directory %s", path);
		goto out;
	}
	rc = 0;
out:
	if (dir)
		closedir(dir);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Per-CPU values of key in map fd into b->pcpu_buf; 1 if found, 0 if absent. */
static int lookup_pcpu(struct fs_bpf *b, int fd, const void *key)
{
	if (bpf_map_lookup_elem(fd, key, b->pcpu_buf) == 0)
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

#define PCPU(b, type, cpu)                                                                         \
	((const type *)((const char *)(b)->pcpu_buf + (cpu)*pcpu_stride(sizeof(type))))

/* Snapshot one CPU's state: a seqcount read of the mmapped entry. */
static bool snap_cpu(const struct fs_sched_cpu *src, struct fs_sched_cpu *dst)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		uint64_t seq = __atomic_load_n(&src->seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		dst->cgid = __atomic_load_n(&src->cgid, __ATOMIC_RELAXED);
		dst->pid = __atomic_load_n(&src->pid, __ATOMIC_RELAXED);
		dst->run0 = __atomic_load_n(&src->run0, __ATOMIC_RELAXED);
		dst->delay0 = __atomic_load_n(&src->delay0, __ATOMIC_RELAXED);
		dst->acc_cgid = __atomic_load_n(&src->acc_cgid, __ATOMIC_RELAXED);
		dst->acc_cpu_ns = __atomic_load_n(&src->acc_cpu_ns, __ATOMIC_RELAXED);
		dst->acc_wait_ns = __atomic_load_n(&src->acc_wait_ns, __ATOMIC_RELAXED);
		dst->acc_pwait_ns = __atomic_load_n(&src->acc_pwait_ns, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&src->seq, __ATOMIC_RELAXED) == seq) {
			dst->seq = seq;
			return true;
		}
	}
	return false;
}

/* Kernel's runtime and run_delay of a task, including its current run
 * (PID/schedstat under the procfs root). */
static bool task_schedstat(const struct fs_bpf *b, uint64_t pid, uint64_t *run, uint64_t *delay)
{
	unsigned long long r, d;
	char path[32], text[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%llu/schedstat", (unsigned long long)pid);
	fd = openat(b->proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	do {
		n = read(fd, text, sizeof(text) - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	if (sscanf(text, "%llu %llu", &r, &d) != 2)
		return false;
	*run = r;
	*delay = d;
	return true;
}

/*
 * Flushed sums + per-CPU unflushed sums + running parts. A switch during the
 * read could count a run twice (e.g. unflushed, then flushed) or not at all,
 * so retry when a CPU holding one of our cgroups changed meanwhile.
 */
static int read_sched(struct fs_bpf *b, const struct id_set *s, struct fs_bpf_counters *out,
		      char *err, size_t errlen)
{
	const struct fs_sched_cpu *cpus = b->sched->bss->fs_sched_cpus;
	int fd = bpf_map__fd(b->sched->maps.sched_stats);
	uint64_t cpu_ns = 0, wait_ns = 0, pwait_ns = 0;
	struct fs_sched_cpu *c1 = NULL;
	bool *bad = NULL;
	int rc, tries, cpu;
	size_t i;

	c1 = calloc(b->ncpus, sizeof(*c1));
	bad = calloc(b->ncpus, sizeof(*bad));
	if (!c1 || !bad) {
		rc = FAIL(-ENOMEM, "allocate %d CPU states", b->ncpus);
		goto out;
	}
	for (tries = 0; tries < SCHED_READ_TRIES; tries++) {
		bool stable = true;

		for (cpu = 0; cpu < b->ncpus; cpu++)
			bad[cpu] = !snap_cpu(&cpus[cpu], &c1[cpu]);
		cpu_ns = wait_ns = pwait_ns = 0;
		for (i = 0; i < s->n; i++) {
			rc = lookup_pcpu(b, fd, &s->v[i]);
			if (rc < 0) {
				FAIL(rc, "read sched_stats of cgroup %llu",
				     (unsigned long long)s->v[i]);
				goto out;
			}
			for (cpu = 0; rc && cpu < b->ncpus; cpu++) {
				cpu_ns += PCPU(b, struct fs_sched_val, cpu)->cpu_ns;
				wait_ns += PCPU(b, struct fs_sched_val, cpu)->wait_ns;
				pwait_ns += PCPU(b, struct fs_sched_val, cpu)->pwait_ns;
			}
		}
		for (cpu = 0; stable && cpu < b->ncpus; cpu++) {
			const struct fs_sched_cpu *c = &c1[cpu];
			bool running = ids_has(s, c->cgid), acc = ids_has(s, c->acc_cgid);
			uint64_t run = c->run0, delay = c->delay0;
			struct fs_sched_cpu c2;

			if (!bad[cpu] && !running && !acc)
				continue;
			/*
			 * Gone from procfs but still on the CPU: an exiting task
			 * before its last switch (its parent may reap it first).
			 * That switch is imminent and charges the run: wait for it.
			 */
			if (!bad[cpu] && running && !task_schedstat(b, c->pid, &run, &delay))
				bad[cpu] = true;
			if (bad[cpu] || !snap_cpu(&cpus[cpu], &c2) || c2.seq != c->seq) {
				stable = false;
				break;
			}
			if (acc) {
				cpu_ns += c->acc_cpu_ns;
				wait_ns += c->acc_wait_ns;
				pwait_ns += c->acc_pwait_ns;
			}
			if (running && run > c->run0)
				cpu_ns += run - c->run0;
			if (running && delay > c->delay0)
				wait_ns += delay - c->delay0;
		}
		if (stable)
			break;
		nanosleep(&retry_pause, NULL);
	}
	if (tries == SCHED_READ_TRIES) {
		rc = FAIL(-EAGAIN, "sched counters kept changing during %d reads", tries);
		goto out;
	}
	out->cpu_ns += cpu_ns;
	out->wait_ns += wait_ns;
	/* The running task's wait so far is in wait_ns only: how its run ends
	 * decides, at its switch-out. */
	out->pwait_ns += pwait_ns;
	rc = 0;
out:
	free(c1);
	free(bad);
	return rc;
}

static int read_net(struct fs_bpf *b, const struct id_set *s, struct fs_bpf_counters *out,
		    char *err, size_t errlen)
{
	int fd = bpf_map__fd(b->net->maps.net_stats);
	size_t i;
	int rc, cpu;

	for (i = 0; i < s->n; i++) {
		rc = lookup_pcpu(b, fd, &s->v[i]);
		if (rc < 0)
			return FAIL(rc, "read net_stats of cgroup %llu",
				    (unsigned long long)s->v[i]);
		for (cpu = 0; rc && cpu < b->ncpus; cpu++) {
			const struct fs_net_val *v = PCPU(b, struct fs_net_val, cpu);

			out->rx_bytes += v->rx_bytes;
			out->rx_packets += v->rx_packets;
			out->tx_bytes += v->tx_bytes;
			out->tx_packets += v->tx_packets;
		}
	}
	return 0;
}

static struct fs_bpf_dev_io *dev_slot(struct fs_bpf_counters *out, uint32_t major, uint32_t minor)
{
	unsigned int i;

	for (i = 0; i < out->ndevs; i++) {
		struct fs_bpf_dev_io *d = &out->devs[i];

		if (d->major == major && d->minor == minor)
			return d;
		if (d->major > major || (d->major == major && d->minor > minor))
			break;
	}
	if (out->ndevs == FS_BPF_MAX_DEVS) {
		out->devs_truncated = true;
		return NULL;
	}
	memmove(&out->devs[i + 1], &out->devs[i], (out->ndevs - i) * sizeof(out->devs[0]));
	out->ndevs++;
	memset(&out->devs[i], 0, sizeof(out->devs[i]));
	out->devs[i].major = major;
	out->devs[i].minor = minor;
	return &out->devs[i];
}

/* The blk map is keyed by (cgroup, disk): one pass over all keys. */
static int read_blk(struct fs_bpf *b, const struct id_set *s, struct fs_bpf_counters *out,
		    char *err, size_t errlen)
{
	int fd = bpf_map__fd(b->blk->maps.blk_stats);
	struct fs_blk_key key, next;
	struct fs_bpf_dev_io *d;
	void *prev = NULL;
	int rc, cpu;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!ids_has(s, key.cgid))
			continue;
		rc = lookup_pcpu(b, fd, &key);
		if (rc < 0)
			return FAIL(rc, "read blk_stats of cgroup %llu",
				    (unsigned long long)key.cgid);
		if (rc == 0) /* evicted meanwhile */
			continue;
		d = dev_slot(out, key.major, key.minor);
		for (cpu = 0; d && cpu < b->ncpus; cpu++) {
			const struct fs_blk_val *v = PCPU(b, struct fs_blk_val, cpu);

			d->rbytes += v->rbytes;
			d->wbytes += v->wbytes;
			d->rios += v->rios;
			d->wios += v->wios;
		}
	}
	if (errno != ENOENT)
		return FAIL(-errno, "iterate blk_stats");
	return 0;
}

static int read_ids(struct fs_bpf *b, struct id_set *s, struct fs_bpf_counters *out, char *err,
		    size_t errlen)
{
	int rc;

	memset(out, 0, sizeof(*out));
	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	if (b->sched) {
		rc = read_sched(b, s, out, err, errlen);
		if (rc)
			return rc;
	}
	if (b->net) {
		rc = read_net(b, s, out, err, errlen);
		if (rc)
			return rc;
	}
	if (b->blk) {
		rc = read_blk(b, s, out, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

int fs_bpf_read_cgroup(struct fs_bpf *b, uint64_t cgid, struct fs_bpf_counters *out, char *err,
		       size_t errlen)
{
	struct id_set s = {.v = &cgid, .n = 1, .cap = 1};

	return read_ids(b, &s, out, err, errlen);
}

int fs_bpf_read_subtree(struct fs_bpf *b, int dirfd, const char *path, struct fs_bpf_counters *out,
			char *err, size_t errlen)
{
	struct id_set s = {0};
	const char *name = path && *path ? path : ".";
	int fd, rc;

	fd = open_dir(dirfd, path);
	if (fd < 0)
		return FAIL(-errno, "open cgroup %s", name);
	rc = walk(fd, name, 0, &s, err, errlen);
	if (rc)
		goto out;
	rc = read_ids(b, &s, out, err, errlen);
out:
	free(s.v);
	return rc;
}
