/* SPDX-License-Identifier: MIT */
/*
 * A shared disk budget (model/resource.h: FS_RES_IO_BPS, FS_RES_IO_IOPS)
 * as io.max values. The allocation gives a tenant one limit L for its reads
 * and writes together; io.max has no such key, only a read and a write
 * one. So L is split by the tenant's measured read/write mix:
 *
 *     read limit  = L x max(read share,  floor)
 *     write limit = L x max(write share, floor)
 *
 * The floor is headroom on top of the mix, not taken from it. Without it a
 * tenant that has only read so far would get a write limit near 0 (the
 * 1 MiB/s floor of io.max), and when it starts writing its writes are held
 * there: its measured mix still says "reads", so the split never moves and
 * the writes stay starved although its share of the disk is unused. With
 * the floor the writes reach floor x L at once, the next period's mix
 * shows them and the split follows: for a tenant wanting r + w <= L the
 * gap to w shrinks by r / L per period or faster (tests/agent/
 * test_io_split.c). With both directions held at their limits the mix
 * cannot tell which wants more, and the split stays (the tenant gets its
 * L either way). Taken from the
 * main direction instead, the floor would cost a pure reader 10 % of its
 * share in every period. The price: a tenant whose minor direction is
 * below the floor may use up to floor x L more than L until the next
 * period's mix catches up.
 *
 * Pure: no I/O, no globals.
 */
#ifndef FAIRSHARE_PLAN_IO_SPLIT_H
#define FAIRSHARE_PLAN_IO_SPLIT_H

/* The default floor: a tenant's minor direction may use 10 % of its limit. */
#define PLAN_IO_SPLIT_FLOOR 0.1

/*
 * The tenant's read share of a shared budget: read / total of this period
 * when it used some (clamped to [0, 1]), else prev (what the split used
 * last period; NaN = none: an even 0.5). read and total are in the
 * budget's unit; NaN read is unknown.
 */
double plan_io_read_share(double read, double total, double prev);

/*
 * limit (INFINITY = none) split into out[0] (read) and out[1] (write) as
 * above; floor in [0, 1]. Both INFINITY when limit is not finite.
 */
void plan_io_split(double limit, double read_share, double floor, double out[2]);

#endif /* FAIRSHARE_PLAN_IO_SPLIT_H */
