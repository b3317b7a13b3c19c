/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
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
#include "drift_watch.h"
#include "list_match.h"
#include "unitprop.h"
#include "writer.h"
#include "writer_state.h"

/* Directories of tenants waiting for the state save kept open between the
 * phases of one apply; beyond this they are reopened (RLIMIT_NOFILE). */
#define WR_OPEN_MAX    64
#define RECHECK_PHASES 64u /* recheck_due: tenants spread over half a recheck_us */
/* The change watch is drained after this many of our own writes within an
 * apply: each raises an event, and past the kernel's max_queued_events
 * (16,384 by default) the queue overflows, which means every file of every
 * tenant is read again at the next apply. Writing 10,000 tenants' files at
 * start-up did that: 42,340 events, and a second period of ~200 ms. */
#define WR_POLL_WRITES 4096u
#define MAX_ITEMS      FS_CGF_SLOTS

/* One (file, disk) of a tenant. */
struct wr_slot {
	struct wr_entry *e;	/* its saved original, NULL until recorded */
	uint64_t missing_until; /* the file did not exist: not read again before */
};

struct wr_tenant {
	char *cgroup;
	int path_err; /* fs_cgfs_check_path(cgroup) */
	enum fs_backend backend;
	bool refused_logged;
	bool checked;		/* opened since set_tenants / recheck / gone */
	uint64_t checked_us;	/* when it was last opened */
	uint64_t ino;		/* its directory's inode then */
	int lent_fd;		/* the dirfd dir_fn lent last (never closed here) */
	int wfd[FS_CGF__COUNT]; /* written files kept open (in lent directories), -1 */
	uint64_t wfd_ino;	/* the directory they are in */
	/* fake tree: the length of the value we last wrote through wfd[f] and
	 * the file still holds, 0: not known (just opened, changed by others) */
	uint16_t wlen[FS_CGF__COUNT];
	struct wr_slot slot[FS_CGF_SLOTS];
	/* drift (someone else's writes): */
	int wd[FS_CGF__COUNT]; /* change watch of each file, -1: none */
	uint64_t watch_ino;    /* the directory the watches are on */
	unsigned check;	       /* files (1u << f) to read again: their watch fired */
	unsigned unwatched;    /* known files without a watch (unwatched_due) */
	uint64_t unwatched_us; /* when those were last read */
	unsigned wrote;	       /* files written in this apply: their events are ours */
	uint64_t drift_total;  /* files found changed by someone else */
	bool drift_logged;
	uint64_t drift_log_us;
	/* The steady state remembered (memo_holds): the limits of the last
	 * apply that found every file unchanged, how many files that was, and
	 * the writer's generation then. */
	struct fs_limits memo;
	unsigned memo_n;
	uint64_t memo_gen; /* 0: none */
};

/* A tenant waiting for the state save (phase 3). */
struct wr_pending {
	size_t i;  /* index in the apply's arrays */
	int dirfd; /* -1: reopen */
};

struct fs_writer {
	char *cgroup_root;
	char *state_dir;
	struct fs_cgroupfs cg;
	size_t n_tenants;
	struct wr_tenant *tenants;
	struct wr_table t;
	fs_log_fn log;
	void *log_ctx;
	fs_write_fn write_fn;
	void *write_ctx;
	uint64_t mem_margin, reprobe_us, log_interval_us, recheck_us;
	unsigned einval_limit;
	struct fs_buf buf;
	bool missing_logged; /* rate limit of "cannot read original" */
	uint64_t missing_log_us;
	int lock_fd; /* flock'ed STATE_DIR/writer.lock */
	struct wr_pending *pend;
	size_t pend_cap;
	int (*dir_fn)(void *ctx, size_t tenant, const char *cgroup, uint64_t *ino);
	void *dir_ctx;
	int (*file_fn)(void *ctx, size_t tenant, const char *cgroup, const char *file);
	size_t fd_budget;	   /* written files that may stay open */
	size_t fds_kept;	   /* open now (wr_tenant.wfd) */
	bool cgroup2;		   /* the root is cgroup2: a pwrite replaces the value */
	struct fs_drift_watch *dw; /* NULL: no inotify, files read every 10 s */
	unsigned since_poll;	   /* our writes since dw was last drained */
	size_t max_watches;	   /* fs_writer_opts.max_watches, 0: no cap */
	bool watches_full;	   /* a watch was refused (cap or kernel limit), logged */
	bool dw_overflowed;	   /* its last drain overflowed (logged once) */
	uint64_t drift_total;
	const struct fs_unit_ops *unit_ops; /* NULL: no systemd backend */
	void *unit_ctx;
	/* Moves whenever entries change outside a tenant's own apply (tenant
	 * list, backend, restore): every tenant's memo is void then. From 1. */
	uint64_t gen;
};

/* One file to write in this round. */
struct item {
	enum fs_cgfile file;
	struct fs_devnum dev; /* io.max: the disk */
	struct wr_slot *slot;
	struct wr_entry *e;
	int rank; /* write order, fs_cgfile_rank() */
	char value[FS_CGF_VALUE_MAX];
};

static int read_current(struct fs_writer *w, const char *cgroup, bool unit, int dirfd,
			enum fs_cgfile f, struct fs_devnum dev, char *out, size_t len);
static void unwatch_tenant(struct fs_writer *w, struct wr_tenant *tn);

static int default_write(void *ctx, int dirfd, const char *file, const char *value)
{
	(void)ctx;
	return fs_cgfs_write_at(dirfd, file, value);
}

/* Closes tenant tn's kept file f. */
static void drop_wfd(struct fs_writer *w, struct wr_tenant *tn, int f)
{
	if (tn->wfd[f] < 0)
		return;
	close(tn->wfd[f]);
	tn->wfd[f] = -1;
	w->fds_kept--;
}

static void drop_wfds(struct fs_writer *w, struct wr_tenant *tn)
{
	for (int f = 0; f < FS_CGF__COUNT; f++)
		drop_wfd(w, tn, f);
}

static void free_tenants(struct fs_writer *w, struct wr_tenant *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		drop_wfds(w, &t[i]);
		free(t[i].cgroup);
	}
	free(t);
}

/* Tenant tn (moved to index j) keeps its saved entries and watches: the
 * entries' back pointers and the watches' keys follow it. */
static void move_tenant(struct fs_writer *w, struct wr_tenant *tn, size_t j)
{
	for (size_t k = 0; k < FS_CGF_SLOTS; k++)
		if (tn->slot[k].e)
			tn->slot[k].e->ref = &tn->slot[k].e;
	for (int f = 0; f < FS_CGF__COUNT; f++)
		if (tn->wd[f] >= 0 && w->dw)
			fs_dw_rekey(w->dw, tn->wd[f], (uint32_t)(j * FS_CGF__COUNT + (size_t)f));
}

int fs_writer_set_tenants(struct fs_writer *w, size_t n, const char *const *cgroups,
			  const size_t *from)
{
	struct wr_tenant *t = calloc(n ? n : 1, sizeof(*t));
	bool *taken = calloc(w->n_tenants ? w->n_tenants : 1, sizeof(*taken));
	size_t *map = malloc((n ? n : 1) * sizeof(*map));
	bool keep_watches = from && w->dw;

	if (!t || !taken || !map) {
		free(t);
		free(taken);
		free(map);
		return -ENOMEM;
	}
	for (size_t j = 0; j < n; j++) {
		const size_t i = from ? from[j] : FS_LIST_NEW;

		map[j] = FS_LIST_NEW;
		if (i != FS_LIST_NEW && i < w->n_tenants && !taken[i] &&
		    strcmp(w->tenants[i].cgroup, cgroups[j]) == 0) {
			map[j] = i;
			taken[i] = true;
			continue;
		}
		for (int f = 0; f < FS_CGF__COUNT; f++)
			t[j].wd[f] = t[j].wfd[f] = -1;
		t[j].cgroup = strdup(cgroups[j]);
		if (!t[j].cgroup) {
			for (size_t k = 0; k <= j; k++)
				if (map[k] == FS_LIST_NEW)
					free(t[k].cgroup);
			free(t);
			free(taken);
			free(map);
			return -ENOMEM;
		}
		t[j].path_err = fs_cgfs_check_path(cgroups[j]);
		t[j].lent_fd = -1;
	}
	if (!keep_watches) {
		/* Watch keys are tenant indexes: a new instance drops every old
		 * watch (each tenant is opened, watched and checked again at its
		 * next apply). */
		fs_dw_close(w->dw);
		w->dw = NULL;
		if (fs_dw_open(&w->dw) < 0)
			fs_logf(w->log, w->log_ctx, LOG_WARNING,
				"writer: no inotify: tenants' files are read every %llu s to "
				"notice changes made by others",
				(unsigned long long)(FS_WRITER_UNWATCHED_US / 1000000));
	}
	/* The slots of the old list go away: the entries are found again
	 * through the hash at the next apply of their cgroup. */
	for (size_t i = 0; i < w->t.n; i++)
		w->t.e[i]->ref = NULL;
	for (size_t i = 0; i < w->n_tenants; i++) {
		struct wr_tenant *tn = &w->tenants[i];

		if (taken[i])
			continue;
		if (keep_watches)
			unwatch_tenant(w, tn);
		drop_wfds(w, tn);
		free(tn->cgroup);
	}
	/* A kept tenant moves whole: its kept files, watches, drift counts. */
	for (size_t j = 0; j < n; j++) {
		if (map[j] == FS_LIST_NEW)
			continue;
		t[j] = w->tenants[map[j]];
		if (!keep_watches) { /* a new instance: opened, watched, checked again */
			for (int f = 0; f < FS_CGF__COUNT; f++)
				t[j].wd[f] = -1;
			t[j].checked = false;
		}
		move_tenant(w, &t[j], j);
	}
	free(w->tenants);
	w->tenants = t;
	w->n_tenants = n;
	w->gen++; /* the slots were let go */
	free(taken);
	free(map);
	return 0;
}

void fs_writer_close(struct fs_writer *w)
{
	if (!w)
		return;
	fs_cgfs_close(&w->cg);
	fs_dw_close(w->dw);
	if (w->lock_fd >= 0)
		close(w->lock_fd);
	wr_table_free(&w->t);
	free_tenants(w, w->tenants, w->n_tenants);
	fs_buf_free(&w->buf);
	free(w->pend);
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
	w->gen = 1; /* a tenant's memo_gen 0 is "none" */
	w->log = o->log;
	w->log_ctx = o->log_ctx;
	w->write_fn = o->write_fn ? o->write_fn : default_write;
	w->write_ctx = o->write_ctx;
	w->dir_fn = o->dir_fn;
	w->dir_ctx = o->dir_ctx;
	w->unit_ops = o->unit_ops;
	w->unit_ctx = o->unit_ctx;
	w->file_fn = o->dir_fn ? o->file_fn : NULL;
	w->fd_budget = o->dir_fn && !o->write_fn ? o->max_open_files : 0;
	w->max_watches = o->max_watches;
	w->mem_margin = o->mem_margin ? o->mem_margin : 16ull << 20;
	w->einval_limit = o->einval_limit ? o->einval_limit : 3;
	w->reprobe_us = o->reprobe_us ? o->reprobe_us : 60000000ull;
	w->log_interval_us = o->log_interval_us ? o->log_interval_us : 60000000ull;
	w->recheck_us = o->recheck_us ? o->recheck_us : 60000000ull;
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
	w->cgroup2 = fs_cgfs_is_cgroup2(w->cg.root_fd);
	r = fs_writer_set_tenants(w, o->n_tenants, o->cgroups, NULL);
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

uint64_t fs_writer_drift_count(const struct fs_writer *w, size_t tenant)
{
	return tenant < w->n_tenants ? w->tenants[tenant].drift_total : 0;
}

int fs_writer_files(struct fs_writer *w, size_t tenant, struct fs_writer_file *out, size_t max)
{
	struct wr_tenant *tn;
	size_t n = 0;
	int dirfd;

	if (tenant >= w->n_tenants)
		return -EPERM;
	tn = &w->tenants[tenant];
	if (tn->path_err < 0)
		return tn->path_err;
	dirfd = fs_cgfs_open_cgroup(&w->cg, tn->cgroup);
	if (dirfd < 0)
		return dirfd;
	for (size_t k = 0; k < FS_CGF_SLOTS && n < max; k++) {
		const struct wr_entry *e = tn->slot[k].e;
		struct fs_writer_file *o = &out[n];

		if (!e || !e->has_last)
			continue;
		snprintf(o->key, sizeof(o->key), "%s", e->key);
		snprintf(o->written, sizeof(o->written), "%s", e->last);
		o->unit = e->unit;
		o->err = read_current(w, tn->cgroup, e->unit, dirfd, e->file, e->dev, o->in_force,
				      sizeof(o->in_force));
		if (o->err < 0)
			o->in_force[0] = '\0';
		n++;
	}
	close(dirfd);
	return (int)n;
}

size_t fs_writer_saved_count(const struct fs_writer *w)
{
	return w->t.n;
}

int fs_writer_set_backend(struct fs_writer *w, size_t tenant, enum fs_backend b)
{
	if (tenant >= w->n_tenants)
		return -EPERM;
	if (b == FS_BACKEND_SYSTEMD && !w->unit_ops)
		return -EOPNOTSUPP;
	if (w->tenants[tenant].backend != b) {
		/* the slots point at the other backend's entries: found again
		 * through the hash at the next apply */
		for (size_t k = 0; k < FS_CGF_SLOTS; k++) {
			struct wr_slot *sl = &w->tenants[tenant].slot[k];

			if (sl->e)
				sl->e->ref = NULL;
			*sl = (struct wr_slot){NULL, 0};
		}
		w->tenants[tenant].backend = b;
		w->tenants[tenant].checked = false;
		w->gen++;
	}
	return 0;
}

void fs_writer_recheck(struct fs_writer *w, size_t tenant)
{
	if (tenant < w->n_tenants)
		w->tenants[tenant].checked = false;
}

int fs_cgfile_read_current(int dirfd, enum fs_cgfile f, struct fs_devnum dev, struct fs_buf *b,
			   char *out, size_t len)
{
	int r = fs_cgfs_read_at(dirfd, fs_cgfiles[f].name, b);

	if (r < 0)
		return r;
	return fs_cgfile_current(f, dev, b->data, out, len);
}

/* The value in force of (cgroup, f, dev): the file's (dirfd), or the unit's
 * properties for the systemd backend (unit). */
static int read_current(struct fs_writer *w, const char *cgroup, bool unit, int dirfd,
			enum fs_cgfile f, struct fs_devnum dev, char *out, size_t len)
{
	if (unit)
		return w->unit_ops ? w->unit_ops->read(w->unit_ctx, cgroup, f, dev, out, len)
				   : -EOPNOTSUPP;
	return fs_cgfile_read_current(dirfd, f, dev, &w->buf, out, len);
}

/* A value's number for the memory.max floor and the write order (the
 * first property's for the systemd backend's encoding). */
static uint64_t value_number(bool unit, const char *s)
{
	return unit ? fs_uprop_first_value(s) : fs_parse_value(s);
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

/* Points slot at e (an entry is pointed at by at most one slot). */
static void attach(struct wr_slot *slot, struct wr_entry *e)
{
	if (slot->e == e)
		return;
	if (slot->e)
		slot->e->ref = NULL;
	if (e->ref)
		*e->ref = NULL;
	slot->e = e;
	e->ref = &slot->e;
}

/* The saved entry of (tenant, file, dev): the slot's in the steady state,
 * else through the hash (first use, originals of a previous run, a disk that
 * changed). NULL when none is saved. O(1). */
static struct wr_entry *resolve(struct fs_writer *w, struct wr_tenant *tn, struct wr_slot *slot,
				enum fs_cgfile f, struct fs_devnum dev)
{
	struct wr_entry *e = slot->e;

	if (e && e->dev.major == dev.major && e->dev.minor == dev.minor &&
	    e->unit == (tn->backend == FS_BACKEND_SYSTEMD))
		return e;
	if (e) { /* another disk in this position now */
		e->ref = NULL;
		slot->e = NULL;
	}
	e = wr_find(&w->t, tn->cgroup, f, dev, tn->backend == FS_BACKEND_SYSTEMD);
	if (e)
		attach(slot, e);
	return e;
}

/* Turns lim into items (file + value + slot + saved entry), in table order. */
static size_t build_items(struct fs_writer *w, struct wr_tenant *tn, const struct fs_limits *lim,
			  struct item *it)
{
	size_t n = 0;

	for (int f = 0; f < FS_CGF__COUNT; f++) {
		size_t disks = 1;

		if (!(lim->set & fs_cgfiles[f].bit))
			continue;
		if (fs_cgfiles[f].per_disk)
			disks = lim->n_io < FS_MAX_DISKS ? lim->n_io : FS_MAX_DISKS;
		for (size_t d = 0; d < disks && n < MAX_ITEMS; d++) {
			struct item *x = &it[n];

			/* through systemd: its properties; a file without one
			 * (cpu.max.burst) is not written */
			if ((tn->backend == FS_BACKEND_SYSTEMD
				 ? fs_uprop_format((enum fs_cgfile)f, lim, d, x->value,
						   sizeof(x->value))
				 : fs_cgfile_format((enum fs_cgfile)f, lim, d, x->value,
						    sizeof(x->value))) < 0)
				continue;
			x->file = (enum fs_cgfile)f;
			x->dev = fs_cgfiles[f].per_disk ? lim->io[d].dev : (struct fs_devnum){0, 0};
			x->slot = &tn->slot[fs_cgfile_slot(x->file, d)];
			x->e = resolve(w, tn, x->slot, x->file, x->dev);
			x->rank = 0;
			n++;
		}
	}
	return n;
}

/*
 * The steady state: every item is saved and equal to what was last written,
 * or in back-off (EINVAL, or the file is missing). Counts into res. No
 * syscall.
 */
static bool steady(const struct item *it, size_t n, uint64_t now_us, struct fs_apply_result *res)
{
	struct fs_apply_result r = {0};

	for (size_t i = 0; i < n; i++) {
		const struct wr_entry *e = it[i].e;

		if (e && e->saved && e->has_last && strcmp(e->last, it[i].value) == 0)
			r.unchanged++;
		else if (e && e->saved && e->has_last && e->unsupported_until &&
			 now_us < e->unsupported_until)
			r.unsupported++;
		else if (!e && it[i].slot->missing_until && now_us < it[i].slot->missing_until)
			r.unsupported++;
		else
			return false;
	}
	*res = r;
	return true;
}

enum write_outcome { WR_OK, WR_UNCHANGED, WR_BACKOFF, WR_GONE, WR_FAILED };

/*
 * Writes value into file f of the directory dirfd (inode ino) of tenant tn
 * (NULL: a restore). In a directory lent by dir_fn the file stays open
 * within the budget and later values are one pwrite each. Kept write-only:
 * a cgroupfs file that was read holds a page for its text until closed
 * (~7 KiB per fd with the rest, sample_cgroupfs.c), one only written does
 * not, so the originals are still read by name, once. A kept file that
 * went away (-ENODEV: its controller or cgroup removed) is closed and the
 * value written by name, which says what is there now. Elsewhere, and with
 * a write_fn of the caller's: write_fn (openat, write, close).
 */
static int write_file(struct fs_writer *w, struct wr_tenant *tn, int dirfd, uint64_t ino,
		      enum fs_cgfile f, const char *value)
{
	const char *file = fs_cgfiles[f].name;
	size_t len;
	int fd, r;

	if (!tn || w->fd_budget == 0 || dirfd < 0 || dirfd != tn->lent_fd || ino == 0)
		return w->write_fn(w->write_ctx, dirfd, file, value);
	if (tn->wfd_ino != ino) {
		drop_wfds(w, tn); /* another directory at the path now */
		tn->wfd_ino = ino;
	}
	fd = tn->wfd[f];
	if (fd < 0 && w->fds_kept < w->fd_budget) {
		fd = fs_cgfs_open_file_w(dirfd, file);
		if (fd >= 0) {
			tn->wfd[f] = fd;
			tn->wlen[f] = 0;
			w->fds_kept++;
		} else if (fd == -EMFILE || fd == -ENFILE) {
			w->fd_budget = w->fds_kept; /* the rest of the daemon needs them */
		} else {
			return fd; /* as the open by name would fail */
		}
	}
	if (fd < 0)
		return w->write_fn(w->write_ctx, dirfd, file, value);
	/* A fake tree's regular file is cut to the value, as O_TRUNC did,
	 * unless the value covers all that is there: ftruncate was a fifth of
	 * the writer's time at 1,000 tenants (issue 19's benchmark), and the
	 * usual next value (a new quota) is as long as the last. */
	len = strlen(value);
	r = fs_cgfs_pwrite(fd, value, !w->cgroup2 && (tn->wlen[f] == 0 || len < tn->wlen[f]));
	if (r == 0 || (r != -ENODEV && r != -EBADF)) {
		tn->wlen[f] = r == 0 && len <= UINT16_MAX ? (uint16_t)len : 0;
		return r;
	}
	drop_wfd(w, tn, f);
	return w->write_fn(w->write_ctx, dirfd, file, value);
}

static enum write_outcome write_item(struct fs_writer *w, struct wr_tenant *tn, int dirfd,
				     uint64_t ino, const char *cgroup, struct wr_entry *e,
				     const char *value, uint64_t now_us, bool force)
{
	const char *file = fs_cgfiles[e->file].name;
	int r;

	if (!force && e->has_last && strcmp(e->last, value) == 0)
		return WR_UNCHANGED;
	if (!force && e->unsupported_until && now_us < e->unsupported_until)
		return WR_BACKOFF;
	if (e->unit)
		r = w->unit_ops ? w->unit_ops->write(w->unit_ctx, cgroup, e->file, e->dev, value)
				: -EOPNOTSUPP;
	else
		r = write_file(w, tn, dirfd, ino, e->file, value);
	if (r == 0) {
		e->einval_count = 0;
		e->unsupported_until = 0;
		e->logged = false;
		snprintf(e->last, sizeof(e->last), "%s", value);
		e->has_last = strlen(value) < sizeof(e->last);
		return WR_OK;
	}
	if (r == -ENOENT) {
		/* The directory was open, so the cgroup was removed meanwhile
		 * (through systemd: the unit is gone). */
		return WR_GONE;
	}
	if (r == -EINVAL && ++e->einval_count >= w->einval_limit) {
		e->unsupported_until = now_us + w->reprobe_us;
		fs_logf(
		    w->log, w->log_ctx, LOG_WARNING,
		    "writer: %s/%s/%s: \"%s\" refused %u times (EINVAL); retrying in %" PRIu64 " s",
		    w->cgroup_root, cgroup, file, value, e->einval_count, w->reprobe_us / 1000000);
		e->logged = true;
		e->last_errno = -r;
		e->last_log_us = now_us;
		return WR_FAILED;
	}
	if (should_log(w, e, -r, now_us))
		fs_logf(w->log, w->log_ctx, LOG_ERR,
			"writer: %s/%s/%s: write \"%s\": %s (errno %d)", w->cgroup_root, cgroup,
			file, value, strerror(-r), -r);
	return WR_FAILED;
}

/*
 * memory.max below what the group uses would make the kernel reclaim hard or
 * OOM-kill at once; lowering below usage is memory.high's job.
 */
/* memory.current of tenant tn's directory dirfd into w->buf: through the
 * caller's kept fd when dirfd is the caller's (file_fn), else by name. */
static int read_mem_current(struct fs_writer *w, struct wr_tenant *tn, int dirfd)
{
	int fd =
	    w->file_fn && dirfd == tn->lent_fd
		? w->file_fn(w->dir_ctx, (size_t)(tn - w->tenants), tn->cgroup, "memory.current")
		: -1;

	if (fd >= 0 && fs_cgfs_pread(fd, &w->buf) == 0)
		return 0;
	return fs_cgfs_read_at(dirfd, "memory.current", &w->buf);
}

static bool clamp_memory_max(struct fs_writer *w, struct wr_tenant *tn, int dirfd, struct item *it,
			     uint64_t now_us)
{
	const char *cgroup = tn->cgroup;
	bool unit = it->e->unit;
	uint64_t want = value_number(unit, it->value);
	uint64_t old = value_number(unit, it->e->has_last ? it->e->last : NULL);
	uint64_t cur, floor;

	/* Unchanged: nothing is written, as in the steady state (steady()), so
	 * no read of memory.current (a tenant whose other files changed). */
	if (it->e->has_last && strcmp(it->e->last, it->value) == 0)
		return false;
	if (want == FS_VALUE_MAX || read_mem_current(w, tn, dirfd) < 0)
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
	if (unit)
		return fs_uprop_set_first(FS_CGF_MEM_MAX, floor, it->value, sizeof(it->value)) == 0;
	fs_fmt_value(floor, it->value, sizeof(it->value));
	return true;
}

#define SORT_ELEM_MAX 256
_Static_assert(sizeof(struct item) <= SORT_ELEM_MAX, "sort_by_rank's buffer");

/* Stable insertion sort of n elements of size `size` by the int at rank_off
 * (the write order of struct item and struct ritem); n is at most a
 * cgroup's files. */
static void sort_by_rank(void *base, size_t n, size_t size, size_t rank_off)
{
	char *a = base, tmp[SORT_ELEM_MAX];

	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		int r;

		memcpy(tmp, a + i * size, size);
		memcpy(&r, tmp + rank_off, sizeof(r));
		for (; j > 0; j--) {
			int rj;

			memcpy(&rj, a + (j - 1) * size + rank_off, sizeof(rj));
			if (rj <= r)
				break;
			memcpy(a + j * size, a + (j - 1) * size, size);
		}
		memcpy(a + j * size, tmp, size);
	}
}

/* fs_cgfile_order_note for entry e, whose values may be unit properties. */
static void order_note(struct fs_cgfile_order *o, const struct wr_entry *e, const char *old,
		       const char *neu)
{
	char a[24], b[24];

	if (!e->unit) {
		fs_cgfile_order_note(o, e->file, old, neu);
		return;
	}
	fs_fmt_value(value_number(true, old), a, sizeof(a));
	fs_fmt_value(value_number(true, neu), b, sizeof(b));
	fs_cgfile_order_note(o, e->file, old ? a : NULL, b);
}

/* Orders items by fs_cgfile_rank (old value: e->last). Stable; n is tiny. */
static void order_items(struct item *it, size_t n)
{
	struct fs_cgfile_order o = {false, false};

	for (size_t i = 0; i < n; i++)
		order_note(&o, it[i].e, it[i].e->has_last ? it[i].e->last : NULL, it[i].value);
	for (size_t i = 0; i < n; i++)
		it[i].rank = fs_cgfile_rank(&o, it[i].file);
	sort_by_rank(it, n, sizeof(*it), offsetof(struct item, rank));
}

/*
 * Phase 3 of one tenant (dirfd open, inode ino): writes the items whose
 * original is saved and whose current value is known for this very
 * directory; the others wait for the next apply.
 */
static void write_tenant(struct fs_writer *w, struct wr_tenant *tn, int dirfd, uint64_t ino,
			 struct item *it, size_t n, uint64_t now_us, struct fs_apply_result *res)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		struct wr_entry *e = it[i].e;

		if (e && e->saved && e->has_last && e->ino == ino)
			it[k++] = it[i];
	}
	n = k;
	for (size_t i = 0; i < n; i++)
		if (it[i].file == FS_CGF_MEM_MAX && clamp_memory_max(w, tn, dirfd, &it[i], now_us))
			res->clamped++;
	order_items(it, n);
	for (size_t i = 0; i < n; i++) {
		switch (write_item(w, tn, dirfd, ino, tn->cgroup, it[i].e, it[i].value, now_us,
				   false)) {
		case WR_OK:
			res->written++;
			tn->wrote |= 1u << it[i].file;
			w->since_poll++;
			break;
		case WR_UNCHANGED:
			res->unchanged++;
			break;
		case WR_BACKOFF:
			res->unsupported++;
			break;
		case WR_GONE:
			res->gone = true;
			tn->checked = false;
			return;
		case WR_FAILED:
			res->failed++;
			break;
		}
	}
}

enum prep {
	PREP_DONE,    /* nothing (more) to do this round */
	PREP_STEADY,  /* nothing to do: the steady state (steady()) */
	PREP_READY,   /* *dirfd open, every original saved: write now */
	PREP_PENDING, /* *dirfd open, new originals recorded: write after the save */
};

/* Rate-limited writer-wide (no entry holds a per-file state yet). */
static void log_no_original(struct fs_writer *w, const struct wr_tenant *tn, const struct item *it,
			    int err, uint64_t now_us)
{
	char key[FS_CGF_KEY_MAX];

	if (w->missing_logged && now_us - w->missing_log_us < w->log_interval_us)
		return;
	w->missing_logged = true;
	w->missing_log_us = now_us;
	fs_cgfile_key(it->file, it->dev, key, sizeof(key));
	fs_logf(w->log, w->log_ctx, LOG_WARNING, "writer: %s/%s/%s: cannot read original: %s",
		w->cgroup_root, tn->cgroup, key, strerror(-err));
}

/*
 * Opens tenant tn's directory: an fd, or -1 with res saying why (gone, or
 * the logged error). With dir_fn, the caller's open directory is lent
 * instead when it has one (its inode into *ino; put_dir leaves it open):
 * a path walk, an fstat and a close less per tenant written (issue 19).
 */
static int open_tenant(struct fs_writer *w, struct wr_tenant *tn, struct fs_apply_result *res,
		       uint64_t *ino)
{
	int dirfd =
	    w->dir_fn ? w->dir_fn(w->dir_ctx, (size_t)(tn - w->tenants), tn->cgroup, ino) : -1;
	struct stat st;

	tn->lent_fd = dirfd;
	if (dirfd >= 0)
		return dirfd;
	dirfd = fs_cgfs_open_cgroup(&w->cg, tn->cgroup);

	if (dirfd == -ENOENT) {
		res->gone = true;
		tn->checked = false;
		return -1;
	}
	if (dirfd < 0) {
		fs_logf(w->log, w->log_ctx, LOG_ERR, "writer: %s/%s: %s", w->cgroup_root,
			tn->cgroup, strerror(-dirfd));
		res->error = dirfd;
		return -1;
	}
	*ino = fstat(dirfd, &st) < 0 ? 0 : (uint64_t)st.st_ino;
	return dirfd;
}

/* Closes what open_tenant opened; a lent directory stays open. */
static void put_dir(const struct wr_tenant *tn, int dirfd)
{
	if (dirfd >= 0 && dirfd != tn->lent_fd)
		close(dirfd);
}

/* Watches tenant tn's file f (dirfd open) unless it is watched already. */
static void watch_file(struct fs_writer *w, struct wr_tenant *tn, int dirfd, enum fs_cgfile f)
{
	uint32_t key = (uint32_t)((size_t)(tn - w->tenants) * FS_CGF__COUNT + (size_t)f);
	bool capped;
	int wd;

	if (!w->dw || tn->wd[f] >= 0)
		return;
	capped = w->max_watches && fs_dw_count(w->dw) >= w->max_watches;
	wd = capped ? -ENOSPC : fs_dw_add(w->dw, dirfd, fs_cgfiles[f].name, key);
	if (wd >= 0) {
		tn->wd[f] = wd;
		return;
	}
	if (wd == -ENOSPC && !w->watches_full)
		fs_logf(w->log, w->log_ctx, LOG_WARNING,
			"writer: no more change watches at %u (%s): files without one are read "
			"every %llu s to notice changes made by others (raise "
			"fs.inotify.max_user_watches)",
			fs_dw_count(w->dw),
			capped ? "half of fs.inotify.max_user_watches"
			       : "the kernel's fs.inotify.max_user_watches",
			(unsigned long long)(FS_WRITER_UNWATCHED_US / 1000000));
	w->watches_full |= wd == -ENOSPC;
}

/* The watches of tn are on another directory (a recreated cgroup). */
static void unwatch_tenant(struct fs_writer *w, struct wr_tenant *tn)
{
	for (int f = 0; f < FS_CGF__COUNT; f++) {
		if (tn->wd[f] >= 0 && w->dw)
			fs_dw_remove(w->dw, tn->wd[f]);
		tn->wd[f] = -1;
	}
}

/*
 * Drift: the file of item `it` (known, last value e->last) is read again;
 * a value someone else put there is counted, logged (once per log interval
 * per tenant) and becomes e->last, so that write_tenant writes ours again
 * in this very apply (unless ours changed to exactly that value).
 */
static void check_drift(struct fs_writer *w, struct wr_tenant *tn, int dirfd, struct item *it,
			uint64_t now_us, struct fs_apply_result *res)
{
	struct wr_entry *e = it->e;
	char cur[FS_CGF_VALUE_MAX];

	watch_file(w, tn, dirfd, it->file); /* first, so that no change is missed */
	if (read_current(w, tn->cgroup, e->unit, dirfd, it->file, it->dev, cur, sizeof(cur)) < 0 ||
	    strcmp(cur, e->last) == 0)
		return; /* a read error is the write's to report */
	/* someone else's value: how long it is, is not known any more */
	tn->wlen[it->file] = 0;
	res->drifted++;
	tn->drift_total++;
	w->drift_total++;
	if (!tn->drift_logged || now_us - tn->drift_log_us >= w->log_interval_us) {
		tn->drift_logged = true;
		tn->drift_log_us = now_us;
		fs_logf(w->log, w->log_ctx, LOG_WARNING,
			"writer: %s/%s/%s is \"%s\", changed by someone else (we wrote \"%s\"); "
			"writing \"%s\" again",
			w->cgroup_root, tn->cgroup, e->key, cur, e->last, it->value);
	}
	snprintf(e->last, sizeof(e->last), "%s", cur);
}

/* Whether every_us, plus up to half of it by tn's index, has passed since
 * last_us. */
static bool spread_due(const struct fs_writer *w, const struct wr_tenant *tn, uint64_t last_us,
		       uint64_t every_us, uint64_t now_us)
{
	const uint64_t spread = (uint64_t)((size_t)(tn - w->tenants) % RECHECK_PHASES) *
				(every_us / 2 / RECHECK_PHASES);
	const uint64_t since = now_us - last_us;

	/* (not every_us + spread: no overflow for a huge every_us) */
	return since >= spread && since - spread >= every_us;
}

/* Whether tenant tn's known files are to be read again now: it was not
 * opened since it became a tenant (or gone, or recreated), or recheck_us,
 * plus up to half of it by tenant index, has passed since (the safety net
 * of the watches). The spread: tenants first checked together (at start)
 * were all read again in one period every recheck_us; that period, with
 * the sampler's look at every path (reprobe_at), cost 3x the median at
 * 1,000 tenants in issue 19's benchmark. */
static bool recheck_due(const struct fs_writer *w, const struct wr_tenant *tn, uint64_t now_us)
{
	return !tn->checked || spread_due(w, tn, tn->checked_us, w->recheck_us, now_us);
}

/* Whether tn's known files without a change watch are to be read again:
 * every FS_WRITER_UNWATCHED_US, spread like the recheck. */
static bool unwatched_due(const struct fs_writer *w, const struct wr_tenant *tn, uint64_t now_us)
{
	return tn->unwatched && spread_due(w, tn, tn->unwatched_us, FS_WRITER_UNWATCHED_US, now_us);
}

/*
 * Phase 1 of one tenant: skips it in the steady state; else opens its
 * directory once and records the original (and current value) of every item
 * not known yet for this directory.
 */
static enum prep prepare(struct fs_writer *w, struct wr_tenant *tn, struct item *it, size_t n,
			 uint64_t now_us, struct fs_apply_result *res, int *dirfd_out)
{
	/* due: every known file is read again (safety net of the watches) */
	bool due = recheck_due(w, tn, now_us);
	/* Read every known value again: a unit's properties only when the
	 * tenant is new to this directory or events were lost, not on the
	 * periodic recheck: that would be a D-Bus call per property of every
	 * tenant each recheck_us (10,000 user slices: ~80,000 calls at once),
	 * and systemd writes the cgroup file whenever a property changes, so
	 * the watch sees what others do through systemd. */
	bool reread = tn->backend == FS_BACKEND_SYSTEMD ? !tn->checked : due;
	bool pending = false;
	uint64_t ino = 0;
	unsigned check = tn->check | (unwatched_due(w, tn, now_us) ? tn->unwatched : 0);
	int dirfd;

	if (n == 0)
		return PREP_DONE;
	if (!due && !check && steady(it, n, now_us, res))
		return PREP_STEADY;
	dirfd = open_tenant(w, tn, res, &ino);
	if (dirfd < 0)
		return PREP_DONE;
	tn->checked = true;
	tn->checked_us = now_us;
	tn->ino = ino;
	tn->check = 0;
	if (reread || (check & tn->unwatched))
		tn->unwatched_us = now_us;
	if (tn->wfd_ino != ino)
		drop_wfds(w, tn); /* a recreated cgroup: its files are others */
	if (tn->watch_ino != tn->ino) {
		unwatch_tenant(w, tn);
		tn->watch_ino = tn->ino;
	}
	for (size_t i = 0; i < n; i++) {
		char cur[FS_CGF_VALUE_MAX];
		struct wr_entry *e = it[i].e;
		bool unit = tn->backend == FS_BACKEND_SYSTEMD;
		bool recreated = e && e->ino && e->ino != tn->ino;
		int r;

		if (e && e->has_last && !recreated) {
			if (e->saved && (reread || (check & (1u << it[i].file))))
				check_drift(w, tn, dirfd, &it[i], now_us, res);
			pending |= !e->saved;
			continue;
		}
		if (!e && it[i].slot->missing_until && now_us < it[i].slot->missing_until) {
			res->unsupported++;
			continue;
		}
		watch_file(w, tn, dirfd, it[i].file); /* before the read: no change missed */
		r = read_current(w, tn->cgroup, unit, dirfd, it[i].file, it[i].dev, cur,
				 sizeof(cur));
		if (r < 0) {
			if (r == -ENOENT && faccessat(dirfd, ".", F_OK, 0) < 0) {
				res->gone = true;
				tn->checked = false;
				put_dir(tn, dirfd);
				return PREP_DONE;
			}
			/* Missing (controller not enabled, or cpu.max.burst before
			 * 5.14): unsupported here, retried after reprobe_us.
			 * Unreadable: a failure. Either way skip it this round:
			 * never write what we could not save. */
			log_no_original(w, tn, &it[i], r, now_us);
			if (r == -ENOENT)
				drop_wfd(w, tn, (int)it[i].file); /* gone: not kept */
			if (r == -ENOENT) {
				res->unsupported++;
				it[i].slot->missing_until = now_us + w->reprobe_us;
			} else {
				res->failed++;
			}
			if (e)
				e->has_last = false; /* not known for this directory */
			continue;
		}
		it[i].slot->missing_until = 0;
		if (!e) {
			e = wr_add(&w->t, tn->cgroup, it[i].file, it[i].dev, unit, cur);
			if (!e) {
				res->error = -ENOMEM;
				put_dir(tn, dirfd);
				return PREP_DONE;
			}
			attach(it[i].slot, e);
			it[i].e = e;
		} else if (recreated && !unit) {
			/* A new cgroup under the same name (a restarted service): its
			 * own value is what a restore must bring back. (Not for a
			 * unit: our runtime properties outlive its cgroup, so what
			 * it holds now is ours; the saved original stays.) */
			char *o = strdup(cur);

			if (!o) {
				res->error = -ENOMEM;
				put_dir(tn, dirfd);
				return PREP_DONE;
			}
			free(e->orig);
			e->orig = o;
			e->saved = false;
			w->t.dirty = true;
		}
		snprintf(e->last, sizeof(e->last), "%s", cur);
		e->has_last = true;
		e->ino = tn->ino;
		pending |= !e->saved;
	}
	/* a known file without a watch (inotify off, max_watches) is read
	 * every FS_WRITER_UNWATCHED_US instead (unwatched_due) */
	tn->unwatched = 0;
	for (size_t i = 0; i < n; i++)
		if (it[i].e && it[i].e->has_last && tn->wd[it[i].file] < 0)
			tn->unwatched |= 1u << it[i].file;
	*dirfd_out = dirfd;
	return pending ? PREP_PENDING : PREP_READY;
}

static int grow_pending(struct fs_writer *w, size_t n)
{
	struct wr_pending *p;

	if (n <= w->pend_cap)
		return 0;
	p = realloc(w->pend, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	w->pend = p;
	w->pend_cap = n;
	return 0;
}

/* Phase 3 of a tenant that waited for the save (dirfd -1: reopen it). */
static void write_pending(struct fs_writer *w, struct wr_tenant *tn, int dirfd,
			  const struct fs_limits *lim, uint64_t now_us, struct fs_apply_result *res)
{
	struct item it[MAX_ITEMS];
	uint64_t ino = 0;
	size_t n;

	if (dirfd < 0) {
		dirfd = open_tenant(w, tn, res, &ino);
		if (dirfd < 0)
			return;
		if (ino == 0 || ino != tn->ino) {
			/* Recreated between the phases: checked again next round. */
			tn->checked = false;
			put_dir(tn, dirfd);
			return;
		}
	}
	n = build_items(w, tn, lim, it);
	write_tenant(w, tn, dirfd, tn->ino, it, n, now_us, res);
	put_dir(tn, dirfd);
}

/* A watch fired: the file is read again at the tenant's next apply, unless
 * the event is of our own write in this apply (tn->wrote). */
static void on_watch(void *ctx, uint32_t key, enum fs_dw_event ev)
{
	struct fs_writer *w = ctx;
	size_t t = key / FS_CGF__COUNT;
	unsigned f = key % FS_CGF__COUNT;
	struct wr_tenant *tn;

	if (t >= w->n_tenants)
		return;
	tn = &w->tenants[t];
	if (ev == FS_DW_GONE) {
		tn->wd[f] = -1;
		drop_wfd(w, tn, (int)f);
		tn->checked = false; /* gone, or recreated: see at the next apply */
	} else if (!(tn->wrote & (1u << f))) {
		tn->check |= 1u << f;
		tn->wlen[f] = 0;
	}
}

/* Drains the watch (see on_watch); a lost event queue means every tenant
 * is read again. */
static void poll_watch(struct fs_writer *w)
{
	const bool overflow = w->dw && fs_dw_poll(w->dw, on_watch, w) == -EOVERFLOW;

	w->since_poll = 0;
	if (overflow)
		for (size_t i = 0; i < w->n_tenants; i++)
			w->tenants[i].checked = false;
	if (overflow && !w->dw_overflowed)
		fs_logf(w->log, w->log_ctx, LOG_NOTICE,
			"writer: the change watch's event queue overflowed: every controlled "
			"file is read again (raise fs.inotify.max_queued_events)");
	w->dw_overflowed = overflow;
}

/* Drains the watch within an apply before our own writes can fill its
 * queue (WR_POLL_WRITES); tn->wrote still marks them as ours. */
static void poll_watch_if_full(struct fs_writer *w)
{
	if (w->since_poll >= WR_POLL_WRITES)
		poll_watch(w);
}

/*
 * The steady state without formatting a value: lim is the limits of the
 * tenant's last apply that found every file unchanged (no back-off, no
 * missing file: those end with time), and nothing that apply relied on
 * has moved since: no watch fired, no recheck is due, the writer's entries
 * are as they were. At 1,000 tenants, build_items' formatting of every
 * value each period was about a third of the writer's time.
 */
static bool memo_holds(const struct fs_writer *w, const struct wr_tenant *tn,
		       const struct fs_limits *lim, uint64_t now_us)
{
	return tn->memo_gen == w->gen && !recheck_due(w, tn, now_us) && !tn->check &&
	       !unwatched_due(w, tn, now_us) && fs_limits_equal(&tn->memo, lim);
}

/* Tenants first .. first + n - 1; lim, skip and res are indexed from 0. */
static int apply_range(struct fs_writer *w, size_t first, size_t n, const struct fs_limits *lim,
		       const bool *skip, uint64_t now_us, struct fs_apply_result *res)
{
	size_t np = 0, n_open = 0;
	int save_err = 0, r;

	r = grow_pending(w, n);
	if (r < 0)
		return r;
	/* What others changed since the last apply. */
	poll_watch(w);
	/* Phase 1: read and record what is new; write the tenants that need no save. */
	for (size_t i = 0; i < n; i++) {
		struct wr_tenant *tn = &w->tenants[first + i];
		struct item it[MAX_ITEMS];
		int dirfd = -1;
		size_t nit;

		memset(&res[i], 0, sizeof(res[i]));
		/* FS_BACKEND_NONE: backend = systemd, and systemd cannot write it */
		if ((skip && skip[i]) || lim[i].set == 0 || tn->backend == FS_BACKEND_NONE)
			continue;
		if (tn->path_err < 0) {
			if (!tn->refused_logged)
				fs_logf(w->log, w->log_ctx, LOG_ERR,
					"writer: %s is not a valid cgroup path; refused",
					tn->cgroup);
			tn->refused_logged = true;
			res[i].error = tn->path_err;
			continue;
		}
		if (memo_holds(w, tn, &lim[i], now_us)) {
			res[i].unchanged = tn->memo_n;
			continue;
		}
		tn->memo_gen = 0;
		nit = build_items(w, tn, &lim[i], it);
		switch (prepare(w, tn, it, nit, now_us, &res[i], &dirfd)) {
		case PREP_DONE:
			break;
		case PREP_STEADY:
			if (res[i].unsupported == 0) {
				tn->memo = lim[i];
				tn->memo_n = res[i].unchanged;
				tn->memo_gen = w->gen;
			}
			break;
		case PREP_READY:
			write_tenant(w, tn, dirfd, tn->ino, it, nit, now_us, &res[i]);
			put_dir(tn, dirfd);
			poll_watch_if_full(w);
			break;
		case PREP_PENDING:
			if (dirfd == tn->lent_fd) {
				/* lent: stays open anyway */
			} else if (n_open >= WR_OPEN_MAX) {
				close(dirfd);
				dirfd = -1;
			} else {
				n_open++;
			}
			w->pend[np++] = (struct wr_pending){i, dirfd};
			break;
		}
	}
	/* Phase 2: one save for every original recorded in phase 1. */
	if (np > 0) {
		save_err = wr_state_save(w->state_dir, &w->t);
		if (save_err < 0)
			fs_logf(w->log, w->log_ctx, LOG_ERR,
				"writer: cannot save originals to %s/%s: %s; not writing %zu "
				"tenant(s)",
				w->state_dir, FS_WRITER_STATE_FILE, strerror(-save_err), np);
	}
	/* Phase 3: the tenants that waited for the save. */
	for (size_t k = 0; k < np; k++) {
		const struct wr_pending *p = &w->pend[k];

		if (save_err < 0) {
			res[p->i].error = save_err;
			put_dir(&w->tenants[first + p->i], p->dirfd);
			continue;
		}
		write_pending(w, &w->tenants[first + p->i], p->dirfd, &lim[p->i], now_us,
			      &res[p->i]);
		poll_watch_if_full(w);
	}
	/*
	 * Our own writes raised events: drop them now, so that a file we wrote
	 * is not read back next period. A change by someone else between our
	 * write and this drain (a window of this apply's duration) is lost
	 * with them; the recheck (recheck_us) reads every file again.
	 */
	poll_watch(w);
	for (size_t i = 0; i < n; i++)
		w->tenants[first + i].wrote = 0;
	if (save_err < 0)
		return save_err;
	r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = res[i].error;
	for (size_t i = 0; i < n && r == 0; i++)
		if (res[i].failed && !res[i].gone)
			r = -EIO;
	return r;
}

int fs_writer_apply_all(struct fs_writer *w, size_t n, const struct fs_limits *lim,
			const bool *skip, uint64_t now_us, struct fs_apply_result *res)
{
	struct fs_apply_result *local = NULL;
	int r;

	if (n > w->n_tenants)
		return -EINVAL;
	if (n == 0)
		return 0;
	if (!res) {
		local = calloc(n, sizeof(*local));
		if (!local)
			return -ENOMEM;
		res = local;
	}
	r = apply_range(w, 0, n, lim, skip, now_us, res);
	free(local);
	return r;
}

int fs_writer_apply(struct fs_writer *w, size_t tenant, const struct fs_limits *lim,
		    uint64_t now_us, struct fs_apply_result *res)
{
	struct fs_apply_result local;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (tenant >= w->n_tenants) {
		fs_logf(w->log, w->log_ctx, LOG_ERR,
			"writer: tenant %zu is not in the tenant list (%zu); refused", tenant,
			w->n_tenants);
		return -EPERM;
	}
	return apply_range(w, tenant, 1, lim, NULL, now_us, res);
}

/*
 * systemd realizes a unit's cgroup whenever its properties are set (the
 * commit of SetUnitProperties creates the directory), also for a stopped
 * unit: restoring the properties of a unit whose cgroup was gone (a user
 * logged out, a service stopped) made an empty cgroup that nothing removes,
 * which a template then took for a tenant again. It is removed when the
 * unit is still stopped; rmdir(2) of a cgroup with processes or children
 * fails (EBUSY), so a unit that started meanwhile keeps its own.
 */
static void remove_realized(struct fs_writer *w, const char *cgroup)
{
	if (!w->unit_ops || !w->unit_ops->active || fs_cgfs_check_path(cgroup) < 0 ||
	    faccessat(w->cg.root_fd, cgroup, F_OK, AT_SYMLINK_NOFOLLOW) < 0 ||
	    w->unit_ops->active(w->unit_ctx, cgroup) != 0)
		return;
	if (unlinkat(w->cg.root_fd, cgroup, AT_REMOVEDIR) == 0)
		fs_logf(w->log, w->log_ctx, LOG_DEBUG,
			"writer: %s: removed the empty cgroup systemd made for a stopped unit "
			"when its properties were restored",
			cgroup);
}

/* One original to write back. */
struct ritem {
	struct wr_entry *e;
	int rank;
	bool done; /* restored: drop it */
	bool gone; /* its cgroup (cgroupfs) or unit (systemd) is gone: drop it */
};
_Static_assert(sizeof(struct ritem) <= SORT_ELEM_MAX, "sort_by_rank's buffer");

/*
 * Restores the saved entries es[0..n-1], which all belong to one cgroup, in
 * the safe order, and drops those restored, and those whose cgroup (unit,
 * for the systemd backend's) is gone. A unit's properties are restored even
 * when its cgroup is gone (a stopped service): our runtime values would
 * otherwise stay with the unit until reboot. 0 or the first -errno.
 */
static int restore_group(struct fs_writer *w, struct wr_entry **es, size_t n)
{
	struct fs_cgfile_order o = {false, false};
	struct ritem *it = calloc(n, sizeof(*it));
	char *cgroup = strdup(es[0]->cgroup);
	bool dir_gone = false, any_gone = false, unit_set = false;
	int dirfd = -1, r = 0;

	w->gen++; /* originals written back, entries dropped */
	if (!it || !cgroup) {
		r = -ENOMEM;
		goto out;
	}
	dirfd = fs_cgfs_open_cgroup(&w->cg, cgroup);
	if (dirfd == -ENOENT) {
		dir_gone = true;
	} else if (dirfd < 0) {
		r = dirfd;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct wr_entry *e = es[i];
		char cur[FS_CGF_VALUE_MAX];

		it[i].e = e;
		it[i].gone = dir_gone && !e->unit;
		if (it[i].gone)
			continue;
		if (!e->has_last && read_current(w, cgroup, e->unit, dirfd, e->file, e->dev, cur,
						 sizeof(cur)) == 0) {
			snprintf(e->last, sizeof(e->last), "%s", cur);
			e->has_last = true;
		}
		order_note(&o, e, e->has_last ? e->last : NULL, e->orig);
	}
	for (size_t i = 0; i < n; i++)
		it[i].rank = fs_cgfile_rank(&o, it[i].e->file);
	sort_by_rank(it, n, sizeof(*it), offsetof(struct ritem, rank));
	for (size_t i = 0; i < n; i++) {
		enum write_outcome wo;

		if (it[i].gone)
			continue;
		wo = write_item(w, NULL, dirfd, 0, cgroup, it[i].e, it[i].e->orig, 0, true);
		if (wo == WR_GONE) {
			/* the rest of this backend's entries go with it */
			for (size_t j = i; j < n; j++)
				if (it[j].e->unit == it[i].e->unit)
					it[j].gone = true;
		} else if (wo == WR_OK) {
			it[i].done = true;
			unit_set |= it[i].e->unit;
		} else if (r == 0) {
			r = -EIO;
		}
	}
	for (size_t i = 0; i < n; i++)
		any_gone |= it[i].gone;
	if (any_gone)
		fs_logf(w->log, w->log_ctx, LOG_INFO,
			"writer: %s vanished; its saved originals are dropped", cgroup);
	for (size_t i = 0; i < n; i++)
		if (it[i].gone || it[i].done)
			wr_remove(&w->t, it[i].e);
	if (dir_gone && unit_set)
		remove_realized(w, cgroup);
out:
	if (dirfd >= 0)
		close(dirfd);
	free(cgroup);
	free(it);
	return r;
}

int fs_writer_restore_cgroup(struct fs_writer *w, const char *cgroup)
{
	struct wr_entry **es = calloc(w->t.n ? w->t.n : 1, sizeof(*es));
	size_t n = 0;
	int r = 0, s;

	if (!es)
		return -ENOMEM;
	for (size_t i = 0; i < w->t.n; i++)
		if (strcmp(w->t.e[i]->cgroup, cgroup) == 0)
			es[n++] = w->t.e[i];
	if (n)
		r = restore_group(w, es, n);
	free(es);
	s = wr_state_save(w->state_dir, &w->t);
	return r < 0 ? r : s;
}

static int by_cgroup(const void *a, const void *b)
{
	const struct wr_entry *x = *(const struct wr_entry *const *)a;
	const struct wr_entry *y = *(const struct wr_entry *const *)b;

	return strcmp(x->cgroup, y->cgroup);
}

int fs_writer_restore(struct fs_writer *w)
{
	size_t n = w->t.n;
	struct wr_entry **es = calloc(n ? n : 1, sizeof(*es));
	int first = 0, r;

	if (!es)
		return -ENOMEM;
	/* restore_group() removes entries from the table: work on a snapshot,
	 * grouped by cgroup. */
	if (n)
		memcpy(es, w->t.e, n * sizeof(*es));
	qsort(es, n, sizeof(*es), by_cgroup);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && strcmp(es[j]->cgroup, es[i]->cgroup) == 0; j++)
			;
		r = restore_group(w, es + i, j - i);
		if (r < 0 && first == 0)
			first = r;
	}
	free(es);
	r = wr_state_save(w->state_dir, &w->t);
	if (r < 0 && first == 0)
		first = r;
	return first;
}

int fs_release(const char *state_dir, const char *cgroup_root, fs_log_fn log, void *log_ctx,
	       const struct fs_unit_ops *unit_ops, void *unit_ctx)
{
	struct fs_writer_opts o = {
	    .cgroup_root = cgroup_root,
	    .state_dir = state_dir,
	    .log = log,
	    .log_ctx = log_ctx,
	    .unit_ops = unit_ops,
	    .unit_ctx = unit_ctx,
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
