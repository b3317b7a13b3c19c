/* SPDX-License-Identifier: MIT */
/*
 * A condition that may hold period after period (a tenant's cgroup that
 * cannot be opened), logged without a line per period: once when it starts
 * or changes, then one summary line per interval while it holds, and once
 * when it clears.
 */
#ifndef FAIRSHARE_AGENT_LOG_COND_H
#define FAIRSHARE_AGENT_LOG_COND_H

#include <stdint.h>

#include "agent_log.h"

#define FS_LOG_COND_INTERVAL_US (60ull * 1000000ull)

struct fs_log_cond {
	int err;	       /* the condition held: a negative errno; 0: none */
	uint64_t logged_us;    /* when it was last logged */
	unsigned long repeats; /* times seen since then */
};

/*
 * The condition of subject now: err (a negative errno), or 0 when it is fine.
 * Logs "who: subject: strerror" at prio when err is new or changed, "who:
 * subject: still strerror (N more times in S s)" at prio when it has held
 * FS_LOG_COND_INTERVAL_US since its last line, and "who: subject: strerror:
 * cleared" at LOG_INFO when it goes away; nothing otherwise.
 */
void fs_log_cond(struct fs_log_cond *c, int err, uint64_t now_us, fs_log_fn fn, void *ctx, int prio,
		 const char *who, const char *subject);

#endif /* FAIRSHARE_AGENT_LOG_COND_H */
