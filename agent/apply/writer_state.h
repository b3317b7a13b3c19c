/* SPDX-License-Identifier: MIT */
/*
 * The writer's saved originals and their crash-safe state file (internal to
 * writer.c and writer_state.c).
 *
 * File format (text, one record per line, fields separated by one space,
 * every byte <= ' ', '%' or >= 0x7f inside a field written as %XX):
 *     fairshare-writer-state 1
 *     orig CGROUP KEY VALUE
 * KEY is a cgroup file name, or "io.max@MAJ:MIN" for one disk's io.max line.
 */
#ifndef FAIRSHARE_WRITER_STATE_H
#define FAIRSHARE_WRITER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_log.h"

struct wr_entry {
	char *cgroup; /* normalised relative path */
	char *key;    /* file name, or io.max@MAJ:MIN */
	char *orig;   /* original value to write back */
	char *last;   /* value we last wrote or read; NULL = unknown */
	uint64_t ino; /* inode of the cgroup directory when `last` was set;
			 0 = unknown (loaded from the state file) */
	/* error handling */
	unsigned einval_count; /* consecutive EINVALs */
	uint64_t unsupported_until;
	int last_errno;
	uint64_t last_log_us;
	bool logged;	   /* last_log_us is meaningful */
	bool clamp_logged; /* memory.max clamp message, rate-limited separately */
	uint64_t clamp_log_us;
};

struct wr_table {
	size_t n, cap;
	struct wr_entry *e;
};

/* The entry for (cgroup, key), or NULL. */
struct wr_entry *wr_find(struct wr_table *t, const char *cgroup, const char *key);
/* Adds an entry with the given original (copied). NULL on ENOMEM. */
struct wr_entry *wr_add(struct wr_table *t, const char *cgroup, const char *key, const char *orig);
/* Removes entry i (order not kept). */
void wr_remove(struct wr_table *t, size_t i);
void wr_table_free(struct wr_table *t);

/* Only the files the writer manages may appear in a state file. */
bool wr_key_valid(const char *key);
/* The file name of a key ("io.max@8:0" -> "io.max") into buf. */
const char *wr_key_file(const char *key, char *buf, size_t len);

/*
 * Loads <state_dir>/writer.state into t (which must be empty). A missing file
 * is success. Malformed lines are skipped and logged (they cannot be restored
 * safely anyway). 0 or -errno.
 */
int wr_state_load(const char *state_dir, struct wr_table *t, fs_log_fn log, void *log_ctx);
/* Writes t atomically (temp + fsync + rename + fsync dir); removes the file
 * when t is empty. 0 or -errno. */
int wr_state_save(const char *state_dir, const struct wr_table *t);

#endif
