/* SPDX-License-Identifier: MIT */
/*
 * `fairctl calibrate DISK`: measures what a disk delivers and prints the
 * io.NAME line for fairshare.conf (calibrate.h says how and why).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "calibrate.h"
#include "fairctl.h"
#include "units.h"

#define CALIB_DEFAULT_SIZE    (256ull << 20)
#define CALIB_DEFAULT_SECONDS 5.0

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: fairctl calibrate [--name NAME] [--scratch DIR] [--size SIZE] [--seconds S]\n"
	    "                         [--no-fio] DISK\n\n"
	    "Measures what a disk delivers and prints its line for fairshare.conf's\n"
	    "[resources]: \"io.NAME = DEVICE BPS [IOPSiops]\", one budget that reads and\n"
	    "writes share, at the best rate measured.\n\n"
	    "DISK is a block device, which is only read (the raw device, read-only), or a\n"
	    "directory on a filesystem of the disk, where a scratch file is written, read\n"
	    "back and removed. Nothing is ever written to a device.\n\n"
	    "With fio installed: sequential 1 MiB reads (and writes) and random 4 KiB\n"
	    "reads, O_DIRECT, libaio at queue depth 32. Else O_DIRECT 1 MiB reads and\n"
	    "writes of its own, one at a time (no IOPS).\n\n"
	    "  -n, --name NAME     the disk's name in the line (default disk0)\n"
	    "  -S, --scratch DIR   also measure writes, in a scratch file in DIR (a\n"
	    "                      filesystem of DISK); refused when DIR is a device\n"
	    "  -z, --size SIZE     bytes per measurement at most (default 256Mi)\n"
	    "  -t, --seconds S     seconds per measurement at most (default 5)\n"
	    "  -F, --no-fio        measure with O_DIRECT IO of its own even if fio is here\n"
	    "  -h, --help          this text\n");
}

/* Measures with fio, or with its own O_DIRECT IO when fio is absent or
 * not wanted. target: a device to read (NULL: the scratch file's). */
static int measure(const char *target, const char *scratch, uint64_t size, double seconds,
		   bool use_fio, struct calib_result *r)
{
	int ret = -ENOENT;

	if (use_fio) {
		ret = calib_fio("fio", target, scratch, size, seconds, r);
		if (ret == -ENOENT)
			printf("# fio not found: O_DIRECT reads and writes of our own (no IOPS)\n");
		else if (ret < 0)
			fprintf(stderr,
				"fairctl calibrate: fio failed (%s); trying O_DIRECT IO of "
				"our own\n",
				strerror(-ret));
	}
	if (ret == 0)
		return 0;
	calib_result_init(r);
	if (scratch)
		return calib_direct_scratch(scratch, size, seconds, r);
	return calib_direct_read(target, size, seconds, &r->read_bps);
}

static void print_rate(const char *what, double v, const char *unit, double scale)
{
	if (v == v) /* not NaN */
		printf("#   %-28s %10.1f %s\n", what, v / scale, unit);
}

int fairctl_calibrate_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"name", required_argument, NULL, 'n'},
	    {"scratch", required_argument, NULL, 'S'},
	    {"size", required_argument, NULL, 'z'},
	    {"seconds", required_argument, NULL, 't'},
	    {"no-fio", no_argument, NULL, 'F'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *name = "disk0", *scratch = NULL, *disk, *target = NULL;
	uint64_t size = CALIB_DEFAULT_SIZE, usec;
	double seconds = CALIB_DEFAULT_SECONDS;
	bool use_fio = true;
	struct calib_result r;
	char device[64], line[4200];
	struct stat st;
	int o, ret;

	optind = 1;
	while ((o = getopt_long(argc, argv, "n:S:z:t:Fh", opts, NULL)) != -1) {
		switch (o) {
		case 'n':
			name = optarg;
			break;
		case 'S':
			scratch = optarg;
			break;
		case 'z':
			if (fs_parse_size(optarg, &size) < 0 || size < (1u << 20)) {
				fprintf(stderr,
					"fairctl calibrate: bad --size '%s' (at least 1Mi)\n",
					optarg);
				return FAIRCTL_EXIT_USAGE;
			}
			break;
		case 't':
			if (fs_parse_duration(optarg, &usec) < 0 || usec < 100000) {
				fprintf(stderr,
					"fairctl calibrate: bad --seconds '%s' (at least 0.1)\n",
					optarg);
				return FAIRCTL_EXIT_USAGE;
			}
			seconds = (double)usec / 1e6;
			break;
		case 'F':
			use_fio = false;
			break;
		case 'h':
			usage(stdout);
			return FAIRCTL_EXIT_OK;
		default:
			usage(stderr);
			return FAIRCTL_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return FAIRCTL_EXIT_USAGE;
	}
	disk = argv[optind];
	if (stat(disk, &st) < 0) {
		fprintf(stderr, "fairctl calibrate: %s: %s\n", disk, strerror(errno));
		return FAIRCTL_EXIT_FAIL;
	}
	if (S_ISBLK(st.st_mode)) {
		target = disk;
		snprintf(device, sizeof(device), "%s", disk);
		if (strlen(disk) >= sizeof(device))
			snprintf(device, sizeof(device), "%u:%u", major(st.st_rdev),
				 minor(st.st_rdev));
	} else if (S_ISDIR(st.st_mode)) {
		/* its filesystem's device; fairshared resolves a partition to its disk */
		snprintf(device, sizeof(device), "%u:%u", major(st.st_dev), minor(st.st_dev));
		if (!scratch)
			scratch = disk;
	} else {
		fprintf(stderr, "fairctl calibrate: %s is neither a block device nor a directory\n",
			disk);
		return FAIRCTL_EXIT_USAGE;
	}
	ret = scratch ? calib_check_scratch(scratch) : 0;
	if (ret == -EPERM) {
		fprintf(
		    stderr,
		    "fairctl calibrate: refusing to write to %s: not a directory (writes go to a "
		    "scratch file, never to a device)\n",
		    scratch);
		return FAIRCTL_EXIT_USAGE;
	}
	if (ret < 0) {
		fprintf(stderr, "fairctl calibrate: %s: %s\n", scratch, strerror(-ret));
		return FAIRCTL_EXIT_FAIL;
	}
	ret = measure(target, scratch, size, seconds, use_fio, &r);
	if (ret < 0) {
		fprintf(stderr, "fairctl calibrate: measuring %s: %s%s\n", scratch ? scratch : disk,
			strerror(-ret),
			ret == -EINVAL ? " (a filesystem without O_DIRECT, such as tmpfs?)" : "");
		return FAIRCTL_EXIT_FAIL;
	}
	printf("# %s, %s:\n", device,
	       r.fio ? "fio, O_DIRECT, libaio, queue depth 32" : "O_DIRECT, one request at a time");
	print_rate("sequential reads, 1 MiB", r.read_bps, "MB/s", 1e6);
	print_rate("sequential writes, 1 MiB", r.write_bps, "MB/s", 1e6);
	print_rate("random reads, 4 KiB", r.read_iops, "IOPS", 1);
	if (!scratch)
		printf("# writes not measured (the device is only read): --scratch DIR on a "
		       "filesystem of it measures them\n");
	if (calib_format_line(name, device, &r, line, sizeof(line)) < 0) {
		fprintf(stderr, "fairctl calibrate: %s delivered less than 1 MB/s\n", device);
		return FAIRCTL_EXIT_FAIL;
	}
	printf("%s\n", line);
	return FAIRCTL_EXIT_OK;
}
