/* SPDX-License-Identifier: MIT */
/*
 * Change tracking of one file per tenant (the cgroupfs sampler's
 * memory.events) through inotify, so that a file the kernel has not changed
 * is not read again: its last value still holds.
 *
 * cgroupfs announces a change of memory.events (and cgroup.events) as a
 * file-modified event ("A value change in this file generates a file
 * modified event", Documentation/admin-guide/cgroup-v2.rst); systemd watches
 * memory.events the same way. The events are read in one batch per period:
 * one read(2) for all tenants instead of an open/pread/close (or a pread of a
 * kept fd) per tenant. The kernel sends them at most every 10 ms per file
 * and from a work item, so an event counted in the last few milliseconds
 * before a sample may be seen one period later, as it would be had it
 * happened just after the sample.
 *
 * A tenant is "unchanged" only while its watch is in place and no event
 * came since fs_watch_arm(); anything else (no watch, an event, a lost
 * event queue, the file deleted, moved or its attributes changed) means
 * "read it". A watch that cannot be added (inotify off, max_user_watches
 * reached) leaves that tenant read every period, as without this module.
 */
#ifndef FAIRSHARE_FILE_WATCH_H
#define FAIRSHARE_FILE_WATCH_H

#include <stdbool.h>
#include <stddef.h>

struct fs_watch;

/* What a watch reports. */
enum fs_watch_kind {
	/* the file's content changed (or it was replaced, moved, deleted) */
	FS_WATCH_CONTENT,
	/* a directory itself moved or went away; what happens to the files in
	 * it is not reported (the cgroupfs sampler on a fake tree: whether the
	 * path still leads to the directory it holds open) */
	FS_WATCH_PLACE,
};

/* For tenants 0..n-1. 0 or -errno (then the caller reads every period). */
int fs_watch_open(struct fs_watch **out, size_t n, enum fs_watch_kind kind);
void fs_watch_close(struct fs_watch *w);

/* Drains the queued events: tenants whose file changed are no longer
 * unchanged. Call once per period, before asking fs_watch_unchanged. */
void fs_watch_poll(struct fs_watch *w);

/*
 * Before reading tenant t's file `name` in the directory dirfd (".": the
 * directory itself): watches it (when not watched yet) and clears its
 * changed mark, so that a change from now on is seen. false when it could
 * not be watched (read it every period).
 */
bool fs_watch_arm(struct fs_watch *w, size_t t, int dirfd, const char *name);

/* Tenant t's file is watched and has not changed since fs_watch_arm. */
bool fs_watch_unchanged(const struct fs_watch *w, size_t t);

/* Stops watching tenant t's file (its cgroup went away or was replaced). */
void fs_watch_forget(struct fs_watch *w, size_t t);

/*
 * The tenants changed (sample.h retarget): new tenant j (of n) is old tenant
 * from[j], FS_LIST_NEW (list_match.h) for a new one, which is not watched
 * yet. The watches of old tenants that no new one takes are removed; the
 * others keep their watch and their changed mark. 0, or -ENOMEM with w as
 * it was.
 */
int fs_watch_remap(struct fs_watch *w, size_t n, const size_t *from);

#endif /* FAIRSHARE_FILE_WATCH_H */
