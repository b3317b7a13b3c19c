/* SPDX-License-Identifier: MIT */
/*
 * model/backend: the backend of a tenant for every mode and the facts that
 * decide it (systemd running, its root, a loaded unit, delegation by the
 * unit or an ancestor, a bus error).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"

static struct fs_backend_facts unit_facts(void)
{
	struct fs_backend_facts f = {
	    .systemd_booted = true,
	    .systemd_root = true,
	    .bus_error = 0,
	    .type = FS_UNIT_SLICE,
	    .loaded = true,
	    .delegated_by = "",
	};
	return f;
}

static enum fs_backend choose(enum fs_backend_mode m, const struct fs_backend_facts *f,
			      const char *reason_part)
{
	struct fs_backend_choice c;

	fs_backend_choose(m, f, &c);
	if (reason_part && !strstr(c.reason, reason_part))
		fail_msg("reason \"%s\" lacks \"%s\"", c.reason, reason_part);
	return c.backend;
}

static void test_auto(void **state)
{
	struct fs_backend_facts f = unit_facts();

	(void)state;
	assert_int_equal(choose(FS_BACKEND_MODE_AUTO, &f, "unit systemd manages"),
			 FS_BACKEND_SYSTEMD);
	assert_true(fs_backend_ask_systemd(FS_BACKEND_MODE_AUTO, &f));
	f.type = FS_UNIT_NONE;
	assert_int_equal(choose(FS_BACKEND_MODE_AUTO, &f, "not a systemd unit"),
			 FS_BACKEND_CGROUPFS);
	assert_false(fs_backend_ask_systemd(FS_BACKEND_MODE_AUTO, &f));
	f = unit_facts();
	f.systemd_booted = false;
	assert_int_equal(choose(FS_BACKEND_MODE_AUTO, &f, "does not run this host"),
			 FS_BACKEND_CGROUPFS);
	assert_false(fs_backend_ask_systemd(FS_BACKEND_MODE_AUTO, &f));
	f = unit_facts();
	f.systemd_root = false; /* a test tree, or another cgroup2 mount */
	assert_int_equal(choose(FS_BACKEND_MODE_AUTO, &f, "cgroup_root"), FS_BACKEND_CGROUPFS);
	assert_false(fs_backend_ask_systemd(FS_BACKEND_MODE_AUTO, &f));
	f = unit_facts();
	f.bus_error = -ECONNREFUSED;
	assert_int_equal(choose(FS_BACKEND_MODE_AUTO, &f, "did not answer"), FS_BACKEND_CGROUPFS);
	f = unit_facts();
	f.loaded = false;
	assert_int_equal(choose(FS_BACKEND_MODE_AUTO, &f, "no loaded unit"), FS_BACKEND_CGROUPFS);
}

/* Delegate=yes on the unit itself or an ancestor: someone else manages the
 * subtree; systemd will not write it, so neither may fairshare through it. */
static void test_delegation(void **state)
{
	struct fs_backend_facts f = unit_facts();

	(void)state;
	snprintf(f.delegated_by, sizeof(f.delegated_by), "user@1001.service");
	assert_int_equal(choose(FS_BACKEND_MODE_AUTO, &f, "delegated by user@1001.service"),
			 FS_BACKEND_CGROUPFS);
	assert_int_equal(choose(FS_BACKEND_MODE_SYSTEMD, &f, "not written"), FS_BACKEND_NONE);
	/* delegation wins over "not loaded" in the reason: it is the cause */
	f.loaded = false;
	assert_int_equal(choose(FS_BACKEND_MODE_AUTO, &f, "Delegate=yes"), FS_BACKEND_CGROUPFS);
}

static void test_modes(void **state)
{
	struct fs_backend_facts f = unit_facts();

	(void)state;
	assert_int_equal(choose(FS_BACKEND_MODE_CGROUPFS, &f, "backend = cgroupfs"),
			 FS_BACKEND_CGROUPFS);
	assert_false(fs_backend_ask_systemd(FS_BACKEND_MODE_CGROUPFS, &f));
	assert_int_equal(choose(FS_BACKEND_MODE_SYSTEMD, &f, "(systemd)"), FS_BACKEND_SYSTEMD);
	f.systemd_booted = false;
	assert_int_equal(choose(FS_BACKEND_MODE_SYSTEMD, &f, "backend = systemd but systemd"),
			 FS_BACKEND_NONE);
	f = unit_facts();
	f.type = FS_UNIT_NONE;
	assert_int_equal(choose(FS_BACKEND_MODE_SYSTEMD, &f, NULL), FS_BACKEND_NONE);
	assert_string_equal(fs_backend_name(FS_BACKEND_NONE), "none");
	assert_string_equal(fs_backend_mode_name(FS_BACKEND_MODE_AUTO), "auto");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_auto),
	    cmocka_unit_test(test_delegation),
	    cmocka_unit_test(test_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
