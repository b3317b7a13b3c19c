/* SPDX-License-Identifier: MIT */
/* Suffix parsing of conf/units.c: every documented suffix, and refusals. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "units.h"

static void test_size(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(fs_parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(fs_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	/* K, M, G, T are binary for sizes, as systemd's MemoryMax= reads them */
	assert_int_equal(fs_parse_size("4K", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(fs_parse_size("4Ki", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(fs_parse_size("4KiB", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(fs_parse_size("2G", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(fs_parse_size("2GB", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(fs_parse_size("8000000000", &v), 0); /* decimal: the bytes */
	assert_int_equal(v, 8000000000ull);
	assert_int_equal(fs_parse_size("2Gi", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(fs_parse_size("1.5Mi", &v), 0);
	assert_int_equal(v, 1572864);
	assert_int_equal(fs_parse_size("3T", &v), 0);
	assert_int_equal(v, 3ull << 40);
	assert_int_equal(fs_parse_size("1Ti", &v), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(fs_parse_size("16 Gi", &v), 0);
	assert_int_equal(v, 16ull << 30);

	v = 7;
	assert_int_equal(fs_parse_size("", &v), -EINVAL);
	assert_int_equal(fs_parse_size("-1", &v), -EINVAL);
	assert_int_equal(fs_parse_size("1X", &v), -EINVAL);
	assert_int_equal(fs_parse_size("1Gib", &v), -EINVAL);
	assert_int_equal(fs_parse_size("1g", &v), -EINVAL);
	assert_int_equal(fs_parse_size("inf", &v), -EINVAL);
	assert_int_equal(fs_parse_size("nan", &v), -EINVAL);
	assert_int_equal(fs_parse_size("0x10", &v), -EINVAL);
	assert_int_equal(fs_parse_size("1.", &v), -EINVAL);
	assert_int_equal(fs_parse_size(".5G", &v), -EINVAL);
	assert_int_equal(fs_parse_size("1 G B", &v), -EINVAL);
	assert_int_equal(fs_parse_size("50%", &v), -EINVAL);
	assert_int_equal(fs_parse_size("20000000T", &v), -ERANGE);
	assert_int_equal(v, 7); /* untouched on error */
}

static void test_io_rate_and_iops(void **state)
{
	double v;

	(void)state;
	assert_int_equal(fs_parse_io_rate("50M", &v), 0);
	assert_true(v == 50e6);
	assert_int_equal(fs_parse_io_rate("50MB/s", &v), 0);
	assert_true(v == 50e6);
	assert_int_equal(fs_parse_io_rate("1.5Gi/s", &v), 0);
	assert_true(v == 1.5 * 1073741824.0);
	assert_int_equal(fs_parse_io_rate("100", &v), 0);
	assert_true(v == 100);
	assert_int_equal(fs_parse_io_rate("5Mbit", &v), -EINVAL);
	assert_int_equal(fs_parse_io_rate("5M/m", &v), -EINVAL);

	assert_int_equal(fs_parse_iops("20K", &v), 0);
	assert_true(v == 20000);
	assert_int_equal(fs_parse_iops("300/s", &v), 0);
	assert_true(v == 300);
	assert_int_equal(fs_parse_iops("2Ki", &v), -EINVAL);
	assert_int_equal(fs_parse_iops("2KB", &v), -EINVAL);
}

static void test_net_rate(void **state)
{
	double v;

	(void)state;
	assert_int_equal(fs_parse_net_rate("10Gbit", &v), 0);
	assert_true(v == 1.25e9);
	assert_int_equal(fs_parse_net_rate("100Mbit/s", &v), 0);
	assert_true(v == 12.5e6);
	assert_int_equal(fs_parse_net_rate("125MB", &v), 0);
	assert_true(v == 125e6);
	assert_int_equal(fs_parse_net_rate("1GB/s", &v), 0);
	assert_true(v == 1e9);
	assert_int_equal(fs_parse_net_rate("8Kibit", &v), 0);
	assert_true(v == 1024);
	/* Ambiguous or unit-less: refused. */
	assert_int_equal(fs_parse_net_rate("100", &v), -EINVAL);
	assert_int_equal(fs_parse_net_rate("100M", &v), -EINVAL);
	assert_int_equal(fs_parse_net_rate("100Mbps", &v), -EINVAL);
	assert_int_equal(fs_parse_net_rate("100MBps", &v), -EINVAL);
	assert_int_equal(fs_parse_net_rate("100Mb", &v), -EINVAL);
}

static void test_duration(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(fs_parse_duration("1", &v), 0);
	assert_int_equal(v, 1000000);
	assert_int_equal(fs_parse_duration("1s", &v), 0);
	assert_int_equal(v, 1000000);
	assert_int_equal(fs_parse_duration("2.5s", &v), 0);
	assert_int_equal(v, 2500000);
	assert_int_equal(fs_parse_duration("500ms", &v), 0);
	assert_int_equal(v, 500000);
	assert_int_equal(fs_parse_duration("250us", &v), 0);
	assert_int_equal(v, 250);
	assert_int_equal(fs_parse_duration("2m", &v), 0);
	assert_int_equal(v, 120000000);
	assert_int_equal(fs_parse_duration("1h", &v), -EINVAL);
	assert_int_equal(fs_parse_duration("1 sec", &v), -EINVAL);
	assert_int_equal(fs_parse_duration("-1s", &v), -EINVAL);
}

static void test_percent_number(void **state)
{
	double v;

	(void)state;
	assert_int_equal(fs_parse_percent("50%", &v), 0);
	assert_true(v == 0.5);
	assert_int_equal(fs_parse_percent("12.5%", &v), 0);
	assert_true(v == 0.125);
	assert_int_equal(fs_parse_percent("50", &v), -EINVAL);
	assert_int_equal(fs_parse_percent("%", &v), -EINVAL);
	assert_int_equal(fs_parse_number("2.25", &v), 0);
	assert_true(v == 2.25);
	assert_int_equal(fs_parse_number("2c", &v), -EINVAL);
	assert_int_equal(fs_parse_number("1e3", &v), -EINVAL);
}

static void test_cpu_list(void **state)
{
	unsigned n;

	(void)state;
	assert_int_equal(fs_parse_cpu_list_count("0-3,5,7-8\n", &n), 0);
	assert_int_equal(n, 7);
	assert_int_equal(fs_parse_cpu_list_count("0\n", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(fs_parse_cpu_list_count("\n", &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(fs_parse_cpu_list_count("3-1", &n), -EINVAL);
	assert_int_equal(fs_parse_cpu_list_count("0-", &n), -EINVAL);
	assert_int_equal(fs_parse_cpu_list_count("a", &n), -EINVAL);
}

static void test_format_size(void **state)
{
	char buf[32];

	(void)state;
	fs_format_size(4ull << 30, buf, sizeof(buf));
	assert_string_equal(buf, "4Gi");
	fs_format_size(1536 * 1024, buf, sizeof(buf));
	assert_string_equal(buf, "1536Ki");
	fs_format_size(7, buf, sizeof(buf));
	assert_string_equal(buf, "7");
	fs_format_size(0, buf, sizeof(buf));
	assert_string_equal(buf, "0");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_size),	   cmocka_unit_test(test_io_rate_and_iops),
	    cmocka_unit_test(test_net_rate),	   cmocka_unit_test(test_duration),
	    cmocka_unit_test(test_percent_number), cmocka_unit_test(test_cpu_list),
	    cmocka_unit_test(test_format_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
