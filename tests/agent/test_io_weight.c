/* SPDX-License-Identifier: MIT */
/* io.weight effectiveness (agent/io_weight.c), on fake sysfs/cgroupfs trees. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "agent_testutil.h"
#include "io_weight.h"

static const struct fs_devnum vda = {254, 0}, vdb = {254, 16};

static void sched(const char *dir, struct fs_devnum d, const char *line)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "sys/dev/block/%u:%u/queue", d.major, d.minor);
	at_mkdir(dir, rel);
	snprintf(rel, sizeof(rel), "sys/dev/block/%u:%u/queue/scheduler", d.major, d.minor);
	at_write(dir, rel, line);
}

static void test_scheduler_and_iocost(void **unused)
{
	char *dir = at_mkdtemp(), sys[4096], cg[4096];

	(void)unused;
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	snprintf(cg, sizeof(cg), "%s/cg", dir);
	at_mkdir(dir, "cg");
	/* nothing readable: no */
	assert_false(fsd_io_weight_effective(sys, cg, vda));
	/* the Debian default for virtio and NVMe: none / mq-deadline */
	sched(dir, vda, "[none] mq-deadline bfq\n");
	sched(dir, vdb, "none mq-deadline [bfq]\n");
	assert_false(fsd_io_weight_effective(sys, cg, vda));
	assert_true(fsd_io_weight_effective(sys, cg, vdb));
	/* io.cost: only an enabled line for this very device counts */
	at_write(dir, "cg/io.cost.qos",
		 "254:1 enable=1 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000\n"
		 "254:0 enable=0 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000\n");
	assert_false(fsd_io_weight_effective(sys, cg, vda));
	at_write(dir, "cg/io.cost.qos",
		 "254:0 enable=1 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000\n");
	assert_true(fsd_io_weight_effective(sys, cg, vda));
	at_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_scheduler_and_iocost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
