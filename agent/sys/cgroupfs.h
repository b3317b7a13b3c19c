/* SPDX-License-Identifier: MIT */
/*
 * All access to cgroup files goes through here. Every path is relative to a
 * root directory given by the caller (the real /sys/fs/cgroup, a cgroup2 mount
 * in the test VM, or a fake tree in a temporary directory).
 *
 * Confinement: a cgroup path must be relative, without "." or ".."
 * components, and is walked one component at a time with O_NOFOLLOW, so no
 * symlink (anywhere in the path, including the file itself) can lead outside
 * the root.
 */
#ifndef FAIRSHARE_CGROUPFS_H
#define FAIRSHARE_CGROUPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct fs_cgroupfs {
	int root_fd; /* O_PATH|O_DIRECTORY fd of the root, -1 when closed */
};

/* A growable read buffer; reuse it across reads to avoid reallocations. */
struct fs_buf {
	char *data; /* NUL-terminated after a successful read */
	size_t len; /* bytes read, excluding the NUL */
	size_t cap; /* allocated bytes */
};

void fs_buf_free(struct fs_buf *b);

/* 0 or -errno (the root must be a directory; symlinks to it are followed). */
int fs_cgfs_open(struct fs_cgroupfs *cg, const char *root);
void fs_cgfs_close(struct fs_cgroupfs *cg);

/*
 * 0 when rel is an acceptable cgroup path ("a", "a/b.slice"), -EINVAL for
 * absolute paths, "." or ".." components, empty components, "" (the root).
 */
int fs_cgfs_check_path(const char *rel);

/*
 * Opens the directory of cgroup rel (O_DIRECTORY|O_CLOEXEC, no symlinks).
 * Returns an fd >= 0 or -errno: -ENOENT when the cgroup is gone, -ELOOP or
 * -ENOTDIR when a component is a symlink or not a directory, -EINVAL for a
 * bad path.
 */
int fs_cgfs_open_cgroup(const struct fs_cgroupfs *cg, const char *rel);

/*
 * Reads all of <rel>/<file> into b (NUL-terminated). rel "" means the root
 * directory itself (reading only, e.g. cpuset.cpus.effective). 0 or -errno.
 */
int fs_cgfs_read(const struct fs_cgroupfs *cg, const char *rel, const char *file, struct fs_buf *b);

/*
 * One file of the cgroup root directory root into buf (NUL-terminated,
 * truncated to len): what the config reads for cpu = auto
 * (fs_conf_env.read_cgroup_root). 0 or -errno.
 */
int fs_cgfs_read_root(const char *root, const char *file, char *buf, size_t len);

/* Reads a file relative to an already opened cgroup directory fd. */
int fs_cgfs_read_at(int dirfd, const char *file, struct fs_buf *b);

/*
 * Opens <dirfd>/<file> for reading again and again with fs_cgfs_pread()
 * (O_RDONLY|O_CLOEXEC|O_NOFOLLOW; file is one name: no '/', "." or "..").
 * dirfd comes from fs_cgfs_open_cgroup(). An fd >= 0 or -errno (-ENOENT:
 * no such file, e.g. controller not enabled or no PSI).
 */
int fs_cgfs_open_file_at(int dirfd, const char *file);

/*
 * Reads the whole file behind fd into b (NUL-terminated) with pread(2) from
 * offset 0, so one fd serves every period: on cgroupfs a read at offset 0
 * makes the kernel generate the text afresh (seq_file restarts), on a
 * regular file (the tests' fake trees) it sees the current contents. 0 or
 * -errno; -ENODEV once the cgroup (or the file, when its controller was
 * disabled) was removed from cgroupfs.
 */
int fs_cgfs_pread(int fd, struct fs_buf *b);

/*
 * fstatat(2) of cgroup rel without opening it (one syscall), to tell whether
 * the directory at rel is still the one an fd was opened on (st_dev, st_ino).
 * Only for that comparison: unlike fs_cgfs_open_cgroup() it follows symlinks
 * in the leading components (not the last), so it must never be used to
 * decide what to read or write. 0 or -errno (-ENOENT when the cgroup is gone).
 */
int fs_cgfs_stat_cgroup(const struct fs_cgroupfs *cg, const char *rel, struct stat *st);

/*
 * Writes value to <rel>/<file> in one write(2) (cgroup files need that),
 * without O_CREAT. 0 or -errno (the kernel's errno from write, e.g. -EINVAL).
 */
int fs_cgfs_write(const struct fs_cgroupfs *cg, const char *rel, const char *file,
		  const char *value);

/* Same, relative to an already opened cgroup directory fd. */
int fs_cgfs_write_at(int dirfd, const char *file, const char *value);

/*
 * Opens <dirfd>/<file> for writing again and again with fs_cgfs_pwrite()
 * (O_WRONLY|O_CLOEXEC|O_NOFOLLOW, no O_TRUNC; file is one name). An fd >= 0
 * or -errno.
 */
int fs_cgfs_open_file_w(int dirfd, const char *file);

/*
 * Writes value through an fd from fs_cgfs_open_file_w() in one pwrite(2) at
 * offset 0: a cgroupfs write ignores the offset and replaces the value, so
 * one fd serves every period. A regular file (the tests' fake trees) is cut
 * to the value's length as well (truncate), as O_TRUNC did. 0 or -errno
 * (-ENODEV once the file was removed from cgroupfs with its cgroup or
 * controller).
 */
int fs_cgfs_pwrite(int fd, const char *value, bool truncate);

/* Whether fd is on a cgroup2 filesystem (not a fake tree). */
bool fs_cgfs_is_cgroup2(int fd);

#endif /* FAIRSHARE_CGROUPFS_H */
