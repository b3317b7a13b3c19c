/* SPDX-License-Identifier: MIT */
/* What a disk delivers (see calibrate.h). */
#include "calibrate.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALIB_BLOCK (1u << 20) /* bytes per O_DIRECT request */
#define CALIB_ALIGN 4096       /* O_DIRECT buffer alignment */

void calib_result_init(struct calib_result *r)
{
	r->read_bps = r->write_bps = r->read_iops = NAN;
	r->fio = false;
}

int calib_parse_fio_terse(const char *line, double *read_bps, double *read_iops, double *write_bps,
			  double *write_iops)
{
	/* 1-based fields of terse version 3 (fio's HOWTO, "Terse output"):
	 * 7 read bandwidth KiB/s, 8 read IOPS, 48 write bandwidth KiB/s,
	 * 49 write IOPS. */
	enum { RD_BW = 7, RD_IOPS = 8, WR_BW = 48, WR_IOPS = 49 };
	double v[WR_IOPS + 1] = {0};
	const char *p = line;
	int field = 1;

	if (strncmp(line, "3;", 2) != 0)
		return -EINVAL;
	while (field <= WR_IOPS && p) {
		char *end;

		v[field] = strtod(p, &end);
		p = strchr(p, ';');
		if (p)
			p++;
		field++;
	}
	if (field <= WR_IOPS)
		return -EINVAL;
	*read_bps = v[RD_BW] * 1024;
	*read_iops = v[RD_IOPS];
	*write_bps = v[WR_BW] * 1024;
	*write_iops = v[WR_IOPS];
	return 0;
}

int calib_format_line(const char *name, const char *device, const struct calib_result *r, char *buf,
		      size_t len)
{
	double best = fmax(r->read_bps, r->write_bps); /* fmax ignores one NaN */
	char iops[32] = "";
	int n;

	if (!(best >= 1e6))
		return -EINVAL;
	if (r->read_iops >= 100)
		snprintf(iops, sizeof(iops), " %.0fiops", floor(r->read_iops / 100) * 100);
	n = snprintf(buf, len, "io.%s = %s %.0fM%s", name, device, floor(best / 1e6), iops);
	return n < 0 || (size_t)n >= len ? -EINVAL : 0;
}

int calib_check_scratch(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))
		return -EPERM;
	return S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) ? 0 : -EPERM;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One direction of O_DIRECT IO on fd from offset 0: whole blocks until
 * `bytes` or `seconds`, whichever ends first (a short read ends a file).
 * 0 and *bps, or -errno. */
static int stream(int fd, bool write, uint64_t bytes, double seconds, double *bps)
{
	void *buf = NULL;
	uint64_t done = 0;
	double t0, dt;
	int ret = 0;

	if (posix_memalign(&buf, CALIB_ALIGN, CALIB_BLOCK))
		return -ENOMEM;
	memset(buf, 0x5a, CALIB_BLOCK);
	t0 = now_s();
	while (done + CALIB_BLOCK <= bytes && now_s() - t0 < seconds) {
		ssize_t n = write ? pwrite(fd, buf, CALIB_BLOCK, (off_t)done)
				  : pread(fd, buf, CALIB_BLOCK, (off_t)done);

		if (n < 0) {
			ret = -errno;
			goto out;
		}
		done += (uint64_t)n;
		if (n < (ssize_t)CALIB_BLOCK)
			break;
	}
	if (write && fdatasync(fd) < 0) {
		ret = -errno;
		goto out;
	}
	dt = now_s() - t0;
	if (!done || dt <= 0) {
		ret = -EIO; /* an empty device or file: nothing measured */
		goto out;
	}
	*bps = (double)done / dt;
out:
	free(buf);
	return ret;
}

int calib_direct_read(const char *path, uint64_t bytes, double seconds, double *bps)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = stream(fd, false, bytes, seconds, bps);
	close(fd);
	return ret;
}

/* DIR/.fairctl-calibrate-PID. */
static int scratch_path(const char *dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/.fairctl-calibrate-%ld", dir, (long)getpid());

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int calib_direct_scratch(const char *dir, uint64_t bytes, double seconds, struct calib_result *r)
{
	char path[4096];
	int fd, ret = calib_check_scratch(dir);

	if (ret < 0)
		return ret;
	ret = scratch_path(dir, path, sizeof(path));
	if (ret < 0)
		return ret;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = stream(fd, true, bytes, seconds, &r->write_bps);
	close(fd);
	if (ret == 0)
		ret = calib_direct_read(path, bytes, seconds, &r->read_bps);
	unlink(path);
	return ret;
}

/* Runs fio with argv (argv[0] the program), its terse line into the
 * result's fields. 0, -ENOENT (no such program) or -EIO. */
static int run_fio(char *const argv[], double *read_bps, double *read_iops, double *write_bps)
{
	char out[8192];
	size_t used = 0;
	int pfd[2], status, ret;
	double write_iops;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return ret;
	}
	if (pid == 0) {
		dup2(pfd[1], STDOUT_FILENO);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], out + used, sizeof(out) - 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
		if (used == sizeof(out) - 1)
			break;
	}
	out[used] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return -ENOENT;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -EIO;
	return calib_parse_fio_terse(out, read_bps, read_iops, write_bps, &write_iops) < 0 ? -EIO
											   : 0;
}

/* One fio job on file: RW (read, write, randread), BS, for the size and
 * time given; read-only unless writing. */
static int fio_job(const char *fio_bin, const char *file, const char *rw, const char *bs,
		   uint64_t bytes, double seconds, double *read_bps, double *read_iops,
		   double *write_bps)
{
	char fname[4200], frw[32], fbs[32], fsize[48], ftime[48];
	bool writes = strcmp(rw, "write") == 0;
	char *argv[] = {(char *)fio_bin,
			"--name=calibrate",
			fname,
			frw,
			fbs,
			fsize,
			ftime,
			"--time_based",
			"--direct=1",
			"--ioengine=libaio",
			"--iodepth=32",
			"--minimal",
			writes ? "--end_fsync=1" : "--readonly",
			NULL};

	snprintf(fname, sizeof(fname), "--filename=%s", file);
	snprintf(frw, sizeof(frw), "--rw=%s", rw);
	snprintf(fbs, sizeof(fbs), "--bs=%s", bs);
	snprintf(fsize, sizeof(fsize), "--size=%llu", (unsigned long long)bytes);
	snprintf(ftime, sizeof(ftime), "--runtime=%.0fms", seconds * 1000);
	return run_fio(argv, read_bps, read_iops, write_bps);
}

int calib_fio(const char *fio_bin, const char *target, const char *scratch_dir, uint64_t bytes,
	      double seconds, struct calib_result *r)
{
	char path[4096];
	const char *file = target;
	double rb, ri, wb;
	int ret;

	if (scratch_dir) {
		ret = calib_check_scratch(scratch_dir);
		if (ret == 0)
			ret = scratch_path(scratch_dir, path, sizeof(path));
		if (ret < 0)
			return ret;
		file = path;
		/* written first: the reads below then read it back */
		ret =
		    fio_job(fio_bin, file, "write", "1M", bytes, seconds, &rb, &ri, &r->write_bps);
		if (ret < 0)
			goto out;
	}
	ret = fio_job(fio_bin, file, "read", "1M", bytes, seconds, &r->read_bps, &ri, &wb);
	if (ret == 0)
		ret = fio_job(fio_bin, file, "randread", "4k", bytes, seconds, &rb, &r->read_iops,
			      &wb);
	r->fio = ret == 0;
out:
	if (scratch_dir)
		unlink(path);
	return ret;
}
