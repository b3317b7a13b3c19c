/* SPDX-License-Identifier: MIT */
/* Filling a caller's struct fs_error (see error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

void fs_error_set(struct fs_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}
