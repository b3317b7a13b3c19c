/* SPDX-License-Identifier: MIT */
/* The host's memory state (see host_mem.h). */
#include "host_mem.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "readfile.h"
#include "sample_parse.h"

void fs_host_mem_unknown(struct fs_host_mem *h)
{
	h->total = h->available = h->psi_some_avg10 = h->psi_full_avg10 = NAN;
}

int fs_host_mem_read(const char *procfs_root, struct fs_host_mem *out)
{
	char buf[8192];
	struct fs_meminfo mi;
	struct fs_pressure psi;
	int r;

	fs_host_mem_unknown(out);
	if (fs_read_small(procfs_root, "pressure/memory", buf, sizeof(buf)) == 0 &&
	    fs_parse_pressure(buf, &psi) == 0) {
		out->psi_some_avg10 = psi.some.avg10;
		if (psi.full.present)
			out->psi_full_avg10 = psi.full.avg10;
	}
	r = fs_read_small(procfs_root, "meminfo", buf, sizeof(buf));
	if (r < 0)
		return r;
	if (fs_parse_meminfo(buf, &mi) < 0 || !(mi.have & FS_MI_AVAILABLE))
		return -EINVAL;
	out->available = (double)mi.available;
	if (mi.have & FS_MI_TOTAL)
		out->total = (double)mi.total;
	return 0;
}
