/* SPDX-License-Identifier: MIT */
/*
 * Tenant templates: naming (systemd suffixes, user-UID.slice by login name
 * or UID, characters a tenant name cannot hold), glob matching on a fake
 * cgroup tree (directories only), and [template.NAME] in fairshare.conf:
 * the template's keys, per-name overrides, explicit [tenant.X] winning,
 * name clashes, errors with file:line.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_conf.h"
#include "agent_testutil.h"
#include "cgroupfs.h"
#include "template.h"

static int fake_login(uid_t uid, char *buf, size_t len)
{
	if (uid == 1001)
		snprintf(buf, len, "alice");
	else if (uid == 1003)
		snprintf(buf, len, "j.doe");
	else
		return -ENOENT;
	return 0;
}

static void name_of(const char *cg, const char *want, const char *want_login)
{
	char name[FS_NAME_MAX], login[FS_LOGIN_MAX];

	assert_int_equal(fs_template_name(cg, fake_login, name, sizeof(name), login, sizeof(login)),
			 0);
	assert_string_equal(name, want);
	assert_string_equal(login, want_login);
}

static void test_naming(void **state)
{
	char name[FS_NAME_MAX], login[FS_LOGIN_MAX];

	(void)state;
	name_of("user.slice/user-1001.slice", "alice", "alice");
	name_of("user.slice/user-1002.slice", "1002", ""); /* no such user: the UID */
	name_of("user.slice/user-1003.slice", "j_doe", "j.doe");
	name_of("system.slice/docker-0123abcd.scope", "docker-0123abcd", "");
	name_of("machine.slice/machine-qemu\\x2d1\\x2dvm1.scope", "machine-qemu_x2d1_x2dvm1", "");
	name_of("system.slice/gitlab-runner@7.service", "gitlab-runner_7", "");
	name_of("ci/job42", "job42", "");
	name_of("user.slice/user-.slice", "user-", ""); /* not a UID */
	name_of("user.slice/user-12a.slice", "user-12a", "");
	/* the real getpwuid_r: uid 0 is root everywhere */
	assert_int_equal(fs_template_name("user.slice/user-0.slice", NULL, name, sizeof(name),
					  login, sizeof(login)),
			 0);
	assert_string_equal(name, "root");
	name_of("x/.slice", "_slice", ""); /* nothing before the suffix: kept whole */
	assert_int_equal(fs_template_name("", fake_login, name, sizeof(name), login, sizeof(login)),
			 -EINVAL);
	/* cut to FS_NAME_MAX - 1 */
	{
		char cg[200];

		memset(cg, 'a', 150);
		strcpy(cg + 150, ".scope");
		assert_int_equal(
		    fs_template_name(cg, fake_login, name, sizeof(name), login, sizeof(login)), 0);
		assert_int_equal(strlen(name), FS_NAME_MAX - 1);
	}
}

static int collect(void *ctx, const char *rel)
{
	char *out = ctx;

	strcat(out, rel);
	strcat(out, ";");
	return 0;
}

static void test_matching(void **state)
{
	char *dir = at_mkdtemp(), got[1024] = "";

	(void)state;
	at_mkdir(dir, "user.slice/user-1002.slice");
	at_mkdir(dir, "user.slice/user-1001.slice/session-3.scope");
	at_mkdir(dir, "user.slice/other.slice");
	at_write(dir, "user.slice/user-9.slice", "a file, not a cgroup\n");
	at_mkdir(dir, "system.slice/docker-ab.scope");
	assert_int_equal(fs_template_scan(dir, "user.slice/user-*.slice", collect, got), 0);
	assert_string_equal(got, "user.slice/user-1001.slice;user.slice/user-1002.slice;");
	got[0] = '\0';
	assert_int_equal(fs_template_scan(dir, "*.slice/docker-*.scope", collect, got), 0);
	assert_string_equal(got, "system.slice/docker-ab.scope;");
	got[0] = '\0';
	assert_int_equal(fs_template_scan(dir, "nothing/*", collect, got), 0);
	assert_string_equal(got, "");
	assert_true(fs_template_match_ok("user.slice/user-*.slice"));
	assert_false(fs_template_match_ok("/user.slice"));
	assert_false(fs_template_match_ok("user.slice/../x"));
	assert_false(fs_template_match_ok("a//b"));
	assert_false(fs_template_match_ok("a/"));
	assert_false(fs_template_match_ok(""));
	at_rmtree(dir);
	free(dir);
}

struct fx {
	char *dir;
	char path[512], cgroot[512], err[1024];
	struct fs_conf_env env;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->dir = at_mkdtemp();
	snprintf(f->path, sizeof(f->path), "%s/fairshare.conf", f->dir);
	snprintf(f->cgroot, sizeof(f->cgroot), "%s/cg", f->dir);
	at_write(f->dir, "cg/cpuset.cpus.effective", "0-3\n");
	at_mkdir(f->dir, "cg/user.slice/user-0.slice");
	at_mkdir(f->dir, "cg/user.slice/user-4000000000.slice");
	at_mkdir(f->dir, "cg/user.slice/user-4000000001.slice");
	at_mkdir(f->dir, "cg/system.slice/docker-ab.scope");
	at_mkdir(f->dir, "cg/system.slice/root.service");
	f->env.ncpus_fallback = 4;
	f->env.read_cgroup_root = fs_cgfs_read_root;
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

static int load(struct fx *f, const char *body, struct fs_conf **c)
{
	char text[4096];

	snprintf(text, sizeof(text), "[agent]\ncgroup_root = %s\n[resources]\ncpu = 4\n%s",
		 f->cgroot, body);
	at_write(f->dir, "fairshare.conf", text);
	return fs_conf_load(f->path, &f->env, c, f->err, sizeof(f->err));
}

static const struct fs_conf_tenant *find(const struct fs_conf *c, const char *name)
{
	for (size_t i = 0; i < c->n_tenants; i++)
		if (!strcmp(c->tenants[i].name, name))
			return &c->tenants[i];
	return NULL;
}

static void test_conf_templates(void **state)
{
	struct fx *f = *state;
	const struct fs_conf_tenant *t;
	struct fs_conf *c = NULL;

	/* lines:    5                 6                              7
	 *           8                 9                              10 */
	if (load(f,
		 "[template.users]\n"
		 "match = user.slice/user-*.slice\n"
		 "weight = 2\n"
		 "weight.4000000001 = 5\n"
		 "max.root = cpu=1\n"
		 "[template.ci]\n"
		 "match = system.slice/*\n"
		 "[tenant.root]\n"
		 "cgroup = system.slice/root.service\n"
		 "weight = 7\n",
		 &c) < 0)
		fail_msg("%s", f->err);
	/* explicit root, then users (uid 0 is "root": taken -> root-users),
	 * 4000000000, 4000000001, then ci's docker-ab (root.service is the
	 * explicit tenant's) */
	assert_int_equal(c->n_tenants, 5);
	assert_int_equal(c->n_templates, 2);
	assert_string_equal(c->templates[0].match, "user.slice/user-*.slice");
	assert_string_equal(c->templates[0].name, "users");
	assert_int_equal(c->templates[0].n_matches, 3);
	assert_int_equal(c->templates[1].n_matches, 2); /* root.service too */
	t = find(c, "root");
	assert_non_null(t);
	assert_string_equal(t->cgroup, "system.slice/root.service");
	assert_string_equal(t->template_name, "");
	assert_true(t->weight == 7);
	t = find(c, "root-users");
	assert_non_null(t);
	assert_string_equal(t->cgroup, "user.slice/user-0.slice");
	assert_string_equal(t->template_name, "users");
	assert_string_equal(t->login, "root");
	assert_true(t->weight == 2);
	assert_true(isnan(t->max[0])); /* max.root is for the tenant named root */
	t = find(c, "4000000000");
	assert_non_null(t);
	assert_true(t->weight == 2);
	assert_string_equal(t->login, "");
	t = find(c, "4000000001");
	assert_non_null(t);
	assert_true(t->weight == 5); /* its override */
	t = find(c, "docker-ab");
	assert_non_null(t);
	assert_string_equal(t->template_name, "ci");
	assert_true(t->weight == 1);
	fs_conf_free(c);

	/* Templates alone, matching nothing: a valid config without tenants. */
	assert_int_equal(load(f, "[template.vms]\nmatch = machine.slice/*.scope\n", &c), 0);
	assert_int_equal(c->n_tenants, 0);
	fs_conf_free(c);
}

static void expect_error(struct fx *f, const char *body, int line, const char *msg)
{
	struct fs_conf *c = NULL;
	char want[1024];

	assert_true(load(f, body, &c) < 0);
	assert_null(c);
	snprintf(want, sizeof(want), "%s:%d: %s", f->path, line, msg);
	assert_string_equal(f->err, want);
}

static void test_conf_errors(void **state)
{
	struct fx *f = *state;

	expect_error(f, "[template.x]\nweight = 1\n", 5, "[template.x] has no match");
	expect_error(f, "[template.x]\nmatch = /user.slice/*\n", 6,
		     "bad match '/user.slice/*' (a glob below cgroup_root, without '.' or '..')");
	expect_error(f, "[template.x]\nmatch = *\ncolour = red\n", 7,
		     "unknown key 'colour' in [template.x] (match, weight, demand, min, max, or "
		     "KEY.TENANT)");
	expect_error(f, "[template.x]\nmatch = *\n[template.x]\nmatch = *\n", 7,
		     "duplicate section [template.x] (first on line 5)");
	expect_error(f, "[template.x]\nmatch = *\nweight.a = 1\nweight.a = 2\n", 8,
		     "duplicate key 'weight.a' (first set on line 7)");
	expect_error(f, "[template.x]\nmatch = user.slice/*\nweight = -1\n", 7,
		     "bad weight '-1' (a number from 1e-06 to 1e+06)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_naming),
	    cmocka_unit_test(test_matching),
	    cmocka_unit_test_setup_teardown(test_conf_templates, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_conf_errors, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
