/* SPDX-License-Identifier: MIT */
/*
 * Notices that the cgroups a config's templates match changed (a user
 * logged in, a container started or went away), so that the daemon loads
 * its config again and the template tenants follow within one period.
 *
 * Each template's glob has a fixed directory part before its first wildcard
 * ("user.slice" of "user.slice/user-*.slice"); that directory is watched
 * (inotify: entries created, deleted, moved). A template is scanned again
 * (fs_template_scan) only after an event in its directory, once at the
 * first check after the watch is opened (the config was scanned before the
 * watch existed), every period when its wildcards reach deeper than one
 * level below that directory, or while the directory cannot be watched
 * (missing yet). The scan's
 * signature is compared with the one of the loaded config.
 *
 * Cost in the steady state: one read(2) per period for every template
 * whose wildcards are in its last component.
 */
#ifndef FAIRSHARE_TEMPLATE_WATCH_H
#define FAIRSHARE_TEMPLATE_WATCH_H

#include <stdbool.h>

#include "agent_conf.h"

struct fsd_tmpl_watch;

/* For c's templates (none: *out = NULL, nothing to do). 0 or -errno. */
int fsd_tmpl_watch_open(struct fsd_tmpl_watch **out, const struct fs_conf *c);
void fsd_tmpl_watch_close(struct fsd_tmpl_watch *w);

/*
 * true when some template matches another set of cgroups than when c was
 * loaded (and not the same set a reload already failed on: see
 * fsd_tmpl_watch_failed). c must be the config w was opened for.
 */
bool fsd_tmpl_watch_changed(struct fsd_tmpl_watch *w, const struct fs_conf *c);

/* The reload that fsd_tmpl_watch_changed asked for failed: do not ask again
 * for the same matches (a bad config file is not read every period). */
void fsd_tmpl_watch_failed(struct fsd_tmpl_watch *w);

#endif /* FAIRSHARE_TEMPLATE_WATCH_H */
