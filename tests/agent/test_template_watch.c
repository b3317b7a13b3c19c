/* SPDX-License-Identifier: MIT */
/*
 * The template watch (agent/daemon/template_watch.c) on a fake cgroup tree:
 * a cgroup made or removed under a template's directory is noticed; one
 * made between the config's scan and the watch's open (during a reload:
 * the restore of dropped tenants runs there, and restoring a stopped
 * unit's properties makes systemd create its cgroup) is noticed at the
 * first check, not at the next unrelated event; no change, no reload.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent_conf.h"
#include "agent_testutil.h"
#include "cgroupfs.h"
#include "template_watch.h"

struct fx {
	char *dir;
	char path[512], cgroot[512], err[1024];
	struct fs_conf_env env;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char text[1024];

	f->dir = at_mkdtemp();
	snprintf(f->path, sizeof(f->path), "%s/fairshare.conf", f->dir);
	snprintf(f->cgroot, sizeof(f->cgroot), "%s/cg", f->dir);
	at_write(f->dir, "cg/cpuset.cpus.effective", "0-3\n");
	at_mkdir(f->dir, "cg/user.slice/user-1001.slice");
	f->env.ncpus_fallback = 4;
	f->env.read_cgroup_root = fs_cgfs_read_root;
	snprintf(text, sizeof(text),
		 "[agent]\ncgroup_root = %s\n[resources]\ncpu = 4\n"
		 "[template.users]\nmatch = user.slice/user-*.slice\n",
		 f->cgroot);
	at_write(f->dir, "fairshare.conf", text);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	at_rmtree(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

static struct fs_conf *load(struct fx *f)
{
	struct fs_conf *c = NULL;

	assert_int_equal(fs_conf_load(f->path, &f->env, &c, f->err, sizeof(f->err)), 0);
	return c;
}

static void test_events(void **state)
{
	struct fx *f = *state;
	struct fs_conf *c = load(f);
	struct fsd_tmpl_watch *w;
	char p[600];

	assert_int_equal(c->n_tenants, 1);
	assert_int_equal(fsd_tmpl_watch_open(&w, c), 0);
	assert_false(fsd_tmpl_watch_changed(w, c)); /* as loaded */
	assert_false(fsd_tmpl_watch_changed(w, c));
	at_mkdir(f->dir, "cg/user.slice/user-1002.slice");
	assert_true(fsd_tmpl_watch_changed(w, c));
	fsd_tmpl_watch_close(w);
	fs_conf_free(c);

	c = load(f); /* the reload */
	assert_int_equal(c->n_tenants, 2);
	assert_int_equal(fsd_tmpl_watch_open(&w, c), 0);
	assert_false(fsd_tmpl_watch_changed(w, c));
	snprintf(p, sizeof(p), "%s/cg/user.slice/user-1002.slice", f->dir);
	at_rmtree(p);
	assert_true(fsd_tmpl_watch_changed(w, c));
	fsd_tmpl_watch_close(w);
	fs_conf_free(c);
}

static void test_made_during_reload(void **state)
{
	struct fx *f = *state;
	struct fs_conf *c = load(f);
	struct fsd_tmpl_watch *w;

	/* after the config's scan, before the watch */
	at_mkdir(f->dir, "cg/user.slice/user-1003.slice");
	assert_int_equal(fsd_tmpl_watch_open(&w, c), 0);
	assert_true(fsd_tmpl_watch_changed(w, c));
	fsd_tmpl_watch_close(w);
	fs_conf_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_events, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_made_during_reload, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
