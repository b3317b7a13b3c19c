/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
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

char *at_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/fairshare-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(buf));
	return strdup(buf);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path);
	return unlink(path);
}

void at_rmtree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

void at_mkdir(const char *root, const char *rel)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	mkdirs(buf);
}

void at_write(const char *root, const char *rel, const char *text)
{
	char buf[PATH_MAX];
	char *slash;
	FILE *f;

	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	slash = strrchr(buf, '/');
	*slash = '\0';
	mkdirs(buf);
	*slash = '/';
	f = fopen(buf, "w");
	if (!f)
		fail_msg("open %s: %s", buf, strerror(errno));
	fputs(text, f);
	fclose(f);
}

const char *at_read(const char *root, const char *rel)
{
	static char out[65536];
	char buf[PATH_MAX];
	size_t n;
	FILE *f;

	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	f = fopen(buf, "r");
	if (!f)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

void at_symlink(const char *root, const char *rel, const char *target)
{
	char buf[PATH_MAX];
	char *slash;

	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	slash = strrchr(buf, '/');
	*slash = '\0';
	mkdirs(buf);
	*slash = '/';
	if (symlink(target, buf) < 0)
		fail_msg("symlink %s: %s", buf, strerror(errno));
}
