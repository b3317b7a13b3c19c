/* SPDX-License-Identifier: MIT */
/* Helpers for the agent tests: fake cgroupfs/sysfs trees in a mkdtemp dir. */
#ifndef FAIRSHARE_AGENT_TESTUTIL_H
#define FAIRSHARE_AGENT_TESTUTIL_H

#include <stddef.h>

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a malloc'd path. */
char *at_mkdtemp(void);
/* rm -rf path (never follows symlinks); frees nothing. */
void at_rmtree(const char *path);
/* Writes text to root/rel, creating parent directories. Fails the test on error. */
void at_write(const char *root, const char *rel, const char *text);
/* mkdir -p root/rel. */
void at_mkdir(const char *root, const char *rel);
/* Reads root/rel into a static buffer (NUL-terminated); NULL if missing. */
const char *at_read(const char *root, const char *rel);
/* Symlink root/rel -> target (target is used verbatim). */
void at_symlink(const char *root, const char *rel, const char *target);

#endif
