/* SPDX-License-Identifier: MIT */
/*
 * Filling a caller's struct fs_error (policy.h). Every solver and check says
 * why it failed the same way: one formatted line, or nothing when the caller
 * passed no error (the checks run in loops where the text is not wanted).
 */
#ifndef FAIRSHARE_POLICY_ERROR_H
#define FAIRSHARE_POLICY_ERROR_H

#include "policy.h"

#include <stdbool.h>

/* Formats into err->msg; nothing when err is NULL. */
__attribute__((format(printf, 2, 3))) void fs_error_set(struct fs_error *err, const char *fmt, ...);

/* A property check's failure: the reason in why, and false. */
#define fs_reject(why, ...) (fs_error_set((why), __VA_ARGS__), false)

#endif /* FAIRSHARE_POLICY_ERROR_H */
