/* SPDX-License-Identifier: MIT */
/* The writer's change watch through inotify (see drift_watch.h). */
#include "drift_watch.h"
#include "inotify_drain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "paths.h"

/* IN_MODIFY: a write. The rest: the file went away (its cgroup removed). */
#define DW_MASK (IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF)

struct dw_slot {
	int wd; /* -1: empty */
	uint32_t key;
};

struct fs_drift_watch {
	int fd;		 /* the inotify instance, non-blocking */
	uint32_t n, cap; /* cap: 0 or a power of two, kept at most half full */
	struct dw_slot *s;
};

static uint32_t home(const struct fs_drift_watch *dw, int wd)
{
	return ((uint32_t)wd * 2654435761u) & (dw->cap - 1);
}

static struct dw_slot *lookup(const struct fs_drift_watch *dw, int wd)
{
	if (dw->cap == 0)
		return NULL;
	for (uint32_t i = home(dw, wd);; i = (i + 1) & (dw->cap - 1)) {
		if (dw->s[i].wd == wd)
			return &dw->s[i];
		if (dw->s[i].wd < 0)
			return NULL;
	}
}

static void put(struct fs_drift_watch *dw, int wd, uint32_t key)
{
	uint32_t i = home(dw, wd);

	while (dw->s[i].wd >= 0)
		i = (i + 1) & (dw->cap - 1);
	dw->s[i] = (struct dw_slot){wd, key};
	dw->n++;
}

static int grow(struct fs_drift_watch *dw)
{
	uint32_t old_cap = dw->cap, cap = old_cap ? old_cap * 2 : 64;
	struct dw_slot *old = dw->s, *s;

	if ((dw->n + 1) * 2 <= old_cap)
		return 0;
	s = malloc(cap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		s[i].wd = -1;
	dw->s = s;
	dw->cap = cap;
	dw->n = 0;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].wd >= 0)
			put(dw, old[i].wd, old[i].key);
	free(old);
	return 0;
}

/* Removes slot x, shifting back the entries of its probe run (no tombstones). */
static void erase(struct fs_drift_watch *dw, struct dw_slot *x)
{
	uint32_t i = (uint32_t)(x - dw->s), j = i;

	dw->s[i].wd = -1;
	dw->n--;
	for (;;) {
		uint32_t k;

		j = (j + 1) & (dw->cap - 1);
		if (dw->s[j].wd < 0)
			return;
		k = home(dw, dw->s[j].wd);
		/* entry j may move to i unless its home lies cyclically in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		dw->s[i] = dw->s[j];
		dw->s[j].wd = -1;
		i = j;
	}
}

int fs_dw_open(struct fs_drift_watch **out)
{
	struct fs_drift_watch *dw = calloc(1, sizeof(*dw));
	int r;

	*out = NULL;
	if (!dw)
		return -ENOMEM;
	dw->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (dw->fd < 0) {
		r = -errno;
		free(dw);
		return r;
	}
	*out = dw;
	return 0;
}

void fs_dw_close(struct fs_drift_watch *dw)
{
	if (!dw)
		return;
	close(dw->fd);
	free(dw->s);
	free(dw);
}

int fs_dw_add(struct fs_drift_watch *dw, int dirfd, const char *file, uint32_t key)
{
	char path[sizeof(FS_DEFAULT_PROCFS_ROOT) + 64 + 256];
	struct dw_slot *x;
	int wd, r;

	r = grow(dw);
	if (r < 0)
		return r;
	/* inotify takes a path: the directory the writer opened, through its
	 * fd, so no other directory at the cgroup's path is watched */
	if (snprintf(path, sizeof(path), "%s/self/fd/%d/%s", FS_DEFAULT_PROCFS_ROOT, dirfd, file) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	wd = inotify_add_watch(dw->fd, path, DW_MASK);
	if (wd < 0)
		return -errno;
	x = lookup(dw, wd);
	if (x)
		return x->key == key ? wd : -EEXIST; /* two tenants naming one cgroup */
	put(dw, wd, key);
	return wd;
}

void fs_dw_remove(struct fs_drift_watch *dw, int wd)
{
	struct dw_slot *x = lookup(dw, wd);

	if (!x)
		return;
	erase(dw, x);
	/* its IN_IGNORED comes later and finds no key */
	inotify_rm_watch(dw->fd, wd);
}

void fs_dw_rekey(struct fs_drift_watch *dw, int wd, uint32_t key)
{
	struct dw_slot *x = lookup(dw, wd);

	if (x)
		x->key = key;
}

struct dw_poll {
	struct fs_drift_watch *dw;
	void (*cb)(void *ctx, uint32_t key, enum fs_dw_event ev);
	void *ctx;
	int ret;
};

static void on_event(void *ctx, const struct inotify_event *ev)
{
	struct dw_poll *p = ctx;
	struct dw_slot *x;
	uint32_t key;

	if (ev->mask & IN_Q_OVERFLOW) {
		p->ret = -EOVERFLOW;
		return;
	}
	x = lookup(p->dw, ev->wd);
	if (!x)
		return;
	key = x->key;
	if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
		if (ev->mask & IN_IGNORED)
			erase(p->dw, x); /* the kernel removed the watch */
		else
			fs_dw_remove(p->dw, ev->wd);
		p->cb(p->ctx, key, FS_DW_GONE);
	} else {
		p->cb(p->ctx, key, FS_DW_MODIFIED);
	}
}

int fs_dw_poll(struct fs_drift_watch *dw, void (*cb)(void *ctx, uint32_t key, enum fs_dw_event ev),
	       void *ctx)
{
	struct dw_poll p = {.dw = dw, .cb = cb, .ctx = ctx};

	fs_inotify_drain(dw->fd, on_event, &p);
	return p.ret;
}

uint32_t fs_dw_count(const struct fs_drift_watch *dw)
{
	return dw ? dw->n : 0;
}
