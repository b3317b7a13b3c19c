/* SPDX-License-Identifier: MIT */
/* `fairctl calibrate`'s measurements (agent/client/calibrate.h): on a
 * scratch file of the host's disk, and read-only on a loop device over a
 * file when the host lets us make one (root, /dev/loop-control). */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibrate.h"

/* A terse v3 line: 49 fields, read bw 7, read iops 8, write bw 48, write iops 49. */
static void terse(char *buf, size_t len, double rbw_kib, double riops, double wbw_kib, double wiops)
{
	size_t used = (size_t)snprintf(buf, len, "3;fio-3.33;calibrate;0;0");

	for (int f = 6; f <= 60; f++) {
		double v = f == 7    ? rbw_kib
			   : f == 8  ? riops
			   : f == 48 ? wbw_kib
			   : f == 49 ? wiops
				     : 1;

		used += (size_t)snprintf(buf + used, len - used, ";%g", v);
	}
}

static void test_parse_fio_terse(void **state)
{
	char line[2048];
	double rb, ri, wb, wi;

	(void)state;
	terse(line, sizeof(line), 102400, 25000, 51200, 12000);
	assert_int_equal(calib_parse_fio_terse(line, &rb, &ri, &wb, &wi), 0);
	assert_true(rb == 102400.0 * 1024 && ri == 25000);
	assert_true(wb == 51200.0 * 1024 && wi == 12000);
	assert_int_equal(calib_parse_fio_terse("2;fio-3.33;x;0;0", &rb, &ri, &wb, &wi), -EINVAL);
	assert_int_equal(calib_parse_fio_terse("3;fio-3.33;x;0;0;1;2;3", &rb, &ri, &wb, &wi),
			 -EINVAL);
	assert_int_equal(calib_parse_fio_terse("fio: failed", &rb, &ri, &wb, &wi), -EINVAL);
}

static void test_format_line(void **state)
{
	struct calib_result r;
	char buf[128];

	(void)state;
	calib_result_init(&r);
	assert_int_equal(calib_format_line("d", "/dev/vda", &r, buf, sizeof(buf)), -EINVAL);
	r.read_bps = 104.9e6; /* the device only read: its read rate */
	assert_int_equal(calib_format_line("disk0", "/dev/vda", &r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "io.disk0 = /dev/vda 104M");
	r.write_bps = 230.2e6; /* the best of the two, rounded down */
	r.read_iops = 20261;
	assert_int_equal(calib_format_line("fast", "254:0", &r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "io.fast = 254:0 230M 20200iops");
	r.read_bps = r.write_bps = 0.5e6;
	assert_int_equal(calib_format_line("slow", "254:0", &r, buf, sizeof(buf)), -EINVAL);
	r.read_bps = 1e9;
	assert_int_equal(calib_format_line("d", "254:0", &r, buf, 10), -EINVAL);
}

/* Writes go to a scratch file in a directory, never to a device. */
static void test_never_writes_a_device(void **state)
{
	struct calib_result r;

	(void)state;
	calib_result_init(&r);
	assert_int_equal(calib_check_scratch("/dev/null"), -EPERM);
	assert_int_equal(calib_check_scratch("."), 0);
	assert_int_equal(calib_check_scratch("./no-such-dir/x"), -ENOENT);
	assert_int_equal(calib_direct_scratch("/dev/null", 1 << 20, 1, &r), -EPERM);
	assert_int_equal(calib_fio("fio", NULL, "/dev/null", 1 << 20, 1, &r), -EPERM);
	assert_true(isnan(r.write_bps));
}

/* The O_DIRECT measurement on a scratch file of the disk the build is on
 * (mkdtemp in the working directory: /tmp may be tmpfs, without O_DIRECT):
 * both rates measured, the file removed. */
static void test_direct_scratch(void **state)
{
	char dir[] = "calib-test-XXXXXX";
	struct calib_result r;
	int ret;

	(void)state;
	assert_non_null(mkdtemp(dir));
	calib_result_init(&r);
	ret = calib_direct_scratch(dir, 16 << 20, 5, &r);
	if (ret == -EINVAL) {
		rmdir(dir);
		skip(); /* the build directory is on tmpfs */
	}
	assert_int_equal(ret, 0);
	assert_true(r.write_bps > 1e5 && r.read_bps > 1e5);
	assert_false(r.fio);
	assert_int_equal(rmdir(dir), 0); /* empty: the scratch file is gone */
}

/* fio absent: -ENOENT, and the caller falls back to its own IO. */
static void test_fio_missing(void **state)
{
	char dir[] = "calib-test-XXXXXX";
	struct calib_result r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	calib_result_init(&r);
	assert_int_equal(calib_fio("/nonexistent/fio", NULL, dir, 1 << 20, 1, &r), -ENOENT);
	assert_false(r.fio);
	assert_int_equal(rmdir(dir), 0);
}

/* A loop device over a file with known bytes: read at some rate, and the
 * bytes are the same afterwards (it is only read). Skipped where the host
 * has no loop devices for us (not root, a container). */
static void test_loop_device_read_only(void **state)
{
	char file[] = "calib-loop-XXXXXX", dev[64];
	unsigned char *a = malloc(8 << 20), *b = malloc(8 << 20);
	int ctl, fd, lfd, nr;
	double bps = 0;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (size_t i = 0; i < (8u << 20); i++)
		a[i] = (unsigned char)(i * 7 + 3);
	fd = mkstemp(file);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, a, 8 << 20), 8 << 20);
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	nr = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
	lfd = nr < 0 ? -1 : open(dev, O_RDWR | O_CLOEXEC);
	if (lfd < 0 || ioctl(lfd, LOOP_SET_FD, fd) < 0) {
		if (lfd >= 0)
			close(lfd);
		if (ctl >= 0)
			close(ctl);
		close(fd);
		unlink(file);
		free(a);
		free(b);
		skip();
	}
	assert_int_equal(calib_check_scratch(dev), -EPERM);
	assert_int_equal(calib_direct_read(dev, 4 << 20, 5, &bps), 0);
	assert_true(bps > 1e5);
	ioctl(lfd, LOOP_CLR_FD, 0);
	close(lfd);
	close(ctl);
	assert_int_equal(pread(fd, b, 8 << 20, 0), 8 << 20);
	assert_memory_equal(a, b, 8 << 20);
	close(fd);
	unlink(file);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_fio_terse),
	    cmocka_unit_test(test_format_line),
	    cmocka_unit_test(test_never_writes_a_device),
	    cmocka_unit_test(test_direct_scratch),
	    cmocka_unit_test(test_fio_missing),
	    cmocka_unit_test(test_loop_device_read_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
