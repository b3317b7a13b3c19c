/* SPDX-License-Identifier: MIT */
/*
 * What a disk delivers, for its io.NAME line in fairshare.conf (`fairctl
 * calibrate`, issue 14). A disk's bandwidth is one budget that reads and
 * writes share, so the line is the shared form, "DEVICE BPS [IOPSiops]"
 * (fairshare.conf(5)), with the best rate measured: the declared capacity
 * is what the disk delivers at best (contention on a disk that delivers
 * less is found from its queue, agent/estimate/contention.h).
 *
 * Two ways to measure:
 *  - fio, when installed: sequential 1 MiB reads and writes and random
 *    4 KiB reads, O_DIRECT, libaio at queue depth 32: what a device
 *    delivers to a deep queue, which a synchronous loop cannot show.
 *  - O_DIRECT reads and writes of 1 MiB of its own, one at a time
 *    (sequential, so the device's readahead-free streaming rate; no IOPS).
 * Writes go only to a scratch file on a filesystem of the disk, never to a
 * device: a device is only read (fio --readonly, O_RDONLY).
 */
#ifndef FAIRSHARE_CALIBRATE_H
#define FAIRSHARE_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NaN = not measured. */
struct calib_result {
	double read_bps, write_bps; /* sequential, bytes/s */
	double read_iops;	    /* random 4 KiB reads, ops/s (fio only) */
	bool fio;		    /* measured with fio */
};

void calib_result_init(struct calib_result *r);

/*
 * fio's terse (--minimal, version 3) line of one job: its read and write
 * bandwidth (bytes/s) and IOPS. 0 or -EINVAL (not a terse v3 line).
 */
int calib_parse_fio_terse(const char *line, double *read_bps, double *read_iops, double *write_bps,
			  double *write_iops);

/*
 * The io.NAME line for r: "io.NAME = DEVICE BPS[ IOPSiops]", BPS the larger
 * of the two rates in whole MB/s (decimal, as fairshare.conf reads "M"),
 * rounded down; IOPS rounded down to 100 when measured. -EINVAL when
 * neither rate was measured (or the line does not fit).
 */
int calib_format_line(const char *name, const char *device, const struct calib_result *r, char *buf,
		      size_t len);

/* Whether path may be written to: 0 for a regular file or a directory (a
 * scratch file goes there); -EPERM for a device (never written to), -errno
 * when it cannot be looked at. */
int calib_check_scratch(const char *path);

/*
 * Sequential O_DIRECT reads of path (a device or a file), 1 MiB at a time
 * from offset 0, for at most `bytes` or `seconds`, whichever ends first.
 * Opened read-only. 0 (*bps set) or -errno; -EINVAL also for a file
 * system without O_DIRECT (tmpfs).
 */
int calib_direct_read(const char *path, uint64_t bytes, double seconds, double *bps);

/*
 * Writes a new scratch file in dir (O_DIRECT, 1 MiB at a time, for at most
 * `bytes` or `seconds`, then fdatasync), reads it back (calib_direct_read)
 * and removes it. Refuses a dir that is a device (calib_check_scratch).
 * 0 or -errno.
 */
int calib_direct_scratch(const char *dir, uint64_t bytes, double seconds, struct calib_result *r);

/*
 * fio's measurements: reads of `target` (read-only when it is a device),
 * and when scratch_dir is given, writes and reads of a scratch file
 * there; random 4 KiB reads of whichever is read. fio_bin: the program
 * ("fio" from PATH). 0, -ENOENT (no fio), or -errno / -EIO (fio failed).
 */
int calib_fio(const char *fio_bin, const char *target, const char *scratch_dir, uint64_t bytes,
	      double seconds, struct calib_result *r);

#endif /* FAIRSHARE_CALIBRATE_H */
