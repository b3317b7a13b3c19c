/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "writer.h"
#include "writer_state.h"

#define VALUE_MAX 192

struct fs_writer {
	char *cgroup_root;
	char *state_dir;
	struct fs_cgroupfs cg;
	size_t n_allowed;
	char **allowed;
	struct wr_table t;
	fs_log_fn log;
	void *log_ctx;
	fs_write_fn write_fn;
	void *write_ctx;
	uint64_t mem_margin, reprobe_us, log_interval_us;
	unsigned einval_limit;
	struct fs_buf buf;
	bool missing_logged; /* rate limit of "cannot read original" */
	uint64_t missing_log_us;
	int lock_fd; /* flock'ed STATE_DIR/writer.lock */
};

/* One file to write in this round. */
struct item {
	char key[48];
	char value[VALUE_MAX];
	struct wr_entry *e;
	int rank; /* write order, see order_items() */
};

static int default_write(void *ctx, int dirfd, const char *file, const char *value)
{
	(void)ctx;
	return fs_cgfs_write_at(dirfd, file, value);
}

static void free_allowed(struct fs_writer *w)
{
	for (size_t i = 0; i < w->n_allowed; i++)
		free(w->allowed[i]);
	free(w->allowed);
	w->allowed = NULL;
	w->n_allowed = 0;
}

int fs_writer_set_tenants(struct fs_writer *w, size_t n, const char *const *cgroups)
{
	char **a = calloc(n ? n : 1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		a[i] = strdup(cgroups[i]);
		if (!a[i]) {
			for (size_t j = 0; j < i; j++)
				free(a[j]);
			free(a);
			return -ENOMEM;
		}
	}
	free_allowed(w);
	w->allowed = a;
	w->n_allowed = n;
	return 0;
}

void fs_writer_close(struct fs_writer *w)
{
	if (!w)
		return;
	fs_cgfs_close(&w->cg);
	if (w->lock_fd >= 0)
		close(w->lock_fd);
	free_allowed(w);
	wr_table_free(&w->t);
	fs_buf_free(&w->buf);
	free(w->cgroup_root);
	free(w->state_dir);
	free(w);
}

/*
 * One writer per state directory: a second daemon (or --release while one
 * runs) would load the first one's saved originals, fight over the same
 * cgroup files and restore them under it on exit. The lock goes with the
 * process, so a crash never leaves it held.
 */
static int lock_state(struct fs_writer *w)
{
	char path[PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "%s/%s", w->state_dir, FS_WRITER_LOCK_FILE);
	w->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (w->lock_fd < 0) {
		r = -errno;
		fs_logf(w->log, w->log_ctx, LOG_ERR, "writer: open %s: %s", path, strerror(-r));
		return r;
	}
	if (flock(w->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		fs_logf(w->log, w->log_ctx, LOG_ERR,
			"writer: %s is locked: another fairshared (or --release) is using %s", path,
			w->state_dir);
		return r;
	}
	return 0;
}

int fs_writer_open(struct fs_writer **out, const struct fs_writer_opts *o)
{
	struct fs_writer *w;
	int r;

	*out = NULL;
	if (!o->cgroup_root || !o->state_dir)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cg.root_fd = -1;
	w->lock_fd = -1;
	w->log = o->log;
	w->log_ctx = o->log_ctx;
	w->write_fn = o->write_fn ? o->write_fn : default_write;
	w->write_ctx = o->write_ctx;
	w->mem_margin = o->mem_margin ? o->mem_margin : 16ull << 20;
	w->einval_limit = o->einval_limit ? o->einval_limit : 3;
	w->reprobe_us = o->reprobe_us ? o->reprobe_us : 60000000ull;
	w->log_interval_us = o->log_interval_us ? o->log_interval_us : 60000000ull;
	w->cgroup_root = strdup(o->cgroup_root);
	w->state_dir = strdup(o->state_dir);
	if (!w->cgroup_root || !w->state_dir) {
		r = -ENOMEM;
		goto out;
	}
	if (mkdir(o->state_dir, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		fs_logf(w->log, w->log_ctx, LOG_ERR, "writer: mkdir %s: %s", o->state_dir,
			strerror(-r));
		goto out;
	}
	r = lock_state(w);
	if (r < 0)
		goto out;
	r = fs_cgfs_open(&w->cg, o->cgroup_root);
	if (r < 0) {
		fs_logf(w->log, w->log_ctx, LOG_ERR, "writer: open %s: %s", o->cgroup_root,
			strerror(-r));
		goto out;
	}
	r = fs_writer_set_tenants(w, o->n_tenants, o->cgroups);
	if (r < 0)
		goto out;
	r = wr_state_load(o->state_dir, &w->t, w->log, w->log_ctx);
	if (r < 0) {
		fs_logf(w->log, w->log_ctx, LOG_ERR, "writer: load %s/%s: %s", o->state_dir,
			FS_WRITER_STATE_FILE, strerror(-r));
		goto out;
	}
	*out = w;
	return 0;
out:
	fs_writer_close(w);
	return r;
}

size_t fs_writer_saved_count(const struct fs_writer *w)
{
	return w->t.n;
}

static bool allowed(const struct fs_writer *w, const char *cgroup)
{
	for (size_t i = 0; i < w->n_allowed; i++)
		if (strcmp(w->allowed[i], cgroup) == 0)
			return true;
	return false;
}

/* "max" -> FS_LIMIT_MAX; a leading number otherwise; FS_LIMIT_MAX if unknown. */
static uint64_t leading_u64(const char *s)
{
	if (!s || strncmp(s, "max", 3) == 0)
		return FS_LIMIT_MAX;
	return strtoull(s, NULL, 10);
}

static void fmt_limit(char *buf, size_t len, uint64_t v)
{
	if (v == FS_LIMIT_MAX)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static void strip_newline(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/*
 * The current value of a key as the file shows it: the whole file (first
 * line of io.weight, which is "default N"), or one disk's io.max line
 * (all-max when the disk has no line). 0 or -errno.
 */
static int read_current(struct fs_writer *w, int dirfd, const char *key, char *out, size_t len)
{
	char file[32];
	unsigned maj, min;
	int r;

	wr_key_file(key, file, sizeof(file));
	r = fs_cgfs_read_at(dirfd, file, &w->buf);
	if (r < 0)
		return r;
	if (sscanf(key, "io.max@%u:%u", &maj, &min) == 2) {
		char prefix[32];
		const char *p = w->buf.data;
		size_t pl = (size_t)snprintf(prefix, sizeof(prefix), "%u:%u ", maj, min);

		snprintf(out, len, "%u:%u rbps=max wbps=max riops=max wiops=max", maj, min);
		while (p && *p) {
			if (strncmp(p, prefix, pl) == 0) {
				size_t n = strcspn(p, "\n");

				snprintf(out, len, "%.*s", (int)n, p);
				break;
			}
			p = strchr(p, '\n');
			if (p)
				p++;
		}
	} else {
		snprintf(out, len, "%.*s", (int)strcspn(w->buf.data, "\n"), w->buf.data);
	}
	strip_newline(out);
	return out[0] ? 0 : -ENODATA;
}

static bool should_log(struct fs_writer *w, struct wr_entry *e, int err, uint64_t now_us)
{
	if (e && e->logged && e->last_errno == err && now_us - e->last_log_us < w->log_interval_us)
		return false;
	if (e) {
		e->logged = true;
		e->last_errno = err;
		e->last_log_us = now_us;
	}
	return true;
}

/*
 * Write order. cpu.max.burst must not exceed the quota, so a falling burst
 * goes first; memory.high goes before memory.max when memory.max falls (the
 * group is reclaimed gently at high before it can hit max) and after it when
 * memory.max rises. Restore uses the same rule.
 */
static void order_items(struct item *it, size_t n)
{
	bool burst_down = false, max_down = false;

	for (size_t i = 0; i < n; i++) {
		uint64_t old = leading_u64(it[i].e->last);
		uint64_t neu = leading_u64(it[i].value);

		if (strcmp(it[i].key, "cpu.max.burst") == 0 && neu < old)
			burst_down = true;
		if (strcmp(it[i].key, "memory.max") == 0 && neu < old)
			max_down = true;
	}
	for (size_t i = 0; i < n; i++) {
		const char *k = it[i].key;

		if (strcmp(k, "cpu.max.burst") == 0)
			it[i].rank = burst_down ? 0 : 2;
		else if (strcmp(k, "cpu.max") == 0)
			it[i].rank = 1;
		else if (strcmp(k, "memory.high") == 0)
			it[i].rank = max_down ? 3 : 5;
		else if (strcmp(k, "memory.max") == 0)
			it[i].rank = 4;
		else
			it[i].rank = 6;
	}
	/* Insertion sort: stable and n is tiny. */
	for (size_t i = 1; i < n; i++) {
		struct item tmp = it[i];
		size_t j = i;

		while (j > 0 && it[j - 1].rank > tmp.rank) {
			it[j] = it[j - 1];
			j--;
		}
		it[j] = tmp;
	}
}

enum write_outcome { WR_OK, WR_UNCHANGED, WR_BACKOFF, WR_GONE, WR_FAILED };

static enum write_outcome write_item(struct fs_writer *w, int dirfd, const char *cgroup,
				     struct item *it, uint64_t now_us, bool force)
{
	struct wr_entry *e = it->e;
	char file[32];
	char *copy;
	int r;

	if (!force && e->last && strcmp(e->last, it->value) == 0)
		return WR_UNCHANGED;
	if (!force && e->unsupported_until && now_us < e->unsupported_until)
		return WR_BACKOFF;
	wr_key_file(it->key, file, sizeof(file));
	r = w->write_fn(w->write_ctx, dirfd, file, it->value);
	if (r == 0) {
		e->einval_count = 0;
		e->unsupported_until = 0;
		e->logged = false;
		copy = strdup(it->value);
		free(e->last);
		e->last = copy; /* NULL on ENOMEM: next time it is just rewritten */
		return WR_OK;
	}
	if (r == -ENOENT) {
		/* The directory was open, so the cgroup was removed meanwhile. */
		return WR_GONE;
	}
	if (r == -EINVAL && ++e->einval_count >= w->einval_limit) {
		e->unsupported_until = now_us + w->reprobe_us;
		fs_logf(w->log, w->log_ctx, LOG_WARNING,
			"writer: %s/%s/%s: \"%s\" refused %u times (EINVAL); retrying in %" PRIu64
			" s",
			w->cgroup_root, cgroup, file, it->value, e->einval_count,
			w->reprobe_us / 1000000);
		e->logged = true;
		e->last_errno = -r;
		e->last_log_us = now_us;
		return WR_FAILED;
	}
	if (should_log(w, e, -r, now_us))
		fs_logf(w->log, w->log_ctx, LOG_ERR,
			"writer: %s/%s/%s: write \"%s\": %s (errno %d)", w->cgroup_root, cgroup,
			file, it->value, strerror(-r), -r);
	return WR_FAILED;
}

/* Turns lim into items (key + value), in no particular order. */
static size_t build_items(const struct fs_limits *lim, struct item *it)
{
	size_t n = 0;
	char a[24], b[24];

	memset(it, 0, sizeof(*it) * (7 + FS_MAX_DISKS));
	if (lim->set & FS_LIM_CPU_MAX) {
		fmt_limit(a, sizeof(a), lim->cpu_quota_us);
		snprintf(it[n].key, sizeof(it[n].key), "cpu.max");
		snprintf(it[n++].value, VALUE_MAX, "%s %" PRIu64, a,
			 lim->cpu_period_us ? lim->cpu_period_us : 100000);
	}
	if (lim->set & FS_LIM_CPU_BURST) {
		snprintf(it[n].key, sizeof(it[n].key), "cpu.max.burst");
		snprintf(it[n++].value, VALUE_MAX, "%" PRIu64, lim->cpu_burst_us);
	}
	if (lim->set & FS_LIM_CPU_WEIGHT) {
		snprintf(it[n].key, sizeof(it[n].key), "cpu.weight");
		snprintf(it[n++].value, VALUE_MAX, "%u", lim->cpu_weight);
	}
	if (lim->set & FS_LIM_MEM_HIGH) {
		snprintf(it[n].key, sizeof(it[n].key), "memory.high");
		fmt_limit(it[n++].value, VALUE_MAX, lim->mem_high);
	}
	if (lim->set & FS_LIM_MEM_MAX) {
		snprintf(it[n].key, sizeof(it[n].key), "memory.max");
		fmt_limit(it[n++].value, VALUE_MAX, lim->mem_max);
	}
	if (lim->set & FS_LIM_IO_WEIGHT) {
		snprintf(it[n].key, sizeof(it[n].key), "io.weight");
		snprintf(it[n++].value, VALUE_MAX, "default %u", lim->io_weight);
	}
	for (size_t d = 0; (lim->set & FS_LIM_IO_MAX) && d < lim->n_io && d < FS_MAX_DISKS;
	     d++) {
		const struct fs_io_limit *io = &lim->io[d];
		char c[24], e[24];

		snprintf(it[n].key, sizeof(it[n].key), "io.max@%u:%u", io->dev.major,
			 io->dev.minor);
		fmt_limit(a, sizeof(a), io->rbps);
		fmt_limit(b, sizeof(b), io->wbps);
		fmt_limit(c, sizeof(c), io->riops);
		fmt_limit(e, sizeof(e), io->wiops);
		snprintf(it[n++].value, VALUE_MAX, "%u:%u rbps=%s wbps=%s riops=%s wiops=%s",
			 io->dev.major, io->dev.minor, a, b, c, e);
	}
	return n;
}

/*
 * memory.max below what the group uses would make the kernel reclaim hard or
 * OOM-kill at once; lowering below usage is memory.high's job.
 */
static bool clamp_memory_max(struct fs_writer *w, int dirfd, const char *cgroup, struct item *it,
			     uint64_t now_us)
{
	uint64_t want = leading_u64(it->value), old = leading_u64(it->e->last);
	uint64_t cur, floor;

	if (want == FS_LIMIT_MAX || fs_cgfs_read_at(dirfd, "memory.current", &w->buf) < 0)
		return false;
	cur = strtoull(w->buf.data, NULL, 10);
	floor = cur + w->mem_margin;
	if (want >= floor)
		return false;
	if (old < floor && old >= want)
		floor = old; /* do not raise the limit just because of the clamp */
	/* The planner may ask for this every period: one line per log interval. */
	if (!it->e->clamp_logged || now_us - it->e->clamp_log_us >= w->log_interval_us) {
		it->e->clamp_logged = true;
		it->e->clamp_log_us = now_us;
		fs_logf(w->log, w->log_ctx, LOG_INFO,
			"writer: %s/memory.max: %" PRIu64 " is below usage %" PRIu64
			" + margin; using %" PRIu64,
			cgroup, want, cur, floor);
	}
	fmt_limit(it->value, VALUE_MAX, floor);
	return true;
}

static void reset_result(struct fs_apply_result *res)
{
	memset(res, 0, sizeof(*res));
}

int fs_writer_apply(struct fs_writer *w, const char *cgroup, const struct fs_limits *lim,
		    uint64_t now_us, struct fs_apply_result *res)
{
	struct item it[7 + FS_MAX_DISKS];
	struct fs_apply_result local;
	struct stat st;
	bool need_save = false;
	size_t n;
	int dirfd = -1, r = 0;

	if (!res)
		res = &local;
	reset_result(res);
	if (fs_cgfs_check_path(cgroup) < 0)
		return -EINVAL;
	if (!allowed(w, cgroup)) {
		fs_logf(w->log, w->log_ctx, LOG_ERR, "writer: %s is not a tenant cgroup; refused",
			cgroup);
		return -EPERM;
	}
	n = build_items(lim, it);
	if (n == 0)
		return 0;
	dirfd = fs_cgfs_open_cgroup(&w->cg, cgroup);
	if (dirfd == -ENOENT) {
		res->gone = true;
		return 0;
	}
	if (dirfd < 0) {
		fs_logf(w->log, w->log_ctx, LOG_ERR, "writer: %s/%s: %s", w->cgroup_root, cgroup,
			strerror(-dirfd));
		return dirfd;
	}
	if (fstat(dirfd, &st) < 0)
		st.st_ino = 0;
	/* Make sure every file has its original saved and its current value known. */
	for (size_t i = 0; i < n; i++) {
		char cur[VALUE_MAX];
		struct wr_entry *e = wr_find(&w->t, cgroup, it[i].key);
		bool recreated = e && e->ino && e->ino != (uint64_t)st.st_ino;

		if (e && e->last && !recreated) {
			it[i].e = e;
			continue;
		}
		r = read_current(w, dirfd, it[i].key, cur, sizeof(cur));
		if (r < 0) {
			if (r == -ENOENT && faccessat(dirfd, ".", F_OK, 0) < 0) {
				res->gone = true;
				r = 0;
				goto out;
			}
			/* Missing (controller not enabled, or cpu.max.burst before 5.14):
			 * unsupported here. Unreadable: a failure. Either way skip it
			 * this round: never write what we could not save. There is no
			 * entry to hold a per-file log state, so one writer-wide line
			 * per log interval. */
			if (!w->missing_logged ||
			    now_us - w->missing_log_us >= w->log_interval_us) {
				w->missing_logged = true;
				w->missing_log_us = now_us;
				fs_logf(w->log, w->log_ctx, LOG_WARNING,
					"writer: %s/%s/%s: cannot read original: %s",
					w->cgroup_root, cgroup, it[i].key, strerror(-r));
			}
			if (r == -ENOENT)
				res->unsupported++;
			else
				res->failed++;
			it[i--] = it[--n];
			r = 0;
			continue;
		}
		if (!e) {
			e = wr_add(&w->t, cgroup, it[i].key, cur);
			if (!e) {
				r = -ENOMEM;
				goto out;
			}
			need_save = true;
		} else if (recreated) {
			/* A new cgroup under the same name (a restarted service): its
			 * own value is what a restore must bring back. */
			char *o = strdup(cur);

			if (!o) {
				r = -ENOMEM;
				goto out;
			}
			free(e->orig);
			e->orig = o;
			need_save = true;
		}
		free(e->last);
		e->last = strdup(cur);
		e->ino = (uint64_t)st.st_ino;
		it[i].e = e;
	}
	/* wr_add may have moved the table (realloc): resolve the entries again. */
	for (size_t i = 0; i < n; i++)
		it[i].e = wr_find(&w->t, cgroup, it[i].key);
	if (need_save) {
		r = wr_state_save(w->state_dir, &w->t);
		if (r < 0) {
			fs_logf(w->log, w->log_ctx, LOG_ERR,
				"writer: cannot save originals to %s/%s: %s; not writing",
				w->state_dir, FS_WRITER_STATE_FILE, strerror(-r));
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(it[i].key, "memory.max") == 0 &&
		    clamp_memory_max(w, dirfd, cgroup, &it[i], now_us))
			res->clamped++;
	order_items(it, n);
	for (size_t i = 0; i < n; i++) {
		switch (write_item(w, dirfd, cgroup, &it[i], now_us, false)) {
		case WR_OK:
			res->written++;
			break;
		case WR_UNCHANGED:
			res->unchanged++;
			break;
		case WR_BACKOFF:
			res->unsupported++;
			break;
		case WR_GONE:
			res->gone = true;
			goto out;
		case WR_FAILED:
			res->failed++;
			break;
		}
	}
out:
	close(dirfd);
	if (r == 0 && res->failed && !res->gone)
		r = -EIO;
	return r;
}

/* Restores the saved entries of one cgroup. 0 or the first -errno. */
static int restore_one(struct fs_writer *w, const char *cgroup)
{
	struct item it[7 + FS_MAX_DISKS];
	size_t n = 0;
	int dirfd, r = 0;
	bool gone = false;

	dirfd = fs_cgfs_open_cgroup(&w->cg, cgroup);
	if (dirfd == -ENOENT)
		gone = true;
	else if (dirfd < 0)
		return dirfd;
	memset(it, 0, sizeof(it));
	for (size_t i = 0; i < w->t.n && n < sizeof(it) / sizeof(it[0]); i++) {
		struct wr_entry *e = &w->t.e[i];
		char cur[VALUE_MAX];

		if (strcmp(e->cgroup, cgroup) != 0)
			continue;
		if (!gone && !e->last && read_current(w, dirfd, e->key, cur, sizeof(cur)) == 0)
			e->last = strdup(cur);
		snprintf(it[n].key, sizeof(it[n].key), "%s", e->key);
		snprintf(it[n].value, VALUE_MAX, "%s", e->orig);
		it[n++].e = e;
	}
	if (!gone) {
		order_items(it, n);
		for (size_t i = 0; i < n; i++) {
			enum write_outcome o = write_item(w, dirfd, cgroup, &it[i], 0, true);

			if (o == WR_GONE) {
				gone = true;
				break;
			}
			if (o == WR_OK)
				it[i].e->orig[0] = '\0'; /* restored: drop below */
			else if (r == 0)
				r = -EIO;
		}
		close(dirfd);
	}
	if (gone)
		fs_logf(w->log, w->log_ctx, LOG_INFO,
			"writer: %s vanished; its saved originals are dropped", cgroup);
	for (size_t i = w->t.n; i-- > 0;) {
		struct wr_entry *e = &w->t.e[i];

		if (strcmp(e->cgroup, cgroup) == 0 && (gone || e->orig[0] == '\0'))
			wr_remove(&w->t, i);
	}
	return r;
}

int fs_writer_restore_cgroup(struct fs_writer *w, const char *cgroup)
{
	int r = restore_one(w, cgroup);
	int s = wr_state_save(w->state_dir, &w->t);

	return r < 0 ? r : s;
}

int fs_writer_restore(struct fs_writer *w)
{
	char **names = calloc(w->t.n ? w->t.n : 1, sizeof(*names));
	size_t n = 0;
	int first = 0, r;

	if (!names)
		return -ENOMEM;
	/* restore_one() removes entries, so walk a snapshot of the cgroup names. */
	for (size_t i = 0; i < w->t.n; i++) {
		bool seen = false;

		for (size_t j = 0; j < n && !seen; j++)
			seen = strcmp(names[j], w->t.e[i].cgroup) == 0;
		if (seen)
			continue;
		names[n] = strdup(w->t.e[i].cgroup);
		if (!names[n]) {
			first = -ENOMEM;
			goto out;
		}
		n++;
	}
	for (size_t j = 0; j < n; j++) {
		r = restore_one(w, names[j]);
		if (r < 0 && first == 0)
			first = r;
	}
	r = wr_state_save(w->state_dir, &w->t);
	if (r < 0 && first == 0)
		first = r;
out:
	for (size_t j = 0; j < n; j++)
		free(names[j]);
	free(names);
	return first;
}

int fs_release(const char *state_dir, const char *cgroup_root, fs_log_fn log, void *log_ctx)
{
	struct fs_writer_opts o = {
	    .cgroup_root = cgroup_root,
	    .state_dir = state_dir,
	    .log = log,
	    .log_ctx = log_ctx,
	};
	struct fs_writer *w;
	size_t saved;
	int r;

	r = fs_writer_open(&w, &o);
	if (r < 0)
		return r;
	saved = fs_writer_saved_count(w);
	r = fs_writer_restore(w);
	fs_logf(log, log_ctx, r < 0 ? LOG_ERR : LOG_INFO,
		"release: restored %zu of %zu saved files under %s",
		saved - fs_writer_saved_count(w), saved, cgroup_root);
	fs_writer_close(w);
	return r;
}
