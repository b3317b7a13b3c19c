/* SPDX-License-Identifier: MIT */
/*
 * The writer's change watch (drift_watch.h) on regular files: each write
 * reports its watch's key, removed watches report nothing (the wd -> key
 * table stays right through removals and growth), a deleted file reports
 * FS_DW_GONE once, and a second key on one inode is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "drift_watch.h"

#define N 300

struct seen {
	unsigned modified[N], gone[N], other;
};

static void on_event(void *ctx, uint32_t key, enum fs_dw_event ev)
{
	struct seen *s = ctx;

	if (key >= N)
		s->other++;
	else if (ev == FS_DW_GONE)
		s->gone[key]++;
	else
		s->modified[key]++;
}

static void test_keys_through_removals(void **state)
{
	char *dir = at_mkdtemp(), name[32];
	struct fs_drift_watch *dw;
	static struct seen s;
	int wd[N], dirfd;

	(void)state;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	assert_int_equal(fs_dw_open(&dw), 0);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		at_write(dir, name, "0\n");
		wd[i] = fs_dw_add(dw, dirfd, name, (uint32_t)i);
		assert_true(wd[i] >= 0);
	}
	assert_int_equal(fs_dw_count(dw), N);
	/* the same inode again: its key, or -EEXIST for another key */
	assert_int_equal(fs_dw_add(dw, dirfd, "f005", 5), wd[5]);
	assert_int_equal(fs_dw_add(dw, dirfd, "f005", 6), -EEXIST);
	assert_int_equal(fs_dw_add(dw, dirfd, "missing", 7), -ENOENT);
	for (int i = 0; i < N; i += 3)
		fs_dw_remove(dw, wd[i]);
	assert_int_equal(fs_dw_count(dw), N - N / 3);
	memset(&s, 0, sizeof(s));
	assert_int_equal(fs_dw_poll(dw, on_event, &s), 0); /* the IN_IGNOREDs */
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%03d", i);
		at_write(dir, name, "1\n");
	}
	assert_int_equal(fs_dw_poll(dw, on_event, &s), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(s.modified[i], i % 3 ? 1 : 0);
		assert_int_equal(s.gone[i], 0);
	}
	assert_int_equal(s.other, 0);
	/* nothing more queued */
	memset(&s, 0, sizeof(s));
	assert_int_equal(fs_dw_poll(dw, on_event, &s), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(s.modified[i] + s.gone[i], 0);

	/* a deleted file: gone, once, and its watch is dropped */
	snprintf(name, sizeof(name), "%s/f001", dir);
	assert_int_equal(unlink(name), 0);
	assert_int_equal(fs_dw_poll(dw, on_event, &s), 0);
	assert_int_equal(s.gone[1], 1);
	assert_int_equal(fs_dw_count(dw), N - N / 3 - 1);
	fs_dw_close(dw);
	close(dirfd);
	at_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys_through_removals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
