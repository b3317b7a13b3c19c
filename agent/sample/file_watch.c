/* SPDX-License-Identifier: MIT */
/* Change tracking of one file per tenant through inotify (see file_watch.h). */
#include "file_watch.h"
#include "inotify_drain.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "list_match.h"
#include "paths.h"

#define NO_WD (-1)
#define NO_T  SIZE_MAX
/* A replaced, moved or deleted file, or new attributes: watch it again. */
#define WATCH_MASK (IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW)
#define GONE_MASK  (IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)
/* Only the directory's own events: a watched directory reports IN_MODIFY and
 * IN_ATTRIB of every file in it too, and a fake tree's files change every
 * period. */
#define PLACE_MASK (IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

struct fs_watch {
	int fd;	       /* the inotify instance, non-blocking */
	uint32_t mask; /* WATCH_MASK or PLACE_MASK */
	size_t n;
	int *wd;	  /* [n] tenant's watch, NO_WD: none */
	bool *changed;	  /* [n] an event came since fs_watch_arm */
	size_t *next;	  /* [n] chain of the tenants in one bucket, NO_T: end */
	size_t *head;	  /* [n_buckets] first tenant of a bucket, NO_T: none */
	size_t n_buckets; /* a power of two: wd -> tenant in O(1) */
};

static size_t bucket(const struct fs_watch *w, int wd)
{
	return ((uint32_t)wd * 2654435761u) & (w->n_buckets - 1);
}

static size_t find(const struct fs_watch *w, int wd)
{
	size_t t = w->head[bucket(w, wd)];

	while (t != NO_T && w->wd[t] != wd)
		t = w->next[t];
	return t;
}

static void unlink_wd(struct fs_watch *w, size_t t)
{
	size_t *p = &w->head[bucket(w, w->wd[t])];

	while (*p != NO_T && *p != t)
		p = &w->next[*p];
	if (*p == t)
		*p = w->next[t];
	w->wd[t] = NO_WD;
}

void fs_watch_close(struct fs_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd); /* drops every watch */
	free(w->wd);
	free(w->changed);
	free(w->next);
	free(w->head);
	free(w);
}

int fs_watch_open(struct fs_watch **out, size_t n, enum fs_watch_kind kind)
{
	struct fs_watch *w = calloc(1, sizeof(*w));
	size_t m = n ? n : 1;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->mask = kind == FS_WATCH_PLACE ? PLACE_MASK : WATCH_MASK;
	w->n = n;
	w->n_buckets = 1;
	while (w->n_buckets < 2 * m)
		w->n_buckets *= 2;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->wd = malloc(m * sizeof(*w->wd));
	w->changed = calloc(m, sizeof(*w->changed));
	w->next = malloc(m * sizeof(*w->next));
	w->head = malloc(w->n_buckets * sizeof(*w->head));
	if (w->fd < 0 || !w->wd || !w->changed || !w->next || !w->head) {
		int r = w->fd < 0 ? -errno : -ENOMEM;

		fs_watch_close(w);
		return r;
	}
	for (size_t t = 0; t < m; t++) {
		w->wd[t] = NO_WD;
		w->next[t] = NO_T;
	}
	for (size_t b = 0; b < w->n_buckets; b++)
		w->head[b] = NO_T;
	*out = w;
	return 0;
}

void fs_watch_forget(struct fs_watch *w, size_t t)
{
	if (!w || t >= w->n || w->wd[t] == NO_WD)
		return;
	/* its IN_IGNORED comes later and finds no tenant */
	inotify_rm_watch(w->fd, w->wd[t]);
	unlink_wd(w, t);
	w->changed[t] = true;
}

int fs_watch_remap(struct fs_watch *w, size_t n, const size_t *from)
{
	const size_t m = n ? n : 1;
	size_t n_buckets = 1;
	int *wd;
	bool *changed, *taken;
	size_t *next, *head;

	if (!w)
		return 0;
	while (n_buckets < 2 * m)
		n_buckets *= 2;
	wd = malloc(m * sizeof(*wd));
	changed = calloc(m, sizeof(*changed));
	next = malloc(m * sizeof(*next));
	head = malloc(n_buckets * sizeof(*head));
	taken = calloc(w->n ? w->n : 1, sizeof(*taken));
	if (!wd || !changed || !next || !head || !taken) {
		free(wd);
		free(changed);
		free(next);
		free(head);
		free(taken);
		return -ENOMEM;
	}
	for (size_t j = 0; j < n; j++) {
		const size_t i = from[j];

		wd[j] = NO_WD;
		if (i != FS_LIST_NEW && i < w->n && !taken[i]) {
			taken[i] = true;
			wd[j] = w->wd[i];
			changed[j] = w->changed[i];
		}
	}
	for (size_t i = 0; i < w->n; i++)
		if (!taken[i] && w->wd[i] != NO_WD)
			inotify_rm_watch(w->fd, w->wd[i]); /* its IN_IGNORED finds no tenant */
	free(taken);
	free(w->wd);
	free(w->changed);
	free(w->next);
	free(w->head);
	w->wd = wd;
	w->changed = changed;
	w->next = next;
	w->head = head;
	w->n = n;
	w->n_buckets = n_buckets;
	for (size_t b = 0; b < n_buckets; b++)
		head[b] = NO_T;
	for (size_t j = 0; j < m; j++) {
		next[j] = NO_T;
		if (j < n && wd[j] != NO_WD) {
			next[j] = head[bucket(w, wd[j])];
			head[bucket(w, wd[j])] = j;
		}
	}
	if (n == 0)
		wd[0] = NO_WD;
	return 0;
}

static void on_event(void *ctx, const struct inotify_event *ev)
{
	struct fs_watch *w = ctx;
	size_t t;

	if (ev->mask & IN_Q_OVERFLOW) {
		/* events were lost: whatever changed, read it */
		for (size_t i = 0; i < w->n; i++)
			w->changed[i] = true;
		return;
	}
	t = find(w, ev->wd);
	if (t == NO_T)
		return;
	w->changed[t] = true;
	if (ev->mask & IN_IGNORED)
		unlink_wd(w, t); /* the kernel removed the watch */
	else if (ev->mask & GONE_MASK)
		fs_watch_forget(w, t); /* a new file at the name gets a new watch */
}

void fs_watch_poll(struct fs_watch *w)
{
	if (w)
		fs_inotify_drain(w->fd, on_event, w);
}

bool fs_watch_arm(struct fs_watch *w, size_t t, int dirfd, const char *name)
{
	char path[sizeof(FS_DEFAULT_PROCFS_ROOT) + 64 + 256];
	int wd;

	if (!w || t >= w->n)
		return false;
	if (w->wd[t] == NO_WD) {
		/* inotify takes a path: the directory the sampler opened, through
		 * its fd, so no other directory at the cgroup's path is watched */
		if (snprintf(path, sizeof(path), "%s/self/fd/%d/%s", FS_DEFAULT_PROCFS_ROOT, dirfd,
			     name) >= (int)sizeof(path))
			return false;
		wd = inotify_add_watch(w->fd, path, w->mask);
		/* an inode watched already (two tenants naming one cgroup) keeps
		 * its first tenant: the other reads every period */
		if (wd < 0 || find(w, wd) != NO_T)
			return false;
		w->wd[t] = wd;
		w->next[t] = w->head[bucket(w, wd)];
		w->head[bucket(w, wd)] = t;
	}
	w->changed[t] = false;
	return true;
}

bool fs_watch_unchanged(const struct fs_watch *w, size_t t)
{
	return w && t < w->n && w->wd[t] != NO_WD && !w->changed[t];
}
