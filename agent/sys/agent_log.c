/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "agent_log.h"

void fs_logf(fs_log_fn fn, void *ctx, int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(ctx, prio, msg);
}
