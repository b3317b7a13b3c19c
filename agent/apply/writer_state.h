/* SPDX-License-Identifier: MIT */
/*
 * The writer's saved originals and their crash-safe state file (internal to
 * writer.c and writer_state.c).
 *
 * File format (text, one record per line, fields separated by one space,
 * every byte <= ' ', '%' or >= 0x7f inside a field written as %XX):
 *     fairshare-writer-state 1
 *     orig CGROUP KEY VALUE
 *     unit CGROUP KEY VALUE
 * KEY is a cgroup file name, or "io.max@MAJ:MIN" for one disk's io.max line
 * (fs_cgfile_key / fs_cgfile_parse_key in model/cgfile.h). An "orig" VALUE
 * is the file's content (written back through cgroupfs); a "unit" VALUE is
 * the unit's properties for that file (model/unitprop.h, set back through
 * systemd): the systemd backend's originals. A reader that does not know
 * "unit" skips those lines as malformed (and cannot restore them).
 *
 * The table holds one entry per (cgroup, file, disk) with a saved original,
 * found in O(1) through a hash of (cgroup, file, disk). Entries have stable
 * addresses: the writer's per-tenant slots point at them (e->ref is the slot
 * that does, cleared when the entry is removed).
 */
#ifndef FAIRSHARE_WRITER_STATE_H
#define FAIRSHARE_WRITER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_log.h"
#include "cgfile.h"

struct wr_entry {
	char *cgroup; /* normalised relative path */
	enum fs_cgfile file;
	struct fs_devnum dev;	     /* io.max: the disk; else 0:0 */
	bool unit;		     /* the systemd backend's: orig and last are unit
					properties (model/unitprop.h), not file content */
	char key[FS_CGF_KEY_MAX];    /* "cpu.max", "io.max@8:0" */
	char *orig;		     /* original value to write back */
	bool saved;		     /* orig is in the state file on disk */
	bool has_last;		     /* `last` is known */
	char last[FS_CGF_VALUE_MAX]; /* value we last wrote or read */
	uint64_t ino;		     /* inode of the cgroup directory when `last` was set;
					0 = unknown (loaded from the state file) */
	/* error handling */
	unsigned einval_count; /* consecutive EINVALs */
	uint64_t unsupported_until;
	int last_errno;
	uint64_t last_log_us;
	bool logged;	   /* last_log_us is meaningful */
	bool clamp_logged; /* memory.max clamp message, rate-limited separately */
	uint64_t clamp_log_us;
	/* indexing (writer_state.c) */
	size_t pos;		/* index in wr_table.e */
	uint64_t hash;		/* of (cgroup, file, dev) */
	struct wr_entry *hnext; /* bucket chain */
	struct wr_entry **ref;	/* the writer slot pointing here, or NULL */
};

struct wr_table {
	size_t n, cap;
	struct wr_entry **e; /* [n], any order */
	size_t n_buckets;    /* 0 or a power of two */
	struct wr_entry **bucket;
	bool dirty; /* some entry is not saved (or was removed) since the last save */
};

/* The entry for (cgroup, file, dev) of one backend (unit: systemd's), or
 * NULL. O(1). dev is ignored for the files that are not per disk. The two
 * backends' originals of one file are distinct entries. */
struct wr_entry *wr_find(const struct wr_table *t, const char *cgroup, enum fs_cgfile f,
			 struct fs_devnum dev, bool unit);
/* Adds an unsaved entry with the given original (copied). NULL on ENOMEM. */
struct wr_entry *wr_add(struct wr_table *t, const char *cgroup, enum fs_cgfile f,
			struct fs_devnum dev, bool unit, const char *orig);
/* Removes and frees e (clearing the slot that points at it). */
void wr_remove(struct wr_table *t, struct wr_entry *e);
void wr_table_free(struct wr_table *t);

/*
 * Loads <state_dir>/writer.state into t (which must be empty); the entries
 * are saved. A missing file is success. Malformed lines are skipped and
 * logged (they cannot be restored safely anyway). 0 or -errno.
 */
int wr_state_load(const char *state_dir, struct wr_table *t, fs_log_fn log, void *log_ctx);
/*
 * Writes t atomically (temp + fsync + rename + fsync dir); removes the file
 * when t is empty. On success every entry is saved and t is not dirty.
 * 0 or -errno.
 */
int wr_state_save(const char *state_dir, struct wr_table *t);

#endif
