/* SPDX-License-Identifier: MIT */
/*
 * model/unitprop: unit names of cgroup paths, the property encoding of each
 * file (with systemd 252's CPUQuota rounding), parse round trips and
 * malformed strings.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "unitprop.h"

static void test_unit_of_cgroup(void **state)
{
	char u[FS_UNIT_NAME_MAX], small[8];
	char longname[300];

	(void)state;
	assert_int_equal(fs_unit_of_cgroup("user.slice/user-1001.slice", u, sizeof(u)),
			 FS_UNIT_SLICE);
	assert_string_equal(u, "user-1001.slice");
	assert_int_equal(fs_unit_of_cgroup("system.slice/docker-ab12.scope", u, sizeof(u)),
			 FS_UNIT_SCOPE);
	assert_string_equal(u, "docker-ab12.scope");
	assert_int_equal(fs_unit_of_cgroup("system.slice/runner-3.service", u, sizeof(u)),
			 FS_UNIT_SERVICE);
	assert_int_equal(fs_unit_of_cgroup("ci.slice", u, sizeof(u)), FS_UNIT_SLICE);
	assert_string_equal(u, "ci.slice");
	/* not units: a plain directory, a bare suffix, a unit's sub-cgroup */
	assert_int_equal(fs_unit_of_cgroup("tenants/a", u, sizeof(u)), FS_UNIT_NONE);
	assert_int_equal(fs_unit_of_cgroup("x/.slice", u, sizeof(u)), FS_UNIT_NONE);
	assert_int_equal(fs_unit_of_cgroup("a.service/payload", u, sizeof(u)), FS_UNIT_NONE);
	assert_int_equal(fs_unit_of_cgroup("a.slicex", u, sizeof(u)), FS_UNIT_NONE);
	assert_int_equal(fs_unit_of_cgroup("user-1001.slice", small, sizeof(small)),
			 FS_UNIT_NONE);
	memset(longname, 'a', sizeof(longname));
	strcpy(longname + sizeof(longname) - 7, ".slice");
	assert_int_equal(fs_unit_of_cgroup(longname, NULL, 0), FS_UNIT_NONE);
	assert_string_equal(fs_unit_interface(FS_UNIT_SCOPE), "org.freedesktop.systemd1.Scope");
	assert_null(fs_unit_interface(FS_UNIT_NONE));
}

/* systemd 252 keeps CPUQuota= in whole percent in its drop-in: the
 * per-second quota is a multiple of 10000 us, at least one step. */
static void test_cpu_quota_rounding(void **state)
{
	(void)state;
	assert_int_equal(fs_uprop_cpu_quota(50000, 100000), 500000);
	assert_int_equal(fs_uprop_cpu_quota(50000, 0), 500000);
	assert_int_equal(fs_uprop_cpu_quota(12345, 100000), 120000); /* 123450 -> 12 % */
	assert_int_equal(fs_uprop_cpu_quota(12500, 100000), 130000); /* half rounds up */
	assert_int_equal(fs_uprop_cpu_quota(12499, 100000), 120000);
	assert_int_equal(fs_uprop_cpu_quota(1000, 1000000), 10000);  /* 0.1 % -> one step */
	assert_int_equal(fs_uprop_cpu_quota(1, 100000), 10000);
	assert_int_equal(fs_uprop_cpu_quota(250000, 100000), 2500000); /* 2.5 CPUs */
	assert_int_equal(fs_uprop_cpu_quota(3333, 10000), 330000);
	assert_true(fs_uprop_cpu_quota(FS_VALUE_MAX, 100000) == FS_VALUE_MAX);
	/* every result is what a daemon-reload reads back: N % * 10000 */
	for (uint64_t q = 1000; q < 400000; q += 777) {
		uint64_t v = fs_uprop_cpu_quota(q, 100000);

		assert_int_equal(v % 10000, 0);
		assert_int_equal((v / 10000) * 10000, v);
		assert_true(v + 5000 >= q * 10 && v <= q * 10 + 5000);
	}
}

static struct fs_limits limits(void)
{
	struct fs_limits l = {
	    .set = FS_LIM_CPU_MAX | FS_LIM_CPU_BURST | FS_LIM_CPU_WEIGHT | FS_LIM_MEM_HIGH |
		   FS_LIM_MEM_MAX | FS_LIM_MEM_LOW | FS_LIM_IO_MAX | FS_LIM_IO_WEIGHT,
	    .cpu_quota_us = 33333,
	    .cpu_period_us = 0,
	    .cpu_burst_us = 2000,
	    .cpu_weight = 300,
	    .mem_high = 123456789,
	    .mem_max = FS_VALUE_MAX,
	    .mem_low = 0,
	    .n_io = 2,
	    .io = {{{8, 0}, 4194304, FS_VALUE_MAX, FS_VALUE_MAX, 1000},
		   {{259, 1}, FS_VALUE_MAX, 1, FS_VALUE_MAX, FS_VALUE_MAX}},
	    .io_weight = 50,
	};
	return l;
}

static void test_format(void **state)
{
	struct fs_limits l = limits();
	char b[FS_CGF_VALUE_MAX];

	(void)state;
	assert_int_equal(fs_uprop_format(FS_CGF_CPU_MAX, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "CPUQuotaPerSecUSec=330000 CPUQuotaPeriodUSec=100000");
	l.cpu_quota_us = FS_VALUE_MAX;
	l.cpu_period_us = 50000;
	assert_int_equal(fs_uprop_format(FS_CGF_CPU_MAX, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "CPUQuotaPerSecUSec=infinity CPUQuotaPeriodUSec=50000");
	assert_int_equal(fs_uprop_format(FS_CGF_CPU_WEIGHT, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "CPUWeight=300");
	assert_int_equal(fs_uprop_format(FS_CGF_MEM_HIGH, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "MemoryHigh=123456789"); /* bytes, exactly */
	assert_int_equal(fs_uprop_format(FS_CGF_MEM_MAX, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "MemoryMax=infinity");
	assert_int_equal(fs_uprop_format(FS_CGF_MEM_LOW, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "MemoryLow=0"); /* 0 is valid protection */
	l.mem_high = 0;				/* systemd refuses MemoryHigh=0 */
	assert_int_equal(fs_uprop_format(FS_CGF_MEM_HIGH, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "MemoryHigh=1");
	assert_int_equal(fs_uprop_format(FS_CGF_IO_WEIGHT, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "IOWeight=50");
	assert_int_equal(fs_uprop_format(FS_CGF_IO_MAX, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "IOReadBandwidthMax=4194304 IOWriteBandwidthMax=infinity "
			       "IOReadIOPSMax=infinity IOWriteIOPSMax=1000");
	assert_int_equal(fs_uprop_format(FS_CGF_IO_MAX, &l, 1, b, sizeof(b)), 0);
	assert_string_equal(b, "IOReadBandwidthMax=infinity IOWriteBandwidthMax=1 "
			       "IOReadIOPSMax=infinity IOWriteIOPSMax=infinity");
	assert_int_equal(fs_uprop_format(FS_CGF_IO_MAX, &l, 2, b, sizeof(b)), -ENOENT);
	/* no property for cpu.max.burst in systemd 252 */
	assert_int_equal(fs_uprop_format(FS_CGF_CPU_BURST, &l, 0, b, sizeof(b)), -EOPNOTSUPP);
	l.set &= ~(unsigned)FS_LIM_CPU_WEIGHT;
	assert_int_equal(fs_uprop_format(FS_CGF_CPU_WEIGHT, &l, 0, b, sizeof(b)), -ENOENT);
	l = limits();
	assert_int_equal(fs_uprop_format(FS_CGF_IO_MAX, &l, 0, b, 20), -ENOSPC);
}

/* What fairshare sets and what it reads back (fs_uprop_print of the
 * property values) are the same string: every value round-trips. */
static void test_round_trip(void **state)
{
	struct fs_limits l = limits();
	char b[FS_CGF_VALUE_MAX], b2[FS_CGF_VALUE_MAX];
	uint64_t v[FS_UPROP_MAX];

	(void)state;
	for (int f = 0; f < FS_CGF__COUNT; f++) {
		size_t disks = f == FS_CGF_IO_MAX ? l.n_io : 1;

		if (fs_uprops[f].n == 0)
			continue;
		for (size_t d = 0; d < disks; d++) {
			assert_int_equal(fs_uprop_format((enum fs_cgfile)f, &l, d, b, sizeof(b)), 0);
			assert_int_equal(fs_uprop_parse((enum fs_cgfile)f, b, v), 0);
			assert_int_equal(fs_uprop_print((enum fs_cgfile)f, v, b2, sizeof(b2)), 0);
			assert_string_equal(b, b2);
		}
	}
	/* weights: systemd's "not set" is UINT64_MAX, written "unset" */
	v[0] = UINT64_MAX;
	assert_int_equal(fs_uprop_print(FS_CGF_CPU_WEIGHT, v, b, sizeof(b)), 0);
	assert_string_equal(b, "CPUWeight=unset");
	assert_int_equal(fs_uprop_parse(FS_CGF_CPU_WEIGHT, b, v), 0);
	assert_true(v[0] == UINT64_MAX);
}

static void test_parse_malformed(void **state)
{
	uint64_t v[FS_UPROP_MAX];
	const char *bad_cpu[] = {
	    "",
	    "CPUQuotaPerSecUSec=1",				   /* period missing */
	    "CPUQuotaPeriodUSec=1 CPUQuotaPerSecUSec=1",	   /* order */
	    "CPUQuotaPerSecUSec=1  CPUQuotaPeriodUSec=1",	   /* two spaces */
	    "CPUQuotaPerSecUSec=-1 CPUQuotaPeriodUSec=1",	   /* sign */
	    "CPUQuotaPerSecUSec= CPUQuotaPeriodUSec=1",	   /* empty */
	    "CPUQuotaPerSecUSec=1 CPUQuotaPeriodUSec=1 x",	   /* trailing */
	    "CPUQuotaPerSecUSec=unset CPUQuotaPeriodUSec=1",	   /* a weight's word */
	    "CPUQuotaPerSecUSec=99999999999999999999 CPUQuotaPeriodUSec=1", /* overflow */
	    "CPUQuotaPerSecUSec=18446744073709551615 CPUQuotaPeriodUSec=1", /* use infinity */
	    "50000 100000", /* a cgroupfs value */
	    "CPUQuotaPerSecUSec=010000 CPUQuotaPeriodUSec=1", /* not the printed form */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad_cpu) / sizeof(bad_cpu[0]); i++)
		assert_int_equal(fs_uprop_parse(FS_CGF_CPU_MAX, bad_cpu[i], v), -EINVAL);
	assert_int_equal(fs_uprop_parse(FS_CGF_CPU_WEIGHT, "CPUWeight=infinity", v), -EINVAL);
	assert_int_equal(fs_uprop_parse(FS_CGF_CPU_BURST, "x=1", v), -EINVAL);
	assert_int_equal(fs_uprop_parse(FS_CGF_MEM_HIGH, NULL, v), -EINVAL);
	assert_int_equal(fs_uprop_parse(FS_CGF_MEM_HIGH, "MemoryMax=1", v), -EINVAL);
	assert_int_equal(fs_uprop_parse(FS_CGF_MEM_HIGH, "MemoryHigh=infinity", v), 0);
	assert_true(v[0] == UINT64_MAX);
}

static void test_helpers(void **state)
{
	char b[FS_CGF_VALUE_MAX] = "MemoryMax=1000";
	char p[FS_UPROP_DEV_PATH_MAX];

	(void)state;
	assert_int_equal(fs_uprop_first_value("MemoryMax=4096"), 4096);
	assert_true(fs_uprop_first_value("MemoryMax=infinity") == FS_VALUE_MAX);
	assert_true(fs_uprop_first_value(NULL) == FS_VALUE_MAX);
	assert_true(fs_uprop_first_value("4096") == FS_VALUE_MAX);
	assert_int_equal(fs_uprop_set_first(FS_CGF_MEM_MAX, 8192, b, sizeof(b)), 0);
	assert_string_equal(b, "MemoryMax=8192");
	assert_int_equal(fs_uprop_set_first(FS_CGF_MEM_MAX, FS_VALUE_MAX, b, sizeof(b)), 0);
	assert_string_equal(b, "MemoryMax=infinity");
	assert_int_equal(fs_uprop_set_first(FS_CGF_CPU_MAX, 1, b, sizeof(b)), -EINVAL);
	assert_int_equal(fs_uprop_dev_path((struct fs_devnum){259, 3}, p, sizeof(p)), 0);
	assert_string_equal(p, "/dev/block/259:3");
	assert_int_equal(fs_uprop_dev_path((struct fs_devnum){8, 0}, p, 8), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unit_of_cgroup), cmocka_unit_test(test_cpu_quota_rounding),
	    cmocka_unit_test(test_format),	   cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_parse_malformed), cmocka_unit_test(test_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
