/* SPDX-License-Identifier: MIT */
/*
 * The log callback the I/O modules (sampler, writer, cgroupfs) report through,
 * so the daemon sends it to the journal and tests capture it.
 */
#ifndef FAIRSHARE_AGENT_LOG_H
#define FAIRSHARE_AGENT_LOG_H

#include <syslog.h> /* LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG */

/* prio is a syslog priority; msg is one complete line without '\n'. */
typedef void (*fs_log_fn)(void *ctx, int prio, const char *msg);

/* Formats and calls fn(ctx, prio, msg); does nothing when fn is NULL. */
void fs_logf(fs_log_fn fn, void *ctx, int prio, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* FAIRSHARE_AGENT_LOG_H */
