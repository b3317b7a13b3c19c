/* SPDX-License-Identifier: MIT */
/*
 * The writer's change watch: one inotify watch (IN_MODIFY) on each cgroup
 * file the writer controls, so that a value changed by someone else (an
 * operator's echo, systemd's daemon-reload or set-property) is noticed
 * without reading every file every period.
 *
 * Writing a cgroupfs file goes through vfs_write(), which raises
 * fsnotify_modify() for kernfs files as for any other (checked in the VM:
 * tests/vm/suite-drift.sh); the kernel's own notifications (memory.events
 * and the like) are on other files. Each watch carries a key chosen by the
 * caller (the writer: tenant * FS_CGF__COUNT + file); fs_dw_poll drains every
 * queued event in one read(2) per 16 KiB of events and hands the keys back.
 *
 * Cost: one watch per (tenant, file) in force; poll is one read(2) when the
 * queue is empty; wd -> key lookups are O(1) (open addressing).
 */
#ifndef FAIRSHARE_DRIFT_WATCH_H
#define FAIRSHARE_DRIFT_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct fs_drift_watch;

/* 0 or -errno (inotify unavailable: the caller re-reads instead). */
int fs_dw_open(struct fs_drift_watch **out);
void fs_dw_close(struct fs_drift_watch *dw);

/*
 * Watches <dirfd>/<file> (dirfd: an open cgroup directory) under key.
 * Returns the watch descriptor (>= 0) or -errno (max_user_watches reached,
 * file missing). The inode already watched under another key: -EEXIST.
 */
int fs_dw_add(struct fs_drift_watch *dw, int dirfd, const char *file, uint32_t key);

/* Stops watch wd (its pending events are dropped by the next poll). */
void fs_dw_remove(struct fs_drift_watch *dw, int wd);

/* Watch wd's events come under key from now on, also those already queued
 * (the writer's tenants were renumbered). */
void fs_dw_rekey(struct fs_drift_watch *dw, int wd, uint32_t key);

/* What happened to the file under key. */
enum fs_dw_event {
	FS_DW_MODIFIED, /* written to */
	FS_DW_GONE,	/* deleted (its cgroup removed): the watch is gone too */
};

/*
 * Drains the queue, calling cb for each event of a watched file. A lost
 * queue (IN_Q_OVERFLOW) returns -EOVERFLOW after the events read: the
 * caller must assume every file changed. 0 otherwise.
 */
int fs_dw_poll(struct fs_drift_watch *dw, void (*cb)(void *ctx, uint32_t key, enum fs_dw_event ev),
	       void *ctx);

/* Number of watches in place. */
uint32_t fs_dw_count(const struct fs_drift_watch *dw);

#endif /* FAIRSHARE_DRIFT_WATCH_H */
