/* SPDX-License-Identifier: MIT */
/* A repeating condition logged once, then summarised (see log_cond.h). */
#include "log_cond.h"

#include <string.h>

void fs_log_cond(struct fs_log_cond *c, int err, uint64_t now_us, fs_log_fn fn, void *ctx, int prio,
		 const char *who, const char *subject)
{
	if (err == c->err) {
		if (!err)
			return;
		c->repeats++;
		if (now_us - c->logged_us < FS_LOG_COND_INTERVAL_US)
			return;
		fs_logf(fn, ctx, prio, "%s: %s: still %s (%lu more times in %.0f s)", who, subject,
			strerror(-err), c->repeats, (double)(now_us - c->logged_us) / 1e6);
	} else if (err) {
		fs_logf(fn, ctx, prio, "%s: %s: %s", who, subject, strerror(-err));
	} else {
		fs_logf(fn, ctx, LOG_INFO, "%s: %s: %s: cleared", who, subject, strerror(-c->err));
	}
	c->err = err;
	c->logged_us = now_us;
	c->repeats = 0;
}
