/* SPDX-License-Identifier: MIT */
/*
 * fairshared's logging: the journal with structured fields (TENANT=,
 * RESOURCE=, CGROUP=) when running under systemd (JOURNAL_STREAM set),
 * otherwise one line per message on stderr. Process-wide, set up once.
 */
#ifndef FAIRSHARE_AGENT_FSD_LOG_H
#define FAIRSHARE_AGENT_FSD_LOG_H

#include <stdbool.h>
#include <syslog.h>

/* max_prio: LOG_DEBUG shows everything. journal: send to the journal. */
void fsd_log_setup(int max_prio, bool journal);
/* JOURNAL_STREAM names our stderr (systemd's check: same device:inode). */
bool fsd_log_stderr_is_journal(void);
/* "debug", "info", "notice", "warning", "err"/"error", or a digit 0-7; -1 if unknown. */
int fsd_log_level_from_name(const char *name);
bool fsd_log_enabled(int prio);

/* Any field may be NULL (then it is left out). */
void fsd_log(int prio, const char *tenant, const char *resource, const char *cgroup,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define fsd_info(...)  fsd_log(LOG_INFO, NULL, NULL, NULL, __VA_ARGS__)
#define fsd_warn(...)  fsd_log(LOG_WARNING, NULL, NULL, NULL, __VA_ARGS__)
#define fsd_err(...)   fsd_log(LOG_ERR, NULL, NULL, NULL, __VA_ARGS__)
#define fsd_debug(...) fsd_log(LOG_DEBUG, NULL, NULL, NULL, __VA_ARGS__)

/* An fs_log_fn (agent_log.h) for the sampler and writer; ctx unused. */
void fsd_log_cb(void *ctx, int prio, const char *msg);

#endif /* FAIRSHARE_AGENT_FSD_LOG_H */
