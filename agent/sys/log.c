/* SPDX-License-Identifier: MIT */
/* Journal or stderr logging for fairshared (see log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

/* The only process-wide state of the daemon's logging: set once at start. */
static int log_max_prio = LOG_INFO;
static bool log_journal;

void fsd_log_setup(int max_prio, bool journal)
{
	log_max_prio = max_prio;
	log_journal = journal;
}

bool fsd_log_stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

int fsd_log_level_from_name(const char *name)
{
	static const char *const names[] = {"emerg",   "alert",	 "crit", "err",
					    "warning", "notice", "info", "debug"};

	if (name[0] >= '0' && name[0] <= '7' && !name[1])
		return name[0] - '0';
	if (!strcasecmp(name, "error"))
		return LOG_ERR;
	for (int i = 0; i < 8; i++)
		if (!strcasecmp(name, names[i]))
			return i;
	return -1;
}

bool fsd_log_enabled(int prio)
{
	return prio <= log_max_prio;
}

static void emit(int prio, const char *tenant, const char *resource, const char *cgroup,
		 const char *msg)
{
	static const char *const level[] = {"emerg",   "alert",	 "crit", "error",
					    "warning", "notice", "info", "debug"};

	if (log_journal) {
		char f[5][1100];
		struct iovec iov[5];
		int n = 0;

		snprintf(f[n], sizeof(f[n]), "MESSAGE=%s", msg);
		n++;
		snprintf(f[n], sizeof(f[n]), "PRIORITY=%d", prio);
		n++;
		if (tenant)
			snprintf(f[n++], sizeof(f[0]), "TENANT=%s", tenant);
		if (resource)
			snprintf(f[n++], sizeof(f[0]), "RESOURCE=%s", resource);
		if (cgroup)
			snprintf(f[n++], sizeof(f[0]), "CGROUP=%s", cgroup);
		for (int i = 0; i < n; i++)
			iov[i] = (struct iovec){.iov_base = f[i], .iov_len = strlen(f[i])};
		if (sd_journal_sendv(iov, n) >= 0)
			return;
	}
	fprintf(stderr, "fairshared: %s: %s\n", level[prio & 7], msg);
}

void fsd_log(int prio, const char *tenant, const char *resource, const char *cgroup,
	     const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!fsd_log_enabled(prio))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(prio, tenant, resource, cgroup, msg);
}

void fsd_log_cb(void *ctx, int prio, const char *msg)
{
	(void)ctx;
	if (fsd_log_enabled(prio))
		emit(prio, NULL, NULL, NULL, msg);
}
