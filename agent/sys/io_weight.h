/* SPDX-License-Identifier: MIT */
/*
 * Does io.weight do anything on this disk?
 *
 * cgroup v2 io.weight is only honoured by the BFQ scheduler and by the
 * io.cost controller (blk-iocost, enabled per device in the root's
 * io.cost.qos). With mq-deadline, kyber or none and no io.cost (Debian's
 * default, and the test VM's) it is accepted and ignored, so a planner that
 * relies on it for IO would simply stop sharing the disk.
 */
#ifndef FAIRSHARE_AGENT_IO_WEIGHT_H
#define FAIRSHARE_AGENT_IO_WEIGHT_H

#include <stdbool.h>

#include "agent_conf.h" /* struct fs_devnum */

/*
 * True when DEV's scheduler is bfq (sysfs_root/dev/block/MAJ:MIN/queue/
 * scheduler has "[bfq]") or cgroup_root/io.cost.qos has "MAJ:MIN enable=1".
 * Unreadable files count as "no": the safe answer keeps io.max limits.
 */
bool fsd_io_weight_effective(const char *sysfs_root, const char *cgroup_root, struct fs_devnum dev);

#endif /* FAIRSHARE_AGENT_IO_WEIGHT_H */
