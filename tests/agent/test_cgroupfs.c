/* SPDX-License-Identifier: MIT */
/* agent/cgroupfs.c: path checks, confinement (no "..", no symlinks), reads
 * of any size, writes, files kept open and read again with pread, the
 * identity check of a cgroup directory. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "cgroupfs.h"

static int setup(void **state)
{
	*state = at_mkdtemp();
	return 0;
}

static int teardown(void **state)
{
	at_rmtree(*state);
	free(*state);
	return 0;
}

static void test_check_path(void **state)
{
	(void)state;
	assert_int_equal(fs_cgfs_check_path("a"), 0);
	assert_int_equal(fs_cgfs_check_path("system.slice/foo.service"), 0);
	assert_int_equal(fs_cgfs_check_path("a/..b/c.."), 0);
	assert_int_equal(fs_cgfs_check_path(""), -EINVAL);
	assert_int_equal(fs_cgfs_check_path("/a"), -EINVAL);
	assert_int_equal(fs_cgfs_check_path("a/"), -EINVAL);
	assert_int_equal(fs_cgfs_check_path("a//b"), -EINVAL);
	assert_int_equal(fs_cgfs_check_path(".."), -EINVAL);
	assert_int_equal(fs_cgfs_check_path("a/../b"), -EINVAL);
	assert_int_equal(fs_cgfs_check_path("a/./b"), -EINVAL);
	assert_int_equal(fs_cgfs_check_path("a/.."), -EINVAL);
}

static void test_read_write(void **state)
{
	const char *dir = *state;
	struct fs_cgroupfs cg;
	struct fs_buf b = {0};
	char big[20000];

	at_write(dir, "root/a/b/cpu.max", "max 100000\n");
	at_write(dir, "root/cpuset.cpus.effective", "0-1\n");
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	at_write(dir, "root/a/io.stat", big);
	{
		char root[512];

		snprintf(root, sizeof(root), "%s/root", dir);
		assert_int_equal(fs_cgfs_open(&cg, root), 0);
	}
	assert_int_equal(fs_cgfs_read(&cg, "a/b", "cpu.max", &b), 0);
	assert_string_equal(b.data, "max 100000\n");
	assert_int_equal(b.len, 11);
	assert_int_equal(fs_cgfs_read(&cg, "", "cpuset.cpus.effective", &b), 0);
	assert_string_equal(b.data, "0-1\n");
	/* Larger than the first buffer: grows, whole file read. */
	assert_int_equal(fs_cgfs_read(&cg, "a", "io.stat", &b), 0);
	assert_int_equal(b.len, sizeof(big) - 1);
	assert_string_equal(b.data, big);

	assert_int_equal(fs_cgfs_write(&cg, "a/b", "cpu.max", "50000 100000"), 0);
	assert_string_equal(at_read(dir, "root/a/b/cpu.max"), "50000 100000");
	/* Never creates files; a missing cgroup is ENOENT. */
	assert_int_equal(fs_cgfs_write(&cg, "a/b", "memory.max", "1"), -ENOENT);
	assert_null(at_read(dir, "root/a/b/memory.max"));
	assert_int_equal(fs_cgfs_read(&cg, "gone", "cpu.max", &b), -ENOENT);
	/* Bad names. */
	assert_int_equal(fs_cgfs_write(&cg, "a/../a/b", "cpu.max", "1"), -EINVAL);
	assert_int_equal(fs_cgfs_write(&cg, "", "cpu.max", "1"), -EINVAL);
	assert_int_equal(fs_cgfs_write(&cg, "a", "b/cpu.max", "1"), -EINVAL);
	assert_int_equal(fs_cgfs_read(&cg, "a", "..", &b), -EINVAL);
	fs_buf_free(&b);
	fs_cgfs_close(&cg);
}

static void test_symlinks_refused(void **state)
{
	const char *dir = *state;
	struct fs_cgroupfs cg;
	struct fs_buf b = {0};
	char root[512], outside[512];

	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	at_write(dir, "outside/cpu.max", "max 100000\n");
	at_write(dir, "root/a/placeholder", "");
	at_symlink(root, "link", outside);			/* directory symlink */
	at_symlink(root, "a/cpu.max", "../../outside/cpu.max"); /* file symlink */
	assert_int_equal(fs_cgfs_open(&cg, root), 0);

	assert_true(fs_cgfs_open_cgroup(&cg, "link") < 0);
	assert_true(fs_cgfs_write(&cg, "link", "cpu.max", "1 100000") < 0);
	assert_true(fs_cgfs_write(&cg, "a", "cpu.max", "1 100000") < 0);
	assert_true(fs_cgfs_read(&cg, "a", "cpu.max", &b) < 0);
	assert_string_equal(at_read(dir, "outside/cpu.max"), "max 100000\n");
	fs_buf_free(&b);
	fs_cgfs_close(&cg);
}

static void test_pread_again(void **state)
{
	const char *dir = *state;
	struct fs_cgroupfs cg;
	struct fs_buf b = {0};
	char root[512], big[10000];
	int dirfd, fd;

	snprintf(root, sizeof(root), "%s/root", dir);
	at_write(dir, "root/a/cpu.stat", "usage_usec 123456\nuser_usec 1\n");
	at_symlink(root, "a/io.stat", "cpu.stat");
	assert_int_equal(fs_cgfs_open(&cg, root), 0);
	dirfd = fs_cgfs_open_cgroup(&cg, "a");
	assert_true(dirfd >= 0);

	fd = fs_cgfs_open_file_at(dirfd, "cpu.stat");
	assert_true(fd >= 0);
	assert_int_equal(fs_cgfs_pread(fd, &b), 0);
	assert_string_equal(b.data, "usage_usec 123456\nuser_usec 1\n");
	/* Again, after a shorter rewrite in place: from offset 0, no old tail. */
	at_write(dir, "root/a/cpu.stat", "usage_usec 7\n");
	assert_int_equal(fs_cgfs_pread(fd, &b), 0);
	assert_string_equal(b.data, "usage_usec 7\n");
	assert_int_equal(b.len, 13);
	/* Larger than the buffer so far, then empty. */
	memset(big, 'y', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	at_write(dir, "root/a/cpu.stat", big);
	assert_int_equal(fs_cgfs_pread(fd, &b), 0);
	assert_int_equal(b.len, sizeof(big) - 1);
	assert_string_equal(b.data, big);
	at_write(dir, "root/a/cpu.stat", "");
	assert_int_equal(fs_cgfs_pread(fd, &b), 0);
	assert_int_equal(b.len, 0);
	assert_string_equal(b.data, "");
	close(fd);

	/* Same confinement as fs_cgfs_read_at. */
	assert_int_equal(fs_cgfs_open_file_at(dirfd, "memory.stat"), -ENOENT);
	assert_true(fs_cgfs_open_file_at(dirfd, "io.stat") < 0); /* symlink */
	assert_int_equal(fs_cgfs_open_file_at(dirfd, "../a/cpu.stat"), -EINVAL);
	assert_int_equal(fs_cgfs_open_file_at(dirfd, ".."), -EINVAL);
	assert_int_equal(fs_cgfs_open_file_at(dirfd, ""), -EINVAL);
	assert_int_equal(fs_cgfs_pread(-1, &b), -EBADF);
	close(dirfd);
	fs_buf_free(&b);
	fs_cgfs_close(&cg);
}

static void test_stat_cgroup(void **state)
{
	const char *dir = *state;
	struct fs_cgroupfs cg;
	struct stat fst, st;
	char root[512], from[600], to[600];
	int dirfd;

	snprintf(root, sizeof(root), "%s/root", dir);
	at_write(dir, "root/a/b/cpu.stat", "");
	assert_int_equal(fs_cgfs_open(&cg, root), 0);
	dirfd = fs_cgfs_open_cgroup(&cg, "a/b");
	assert_true(dirfd >= 0);
	assert_int_equal(fstat(dirfd, &fst), 0);
	assert_int_equal(fs_cgfs_stat_cgroup(&cg, "a/b", &st), 0);
	assert_true(st.st_dev == fst.st_dev && st.st_ino == fst.st_ino);
	/* Replaced: another inode at the path; gone: ENOENT. */
	snprintf(from, sizeof(from), "%s/a/b", root);
	snprintf(to, sizeof(to), "%s/a/old", root);
	assert_int_equal(rename(from, to), 0);
	assert_int_equal(fs_cgfs_stat_cgroup(&cg, "a/b", &st), -ENOENT);
	at_mkdir(root, "a/b");
	assert_int_equal(fs_cgfs_stat_cgroup(&cg, "a/b", &st), 0);
	assert_true(st.st_ino != fst.st_ino);
	/* A symlink at the path is not the directory (last component not followed). */
	at_rmtree(from);
	at_symlink(root, "a/b", to);
	assert_int_equal(fs_cgfs_stat_cgroup(&cg, "a/b", &st), 0);
	assert_false(S_ISDIR(st.st_mode));
	assert_int_equal(fs_cgfs_stat_cgroup(&cg, "a/../a/b", &st), -EINVAL);
	assert_int_equal(fs_cgfs_stat_cgroup(&cg, "/a", &st), -EINVAL);
	close(dirfd);
	fs_cgfs_close(&cg);
	assert_int_equal(fs_cgfs_stat_cgroup(&cg, "a/b", &st), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check_path),
	    cmocka_unit_test_setup_teardown(test_read_write, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_symlinks_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pread_again, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stat_cgroup, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
