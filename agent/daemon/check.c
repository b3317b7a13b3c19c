/* SPDX-License-Identifier: MIT */
/* The host checks of a configuration (see check.h). */
#include "check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "daemon.h"

/* The controllers c's resources need, as cgroup.controllers names them. */
static size_t needed_controllers(const struct fs_conf *c, const char **out)
{
	size_t n = 0;

	if (fs_resources_find(&c->res, FS_RES_CPU) >= 0)
		out[n++] = "cpu";
	if (fs_resources_find(&c->res, FS_RES_MEMORY) >= 0)
		out[n++] = "memory";
	if (c->n_disks)
		out[n++] = "io";
	return n;
}

/* Whether the space-separated list has word. */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += len)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[len] == '\0' || p[len] == ' ' || p[len] == '\n'))
			return true;
	return false;
}

/* The words of need[] missing from list, as "cpu io" (empty: none). */
static void missing_words(const char *list, const char **need, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w;

		if (has_word(list, need[i]))
			continue;
		w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", need[i]);
		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
	}
}

static void reportf(fsd_check_report_fn report, void *ctx, const char *tenant, const char *cgroup,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void reportf(fsd_check_report_fn report, void *ctx, const char *tenant, const char *cgroup,
		    const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (report)
		report(ctx, tenant, cgroup, msg);
}

/* The parent of cgroup path rel ("" for a top-level cgroup). */
static void parent_of(const char *rel, char *buf, size_t len)
{
	const char *slash = strrchr(rel, '/');
	size_t n = slash ? (size_t)(slash - rel) : 0;

	snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), rel);
}

unsigned fsd_check_host(const struct fs_conf *c, const struct fs_paths *p, const bool *only,
			fsd_check_report_fn report, void *ctx)
{
	const char *need[3];
	size_t n_need = needed_controllers(c, need);
	struct fs_cgroupfs cg = {-1};
	struct fs_buf buf = {0};
	char miss[64], parent[PATH_MAX], last_parent[PATH_MAX] = "";
	unsigned problems = 0;
	int r, last_r = -ENOENT;

	r = fs_cgfs_open(&cg, p->cgroup_root);
	if (r == 0)
		r = fs_cgfs_read(&cg, "", "cgroup.controllers", &buf);
	if (r < 0) {
		reportf(report, ctx, NULL, NULL,
			"%s is not a cgroup v2 hierarchy (no cgroup.controllers: %s); fairshare "
			"needs the unified hierarchy (systemd.unified_cgroup_hierarchy=1, or "
			"cgroup_root = the cgroup2 mount)",
			p->cgroup_root, strerror(-r));
		problems |= FSD_CHECK_NOT_CGROUP2;
		goto disks;
	}
	missing_words(buf.data, need, n_need, miss, sizeof(miss));
	if (miss[0]) {
		reportf(report, ctx, NULL, NULL,
			"controllers not available on the cgroup v2 hierarchy at %s: %s (they are "
			"bound to a cgroup v1 hierarchy, or not built in)",
			p->cgroup_root, miss);
		problems |= FSD_CHECK_NO_CONTROLLER;
	}
	for (size_t i = 0; i < c->n_tenants; i++) {
		const struct fs_conf_tenant *t = &c->tenants[i];
		int fd;

		if (only && !only[i])
			continue;
		fd = fs_cgfs_open_cgroup(&cg, t->cgroup);
		if (fd < 0) {
			reportf(report, ctx, t->name, t->cgroup,
				"tenant %s: cgroup %s/%s does not exist (%s); it is skipped until "
				"it appears",
				t->name, p->cgroup_root, t->cgroup, strerror(-fd));
			problems |= FSD_CHECK_NO_CGROUP;
			continue;
		}
		close(fd);
		parent_of(t->cgroup, parent, sizeof(parent));
		/* Tenants are mostly siblings (one slice of thousands of scopes):
		 * their parent's file is read once, not once per tenant. */
		if (!last_parent[0] || strcmp(parent, last_parent) != 0) {
			snprintf(last_parent, sizeof(last_parent), "%s", parent);
			last_r = fs_cgfs_read(&cg, parent, "cgroup.subtree_control", &buf);
			if (last_r == 0)
				missing_words(buf.data, need, n_need, miss, sizeof(miss));
		}
		if (last_r < 0)
			continue; /* the root of a v1 mount has none: reported above */
		if (miss[0]) {
			reportf(report, ctx, t->name, t->cgroup,
				"tenant %s: controllers %s not enabled in "
				"%s/%s%scgroup.subtree_control",
				t->name, miss, p->cgroup_root, parent, parent[0] ? "/" : "");
			problems |= FSD_CHECK_NO_CONTROLLER;
		}
	}
disks:
	for (size_t k = 0; k < c->n_disks; k++) {
		char path[PATH_MAX + 64];
		struct stat st;

		snprintf(path, sizeof(path), "%s/dev/block/%u:%u", p->sysfs_root,
			 c->disks[k].dev.major, c->disks[k].dev.minor);
		if (stat(path, &st) == 0)
			continue;
		reportf(report, ctx, NULL, NULL, "disk io.%s (%s, %u:%u) does not exist: no %s",
			c->disks[k].name, c->disks[k].device, c->disks[k].dev.major,
			c->disks[k].dev.minor, path);
		problems |= FSD_CHECK_NO_DISK;
	}
	fs_buf_free(&buf);
	fs_cgfs_close(&cg);
	return problems;
}

int fsd_check_exit_code(unsigned problems)
{
	if (problems & FSD_CHECK_NOT_CGROUP2)
		return FSD_EXIT_NOT_CGROUP2;
	if (problems & FSD_CHECK_NO_CONTROLLER)
		return FSD_EXIT_NO_CONTROLLER;
	if (problems & FSD_CHECK_NO_CGROUP)
		return FSD_EXIT_NO_CGROUP;
	if (problems & FSD_CHECK_NO_DISK)
		return FSD_EXIT_NO_DISK;
	if (problems & FSD_CHECK_NO_BACKEND)
		return FSD_EXIT_NO_BACKEND;
	return FSD_EXIT_OK;
}
