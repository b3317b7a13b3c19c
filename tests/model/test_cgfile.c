/* SPDX-License-Identifier: MIT */
/*
 * model/cgfile: every file's format, current-value extraction and write
 * rank; state-file keys (round trip, malformed keys); the display helpers.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cgfile.h"

static struct fs_limits all_limits(void)
{
	struct fs_limits l = {
	    .set = FS_LIM_CPU_MAX | FS_LIM_CPU_BURST | FS_LIM_CPU_WEIGHT | FS_LIM_MEM_HIGH |
		   FS_LIM_MEM_MAX | FS_LIM_MEM_LOW | FS_LIM_IO_MAX | FS_LIM_IO_WEIGHT,
	    .cpu_quota_us = 50000,
	    .cpu_period_us = 0, /* default 100000 */
	    .cpu_burst_us = 2000,
	    .cpu_weight = 300,
	    .mem_high = 64 << 20,
	    .mem_max = FS_VALUE_MAX,
	    .mem_low = 32 << 20,
	    .n_io = 2,
	    .io = {{{8, 0}, 4194304, FS_VALUE_MAX, FS_VALUE_MAX, 1000},
		   {{259, 1}, FS_VALUE_MAX, FS_VALUE_MAX, FS_VALUE_MAX, FS_VALUE_MAX}},
	    .io_weight = 50,
	};
	return l;
}

static void test_table(void **state)
{
	unsigned bits = 0;

	(void)state;

	for (int f = 0; f < FS_CGF__COUNT; f++) {
		assert_non_null(fs_cgfiles[f].name);
		assert_int_equal(fs_cgfile_by_name(fs_cgfiles[f].name), f);
		assert_int_equal(bits & fs_cgfiles[f].bit, 0); /* one bit each */
		bits |= fs_cgfiles[f].bit;
		assert_int_equal(fs_cgfiles[f].per_disk, f == FS_CGF_IO_MAX);
	}
	assert_int_equal(bits, 0xff);
	assert_string_equal(fs_cgfiles[FS_CGF_MEM_LOW].name, "memory.low");
	assert_string_equal(fs_cgfiles[FS_CGF_CPU_BURST].name, "cpu.max.burst");
	assert_int_equal(fs_cgfiles[FS_CGF_IO_MAX].bit, FS_LIM_IO_MAX);
	assert_int_equal(fs_cgfile_by_name("cgroup.procs"), -1);
	assert_int_equal(fs_cgfile_by_name("io.max@8:0"), -1);
	/* Slots: one per file, then one per disk of io.max, all distinct. */
	assert_int_equal(fs_cgfile_slot(FS_CGF_CPU_MAX, 5), FS_CGF_CPU_MAX);
	assert_int_equal(fs_cgfile_slot(FS_CGF_IO_MAX, 0), FS_CGF_IO_MAX);
	assert_int_equal(fs_cgfile_slot(FS_CGF_IO_MAX, FS_MAX_DISKS - 1), FS_CGF_SLOTS - 1);
}

static void test_values(void **state)
{
	char b[32];

	(void)state;
	fs_fmt_value(FS_VALUE_MAX, b, sizeof(b));
	assert_string_equal(b, "max");
	fs_fmt_value(0, b, sizeof(b));
	assert_string_equal(b, "0");
	fs_fmt_value(UINT64_MAX - 1, b, sizeof(b));
	assert_string_equal(b, "18446744073709551614");
	assert_true(fs_parse_value("max") == FS_VALUE_MAX);
	assert_true(fs_parse_value("max 100000") == FS_VALUE_MAX);
	assert_true(fs_parse_value(NULL) == FS_VALUE_MAX);
	assert_true(fs_parse_value("") == FS_VALUE_MAX);
	assert_true(fs_parse_value("50000 100000") == 50000);
	assert_true(fs_parse_value("0") == 0);
	assert_true(fs_parse_value("99999999999999999999") == FS_VALUE_MAX); /* overflow */
}

static void test_format(void **state)
{
	struct fs_limits l = all_limits();
	char b[FS_CGF_VALUE_MAX];

	(void)state;
	assert_int_equal(fs_cgfile_format(FS_CGF_CPU_MAX, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "50000 100000");
	l.cpu_quota_us = FS_VALUE_MAX;
	l.cpu_period_us = 20000;
	assert_int_equal(fs_cgfile_format(FS_CGF_CPU_MAX, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "max 20000");
	assert_int_equal(fs_cgfile_format(FS_CGF_CPU_BURST, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "2000");
	assert_int_equal(fs_cgfile_format(FS_CGF_CPU_WEIGHT, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "300");
	assert_int_equal(fs_cgfile_format(FS_CGF_MEM_HIGH, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "67108864");
	assert_int_equal(fs_cgfile_format(FS_CGF_MEM_MAX, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "max");
	assert_int_equal(fs_cgfile_format(FS_CGF_MEM_LOW, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "33554432");
	assert_int_equal(fs_cgfile_format(FS_CGF_IO_WEIGHT, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "default 50");
	assert_int_equal(fs_cgfile_format(FS_CGF_IO_MAX, &l, 0, b, sizeof(b)), 0);
	assert_string_equal(b, "8:0 rbps=4194304 wbps=max riops=max wiops=1000");
	assert_int_equal(fs_cgfile_format(FS_CGF_IO_MAX, &l, 1, b, sizeof(b)), 0);
	assert_string_equal(b, "259:1 rbps=max wbps=max riops=max wiops=max");
	/* Not set, or no such disk. */
	assert_int_equal(fs_cgfile_format(FS_CGF_IO_MAX, &l, 2, b, sizeof(b)), -ENOENT);
	l.set &= ~(unsigned)FS_LIM_CPU_WEIGHT;
	assert_int_equal(fs_cgfile_format(FS_CGF_CPU_WEIGHT, &l, 0, b, sizeof(b)), -ENOENT);
	assert_int_equal(fs_cgfile_format(FS_CGF__COUNT, &l, 0, b, sizeof(b)), -ENOENT);
	/* Too small a buffer. */
	assert_int_equal(fs_cgfile_format(FS_CGF_IO_MAX, &l, 0, b, 10), -ENOSPC);
	assert_int_equal(fs_cgfile_format(FS_CGF_MEM_HIGH, &l, 0, b, 4), -ENOSPC);
}

static void test_io_display(void **state)
{
	struct fs_io_limit io = {{8, 16}, 1048576, FS_VALUE_MAX, 200, 300};
	char b[128];

	(void)state;
	assert_int_equal(fs_fmt_io_max(&io, FS_IO_KEYS_ALL, b, sizeof(b)),
			 (int)strlen("8:16 rbps=1048576 wbps=max riops=200 wiops=300"));
	assert_string_equal(b, "8:16 rbps=1048576 wbps=max riops=200 wiops=300");
	fs_fmt_io_max(&io, 1u << FS_IO_RBPS | 1u << FS_IO_WBPS, b, sizeof(b));
	assert_string_equal(b, "8:16 rbps=1048576 wbps=max");
	fs_fmt_io_max(&io, 1u << FS_IO_WIOPS, b, sizeof(b));
	assert_string_equal(b, "8:16 wiops=300");
	fs_fmt_io_max(&io, 0, b, sizeof(b));
	assert_string_equal(b, "8:16");
	/* Truncated: still terminated, the full length returned. */
	assert_true(fs_fmt_io_max(&io, FS_IO_KEYS_ALL, b, 12) >= 12);
	assert_int_equal(strlen(b), 11);
}

static void test_current(void **state)
{
	const struct fs_devnum none = {0, 0}, sda = {8, 0}, nvme = {259, 1};
	const char *io = "259:10 rbps=1 wbps=max riops=max wiops=max\n"
			 "8:0 rbps=4194304 wbps=max riops=max wiops=1000\n";
	char b[FS_CGF_VALUE_MAX];

	(void)state;
	assert_int_equal(fs_cgfile_current(FS_CGF_CPU_MAX, none, "max 100000\n", b, sizeof(b)), 0);
	assert_string_equal(b, "max 100000");
	assert_int_equal(fs_cgfile_current(FS_CGF_CPU_BURST, none, "0\n", b, sizeof(b)), 0);
	assert_string_equal(b, "0");
	assert_int_equal(fs_cgfile_current(FS_CGF_CPU_WEIGHT, none, "100\n", b, sizeof(b)), 0);
	assert_string_equal(b, "100");
	assert_int_equal(fs_cgfile_current(FS_CGF_MEM_HIGH, none, "max\n", b, sizeof(b)), 0);
	assert_string_equal(b, "max");
	assert_int_equal(fs_cgfile_current(FS_CGF_MEM_MAX, none, "1048576 \n", b, sizeof(b)), 0);
	assert_string_equal(b, "1048576");
	/* io.weight: the first line only ("default N"); per-device lines follow. */
	assert_int_equal(
	    fs_cgfile_current(FS_CGF_IO_WEIGHT, none, "default 100\n8:0 200\n", b, sizeof(b)), 0);
	assert_string_equal(b, "default 100");
	/* io.max: this disk's line, not a prefix match of another (259:10). */
	assert_int_equal(fs_cgfile_current(FS_CGF_IO_MAX, sda, io, b, sizeof(b)), 0);
	assert_string_equal(b, "8:0 rbps=4194304 wbps=max riops=max wiops=1000");
	assert_int_equal(fs_cgfile_current(FS_CGF_IO_MAX, nvme, io, b, sizeof(b)), 0);
	assert_string_equal(b, "259:1 rbps=max wbps=max riops=max wiops=max");
	assert_int_equal(fs_cgfile_current(FS_CGF_IO_MAX, sda, "", b, sizeof(b)), 0);
	assert_string_equal(b, "8:0 rbps=max wbps=max riops=max wiops=max");
	/* Empty files, small buffers. */
	assert_int_equal(fs_cgfile_current(FS_CGF_CPU_MAX, none, "", b, sizeof(b)), -ENODATA);
	assert_int_equal(fs_cgfile_current(FS_CGF_MEM_MAX, none, "\n", b, sizeof(b)), -ENODATA);
	assert_int_equal(fs_cgfile_current(FS_CGF_CPU_MAX, none, "max 100000\n", b, 5), -ENOSPC);
	assert_int_equal(fs_cgfile_current(FS_CGF__COUNT, none, "1\n", b, sizeof(b)), -EINVAL);
}

/* What a limit formats is what the file then shows: current(format(x)) = format(x). */
static void test_format_current_round_trip(void **state)
{
	struct fs_limits l = all_limits();

	(void)state;
	for (int f = 0; f < FS_CGF__COUNT; f++) {
		char v[FS_CGF_VALUE_MAX], file[FS_CGF_VALUE_MAX + 1], cur[FS_CGF_VALUE_MAX];
		struct fs_devnum dev =
		    fs_cgfiles[f].per_disk ? l.io[0].dev : (struct fs_devnum){0, 0};

		assert_int_equal(fs_cgfile_format((enum fs_cgfile)f, &l, 0, v, sizeof(v)), 0);
		snprintf(file, sizeof(file), "%s\n", v);
		assert_int_equal(fs_cgfile_current((enum fs_cgfile)f, dev, file, cur, sizeof(cur)),
				 0);
		assert_string_equal(cur, v);
	}
}

static int rank_of(const char *old_burst, const char *new_burst, const char *old_max,
		   const char *new_max, enum fs_cgfile f)
{
	struct fs_cgfile_order o = {false, false};

	fs_cgfile_order_note(&o, FS_CGF_CPU_BURST, old_burst, new_burst);
	fs_cgfile_order_note(&o, FS_CGF_MEM_MAX, old_max, new_max);
	fs_cgfile_order_note(&o, FS_CGF_CPU_MAX, "max 100000", "1 100000"); /* no effect */
	fs_cgfile_order_note(&o, FS_CGF_MEM_HIGH, "max", "1");		    /* no effect */
	return fs_cgfile_rank(&o, f);
}

static void test_rank(void **state)
{
	(void)state;
	/* Burst falls: burst before cpu.max; rises or stays: after. */
	assert_true(rank_of("2000", "1000", "max", "max", FS_CGF_CPU_BURST) <
		    rank_of("2000", "1000", "max", "max", FS_CGF_CPU_MAX));
	assert_true(rank_of("0", "1000", "max", "max", FS_CGF_CPU_BURST) >
		    rank_of("0", "1000", "max", "max", FS_CGF_CPU_MAX));
	assert_true(rank_of("5", "5", "max", "max", FS_CGF_CPU_BURST) >
		    rank_of("5", "5", "max", "max", FS_CGF_CPU_MAX));
	/* memory.max falls (max -> a number): memory.high first; rises: after. */
	assert_true(rank_of("0", "0", "max", "300", FS_CGF_MEM_HIGH) <
		    rank_of("0", "0", "max", "300", FS_CGF_MEM_MAX));
	assert_true(rank_of("0", "0", "300", "max", FS_CGF_MEM_HIGH) >
		    rank_of("0", "0", "300", "max", FS_CGF_MEM_MAX));
	assert_true(rank_of("0", "0", "300", "500", FS_CGF_MEM_HIGH) >
		    rank_of("0", "0", "300", "500", FS_CGF_MEM_MAX));
	/* Unknown old value counts as "max": a new number falls. */
	assert_true(rank_of(NULL, "0", NULL, "300", FS_CGF_CPU_BURST) <
		    rank_of(NULL, "0", NULL, "300", FS_CGF_CPU_MAX));
	assert_true(rank_of(NULL, "0", NULL, "300", FS_CGF_MEM_HIGH) <
		    rank_of(NULL, "0", NULL, "300", FS_CGF_MEM_MAX));
	/* Weights and io.max come last, after the limits they do not interact with. */
	for (int f = 0; f < FS_CGF__COUNT; f++) {
		assert_true(rank_of("0", "0", "1", "1", FS_CGF_IO_MAX) >=
			    rank_of("0", "0", "1", "1", (enum fs_cgfile)f));
		assert_true(rank_of("0", "0", "1", "1", FS_CGF_IO_WEIGHT) >=
			    rank_of("0", "0", "1", "1", (enum fs_cgfile)f));
	}
}

static void test_keys(void **state)
{
	char k[FS_CGF_KEY_MAX];
	enum fs_cgfile f;
	struct fs_devnum d;

	(void)state;
	for (int i = 0; i < FS_CGF__COUNT; i++) {
		struct fs_devnum dev = {4294967295u, 1048575};

		assert_int_equal(fs_cgfile_key((enum fs_cgfile)i, dev, k, sizeof(k)), 0);
		assert_int_equal(fs_cgfile_parse_key(k, &f, &d), 0);
		assert_int_equal(f, i);
		if (fs_cgfiles[i].per_disk) {
			assert_int_equal(d.major, dev.major);
			assert_int_equal(d.minor, dev.minor);
		} else {
			assert_string_equal(k, fs_cgfiles[i].name);
			assert_int_equal(d.major, 0);
			assert_int_equal(d.minor, 0);
		}
	}
	assert_int_equal(fs_cgfile_key(FS_CGF_IO_MAX, (struct fs_devnum){8, 0}, k, sizeof(k)), 0);
	assert_string_equal(k, "io.max@8:0");
	assert_int_equal(fs_cgfile_key(FS_CGF_IO_MAX, (struct fs_devnum){8, 0}, k, 5), -ENOSPC);
	assert_int_equal(fs_cgfile_key(FS_CGF__COUNT, (struct fs_devnum){8, 0}, k, sizeof(k)),
			 -EINVAL);
	assert_int_equal(fs_cgfile_parse_key("io.max@0:0", &f, &d), 0);
	assert_int_equal(fs_cgfile_parse_key("io.weight", &f, &d), 0);
	assert_int_equal(f, FS_CGF_IO_WEIGHT);
}

static void test_malformed_keys(void **state)
{
	static const char *const bad[] = {
	    "",
	    "cgroup.procs",
	    "io.max",
	    "io.max@",
	    "io.max@8",
	    "io.max@8:",
	    "io.max@:0",
	    "io.max@8:0 ",
	    "io.max@ 8:0",
	    "io.max@+8:0",
	    "io.max@-8:0",
	    "io.max@8:-1",
	    "io.max@08:0",
	    "io.max@8:0x",
	    "io.max@8:0:1",
	    "io.max@4294967296:0",
	    "cpu.max@8:0",
	    "cpu.max ",
	    "cpu.max.",
	    "cpu",
	    "memory.high@",
	    "io.max@8:0\n",
	    "CPU.MAX",
	    "io.weight@1:1",
	    "io.max@8:99999999999",
	};
	enum fs_cgfile f = FS_CGF_CPU_MAX;
	struct fs_devnum d = {1, 2};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (fs_cgfile_parse_key(bad[i], &f, &d) != -EINVAL)
			fail_msg("key '%s' accepted", bad[i]);
	}
	/* Outputs untouched on failure. */
	assert_int_equal(f, FS_CGF_CPU_MAX);
	assert_int_equal(d.major, 1);
}

/* Change k of one member of m (each a file's value); false past the last. */
static bool change_member(struct fs_limits *m, int k)
{
	switch (k) {
	case 0:
		m->set ^= FS_LIM_CPU_WEIGHT;
		break;
	case 1:
		m->cpu_quota_us++;
		break;
	case 2:
		m->cpu_period_us++;
		break;
	case 3:
		m->cpu_burst_us++;
		break;
	case 4:
		m->cpu_weight++;
		break;
	case 5:
		m->mem_high++;
		break;
	case 6:
		m->mem_max = 1;
		break;
	case 7:
		m->mem_low++;
		break;
	case 8:
		m->io_weight++;
		break;
	case 9:
		m->n_io--;
		break;
	case 10:
		m->io[0].dev.major++;
		break;
	case 11:
		m->io[1].dev.minor++;
		break;
	case 12:
		m->io[0].rbps++;
		break;
	case 13:
		m->io[1].wbps = 1;
		break;
	case 14:
		m->io[0].riops = 1;
		break;
	case 15:
		m->io[0].wiops++;
		break;
	default:
		return false;
	}
	return true;
}

/* fs_limits_equal: a change of any member is seen; what no file shows (the
 * disks past n_io, padding) is not. */
static void test_limits_equal(void **state)
{
	const struct fs_limits l = all_limits();
	struct fs_limits m;
	int k;

	(void)state;
	m = l;
	assert_true(fs_limits_equal(&l, &m));
	memset(&m, 0xa5, sizeof(m)); /* other padding, other unused disks */
	m.set = l.set, m.cpu_quota_us = l.cpu_quota_us, m.cpu_period_us = l.cpu_period_us;
	m.cpu_burst_us = l.cpu_burst_us, m.cpu_weight = l.cpu_weight, m.mem_high = l.mem_high;
	m.mem_max = l.mem_max, m.mem_low = l.mem_low, m.n_io = l.n_io, m.io_weight = l.io_weight;
	for (size_t d = 0; d < l.n_io; d++)
		m.io[d] = l.io[d];
	assert_true(fs_limits_equal(&l, &m));
	for (k = 0;; k++) {
		m = l;
		if (!change_member(&m, k))
			break;
		if (fs_limits_equal(&l, &m))
			fail_msg("change %d not seen", k);
	}
	assert_int_equal(k, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),	   cmocka_unit_test(test_values),
	    cmocka_unit_test(test_format),	   cmocka_unit_test(test_io_display),
	    cmocka_unit_test(test_current),	   cmocka_unit_test(test_format_current_round_trip),
	    cmocka_unit_test(test_rank),	   cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_malformed_keys), cmocka_unit_test(test_limits_equal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
