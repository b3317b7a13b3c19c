/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroupfs.h"

void fs_buf_free(struct fs_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int fs_cgfs_open(struct fs_cgroupfs *cg, const char *root)
{
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

	cg->root_fd = -1;
	if (fd < 0)
		return -errno;
	cg->root_fd = fd;
	return 0;
}

void fs_cgfs_close(struct fs_cgroupfs *cg)
{
	if (cg->root_fd >= 0)
		close(cg->root_fd);
	cg->root_fd = -1;
}

int fs_cgfs_check_path(const char *rel)
{
	const char *p = rel;

	if (!rel || *rel == '\0' || *rel == '/')
		return -EINVAL;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (!end)
			break;
		p = end + 1;
		if (*p == '\0') /* trailing '/' */
			return -EINVAL;
	}
	return 0;
}

/*
 * openat2(2) (Linux 5.6) resolves rel in one syscall with the walk's
 * confinement: RESOLVE_NO_SYMLINKS fails with ELOOP on a symlink anywhere in
 * the path, RESOLVE_BENEATH refuses to leave root_fd. The walk below costs a
 * syscall per component plus a close per intermediate directory (3 instead
 * of 1 for "a.slice/b.scope"), and the writer opens every tenant it writes
 * each period. Where openat2 is missing (ENOSYS) or filtered out by a
 * seccomp policy (EPERM, SystemCallErrorNumber=), the walk is used from then
 * on (fairshared is single-threaded: a plain flag).
 */
static bool openat2_unavailable;

/* An fd, -errno, or -ENOSYS when openat2 cannot be used (walk instead). */
static int open_beneath(int root_fd, const char *rel)
{
	struct open_how how = {
	    .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = -1;

	if (openat2_unavailable)
		return -ENOSYS;
	/* EAGAIN: a rename or mount raced with RESOLVE_BENEATH; retried a few
	 * times, then this one call walks */
	for (int tries = 0; tries < 8; tries++) {
		fd = syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != EINTR && errno != EAGAIN)
			break;
	}
	if (fd < 0 && errno == EAGAIN)
		return -ENOSYS;
	if (errno == ENOSYS || errno == EPERM || errno == E2BIG) {
		openat2_unavailable = true;
		return -ENOSYS;
	}
	return -errno;
}

/*
 * Without openat2: walks rel one component at a time with O_NOFOLLOW: a
 * symlink anywhere fails with ELOOP/ENOTDIR instead of leading out of the
 * root. Together with the ".." ban this keeps every access beneath root_fd.
 */
int fs_cgfs_open_cgroup(const struct fs_cgroupfs *cg, const char *rel)
{
	char comp[256];
	const char *p = rel;
	int dirfd, r;

	if (cg->root_fd < 0)
		return -EBADF;
	if (*rel == '\0') {
		dirfd = openat(cg->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return dirfd < 0 ? -errno : dirfd;
	}
	r = fs_cgfs_check_path(rel);
	if (r < 0)
		return r;
	r = open_beneath(cg->root_fd, rel);
	if (r != -ENOSYS)
		return r;
	dirfd = cg->root_fd;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int next;

		if (n >= sizeof(comp)) {
			r = -ENAMETOOLONG;
			goto out;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		next = openat(dirfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			r = -errno;
			goto out;
		}
		if (dirfd != cg->root_fd)
			close(dirfd);
		dirfd = next;
		p += n;
		if (*p == '/')
			p++;
	}
	return dirfd;
out:
	if (dirfd != cg->root_fd)
		close(dirfd);
	return r;
}

static int check_file_name(const char *file)
{
	if (!file || *file == '\0' || strchr(file, '/') || strcmp(file, ".") == 0 ||
	    strcmp(file, "..") == 0)
		return -EINVAL;
	return 0;
}

/* file (one name, no path) in dirfd, never through a symlink. */
static int open_name(int dirfd, const char *file, int flags)
{
	int fd, r;

	r = check_file_name(file);
	if (r < 0)
		return r;
	fd = openat(dirfd, file, flags | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * O_NOATIME: a read need not stamp the file. On cgroupfs relatime already
 * skips it (kernfs never moves a stat file's mtime), but a fake tree's file
 * rewritten every period had its atime written on every read, a tenth of a
 * pread there (measured, issue 19). Only the owner or CAP_FOWNER may ask
 * for it: anyone else opens as before.
 */
int fs_cgfs_open_file_at(int dirfd, const char *file)
{
	int fd = open_name(dirfd, file, O_RDONLY | O_NOATIME);

	return fd == -EPERM ? open_name(dirfd, file, O_RDONLY) : fd;
}

/*
 * A read shorter than asked is the end of the file: a regular file returns
 * less only at its end, and a cgroupfs (kernfs seq_file) read fills the
 * buffer with records until the last one. That saves the pread that would
 * return 0, one syscall per file per period.
 */
int fs_cgfs_pread(int fd, struct fs_buf *b)
{
	b->len = 0;
	for (;;) {
		size_t want;
		ssize_t n;

		if (b->cap - b->len < 2) {
			size_t cap = b->cap ? b->cap * 2 : 4096;
			char *d = realloc(b->data, cap);

			if (!d)
				return -ENOMEM;
			b->data = d;
			b->cap = cap;
		}
		want = b->cap - b->len - 1;
		n = pread(fd, b->data + b->len, want, (off_t)b->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b->len += (size_t)n;
		if ((size_t)n < want)
			break;
	}
	b->data[b->len] = '\0';
	return 0;
}

int fs_cgfs_read_at(int dirfd, const char *file, struct fs_buf *b)
{
	int fd = fs_cgfs_open_file_at(dirfd, file);
	int r;

	if (fd < 0)
		return fd;
	r = fs_cgfs_pread(fd, b);
	close(fd);
	return r;
}

int fs_cgfs_read(const struct fs_cgroupfs *cg, const char *rel, const char *file, struct fs_buf *b)
{
	int dirfd = fs_cgfs_open_cgroup(cg, rel);
	int r;

	if (dirfd < 0)
		return dirfd;
	r = fs_cgfs_read_at(dirfd, file, b);
	close(dirfd);
	return r;
}

int fs_cgfs_stat_cgroup(const struct fs_cgroupfs *cg, const char *rel, struct stat *st)
{
	int r;

	if (cg->root_fd < 0)
		return -EBADF;
	r = fs_cgfs_check_path(rel);
	if (r < 0)
		return r;
	return fstatat(cg->root_fd, rel, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int fs_cgfs_write_at(int dirfd, const char *file, const char *value)
{
	size_t len = strlen(value);
	ssize_t n;
	int fd, r;

	r = check_file_name(file);
	if (r < 0)
		return r;
	/* O_TRUNC for the fake trees of the tests; cgroupfs ignores it. */
	fd = openat(dirfd, file, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_TRUNC);
	if (fd < 0)
		return -errno;
	do {
		n = write(fd, value, len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	else
		r = 0;
	close(fd);
	return r;
}

int fs_cgfs_open_file_w(int dirfd, const char *file)
{
	return open_name(dirfd, file, O_WRONLY);
}

int fs_cgfs_pwrite(int fd, const char *value, bool truncate)
{
	size_t len = strlen(value);
	ssize_t n;

	do {
		n = pwrite(fd, value, len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	if (truncate && ftruncate(fd, (off_t)len) < 0)
		return -errno;
	return 0;
}

bool fs_cgfs_is_cgroup2(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

int fs_cgfs_write(const struct fs_cgroupfs *cg, const char *rel, const char *file,
		  const char *value)
{
	int dirfd, r;

	r = fs_cgfs_check_path(rel);
	if (r < 0)
		return r;
	dirfd = fs_cgfs_open_cgroup(cg, rel);
	if (dirfd < 0)
		return dirfd;
	r = fs_cgfs_write_at(dirfd, file, value);
	close(dirfd);
	return r;
}

int fs_cgfs_read_root(const char *root, const char *file, char *buf, size_t len)
{
	struct fs_cgroupfs cg = {.root_fd = -1};
	struct fs_buf b = {0};
	int r = fs_cgfs_open(&cg, root);

	if (r == 0)
		r = fs_cgfs_read(&cg, "", file, &b);
	if (r == 0)
		snprintf(buf, len, "%s", b.data);
	fs_buf_free(&b);
	fs_cgfs_close(&cg);
	return r;
}
