/* SPDX-License-Identifier: MIT */
/* Noticing template matches come and go (see template_watch.h). */
#include "template_watch.h"
#include "inotify_drain.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "template.h"

#define TW_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_ONLYDIR)

struct tw_one {
	char dir[PATH_MAX]; /* absolute: root + the glob's fixed part */
	int wd;		    /* -1: not watched (missing): scanned every period */
	bool deep;	    /* wildcards below the first level: scanned every period */
	bool dirty;	    /* an event came: scan */
	uint64_t sig, n;    /* the last scan's */
	uint64_t failed_sig;
	bool failed;
};

struct fsd_tmpl_watch {
	int fd;
	char root[PATH_MAX];
	size_t n;
	struct tw_one *t;
};

static bool has_wild(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	return false;
}

/* The fixed directory part of match, and whether wildcards go deeper than
 * the component right below it. */
static void split(const char *root, const char *match, struct tw_one *t)
{
	const char *p = match, *fixed_end = match;
	int wild_levels = 0;

	while (*p) {
		size_t n = strcspn(p, "/");

		if (has_wild(p, n) || wild_levels)
			wild_levels++;
		else
			fixed_end = p + n;
		p += n;
		if (*p == '/')
			p++;
	}
	/* a glob without a wildcard: its parent is the directory to watch */
	if (wild_levels == 0) {
		const char *slash = strrchr(match, '/');

		fixed_end = slash ? slash : match;
		wild_levels = 1;
	}
	/* too long a path leaves dir cut: its watch fails, and the template is
	 * scanned every period instead */
	if (snprintf(t->dir, sizeof(t->dir), "%s", root) < (int)sizeof(t->dir) &&
	    fixed_end > match) {
		size_t used = strlen(t->dir), n = (size_t)(fixed_end - match);

		if (used + 1 + n < sizeof(t->dir)) {
			t->dir[used] = '/';
			memcpy(t->dir + used + 1, match, n);
			t->dir[used + 1 + n] = '\0';
		} else {
			t->dir[0] = '\0';
		}
	}
	t->deep = wild_levels > 1;
}

int fsd_tmpl_watch_open(struct fsd_tmpl_watch **out, const struct fs_conf *c)
{
	struct fsd_tmpl_watch *w;

	*out = NULL;
	if (c->n_templates == 0)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->t = calloc(c->n_templates, sizeof(*w->t));
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (!w->t || w->fd < 0) {
		int r = w->t ? -errno : -ENOMEM;

		if (w->fd >= 0)
			close(w->fd);
		free(w->t);
		free(w);
		return r;
	}
	snprintf(w->root, sizeof(w->root), "%s", c->agent.cgroup_root);
	w->n = c->n_templates;
	for (size_t i = 0; i < w->n; i++) {
		struct tw_one *t = &w->t[i];

		split(w->root, c->templates[i].match, t);
		t->wd = inotify_add_watch(w->fd, t->dir, TW_MASK);
		t->sig = c->templates[i].sig;
		t->n = c->templates[i].n_matches;
		/* c was scanned before this watch existed: what came or went
		 * in between (during a reload, while dropped tenants were
		 * restored) has no event. One scan at the first check. */
		t->dirty = true;
	}
	*out = w;
	return 0;
}

void fsd_tmpl_watch_close(struct fsd_tmpl_watch *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w->t);
	free(w);
}

static void on_event(void *ctx, const struct inotify_event *ev)
{
	struct fsd_tmpl_watch *w = ctx;

	for (size_t i = 0; i < w->n; i++) {
		struct tw_one *t = &w->t[i];

		if (ev->mask & IN_Q_OVERFLOW)
			t->dirty = true;
		else if (t->wd == ev->wd) {
			t->dirty = true;
			if (ev->mask & (IN_IGNORED | IN_DELETE_SELF))
				t->wd = -1; /* gone: watched again when back */
		}
	}
}

static int add_sig(void *ctx, const char *rel)
{
	struct tw_one *t = ctx;

	t->sig = fs_template_sig(t->sig, rel);
	t->n++;
	return 0;
}

bool fsd_tmpl_watch_changed(struct fsd_tmpl_watch *w, const struct fs_conf *c)
{
	bool changed = false;

	if (!w)
		return false;
	fs_inotify_drain(w->fd, on_event, w);
	for (size_t i = 0; i < w->n && i < c->n_templates; i++) {
		struct tw_one *t = &w->t[i];

		if (t->wd < 0) {
			t->wd = inotify_add_watch(w->fd, t->dir, TW_MASK);
			t->dirty = true;
		}
		if (!t->dirty && !t->deep)
			continue;
		t->dirty = false;
		t->sig = FS_TEMPLATE_SIG_INIT;
		t->n = 0;
		if (fs_template_scan(w->root, c->templates[i].match, add_sig, t) < 0) {
			t->dirty = true; /* out of memory: try again next period */
			continue;
		}
		if (t->sig != c->templates[i].sig && !(t->failed && t->failed_sig == t->sig))
			changed = true;
	}
	return changed;
}

void fsd_tmpl_watch_failed(struct fsd_tmpl_watch *w)
{
	for (size_t i = 0; w && i < w->n; i++) {
		w->t[i].failed = true;
		w->t[i].failed_sig = w->t[i].sig;
	}
}
